package otf2

import (
	"encoding/binary"
	"math"
)

// Buffer framing bytes (OTF2_Buffer.h).
const (
	endOfChunk   = 0x00 // rest of the chunk is padding
	endOfBuffer  = 0x01 // written after endOfFile
	endOfFile    = 0x02 // last record of a file
	chunkHeader  = 0x03 // first byte of every chunk
	timestampRec = 0x05 // event files: a raw u64 timestamp follows
	attrListRec  = 0x06 // event files: an attribute list precedes a record

	littleEndian = 0x42
	bigEndian    = 0x23

	// chunkHeaderSize is the header of a chunk of a chunked file: the two
	// bytes above, then the first and the last event number (raw u64).
	chunkHeaderSize = 18

	undefined32 = math.MaxUint32
	undefined64 = math.MaxUint64
)

// rbuf decodes OTF2's wire types from a byte slice in the byte order its
// chunk header named. A read past the end returns zero and sets short, so
// that a record is decoded first and checked once; bad marks a malformed
// compressed integer.
type rbuf struct {
	b     []byte
	pos   int
	big   bool
	short bool
	bad   bool
}

func (r *rbuf) left() int { return len(r.b) - r.pos }

func (r *rbuf) failed() bool { return r.short || r.bad }

func (r *rbuf) u8() uint8 {
	if r.pos >= len(r.b) {
		r.short = true
		return 0
	}
	v := r.b[r.pos]
	r.pos++
	return v
}

func (r *rbuf) fixed(n int) []byte {
	if r.left() < n {
		r.short = true
		r.pos = len(r.b)
		return nil
	}
	s := r.b[r.pos : r.pos+n]
	r.pos += n
	return s
}

func (r *rbuf) u16() uint16 {
	s := r.fixed(2)
	if s == nil {
		return 0
	}
	if r.big {
		return binary.BigEndian.Uint16(s)
	}
	return binary.LittleEndian.Uint16(s)
}

func (r *rbuf) u32full() uint32 {
	s := r.fixed(4)
	if s == nil {
		return 0
	}
	if r.big {
		return binary.BigEndian.Uint32(s)
	}
	return binary.LittleEndian.Uint32(s)
}

// u64full reads a raw 8-byte value (timestamps, chunk headers, doubles).
func (r *rbuf) u64full() uint64 {
	s := r.fixed(8)
	if s == nil {
		return 0
	}
	if r.big {
		return binary.BigEndian.Uint64(s)
	}
	return binary.LittleEndian.Uint64(s)
}

func (r *rbuf) f64() float64 { return math.Float64frombits(r.u64full()) }

// u64 reads a compressed integer: a byte n, then the n low-order bytes of
// the value; n = 0xFF is the undefined value (all ones).
func (r *rbuf) u64() uint64 {
	// Where eight bytes follow n, the value is one load of them, cut to
	// its n bytes, rather than a loop over them (8% of reading HPCC's
	// archive).
	if p := r.pos; p+9 <= len(r.b) {
		if n := uint(r.b[p]); n <= 8 {
			r.pos = p + 1 + int(n)
			if r.big {
				return binary.BigEndian.Uint64(r.b[p+1:]) >> (64 - 8*n)
			}
			return binary.LittleEndian.Uint64(r.b[p+1:]) & (^uint64(0) >> (64 - 8*n))
		}
	}
	if r.pos >= len(r.b) {
		r.short = true
		return 0
	}
	n := int(r.b[r.pos])
	r.pos++
	switch {
	case n == 0:
		return 0
	case n == 0xFF:
		return undefined64
	case n > 8:
		r.bad = true
		return 0
	case r.left() < n:
		r.short = true
		r.pos = len(r.b)
		return 0
	}
	s := r.b[r.pos : r.pos+n]
	r.pos += n
	var v uint64
	if r.big {
		for _, c := range s {
			v = v<<8 | uint64(c)
		}
		return v
	}
	for i := n - 1; i >= 0; i-- {
		v = v<<8 | uint64(s[i])
	}
	return v
}

// u32 reads a compressed 32-bit integer (at most 4 value bytes).
func (r *rbuf) u32() uint32 {
	if r.pos < len(r.b) {
		if n := r.b[r.pos]; n > 4 && n != 0xFF {
			r.bad = true
			r.pos++
			return 0
		}
	}
	v := r.u64()
	if v == undefined64 {
		return undefined32
	}
	return uint32(v)
}

// str reads a NUL-terminated string.
func (r *rbuf) str() string {
	for i := r.pos; i < len(r.b); i++ {
		if r.b[i] == 0 {
			s := string(r.b[r.pos:i])
			r.pos = i + 1
			return s
		}
	}
	r.short = true
	r.pos = len(r.b)
	return ""
}

// recordLength reads a record's length: one byte, or 0xFF and a raw u64.
func (r *rbuf) recordLength() uint64 {
	n := r.u8()
	if n != 0xFF {
		return uint64(n)
	}
	return r.u64full()
}

// record reads a record's length and returns a decoder of its payload,
// advancing r past it. ok is false if the record overruns the buffer.
func (r *rbuf) record() (payload rbuf, ok bool) {
	n := r.recordLength()
	if r.short || n > uint64(r.left()) {
		r.short = true
		return rbuf{}, false
	}
	p := rbuf{b: r.b[r.pos : r.pos+int(n)], big: r.big}
	r.pos += int(n)
	return p, true
}
