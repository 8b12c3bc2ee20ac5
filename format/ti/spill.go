package ti

import (
	"bufio"
	"os"
)

// spill is an unnamed temporary file that receives the decompressed bytes
// of a compressed shared trace as its index is built (see indexShared). A
// failed write (a full disk) gives up the copy, not the reading.
type spill struct {
	f   *os.File
	w   *bufio.Writer
	err error
}

// newSpill creates the file; nil if it cannot be made.
func newSpill() *spill {
	f := tempFile()
	if f == nil {
		return nil
	}
	return &spill{f: f, w: bufio.NewWriterSize(f, 1<<16)}
}

// tempFile creates a temporary file and unlinks it at once, so that it
// never outlives the process; nil if it cannot be made.
func tempFile() *os.File {
	f, err := os.CreateTemp("", "kairos-ti-*")
	if err != nil {
		return nil
	}
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return nil
	}
	return f
}

// Write copies p; it never fails, so that the tee it serves goes on.
func (s *spill) Write(p []byte) (int, error) {
	if s.err == nil {
		_, s.err = s.w.Write(p)
	}
	return len(p), nil
}

// finish returns the file, complete, or nil if the copy failed.
func (s *spill) finish() *os.File {
	if s == nil {
		return nil
	}
	if s.err == nil {
		s.err = s.w.Flush()
	}
	if s.err != nil {
		return nil
	}
	f := s.f
	s.f = nil // not discarded
	return f
}

// discard closes the file, unless finish returned it; the system then
// frees its space.
func (s *spill) discard() {
	if s != nil && s.f != nil {
		s.f.Close()
		s.f = nil
	}
}
