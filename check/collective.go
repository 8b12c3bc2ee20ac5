package check

import (
	"fmt"
	"slices"
	"strings"

	"kairos/trace"
)

// commState follows the collectives of one communicator.
type commState struct {
	id      uint32
	size    int
	members []int32 // nil for the world
	index   []int32 // world rank -> rank in the communicator, -1 if none; nil for the world
	// few is the index of a communicator of few members (a 16th of the
	// world or less: each rank's own, as PETSc's duplicates of
	// MPI_COMM_SELF), whose index would take the world's size each.
	few     map[int32]int32
	entered []int // collectives entered, per communicator rank
	insts   []*instance
	base    int // number of insts[0]
}

// instance is one collective operation on a communicator, as its first
// member to arrive described it.
type instance struct {
	comm        *commState
	num         int
	kind        trace.Kind
	root        int32
	send, recv  int64
	counts      []int64 // the receive counts every member gives alike
	rank, index int     // the first member to arrive
	arrived     int
	size        int
	pairs       *pairwise // the v-collectives' sizes, member by member
}

func newComm(id uint32, members []int32, n int) *commState {
	c := &commState{id: id, size: n, members: members}
	switch {
	case members != nil && 16*len(members) <= n:
		c.size = len(members)
		c.few = make(map[int32]int32, len(members))
		for i, w := range members {
			if _, ok := c.few[w]; !ok && w >= 0 && int(w) < n {
				c.few[w] = int32(i)
			}
		}
	case members != nil:
		c.size = len(members)
		c.index = make([]int32, n)
		for i := range c.index {
			c.index[i] = -1
		}
		for i, w := range members {
			if w >= 0 && int(w) < n && c.index[w] < 0 {
				c.index[w] = int32(i)
			}
		}
	}
	c.entered = make([]int, c.size)
	return c
}

// rankOf returns the communicator rank of world rank w, or -1.
func (c *commState) rankOf(w int32) int32 {
	if c.few != nil {
		if i, ok := c.few[w]; ok {
			return i
		}
		return -1
	}
	if c.index == nil {
		if w >= 0 && int(w) < c.size {
			return w
		}
		return -1
	}
	if w < 0 || int(w) >= len(c.index) {
		return -1
	}
	return c.index[w]
}

// member returns the world rank of communicator rank i.
func (c *commState) member(i int) int32 {
	if c.members == nil {
		return int32(i)
	}
	return c.members[i]
}

// missing names the members that have not entered collective num.
func (c *commState) missing(num int) string {
	var names []string
	count := 0
	for i, k := range c.entered {
		if k <= num {
			if count < 8 {
				names = append(names, fmt.Sprint(c.member(i)))
			}
			count++
		}
	}
	s := "rank"
	if count > 1 {
		s = "ranks"
	}
	s += " " + strings.Join(names, ", ")
	if count > len(names) {
		s += fmt.Sprintf(" and %d more", count-len(names))
	}
	return s
}

// comm returns the state of communicator id, or nil if the trace does not
// define it.
func (e *engine) comm(id uint32) *commState {
	if id == trace.WorldComm {
		return e.world
	}
	if c, ok := e.comms[id]; ok {
		return c
	}
	var c *commState
	if members := e.meta.Members(id, e.n); members != nil {
		c = newComm(id, members, e.n)
	}
	e.comms[id] = c
	return c
}

// sameBytes says which sizes every member of a collective gives alike:
// those MPI requires to match between members (the same amount of data
// per member) and that are significant on every member (a gather's
// receive size is the root's alone, a scatter's send size too).
func sameBytes(k trace.Kind) (send, recv bool) {
	switch k {
	case trace.Bcast, trace.Reduce, trace.Allreduce, trace.Scan, trace.Exscan, trace.Alltoall, trace.Allgather:
		return true, true
	case trace.Gather:
		return true, false
	case trace.Scatter:
		return false, true
	}
	return false, false
}

// sameCounts reports whether every member of a collective gives the same
// receive counts (MPI_Reduce_scatter's recvcounts, MPI_Allgatherv's).
func sameCounts(k trace.Kind) bool { return k == trace.ReduceScatter || k == trace.Allgatherv }

// collective makes rank r enter a collective and wait for the others.
func (e *engine) collective(r int, ev *trace.Event) {
	rs := &e.ranks[r]
	c := e.comm(ev.Comm)
	if c == nil {
		e.problem(r, rs.index, "%s on communicator %d, which is not defined", ev.Kind, ev.Comm)
		return
	}
	cr := c.rankOf(int32(r))
	if cr < 0 {
		e.problem(r, rs.index, "%s on communicator %d, of which rank %d is not a member", ev.Kind, ev.Comm, r)
		return
	}
	if e.static {
		e.collectiveArgs(r, ev, c)
	}
	k := c.entered[cr]
	c.entered[cr]++
	in := c.instance(k, r, rs.index, ev)
	if in.arrived > 0 && e.static {
		e.compare(r, ev, in)
	}
	if e.static && ev.Kind == in.kind && needsPairwise(in.kind, c.size) {
		if in.pairs == nil {
			in.pairs = newPairwise(c.size)
		}
		in.pairs.note(cr, rs.index, ev)
	}
	in.arrived++
	if !e.leavesAtOnce(ev, c, cr) {
		rs.pend, rs.coll = pColl, in
	}
	if in.arrived == in.size {
		e.completed(c, in)
	}
}

// leavesAtOnce reports whether member cr of c leaves collective ev
// without waiting for the others: the root of a broadcast whose message
// the protocol sends at once (eager, or SimGrid's below its limit), as
// the root of SMPI's binomial tree sends to its children and goes on.
// A program may then broadcast on MPI_COMM_WORLD and on a duplicate of it
// in one order at the root and the other elsewhere (murasaki). The others
// wait for every member, as in any collective; so do all in the static
// pass, whose reports keep the order of the collectives.
func (e *engine) leavesAtOnce(ev *trace.Event, c *commState, cr int32) bool {
	if e.static || ev.Kind != trace.Bcast || c.rankOf(ev.Partner) != cr {
		return false
	}
	return e.proto == Eager || e.proto == SimGrid && ev.SendBytes < e.limit
}

// collectiveArgs checks the root and the count vectors of a collective.
func (e *engine) collectiveArgs(r int, ev *trace.Event, c *commState) {
	i := e.ranks[r].index
	if ev.Kind.IsRooted() && c.rankOf(ev.Partner) < 0 {
		e.problem(r, i, "%s: root %d is not a member of communicator %d", ev.Kind, ev.Partner, c.id)
	}
	for _, v := range [2][]int64{ev.SendCounts, ev.RecvCounts} {
		if v != nil && len(v) != c.size {
			e.problem(r, i, "%s has %d counts for a communicator of %d members", ev.Kind, len(v), c.size)
			return
		}
	}
}

// instance returns collective number k of c, creating it from the event
// of its first member to arrive.
func (c *commState) instance(k, r, index int, ev *trace.Event) *instance {
	for k-c.base >= len(c.insts) {
		in := &instance{comm: c, num: k, kind: ev.Kind, root: ev.Partner,
			send: ev.SendBytes, recv: ev.RecvBytes, rank: r, index: index, size: c.size}
		if sameCounts(ev.Kind) {
			in.counts = append([]int64(nil), ev.RecvCounts...)
		}
		c.insts = append(c.insts, in)
	}
	return c.insts[k-c.base]
}

// compare reports how rank r's entry into in differs from the first
// member's.
func (e *engine) compare(r int, ev *trace.Event, in *instance) {
	i := e.ranks[r].index
	switch {
	case ev.Kind != in.kind:
		e.problem(r, i, "%s is collective #%d on communicator %d, but rank %d entered %s there (its event %d)",
			ev.Kind, in.num, in.comm.id, in.rank, in.kind, in.index)
	case ev.Kind.IsRooted() && ev.Partner != in.root:
		e.problem(r, i, "%s (collective #%d on communicator %d) has root %d, but rank %d gave root %d (its event %d)",
			ev.Kind, in.num, in.comm.id, ev.Partner, in.rank, in.root, in.index)
	case differentBytes(ev, in):
		e.problem(r, i, "%s (collective #%d on communicator %d) moves %d/%d bytes (send/recv), but rank %d moves %d/%d (its event %d)",
			ev.Kind, in.num, in.comm.id, ev.SendBytes, ev.RecvBytes, in.rank, in.send, in.recv, in.index)
	case sameCounts(ev.Kind) && !slices.Equal(ev.RecvCounts, in.counts):
		e.problem(r, i, "%s (collective #%d on communicator %d) has receive counts %v, but rank %d gave %v (its event %d)",
			ev.Kind, in.num, in.comm.id, ev.RecvCounts, in.rank, in.counts, in.index)
	}
}

// differentBytes reports whether ev gives another size than the first
// member of in where all members must give the same.
func differentBytes(ev *trace.Event, in *instance) bool {
	send, recv := sameBytes(ev.Kind)
	return send && ev.SendBytes != in.send || recv && ev.RecvBytes != in.recv
}

// completed wakes the members blocked in a collective all have entered.
func (e *engine) completed(c *commState, in *instance) {
	if e.static {
		e.rep.Collectives++
	}
	if in.pairs != nil {
		e.checkPairwise(in)
		in.pairs = nil
	}
	for i := 0; i < c.size; i++ {
		w := c.member(i)
		if rs := &e.ranks[w]; rs.pend == pColl && rs.coll == in {
			e.wake(w)
		}
	}
	for len(c.insts) > 0 && c.insts[0].arrived == c.size {
		c.insts[0] = nil
		c.insts = c.insts[1:]
		c.base++
	}
}
