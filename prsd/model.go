// Package prsd is ScalaTrace's compressed trace: each rank's events
// folded into loops (regular section descriptors, RSDs, and loops of
// loops, power-RSDs), and the ranks of a cluster merged into one such
// structure, every call and loop carrying the ranklist of the ranks that
// execute it and its parameters per group of ranks. It is lossless for the
// calls and their parameters: every rank reads back its own calls, in
// order, with its own partners, sizes, tags, communicators and requests.
// Computations and times are statistics: each rank reads, for each call,
// the mean of its instances, within a stated relative error of its own
// (Trace.TimeError) where ranks share a value.
//
// A Trace is a trace.Source: each rank is read by walking its cluster's
// structure, never by expanding it, so that the compressed form of a
// trace of a million events per rank takes kilobytes and reads at the
// speed of a decoder. Build makes one from any Source; format/rsd stores
// it in a file.
package prsd

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"kairos/trace"
)

// Trace is a compressed trace: clusters of ranks, each one merged
// structure.
type Trace struct {
	meta  trace.Meta
	ranks int
	// Clusters partition the ranks.
	Clusters []Cluster
	Header

	fam    *Families
	of     []int32      // cluster of each rank
	origin trace.Source // the trace Build compressed, or nil
	// cycleBytes is what the readers' tables of cycled instances may
	// still take (template.cyc).
	cycleBytes atomic.Int64
	// states are the choices and cursors of closed readers, for the
	// next ones (rankState).
	states sync.Pool
}

// Header is what a trace's structures refer to.
type Header struct {
	// TimeError is the relative error bound of the timing statistics:
	// every instance of a computation (and of a gap and a duration in a
	// timed trace) reads back within TimeError of its own (plus 1 ns for
	// times): as its rank's mean where every instance is within
	// TimeError/3 of it (ranks sharing means within TimeError/3, and times'
	// only within their noise: merger.near), else as its level (Level,
	// within TimeError/2; a time's within TimeError, the level that keeps
	// the rank's clock nearest its own: statAcc.addTime). 0 keeps every
	// instance's value.
	TimeError float64
	// Histograms, where set, keeps a rank's instances of a call as their
	// distribution (ScalaTrace's histograms: Histogram), not their order,
	// in groups of values within TimeError/(2+TimeError) of their mean,
	// each instance's group in order; ranks whose values of each group
	// all lie within TimeError of each other share one. Every instance
	// still reads back within TimeError of its own, each group's sum
	// within 1e-6 of its own (within TimeError for a rank that shares
	// another's), and the structure no longer grows with the iterations
	// of a noisy loop.
	Histograms bool
	// Plugins name the plug-ins of the Plugin modes, in order.
	Plugins []string
	// Sites are the call sites the CompSite field numbers (from 1: value
	// i is Sites[i-1], 0 no site).
	Sites []uint64
}

// Cluster is the merged structure of a set of ranks.
type Cluster struct {
	Ranks Ranklist
	Items []*Node
	// Events, where not nil, are the cluster's events in place of Items,
	// each rank's own (format/rsd keeps so, in columns, a cluster whose
	// loops would not take less than half their bytes: a real program's
	// irregular calls; Build, the trace it compresses, for a cluster a
	// rank of which folds little). Its rank r is the trace's rank r; the
	// ranks of other clusters may have events in it, never read.
	Events trace.Source
	// Settled tells that Options.Settle chose between the cluster's
	// structure and its events; Columns, where it chose the events, are
	// their encoding, which format/rsd writes as they are.
	Settled bool
	Columns []byte
	// Exact tells that Columns hold the events exactly, times included
	// (Settling.Exact).
	Exact bool

	nodes int // nodes, numbered for the readers' choices
	// byIndex are the nodes by number, and walk the numbers of Items: a
	// reader walks numbers, and finds the rank's choice at a node
	// without loading the node (a call read from a quick template's
	// table never does).
	byIndex []*Node
	walk    []int32
	// cursors is the most cursors a rank's reader needs: for each node,
	// its largest group's and timing's.
	cursors int
}

// Node is a call or a loop of a merged structure.
type Node struct {
	// Kind and Site identify a call (ScalaTrace's MPI operation and
	// stack signature); a loop has neither.
	Kind trace.Kind
	// index is the node's number in its cluster, which the readers'
	// lists hold (Cluster.walk); beside Kind and Body, which a reader
	// reads of a node that is not a quick call, in one cache line.
	index int32
	Site  uint64
	// Ranks are the ranks that execute the node; nil: all those of the
	// enclosing loop (or cluster).
	Ranks Ranklist
	// Body is a loop's body (nil for a call).
	Body []*Node
	walk []int32 // the numbers of Body's nodes
	// Counts are a loop's iteration counts per group of ranks: the
	// series of each instance's count.
	Counts []Counts
	// Vars are a call's parameters per group of ranks.
	Vars []Variant
	// Times are a call's timing statistics per group of ranks.
	Times []Timing

	// tmpls are a call's templates, one per group of parameters, made at
	// the second instance a rank reads.
	tmpls []atomic.Pointer[template]
	// of, where not nil, indexes the groups of a node that has many.
	of *groupsOf
}

// groupsOf are the index of the first group of a node's Counts or Vars,
// and of its Times, that holds each rank (-1: none; nil: the groups are
// few), for a node of many groups (a noisy trace's timing per rank): a
// rank's reader finds its group in O(1), not by testing each group's
// ranklist.
type groupsOf struct {
	group, timing []int32
}

// IsLoop reports whether n is a loop.
func (n *Node) IsLoop() bool { return n.Body != nil }

// Counts are the iteration counts of a loop's instances for a group of
// ranks.
type Counts struct {
	Ranks  Ranklist // nil: the node's ranks that no earlier group holds (a rank reads the first that holds it)
	Series Series
}

// Variant is the parameters of a call's instances for a group of ranks.
type Variant struct {
	Ranks Ranklist // nil: the node's ranks that no earlier group holds (a rank reads the first that holds it)
	// Mask has bit f set for each Field present; the others have their
	// default value (trace.Event.Reset's).
	Mask uint32
	// Fields are the values of the fields present, by increasing Field
	// (Variant.Field finds one): a call has a handful of the NumFields.
	Fields []Value

	slots int32 // series with a cursor slot
}

// Field returns the value of field f, nil if it is absent.
func (v *Variant) Field(f Field) *Value {
	if v.Mask&(1<<f) == 0 {
		return nil
	}
	return &v.Fields[bits.OnesCount32(v.Mask&(1<<f-1))]
}

// Set sets the value of field f.
func (v *Variant) Set(f Field, val Value) {
	i := bits.OnesCount32(v.Mask & (1<<f - 1))
	if v.Mask&(1<<f) != 0 {
		v.Fields[i] = val
		return
	}
	v.Mask |= 1 << f
	v.Fields = slices.Insert(v.Fields, i, val)
}

// Value is a field's values over a call's instances: one series, in a
// mode, for a scalar; the lengths (-1: nil) and one series per element
// for a vector, or, where Alike is not 0, one series that every element
// of an instance takes (the elements of each instance all equal, as
// aggregated counts are: CountAggregates), the instances at most Alike
// long.
type Value struct {
	Mode   Mode
	Series Series
	Elems  []Series
	Alike  int64
}

// MaxAlike bounds Value.Alike: the longest vector (trace's bound on a
// decoded count vector).
const MaxAlike = 1 << 24

// Timing is the statistics of a call's computation and times for a group
// of ranks.
type Timing struct {
	Ranks Ranklist // nil: the node's ranks that no earlier group holds (a rank reads the first that holds it)
	// Mask has bit i set for each statistic present: StatValue (a
	// computation's flops or a sleep's seconds), StatGap (picoseconds
	// since the previous event ended), StatDur (picoseconds in the call),
	// StatComp (the flops computed after the call, before the next: a
	// Compute event read after it where not 0, with the CompSite and
	// CompRegion fields).
	Mask uint8
	// levels has bit i set where statistic i is read from Levels alone
	// (no Values, no Hists): a noisy trace's, which a reader reads with
	// Mask, in one cache line.
	levels uint8
	// Levels, where not nil, are a statistic's instances on the
	// logarithmic scale of Level (some strayed from the mean by more than
	// TimeError/3); the instances read back from them, not the mean.
	Levels [numStats]*Series
	Stats  [numStats]Stat
	// Values, where not nil, are the few distinct values a statistic's
	// instances take, and its Levels the index of each instance's value
	// among them: exact.
	Values [numStats][]float64
	// Hists, where not nil, are a statistic's histogram
	// (Header.Histograms), and its Levels the group each instance draws
	// from (from 1), 0 for an instance that is 0.
	Hists [numStats]*Histogram
	// Scales, where not nil, are each rank's factor on a histogram's
	// values, group by group: for the i-th of Ranks, the step
	// (1+TimeError/100)^l of its group g at [i*len(Groups)+g]. Ranks
	// then lists its ranks (not nil).
	Scales [numStats][]int64

	slots int32 // series with a cursor slot
}

// scaled reports whether t has ranks' scales, which need its ranklist.
func (t *Timing) scaled() bool {
	for _, l := range t.Scales {
		if l != nil {
			return true
		}
	}
	return false
}

// The statistics of a Timing.
const (
	StatValue = statValue
	StatGap   = statGap
	StatDur   = statDur
	StatComp  = statComp
	NumStats  = numStats
)

// Stat is a statistic over the instances of a call: the value every rank
// of the group reads (the mean of the ranks' means), and the least and
// greatest instance.
type Stat struct {
	Mean, Min, Max float64
}

// New returns a trace of clusters, checking that they partition the
// ranks, that their plug-ins exist, and numbering their varying series.
func New(meta trace.Meta, ranks int, clusters []Cluster, h Header) (*Trace, error) {
	t := &Trace{meta: meta, ranks: ranks, Clusters: clusters, Header: h}
	t.cycleBytes.Store(maxCycleBytes)
	if ranks < 0 {
		return nil, fmt.Errorf("%w: %d ranks", ErrCorrupt, ranks)
	}
	for _, p := range h.Plugins {
		if !IsPlugin(p) {
			return nil, fmt.Errorf("unknown plug-in %q (known: %v)", p, PluginNames())
		}
	}
	if t.meta.Attrs == nil {
		t.meta.Attrs = map[string]string{}
	}
	if len(t.meta.Regions) == 0 {
		t.meta.Regions = []trace.Region{{}}
	}
	t.of = make([]int32, ranks)
	for i := range t.of {
		t.of[i] = -1
	}
	budget := newFlatBudget()
	for c := range t.Clusters {
		cl := &t.Clusters[c]
		for _, s := range cl.Ranks {
			if err := t.claim(s, int32(c)); err != nil {
				return nil, err
			}
		}
		if cl.Events != nil && cl.Events.NumRanks() != ranks {
			return nil, fmt.Errorf("%w: cluster %d has events for %d ranks, not %d", ErrCorrupt, c, cl.Events.NumRanks(), ranks)
		}
		cl.nodes, cl.cursors, cl.byIndex = 0, 0, nil
		numberSlots(cl.Items, cl, &budget)
		cl.walk = walks(cl.Items)
		indexGroups(cl.Items, ranks)
		findShares(cl.Items)
	}
	for r, c := range t.of {
		if c < 0 {
			return nil, fmt.Errorf("%w: rank %d is in no cluster", ErrCorrupt, r)
		}
	}
	t.fam = NewFamilies(&t.meta, ranks)
	return t, nil
}

// claim assigns the ranks of section s to cluster c.
func (t *Trace) claim(s Section, c int32) error {
	if s.count() > int64(t.ranks) {
		return fmt.Errorf("%w: a cluster's ranklist has more ranks than the trace's %d", ErrCorrupt, t.ranks)
	}
	for _, r := range rlAppend(nil, int64(s.Start), s.Dims) {
		if r < 0 || int(r) >= t.ranks {
			return fmt.Errorf("%w: cluster %d has rank %d, outside 0-%d", ErrCorrupt, c, r, t.ranks-1)
		}
		if t.of[r] >= 0 {
			return fmt.Errorf("%w: rank %d is in clusters %d and %d", ErrCorrupt, r, t.of[r], c)
		}
		t.of[r] = c
	}
	return nil
}

// numberSlots numbers the nodes and gives each series that is not
// constant a cursor slot within its group of ranks' counts and
// parameters, or timing: a rank's reader keeps cursors for the groups it
// is in only.
func numberSlots(items []*Node, cl *Cluster, budget *flatBudget) {
	var next, most int32
	slot := func(s *Series) {
		s.slot = -1
		s.flatten(budget)
		if !s.IsConst() {
			s.slot = next
			next++
		}
	}
	for _, n := range items {
		n.index = int32(cl.nodes)
		cl.byIndex = append(cl.byIndex, n)
		cl.nodes++
		for i := range n.Counts {
			next = 0
			slot(&n.Counts[i].Series)
		}
		most = 0
		for i := range n.Times {
			next = 0
			for k, l := range n.Times[i].Levels {
				if l != nil {
					slot(l)
				}
				if l != nil && l.slot < 0 && n.Times[i].Hists[k] != nil {
					l.slot = next // a histogram's cursor counts its draws
					next++
				}
			}
			n.Times[i].slots = next
			n.Times[i].levels = 0
			for k, l := range n.Times[i].Levels {
				if l != nil && n.Times[i].Values[k] == nil && n.Times[i].Hists[k] == nil {
					n.Times[i].levels |= 1 << k
				}
			}
			most = max(most, next)
		}
		cl.cursors += int(most)
		most = int32(min(len(n.Counts), 1))
		n.tmpls = nil
		if len(n.Vars) > 0 {
			n.tmpls = make([]atomic.Pointer[template], len(n.Vars))
		}
		for i := range n.Vars {
			next = 0
			for f := range n.Vars[i].Fields {
				v := &n.Vars[i].Fields[f] // in any order: the slots are the readers'
				slot(&v.Series)
				for j := range v.Elems {
					slot(&v.Elems[j])
				}
			}
			n.Vars[i].slots = next
			most = max(most, next)
		}
		cl.cursors += int(most)
		numberSlots(n.Body, cl, budget)
	}
}

// walks returns the numbers of items, and sets those of each loop's body,
// once numberSlots has numbered them (a node in several lists has the
// number of its last).
func walks(items []*Node) []int32 {
	walk := make([]int32, len(items))
	for i, n := range items {
		walk[i] = n.index
		n.walk = nil
		if n.Body != nil {
			n.walk = walks(n.Body)
		}
	}
	return walk
}

// many reports whether a node's k groups, of ranklists list(i), are
// many enough to index by rank (Node.of): finding a rank's group tries
// each section of each group's ranklist, so at least 8 sections, and at
// least one for 64 ranks, so that the index's 4 bytes a rank take no
// more memory than the sections themselves (a section is at least 16
// bytes). Counting groups instead left a node of a few hundred groups of
// scattered ranks (times at 65,536 ranks) unindexed: every rank tried
// every section, half the time of reducing.
func many(k, ranks int, list func(i int) Ranklist) bool {
	sections := 0
	for i := range k {
		if sections += len(list(i)); sections >= 8 && 64*sections >= ranks {
			return true
		}
	}
	return false
}

// indexGroups indexes the groups of the nodes that have many, by rank.
func indexGroups(items []*Node, ranks int) {
	for _, n := range items {
		n.of = nil
		times := func(i int) Ranklist { return n.Times[i].Ranks }
		groups, timing := many(n.numGroups(), ranks, n.groupRanks), many(len(n.Times), ranks, times)
		if groups || timing {
			n.of = &groupsOf{}
		}
		if groups {
			n.of.group = groupIndex(n.numGroups(), ranks, n.groupRanks)
		}
		if timing {
			n.of.timing = groupIndex(len(n.Times), ranks, times)
		}
		indexGroups(n.Body, ranks)
	}
}

// groupIndex returns the index of the first of k groups, of ranklists
// list(i), that holds each of the ranks (-1: none; a nil ranklist holds
// every rank).
func groupIndex(k, ranks int, list func(i int) Ranklist) []int32 {
	idx := make([]int32, ranks)
	for r := range idx {
		idx[r] = -1
	}
	var buf []int32
	left := ranks
	for i := 0; i < k && left > 0; i++ {
		l := list(i)
		if l == nil {
			for r := range idx {
				if idx[r] < 0 {
					idx[r] = int32(i)
				}
			}
			break
		}
		for _, s := range l {
			buf = rlAppend(buf[:0], int64(s.Start), s.Dims)
			for _, r := range buf {
				if r >= 0 && int(r) < ranks && idx[r] < 0 {
					idx[r] = int32(i)
					left--
				}
			}
		}
	}
	return idx
}

// Meta returns the trace's metadata.
func (t *Trace) Meta() *trace.Meta { return &t.meta }

// NumRanks returns the number of ranks.
func (t *Trace) NumRanks() int { return t.ranks }

// Origin returns the trace t was built from (by Build), or nil: its
// events are each rank's own, timings exact, where t's are statistics.
func (t *Trace) Origin() trace.Source { return t.origin }

// ClusterOf returns the index of the cluster that holds rank r.
func (t *Trace) ClusterOf(r int) int { return int(t.of[r]) }

// Families returns the communicator families of the Family mode.
func (t *Trace) Families() *Families { return t.fam }

// OpenRank returns a reader of rank r's events, walking its cluster's
// structure.
func (t *Trace) OpenRank(r int) (trace.Reader, error) {
	if r < 0 || r >= t.ranks {
		return nil, fmt.Errorf("rank %d out of range [0,%d)", r, t.ranks)
	}
	cl := &t.Clusters[t.of[r]]
	if cl.Events != nil {
		return cl.Events.OpenRank(r)
	}
	rd := &reader{t: t, cl: cl, r: int32(r)}
	if err := rd.ctx.set(int32(r), int32(t.ranks), t.TimeError, t.Plugins, t.fam); err != nil {
		return nil, err
	}
	rd.ctx.sites = &siteTable{sites: t.Sites}
	rd.stack = append(rd.stack, rframe{items: cl.walk})
	return rd, nil
}

// reader walks a cluster's structure for one rank.
type reader struct {
	// What every event reads, together (a replay's ranks' readers take
	// turns, and leave the cache between their events).
	hasAfter bool    // the computation is the next event
	after    float64 // the flops of the computation after the call just read
	err      error
	stack    []rframe
	choices  []choice // per node, what the rank does there
	cursors  []cursor
	levels   *levelCache // taken with the choices (takeState)
	maxReq   uint64
	// The call site and region of the computation after the call.
	compSite   uint64
	compRegion uint32
	ctx        fieldCtx

	t      *Trace
	cl     *Cluster
	r      int32
	bodies [][]int32
	clock  float64 // picoseconds: the end of the last timed event
	ev     trace.Event
	vec    [3][]int64
	reqs   []uint64
}

// levelCache holds the values of the last levels read, level l at
// l mod 32 (an entry i starts as level i+1, which is not there).
type levelCache [levelMask + 1]struct {
	l int64
	v float64
}

const levelMask = 31

// newLevelCache returns a cache that holds no level.
func newLevelCache() *levelCache {
	c := new(levelCache)
	for i := range c {
		c[i].l = int64(i) + 1
	}
	return c
}

// choice is what a rank does at a node, found once: whether it executes
// it, and the index of its group of counts, parameters and timing.
type choice struct {
	known, runs bool
	// seen: the rank has read the call's first instance.
	seen bool
	// filtered: a loop's body is known, the items of it the rank
	// executes: body-1 in the reader's bodies (0: all of them).
	filtered bool
	body     int32
	group    int32
	// The first of the rank's cursors of the group's series, and of its
	// timing's.
	cur, timeCur int32
	// phase is the phase of tmpl's cycled fields at the rank's next
	// instance.
	phase int32
	// tg is the rank's timing of a call (nil: none).
	tg *Timing
	// tmpl is a call's template where the rank has parameters, made at
	// its second instance.
	tmpl *template
	// quick is tmpl's table of instances where the template is quick:
	// an event read from it then loads the rank's choice and the table,
	// not the template between them. (A choice takes 64 bytes, a cache
	// line.)
	quick []phase
}

// choose returns the rank's choice at node n.
func (rd *reader) choose(n *Node) *choice {
	c := &rd.choices[n.index]
	if !c.known {
		rd.find(c, n)
	}
	return c
}

// find finds the rank's choice c at node n.
func (rd *reader) find(c *choice, n *Node) {
	c.known = true
	c.runs = n.Ranks == nil || n.Ranks.Contains(rd.r)
	var idx groupsOf
	if n.of != nil {
		idx = *n.of
	}
	c.group = firstGroup(idx.group, n.numGroups(), n.groupRanks, rd.r)
	timing := firstGroup(idx.timing, len(n.Times), func(i int) Ranklist { return n.Times[i].Ranks }, rd.r)
	switch {
	case c.group >= 0 && len(n.Counts) > 0:
		c.cur = rd.newCursors(1)
	case c.group >= 0 && len(n.Vars) > 0:
		c.cur = rd.newCursors(n.Vars[c.group].slots)
	}
	if timing >= 0 {
		c.tg = &n.Times[timing]
		c.timeCur = rd.newCursors(c.tg.slots)
	}
}

// firstGroup returns the index of the first of k groups, of ranklists
// list(i), that holds rank r (a nil ranklist holds every rank), -1 if
// none: idx[r] where the groups are indexed.
func firstGroup(idx []int32, k int, list func(int) Ranklist, r int32) int32 {
	if idx != nil {
		return idx[r]
	}
	for i := range k {
		if g := list(i); g == nil || g.Contains(r) {
			return int32(i)
		}
	}
	return -1
}

// numGroups returns the number of groups of a loop's counts or a call's
// parameters.
func (n *Node) numGroups() int { return len(n.Counts) + len(n.Vars) }

// groupRanks returns the ranks of group i of a loop's counts or a call's
// parameters.
func (n *Node) groupRanks(i int) Ranklist {
	if n.Counts != nil {
		return n.Counts[i].Ranks
	}
	return n.Vars[i].Ranks
}

// newCursors returns the index of n new cursors.
func (rd *reader) newCursors(n int32) int32 {
	i := int32(len(rd.cursors))
	rd.cursors = append(rd.cursors, make([]cursor, n)...)
	return i
}

// rframe is a list of items being walked, those the rank executes (a
// loop of which it executes none is corrupt: it would spin): the next
// item, and the iterations of the list left after this one.
type rframe struct {
	items []int32 // node numbers
	pos   int
	left  int64
}

func (rd *reader) Next() bool {
	if rd.hasAfter {
		e := &rd.ev
		e.Reset()
		e.Kind, e.Compute, e.CallSite, e.Region = trace.Compute, rd.after, rd.compSite, rd.compRegion
		rd.hasAfter = false
		return true
	}
	if rd.choices == nil && rd.err == nil && len(rd.stack) > 0 {
		rd.takeState()
	}
	for rd.err == nil && len(rd.stack) > 0 {
		f := &rd.stack[len(rd.stack)-1]
		if f.pos == len(f.items) {
			if f.left > 0 {
				f.left--
				f.pos = 0
			} else {
				rd.stack = rd.stack[:len(rd.stack)-1]
			}
			continue
		}
		idx := f.items[f.pos]
		f.pos++
		ch := &rd.choices[idx] // known, and the rank runs the node: the list is filtered (body)
		if phases := ch.quick; phases != nil {
			// the instance from the table, the relative partners and
			// sources decoded (Rel's decode, inlined)
			i := ch.phase
			if ch.phase++; int(ch.phase) == len(phases) {
				ch.phase = 0
			}
			ph := &phases[i]
			rd.ev = ph.ev
			if j := ph.partnerAt; j >= 0 {
				rd.ev.Partner = int32(rd.ctx.unoffset(ph.rel[j&1], rd.ctx.rank))
			}
			if j := ph.sourceAt; j >= 0 {
				rd.ev.Source = int32(rd.ctx.unoffset(ph.rel[j&1], rd.ctx.rank))
			}
			rd.request(ph.in.req)
			rd.compSite, rd.compRegion = ph.in.compSite, ph.in.compRegion
			switch tg := ch.tg; {
			case tg == nil:
			case tg.Mask == 1<<StatComp: // times', inlined: most calls' one statistic
				if flops := rd.stat(tg, idx, ch.timeCur, StatComp); flops != 0 {
					rd.after, rd.hasAfter = flops, true
				}
			default:
				rd.times(rd.cl.byIndex[idx], ch, ph.in.timed)
			}
			return rd.err == nil
		}
		n := rd.cl.byIndex[idx]
		if !n.IsLoop() {
			rd.event(n, ch)
			return rd.err == nil
		}
		c := rd.counts(n, ch)
		if c < 0 || c > math.MaxInt32*int64(1<<16) {
			rd.err = fmt.Errorf("%w: a loop of %d iterations", ErrCorrupt, c)
			return false
		}
		if c > 0 {
			if len(rd.stack) >= maxNesting {
				rd.err = fmt.Errorf("%w: loops nested more than %d deep", ErrCorrupt, maxNesting)
				return false
			}
			items := n.walk
			switch {
			case ch.body > 0:
				items = rd.bodies[ch.body-1]
			case !ch.filtered:
				items = rd.body(items, ch)
			}
			if len(items) == 0 && c > 1 {
				rd.err = fmt.Errorf("%w: rank %d executes a loop of whose body it calls nothing", ErrCorrupt, rd.r)
				return false
			}
			rd.stack = append(rd.stack, rframe{items: items, left: c - 1})
		}
	}
	return false
}

// body returns the items of a list that the rank executes, the list
// where it executes them all, and keeps them in ch, the choice of the
// loop whose body the list is (nil for a cluster's items). A reader so
// walks only its rank's items, where a merged structure holds every
// rank's. A loop of few iterations, as many at each of its instances,
// is replaced by its iterations (unroll).
func (rd *reader) body(items []int32, ch *choice) []int32 {
	var b []int32 // nil while the list is items' so far
	for i, idx := range items {
		n := rd.cl.byIndex[idx]
		c := rd.choose(n)
		var u []int32
		k := 0
		if c.runs && n.IsLoop() {
			u, k = rd.unroll(n, c)
		}
		if b == nil {
			if c.runs && k == 0 {
				continue
			}
			b = append(make([]int32, 0, len(items)-1+k*len(u)), items[:i]...)
		}
		switch {
		case k > 0:
			for range k {
				b = append(b, u...)
			}
		case c.runs:
			b = append(b, idx)
		}
	}
	if ch != nil {
		ch.filtered = true
		if b != nil {
			rd.bodies = append(rd.bodies, b)
			ch.body = int32(len(rd.bodies))
		}
	}
	if b == nil {
		return items
	}
	return b
}

// unrollMax bounds the items of a loop's iterations walked as a list: a
// rank's lists then take at most that many times its nodes' 8 bytes.
const unrollMax = 8

// unroll returns the body of loop n, whose choice for the rank is ch, and
// its iterations, where the walk is to read them as a list: where the
// loop runs the same few times at each of its instances and its body is
// not empty. Walking a list spares a frame and a count an instance,
// which loops of one to three calls repeated (an LU's exchanges) spend as
// much on as on their calls. 0 iterations: the loop stays, read as the
// walk enters it (a count that varies, or one that is corrupt, its error
// then).
func (rd *reader) unroll(n *Node, ch *choice) ([]int32, int) {
	if ch.group < 0 {
		return nil, 0
	}
	s := &n.Counts[ch.group].Series
	if s.slot >= 0 || s.First < 1 || s.First > unrollMax {
		return nil, 0
	}
	body := rd.body(n.walk, ch)
	k := int(s.First)
	if len(body) == 0 || k*len(body) > unrollMax {
		return nil, 0
	}
	return body, k
}

// maxNesting bounds the depth of loops a reader walks.
const maxNesting = 256

func (rd *reader) Event() *trace.Event { return &rd.ev }
func (rd *reader) Err() error          { return rd.err }

// Close ends the reading, and leaves the reader's choices and cursors to
// the next reader of the trace.
func (rd *reader) Close() error {
	if rd.choices != nil {
		rd.t.states.Put(&rankState{choices: rd.choices, cursors: rd.cursors, levels: rd.levels})
		rd.choices, rd.cursors, rd.levels = nil, nil, nil
	}
	rd.stack = nil
	return nil
}

// rankState is what a reader holds for its rank at every node, which a
// closed reader leaves to the next: a verb that reads the ranks one
// after the other (stats) then takes the memory of one rank's readers,
// not of every rank's (a fresh page is a fault; 2 MB for 1,024 ranks).
type rankState struct {
	choices []choice
	cursors []cursor
	levels  *levelCache // the levels' values, the same in every rank's
}

// takeState gives the reader its choices and cursors, those a closed
// reader left where they are large enough.
func (rd *reader) takeState() {
	st, _ := rd.t.states.Get().(*rankState)
	if st == nil || cap(st.choices) < rd.cl.nodes || cap(st.cursors) < rd.cl.cursors {
		// As many cursors as the rank may need: about as many bytes
		// as its choices, and no growing.
		st = &rankState{choices: make([]choice, rd.cl.nodes), cursors: make([]cursor, 0, rd.cl.cursors)}
	}
	if st.levels == nil {
		st.levels = newLevelCache()
	}
	rd.choices, rd.cursors, rd.levels = st.choices[:rd.cl.nodes], st.cursors[:0], st.levels
	clear(rd.choices)
	if len(rd.stack) == 1 && rd.stack[0].pos == 0 {
		rd.stack[0].items = rd.body(rd.stack[0].items, nil)
	}
}

// value returns the next value of s for the rank, whose group's cursors
// start at cur.
func (rd *reader) value(s *Series, cur int32) int64 {
	if s.slot < 0 {
		return s.First
	}
	return rd.cursors[cur+s.slot].next(s)
}

// counts returns the iteration count of loop n's next instance.
func (rd *reader) counts(n *Node, ch *choice) int64 {
	if ch.group < 0 {
		rd.err = fmt.Errorf("%w: rank %d has no iteration count for a loop it executes", ErrCorrupt, rd.r)
		return 0
	}
	return rd.value(&n.Counts[ch.group].Series, ch.cur)
}

// event makes the rank's next instance of call n, and the computation
// after it, for the next event, if there was one.
func (rd *reader) event(n *Node, ch *choice) {
	e := &rd.ev
	if ch.group < 0 && len(n.Vars) > 0 {
		rd.err = fmt.Errorf("%w: rank %d has no parameters for a %s it calls", ErrCorrupt, rd.r, n.Kind)
		return
	}
	in := instance{req: requestNone}
	if ch.group >= 0 && ch.tmpl == nil && ch.seen {
		t := rd.template(n, ch.group)
		ch.tmpl, ch.phase = t, int32(1%max(len(t.cyc.phases), 1))
		if t.quick {
			ch.quick = t.cyc.phases
		}
	}
	switch t := ch.tmpl; {
	case t != nil && t.err != nil:
		rd.err = t.err
		return
	case t != nil && t.cyc.phases != nil:
		if !rd.cycled(&t.cyc, ch, &in) {
			return
		}
		if t.rest == 0 {
			rd.request(in.req) // no vector: none is cycled
		} else if !rd.fields(&n.Vars[ch.group], ch.cur, t.rest, &in) {
			return
		}
	case t != nil:
		*e, in = t.ev, t.in
		if !rd.fields(&n.Vars[ch.group], ch.cur, t.vary, &in) {
			return
		}
	default:
		e.Reset()
		e.Kind, e.CallSite = n.Kind, n.Site
		ch.seen = true
		if ch.group >= 0 && !rd.fields(&n.Vars[ch.group], ch.cur, n.Vars[ch.group].Mask, &in) {
			return
		}
	}
	rd.compSite, rd.compRegion = in.compSite, in.compRegion
	if ch.tg != nil {
		rd.times(n, ch, in.timed)
	}
}

// times sets the times and computations of the rank's instance of call
// n, whose timing it has, timed or not.
func (rd *reader) times(n *Node, ch *choice, timed bool) {
	e, tg := &rd.ev, ch.tg
	if tg.Mask&(1<<StatValue) != 0 && isTiming(n.Kind) {
		e.Compute = rd.stat(tg, n.index, ch.timeCur, StatValue)
	}
	if timed && tg.Mask&(1<<StatGap|1<<StatDur) != 0 {
		rd.clock += rd.stat(tg, n.index, ch.timeCur, StatGap)
		e.Enter = trace.Time(math.Round(rd.clock))
		rd.clock += rd.stat(tg, n.index, ch.timeCur, StatDur)
		e.Exit = trace.Time(math.Round(rd.clock))
		e.HasTime = true
	}
	if tg.Mask&(1<<StatComp) != 0 {
		if flops := rd.stat(tg, n.index, ch.timeCur, StatComp); flops != 0 {
			rd.after, rd.hasAfter = flops, true
		}
	}
}

// stat returns the rank's next instance of statistic k of node.
func (rd *reader) stat(tg *Timing, node, cur int32, k int) float64 {
	l := tg.Levels[k]
	tables := tg.levels&(1<<k) == 0 // values or a histogram, if any
	if tables {
		if tg.Hists[k] != nil {
			return rd.draw(tg, node, cur, k)
		}
		if l == nil {
			return tg.Stats[k].Mean
		}
	}
	i := l.First
	if l.slot >= 0 {
		c := &rd.cursors[cur+l.slot]
		if j := c.v; uint64(j) < uint64(len(l.vals)) && c.n < l.N { // cursor.next's, inlined
			c.v, c.n = j+1, c.n+1
			i = l.vals[j]
		} else if l.streamed() { // a noisy computation's levels
			i = c.nextStream(l)
		} else {
			i = c.nextSlow(l)
		}
	}
	if tables && tg.Values[k] != nil {
		vs := tg.Values[k]
		if i < 0 || i >= int64(len(vs)) {
			rd.err = fmt.Errorf("%w: value %d of %d", ErrCorrupt, i, len(vs))
			return 0
		}
		return vs[i]
	}
	// FromLevel(i), from the last values computed where it is one of
	// them: a noisy computation's levels are a few dozen around its
	// mean, and an exponential costs more than a look-up
	c := &rd.levels[uint64(i)&levelMask]
	if c.l != i {
		c.l, c.v = i, rd.ctx.level(i)
	}
	return c.v
}

// draw returns the rank's next instance of statistic k of node, read
// from its histogram.
func (rd *reader) draw(tg *Timing, node, cur int32, k int) float64 {
	h := tg.Hists[k]
	c := &rd.cursors[cur+tg.Levels[k].slot]
	g := c.next(tg.Levels[k]) - 1
	if g < 0 || g >= int64(len(h.Groups)) {
		if g != -1 {
			rd.err = fmt.Errorf("%w: group %d of a histogram of %d", ErrCorrupt, g+1, len(h.Groups))
		}
		return 0
	}
	if c.hist == nil {
		c.hist = rd.histCursor(tg, k)
	}
	c.hist.drawn[g]++
	return h.Groups[g].read(rd.r, node, k, int(g), c.hist.drawn[g]-1) * c.hist.scale[g]
}

// histCursor returns the rank's new cursor of statistic k's histogram,
// with its scales.
func (rd *reader) histCursor(tg *Timing, k int) *histCursor {
	c := &histCursor{}
	for g := range c.scale {
		c.scale[g] = 1
	}
	if l := tg.Scales[k]; l != nil {
		groups := len(tg.Hists[k].Groups)
		at := tg.Ranks.Below(rd.r) * groups
		if !tg.Ranks.Contains(rd.r) || at+groups > len(l) {
			rd.err = fmt.Errorf("%w: rank %d has no scale among the %d of a histogram of %d groups", ErrCorrupt, rd.r, len(l), groups)
			return c
		}
		for g := range groups {
			c.scale[g] = fromScale(l[at+g], rd.ctx.eps)
		}
	}
	return c
}

// instance is what the fields of a call's instance set beside its event.
type instance struct {
	timed bool
	// req is the Request field, relative (requests).
	req int64
	// The call site and region of the computation after the call.
	compSite   uint64
	compRegion uint32
}

// template is a call's event with the fields that every instance of a
// group of ranks has alike (the constant series in Abs mode) set, from
// which each instance starts: a noisy trace's calls vary in their
// timing, seldom in their parameters, and decoding a field costs more
// than copying it.
type template struct {
	ev   trace.Event
	in   instance
	vary uint32 // the fields read at each instance
	err  error  // the instances' error (a constant field that decodes to none)
	// cyc are the instances of a call whose varying scalar fields repeat
	// with a short period (the partners, tags and computation sites of
	// merged loops, which alternate), made once for every rank of the
	// group; rest are the fields of vary read from their series at each
	// instance.
	cyc  cycled
	rest uint32
	// quick: the instances are the table's alone, their fields of a mode
	// other than Abs partners and sources relative to the rank.
	quick bool
}

// cycled are the instances of a call of a group of ranks over a period
// of its cycled fields: instance i of a rank is phases[p], p = i mod
// period, but for the fields of a mode other than Abs (a partner
// relative to the rank), which each rank decodes: fields[j] of mode
// modes[j] has value rel[p][j] (nil: there are none), and phases[p].rel[j]
// too where the fields are partners and sources (template.quick).
type cycled struct {
	phases []phase
	fields []Field
	modes  []Mode
	rel    [][]int64
}

// phase is a call's instance at a phase of its cycled fields.
type phase struct {
	ev  trace.Event
	in  instance
	rel [2]int64 // a quick template's partner and source, relative
	// partnerAt and sourceAt are, in a quick template, the places of
	// the partner and the source in rel, -1 for none: the reader decodes
	// each without a walk of fields.
	partnerAt, sourceAt int8
}

// maxCycled is the longest period of a call's cycled fields together;
// maxCycleBytes what the tables of a trace's readers may take together
// (beyond it they read each field from its series).
const (
	maxCycled     = 256
	maxCycleBytes = 64 << 20
)

// template returns the template of call n for the ranks of its group of
// parameters g, made by the first of them to need it.
func (rd *reader) template(n *Node, g int32) *template {
	if t := n.tmpls[g].Load(); t != nil {
		return t
	}
	v := &n.Vars[g]
	t := &template{in: instance{req: requestNone}}
	t.ev.Reset()
	t.ev.Kind, t.ev.CallSite = n.Kind, n.Site
	period := 1
	var cyc []Field
	for i, mask := 0, v.Mask; mask != 0; i, mask = i+1, mask&(mask-1) {
		f := Field(bits.TrailingZeros32(mask))
		val := &v.Fields[i]
		if f.IsVector() || val.Series.slot >= 0 || val.Mode != Abs {
			t.vary |= 1 << f
			if p := cyclePeriod(f, &val.Series, period); p > 0 {
				cyc = append(cyc, f)
				period = p
			} else {
				t.rest |= 1 << f
			}
			continue
		}
		if t.err = rd.scalar(&t.ev, &t.in, f, val, val.Series.First); t.err != nil {
			break
		}
	}
	if len(cyc) > 0 && t.err == nil && !rd.cycle(t, v, cyc, period) {
		t.rest = t.vary
	}
	t.quick = t.err == nil && t.cyc.phases != nil && t.rest == 0 && onlyRelative(&t.cyc)
	partnerAt, sourceAt := int8(-1), int8(-1)
	for j, f := range t.cyc.fields {
		switch {
		case !t.quick:
		case f == Partner:
			partnerAt = int8(j)
		default: // Source (onlyRelative)
			sourceAt = int8(j)
		}
	}
	for i := range t.cyc.phases {
		t.cyc.phases[i].partnerAt, t.cyc.phases[i].sourceAt = partnerAt, sourceAt
	}
	if !n.tmpls[g].CompareAndSwap(nil, t) {
		rd.t.cycleBytes.Add(t.cyc.size()) // another reader's is there
	}
	return n.tmpls[g].Load()
}

// cyclePeriod returns the period of the values of series s of field f
// together with fields of period p, 0 if f is not to be cycled: a vector,
// a series read by walking its runs, or a period past maxCycled.
func cyclePeriod(f Field, s *Series, p int) int {
	switch {
	case f.IsVector():
		return 0
	case s.slot < 0:
		return p
	case s.vals == nil:
		return 0
	}
	l := int64(len(s.vals))
	q := int64(p) / gcd(int64(p), l) * l
	if q > maxCycled {
		return 0
	}
	return int(q)
}

// cycle makes t's table of the cycled fields of variant v over period
// instances, and reports whether it did: not if the trace's budget is
// spent or if a value is not valid (the instance that has it then fails
// as it would without the table).
func (rd *reader) cycle(t *template, v *Variant, fields []Field, period int) bool {
	c := &t.cyc
	for _, f := range fields {
		if m := v.Field(f).Mode; m != Abs {
			c.fields, c.modes = append(c.fields, f), append(c.modes, m)
		}
	}
	c.phases = make([]phase, period)
	if size := c.size(); rd.t.cycleBytes.Add(-size) < 0 {
		rd.t.cycleBytes.Add(size)
		*c = cycled{}
		return false
	}
	if len(c.fields) > 0 {
		c.rel = make([][]int64, period)
	}
	for i := range c.phases {
		ph := &c.phases[i]
		ph.ev, ph.in = t.ev, t.in
		for _, f := range fields {
			val := v.Field(f)
			x := val.Series.First
			if s := &val.Series; s.slot >= 0 {
				x = s.vals[i%len(s.vals)]
			}
			if val.Mode != Abs {
				if j := len(c.rel[i]); j < len(ph.rel) {
					ph.rel[j] = x
				}
				c.rel[i] = append(c.rel[i], x)
			} else if rd.scalar(&ph.ev, &ph.in, f, val, x) != nil {
				*c = cycled{}
				return false
			}
		}
	}
	return true
}

// onlyRelative reports whether c's fields of a mode other than Abs are
// all partners or sources relative to the rank.
func onlyRelative(c *cycled) bool {
	if len(c.fields) > len(phase{}.rel) {
		return false
	}
	for j, f := range c.fields {
		if c.modes[j] != Rel || f != Partner && f != Source {
			return false
		}
	}
	return true
}

// size returns the bytes of c's table.
func (c *cycled) size() int64 {
	return int64(len(c.phases)) * int64(unsafe.Sizeof(phase{})+8*uintptr(len(c.fields)))
}

// cycled sets the event and instance of the rank's next instance of a
// call from its table, and reports whether they are valid.
func (rd *reader) cycled(c *cycled, ch *choice, in *instance) bool {
	i := ch.phase
	if ch.phase++; int(ch.phase) == len(c.phases) {
		ch.phase = 0
	}
	ph := &c.phases[i]
	rd.ev, *in = ph.ev, ph.in
	if c.rel == nil {
		return true
	}
	for j, x := range c.rel[i] {
		if m := c.modes[j]; m == Rel {
			x = rd.ctx.unoffset(x, rd.ctx.rank) // decode's, inlined
		} else {
			var err error
			if x, err = rd.ctx.decode(m, x); err != nil {
				rd.err = err
				return false
			}
		}
		switch f := c.fields[j]; f {
		case Partner: // as set does, without its call
			rd.ev.Partner = int32(x)
		case Source:
			rd.ev.Source = int32(x)
		default:
			if err := rd.set(&rd.ev, in, f, x); err != nil {
				rd.err = err
				return false
			}
		}
	}
	return true
}

// fields sets the fields of mask from variant v, and the request ids; it
// reports whether they are valid.
func (rd *reader) fields(v *Variant, cur int32, mask uint32, in *instance) bool {
	e := &rd.ev
	var reqs []int64
	for ; mask != 0; mask &= mask - 1 {
		f := Field(bits.TrailingZeros32(mask))
		val := v.Field(f)
		if !f.IsVector() {
			// rd.err is written only on an error: a pointer's store
			// costs a write barrier while the collector marks
			if err := rd.scalar(e, in, f, val, rd.value(&val.Series, cur)); err != nil {
				rd.err = err
				return false
			}
			continue
		}
		x := rd.vector(f, val, cur)
		switch f {
		case Requests:
			reqs = x
		case SendCounts:
			e.SendCounts = x
		case RecvCounts:
			e.RecvCounts = x
		}
	}
	rd.requests(in.req, reqs, v.Mask&(1<<Requests) != 0)
	return rd.err == nil
}

// scalar sets scalar field f, of value v in the field's series, of an
// instance.
func (rd *reader) scalar(e *trace.Event, in *instance, f Field, val *Value, v int64) error {
	x := v
	if val.Mode != Abs {
		var err error
		if x, err = rd.ctx.decode(val.Mode, v); err != nil {
			return err
		}
	}
	return rd.set(e, in, f, x)
}

// set sets scalar field f of an instance to x.
func (rd *reader) set(e *trace.Event, in *instance, f Field, x int64) error {
	switch f {
	case Partner:
		e.Partner = int32(x)
	case Source:
		e.Source = int32(x)
	case Tag:
		e.Tag = int32(x)
	case Comm:
		e.Comm = uint32(x)
	case NewComm:
		e.NewComm = uint32(x)
	case SendBytes:
		e.SendBytes = x
	case RecvBytes:
		e.RecvBytes = x
	case SendType:
		e.SendType = trace.Datatype(x)
	case RecvType:
		e.RecvType = trace.Datatype(x)
	case Request:
		in.req = x
	case ComputeArg:
		e.Compute = math.Float64frombits(uint64(x))
	case Region:
		e.Region = uint32(x)
	case Timed:
		in.timed = x != 0
	case CompSite:
		in.compSite = rd.ctx.sites.site(x)
	case CompRegion:
		in.compRegion = uint32(x)
	case Op:
		if e.Op = trace.Op(x); !e.Op.Valid() {
			return fmt.Errorf("%w: reduction operation %d", ErrCorrupt, x)
		}
	case Handle:
		if x < 0 || x > math.MaxUint32 {
			return fmt.Errorf("%w: handle %d", ErrCorrupt, x)
		}
		e.Handle = uint32(x)
	}
	return nil
}

// vector reads the next instance of a vector field (nil for a length of
// -1), into a buffer reused from one event to the next.
func (rd *reader) vector(f Field, val *Value, cur int32) []int64 {
	n := rd.value(&val.Series, cur)
	if n < 0 {
		return nil
	}
	if elems := int64(len(val.Elems)); n > elems && val.Alike == 0 || val.Alike > 0 && (n > val.Alike || elems != 1) {
		rd.err = fmt.Errorf("%w: a %s of %d elements, %d series (alike up to %d)", ErrCorrupt, f, n, elems, val.Alike)
		return nil
	}
	i := int(f - Requests)
	buf := rd.vec[i][:0]
	if buf == nil {
		buf = make([]int64, 0, n)
	}
	switch {
	case val.Alike == 0:
		for j := range n {
			buf = append(buf, rd.value(&val.Elems[j], cur))
		}
	case n > 0:
		x := rd.value(&val.Elems[0], cur)
		for range n {
			buf = append(buf, x)
		}
	}
	rd.vec[i] = buf
	return buf
}

// requests sets the event's request ids from their values relative to
// the highest the rank defined before the event.
func (rd *reader) requests(req int64, reqs []int64, hasReqs bool) {
	e := &rd.ev
	base := rd.maxReq
	rd.request(req)
	if !hasReqs || reqs == nil {
		return
	}
	rd.reqs = rd.reqs[:0]
	if rd.reqs == nil {
		rd.reqs = make([]uint64, 0, len(reqs))
	}
	for _, q := range reqs {
		id := base + uint64(q)
		rd.reqs = append(rd.reqs, id)
		rd.maxReq = max(rd.maxReq, id)
	}
	e.Requests = rd.reqs
}

// request sets the event's Request from its value relative to the
// highest the rank defined before the event.
func (rd *reader) request(req int64) {
	if req != requestNone {
		rd.ev.Request = rd.maxReq + uint64(req)
		rd.maxReq = max(rd.maxReq, rd.ev.Request)
	}
}
