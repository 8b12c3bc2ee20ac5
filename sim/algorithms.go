package sim

import "kairos/trace"

// The collective algorithms, as point-to-point operations in phases. Each
// follows the SimGrid 3.32 implementation of the same name message for
// message (order of posting, blocking structure, sizes), so that
// contention is simulated as SimGrid simulates it.

// phaseBuilder appends to phases all the phases of one member of an
// algorithm whose member computes them at once.
type phaseBuilder func(phases [][]collOp, c *collCall) [][]collOp

// phased is the algorithm that runs the phases build computes at phase 0
// (into c.phases).
func phased(build phaseBuilder) algorithm {
	return func(c *collCall, p int, ops []collOp) ([]collOp, bool) {
		if p == 0 {
			c.phases = build(c.phases[:0], c)
		}
		if p >= len(c.phases) {
			return ops, false
		}
		return append(ops, c.phases[p]...), true
	}
}

// blockingPhase is a phase of one blocking send (of bytes) or receive.
func blockingPhase(send bool, peer int32, bytes int64) []collOp {
	return []collOp{{send: send, peer: peer, bytes: bytes, blocking: true}}
}

// one returns ops as the only phase.
func one(p int, ops []collOp) ([]collOp, bool) { return ops, p == 0 }

// ---- barrier ----

var barrierAlgos = map[string][]algorithm{
	"ompi_basic_linear":      {barrierBasicLinear},
	"ompi_recursivedoubling": {barrierRecursiveDoubling},
	"ompi_bruck":             {barrierDissemination},
	"ompi_doublering":        {barrierDoubleRing},
	"ompi_tree":              {barrierTree},
	"ompi_two_procs":         {barrierTwoProcs},
	"mvapich2_pair":          {barrierMvapich2Pair},
}

// barrierDoubleRing (barrier__ompi_doublering): a token goes twice round
// the ring from rank 0, each rank receiving from its left and sending to
// its right with blocking operations.
func barrierDoubleRing(c *collCall, p int, ops []collOp) ([]collOp, bool) {
	if p == 0 {
		c.steps = c.steps[:0]
		left, right := (c.me-1+c.n)%c.n, (c.me+1)%c.n
		for range 2 {
			if c.me > 0 {
				c.steps = append(c.steps, collOp{peer: left, blocking: true})
			}
			c.steps = append(c.steps, collOp{send: true, peer: right, blocking: true})
			if c.me == 0 {
				c.steps = append(c.steps, collOp{peer: left, blocking: true})
			}
		}
	}
	return stepAt(c, p, ops)
}

// barrierTree (barrier__ompi_tree): up a binomial tree over the next
// power of two (a rank receives from its children, then sends to its
// parent), then down it, with blocking operations.
func barrierTree(c *collCall, p int, ops []collOp) ([]collOp, bool) {
	if p == 0 {
		c.steps = c.steps[:0]
		n, me := c.n, c.me
		depth := int32(1)
		for depth < n {
			depth <<= 1
		}
		// A step up the tree sends to the lower rank; down, to the higher.
		step := func(jump int32, up bool) {
			partner := me ^ jump
			if partner&(jump-1) != 0 || partner >= n || partner == me {
				return
			}
			send := partner < me == up
			c.steps = append(c.steps, collOp{send: send, peer: partner, blocking: true})
		}
		for jump := int32(1); jump < depth; jump <<= 1 {
			step(jump, true)
		}
		for jump := depth >> 1; jump > 0; jump >>= 1 {
			step(jump, false)
		}
	}
	return stepAt(c, p, ops)
}

// barrierTwoProcs (barrier__ompi_two_procs): a sendrecv with rank+1
// modulo 2 (meant for two ranks).
func barrierTwoProcs(c *collCall, p int, ops []collOp) ([]collOp, bool) {
	return one(p, append(ops, collOp{sr: true, peer: (c.me + 1) & 1}))
}

// barrierBasicLinear: every rank sends 0 bytes to rank 0 and waits for
// its answer; rank 0 receives from all, then sends to all.
func barrierBasicLinear(c *collCall, p int, ops []collOp) ([]collOp, bool) {
	if c.me > 0 {
		switch p {
		case 0:
			return append(ops, collOp{send: true, peer: 0, blocking: true}), true
		case 1:
			return append(ops, collOp{peer: 0, blocking: true}), true
		}
		return ops, false
	}
	if p > 1 {
		return ops, false
	}
	for i := int32(1); i < c.n; i++ {
		ops = append(ops, collOp{send: p == 1, peer: i})
	}
	return ops, true
}

// barrierRecursiveDoubling is Open MPI's recursive doubling barrier
// (sendrecv of 0 bytes with rank ^ mask), with the extra ranks of a
// non-power-of-two size folded onto the lower ones.
func barrierRecursiveDoubling(c *collCall, p int, ops []collOp) ([]collOp, bool) {
	n, me := c.n, c.me
	adj := int32(1)
	for adj <= n {
		adj <<= 1
	}
	adj >>= 1
	if p == 0 {
		c.steps = c.steps[:0]
		if adj != n {
			if me >= adj {
				c.steps = append(c.steps, collOp{sr: true, peer: me - adj})
				goto built
			} else if me < n-adj {
				c.steps = append(c.steps, collOp{peer: me + adj, blocking: true})
			}
		}
		for mask := int32(1); mask < adj; mask <<= 1 {
			c.steps = append(c.steps, collOp{sr: true, peer: me ^ mask})
		}
		if adj != n && me < n-adj {
			c.steps = append(c.steps, collOp{send: true, peer: me + adj, blocking: true})
		}
	}
built:
	return stepAt(c, p, ops)
}

// barrierDissemination is the Bruck / dissemination barrier: in round k,
// send to rank + 2^k and receive from rank - 2^k.
func barrierDissemination(c *collCall, p int, ops []collOp) ([]collOp, bool) {
	d := int32(1) << uint(p)
	if d >= c.n {
		return ops, false
	}
	return append(ops, collOp{send: true, peer: (c.me + d) % c.n}, collOp{peer: (c.me - d + c.n) % c.n}), true
}

// ---- bcast ----

var bcastAlgos = map[string][]algorithm{
	"binomial_tree":         {bcastBinomial},
	"flattree":              {bcastFlat},
	"scatter_rdb_allgather": {bcastScatterRDBAllgather},
	"scatter_LR_allgather":  {bcastScatterLRAllgather},
	"flattree_pipeline":     {bcastFlattreePipeline},
}

// bcastBinomial (SimGrid's bcast__binomial_tree): receive from the parent
// (blocking), then send to each child in turn with blocking sends,
// farthest child first.
func bcastBinomial(c *collCall, p int, ops []collOp) ([]collOp, bool) {
	if p == 0 {
		c.steps = c.steps[:0]
		n, me := c.n, c.me
		rel := me - c.root
		if rel < 0 {
			rel += n
		}
		mask := int32(1)
		for mask < n {
			if rel&mask != 0 {
				src := me - mask
				if src < 0 {
					src += n
				}
				c.steps = append(c.steps, collOp{peer: src, bytes: collBytes(c), blocking: true, typed: true})
				break
			}
			mask <<= 1
		}
		for mask >>= 1; mask > 0; mask >>= 1 {
			if rel+mask < n {
				dst := me + mask
				if dst >= n {
					dst -= n
				}
				c.steps = append(c.steps, collOp{send: true, peer: dst, bytes: collBytes(c), blocking: true, typed: true})
			}
		}
	}
	return stepAt(c, p, ops)
}

// bcastFlat: the root sends to every other rank (non-blocking), the others
// receive.
func bcastFlat(c *collCall, p int, ops []collOp) ([]collOp, bool) {
	if c.me != c.root {
		return one(p, append(ops, collOp{peer: c.root, bytes: collBytes(c), blocking: true}))
	}
	for i := int32(0); i < c.n; i++ {
		if i != c.root {
			ops = append(ops, collOp{send: true, peer: i, bytes: collBytes(c)})
		}
	}
	return one(p, ops)
}

// collBytes is the size of the message of a single-buffer collective.
func collBytes(c *collCall) int64 {
	if c.override > 0 {
		return c.override
	}
	if c.e.SendBytes != 0 {
		return c.e.SendBytes
	}
	return c.e.RecvBytes
}

// ---- reduce ----

var reduceAlgos = map[string][]algorithm{
	"default":          {reduceLinear},
	"binomial":         {reduceBinomial},
	"scatter_gather":   {reduceScatterGather},
	"flat_tree":        {reduceFlatTree},
	"mvapich2_knomial": {reduceMvapich2Knomial},
}

// reduceScatterGather (reduce__scatter_gather, Rabenseifner's reduce from
// MPICH): the ranks beyond the largest power of two pof2 fold onto their
// even neighbours, a recursive-halving reduce-scatter (sendrecv) leaves
// each of pof2 members one block of count/pof2 elements, then a binomial
// gather (blocking) brings the blocks to the root. Nothing moves for a
// count of zero. SimGrid pads a count below the size to it; on a size
// that is not a power of two it then aborts, and selectAlgorithm refuses
// those counts.
func reduceScatterGather(c *collCall, p int, ops []collOp) ([]collOp, bool) {
	if p == 0 {
		c.steps = c.steps[:0]
		var count int64
		if c.ssize > 0 {
			count = collBytes(c) / c.ssize
		}
		if count > 0 {
			// Below one element per rank, SimGrid pads the vector to
			// one per rank (on powers of two: selectAlgorithm refuses
			// the others).
			count = max(count, int64(c.n))
			c.steps = rabenseifnerReduce(c.steps, c.n, c.me, c.root, count, c.ssize)
		}
	}
	return stepAt(c, p, ops)
}

// rabenseifnerReduce appends member me's operations of reduce__scatter_gather
// for count elements of size bytes, following its index arithmetic.
func rabenseifnerReduce(steps []collOp, n, me, root int32, count, size int64) []collOp {
	pof2 := int32(1)
	for pof2*2 <= n {
		pof2 *= 2
	}
	rem := n - pof2
	rankOf := func(newrank int32) int32 {
		if newrank < rem {
			return newrank * 2
		}
		return newrank + rem
	}
	newrank := me - rem
	if me < 2*rem {
		if me%2 != 0 {
			steps = append(steps, collOp{send: true, peer: me - 1, bytes: count * size, blocking: true})
			newrank = -1
		} else {
			steps = append(steps, collOp{peer: me + 1, bytes: count * size, blocking: true})
			newrank = me / 2
		}
	}
	// The pof2 blocks are of count/pof2 elements, the last of the rest.
	block := count / int64(pof2)
	lastBlock := count - block*int64(pof2-1)
	sum := func(from, to int32) int64 { // elements of blocks [from, to)
		if from >= to {
			return 0
		}
		t := int64(to-from) * block
		if to == pof2 {
			t += lastBlock - block
		}
		return t
	}
	sendIdx, recvIdx, lastIdx := int32(0), int32(0), pof2
	if newrank != -1 {
		for mask := int32(1); mask < pof2; {
			newdst := newrank ^ mask
			var sendCnt, recvCnt int64
			if newrank < newdst {
				sendIdx = recvIdx + pof2/(mask*2)
				sendCnt, recvCnt = sum(sendIdx, lastIdx), sum(recvIdx, sendIdx)
			} else {
				recvIdx = sendIdx + pof2/(mask*2)
				sendCnt, recvCnt = sum(sendIdx, recvIdx), sum(recvIdx, lastIdx)
			}
			steps = append(steps, collOp{sr: true, peer: rankOf(newdst), bytes: sendCnt * size, rbytes: recvCnt * size})
			sendIdx = recvIdx
			mask <<= 1
			if mask < pof2 {
				lastIdx = recvIdx + pof2/mask
			}
		}
	}
	// The gather to the root.
	newroot := root - rem
	if root < 2*rem {
		newroot = root / 2
		if root%2 != 0 {
			switch {
			case me == root:
				steps = append(steps, collOp{peer: 0, bytes: sum(0, 1) * size, blocking: true})
				newrank, sendIdx, lastIdx = 0, 0, 2
			case newrank == 0:
				steps = append(steps, collOp{send: true, peer: root, bytes: sum(0, 1) * size, blocking: true})
				newrank = -1
			}
			newroot = 0
		}
	}
	if newrank == -1 {
		return steps
	}
	j := int32(0)
	for m := int32(1); m < pof2; m <<= 1 {
		j++
	}
	j--
	for mask := pof2 >> 1; mask > 0; mask, j = mask>>1, j-1 {
		newdst := newrank ^ mask
		dst := rankOf(newdst)
		if newdst == 0 && root < 2*rem && root%2 != 0 {
			dst = root
		}
		var sendCnt, recvCnt int64
		if newrank < newdst {
			if mask != pof2/2 {
				lastIdx += pof2 / (mask * 2)
			}
			recvIdx = sendIdx + pof2/(mask*2)
			sendCnt, recvCnt = sum(sendIdx, recvIdx), sum(recvIdx, lastIdx)
		} else {
			recvIdx = sendIdx - pof2/(mask*2)
			sendCnt, recvCnt = sum(sendIdx, lastIdx), sum(recvIdx, sendIdx)
		}
		if newdst>>j<<j == newroot>>j<<j {
			return append(steps, collOp{send: true, peer: dst, bytes: sendCnt * size, blocking: true})
		}
		steps = append(steps, collOp{peer: dst, bytes: recvCnt * size, blocking: true})
		if newrank > newdst {
			sendIdx = recvIdx
		}
	}
	return steps
}

// reduceBinomial (reduce__binomial; MPI_OP_NULL is commutative, so the
// tree is rooted at the root): in round k a rank whose relative rank has
// bit k set sends its partial result to the rank without it and leaves;
// the others first receive from the rank with it, one blocking operation
// after the other. Nothing moves for a count of zero.
func reduceBinomial(c *collCall, p int, ops []collOp) ([]collOp, bool) {
	if p == 0 {
		c.steps = c.steps[:0]
		n, bytes := c.n, collBytes(c)
		rel := (c.me - c.root + n) % n
		for mask := int32(1); mask < n && bytes != 0; mask <<= 1 {
			if rel&mask == 0 {
				if src := rel | mask; src < n {
					c.steps = append(c.steps, collOp{peer: (src + c.root) % n, bytes: bytes, blocking: true})
				}
				continue
			}
			c.steps = append(c.steps, collOp{send: true, peer: (rel&^mask + c.root) % n, bytes: bytes, blocking: true})
			break
		}
	}
	return stepAt(c, p, ops)
}

// stepAt returns c.steps[p], one blocking operation, as phase p.
func stepAt(c *collCall, p int, ops []collOp) ([]collOp, bool) {
	if p >= len(c.steps) {
		return ops, false
	}
	return append(ops, c.steps[p]), true
}

// inOrderBinomial returns c.me's parent (-1 at the root) and children,
// nearest first, in Open MPI's in-order binomial tree rooted at c.root
// (SimGrid's ompi_coll_tuned_topo_build_in_order_bmtree).
func inOrderBinomial(c *collCall) (parent int32, children []int32) {
	n := c.n
	vrank := (c.me - c.root + n) % n
	parent = -1
	for mask := int32(1); mask < n; mask <<= 1 {
		remote := vrank ^ mask
		if remote < vrank {
			parent = (remote + c.root) % n
			break
		}
		if remote < n {
			children = append(children, (remote+c.root)%n)
		}
	}
	return parent, children
}

// subtreeBlocks is how many members' blocks the subtree of child holds in
// Open MPI's in-order binomial tree of c (as gather and scatter
// ompi_binomial count them).
func subtreeBlocks(c *collCall, child int32) int64 {
	n := c.n
	vrank := (c.me - c.root + n) % n
	vkid := (child - c.root + n) % n
	return int64(min(vkid-vrank, n-vkid))
}

// reduceLinear (SimGrid's ireduce, used by reduce__default): every rank
// sends its buffer to the root, which receives from all in rank order.
func reduceLinear(c *collCall, p int, ops []collOp) ([]collOp, bool) {
	b := collBytes(c)
	return gatherTo(c, p, ops, b, func(int32) int64 { return b })
}

// gatherTo is every member sending bytes to the root, which receives
// recvBytes(i) from each member i.
func gatherTo(c *collCall, p int, ops []collOp, bytes int64, recvBytes func(int32) int64) ([]collOp, bool) {
	if c.me != c.root {
		return one(p, append(ops, collOp{send: true, peer: c.root, bytes: bytes, typed: true}))
	}
	for i := int32(0); i < c.n; i++ {
		if i != c.root {
			ops = append(ops, collOp{peer: i, bytes: recvBytes(i), typed: true})
		}
	}
	return one(p, ops)
}

// blockFrom returns the size of the block c's member receives from member
// i: its receive size, or its i-th receive count for a v-collective.
func blockFrom(c *collCall, i int32) int64 {
	if c.e.RecvCounts != nil {
		return c.e.RecvCounts[i]
	}
	return c.e.RecvBytes
}

// ---- allreduce ----

var allreduceAlgos = map[string][]algorithm{
	"default":     {reduceAtZero, bcastAtZero},
	"redbcast":    nil, // made of other collectives: see composites
	"lr":          nil,
	"rdb":         {allreduceRDB},
	"rab_rdb":     {allreduceRabenseifner},
	"mvapich2_rs": {allreduceMvapich2RS},
	"rab1":        nil,
	"rab2":        nil,
}

// allreduceRabenseifner is SimGrid's allreduce__rab_rdb: Rabenseifner's
// reduce-scatter by recursive halving then allgather by recursive
// doubling, on the largest power of two of ranks (the others first hand
// their data to a neighbour and get the result back at the end).
func allreduceRabenseifner(c *collCall, p int, ops []collOp) ([]collOp, bool) {
	if p == 0 {
		c.steps = rabSteps(c, c.steps[:0], false)
	}
	return stepAt(c, p, ops)
}

// allreduceMvapich2RS (allreduce__mvapich2_rs): MVAPICH2's copy of the
// same algorithm, which sends nothing for 0 elements and, below one
// element per member of the power of two, exchanges the whole vector by
// recursive doubling instead of halving it.
func allreduceMvapich2RS(c *collCall, p int, ops []collOp) ([]collOp, bool) {
	if p == 0 {
		c.steps = c.steps[:0]
		if c.ssize > 0 && c.e.SendBytes/c.ssize > 0 {
			c.steps = rabSteps(c, c.steps, true)
		}
	}
	return stepAt(c, p, ops)
}

// rabSteps appends c.me's steps of allreduce__rab_rdb, or with doubling
// those of allreduce__mvapich2_rs (recursive doubling below one element
// per member of the power of two).
func rabSteps(c *collCall, steps []collOp, doubling bool) []collOp {
	n, me, ds := c.n, c.me, c.ssize
	count := int64(0)
	if ds > 0 {
		count = c.e.SendBytes / ds
	}
	pof2 := int32(1)
	for pof2 <= n {
		pof2 <<= 1
	}
	pof2 >>= 1
	rem := n - pof2
	newrank := int32(-1)
	switch {
	case me < 2*rem && me%2 == 0:
		steps = append(steps, collOp{send: true, peer: me + 1, bytes: count * ds, blocking: true})
	case me < 2*rem:
		steps = append(steps, collOp{peer: me - 1, bytes: count * ds, blocking: true})
		newrank = me / 2
	default:
		newrank = me - rem
	}
	peer := func(nd int32) int32 {
		if nd < rem {
			return nd*2 + 1
		}
		return nd + rem
	}
	if newrank >= 0 && doubling && count < int64(pof2) {
		for mask := int32(1); mask < pof2; mask <<= 1 {
			steps = append(steps, collOp{sr: true, peer: peer(newrank ^ mask), bytes: count * ds, rbytes: count * ds})
		}
	} else if newrank >= 0 {
		cnts := make([]int64, pof2)
		for i := range cnts {
			cnts[i] = count / int64(pof2)
		}
		cnts[pof2-1] = count - count/int64(pof2)*int64(pof2-1)
		sum := func(lo, hi int32) int64 {
			t := int64(0)
			for i := lo; i < hi; i++ {
				t += cnts[i]
			}
			return t
		}
		var sendIdx, recvIdx int32
		lastIdx := pof2
		mask := int32(1)
		for ; mask < pof2; mask <<= 1 {
			nd := newrank ^ mask
			var send, recv int64
			if newrank < nd {
				sendIdx = recvIdx + pof2/(mask*2)
				send, recv = sum(sendIdx, lastIdx), sum(recvIdx, sendIdx)
			} else {
				recvIdx = sendIdx + pof2/(mask*2)
				send, recv = sum(sendIdx, recvIdx), sum(recvIdx, lastIdx)
			}
			steps = append(steps, collOp{sr: true, peer: peer(nd), bytes: send * ds, rbytes: recv * ds})
			sendIdx = recvIdx
			if mask*2 < pof2 {
				lastIdx = recvIdx + pof2/(mask*2)
			}
		}
		for mask >>= 1; mask > 0; mask >>= 1 {
			nd := newrank ^ mask
			var send, recv int64
			if newrank < nd {
				if mask != pof2/2 {
					lastIdx += pof2 / (mask * 2)
				}
				recvIdx = sendIdx + pof2/(mask*2)
				send, recv = sum(sendIdx, recvIdx), sum(recvIdx, lastIdx)
			} else {
				recvIdx = sendIdx - pof2/(mask*2)
				send, recv = sum(sendIdx, lastIdx), sum(recvIdx, sendIdx)
			}
			steps = append(steps, collOp{sr: true, peer: peer(nd), bytes: send * ds, rbytes: recv * ds})
			if newrank > nd {
				sendIdx = recvIdx
			}
		}
	}
	if me < 2*rem {
		if me%2 == 1 {
			steps = append(steps, collOp{send: true, peer: me - 1, bytes: count * ds, blocking: true})
		} else {
			steps = append(steps, collOp{peer: me + 1, bytes: count * ds, blocking: true})
		}
	}
	return steps
}

func reduceAtZero(c *collCall, p int, ops []collOp) ([]collOp, bool) {
	saved := c.root
	c.root = 0
	ops, ok := reduceLinear(c, p, ops)
	c.root = saved
	return ops, ok
}

func bcastAtZero(c *collCall, p int, ops []collOp) ([]collOp, bool) {
	c.root = 0
	return bcastBinomial(c, p, ops)
}

// allreduceRDB is recursive doubling: exchange the whole buffer with
// rank ^ 2^k (non-power-of-two sizes fold the extra ranks first).
func allreduceRDB(c *collCall, p int, ops []collOp) ([]collOp, bool) {
	n, me, b := c.n, c.me, collBytes(c)
	pof2 := int32(1)
	for pof2*2 <= n {
		pof2 *= 2
	}
	rem := n - pof2
	if p == 0 {
		c.steps = c.steps[:0]
		newrank := int32(-1)
		switch {
		case me < 2*rem && me%2 == 0:
			c.steps = append(c.steps, collOp{send: true, peer: me + 1, bytes: b, blocking: true})
		case me < 2*rem:
			c.steps = append(c.steps, collOp{peer: me - 1, bytes: b, blocking: true})
			newrank = me / 2
		default:
			newrank = me - rem
		}
		if newrank >= 0 {
			for mask := int32(1); mask < pof2; mask <<= 1 {
				nd := newrank ^ mask
				dst := nd + rem
				if nd < rem {
					dst = nd*2 + 1
				}
				c.steps = append(c.steps, collOp{sr: true, peer: dst, bytes: b, rbytes: b})
			}
		}
		if me < 2*rem {
			if me%2 == 1 {
				c.steps = append(c.steps, collOp{send: true, peer: me - 1, bytes: b, blocking: true})
			} else {
				c.steps = append(c.steps, collOp{peer: me + 1, bytes: b, blocking: true})
			}
		}
	}
	return stepAt(c, p, ops)
}

// lrSplit returns the elements of an allreduce and SimGrid's allreduce__lr
// decomposition: count elements per ring block, rem left over.
func lrSplit(c *collCall) (elems, count, rem int64) {
	if c.ssize > 0 {
		elems = collBytes(c) / c.ssize
	}
	return elems, elems / int64(c.n), elems % int64(c.n)
}

func init() {
	composites["allreduce:redbcast"] = allreduceRedBcast
	composites["allreduce:lr"] = allreduceLR
}

// allreduceRedBcast (allreduce__redbcast): a reduce to rank 0, then a
// bcast from it, each with the algorithm configured for it.
func allreduceRedBcast(*collCall) []subColl {
	return []subColl{{kind: trace.Reduce, root: 0}, {kind: trace.Bcast, root: 0}}
}

// allreduceLR (allreduce__lr): with fewer elements than ranks, redbcast;
// else a ring of elements/n per rank (allreduceRing), then the remaining
// elements with the allreduce configured.
func allreduceLR(c *collCall) []subColl {
	elems, _, rem := lrSplit(c)
	if elems < int64(c.n) {
		return allreduceRedBcast(c)
	}
	subs := []subColl{{run: allreduceRing, root: c.root}}
	if rem > 0 {
		subs = append(subs, subColl{kind: trace.Allreduce, root: c.root, bytes: rem * c.ssize})
	}
	return subs
}

// allreduceRing is the ring of SimGrid's allreduce__lr: a ring
// reduce-scatter then a ring allgather, n-1 sendrecv steps each of
// elements/n elements.
func allreduceRing(c *collCall, p int, ops []collOp) ([]collOp, bool) {
	n, me := c.n, c.me
	_, count, _ := lrSplit(c)
	if p >= int(2*(n-1)) {
		return ops, false
	}
	return append(ops, collOp{send: true, peer: (me + 1) % n, bytes: count * c.ssize}, collOp{peer: (me - 1 + n) % n, bytes: count * c.ssize}), true
}

// ---- alltoall ----

var alltoallAlgos = map[string][]algorithm{
	"basic_linear": {alltoallLinear},
	"pair":         {alltoallPair},
	"bruck":        {alltoallBruck},
	"ring":         {alltoallRing},
}

// alltoallLinear (alltoall__basic_linear): receives from rank+1, rank+2...
// first, then sends in reverse order rank-1, rank-2..., all at once.
func alltoallLinear(c *collCall, p int, ops []collOp) ([]collOp, bool) {
	n, me := c.n, c.me
	for i := (me + 1) % n; i != me; i = (i + 1) % n {
		ops = append(ops, collOp{peer: i, bytes: c.e.RecvBytes})
	}
	for i := (me + n - 1) % n; i != me; i = (i + n - 1) % n {
		ops = append(ops, collOp{send: true, peer: i, bytes: c.e.SendBytes})
	}
	return one(p, ops)
}

// alltoallPair (alltoall__pair): n-1 sendrecv steps with rank ^ i.
func alltoallPair(c *collCall, p int, ops []collOp) ([]collOp, bool) {
	return pairExchanges.steps(c, p, ops)
}

// alltoallRing (alltoall__ring, and allgather__ring and allgatherv__ring):
// n-1 sendrecv steps, sending our send size to rank+i and receiving from
// rank-i.
func alltoallRing(c *collCall, p int, ops []collOp) ([]collOp, bool) {
	return ringExchanges.steps(c, p, ops)
}

// alltoallBruck (alltoall__bruck): for each power of two k < n, a
// sendrecv to rank+k and from rank-k of the blocks whose index has bit k,
// packed (count x sendcount elements of the receive type). The local
// rotations are copies.
func alltoallBruck(c *collCall, p int, ops []collOp) ([]collOp, bool) {
	n, me := c.n, c.me
	pof2 := int32(1) << uint(p)
	if pof2 >= n {
		return ops, false
	}
	blocks := int64(0)
	for b := int32(1); b < n; b++ {
		if b&pof2 != 0 {
			blocks++
		}
	}
	count := int64(0)
	if c.ssize > 0 {
		count = c.e.SendBytes / c.ssize
	}
	bytes := blocks * count * c.rsize
	return append(ops, collOp{send: true, peer: (me + pof2) % n, bytes: bytes}, collOp{peer: (me - pof2 + n) % n, bytes: bytes}), true
}

// ---- alltoallv ----

var alltoallvAlgos = map[string][]algorithm{
	"default": {alltoallvLinear},
	"pair":    {alltoallvPair},
	"ring":    {alltoallvRing},
	"bruck":   {alltoallvBruck},
}

// alltoallvBruck (alltoallv__bruck, which despite its name is MPICH's
// throttled linear exchange): rounds of 4 peers, each posting the
// receives from rank+i, then the sends to rank-i, and waiting for all.
func alltoallvBruck(c *collCall, p int, ops []collOp) ([]collOp, bool) {
	return throttledRound(c, p, ops, false, alltoallvSize)
}

// throttledRound appends round p of a linear exchange throttled to 4
// peers a round (MPICH's, MVAPICH2's) of the call's buffers: the receives
// of the blocks of rank+4p+i, then the sends of size bytes to rank-4p-i,
// for 0 <= i < 4, those with itself only if self. It reports false past
// the last round.
func throttledRound(c *collCall, p int, ops []collOp, self bool, size func(*collCall, int32) int64) ([]collOp, bool) {
	const block = 4 // MPIR_PARAM_ALLTOALL_THROTTLE, MV2_ALLTOALL_THROTTLE_FACTOR
	n, me := c.n, c.me
	ii := int32(p) * block
	start := len(ops)
	for i := ii; i < min(ii+block, n); i++ {
		if src := (me + i) % n; self || src != me {
			ops = append(ops, collOp{peer: src, bytes: blockFrom(c, src), typed: true})
		}
	}
	for i := ii; i < min(ii+block, n); i++ {
		if dst := (me - i + n) % n; self || dst != me {
			ops = append(ops, collOp{send: true, peer: dst, bytes: size(c, dst), typed: true})
		}
	}
	return ops, len(ops) > start
}

// alltoallvPair (alltoallv__pair, power-of-two sizes): n-1 sendrecv
// steps with rank ^ i (the step with itself is a local copy).
func alltoallvPair(c *collCall, p int, ops []collOp) ([]collOp, bool) {
	return pairvExchanges.steps(c, p, ops)
}

// alltoallvRing (alltoallv__ring): as pair on a power-of-two size, else
// n-1 sendrecv steps to rank+i and from rank-i.
func alltoallvRing(c *collCall, p int, ops []collOp) ([]collOp, bool) {
	if c.n&(c.n-1) == 0 {
		return pairvExchanges.steps(c, p, ops)
	}
	return ringvExchanges.steps(c, p, ops)
}

// alltoallvLinear (ialltoallv): receives from every other rank in rank
// order, then sends to every other rank in rank order, zero-byte messages
// included.
func alltoallvLinear(c *collCall, p int, ops []collOp) ([]collOp, bool) {
	for i := int32(0); i < c.n; i++ {
		if i != c.me {
			ops = append(ops, collOp{peer: i, bytes: c.e.RecvCounts[i], typed: true})
		}
	}
	for i := int32(0); i < c.n; i++ {
		if i != c.me {
			ops = append(ops, collOp{send: true, peer: i, bytes: c.e.SendCounts[i], typed: true})
		}
	}
	return one(p, ops)
}

// ---- gather / scatter ----

var gatherAlgos = map[string][]algorithm{
	"default":       {gatherLinear},
	"ompi_binomial": {gatherBinomial},
}

// gatherBinomial (gather__ompi_binomial): up Open MPI's in-order binomial
// tree, every inner node receives its children's blocks, nearest child
// first, then every member but the root sends all it holds to its parent,
// each a blocking operation. Members that would gather their blocks in a
// temporary buffer (a root other than 0, even virtual ranks) give up at
// once when asking it 0 bytes while it is still null (growTmpBuffers).
func gatherBinomial(c *collCall, p int, ops []collOp) ([]collOp, bool) {
	if binomialGivesUp(c, c.e.RecvBytes, c.tmpRecvNull, c.e.SendBytes, c.tmpSendNull) {
		return ops, false
	}
	if p == 0 {
		c.steps = c.steps[:0]
		parent, children := inOrderBinomial(c)
		blocks := int64(1)
		block := c.e.SendBytes // Open MPI's receive count and type off the root
		if parent < 0 {
			block = c.e.RecvBytes
		}
		for _, k := range children {
			c.steps = append(c.steps, collOp{peer: k, bytes: subtreeBlocks(c, k) * block, blocking: true})
			blocks += subtreeBlocks(c, k)
		}
		if parent >= 0 {
			c.steps = append(c.steps, collOp{send: true, peer: parent, bytes: blocks * c.e.SendBytes, blocking: true})
		}
	}
	return stepAt(c, p, ops)
}

// binomialGivesUp reports whether c's member of Open MPI's binomial gather
// or scatter asks SimGrid 3.32's replay for an empty temporary buffer that
// is still null, and so returns at once (MPI_ERR_OTHER): a root other than
// 0 asks rootBytes x size of one (rootNull), another member of even
// virtual rank bytes x size of the other (null).
func binomialGivesUp(c *collCall, rootBytes int64, rootNull bool, bytes int64, null bool) bool {
	if c.me == c.root {
		return c.root != 0 && rootBytes == 0 && rootNull
	}
	return (c.me-c.root+c.n)%c.n%2 == 0 && bytes == 0 && null
}

// gatherLinear (igather, igatherv): every rank sends to the root.
func gatherLinear(c *collCall, p int, ops []collOp) ([]collOp, bool) {
	return gatherTo(c, p, ops, c.e.SendBytes, func(i int32) int64 { return blockFrom(c, i) })
}

var scatterAlgos = map[string][]algorithm{
	"default":       {scatterLinear},
	"ompi_binomial": {scatterBinomial},
}

// scatterBinomial (scatter__ompi_binomial): down Open MPI's in-order
// binomial tree, every member but the root receives its subtree's blocks
// from its parent, then every inner node sends each child its subtree's
// blocks, nearest child first, each a blocking operation. The root's
// blocks are its send size, an inner node's its receive size. Members
// that would hold their subtree's blocks in a temporary buffer give up as
// gatherBinomial's do.
func scatterBinomial(c *collCall, p int, ops []collOp) ([]collOp, bool) {
	if binomialGivesUp(c, c.e.SendBytes, c.tmpSendNull, c.e.RecvBytes, c.tmpRecvNull) {
		return ops, false
	}
	if p == 0 {
		c.steps = c.steps[:0]
		parent, children := inOrderBinomial(c)
		block := c.e.SendBytes
		if parent >= 0 {
			// Open MPI's even virtual ranks receive into a buffer of n
			// blocks, asking for all of them; the others their block.
			recv := c.e.RecvBytes
			if (c.me-c.root+c.n)%c.n%2 == 0 {
				recv *= int64(c.n)
			}
			c.steps = append(c.steps, collOp{peer: parent, bytes: recv, blocking: true})
			block = c.e.RecvBytes
		}
		for _, k := range children {
			c.steps = append(c.steps, collOp{send: true, peer: k, bytes: subtreeBlocks(c, k) * block, blocking: true})
		}
	}
	return stepAt(c, p, ops)
}

// scatterLinear (iscatter): the root sends a block to every rank.
func scatterLinear(c *collCall, p int, ops []collOp) ([]collOp, bool) {
	if c.me != c.root {
		return one(p, append(ops, collOp{peer: c.root, bytes: c.e.RecvBytes, typed: true}))
	}
	for i := int32(0); i < c.n; i++ {
		if i != c.root {
			ops = append(ops, collOp{send: true, peer: i, bytes: c.e.SendBytes, typed: true})
		}
	}
	return one(p, ops)
}

// scattervLinear (iscatterv): the root sends SendCounts[i] to rank i,
// which receives its receive size.
func scattervLinear(c *collCall, p int, ops []collOp) ([]collOp, bool) {
	return scatterCounts(c, p, ops, c.e.SendCounts, c.e.RecvBytes)
}

// scatterCounts is the root sending counts[i] bytes to each member i,
// which receives recv bytes.
func scatterCounts(c *collCall, p int, ops []collOp, counts []int64, recv int64) ([]collOp, bool) {
	if c.me != c.root {
		return one(p, append(ops, collOp{peer: c.root, bytes: recv, typed: true}))
	}
	for i := int32(0); i < c.n; i++ {
		if i != c.root {
			ops = append(ops, collOp{send: true, peer: i, bytes: counts[i], typed: true})
		}
	}
	return one(p, ops)
}

// ---- allgather(v) ----

var allgatherAlgos = map[string][]algorithm{
	"default":               {allgatherLinear},
	"ring":                  {alltoallRing}, // allgather__ring: the same exchanges
	"pair":                  {allgatherPair},
	"bruck":                 {allgatherBruck},
	"rdb":                   {allgatherRDB},
	"spreading_simple":      {allgatherSpreading},
	"ompi_neighborexchange": {allgatherNeighborExchange},
	"rhv":                   {allgatherRHV},
	"2dmesh":                {allgather2DMesh},
	"3dmesh":                {allgather3DMesh},
}

// allgatherNeighborExchange (allgather__ompi_neighborexchange): on an
// even size, even ranks pair with rank+1 then rank-1 alternately: a
// sendrecv of one block, then n/2-1 sendrecvs of two; on an odd size,
// the ring.
func allgatherNeighborExchange(c *collCall, p int, ops []collOp) ([]collOp, bool) {
	n, me := c.n, c.me
	if n%2 != 0 {
		return alltoallRing(c, p, ops)
	}
	next, prev := (me+1)%n, (me-1+n)%n
	nb := [2]int32{next, prev}
	if me%2 != 0 {
		nb = [2]int32{prev, next}
	}
	switch {
	case p == 0:
		return append(ops, collOp{sr: true, peer: nb[0], bytes: c.e.RecvBytes, rbytes: c.e.RecvBytes}), true
	case int32(p) < n/2:
		return append(ops, collOp{sr: true, peer: nb[p%2], bytes: 2 * c.e.RecvBytes, rbytes: 2 * c.e.RecvBytes}), true
	}
	return ops, false
}

// allgatherSpreading (allgather__spreading_simple): receives from rank+1,
// rank+2... then sends to them in the same order, all at once.
func allgatherSpreading(c *collCall, p int, ops []collOp) ([]collOp, bool) {
	n, me := c.n, c.me
	for i := int32(1); i < n; i++ {
		ops = append(ops, collOp{peer: (me + i) % n, bytes: c.e.RecvBytes, typed: true})
	}
	for i := int32(1); i < n; i++ {
		ops = append(ops, collOp{send: true, peer: (me + i) % n, bytes: c.e.SendBytes, typed: true})
	}
	return one(p, ops)
}

// allgatherRDB (allgather__rdb) is recursive doubling: in step k each
// member exchanges (sendrecv) all it holds with rank ^ 2^k; on a size that
// is not a power of two, the members whose partner does not exist get the
// missing blocks down a binomial tree from those that have them, with
// blocking sends and receives. A member sends what it holds and its
// partner's message sets what it holds next, so the schedule is computed
// for all members at once.
func allgatherRDB(c *collCall, p int, ops []collOp) ([]collOp, bool) {
	var count int64
	if c.rsize > 0 {
		count = c.e.RecvBytes / c.rsize
	}
	if p == 0 {
		key := scheduleKey{algo: "allgather_rdb", n: c.n, count: count, ssize: c.ssize, rsize: c.rsize}
		n, rsize := c.n, c.rsize
		c.useSchedule(c.me, key, nil, func() schedule {
			return evenRDB(n, count, c.ssize, rsize, rsize, func(r, mask int32, i int, tree bool) int64 {
				if tree {
					return count * int64(n-treeRoot(r, i)-mask) * rsize // the blocks of the completed members
				}
				return int64(mask) * count * rsize
			})
		})
	}
	return c.sharedPhase(p, ops, 0)
}

// evenRDB is the schedule of recursiveDoubling for n members holding
// count elements each (allgather__rdb: the receive count; alltoall__rdb:
// the whole send buffer).
func evenRDB(n int32, count, ssize, rsize, tsize int64, recv rdbRecv) schedule {
	curr := make([]int64, n)
	for r := range curr {
		curr[r] = count
	}
	return recursiveDoubling(make(schedule, n), curr, ssize, rsize, tsize, recv)
}

// rdbRecv is the size (bytes) recursiveDoubling's member r asks for at
// step i (mask 2^i): in its exchange with r ^ mask, or, with tree, in a
// receive down that step's tree. The algorithms post receives larger
// than the messages, each its own way; SMPI's small-message mode chooses
// their mailbox by that size.
type rdbRecv func(r, mask int32, i int, tree bool) int64

// treeRoot is the first member of r's subtree at step i of a recursive
// doubling (r with its i low bits cleared).
func treeRoot(r int32, i int) int32 { return r >> i << i }

// recursiveDoubling appends to steps the exchanges of the recursive
// doubling loop of allgather__rdb (and of bcast__scatter_rdb_allgather
// and alltoall__rdb) for members holding curr[r] elements each: curr and
// last are each member's curr_count and last_recv_count, the sendrecvs
// send ssize-byte elements and count those received in rsize-byte ones,
// the trees' blocking sends and receives both in tsize-byte ones.
func recursiveDoubling(steps schedule, curr []int64, ssize, rsize, tsize int64, recv rdbRecv) schedule {
	n := int32(len(curr))
	last := make([]int64, n)
	got := make([]int64, n)
	received := func(bytes int64) int64 { // Status::get_count in elements of rsize
		if rsize <= 0 {
			return 0
		}
		return bytes / rsize
	}
	take := func() {
		for r := range got {
			if got[r] >= 0 {
				last[r] = got[r]
				curr[r] += got[r]
			}
		}
	}
	for i, mask := 0, int32(1); mask < n; i, mask = i+1, mask<<1 {
		for r := int32(0); r < n; r++ {
			got[r] = -1
			if dst := r ^ mask; dst < n {
				steps[r] = append(steps[r], []collOp{{sr: true, peer: dst, bytes: curr[r] * ssize, rbytes: recv(r, mask, i, false)}})
				got[r] = received(curr[dst] * ssize)
			}
		}
		take()
		// The tree part, level by level (tmp_mask from mask/2 down).
		k := 0
		for j := mask; j > 1; j >>= 1 {
			k++
		}
		for tmp, kk := mask>>1, k; tmp > 0; tmp, kk = tmp>>1, kk-1 {
			for r := int32(0); r < n; r++ {
				got[r] = -1
				if (r^mask)>>i<<i+mask <= n {
					continue
				}
				done := n - r>>i<<i - mask // num_procs_completed
				root := r >> kk << kk
				switch d := r ^ tmp; {
				case d > r && r < root+done && d >= root+done:
					steps[r] = append(steps[r], []collOp{{send: true, peer: d, bytes: last[r] * tsize, blocking: true}})
				case d < r && d < root+done && r >= root+done:
					steps[r] = append(steps[r], []collOp{{peer: d, bytes: recv(r, mask, i, true), blocking: true}})
					got[r] = last[d]
				}
			}
			take()
		}
	}
	return steps
}

// bcastScatterRDBAllgather (bcast__scatter_rdb_allgather, Van de Geijn's
// long-message broadcast): the root scatters the buffer in n pieces of
// ceil(bytes/n) down a binomial tree, then the members allgather them by
// recursive doubling.
func bcastScatterRDBAllgather(c *collCall, p int, ops []collOp) ([]collOp, bool) {
	return bcastRelative(c, p, ops, "bcast_scatter_rdb_allgather", scatterRDBAllgatherSchedule)
}

// bcastScatterLRAllgather (bcast__scatter_LR_allgather): the same scatter,
// then a ring allgather of the pieces (n-1 steps, each sending a piece to
// the next member and receiving one from the previous).
func bcastScatterLRAllgather(c *collCall, p int, ops []collOp) ([]collOp, bool) {
	return bcastRelative(c, p, ops, "bcast_scatter_LR_allgather", scatterLRAllgatherSchedule)
}

// bcastRelative runs phase p of a broadcast whose sizes depend on one
// another's, its schedule, in ranks relative to the root, computed by
// build for all members at once.
func bcastRelative(c *collCall, p int, ops []collOp, algo string, build func(n int32, nbytes int64) schedule) ([]collOp, bool) {
	if p == 0 {
		nbytes := collBytes(c)
		key := scheduleKey{algo: algo, n: c.n, count: nbytes}
		rel := (c.me - c.root + c.n) % c.n
		c.useSchedule(rel, key, nil, func() schedule { return build(c.n, nbytes) })
	}
	return c.sharedPhase(p, ops, c.root)
}

// scatterForBcast returns the blocking sends and receives of MPICH's
// binomial scatter of nbytes from relative rank 0 (scatter_for_bcast), in
// pieces of piece bytes, per relative rank.
func scatterForBcast(n int32, nbytes, piece int64) schedule {
	steps := make(schedule, n)
	sent := make([]int64, n) // what each member's parent sends it
	for rel := int32(0); rel < n; rel++ {
		curr, mask := int64(0), int32(1)
		if rel == 0 {
			curr = nbytes
			for mask < n {
				mask <<= 1
			}
		} else {
			for ; mask < n && rel&mask == 0; mask <<= 1 {
			}
			if nbytes-int64(rel)*piece > 0 {
				steps[rel] = append(steps[rel], []collOp{{peer: rel - mask, bytes: nbytes - int64(rel)*piece, blocking: true}})
				curr = sent[rel]
			}
		}
		for mask >>= 1; mask > 0; mask >>= 1 {
			if rel+mask < n {
				if size := curr - piece*int64(mask); size > 0 {
					steps[rel] = append(steps[rel], []collOp{{send: true, peer: rel + mask, bytes: size, blocking: true}})
					sent[rel+mask] = size
					curr -= size
				}
			}
		}
	}
	return steps
}

// pieceOf is the size of relative rank rel's piece of the scatter.
func pieceOf(rel int32, nbytes, piece int64) int64 {
	return max(0, min(piece, nbytes-int64(rel)*piece))
}

// scatterRDBAllgatherSchedule follows bcast__scatter_rdb_allgather for n
// members in ranks relative to the root.
func scatterRDBAllgatherSchedule(n int32, nbytes int64) schedule {
	if n == 1 || nbytes == 0 {
		return make(schedule, n)
	}
	piece := (nbytes + int64(n) - 1) / int64(n)
	curr := make([]int64, n)
	for rel := range curr {
		curr[rel] = pieceOf(int32(rel), nbytes, piece)
	}
	// The receives ask for the rest of the buffer from where they write.
	return recursiveDoubling(scatterForBcast(n, nbytes, piece), curr, 1, 1, 1, func(r, mask int32, i int, tree bool) int64 {
		if tree {
			return max(0, nbytes-piece*int64(treeRoot(r, i)+mask))
		}
		return max(0, nbytes-piece*int64(treeRoot(r^mask, i)))
	})
}

// scatterLRAllgatherSchedule follows bcast__scatter_LR_allgather for n
// members in ranks relative to the root. Each ring step is a sendrecv
// with two peers: a send and a receive posted together.
func scatterLRAllgatherSchedule(n int32, nbytes int64) schedule {
	piece := (nbytes + int64(n) - 1) / int64(n)
	steps := scatterForBcast(n, nbytes, piece)
	for rel := int32(0); rel < n; rel++ {
		src := rel
		for i := int32(1); i < n; i++ {
			next := (src - 1 + n) % n
			steps[rel] = append(steps[rel], []collOp{{send: true, peer: (rel + 1) % n, bytes: pieceOf(src, nbytes, piece)},
				{peer: (rel - 1 + n) % n, bytes: pieceOf(next, nbytes, piece)}})
			src = next
		}
	}
	return steps
}

// allgatherPair (allgather__pair, power-of-two sizes): n-1 sendrecv
// steps with rank ^ i.
func allgatherPair(c *collCall, p int, ops []collOp) ([]collOp, bool) {
	i := int32(p + 1)
	if i >= c.n {
		return ops, false
	}
	return append(ops, collOp{sr: true, peer: c.me ^ i, bytes: c.e.SendBytes, rbytes: blockFrom(c, c.me^i)}), true
}

// allgatherBruck (allgather__bruck): in round k, send the 2^k blocks
// gathered so far to rank - 2^k and receive as many from rank + 2^k; a
// last round moves the n - 2^k remaining blocks.
func allgatherBruck(c *collCall, p int, ops []collOp) ([]collOp, bool) {
	n, me := c.n, c.me
	pof2, k := int32(1), 0
	for pof2 <= n/2 && k < p {
		pof2 *= 2
		k++
	}
	blocks := int64(pof2)
	if pof2 > n/2 {
		blocks = int64(n - pof2)
		if blocks == 0 || k < p {
			return ops, false
		}
	}
	return append(ops, collOp{send: true, peer: (me - pof2 + n) % n, bytes: blocks * c.e.RecvBytes},
		collOp{peer: (me + pof2) % n, bytes: blocks * c.e.RecvBytes}), true
}

// allgatherLinear (iallgather, iallgatherv): for every other rank in
// order, send it our block and receive its block, all at once.
func allgatherLinear(c *collCall, p int, ops []collOp) ([]collOp, bool) {
	for i := int32(0); i < c.n; i++ {
		if i != c.me {
			ops = append(ops, collOp{send: true, peer: i, bytes: c.e.SendBytes, typed: true}, collOp{peer: i, bytes: blockFrom(c, i), typed: true})
		}
	}
	return one(p, ops)
}

var allgathervAlgos = map[string][]algorithm{
	"default":               {allgatherLinear},
	"pair":                  {allgatherPair},
	"ring":                  {alltoallRing}, // allgatherv__ring: the same exchanges
	"mpich_ring":            {allgathervMpichRing},
	"ompi_neighborexchange": {allgathervNeighborExchange},
	"ompi_bruck":            {allgathervBruck},
	"mpich_rdb":             {allgathervRDB},
}

// allgathervRDB (allgatherv__mpich_rdb): allgather__rdb's recursive
// doubling with each member's own block size (in receive-type elements);
// nothing moves if all blocks are empty.
func allgathervRDB(c *collCall, p int, ops []collOp) ([]collOp, bool) {
	if p > 0 {
		return c.sharedPhase(p, ops, 0)
	}
	counts, rsize := c.e.RecvCounts, c.rsize
	key := scheduleKey{algo: "allgatherv_mpich_rdb", n: c.n, count: vecHash(counts), rsize: rsize}
	c.useSchedule(c.me, key, counts, func() schedule {
		curr := make([]int64, len(counts))
		total := int64(0)
		for r, b := range counts {
			if rsize > 0 {
				curr[r] = b / rsize
			}
			total += curr[r]
		}
		if total == 0 {
			return make(schedule, len(counts))
		}
		// The receives ask for the rest of the buffer from where they
		// write.
		rest := func(from int32) int64 { return sumCounts(counts, from, int32(len(counts))) }
		return recursiveDoubling(make(schedule, len(counts)), curr, rsize, rsize, rsize, func(r, mask int32, i int, tree bool) int64 {
			if tree {
				return rest(treeRoot(r, i) + mask)
			}
			return rest(treeRoot(r^mask, i))
		})
	})
	return c.sharedPhase(p, ops, 0)
}

// allgathervBruck (allgatherv__ompi_bruck): at distances 1, 2, 4... send
// the blocks of rank..rank+k-1 to rank-distance and receive as many from
// rank+distance (k the distance, or what remains at the last step), as
// one indexed type.
func allgathervBruck(c *collCall, p int, ops []collOp) ([]collOp, bool) {
	n, me := c.n, c.me
	if p == 0 {
		c.phases = c.phases[:0]
		// prefix[i] is the size of blocks 0..i-1, twice round.
		prefix := make([]int64, 2*n+1)
		for i := int32(0); i < 2*n; i++ {
			prefix[i+1] = prefix[i] + c.e.RecvCounts[i%n]
		}
		for d := int32(1); d < n; d <<= 1 {
			blocks := d
			if d > n/2 {
				blocks = n - d
			}
			from := (me + d) % n
			bytes := prefix[me+blocks] - prefix[me]
			c.phases = append(c.phases, []collOp{{send: true, peer: (me - d + n) % n, bytes: bytes}, {peer: from, bytes: prefix[from+blocks] - prefix[from]}})
		}
	}
	if p >= len(c.phases) {
		return ops, false
	}
	return append(ops, c.phases[p]...), true
}

// allgathervNeighborExchange (allgatherv__ompi_neighborexchange): as
// allgather's, each later step exchanging two blocks (an indexed type of
// both), their receive counts; on an odd size, allgatherv__ring.
func allgathervNeighborExchange(c *collCall, p int, ops []collOp) ([]collOp, bool) {
	n, me, counts := c.n, c.me, c.e.RecvCounts
	if n%2 != 0 {
		return alltoallRing(c, p, ops)
	}
	next, prev := (me+1)%n, (me-1+n)%n
	nb, from, offset := [2]int32{next, prev}, [2]int32{me, me}, [2]int32{2, -2}
	if me%2 != 0 {
		nb, from, offset = [2]int32{prev, next}, [2]int32{prev, prev}, [2]int32{-2, 2}
	}
	if p == 0 {
		c.steps = append(c.steps[:0], collOp{sr: true, peer: nb[0], bytes: counts[me], rbytes: counts[nb[0]]})
		// Each later step sends the two blocks received at the one
		// before (our own and our neighbour's at first).
		send := from[0]
		for i := int32(1); i < n/2; i++ {
			par := i % 2
			from[par] = (from[par] + offset[par] + n) % n
			c.steps = append(c.steps, collOp{sr: true, peer: nb[par], bytes: counts[send] + counts[send+1], rbytes: counts[from[par]] + counts[from[par]+1]})
			send = from[par]
		}
	}
	return stepAt(c, p, ops)
}

// allgathervMpichRing (allgatherv__mpich_ring): the blocks travel round
// the ring of neighbours (send to rank+1, receive from rank-1), cut in
// pieces of at least 256 KiB (or the smallest block), each step a
// sendrecv, or a blocking send or receive when only one side has data.
func allgathervMpichRing(c *collCall, p int, ops []collOp) ([]collOp, bool) {
	if p == 0 {
		c.phases = mpichRingPhases(c.phases[:0], c.n, c.me, c.e.RecvCounts, c.rsize)
	}
	if p >= len(c.phases) {
		return ops, false
	}
	return append(ops, c.phases[p]...), true
}

// mpichRingPhases follows allgatherv__mpich_ring's loop for member me,
// counts being the members' blocks in bytes and extent the element size.
func mpichRingPhases(phases [][]collOp, n, me int32, counts []int64, extent int64) [][]collOp {
	if extent <= 0 {
		extent = 1
	}
	elems := make([]int64, n)
	total := int64(0)
	smallest := int64(-1)
	for i, b := range counts {
		elems[i] = b / extent
		total += elems[i]
		if smallest < 0 || elems[i] < smallest {
			smallest = elems[i]
		}
	}
	left, right := (me-1+n)%n, (me+1)%n
	torecv, tosend := total-elems[me], total-elems[right]
	piece := smallest
	if piece*extent < 32768*8 {
		piece = 32768 * 8 / extent
	}
	piece = max(piece, 1)
	sidx, ridx := me, left
	var soff, roff int64
	for tosend > 0 || torecv > 0 {
		sendnow := min(elems[sidx]-soff, piece)
		recvnow := min(elems[ridx]-roff, piece)
		if tosend == 0 {
			sendnow = 0
		}
		if torecv == 0 {
			recvnow = 0
		}
		switch {
		case sendnow == 0 && recvnow == 0:
		case sendnow == 0:
			phases = append(phases, []collOp{{peer: left, bytes: recvnow * extent, blocking: true}})
		case recvnow == 0:
			phases = append(phases, []collOp{{send: true, peer: right, bytes: sendnow * extent, blocking: true}})
		default:
			phases = append(phases, []collOp{{send: true, peer: right, bytes: sendnow * extent}, {peer: left, bytes: recvnow * extent}})
		}
		tosend -= sendnow
		torecv -= recvnow
		soff += sendnow
		roff += recvnow
		if soff == elems[sidx] {
			soff, sidx = 0, (sidx+n-1)%n
		}
		if roff == elems[ridx] {
			roff, ridx = 0, (ridx+n-1)%n
		}
	}
	return phases
}

// ---- reduce_scatter ----

var reduceScatterAlgos = map[string][]algorithm{
	"default":       {reduceScatterDefault, reduceScatterScatter},
	"mpich_pair":    {reduceScatterPair},
	"mpich_rdb":     {reduceScatterRDB},
	"mpich_noncomm": {reduceScatterNoncomm},
}

// sumCounts returns the total of counts[lo:hi] (clipped to the vector).
func sumCounts(counts []int64, lo, hi int32) int64 {
	t := int64(0)
	for j := lo; j < hi && int(j) < len(counts); j++ {
		if j >= 0 {
			t += counts[j]
		}
	}
	return t
}

// reduceScatterRDB (reduce_scatter__mpich_rdb): recursive doubling; at
// step i each rank exchanges with rank ^ 2^i everything but the blocks of
// its own subtree, and for non-power-of-two sizes the results are handed
// down a recursive-halving tree with blocking sends.
func reduceScatterRDB(c *collCall, p int, ops []collOp) ([]collOp, bool) {
	if p == 0 {
		c.steps = c.steps[:0]
		n, me, cnt := c.n, c.me, c.e.RecvCounts
		for mask, i := int32(1), uint(0); mask < n; mask, i = mask<<1, i+1 {
			dst := me ^ mask
			dstRoot := dst >> i << i
			myRoot := me >> i << i
			send := sumCounts(cnt, 0, myRoot) + sumCounts(cnt, myRoot+mask, n)
			recvT := sumCounts(cnt, 0, dstRoot) + sumCounts(cnt, dstRoot+mask, n)
			if dst < n {
				c.steps = append(c.steps, collOp{sr: true, peer: dst, bytes: send, rbytes: recvT})
			}
			if dstRoot+mask > n {
				done := n - myRoot - mask
				k := int32(-1)
				for j := mask; j != 0; j >>= 1 {
					k++
				}
				for tm := mask >> 1; tm != 0; tm >>= 1 {
					d := me ^ tm
					root := me >> uint(k) << uint(k)
					if d > me && me < root+done && d >= root+done {
						c.steps = append(c.steps, collOp{send: true, peer: d, bytes: recvT, blocking: true})
					} else if d < me && d < root+done && me >= root+done {
						c.steps = append(c.steps, collOp{peer: d, bytes: recvT, blocking: true})
					}
					k--
				}
			}
		}
	}
	return stepAt(c, p, ops)
}

// regular reports whether all counts are equal.
func regular(counts []int64) bool {
	for _, x := range counts {
		if x != counts[0] {
			return false
		}
	}
	return true
}

// reduceScatterPair (reduce_scatter__mpich_pair): n-1 sendrecv steps, to
// rank+i the block it needs, from rank-i; nothing when every count is 0
// (SimGrid returns MPI_ERR_COUNT at once, which its replay ignores).
func reduceScatterPair(c *collCall, p int, ops []collOp) ([]collOp, bool) {
	i := int32(p + 1)
	if i >= c.n || sumCounts(c.e.RecvCounts, 0, c.n) == 0 {
		return ops, false
	}
	dst := (c.me + i) % c.n
	return append(ops, collOp{send: true, peer: dst, bytes: c.e.RecvCounts[dst]}, collOp{peer: (c.me - i + c.n) % c.n, bytes: c.e.RecvCounts[c.me]}), true
}

// reduceScatterDefault is the first part of SimGrid's
// reduce_scatter__default for equal counts: a linear reduce of the whole
// vector to rank 0 (then reduceScatterScatter scatters it).
func reduceScatterDefault(c *collCall, p int, ops []collOp) ([]collOp, bool) {
	saved := c.root
	c.root = 0
	b := c.e.RecvBytes
	ops, ok := gatherTo(c, p, ops, b, func(int32) int64 { return b })
	c.root = saved
	return ops, ok
}

func reduceScatterScatter(c *collCall, p int, ops []collOp) ([]collOp, bool) {
	c.root = 0
	return scatterCounts(c, p, ops, c.e.RecvCounts, c.e.RecvCounts[c.me])
}

// ---- scan / exscan ----

// scanLinear (SimGrid's scan and exscan): receive from every lower rank,
// send to every higher rank, then wait for each in that order (without a
// reduction operation, SMPI waits in order rather than for any).
func scanLinear(c *collCall, p int, ops []collOp) ([]collOp, bool) {
	for i := int32(0); i < c.me; i++ {
		ops = append(ops, collOp{peer: i, bytes: c.e.SendBytes, typed: true})
	}
	for i := c.me + 1; i < c.n; i++ {
		ops = append(ops, collOp{send: true, peer: i, bytes: c.e.SendBytes, typed: true})
	}
	return one(p, ops)
}
