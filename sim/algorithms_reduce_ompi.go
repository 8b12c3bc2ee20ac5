package sim

// Open MPI's tuned reductions as SimGrid 3.32 copies them
// (reduce-ompi.cpp): a linear one, and a generic segmented reduction up a
// tree (chain, pipeline, binary, binomial, in-order binary), which differ
// in their tree and segment size.

func init() {
	reduceAlgos["ompi_basic_linear"] = []algorithm{reduceOmpiBasicLinear}
	reduceAlgos["ompi_chain"] = []algorithm{phased(reduceOmpiChain)}
	reduceAlgos["ompi_pipeline"] = []algorithm{phased(reduceOmpiPipeline)}
	reduceAlgos["ompi_binary"] = []algorithm{phased(reduceOmpiBinary)}
	reduceAlgos["ompi_binomial"] = []algorithm{phased(reduceOmpiBinomial)}
	reduceAlgos["ompi_in_order_binary"] = []algorithm{phased(reduceOmpiInOrderBinary), reduceInOrderToRoot}
}

// ompiGenericReduce are the reductions through Open MPI's generic one.
var ompiGenericReduce = map[string]bool{"ompi_chain": true, "ompi_pipeline": true, "ompi_binary": true,
	"ompi_binomial": true, "ompi_in_order_binary": true}

// reduceOmpiBasicLinear (reduce__ompi_basic_linear): every member but the
// root sends to it with a blocking send; the root receives from the last
// member first, then from the others downwards, each a blocking receive.
func reduceOmpiBasicLinear(c *collCall, p int, ops []collOp) ([]collOp, bool) {
	if c.me != c.root {
		return one(p, append(ops, collOp{send: true, peer: c.root, bytes: collBytes(c), blocking: true}))
	}
	// Members n-1, n-2, ..., 0 but the root.
	peer := c.n - 1 - int32(p)
	if peer <= c.root {
		peer--
	}
	if peer < 0 {
		return ops, false
	}
	return append(ops, collOp{peer: peer, bytes: collBytes(c), blocking: true}), true
}

// reduceOmpiChain (reduce__ompi_chain): n/2 chains, 64 KiB segments.
func reduceOmpiChain(phases [][]collOp, c *collCall) [][]collOp {
	return ompiReducePhases(phases, c, ompiChain(c.n/2, c.n, c.me, c.root), c.root, 64<<10)
}

// reduceOmpiPipeline (reduce__ompi_pipeline): one chain, segments of 1,
// 32 or 64 KiB by Open MPI's fitted rule on the size of the communicator
// and of the message.
func reduceOmpiPipeline(phases [][]collOp, c *collCall) [][]collOp {
	size := float64(collBytes(c))
	seg := int64(64 << 10)
	switch n := float64(c.n); {
	case n > 0.0410/1024*size+9.7128:
		seg = 1024
	case n > 0.0033/1024*size+1.6761:
		seg = 32 << 10
	}
	return ompiReducePhases(phases, c, ompiChain(1, c.n, c.me, c.root), c.root, seg)
}

// reduceOmpiBinary (reduce__ompi_binary): a binary tree, 32 KiB segments.
func reduceOmpiBinary(phases [][]collOp, c *collCall) [][]collOp {
	return ompiReducePhases(phases, c, ompiKaryTree(2, c.n, c.me, c.root), c.root, 32<<10)
}

// reduceOmpiBinomial (reduce__ompi_binomial): Open MPI's in-order
// binomial tree, unsegmented for small messages, else 1 KiB segments when
// the communicator is large for the message (Open MPI's fitted rule), else
// unsegmented too.
func reduceOmpiBinomial(phases [][]collOp, c *collCall) [][]collOp {
	size := collBytes(c)
	count := size / max(c.ssize, 1)
	seg := int64(0)
	if !(c.n < 8 && size < 20480 || size < 2048 || count <= 1) && float64(c.n) > 0.6016/1024*float64(size)+1.3496 {
		seg = 1024
	}
	parent, children := inOrderBinomial(c)
	return ompiReducePhases(phases, c, ompiTree{prev: parent, next: children}, c.root, seg)
}

// reduceOmpiInOrderBinary (reduce__ompi_in_order_binary): unsegmented, up
// Open MPI's in-order binary tree, which is rooted at the last member; see
// reduceInOrderToRoot for another root.
func reduceOmpiInOrderBinary(phases [][]collOp, c *collCall) [][]collOp {
	return ompiReducePhases(phases, c, ompiInOrderBintree(c.n, c.me), c.n-1, 0)
}

// reduceInOrderToRoot is the end of ompi_in_order_binary for a root that
// is not the last member: the last member sends the result to the root,
// both blocking.
func reduceInOrderToRoot(c *collCall, p int, ops []collOp) ([]collOp, bool) {
	last := c.n - 1
	switch {
	case c.root == last:
		return ops, false
	case c.me == c.root:
		return one(p, append(ops, collOp{peer: last, bytes: collBytes(c), blocking: true}))
	case c.me == last:
		return one(p, append(ops, collOp{send: true, peer: c.root, bytes: collBytes(c), blocking: true}))
	}
	return ops, false
}

// ompiReducePhases appends the phases of one member in Open MPI's generic
// segmented reduction (ompi_reduce_generic) up tree t rooted at root, in
// segments of segSize bytes (0: unsegmented), with no limit on a leaf's
// outstanding sends (every SimGrid caller passes 0):
//   - an inner node, for each segment and each child in turn, posts the
//     receive of the segment from the child, then waits (a waitall of one)
//     for the receive it posted before; once a segment is complete (at the
//     first child of the next), it sends it to its parent with a blocking
//     send, the root excepted;
//   - a leaf sends its segments to its parent one after the other with
//     blocking sends.
func ompiReducePhases(phases [][]collOp, c *collCall, t ompiTree, root int32, segSize int64) [][]collOp {
	ext := max(c.ssize, 1)
	total := collBytes(c)
	count := total / ext
	segCnt := segCount(segSize, ext, count)
	nseg := int64(1)
	if segCnt > 0 {
		nseg = (count + segCnt - 1) / segCnt
	}
	segBytes := func(seg int64) int64 {
		if seg == nseg-1 {
			return (count - segCnt*seg) * ext
		}
		return segCnt * ext
	}
	if len(t.next) == 0 {
		if c.me == root {
			return phases // a root alone
		}
		for left := count; left > 0; left -= segCnt {
			phases = append(phases, blockingPhase(true, t.prev, min(segCnt, left)*ext))
		}
		return phases
	}
	posted := false
	for seg := int64(0); seg <= nseg; seg++ {
		for i, child := range t.next {
			var ph []collOp
			if seg < nseg {
				ph = append(ph, collOp{peer: child, bytes: segBytes(seg), carry: true})
			}
			if posted {
				ph = append(ph, collOp{wait: waitAllOne})
			}
			posted = true
			phases = append(phases, ph)
			if i == 0 && seg > 0 {
				if c.me != root {
					phases = append(phases, blockingPhase(true, t.prev, segBytes(seg-1)))
				}
				if seg == nseg {
					break
				}
			}
		}
	}
	return phases
}
