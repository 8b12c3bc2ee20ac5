package trace

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"

	"kairos/internal/varint"
)

// The event codec is the compact encoding of one rank's event stream. It
// is what a Rank holds in memory and what a ktr chunk holds before
// compression: a kind byte, a presence mask (uvarint), then only the fields
// the mask names. Absent fields are zero (Partner and Source: NoRank;
// datatypes: DefaultType), except CallSite and Region, which
// repeat the previous event's value, and timestamps, which are deltas from
// the previous event's exit. A typical untimed event takes 4 to 10 bytes.
const (
	fPartner = 1 << iota
	fTag
	fComm
	fSendBytes
	fRecvBytes
	fRequest
	fComputeInt
	fComputeRaw
	fTime
	fCallSite
	fRegion
	fTypes
	fSendCounts
	fRecvCounts
	fRequests
	fSource
	fNewComm
	fOp     // bit 17: a reduction's operation, Event.Op
	fHandle // bit 18: a one-sided window or file handle, Event.Handle
	fAll    = 1<<iota - 1
)

// maxCounts bounds the length of a decoded count or request vector so that
// corrupt input cannot make the decoder allocate without limit.
const maxCounts = 1 << 24

// CodecState is the state an encoder or decoder carries from one event to
// the next of a stream: the sticky call-site and region and the time base.
// The zero value starts a stream.
type CodecState struct {
	callSite uint64
	region   uint32
	lastExit Time
	lastReq  uint64
	skip     Skip // fields the decoder leaves unset
	// sites numbers the call-sites seen so far in the stream, so that a
	// call-site seen before is written as its small index.
	sites     []uint64
	siteIndex map[uint64]uint32
	// Buffers a decoder reuses for the vectors of the event it returns.
	sendCounts, recvCounts []int64
	requests               []uint64
}

// Skim makes the decoder leave the fields of s unset (a decoder only).
func (st *CodecState) Skim(s Skip) { st.skip = s }

// Restart makes a decoder's st start a new stream, as its zero value
// would, but keeps its Skim and the buffers it has grown, for a reader of
// many streams (a .ktr file's chunks).
func (st *CodecState) Restart() {
	*st = CodecState{skip: st.skip, sites: st.sites[:0], sendCounts: st.sendCounts[:0],
		recvCounts: st.recvCounts[:0], requests: st.requests[:0]}
}

// AppendEvent appends the encoding of e to dst and returns the extended
// slice.
func AppendEvent(dst []byte, e *Event, st *CodecState) []byte {
	mask := eventMask(e, st)
	dst = append(dst, byte(e.Kind))
	dst = binary.AppendUvarint(dst, uint64(mask))
	if mask&fPartner != 0 {
		dst = binary.AppendVarint(dst, int64(e.Partner))
	}
	if mask&fTag != 0 {
		dst = binary.AppendVarint(dst, int64(e.Tag))
	}
	if mask&fComm != 0 {
		dst = binary.AppendUvarint(dst, uint64(e.Comm))
	}
	if mask&fSendBytes != 0 {
		dst = binary.AppendVarint(dst, e.SendBytes)
	}
	if mask&fRecvBytes != 0 {
		dst = binary.AppendVarint(dst, e.RecvBytes)
	}
	if mask&fRequest != 0 {
		dst = binary.AppendVarint(dst, int64(e.Request-st.lastReq))
		st.lastReq = e.Request
	}
	if mask&fComputeInt != 0 {
		dst = binary.AppendUvarint(dst, uint64(e.Compute))
	}
	if mask&fComputeRaw != 0 {
		dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(e.Compute))
	}
	if mask&fTime != 0 {
		dst = binary.AppendVarint(dst, int64(e.Enter-st.lastExit))
		dst = binary.AppendVarint(dst, int64(e.Exit-e.Enter))
		st.lastExit = e.Exit
	}
	if mask&fCallSite != 0 {
		dst = st.appendCallSite(dst, e.CallSite)
	}
	if mask&fRegion != 0 {
		dst = binary.AppendUvarint(dst, uint64(e.Region))
		st.region = e.Region
	}
	if mask&fTypes != 0 {
		dst = append(dst, byte(e.SendType), byte(e.RecvType))
	}
	if mask&fSendCounts != 0 {
		dst = appendInts(dst, e.SendCounts)
	}
	if mask&fRecvCounts != 0 {
		dst = appendInts(dst, e.RecvCounts)
	}
	if mask&fRequests != 0 {
		dst = binary.AppendUvarint(dst, uint64(len(e.Requests)))
		for _, r := range e.Requests {
			dst = binary.AppendUvarint(dst, r)
		}
	}
	if mask&fSource != 0 {
		dst = binary.AppendVarint(dst, int64(e.Source))
	}
	if mask&fNewComm != 0 {
		dst = binary.AppendUvarint(dst, uint64(e.NewComm))
	}
	if mask&fOp != 0 {
		dst = append(dst, byte(e.Op))
	}
	if mask&fHandle != 0 {
		dst = binary.AppendUvarint(dst, uint64(e.Handle))
	}
	return dst
}

// maxSites bounds the call-site dictionary of one stream; call-sites past
// it are written in full each time.
const maxSites = 1 << 16

// appendCallSite writes c as 1 + its dictionary index if it was seen
// before, else as 0 followed by its 8 bytes (adding it to the dictionary).
func (st *CodecState) appendCallSite(dst []byte, c uint64) []byte {
	st.callSite = c
	if i, ok := st.siteIndex[c]; ok {
		return binary.AppendUvarint(dst, uint64(i)+1)
	}
	if len(st.sites) < maxSites {
		if st.siteIndex == nil {
			st.siteIndex = make(map[uint64]uint32)
		}
		st.siteIndex[c] = uint32(len(st.sites))
		st.sites = append(st.sites, c)
	}
	dst = append(dst, 0)
	return binary.LittleEndian.AppendUint64(dst, c)
}

// decodeCallSite reads the rest of a call-site appendCallSite wrote as k
// at offset at, where k is not the index of one seen before (which
// DecodeEvent reads itself): a new call-site, or an index out of range.
// It reads from off and returns the offset after it, as fail does.
func (st *CodecState) decodeCallSite(f *varint.Fast, src []byte, off, at int, k uint64) int {
	if k != 0 {
		return fail(f, src, off, at, "call-site index out of range")
	}
	c, off := varint.ReadFixed64(src, off)
	if off >= 0 && len(st.sites) < maxSites {
		st.sites = append(st.sites, c)
	}
	st.callSite = c
	return off
}

// Encoded is an event's encoding kept for the next time the same event
// comes in a stream (AppendSame): a writer whose events repeat, as a
// program's iterations do, encodes each distinct event once for each
// state of the stream it meets rather than every time.
type Encoded struct {
	b                    []byte
	lastReq              uint64
	lastExit             Time
	sameSite, sameRegion bool
	valid                bool
}

// Forget empties c, for a new stream (whose call sites are numbered
// anew).
func (c *Encoded) Forget() { c.valid = false }

// AppendSame appends the encoding of e to dst, as AppendEvent does. c
// holds nothing or the encoding of an event equal to e in this stream:
// where it was made in the state st is in, as far as e's encoding tells
// (e's call site and region the sticky ones or not, the request and
// time bases e's fields are taken from), it is appended as it is;
// otherwise e is encoded and c keeps it, unless its call site was new
// (written whole, then as its index).
func (st *CodecState) AppendSame(dst []byte, e *Event, c *Encoded) []byte {
	sameSite, sameRegion := e.CallSite == st.callSite, e.Region == st.region
	if c.valid && c.sameSite == sameSite && c.sameRegion == sameRegion &&
		(e.Request == 0 || c.lastReq == st.lastReq) && (!e.HasTime || c.lastExit == st.lastExit) {
		// AppendEvent's changes to st.
		st.callSite, st.region = e.CallSite, e.Region
		if e.Request != 0 {
			st.lastReq = e.Request
		}
		if e.HasTime {
			st.lastExit = e.Exit
		}
		return append(dst, c.b...)
	}
	_, known := st.siteIndex[e.CallSite]
	c.valid = sameSite || known
	c.sameSite, c.sameRegion, c.lastReq, c.lastExit = sameSite, sameRegion, st.lastReq, st.lastExit
	n := len(dst)
	dst = AppendEvent(dst, e, st)
	c.b = append(c.b[:0], dst[n:]...)
	return dst
}

func eventMask(e *Event, st *CodecState) uint32 {
	var m uint32
	set := func(cond bool, bit uint32) {
		if cond {
			m |= bit
		}
	}
	set(e.Partner != NoRank, fPartner)
	set(e.Tag != 0, fTag)
	set(e.Comm != 0, fComm)
	set(e.SendBytes != 0, fSendBytes)
	set(e.RecvBytes != 0, fRecvBytes)
	set(e.Request != 0, fRequest)
	if e.Compute != 0 {
		if e.Compute > 0 && e.Compute < 1<<53 && e.Compute == math.Trunc(e.Compute) {
			m |= fComputeInt
		} else {
			m |= fComputeRaw
		}
	}
	set(e.HasTime, fTime)
	set(e.CallSite != st.callSite, fCallSite)
	set(e.Region != st.region, fRegion)
	set(e.SendType != DefaultType || e.RecvType != DefaultType, fTypes)
	set(e.SendCounts != nil, fSendCounts)
	set(e.RecvCounts != nil, fRecvCounts)
	set(e.Requests != nil, fRequests)
	set(e.Source != NoRank, fSource)
	set(e.NewComm != 0, fNewComm)
	set(e.Op != OpNone, fOp)
	set(e.Handle != 0, fHandle)
	return m
}

func appendInts(dst []byte, v []int64) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(v)))
	for _, x := range v {
		dst = binary.AppendVarint(dst, x)
	}
	return dst
}

// ErrCorrupt is returned (wrapped) when an encoded event stream is not
// well formed.
var ErrCorrupt = errors.New("corrupt event encoding")

// DecodeEvent decodes one event from src into e and returns the number of
// bytes it took. e's slices alias buffers in st, valid until the next
// call with st. It is the hottest code of every reader of the codec (the
// in-memory trace, .ktr files): its reads are inlined, their offset in a
// register (varint.ReadUvarint), and it checks for a malformed value once,
// at the end.
func DecodeEvent(src []byte, e *Event, st *CodecState) (int, error) {
	// off is the offset of the next read, negative once one failed
	// (varint.ReadUvarint). f, in memory, serves the rare paths (a new
	// call-site, vectors, a value out of range, the error): they take off
	// and give it back.
	var f varint.Fast
	kind, off := varint.ReadByte(src, 0)
	mask, off := varint.ReadUvarint(src, off)
	k := Kind(kind)
	switch {
	case off < 0:
		f.B, f.Off = src, off
		return 0, corrupt(f.Err())
	case !k.Valid():
		return 0, fmt.Errorf("%w: unknown kind %d", ErrCorrupt, k)
	case mask&^fAll != 0:
		return 0, fmt.Errorf("%w: unknown field mask %#x", ErrCorrupt, mask)
	}
	e.Reset()
	e.Kind = k
	e.CallSite, e.Region = st.callSite, st.region
	var u uint64
	if mask&fPartner != 0 {
		at := off
		u, off = varint.ReadUvarint(src, off)
		e.Partner, off = int32Field(&f, src, off, at, u)
	}
	if mask&fTag != 0 {
		at := off
		u, off = varint.ReadUvarint(src, off)
		e.Tag, off = int32Field(&f, src, off, at, u)
	}
	if mask&fComm != 0 {
		at := off
		u, off = varint.ReadUvarint(src, off)
		e.Comm, off = uint32Field(&f, src, off, at, u)
	}
	if mask&fSendBytes != 0 {
		u, off = varint.ReadUvarint(src, off)
		e.SendBytes = varint.Zigzag(u)
	}
	if mask&fRecvBytes != 0 {
		u, off = varint.ReadUvarint(src, off)
		e.RecvBytes = varint.Zigzag(u)
	}
	if mask&fRequest != 0 {
		u, off = varint.ReadUvarint(src, off)
		if st.skip&SkipRequests == 0 {
			e.Request = st.lastReq + uint64(varint.Zigzag(u))
			st.lastReq = e.Request
		}
	}
	if mask&fComputeInt != 0 {
		u, off = varint.ReadUvarint(src, off)
		e.Compute = float64(u)
	}
	if mask&fComputeRaw != 0 {
		u, off = varint.ReadFixed64(src, off)
		e.Compute = math.Float64frombits(u)
	}
	if mask&fTime != 0 {
		e.HasTime = true
		u, off = varint.ReadUvarint(src, off)
		e.Enter = st.lastExit + Time(varint.Zigzag(u))
		u, off = varint.ReadUvarint(src, off)
		e.Exit = e.Enter + Time(varint.Zigzag(u))
		st.lastExit = e.Exit
	}
	if mask&fCallSite != 0 {
		at := off
		if u, off = varint.ReadUvarint(src, off); u-1 < uint64(len(st.sites)) {
			st.callSite = st.sites[u-1] // one seen before
		} else if off >= 0 {
			off = st.decodeCallSite(&f, src, off, at, u)
		}
		e.CallSite = st.callSite
	}
	if mask&fRegion != 0 {
		at := off
		u, off = varint.ReadUvarint(src, off)
		e.Region, off = uint32Field(&f, src, off, at, u)
		st.region = e.Region
	}
	if mask&fTypes != 0 {
		var t byte
		t, off = varint.ReadByte(src, off)
		e.SendType = Datatype(t)
		t, off = varint.ReadByte(src, off)
		e.RecvType = Datatype(t)
	}
	if mask&(fSendCounts|fRecvCounts|fRequests) != 0 && off >= 0 {
		f.B, f.Off = src, off
		st.decodeVectors(&f, e, mask)
		off = f.Off
	}
	if mask&fSource != 0 {
		at := off
		u, off = varint.ReadUvarint(src, off)
		e.Source, off = int32Field(&f, src, off, at, u)
	}
	if mask&fNewComm != 0 {
		at := off
		u, off = varint.ReadUvarint(src, off)
		e.NewComm, off = uint32Field(&f, src, off, at, u)
	}
	if mask&fOp != 0 {
		at := off
		var op byte
		op, off = varint.ReadByte(src, off)
		if e.Op = Op(op); !e.Op.Valid() {
			off = fail(&f, src, off, at, "unknown reduction operation "+e.Op.String())
		}
	}
	if mask&fHandle != 0 {
		at := off
		u, off = varint.ReadUvarint(src, off)
		e.Handle, off = uint32Field(&f, src, off, at, u)
	}
	if off < 0 {
		f.B, f.Off = src, off
		return 0, decodeError(&f, src)
	}
	return off, nil
}

// fail marks f failed at offset at for what, unless a read failed before
// it (off is negative), and returns the offset the reads after it take:
// a value out of range fails DecodeEvent as a malformed one does.
func fail(f *varint.Fast, src []byte, off, at int, what string) int {
	f.B, f.Off = src, off
	f.Fail(at, what)
	return f.Off
}

// The failures of int32Field and uint32Field, which decodeError words
// with the value.
const (
	wideSigned   = "a signed value does not fit 32 bits"
	wideUnsigned = "an unsigned value does not fit 32 bits"
)

// int32Field returns u, a signed field's varint read at offset at, as the
// 32-bit value it must be, and the offset the reads after it take; one
// wider fails there (fail). It and uint32Field are small enough to inline
// in DecodeEvent, where its every field is read: the value is put in words
// only if the event turns out corrupt (decodeError).
func int32Field(f *varint.Fast, src []byte, off, at int, u uint64) (int32, int) {
	v := varint.Zigzag(u)
	if int64(int32(v)) != v {
		off = fail(f, src, off, at, wideSigned)
	}
	return int32(v), off
}

// uint32Field returns v, an unsigned field's varint read at offset at,
// as the 32-bit value it must be; one wider fails there.
func uint32Field(f *varint.Fast, src []byte, off, at int, v uint64) (uint32, int) {
	if v > math.MaxUint32 {
		off = fail(f, src, off, at, wideUnsigned)
	}
	return uint32(v), off
}

// decodeError returns f's failure as ErrCorrupt, naming the value of a
// field too wide for 32 bits, read again from src.
func decodeError(f *varint.Fast, src []byte) error {
	err := f.Err()
	if e, ok := err.(*varint.Error); ok && (e.What == wideSigned || e.What == wideUnsigned) {
		g := varint.Fast{B: src, Off: e.Offset}
		v := g.Uvarint()
		if e.What == wideSigned {
			e.What = "value " + strconv.FormatInt(varint.Zigzag(v), 10) + " does not fit 32 bits"
		} else {
			e.What = "value " + strconv.FormatUint(v, 10) + " does not fit 32 bits"
		}
	}
	return corrupt(err)
}

// decodeVectors reads the count and request vectors mask names.
func (st *CodecState) decodeVectors(f *varint.Fast, e *Event, mask uint64) {
	if mask&fSendCounts != 0 {
		st.sendCounts = readInts(f, st.sendCounts)
		e.SendCounts = st.sendCounts
	}
	if mask&fRecvCounts != 0 {
		st.recvCounts = readInts(f, st.recvCounts)
		e.RecvCounts = st.recvCounts
	}
	if mask&fRequests != 0 {
		if st.skip&SkipRequests != 0 {
			skipVarints(f)
		} else {
			st.requests = readUints(f, st.requests)
			e.Requests = st.requests
		}
	}
}

// corrupt wraps a varint reader's error as ErrCorrupt.
func corrupt(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%w: %v", ErrCorrupt, err)
}

func readInts(f *varint.Fast, buf []int64) []int64 {
	n := f.Count(1, maxCounts)
	buf = buf[:0]
	for i := 0; i < n && !f.Failed(); i++ {
		buf = append(buf, varint.Zigzag(f.Uvarint()))
	}
	if buf == nil {
		buf = []int64{}
	}
	return buf
}

// skipVarints passes over a vector readUints would read.
func skipVarints(f *varint.Fast) {
	n := f.Count(1, maxCounts)
	for i := 0; i < n && !f.Failed(); i++ {
		f.Uvarint()
	}
}

func readUints(f *varint.Fast, buf []uint64) []uint64 {
	n := f.Count(1, maxCounts)
	buf = buf[:0]
	for i := 0; i < n && !f.Failed(); i++ {
		buf = append(buf, f.Uvarint())
	}
	if buf == nil {
		buf = []uint64{}
	}
	return buf
}

// SameEvent reports whether a and b are equal in every field, their
// vectors element by element (a nil vector is not an empty one) and
// Compute bit by bit. A ktr writer finds a chunk's distinct events with
// it and HashEvent.
func SameEvent(a, b *Event) bool {
	return a.Kind == b.Kind && a.SendType == b.SendType && a.RecvType == b.RecvType && a.Op == b.Op &&
		a.HasTime == b.HasTime && a.Partner == b.Partner && a.Source == b.Source && a.Tag == b.Tag &&
		a.Comm == b.Comm && a.NewComm == b.NewComm && a.Handle == b.Handle && a.Region == b.Region &&
		a.SendBytes == b.SendBytes && a.RecvBytes == b.RecvBytes && a.Request == b.Request &&
		math.Float64bits(a.Compute) == math.Float64bits(b.Compute) && a.Enter == b.Enter && a.Exit == b.Exit &&
		a.CallSite == b.CallSite && sameVector(a.SendCounts, b.SendCounts) &&
		sameVector(a.RecvCounts, b.RecvCounts) && sameVector(a.Requests, b.Requests)
}

// sameVector reports whether a and b are both nil or equal non-nil
// vectors.
func sameVector[T int64 | uint64](a, b []T) bool {
	return (a == nil) == (b == nil) && slices.Equal(a, b)
}

// HashEvent returns a hash of every field of e that SameEvent compares:
// events it finds the same hash alike. The fields' words are multiplied
// by constants of their own and combined, independent products rather
// than a chain, then mixed down into the low bits.
func HashEvent(e *Event) uint64 {
	var hasTime uint64
	if e.HasTime {
		hasTime = 1 << 32
	}
	h := (uint64(e.Kind) | uint64(uint8(e.SendType))<<8 | uint64(uint8(e.RecvType))<<16 | uint64(e.Op)<<24 | hasTime) * 0x9e3779b97f4a7c15
	h ^= (uint64(uint32(e.Partner)) | uint64(uint32(e.Source))<<32) * 0xbf58476d1ce4e5b9
	h ^= (uint64(uint32(e.Tag)) | uint64(e.Comm)<<32) * 0x94d049bb133111eb
	h ^= (uint64(e.NewComm) | uint64(e.Handle)<<32) * 0xff51afd7ed558ccd
	h ^= uint64(e.Region) * 0xc4ceb9fe1a85ec53
	h ^= e.Request * 0x2545f4914f6cdd1d
	h ^= uint64(e.SendBytes) * 0x9fb21c651e98df25
	h ^= uint64(e.RecvBytes) * 0xd6e8feb86659fd93
	h ^= math.Float64bits(e.Compute) * 0xa0761d6478bd642f
	h ^= uint64(e.Enter) * 0xe7037ed1a0b428db
	h ^= uint64(e.Exit) * 0x8ebc6af09c88c6e3
	h ^= e.CallSite * 0x589965cc75374cc3
	if e.SendCounts != nil || e.RecvCounts != nil || e.Requests != nil {
		h = hashVector(h, e.SendCounts)
		h = hashVector(h, e.RecvCounts)
		h = hashVector(h, e.Requests)
	}
	h ^= h >> 32
	h *= 0x9e3779b97f4a7c15
	return h ^ h>>29
}

// hashVector mixes v into h: 0 if nil, else its length plus 1 and its
// elements.
func hashVector[T int64 | uint64](h uint64, v []T) uint64 {
	if v == nil {
		return hashMix(h, 0)
	}
	h = hashMix(h, uint64(len(v))+1)
	for _, x := range v {
		h = hashMix(h, uint64(x))
	}
	return h
}

// hashMix mixes the word v into h (a multiply and a rotation).
func hashMix(h, v uint64) uint64 {
	return bits.RotateLeft64((h^v)*0x9e3779b97f4a7c15, 29)
}
