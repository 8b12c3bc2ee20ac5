package sim

import (
	"fmt"

	"kairos/trace"
)

// Algorithms SimGrid 3.32 took from the STAR-MPI collection and MPICH
// (src/smpi/colls: flat trees, pipelines, recursive halving, meshes), and
// MVAPICH2's pairwise barrier.

// flattreeSegment is bcast__flattree_pipeline's segment, in bytes.
const flattreeSegment = 8192

// bcastFlattreePipeline (bcast__flattree_pipeline): the message cut in
// segments of 8192 bytes (at least one element); the root sends every
// segment to each other rank in turn with blocking sends, the others post
// all their receives and wait for them together. Elements beyond the last
// whole segment are not sent, as in SimGrid; under one segment it is
// bcast__flattree.
func bcastFlattreePipeline(c *collCall, p int, ops []collOp) ([]collOp, bool) {
	segment, pipe := int64(0), int64(0)
	if c.ssize > 0 {
		segment = max(flattreeSegment/c.ssize, 1)
		pipe = collBytes(c) / c.ssize / segment
	}
	if pipe == 0 {
		return bcastFlat(c, p, ops)
	}
	if c.me != c.root {
		for range pipe {
			ops = append(ops, collOp{peer: c.root, bytes: segment * c.ssize})
		}
		return one(p, ops)
	}
	if p == 0 {
		c.steps = c.steps[:0]
		for j := int32(0); j < c.n; j++ {
			for i := int64(0); i < pipe && j != c.root; i++ {
				c.steps = append(c.steps, collOp{send: true, peer: j, bytes: segment * c.ssize, blocking: true})
			}
		}
	}
	return stepAt(c, p, ops)
}

// reduceFlatTree (reduce__flat_tree): every other rank sends to the root
// (blocking); the root receives from rank n-1 down to rank 0, one blocking
// receive at a time.
func reduceFlatTree(c *collCall, p int, ops []collOp) ([]collOp, bool) {
	if c.me != c.root {
		return one(p, append(ops, collOp{send: true, peer: c.root, bytes: collBytes(c), blocking: true}))
	}
	if p >= int(c.n)-1 {
		return ops, false
	}
	from := c.n - 1 - int32(p)
	if from <= c.root {
		from--
	}
	return append(ops, collOp{peer: from, bytes: collBytes(c), blocking: true}), true
}

// barrierMvapich2Pair (barrier__mvapich2_pair): the ranks beyond the
// largest power of two pof2 each sendrecv a 0-byte message with rank -
// pof2; below it, a rank with such a partner first receives from it
// (blocking), then all exchange with rank ^ d for d = 1, 2, 4... < pof2
// (sendrecv), and the first ones send their partner its release.
func barrierMvapich2Pair(c *collCall, p int, ops []collOp) ([]collOp, bool) {
	if p == 0 {
		n, me := c.n, c.me
		c.steps = c.steps[:0]
		pof2 := int32(1)
		for pof2*2 <= n {
			pof2 *= 2
		}
		if me >= pof2 {
			c.steps = append(c.steps, collOp{sr: true, peer: me - pof2})
			return stepAt(c, p, ops)
		}
		if n > 1 && me < n-pof2 {
			c.steps = append(c.steps, collOp{peer: pof2 + me, blocking: true})
		}
		for d := int32(1); d < pof2; d <<= 1 {
			c.steps = append(c.steps, collOp{sr: true, peer: me ^ d})
		}
		if n > 1 && me < n-pof2 {
			c.steps = append(c.steps, collOp{send: true, peer: pof2 + me, blocking: true})
		}
	}
	return stepAt(c, p, ops)
}

// allgatherRHV (allgather__rhv, power-of-two sizes): a first sendrecv of
// one block with the member whose rank is this one's bits reversed in
// weight (the base offset of its block; none with itself), then for masks
// from n/2 down to 1 a sendrecv with rank ^ mask of 1, 2, 4... blocks. A
// send block of another size than the receive block falls back to
// allgather__default.
func allgatherRHV(c *collCall, p int, ops []collOp) ([]collOp, bool) {
	if c.e.SendBytes != c.e.RecvBytes {
		return allgatherLinear(c, p, ops)
	}
	if p == 0 {
		n, me := c.n, c.me
		c.steps = c.steps[:0]
		base, size := int32(0), n/2
		for mask := int32(1); mask < n; mask <<= 1 {
			if me&mask != 0 {
				base += size
			}
			size /= 2
		}
		if base != me {
			c.steps = append(c.steps, collOp{sr: true, peer: base, bytes: c.e.SendBytes, rbytes: c.e.RecvBytes})
		}
		bytes := c.e.RecvBytes
		for mask := n >> 1; mask >= 1; mask >>= 1 {
			c.steps = append(c.steps, collOp{sr: true, peer: me ^ mask, bytes: bytes, rbytes: bytes})
			bytes *= 2
		}
	}
	return stepAt(c, p, ops)
}

// meshRefused rejects allgather 2dmesh and 3dmesh on sizes that are no
// such mesh (SimGrid 3.32 throws; its mesh alltoalls send nothing there).
func meshRefused(k trace.Kind, algo string, n int32) error {
	ok := true
	switch algo {
	case "2dmesh":
		_, _, ok = meshSides2D(n)
	case "3dmesh":
		_, _, ok = meshSides3D(n)
	}
	if !ok {
		return fmt.Errorf("%s: the %s algorithm cannot lay %d ranks out as its mesh (SimGrid aborts too)", k, algo, n)
	}
	return nil
}

// allgather2DMesh (allgather__2dmesh): the ranks as an x·y mesh, y per
// row; a member shoots its block along its row, then its row's y blocks
// along its column.
func allgather2DMesh(c *collCall, p int, ops []collOp) ([]collOp, bool) {
	return phased(func(phases [][]collOp, c *collCall) [][]collOp {
		x, y, _ := meshSides2D(c.n)
		phases = meshLine{c.me / y * y, 1, 0, y}.shoot(phases, c, c.e.SendBytes, c.e.RecvBytes)
		return meshLine{c.me % y, y, 0, x}.shoot(phases, c, int64(y)*c.e.SendBytes, int64(y)*c.e.RecvBytes)
	})(c, p, ops)
}

// allgather3DMesh (allgather__3dmesh): the ranks as x·x planes of z; a
// member shoots its block along its row, its row's x blocks along its
// column, then its plane's x·x blocks along its z line.
func allgather3DMesh(c *collCall, p int, ops []collOp) ([]collOp, bool) {
	return phased(func(phases [][]collOp, c *collCall) [][]collOp {
		x, z, _ := meshSides3D(c.n)
		plane := x * x
		// The row's receives ask for the send count, of the receive type.
		row := c.e.SendBytes / max(c.ssize, 1) * c.rsize
		phases = meshLine{c.me / x * x, 1, 0, x}.shoot(phases, c, c.e.SendBytes, row)
		phases = meshLine{c.me%x + c.me/plane*plane, x, 0, x}.shoot(phases, c, int64(x)*c.e.SendBytes, int64(x)*c.e.RecvBytes)
		return meshLine{c.me, plane, 1, z}.shoot(phases, c, int64(plane)*c.e.SendBytes, int64(plane)*c.e.RecvBytes)
	})(c, p, ops)
}

// reduceScatterNoncomm (reduce_scatter__mpich_noncomm, power-of-two sizes
// and equal counts, which SimGrid asserts): recursive halving, a sendrecv
// with rank ^ 2^k of half the data left at step k.
func reduceScatterNoncomm(c *collCall, p int, ops []collOp) ([]collOp, bool) {
	if int32(1)<<p >= c.n {
		return ops, false
	}
	total := c.e.RecvCounts[0] * int64(c.n)
	return append(ops, collOp{sr: true, peer: c.me ^ int32(1)<<p, bytes: total >> (p + 1), rbytes: total >> (p + 1)}), true
}

// knomialFactor is MVAPICH2's reduce k-nomial degree (SimGrid's default,
// without the mvapich2 selector's tables).
const knomialFactor = 4

// reduceMvapich2Knomial (reduce__mvapich2_knomial): a k-nomial tree of
// degree 4 rooted at the root; a member posts the receives from its
// children (farthest last in the tree, first posted), waits for them,
// then sends to its parent and waits. Nothing moves for 0 elements.
func reduceMvapich2Knomial(c *collCall, p int, ops []collOp) ([]collOp, bool) {
	if p == 0 {
		c.phases = c.phases[:0]
		if c.ssize > 0 && collBytes(c)/c.ssize > 0 {
			c.phases = knomialPhases(c.phases, c.n, c.me, c.root, collBytes(c))
		}
	}
	if p >= len(c.phases) {
		return ops, false
	}
	return append(ops, c.phases[p]...), true
}

// knomialPhases appends member me's phases of reduce__mvapich2_knomial for
// a message of bytes.
func knomialPhases(phases [][]collOp, n, me, root int32, bytes int64) [][]collOp {
	const f = knomialFactor
	rel := (me - root + n) % n
	parent := int32(-1)
	mask := int32(1)
	for ; mask < n; mask *= f {
		if rel%(f*mask) != 0 {
			parent = (rel/(f*mask)*(f*mask) + root) % n
			break
		}
	}
	var children []int32
	for mask /= f; mask > 0; mask /= f {
		for k := int32(1); k < f; k++ {
			if rel+mask*k < n {
				children = append(children, (me+mask*k)%n)
			}
		}
	}
	if len(children) > 0 {
		recvs := make([]collOp, len(children))
		for i, ch := range children {
			recvs[len(children)-1-i] = collOp{peer: ch, bytes: bytes}
		}
		phases = append(phases, recvs)
	}
	if parent >= 0 {
		phases = append(phases, []collOp{{send: true, peer: parent, bytes: bytes}})
	}
	return phases
}

func init() {
	composites["allreduce:rab1"] = allreduceRab1
	composites["allreduce:rab2"] = allreduceRab2
}

// allreduceRab1 (allreduce__rab1, power-of-two sizes): a recursive
// halving of the vector (padded to a multiple of the size) with rank ^
// mask for masks from n/2 down to 1, then an allgather of the member's
// last share with the allgather algorithm configured.
func allreduceRab1(c *collCall) []subColl {
	ext, n := max(c.ssize, 1), int64(c.n)
	base := collBytes(c) / ext
	if base%n != 0 {
		base = (base + n) / n * n
	}
	halving := func(c *collCall, p int, ops []collOp) ([]collOp, bool) {
		mask := c.n >> (p + 1)
		if mask == 0 {
			return ops, false
		}
		return append(ops, collOp{sr: true, peer: c.me ^ mask, bytes: base / (n / int64(mask)) * ext, rbytes: base / (n / int64(mask)) * ext}), true
	}
	return []subColl{{run: halving, root: c.root},
		{kind: trace.Allgather, call: sameTypeCall(c, trace.Allgather, base/n*ext, ext)}}
}

// allreduceRab2 (allreduce__rab2): an alltoall of count/n elements per
// member (padded: (count+n)/n when n does not divide count, n below n
// elements), then an allgather of as many, each with the algorithm
// configured for it.
func allreduceRab2(c *collCall) []subColl {
	ext, n := max(c.ssize, 1), int64(c.n)
	count := collBytes(c) / ext
	share := count / n
	switch {
	case count%n != 0 && count < n:
		share = n
	case count%n != 0:
		share = (count + n) / n
	}
	return []subColl{{kind: trace.Alltoall, call: sameTypeCall(c, trace.Alltoall, share*ext, ext)},
		{kind: trace.Allgather, call: sameTypeCall(c, trace.Allgather, share*ext, ext)}}
}
