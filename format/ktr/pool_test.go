package ktr

import (
	"path/filepath"
	"testing"

	"kairos/trace/tracetest"
	"kairos/workload"
)

// TestManyRanksOneFile: every rank's reader of a .ktr file reads through
// one file descriptor.
func TestManyRanksOneFile(t *testing.T) {
	p, err := workload.Defaults("ring")
	if err != nil {
		t.Fatal(err)
	}
	p.Ranks, p.Iterations = 300, 2
	src, err := workload.New("ring", p)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "ring.ktr")
	if err := Write(path, src); err != nil {
		t.Fatal(err)
	}
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := tracetest.Interleaved(t, s, 1); n == 0 {
		t.Error("no events")
	}
}
