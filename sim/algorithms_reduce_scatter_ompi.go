package sim

import "slices"

// Open MPI's reduce_scatter algorithms as SimGrid 3.32 copies them
// (reduce_scatter-ompi.cpp).

func init() {
	reduceScatterAlgos["ompi_ring"] = []algorithm{reduceScatterOmpiRing}
	reduceScatterAlgos["ompi_basic_recursivehalving"] = []algorithm{phased(reduceScatterOmpiHalving)}
}

// reduceScatterOmpiRing (reduce_scatter__ompi_ring): n-1 steps round the
// ring; at each, a rank keeps one receive from its left neighbour posted
// ahead, waits for the previous one (Request::wait) and sends the block
// it reduced to its right neighbour with a blocking send. The first send
// is the left neighbour's block of the rank's own data.
func reduceScatterOmpiRing(c *collCall, p int, ops []collOp) ([]collOp, bool) {
	n, me := c.n, c.me
	if n == 1 || c.tmpNull && sumCounts(c.e.RecvCounts, 0, n) == 0 {
		// With no element, SimGrid's temporary buffers are of 0 bytes:
		// while one is still null, SimGrid gives up before any message.
		return ops, false
	}
	to, from := (me+1)%n, (me+n-1)%n
	// Every receive asks for the largest block.
	recv := collOp{peer: from, bytes: slices.Max(c.e.RecvCounts[:n]), carry: true}
	send := func(block int32) collOp {
		return collOp{send: true, peer: to, bytes: c.e.RecvCounts[block], blocking: true}
	}
	switch {
	case p == 0:
		return append(ops, recv), true
	case p == 1:
		return append(ops, send(from)), true
	case p < 2*int(n-1):
		// k = 2 .. n-1: the receive of block k and the wait for k-1, then
		// the send of block (me-k) mod n.
		k := int32(p/2) + 1
		if p%2 == 0 {
			return append(ops, recv, collOp{wait: waitOne}), true
		}
		return append(ops, send((me+n-k)%n)), true
	case p == 2*int(n-1):
		return append(ops, collOp{wait: waitOne}), true
	}
	return ops, false
}

// reduceScatterOmpiHalving (reduce_scatter__ompi_basic_recursivehalving):
// on a size that is not a power of two, the first 2r ranks (r = n minus
// the largest power of two below it) pair up, the even one handing all
// its data to the odd one; the remaining power of two halve the data
// recursively, each step a receive posted ahead, a blocking send and a
// wait; the odd ranks of the pairs finally send the even ones their
// blocks.
func reduceScatterOmpiHalving(phases [][]collOp, c *collCall) [][]collOp {
	n, me := c.n, c.me
	counts := c.e.RecvCounts
	total := sumCounts(counts, 0, n)
	if total == 0 {
		return phases
	}
	pow := int32(1)
	for pow <= n {
		pow <<= 1
	}
	pow >>= 1
	remain := n - pow
	tmpRank := me - remain
	if me < 2*remain {
		if me%2 == 0 {
			phases = append(phases, blockingPhase(true, me+1, total))
			tmpRank = -1
		} else {
			phases = append(phases, blockingPhase(false, me-1, total))
			tmpRank = me / 2
		}
	}
	if tmpRank >= 0 {
		tmpCounts := make([]int64, pow)
		for i := range pow {
			if i < remain {
				tmpCounts[i] = counts[2*i+1] + counts[2*i]
			} else {
				tmpCounts[i] = counts[i+remain]
			}
		}
		sendIdx, recvIdx, lastIdx := int32(0), int32(0), pow
		for mask := pow >> 1; mask > 0; mask >>= 1 {
			tmpPeer := tmpRank ^ mask
			peer := tmpPeer + remain
			if tmpPeer < remain {
				peer = tmpPeer*2 + 1
			}
			var sendCount, recvCount int64
			if tmpRank < tmpPeer {
				sendIdx = recvIdx + mask
				sendCount, recvCount = sumCounts(tmpCounts, sendIdx, lastIdx), sumCounts(tmpCounts, recvIdx, sendIdx)
			} else {
				recvIdx = sendIdx + mask
				sendCount, recvCount = sumCounts(tmpCounts, sendIdx, recvIdx), sumCounts(tmpCounts, recvIdx, lastIdx)
			}
			if sendCount > 0 && recvCount != 0 {
				phases = append(phases, []collOp{{peer: peer, bytes: recvCount, carry: true}})
			}
			if recvCount > 0 && sendCount != 0 {
				phases = append(phases, blockingPhase(true, peer, sendCount))
			}
			if sendCount > 0 && recvCount != 0 {
				phases = append(phases, []collOp{{wait: waitOne}})
			}
			sendIdx = recvIdx
			lastIdx = recvIdx + mask
		}
	}
	if me < 2*remain {
		if me%2 == 0 {
			if counts[me] != 0 {
				phases = append(phases, blockingPhase(false, me+1, counts[me]))
			}
		} else if counts[me-1] != 0 {
			phases = append(phases, blockingPhase(true, me-1, counts[me-1]))
		}
	}
	return phases
}
