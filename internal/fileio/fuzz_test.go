package fileio

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// FuzzDecompress reads arbitrary bytes as a .gz and as a .zst file. It
// must never panic; a failure names the file when opening it, and says
// truncated or corrupt, with how far it got, when reading it.
func FuzzDecompress(f *testing.F) {
	text := []byte("0 init\n0 send 1 0 8\n0 finalize\n")
	var gz, zs bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(text)
	zw.Close()
	enc, err := zstd.NewWriter(&zs)
	if err != nil {
		f.Fatal(err)
	}
	enc.Write(text)
	enc.Close()
	for _, b := range [][]byte{
		gz.Bytes(), zs.Bytes(), text, nil,
		// Issue 43: truncated alike, empty alike.
		gz.Bytes()[:gz.Len()-5], zs.Bytes()[:zs.Len()-3], gz.Bytes()[:10], zs.Bytes()[:4],
	} {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		for _, name := range []string{"f.gz", "f.zst"} {
			path := filepath.Join(dir, name)
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			r, err := Open(path)
			if err != nil {
				if !strings.Contains(err.Error(), path) {
					t.Fatalf("%s: %v: the error names no file", name, err)
				}
				continue
			}
			// At most 64 MiB: a small input may decompress to much more
			// (a bomb), which the readers stream.
			_, err = io.Copy(io.Discard, io.LimitReader(r, 64<<20))
			r.Close()
			if err != nil && !errors.Is(err, ErrTruncated) && !strings.HasPrefix(err.Error(), "corrupt ") {
				t.Fatalf("%s: %v: neither truncated nor corrupt", name, err)
			}
		}
	})
}
