package sim

import "kairos/trace"

// SimGrid's own algorithms that call other collectives (colls::bcast,
// colls::gatherv): its non-topology-specific pipelined broadcasts (NTSL,
// NTSB), whose remainder is broadcast with the configured algorithm, and
// its gather-then-broadcast allgatherv (GB).

func init() {
	bcastAlgos["NTSL"] = nil // made of other collectives: see composites
	bcastAlgos["NTSB"] = nil
	allgathervAlgos["GB"] = nil
	ntsl, ntsb := phased(ntslChain), phased(ntsbTree)
	composites["bcast:NTSL"] = func(c *collCall) []subColl { return bcastNTS(c, ntsl, ntslSegment) }
	composites["bcast:NTSB"] = func(c *collCall) []subColl { return bcastNTS(c, ntsb, ntsbSegment) }
	composites["allgatherv:GB"] = allgathervGB
}

// The segment sizes (bytes) of bcast__NTSL and bcast__NTSB.
const (
	ntslSegment = 8192
	ntsbSegment = 8192
)

// ntsSplit returns the segment (in bytes) of a broadcast in segments of
// segment bytes (whole elements, at least one), its number of whole
// segments and the bytes left over, for c's message.
func ntsSplit(c *collCall, segment int64) (seg, pipes, rest int64) {
	ext := max(c.ssize, 1)
	segElems := max(segment/ext, 1)
	count := collBytes(c) / ext
	return segElems * ext, count / segElems, count % segElems * ext
}

// bcastNTS is SimGrid's non-topology-specific pipelined broadcasts:
// bcast__NTSL down a chain 0 -> 1 -> ... -> n-1, bcast__NTSB down a
// binary tree from rank 0 (run), in segments of 8 KiB; the bytes beyond
// the last whole segment are then broadcast with the bcast algorithm
// configured.
func bcastNTS(c *collCall, run algorithm, segment int64) []subColl {
	seg, _, rest := ntsSplit(c, segment)
	subs := []subColl{{run: run, root: c.root}}
	if rest != 0 && collBytes(c) > seg {
		subs = append(subs, subColl{kind: trace.Bcast, root: c.root, bytes: rest})
	}
	return subs
}

// ntslChain is NTSL's chain (see ntsPhases).
func ntslChain(phases [][]collOp, c *collCall) [][]collOp {
	n, me := c.n, c.me
	var next []int32
	if me != n-1 {
		next = []int32{(me + 1) % n}
	}
	return ntsPhases(phases, c, ntslSegment, (me+n-1)%n, next, true)
}

// ntsbTree is NTSB's binary tree rooted at rank 0, rank r's children
// being 2r+1 and 2r+2 (see ntsPhases).
func ntsbTree(phases [][]collOp, c *collCall) [][]collOp {
	var next []int32
	for _, k := range []int32{2*c.me + 1, 2*c.me + 2} {
		if k < c.n {
			next = append(next, k)
		}
	}
	return ntsPhases(phases, c, ntsbSegment, (c.me-1)/2, next, false)
}

// ntsPhases appends the phases of SimGrid's non-topology-specific
// pipelined broadcasts (NTSL, NTSB) down a tree rooted at rank 0, in
// which this rank receives from prev (rank 0 from nobody) and sends to
// next. A root other than 0 first hands the message to rank 0 (blocking).
// A message of one segment or less goes down whole: a blocking receive
// (waitRecv, NTSL's: a receive and a Request::wait), then a blocking send
// to each child. A longer one is pipelined: rank 0 posts the sends of every whole
// segment to every child and waits for them all; a leaf posts every
// receive and waits for them all; an inner rank posts every receive, then
// for each segment waits for it and posts its sends, and at last waits
// for all the sends.
func ntsPhases(phases [][]collOp, c *collCall, segment int64, prev int32, next []int32, waitRecv bool) [][]collOp {
	seg, pipes, _ := ntsSplit(c, segment)
	bytes := collBytes(c)
	me := c.me
	if c.root != 0 {
		var ph []collOp
		switch me {
		case c.root:
			ph = blockingPhase(true, 0, bytes)
		case 0:
			ph = blockingPhase(false, c.root, bytes)
		}
		phases = append(phases, ph)
	}
	if bytes <= seg {
		if me != 0 {
			recv := blockingPhase(false, prev, bytes)
			if waitRecv {
				recv = []collOp{{peer: prev, bytes: bytes, carry: true}, {wait: waitOne}}
			}
			phases = append(phases, recv)
		}
		for _, k := range next {
			phases = append(phases, blockingPhase(true, k, bytes))
		}
		return phases
	}
	switch {
	case me == 0:
		var ph []collOp
		for range pipes {
			for _, k := range next {
				ph = append(ph, collOp{send: true, peer: k, bytes: seg})
			}
		}
		return append(phases, ph)
	case len(next) == 0:
		ph := make([]collOp, pipes)
		for i := range ph {
			ph[i] = collOp{peer: prev, bytes: seg}
		}
		return append(phases, ph)
	}
	recvs := make([]collOp, pipes)
	for i := range recvs {
		recvs[i] = collOp{peer: prev, bytes: seg, carry: true, ref: int32(i)}
	}
	phases = append(phases, recvs)
	const sends = -1
	for i := range pipes {
		phases = append(phases, []collOp{{wait: waitOne, ref: int32(i)}})
		var ph []collOp
		for _, k := range next {
			ph = append(ph, collOp{send: true, peer: k, bytes: seg, carry: true, ref: sends})
		}
		phases = append(phases, ph)
	}
	return append(phases, []collOp{{wait: waitCarried}})
}

// allgathervGB (allgatherv__GB): a gatherv to rank 0, then a bcast from it
// (with the bcast algorithm configured) of as many elements as the largest
// receive count. SimGrid broadcasts up to the largest displacement +
// count, which is the largest count when the trace gives no displacements
// (SMPI's tracer writes none); traces do not keep them, and the TI reader
// warns of non-zero ones.
func allgathervGB(c *collCall) []subColl {
	largest := int64(0)
	for _, x := range c.e.RecvCounts {
		largest = max(largest, x)
	}
	return []subColl{{kind: trace.Gatherv, root: 0}, {kind: trace.Bcast, root: 0, bytes: largest}}
}
