package ktr

import (
	"bytes"
	"os"
	"testing"

	"github.com/klauspost/compress/zstd"

	"kairos/trace"
)

// chunkFrames returns each chunk's zstd frame, rank after rank.
func chunkFrames(t *testing.T, path string) [][]byte {
	t.Helper()
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var fs [][]byte
	for _, c := range s.chunks {
		fs = append(fs, b[c.off+chunkHeadSize:c.off+c.size])
	}
	return fs
}

// frameDicts returns the dictionary id each chunk's zstd frame names
// (0: none), rank after rank.
func frameDicts(t *testing.T, path string) []uint32 {
	t.Helper()
	var ids []uint32
	for i, f := range chunkFrames(t, path) {
		var h zstd.Header
		if err := h.Decode(f); err != nil {
			t.Fatalf("chunk %d: %v", i, err)
		}
		ids = append(ids, h.DictionaryID)
	}
	return ids
}

// TestDictionaryWherePays: short ranks that resemble the first are
// compressed with the file's dictionary; long chunks, which it barely
// shrinks, without (a frame with a dictionary decodes in
// klauspost/compress' Go code, not its assembly: writeChunk). Both read
// back, and the reader reads the dictionary only where a frame names it.
func TestDictionaryWherePays(t *testing.T) {
	for _, c := range []struct {
		name     string
		px, py   int
		iters    int
		wantDict bool // every chunk after the first with the dictionary, or none
	}{
		{"64 short ranks", 8, 8, 5, true},
		{"4 ranks of 3 chunks", 2, 2, 4000, false}, // 6 of 12 chunks kept the dictionary's frame, 0.5% smaller
	} {
		src := stencilNoise(c.px, c.py, c.iters, true, 0.1)
		p := writeTemp(t, src, Options{})
		ids := frameDicts(t, p)
		for i, id := range ids[1:] {
			if want := map[bool]uint32{true: dictID}[c.wantDict]; id != want {
				t.Errorf("%s: chunk %d of %d names dictionary %d, want %d", c.name, i+1, len(ids), id, want)
			}
		}
		got, err := Open(p)
		if err != nil {
			t.Fatal(err)
		}
		sameTrace(t, got, src)
		if loaded := got.dict != nil; loaded != c.wantDict {
			t.Errorf("%s: the dictionary read %v, want %v", c.name, loaded, c.wantDict)
		}
	}
}

// TestDictionariesOfTwoFiles: the zstd decoders files share take each
// file's dictionary where its frames name it. Two files whose short ranks
// are compressed with dictionaries of their own, read a rank of each in
// turn, read back as written (a decoder left with the other file's
// dictionary fails the payloads' checksums).
func TestDictionariesOfTwoFiles(t *testing.T) {
	srcs := []*trace.Trace{stencilNoise(8, 8, 5, true, 0.1), stencilNoise(8, 8, 7, false, 0.05)}
	var files []*Source
	for _, src := range srcs {
		f, err := Open(writeTemp(t, src, Options{}))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	for r := range srcs[0].NumRanks() {
		for i, f := range files {
			got, err1 := events(f, r)
			want, err2 := events(srcs[i], r)
			if err1 != nil || err2 != nil {
				t.Fatalf("file %d rank %d: %v, %v", i, r, err1, err2)
			}
			if len(got) != len(want) {
				t.Fatalf("file %d rank %d: %d events, want %d", i, r, len(got), len(want))
			}
			for k := range got {
				if !sameEvent(&got[k], &want[k]) {
					t.Fatalf("file %d rank %d event %d: %+v, want %+v", i, r, k, got[k], want[k])
				}
			}
		}
	}
	for i, f := range files {
		if f.dict == nil {
			t.Errorf("file %d: no dictionary read", i)
		}
	}
}

// TestFastestWherePays: with Options.Fastest, a polling program's chunks,
// their times rounded, take the fastest level's frames where these take
// at most 1 byte in fastGain more (some chunks here), and read back; the
// other chunks' frames are the default's, byte for byte.
func TestFastestWherePays(t *testing.T) {
	src := trace.Rounded(stencilPolls(2, 2, 3000), 0.01)
	def, fast := writeTemp(t, src, Options{}), writeTemp(t, src, Options{Fastest: true})
	dfs, ffs := chunkFrames(t, def), chunkFrames(t, fast)
	if len(dfs) != len(ffs) {
		t.Fatalf("%d chunks with Fastest, %d without", len(ffs), len(dfs))
	}
	taken := 0
	for i := range dfs {
		if !bytes.Equal(dfs[i], ffs[i]) {
			taken++
			if len(ffs[i]) > len(dfs[i])+len(dfs[i])/fastGain+MaxChunkRaw/dictGain {
				t.Errorf("chunk %d: %d bytes at the fastest level, against %d", i, len(ffs[i]), len(dfs[i]))
			}
		}
	}
	if taken == 0 || taken == len(dfs) {
		t.Errorf("%d of %d chunks at the fastest level, want some", taken, len(dfs))
	}
	got, err := Open(fast)
	if err != nil {
		t.Fatal(err)
	}
	sameTrace(t, got, src)
}
