// Package varint reads the varint-encoded structures Kairos writes (the
// event codec, the ktr meta block and index) from a byte slice with bounds
// checks. The first problem is kept with its offset and every later read
// returns zero, so that a decoder reads a whole structure straight through
// and checks for an error once; no length read from the input can make it
// allocate more than the input could hold.
package varint

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
)

// Error is a malformed input: what was wrong, at which byte offset.
type Error struct {
	Offset int
	What   string
}

func (e *Error) Error() string { return fmt.Sprintf("byte %d: %s", e.Offset, e.What) }

// Reader reads from B starting at Off; Err holds the first problem met.
type Reader struct {
	B   []byte
	Off int
	Err error
}

// Fail records what went wrong at the current offset (if nothing did
// before) and ends the input.
func (d *Reader) Fail(what string) {
	if d.Err == nil {
		d.Err = &Error{Offset: d.Off, What: what}
	}
	d.Off = len(d.B)
}

// Byte reads one byte.
func (d *Reader) Byte() byte {
	if d.Off >= len(d.B) {
		d.Fail("truncated, expected a byte")
		return 0
	}
	c := d.B[d.Off]
	d.Off++
	return c
}

// Uvarint reads an unsigned varint.
func (d *Reader) Uvarint() uint64 {
	v, n := binary.Uvarint(d.B[d.Off:])
	if n <= 0 {
		d.Fail("truncated or overlong unsigned varint")
		return 0
	}
	d.Off += n
	return v
}

// Varint reads a zig-zag signed varint.
func (d *Reader) Varint() int64 {
	v, n := binary.Varint(d.B[d.Off:])
	if n <= 0 {
		d.Fail("truncated or overlong signed varint")
		return 0
	}
	d.Off += n
	return v
}

// Skip passes over a varint, signed or not, without decoding it.
func (d *Reader) Skip() {
	for i, c := range d.B[d.Off:min(d.Off+binary.MaxVarintLen64, len(d.B))] {
		if c < 0x80 {
			d.Off += i + 1
			return
		}
	}
	d.Fail("truncated or overlong varint")
}

// Uint32 reads an unsigned varint that must fit 32 bits.
func (d *Reader) Uint32() uint32 {
	at := d.Off
	v := d.Uvarint()
	if v > math.MaxUint32 {
		d.fail32(at, strconv.FormatUint(v, 10))
	}
	return uint32(v)
}

// Int32 reads a signed varint that must fit 32 bits.
func (d *Reader) Int32() int32 {
	at := d.Off
	v := d.Varint()
	if v < math.MinInt32 || v > math.MaxInt32 {
		d.fail32(at, strconv.FormatInt(v, 10))
	}
	return int32(v)
}

// fail32 fails at offset at: the value there does not fit its 32 bits.
// (The value is formatted by the caller, only then: boxing it for every
// call would allocate on the codec's hottest path.)
func (d *Reader) fail32(at int, v string) {
	if d.Err == nil {
		d.Off = at
		d.Fail("value " + v + " does not fit 32 bits")
	}
}

// Fixed64 reads 8 little-endian bytes.
func (d *Reader) Fixed64() uint64 {
	if len(d.B)-d.Off < 8 {
		d.Fail("truncated, expected 8 bytes")
		return 0
	}
	v := binary.LittleEndian.Uint64(d.B[d.Off:])
	d.Off += 8
	return v
}

// Count reads the number of items that follow, each taking at least min
// bytes, and rejects a count the remaining bytes cannot hold or that
// exceeds max, so that no allocation is driven by an unchecked length.
func (d *Reader) Count(min, max int) int {
	at := d.Off
	n := d.Uvarint()
	if d.Err == nil && (n > uint64((len(d.B)-d.Off)/min) || n > uint64(max)) {
		d.Off = at
		d.Fail(fmt.Sprintf("count %d exceeds what the remaining %d bytes can hold", n, len(d.B)-at))
		return 0
	}
	return int(n)
}

// PrefixedString reads a string preceded by its length.
func (d *Reader) PrefixedString() string {
	n := d.Count(1, math.MaxInt)
	if d.Err != nil {
		return ""
	}
	s := string(d.B[d.Off : d.Off+n])
	d.Off += n
	return s
}

// Fast reads what Reader reads, with methods small enough for the compiler
// to inline into a decoder's hottest loop (a Reader's method builds its
// error, a call that makes it too big to inline: reading the event codec
// through Reader took a third of the time of reading a .ktr file). A read
// that fails returns 0 and marks Off, and every read after it fails at the
// same offset, so that a decoder reads a whole structure straight through
// and checks Failed once; Err then describes the first failure.
type Fast struct {
	B []byte
	// Off is the offset of the next read; once a read has failed, the
	// failed read's offset with the sign bit set.
	Off  int
	what string // why a read failed, if not a malformed value
}

// Failed reports whether a read failed.
func (f *Fast) Failed() bool { return f.Off < 0 }

// Err returns the first failure as an *Error, nil if none.
func (f *Fast) Err() error {
	if !f.Failed() {
		return nil
	}
	what := f.what
	if what == "" {
		what = "truncated, or an overlong varint"
	}
	return &Error{Offset: f.Off &^ math.MinInt, What: what}
}

// Uvarint reads an unsigned varint, accepting what binary.Uvarint does.
func (f *Fast) Uvarint() (v uint64) {
	for i, s := uint(f.Off), uint(0); i < uint(len(f.B)); i, s = i+1, s+7 {
		c := f.B[i]
		if s == 63 && c > 1 { // the tenth byte holds bit 63 alone
			break
		}
		// s&63 is s (it stops at 63): the shifts need no check of
		// their count, a sixth of a one-byte read's instructions.
		if c < 0x80 {
			f.Off = int(i + 1)
			return v | uint64(c)<<(s&63)
		}
		v |= uint64(c&0x7f) << (s & 63)
	}
	f.Off |= math.MinInt
	return 0
}

// ReadUvarint reads an unsigned varint at b[off:] as binary.Uvarint
// does, and returns it with the offset past it: Fast.Uvarint for a
// decoder that keeps its offset in a register (a Fast lives in memory,
// where each read loads and stores its offset). A read that fails returns
// 0 and off with its sign bit set, and so does every read at such an
// offset: a decoder reads a whole structure straight through and checks
// once that the offset is not negative.
func ReadUvarint(b []byte, off int) (uint64, int) {
	var v uint64
	for i, s := uint(off), uint(0); i < uint(len(b)); i, s = i+1, s+7 {
		c := b[i]
		if s == 63 && c > 1 { // the tenth byte holds bit 63 alone
			break
		}
		if c < 0x80 {
			return v | uint64(c)<<(s&63), int(i + 1)
		}
		v |= uint64(c&0x7f) << (s & 63)
	}
	return 0, off | math.MinInt
}

// ReadByte reads the byte at b[off] as ReadUvarint reads a varint.
func ReadByte(b []byte, off int) (byte, int) {
	if uint(off) >= uint(len(b)) {
		return 0, off | math.MinInt
	}
	return b[off], off + 1
}

// ReadFixed64 reads 8 little-endian bytes at b[off:] as ReadUvarint reads
// a varint.
func ReadFixed64(b []byte, off int) (uint64, int) {
	if uint(off)+8 > uint(len(b)) {
		return 0, off | math.MinInt
	}
	return binary.LittleEndian.Uint64(b[off:]), off + 8
}

// Byte reads one byte.
func (f *Fast) Byte() byte {
	if uint(f.Off) >= uint(len(f.B)) {
		f.Off |= math.MinInt
		return 0
	}
	f.Off++
	return f.B[f.Off-1]
}

// Fixed64 reads 8 little-endian bytes.
func (f *Fast) Fixed64() uint64 {
	if uint(f.Off)+8 > uint(len(f.B)) {
		f.Off |= math.MinInt
		return 0
	}
	f.Off += 8
	return binary.LittleEndian.Uint64(f.B[f.Off-8:])
}

// Count reads the number of items that follow as Reader.Count does,
// failing where they could not fit the remaining bytes or exceed max.
func (f *Fast) Count(min, max int) int {
	at := f.Off
	n := f.Uvarint()
	if f.Failed() {
		return 0
	}
	if n > uint64((len(f.B)-f.Off)/min) || n > uint64(max) {
		f.what = fmt.Sprintf("count %d exceeds what the remaining %d bytes can hold", n, len(f.B)-at)
		f.Off = at | math.MinInt
		return 0
	}
	return int(n)
}

// Fail marks a failure of what, at offset at, unless a read failed
// before.
func (f *Fast) Fail(at int, what string) {
	if !f.Failed() {
		f.Off, f.what = at|math.MinInt, what
	}
}

// Zigzag returns the signed value of the zig-zag encoding u (a signed
// varint read as an unsigned one).
func Zigzag(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }
