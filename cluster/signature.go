package cluster

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"

	"kairos/trace"
)

// Signatures summarise one rank's behaviour in constant space: Bahmani and
// Mueller's call-path and parameter signatures, ACURDION's averaged
// parameter signatures, and the reference signature that stands for the
// whole event sequence.
type Signatures struct {
	Rank int32
	// CallPath is the XOR, over the rank's MPI calls folded into loops
	// (see loops.go), of each call's stack signature (and each loop's
	// iteration count) times its position mod 10, plus 1: the order of
	// the calls counts, so that two ranks making the same calls in
	// another order differ (the NAS MG case). A call without a call site
	// is identified by its MPI function.
	CallPath uint64
	// Loop is ACURDION's loop signature (see loopSignature).
	Loop uint64
	// Folded is the length of the rank's calls folded into loops.
	Folded int
	// Param is the 64-bit parameter signature of Bahmani and Mueller's
	// Table 1 (see ParamSignature).
	Param uint64
	// Reference is a 64-bit hash of the rank's MPI calls with every
	// parameter, end-points relative to the rank: ranks with equal
	// sequences have equal references.
	Reference uint64

	// Averages over the rank's MPI calls, as ACURDION signs them: the
	// count of elements sent or received, the relative source and
	// destination of point-to-point messages, their tag, and the colour
	// (the communicator made) and key (the rank's place in it) of
	// communicator splits.
	Count, Src, Dest, Tag, Color, Key float64
	// Comp is the rank's computation: seconds between calls in a timed
	// trace, flops in a time-independent one. Comm is the seconds spent in
	// MPI calls (0 in a time-independent trace).
	Comp, Comm float64
	// Types has a bit per datatype and per kind of communicator the rank
	// uses (bits 48-54 and 62-63 of Table 1).
	Types uint64
	// Calls is the number of MPI calls, Events the number of events.
	Calls, Events int
}

// Table 1 of Bahmani and Mueller: where each component of the parameter
// signature lies.
const (
	countBits  = 0  // average count sent or received, 16 bits
	destBits   = 16 // average relative destination, 16 bits (two's complement)
	srcBits    = 32 // average relative source, 16 bits (two's complement)
	typeBits   = 48 // datatypes used, 7 bits
	opBits     = 55 // reduction operations used, 7 bits (not in Kairos' model: 0)
	commBits   = 62 // communicators used, 2 bits
	countMask  = 0xffff
	typeMask   = 0x7f << typeBits
	commWorld  = 1 << commBits       // MPI_COMM_WORLD
	commOther  = 1 << (commBits + 1) // any other communicator
	otherTypes = 6                   // the type bit of the datatypes without one
)

// typeBit is the bit (above typeBits) of each datatype with its own.
var typeBit = map[trace.Datatype]uint{
	trace.TypeChar: 0, trace.TypeInt: 1, trace.TypeDouble: 2, 5: 3, // float
	trace.TypeByte: 4, 4: 5, // long
}

// ParamSignature packs the components of Table 1: the average count
// (saturated to 16 bits), the average relative destination and source
// (rounded toward zero, saturated to int16), and the datatype and
// communicator bits of types. Bits 55-61, the reduction operations, stay
// zero: Kairos' trace model, like SimGrid's time-independent traces, does
// not keep the operation.
func ParamSignature(count, dest, src float64, types uint64) uint64 {
	sig := uint64(min(max(count, 0), countMask)) << countBits
	sig |= uint64(uint16(saturate16(dest))) << destBits
	sig |= uint64(uint16(saturate16(src))) << srcBits
	return sig | types&(typeMask|commWorld|commOther)
}

func saturate16(v float64) int16 {
	return int16(min(max(math.Trunc(v), math.MinInt16), math.MaxInt16))
}

// sums accumulates one rank's signatures.
type sums struct {
	sig                       Signatures
	meta                      *trace.Meta
	ranks                     int
	count, src, dest, tag     float64
	nCount, nSrc, nDest, nTag int
	color, key                float64
	nSplit                    int
	lastExit                  trace.Time
	timed                     bool
	ref                       []byte
	refHash                   hashWriter
	loops                     compressor
}

// Sign computes rank r's signatures from its events; n is the number of
// ranks and meta the trace's metadata.
func Sign(rd trace.Reader, r int32, n int, meta *trace.Meta) (Signatures, error) {
	s := sums{meta: meta, ranks: n, refHash: newHash()}
	s.sig.Rank = r
	for rd.Next() {
		s.add(rd.Event())
	}
	if err := rd.Err(); err != nil {
		return Signatures{}, fmt.Errorf("rank %d: %w", r, err)
	}
	return s.finish(), nil
}

func (s *sums) add(e *trace.Event) {
	s.sig.Events++
	if e.HasTime {
		if s.timed && e.Enter > s.lastExit {
			s.sig.Comp += (e.Enter - s.lastExit).Seconds()
		}
		s.lastExit, s.timed = e.Exit, true
	}
	switch {
	case e.Kind == trace.Compute:
		if e.HasTime {
			s.sig.Comp += e.Duration().Seconds()
		} else {
			s.sig.Comp += e.Compute
		}
		return
	case !e.Kind.IsMPI():
		return
	}
	if e.HasTime {
		s.sig.Comm += e.Duration().Seconds()
	}
	site := e.CallSite
	if site == 0 {
		site = kindSites[e.Kind]
	}
	s.loops.add(site)
	s.sig.Calls++
	s.params(e)
	s.reference(e)
}

// kindSites are the stack signatures of calls without a call site: their
// MPI function's, a fixed odd 64-bit value (FNV-1a of its name).
var kindSites = func() (s [trace.NumKinds]uint64) {
	for k := range s {
		h := fnv.New64a()
		h.Write([]byte(trace.Kind(k).String()))
		s[k] = h.Sum64() | 1
	}
	return s
}()

// params adds e's parameters to the averages and type bits.
func (s *sums) params(e *trace.Event) {
	r := s.sig.Rank
	if e.SendBytes > 0 || e.RecvBytes > 0 {
		s.count += float64(elements(e.SendBytes, e.SendType, s.meta) + elements(e.RecvBytes, e.RecvType, s.meta))
		s.nCount++
	}
	dest, src := trace.NoRank, trace.NoRank
	switch {
	case e.Kind.IsSend():
		dest = e.Partner
	case e.Kind.IsRecv() || e.Kind == trace.Probe || e.Kind == trace.Iprobe:
		src = e.Partner
	case e.Kind == trace.SendRecv:
		dest, src = e.Partner, e.Source
	}
	if dest >= 0 {
		s.dest += float64(dest - r)
		s.nDest++
	}
	if src >= 0 {
		s.src += float64(src - r)
		s.nSrc++
	}
	if e.Kind.IsPointToPoint() && e.Tag >= 0 {
		s.tag += float64(e.Tag)
		s.nTag++
	}
	if e.Kind == trace.CommSplit || e.Kind == trace.CommCreate || e.Kind == trace.CommDup {
		s.color += float64(e.NewComm)
		s.key += float64(indexOf(s.meta.Members(e.NewComm, s.ranks), r))
		s.nSplit++
	}
	if e.Kind.IsPointToPoint() || e.Kind.IsCollective() {
		if e.SendBytes > 0 || len(e.SendCounts) > 0 {
			s.sig.Types |= typeFlag(e.SendType, s.meta)
		}
		if e.RecvBytes != 0 || len(e.RecvCounts) > 0 {
			s.sig.Types |= typeFlag(e.RecvType, s.meta)
		}
		if e.Comm == trace.WorldComm {
			s.sig.Types |= commWorld
		} else {
			s.sig.Types |= commOther
		}
	}
}

func elements(bytes int64, t trace.Datatype, meta *trace.Meta) int64 {
	if bytes <= 0 {
		return 0
	}
	if size := t.Size(meta.DefaultType); size > 0 {
		return bytes / size
	}
	return bytes
}

func typeFlag(t trace.Datatype, meta *trace.Meta) uint64 {
	if t == trace.DefaultType {
		t = meta.DefaultType
	}
	bit, ok := typeBit[t]
	if !ok {
		bit = otherTypes
	}
	return 1 << (typeBits + bit)
}

func indexOf(members []int32, r int32) int {
	for i, m := range members {
		if m == r {
			return i
		}
	}
	return -1
}

// reference adds e, with every parameter and its end-points relative to
// the rank, to the reference signature.
func (s *sums) reference(e *trace.Event) {
	rel := func(p int32) int64 {
		if p < 0 {
			return int64(p) - 1<<40 // ANY_SOURCE and no partner stay apart from offsets
		}
		return int64(p - s.sig.Rank)
	}
	partner := rel(e.Partner)
	if e.Kind.IsRooted() {
		partner = int64(e.Partner) // a root is absolute
	}
	b := s.ref[:0]
	b = append(b, byte(e.Kind), byte(e.SendType), byte(e.RecvType))
	for _, v := range []int64{partner, rel(e.Source), int64(e.Tag), int64(e.Comm), int64(e.NewComm), e.SendBytes, e.RecvBytes, int64(e.CallSite)} {
		b = binary.AppendVarint(b, v)
	}
	for _, c := range [][]int64{e.SendCounts, e.RecvCounts} {
		b = binary.AppendUvarint(b, uint64(len(c)))
		for _, v := range c {
			b = binary.AppendVarint(b, v)
		}
	}
	s.ref = b
	s.refHash.write(b)
}

func (s *sums) finish() Signatures {
	avg := func(sum float64, n int) float64 {
		if n == 0 {
			return 0
		}
		return sum / float64(n)
	}
	g := s.sig
	g.Count, g.Src, g.Dest = avg(s.count, s.nCount), avg(s.src, s.nSrc), avg(s.dest, s.nDest)
	g.Tag, g.Color, g.Key = avg(s.tag, s.nTag), avg(s.color, s.nSplit), avg(s.key, s.nSplit)
	g.Param = ParamSignature(g.Count, g.Dest, g.Src, g.Types)
	g.Reference = s.refHash.sum()
	g.CallPath, g.Loop, g.Folded = callPath(s.loops.seq), loopSignature(s.loops.seq), length(s.loops.seq)
	return g
}

// hashWriter is FNV-1a over the events' encodings, each prefixed by its
// length so that sequences cannot alias.
type hashWriter struct{ h uint64 }

func newHash() hashWriter { return hashWriter{h: 14695981039346656037} }

func (w *hashWriter) write(b []byte) {
	w.byte(byte(len(b)))
	for _, c := range b {
		w.byte(c)
	}
}

func (w *hashWriter) byte(c byte) {
	w.h ^= uint64(c)
	w.h *= 1099511628211
}

func (w *hashWriter) sum() uint64 { return w.h }
