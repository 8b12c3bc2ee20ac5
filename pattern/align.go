package pattern

import (
	"cmp"
	"container/heap"
	"math"
	"slices"
)

// alignSample bounds the iterations of a loop whose partners align reads.
const alignSample = 64

// align turns the iterations of each rank's loops to match its partners'
// iterations, so that an iteration's messages stay within the partners'
// same iterations.
//
// Where an iteration begins is chosen rank by rank (iterationCuts), from
// the rank's calls and computation alone. Two ranks that exchange in a
// loop can then choose rotations that do not match: a ping-pong cut as
// S1·R1 on rank 0 and as R0·S0 on rank 1 links each rank-0 iteration to
// two rank-1 iterations, and every iteration of the run becomes one
// communication-pattern instance. For each position of a loop's body,
// align reads which iteration of each partner holds the call's match,
// relative to the loop's own iteration, and turns the loop so that these
// offsets agree across the body. The iterations of a loop are a run of
// minIterations or more consecutive tiles of the same calls.
//
// Ranks are settled one at a time, each against its settled partners
// first and the others as they are: first a rank whose loops the program
// delimits, all of them (it has no choice), else rank 0, then always the
// rank whose turns its settled partners decide best (the fewest rotations
// tied, as a constraint solver takes the variable with the fewest values
// left). In a ring, the ranks taken in order could each match the one
// before and leave the last between two neighbours that disagree; taken
// this way, a rank whose partners leave it a choice waits until another
// settles it.
//
// A settled rank's iterations are numbered for all (label): a rank
// settled against others numbers each loop's iterations as most of its
// matches with them do. The settled partners then agree with one
// another or not: a loop whose matches fall each in one iteration of each
// settled partner, but in iterations numbered apart, still links one
// iteration of theirs to the next through it (the Parallel Research
// Kernels' transpose on 4 ranks: each rank exchanges with a different
// partner in each of three phases, nothing pending between them, so that
// every rotation is as good against each partner alone), and is turned
// to the rotation whose matches fall in the fewest numbers. A rank settled
// against no other begins its iterations where the fewest requests are
// pending: cut inside a phase (between its receive and its send, around
// a computation), it left its partners no rotation to match.
func align(ranks []rankData, tiles [][]tile, l *links, keys []symKey) {
	a := newAligner(ranks, tiles, l, keys)
	a.settle()
}

// aligner holds the matches of every call, both ways, and the tile of
// every call.
type aligner struct {
	ranks  []rankData
	tiles  [][]tile
	l      *links
	keys   []symKey
	recvOf [][]int32  // recvOf[r][i]: the index on the receiving rank of send r:i's receive, -1 if none
	tileOf [][]int32  // tileOf[r][i]: the index in tiles[r] of call r:i
	first  [][2]int32 // per collective, in order of first sight: its first caller, rank and index
	collOf [][]int32  // collOf[r][i]: the index in first of collective call r:i, -1 for others
	// neighbours[r] are the ranks rank r's calls are matched with, and
	// the first callers of its collectives, ascending.
	neighbours [][]int32
	cache      []*[]loopOffsets // each rank's loops, nil until read or after a neighbour turned
	settled    []bool
	// shift[r][t] numbers settled rank r's tile t for all: t + shift[r][t]
	// (label).
	shift [][]int32
}

func newAligner(ranks []rankData, tiles [][]tile, l *links, keys []symKey) *aligner {
	a := &aligner{ranks: ranks, tiles: tiles, l: l, keys: keys,
		recvOf: receives(ranks, l, keys), tileOf: make([][]int32, len(ranks)), collOf: make([][]int32, len(ranks))}
	for r := range ranks {
		a.collOf[r] = make([]int32, len(ranks[r].ev))
		for i := range a.collOf[r] {
			a.collOf[r][i] = -1
		}
	}
	collAt := newCollIndex(-1)
	for r := range ranks {
		for i := range ranks[r].ev {
			sk := &keys[ranks[r].ev[i].sym]
			if k := l.coll[r][i]; k >= 0 {
				c := collAt.ref(collKey{sk.comm, k})
				if *c < 0 {
					*c = int32(len(a.first))
					a.first = append(a.first, [2]int32{int32(r), int32(i)})
				}
				a.collOf[r][i] = *c
			}
		}
		a.index(int32(r))
	}
	a.neighbours, a.cache = make([][]int32, len(ranks)), make([]*[]loopOffsets, len(ranks))
	a.settled, a.shift = make([]bool, len(ranks)), make([][]int32, len(ranks))
	// Each rank's partners once (mark[q] is r+1 once q is r's), then
	// each added to its partners': a list a call grew to the rank's calls.
	mark := make([]int32, len(ranks))
	for r := range ranks {
		for i := range ranks[r].ev {
			a.partners(int32(r), int32(i), func(q, _ int32) {
				if q != int32(r) && mark[q] != int32(r)+1 {
					mark[q] = int32(r) + 1
					a.neighbours[r] = append(a.neighbours[r], q)
				}
			})
		}
	}
	own := make([]int, len(ranks))
	for r, nb := range a.neighbours {
		own[r] = len(nb)
	}
	for r := range ranks {
		for j := range own[r] {
			q := a.neighbours[r][j]
			a.neighbours[q] = append(a.neighbours[q], int32(r))
		}
	}
	for r, nb := range a.neighbours {
		slices.Sort(nb)
		a.neighbours[r] = slices.Clip(slices.Compact(nb))
	}
	return a
}

// index records the tile of each of rank r's calls.
func (a *aligner) index(r int32) {
	t := a.tileOf[r]
	if t == nil {
		t = make([]int32, len(a.ranks[r].ev))
		a.tileOf[r] = t
	}
	for k, tl := range a.tiles[r] {
		for i := tl.start; i < tl.end; i++ {
			t[i] = int32(k)
		}
	}
}

// partners calls f with the rank and tile of each call matched with call
// r:i: the send it receives, the receive its message reaches, the first
// caller of its collective.
func (a *aligner) partners(r, i int32, f func(q, tile int32)) {
	sk := &a.keys[a.ranks[r].ev[i].sym]
	if s := a.l.sendOf[r][i]; s >= 0 {
		q := sk.recvSource()
		f(q, a.tileOf[q][s])
	}
	if j := a.recvOf[r][i]; j >= 0 {
		f(sk.partner, a.tileOf[sk.partner][j])
	}
	if k := a.collOf[r][i]; k >= 0 {
		if c := a.first[k]; c[0] != r {
			f(c[0], a.tileOf[c[0]][c[1]])
		}
	}
}

// run returns the number of consecutive tiles of rank r from tile k that
// hold the same calls.
func (a *aligner) run(r int32, k int) int {
	ts, ev := a.tiles[r], a.ranks[r].ev
	t0 := ts[k]
	p := t0.end - t0.start
	m := 1
	for k+m < len(ts) {
		t := ts[k+m]
		if t.start != ts[k+m-1].end || t.end-t.start != p {
			break
		}
		same := true
		for i := range p {
			if ev[t.start+i].sym != ev[t0.start+i].sym {
				same = false
				break
			}
		}
		if !same {
			break
		}
		m++
	}
	return m
}

// offset is where a call's match lies: on rank q, d iterations (tiles)
// after the call's own; on the settled ranks' labelled iterations (q =
// settledRanks), in the iteration labelled d more than the call's own
// iteration's index; on settled rank p's iterations not labelled, q =
// -2-p.
type offset struct{ q, d int32 }

const (
	// settledRanks is the rank of the offsets to settled ranks' labelled
	// iterations, counted together (label).
	settledRanks = -1
	// unlabelled is the shift of a settled rank's tile no label numbers.
	unlabelled = math.MinInt32
)

// settle turns every rank's loops, then always those of the rank with
// the fewest tied rotations against its settled partners; where no rank
// waits, it starts anew at a rank whose loops the program delimits, else
// at the lowest rank not settled.
func (a *aligner) settle() {
	n := len(a.ranks)
	settled := a.settled
	stamp := make([]int, n) // the version of each rank's queued plan
	var fixed []int32       // the ranks whose loops the program delimits, all of them
	for r := range int32(n) {
		ls := a.loops(r)
		if len(ls) > 0 && !slices.ContainsFunc(ls, func(l loopOffsets) bool { return !l.ended }) {
			fixed = append(fixed, r)
		}
	}
	q := &planQueue{}
	next := 0 // the lowest rank not yet settled: a root where the queue is empty
	for {
		var r int32 = -1
		for q.Len() > 0 {
			e := heap.Pop(q).(planEntry)
			if !settled[e.r] && e.stamp == stamp[e.r] {
				r = e.r
				break
			}
		}
		if r < 0 {
			for len(fixed) > 0 && settled[fixed[0]] {
				fixed = fixed[1:]
			}
			for next < n && settled[next] {
				next++
			}
			switch {
			case len(fixed) > 0:
				r = fixed[0]
			case next == n:
				return
			default:
				r = int32(next)
			}
		}
		pl := a.plan(r)
		if a.apply(r, pl) {
			a.index(r)
			a.cache[r] = nil
			for _, p := range a.neighbours[r] {
				a.cache[p] = nil
			}
		}
		a.label(r)
		settled[r] = true
		for _, p := range a.neighbours[r] {
			if !settled[p] {
				stamp[p]++
				heap.Push(q, planEntry{r: p, stamp: stamp[p], ties: a.plan(p).ties})
			}
		}
	}
}

// planEntry is a rank waiting to be settled, and how many rotations its
// settled partners leave tied (its plan's ties when queued).
type planEntry struct {
	r     int32
	stamp int
	ties  int
}

// planQueue is a min-heap of plan entries by ties, then rank.
type planQueue []planEntry

func (h planQueue) Len() int { return len(h) }
func (h planQueue) Less(i, j int) bool {
	if h[i].ties != h[j].ties {
		return h[i].ties < h[j].ties
	}
	return h[i].r < h[j].r
}
func (h planQueue) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *planQueue) Push(x any)   { *h = append(*h, x.(planEntry)) }
func (h *planQueue) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

// plan is how a rank's loops turn: each run of iterations (tile k, m
// tiles) and its rotation, and the rotations left tied, weighed by their
// runs' iterations.
type plan struct {
	runs []loopRun
	ties int
}

type loopRun struct {
	k, m int
	turn int32
}

// plan returns rank r's runs and their best rotations against its
// partners, the settled ones first.
func (a *aligner) plan(r int32) plan {
	var pl plan
	rd := &a.ranks[r]
	root := a.root(r)
	for _, l := range a.loops(r) {
		if l.ended {
			continue
		}
		s := a.tiles[r][l.k].start
		// A turn is a rotation of the loop's body: its iterations must
		// leave as many requests pending as they find.
		p := a.tiles[r][l.k].end - s
		pending := func(j int32) int32 { return rd.openAt(s + j) }
		j, ties := bestTurn(a.labelled(l.off), settledRank, func(j int32) bool { return pending(j) == rd.openAt(s+j+p) }, pending, root)
		pl.runs = append(pl.runs, loopRun{l.k, l.m, j})
		pl.ties += (ties - 1) * l.m
	}
	return pl
}

// settledRank reports whether offsets to rank q are to a settled rank,
// counted by rank (the labels, settledRanks, are counted apart).
func settledRank(q int32) bool { return q < settledRanks }

// root reports whether rank r has no settled partner.
func (a *aligner) root(r int32) bool {
	return !slices.ContainsFunc(a.neighbours[r], func(q int32) bool { return a.settled[q] })
}

// label numbers the tiles of rank r, about to be settled, for all: a
// root's as it numbers them; another's loops as their matches with
// labelled iterations number them where they agree (loopLabel), and the
// tiles after a loop as its last iteration. A loop none of whose matches
// are labelled is not:
// a label it took from elsewhere would hold its partners to an
// alignment nothing decided (a wavefront's ranks linked to rank 0 only
// by a collective).
func (a *aligner) label(r int32) {
	shift := make([]int32, len(a.tiles[r]))
	if a.root(r) {
		a.shift[r] = shift
		return
	}
	for t := range shift {
		shift[t] = unlabelled
	}
	loops := a.loops(r)
	for i, l := range loops {
		d, ok := loopLabel(a.labelled(l.off))
		if !ok {
			continue
		}
		end := len(shift)
		if i+1 < len(loops) {
			end = loops[i+1].k
		}
		for t := l.k; t < end; t++ {
			shift[t] = d
		}
	}
	a.shift[r] = shift
}

// loopLabel returns the number a loop's labelled offsets (settledRanks)
// give its iterations, if they all give the same: labels that disagree
// (a pipeline's ranks numbered through different partners: NWChem's
// broadcasts of its integrals, linked into one instance when the
// majority's number was taken) number nothing.
func loopLabel(off [][]offset) (int32, bool) {
	var d int32
	n := 0
	for _, os := range off {
		for _, o := range os {
			switch {
			case o.q != settledRanks:
			case n == 0:
				d, n = o.d, 1
			case o.d != d:
				return 0, false
			}
		}
	}
	return d, n > 0
}

// loopOffsets is a run of m iterations from tile k and, for each position
// of its body, the offsets that at least half of the position's calls
// have to their matches.
type loopOffsets struct {
	k, m  int
	ended bool // the program delimits its iterations: it does not turn
	off   [][]rawOffset
}

// rawOffset is an offset to rank o.q's tiles, and the tile of the
// partner's where it was last seen (in the partner's loop, where its
// first iterations' may fall before it): its label, once the partner is
// settled (labelled).
type rawOffset struct {
	o offset
	t int32
}

// labelled returns the offsets of raw as they stand now: to a settled
// rank, to its labelled iterations counted together (settledRanks) or,
// where not labelled, to -2-q.
func (a *aligner) labelled(raw [][]rawOffset) [][]offset {
	off := make([][]offset, len(raw))
	for i, os := range raw {
		off[i] = make([]offset, len(os))
		for j, ro := range os {
			o, q := ro.o, ro.o.q
			if a.settled[q] {
				o.q = -2 - q
				if sh := a.shift[q][ro.t]; sh != unlabelled {
					off[i] = append(off[i], offset{settledRanks, o.d + sh})
				}
			}
			off[i][j] = o
		}
	}
	return off
}

// loops returns rank r's runs of iterations and their offsets, as long
// as neither the rank's tiles nor its partners' change.
func (a *aligner) loops(r int32) []loopOffsets {
	if a.cache[r] != nil {
		return *a.cache[r]
	}
	var ls []loopOffsets
	ts := a.tiles[r]
	for k := 0; k < len(ts); {
		m := a.run(r, k)
		if m >= minIterations && ts[k].end-ts[k].start >= 2 {
			ls = append(ls, loopOffsets{k, m, a.ended(r, ts[k:k+m]), a.offsets(r, ts[k:k+m])})
		}
		k += m
	}
	a.cache[r] = &ls
	return ls
}

// ended reports whether the program ends a context between two of the
// iterations it (each step ends with an MPI_Waitall, say): its own
// bounds, which no turn moves.
func (a *aligner) ended(r int32, it []tile) bool {
	for _, t := range it[1:] {
		if a.end(r, t.start) {
			return true
		}
	}
	return false
}

// end reports whether the program ends a context before rank r's call i.
func (a *aligner) end(r, i int32) bool {
	_, found := slices.BinarySearch(a.ranks[r].ends, i)
	return found
}

// offsets returns, for each position of the body of the loop whose
// iterations are tiles it, the offsets of the partners' tiles that at
// least half of its calls (of the first alignSample iterations) have.
func (a *aligner) offsets(r int32, it []tile) [][]rawOffset {
	p := it[0].end - it[0].start
	off := make([][]rawOffset, p)
	type counted struct {
		o offset
		t int32 // the partner's tile where last seen
		n int
	}
	var count []counted
	sample := min(len(it), alignSample)
	for i := range p {
		count = count[:0]
		for k := range sample {
			own := a.tileOf[r][it[k].start]
			a.partners(r, it[k].start+i, func(q, t int32) {
				o := offset{q, t - own}
				for c := range count {
					if count[c].o == o {
						count[c].n++
						count[c].t = t
						return
					}
				}
				count = append(count, counted{o, t, 1})
			})
		}
		for _, c := range count {
			if c.n*2 >= sample {
				off[i] = append(off[i], rawOffset{c.o, c.t})
			}
		}
	}
	return off
}

// apply turns rank r's runs as planned; it reports whether any turned.
// Turning a loop by j moves each of its iterations' bounds j calls on,
// the bounds it shares with the tiles around it included: the first j
// calls join the tile before (a variant of the step, or the last piece
// of a loop turned alike), and the last iteration takes the first j
// calls of the tile after if that tile is not a loop's and has as many
// or more; else they are tiles of their own. Where the tile before is
// not a loop's and ends with the turned body's first p-j calls, the
// first iteration takes these instead: a step variant before the run
// (the step that also reduces diagnostics) keeps its own calls, not the
// next step's first j, which linked two steps of the partners' into one
// instance (GROMACS' energy allreduce every few steps). Neither crosses
// a bound the program set (ends), nor leaves a different number of
// requests pending.
func (a *aligner) apply(r int32, pl plan) bool {
	if !slices.ContainsFunc(pl.runs, func(l loopRun) bool { return l.turn > 0 }) {
		return false
	}
	ts := a.tiles[r]
	runAt := make(map[int]loopRun, len(pl.runs))
	for _, l := range pl.runs {
		runAt[l.k] = l
	}
	out := make([]tile, 0, len(ts)+len(pl.runs))
	inRun := false // whether out's last tile is an iteration of a run
	for k := 0; k < len(ts); {
		l, ok := runAt[k]
		if ts[k].start == ts[k].end {
			k++ // taken whole by the iteration before
			continue
		}
		if !ok || l.turn == 0 {
			n := 1
			if ok {
				n = l.m
			}
			out = append(out, ts[k:k+n]...)
			k += n
			inRun = ok
			continue
		}
		it := ts[k : k+l.m]
		k += l.m
		_, loop := runAt[k]
		out = a.turn(r, out, it, l.turn, !inRun, !loop && k < len(ts), ts[k:])
		inRun = false // the run's last piece is no loop's
	}
	a.tiles[r] = slices.Clip(out)
	return true
}

// turn appends the iterations of rank r's run it, turned by j, to out
// (see apply); before and after say whether out's last tile and the
// next (rest[0]) may give or take calls, being no loop's.
func (a *aligner) turn(r int32, out, it []tile, j int32, before, after bool, rest []tile) []tile {
	rd := &a.ranks[r]
	p, start, end := it[0].end-it[0].start, it[0].start, it[len(it)-1].end
	first := start + j
	switch n := len(out); {
	case n > 0 && before && a.takesBack(r, out[n-1], start, p-j, j):
		first = start + j - p
		if out[n-1].end -= p - j; out[n-1].start == out[n-1].end {
			out = out[:n-1]
		}
	case n > 0 && out[n-1].end == start && !a.end(r, start):
		out[n-1].end += j
	default:
		out = append(out, tile{start: start, end: start + j, pt: -1})
	}
	for s := first; s+p <= end; s += p {
		out = append(out, tile{start: s, end: s + p, pt: -2})
	}
	last := tile{start: end - p + j, end: end, pt: -1}
	if after && rest[0].start == end && rest[0].end-rest[0].start >= j && !a.end(r, end) && rd.openAt(end+j) == rd.openAt(end) {
		last.end += j
		rest[0].start += j
	}
	return append(out, last)
}

// takesBack reports whether the first iteration of a run of rank r's
// from start, turned by j, can begin back calls earlier: tile prev, just
// before it, ends with the turned body's first back calls, no bound of
// the program's lies between, and as many requests are pending there.
func (a *aligner) takesBack(r int32, prev tile, start, back, j int32) bool {
	rd := &a.ranks[r]
	if prev.end != start || prev.end-prev.start < back || a.end(r, start) || rd.openAt(start-back) != rd.openAt(start+j) {
		return false
	}
	for i := range back {
		if rd.ev[start-back+i].sym != rd.ev[start+j+i].sym {
			return false
		}
	}
	return true
}

// bestTurn returns the rotation j, from 0 to len(off)-1, that leaves the
// fewest extra partner iterations (between rotations as good, the one
// whose iterations begin with the fewest requests pending, where pending
// is not nil), and how many rotations leave as few:
// for each partner rank, the distinct iterations its matches fall in,
// less one. Turning by j moves the positions before j into the previous
// iteration, which puts their matches one iteration further. Settled
// partners (fixed; the settled ranks' offsets are counted together, see
// label) count first, the others only between rotations that
// settled ones find as good. Rotations that ok refuses are skipped; 0 is
// kept unless another does strictly better. For a root (a rank settled
// against no other), fewer requests pending comes before the partners
// not settled. A loop that posts its
// receive before it computes and sends (the Parallel Research Kernels'
// transpose), cut after its computation on every rank, has its receive
// pending across each cut: each iteration's send meets the partner's
// next iteration's receive, and the whole loop is one instance. Turned
// to begin at the receive on the first rank settled, as good as it was
// against its partners not settled, its partners then turn alike.
func bestTurn(off [][]offset, fixed func(q int32) bool, ok func(j int32) bool, pending func(j int32) int32, root bool) (int32, int) {
	type counted struct {
		o offset
		n int
	}
	var count []counted      // few, scanned: a partner's matches span an iteration or two
	var index map[offset]int // count's, once it outgrows a scan (a loop with hundreds of partners)
	var distinct [3]int      // settled partners, the settled ranks' labels, others
	add := func(o offset, n int) {
		at, ok := -1, false
		if index != nil {
			at, ok = index[o]
		} else {
			at = slices.IndexFunc(count, func(c counted) bool { return c.o == o })
			ok = at >= 0
		}
		if !ok {
			at = len(count)
			count = append(count, counted{o: o})
			if index != nil {
				index[o] = at
			} else if len(count) > 64 {
				index = make(map[offset]int, 2*len(count))
				for i, c := range count {
					index[c.o] = i
				}
			}
		}
		c := count[at].n
		count[at].n = c + n
		side := 2
		switch {
		case o.q == settledRanks:
			side = 1
		case fixed(o.q):
			side = 0
		}
		switch {
		case c == 0 && n > 0:
			distinct[side]++
		case c+n == 0:
			distinct[side]--
		}
	}
	for _, os := range off {
		for _, o := range os {
			add(o, 1)
		}
	}
	best, least, ties := int32(0), distinct, 1
	for j := int32(1); j < int32(len(off)); j++ {
		for _, o := range off[j-1] {
			add(o, -1)
			add(offset{o.q, o.d + 1}, 1)
		}
		if !ok(j) {
			continue
		}
		if root && distinct[0] == least[0] && pending(j) != pending(best) {
			if pending(j) < pending(best) {
				best, least, ties = j, distinct, 1
			}
			continue
		}
		switch rest := cmp.Or(cmp.Compare(distinct[2], least[2]), cmp.Compare(distinct[1], least[1])); {
		case distinct[0] < least[0] || distinct[0] == least[0] && rest < 0:
			best, least, ties = j, distinct, 1
		case distinct[0] == least[0]:
			ties++
			if rest == 0 && pending != nil && pending(j) < pending(best) {
				best = j
			}
		}
	}
	return best, ties
}
