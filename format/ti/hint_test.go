package ti_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kairos/format"
)

// TestHintEmptyFiles: the description a traced run that aborted leaves
// (kairos tracer writes at MPI_Finalize) names files that exist but are
// empty; the error says so, and why it happens.
func TestHintEmptyFiles(t *testing.T) {
	dir := t.TempDir()
	desc := filepath.Join(dir, "index.txt")
	os.WriteFile(desc, []byte("rank-0.ti\nrank-1.ti\n"), 0o644)
	for _, f := range []string{"rank-0.ti", "rank-1.ti"} {
		os.WriteFile(filepath.Join(dir, f), nil, 0o644)
	}
	_, err := format.Detect(desc)
	if !errors.Is(err, format.ErrUnknownFormat) || !strings.Contains(err.Error(), "rank-0.ti is empty") || !strings.Contains(err.Error(), "MPI_Finalize") {
		t.Errorf("description of empty files: %v", err)
	}
}
