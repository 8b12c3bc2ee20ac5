package fileio

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// withMaxOpen bounds the pool for one test.
func withMaxOpen(t *testing.T, n int) {
	t.Helper()
	old := SetMaxOpen(n)
	t.Cleanup(func() { SetMaxOpen(old) })
}

// TestPoolBound: 50 files read in turns, a line at a time, through a pool
// of 4 descriptors: every handle reads its whole file, and no more than 4
// files are ever open.
func TestPoolBound(t *testing.T) {
	withMaxOpen(t, 4)
	dir := t.TempDir()
	var hs []*Handle
	var want []string
	for i := range 50 {
		content := strings.Repeat(fmt.Sprintf("file %d\n", i), 3)
		path := filepath.Join(dir, fmt.Sprint(i))
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		h, err := OpenHandle(path)
		if err != nil {
			t.Fatal(err)
		}
		hs = append(hs, h)
		want = append(want, content)
	}
	got := make([]string, len(hs))
	buf := make([]byte, 7)
	for round := 0; round < 4; round++ {
		for i, h := range hs {
			n, err := h.Read(buf)
			if err != nil && err != io.EOF {
				t.Fatalf("file %d: %v", i, err)
			}
			got[i] += string(buf[:n])
			if open := NumOpen(); open > 4 {
				t.Fatalf("%d files open, the bound is 4", open)
			}
		}
	}
	for i := range hs {
		if got[i] != want[i] {
			t.Errorf("file %d: read %q, want %q", i, got[i], want[i])
		}
		if err := hs[i].Close(); err != nil {
			t.Error(err)
		}
	}
	if open := NumOpen(); open != 0 {
		t.Errorf("%d files open after every handle closed", open)
	}
}

// TestPoolShared: handles of one path share one descriptor, also when
// read from several goroutines at once.
func TestPoolShared(t *testing.T) {
	withMaxOpen(t, 2)
	path := filepath.Join(t.TempDir(), "f")
	data := []byte(strings.Repeat("0123456789", 1000))
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			h, err := OpenHandle(path)
			if err != nil {
				t.Error(err)
				return
			}
			defer h.Close()
			b := make([]byte, 10)
			for off := int64(g); off+10 <= h.Size(); off += 97 {
				if _, err := h.ReadAt(b, off); err != nil || string(b) != string(data[off:off+10]) {
					t.Errorf("at %d: %q, %v", off, b, err)
					return
				}
			}
		})
	}
	wg.Wait()
	if open := NumOpen(); open != 0 {
		t.Errorf("%d files open after every handle closed", open)
	}
}

// TestPoolReplaced: a file replaced while its handle had lost its
// descriptor is not read as if it were the same.
func TestPoolReplaced(t *testing.T) {
	withMaxOpen(t, 1)
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	for _, p := range []string{a, b} {
		if err := os.WriteFile(p, []byte("first\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ha, err := OpenHandle(a)
	if err != nil {
		t.Fatal(err)
	}
	defer ha.Close()
	hb, err := OpenHandle(b) // takes a's descriptor
	if err != nil {
		t.Fatal(err)
	}
	defer hb.Close()
	if err := os.Remove(a); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(a, []byte("other\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = ha.ReadAt(make([]byte, 6), 0)
	if err == nil || !strings.Contains(err.Error(), "replaced") || !strings.Contains(err.Error(), a) {
		t.Errorf("read of a replaced file: %v, want an error naming %s", err, a)
	}
}

// TestPoolRewritten: a file rewritten in place (its inode kept) while a
// handle holds it opens again as it now is, its new size.
func TestPoolRewritten(t *testing.T) {
	p := filepath.Join(t.TempDir(), "a")
	if err := os.WriteFile(p, []byte("first\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	old, err := OpenHandle(p)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	if err := os.WriteFile(p, []byte("a longer line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := OpenHandle(p)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	b := make([]byte, h.Size())
	if _, err := h.ReadAt(b, 0); err != nil || string(b) != "a longer line\n" {
		t.Errorf("the rewritten file: %q, %v", b, err)
	}
}

// TestOpenPooled: Open reads a regular file through the pool, also
// compressed.
func TestOpenPooled(t *testing.T) {
	withMaxOpen(t, 1)
	dir := t.TempDir()
	var rs []io.ReadCloser
	for i, name := range []string{"a", "b.gz", "c.zst"} {
		path := filepath.Join(dir, name)
		if err := WriteFile(path, func(w io.Writer) error { _, err := fmt.Fprintf(w, "content %d\n", i); return err }); err != nil {
			t.Fatal(err)
		}
		r, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	for i, r := range rs {
		got, err := io.ReadAll(r)
		if err != nil || string(got) != fmt.Sprintf("content %d\n", i) {
			t.Errorf("%d: %q, %v", i, got, err)
		}
		if open := NumOpen(); open > 1 {
			t.Errorf("%d files open, the bound is 1", open)
		}
		r.Close()
	}
}
