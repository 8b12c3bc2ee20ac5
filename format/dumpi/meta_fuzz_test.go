package dumpi

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"kairos/format"
)

// FuzzMeta opens arbitrary text as a DUMPI .meta file beside two rank
// files. It must never panic; an error must name a file; a trace that
// opens reads to its end or fails.
func FuzzMeta(f *testing.F) {
	for _, s := range []string{
		"hostname=n0\nnumprocs=2\nusername=u\nstart=1\nfileprefix=f\nversion=1\n",
		"numprocs=1\n", "numprocs=3\n", "numprocs=0\n", "numprocs=-1\n", "numprocs=99999999999999999999\n",
		"numprocs= 2 \n", "numprocs=2\nnumprocs=1\n", "", "numprocs\n", "numprocs=16777216\n",
		"numprocs=16777217\n", "numprocs=1000000\nfileprefix=f\n", "numprocs=16777216\nnumprocs=2\n",
	} {
		f.Add([]byte(s))
	}
	bin := smallBin()
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<12 {
			return
		}
		dir := t.TempDir()
		for _, name := range []string{"f-0000.bin", "f-0001.bin"} {
			if err := os.WriteFile(filepath.Join(dir, name), bin, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		meta := filepath.Join(dir, "f.meta")
		if err := os.WriteFile(meta, data, 0o644); err != nil {
			t.Fatal(err)
		}
		tr, err := Open(meta)
		if err != nil {
			if !strings.Contains(err.Error(), dir) {
				t.Fatalf("%q: the error names no file: %v", data, err)
			}
			return
		}
		// The ranks with a file, and the last claimed one: a claim of
		// millions of ranks is read in bounded time and memory, not
		// walked rank by rank.
		n := tr.NumRanks()
		for _, r := range []int{0, 1, 2, n - 1} {
			if r < 0 || r >= n {
				continue
			}
			rd, err := tr.OpenRank(r)
			if err != nil {
				return
			}
			for rd.Next() {
			}
			rd.Close()
		}
	})
}

// TestMetaClaimCostsFiles: a .meta claiming 16,777,216 ranks beside two
// rank files opens, reads its last rank and merges its events for what
// the two files hold, not an entry per claimed rank (issue 43: 13 s and a
// 16M-entry table of paths, then of readers).
func TestMetaClaimCostsFiles(t *testing.T) {
	dir := t.TempDir()
	bin := smallBin()
	for _, name := range []string{"f-0000.bin", "f-0001.bin"} {
		if err := os.WriteFile(filepath.Join(dir, name), bin, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	meta := filepath.Join(dir, "f.meta")
	if err := os.WriteFile(meta, []byte("numprocs=16777216\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	tr, err := Open(meta)
	if err != nil {
		t.Fatal(err)
	}
	if n := tr.NumRanks(); n != 1<<24 {
		t.Errorf("%d ranks, want the claimed 16777216", n)
	}
	if p := tr.Meta().Attrs["partial"]; !strings.HasPrefix(p, "ranks 2-16777215 of MPI_COMM_WORLD's 16777216 have no .bin file") {
		t.Errorf("partial: %q", p)
	}
	rd, err := tr.OpenRank(1<<24 - 1)
	if err != nil || rd.Next() {
		t.Errorf("the last claimed rank: %v, or it has events", err)
	}
	m, err := tr.Merged()
	if err != nil {
		t.Fatal(err)
	}
	events, ranks := 0, map[int]bool{}
	for m.Next() {
		events++
		ranks[m.Rank()] = true
	}
	if err := m.Err(); err != nil || events == 0 || len(ranks) != 2 || !ranks[0] || !ranks[1] {
		t.Errorf("merged: %d events of ranks %v, %v", events, ranks, err)
	}
	m.Close()
	runtime.ReadMemStats(&after)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
		t.Errorf("%d MB allocated for two rank files of a few hundred bytes", alloc>>20)
	}
}

// TestMetaNumprocsErrors: a numprocs that is not a number of ranks within
// trace.MaxRanks is an error naming the file, the line and the bound.
func TestMetaNumprocsErrors(t *testing.T) {
	dir := t.TempDir()
	meta := filepath.Join(dir, "f.meta")
	for _, v := range []string{"0", "-1", "x", "16777217", "99999999999999999999"} {
		if err := os.WriteFile(meta, []byte("hostname=h\nnumprocs="+v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		want := meta + `:2: expected numprocs a number of ranks from 1 to 16777216, got "` + v + `"`
		if _, err := Open(meta); err == nil || err.Error() != want {
			t.Errorf("numprocs=%s:\n got %v\nwant %s", v, err, want)
		}
	}
}

// TestOpenPathForms: a trace opens by any form of its path, and in a
// directory whose name holds pattern characters: "./f.meta" (sst-dumpi's
// files in the working directory) found none of its rank files, Glob
// giving them cleaned.
func TestOpenPathForms(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run[1]*")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"f-0000.bin", "f-0001.bin"} {
		if err := os.WriteFile(filepath.Join(dir, name), smallBin(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "f.meta"), []byte("numprocs=2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	for _, p := range []string{"f.meta", "./f.meta", "." + string(filepath.Separator) + "." + string(filepath.Separator) + "f.meta",
		dir + string(filepath.Separator) + string(filepath.Separator) + "f.meta", dir, "./f-0001.bin"} {
		tr, err := Open(p)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		if n := tr.NumRanks(); n != 2 {
			t.Errorf("%s: %d ranks", p, n)
		}
	}
}

// TestTwoTracesInADirectory: a directory holding two runs' files (sst-dumpi
// writes each beside the last) is refused with the .meta files to name,
// not a list of .bin files.
func TestTwoTracesInADirectory(t *testing.T) {
	dir := t.TempDir()
	for _, prefix := range []string{"a", "b"} {
		if err := os.WriteFile(filepath.Join(dir, prefix+"-0000.bin"), smallBin(), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, prefix+".meta"), []byte("numprocs=1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, err := format.Detect(dir)
	if err == nil || !strings.HasSuffix(err.Error(), "a directory holding 2 DUMPI traces: give the .meta file of the one to read (a.meta, b.meta)") {
		t.Errorf("error %v", err)
	}
}
