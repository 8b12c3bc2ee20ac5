package ti

import (
	"strconv"

	"kairos/trace"
)

// action parses the tokens of the current line (rank already checked)
// into p.ev, as SimGrid 3.32's parser for that action reads them.
func (p *parser) action(ln int) error {
	if len(p.toks) < 2 {
		return p.errAt(ln, 1, "an action name after the rank")
	}
	ev := &p.ev
	ev.Reset()
	switch string(p.toks[1]) {
	case "init":
		ev.Kind = trace.Init
		arg := 0
		if len(p.toks) > 2 {
			arg = 1
		}
		if p.initArg < 0 {
			p.initArg = arg
		}
		return nil
	case "finalize":
		ev.Kind = trace.Finalize
		return nil
	case "compute":
		ev.Kind = trace.Compute
		return p.flops(ln, 2)
	case "sleep":
		ev.Kind = trace.Sleep
		v, err := p.real(ln, 2, "a duration in seconds")
		ev.Compute = v
		return err
	case "location":
		return p.location(ln)
	case "send":
		return p.pointToPoint(ln, trace.Send)
	case "isend":
		return p.pointToPoint(ln, trace.Isend)
	case "recv":
		return p.pointToPoint(ln, trace.Recv)
	case "irecv":
		return p.pointToPoint(ln, trace.Irecv)
	case "wait":
		return p.waitTest(ln, trace.Wait)
	case "test":
		return p.waitTest(ln, trace.Test)
	case "waitall":
		ev.Kind = trace.Waitall
		p.clearStore()
		return nil
	case "sendRecv":
		return p.sendRecv(ln)
	case "barrier":
		ev.Kind = trace.Barrier
		return nil
	case "bcast":
		return p.bcast(ln)
	case "reduce":
		return p.reduction(ln, trace.Reduce, rangeUnsigned)
	case "allreduce":
		return p.reduction(ln, trace.Allreduce, rangeUnsigned)
	case "scan":
		return p.reduction(ln, trace.Scan, rangeSize)
	case "exscan":
		return p.reduction(ln, trace.Exscan, rangeSize)
	case "alltoall":
		return p.twoCounts(ln, trace.Alltoall, false)
	case "gather":
		return p.twoCounts(ln, trace.Gather, true)
	case "allgather":
		return p.twoCounts(ln, trace.Allgather, false)
	case "scatter":
		return p.twoCounts(ln, trace.Scatter, true)
	case "alltoallv":
		return p.alltoallv(ln)
	case "gatherv":
		return p.gatherv(ln)
	case "allgatherv":
		return p.allgatherv(ln)
	case "scatterv":
		return p.scatterv(ln)
	case "reducescatter":
		return p.reduceScatter(ln)
	case "comm_size":
		ev.Kind = trace.CommSize
		return nil
	case "comm_split":
		ev.Kind = trace.CommSplit
		return nil
	case "comm_dup":
		ev.Kind = trace.CommDup
		return nil
	}
	return p.errAt(ln, 1, "a SimGrid 3.32 action name")
}

// knownAction reports whether name is an action SimGrid 3.32 replays.
func knownAction(name []byte) bool {
	switch string(name) {
	case "init", "finalize", "compute", "sleep", "location", "send", "isend", "recv", "irecv",
		"wait", "test", "waitall", "sendRecv", "barrier", "bcast", "reduce", "allreduce", "scan",
		"exscan", "alltoall", "gather", "allgather", "scatter", "alltoallv", "gatherv",
		"allgatherv", "scatterv", "reducescatter", "comm_size", "comm_split", "comm_dup":
		return true
	}
	return false
}

func (p *parser) flops(ln, i int) error {
	v, err := p.real(ln, i, "a number of flops")
	p.ev.Compute = v
	return err
}

// location: "location <file> <line>". The file becomes a region of the
// trace's metadata (registered when the trace was opened, see regions);
// the line number is kept in Tag.
func (p *parser) location(ln int) error {
	if err := p.need(ln, 2, "a file name and a line number"); err != nil {
		return err
	}
	line, err := p.stoi(ln, 3, "a line number")
	if err != nil {
		return err
	}
	p.ev.Kind = trace.Location
	p.ev.Tag = line
	p.ev.Region = p.region(p.toks[2])
	return nil
}

// pointToPoint: send/isend "<dst> <tag> <count> [dt]", recv/irecv
// "<src> <tag> <count> [dt]".
func (p *parser) pointToPoint(ln int, k trace.Kind) error {
	ev := &p.ev
	ev.Kind = k
	if err := p.need(ln, 3, "a partner rank, a tag and a count"); err != nil {
		return err
	}
	partner, err := p.stoi(ln, 2, "a partner rank (an integer)")
	if err != nil {
		return err
	}
	tag, err := p.stoi(ln, 3, "a tag (an integer)")
	if err != nil {
		return err
	}
	recv := k == trace.Recv || k == trace.Irecv
	count, err := p.count(ln, 4, rangeSsize, recv)
	if err != nil {
		return err
	}
	dt, err := p.dtype(ln, 5)
	if err != nil {
		return err
	}
	b, err := p.bytes(ln, 4, count, dt)
	if err != nil {
		return err
	}
	ev.Tag = tag
	if recv {
		ev.Partner, ev.RecvBytes, ev.RecvType = peer(partner), b, dt
		if tag == simgridAnyTag {
			ev.Tag = trace.AnyTag
		}
	} else {
		ev.Partner, ev.SendBytes, ev.SendType = partner, b, dt
	}
	switch k {
	case trace.Isend:
		p.nextReq++
		ev.Request = p.nextReq
		p.push(reqKey{p.rank, ev.Partner, tag}, ev.Request)
	case trace.Irecv:
		p.nextReq++
		ev.Request = p.nextReq
		p.push(reqKey{ev.Partner, p.rank, tag}, ev.Request)
	}
	return nil
}

// waitTest: "wait|test <src> <dst> <tag>", kept in Source, Partner and
// Tag as written (MPI_ANY_SOURCE aside). The event gets the id of the
// oldest request stored under that key, or 0 if there is none (SimGrid
// then does nothing). Both spellings of MPI_ANY_SOURCE, -333 and -555,
// are one key. A test puts the request back at the end of its
// key's queue, as SimGrid 3.32 does (as the request itself or as a null
// request if the test succeeded; which one depends on timing).
func (p *parser) waitTest(ln int, k trace.Kind) error {
	ev := &p.ev
	ev.Kind = k
	if err := p.need(ln, 3, "<src> <dst> <tag>"); err != nil {
		return err
	}
	src, err := p.stoi(ln, 2, "a source rank (an integer)")
	if err != nil {
		return err
	}
	dst, err := p.stoi(ln, 3, "a destination rank (an integer)")
	if err != nil {
		return err
	}
	tag, err := p.stoi(ln, 4, "a tag (an integer)")
	if err != nil {
		return err
	}
	ev.Source, ev.Partner, ev.Tag = peer(src), dst, tag
	if k == trace.Wait && p.liveKeys == 0 {
		p.warnEmpty = true
	}
	key := reqKey{ev.Source, peer(dst), tag}
	ev.Request = p.pop(key)
	if k == trace.Test && ev.Request != 0 {
		p.push(key, ev.Request)
	}
	return nil
}

// sendRecv: "<sendcount> <dst> <recvcount> <src> <sdt> <rdt>"; SimGrid
// 3.32 requires all six.
func (p *parser) sendRecv(ln int) error {
	ev := &p.ev
	ev.Kind = trace.SendRecv
	if err := p.need(ln, 6, "<sendcount> <dst> <recvcount> <src> <sendtype> <recvtype>"); err != nil {
		return err
	}
	sc, err := p.count(ln, 2, rangeInt, false)
	if err != nil {
		return err
	}
	if ev.Partner, err = p.stoi(ln, 3, "a destination rank (an integer)"); err != nil {
		return err
	}
	rc, err := p.count(ln, 4, rangeInt, false)
	if err != nil {
		return err
	}
	if ev.Source, err = p.stoi(ln, 5, "a source rank (an integer)"); err != nil {
		return err
	}
	if ev.SendType, err = p.dtype(ln, 6); err != nil {
		return err
	}
	if ev.RecvType, err = p.dtype(ln, 7); err != nil {
		return err
	}
	if ev.SendBytes, err = p.bytes(ln, 2, sc, ev.SendType); err != nil {
		return err
	}
	ev.RecvBytes, err = p.bytes(ln, 4, rc, ev.RecvType)
	return err
}

// bcast: "<count> [root] [dt]".
func (p *parser) bcast(ln int) error {
	ev := &p.ev
	ev.Kind = trace.Bcast
	if err := p.need(ln, 1, "a count"); err != nil {
		return err
	}
	var err error
	if ev.Partner, err = p.optStoi(ln, 3, 0, "a root rank (an integer)"); err != nil {
		return err
	}
	if ev.SendType, err = p.dtype(ln, 4); err != nil {
		return err
	}
	ev.SendBytes, err = p.countBytes(ln, 2, rangeSize, ev.SendType)
	return err
}

// reduction: reduce "<count> <flops> [root] [dt]"; allreduce, scan,
// exscan "<count> <flops> [dt]".
func (p *parser) reduction(ln int, k trace.Kind, r countRange) error {
	ev := &p.ev
	ev.Kind = k
	if err := p.need(ln, 2, "a count and a number of flops"); err != nil {
		return err
	}
	dtAt := 4
	if k == trace.Reduce {
		var err error
		if ev.Partner, err = p.optStoi(ln, 4, 0, "a root rank (an integer)"); err != nil {
			return err
		}
		dtAt = 5
	}
	var err error
	if ev.SendType, err = p.dtype(ln, dtAt); err != nil {
		return err
	}
	if ev.SendBytes, err = p.countBytes(ln, 2, r, ev.SendType); err != nil {
		return err
	}
	return p.flops(ln, 3)
}

// twoCounts: alltoall and allgather "<sendcount> <recvcount> [sdt] [rdt]";
// gather and scatter "<sendcount> <recvcount> [root] [sdt] [rdt]".
func (p *parser) twoCounts(ln int, k trace.Kind, rooted bool) error {
	ev := &p.ev
	ev.Kind = k
	if err := p.need(ln, 2, "a send count and a receive count"); err != nil {
		return err
	}
	dtAt := 4
	if rooted {
		var err error
		if ev.Partner, err = p.optStoi(ln, 4, 0, "a root rank (an integer)"); err != nil {
			return err
		}
		dtAt = 5
	}
	var err error
	if ev.SendType, err = p.dtype(ln, dtAt); err != nil {
		return err
	}
	if ev.RecvType, err = p.dtype(ln, dtAt+1); err != nil {
		return err
	}
	if ev.SendBytes, err = p.countBytes(ln, 2, rangeInt, ev.SendType); err != nil {
		return err
	}
	ev.RecvBytes, err = p.countBytes(ln, 3, rangeInt, ev.RecvType)
	return err
}

// alltoallv: "<sendbufsize> <sendcount×N> <recvbufsize> <recvcount×N>
// [sdt] [rdt]". The buffer sizes go to SendBytes and RecvBytes, the
// per-peer counts to SendCounts and RecvCounts.
func (p *parser) alltoallv(ln int) error {
	ev := &p.ev
	ev.Kind = trace.Alltoallv
	n := p.nranks
	if err := p.need(ln, 2*n+2, "a send buffer size, "+itoa(n)+" send counts, a receive buffer size and "+itoa(n)+" receive counts"); err != nil {
		return err
	}
	var err error
	if ev.SendType, err = p.dtype(ln, 4+2*n); err != nil {
		return err
	}
	if ev.RecvType, err = p.dtype(ln, 5+2*n); err != nil {
		return err
	}
	if ev.SendBytes, err = p.countBytes(ln, 2, rangeInt, ev.SendType); err != nil {
		return err
	}
	if ev.RecvBytes, err = p.countBytes(ln, 3+n, rangeInt, ev.RecvType); err != nil {
		return err
	}
	if ev.SendCounts, _, err = p.vector(ln, 3, n, 0, ev.SendType); err != nil {
		return err
	}
	ev.RecvCounts, _, err = p.vector(ln, 4+n, n, 1, ev.RecvType)
	return err
}

// gatherv: "<sendcount> <recvcount×N> [root] [sdt] [rdt]". RecvBytes is
// the total of RecvCounts.
func (p *parser) gatherv(ln int) error {
	ev := &p.ev
	ev.Kind = trace.Gatherv
	n := p.nranks
	if err := p.need(ln, n+1, "a send count and "+itoa(n)+" receive counts"); err != nil {
		return err
	}
	var err error
	if ev.Partner, err = p.optStoi(ln, 3+n, 0, "a root rank (an integer)"); err != nil {
		return err
	}
	if ev.SendType, err = p.dtype(ln, 4+n); err != nil {
		return err
	}
	if ev.RecvType, err = p.dtype(ln, 5+n); err != nil {
		return err
	}
	if ev.SendBytes, err = p.countBytes(ln, 2, rangeInt, ev.SendType); err != nil {
		return err
	}
	ev.RecvCounts, ev.RecvBytes, err = p.vector(ln, 3, n, 1, ev.RecvType)
	return err
}

// allgatherv: "<sendcount> <recvcount×N>" then, by SimGrid 3.32's token
// count rule (T tokens in all, rank and name included): T > 2N+3: sdt,
// rdt and N displacements; else T > N+5: N displacements; else
// [sdt] [rdt]. Displacements are checked but not kept (they do not change
// the replay).
func (p *parser) allgatherv(ln int) error {
	ev := &p.ev
	ev.Kind = trace.Allgatherv
	n := p.nranks
	t := len(p.toks)
	if err := p.need(ln, n+1, "a send count and "+itoa(n)+" receive counts"); err != nil {
		return err
	}
	var err error
	disp := 0
	switch {
	case t > 3+2*n:
		disp = 5 + n
	case t > 3+n+2:
		disp = 3 + n
	}
	if disp != 3+n {
		if ev.SendType, err = p.dtype(ln, 3+n); err != nil {
			return err
		}
		if ev.RecvType, err = p.dtype(ln, 4+n); err != nil {
			return err
		}
	}
	if disp != 0 {
		if disp+n > t {
			return p.errAt(ln, t, itoa(n)+" displacements")
		}
		for j := 0; j < n; j++ {
			if _, err := p.stoi(ln, disp+j, "a displacement (an integer)"); err != nil {
				return err
			}
		}
	}
	if ev.SendBytes, err = p.countBytes(ln, 2, rangeInt, ev.SendType); err != nil {
		return err
	}
	ev.RecvCounts, ev.RecvBytes, err = p.vector(ln, 3, n, 1, ev.RecvType)
	return err
}

// scatterv: "<sendcount×N> <recvcount> [root] [sdt] [rdt]". SendBytes is
// the total of SendCounts.
func (p *parser) scatterv(ln int) error {
	ev := &p.ev
	ev.Kind = trace.Scatterv
	n := p.nranks
	if err := p.need(ln, n+1, itoa(n)+" send counts and a receive count"); err != nil {
		return err
	}
	var err error
	if ev.Partner, err = p.optStoi(ln, 3+n, 0, "a root rank (an integer)"); err != nil {
		return err
	}
	if ev.SendType, err = p.dtype(ln, 4+n); err != nil {
		return err
	}
	if ev.RecvType, err = p.dtype(ln, 5+n); err != nil {
		return err
	}
	if ev.RecvBytes, err = p.countBytes(ln, 2+n, rangeInt, ev.RecvType); err != nil {
		return err
	}
	ev.SendCounts, ev.SendBytes, err = p.vector(ln, 2, n, 0, ev.SendType)
	return err
}

// reduceScatter: "<recvcount×N> <flops> [dt]". RecvBytes is the total of
// RecvCounts; the datatype is kept in RecvType.
func (p *parser) reduceScatter(ln int) error {
	ev := &p.ev
	ev.Kind = trace.ReduceScatter
	n := p.nranks
	if err := p.need(ln, n+1, itoa(n)+" receive counts and a number of flops"); err != nil {
		return err
	}
	var err error
	if err = p.flops(ln, 2+n); err != nil {
		return err
	}
	if ev.RecvType, err = p.dtype(ln, 3+n); err != nil {
		return err
	}
	ev.RecvCounts, ev.RecvBytes, err = p.vector(ln, 2, n, 1, ev.RecvType)
	return err
}

func itoa(n int) string { return strconv.Itoa(n) }
