package dumpi

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzMeta opens arbitrary text as a DUMPI .meta file beside two rank
// files. It must never panic; an error must name a file; a trace that
// opens reads to its end or fails.
func FuzzMeta(f *testing.F) {
	for _, s := range []string{
		"hostname=n0\nnumprocs=2\nusername=u\nstart=1\nfileprefix=f\nversion=1\n",
		"numprocs=1\n", "numprocs=3\n", "numprocs=0\n", "numprocs=-1\n", "numprocs=99999999999999999999\n",
		"numprocs= 2 \n", "numprocs=2\nnumprocs=1\n", "", "numprocs\n", "numprocs=16777216\n",
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
