package fileio

import (
	"bufio"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestOpenFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, []byte("0 init\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(f)
	if err != nil || string(got) != "0 init\n" {
		t.Errorf("read %q, %v", got, err)
	}
	if st, err := f.Stat(); err != nil || st.Size() != 7 {
		t.Errorf("stat: %v, %v", st, err)
	}
	if err := f.Close(); err != nil {
		t.Error(err)
	}
	missing := filepath.Join(t.TempDir(), "missing")
	_, err = OpenFile(missing)
	var pe *fs.PathError
	if !errors.As(err, &pe) || pe.Path != missing || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v, want a path error naming %s", err, missing)
	}
}

// fdTableSize returns the size of the process's file descriptor table
// (FDSize in /proc/self/status).
func fdTableSize(t *testing.T) int {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc/self/status: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "FDSize:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Skip("no FDSize in /proc/self/status")
	return 0
}

// TestReserveFiles: the table grows to hold the files reserved, at once,
// and no descriptor is left open.
func TestReserveFiles(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("ReserveFiles grows the table on Linux only")
	}
	before := fdTableSize(t)
	n := 4 * before
	open0 := countOpen(t)
	ReserveFiles(n)
	deadline := time.Now().Add(10 * time.Second)
	for fdTableSize(t) < n {
		if time.Now().After(deadline) {
			t.Fatalf("FDSize %d after ReserveFiles(%d), was %d", fdTableSize(t), n, before)
		}
		time.Sleep(time.Millisecond)
	}
	for countOpen(t) != open0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d descriptors open after ReserveFiles, %d before", countOpen(t), open0)
		}
		time.Sleep(time.Millisecond)
	}
}

func countOpen(t *testing.T) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	return len(ents)
}
