//go:build unix

package format_test

import (
	"errors"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"kairos/format"
)

// TestDirectoryWithPipe: naming the traces of a directory does not open
// its named pipes, whose read would block until a writer came.
func TestDirectoryWithPipe(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "a-pipe"), 0o644); err != nil {
		t.Skipf("no named pipe here: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		_, _, err := format.Open(dir)
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, format.ErrUnknownFormat) {
			t.Errorf("got %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("format.Open of a directory holding a named pipe blocked")
	}
}
