package fileio

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRoundTripCompressed(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"plain.txt", "t.gz", "t.zst"} {
		path := filepath.Join(dir, name)
		want := strings.Repeat("0 compute 1e6\n", 1000)
		if err := WriteFile(path, func(w io.Writer) error {
			_, err := io.WriteString(w, want)
			return err
		}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		r, err := Open(path)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, err := io.ReadAll(r)
		if cerr := r.Close(); err == nil {
			err = cerr
		}
		if err != nil || string(got) != want {
			t.Errorf("%s: read back %d bytes, err %v", name, len(got), err)
		}
		if name != "plain.txt" {
			raw, _ := os.ReadFile(path)
			if len(raw) >= len(want) {
				t.Errorf("%s: %d bytes on disk, not compressed", name, len(raw))
			}
		}
		st, _ := os.Stat(path)
		if st.Mode().Perm() != 0o644 {
			t.Errorf("%s: mode %v, want 0644", name, st.Mode().Perm())
		}
	}
	assertOnly(t, dir, "plain.txt", "t.gz", "t.zst")
}

// A failed write leaves neither the output nor a temporary file, and an
// existing file of that name is kept as it was.
func TestFailedWriteLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.ti")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := WriteFile(path, func(w io.Writer) error {
		io.WriteString(w, "half")
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("got %v, want the writer's error", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Errorf("existing output changed to %q", b)
	}
	assertOnly(t, dir, "out.ti")
}

func TestAbortAfterCommit(t *testing.T) {
	dir := t.TempDir()
	f, err := Create(filepath.Join(dir, "x"))
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(f, "data")
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	f.Abort() // must not remove the committed file
	if err := f.Commit(); err == nil {
		t.Error("second Commit succeeded")
	}
	assertOnly(t, dir, "x")
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.gz")
	os.WriteFile(bad, []byte("not gzip"), 0o644)
	if _, err := Open(bad); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("bad gzip: got %v, want an error naming the file", err)
	}
	if _, err := Open(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: got %v", err)
	}
	if _, err := Create(filepath.Join(dir, "no", "such", "dir", "x")); err == nil {
		t.Error("Create in a missing directory succeeded")
	}
}

func assertOnly(t *testing.T, dir string, names ...string) {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	if strings.Join(got, ",") != strings.Join(names, ",") {
		t.Errorf("directory holds %v, want %v", got, names)
	}
}

// TestRemovePending removes the temporary file of an output being
// written, and only that: an output committed before stays, and the
// interrupted one's commit fails with its name.
func TestRemovePending(t *testing.T) {
	dir := t.TempDir()
	done := filepath.Join(dir, "done.txt")
	if err := WriteFile(done, func(w io.Writer) error { _, err := io.WriteString(w, "kept\n"); return err }); err != nil {
		t.Fatal(err)
	}
	half := filepath.Join(dir, "half.txt")
	f, err := Create(half)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(f, "half")
	RemovePending()
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != "done.txt" {
		t.Errorf("left %v, want done.txt alone", entries)
	}
	if err := f.Commit(); err == nil || !strings.Contains(err.Error(), half) {
		t.Errorf("commit after RemovePending: %v, want an error naming %s", err, half)
	}
	if _, err := os.Stat(half); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s: %v, want it absent", half, err)
	}
}

// TestQuoteGlob: a quoted path matches itself as a pattern's prefix,
// whatever pattern characters it holds, and nothing else.
func TestQuoteGlob(t *testing.T) {
	for _, p := range []string{"/tmp/run", "/tmp/run[1]", "a*b?c", `x\y`, "[]", "plain/dir"} {
		pat := QuoteGlob(p) + "-*.bin"
		if ok, err := filepath.Match(pat, p+"-0000.bin"); !ok || err != nil {
			t.Errorf("%q: %q does not match its own file (%v)", p, pat, err)
		}
		if ok, _ := filepath.Match(pat, p+"x-0000.bin"); ok {
			t.Errorf("%q: %q matches another's file", p, pat)
		}
	}
}

// TestRemovePendingDir removes a directory MkdirTemp made, with the
// files written in it, committed or not; RemoveTemp removes one left
// after a failure and forgets it.
func TestRemovePendingDir(t *testing.T) {
	parent := t.TempDir()
	dir, err := MkdirTemp(parent, ".out_files.tmp*")
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(filepath.Join(dir, "rank-0"), func(w io.Writer) error { _, err := io.WriteString(w, "0\n"); return err }); err != nil {
		t.Fatal(err)
	}
	f, err := Create(filepath.Join(dir, "rank-1"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Abort()
	RemovePending()
	assertOnly(t, parent)

	dir, err = MkdirTemp(parent, ".out_files.tmp*")
	if err != nil {
		t.Fatal(err)
	}
	RemoveTemp(dir)
	assertOnly(t, parent)
	pending.mu.Lock()
	defer pending.mu.Unlock()
	if _, ok := pending.names[dir]; ok {
		t.Errorf("%s still pending after RemoveTemp", dir)
	}
}

// TestOnPending: the hook runs once, before the first temporary output
// is made.
func TestOnPending(t *testing.T) {
	var calls []string
	s := tempSet{names: map[string]bool{}, hook: func() { calls = append(calls, "hook") }}
	for _, name := range []string{"a", "b"} {
		s.make(false, func() (string, error) { calls = append(calls, name); return name, nil })
	}
	if got := strings.Join(calls, ","); got != "hook,a,b" {
		t.Errorf("calls %s, want hook,a,b", got)
	}
	if len(s.names) != 2 {
		t.Errorf("pending %v, want a and b", s.names)
	}
}

// TestWriteFileIn: a file of a temporary directory is written in place,
// compressed by its name, readable by all; a failed write leaves nothing
// and an existing file is not overwritten; ReplaceDir then moves the
// directory into place.
func TestWriteFileIn(t *testing.T) {
	dir := t.TempDir()
	tmp, err := MkdirTemp(dir, ".out_files.tmp*")
	if err != nil {
		t.Fatal(err)
	}
	defer RemoveTemp(tmp)
	for _, name := range []string{"rank-0.ti", "rank-1.ti.zst"} {
		if err := WriteFileIn(filepath.Join(tmp, name), func(w io.Writer) error {
			_, err := io.WriteString(w, "0 init\n")
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	boom := errors.New("boom")
	if err := WriteFileIn(filepath.Join(tmp, "rank-2.ti"), func(w io.Writer) error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("got %v, want the writer's error", err)
	}
	if err := WriteFileIn(filepath.Join(tmp, "rank-0.ti"), func(w io.Writer) error { return nil }); err == nil {
		t.Fatal("an existing file was written over")
	}
	assertOnly(t, tmp, "rank-0.ti", "rank-1.ti.zst")
	out := filepath.Join(dir, "out_files")
	if err := ReplaceDir(tmp, out, func(os.DirEntry) bool { return true }); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"rank-0.ti", "rank-1.ti.zst"} {
		p := filepath.Join(out, name)
		if st, err := os.Stat(p); err != nil || st.Mode().Perm() != 0o644 {
			t.Fatalf("%s: %v, mode %v", name, err, st)
		}
		rc, err := Open(p)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil || string(b) != "0 init\n" {
			t.Fatalf("%s reads %q, %v", name, b, err)
		}
	}
}
