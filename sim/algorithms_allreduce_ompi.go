package sim

// Open MPI's segmented ring allreduce as SimGrid 3.32 copies it
// (allreduce-ompi-ring-segmented.cpp).

func init() {
	allreduceAlgos["ompi_ring_segmented"] = nil // made of other collectives: see composites
	composites["allreduce:ompi_ring_segmented"] = allreduceRingSegmented
}

// segmentedRing runs allreduceSegmentedRing's phases.
var segmentedRing = phased(allreduceSegmentedRing)

// ringSegmentedSize is the segment size of ompi_ring_segmented, in bytes.
const ringSegmentedSize = 1 << 20

// allreduceRingSegmented (allreduce__ompi_ring_segmented): under n
// segments of 1 MiB, SimGrid's lr; else the ring allreduce in phases of
// at most one segment per block (allreduceSegmentedRing).
func allreduceRingSegmented(c *collCall) []subColl {
	ext := max(c.ssize, 1)
	count := collBytes(c) / ext
	if c.n == 1 {
		return nil
	}
	if count < int64(c.n)*segCount(ringSegmentedSize, ext, count) {
		return allreduceLR(c)
	}
	return []subColl{{run: segmentedRing, root: c.root}}
}

// blockSplit is Open MPI's COLL_TUNED_COMPUTE_BLOCKCOUNT: count elements
// in blocks, the first split of them one element larger.
func blockSplit(count, blocks int64) (split, early, late int64) {
	late = count / blocks
	split = count % blocks
	early = late
	if split != 0 {
		early++
	}
	return split, early, late
}

// allreduceSegmentedRing is the segmented ring itself. The elements are
// split in n blocks, each in phases of about one segment. For each phase,
// a reduce-scatter round the ring: a rank keeps one receive from its left
// neighbour posted ahead, waits for the previous one (Request::wait) and
// sends the piece it reduced onwards with a blocking send. Then an
// allgather round the ring of whole blocks, n-1 sendrecv steps.
func allreduceSegmentedRing(phases [][]collOp, c *collCall) [][]collOp {
	n, me := int64(c.n), int64(c.me)
	ext := max(c.ssize, 1)
	count := collBytes(c) / ext
	seg := segCount(ringSegmentedSize, ext, count)
	nph := count / (n * seg)
	if rest := count % (n * seg); rest >= n && rest > n*seg/2 {
		nph++
	}
	splitRank, earlyBlock, lateBlock := blockSplit(count, n)
	blockCount := func(b int64) int64 {
		if b < splitRank {
			return earlyBlock
		}
		return lateBlock
	}
	pieceBytes := func(b, phase int64) int64 {
		split, early, late := blockSplit(blockCount(b), nph)
		if phase < split {
			return early * ext
		}
		return late * ext
	}
	to, from := int32((me+1)%n), int32((me+n-1)%n)
	// Every receive asks for the largest piece; the allgather's for an
	// early block.
	_, maxPiece, _ := blockSplit(earlyBlock, nph)
	recv := collOp{peer: from, bytes: maxPiece * ext, carry: true}
	send := func(bytes int64) []collOp { return blockingPhase(true, to, bytes) }
	for ph := int64(0); ph < nph; ph++ {
		phases = append(phases, []collOp{recv}, send(pieceBytes(me, ph)))
		for k := int64(2); k < n; k++ {
			prev := (me + n - k + 1) % n
			phases = append(phases, []collOp{recv, {wait: waitOne}}, send(pieceBytes(prev, ph)))
		}
		phases = append(phases, []collOp{{wait: waitOne}})
	}
	for k := int64(0); k < n-1; k++ {
		sendFrom := (me + 1 + n - k) % n
		phases = append(phases, []collOp{{send: true, peer: to, bytes: blockCount(sendFrom) * ext}, {peer: from, bytes: earlyBlock * ext}})
	}
	return phases
}
