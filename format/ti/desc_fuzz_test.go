package ti

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzDescription opens arbitrary text as a description file (one trace
// file a line) beside two rank files. It must never panic nor hang (a
// line naming a device is refused); an error must name a file; a trace
// that opens reads to its end or fails naming a file.
func FuzzDescription(f *testing.F) {
	for _, s := range []string{
		"a.ti\nb.ti\n", "a.ti\n", "b.ti", "a.ti\n\nb.ti\n\n", "a.ti\nmissing.ti\n", "c.ti\n",
		"/dev/zero\n", "/dev/stdin\n", "a.ti\n/dev/null\n", ".\n", "a.ti\na.ti\na.ti\n", "\xef\xbb\xbfa.ti\n",
		"a.ti\r\nb.ti\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<12 {
			return
		}
		dir := t.TempDir()
		for name, text := range map[string]string{
			"a.ti": "0 init\n0 send 1 0 8\n0 finalize\n",
			"b.ti": "1 init\n1 recv 0 0 8\n1 finalize\n",
			"c.ti": "0 init\n1 init\n",
		} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		desc := filepath.Join(dir, "desc.txt")
		if err := os.WriteFile(desc, data, 0o644); err != nil {
			t.Fatal(err)
		}
		tr, err := Open(desc)
		if err != nil {
			if !strings.Contains(err.Error(), dir) {
				t.Fatalf("%q: the error names no file: %v", data, err)
			}
			return
		}
		if tr.NumRanks() > 64 {
			return
		}
		if _, err := loadErr(tr); err != nil && !strings.Contains(err.Error(), dir) {
			t.Fatalf("%q: the error names no file: %v", data, err)
		}
	})
}
