package goal

import (
	"fmt"
	"slices"
	"strconv"

	"kairos/trace"
)

// coll is one collective call as one member writes it.
type coll struct {
	g       *rankWriter
	members []int32 // world ranks, in communicator order
	me, n   int32
	root    int32 // the root of a rooted collective, in communicator order
	tag     string
	ends    []int // operations the call's completion requires
}

// collective writes e's point-to-point operations, then a "calc 0" that
// requires its last ones, then the local reduction, if any.
func (g *rankWriter) collective(e *trace.Event) error {
	switch e.Kind {
	case trace.CommSplit, trace.CommDup, trace.CommCreate:
		return nil // communicator management: no message in GOAL
	}
	members := g.meta.Members(e.Comm, int(g.n))
	if members == nil {
		return fmt.Errorf("communicator %d is not defined", e.Comm)
	}
	c := coll{g: g, members: members, me: -1, n: int32(len(members))}
	for i, w := range members {
		if w == g.rank {
			c.me = int32(i)
		}
	}
	if c.me < 0 {
		return fmt.Errorf("rank %d is not a member of communicator %d", g.rank, e.Comm)
	}
	if e.Kind.IsRooted() {
		// The model names the root by world rank.
		if c.root = int32(slices.Index(members, e.Partner)); c.root < 0 {
			return fmt.Errorf("root (world rank %d) is not a member of communicator %d", e.Partner, e.Comm)
		}
	}
	seq := g.collSeq[e.Comm]
	g.collSeq[e.Comm]++
	c.tag = strconv.FormatUint(collectiveTag+uint64(seq%(collectiveTag-1)), 10)
	if err := c.write(e); err != nil {
		return err
	}
	if len(c.ends) > 0 {
		g.join(c.ends)
	}
	if e.Kind.HasReduction() {
		g.calc(e.Compute / g.speed)
	}
	return nil
}

func (c *coll) write(e *trace.Event) error {
	size := e.SendBytes
	if size == 0 {
		size = e.RecvBytes
	}
	switch e.Kind {
	case trace.Barrier:
		c.dissemination(0)
	case trace.Allreduce:
		c.dissemination(size)
	case trace.Bcast:
		c.bcast(c.root, size)
	case trace.Reduce:
		c.reduce(c.root, size)
	case trace.Scan, trace.Exscan:
		c.chain(size)
	default:
		return c.linear(e)
	}
	return nil
}

// op writes a send (or receive) of bytes to (from) member p that
// requires the operations on, and returns its label.
func (c *coll) op(isSend bool, p int32, bytes int64, on ...int) int {
	peer := strconv.Itoa(int(c.members[p]))
	b := strconv.FormatInt(max(bytes, 0), 10)
	text := "recv " + b + "b from " + peer + " tag " + c.tag
	if isSend {
		text = "send " + b + "b to " + peer + " tag " + c.tag
	}
	l := c.g.op(text)
	for _, d := range on {
		if d != 0 {
			c.g.requires(l, d)
		}
	}
	return l
}

// dissemination is Schedgen's allreduce (and barrier): in round k, send
// to rank+2^k and receive from rank-2^k, each send after the previous
// round's receive.
func (c *coll) dissemination(bytes int64) {
	prev := 0
	for dist := int32(1); dist < c.n; dist <<= 1 {
		s := c.op(true, (c.me+dist)%c.n, bytes, prev)
		prev = c.op(false, (c.me-dist+c.n)%c.n, bytes)
		c.ends = append(c.ends, s)
	}
	if prev != 0 {
		c.ends = append(c.ends, prev)
	}
}

// bcast is a binomial tree from root: receive from the parent, then send
// to the children, largest subtree first.
func (c *coll) bcast(root int32, bytes int64) {
	v := (c.me - root + c.n) % c.n
	real := func(x int32) int32 { return (x + root) % c.n }
	parent, mask := 0, int32(1)
	for ; mask < c.n; mask <<= 1 {
		if v&mask != 0 {
			parent = c.op(false, real(v-mask), bytes)
			c.ends = append(c.ends, parent)
			break
		}
	}
	for mask >>= 1; mask > 0; mask >>= 1 {
		if v+mask < c.n {
			c.ends = append(c.ends, c.op(true, real(v+mask), bytes, parent))
		}
	}
}

// reduce is a binomial tree to root: receive from the children, smallest
// subtree first, then send to the parent.
func (c *coll) reduce(root int32, bytes int64) {
	v := (c.me - root + c.n) % c.n
	real := func(x int32) int32 { return (x + root) % c.n }
	var got []int
	for mask := int32(1); mask < c.n; mask <<= 1 {
		if v&mask != 0 {
			c.ends = append(c.ends, c.op(true, real(v-mask), bytes, got...))
			return
		}
		if v|mask < c.n {
			got = append(got, c.op(false, real(v|mask), bytes))
		}
	}
	c.ends = append(c.ends, got...)
}

// chain is a scan: receive the prefix from the previous member, send it
// on to the next.
func (c *coll) chain(bytes int64) {
	prev := 0
	if c.me > 0 {
		prev = c.op(false, c.me-1, bytes)
		c.ends = append(c.ends, prev)
	}
	if c.me < c.n-1 {
		c.ends = append(c.ends, c.op(true, c.me+1, bytes, prev))
	}
}

// linear writes the collectives whose messages all start at once: each
// member sends to and receives from the others (or the root) directly,
// in the order rank+1, rank+2, ... (receives from rank-1, rank-2, ...).
func (c *coll) linear(e *trace.Event) error {
	sends, recvs, err := c.volumes(e)
	if err != nil {
		return err
	}
	for i := int32(1); i < c.n; i++ {
		to, from := (c.me+i)%c.n, (c.me-i+c.n)%c.n
		if sends != nil && sends[to] >= 0 {
			c.ends = append(c.ends, c.op(true, to, sends[to]))
		}
		if recvs != nil && recvs[from] >= 0 {
			c.ends = append(c.ends, c.op(false, from, recvs[from]))
		}
	}
	return nil
}

// volumes returns the bytes the member sends to and receives from each
// member in a linear collective (-1: no message; nil: none at all).
func (c *coll) volumes(e *trace.Event) (sends, recvs []int64, err error) {
	each := func(b int64) []int64 {
		v := make([]int64, c.n)
		for i := range v {
			v[i] = b
		}
		return v
	}
	only := func(p int32, b int64) []int64 {
		v := each(-1)
		v[p] = b
		return v
	}
	counts := func(name string, v []int64) ([]int64, error) {
		if int32(len(v)) != c.n {
			return nil, fmt.Errorf("%d %s counts for a communicator of %d", len(v), name, c.n)
		}
		return v, nil
	}
	recvBytes := e.RecvBytes
	if recvBytes == 0 {
		recvBytes = e.SendBytes
	}
	root := c.root
	switch e.Kind {
	case trace.Alltoall:
		return each(e.SendBytes), each(recvBytes), nil
	case trace.Allgather:
		return each(e.SendBytes), each(recvBytes), nil
	case trace.Allgatherv:
		recvs, err = counts("receive", e.RecvCounts)
		return each(e.SendBytes), recvs, err
	case trace.Alltoallv:
		if sends, err = counts("send", e.SendCounts); err == nil {
			recvs, err = counts("receive", e.RecvCounts)
		}
		return sends, recvs, err
	case trace.ReduceScatter:
		if sends, err = counts("receive", e.RecvCounts); err != nil {
			return nil, nil, err
		}
		return sends, each(sends[c.me]), nil
	case trace.Gather, trace.Gatherv:
		if c.me != root {
			return only(root, e.SendBytes), nil, nil
		}
		if e.Kind == trace.Gatherv {
			recvs, err = counts("receive", e.RecvCounts)
			return nil, recvs, err
		}
		return nil, each(recvBytes), nil
	case trace.Scatter, trace.Scatterv:
		if c.me != root {
			return nil, only(root, recvBytes), nil
		}
		if e.Kind == trace.Scatterv {
			sends, err = counts("send", e.SendCounts)
			return sends, nil, err
		}
		return each(e.SendBytes), nil, nil
	}
	return nil, nil, fmt.Errorf("no GOAL translation for %s", e.Kind)
}
