package ti

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReducedFile reads a reduced trace's description: file i is read as
// the lines of representative reduced.group.i (rank 2's lines, its
// requests matched under its own rank), and malformed reduced.txt files
// are refused with their line.
func TestReducedFile(t *testing.T) {
	for _, tc := range []struct {
		name, reduced, err string
	}{
		{"ok", "# comment\nreduced.ranks 4\nreduced.method callpath\nreduced.group.0 0 <1 0 2 1>\nreduced.group.1 2 <1 2 2 1>\n", ""},
		{"key", "reduced.ranks 4\nranks 4\n", "reduced.txt:2: want"},
		{"ranks", "reduced.ranks many\n", "is not a number of ranks"},
		{"rep", "reduced.ranks 4\nreduced.group.0 7 <1 0 4 1>\n", "is not a rank below 4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			write := func(name, text string) {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			write("rank-0.ti", "0 init\n0 send 1 0 8\n0 finalize\n")
			write("rank-2.ti", "2 init\n2 irecv 1 0 8\n2 wait 1 2 0\n2 finalize\n")
			write("index.txt", "rank-0.ti\nrank-2.ti\n")
			write(ReducedFile, tc.reduced)
			tr, err := Open(filepath.Join(dir, "index.txt"))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := tr.Meta().Attrs["reduced.group.1"]; got != "2 <1 2 2 1>" {
				t.Errorf("reduced.group.1 = %q", got)
			}
			rd, err := tr.OpenRank(1)
			if err != nil {
				t.Fatal(err)
			}
			var kinds []string
			for rd.Next() {
				e := rd.Event()
				kinds = append(kinds, e.Kind.String())
				if e.Kind.String() == "wait" && e.Request == 0 {
					t.Errorf("the wait of rank 2's irecv matched no request")
				}
			}
			if err := rd.Err(); err != nil {
				t.Fatal(err)
			}
			if len(kinds) != 4 {
				t.Errorf("rank 1 (world rank 2) read %v, want its 4 events", kinds)
			}
		})
	}
}
