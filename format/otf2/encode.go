package otf2

import (
	"encoding/binary"
	"math/bits"
)

// enc appends OTF2's wire types in little-endian order: the inverse of
// rbuf, for the writer. Every value is appended to b.
type enc struct{ b []byte }

// reset empties w, keeping its buffer.
func (w *enc) reset() { w.b = w.b[:0] }

// u8 appends a byte.
func (w *enc) u8(v uint8) { w.b = append(w.b, v) }

// u64full appends a raw 8-byte value (timestamps, chunk headers).
func (w *enc) u64full(v uint64) { w.b = binary.LittleEndian.AppendUint64(w.b, v) }

// u32full appends a raw 4-byte value (the anchor's counts).
func (w *enc) u32full(v uint32) { w.b = binary.LittleEndian.AppendUint32(w.b, v) }

// u64 appends a compressed integer: the number of its significant bytes,
// then those bytes; 0 is one byte 0, the undefined value (all ones) one
// byte 0xFF.
func (w *enc) u64(v uint64) {
	if v == undefined64 {
		w.b = append(w.b, 0xFF)
		return
	}
	n := (bits.Len64(v) + 7) / 8
	w.b = append(w.b, byte(n))
	for i := 0; i < n; i++ {
		w.b = append(w.b, byte(v>>(8*i)))
	}
}

// u32 appends a compressed 32-bit integer; undefined32 is one byte 0xFF.
func (w *enc) u32(v uint32) {
	if v == undefined32 {
		w.b = append(w.b, 0xFF)
		return
	}
	w.u64(uint64(v))
}

// str appends a NUL-terminated string.
func (w *enc) str(s string) {
	w.b = append(w.b, s...)
	w.b = append(w.b, 0)
}

// begin starts a record of type typ with a length, whose fields follow;
// end, given begin's result, sets the length.
func (w *enc) begin(typ uint8) int {
	w.b = append(w.b, typ, 0)
	return len(w.b)
}

// end sets the length of the record whose payload starts at start: one
// byte, or 0xFF and a raw u64 for a payload of 255 bytes or more.
func (w *enc) end(start int) {
	n := len(w.b) - start
	if n < 0xFF {
		w.b[start-1] = byte(n)
		return
	}
	w.b[start-1] = 0xFF
	w.b = append(w.b, make([]byte, 8)...)
	copy(w.b[start+8:], w.b[start:start+n])
	binary.LittleEndian.PutUint64(w.b[start:], uint64(n))
}
