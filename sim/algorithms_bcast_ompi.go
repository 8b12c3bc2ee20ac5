package sim

// Open MPI's pipelined broadcast as SimGrid 3.32 copies it
// (bcast-ompi-pipeline.cpp).

func init() {
	bcastAlgos["ompi_pipeline"] = []algorithm{bcastOmpiPipeline}
}

// bcastOmpiPipeline (bcast__ompi_pipeline): down a chain from the root in
// segments of 128, 64 or 16 KiB (Open MPI's fitted rules on the number of
// ranks and the message size). The root sends each segment and waits for
// the send; an inner rank keeps one receive posted ahead, waits for the
// previous segment, forwards it and waits for that send; the last rank
// keeps one receive ahead and waits for each segment in turn.
func bcastOmpiPipeline(c *collCall, p int, ops []collOp) ([]collOp, bool) {
	if p == 0 {
		c.phases = pipelinePhases(c.phases[:0], c)
	}
	return phaseAt(c, p, ops)
}

func pipelinePhases(phases [][]collOp, c *collCall) [][]collOp {
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
		// that one; at last, wait for the last and forward it.
		recv := collOp{peer: t.prev, carry: true}
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
