package pattern

import (
	"slices"

	"kairos/pattern/suffix"
	"kairos/trace"
)

// Method chooses how Detect cuts the ranks' calls into contexts, and how
// phases weigh the pattern instances.
type Method int

const (
	// Iterations is Alawneh et al.'s method that follows the program's
	// loops: each of the paper's contexts is cut further at the
	// iterations of its loops (see iterationCuts), and phases weigh each
	// instance by its share of the run's time (SplitWeighted). Without
	// user functions, a time-step loop whose calls complete with MPI_Wait
	// is one context in the paper's method, whatever its length; here
	// every time step is an instance.
	Iterations Method = iota
	// Paper is the method as published: contexts end at user-function
	// changes and at MPI_Waitall only, and phases count instances.
	Paper
)

// String returns "iterations" or "paper".
func (m Method) String() string {
	if m == Paper {
		return "paper"
	}
	return "iterations"
}

const (
	// minIterations is the fewest consecutive iterations that make a loop.
	minIterations = 3
	// loopWork bounds the search for loops to this many steps per call.
	loopWork = 64
)

// loop is a candidate loop body: a word of period symbols of the rank's
// context sequence, with the positions of all its occurrences.
type loop struct {
	period int32
	pos    []int32 // ascending positions in the context sequence
	count  int     // usable iterations in the last evaluation; -1: out
}

// iterationCuts returns rank data rd's context starts with the
// iterations of its loops added, and the body of its wide loop, if any
// (cuts), as its least rotation; ban, if not nil, is such a body: the
// loop it leaves out, whatever its rotation.
//
// A loop is a word that repeats at least minIterations times in a row in
// a context (a maximal repetition, found in O(n log n) by suffix.Runs).
// Its iterations are its non-overlapping occurrences anywhere in the
// rank's contexts, so that a time step interrupted every few steps by
// other calls (a neighbour-list rebuild, a reduction of diagnostics)
// still counts each step. Loops are taken greedily, the one whose
// iterations cover the most calls first (on ties the shorter body, then
// the earlier), each time among the calls no loop has taken yet, as long
// as one still repeats minIterations times in a row there. The calls
// left between two iterations of a loop are a variant of its iterations
// (a step whose inner loop ran once more, a step that also rebuilds the
// neighbour lists): the loops of its body do not cut them.
//
// Where a loop's iterations begin is a matter of rotation that the calls
// alone do not settle (a step's last exchange is also a rebuild step's
// last): each loop starts at the call of its body that follows the
// longest computation, summed over its iterations, as long as that
// rotation covers nearly as many calls.
//
// An iteration must leave as many requests pending as it found (it
// completes what it starts, or a pipeline's previous step), so that a
// loop that posts receives and waits for them all at its end is not cut
// apart.
func iterationCuts(rd *rankData, nsym int, ban []int32, loose bool, sc *suffix.Scratch) (cuts, wide []int32) {
	n := len(rd.ev)
	if n < minIterations {
		return rd.segs, nil
	}
	seq, at := contextSeq(rd, nsym)
	rep := sc.Repeats(seq, nsym+len(rd.segs), func(c int32) bool { return int(c) >= nsym })
	runs := rep.Runs(seq, minIterations, loopWork*len(seq))
	if len(runs) == 0 {
		return rd.segs, nil
	}
	lf := &loopFinder{rd: rd, rep: rep, seq: seq, at: at, taken: make([]int32, len(seq)+1), guard: make([]int32, len(seq)),
		seen: map[[2]int32]*loop{}, inner: map[[2]*loop]bool{}, runs: runs, ban: ban, loose: loose}
	return lf.cuts()
}

// cuts takes the loops greedily and returns the rank's context starts
// with their iterations added, and the body, as its least rotation, of
// the first loop taken whose iterations hold a loop's over half their
// calls, not three quarters (wide: a time step around a solver's
// iterations, or a loop that is not one of the program's own, found on
// some ranks only: GPAW's 640 calls of 12 halo exchanges of 36 and
// others).
func (lf *loopFinder) cuts() (cuts, wide []int32) {
	budget := loopWork * len(lf.seq)
	for _, r := range lf.runs {
		if l, ok := lf.candidate(r.Start, r.Period); ok && !lf.banned(r.Start, r.Period) {
			lf.loops = append(lf.loops, l)
		}
		if budget -= int(r.End - r.Start); budget < 0 {
			break
		}
	}
	rd, at, n := lf.rd, lf.at, len(lf.rd.ev)
	cuts = slices.Clone(rd.segs)
	for budget > 0 {
		var best *loop
		for _, l := range lf.loops {
			if l.count < 0 {
				continue
			}
			budget -= len(l.pos)
			if l.count = lf.iterations(l, nil); l.count < minIterations {
				l.count = -1 // loops only lose iterations as others take calls
				continue
			}
			if best == nil || better(l, best) {
				best = l
			}
		}
		if best == nil {
			break
		}
		var starts []int32
		lf.iterations(best, &starts)
		for {
			in, calls := lf.innerLoop(best, starts[0])
			if in == nil || calls < 3*best.period/4 {
				if in != nil && 2*calls >= best.period && wide == nil {
					wide = rotated(lf.seq[best.pos[0] : best.pos[0]+best.period])
				}
				break
			}
			if in.count = lf.iterations(in, nil); in.count < minIterations {
				break
			}
			best.count = -1
			best, starts = in, starts[:0]
			lf.iterations(best, &starts)
		}
		best.count = -1
		if r := lf.rotate(best, starts); r != nil {
			budget -= len(r.pos)
			starts = starts[:0]
			lf.iterations(r, &starts)
			best, r.count = r, -1
		}
		for _, s := range starts {
			cuts = append(cuts, at[s])
			if e := at[s+best.period-1] + 1; int(e) < n {
				cuts = append(cuts, e)
			}
		}
		lf.take(best, starts)
	}
	slices.Sort(cuts)
	return slices.Compact(cuts), wide
}

// banned reports whether the loop of the period symbols at start is the
// one the search leaves out, in any rotation.
func (lf *loopFinder) banned(start, period int32) bool {
	return int(period) == len(lf.ban) && slices.Equal(rotated(lf.seq[start:start+period]), lf.ban)
}

// rotated returns word w's least rotation (a copy).
func rotated(w []int32) []int32 {
	k := leastRotation(w)
	return append(slices.Clone(w[k:]), w[:k]...)
}

// loopFinder holds one rank's search for loops.
type loopFinder struct {
	rd      *rankData
	rep     *suffix.Repeats
	seq, at []int32
	taken   []int32 // prefix counts of the calls iterations have taken
	// guard[i] is 1 + the index in chosen of the loop between two of
	// whose iterations position i lies, 0 if none.
	guard  []int32
	loops  []*loop
	chosen []*loop
	seen   map[[2]int32]*loop // candidates by (first occurrence, period)
	inner  map[[2]*loop]bool  // whether a loop's body occurs in another's
	runs   []suffix.Run       // by period, then start
	ban    []int32            // the least rotation of a loop's body left out (nil: none)
	// loose lets iterations leave requests pending (see longContext).
	loose bool
}

// innerLoop returns the loop within an iteration of loop l at s (of at
// most half its period) whose runs cover the most of it, and the calls
// of the iteration these runs and those of its variants (loops of at
// least half its period whose bodies make the same calls) cover; nil if
// none. Where they cover three quarters of it or more, l iterates over
// few variants of a step (nine steps and a rebuild step, every ten; a
// hundred steps between two outputs of diagnostics, with a rebuild every
// twenty; a rebuild every twelve steps, the four steps after it not
// checking whether to rebuild, the eight others checking with an
// allreduce), and the steps are the program's iterations. A loop's runs
// are counted together, whatever rotation each begins at.
func (lf *loopFinder) innerLoop(l *loop, s int32) (*loop, int32) {
	type cover struct {
		calls int32
		run   *suffix.Run // the run that covers the most of them
		kinds []int32     // the distinct calls of its body, sorted
	}
	var covers map[[2]int32]*cover
	var best *cover
	for i := range lf.runs {
		r := &lf.runs[i]
		if 2*r.Period > l.period {
			break // runs are by period: not a loop within an iteration of l's
		}
		o := overlap(r, s, l.period)
		if o == 0 {
			continue
		}
		if covers == nil {
			covers = map[[2]int32]*cover{}
		}
		body := lf.seq[r.Start : r.Start+r.Period]
		key := [2]int32{lf.rep.Word(int(r.Start+leastRotation(body)), int(r.Period)), r.Period}
		c := covers[key]
		if c == nil {
			c = &cover{run: r, kinds: slices.Compact(slices.Sorted(slices.Values(body)))}
			covers[key] = c
		}
		if c.calls += o; o > overlap(c.run, s, l.period) {
			c.run = r
		}
		if best == nil || c.calls > best.calls {
			best = c
		}
	}
	if best == nil {
		return nil, 0
	}
	var calls int32
	for _, c := range covers {
		if 2*c.run.Period >= best.run.Period && slices.Equal(c.kinds, best.kinds) {
			calls += c.calls // a variant of best's body: the same calls, some more often
		}
	}
	in, _ := lf.candidate(best.run.Start, best.run.Period)
	return in, calls
}

// leastRotation returns the offset at which word w's lexicographically
// least rotation begins (Booth's algorithm, linear in len(w)): the same
// for every rotation of the same word.
func leastRotation(w []int32) int32 {
	n := len(w)
	f := make([]int, 2*n)
	for i := range f {
		f[i] = -1
	}
	at := func(i int) int32 { return w[i%n] }
	k := 0
	for j := 1; j < 2*n; j++ {
		i := f[j-k-1]
		for i != -1 && at(j) != at(k+i+1) {
			if at(j) < at(k+i+1) {
				k = j - i - 1
			}
			i = f[i]
		}
		if i == -1 && at(j) != at(k) {
			if at(j) < at(k) {
				k = j
			}
			f[j-k] = -1
		} else {
			f[j-k] = i + 1
		}
	}
	return int32(k % n)
}

// take records loop l's iterations, which start at starts.
func (lf *loopFinder) take(l *loop, starts []int32) {
	lf.chosen = append(lf.chosen, l)
	id := int32(len(lf.chosen))
	mark := make([]bool, len(lf.seq))
	for i := range lf.seq {
		mark[i] = lf.taken[i+1] > lf.taken[i]
	}
	for j, s := range starts {
		for i := s; i < s+l.period; i++ {
			mark[i] = true
		}
		if j+1 < len(starts) {
			for i := s + l.period; i < starts[j+1]; i++ {
				if lf.guard[i] == 0 {
					lf.guard[i] = id
				}
			}
		}
	}
	for i, m := range mark {
		lf.taken[i+1] = lf.taken[i]
		if m {
			lf.taken[i+1]++
		}
	}
}

// guarded reports whether the occurrence of loop l at s lies between two
// iterations of a chosen loop whose body holds l's (rotations included).
func (lf *loopFinder) guarded(l *loop, s int32) bool {
	g := lf.guard[s]
	if g == 0 {
		return false
	}
	outer := lf.chosen[g-1]
	if 2*l.period > outer.period {
		return false // a variant of its iterations, not a loop within one
	}
	key := [2]*loop{outer, l}
	in, ok := lf.inner[key]
	if !ok {
		body := lf.seq[outer.pos[0] : outer.pos[0]+outer.period]
		word := lf.seq[l.pos[0] : l.pos[0]+l.period]
		twice := append(slices.Clone(body), body...)
		for i := 0; i+len(word) <= len(twice) && !in; i++ {
			in = slices.Equal(twice[i:i+len(word)], word)
		}
		lf.inner[key] = in
	}
	return in
}

// candidate returns the loop of the period symbols at position start and
// whether it is new.
func (lf *loopFinder) candidate(start, period int32) (*loop, bool) {
	key := [2]int32{lf.rep.Word(int(start), int(period)), period}
	if l := lf.seen[key]; l != nil {
		return l, false
	}
	occ := lf.rep.Occurrences(int(start), int(period))
	l := &loop{period: period, pos: slices.Sorted(slices.Values(occ))}
	lf.seen[key] = l
	return l, true
}

// better reports whether loop a covers more calls than b, or as many
// with a shorter body, or the same length starting earlier.
func better(a, b *loop) bool {
	ca, cb := a.count*int(a.period), b.count*int(b.period)
	switch {
	case ca != cb:
		return ca > cb
	case a.period != b.period:
		return a.period < b.period
	}
	return a.pos[0] < b.pos[0]
}

// iterations counts loop l's usable iterations: its occurrences, taken
// greedily from the left, that overlap neither each other nor a call
// already taken, leave the rank's pending requests as they found them,
// and come minIterations or more in a row (a few occurrences of a short
// body among other calls are a coincidence, not iterations). With starts
// non-nil, it appends their positions.
func (lf *loopFinder) iterations(l *loop, starts *[]int32) int {
	rd, at, taken := lf.rd, lf.at, lf.taken
	count := 0
	var streak []int32
	flush := func() {
		if len(streak) >= minIterations {
			count += len(streak)
			if starts != nil {
				*starts = append(*starts, streak...)
			}
		}
		streak = streak[:0]
	}
	end := int32(-1)
	for _, s := range l.pos {
		e := s + l.period
		if s < end || taken[e]-taken[s] > 0 || !lf.loose && rd.open[at[s]] != rd.openAt(at[e-1]+1) || lf.guarded(l, s) {
			continue
		}
		if s != end {
			flush()
		}
		streak = append(streak, s)
		end = e
	}
	flush()
	return count
}

// rotate returns the rotation of loop l (whose iterations start at
// starts) that begins after the longest computation summed over the
// iterations, if it is not l's own and covers at least nine tenths of
// the calls l covers; else nil.
func (lf *loopFinder) rotate(l *loop, starts []int32) *loop {
	p := l.period
	if p == 1 {
		return nil
	}
	score := make([]float64, p)
	var from int32 = -1 // an iteration followed by another: its rotations are words of the sequence
	for i, s := range starts {
		for k := range p {
			score[k] += lf.rd.gap[lf.at[s+k]]
		}
		if from < 0 && i+1 < len(starts) && starts[i+1] == s+p {
			from = s
		}
	}
	k := int32(0)
	for j := range p {
		if score[j] > score[k] {
			k = j
		}
	}
	if k == 0 || from < 0 {
		return nil
	}
	r, _ := lf.candidate(from+k, p)
	if r.count = lf.iterations(r, nil); 10*r.count < 9*len(starts) {
		return nil
	}
	return r
}

// overlap returns how many of the period positions from s run r covers.
func overlap(r *suffix.Run, s, period int32) int32 {
	return max(0, min(r.End, s+period)-max(r.Start, s))
}

// openAt returns the requests pending before call i (after the last call
// for i = len(rd.ev)).
func (rd *rankData) openAt(i int32) int32 {
	if int(i) == len(rd.ev) {
		return rd.openEnd
	}
	return rd.open[i]
}

// contextSeq returns rank data rd's calls as symbols, each context
// followed by a separator of its own (nsym + its number), and the call
// (index in rd.ev) at each position, -1 at separators. The symbols of a
// run of consecutive blocking receives from distinct partners are in
// ascending order, whatever the order of the calls: a loop that receives
// from any source (a master collecting its workers' results) gets its
// messages in a different order at each iteration, and is still one loop
// of one body. A receive that repeats a symbol of the run starts the next
// run, so that receives one iteration after the other keep their
// iterations. Non-blocking receives keep their order, the program's (HPCC's
// RandomAccess posts and polls them: sorted, its irregular kernel was cut
// into loops).
func contextSeq(rd *rankData, nsym int) (seq, at []int32) {
	seq = make([]int32, 0, len(rd.ev)+len(rd.segs))
	at = make([]int32, 0, cap(seq))
	var run recvRun
	for j, a := range rd.segs {
		b := segEnd(rd, j)
		run.reset(seq)
		for i := a; i < b; i++ {
			e := &rd.ev[i]
			if e.kind != trace.Recv || run.has(seq, e.sym) {
				run.reset(seq)
			}
			seq = append(seq, e.sym)
			at = append(at, i)
			if e.kind != trace.Recv {
				run.start = len(seq)
			}
		}
		run.reset(seq)
		seq = append(seq, int32(nsym+j))
		at = append(at, -1)
	}
	return seq, at
}

// recvRun is the run of consecutive blocking receives from distinct
// partners that ends a sequence being built: from start on.
type recvRun struct {
	start int
	set   map[int32]bool // its symbols, once it is long
}

// has reports whether the run holds symbol sym.
func (r *recvRun) has(seq []int32, sym int32) bool {
	const short = 16 // a scan beyond, a set
	in := seq[r.start:]
	if len(in) <= short {
		return slices.Contains(in, sym)
	}
	if r.set == nil {
		r.set = make(map[int32]bool, 2*len(in))
		for _, s := range in {
			r.set[s] = true
		}
	}
	if r.set[sym] {
		return true
	}
	r.set[sym] = true // added next
	return false
}

// reset sorts the run's symbols and starts the next run at seq's end.
func (r *recvRun) reset(seq []int32) {
	slices.Sort(seq[r.start:])
	r.start, r.set = len(seq), nil
}
