package pattern

import (
	"cmp"
	"slices"

	"kairos/pattern/suffix"
	"kairos/trace"
)

// minPeerContext is the fewest calls a context must hold for peerCuts to
// look for loops over partners in it.
const minPeerContext = 48

// minPeerCalls is the fewest calls an iteration of a loop over partners
// must make with its partner where the loop meets fewer than half the
// other ranks: a conversation (a latency test's round trips), not a
// halo exchange's few calls with each of its neighbours in turn (GPAW's
// receive and send to each of 3 in a context of 51 calls).
const minPeerCalls = 5

// loopCuts returns rank data rd's context starts cut at the iterations of
// its loops (iterationCuts, leaving out ban: see refine) and of its loops
// over partners (peerCuts), and the body of its wide loop, if any.
func loopCuts(rd *rankData, keys []symKey, ranks int, ban []int32, sc *suffix.Scratch) (cuts, wide []int32) {
	cuts, wide = iterationCuts(rd, len(keys), ban, false, sc)
	if long := longContexts(cuts, int32(len(rd.ev))); long != nil {
		loose, _ := iterationCuts(rd, len(keys), ban, true, sc)
		cuts = cutsWithin(cuts, loose, long)
	}
	cut := *rd
	cut.segs = cuts
	return peerCuts(&cut, keys, ranks, sc), wide
}

// longContext is the most calls a context may keep once cut at the
// iterations of its loops, past which it is cut again at the iterations of
// loops that leave requests pending (iterationCuts' loose mode): a
// message-driven program's (Ray's) requests stay pending over many
// iterations of its loops, completed when its buffers run short, and its
// contexts, left whole, made pattern instances of 100,000 calls a rank.
const longContext = 1024

// longContexts returns the [start, end) bounds of the contexts of cuts
// (the starts of the contexts of n calls) longer than longContext, nil if
// none.
func longContexts(cuts []int32, n int32) [][2]int32 {
	var long [][2]int32
	for j, a := range cuts {
		b := n
		if j+1 < len(cuts) {
			b = cuts[j+1]
		}
		if b-a > longContext {
			long = append(long, [2]int32{a, b})
		}
	}
	return long
}

// cutsWithin returns cuts with the cuts of more that fall inside the
// contexts long.
func cutsWithin(cuts, more []int32, long [][2]int32) []int32 {
	out := slices.Clone(cuts)
	for _, c := range more {
		j, _ := slices.BinarySearchFunc(long, c, func(l [2]int32, c int32) int { return cmp.Compare(l[1], c+1) })
		if j < len(long) && long[j][0] < c && c < long[j][1] {
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// peerCuts returns rank data rd's context starts with the iterations of
// its loops over partners added: runs of at least minIterations
// iterations that make the same calls but for their partner, each
// iteration with one partner, met by no other, and either minPeerCalls
// calls or more or half the other ranks of a trace of ranks ranks (a
// benchmark's ping-pong with each rank in turn). iterationCuts cannot see
// them, its symbols holding the partners: the whole round of them is its
// loop's iteration, thousands of calls on each rank of HPCC's latency
// test. Only contexts of minPeerContext calls or more are searched.
func peerCuts(rd *rankData, keys []symKey, ranks int, sc *suffix.Scratch) []int32 {
	cuts := slices.Clone(rd.segs)
	for j, a := range rd.segs {
		b := segEnd(rd, j)
		if b-a >= minPeerContext {
			cuts = append(cuts, peerLoops(rd, keys, a, b, ranks, sc)...)
		}
	}
	slices.Sort(cuts)
	return slices.Compact(cuts)
}

// peerLoops returns the starts of the iterations of the loops over
// partners in rd's calls a to b (and each loop's end).
func peerLoops(rd *rankData, keys []symKey, a, b int32, ranks int, sc *suffix.Scratch) []int32 {
	n := int(b - a)
	seq := make([]int32, n+1)
	peer := make([]int32, n) // a call's one partner; -1: none, -2: two
	open := make([]int32, n+1)
	for i := range n {
		open[i] = rd.open[a+int32(i)]
	}
	open[n] = rd.openEnd
	if b < int32(len(rd.ev)) {
		open[n] = rd.open[b]
	}
	ids := map[symKey]int32{}
	for i := range n {
		k := keys[rd.ev[a+int32(i)].sym]
		peer[i] = callPeer(k)
		if peer[i] >= 0 {
			k.partner, k.peer = trace.NoRank, trace.NoRank
		}
		id, ok := ids[k]
		if !ok {
			id = int32(len(ids))
			ids[k] = id
		}
		seq[i] = id
	}
	seq[n] = int32(len(ids)) // a terminator of its own
	rep := sc.Repeats(seq, len(ids)+1, func(c int32) bool { return int(c) == len(ids) })
	runs := rep.Runs(seq, minIterations, loopWork*len(seq))
	taken := make([]bool, n)
	var loops []peerLoop
	for _, r := range runs {
		l := overPeers(r, peer, open)
		if l.iters >= minIterations && (l.period >= minPeerCalls || 2*int(l.iters) >= ranks-1) {
			loops = append(loops, l)
		}
	}
	// The loops covering the most calls first, each on calls no loop
	// took yet.
	slices.SortStableFunc(loops, func(x, y peerLoop) int { return int(y.calls() - x.calls()) })
	var cuts []int32
	for _, l := range loops {
		if slices.Contains(taken[l.start:l.end()], true) {
			continue
		}
		for i := l.start; i < l.end(); i++ {
			taken[i] = true
		}
		for s := l.start; s < l.end(); s += l.period {
			cuts = append(cuts, a+s)
		}
		if e := a + l.end(); e < b {
			cuts = append(cuts, e)
		}
	}
	return cuts
}

// peerLoop is a loop over partners: iters iterations of period calls
// from start.
type peerLoop struct {
	start, period, iters int32
}

func (l peerLoop) end() int32   { return l.start + l.period*l.iters }
func (l peerLoop) calls() int32 { return l.period * l.iters }

// overPeers returns the loop over partners run r holds: its iterations
// start where the calls' partner changes, as many calls apart as the
// first two changes after the run's start (a multiple of its period: the
// partners' loop may hold several of the run's words, five round trips
// with each), one partner each and none met twice, each completing the
// requests it starts (as many pending after it as before). A loop in
// which a partner comes back is none: a time step's exchange with a few
// neighbours in turn, step after step (GPAW's halos), is not a loop over
// partners; nor is a loop of one call (a rank posting a receive from
// each of its neighbours makes one exchange).
func overPeers(r suffix.Run, peer, open []int32) peerLoop {
	var changes [3]int32
	n, last := 0, int32(-1)
	for i := r.Start; i < r.End && n < len(changes); i++ {
		if p := peer[i]; p >= 0 && p != last {
			changes[n], last = i, p
			n++
		}
	}
	if n < 3 {
		return peerLoop{}
	}
	q := changes[2] - changes[1]
	if q < 2 || q%r.Period != 0 {
		return peerLoop{}
	}
	l := peerLoop{start: changes[1], period: q}
	if s := l.start - q; s >= r.Start && onePeer(peer[s:l.start]) >= 0 && open[s] == open[l.start] {
		l.start = s
	}
	seen := map[int32]bool{}
	for s := l.start; s+q <= r.End; s += q {
		p := onePeer(peer[s : s+q])
		if p < 0 || open[s] != open[s+q] {
			break
		}
		if seen[p] {
			return peerLoop{}
		}
		seen[p] = true
		l.iters++
	}
	return l
}

// onePeer returns the one partner of the calls of peers (-1: none, or
// more than one).
func onePeer(peers []int32) int32 {
	p := int32(-1)
	for _, x := range peers {
		switch {
		case x == -2 || x >= 0 && p >= 0 && x != p:
			return -1
		case x >= 0:
			p = x
		}
	}
	return p
}

// callPeer returns the partner of a point-to-point call of symbol k; -1
// for a call of none (a collective), -2 for a call of two (a sendrecv's)
// or of any source.
func callPeer(k symKey) int32 {
	switch {
	case k.kind == trace.SendRecv && k.partner != k.peer:
		return -2
	case k.kind == trace.SendRecv || k.kind == trace.Send || k.kind == trace.Recv:
		if k.partner < 0 {
			return -2
		}
		return k.partner
	}
	return -1
}
