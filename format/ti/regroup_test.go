package ti

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"kairos/internal/fileio"
	"kairos/trace"
)

// TestInterleaved: a shared file whose ranks' lines are interleaved reads
// as the same file written rank after rank, with every reader reading its
// own lines only (issue 43: 5,000 interleaved ranks of a 1.8 MB file took
// check over a minute), and errors name the original lines.
func TestInterleaved(t *testing.T) {
	const n, k = 40, 5
	var inter, grouped strings.Builder
	for i := range k {
		for r := range n {
			fmt.Fprintf(&inter, "%d compute %d\n", r, 1000*r+i)
			if r == 3 && i == 2 {
				fmt.Fprintf(&inter, "# a comment\n\n")
			}
		}
	}
	for r := range n {
		for i := range k {
			fmt.Fprintf(&grouped, "%d compute %d\n", r, 1000*r+i)
		}
	}
	dir := t.TempDir()
	for _, name := range []string{"inter.ti", "inter.ti.gz"} {
		a, b := filepath.Join(dir, name), filepath.Join(dir, "grouped.ti")
		if err := fileio.WriteFile(a, func(w io.Writer) error { _, err := io.WriteString(w, inter.String()); return err }); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(b, []byte(grouped.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		ta, err := Open(a)
		if err != nil {
			t.Fatal(err)
		}
		if ta.orig == nil {
			t.Fatalf("%s: not regrouped", name)
		}
		tb, err := Open(b)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := loadAll(t, ta), loadAll(t, tb); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: events differ from the grouped file's", name)
		}
		// Rank 5's third line is line 2n+3+2 of the file (after the
		// comment and the blank line).
		rd, err := ta.OpenRank(5)
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			rd.Next()
		}
		if got, want := rd.(trace.Positioner).Position(), fmt.Sprintf("%s:%d", a, 2*n+6+2); got != want {
			t.Errorf("position %s, want %s", got, want)
		}
		rd.Close()
	}
	bad := strings.Replace(inter.String(), "7 compute 7003\n", "7 compute -1\n", 1)
	path := filepath.Join(dir, "bad.ti")
	if err := os.WriteFile(path, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	tr, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = loadErr(tr)
	if want := fmt.Sprintf("%s:%d:11:", path, 3*n+8+2); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want it at %s", err, want)
	}
}
