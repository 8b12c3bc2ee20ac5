package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"kairos/capture"
)

// TestTracerVerb writes the tracer's source to a file and to stdout.
func TestTracerVerb(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.c")
	if code, _, errs := csRun("tracer", "-o", path); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	got, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(got, capture.Source) || !bytes.Contains(got, []byte("int MPI_Init(")) {
		t.Errorf("written source differs (%v)", err)
	}
	if code, out, _ := csRun("tracer", "-o", "-"); code != 0 || out != string(capture.Source) {
		t.Errorf("stdout: exit %d, %d bytes", code, len(out))
	}
	if code, _, _ := csRun("tracer", "extra"); code != 2 {
		t.Errorf("an argument: exit %d, want 2", code)
	}
}
