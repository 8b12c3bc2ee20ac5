package prsd

import (
	"encoding/binary"
	"math"
	"math/bits"
	"slices"

	"kairos/trace"
)

// Intra-rank compression, as ScalaTrace's intra-node compression: each
// event becomes a call (identified by its kind and call site, its stack
// signature) appended to the rank's sequence, and the end of the sequence
// is folded whenever it repeats: a body that repeats the loop just before
// it adds an iteration (an RSD), a body seen twice in a row becomes a loop
// of two, loops of loops are power-RSDs. Only calls' identities decide
// the folding; their parameters (partners, sizes, tags...) go into series
// over the instances of each call, and loops' iteration counts into series
// over the loop's instances, so that ranks whose parameters differ fold
// alike and merge into one structure.

// maxBody is the longest loop body, in items (calls or loops), that the
// compressor looks for: ScalaTrace's window.
const maxBody = 64

// rnode is an item of one rank's compressed sequence: a call or a loop.
type rnode struct {
	id   int32 // interned identity: (kind, site) for a call, the body's ids for a loop
	kind trace.Kind
	site uint64
	one  *rawCall // a call's one instance, not folded yet
	acc  *accCall // the instances of a call in a loop body
	// A loop: its body, the iteration counts of its closed instances
	// (apart: a call's node, allocated for every call pushed, is then a
	// half of a loop's), and the iterations of its one open instance
	// while at the top of the sequence.
	body   []*rnode
	counts *seriesBuilder
	cur    int64
}

func (n *rnode) isLoop() bool { return n.body != nil }

// rawCall is one instance of a call: the event, its request ids relative
// to the highest the rank defined before it, its timing, and the
// computation after it (the untimed Compute events up to the rank's next
// call, summed, with the call site and region of the first).
type rawCall struct {
	e        trace.Event
	mask     uint32 // the fields not at their default
	req      int64
	reqs     []int64
	gap, dur float64 // picoseconds, if timed
	comp     float64
	compSite uint64
	compReg  uint32
}

// The timing statistics of a call.
const (
	statValue = iota // a computation's flops or a sleep's seconds
	statGap          // picoseconds since the rank's previous event ended
	statDur          // picoseconds in the call
	statComp         // the flops computed after the call, before the next (ScalaTrace's computation between calls)
	numStats
)

// statAcc sums a statistic over instances, and keeps each instance, on a
// logarithmic scale (Level) and, while they take few distinct values, as
// the index of its value among them: for the instances that stray from the
// mean.
type statAcc struct {
	sum float64
	n   int64
	// m2 is the sum of the instances' squared distances from their mean
	// (Welford's): its square root is how far the rank's running sum
	// strays from its mean line by chance, the drift that reading the
	// mean already makes.
	m2 float64
	// ahead is, for a time, the sum of its instances' levels' values
	// less their own: how far they move the rank's clock (addTime),
	// until shared says they join the rank's (rankCtx.ahead).
	ahead    float64
	shared   bool
	min, max float64
	levels   seriesBuilder
	distinct []float64 // up to maxDistinct values, in the order met; nil past them
	index    seriesBuilder
	many     bool
}

// maxDistinct is the number of distinct values up to which a statistic's
// instances are kept exactly: values that repeat are structure (a
// computation done every other iteration), not noise.
const maxDistinct = 8

func (s *statAcc) add(v float64, ctx *rankCtx) { s.addLevel(v, level(v, ctx.eps, ctx.ln1p)) }

// addTime adds an instance of a time, v, at its timeLevel against the
// rank's clock (ctx.ahead) once the instances are sure to read their
// levels, and against their own till then: a time that will read its
// mean, or its few exact values, must not take back errors it will not
// make. One clock for all of a rank's calls strays by a level step or so;
// one a call would add a step for each call of a loop's body.
func (s *statAcc) addTime(v float64, ctx *rankCtx) {
	s.share(ctx)
	carry := &s.ahead
	if s.shared {
		carry = &ctx.ahead
	}
	s.addLevel(v, timeLevel(v, ctx.eps, ctx.ln1p, carry))
}

// share makes s's errors the rank's clock's once its instances are sure
// to read their levels.
func (s *statAcc) share(ctx *rankCtx) {
	if !s.shared && s.levelled(ctx.eps) {
		ctx.ahead += s.ahead
		s.ahead, s.shared = 0, true
	}
}

// levelled reports whether a time's instances will read back their
// levels at eps (merger.addTiming): many distinct values, too far apart
// for any mean to hold them within eps/3 (and 1 ns).
func (s *statAcc) levelled(eps float64) bool {
	return eps > 0 && s.many && s.max-s.min > 2*(eps/3*s.max+timeTolerance)
}

// timeLevel returns the level of a time v, of the two on either side of
// it (each within eps of v), that keeps *ahead, the sum of the levels'
// values less the times' so far, nearest 0, and adds its error to it: a
// rank's clock read back from its times' levels then strays from its own
// by a level step or so, where the nearest levels', though each within
// eps/2, add up over a loop (500 iterations of a noisy 1 ms computation
// drifted 40 to 90 µs). With eps 0 the level is exact. ln1p is
// math.Log1p(eps).
func timeLevel(v, eps, ln1p float64, ahead *float64) int64 {
	l := level(v, eps, ln1p)
	if eps == 0 || !(v > 0) || math.IsInf(v, 0) {
		return l
	}
	q := fromLevel(l, eps, ln1p)
	other, o := l+3, q*(1+eps) // the level above, where the nearest is below v
	if q > v {
		other, o = l-3, q/(1+eps)
	}
	if math.Abs(*ahead+o-v) < math.Abs(*ahead+q-v) {
		l, q = other, o
	}
	*ahead += q - v
	return l
}

// addLevel adds an instance v whose level is l.
func (s *statAcc) addLevel(v float64, l int64) {
	if s.n == 0 || v < s.min {
		s.min = v
	}
	if s.n == 0 || v > s.max {
		s.max = v
	}
	if s.n > 0 {
		before := s.sum / float64(s.n)
		s.m2 += (v - before) * (v - (s.sum+v)/float64(s.n+1))
	}
	s.sum += v
	s.n++
	s.levels.add(l)
	s.exact(v)
}

// exact adds v to the instances kept by value index, while they are few.
func (s *statAcc) exact(v float64) {
	if s.many {
		return
	}
	i := slices.IndexFunc(s.distinct, func(x float64) bool { return math.Float64bits(x) == math.Float64bits(v) })
	if i < 0 {
		if len(s.distinct) == maxDistinct {
			s.many, s.distinct, s.index = true, nil, seriesBuilder{}
			return
		}
		i = len(s.distinct)
		s.distinct = append(s.distinct, v)
	}
	s.index.add(int64(i))
}

// merge appends o's instances to s's, o's builders changed. The errors
// of levels o has not yet shared with the rank's clock join it where s's
// have.
func (s *statAcc) merge(o *statAcc, ctx *rankCtx) {
	if o.n == 0 {
		return
	}
	defer s.share(ctx)
	if s.n == 0 {
		s.sum, s.n, s.min, s.max, s.m2, s.ahead, s.shared = o.sum, o.n, o.min, o.max, o.m2, o.ahead, o.shared
	} else {
		if s.shared {
			ctx.ahead += o.ahead
		} else {
			s.ahead += o.ahead
		}
		d := o.sum/float64(o.n) - s.sum/float64(s.n)
		s.m2 += o.m2 + d*d*float64(s.n)*float64(o.n)/float64(s.n+o.n)
		s.sum += o.sum
		s.n += o.n
		s.min, s.max = math.Min(s.min, o.min), math.Max(s.max, o.max)
	}
	s.levels.appendBuilder(&o.levels)
	if o.many {
		s.many, s.distinct, s.index = true, nil, seriesBuilder{}
		return
	}
	index := o.index.finish()
	var c cursor
	for range index.N {
		s.exact(o.distinct[c.next(&index)])
	}
}

// mean is the instances' mean: their value, exactly, where they are all
// equal (a sum's rounding would move it).
func (s *statAcc) mean() float64 {
	if s.n > 0 && s.min == s.max {
		return s.min
	}
	return s.sum / float64(max(s.n, 1))
}

// Level is v on a logarithmic scale of ratio 1+eps: 0 for 0, 3L+1 for a
// positive v of which (1+eps)^L is the nearest power, 3L+2 for a negative
// one. FromLevel(Level(v)) is within eps/2 of v; consecutive values of
// similar size have small differences, which a series keeps in a byte or
// two. With eps 0 the level is v's IEEE-754 bits: exact.
func Level(v, eps float64) int64 { return level(v, eps, math.Log1p(eps)) }

// level is Level of ln1p = math.Log1p(eps), which a rank's compressor
// computes once (rankCtx.ln1p) rather than for each instance.
func level(v, eps, ln1p float64) int64 {
	if eps == 0 {
		return int64(math.Float64bits(v))
	}
	if v == 0 || math.IsNaN(v) {
		return 0
	}
	l := int64(math.Round(math.Log(math.Abs(v)) / ln1p))
	l = min(max(l, -1<<60), 1<<60)
	if v < 0 {
		return 3*l + 2
	}
	return 3*l + 1
}

// FromLevel is the value of level l on the scale of ratio 1+eps.
func FromLevel(l int64, eps float64) float64 { return fromLevel(l, eps, math.Log1p(eps)) }

// fromLevel is FromLevel of ln1p = math.Log1p(eps).
func fromLevel(l int64, eps, ln1p float64) float64 {
	if eps == 0 {
		return math.Float64frombits(uint64(l))
	}
	return levelValue(l, ln1p)
}

// levelValue is FromLevel(l, eps) of eps > 0, of ln1p = math.Log1p(eps),
// which a reader computes once.
func levelValue(l int64, ln1p float64) float64 {
	m := (l%3 + 3) % 3
	if m == 0 {
		return 0
	}
	v := math.Exp(float64((l-m)/3) * ln1p)
	if m == 2 {
		return -v
	}
	return v
}

// accCall accumulates the instances of a call: a series per field and
// mode, the timing statistics. A statistic the call never had is nil (a
// statAcc is about 470 bytes, and a trace whose calls fold into nothing
// has an accCall a call).
type accCall struct {
	n      int64
	has    uint32 // the fields with series
	fields [NumFields]*fieldAcc
	stats  [numStats]*statAcc
}

// stat returns a's statistic k, made empty if a had none.
func (a *accCall) stat(k int, ctx *rankCtx) *statAcc {
	if a.stats[k] == nil {
		a.stats[k] = reuse(&ctx.pool.stats)
	}
	return a.stats[k]
}

// fieldAcc is one field's series: one per mode for a scalar field
// (modesOf), lengths and elements for a vector.
type fieldAcc struct {
	modes []seriesBuilder
	lens  seriesBuilder
	elems []seriesBuilder
}

// isTiming reports whether kind's Compute is a statistic (a computation
// or a sleep) rather than an exact parameter.
func isTiming(k trace.Kind) bool { return k == trace.Compute || k == trace.Sleep }

// scalar returns field f of an instance, and whether it differs from the
// field's default.
func (r *rawCall) scalar(f Field) int64 {
	e := &r.e
	switch f {
	case Partner:
		return int64(e.Partner)
	case Source:
		return int64(e.Source)
	case Tag:
		return int64(e.Tag)
	case Comm:
		return int64(e.Comm)
	case NewComm:
		return int64(e.NewComm)
	case SendBytes:
		return e.SendBytes
	case RecvBytes:
		return e.RecvBytes
	case SendType:
		return int64(e.SendType)
	case RecvType:
		return int64(e.RecvType)
	case Request:
		return r.req
	case ComputeArg:
		if isTiming(e.Kind) || e.Compute == 0 {
			return 0
		}
		return int64(math.Float64bits(e.Compute))
	case Region:
		return int64(e.Region)
	case Timed:
		if e.HasTime {
			return 1
		}
	case CompSite:
		return int64(r.compSite)
	case CompRegion:
		return int64(r.compReg)
	case Op:
		return int64(e.Op)
	case Handle:
		return int64(e.Handle)
	}
	return 0
}

// vector returns vector field f of an instance (nil: absent).
func (r *rawCall) vector(f Field) []int64 {
	switch f {
	case Requests:
		return r.reqs
	case SendCounts:
		return r.e.SendCounts
	case RecvCounts:
		return r.e.RecvCounts
	}
	return nil
}

// presentMask returns the fields of the instance not at their default
// (scalar's value other than defaultValue's, vector's not nil), read
// from the event at once: field by field through scalar's switch, they
// took 9% of reducing CG on 256 ranks.
func (r *rawCall) presentMask() uint32 {
	e := &r.e
	var m uint32
	flag := func(f Field, present bool) {
		if present {
			m |= 1 << f
		}
	}
	flag(Partner, e.Partner != trace.NoRank)
	flag(Source, e.Source != trace.NoRank)
	flag(Tag, e.Tag != 0)
	flag(Comm, e.Comm != 0)
	flag(NewComm, e.NewComm != 0)
	flag(SendBytes, e.SendBytes != 0)
	flag(RecvBytes, e.RecvBytes != 0)
	flag(SendType, e.SendType != trace.DefaultType)
	flag(RecvType, e.RecvType != trace.DefaultType)
	flag(Request, r.req != requestNone)
	flag(Requests, r.reqs != nil)
	flag(SendCounts, e.SendCounts != nil)
	flag(RecvCounts, e.RecvCounts != nil)
	flag(ComputeArg, !isTiming(e.Kind) && e.Compute != 0)
	flag(Region, e.Region != 0)
	flag(Timed, e.HasTime)
	flag(CompSite, r.compSite != 0)
	flag(CompRegion, r.compReg != 0)
	flag(Op, e.Op != 0)
	flag(Handle, e.Handle != 0)
	return m
}

func newAcc(one *rawCall, ctx *rankCtx, np int) *accCall {
	a := reuse(&ctx.pool.accs)
	a.addRaw(one, ctx, np)
	return a
}

// field returns a's series of f, creating them with a.n defaults.
func (a *accCall) field(f Field, ctx *rankCtx, np int) *fieldAcc {
	if fa := a.fields[f]; fa != nil {
		return fa
	}
	fa := reuse(&ctx.pool.fields)
	if f.IsVector() {
		fa.lens.addN(-1, a.n)
	} else {
		modes := ctx.modes[f]
		if cap(fa.modes) < len(modes) {
			fa.modes = make([]seriesBuilder, len(modes))
		}
		fa.modes = fa.modes[:len(modes)]
		for i, m := range modes {
			fa.modes[i].addN(ctx.encode(m, defaultValue(f)), a.n)
		}
	}
	a.fields[f] = fa
	a.has |= 1 << f
	return fa
}

// addRaw adds one instance.
func (a *accCall) addRaw(r *rawCall, ctx *rankCtx, np int) {
	for mask := r.mask | a.has; mask != 0; mask &= mask - 1 {
		f := Field(bits.TrailingZeros32(mask))
		fa := a.field(f, ctx, np)
		if f.IsVector() {
			fa.addVector(r.vector(f))
			continue
		}
		v := r.scalar(f)
		modes := ctx.modes[f]
		if len(modes) == 1 && modes[0] == Abs { // most fields: the value itself
			fa.modes[0].add(v)
			continue
		}
		for i, m := range modes {
			fa.modes[i].add(ctx.encode(m, v))
		}
	}
	if isTiming(r.e.Kind) {
		a.stat(statValue, ctx).add(r.e.Compute, ctx)
	}
	if r.e.HasTime {
		a.stat(statGap, ctx).addTime(r.gap, ctx)
		a.stat(statDur, ctx).addTime(r.dur, ctx)
	}
	a.stat(statComp, ctx).add(r.comp, ctx)
	a.n++
}

func (fa *fieldAcc) addVector(v []int64) {
	if v == nil {
		fa.lens.add(-1)
		return
	}
	fa.lens.add(int64(len(v)))
	for len(fa.elems) < len(v) {
		fa.elems = append(fa.elems, seriesBuilder{})
	}
	for i, x := range v {
		fa.elems[i].add(x)
	}
}

// appendAcc appends b's instances to a's, b's builders changed.
func (a *accCall) appendAcc(b *accCall, ctx *rankCtx, np int) {
	for f := range NumFields {
		if a.fields[f] == nil && b.fields[f] == nil {
			continue
		}
		fa := a.field(f, ctx, np)
		fb := b.fields[f]
		switch {
		case fb == nil && f.IsVector():
			fa.lens.addN(-1, b.n)
		case fb == nil:
			for i, m := range ctx.modes[f] {
				fa.modes[i].addN(ctx.encode(m, defaultValue(f)), b.n)
			}
		case f.IsVector():
			fa.lens.appendBuilder(&fb.lens)
			for i := range fb.elems {
				if i == len(fa.elems) {
					fa.elems = append(fa.elems, seriesBuilder{})
				}
				fa.elems[i].appendBuilder(&fb.elems[i])
			}
		default:
			for i := range fa.modes {
				fa.modes[i].appendBuilder(&fb.modes[i])
			}
		}
	}
	for i, st := range b.stats {
		if st != nil && st.n > 0 {
			a.stat(i, ctx).merge(st, ctx)
		}
	}
	a.n += b.n
}

// Interner numbers the identities of calls and loop bodies, so that the
// compressor compares items by number: a call by its kind and call site,
// a loop by its body's items. Equal numbers are equal structures, by
// construction.
type Interner struct {
	calls map[callKey]int32
	ids   map[string]int32
	next  int32
	buf   []byte
	// recent caches calls' numbers by a hash of their identity: a
	// rank's loop body has few distinct calls, and a map lookup per
	// event would cost more than the rest of the compression.
	recent [64]struct {
		key callKey
		id  int32
		ok  bool
	}
	// bodies caches the identities of loop bodies of few items, as
	// recent the calls': a trace that folds into many short loops
	// (SMG2000's makes one every 4 calls) makes the same ones over and
	// over.
	bodies [64]struct {
		key shortBody
		id  int32
		ok  bool
	}
}

type callKey struct {
	kind trace.Kind
	site uint64
}

// NewInterner returns an empty interner.
func NewInterner() *Interner {
	return &Interner{calls: map[callKey]int32{}, ids: map[string]int32{}}
}

func (in *Interner) intern(key []byte) int32 {
	if id, ok := in.ids[string(key)]; ok {
		return id
	}
	in.ids[string(key)] = in.next
	in.next++
	return in.next - 1
}

func (in *Interner) call(k trace.Kind, site uint64) int32 {
	key := callKey{k, site}
	slot := &in.recent[(site^site>>29^uint64(k)*0x9e3779b97f4a7c15)>>58]
	if slot.ok && slot.key == key {
		return slot.id
	}
	id, ok := in.calls[key]
	if !ok {
		id = in.next
		in.calls[key] = id
		in.next++
	}
	slot.key, slot.id, slot.ok = key, id, true
	return id
}

func (in *Interner) items(tag byte, items []*rnode) int32 {
	if len(items) > len(shortBody{}.ids) {
		return in.itemsMap(tag, items)
	}
	k := shortBody{tag: tag, n: uint8(len(items))}
	h := uint64(tag)
	for i, n := range items {
		k.ids[i] = n.id
		h = (h ^ uint64(n.id)) * 0x9e3779b97f4a7c15
	}
	slot := &in.bodies[h>>58]
	if slot.ok && slot.key == k {
		return slot.id
	}
	id := in.itemsMap(tag, items)
	slot.key, slot.id, slot.ok = k, id, true
	return id
}

// shortBody is the identity of a loop body of few items, for Interner's
// cache of them.
type shortBody struct {
	tag, n uint8
	ids    [3]int32
}

func (in *Interner) itemsMap(tag byte, items []*rnode) int32 {
	b := append(in.buf[:0], tag)
	for _, n := range items {
		b = binary.AppendUvarint(b, uint64(n.id))
	}
	in.buf = b
	return in.intern(b)
}

// compressor folds one rank's events into its compressed sequence.
type compressor struct {
	in       *Interner
	ctx      *rankCtx // nil: structure only, no parameter or timing
	np       int      // plug-ins
	seq      []*rnode
	idx      seqIndex // seq's, for fold
	maxReq   uint64
	lastExit trace.Time
	// The last call, held until the next one comes with the untimed
	// computation after it: whether any was met and how much, its call
	// site and region. The computation before the first call (lead) is a
	// call of its own.
	open     trace.Event
	hasOpen  bool
	comp     bool
	flops    float64
	compSite uint64
	compReg  uint32
	lead     trace.Event
	hasLead  bool
	// The calls since the sequence's last item, a loop, that repeat the
	// start of its body (an iteration under way), not folded yet: the
	// body's calls they repeat, their instances (pend, reused), where the
	// walk of the body is, and the inner loops' instances it completed.
	targets []*rnode
	pend    []rawCall
	path    []pframe
	done    []loopDone
	// bounded makes the compressor give up (little) on a sequence that
	// folds little (foldsLittle) at a number of calls a power of two.
	bounded bool
	little  bool
	calls   int64
	// pay, where set, also makes it give up on a sequence whose series
	// outgrow its events' bytes (payCheck), at the same powers of two;
	// outgrown says it did.
	pay      *payCheck
	outgrown bool
	// key, where set, hashes every call (RankKey's), also those past the
	// point where the compressor gave up, which only go into scratch.
	key     *keyHash
	scratch rawCall
	// free holds the nodes fold merged into others (drop), freeCounts
	// their loops' counts, for the next items: a trace that folds into
	// many short loops (SMG2000's, HPCC's) makes and drops a node for
	// most of its calls.
	free       []*rnode
	freeCounts []*seriesBuilder
	// freeBodies holds the bodies of the loops dropped, by length, for
	// the next loops' (most loops a fold makes are soon merged into
	// another).
	freeBodies [maxBody + 1][][]*rnode
	// waits, where known (waitsKnown), are the iteration counts of the
	// sequence's last item, a loop, at which the last fold would have
	// found a length to fold: all it checked but closable held. Only
	// that count changes while an iteration is predicted, so until the
	// sequence changes an iteration that reaches none needs no fold
	// (HPCC's polling loops: a seventh of signing its ranks).
	waits      []int64
	waitsKnown bool
	// runBuf is flushRuns' room.
	runBuf []callRun
}

// pframe is a loop body being walked by prediction: the next item, and
// for an inner loop its iterations done and expected (its last
// instance's count).
type pframe struct {
	loop       *rnode
	pos        int
	iter, want int64
}

// loopDone is an instance of an inner loop that prediction completed.
type loopDone struct {
	loop  *rnode
	count int64
}

// add appends an event. An untimed computation is not a call: it is
// kept with the call it follows (ScalaTrace's statistics of the
// computation between calls), so that computations a tracer left out
// where they were short do not break the loops; a call is therefore held
// until the next one comes.
func (c *compressor) add(e *trace.Event) {
	if c.pay != nil {
		c.pay.events++
	}
	if c.ctx == nil {
		c.push(e)
		return
	}
	if e.Kind == trace.Compute && !e.HasTime {
		switch {
		case !c.hasOpen && !c.hasLead:
			c.lead, c.hasLead = e.Clone(), true
		case !c.hasOpen:
			c.lead.Compute += e.Compute
		case !c.comp:
			c.comp, c.compSite, c.compReg, c.flops = true, e.CallSite, e.Region, e.Compute
		default:
			c.flops += e.Compute
		}
		return
	}
	c.close()
	c.open, c.hasOpen = e.Clone(), true
}

// runs lets addRun count the iterations that change nothing but the
// count at once (off in a test, to compare).
var runs = true

// addRun appends n calls of e's kind and call site to a structure without
// parameters, unbounded (a Shape's), as n adds would. Where the sequence
// ends with a loop whose body is that call alone, an iteration more
// changes only its count, and folds only where the count reaches one the
// last fold waited for (foldAfterIteration): the iterations before it are
// counted at once. A polling loop's thousands of calls (HPCC's
// MPI_Testany) take a few pushes.
func (c *compressor) addRun(e *trace.Event, n int64) {
	for n > 0 {
		if k := c.silent(e.Kind, e.CallSite, n); k > 0 {
			c.seq[len(c.seq)-1].cur += k
			c.calls += k
			n -= k
			continue
		}
		if k := c.silentInner(e, n); k > 0 {
			f := &c.path[len(c.path)-1]
			f.iter += k
			for range k {
				c.targets = append(c.targets, f.loop.body[0])
			}
			c.calls += k
			n -= k
			continue
		}
		c.add(e)
		n--
	}
}

// countsRuns reports whether iterations may be counted at once: in a
// structure without parameters, unbounded, whose calls nothing else
// weighs or hashes one by one (a Shape's).
func (c *compressor) countsRuns() bool {
	return runs && c.ctx == nil && c.pay == nil && c.key == nil && !c.bounded
}

// silentInner returns how many of up to n calls of e's kind and call site,
// each an iteration more of a one-call loop that a predicted iteration is
// walking, would be predicted with nothing but the walk's count changed:
// all but the loop's last expected iteration.
func (c *compressor) silentInner(e *trace.Event, n int64) int64 {
	if !c.countsRuns() || len(c.path) < 2 {
		return 0
	}
	f := &c.path[len(c.path)-1]
	if len(f.loop.body) != 1 || f.pos != 1 {
		return 0
	}
	if b := f.loop.body[0]; b.isLoop() || b.kind != e.Kind || b.site != e.CallSite {
		return 0
	}
	return max(min(n, f.want-2-f.iter), 0)
}

// silent returns how many of up to n calls of a kind and call site, each
// an iteration more of the one-call loop ending the sequence, would change
// nothing but its count (and the number of calls, where they are new).
func (c *compressor) silent(kind trace.Kind, site uint64, n int64) int64 {
	k := len(c.seq)
	if !c.countsRuns() || n == 0 || len(c.path) > 0 || !skipFolds || !c.waitsKnown || k == 0 {
		return 0
	}
	l := c.seq[k-1]
	if len(l.body) != 1 || l.body[0].kind != kind || l.body[0].site != site || l.body[0].isLoop() {
		return 0
	}
	for _, w := range c.waits { // the counts before the next one waited for
		if w > l.cur {
			n = min(n, w-1-l.cur)
		}
	}
	return max(n, 0)
}

// close appends the held call with the computation after it, and before
// it the computation before the first call.
func (c *compressor) close() {
	if c.hasLead {
		c.hasLead = false
		c.push(&c.lead)
	}
	if c.hasOpen {
		c.hasOpen = false
		c.push(&c.open)
		c.comp, c.flops, c.compSite, c.compReg = false, 0, 0, 0
	}
}

// push appends a call, with the computation after it.
func (c *compressor) push(e *trace.Event) {
	if c.little {
		c.keep(e)
		return
	}
	if c.calls++; c.bounded && c.calls&(c.calls-1) == 0 && (foldsLittle(nodes(c.seq), c.calls) || c.outgrows()) {
		c.little = true // checked at every power of two: a walk of the items a doubling
		c.keep(e)
		c.seq, c.targets, c.path, c.done = nil, nil, nil, nil
		c.idx.reset()
		return
	}
	id := c.in.call(e.Kind, e.CallSite)
	if c.predict(id, e) {
		return
	}
	c.flush()
	n := reuse(&c.free)
	n.id, n.kind, n.site = id, e.Kind, e.CallSite
	if c.ctx != nil {
		n.one = reuse(&c.ctx.pool.raws)
		c.fill(n.one, e)
	}
	c.append(n)
}

// reset empties a compressor for another rank's calls: its items go to
// the free lists (their accumulators to its context's pool), and its
// tables keep their room. What the rank's calls set (a context, plug-ins,
// bounds) must be set again.
func (c *compressor) reset() {
	for _, n := range c.seq {
		c.drop(n)
	}
	c.idx.empty()
	*c = compressor{
		in: c.in, idx: c.idx, seq: c.seq[:0],
		targets: c.targets[:0], path: c.path[:0], done: c.done[:0], pend: c.pend,
		free: c.free, freeCounts: c.freeCounts, freeBodies: c.freeBodies,
		waits: c.waits[:0], runBuf: c.runBuf[:0],
	}
}

// keep fills the scratch call with a call past the point where the
// folding was given up, for RankKey's hash; nothing without parameters
// (foldsLittleAhead's compressor).
func (c *compressor) keep(e *trace.Event) {
	if c.ctx != nil {
		c.fill(&c.scratch, e)
	}
}

// reuse returns the last of *free, removed, or a new T where it is empty:
// a node or a loop's counts that fold dropped, an accumulator of a pool.
func reuse[T any](free *[]*T) *T {
	k := len(*free)
	if k == 0 {
		return new(T)
	}
	x := (*free)[k-1]
	*free = (*free)[:k-1]
	return x
}

// recycle turns drop on (off in a test, to compare).
var recycle = true

// skipFolds lets predict skip the folds that c.waits rules out (off in a
// test, to compare).
var skipFolds = true

// drop gives back n, an item fold merged into another, with its body's
// items: nothing refers to them any more.
func (c *compressor) drop(n *rnode) {
	if !recycle {
		return
	}
	for _, b := range n.body {
		c.drop(b)
	}
	if b := n.body; len(b) > 0 && len(b) <= maxBody && len(c.freeBodies[len(b)]) < maxFreeBodies {
		clear(b)
		c.freeBodies[len(b)] = append(c.freeBodies[len(b)], b)
	}
	if b := n.counts; b != nil {
		b.reset()
		c.freeCounts = append(c.freeCounts, b)
	}
	if c.ctx != nil {
		c.ctx.pool.putRaw(n.one)
		c.ctx.pool.putAcc(n.acc)
	}
	// Field by field, and only the pointers set: clearing the whole
	// node while the collector marks goes through the type's pointer
	// bitmap (bulkBarrierPreWrite), about 5% of a profile of signing
	// SMG2000.
	n.id, n.kind, n.site, n.cur = 0, 0, 0, 0
	if n.one != nil || n.acc != nil {
		n.one, n.acc = nil, nil
	}
	if n.body != nil || n.counts != nil {
		n.body, n.counts = nil, nil
	}
	c.free = append(c.free, n)
}

// append appends an item and folds.
func (c *compressor) append(n *rnode) {
	if c.extendRun(n) {
		return
	}
	c.seq = append(c.seq, n)
	c.idx.push(n.id, len(n.body), 0) // a call: fold pushes the loops
	c.waitsKnown = false
	for c.fold() {
	}
}

// extendRuns lets append take a call that repeats the one-call body of
// the loop ending the sequence as an iteration more (off in a test, to
// compare).
var extendRuns = true

// extendRun takes n, a call, as an iteration more of the loop that ends
// the sequence where its body is n's call alone: fold's first candidate
// would (an extension of length 1, which always closes), without
// indexing n only to remove it. Then it folds as predict does after an
// iteration: only the loop's count changed. A prediction that failed
// gives its calls back to append (flush), HPCC's polls by the thousand
// (half of signing its ranks).
func (c *compressor) extendRun(n *rnode) bool {
	k := len(c.seq)
	if !extendRuns || k == 0 || n.isLoop() {
		return false
	}
	l := c.seq[k-1]
	if len(l.body) != 1 || l.body[0].id != n.id {
		return false
	}
	l.cur++
	c.merge(l.body[0], n)
	c.drop(n)
	c.foldAfterIteration(l)
	return true
}

// foldAfterIteration folds after an iteration more of l, the loop that
// ends the sequence, unless the counts the last fold waited for
// (c.waits) rule every fold out.
func (c *compressor) foldAfterIteration(l *rnode) {
	if skipFolds && c.waitsKnown && !slices.Contains(c.waits, l.cur) {
		return
	}
	for c.fold() {
	}
}

// minItems and itemsPerCall bound what a rank's compressed structure may
// take: past minItems items, one item for fewer than itemsPerCall calls
// is a sequence that folds little (a message-driven program's, a polling
// loop's of varying counts). Each item costs kilobytes while the cluster
// is merged (Boost.MPI's trace: 222,000 items held 1.2 GB), and a few
// bytes in the file where the rank's events would take a few bytes each:
// format/rsd would keep such a cluster as its events anyway. No real
// program's trace tried folded into loops that paid with more than
// minItems items of fewer than itemsPerCall calls each (BENCHMARKS.md).
const (
	minItems     = 1 << 12
	itemsPerCall = 16
)

// foldsLittle reports whether a structure of items items for calls calls
// folds too little to be worth its memory.
func foldsLittle(items int, calls int64) bool {
	return items > minItems && int64(items)*itemsPerCall > calls
}

// nodes is the number of items in a sequence, its loops' bodies included.
func nodes(items []*rnode) int {
	n := len(items)
	for _, it := range items {
		n += nodes(it.body)
	}
	return n
}

// predict takes a call that repeats the next call of the body of the
// loop that ends the sequence, as ScalaTrace's compression expects the
// next iteration (walking inner loops, each expected to repeat as often
// as its last instance did): the calls are kept aside until the iteration
// is complete, then merged into the body without being nodes. It reports
// whether it took the call.
func (c *compressor) predict(id int32, e *trace.Event) bool {
	if len(c.seq) == 0 || !c.seq[len(c.seq)-1].isLoop() {
		return false
	}
	if len(c.path) == 0 {
		c.path = append(c.path, pframe{loop: c.seq[len(c.seq)-1]})
	}
	var call *rnode
	for call == nil {
		f := &c.path[len(c.path)-1]
		if f.pos == len(f.loop.body) { // an inner loop's next iteration
			f.iter++
			f.pos = 0
		}
		item := f.loop.body[f.pos]
		if item.isLoop() {
			c.path = append(c.path, pframe{loop: item, want: item.counts.last})
			continue
		}
		if item.id != id {
			return false
		}
		call = item
		f.pos++
	}
	if c.ctx != nil {
		if len(c.targets) == len(c.pend) {
			c.pend = append(c.pend, rawCall{})
		}
		c.fill(&c.pend[len(c.targets)], e)
	}
	c.targets = append(c.targets, call)
	for {
		f := &c.path[len(c.path)-1]
		if f.pos < len(f.loop.body) {
			return true
		}
		if len(c.path) == 1 {
			break
		}
		if f.iter+1 < f.want {
			return true
		}
		c.done = append(c.done, loopDone{f.loop, f.iter + 1})
		c.path = c.path[:len(c.path)-1]
		c.path[len(c.path)-1].pos++
	}
	// The iteration is complete: merge it into the body.
	l := c.path[0].loop
	l.cur++
	if c.ctx != nil {
		for i, n := range c.targets {
			n.acc.addRaw(&c.pend[i], c.ctx, c.np)
		}
	}
	for _, d := range c.done {
		d.loop.counts.add(d.count)
	}
	c.targets, c.path, c.done = c.targets[:0], c.path[:0], c.done[:0]
	c.foldAfterIteration(l)
	return true
}

// flush makes the calls kept aside items of the sequence, as if they had
// not been predicted.
func (c *compressor) flush() {
	if len(c.path) == 0 {
		return
	}
	// The items are made before any is appended: appending folds, which
	// may drop the loop whose body the targets are.
	targets := c.targets
	c.targets, c.path, c.done = nil, c.path[:0], c.done[:0]
	if c.ctx == nil && runs {
		c.flushRuns(targets)
		c.targets = targets[:0]
		return
	}
	for i, b := range targets {
		item := reuse(&c.free)
		item.id, item.kind, item.site = b.id, b.kind, b.site
		if c.ctx != nil {
			item.one = reuse(&c.ctx.pool.raws)
			*item.one = c.pend[i]
		}
		targets[i] = item
	}
	for _, item := range targets {
		c.append(item)
	}
	c.targets = targets[:0]
}

// flushRuns is flush of a structure without parameters, whose calls kept
// aside are their identities: each run of one call (an inner polling
// loop's) goes in as a call, then as iterations more of the loop it makes,
// counted at once where silent allows.
func (c *compressor) flushRuns(targets []*rnode) {
	rs := c.runBuf[:0]
	for i := 0; i < len(targets); {
		b, m := targets[i], 1
		for i+m < len(targets) && targets[i+m] == b {
			m++
		}
		rs = append(rs, callRun{b.id, b.kind, b.site, int64(m)})
		i += m
	}
	c.runBuf = rs
	for _, r := range rs {
		for r.n > 0 {
			if k := c.silent(r.kind, r.site, r.n); k > 0 {
				c.seq[len(c.seq)-1].cur += k
				r.n -= k
				continue
			}
			item := reuse(&c.free)
			item.id, item.kind, item.site = r.id, r.kind, r.site
			c.append(item)
			r.n--
		}
	}
}

// callRun is n calls of one identity in a row.
type callRun struct {
	id   int32
	kind trace.Kind
	site uint64
	n    int64
}

// fill sets r to e, its requests made relative to the highest request id
// the rank defined before it, its times made a gap and a duration, with
// the computation after it (held, for the call being closed).
func (c *compressor) fill(r *rawCall, e *trace.Event) {
	// e's copy, its vectors cloned but its requests, which reqs holds
	r.e = *e
	r.e.SendCounts, r.e.RecvCounts, r.e.Requests = slices.Clone(e.SendCounts), slices.Clone(e.RecvCounts), nil
	r.req, r.reqs, r.gap, r.dur = requestNone, nil, 0, 0
	if e.Request != 0 {
		r.req = int64(e.Request - c.maxReq)
	}
	if e.Requests != nil {
		r.reqs = make([]int64, len(e.Requests))
		for i, q := range e.Requests {
			r.reqs[i] = int64(q - c.maxReq)
		}
	}
	for _, q := range e.Requests {
		c.maxReq = max(c.maxReq, q)
	}
	c.maxReq = max(c.maxReq, e.Request)
	if e.HasTime {
		r.gap, r.dur = float64(e.Enter-c.lastExit), float64(e.Exit-e.Enter)
		c.lastExit = e.Exit
	}
	r.comp, r.compSite, r.compReg = c.flops, uint64(c.ctx.sites.number(c.compSite)), c.compReg
	r.mask = r.presentMask()
	if c.key != nil {
		c.key.add(r, c.ctx)
	}
}

// fold folds the end of the sequence once and reports whether it did:
// at the shortest length l of tail that either repeats the body of a loop
// just before it (an iteration more) or the l items before it (a new loop
// of two iterations), the former first. The index gives the lengths that
// may (seqIndex).
func (c *compressor) fold() bool {
	s, n := c.seq, len(c.seq)
	c.waits, c.waitsKnown = c.waits[:0], true
	folded := c.idx.candidates(func(l int, extend bool) bool {
		tail := s[n-l:]
		if extend {
			prev := s[n-l-1]
			if !sameIDs(prev.body, tail) || !c.closable(prev.body[l-1], tail[l-1]) {
				return false
			}
			prev.cur++
			for i := range tail {
				c.merge(prev.body[i], tail[i])
				c.drop(tail[i])
			}
			c.seq = s[:n-l]
			c.idx.truncate(n - l)
			return true
		}
		first := s[n-2*l : n-l]
		if !slices.Equal(c.idx.keys[n-2*l:n-l], c.idx.keys[n-l:]) || !c.closable(first[l-1], tail[l-1]) {
			return false
		}
		body := c.body(first)
		for _, n := range body {
			c.toBody(n)
		}
		for i := range tail {
			c.merge(body[i], tail[i])
			c.drop(tail[i])
		}
		loop := reuse(&c.free)
		loop.id, loop.body, loop.counts, loop.cur = c.in.items(1, body), body, reuse(&c.freeCounts), 2
		h := c.idx.window(n-l, n)
		c.seq = append(s[:n-2*l], loop)
		c.idx.truncate(n - 2*l)
		c.idx.push(loop.id, l, h)
		return true
	})
	c.waitsKnown = !folded
	return folded
}

// maxFreeBodies bounds the bodies of each length kept for reuse.
const maxFreeBodies = 64

// body returns a copy of items, a new loop's body, in the room of a
// dropped loop's where there is one.
func (c *compressor) body(items []*rnode) []*rnode {
	free := &c.freeBodies[len(items)]
	if k := len(*free); k > 0 {
		b := (*free)[k-1]
		*free = (*free)[:k-1]
		copy(b, items)
		return b
	}
	return slices.Clone(items)
}

func sameIDs(a, b []*rnode) bool {
	return slices.EqualFunc(a, b, func(x, y *rnode) bool { return x.id == y.id })
}

// closable reports whether the last item of a tail, t, may be folded onto
// b: a loop at the end of the sequence may still gain iterations, so it
// folds only onto a loop instance of as many. Where it may not, the count
// it waits for goes to c.waits.
func (c *compressor) closable(b, t *rnode) bool {
	if !t.isLoop() || t.cur == 0 {
		return true
	}
	last := b.cur
	if last == 0 {
		last = b.counts.last
	}
	if last != t.cur {
		c.waits = append(c.waits, last)
		return false
	}
	return true
}

// toBody makes a top-level item a loop body's: a call accumulates its
// instances, a loop's open instance closes.
func (c *compressor) toBody(n *rnode) {
	if n.isLoop() {
		n.counts.add(n.cur)
		n.cur = 0
		return
	}
	if n.one != nil {
		n.acc = newAcc(n.one, c.ctx, c.np)
		if recycle {
			c.ctx.pool.putRaw(n.one)
		}
		n.one = nil
	}
}

// merge appends the instances of src, an item of the same identity, to
// dst, an item of a loop body.
func (c *compressor) merge(dst, src *rnode) {
	if !dst.isLoop() {
		switch {
		case src.one != nil:
			dst.acc.addRaw(src.one, c.ctx, c.np)
		case src.acc != nil:
			dst.acc.appendAcc(src.acc, c.ctx, c.np)
		}
		return
	}
	if src.cur > 0 {
		dst.counts.add(src.cur)
	} else {
		dst.counts.appendBuilder(src.counts)
	}
	for i := range dst.body {
		c.merge(dst.body[i], src.body[i])
	}
}

// finish closes the sequence: the held call goes in, and every item
// becomes a body's, as if the whole trace were the body of a loop of one
// iteration.
func (c *compressor) finish() []*rnode {
	c.close()
	c.flush()
	for _, n := range c.seq {
		c.toBody(n)
	}
	return c.seq
}
