package ti

import (
	"strconv"

	"kairos/internal/reqstore"
	"kairos/trace"
)

// action parses the tokens of the current line (rank already checked),
// line number ln, into p.ev, as SimGrid 3.32's parser for that action
// reads them.
func (p *parser) action(ln int) error {
	p.ln, p.err = ln, nil
	if len(p.toks) < 2 {
		return p.errAt(ln, 1, "an action name after the rank")
	}
	ev := &p.ev
	ev.Reset()
	switch string(p.toks[1]) {
	case "init":
		ev.Kind = trace.Init // its argument is read when the trace is opened
	case "finalize":
		ev.Kind = trace.Finalize
	case "compute":
		ev.Kind = trace.Compute
		p.flops(2)
	case "sleep":
		ev.Kind = trace.Sleep
		ev.Compute = p.amount(2, "a duration in seconds", trace.MaxSleep)
	case "location":
		p.location()
	case "send":
		p.pointToPoint(trace.Send)
	case "isend":
		p.pointToPoint(trace.Isend)
	case "recv":
		p.pointToPoint(trace.Recv)
	case "irecv":
		p.pointToPoint(trace.Irecv)
	case "wait":
		p.waitTest(trace.Wait)
	case "test":
		p.waitTest(trace.Test)
	case "waitall":
		ev.Kind = trace.Waitall
		p.store.clear()
	case "sendRecv":
		p.sendRecv()
	case "barrier":
		ev.Kind = trace.Barrier
	case "bcast":
		p.bcast()
	case "reduce":
		p.reduction(trace.Reduce, rangeUnsigned)
	case "allreduce":
		p.reduction(trace.Allreduce, rangeUnsigned)
	case "scan":
		p.reduction(trace.Scan, rangeSize)
	case "exscan":
		p.reduction(trace.Exscan, rangeSize)
	case "alltoall":
		p.twoCounts(trace.Alltoall, false)
	case "gather":
		p.twoCounts(trace.Gather, true)
	case "allgather":
		p.twoCounts(trace.Allgather, false)
	case "scatter":
		p.twoCounts(trace.Scatter, true)
	case "alltoallv":
		p.alltoallv()
	case "gatherv":
		p.gatherv()
	case "allgatherv":
		p.allgatherv()
	case "scatterv":
		p.scatterv()
	case "reducescatter":
		p.reduceScatter()
	case "comm_size":
		ev.Kind = trace.CommSize
	case "comm_split":
		ev.Kind = trace.CommSplit
	case "comm_dup":
		ev.Kind = trace.CommDup
	default:
		p.fail(1, "a SimGrid 3.32 action name")
	}
	return p.err
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

// flops reads the flops of a computation or reduction at token i: SimGrid
// aborts on a negative one, and one beyond trace.MaxFlops means nothing.
func (p *parser) flops(i int) {
	p.ev.Compute = p.amount(i, "a number of flops", trace.MaxFlops)
}

// amount reads a real from 0 to limit at token i.
func (p *parser) amount(i int, what string, limit float64) float64 {
	v := p.real(i, what)
	if p.err == nil && !(v >= 0 && v <= limit) {
		p.fail(i, what+" from 0 to "+strconv.FormatFloat(limit, 'g', 3, 64))
	}
	return v
}

// location: "location <file> <line>". The file becomes a region of the
// trace's metadata (registered when the trace was opened); the line
// number is kept in Tag.
func (p *parser) location() {
	p.ev.Kind = trace.Location
	if p.need(2, "a file name and a line number") {
		p.ev.Tag = p.stoi(3, "a line number")
		p.ev.Region = p.region(p.toks[2])
	}
}

// pointToPoint: send/isend "<dst> <tag> <count> [dt]", recv/irecv
// "<src> <tag> <count> [dt]".
func (p *parser) pointToPoint(k trace.Kind) {
	p.ev.Kind = k
	if t := p.toks; len(t) == 5 || len(t) == 6 {
		// Fast path: small non-negative integers and at most a datatype,
		// which is what traces hold. Anything else takes the general path.
		partner, ok1 := smallUint(t[2])
		tag, ok2 := smallUint(t[3])
		count, ok3 := smallUint(t[4])
		dt, ok4 := trace.DefaultType, true
		if len(t) == 6 {
			var d int8
			d, ok4 = parseDatatype(t[5])
			dt = trace.Datatype(d)
		}
		if ok1 && ok2 && ok3 && ok4 {
			p.setPointToPoint(k, int32(partner), int32(tag), count*dt.Size(p.deftyp), dt)
			return
		}
	}
	if !p.need(3, "a partner rank, a tag and a count") {
		return
	}
	partner := p.stoi(2, "a partner rank")
	tag := p.stoi(3, "a tag")
	count := p.count(4, rangeSsize, k == trace.Recv || k == trace.Irecv)
	dt := p.dtype(5)
	b := p.bytes(4, count, dt)
	if p.err == nil {
		p.setPointToPoint(k, partner, tag, b, dt)
	}
}

// setPointToPoint fills a point-to-point event and stores its request.
func (p *parser) setPointToPoint(k trace.Kind, partner, tag int32, b int64, dt trace.Datatype) {
	ev := &p.ev
	ev.Tag = tag
	if k == trace.Recv || k == trace.Irecv {
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
		p.store.push(reqKey{Src: p.rank, Dst: ev.Partner, Tag: tag}, ev.Request)
	case trace.Irecv:
		p.nextReq++
		ev.Request = p.nextReq
		src := ev.Partner
		if src == trace.AnySource {
			src = reqstore.AnySourceKey
		}
		p.store.push(reqKey{Src: src, Dst: p.rank, Tag: ev.Tag}, ev.Request)
	}
}

// waitTest: "wait|test <src> <dst> <tag>", kept in Source, Partner and
// Tag as written (MPI_ANY_SOURCE and MPI_ANY_TAG aside, as a receive's). The event gets the id of the
// oldest request stored under that key, or 0 if there is none (SimGrid
// then does nothing). A receive from MPI_ANY_SOURCE is stored under
// -556, as SimGrid 3.32 files it (reqstore.AnySourceKey): a wait naming
// -555 or -333 does not find it, one naming -556 does. A test puts the request back at the end of its key's
// queue, as SimGrid 3.32 does (as the request itself or as a null request
// if the test succeeded; which one depends on timing).
func (p *parser) waitTest(k trace.Kind) {
	ev := &p.ev
	ev.Kind = k
	if !p.need(3, "<src> <dst> <tag>") {
		return
	}
	src := p.stoi(2, "a source rank")
	dst := p.stoi(3, "a destination rank")
	tag := p.stoi(4, "a tag")
	if p.err == nil {
		p.setWaitTest(k, src, dst, tag)
	}
}

// setWaitTest fills a wait or test event and takes its request from the
// store.
func (p *parser) setWaitTest(k trace.Kind, src, dst, tag int32) {
	ev := &p.ev
	ev.Source, ev.Partner, ev.Tag = peer(src), dst, tag
	if tag == simgridAnyTag {
		ev.Tag = trace.AnyTag
	}
	if k == trace.Wait && p.store.len() == 0 {
		p.warnEmpty = true
	}
	key := reqKey{Src: ev.Source, Dst: peer(dst), Tag: ev.Tag}
	st := p.store.filed()
	ev.Request, _ = st.Pop(key)
	if k == trace.Test && ev.Request != 0 {
		st.Push(key, ev.Request)
	}
}

// sendRecv: "<sendcount> <dst> <recvcount> <src> <sdt> <rdt>"; SimGrid
// 3.32 requires all six.
func (p *parser) sendRecv() {
	ev := &p.ev
	ev.Kind = trace.SendRecv
	if !p.need(6, "<sendcount> <dst> <recvcount> <src> <sendtype> <recvtype>") {
		return
	}
	sc := p.count(2, rangeInt, false)
	ev.Partner = p.stoi(3, "a destination rank")
	rc := p.count(4, rangeInt, false)
	ev.Source = p.stoi(5, "a source rank")
	ev.SendType = p.dtype(6)
	ev.RecvType = p.dtype(7)
	ev.SendBytes = p.bytes(2, sc, ev.SendType)
	ev.RecvBytes = p.bytes(4, rc, ev.RecvType)
}

// bcast: "<count> [root] [dt]".
func (p *parser) bcast() {
	ev := &p.ev
	ev.Kind = trace.Bcast
	if p.need(1, "a count") {
		ev.Partner = p.optStoi(3, 0, "a root rank")
		ev.SendType = p.dtype(4)
		ev.SendBytes = p.countBytes(2, rangeSize, ev.SendType)
	}
}

// reduction: reduce "<count> <flops> [root] [dt]"; allreduce, scan,
// exscan "<count> <flops> [dt]".
func (p *parser) reduction(k trace.Kind, r countRange) {
	ev := &p.ev
	ev.Kind = k
	if !p.need(2, "a count and a number of flops") {
		return
	}
	dtAt := 4
	if k == trace.Reduce {
		ev.Partner = p.optStoi(4, 0, "a root rank")
		dtAt = 5
	}
	ev.SendType = p.dtype(dtAt)
	ev.SendBytes = p.countBytes(2, r, ev.SendType)
	p.flops(3)
}

// twoCounts: alltoall and allgather "<sendcount> <recvcount> [sdt] [rdt]";
// gather and scatter "<sendcount> <recvcount> [root] [sdt] [rdt]".
func (p *parser) twoCounts(k trace.Kind, rooted bool) {
	ev := &p.ev
	ev.Kind = k
	if !p.need(2, "a send count and a receive count") {
		return
	}
	dtAt := 4
	if rooted {
		ev.Partner = p.optStoi(4, 0, "a root rank")
		dtAt = 5
	}
	ev.SendType = p.dtype(dtAt)
	ev.RecvType = p.dtype(dtAt + 1)
	ev.SendBytes = p.countBytes(2, rangeInt, ev.SendType)
	ev.RecvBytes = p.countBytes(3, rangeInt, ev.RecvType)
}

// alltoallv: "<sendbufsize> <sendcount×N> <recvbufsize> <recvcount×N>
// [sdt] [rdt]". The buffer sizes go to SendBytes and RecvBytes, the
// per-peer counts to SendCounts and RecvCounts.
func (p *parser) alltoallv() {
	ev := &p.ev
	ev.Kind = trace.Alltoallv
	n := p.nranks
	if !p.need(2*n+2, "a send buffer size, "+itoa(n)+" send counts, a receive buffer size and "+itoa(n)+" receive counts") {
		return
	}
	ev.SendType = p.dtype(4 + 2*n)
	ev.RecvType = p.dtype(5 + 2*n)
	ev.SendBytes = p.countBytes(2, rangeInt, ev.SendType)
	ev.RecvBytes = p.countBytes(3+n, rangeInt, ev.RecvType)
	ev.SendCounts, _ = p.vector(3, n, 0, ev.SendType)
	ev.RecvCounts, _ = p.vector(4+n, n, 1, ev.RecvType)
}

// gatherv: "<sendcount> <recvcount×N> [root] [sdt] [rdt]". RecvBytes is
// the total of RecvCounts.
func (p *parser) gatherv() {
	ev := &p.ev
	ev.Kind = trace.Gatherv
	n := p.nranks
	if !p.need(n+1, "a send count and "+itoa(n)+" receive counts") {
		return
	}
	ev.Partner = p.optStoi(3+n, 0, "a root rank")
	ev.SendType = p.dtype(4 + n)
	ev.RecvType = p.dtype(5 + n)
	ev.SendBytes = p.countBytes(2, rangeInt, ev.SendType)
	ev.RecvCounts, ev.RecvBytes = p.vector(3, n, 1, ev.RecvType)
}

// allgatherv: "<sendcount> <recvcount×N>" then, by SimGrid 3.32's token
// count rule (T tokens in all, rank and name included): T > 2N+3: sdt,
// rdt and N displacements; else T > N+5: N displacements; else
// [sdt] [rdt]. Displacements are checked but not kept: of SimGrid's
// algorithms only allgatherv GB's time depends on them (it broadcasts up
// to the largest displacement + count), and a non-zero one is warned of.
func (p *parser) allgatherv() {
	ev := &p.ev
	ev.Kind = trace.Allgatherv
	n := p.nranks
	t := len(p.toks)
	if !p.need(n+1, "a send count and "+itoa(n)+" receive counts") {
		return
	}
	disp := 0
	switch {
	case t > 3+2*n:
		disp = 5 + n
	case t > 3+n+2:
		disp = 3 + n
	}
	if disp != 3+n {
		ev.SendType = p.dtype(3 + n)
		ev.RecvType = p.dtype(4 + n)
	}
	if disp != 0 {
		if disp+n > t {
			p.fail(t, itoa(n)+" displacements")
		}
		for j := 0; j < n; j++ {
			if p.stoi(disp+j, "a displacement") != 0 {
				p.warnDispls = true
			}
		}
	}
	ev.SendBytes = p.countBytes(2, rangeInt, ev.SendType)
	ev.RecvCounts, ev.RecvBytes = p.vector(3, n, 1, ev.RecvType)
}

// scatterv: "<sendcount×N> <recvcount> [root] [sdt] [rdt]". SendBytes is
// the total of SendCounts.
func (p *parser) scatterv() {
	ev := &p.ev
	ev.Kind = trace.Scatterv
	n := p.nranks
	if !p.need(n+1, itoa(n)+" send counts and a receive count") {
		return
	}
	ev.Partner = p.optStoi(3+n, 0, "a root rank")
	ev.SendType = p.dtype(4 + n)
	ev.RecvType = p.dtype(5 + n)
	ev.RecvBytes = p.countBytes(2+n, rangeInt, ev.RecvType)
	ev.SendCounts, ev.SendBytes = p.vector(2, n, 0, ev.SendType)
}

// reduceScatter: "<recvcount×N> <flops> [dt]". RecvBytes is the total of
// RecvCounts; the datatype is kept in RecvType.
func (p *parser) reduceScatter() {
	ev := &p.ev
	ev.Kind = trace.ReduceScatter
	n := p.nranks
	if !p.need(n+1, itoa(n)+" receive counts and a number of flops") {
		return
	}
	p.flops(2 + n)
	ev.RecvType = p.dtype(3 + n)
	ev.RecvCounts, ev.RecvBytes = p.vector(2, n, 1, ev.RecvType)
}

func itoa(n int) string { return strconv.Itoa(n) }
