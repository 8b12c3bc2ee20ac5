package sim

import (
	"fmt"
	"math"

	"kairos/trace"
)

// SimGrid's own alltoall algorithms beyond the pair and ring exchanges:
// those exchanges with barriers between or before their steps, recursive
// doubling, the 2D and 3D mesh "shoot" algorithms, and MVAPICH2's
// throttled scattered destinations.

func init() {
	pairBarriers.register(alltoallAlgos, "alltoall", "pair")
	ringBarriers.register(alltoallAlgos, "alltoall", "ring")
	pairvBarriers.register(alltoallvAlgos, "alltoallv", "pair")
	ringvBarriers.register(alltoallvAlgos, "alltoallv", "ring")
	alltoallAlgos["rdb"] = []algorithm{alltoallRDB}
	alltoallAlgos["2dmesh"] = []algorithm{phased(alltoall2DMesh)}
	alltoallAlgos["3dmesh"] = []algorithm{phased(alltoall3DMesh)}
	alltoallAlgos["mvapich2_scatter_dest"] = []algorithm{alltoallScatterDest}
}

// exchanges are the steps of SimGrid's pairwise alltoall and alltoallv
// algorithms (and of the allgather and allgatherv rings): at step i
// (1 <= i < n; step 0 copies a rank's own block, sending no message), a
// sendrecv of the call's buffers, sending size bytes to one rank and
// receiving the block of another (blockFrom), peers naming both.
type exchanges struct {
	peers func(c *collCall, i int32) (to, from int32)
	size  func(c *collCall, to int32) int64
}

// The exchanges of the pair (with rank ^ i) and ring (to rank+i, from
// rank-i) algorithms, of alltoall's send size or alltoallv's count for
// the destination.
var (
	pairExchanges  = exchanges{xorPeers, alltoallSize}
	ringExchanges  = exchanges{ringPeers, alltoallSize}
	pairvExchanges = exchanges{xorPeers, alltoallvSize}
	ringvExchanges = exchanges{ringPeers, alltoallvSize}
)

func xorPeers(c *collCall, i int32) (to, from int32) { return c.me ^ i, c.me ^ i }

func ringPeers(c *collCall, i int32) (to, from int32) {
	return (c.me + i) % c.n, (c.me - i + c.n) % c.n
}

func alltoallSize(c *collCall, _ int32) int64 { return c.e.SendBytes }

func alltoallvSize(c *collCall, to int32) int64 { return c.e.SendCounts[to] }

// step appends exchange i, reporting false if there is none.
func (x exchanges) step(c *collCall, i int32, ops []collOp) ([]collOp, bool) {
	if i >= c.n {
		return ops, false
	}
	to, from := x.peers(c, i)
	return append(ops, collOp{send: true, peer: to, bytes: x.size(c, to), typed: true}, collOp{peer: from, bytes: blockFrom(c, from), typed: true}), true
}

// steps runs the exchanges one phase each.
func (x exchanges) steps(c *collCall, p int, ops []collOp) ([]collOp, bool) {
	return x.step(c, int32(p+1), ops)
}

// stepAtRoot runs the one exchange whose index is the part's root (see
// barriers.register); step 0 has no message.
func (x exchanges) stepAtRoot(c *collCall, p int, ops []collOp) ([]collOp, bool) {
	if p > 0 || c.root == 0 {
		return ops, false
	}
	return x.step(c, c.root, ops)
}

// lightBarrier runs the exchanges with a sendrecv of one byte after each
// but the last, a light barrier with the next step's peers: sent to its
// source, received from its destination.
func (x exchanges) lightBarrier(c *collCall, p int, ops []collOp) ([]collOp, bool) {
	i := int32(p/2 + 1)
	if p%2 == 0 {
		return x.step(c, i, ops)
	}
	if i+1 >= c.n {
		return ops, false
	}
	to, from := x.peers(c, i+1)
	return append(ops, collOp{send: true, peer: from, bytes: 1}, collOp{peer: to, bytes: 1}), true
}

// barriers are SimGrid's <name>_light_barrier, <name>_mpi_barrier and
// <name>_one_barrier variants of a pairwise exchange: after each step a
// sendrecv of one byte with the next step's peers (lightBarrier), the
// configured barrier (colls::barrier) before each step (step 0's copy
// included), or once before them all.
type barriers struct {
	light, steps, stepAtRoot algorithm
}

// The barrier variants: alltoall__pair_light_barrier,
// alltoall__pair_mpi_barrier and alltoall__pair_one_barrier (pairBarriers),
// alltoall__ring_*_barrier (ringBarriers), alltoallv__pair_*_barrier
// (pairvBarriers) and alltoallv__ring_*_barrier (ringvBarriers), whose
// steps are the ring's on every size (alltoallv__ring's are pair's on a
// power of two).
var (
	pairBarriers  = barriersOf(pairExchanges)
	ringBarriers  = barriersOf(ringExchanges)
	pairvBarriers = barriersOf(pairvExchanges)
	ringvBarriers = barriersOf(ringvExchanges)
)

func barriersOf(x exchanges) barriers {
	return barriers{x.lightBarrier, x.steps, x.stepAtRoot}
}

// register adds the variants of the exchanges called name to coll's table
// and composites. The pair variants throw on a size that is not a power
// of two, as pair does (see pow2). An mpi_barrier variant's step runs as a
// part of its own, its index passed as the part's root (alltoall has
// none).
func (b barriers) register(table map[string][]algorithm, coll, name string) {
	table[name+"_light_barrier"] = []algorithm{b.light}
	table[name+"_mpi_barrier"] = nil // made of other collectives: see composites
	table[name+"_one_barrier"] = nil
	composites[coll+":"+name+"_mpi_barrier"] = func(c *collCall) []subColl {
		subs := make([]subColl, 0, 2*c.n)
		for i := range c.n {
			subs = append(subs, subColl{kind: trace.Barrier}, subColl{run: b.stepAtRoot, root: i})
		}
		return subs
	}
	composites[coll+":"+name+"_one_barrier"] = func(*collCall) []subColl {
		return []subColl{{kind: trace.Barrier}, {run: b.steps}}
	}
}

// alltoallRDB (alltoall__rdb): allgather__rdb's recursive doubling on
// whole send buffers (n blocks), the blocks sent down its trees counted
// in send elements (see recursiveDoubling).
func alltoallRDB(c *collCall, p int, ops []collOp) ([]collOp, bool) {
	if p == 0 {
		var count int64
		if c.ssize > 0 {
			count = c.e.SendBytes / c.ssize * int64(c.n)
		}
		key := scheduleKey{algo: "alltoall_rdb", n: c.n, count: count, ssize: c.ssize, rsize: c.rsize, rbytes: c.e.RecvBytes}
		n, blocks := c.n, c.e.RecvBytes*int64(c.n) // n receive blocks a member
		sendBuf := c.e.SendBytes * int64(n)
		c.useSchedule(c.me, key, nil, func() schedule {
			return evenRDB(n, count, c.ssize, c.rsize, c.ssize, func(_, mask int32, _ int, tree bool) int64 {
				if tree {
					return int64(mask) * sendBuf
				}
				return int64(mask) * blocks
			})
		})
	}
	return c.sharedPhase(p, ops, 0)
}

// meshLine is a rank's peers along one dimension of SimGrid's mesh
// alltoalls: (base + i*stride) mod n for first <= i < last, but itself.
type meshLine struct{ base, stride, first, last int32 }

// shoot appends the phases of a mesh alltoall along l: a receive of recv
// bytes posted from every peer, then a blocking send of bytes to each in
// turn, then a wait for all the receives.
func (l meshLine) shoot(phases [][]collOp, c *collCall, bytes, recv int64) [][]collOp {
	posts := len(phases)
	phases = append(phases, nil)
	for i := l.first; i < l.last; i++ {
		if peer := (l.base + i*l.stride) % c.n; peer != c.me {
			phases[posts] = append(phases[posts], collOp{peer: peer, bytes: recv, carry: true})
			phases = append(phases, blockingPhase(true, peer, bytes))
		}
	}
	if len(phases[posts]) == 0 {
		return phases[:posts] // no peer: Request::waitall of none
	}
	return append(phases, []collOp{{wait: waitCarried}})
}

// alltoall2DMesh (alltoall__2dmesh): the ranks as X rows of Y (X <= Y,
// the most square split of n); a rank shoots its whole send buffer along
// its row, then Y blocks to each rank of its column. Where n has no such
// split (1, or a prime above 3), SimGrid returns MPI_ERR_OTHER at once,
// which the replay ignores: no message.
func alltoall2DMesh(phases [][]collOp, c *collCall) [][]collOp {
	n, me := c.n, c.me
	x, y, ok := meshSides2D(n)
	if !ok {
		return phases
	}
	phases = meshLine{me / y * y, 1, 0, y}.shoot(phases, c, c.e.SendBytes*int64(n), meshRowRecv(c))
	return meshLine{me % y, y, 0, x}.shoot(phases, c, c.e.SendBytes*int64(y), c.e.RecvBytes*int64(y))
}

// meshSides2D is SimGrid's alltoall_check_is_2dmesh: the first divisor x
// of n from floor(sqrt(n)) to n/2, as sides x and n/x, the smaller first.
func meshSides2D(n int32) (x, y int32, ok bool) {
	for d := int32(math.Sqrt(float64(n))); d <= n/2; d++ {
		if n%d == 0 {
			return min(d, n/d), max(d, n/d), true
		}
	}
	return 0, 0, false
}

// alltoall3DMesh (alltoall__3dmesh): the ranks as Z planes of X x X; a
// rank shoots its whole send buffer along its row, then the X rows it
// holds to each rank of its column, then its plane's blocks to each rank
// of its Z line (the next planes first, wrapping round). Where n has no
// such split (1, 2, 10, 11...), SimGrid returns MPI_ERR_OTHER at once,
// which the replay ignores: no message.
func alltoall3DMesh(phases [][]collOp, c *collCall) [][]collOp {
	n, me := c.n, c.me
	x, z, ok := meshSides3D(n)
	if !ok {
		return phases
	}
	plane := x * x
	b, rb := c.e.SendBytes*int64(n), c.e.RecvBytes*int64(n)
	phases = meshLine{me / x * x, 1, 0, x}.shoot(phases, c, b, meshRowRecv(c))
	phases = meshLine{me%x + me/plane*plane, x, 0, x}.shoot(phases, c, b*int64(x), rb*int64(x))
	return meshLine{me, plane, 1, z}.shoot(phases, c, c.e.SendBytes*int64(plane), c.e.RecvBytes*int64(plane))
}

// meshRowRecv is the size of the mesh alltoalls' first receives: the
// whole send buffer's count (n send counts) of the receive datatype.
func meshRowRecv(c *collCall) int64 {
	return c.e.SendBytes / max(c.ssize, 1) * int64(c.n) * c.rsize
}

// meshSides3D is SimGrid's alltoall_check_is_3dmesh: the first x from
// floor(cbrt(n)) to n/3 whose square divides n, as sides x, x and n/x².
func meshSides3D(n int32) (x, z int32, ok bool) {
	for d := int32(math.Cbrt(float64(n))); d <= n/3; d++ {
		if n%(d*d) == 0 {
			return d, n / (d * d), true
		}
	}
	return 0, 0, false
}

// alltoallScatterDest (alltoall__mvapich2_scatter_dest): rounds of 4
// peers, each posting the receives from rank+i, then the sends to
// rank-i, its own block included (a message to itself), and waiting for
// all. Nothing when the receive count is 0.
func alltoallScatterDest(c *collCall, p int, ops []collOp) ([]collOp, bool) {
	if c.e.RecvBytes == 0 {
		return ops, false
	}
	return throttledRound(c, p, ops, true, alltoallSize)
}

// alltoallTruncates refuses rdb, 2dmesh and 3dmesh with a send datatype
// larger than the receive one (say MPI_DOUBLE sent, MPI_BYTE received, as
// many bytes each way), where their receives truncate and SimGrid 3.32
// aborts (MPI_ERR_TRUNCATE): the meshes receive whole send buffers along
// their rows into a count of send elements in the receive datatype, and
// rdb adds the receive elements it gets to a count of send elements,
// so that from its second step on it sends more than its partner expects.
func alltoallTruncates(k trace.Kind, algo string, c *collCall) error {
	if c.ssize <= c.rsize || c.e.SendBytes == 0 {
		return nil
	}
	truncates := false
	switch algo {
	case "rdb":
		truncates = c.n >= 3
	case "2dmesh":
		_, _, truncates = meshSides2D(c.n)
	case "3dmesh":
		x, _, ok := meshSides3D(c.n)
		truncates = ok && x > 1 // rows of more than one rank
	}
	if truncates {
		return fmt.Errorf("%s: %s with a send datatype larger than the receive one (%d > %d bytes) on %d ranks is refused: its receives truncate, and SimGrid 3.32 aborts (MPI_ERR_TRUNCATE)",
			k, algo, c.ssize, c.rsize, c.n)
	}
	return nil
}
