package pattern

import "slices"

// alignSample bounds the iterations of a loop whose partners align reads.
const alignSample = 64

// align rotates the iterations of each rank's loops to match its
// partners' iterations, ranks in order, so that an iteration's messages
// stay within the partners' same iterations.
//
// Where an iteration begins is chosen rank by rank (iterationCuts), from
// the rank's calls and computation alone. Two ranks that exchange in a
// loop can then choose rotations that do not match: a ping-pong cut as
// S1·R1 on rank 0 and as R0·S0 on rank 1 links each rank-0 iteration to
// two rank-1 iterations, and every iteration of the run becomes one
// communication-pattern instance. align reads, for each position of a
// loop's body, which iteration of each partner holds the call's match,
// relative to the loop's own iteration, and turns the loop so that these
// offsets agree across the body; a loop already consistent is left as it
// is. The iterations of a loop are a run of minIterations or more
// consecutive tiles of the same calls.
func align(ranks []rankData, tiles [][]tile, l *links, keys []symKey) {
	a := newAligner(ranks, tiles, l, keys)
	for r := range ranks {
		if a.rank(int32(r)) {
			a.index(int32(r))
		}
	}
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
	first  [][2]int32 // per collective (in collKey order of first sight): its first caller, rank and index
	collAt map[collKey]int32
}

func newAligner(ranks []rankData, tiles [][]tile, l *links, keys []symKey) *aligner {
	a := &aligner{ranks: ranks, tiles: tiles, l: l, keys: keys,
		recvOf: make([][]int32, len(ranks)), tileOf: make([][]int32, len(ranks)), collAt: map[collKey]int32{}}
	for r := range ranks {
		a.recvOf[r] = make([]int32, len(ranks[r].ev))
		for i := range a.recvOf[r] {
			a.recvOf[r][i] = -1
		}
	}
	for r := range ranks {
		for i := range ranks[r].ev {
			sk := &keys[ranks[r].ev[i].sym]
			if s := l.sendOf[r][i]; s >= 0 {
				a.recvOf[sk.recvSource()][s] = int32(i)
			}
			if k := l.coll[r][i]; k >= 0 {
				key := collKey{sk.comm, k}
				if _, ok := a.collAt[key]; !ok {
					a.collAt[key] = int32(len(a.first))
					a.first = append(a.first, [2]int32{int32(r), int32(i)})
				}
			}
		}
		a.index(int32(r))
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
	if k := a.l.coll[r][i]; k >= 0 {
		c := a.first[a.collAt[collKey{sk.comm, k}]]
		if c[0] != r {
			f(c[0], a.tileOf[c[0]][c[1]])
		}
	}
}

// rank turns rank r's loops; it reports whether any changed.
func (a *aligner) rank(r int32) bool {
	ts := a.tiles[r]
	var out []tile
	changed := false
	for k := 0; k < len(ts); {
		m := a.run(r, k)
		if m < minIterations {
			out = append(out, ts[k])
			k++
			continue
		}
		if j := a.turn(r, ts[k:k+m]); j > 0 {
			out = append(out, rotated(ts[k:k+m], j)...)
			changed = true
		} else {
			out = append(out, ts[k:k+m]...)
		}
		k += m
	}
	if changed {
		a.tiles[r] = out
	}
	return changed
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

// turn returns the rotation (0 to the period - 1) of the loop whose
// iterations are tiles it that makes the most partners' offsets agree;
// 0 unless another does strictly better. A rotation must leave as many
// requests pending at an iteration's start as the loop does.
func (a *aligner) turn(r int32, it []tile) int32 {
	p := it[0].end - it[0].start
	if p < 2 {
		return 0
	}
	// off[i] are the offsets that at least half of position i's calls
	// have to their matches.
	off := make([][]offset, p)
	count := map[offset]int{}
	for i := range p {
		clear(count)
		for k := range min(len(it), alignSample) {
			own := a.tileOf[r][it[k].start]
			a.partners(r, it[k].start+i, func(q, t int32) { count[offset{q, t - own}]++ })
		}
		for o, n := range count {
			if n*2 >= min(len(it), alignSample) {
				off[i] = append(off[i], o)
			}
		}
	}
	rd, s := &a.ranks[r], it[0].start
	return bestTurn(off, func(j int32) bool { return rd.openAt(s+j) == rd.openAt(s) })
}

// bestTurn returns the rotation j, from 0 to len(off)-1, that leaves
// the fewest extra partner iterations: for each partner rank, the
// distinct iterations its matches fall in, less one. Turning by j moves
// the positions before j into the previous iteration, which puts their
// matches one iteration further. Rotations that ok refuses are skipped;
// 0 is kept unless another does strictly better.
func bestTurn(off [][]offset, ok func(j int32) bool) int32 {
	count := map[offset]int{}
	distinct := 0
	add := func(o offset, n int) {
		c := count[o]
		count[o] = c + n
		switch {
		case c == 0 && n > 0:
			distinct++
		case c+n == 0:
			distinct--
		}
	}
	for _, os := range off {
		for _, o := range os {
			add(o, 1)
		}
	}
	best, least := int32(0), distinct
	for j := int32(1); j < int32(len(off)); j++ {
		for _, o := range off[j-1] {
			add(o, -1)
			add(offset{o.q, o.d + 1}, 1)
		}
		if distinct < least && ok(j) {
			best, least = j, distinct
		}
	}
	return best
}

// offset is where a call's match lies: on rank q, d iterations (tiles)
// after the call's own.
type offset struct{ q, d int32 }

// rotated returns the iterations it turned by j calls: a head of j calls,
// the iterations shifted, and a tail of the remaining calls.
func rotated(it []tile, j int32) []tile {
	p := it[0].end - it[0].start
	out := make([]tile, 0, len(it)+1)
	start, end := it[0].start, it[len(it)-1].end
	out = append(out, tile{start: start, end: start + j, pt: -1})
	for s := start + j; s+p <= end; s += p {
		out = append(out, tile{start: s, end: s + p, pt: -2})
	}
	out = append(out, tile{start: end - p + j, end: end, pt: -1})
	return slices.Clip(out)
}
