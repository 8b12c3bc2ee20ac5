package prsd

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"math"
	"slices"

	"kairos/trace"
)

// Inter-rank merging, as ScalaTrace's inter-node compression: the ranks
// of a cluster are merged one after the other into one structure. A
// rank's sequence is aligned with the cluster's (a longest common
// subsequence of items: calls of the same kind and call site, loops
// starting with the same call), the loops matched recursively; what the
// rank has alone is inserted with the rank's ranklist. Every item keeps
// the ranks that execute it, and a call its parameters per rank: the
// ranks whose series are equal share them. Any alignment is correct (each
// rank executes its own items in its own order); a good one only makes
// the structure smaller. Ranks of the same shape reuse the alignment
// found for the first, so that merging a cluster of SPMD ranks is linear.

// maxAlign bounds the cells of an alignment's table; longer sequences
// are aligned by their common beginning and end only.
const maxAlign = 1 << 22

// slot is one field in one mode: a column of a call's tuples.
type slot struct {
	f  Field
	m  Mode
	mi int // index of m in modesOf(f)
}

func slotsFor(np int) []slot {
	var s []slot
	for f := range NumFields {
		for i, m := range modesOf(f, np) {
			s = append(s, slot{f, m, i})
		}
	}
	return s
}

// merger merges ranks' sequences into clusters' structures.
type merger struct {
	in    *Interner
	slots []slot
	eps   float64
	hist  bool // timings as histograms (Options.Histograms)
	buf   []byte
	// scales are the scales of the rank being added (nearHists).
	scales []int64
	ids    []int32
	cands  []int32 // the groups a rank's timing may join (timeGroups.first)
}

// mnode is a call or loop of a cluster's structure being merged.
type mnode struct {
	kind  trace.Kind
	site  uint64
	head  int32 // the identity of the call it is or starts with
	loop  bool
	ranks []int32
	// A call: per slot, the distinct series (by encoding) and their
	// values; the ranks of each tuple of series; the timing groups.
	dict   []map[string]int32
	vals   [][]Value
	tuples map[string]*tuple
	times  []*timeGroup
	byKey  map[string]*timeGroups
	// A loop: its body, the alignment of each body shape to it, and the
	// ranks of each series of iteration counts.
	body   []*mnode
	cache  map[int32][]*mnode
	counts map[string]*countGroup
}

type tuple struct {
	ids   []int32 // per slot, -1: absent
	ranks []int32
}

type countGroup struct {
	s     Series
	ranks []int32
}

// timeGroup is ranks whose statistics read back alike: per statistic,
// means all near the group's first (its anchor: merger.near), or equal
// series of levels.
type timeGroup struct {
	mask     uint8
	hists    [numStats]*Histogram
	anchor   [numStats]float64
	sum      [numStats]float64
	min, max [numStats]float64
	levels   [numStats]*Series
	values   [numStats][]float64
	ranks    []int32
	// scales are, per statistic with a histogram, each rank's scale of
	// each group (scaleLevel), in the order of ranks.
	scales [numStats][]int64
}

func headOf(n *rnode) int32 {
	for n.isLoop() {
		n = n.body[0]
	}
	return n.id
}

func (m *merger) newNode(s *rnode) *mnode {
	n := &mnode{kind: s.kind, site: s.site, head: headOf(s), loop: s.isLoop()}
	if n.loop {
		n.cache, n.counts = map[int32][]*mnode{}, map[string]*countGroup{}
		return n
	}
	n.dict = make([]map[string]int32, len(m.slots))
	n.vals = make([][]Value, len(m.slots))
	for i := range n.dict {
		n.dict[i] = map[string]int32{}
	}
	n.tuples = map[string]*tuple{}
	return n
}

// mergeSeq merges rank r's sequence src into items.
func (m *merger) mergeSeq(items *[]*mnode, cache map[int32][]*mnode, src []*rnode, r int32) {
	key := m.in.items(2, src)
	matched, ok := cache[key]
	if !ok {
		matched = m.align(items, src)
		cache[key] = matched
	}
	for i, s := range src {
		m.mergeNode(matched[i], s, r)
	}
}

func (m *merger) mergeNode(n *mnode, s *rnode, r int32) {
	n.ranks = append(n.ranks, r)
	if !n.loop {
		m.addCall(n, s.acc, r)
		return
	}
	counts := s.counts.finish()
	m.buf = counts.AppendBinary(m.buf[:0])
	g, ok := n.counts[string(m.buf)]
	if !ok {
		g = &countGroup{s: counts}
		n.counts[string(m.buf)] = g
	}
	g.ranks = append(g.ranks, r)
	m.mergeSeq(&n.body, n.cache, s.body, r)
}

// align matches src's items with items (see the package comment), inserts
// the new ones, and returns the item of items each of src's is merged into.
func (m *merger) align(items *[]*mnode, src []*rnode) []*mnode {
	dst := *items
	match := func(i, j int) bool {
		return dst[i].loop == src[j].isLoop() && dst[i].head == headOf(src[j])
	}
	pairs := lcs(len(dst), len(src), match)
	out := make([]*mnode, 0, len(dst)+len(src)-len(pairs))
	matched := make([]*mnode, len(src))
	i, j := 0, 0
	for _, p := range append(pairs, [2]int{len(dst), len(src)}) {
		for ; i < p[0]; i++ {
			out = append(out, dst[i])
		}
		for ; j < p[1]; j++ {
			matched[j] = m.newNode(src[j])
			out = append(out, matched[j])
		}
		if i < len(dst) {
			out = append(out, dst[i])
			matched[j] = dst[i]
			i++
			j++
		}
	}
	*items = out
	return matched
}

// lcs returns the index pairs of a longest common subsequence of two
// sequences of lengths n and k, ascending; past maxAlign cells, only their
// common beginning and end.
func lcs(n, k int, match func(i, j int) bool) [][2]int {
	if n == 0 || k == 0 {
		return nil
	}
	if n*k > maxAlign {
		var head, tail [][2]int
		for len(head) < min(n, k) && match(len(head), len(head)) {
			head = append(head, [2]int{len(head), len(head)})
		}
		for t := 1; len(head)+t <= min(n, k) && match(n-t, k-t); t++ {
			tail = append(tail, [2]int{n - t, k - t})
		}
		slices.Reverse(tail)
		return append(head, tail...)
	}
	w := k + 1
	c := make([]uint32, (n+1)*w)
	for i := n - 1; i >= 0; i-- {
		for j := k - 1; j >= 0; j-- {
			switch {
			case match(i, j):
				c[i*w+j] = c[(i+1)*w+j+1] + 1
			default:
				c[i*w+j] = max(c[(i+1)*w+j], c[i*w+j+1])
			}
		}
	}
	var pairs [][2]int
	for i, j := 0, 0; i < n && j < k; {
		switch {
		case match(i, j) && c[i*w+j] == c[(i+1)*w+j+1]+1:
			pairs = append(pairs, [2]int{i, j})
			i++
			j++
		case c[(i+1)*w+j] >= c[i*w+j+1]:
			i++
		default:
			j++
		}
	}
	return pairs
}

// addCall adds rank r's instances of a call: its series, by slot, and its
// timing.
func (m *merger) addCall(n *mnode, a *accCall, r int32) {
	m.ids = m.ids[:0]
	for i, sl := range m.slots {
		fa := a.fields[sl.f]
		if fa == nil {
			m.ids = append(m.ids, -1)
			continue
		}
		v := fieldValue(fa, sl)
		m.buf = appendValue(m.buf[:0], &v)
		id, ok := n.dict[i][string(m.buf)]
		if !ok {
			id = int32(len(n.vals[i]))
			n.dict[i][string(m.buf)] = id
			n.vals[i] = append(n.vals[i], v)
		}
		m.ids = append(m.ids, id)
	}
	m.buf = m.buf[:0]
	for _, id := range m.ids {
		m.buf = binary.AppendVarint(m.buf, int64(id))
	}
	t, ok := n.tuples[string(m.buf)]
	if !ok {
		t = &tuple{ids: slices.Clone(m.ids)}
		n.tuples[string(m.buf)] = t
	}
	t.ranks = append(t.ranks, r)
	m.addTiming(n, a, r)
}

// fieldValue returns a field's series in slot sl's mode.
func fieldValue(fa *fieldAcc, sl slot) Value {
	if !sl.f.IsVector() {
		return Value{Mode: sl.m, Series: fa.modes[sl.mi].finish()}
	}
	v := Value{Mode: Abs, Series: fa.lens.finish()}
	for i := range fa.elems {
		v.Elems = append(v.Elems, fa.elems[i].finish())
	}
	if len(v.Elems) > 1 {
		first := v.Elems[0].AppendBinary(nil)
		if !slices.ContainsFunc(v.Elems[1:], func(s Series) bool { return !bytes.Equal(s.AppendBinary(nil), first) }) {
			v.Elems, v.Alike = v.Elems[:1], int64(len(v.Elems))
		}
	}
	return v
}

// appendValue appends the encoding of a value's series.
func appendValue(b []byte, v *Value) []byte {
	b = v.Series.AppendBinary(b)
	b = binary.AppendUvarint(b, uint64(v.Alike))
	b = binary.AppendUvarint(b, uint64(len(v.Elems)))
	for i := range v.Elems {
		b = v.Elems[i].AppendBinary(b)
	}
	return b
}

// timeTolerance is the absolute part of the times' error bound: 1 ns.
const timeTolerance = 1000

// isTime reports whether statistic k is a time, which moves its rank's
// clock: a gap or a duration.
func isTime(k int) bool { return k == statGap || k == statDur }

// tolerance is the error within which statistic k's values of about x
// count as one.
func (m *merger) tolerance(k int, x float64) float64 {
	tol := m.eps / 3 * math.Abs(x)
	if isTime(k) && m.eps > 0 {
		tol += timeTolerance
	}
	return tol
}

// addTiming adds rank r's statistics of a call: per statistic, its mean
// where every instance is within eps/3 of it, else its levels. The rank
// joins the first group of the same levels whose means' anchors are all
// within eps/3 of its own (so that the group's mean is within 2eps/3 of
// the rank's, and every instance reads back within eps), or starts a
// group.
func (m *merger) addTiming(n *mnode, a *accCall, r int32) {
	var mask uint8
	var hists [numStats]*Histogram
	var mean [numStats]float64
	var levels [numStats]*Series
	var values [numStats][]float64
	m.buf = m.buf[:0]
	for k, st := range a.stats {
		if st == nil || st.n == 0 || k == statComp && st.min == 0 && st.max == 0 {
			continue
		}
		mask |= 1 << k
		mean[k] = st.mean()
		// Within the tolerance of their mean, the instances read it; with
		// histograms, times of many values read their distribution where
		// it folds, so that ranks whose means differ by more than their
		// noise (near) still share one, each scaled to its own sum.
		within := st.max-mean[k] <= m.tolerance(k, mean[k]) && mean[k]-st.min <= m.tolerance(k, mean[k])
		if within && !(m.hist && st.many && isTime(k)) {
			m.buf = append(m.buf, byte(k), 0)
			continue
		}
		// The instances: exactly where they take few values (structure,
		// not noise), as the index of their value, else as levels.
		if !st.many {
			idx := st.index.finish()
			levels[k], values[k] = &idx, slices.Clone(st.distinct)
			m.buf = append(m.buf, byte(k), 2)
			for _, v := range st.distinct {
				m.buf = binary.LittleEndian.AppendUint64(m.buf, math.Float64bits(v))
			}
			m.buf = idx.AppendBinary(m.buf)
			continue
		}
		l := st.levels.finish()
		if m.hist {
			h, groups, ok := histogram(&l, m.eps, isTime(k))
			if ok {
				// Ranks of the same groups, in the same order, share the
				// first's histogram where their values allow (near).
				hists[k], levels[k] = h, &groups
				m.buf = append(m.buf, byte(k), 4, byte(len(h.Groups)))
				m.buf = groups.AppendBinary(m.buf)
				continue
			}
			if within {
				m.buf = append(m.buf, byte(k), 0)
				continue
			}
			l = groups // the instances' levels on the TimeError scale
		}
		levels[k] = &l
		m.buf = append(m.buf, byte(k), 1)
		m.buf = l.AppendBinary(m.buf)
	}
	if mask == 0 {
		return
	}
	if n.byKey == nil {
		n.byKey = map[string]*timeGroups{}
	}
	ts := n.byKey[string(m.buf)]
	if ts == nil {
		ts = &timeGroups{}
		n.byKey[string(m.buf)] = ts
	}
	g := ts.first(m, &mean, &hists, a)
	if g == nil {
		g = &timeGroup{mask: mask, hists: hists, anchor: mean, levels: levels, values: values}
		for k := range a.stats {
			g.min[k], g.max[k] = math.Inf(1), math.Inf(-1)
		}
		n.times = append(n.times, g)
		ts.add(m, g)
		m.scales = m.scales[:0]
		for _, h := range hists {
			if h != nil {
				m.scales = append(m.scales, make([]int64, len(h.Groups))...) // its own: 1
			}
		}
	}
	g.widen(&hists, m.scales, m.eps)
	for k := range a.stats {
		if mask&(1<<k) != 0 {
			g.sum[k] += mean[k]
			g.min[k] = math.Min(g.min[k], a.stats[k].min)
			g.max[k] = math.Max(g.max[k], a.stats[k].max)
		}
	}
	g.ranks = append(g.ranks, r)
}

// near reports whether a rank whose call a has the given means may read
// g's: where each mean g keeps as a mean is within eps/3 of g's anchor
// (each instance then reads back within eps), and, for a time, where the
// instances' sum read so moves the rank's clock by no more than their
// noise already does (the square root of their squared deviations' sum,
// plus 1 ns). Ranks whose times differ by less than their noise share a
// mean; a call made once, or taking the same time every time, shares only
// its own. Sharing times within eps/3 alone set the ranks of the 64-rank
// stencil4d archive up to a millisecond apart (MPI_Init's 1.55 s, shared
// within 0.33%): slow found 77 ms of waiting where the trace has 66, 10%
// of it not traced to a delay. A computation moves no clock (a replay
// re-dates the ranks), and is shared within eps/3.
func (m *merger) near(g *timeGroup, mean *[numStats]float64, a *accCall) bool {
	for k := range mean {
		if g.mask&(1<<k) == 0 || g.levels[k] != nil {
			continue
		}
		x, y := mean[k], g.anchor[k]
		d := math.Abs(x - y)
		if d > m.tolerance(k, math.Max(math.Abs(x), math.Abs(y))) {
			return false
		}
		if st := a.stats[k]; isTime(k) && d*float64(st.n) > math.Sqrt(st.m2)+m.tolerance(k, 0) {
			return false
		}
	}
	return true
}

// nearHists reports whether a rank whose histograms are hists may read
// g's instead, each group scaled to the rank's own sum: where, group by
// group, the values of g's ranks and the rank's, each over its scale, lie
// within eps of each other (the highest at most 1+eps times the lowest),
// so that every instance read back from g's shares times the rank's
// scale, which lie among them, is within eps of its own, and the rank's
// sum is kept. Ranks whose computations differ by a factor (imbalance)
// and not in their spread (noise) so read one histogram. It leaves the
// rank's scales in m.scales.
func (m *merger) nearHists(g *timeGroup, hists *[numStats]*Histogram) bool {
	m.scales = m.scales[:0]
	for k, h := range hists {
		if h == nil {
			continue
		}
		for i := range h.Groups {
			a, b := &g.hists[k].Groups[i], &h.Groups[i]
			l := scaleLevel(b.sum/a.sum, m.eps)
			s := fromScale(l, m.eps)
			if max(a.hi, b.hi/s) > min(a.lo, b.lo/s)*(1+m.eps)*(1-1e-6) {
				return false
			}
			m.scales = append(m.scales, l)
		}
	}
	return true
}

// widen extends the ranges of g's histograms' groups to those of hists,
// a rank's that joins g with scales (nearHists), and keeps its scales.
func (g *timeGroup) widen(hists *[numStats]*Histogram, scales []int64, eps float64) {
	for k, h := range hists {
		if h == nil {
			continue
		}
		for i := range h.Groups {
			a, b := &g.hists[k].Groups[i], &h.Groups[i]
			s := fromScale(scales[i], eps)
			a.lo, a.hi = min(a.lo, b.lo/s), max(a.hi, b.hi/s)
		}
		g.scales[k] = append(g.scales[k], scales[:len(h.Groups)]...)
		scales = scales[len(h.Groups):]
	}
}

// finish turns merged items into the model's nodes; parent are the
// ranks of the enclosing loop or cluster, sorted.
func (m *merger) finish(items []*mnode, parent []int32) []*Node {
	out := make([]*Node, 0, len(items))
	for _, n := range items {
		slices.Sort(n.ranks)
		node := &Node{Kind: n.kind, Site: n.site}
		if !slices.Equal(n.ranks, parent) {
			node.Ranks = NewRanklist(n.ranks)
		}
		if n.loop {
			node.Body = m.finish(n.body, n.ranks)
			node.Counts = finishCounts(n)
		} else {
			node.Vars = m.variants(n)
			node.Times = finishTimes(n)
		}
		out = append(out, node)
	}
	return out
}

// groupRanks returns the ranklist of a group of a node's ranks: nil if
// the group is the whole node.
func groupRanks(ranks []int32, node []int32) Ranklist {
	slices.Sort(ranks)
	if len(ranks) == len(node) {
		return nil
	}
	return NewRanklist(ranks)
}

func finishCounts(n *mnode) []Counts {
	groups := make([]*countGroup, 0, len(n.counts))
	for _, g := range n.counts {
		slices.Sort(g.ranks)
		groups = append(groups, g)
	}
	slices.SortFunc(groups, func(a, b *countGroup) int { return cmp.Compare(a.ranks[0], b.ranks[0]) })
	out := make([]Counts, len(groups))
	for i, g := range groups {
		out[i] = Counts{Ranks: groupRanks(g.ranks, n.ranks), Series: g.s}
	}
	if covered(groups, func(g *countGroup) int { return len(g.ranks) }, len(n.ranks)) {
		restLast(out, func(c *Counts) *Ranklist { return &c.Ranks }, nil)
	}
	return out
}

// ownLevels gives t, the timing of one rank, the levels of its instances
// instead of its histogram, where they take fewer bytes: the histogram
// pays where ranks share it.
func (g *timeGroup) ownLevels(t *Timing) {
	for k, h := range t.Hists {
		if h != nil && len(h.levels.AppendBinary(nil)) < len(h.AppendBinary(t.Levels[k].AppendBinary(nil))) {
			l := h.levels
			t.Hists[k], t.Levels[k], g.scales[k] = nil, &l, nil
		}
	}
}

// sortScaled sorts g's ranks, and their scales with them.
func (g *timeGroup) sortScaled() {
	if slices.IsSorted(g.ranks) {
		return
	}
	order := make([]int, len(g.ranks))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(g.ranks[a], g.ranks[b]) })
	ranks := make([]int32, len(order))
	for i, o := range order {
		ranks[i] = g.ranks[o]
	}
	g.ranks = ranks
	for k, l := range g.scales {
		if len(l) == 0 {
			continue
		}
		per := len(l) / len(order)
		out := make([]int64, 0, len(l))
		for _, o := range order {
			out = append(out, l[o*per:(o+1)*per]...)
		}
		g.scales[k] = out
	}
}

func finishTimes(n *mnode) []Timing {
	out := make([]Timing, 0, len(n.times))
	for _, g := range n.times {
		t := Timing{Mask: g.mask, Hists: g.hists, Levels: g.levels, Values: g.values}
		for k := range t.Stats {
			if g.mask&(1<<k) != 0 {
				mean := g.sum[k] / float64(len(g.ranks))
				if g.min[k] == g.max[k] {
					mean = g.min[k] // exactly, where every instance is equal
				}
				t.Stats[k] = Stat{Mean: mean, Min: g.min[k], Max: g.max[k]}
			}
		}
		g.sortScaled()
		if len(g.ranks) == 1 {
			g.ownLevels(&t)
		}
		for _, h := range t.Hists {
			if h != nil {
				h.levels = Series{} // the merge's alone: not kept in the trace
			}
		}
		t.Ranks = groupRanks(g.ranks, n.ranks)
		scaled := false
		for k, l := range g.scales {
			if slices.ContainsFunc(l, func(x int64) bool { return x != 0 }) {
				t.Scales[k], scaled = l, true
			}
		}
		if t.Ranks == nil && scaled {
			t.Ranks = NewRanklist(g.ranks) // the scales' ranks, explicitly
		}
		out = append(out, t)
	}
	slices.SortStableFunc(out, func(a, b Timing) int { return cmp.Compare(len(b.Ranks), len(a.Ranks)) })
	if covered(n.times, func(g *timeGroup) int { return len(g.ranks) }, len(n.ranks)) {
		// A scaled timing keeps its ranklist: its scales follow it.
		restLast(out, func(t *Timing) *Ranklist { return &t.Ranks }, func(t *Timing) bool { return !t.scaled() })
	}
	return out
}

// variants chooses, for each field with several modes, the mode in which
// the ranks' series take the fewest distinct values, and groups the ranks
// whose series are then all equal.
func (m *merger) variants(n *mnode) []Variant {
	tuples := make([]*tuple, 0, len(n.tuples))
	for _, t := range n.tuples {
		tuples = append(tuples, t)
	}
	chosen := make([]bool, len(m.slots))
	for i := 0; i < len(m.slots); {
		j := i
		best, bestN := i, math.MaxInt
		for ; j < len(m.slots) && m.slots[j].f == m.slots[i].f; j++ {
			distinct := map[int32]bool{}
			for _, t := range tuples {
				distinct[t.ids[j]] = true
			}
			if len(distinct) < bestN {
				best, bestN = j, len(distinct)
			}
		}
		chosen[best] = true
		i = j
	}
	type group struct {
		ids   []int32
		ranks []int32
	}
	byKey := map[string]*group{}
	var groups []*group
	for _, t := range tuples {
		m.buf = m.buf[:0]
		for i, id := range t.ids {
			if chosen[i] {
				m.buf = binary.AppendVarint(m.buf, int64(id))
			}
		}
		g, ok := byKey[string(m.buf)]
		if !ok {
			g = &group{ids: t.ids}
			byKey[string(m.buf)] = g
			groups = append(groups, g)
		}
		g.ranks = append(g.ranks, t.ranks...)
	}
	for _, g := range groups {
		slices.Sort(g.ranks)
	}
	slices.SortFunc(groups, func(a, b *group) int { return cmp.Compare(a.ranks[0], b.ranks[0]) })
	out := make([]Variant, len(groups))
	for k, g := range groups {
		v := Variant{Ranks: groupRanks(g.ranks, n.ranks)}
		for i, sl := range m.slots {
			if chosen[i] && g.ids[i] >= 0 {
				v.Set(sl.f, n.vals[i][g.ids[i]])
			}
		}
		out[k] = v
	}
	if covered(groups, func(g *group) int { return len(g.ranks) }, len(n.ranks)) {
		restLast(out, func(v *Variant) *Ranklist { return &v.Ranks }, nil)
	}
	return out
}

// restLast makes the group whose ranklist is the longest to write the
// last, with no ranklist: it then holds the ranks of the node that no
// earlier group holds, since a rank reads the first group that holds it
// (rsd-format.md). A cluster's ranks that differ at random, such as the
// ranks whose first computation is above or below the time error's
// share, write one of their scattered ranklists instead of all. The
// groups must hold each of the node's ranks, and only those; eligible,
// if not nil, says which may lose their ranklist.
func restLast[G any](groups []G, ranks func(*G) *Ranklist, eligible func(*G) bool) {
	best, cost := -1, 0
	for i := range groups {
		l := *ranks(&groups[i])
		if l == nil {
			return // one group of every rank, or already made
		}
		if c := l.numbers(); c > cost && (eligible == nil || eligible(&groups[i])) {
			best, cost = i, c
		}
	}
	if best < 0 || len(groups) < 2 {
		return
	}
	g := groups[best]
	copy(groups[best:], groups[best+1:])
	*ranks(&g) = nil
	groups[len(groups)-1] = g
}

// covered reports whether groups, disjoint, hold n ranks in all (those
// of their node).
func covered[G any](groups []G, size func(G) int, n int) bool {
	sum := 0
	for _, g := range groups {
		sum += size(g)
	}
	return sum == n
}
