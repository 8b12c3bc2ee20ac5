package dumpi

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"kairos/trace"
)

// readAll opens path and reads every event, returning the first error.
func readAll(path string) error {
	src, err := Open(path)
	if err != nil {
		return err
	}
	return trace.ForEach(src, func(int, int, *trace.Event) error { return nil })
}

// smallBin is a one-rank file: Init, Send, Waitall, Finalize. Records
// start with 17 bytes of label, mask, thread and wall times; the body
// starts at 8, Init at 16 (29 bytes), Send at 45 (33), Waitall at 78
// (33), Finalize at 111.
func smallBin() []byte {
	w := newBinWriter()
	w.call(lInit, 1, []string{"prog"})
	w.call(lSend, 1, 5, 0, 0, commWorld)
	w.call(lWaitall, 2, []int32{1, 1}, nil)
	w.call(lFinalize)
	return w.finish()
}

// TestCorruptInputs damages a file in the ways that matter and expects a
// located error naming the file and the byte offset of the problem.
func TestCorruptInputs(t *testing.T) {
	good := smallBin()
	be := binary.BigEndian
	cases := []struct {
		name string
		edit func([]byte) []byte
		want string
	}{
		{"empty", func(b []byte) []byte { return nil }, "byte 0: file of 0 bytes is too short"},
		{"bad magic", func(b []byte) []byte { b[0] = 0; return b }, "byte 0: not a DUMPI file"},
		{"truncated index", func(b []byte) []byte { return b[:len(b)-10] }, "index has no magic"},
		{"index offset outside", func(b []byte) []byte { be.PutUint64(b[len(b)-16:], 1<<40); return b }, "footer offset 1099511627776 is outside"},
		{"bad footer magic", func(b []byte) []byte {
			f := be.Uint64(b[len(b)-16:])
			b[f+7] ^= 0xff
			return b
		}, "footer magic"},
		{"unknown label", func(b []byte) []byte { be.PutUint16(b[45:], 500); return b }, "byte 45: unknown DUMPI function label 500"},
		{"sentinel label", func(b []byte) []byte { be.PutUint16(b[45:], labelAllFunctions); return b }, "byte 45: unknown DUMPI function label 290"},
		{"huge array count", func(b []byte) []byte { be.PutUint32(b[78+17+4:], 1<<30); return b }, "byte 99: int array count 1073741824 does not fit"},
		{"negative array count", func(b []byte) []byte { be.PutUint32(b[78+17+4:], 0xffffffff); return b }, "count -1 does not fit"},
		// A count that decodes but means nothing (issue 43): -255
		// elements of one byte.
		{"negative count", func(b []byte) []byte { be.PutUint32(b[45+17:], 0xffffff01); return b }, "byte 45: MPI_Send: send sending -255 bytes: expected 0 or more"},
		{"huge argc", func(b []byte) []byte { be.PutUint32(b[16+17:], 1<<29); return b }, "argc 536870912 does not fit"},
		{"body cut short", func(b []byte) []byte {
			// Move the header so that the body ends inside the Send
			// record.
			be.PutUint64(b[len(b)-32:], 60)
			return b
		}, "byte 48: truncated call record (started at byte 45): record header needs 14 bytes"},
		{"sizes beyond file", func(b []byte) []byte {
			s := be.Uint64(b[len(b)-56:])
			be.PutUint32(b[s:], 1<<28)
			return b
		}, "datatype size table count 268435456 does not fit"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x-0000.bin")
			if err := os.WriteFile(path, c.edit(append([]byte{}, good...)), 0o644); err != nil {
				t.Fatal(err)
			}
			err := readAll(path)
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), path) {
				t.Fatalf("got %v, want an error naming %s and containing %q", err, path, c.want)
			}
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Errorf("%v is not a *FormatError", err)
			}
		})
	}
}

// damageSpots are the offsets worth damaging in smallBin: the records,
// the header and the index (the footer is 2,336 bytes of counts).
func damageSpots(b []byte) []int {
	var at []int
	for i := range b {
		if i < 160 || i >= len(b)-100 {
			at = append(at, i)
		}
	}
	return at
}

// TestTruncatedEverywhere cuts a file at every interesting length: each
// fails with a located error, never panics.
func TestTruncatedEverywhere(t *testing.T) {
	good := smallBin()
	dir := t.TempDir()
	for _, n := range damageSpots(good) {
		path := filepath.Join(dir, "t-0000.bin")
		if err := os.WriteFile(path, good[:n], 0o644); err != nil {
			t.Fatal(err)
		}
		err := readAll(path)
		var fe *FormatError
		if err == nil || !errors.As(err, &fe) {
			t.Fatalf("cut at %d: %v", n, err)
		}
	}
}

// TestFlippedBytes flips each interesting byte of the file: the reader
// must not panic, and any error must be located.
func TestFlippedBytes(t *testing.T) {
	good := smallBin()
	dir := t.TempDir()
	for _, i := range damageSpots(good) {
		b := append([]byte{}, good...)
		b[i] ^= 0xa5
		path := filepath.Join(dir, "f-0000.bin")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := readAll(path); err != nil && !strings.Contains(err.Error(), path) {
			t.Fatalf("flip at %d: unlocated error %v", i, err)
		}
	}
}

// TestNegativeRecvCount: a corrupt receive count is refused with its
// place, not read as SimGrid's probe-first receive of -1020 bytes (issue
// 43).
func TestNegativeRecvCount(t *testing.T) {
	w := newBinWriter()
	w.call(lInit, 1, []string{"prog"})
	w.call(lRecv, -255, 6, 0, 0, commWorld, []status{{bytes: 8}})
	w.call(lFinalize)
	path := filepath.Join(t.TempDir(), "x-0000.bin")
	if err := os.WriteFile(path, w.finish(), 0o644); err != nil {
		t.Fatal(err)
	}
	err := readAll(path)
	if err == nil || !strings.Contains(err.Error(), path+": byte 45: MPI_Recv: recv receiving -1020 bytes") {
		t.Errorf("got %v, want the receive of -1020 bytes refused at byte 45", err)
	}
}

// countingReaderAt counts its reads.
type countingReaderAt struct {
	r io.ReaderAt
	n int
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	c.n++
	return c.r.ReadAt(p, off)
}

// TestBinInfoReads reads a file's index, header, footer, datatype sizes
// and time offsets in a few reads, which give what reading them field by
// field gives: a file whose sections fit one window and one whose body
// does not.
func TestBinInfoReads(t *testing.T) {
	window := windowSize
	t.Cleanup(func() { windowSize = window })
	for _, tc := range []struct {
		calls, most int
	}{{1, 1}, {4000, 4}} {
		w := newBinWriter()
		w.call(lInit, 1, []string{"prog"})
		for range tc.calls {
			w.call(lBarrier, commWorld)
		}
		w.call(lFinalize)
		b := w.finish()
		read := func(n int) (*binInfo, int) {
			windowSize = n
			c := &countingReaderAt{r: bytes.NewReader(b)}
			info, err := readBinInfo(c, "t.bin", int64(len(b)))
			if err != nil {
				t.Fatalf("%d calls, window %d: %v", tc.calls, n, err)
			}
			return info, c.n
		}
		want, byField := read(1)
		got, reads := read(window)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%d calls: read in windows\n%+v\nfield by field\n%+v", tc.calls, got, want)
		}
		if reads > tc.most {
			t.Errorf("%d calls (%d bytes): %d reads, want at most %d (%d field by field)", tc.calls, len(b), reads, tc.most, byField)
		}
	}
}
