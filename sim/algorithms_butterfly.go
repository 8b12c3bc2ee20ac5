package sim

import "math/bits"

// Open MPI's butterfly reduce_scatter as SimGrid 3.32 copies it
// (reduce_scatter-ompi.cpp).

func init() {
	reduceScatterAlgos["ompi_butterfly"] = []algorithm{phased(reduceScatterButterfly)}
}

// reduceScatterButterfly (reduce_scatter__ompi_butterfly): the first 2r
// ranks pair up as in recursive halving (r = n minus the largest power of
// two below it: the even ones hand everything to the odd ones); the
// others exchange halves with rank ^ mask for growing masks (sendrecv),
// then send their result to their mirror (bit-reversed) rank, which for a
// pair also serves the even rank that left.
func reduceScatterButterfly(phases [][]collOp, c *collCall) [][]collOp {
	n, me := c.n, c.me
	if n < 2 {
		return phases
	}
	counts := c.e.RecvCounts
	pof2 := int32(1) << (bits.Len32(uint32(n)) - 1)
	rem := n - pof2
	log2 := bits.Len32(uint32(pof2)) - 1
	real := func(v int32) int32 { // a virtual rank's rank
		if v < rem {
			return 2*v + 1
		}
		return v + rem
	}
	first := func(b int32) int32 { // a block's first count
		if b < rem {
			return 2 * b
		}
		return b + rem
	}
	blocks := func(lo, hi int32) int64 { // counts of blocks lo..hi
		last := hi + rem
		if hi < rem {
			last = 2*hi + 1
		}
		return sumCounts(counts, first(lo), last+1)
	}
	mirror := func(x int32) int32 { return int32(bits.Reverse32(uint32(x)) >> (32 - log2)) }
	vrank := me - rem
	if me < 2*rem {
		if me%2 == 0 {
			phases = append(phases, blockingPhase(true, me+1, sumCounts(counts, 0, n)))
			return append(phases, blockingPhase(false, real(mirror((me+1)/2)), counts[me]))
		}
		phases = append(phases, blockingPhase(false, me-1, sumCounts(counts, 0, n)))
		vrank = me / 2
	}
	nblocks, sendIdx, recvIdx := pof2, int32(0), int32(0)
	for mask := int32(1); mask < pof2; mask <<= 1 {
		peer := real(vrank ^ mask)
		nblocks /= 2
		if vrank&mask == 0 {
			sendIdx += nblocks
		} else {
			recvIdx += nblocks
		}
		phases = append(phases, []collOp{{sr: true, peer: peer, bytes: blocks(sendIdx, sendIdx+nblocks-1), rbytes: blocks(recvIdx, recvIdx+nblocks-1)}})
		sendIdx = recvIdx
	}
	vpeer := mirror(vrank)
	peer := real(vpeer)
	index := first(sendIdx)
	if vpeer < rem {
		phases = append(phases, blockingPhase(true, peer-1, counts[index]))
		index++
	}
	if vpeer != vrank {
		phases = append(phases, []collOp{{sr: true, peer: peer, bytes: counts[index], rbytes: counts[me]}})
	}
	return phases
}
