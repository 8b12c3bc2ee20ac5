package ktr

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"sync"
	"unsafe"

	"kairos/internal/prefault"
	"kairos/internal/varint"
	"kairos/trace"
)

// A chunk's uncompressed payload splits each event in two: a structure
// part, which repeats from one iteration of a program to the next, and the
// values that vary (compute amounts, times, request ids), kept in columns
// of their own so that the structure compresses to almost nothing and the
// values compress as well as their noise allows. The payload is
//
//	uvarint structure length, uvarint compute length, uvarint time length,
//	uvarint time unit (the greatest common divisor of the time values);
//	since version 4, twice the unit plus the time column's layout (1:
//	shifted)
//	structure: the events in the trace codec (trace.AppendEvent, from a
//	           zero CodecState) with Compute 1 where it was a non-zero
//	           integer of magnitude below 2^53, 2 where it was any other
//	           non-zero value, Enter and Exit 0, Request 1 where it was not
//	           0 and every element of Requests 0: the structure events.
//	           Since version 2, a form byte first: 0, the structure
//	           events follow; 1, a uvarint T (1 to 256 in version 2,
//	           to maxTemplates since version 3), the T distinct
//	           structure events in the codec (from a zero CodecState),
//	           then each event as the uvarint index of its own among
//	           them
//	compute:   the non-zero Compute values, as 8-byte two's complement
//	           integers (placeholder 1) or IEEE-754 bits (placeholder 2),
//	           byte-transposed
//	time:      for each timed event, Enter minus the previous timed
//	           event's Exit and Exit minus Enter, divided by the time
//	           unit, 8-byte two's complement, byte-transposed; in the
//	           shifted layout each value v as (v >> z) << 8 | z, z its
//	           trailing zero bits (0 for v = 0)
//	requests:  the rest: for each Request and each element of Requests, in
//	           event order, its difference from the previous request id
//	           (wrapping), as a zigzag varint
//
// Byte-transposing a column of n 8-byte values writes the n first bytes,
// then the n second bytes and so on: the high bytes of similar values are
// alike and compress away.

// The structure column's forms (version 2): its events, or its distinct
// events and an index of one of them an event. A program's iterations
// repeat a few events: decoding each once and copying it for every event
// takes a fraction of decoding every event (an analytic replay of BT of 64
// ranks, 83 distinct events a rank, spent a third of its time decoding).
const (
	formEvents    = 0
	formTemplates = 1
	// maxTemplates bounds the distinct events of a chunk in the
	// templates form, and so what a reader holds for them (64 bytes
	// each, and their vectors): past it, the structure is written as its
	// events. Version 2 had 256 (maxTemplatesV2). Real programs' chunks
	// have more: those of LAMMPS' melt and HPCC on 16 ranks, 350 and 740
	// to 860 distinct events (partners, sizes and call sites vary), each
	// repeated 40 to 70 times.
	maxTemplates   = 4096
	maxTemplatesV2 = 256
	// minRepeats is how many times a chunk's events repeat on average,
	// at least, in the templates form.
	minRepeats = 4
)

// templateSize bounds what a reader holds for a distinct event: an Event
// and its vectors' elements (this package's readers hold a template, a
// third of an Event). The writer's rule counts it, and stays as files
// were written.
func templateSize(e *trace.Event) int {
	return int(unsafe.Sizeof(*e)) + 8*(len(e.SendCounts)+len(e.RecvCounts)+len(e.Requests))
}

// The structure's Compute placeholders: which form the compute column
// holds the value in.
const (
	computeInt   = 1 // an integer, as an int64
	computeFloat = 2 // anything else, as IEEE-754 bits
)

// payloadWriter accumulates one chunk's payload.
type payloadWriter struct {
	structure      []byte
	compute, times []byte // 8-byte values, not yet transposed
	shifted        []byte // times in the shifted layout (shift)
	requests       []byte
	st             trace.CodecState
	lastExit       trace.Time
	lastReq        uint64
	ev             trace.Event
	reqs           []uint64

	// The structure in the templates form, built beside the events: the
	// distinct structure events in the codec (tst) and the events'
	// indexes of theirs; past maxTemplates, given up (many).
	tmpl, idx []byte
	tst       trace.CodecState
	tmplOf    tmplTable
	many      bool
	n         int // the indexes in idx
	tmplMem   int // what a reader holds for the distinct events (templateSize)
	// structs are the distinct events' encodings in the events form, by
	// number, kept for their next instances (trace.AppendSame): most
	// events of a chunk copy one of a few, and encoding every event
	// again took a tenth of the instructions of converting HPCC's .ktr
	// (631 of 6,623 M).
	structs []trace.Encoded
}

// add appends e to the chunk.
func (w *payloadWriter) add(e *trace.Event) {
	s := &w.ev
	*s = *e
	if e.Compute != 0 {
		v := math.Float64bits(e.Compute)
		s.Compute = computeFloat
		if c := e.Compute; c == math.Trunc(c) && math.Abs(c) < 1<<53 {
			v, s.Compute = uint64(int64(c)), computeInt
		}
		w.compute = binary.LittleEndian.AppendUint64(w.compute, v)
	}
	if e.HasTime {
		s.Enter, s.Exit = 0, 0
		w.times = binary.LittleEndian.AppendUint64(w.times, uint64(e.Enter-w.lastExit))
		w.times = binary.LittleEndian.AppendUint64(w.times, uint64(e.Exit-e.Enter))
		w.lastExit = e.Exit
	}
	if e.Request != 0 {
		s.Request = 1
		w.request(e.Request)
	}
	if e.Requests != nil {
		if cap(w.reqs) < len(e.Requests) || w.reqs == nil {
			w.reqs = make([]uint64, len(e.Requests))
		}
		s.Requests = w.reqs[:len(e.Requests)] // not nil, even when empty
		clear(s.Requests)
		for _, q := range e.Requests {
			w.request(q)
		}
	}
	i, ok := w.addTemplate(s)
	if !ok {
		w.structure = trace.AppendEvent(w.structure, s, &w.st)
		return
	}
	if int(i) == len(w.structs) {
		w.structs = append(w.structs, trace.Encoded{})
	}
	w.structure = w.st.AppendSame(w.structure, s, &w.structs[i])
}

// addTemplate adds s, a structure event, to the templates form, and
// returns its number there, if it has one (not past maxTemplates).
func (w *payloadWriter) addTemplate(s *trace.Event) (uint32, bool) {
	if w.many {
		return 0, false
	}
	i, ok := w.tmplOf.find(s)
	if !ok {
		if w.tmplOf.len() == maxTemplates {
			w.many = true
			return 0, false
		}
		i = w.tmplOf.add(s)
		w.tmpl = trace.AppendEvent(w.tmpl, s, &w.tst)
		w.tmplMem += templateSize(s)
	}
	w.idx = binary.AppendUvarint(w.idx, uint64(i))
	w.n++
	return i, true
}

func (w *payloadWriter) request(q uint64) {
	w.requests = binary.AppendVarint(w.requests, int64(q-w.lastReq))
	w.lastReq = q
}

// size is the payload's length so far.
func (w *payloadWriter) size() int {
	return len(w.structure) + len(w.compute) + len(w.times) + len(w.requests) + 3*binary.MaxVarintLen32
}

// appendTo appends the payload to dst and, where its times take the
// shifted layout (shift), the payload in that layout to sdst (nil
// otherwise), and resets w for the next chunk.
func (w *payloadWriter) appendTo(dst, sdst []byte) (raw, shifted []byte) {
	unit := scaleDown(w.times)
	t := uint64(w.tmplOf.len())
	tmplLen := 1 + varintLen(t) + len(w.tmpl) + len(w.idx)
	// The templates form where the events repeat and it is not longer.
	// (Where they repeat less, zstd found more of the events form's
	// repeats, against the first chunk too: the real stencil4d's chunks of
	// 38 events, 24 distinct, took 4% more bytes as templates.) Past
	// version 2's 256 distinct events, only where what a reader holds for
	// them is no more than the chunk's payload, which it holds too: a
	// replay's memory at most doubles where its ranks' chunks hold
	// thousands of distinct events.
	templates := !w.many && w.n >= minRepeats*int(t) && tmplLen <= 1+len(w.structure) &&
		(t <= maxTemplatesV2 || w.tmplMem <= len(w.structure)+len(w.compute)+len(w.times)+len(w.requests))
	raw = w.appendPayload(dst, unit, templates, tmplLen, false)
	if w.shift() {
		shifted = w.appendPayload(sdst, unit, templates, tmplLen, true)
	}
	w.tmplOf.reset()
	w.tst.Restart()
	for i := range w.structs {
		w.structs[i].Forget()
	}
	*w = payloadWriter{structure: w.structure[:0], compute: w.compute[:0], times: w.times[:0],
		shifted: w.shifted[:0], requests: w.requests[:0], reqs: w.reqs,
		tmpl: w.tmpl[:0], idx: w.idx[:0], tst: w.tst, tmplOf: w.tmplOf, structs: w.structs}
	return raw, shifted
}

// appendPayload appends the payload, its structure in the templates form
// or not, its times in the shifted layout (w.shifted) or not.
func (w *payloadWriter) appendPayload(dst []byte, unit uint64, templates bool, tmplLen int, shifted bool) []byte {
	if templates {
		dst = binary.AppendUvarint(dst, uint64(tmplLen))
	} else {
		dst = binary.AppendUvarint(dst, uint64(1+len(w.structure)))
	}
	dst = binary.AppendUvarint(dst, uint64(len(w.compute)))
	dst = binary.AppendUvarint(dst, uint64(len(w.times)))
	times, layout := w.times, uint64(0)
	if shifted {
		times, layout = w.shifted, 1
	}
	dst = binary.AppendUvarint(dst, unit<<1|layout)
	if templates {
		dst = binary.AppendUvarint(append(dst, formTemplates), uint64(w.tmplOf.len()))
		dst = append(append(dst, w.tmpl...), w.idx...)
	} else {
		dst = append(append(dst, formEvents), w.structure...)
	}
	dst = appendTransposed(dst, w.compute)
	dst = appendTransposed(dst, times)
	return append(dst, w.requests...)
}

// minShift is the trailing zero bits a time value has on average, at
// least, where the writer tries the shifted layout. A program's exact
// times have about 1 (each bit 0 or 1 alike: HPCC's chunks 0.9 to 1.1,
// SMG2000's 0.5 to 1.7), times rounded within 1% 2.5 to 7.5 (HPCC's on 4
// and 64 ranks, SMG2000's; trace.Rounded): their significant bits sit
// at varying places, which the shifted layout brings to the value's
// second byte, the number of zero bits in its first. (HPCC's rounded
// times on 64 ranks, kept as their events in a reduction: chunks 0.9%
// smaller, and their frames at zstd's fastest level within 1/64 of the
// others' where in the plain layout they were 32% larger: 6% fewer
// instructions in a replay; BENCHMARKS.md.)
const minShift = 2

// maxShifted bounds the magnitude of a time value's significant part in
// the shifted layout: it takes the value's 7 high bytes.
const maxShifted = 1 << 55

// shift fills w.shifted with the time column in the shifted layout and
// reports whether the chunk's times take it: their values have minShift
// trailing zero bits on average and their significant parts fit.
// The column is filled only where it is taken: a program's exact times,
// most chunks a writer sees, are only counted.
func (w *payloadWriter) shift() bool {
	zeros := 0
	for i := 0; i < len(w.times); i += 8 {
		v := int64(binary.LittleEndian.Uint64(w.times[i:]))
		z := trailingZeros(v)
		if m := v >> z; m >= maxShifted || m < -maxShifted {
			return false
		}
		zeros += z
	}
	if len(w.times) == 0 || zeros < minShift*len(w.times)/8 {
		return false
	}
	w.shifted = w.shifted[:0]
	for i := 0; i < len(w.times); i += 8 {
		v := int64(binary.LittleEndian.Uint64(w.times[i:]))
		z := trailingZeros(v)
		w.shifted = binary.LittleEndian.AppendUint64(w.shifted, uint64(v>>z)<<8|uint64(z))
	}
	return true
}

// trailingZeros is v's trailing zero bits, 0 for v = 0.
func trailingZeros(v int64) int {
	if v == 0 {
		return 0
	}
	return bits.TrailingZeros64(uint64(v))
}

// unshift is the value of x, a time value in the shifted layout whose
// shift (its first byte) checkShifts checked: at most 63, so that x & 63
// is that byte, and the shift needs no test for 64 bits or more.
func unshift(x uint64) uint64 { return uint64(int64(x)>>8) << (x & 63) }

// varintLen is the length of v as a uvarint.
func varintLen(v uint64) int { return (bits.Len64(v|1) + 6) / 7 }

// scaleDown divides the 8-byte signed values of col by their greatest
// common divisor, the time unit, and returns it (1 if every value is 0,
// or the divisor is 2^63: the payload holds twice the unit).
// Timestamps taken with a nanosecond or microsecond clock are multiples of
// 1,000 or 1,000,000 picoseconds: dividing saves 10 to 20 bits a value.
func scaleDown(col []byte) uint64 {
	var g uint64
	for i := 0; i < len(col); i += 8 {
		g = gcd(g, abs64(int64(binary.LittleEndian.Uint64(col[i:]))))
	}
	if g <= 1 || g > math.MaxInt64 {
		return 1
	}
	for i := 0; i < len(col); i += 8 {
		v := int64(binary.LittleEndian.Uint64(col[i:]))
		binary.LittleEndian.PutUint64(col[i:], uint64(v/int64(g)))
	}
	return g
}

// abs64 returns |v| as an unsigned value (correct for math.MinInt64 too).
func abs64(v int64) uint64 {
	if v < 0 {
		return -uint64(v)
	}
	return uint64(v)
}

func gcd(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// appendTransposed appends the byte-transposition of a column of 8-byte
// values: the values' first bytes, then their second bytes, and so on.
// It takes eight values at a time, an 8 x 8 byte matrix transposed in
// registers (transpose8) whose rows go to the eight streams; the rest one
// by one.
func appendTransposed(dst, col []byte) []byte {
	n := len(col) / 8
	base := len(dst)
	dst = append(dst, make([]byte, 8*n)...)
	out := dst[base:]
	d0, d1, d2, d3 := out[0*n:1*n], out[1*n:2*n], out[2*n:3*n], out[3*n:4*n]
	d4, d5, d6, d7 := out[4*n:5*n], out[5*n:6*n], out[6*n:7*n], out[7*n:8*n]
	le := binary.LittleEndian
	i := 0
	for ; i+8 <= n; i += 8 {
		c := col[8*i : 8*i+64]
		m0, m1, m2, m3, m4, m5, m6, m7 := transpose8(le.Uint64(c[0:]), le.Uint64(c[8:]), le.Uint64(c[16:]), le.Uint64(c[24:]),
			le.Uint64(c[32:]), le.Uint64(c[40:]), le.Uint64(c[48:]), le.Uint64(c[56:]))
		le.PutUint64(d0[i:], m0)
		le.PutUint64(d1[i:], m1)
		le.PutUint64(d2[i:], m2)
		le.PutUint64(d3[i:], m3)
		le.PutUint64(d4[i:], m4)
		le.PutUint64(d5[i:], m5)
		le.PutUint64(d6[i:], m6)
		le.PutUint64(d7[i:], m7)
	}
	for ; i < n; i++ {
		v := le.Uint64(col[8*i:])
		d0[i], d1[i], d2[i], d3[i] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
		d4[i], d5[i], d6[i], d7[i] = byte(v>>32), byte(v>>40), byte(v>>48), byte(v>>56)
	}
	return dst
}

// untranspose writes into dst (len(src) bytes) the 8-byte values whose
// byte-transposition is src. It takes eight values at a time: a word of
// each of the eight streams, an 8 x 8 byte matrix transposed in registers
// (transpose8) and stored as the eight values; the rest one by one.
func untranspose(dst, src []byte) {
	n := len(src) / 8
	s0, s1, s2, s3 := src[0*n:1*n], src[1*n:2*n], src[2*n:3*n], src[3*n:4*n]
	s4, s5, s6, s7 := src[4*n:5*n], src[5*n:6*n], src[6*n:7*n], src[7*n:8*n]
	dst = dst[:8*n]
	le := binary.LittleEndian
	i := 0
	for ; i+8 <= n; i += 8 {
		m0, m1, m2, m3, m4, m5, m6, m7 := transpose8(le.Uint64(s0[i:]), le.Uint64(s1[i:]), le.Uint64(s2[i:]), le.Uint64(s3[i:]),
			le.Uint64(s4[i:]), le.Uint64(s5[i:]), le.Uint64(s6[i:]), le.Uint64(s7[i:]))
		d := dst[8*i : 8*i+64]
		le.PutUint64(d[0:], m0)
		le.PutUint64(d[8:], m1)
		le.PutUint64(d[16:], m2)
		le.PutUint64(d[24:], m3)
		le.PutUint64(d[32:], m4)
		le.PutUint64(d[40:], m5)
		le.PutUint64(d[48:], m6)
		le.PutUint64(d[56:], m7)
	}
	for ; i < n; i++ {
		v := uint64(s0[i]) | uint64(s1[i])<<8 | uint64(s2[i])<<16 | uint64(s3[i])<<24 |
			uint64(s4[i])<<32 | uint64(s5[i])<<40 | uint64(s6[i])<<48 | uint64(s7[i])<<56
		le.PutUint64(dst[8*i:], v)
	}
}

// scratch holds buffers a reader needs only for a moment, so that a
// replay, which holds a reader of every rank at once, does not hold them
// for every rank.
var scratch = sync.Pool{New: func() any { return new([]byte) }}

// borrow returns a scratch buffer of n bytes, and what to give back to
// scratch when done.
func borrow(n int) (*[]byte, []byte) {
	sp := scratch.Get().(*[]byte)
	if cap(*sp) < n {
		*sp = make([]byte, n)
		prefault.Bytes(*sp) // read or written whole
	}
	return sp, (*sp)[:n]
}

// untransposeInPlace untransposes the columns of b, the first of n bytes
// and the second after it, where they are, through a scratch buffer: so
// that a reader keeps no buffer of its own for them, a replay of many
// ranks having every rank's chunk in memory at once.
func untransposeInPlace(b []byte, n int) {
	sp, s := borrow(len(b))
	untranspose(s[:n], b[:n])
	untranspose(s[n:], b[n:])
	copy(b, s)
	scratch.Put(sp)
}

// transpose8 transposes the 8 x 8 byte matrix whose rows are m0 to m7 and
// whose columns are their bytes, from the least significant: it swaps the
// off-diagonal 4 x 4 blocks, then the 2 x 2 blocks within the four
// blocks, then the bytes within the sixteen (swapBlocks).
func transpose8(m0, m1, m2, m3, m4, m5, m6, m7 uint64) (uint64, uint64, uint64, uint64, uint64, uint64, uint64, uint64) {
	m0, m4 = swapBlocks(m0, m4, 32, 0x00000000ffffffff)
	m1, m5 = swapBlocks(m1, m5, 32, 0x00000000ffffffff)
	m2, m6 = swapBlocks(m2, m6, 32, 0x00000000ffffffff)
	m3, m7 = swapBlocks(m3, m7, 32, 0x00000000ffffffff)
	m0, m2 = swapBlocks(m0, m2, 16, 0x0000ffff0000ffff)
	m1, m3 = swapBlocks(m1, m3, 16, 0x0000ffff0000ffff)
	m4, m6 = swapBlocks(m4, m6, 16, 0x0000ffff0000ffff)
	m5, m7 = swapBlocks(m5, m7, 16, 0x0000ffff0000ffff)
	m0, m1 = swapBlocks(m0, m1, 8, 0x00ff00ff00ff00ff)
	m2, m3 = swapBlocks(m2, m3, 8, 0x00ff00ff00ff00ff)
	m4, m5 = swapBlocks(m4, m5, 8, 0x00ff00ff00ff00ff)
	m6, m7 = swapBlocks(m6, m7, 8, 0x00ff00ff00ff00ff)
	return m0, m1, m2, m3, m4, m5, m6, m7
}

// swapBlocks swaps the high w-bit block of each 2w-bit lane of a (lo
// masks the low blocks) with the low block of the same lane of b.
func swapBlocks(a, b uint64, w uint, lo uint64) (uint64, uint64) {
	return a&lo | (b&lo)<<w, a>>w&lo | b&^lo
}

// payloadReader decodes the events of one chunk's payload. Its fields
// are in the order the decoding of an event reads them: a replay reads an
// event of each rank in turn, and each rank's reader is out of the cache
// by its next event.
type payloadReader struct {
	structure      []byte
	soff           int
	st             trace.CodecState
	compute, times []byte // untransposed
	coff, toff     int
	lastExit       trace.Time
	unit           trace.Time // what the time column's values count
	shifted        bool       // the time column's layout
	requests       varint.Fast
	lastReq        uint64
	skip           trace.Skip // fields left unset (their columns unread)

	// layouts: the payload's time unit holds the time column's layout
	// (version 4).
	layouts bool
	// forms: the chunk's structure column starts with its form (version
	// 2). tmpl holds its distinct events in the templates form, where the
	// structure is their indexes (nil in the events form), at most
	// maxTmpl of them (the file's version's); an event copies one, its
	// vectors into counts and reqs.
	forms        bool
	maxTmpl      uint64
	tmpl         []uint16   // the distinct events' indexes in gen
	gen          []template // their pool's generation
	tmplVecs     []templateVectors
	pool         *templatePool // the file's, or nil: gen is tmplBuf
	rank         int32         // the chunk's (see template.relativeTo)
	counts       [2][]int64
	reqs         []uint64
	tmplBuf      []template
	tmplEvent    trace.Event // a distinct event as decoded
	usesTemplate bool
}

// reset starts decoding payload p.
func (r *payloadReader) reset(p []byte) error {
	d := &varint.Reader{B: p}
	ns, nc, nt, unit := d.Uvarint(), d.Uvarint(), d.Uvarint(), d.Uvarint()
	if d.Err != nil {
		return d.Err
	}
	shifted := false
	if r.layouts {
		shifted, unit = unit&1 != 0, unit>>1
	}
	if unit == 0 {
		return errors.New("time unit 0, expected at least 1")
	}
	rest := uint64(len(p) - d.Off)
	if ns > rest || nc > rest-ns || nt > rest-ns-nc || nc%8 != 0 || nt%16 != 0 {
		return fmt.Errorf("column lengths %d, %d and %d do not fit the %d bytes after them", ns, nc, nt, rest)
	}
	p = p[d.Off:]
	r.structure, p = p[:ns], p[ns:]
	r.compute, r.times = p[:nc], p[nc:nc+nt]
	if shifted {
		if err := checkShifts(p[nc : nc+nt]); err != nil {
			return err
		}
	}
	untransposeInPlace(p[:nc+nt], int(nc))
	r.shifted = shifted
	r.requests = varint.Fast{B: p[nc+nt:]}
	r.soff, r.coff, r.toff = 0, 0, 0
	r.st.Restart()
	r.st.Skim(r.skip)
	r.lastExit, r.lastReq, r.unit = 0, 0, trace.Time(unit)
	r.usesTemplate = false
	if !r.forms {
		return nil
	}
	if len(r.structure) == 0 {
		return errors.New("structure column of 0 bytes, expected its form byte")
	}
	switch form := r.structure[0]; form {
	case formEvents:
		r.soff = 1
		return nil
	case formTemplates:
		return r.readTemplates()
	default:
		return fmt.Errorf("structure form %d, expected %d (events) or %d (templates)", form, formEvents, formTemplates)
	}
}

// readTemplates decodes the distinct events of a structure column in the
// templates form, and leaves soff at the first event's index. They are
// decoded whole, whatever the reader skims (next skims their copies).
func (r *payloadReader) readTemplates() error {
	n, off := varint.ReadUvarint(r.structure, 1)
	// An event takes at least 2 bytes (its kind and mask).
	switch {
	case off < 0:
		return errors.New("structure byte 1: the count of distinct events is truncated, or an overlong varint")
	case n == 0 || n > r.maxTmpl || n > uint64(len(r.structure)-off)/2:
		return fmt.Errorf("structure byte 1: %d distinct events, expected 1 to %d that the column's %d bytes can hold", n, r.maxTmpl, len(r.structure))
	}
	if cap(r.tmpl) < int(n) {
		r.tmpl = make([]uint16, n)
	}
	r.tmpl, r.tmplVecs = r.tmpl[:n], r.tmplVecs[:0]
	var buf []template
	if r.pool != nil {
		// Decoded into the pool's scratch, then interned: a reader's
		// own room for them, kept from chunk to chunk, took 3.8 MB
		// of the 4,096-rank stencil's 49 MB analytic replay.
		sc := r.pool.scratchOf(int(n))
		defer r.pool.scratch.Put(sc)
		buf = (*sc)[:n]
	} else {
		if cap(r.tmplBuf) < int(n) {
			r.tmplBuf = make([]template, n)
		}
		buf = r.tmplBuf[:n]
	}
	r.st.Skim(0)
	defer r.st.Skim(r.skip)
	for i := range buf {
		e := &r.tmplEvent
		k, err := trace.DecodeEvent(r.structure[off:], e, &r.st)
		if err != nil {
			return fmt.Errorf("structure byte %d: distinct event %d: %w", off, i, err)
		}
		if !setTemplate(&buf[i], e, &r.tmplVecs) {
			return fmt.Errorf("structure byte %d: distinct event %d: compute placeholder %g, expected %d or %d", off, i, e.Compute, computeInt, computeFloat)
		}
		off += k
	}
	if r.pool == nil {
		for i := range r.tmpl {
			r.tmpl[i] = uint16(i)
		}
		r.gen = buf
	} else {
		for i := range buf {
			buf[i].relativeTo(r.rank)
		}
		r.gen = r.pool.intern(r.tmpl, buf)
	}
	r.soff, r.usesTemplate = off, true
	return nil
}

// errColumn reports a column that ends before the structure needs it.
var errColumn = errors.New("column exhausted")

// next decodes the next event into e; it reports false at the end of the
// structure.
func (r *payloadReader) next(e *trace.Event) (bool, error) {
	_, ok, err := r.decode(e, false)
	return ok, err
}

// decode decodes the next event into e, and reports false at the end of
// the structure. Where distinct is set and the event copies a distinct
// event with neither vectors nor negative amounts (whose check needs the
// event whole), it sets only e's Kind, Compute, HasTime, Enter, Exit and
// Request, and returns the distinct event's index (trace.DistinctReader);
// so too, where the reader is skimmed with trace.SkipUnreplayed, for an
// event a replay does nothing for, returning thinEvent; otherwise -1, e
// whole. It is one function, the columns' reads inline:
// a call more costs reading 3-7% (BenchmarkReadTraces).
func (r *payloadReader) decode(e *trace.Event, distinct bool) (int, bool, error) {
	if r.soff >= len(r.structure) {
		return -1, false, r.finish()
	}
	if r.usesTemplate {
		i, off := varint.ReadUvarint(r.structure, r.soff)
		if off < 0 || i >= uint64(len(r.tmpl)) {
			return -1, false, fmt.Errorf("structure byte %d: an event's index %s, expected one of the %d distinct events", r.soff, indexText(i, off), len(r.tmpl))
		}
		r.soff = off
		t := &r.gen[r.tmpl[i]]
		if distinct && t.vectors == 0 && t.sendBytes|t.recvBytes >= 0 {
			ok, err := r.varying(e, t)
			return int(i), ok, err
		}
		if r.skip&trace.SkipUnreplayed != 0 && !distinct && t.vectors == 0 && t.sendBytes|t.recvBytes >= 0 && t.unreplayed() {
			ok, err := r.varying(e, t)
			return thinEvent, ok, err
		}
		r.copyTemplate(e, t)
	} else {
		k, err := trace.DecodeEvent(r.structure[r.soff:], e, &r.st)
		if err != nil {
			return -1, false, fmt.Errorf("structure byte %d: %w", r.soff, err)
		}
		r.soff += k
	}
	if e.Compute != 0 {
		v, ok := r.fixed(r.compute, &r.coff)
		if !ok {
			return -1, false, fmt.Errorf("compute %w", errColumn)
		}
		switch e.Compute {
		case computeInt:
			e.Compute = float64(int64(v))
		case computeFloat:
			e.Compute = math.Float64frombits(v)
		default:
			return -1, false, fmt.Errorf("compute placeholder %g, expected %d or %d", e.Compute, computeInt, computeFloat)
		}
	}
	if e.HasTime && !r.stamp(e) {
		return -1, false, fmt.Errorf("time %w", errColumn)
	}
	if e.Request != 0 {
		// request's body: it is past the inlining budget, and this is
		// every non-blocking call's.
		r.lastReq += uint64(varint.Zigzag(r.requests.Uvarint()))
		e.Request = r.lastReq
	}
	for i := range e.Requests {
		e.Requests[i] = r.request()
	}
	if r.requests.Failed() {
		// Every read after the first that failed fails at its offset.
		return -1, false, fmt.Errorf("request %w or malformed at its byte %d", errColumn, r.requests.Off&^math.MinInt)
	}
	return -1, true, nil
}

// varying sets e's Kind and HasTime to distinct event t's, and the values
// that vary from the columns: its Compute, times and request.
func (r *payloadReader) varying(e *trace.Event, t *template) (bool, error) {
	e.Kind, e.Compute = t.kind, 0
	e.HasTime, e.Enter, e.Exit = t.flags&tmplHasTime != 0, 0, 0
	e.Request, e.Requests = 0, nil
	if t.compute != 0 {
		v, ok := r.fixed(r.compute, &r.coff)
		if !ok {
			return false, fmt.Errorf("compute %w", errColumn)
		}
		e.Compute = float64(int64(v)) // computeInt
		if t.compute == computeFloat {
			e.Compute = math.Float64frombits(v)
		}
	}
	if e.HasTime && !r.stamp(e) {
		return false, fmt.Errorf("time %w", errColumn)
	}
	if t.flags&tmplRequest != 0 && r.skip&trace.SkipRequests == 0 {
		e.Request = r.request()
		if r.requests.Failed() {
			return false, fmt.Errorf("request %w or malformed at its byte %d", errColumn, r.requests.Off&^math.MinInt)
		}
	}
	return true, nil
}

// stamp sets e's times from the time column; it reports false where the
// column is exhausted.
func (r *payloadReader) stamp(e *trace.Event) bool {
	b := r.times[r.toff:]
	if len(b) < 16 {
		return false
	}
	r.toff += 16
	gap, dur := binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[8:])
	if r.shifted {
		gap, dur = unshift(gap), unshift(dur)
	}
	e.Enter = r.lastExit + trace.Time(gap)*r.unit
	e.Exit = e.Enter + trace.Time(dur)*r.unit
	r.lastExit = e.Exit
	return true
}

// checkShifts checks that the values of a time column in the shifted
// layout, byte-transposed (their first bytes first), shift by 0 to 63
// bits: their first bytes or'ed together 32 at a time, and where that
// fails, one by one for the error.
func checkShifts(col []byte) error {
	first := col[:len(col)/8]
	le := binary.LittleEndian
	var or uint64
	i := 0
	for ; i+32 <= len(first); i += 32 {
		b := first[i : i+32 : i+32]
		or |= le.Uint64(b) | le.Uint64(b[8:]) | le.Uint64(b[16:]) | le.Uint64(b[24:])
	}
	if or&0xc0c0c0c0c0c0c0c0 != 0 {
		i = 0
	}
	for ; i < len(first); i++ {
		if z := first[i]; z > 63 {
			return fmt.Errorf("time value %d shifted by %d bits, expected 0 to 63", i, z)
		}
	}
	return nil
}

// distinct sets e to the current chunk's distinct event i, without the
// values that vary (decode's with distinct set).
func (r *payloadReader) distinct(e *trace.Event, i int) {
	r.copyTemplate(e, &r.gen[r.tmpl[i]])
	e.Compute, e.Request = 0, 0 // (Requests' elements are 0 in a template)
}

// copyInto copies v into *buf, grown as needed, and returns the copy: not
// nil, even where v is empty, as the codec reads an empty vector.
func copyInto[T int64 | uint64](buf *[]T, v []T) []T {
	if *buf == nil {
		*buf = make([]T, 0, len(v))
	}
	*buf = append((*buf)[:0], v...)
	return *buf
}

// indexText words an event's index for an error: the value, or what made
// it unreadable.
func indexText(i uint64, off int) string {
	if off < 0 {
		return "truncated, or an overlong varint"
	}
	return strconv.FormatUint(i, 10)
}

func (r *payloadReader) fixed(col []byte, off *int) (uint64, bool) {
	if len(col)-*off < 8 {
		return 0, false
	}
	v := binary.LittleEndian.Uint64(col[*off:])
	*off += 8
	return v, true
}

// request reads the next request id. A read that fails leaves
// r.requests failed, and the reads after it: next checks once, after the
// event's last.
func (r *payloadReader) request() uint64 {
	r.lastReq += uint64(varint.Zigzag(r.requests.Uvarint()))
	return r.lastReq
}

// finish checks that the structure used every value of the columns (but
// the requests', unread when skipped).
func (r *payloadReader) finish() error {
	if r.skip&trace.SkipRequests != 0 {
		r.requests.Off = len(r.requests.B)
	}
	if r.coff != len(r.compute) || r.toff != len(r.times) || r.requests.Off != len(r.requests.B) {
		return fmt.Errorf("%d compute, %d time and %d request bytes left over after the last event",
			len(r.compute)-r.coff, len(r.times)-r.toff, len(r.requests.B)-r.requests.Off)
	}
	return nil
}
