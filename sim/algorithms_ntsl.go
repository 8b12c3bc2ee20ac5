package sim

import "kairos/trace"

func init() {
	bcastAlgos["NTSL"] = nil // made of other collectives: see composites
	composites["bcast:NTSL"] = bcastNTSL
}

// ntslSegment is bcast__NTSL's segment size in bytes.
const ntslSegment = 8192

// ntslSplit returns NTSL's segment (in bytes), its number of whole
// segments and the bytes left over, for c's message.
func ntslSplit(c *collCall) (seg, pipes, rest int64) {
	ext := max(c.ssize, 1)
	segElems := max(ntslSegment/ext, 1)
	count := collBytes(c) / ext
	return segElems * ext, count / segElems, count % segElems * ext
}

// bcastNTSL (bcast__NTSL, a pipelined linear broadcast): the root first
// hands the message to rank 0, which starts a chain 0 -> 1 -> ... -> n-1
// of 8 KiB segments; the bytes beyond the last whole segment are then
// broadcast with the bcast algorithm configured.
func bcastNTSL(c *collCall) []subColl {
	seg, _, rest := ntslSplit(c)
	subs := []subColl{{run: ntslChain, root: c.root}}
	if rest != 0 && collBytes(c) > seg {
		subs = append(subs, subColl{kind: trace.Bcast, root: c.root, bytes: rest})
	}
	return subs
}

// ntslChain is NTSL's chain. A message of one segment or less goes down
// it whole, each rank receiving (a wait on its receive) before sending
// with a blocking send. A longer one is pipelined: rank 0 posts the sends
// of every segment and waits for them all; the others post every receive,
// then wait for each segment in turn and post its send onwards; the last
// rank just waits for its receives.
func ntslChain(c *collCall, p int, ops []collOp) ([]collOp, bool) {
	n, me := c.n, c.me
	to, from := (me+1)%n, (me+n-1)%n
	seg, pipes, _ := ntslSplit(c)
	bytes := collBytes(c)
	if c.root != 0 {
		// Phase 0: the root hands the message to rank 0.
		if p == 0 {
			switch me {
			case c.root:
				return append(ops, collOp{send: true, peer: 0, bytes: bytes, blocking: true}), true
			case 0:
				return append(ops, collOp{peer: c.root, blocking: true}), true
			}
			return ops, true
		}
		p--
	}
	last := me == n-1
	if bytes <= seg {
		switch {
		case p == 0 && me == 0:
			return append(ops, collOp{send: true, peer: to, bytes: bytes, blocking: true}), true
		case p == 0:
			return append(ops, collOp{peer: from, carry: true}, collOp{wait: waitOne}), true
		case p == 1 && me != 0 && !last:
			return append(ops, collOp{send: true, peer: to, bytes: bytes, blocking: true}), true
		}
		return ops, false
	}
	if me == 0 || last {
		if p > 0 {
			return ops, false
		}
		op := collOp{peer: from}
		if me == 0 {
			op = collOp{send: true, peer: to, bytes: seg}
		}
		for range pipes {
			ops = append(ops, op)
		}
		return ops, true
	}
	// An inner rank: all receives, then a wait and a send per segment,
	// then one wait for all the sends.
	const sends = -1
	switch {
	case p == 0:
		for i := range pipes {
			ops = append(ops, collOp{peer: from, carry: true, ref: int32(i)})
		}
		return ops, true
	case p <= int(2*pipes):
		i := int32((p - 1) / 2)
		if (p-1)%2 == 0 {
			return append(ops, collOp{wait: waitOne, ref: i}), true
		}
		return append(ops, collOp{send: true, peer: to, bytes: seg, carry: true, ref: sends}), true
	case p == int(2*pipes)+1:
		return append(ops, collOp{wait: waitCarried}), true
	}
	return ops, false
}
