package ktr

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"kairos/format"
	"kairos/trace"
)

func TestRoundTripAllFields(t *testing.T) {
	want := allFields()
	for _, chunk := range []int{0, 1, 7, 64} {
		path := writeTemp(t, want, Options{ChunkSize: chunk})
		got, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		sameTrace(t, got, want)
		if got.NumChunks(1) != 0 || got.NumEvents(1) != 0 {
			t.Errorf("chunk size %d: empty rank has %d chunks, %d events", chunk, got.NumChunks(1), got.NumEvents(1))
		}
		if n := got.NumEvents(0); n != int64(want.Ranks[0].Len()) {
			t.Errorf("chunk size %d: index counts %d events for rank 0, want %d", chunk, n, want.Ranks[0].Len())
		}
	}
}

func TestMultiChunkRanks(t *testing.T) {
	want := stencil(4, 2, 300, true)
	path := writeTemp(t, want, Options{ChunkSize: 1 << 10})
	got, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	for r := 0; r < got.NumRanks(); r++ {
		if got.NumChunks(r) < 10 {
			t.Errorf("rank %d: %d chunks of 1 KiB, want many", r, got.NumChunks(r))
		}
	}
	sameTrace(t, got, want)
}

func TestManyRanksAndEmpty(t *testing.T) {
	meta := trace.NewMeta()
	for _, n := range []int{0, 1, 3000} {
		want := trace.New(n, meta)
		for r := 0; r < n; r += 7 {
			e := trace.NewEvent(trace.Send)
			e.Partner, e.SendBytes = int32((r+1)%n), int64(r)
			want.Ranks[r].Append(&e)
		}
		got, err := Open(writeTemp(t, want, Options{}))
		if err != nil {
			t.Fatal(err)
		}
		sameTrace(t, got, want)
	}
}

func TestRegistry(t *testing.T) {
	path := writeTemp(t, allFields(), Options{})
	src, f, err := format.Open(path)
	if err != nil || f.Name != "ktr" {
		t.Fatalf("format.Open: %v, format %q", err, f.Name)
	}
	sameTrace(t, src, allFields())
	out, err := format.ForOutput(filepath.Join(t.TempDir(), "x.ktr"), "")
	if err != nil || out.Name != "ktr" {
		t.Fatalf("ForOutput: %v, %q", err, out.Name)
	}
}

func TestWriteIsAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t.ktr")
	src := &failingSource{Trace: allFields()}
	if err := Write(path, src); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("Write of a failing source: %v", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("failed write left %v behind", ents)
	}
}

func TestCompressedNames(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"t.ktr.gz", "t.ktr.zst"} {
		if err := Write(filepath.Join(dir, name), allFields()); err == nil {
			t.Errorf("Write(%s) succeeded, want an error", name)
		}
		if _, err := Open(filepath.Join(dir, name)); err == nil || !strings.Contains(err.Error(), "decompress") {
			t.Errorf("Open(%s): %v, want advice to decompress", name, err)
		}
	}
}

// failingSource is a trace whose rank 2 fails after one event.
type failingSource struct{ *trace.Trace }

func (s *failingSource) OpenRank(r int) (trace.Reader, error) {
	rd, err := s.Trace.OpenRank(r)
	if r == 2 {
		return &failingReader{Reader: rd}, err
	}
	return rd, err
}

type failingReader struct {
	trace.Reader
	n int
}

func (r *failingReader) Next() bool { r.n++; return r.n == 1 && r.Reader.Next() }
func (r *failingReader) Err() error { return errBoom }

var errBoom = errors.New("boom")

// TestConcurrentRanks reads every rank at once, as a parallel analysis
// would (run with -race): each rank its own events, though the ranks'
// readers, more than sharedReaders, share their distinct events
// (templatePool).
func TestConcurrentRanks(t *testing.T) {
	want := stencil(4, 4, 50, true)
	got, err := Open(writeTemp(t, want, Options{ChunkSize: 4 << 10}))
	if err != nil {
		t.Fatal(err)
	}
	// Every reader holds a chunk before the others read on.
	rds := make([]trace.Reader, got.NumRanks())
	for r := range rds {
		if rds[r], err = got.OpenRank(r); err != nil || !rds[r].Next() {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
	errs := make(chan error, got.NumRanks())
	for r, rd := range rds {
		go func() {
			we, _ := events(want, r)
			var err error
			i := 0
			for ok := true; ok && err == nil; ok = rd.Next() {
				switch {
				case i >= len(we):
					err = fmt.Errorf("rank %d: more than %d events", r, len(we))
				case !sameEvent(rd.Event(), &we[i]):
					err = fmt.Errorf("rank %d event %d: %+v, want %+v", r, i, *rd.Event(), we[i])
				}
				i++
			}
			if err == nil && rd.Err() != nil {
				err = rd.Err()
			}
			if err == nil && i != len(we) {
				err = fmt.Errorf("rank %d: %d events, want %d", r, i, len(we))
			}
			errs <- err
		}()
	}
	for range got.NumRanks() {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if got.share.templates.n == 0 {
		t.Errorf("%d readers at once did not share their distinct events", len(rds))
	}
}

// TestShareWith reads half the ranks from one file and half from another
// that shares with it, each holding no more than sharedReaders readers:
// together they share their distinct events, and every rank reads its
// own.
func TestShareWith(t *testing.T) {
	want := stencil(4, 4, 50, true)
	path := writeTemp(t, want, Options{ChunkSize: 4 << 10})
	a, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	b.ShareWith(a)
	n := want.NumRanks()
	if n/2 > sharedReaders {
		t.Fatalf("%d ranks a file: the test wants each file's readers at most %d", n/2, sharedReaders)
	}
	rds := make([]trace.Reader, n)
	for r := range rds {
		src := a
		if r >= n/2 {
			src = b
		}
		// Every reader holds a chunk before the others read on.
		if rds[r], err = src.OpenRank(r); err != nil || !rds[r].Next() {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
	for r, rd := range rds {
		we, _ := events(want, r)
		i := 0
		for ok := true; ok; ok, i = rd.Next(), i+1 {
			if i >= len(we) || !sameEvent(rd.Event(), &we[i]) {
				t.Fatalf("rank %d event %d: %+v", r, i, *rd.Event())
			}
		}
		if rd.Err() != nil || i != len(we) {
			t.Fatalf("rank %d: %d events of %d: %v", r, i, len(we), rd.Err())
		}
	}
	if a.share.templates.n == 0 {
		t.Errorf("%d readers of two files that share did not share their distinct events", n)
	}
}

func TestStdin(t *testing.T) {
	if _, err := Open("-"); err == nil || !strings.Contains(err.Error(), "standard input") {
		t.Errorf("Open(-): %v", err)
	}
}

// TestSkimRequests: a rank reader told to skip the requests (trace.Skim)
// leaves the requests column unread and gives every other field as a full
// read does, over ranks of many chunks.
func TestSkimRequests(t *testing.T) {
	for _, want := range []*trace.Trace{allFields(), stencil(4, 2, 300, true)} {
		got, err := Open(writeTemp(t, want, Options{ChunkSize: 1 << 10}))
		if err != nil {
			t.Fatal(err)
		}
		for r := range want.NumRanks() {
			full, _ := want.OpenRank(r)
			skim, _ := got.OpenRank(r)
			trace.Skim(skim, trace.SkipRequests)
			for i := 0; full.Next(); i++ {
				if !skim.Next() {
					t.Fatalf("rank %d: skimmed reader ended at event %d: %v", r, i, skim.Err())
				}
				w := full.Event().Clone()
				w.Request, w.Requests = 0, nil
				if g := skim.Event().Clone(); !reflect.DeepEqual(g, w) {
					t.Fatalf("rank %d event %d: %+v, want %+v", r, i, g, w)
				}
			}
			if skim.Next() || skim.Err() != nil {
				t.Errorf("rank %d: skimmed reader goes on after the last event (%v)", r, skim.Err())
			}
			skim.Close()
		}
	}
}

// TestTemplatesForm: chunks of repeated events are written with their
// structure as distinct events and indexes (and read back the same), and
// chunks whose events hardly repeat as their events.
func TestTemplatesForm(t *testing.T) {
	repeated := repeatedFields(40)
	for _, c := range []struct {
		name           string
		tr             *trace.Trace
		o              Options
		templates, all bool // some chunk in the templates form; every one
	}{
		{"repeated", repeated, Options{}, true, true},
		{"repeated, small chunks", repeated, Options{ChunkSize: 1024}, true, false},
		{"stencil", stencil(4, 2, 300, true), Options{}, true, true},
		{"all fields once", allFields(), Options{}, false, false},
		// Version 3: past 256 distinct events, where they take less
		// memory than the chunk.
		{"1,000 distinct events", distinctSends(1000, 40, 0), Options{}, true, true},
		{"1,000 distinct events, repeated 3 times", distinctSends(1000, 3, 0), Options{}, false, false},
		{"1,000 distinct events, more memory than the chunk", distinctSends(1000, 5, 0), Options{}, false, false},
		{"300 distinct all-to-alls of 64 members", distinctSends(300, 5, 64), Options{}, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			src, err := Open(writeTemp(t, c.tr, c.o))
			if err != nil {
				t.Fatal(err)
			}
			sameTrace(t, src, c.tr)
			f := chunkFormsOf(t, src)
			if (f.tmpl > 0) != c.templates || (f.tmpl == f.chunks) != c.all {
				t.Errorf("%d of %d chunks in the templates form", f.tmpl, f.chunks)
			}
			if strings.HasPrefix(c.name, "1,000") && c.templates && f.most != 1000 {
				t.Errorf("at most %d distinct events in a chunk, want 1,000", f.most)
			}
		})
	}
}

// chunkForms counts src's chunks (chunks), those whose structure is in
// the templates form (tmpl) and those whose times are in the shifted
// layout (shifted), and the most distinct events of one (most).
type chunkForms struct{ chunks, tmpl, shifted, most int }

func chunkFormsOf(t *testing.T, src *Source) chunkForms {
	var c chunkForms
	for r := range src.NumRanks() {
		rd, err := src.OpenRank(r)
		if err != nil {
			t.Fatal(err)
		}
		rr, last := rd.(*RankReader), -1
		for rr.Next() {
			if rr.chunk == last {
				continue
			}
			last = rr.chunk
			c.chunks++
			if rr.dec.pr.usesTemplate {
				c.tmpl++
				c.most = max(c.most, len(rr.dec.pr.tmpl))
			}
			if rr.dec.pr.shifted {
				c.shifted++
			}
		}
		if err := rr.Err(); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// TestEncodeAfterOthers: a stream's bytes do not depend on the streams
// written before it, whose compressors (the plain one and the
// dictionary's, reset to the stream's dictionary) the next streams reuse;
// and it reads back.
func TestEncodeAfterOthers(t *testing.T) {
	a, b := stencil(4, 2, 300, true), stencilNoise(3, 3, 200, true, 0.1)
	o := Options{ChunkSize: 1 << 10} // many chunks: the dictionary's compressor too
	encode := func(src trace.Source) []byte {
		var buf bytes.Buffer
		if err := Encode(&buf, src, o); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	first := encode(a)
	got, err := Open(writeTemp(t, b, o))
	if err != nil {
		t.Fatal(err)
	}
	sameTrace(t, got, b)
	if again := encode(a); !bytes.Equal(again, first) {
		t.Errorf("the stream written again after another: %d bytes, first %d, not the same", len(again), len(first))
	}
}
