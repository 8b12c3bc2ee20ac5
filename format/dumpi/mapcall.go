package dumpi

import (
	"strings"
	"sync"
	"sync/atomic"

	"kairos/trace"
)

// Labels the mapping treats specially (sst-dumpi funclabels.h).
const (
	lSend, lRecv, lBsend, lSsend, lRsend = 0, 1, 3, 4, 5
	lIsend, lIbsend, lIssend, lIrsend    = 8, 9, 10, 11
	lIrecv, lWait, lTest                 = 12, 13, 14
	lWaitany, lTestany, lWaitall         = 16, 17, 18
	lTestall, lWaitsome, lTestsome       = 19, 20, 21
	lIprobe, lProbe                      = 22, 23
	lSendrecv, lSendrecvReplace          = 33, 34
	lBarrier, lBcast, lGather, lGatherv  = 52, 53, 54, 55
	lScatter, lScatterv                  = 56, 57
	lAllgather, lAllgatherv              = 58, 59
	lAlltoall, lAlltoallv, lReduce       = 60, 61, 62
	lAllreduce, lReduceScatter, lScan    = 65, 66, 67
	lInit, lFinalize, lAlltoallw         = 124, 125, 155
	lExscan, lInitThread                 = 156, 171
	labelFunctionEnter                   = 291
	labelFunctionExit                    = 292
)

// p2pFields locates the fields of a point-to-point call.
type p2pFields struct {
	kind                                 trace.Kind
	count, datatype, peer, tag, comm, rq int
	status                               int
}

// p2p returns the fields of the point-to-point labels (nil for other
// labels), resolved on first use as programs.
func p2p() *[lIrecv + 1]*p2pFields {
	if f := resolvedP2P.Load(); f != nil {
		return f
	}
	return resolveP2P()
}

var resolvedP2P atomic.Pointer[[lIrecv + 1]*p2pFields]

var resolveP2P = sync.OnceValue(func() *[lIrecv + 1]*p2pFields {
	var p2p [lIrecv + 1]*p2pFields
	for _, l := range []struct {
		label int
		kind  trace.Kind
	}{{lSend, trace.Send}, {lBsend, trace.Send}, {lSsend, trace.Send}, {lRsend, trace.Send},
		{lIsend, trace.Isend}, {lIbsend, trace.Isend}, {lIssend, trace.Isend}, {lIrsend, trace.Isend},
		{lRecv, trace.Recv}, {lIrecv, trace.Irecv}} {
		f := &p2pFields{kind: l.kind, count: field(l.label, "count"), datatype: field(l.label, "datatype"),
			tag: field(l.label, "tag"), comm: field(l.label, "comm"), rq: -1, status: -1}
		if l.kind.IsSend() {
			f.peer = field(l.label, "dest")
		} else {
			f.peer = field(l.label, "source")
		}
		if l.kind.IsNonBlocking() {
			f.rq = field(l.label, "request")
		}
		if l.label == lRecv {
			f.status = field(l.label, "status")
		}
		p2p[l.label] = f
	}
	resolvedP2P.Store(&p2p)
	return &p2p
})

// DUMPI's special ranks (constants.h): MPI_ANY_SOURCE is -1; MPI_PROC_NULL
// is stored as the MPI library's own value (MPICH -1, Open MPI -2).
const dumpiAnySource = -1

// dumpiAnyTag is DUMPI's MPI_ANY_TAG.
const dumpiAnyTag = -1

// mapCall turns call c into r.ev (whose time is set).
func (r *Reader) mapCall(c *call) error {
	if f := p2pOf(c.label); f != nil {
		if f.rq >= 0 {
			delete(r.persistent, int32(c.v[f.rq])) // the handle is another request's now
		}
		return r.pointToPoint(c, f)
	}
	switch c.label {
	case lSendInit, lBsendInit, lSsendInit, lRsendInit, lRecvInit:
		r.initPersistent(c)
		return nil
	case lStart, lStartall:
		return r.start(c)
	case lRequestFree:
		r.requestFree(c)
		return nil
	case lWait, lTest, lWaitany, lTestany, lWaitall, lTestall, lWaitsome, lTestsome:
		r.completion(c)
		return nil
	case lIprobe, lProbe:
		return r.probe(c)
	case lSendrecv, lSendrecvReplace:
		return r.sendRecv(c)
	case lInit, lInitThread:
		r.ev.Kind = trace.Init
		if r.before && r.ev.HasTime {
			// sst-dumpi stamps the call once PMPI_Init returned ("we
			// cheat on timings for INIT"): after a call made before it
			// (MPI_Initialized, as mpi4py makes), the time since is
			// MPI_Init's, not computation.
			r.ev.Enter = min(r.ev.Enter, r.lastExit)
		}
		return nil
	case lFinalize:
		r.ev.Kind = trace.Finalize
		return nil
	case lCommFree:
		return r.commFree(c)
	}
	if creates(c.label) {
		return r.commCreate(c)
	}
	if k, ok := collectiveKinds[c.label]; ok {
		return r.collective(c, k)
	}
	if ok, err := r.oneSided(c); ok || err != nil {
		return err
	}
	if ok, err := r.fileIO(c); ok || err != nil {
		return err
	}
	r.newType(c)
	r.local(c)
	switch name := layouts[c.label].name; {
	case strings.HasPrefix(name, "MPI_Win_"):
		r.ev.Kind = trace.Deferred // MPI time (Win_set_name...)
	}
	return nil
}

func (r *Reader) pointToPoint(c *call, f *p2pFields) error {
	id, self, err := r.comm(c, c.v[f.comm])
	if err != nil {
		if err == errUnknownComm {
			if f.rq >= 0 {
				r.startRequest(c.v[f.rq], false) // its completion completes nothing
			}
			return nil
		}
		return err
	}
	peer, send := c.v[f.peer], f.kind.IsSend()
	if peer < dumpiAnySource || (send && peer == dumpiAnySource) {
		// MPI_PROC_NULL: the call completes at once without a message.
		if f.rq >= 0 {
			r.startRequest(c.v[f.rq], false)
		}
		r.local(c)
		return nil
	}
	e := &r.ev
	e.Kind, e.Comm, e.Tag = f.kind, id, int32(c.v[f.tag])
	b, dt := r.bytes(c.v[f.count], c.v[f.datatype])
	if f.rq >= 0 {
		e.Request = r.startRequest(c.v[f.rq], true)
	}
	if send {
		e.SendBytes, e.SendType = b, dt
	} else {
		e.RecvBytes, e.RecvType = b, dt
	}
	if e.Tag == dumpiAnyTag && f.status >= 0 && len(c.statuses) == 1 && c.statuses[0].tag >= 0 {
		// An MPI_ANY_TAG receive takes the tag its stored status names,
		// so that it matches the message it received, not the oldest
		// from its source whatever its tag (one whose receive the trace
		// lacks: sst-dumpi does not record MPI_Mrecv).
		e.Tag = c.statuses[0].tag
	}
	if peer == dumpiAnySource {
		e.Partner = trace.AnySource
		switch {
		case f.status >= 0 && len(c.statuses) == 1 && c.statuses[0].source >= 0:
			peer = int64(c.statuses[0].source) // resolved by the stored status
		case f.kind == trace.Irecv:
			src, ok, cancelled := r.wildcardSource(c.v[f.rq])
			if cancelled {
				// Nothing was received: no receive to replay (MPI time,
				// Deferred, as the OTF2 reader has it), and its
				// completion completes nothing.
				q := r.started[int32(c.v[f.rq])]
				q[len(q)-1] = 0
				enter, exit, timed := e.Enter, e.Exit, e.HasTime
				e.Reset()
				e.Enter, e.Exit, e.HasTime = enter, exit, timed
				r.local(c)
				e.Kind = trace.Deferred
				return nil
			}
			if !ok {
				return nil
			}
			peer = int64(src) // resolved by the completion's status
		default:
			return nil
		}
	}
	e.Partner, err = r.world(c, id, self, peer)
	return err
}

// startRequest files the request a nonblocking call starts under DUMPI
// handle h behind those still outstanding under it, and returns its id:
// a fresh one, or 0 if it completes nothing (real false). Handles are
// not ids: Open MPI gives small and empty sends that complete at once one
// shared request, so that HPCC's waitall of four requests names handle 4
// three times, each time another request.
func (r *Reader) startRequest(h int64, real bool) uint64 {
	var id uint64
	if real {
		r.lastID++
		id = r.lastID
	}
	if r.started == nil {
		r.started = map[int32][]uint64{}
	}
	r.started[int32(h)] = append(r.started[int32(h)], id)
	return id
}

// take completes the oldest request outstanding under DUMPI handle h and
// returns its id, false for MPI_REQUEST_NULL, a handle that started
// nothing the trace follows (a non-blocking collective, which sst-dumpi
// does not record) and a request that completes nothing.
func (r *Reader) take(h int32) (uint64, bool) {
	q := r.started[h]
	if h <= 1 || len(q) == 0 {
		return 0, false
	}
	if len(q) == 1 {
		r.started[h] = q[:0] // its array serves the handle's next start
	} else {
		r.started[h] = q[1:]
	}
	return q[0], q[0] != 0
}

// completion maps Wait*, Test*: Waitall becomes a Waitall of its
// requests; Wait, Waitany, Waitsome and the tests (with flag) a Wait of
// each request they completed, as the tracer and the OTF2 reader have
// them (what completed a request in the run completes it in a replay). A
// test that completes nothing is Deferred, MPI time as the OTF2 reader
// has it (a test could complete in a replay a request a later call waits
// for, which then finds none); any other call that completes nothing is
// Local.
func (r *Reader) completion(c *call) {
	p := &programs()[c.label]
	get := func(n fieldName) int64 { return c.v[p.idx[n]] }
	arr := func(n fieldName) []int32 { return c.arr[p.idx[n]] }
	flag := int64(1)
	if i := p.idx[fFlag]; i >= 0 {
		flag = c.v[i]
	}
	r.reqs, r.orphan = r.reqs[:0], false
	switch c.label {
	case lWait, lTest:
		if c.label == lWait || flag != 0 {
			r.addRequest(int32(get(fRequest)))
		}
	case lWaitany, lTestany:
		reqs, i := arr(fRequests), get(fIndex)
		if flag != 0 && i >= 0 && i < int64(len(reqs)) {
			r.addRequest(reqs[i])
		}
	case lWaitall, lTestall:
		if flag != 0 {
			for _, h := range arr(fRequests) {
				r.addRequest(h)
			}
		}
	case lWaitsome, lTestsome:
		reqs := arr(fRequests)
		for _, i := range arr(fIndices) {
			if i >= 0 && int(i) < len(reqs) {
				r.addRequest(reqs[i])
			}
		}
	}
	if r.orphan {
		r.unseen.requests++
	}
	e := &r.ev
	waits := r.ioWaits(c)
	switch {
	case len(r.reqs) == 0 && len(waits) > 0: // non-blocking I/O's alone
		*e, waits = waits[0], waits[1:]
	case len(r.reqs) == 0:
		// A wait or test that completes nothing the trace follows (a
		// non-blocking collective's, which sst-dumpi does not record, a
		// null request's, a polling test): MPI time, not computation, as
		// the OTF2 reader reads it.
		r.local(c)
		e.Kind = trace.Deferred
	case c.label == lWaitall:
		e.Kind, e.Requests = trace.Waitall, r.reqs
		for i := range waits { // at its end
			waits[i].Enter = e.Exit
		}
	default: // a wait each, sharing the call's time, as the tracer writes them
		e.Kind, e.Request = trace.Wait, r.reqs[0]
		for _, id := range r.reqs[1:] {
			w := *e
			w.Request = id
			r.pending = append(r.pending, w)
		}
	}
	if r.pending = append(r.pending, waits...); len(r.pending) > 0 && e.Kind != trace.Waitall {
		trace.ShareCallTime(r.pending, e.Enter, e.Exit)
		e.Exit = e.Enter
	}
}

func (r *Reader) addRequest(h int32) {
	if !r.completes(h) {
		return
	}
	if h > 1 && len(r.started[h]) == 0 && r.persistent[h] == nil {
		r.orphan = true // a non-blocking collective's, say, which sst-dumpi does not record
	}
	if id, ok := r.take(h); ok {
		r.reqs = append(r.reqs, id)
	}
}

func (r *Reader) probe(c *call) error {
	p := &programs()[c.label]
	id, self, err := r.comm(c, c.v[p.idx[fComm]])
	if err != nil {
		return known(err)
	}
	src := c.v[p.idx[fSource]]
	if src < dumpiAnySource {
		r.local(c)
		return nil
	}
	e := &r.ev
	e.Kind, e.Comm, e.Tag = trace.Probe, id, int32(c.v[p.idx[fTag]])
	if c.label == lIprobe {
		e.Kind = trace.Iprobe
	}
	if src == dumpiAnySource {
		e.Partner = trace.AnySource
		return nil
	}
	e.Partner, err = r.world(c, id, self, src)
	return err
}

// sendRecv maps Sendrecv and Sendrecv_replace: one SendRecv if its send
// and receive tags are one, else an Isend, an Irecv and their Waits
// (trace.SendRecvEvents), the model's SendRecv having one tag.
func (r *Reader) sendRecv(c *call) error {
	if err := r.sendRecvEvent(c); err != nil || r.ev.Kind != trace.SendRecv {
		return err
	}
	e := &r.ev
	rtag := int32(c.v[programs()[c.label].idx[fRecvtag]])
	if rtag == e.Tag {
		return nil
	}
	send, recv := *e, *e
	send.Kind, send.Source, send.RecvBytes, send.RecvType = trace.Send, trace.NoRank, 0, trace.DefaultType
	recv.Kind, recv.Partner, recv.Source, recv.Tag, recv.SendBytes, recv.SendType = trace.Recv, e.Source, trace.NoRank, rtag, 0, trace.DefaultType
	evs := trace.SendRecvEvents(nil, send, recv)
	r.ev, r.pending, r.nextEv = evs[0], append(r.pending[:0], evs[1:]...), 0
	return nil
}

// sendRecvEvent maps Sendrecv and Sendrecv_replace to one SendRecv of the
// send tag; where one side is MPI_PROC_NULL (the ends of a non-periodic
// shift), to the other side's Send or Recv alone, as Kairos' tracer
// writes it; where both are, to a Local event.
func (r *Reader) sendRecvEvent(c *call) error {
	p := &programs()[c.label]
	get := func(n fieldName) int64 { return c.v[p.idx[n]] }
	id, self, err := r.comm(c, get(fComm))
	if err != nil {
		return known(err)
	}
	e := &r.ev
	e.Kind, e.Comm, e.Tag = trace.SendRecv, id, int32(get(fSendtag))
	if c.label == lSendrecv {
		e.SendBytes, e.SendType = r.bytes(get(fSendcount), get(fSendtype))
		e.RecvBytes, e.RecvType = r.bytes(get(fRecvcount), get(fRecvtype))
	} else {
		e.SendBytes, e.SendType = r.bytes(get(fCount), get(fDatatype))
		e.RecvBytes, e.RecvType = e.SendBytes, e.SendType
	}
	dst, src := get(fDest), get(fSource)
	noDst, noSrc := dst < 0, src < dumpiAnySource
	switch {
	case noDst && noSrc:
		r.local(c)
		return nil
	case noSrc:
		e.Kind, e.RecvBytes, e.RecvType = trace.Send, 0, trace.DefaultType
	case noDst:
		e.Kind, e.Tag, e.SendBytes, e.SendType = trace.Recv, int32(get(fRecvtag)), 0, trace.DefaultType
		e.Partner, err = r.sendRecvSource(c, id, self, src)
		return err
	}
	if e.Partner, err = r.world(c, id, self, dst); err != nil || noSrc {
		return err
	}
	e.Source, err = r.sendRecvSource(c, id, self, src)
	return err
}

// sendRecvSource returns the world rank of a sendrecv's source src, a
// wildcard resolved by the stored status (AnySource if none is).
func (r *Reader) sendRecvSource(c *call, id uint32, self bool, src int64) (int32, error) {
	if src != dumpiAnySource {
		return r.world(c, id, self, src)
	}
	if len(c.statuses) == 1 && c.statuses[0].source >= 0 {
		return r.world(c, id, self, int64(c.statuses[0].source))
	}
	return trace.AnySource, nil
}

// commCreate maps the calls that create communicators: the parent in
// Comm, the new communicator in NewComm (0 when the rank gets none).
func (r *Reader) commCreate(c *call) error {
	p := &programs()[c.label]
	var id uint32
	if r.nextNew < len(r.created) {
		id = r.created[r.nextNew]
	}
	r.nextNew++
	parent := c.v[p.idx[fOldcomm]]
	if id != 0 {
		r.handles[int(c.v[p.idx[fNewcomm]])] = id
	}
	pid, self, err := r.comm(c, parent)
	if err == errUnknownComm {
		return nil
	}
	if err != nil || self {
		// Created from a communicator Kairos does not follow, or from
		// MPI_COMM_SELF: nothing to match across ranks.
		r.local(c)
		return nil
	}
	e := &r.ev
	e.Comm, e.NewComm = pid, id
	switch c.label {
	case lCommDup:
		e.Kind = trace.CommDup
	case lCommSplit:
		e.Kind = trace.CommSplit
	default:
		e.Kind = trace.CommCreate
	}
	return nil
}

func (r *Reader) commFree(c *call) error {
	h := int(c.v[field(lCommFree, "comm")])
	id, ok := r.handles[h]
	delete(r.handles, h)
	if !ok {
		r.local(c)
		return nil
	}
	r.ev.Kind, r.ev.Comm = trace.CommFree, id
	return nil
}

// known returns err, nil for errUnknownComm: a call on an unknown
// communicator is a deferred event, not an error.
func known(err error) error {
	if err == errUnknownComm {
		return nil
	}
	return err
}
