package ti

import (
	"path/filepath"
	"testing"

	"kairos/trace/tracetest"
	"kairos/workload"
)

// TestManyRanksFewFiles: a replay reads every rank at once; a trace of
// more ranks than the process may open files reads with a bounded number
// of open files in every layout, compressed or not.
func TestManyRanksFewFiles(t *testing.T) {
	p, err := workload.Defaults("ring")
	if err != nil {
		t.Fatal(err)
	}
	p.Ranks, p.Iterations = 64, 2
	src, err := workload.New("ring", p)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, name := range []string{"ring.ti", "ring.ti.zst", "ring", "ring.gz"} {
		path := filepath.Join(dir, name)
		if _, err := WriteFile(path, src, WriteOptions{Layout: LayoutFor(path)}); err != nil {
			t.Fatal(err)
		}
		tr, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if n := tracetest.Interleaved(t, tr, 4); n == 0 {
			t.Errorf("%s: no events", name)
		}
	}
}
