package pattern

import (
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
