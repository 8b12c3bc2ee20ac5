package otf2

import (
	"encoding/binary"
	"fmt"
	"io"
)

// chunkWriter writes a chunked OTF2 file (definitions or events) one
// chunk at a time: memory is one chunk whatever the file's size. Every
// chunk starts with the header (0x03, the byte order, the numbers of its
// first and last record), records never straddle two chunks, a full
// chunk's unused tail is padding (endOfChunk) and the last chunk is cut
// short after endOfFile and endOfBuffer, as OTF2's own writer lays them
// out.
type chunkWriter struct {
	w      io.Writer
	size   int
	buf    []byte
	events bool   // an event file: every chunk starts with a timestamp
	n      uint64 // records written
	first  uint64 // number of the chunk's first record
	time   uint64 // timestamp last written in the chunk
	stamp  bool   // the chunk has a timestamp
}

// newChunkWriter returns a writer of chunks of size bytes to w, in buf
// if it holds a chunk (the previous file's: a rank's event file after
// another's), else in a new buffer.
func newChunkWriter(w io.Writer, size int, events bool, buf []byte) *chunkWriter {
	if cap(buf) < size {
		buf = make([]byte, 0, size)
	}
	c := &chunkWriter{w: w, size: size, buf: buf[:0], events: events}
	c.start()
	return c
}

// start begins a new chunk.
func (c *chunkWriter) start() {
	c.buf = append(c.buf[:0], chunkHeader, littleEndian)
	c.buf = binary.LittleEndian.AppendUint64(c.buf, c.n+1)
	c.buf = binary.LittleEndian.AppendUint64(c.buf, 0) // set by flush
	c.first, c.stamp = c.n+1, false
}

// flush writes the current chunk with its last record's number set.
func (c *chunkWriter) flush() error {
	first, last := c.first, c.n
	if !c.events {
		first, last = 1, 0 // as OTF2 numbers definition chunks
	}
	binary.LittleEndian.PutUint64(c.buf[2:], first)
	binary.LittleEndian.PutUint64(c.buf[10:], last)
	_, err := c.w.Write(c.buf)
	return err
}

// record appends one record (its type byte and fields, rec) at time t
// (events only), starting a new chunk if it does not fit in this one.
// Room for endOfFile and endOfBuffer is kept in every chunk.
func (c *chunkWriter) record(t uint64, rec []byte) error {
	need := len(rec) + 2
	if c.events && (!c.stamp || t != c.time) {
		need += 9
	}
	if len(c.buf)+need > c.size {
		if len(c.buf) == chunkHeaderSize {
			return fmt.Errorf("a record of %d bytes does not fit in a chunk of %d", len(rec), c.size)
		}
		if err := c.pad(); err != nil {
			return err
		}
		return c.record(t, rec)
	}
	if c.events && (!c.stamp || t != c.time) {
		c.buf = append(c.buf, timestampRec)
		c.buf = binary.LittleEndian.AppendUint64(c.buf, t)
		c.time, c.stamp = t, true
	}
	c.buf = append(c.buf, rec...)
	c.n++
	return nil
}

// pad ends the current chunk and starts the next.
func (c *chunkWriter) pad() error {
	n := len(c.buf)
	c.buf = c.buf[:c.size]
	clear(c.buf[n:]) // endOfChunk padding
	if err := c.flush(); err != nil {
		return err
	}
	c.start()
	return nil
}

// close ends the file: endOfFile and endOfBuffer in the last chunk, cut
// short there.
func (c *chunkWriter) close() error {
	c.buf = append(c.buf, endOfFile, endOfBuffer)
	return c.flush()
}
