package format_test

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kairos/format"
	_ "kairos/format/alawneh"
	_ "kairos/format/dumpi"
	"kairos/format/ktr"
	_ "kairos/format/otf2"
	_ "kairos/format/ti"
	"kairos/trace"
)

// fuzzNames are the names a fuzzed file is given: each steers detection
// to a reader (or to none).
var fuzzNames = []string{"f.ti", "f.ktr", "f-0000.bin", "f.txt", "f", "f.ti.gz", "f.ti.zst", "Process0.txt", "traces.otf2"}

// FuzzOpen opens arbitrary bytes under several names as every verb does
// (format.Open: detection, then the detected reader) and reads every rank.
// It must never panic nor hang; an error of Open must name the file.
func FuzzOpen(f *testing.F) {
	var kt bytes.Buffer
	tr := trace.New(2, trace.NewMeta())
	for r := range tr.Ranks {
		for _, k := range []trace.Kind{trace.Init, trace.Barrier, trace.Finalize} {
			e := trace.NewEvent(k)
			tr.Ranks[r].Append(&e)
		}
	}
	path := filepath.Join(f.TempDir(), "seed.ktr")
	if err := ktr.Write(path, tr); err != nil {
		f.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	kt.Write(b)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("0 init\n0 finalize\n"))
	zw.Close()
	for i, s := range []string{
		"0 init\n0 send 1 0 8\n1 init\n1 recv 0 0 8\n", kt.String(), "", "\xef\xbb\xbf0 init\n",
		// Issue 43: ranks claimed and not held, a cut-off line, a
		// truncated compressed file, an empty one.
		"1000000 init", "0 init\n1999999 init\n", gz.String()[:gz.Len()-5], "",
		"OTF2 anchor\n", "numprocs=3\n", "0 compute 1e300\n",
	} {
		f.Add([]byte(s), uint8(i))
	}
	f.Fuzz(func(t *testing.T, data []byte, name uint8) {
		if len(data) > 1<<16 {
			return
		}
		dir := t.TempDir()
		path := filepath.Join(dir, fuzzNames[int(name)%len(fuzzNames)])
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		src, _, err := format.Open(path)
		if err != nil {
			if !strings.Contains(err.Error(), dir) {
				t.Fatalf("%q: the error names no file: %v", data, err)
			}
			return
		}
		defer func() {
			if c, ok := src.(interface{ Close() error }); ok {
				c.Close()
			}
		}()
		if src.NumRanks() > 64 {
			return
		}
		for r := range src.NumRanks() {
			rd, err := src.OpenRank(r)
			if err != nil {
				return
			}
			for n := 0; rd.Next(); n++ {
				if n > 1<<20 {
					t.Fatalf("%q: rank %d: more than %d events from %d bytes", data, r, n, len(data))
				}
			}
			rd.Close()
		}
	})
}
