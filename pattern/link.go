package pattern

import (
	"cmp"
	"slices"

	"kairos/trace"
)

// links are the message and collective matches between the ranks' calls.
type links struct {
	// sendOf[r][i] is the index on the sending rank of the message the
	// receive r:i gets, -1 if unmatched; the sender is the event's
	// partner (its source for a SendRecv).
	sendOf [][]int32
	// coll[r][i] is the ordinal of the collective r:i among r's
	// collectives on its communicator, -1 for point-to-point calls.
	coll [][]int32
	// collSize at {comm, k} is how many ranks take part in the k-th
	// collective on comm.
	collSize  collIndex
	unmatched int // receives with no send, sends with no receive
}

type collKey struct {
	comm uint32
	k    int32
}

// collIndex maps a collective, by its communicator and its ordinal k
// there (dense from 0 on each communicator), to an int32: a slice per
// communicator. A map over both held one entry per collective (ExaML:
// 1.6 million a rank), and the lookups' cache misses were two fifths of
// kairos patterns' CPU time on it.
type collIndex struct {
	comms  map[uint32][]int32
	absent int32 // the value of a collective not set
}

func newCollIndex(absent int32) collIndex {
	return collIndex{comms: map[uint32][]int32{}, absent: absent}
}

// at returns the value of key, absent if it was never set.
func (c collIndex) at(key collKey) int32 {
	if s := c.comms[key.comm]; int(key.k) < len(s) {
		return s[key.k]
	}
	return c.absent
}

// ref returns where the value of key is kept, valid until the next ref.
func (c collIndex) ref(key collKey) *int32 {
	s := c.comms[key.comm]
	for len(s) <= int(key.k) {
		s = append(s, c.absent)
	}
	c.comms[key.comm] = s
	return &s[key.k]
}

type chanKey struct {
	src, dst int32
	comm     uint32
}

// match pairs every receive with the first unmatched send of its channel
// with a compatible tag (MPI's non-overtaking order), and numbers the
// collectives per communicator. A receive from MPI_ANY_SOURCE stays
// unmatched.
func match(ranks []rankData, keys []symKey) *links {
	n := len(ranks)
	l := &links{sendOf: make([][]int32, n), coll: make([][]int32, n), collSize: newCollIndex(0)}
	queues := map[chanKey]*trace.SendQueue{}
	sends := 0
	for r := range ranks {
		count := map[uint32]int32{}
		l.coll[r] = make([]int32, len(ranks[r].ev))
		for i := range ranks[r].ev {
			e := &ranks[r].ev[i]
			sk := &keys[e.sym]
			l.coll[r][i] = -1
			if e.kind.IsSend() || e.kind == trace.SendRecv {
				k := chanKey{int32(r), sk.partner, sk.comm}
				q := queues[k]
				if q == nil {
					q = &trace.SendQueue{}
					queues[k] = q
				}
				q.Push(int32(i), e.tag)
				sends++
			}
			if !e.kind.IsPointToPoint() {
				k := count[sk.comm]
				count[sk.comm] = k + 1
				l.coll[r][i] = k
				*l.collSize.ref(collKey{sk.comm, k})++
			}
		}
	}
	recvs, matched := 0, 0
	for r := range ranks {
		l.sendOf[r] = make([]int32, len(ranks[r].ev))
		for i := range ranks[r].ev {
			e := &ranks[r].ev[i]
			l.sendOf[r][i] = -1
			sk := &keys[e.sym]
			src := sk.recvSource()
			if src == trace.NoRank {
				continue
			}
			recvs++
			if q := queues[chanKey{src, int32(r), sk.comm}]; q != nil && src >= 0 {
				if j := q.Take(e.tag); j >= 0 {
					l.sendOf[r][i] = j
					matched++
				}
			}
		}
	}
	l.unmatched = recvs - matched + sends - matched
	return l
}

// dsu is a union-find forest over tile numbers.
type dsu []int32

func newDSU(n int) dsu {
	d := make(dsu, n)
	for i := range d {
		d[i] = int32(i)
	}
	return d
}

func (d dsu) find(x int32) int32 {
	for d[x] != x {
		d[x] = d[d[x]]
		x = d[x]
	}
	return x
}

func (d dsu) union(a, b int32) {
	a, b = d.find(a), d.find(b)
	if a < b {
		d[b] = a
	} else if b < a {
		d[a] = b
	}
}

// group links every tile to the tiles holding its calls' partners, the
// bag of repeats of Section 4.1.1 grown until closed; it returns the
// union-find forest over the global tile numbers base[r]+i.
func group(ranks []rankData, tiles [][]tile, l *links, keys []symKey) (dsu, []int32, [][]int32) {
	base := make([]int32, len(ranks)+1)
	tileOf := make([][]int32, len(ranks))
	for r := range ranks {
		base[r+1] = base[r] + int32(len(tiles[r]))
		tileOf[r] = make([]int32, len(ranks[r].ev))
		for i, t := range tiles[r] {
			for j := t.start; j < t.end; j++ {
				tileOf[r][j] = base[r] + int32(i)
			}
		}
	}
	d := newDSU(int(base[len(ranks)]))
	firstColl := newCollIndex(-1)
	for r := range ranks {
		for i := range ranks[r].ev {
			sk := &keys[ranks[r].ev[i].sym]
			me := tileOf[r][i]
			if s := l.sendOf[r][i]; s >= 0 {
				d.union(me, tileOf[sk.recvSource()][s])
			}
			if k := l.coll[r][i]; k >= 0 {
				if t := firstColl.ref(collKey{sk.comm, k}); *t >= 0 {
					d.union(me, *t)
				} else {
					*t = me
				}
			}
		}
	}
	return d, base, tileOf
}

// chainTiles is the most tiles of one rank a component of the links may
// hold and still be one instance: beyond, the messages chain the tiles of
// a program driven by them (a server answering every rank in turn, Ray's
// or HPCC's RandomAccess' polling loops) into an instance of the whole
// run, which unchain cuts.
const chainTiles = 64

// unchain relinks, in the order of their receives, the links within each
// component of d in which some rank has more than chainTiles tiles, but
// only where the two sets they join hold no rank in common: each
// instance of such a component then holds a tile of a rank at most, and
// the messages between its instances are left across them. The other
// components are kept as they are.
func unchain(d dsu, ranks []rankData, base []int32, tileOf [][]int32, l *links, keys []symKey) dsu {
	nt := int32(len(d))
	chained := make([]bool, nt) // by root of d
	cnt := make([]int32, nt)
	found := false
	for r := range ranks {
		var seen []int32
		for t := base[r]; t < base[r+1]; t++ {
			root := d.find(t)
			if cnt[root] == 0 {
				seen = append(seen, root)
			}
			if cnt[root]++; cnt[root] > chainTiles {
				chained[root], found = true, true
			}
		}
		for _, root := range seen {
			cnt[root] = 0
		}
	}
	if !found {
		return d
	}
	tileRank := make([]int32, nt)
	for r := range ranks {
		for t := base[r]; t < base[r+1]; t++ {
			tileRank[t] = int32(r)
		}
	}
	u := newDSU(int(nt))
	for t := range nt {
		if root := d.find(t); !chained[root] {
			u[t] = root
		}
	}
	type link struct {
		at   trace.Time
		a, b int32
	}
	var todo []link
	firstColl := newCollIndex(-1)
	for r := range ranks {
		for i := range ranks[r].ev {
			me := tileOf[r][i]
			if !chained[d.find(me)] {
				continue
			}
			at := ranks[r].ev[i].enter
			sk := &keys[ranks[r].ev[i].sym]
			if s := l.sendOf[r][i]; s >= 0 {
				src := sk.recvSource()
				todo = append(todo, link{at, me, tileOf[src][s]})
			}
			if k := l.coll[r][i]; k >= 0 {
				if t := firstColl.ref(collKey{sk.comm, k}); *t >= 0 {
					todo = append(todo, link{at, me, *t})
				} else {
					*t = me
				}
			}
		}
	}
	slices.SortStableFunc(todo, func(x, y link) int { return cmp.Compare(x.at, y.at) })
	sets := newRankSets(tileRank, len(ranks))
	for _, k := range todo {
		a, b := u.find(k.a), u.find(k.b)
		if a != b && sets.disjoint(a, b) {
			u.union(a, b)
			sets.merge(u.find(a), a, b)
		}
	}
	return u
}

// rankSets are the ranks of the sets of a union-find forest over tiles,
// each set's at its root: a bit mask where there are 64 ranks or fewer,
// else a sorted list (none: the root tile's rank alone).
type rankSets struct {
	rankOf []int32
	masks  []uint64
	lists  map[int32][]int32
}

func newRankSets(rankOf []int32, ranks int) *rankSets {
	s := &rankSets{rankOf: rankOf}
	if ranks <= 64 {
		s.masks = make([]uint64, len(rankOf))
		for t, r := range rankOf {
			s.masks[t] = 1 << r
		}
	} else {
		s.lists = map[int32][]int32{}
	}
	return s
}

func (s *rankSets) list(root int32) []int32 {
	if l, ok := s.lists[root]; ok {
		return l
	}
	return []int32{s.rankOf[root]}
}

// disjoint reports whether the sets rooted at a and b share no rank (in
// time of the smaller set's size, a tile is often linked to a large set).
func (s *rankSets) disjoint(a, b int32) bool {
	if s.masks != nil {
		return s.masks[a]&s.masks[b] == 0
	}
	x, y := s.list(a), s.list(b)
	if len(x) > len(y) {
		x, y = y, x
	}
	for _, r := range x {
		if _, found := slices.BinarySearch(y, r); found {
			return false
		}
	}
	return true
}

// merge makes root the set of the union of the sets once rooted at a and b.
func (s *rankSets) merge(root, a, b int32) {
	if s.masks != nil {
		s.masks[root] = s.masks[a] | s.masks[b]
		return
	}
	m := append(slices.Clone(s.list(a)), s.list(b)...)
	slices.Sort(m)
	delete(s.lists, a)
	delete(s.lists, b)
	s.lists[root] = m
}
