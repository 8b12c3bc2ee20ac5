package ti_test

import (
	"errors"
	"fmt"
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

// TestDetectSkipsEmptyFiles: a description whose first files are empty
// (the ranks of a run that aborted before their tracer wrote) is read by
// the first file that is not, so that the ranks that wrote are analysed;
// a description of empty files only, or whose first file with content is
// not TI, is not a TI trace.
func TestDetectSkipsEmptyFiles(t *testing.T) {
	for _, c := range []struct {
		name  string
		files []string // the ranks' files' contents, in the description's order
		want  bool
	}{
		{"first file TI", []string{"0 init\n0 finalize\n", ""}, true},
		{"rank 0 empty, rank 1 TI", []string{"", "1 init\n1 send 0 8\n"}, true},
		{"ranks 0 to 2 empty, rank 3 TI", []string{"", "", "", "3 init\n"}, true},
		{"every file empty", []string{"", ""}, false},
		{"rank 0 empty, rank 1 not TI", []string{"", "hello world\n"}, false},
	} {
		dir := t.TempDir()
		var desc strings.Builder
		for r, content := range c.files {
			name := fmt.Sprintf("rank-%d.ti", r)
			if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			desc.WriteString(name + "\n")
		}
		path := filepath.Join(dir, "index.txt")
		if err := os.WriteFile(path, []byte(desc.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := format.Detect(path)
		if got := err == nil && f.Name == "ti"; got != c.want {
			t.Errorf("%s: detected as TI %v (%v), want %v", c.name, got, err, c.want)
		}
		if !c.want {
			continue
		}
		if src, err := f.Open(path); err != nil || src.NumRanks() != len(c.files) {
			t.Errorf("%s: opened %v, %v; want %d ranks", c.name, src, err, len(c.files))
		}
	}
}
