package ktr

import (
	"flag"
	"fmt"
	"testing"

	"kairos/trace"
)

var update = flag.Bool("update", false, "rewrite the testdata file of the current version")

// goldenTraces are the traces of the golden files, by version: version
// 2's repeats its events, so that its chunks have both forms.
var goldenTraces = map[int]func() *trace.Trace{
	1: allFields,
	2: func() *trace.Trace { return repeatedFields(12) },
}

// TestGolden reads a file of each version written by an earlier build, so
// that a change which breaks reading existing files cannot go unnoticed.
// Run with -update only for a deliberate format change (and a new
// version): it writes the current version's file.
func TestGolden(t *testing.T) {
	for v := 1; v <= Version; v++ {
		path := fmt.Sprintf("testdata/v%d.ktr", v)
		want := goldenTraces[v]()
		if *update && v == Version {
			if err := WriteOptions(path, want, Options{ChunkSize: 1024}); err != nil {
				t.Fatal(err)
			}
		}
		src, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if int(src.version) != v {
			t.Errorf("%s: version %d", path, src.version)
		}
		sameTrace(t, src, want)
		if src.NumChunks(0) < 2 {
			t.Errorf("%s: rank 0 has %d chunks, want several", path, src.NumChunks(0))
		}
		if tmpl, chunks := templateChunks(t, src); v >= 2 && (tmpl == 0 || tmpl == chunks) {
			t.Errorf("%s: %d of %d chunks in the templates form, want some", path, tmpl, chunks)
		}
	}
}
