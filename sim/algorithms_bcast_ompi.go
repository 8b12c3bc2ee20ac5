package sim

// Open MPI's segmented broadcasts as SimGrid 3.32 copies them
// (bcast-ompi-pipeline.cpp, bcast-ompi-split-bintree.cpp).

func init() {
	bcastAlgos["ompi_pipeline"] = []algorithm{phased(bcastOmpiPipeline)}
}

// bcastOmpiPipeline (bcast__ompi_pipeline): down a chain from the root in
// segments of 128, 64 or 16 KiB (Open MPI's fitted rules on the number of
// ranks and the message size). The root sends each segment and waits for
// the send; an inner rank keeps one receive posted ahead, waits for the
// previous segment, forwards it and waits for that send; the last rank
// keeps one receive ahead and waits for each segment in turn.
func bcastOmpiPipeline(phases [][]collOp, c *collCall) [][]collOp {
	if c.n == 1 {
		return phases
	}
	ext := max(c.ssize, 1)
	size := collBytes(c)
	n := float64(c.n)
	seg := int64(128 << 10)
	switch msg := float64(size); {
	case n < 1.6134e-6*msg+2.1102:
		seg = 128 << 10
	case n < 2.3679e-6*msg+1.1787:
		seg = 64 << 10
	case n < 3.2118e-6*msg+8.7936:
		seg = 16 << 10
	}
	count := size / ext
	segCnt := segCount(seg, ext, count)
	nseg := int64(0)
	if segCnt > 0 {
		nseg = (count + segCnt - 1) / segCnt
	}
	lastBytes := (count - (nseg-1)*segCnt) * ext
	t := ompiChain(1, c.n, c.me, c.root)
	sendAll := func(bytes int64) []collOp {
		var ph []collOp
		for _, k := range t.next {
			ph = append(ph, collOp{send: true, peer: k, bytes: bytes})
		}
		return ph
	}
	switch {
	case c.me == c.root:
		for s := int64(0); s < nseg; s++ {
			bytes := segCnt * ext
			if s == nseg-1 {
				bytes = lastBytes
			}
			phases = append(phases, sendAll(bytes))
		}
	default:
		// The first receive, then per later segment: post its receive
		// and wait for the previous one (Request::wait), and forward
		// that one; at last, wait for the last and forward it. Every
		// receive asks for a whole segment.
		recv := collOp{peer: t.prev, bytes: segCnt * ext, carry: true}
		phases = append(phases, []collOp{recv})
		for s := int64(1); s < nseg; s++ {
			phases = append(phases, []collOp{recv, {wait: waitOne}})
			if len(t.next) > 0 {
				phases = append(phases, sendAll(segCnt*ext))
			}
		}
		phases = append(phases, []collOp{{wait: waitOne}})
		if len(t.next) > 0 {
			phases = append(phases, sendAll(lastBytes))
		}
	}
	return phases
}

func init() {
	bcastAlgos["ompi_split_bintree"] = []algorithm{phased(bcastSplitBintree)}
}

// splitBintreeFallback reports whether ompi_split_bintree would fall
// back to SimGrid's SMP_linear (halves smaller than one segment), on
// which SimGrid 3.32's replay crashes.
func splitBintreeFallback(c *collCall) bool {
	_, counts, seg := splitBintreeShape(c)
	return counts[0] == 0 || counts[1] == 0 || seg > counts[0]*max(c.ssize, 1) || seg > counts[1]*max(c.ssize, 1)
}

// splitBintreeShape returns ompi_split_bintree's elements per segment,
// the elements of the two halves, and its segment size in bytes.
func splitBintreeShape(c *collCall) (segCnt int64, counts [2]int64, seg int64) {
	ext := max(c.ssize, 1)
	count := collBytes(c) / ext
	seg = 1024
	if count*ext >= 370728 {
		seg = 8192
	}
	seg = max(seg, ext)
	counts[0] = (count + 1) / 2
	counts[1] = count - counts[0]
	return seg / ext, counts, seg
}

// bcastSplitBintree (bcast__ompi_split_bintree): the root splits the
// message in two halves and sends them in segments (of 1 KiB, or 8 KiB
// from 370,728 bytes), one down each subtree of a binary tree; inner
// ranks keep one receive posted ahead and forward each segment with
// blocking sends, leaves receive with blocking receives. Then each rank
// swaps halves with its pair in the other subtree (sendrecv); with an
// even number of ranks, the root sends the right half to the last one.
func bcastSplitBintree(phases [][]collOp, c *collCall) [][]collOp {
	n, me, root := c.n, c.me, c.root
	if n == 1 {
		return phases
	}
	ext := max(c.ssize, 1)
	segCnt, counts, _ := splitBintreeShape(c)
	var nseg [2]int64
	for i := range nseg {
		nseg[i] = (counts[i] + segCnt - 1) / segCnt
	}
	t := ompiKaryTree(2, n, me, root)
	lr := ((me+n-root)%n + 1) % 2
	last := func(i int64) int64 { return counts[i] - (nseg[i]-1)*segCnt }
	switch {
	case me == root:
		for s := int64(0); s < nseg[0]; s++ {
			for i, k := range t.next[:min(len(t.next), 2)] {
				if s >= nseg[i] {
					continue
				}
				elems := segCnt
				if s == nseg[i]-1 {
					elems = last(int64(i))
				}
				phases = append(phases, blockingPhase(true, k, elems*ext))
			}
		}
	case len(t.next) > 0:
		recv := collOp{peer: t.prev, bytes: segCnt * ext, carry: true}
		phases = append(phases, []collOp{recv})
		for s := int64(1); s < nseg[lr]; s++ {
			if s == nseg[lr]-1 {
				recv.bytes = last(int64(lr)) * ext
			}
			phases = append(phases, []collOp{recv, {wait: waitAllOne}})
			for _, k := range t.next {
				phases = append(phases, blockingPhase(true, k, segCnt*ext))
			}
		}
		phases = append(phases, []collOp{{wait: waitAllOne}})
		elems := segCnt
		if nseg[lr] > 1 {
			elems = last(int64(lr))
		}
		for _, k := range t.next {
			phases = append(phases, blockingPhase(true, k, elems*ext))
		}
	default:
		for s := range nseg[lr] {
			elems := segCnt
			if s == nseg[lr]-1 {
				elems = last(int64(lr))
			}
			phases = append(phases, blockingPhase(false, t.prev, elems*ext))
		}
	}
	pair := (me + 1) % n
	if lr == 1 {
		pair = (me + n - 1) % n
	}
	swap := []collOp{{sr: true, peer: pair, bytes: counts[lr] * ext, rbytes: counts[(lr+1)%2] * ext}}
	switch lastRank := (root + n - 1) % n; {
	case n%2 != 0 && me != root:
		phases = append(phases, swap)
	case n%2 == 0 && me == root:
		phases = append(phases, blockingPhase(true, lastRank, counts[1]*ext))
	case n%2 == 0 && me == lastRank:
		phases = append(phases, blockingPhase(false, root, counts[1]*ext))
	case n%2 == 0:
		phases = append(phases, swap)
	}
	return phases
}
