package otf2

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"kairos/internal/fileio"
)

// chunkFile reads a chunked OTF2 file (definitions and events) one chunk
// at a time, so that memory stays at one chunk per file whatever the
// file's size. It reads the file through the pool of open files
// (fileio.Handle), so that merging thousands of locations needs no more
// file descriptors than the pool allows.
type chunkFile struct {
	ra        io.ReaderAt // the data: a fileio.Handle, opened at the first read, or bytes in memory
	path      string
	size      int64
	chunkSize int64
	buf       []byte
	off       int64 // file offset of buf's first byte
	next      int64 // file offset of the next chunk
	// window, where not 0, is how much of a chunk buf holds at once: an
	// event file's records are read in order, and more slides the
	// window along its chunk. (A whole chunk a location is Score-P's
	// megabyte each: 4 GB to replay 4,096 ranks.) chunkEnd is the file
	// offset of the current chunk's end.
	window   int64
	chunkEnd int64
}

func openChunkFile(path string, chunkSize uint64) (*chunkFile, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	return &chunkFile{path: path, size: st.Size(), chunkSize: int64(chunkSize)}, nil
}

// memChunkFile reads a chunked file held in memory (tests, fuzzing).
func memChunkFile(name string, data []byte, chunkSize uint64) *chunkFile {
	return &chunkFile{ra: bytes.NewReader(data), path: name, size: int64(len(data)), chunkSize: int64(chunkSize)}
}

// Close releases the chunk buffer and the file.
func (c *chunkFile) Close() error {
	c.buf = nil
	if h, ok := c.ra.(*fileio.Handle); ok {
		c.ra = nil
		return h.Close()
	}
	return nil
}

// readAt fills p from offset off and returns how many bytes it read.
func (c *chunkFile) readAt(p []byte, off int64) (int, error) {
	if c.ra == nil {
		h, err := fileio.OpenHandle(c.path)
		if err != nil {
			return 0, err
		}
		c.ra = h
	}
	n, err := c.ra.ReadAt(p, off)
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return n, err
}

// errAt returns err located at file offset off.
func (c *chunkFile) errAt(off int64, format string, a ...any) error {
	return fmt.Errorf("%s: byte %d: %s", c.path, off, fmt.Sprintf(format, a...))
}

// nextChunk loads the next chunk and returns a decoder positioned after its
// header. It returns io.EOF when the file has no more chunks.
func (c *chunkFile) nextChunk() (rbuf, error) {
	if c.next >= c.size {
		return rbuf{}, io.EOF
	}
	n := min(c.chunkSize, c.size-c.next)
	load := n
	if c.window > 0 {
		load = min(n, max(c.window, chunkHeaderSize))
	}
	if int64(cap(c.buf)) < load {
		c.buf = make([]byte, load)
	}
	c.buf = c.buf[:load]
	got, err := c.readAt(c.buf, c.next)
	if err != nil {
		return rbuf{}, fmt.Errorf("%s: %w", c.path, err)
	}
	c.buf = c.buf[:got]
	c.off, c.chunkEnd = c.next, c.next+n
	if int64(got) < load { // the file ended early: nothing more to slide to
		c.chunkEnd = c.off + int64(got)
	}
	c.next += n
	r := rbuf{b: c.buf}
	if len(c.buf) < chunkHeaderSize || c.buf[0] != chunkHeader {
		return rbuf{}, c.errAt(c.off, "expected a chunk header (0x03, byte order, 2 × u64)")
	}
	switch c.buf[1] {
	case littleEndian:
	case bigEndian:
		r.big = true
	default:
		return rbuf{}, c.errAt(c.off+1, "invalid byte order mark 0x%02x (want 0x42 or 0x23)", c.buf[1])
	}
	r.pos = chunkHeaderSize
	return r, nil
}

// more makes r, a decoder of the window, hold at least need bytes from
// its position, or what is left of the chunk if less: it slides the
// window to r's position and reads the chunk's next bytes, growing it to
// need if need is larger (bounded by the chunk). What r's earlier records'
// payloads pointed at is overwritten.
func (c *chunkFile) more(r *rbuf, need int) error {
	left := len(r.b) - r.pos
	if left >= need || c.off+int64(len(r.b)) >= c.chunkEnd {
		return nil
	}
	keep := copy(c.buf, r.b[r.pos:])
	c.off += int64(r.pos)
	want := min(max(c.window, int64(need)), c.chunkEnd-c.off)
	if int64(cap(c.buf)) < want {
		b := make([]byte, want)
		copy(b, c.buf[:keep])
		c.buf = b
	}
	c.buf = c.buf[:want]
	got, err := c.readAt(c.buf[keep:], c.off+int64(keep))
	c.buf = c.buf[:keep+got]
	r.b, r.pos = c.buf, 0
	if err != nil {
		return fmt.Errorf("%s: %w", c.path, err)
	}
	if int64(keep+got) < want {
		c.chunkEnd = c.off + int64(keep+got)
	}
	return nil
}

// windowed reports whether r, a decoder of the window, holds less than
// the rest of the current chunk.
func (c *chunkFile) windowed(r *rbuf) bool { return c.off+int64(len(r.b)) < c.chunkEnd }

// records calls fn with the type and payload of every record of a
// definition file (every record has a length there), in file order.
func (c *chunkFile) records(fn func(typ uint8, p *rbuf) error) error {
	for {
		r, err := c.nextChunk()
		if err == io.EOF {
			return c.errAt(c.size, "file ends without an end-of-file mark")
		}
		if err != nil {
			return err
		}
	chunk:
		for {
			start := r.pos
			typ := r.u8()
			if r.short {
				return c.errAt(c.off+int64(start), "chunk ends without an end-of-chunk or end-of-file mark")
			}
			switch typ {
			case endOfChunk:
				break chunk
			case endOfFile:
				return nil
			}
			p, ok := r.record()
			if !ok {
				return c.errAt(c.off+int64(start), "record type %d overruns its chunk", typ)
			}
			if err := fn(typ, &p); err != nil {
				return c.errAt(c.off+int64(start), "record type %d: %v", typ, err)
			}
		}
	}
}
