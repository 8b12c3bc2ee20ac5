package sim

// Open MPI's linear gather, scatter and alltoallv, as SimGrid 3.32 copies
// them (gather-ompi.cpp, scatter-ompi.cpp, alltoallv-ompi-basic-linear.cpp)
// for its ompi selector.

func init() {
	gatherAlgos["ompi_basic_linear"] = []algorithm{gatherOmpiBasicLinear}
	gatherAlgos["ompi_linear_sync"] = []algorithm{gatherOmpiLinearSync}
	scatterAlgos["ompi_basic_linear"] = []algorithm{scatterOmpiBasicLinear}
	scatterAlgos["ompi_linear_nb"] = []algorithm{scatterOmpiLinearNB}
	// Open MPI's basic linear alltoallv posts every receive, then every
	// send (persistent requests started together), then waits for all:
	// the messages and simcalls of SimGrid's default.
	alltoallvAlgos["ompi_basic_linear"] = []algorithm{alltoallvLinear}
}

// gatherOmpiBasicLinear (gather__ompi_basic_linear): every member but the
// root sends its block to the root with a blocking send; the root receives
// them one after the other in rank order, each a blocking receive.
func gatherOmpiBasicLinear(c *collCall, p int, ops []collOp) ([]collOp, bool) {
	if c.me != c.root {
		return one(p, append(ops, collOp{send: true, peer: c.root, bytes: c.e.SendBytes, blocking: true, typed: true}))
	}
	return rootInTurn(c, p, ops, false, c.e.RecvBytes)
}

// scatterOmpiBasicLinear (scatter__ompi_basic_linear): the root sends each
// member its block in rank order, each a blocking send; the others receive
// with a blocking receive.
func scatterOmpiBasicLinear(c *collCall, p int, ops []collOp) ([]collOp, bool) {
	if c.me != c.root {
		return one(p, append(ops, collOp{peer: c.root, bytes: c.e.RecvBytes, blocking: true, typed: true}))
	}
	return rootInTurn(c, p, ops, true, c.e.SendBytes)
}

// rootInTurn is phase p of a root exchanging the call's buffers with
// every other member in rank order, one blocking send or receive of bytes
// per phase.
func rootInTurn(c *collCall, p int, ops []collOp, send bool, bytes int64) ([]collOp, bool) {
	peer := int32(p)
	if peer >= c.root {
		peer++ // skip the root itself
	}
	if peer >= c.n {
		return ops, false
	}
	return append(ops, collOp{send: send, peer: peer, bytes: bytes, blocking: true, typed: true}), true
}

// scatterOmpiLinearNB (scatter__ompi_linear_nb): the root posts a send to
// every member in rank order and waits for them all; the others receive
// with a blocking receive.
func scatterOmpiLinearNB(c *collCall, p int, ops []collOp) ([]collOp, bool) {
	if c.me != c.root {
		return one(p, append(ops, collOp{peer: c.root, bytes: c.e.RecvBytes, blocking: true, typed: true}))
	}
	for i := int32(0); i < c.n; i++ {
		if i != c.root {
			ops = append(ops, collOp{send: true, peer: i, bytes: c.e.SendBytes, typed: true})
		}
	}
	return one(p, ops)
}

// segCount is Open MPI's COLL_TUNED_COMPUTED_SEGCOUNT: the number of
// elements of typeSize bytes in a segment of segSize bytes, rounded to the
// nearest, or count if the message fits in one segment (or an element
// does not fit in it).
func segCount(segSize, typeSize, count int64) int64 {
	if segSize >= typeSize && segSize < typeSize*count {
		n := segSize / typeSize
		if segSize-n*typeSize > typeSize>>1 {
			n++
		}
		return n
	}
	return count
}

// gatherOmpiLinearSync (gather__ompi_linear_sync): the root asks each
// member in turn for its block with a 0-byte message, after posting the
// receive of its first segment (1 KiB, or 32 KiB for blocks above 90 KiB);
// it posts the receive of the rest, waits for the first segment, and goes
// on to the next member; it waits for all the rests at the end. A member
// waits for the root's message, then sends its first segment and the rest
// with blocking sends.
func gatherOmpiLinearSync(c *collCall, p int, ops []collOp) ([]collOp, bool) {
	size, block := c.ssize, c.e.SendBytes
	if c.me == c.root {
		size, block = c.rsize, c.e.RecvBytes
	}
	first := int64(1024)
	if block > 92160 {
		first = 32768
	}
	if size <= 0 {
		size = 1
	}
	count := block / size
	firstBytes := segCount(first, size, count) * size
	if c.me != c.root {
		switch p {
		case 0:
			return append(ops, collOp{peer: c.root, blocking: true}), true
		case 1:
			return append(ops, collOp{send: true, peer: c.root, bytes: firstBytes, blocking: true}), true
		case 2:
			return append(ops, collOp{send: true, peer: c.root, bytes: block - firstBytes, blocking: true}), true
		}
		return ops, false
	}
	// Three phases per member: post the first segment's receive; send
	// the 0-byte request; post the rest's receive and wait for the
	// first segment. Then one wait for all the rests.
	k, step := int32(p/3), p%3
	peer := k
	if peer >= c.root {
		peer++
	}
	if peer >= c.n {
		if step == 0 && k == c.n-1 {
			return append(ops, collOp{wait: waitCarried}), true
		}
		return ops, false
	}
	const firstSeg, restSeg = 0, 1 // refs of the carried receives
	switch step {
	case 0:
		return append(ops, collOp{peer: peer, bytes: firstBytes, carry: true, ref: firstSeg}), true
	case 1:
		return append(ops, collOp{send: true, peer: peer, blocking: true}), true
	}
	return append(ops, collOp{peer: peer, bytes: block - firstBytes, carry: true, ref: restSeg}, collOp{wait: waitOne, ref: firstSeg}), true
}
