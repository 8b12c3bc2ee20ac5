package ktr

import (
	"flag"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/v1.ktr")

// TestGoldenV1 reads a version 1 file written by an earlier build, so that
// a change which breaks reading existing files cannot go unnoticed. Run
// with -update only for a deliberate format change (and a new version).
func TestGoldenV1(t *testing.T) {
	const path = "testdata/v1.ktr"
	if *update {
		if err := WriteOptions(path, allFields(), Options{ChunkSize: 64}); err != nil {
			t.Fatal(err)
		}
	}
	src, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	sameTrace(t, src, allFields())
	if src.NumChunks(0) < 2 {
		t.Errorf("rank 0 has %d chunks, want several", src.NumChunks(0))
	}
}
