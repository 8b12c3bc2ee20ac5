package rsd

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"

	"kairos/prsd"
)

// input is a file being decoded: its bytes, where it was read whole (a
// compressed file, Decode's bytes), or the file itself, whose blocks are
// read one by one. A cluster kept as its events is then left in the
// file, its checksum checked as it is read, and its ranks' readers read
// its chunks there as a .ktr file's are: read whole, HPCC's .rsd (5.2 MB
// of events on 4 ranks) cost its replay 30% more CPU time than its .ktr,
// in fresh memory cleared and filled before any event was read.
type input struct {
	b    []byte      // the whole file, where f is nil
	f    io.ReaderAt // the file, or nil
	size int
	buf  []byte // f's bytes being checked
}

// at returns the n bytes at off, which the caller checked are in the
// file.
func (in *input) at(off, n int) ([]byte, error) {
	if in.f == nil {
		return in.b[off : off+n], nil
	}
	b := make([]byte, n)
	if _, err := in.f.ReadAt(b, int64(off)); err != nil {
		return nil, fmt.Errorf("byte %d: reading %d bytes (the file changed since it was opened?): %w", off, n, err)
	}
	return b, nil
}

// blockHead returns the body length of the block at off, checked to fit
// in the file, and its checksum.
func (in *input) blockHead(off int, what string) (int, uint32, error) {
	if in.size-off < 8 {
		return 0, 0, fmt.Errorf("byte %d: truncated: expected %s's block", off, what)
	}
	h, err := in.at(off, 8)
	if err != nil {
		return 0, 0, err
	}
	n := binary.LittleEndian.Uint32(h)
	if n > maxBlock || int(n) > in.size-off-8 {
		return 0, 0, fmt.Errorf("byte %d: %s's block of %d bytes overruns the file (%d bytes left)", off, what, n, in.size-off-8)
	}
	return int(n), binary.LittleEndian.Uint32(h[4:]), nil
}

// block returns the body of the block at off and the offset after it.
func (in *input) block(off int, what string) ([]byte, int, error) {
	n, sum, err := in.blockHead(off, what)
	if err != nil {
		return nil, 0, err
	}
	body, err := in.at(off+8, n)
	if err != nil {
		return nil, 0, err
	}
	if want := crc32.Checksum(body, castagnoli); sum != want {
		return nil, 0, checksumError(off, what, sum, want, n)
	}
	return body, off + 8 + n, nil
}

func checksumError(off int, what string, sum, want uint32, n int) error {
	return fmt.Errorf("byte %d: %s's checksum is 0x%08x, expected 0x%08x (the CRC-32C of its %d bytes)", off, what, sum, want, n)
}

// peekLen is the most of a cluster block read to find whether it holds
// the cluster's events: its ranklist, then its form.
const peekLen = 1 << 12

// leftEvents reads, from the file, the cluster block at off where it
// holds the cluster's events (version 4's form 0) and its ranklist fits
// in its first peekLen bytes: its checksum checked without keeping its
// bytes, the cluster's ranks and the offset and length of its events'
// ktr stream. It reports whether it did; if not, the block is to be read
// whole (decodeCluster, which reports what is wrong with it).
func (in *input) leftEvents(off int, version uint16, ranks int, a *arena) (decoded, int, int, bool) {
	if in.f == nil || version < 4 {
		return decoded{}, 0, 0, false
	}
	n, sum, err := in.blockHead(off, "")
	if err != nil {
		return decoded{}, 0, 0, false
	}
	head, err := in.at(off+8, min(n, peekLen))
	if err != nil {
		return decoded{}, 0, 0, false
	}
	d := &decoder{ranks: ranks, version: version, arena: a}
	d.B = head
	cl := decoded{Cluster: prsd.Cluster{Ranks: d.ranklist()}}
	if d.Err != nil || cl.Ranks == nil || d.Byte() != formEvents || d.Err != nil {
		return decoded{}, 0, 0, false
	}
	if got, ok := in.checksum(off+8, n); !ok || got != sum {
		return decoded{}, 0, 0, false
	}
	return cl, off + 8 + d.Off, n - d.Off, true
}

// checksum returns the CRC-32C of the n bytes of the file at off, and
// whether they could be read.
func (in *input) checksum(off, n int) (uint32, bool) {
	if len(in.buf) < min(n, 1<<18) {
		in.buf = make([]byte, min(n, 1<<18))
	}
	var sum uint32
	for n > 0 {
		b := in.buf[:min(n, len(in.buf))]
		if _, err := in.f.ReadAt(b, int64(off)); err != nil {
			return 0, false
		}
		sum = crc32.Update(sum, castagnoli, b)
		off, n = off+len(b), n-len(b)
	}
	return sum, true
}

// readerAt returns the file's bytes as a ReaderAt, for the readers of
// the clusters kept as their events.
func (in *input) readerAt() io.ReaderAt {
	if in.f == nil {
		return bytes.NewReader(in.b)
	}
	return in.f
}
