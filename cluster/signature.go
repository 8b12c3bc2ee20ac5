package cluster

import (
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"kairos/prsd"
	"kairos/trace"
)

// Signatures summarise one rank's behaviour: Bahmani and Mueller's
// call-path and parameter signatures, ACURDION's averaged signatures, and
// (on demand) the reference signature of the whole event sequence.
//
// The papers pack each into 64 bits, which truncates averages and
// saturates counts, so that ranks that behave differently can share a
// signature (a stencil's left and right edges, at average relative
// destinations of +1/3 and -1/3, both truncated to 0; every count above
// 65,535 elements). Kairos keeps the papers' 64-bit forms (CallPath,
// Param) as a method to compare with, and clusters on exact ones (Params,
// Reference), which do not collide by construction, and on Path, the
// whole sequence of calls under two 64-bit hashes and its length.
type Signatures struct {
	Rank int32
	// Path numbers the rank's exact call path among the ranks SignAll
	// signed: ranks of equal Path make the same MPI calls (by function
	// and call site) in the same order, the same number of times (but
	// for a collision of 128-bit hashes: see paths).
	Path int32
	// CallPath is Bahmani and Mueller's 64-bit call-path signature: the
	// XOR, over the rank's MPI calls folded into loops (prsd.Shape), of
	// each call's stack signature (and each loop's iteration counts)
	// times its position mod 10, plus 1.
	CallPath uint64
	// Loop is ACURDION's loop signature (prsd.Shape.LoopSignature).
	Loop uint64
	// Folded is the length of the rank's calls folded into loops.
	Folded int
	// Params are the exact components of Table 1's parameter signature.
	Params ParamKey
	// Param is the 64-bit parameter signature of Bahmani and Mueller's
	// Table 1 (see ParamSignature).
	Param uint64
	// Reference numbers the rank's whole sequence of calls with every
	// parameter, end-points relative (prsd.RankKey), among the ranks
	// SignAll signed with Reference set; -1 otherwise.
	Reference int32

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
	// Types has a bit per datatype, reduction operation and kind of
	// communicator the rank uses (bits 48-63 of Table 1).
	Types uint64
	// Calls is the number of MPI calls, Events the number of events.
	Calls, Events int
}

// ParamKey is Table 1's parameter signature without truncation: the sums
// and numbers of counts (in elements) and of relative destinations and
// sources, and the type bits. Equal keys are equal averages, exactly.
type ParamKey struct {
	CountSum, CountN int64
	DestSum, DestN   int64
	SrcSum, SrcN     int64
	Types            uint64
}

// AvgCount is the average count sent or received, in elements.
func (k *ParamKey) AvgCount() float64 { return avg(float64(k.CountSum), k.CountN) }

func avg(sum float64, n int64) float64 {
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

// Table 1 of Bahmani and Mueller: where each component of the parameter
// signature lies.
const (
	countBits  = 0  // average count sent or received, 16 bits
	destBits   = 16 // average relative destination, 16 bits (two's complement)
	srcBits    = 32 // average relative source, 16 bits (two's complement)
	typeBits   = 48 // datatypes used, 7 bits
	opBits     = 55 // reduction operations used, 7 bits (opFlag)
	commBits   = 62 // communicators used, 2 bits
	countMask  = 0xffff
	typeMask   = 0x7f << typeBits
	opMask     = 0x7f << opBits
	commWorld  = 1 << commBits       // MPI_COMM_WORLD
	commOther  = 1 << (commBits + 1) // any other communicator
	otherTypes = 6                   // the type bit of the datatypes without one
)

// typeBit is the bit (above typeBits) of each datatype, by its id as a
// byte: its own for the common ones, otherTypes for the rest.
var typeBit = func() (b [256]uint8) {
	for i := range b {
		b[i] = otherTypes
	}
	for t, bit := range map[trace.Datatype]uint8{
		trace.TypeChar: 0, trace.TypeInt: 1, trace.TypeDouble: 2, 5: 3, // float
		trace.TypeByte: 4, 4: 5, // long
	} {
		b[uint8(t)] = bit
	}
	return b
}()

// ParamSignature packs the components of Table 1 as the paper does: the
// average count (saturated to 16 bits), the average relative destination
// and source (rounded toward zero, saturated to int16), and the datatype,
// operation and communicator bits of types.
func ParamSignature(count, dest, src float64, types uint64) uint64 {
	sig := uint64(min(max(count, 0), countMask)) << countBits
	sig |= uint64(uint16(saturate16(dest))) << destBits
	sig |= uint64(uint16(saturate16(src))) << srcBits
	return sig | types&(typeMask|opMask|commWorld|commOther)
}

func saturate16(v float64) int16 {
	return int16(min(max(math.Trunc(v), math.MinInt16), math.MaxInt16))
}

// SignOptions choose what SignAll computes beyond the defaults.
type SignOptions struct {
	// Plugins name the user plug-ins (Plugins) whose explained
	// parameters the signatures leave out.
	Plugins []string
	// Reference computes each rank's reference signature (a second read
	// of each rank, with its parameters: the costly baseline).
	Reference bool
}

// sums accumulates one rank's signatures.
type sums struct {
	sig        Signatures
	meta       *trace.Meta
	types      *typeTable
	ranks      int
	plugins    []plugin
	tag        int64
	color, key float64
	nTag       int64
	nSplit     int64
	lastExit   trace.Time
	timed      bool
	// The computation and MPI times, summed exactly in picoseconds and
	// converted to seconds once, at the end.
	compTime, commTime trace.Time
	paths              *pathReader
}

// typeTable holds, by datatype id as a byte, what signing needs of each
// datatype of a trace (its default type resolved): its size in bytes (1
// where unknown, so that its sizes count bytes), as a shift where it is a power of two (a
// division costs more than the rest of an event's sums), and its bit of
// Table 1. Looking them up once a trace, not once an event, keeps signing
// near the trace-reading rate.
type typeTable struct {
	size  [256]int64
	shift [256]int8 // log2 of size, -1 where size is no power of two
	flag  [256]uint64
}

func newTypeTable(meta *trace.Meta) *typeTable {
	t := &typeTable{}
	for i := range 256 {
		d := trace.Datatype(int8(uint8(i)))
		t.size[i] = max(d.Size(meta.DefaultType), 1)
		t.shift[i] = -1
		if size := t.size[i]; size&(size-1) == 0 {
			t.shift[i] = int8(bits.TrailingZeros64(uint64(size)))
		}
		t.flag[i] = typeFlag(d, meta)
	}
	return t
}

// elements is the number of elements of bytes bytes of datatype d.
func (t *typeTable) elements(bytes int64, d trace.Datatype) int64 {
	if bytes <= 0 {
		return 0
	}
	if sh := t.shift[uint8(d)]; sh >= 0 {
		return bytes >> uint(sh)
	}
	return bytes / t.size[uint8(d)]
}

// What signing does with each kind of event, looked up once an event.
const (
	classMPI       = 1 << iota // an MPI call
	classDest                  // Partner is a destination
	classSrc                   // Partner is a source
	classSendRecv              // Partner a destination, Source a source
	classP2P                   // a point-to-point call (its tag counts)
	classTyped                 // point-to-point or collective: types, communicator, operation
	classReduction             // a collective with a reduction operation
	classSplit                 // makes a communicator (colour and key)
)

var kindClass = func() (c [trace.NumKinds]uint8) {
	for i := range c {
		k := trace.Kind(i)
		var b uint8
		if k.IsMPI() {
			b |= classMPI
		}
		switch {
		case k.IsSend():
			b |= classDest
		case k.IsRecv() || k == trace.Probe || k == trace.Iprobe:
			b |= classSrc
		case k == trace.SendRecv:
			b |= classSendRecv
		}
		if k.IsPointToPoint() {
			b |= classP2P
		}
		if k.IsPointToPoint() || k.IsCollective() {
			b |= classTyped
		}
		if k.HasReduction() {
			b |= classReduction
		}
		if k == trace.CommSplit || k == trace.CommCreate || k == trace.CommDup {
			b |= classSplit
		}
		c[i] = b
	}
	return c
}()

// Sign computes rank r's signatures from its events; n is the number of
// ranks and meta the trace's metadata. in numbers the call and loop
// identities of the ranks' shapes (nil: a new one).
func Sign(rd trace.Reader, r int32, n int, meta *trace.Meta, in *prsd.Interner, opt SignOptions) (Signatures, error) {
	ps, err := plugins(opt.Plugins)
	if err != nil {
		return Signatures{}, err
	}
	return sign(rd, r, n, meta, newTypeTable(meta), newPaths(in).reader(), ps)
}

// sign signs one rank, numbering its path in paths.
func sign(rd trace.Reader, r int32, n int, meta *trace.Meta, types *typeTable, paths *pathReader, ps []plugin) (Signatures, error) {
	s := sums{meta: meta, types: types, ranks: n, plugins: ps, paths: paths}
	s.sig.Rank, s.sig.Reference = r, -1
	paths.start()
	trace.Skim(rd, trace.SkipRequests) // signatures read no requests
	if dr, ok := rd.(trace.DistinctReader); ok {
		s.addDistinct(dr)
	} else {
		for rd.Next() {
			s.add(rd.Event())
		}
	}
	if err := rd.Err(); err != nil {
		return Signatures{}, fmt.Errorf("rank %d: %w", r, err)
	}
	return s.finish(), nil
}

func (s *sums) add(e *trace.Event) {
	var class uint8
	if e.Kind.Valid() {
		class = kindClass[e.Kind]
	}
	if s.step(e, class) {
		s.paths.add(e.Kind, e.CallSite)
		s.params(e, class)
	}
}

// step counts e, its computation and its times, and reports whether it is
// an MPI call, whose call and parameters are then to be added; class is
// its kind's.
func (s *sums) step(e *trace.Event, class uint8) bool {
	s.sig.Events++
	if e.HasTime {
		if s.timed && e.Enter > s.lastExit {
			s.compTime += e.Enter - s.lastExit
		}
		s.lastExit, s.timed = e.Exit, true
	}
	switch {
	case e.Kind == trace.Compute:
		if e.HasTime {
			s.compTime += e.Duration()
		} else {
			s.sig.Comp += e.Compute
		}
		return false
	case class&classMPI == 0:
		return false
	}
	if e.HasTime {
		s.commTime += e.Duration()
	}
	s.sig.Calls++
	return true
}

// distinctSums is what a distinct event adds to a rank's sums (params),
// beside its call.
type distinctSums struct {
	stamp      int   // of the group it is valid in (addDistinct)
	n          int64 // the calls that copied it in the group
	class      uint8
	kind       trace.Kind
	site       uint64
	k          ParamKey
	tag, nTag  int64
	color, key float64
	nSplit     int64
}

// addDistinct adds the events of dr, the parameters of each distinct
// event summed once a group of events that copy it (trace.DistinctReader):
// signing then costs less than reading every event whole. The sums are
// the same as add's: a distinct event's are integers, or integers as
// float64 (colours and keys), added exactly.
func (s *sums) addDistinct(dr trace.DistinctReader) {
	var (
		table   = s.paths.distinct // the signer's, from rank to rank
		stamp   = s.paths.stamp
		used    = s.paths.used[:0] // the group's distinct events, in table
		last    = -1
		scratch = sums{meta: s.meta, types: s.types, ranks: s.ranks, plugins: s.plugins}
	)
	defer func() { s.paths.distinct, s.paths.stamp, s.paths.used = table, stamp, used }()
	scratch.sig.Rank = s.sig.Rank
	for {
		id, group, ok := dr.NextDistinct()
		if group != last || !ok {
			s.addUsed(table, used)
			used = used[:0]
		}
		if !ok {
			return
		}
		e := dr.Event()
		if id < 0 {
			s.add(e)
			continue
		}
		if group != last {
			stamp, last = stamp+1, group // (a new rank starts a group)
		}
		if id >= len(table) {
			n := max(id+1, 2*len(table), 64)
			table = slices.Grow(table, n-len(table))[:n]
		}
		d := &table[id]
		if d.stamp != stamp {
			scratch.distinct(d, dr.Distinct(id))
			d.stamp = stamp // (distinct zeroes d.n)
			used = append(used, int32(id))
		}
		if !s.step(e, d.class) {
			continue
		}
		s.paths.add(d.kind, d.site)
		d.n++
	}
}

// addUsed adds to the sums the parameters of the distinct events of a
// group (used, indexes in table), each times the calls that copied it:
// integers, or integers as float64, whose products and sums are exact.
func (s *sums) addUsed(table []distinctSums, used []int32) {
	k := &s.sig.Params
	for _, id := range used {
		d := &table[id]
		n := d.n
		if n == 0 {
			continue
		}
		k.CountSum, k.CountN = k.CountSum+n*d.k.CountSum, k.CountN+n*d.k.CountN
		k.DestSum, k.DestN = k.DestSum+n*d.k.DestSum, k.DestN+n*d.k.DestN
		k.SrcSum, k.SrcN = k.SrcSum+n*d.k.SrcSum, k.SrcN+n*d.k.SrcN
		k.Types |= d.k.Types
		s.tag, s.nTag = s.tag+n*d.tag, s.nTag+n*d.nTag
		if d.nSplit != 0 {
			s.color, s.key, s.nSplit = s.color+float64(n)*d.color, s.key+float64(n)*d.key, s.nSplit+n*d.nSplit
		}
	}
}

// distinct sets d to what distinct event e adds to the sums, s being a
// scratch sums of the rank.
func (s *sums) distinct(d *distinctSums, e *trace.Event) {
	*d = distinctSums{kind: e.Kind, site: e.CallSite}
	if e.Kind.Valid() {
		d.class = kindClass[e.Kind]
	}
	if d.class&classMPI == 0 || e.Kind == trace.Compute {
		return
	}
	s.sig.Params, s.tag, s.nTag, s.color, s.key, s.nSplit = ParamKey{}, 0, 0, 0, 0, 0
	s.params(e, d.class)
	d.k, d.tag, d.nTag, d.color, d.key, d.nSplit = s.sig.Params, s.tag, s.nTag, s.color, s.key, s.nSplit
}

// params adds e's parameters to the sums and type bits; class is its
// kind's.
func (s *sums) params(e *trace.Event, class uint8) {
	r, k := s.sig.Rank, &s.sig.Params
	if e.SendBytes > 0 || e.RecvBytes > 0 {
		k.CountSum += s.types.elements(e.SendBytes, e.SendType) + s.types.elements(e.RecvBytes, e.RecvType)
		k.CountN++
	}
	dest, src := trace.NoRank, trace.NoRank
	switch {
	case class&classDest != 0:
		dest = e.Partner
	case class&classSrc != 0:
		src = e.Partner
	case class&classSendRecv != 0:
		dest, src = e.Partner, e.Source
	}
	if dest >= 0 && (s.plugins == nil || !s.explainsPartner(dest)) {
		k.DestSum += int64(dest - r)
		k.DestN++
	}
	if src >= 0 && (s.plugins == nil || !s.explainsPartner(src)) {
		k.SrcSum += int64(src - r)
		k.SrcN++
	}
	if class&classP2P != 0 && e.Tag >= 0 {
		s.tag += int64(e.Tag)
		s.nTag++
	}
	if class&classSplit != 0 && (s.plugins == nil || !s.explainsSplit(e.NewComm)) {
		s.color += float64(e.NewComm)
		s.key += float64(indexOf(s.meta.Members(e.NewComm, s.ranks), r))
		s.nSplit++
	}
	if class&classTyped == 0 {
		return
	}
	// The bits are gathered in a register and stored once: or-ing them
	// into memory one by one costs more than the rest of the event.
	types := uint64(commOther)
	if e.Comm == trace.WorldComm {
		types = commWorld
	}
	if e.SendBytes > 0 || len(e.SendCounts) > 0 {
		types |= s.types.flag[uint8(e.SendType)]
	}
	if e.RecvBytes != 0 || len(e.RecvCounts) > 0 {
		types |= s.types.flag[uint8(e.RecvType)]
	}
	if class&classReduction != 0 && e.Op != trace.OpNone {
		types |= opFlag(e.Op)
	}
	k.Types |= types
}

// opFlag is the bit (55 to 61) of a reduction operation: 55 max, 56 min,
// 57 sum, 58 prod, 59 the logical and bitwise ones, 60 minloc and maxloc,
// 61 replace and the user-defined ones.
func opFlag(o trace.Op) uint64 {
	b := uint(4)
	switch o {
	case trace.OpMax, trace.OpMin, trace.OpSum, trace.OpProd:
		b = uint(o - trace.OpMax)
	case trace.OpMinloc, trace.OpMaxloc:
		b = 5
	case trace.OpReplace, trace.OpUser:
		b = 6
	}
	return 1 << (opBits + b)
}

func typeFlag(t trace.Datatype, meta *trace.Meta) uint64 {
	if t == trace.DefaultType {
		t = meta.DefaultType
	}
	return 1 << (typeBits + uint(typeBit[uint8(t)]))
}

func indexOf(members []int32, r int32) int {
	for i, m := range members {
		if m == r {
			return i
		}
	}
	return -1
}

func (s *sums) finish() Signatures {
	g := s.sig
	g.Comp += s.compTime.Seconds()
	g.Comm += s.commTime.Seconds()
	k := &g.Params
	g.Count, g.Dest, g.Src = k.AvgCount(), avg(float64(k.DestSum), k.DestN), avg(float64(k.SrcSum), k.SrcN)
	g.Tag, g.Color, g.Key = avg(float64(s.tag), s.nTag), avg(s.color, s.nSplit), avg(s.key, s.nSplit)
	g.Types = k.Types
	g.Param = ParamSignature(g.Count, g.Dest, g.Src, g.Types)
	var shape shapeSigs
	g.Path, shape = s.paths.finish()
	g.CallPath, g.Loop, g.Folded = shape.callPath, shape.loop, shape.folded
	return g
}

// SignAll computes the signatures of every rank of src and numbers their
// exact call paths (and reference signatures) in rank order. Where src's
// ranks may be read at once (trace.Concurrent), each core signs ranks of
// its own, so that signing takes no longer than reading the trace alone
// (it costs 10-30% more CPU than reading: BENCHMARKS.md); otherwise one
// rank at a time.
func SignAll(src trace.Source, opt SignOptions) ([]Signatures, error) {
	n := src.NumRanks()
	sigs := make([]Signatures, n)
	paths := newPaths(nil)
	ps, err := plugins(opt.Plugins)
	if err != nil {
		return nil, err
	}
	types := newTypeTable(src.Meta())
	workers := 1
	if trace.ConcurrentRanks(src) {
		workers = min(runtime.GOMAXPROCS(0), n)
	}
	var (
		next   atomic.Int64
		failed atomic.Bool
		errs   = make([]error, n)
		wg     sync.WaitGroup
	)
	for range max(workers, 1) {
		wg.Go(func() {
			pr := paths.reader()
			for !failed.Load() {
				r := int(next.Add(1) - 1)
				if r >= n {
					return
				}
				if sigs[r], errs[r] = signRank(src, r, types, pr, ps); errs[r] != nil {
					failed.Store(true)
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err // the lowest rank's: every rank below it was signed
		}
	}
	renumberPaths(sigs)
	if opt.Reference {
		fam := prsd.NewFamilies(src.Meta(), n)
		refs := map[string]int32{}
		for r := range n {
			if sigs[r].Reference, err = reference(src, r, fam, refs); err != nil {
				return nil, err
			}
		}
	}
	return sigs, nil
}

// signRank signs rank r of src.
func signRank(src trace.Source, r int, types *typeTable, pr *pathReader, ps []plugin) (Signatures, error) {
	rd, err := src.OpenRank(r)
	if err != nil {
		return Signatures{}, err
	}
	defer rd.Close()
	return sign(rd, int32(r), src.NumRanks(), src.Meta(), types, pr, ps)
}

// renumberPaths numbers the paths in the order of their first rank, as
// signing one rank at a time would, whatever order the signers met them.
func renumberPaths(sigs []Signatures) {
	ids := map[int32]int32{}
	for i := range sigs {
		id, ok := ids[sigs[i].Path]
		if !ok {
			id = int32(len(ids))
			ids[sigs[i].Path] = id
		}
		sigs[i].Path = id
	}
}

// number returns key's number in numbers, adding it if new.
func number(numbers map[string]int32, key string) int32 {
	id, ok := numbers[key]
	if !ok {
		id = int32(len(numbers))
		numbers[key] = id
	}
	return id
}

func reference(src trace.Source, r int, fam *prsd.Families, refs map[string]int32) (int32, error) {
	rd, err := src.OpenRank(r)
	if err != nil {
		return 0, err
	}
	defer rd.Close()
	key, err := prsd.RankKey(rd, r, src.NumRanks(), fam)
	if err != nil {
		return 0, fmt.Errorf("rank %d: %w", r, err)
	}
	return number(refs, key), nil
}
