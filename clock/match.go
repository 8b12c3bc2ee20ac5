package clock

import (
	"kairos/trace"
)

// message is a point-to-point message between its send and its receive.
// Its start-time vector S travels with the match: the receiver needs the
// sender's logical time to compute its own (Section III-D).
type message struct {
	src, dst int32
	tag      int32
	comm     uint32
	n        int64
	seq      uint64 // global posting order, for MPI_ANY_SOURCE
	sendIdx  int64  // the send's event index, for errors
	// The message starts to travel under configuration c at
	// snap.v[c] + off: the send's logical entry plus the memory copy
	// (eager). A rendezvous message has its own S instead: the later of
	// the send's and the receive's postings.
	snap *snapshot
	off  float64
	S    []float64
	rdv  bool
	recv *request // the matched receive, nil until matched
	refs int      // requests still holding the message
}

// request is an outstanding send or receive.
type request struct {
	m    *message
	send bool
	// A receive's match criteria and, under rendezvous, its posting time
	// vector R.
	src, tag int32
	comm     uint32
	seq      uint64
	R        []float64
	owner    int32
	idx      int64 // the posting event's index, for errors
}

// ready reports whether the request can complete: a receive once it has
// its message, a rendezvous send once its receive is posted, an eager
// send at once.
func (rq *request) ready() bool {
	if rq.send {
		return rq.m == nil || !rq.m.rdv || rq.m.recv != nil
	}
	return rq.m != nil
}

// pairQueue holds, for one (source, destination) pair, the messages that
// arrived before their receive and the receives posted before their
// message, each in order (MPI's non-overtaking rule).
type pairQueue struct {
	sends []*message
	recvs []*request
}

func (e *engine) newRequest() *request {
	if n := len(e.reqPool); n > 0 {
		rq := e.reqPool[n-1]
		e.reqPool = e.reqPool[:n-1]
		return rq
	}
	return &request{}
}

func (e *engine) newMessage() *message {
	if n := len(e.msgPool); n > 0 {
		m := e.msgPool[n-1]
		e.msgPool = e.msgPool[:n-1]
		return m
	}
	return &message{}
}

// release drops a completed request and, when nothing holds it any more,
// its message.
func (e *engine) release(rq *request) {
	if m := rq.m; m != nil {
		m.refs--
		if m.refs == 0 {
			if m.snap != nil {
				e.dropSnapshot(m.snap)
			}
			e.free(m.S)
			*m = message{}
			e.msgPool = append(e.msgPool, m)
		}
	}
	e.free(rq.R)
	*rq = request{}
	e.reqPool = append(e.reqPool, rq)
}

// addRequest files a non-blocking request under its id.
// An id reused before its wait replaces the old request, which is then
// never completed (its message still matches).
func (e *engine) addRequest(st *rankState, id uint64, rq *request) {
	st.reqs.Put(id, rq)
}

// sendRequest returns the sender's request for m; only a rendezvous send
// holds its message.
func (e *engine) sendRequest(st *rankState, m *message) *request {
	rq := e.newRequest()
	rq.send, rq.owner, rq.idx = true, st.id, st.idx
	if m.rdv {
		rq.m = m
		m.refs++
	}
	return rq
}

// postSend posts a message of n bytes from st to dst. An eager message
// starts after its copy to the system buffer (t_out = t_in + memcopytime,
// Section III-D): for a blocking send the copy is the call's whole time
// and counts as computation.
func (e *engine) postSend(st *rankState, ev *trace.Event, dst int32, n int64) *message {
	if dst < 0 || int(dst) >= len(e.ranks) {
		e.fail(st, "sends to rank %d, which is not in the trace (%d ranks)", dst, len(e.ranks))
		return nil
	}
	if n < 0 {
		n = 0
	}
	m := e.newMessage()
	e.msgSeq++
	*m = message{src: st.id, dst: dst, tag: ev.Tag, comm: ev.Comm, n: n, seq: e.msgSeq, sendIdx: st.idx}
	m.rdv = e.opt.Protocol == Rendezvous && n >= e.opt.EagerLimit
	if m.rdv {
		m.S = e.vector()
		for c, v := range st.clk.v {
			m.S[c] = v + st.lag
		}
	} else {
		mc := float64(n) * e.memcpy
		m.snap, m.off = st.clk, st.lag+mc
		st.clk.refs++
		if ev.Kind != trace.Isend {
			st.local(mc)
		}
	}
	e.deliver(m)
	return m
}

// deliver matches a posted message with the earliest posted receive that
// accepts it, or queues it.
func (e *engine) deliver(m *message) {
	d := &e.ranks[m.dst]
	q := d.queue(m.src)
	qi, ai := -1, -1
	for i, rq := range q.recvs {
		if accepts(rq, m) {
			qi = i
			break
		}
	}
	for i, rq := range d.anyRecv {
		if accepts(rq, m) && (qi < 0 || rq.seq < q.recvs[qi].seq) {
			ai = i
			break
		}
	}
	switch {
	case ai >= 0:
		rq := d.anyRecv[ai]
		d.anyRecv = remove(d.anyRecv, ai)
		e.match(m, rq)
	case qi >= 0:
		rq := q.recvs[qi]
		q.recvs = remove(q.recvs, qi)
		e.match(m, rq)
	default:
		q.sends = append(q.sends, m)
	}
}

func (st *rankState) queue(src int32) *pairQueue {
	q, ok := st.inbox.Lookup(src)
	if !ok {
		q = &pairQueue{}
		st.inbox.Put(src, q)
	}
	return q
}

func accepts(rq *request, m *message) bool {
	return rq.comm == m.comm && (rq.tag == trace.AnyTag || rq.tag == m.tag)
}

func remove[T any](s []T, i int) []T {
	copy(s[i:], s[i+1:])
	var zero T
	s[len(s)-1] = zero
	return s[:len(s)-1]
}

// match binds message m to receive rq. Under rendezvous the message
// starts when both sides are posted: S = max(S_send, R_recv). The ranks
// that may be waiting for the match are woken.
func (e *engine) match(m *message, rq *request) {
	rq.m = m
	m.recv = rq
	m.refs++
	if m.rdv {
		for c, r := range rq.R {
			if r > m.S[c] {
				m.S[c] = r
			}
		}
		e.wake(m.src)
	}
	e.wake(m.dst)
}

// postRecv posts a receive on st from src (or MPI_ANY_SOURCE) and matches
// it with the first queued message it accepts.
func (e *engine) postRecv(st *rankState, ev *trace.Event, src int32) *request {
	rq := e.newRequest()
	e.msgSeq++
	*rq = request{src: src, tag: ev.Tag, comm: ev.Comm, seq: e.msgSeq, owner: st.id, idx: st.idx}
	if src != trace.AnySource && (src < 0 || int(src) >= len(e.ranks)) {
		e.fail(st, "receives from rank %d, which is not in the trace (%d ranks)", src, len(e.ranks))
		return rq
	}
	if e.opt.Protocol == Rendezvous {
		rq.R = e.vector()
		for c, v := range st.clk.v {
			rq.R[c] = v + st.lag
		}
	}
	if src == trace.AnySource {
		var best *pairQueue
		bi := -1
		for _, qp := range st.inbox.All() {
			q := *qp
			for i, m := range q.sends {
				if accepts(rq, m) {
					if best == nil || m.seq < best.sends[bi].seq {
						best, bi = q, i
					}
					break
				}
			}
		}
		if best == nil {
			st.anyRecv = append(st.anyRecv, rq)
			return rq
		}
		m := best.sends[bi]
		best.sends = remove(best.sends, bi)
		e.match(m, rq)
		return rq
	}
	q := st.queue(src)
	for i, m := range q.sends {
		if accepts(rq, m) {
			q.sends = remove(q.sends, i)
			e.match(m, rq)
			return rq
		}
	}
	q.recvs = append(q.recvs, rq)
	return rq
}

// collectWaitall gathers the requests a Waitall completes: those it
// names, or every outstanding one.
func (e *engine) collectWaitall(st *rankState, ev *trace.Event) {
	st.pending = st.pending[:0]
	if ev.Requests == nil {
		st.pending = st.reqs.TakeAll(st.pending)
		return
	}
	for _, id := range ev.Requests {
		if rq, ok := st.reqs.Take(id); ok {
			st.pending = append(st.pending, rq)
		}
	}
}

// completeRequests finishes a blocking Recv, Wait, Waitall, SendRecv or
// rendezvous Send whose requests are all ready. Each message m gives
// t_out = max(t_in, S + α + nβ) (Section III-D); a Waitall exits at the
// largest of its requests' exits, and its wait, latency and bandwidth
// time are those of the request that decided it.
func (e *engine) completeRequests(st *rankState) {
	nc := e.nc
	A, S, L := e.bestA[:nc], e.bestS[:nc], e.bestL[:nc]
	clk := st.clk.v[:nc]
	lag := st.lag
	for c := range A {
		t := clk[c] + lag
		A[c], S[c], L[c] = t, t, 0
	}
	for _, rq := range st.pending {
		if m := rq.m; m != nil {
			a, b, model := e.aInter, e.bInter, e.inter
			if e.ranks[m.src].node == e.ranks[m.dst].node {
				a, b, model = e.aIntra, e.bIntra, e.intra
			}
			l0, b0 := model.terms(float64(m.n))
			if m.S != nil {
				foldMessage(A, S, L, m.S, 0, a, b, l0, b0)
			} else {
				foldMessage(A, S, L, m.snap.v, m.off, a, b, l0, b0)
			}
		}
		e.release(rq)
	}
	st.pending = st.pending[:0]
	dst, src := e.writeClock(st)
	split(dst, src, st.wait, st.lat, st.bw, A, S, L, lag)
	st.lag = 0
}

// foldMessage folds a message into the running latest arrival: per
// configuration, its start S = ms + off, its arrival A = S + a·l0 + b·b0,
// and if it is the latest so far (the latest start among equals), its
// start and latency.
func foldMessage(bestA, bestS, bestL, ms []float64, off float64, a, b []float64, l0, b0 float64) {
	n := len(bestA)
	bestS, bestL, ms, a, b = bestS[:n], bestL[:n], ms[:n], a[:n], b[:n]
	for c := 0; c < n; c++ {
		l := a[c] * l0
		s := ms[c] + off
		arr := s + l + b[c]*b0
		// The latest arrival decides; among equal arrivals, the latest
		// start, so that the split does not depend on request order.
		if arr > bestA[c] || arr == bestA[c] && s > bestS[c] {
			bestA[c], bestS[c], bestL[c] = arr, s, l
		}
	}
}

// split advances the clock from the entry t_in = clk + lag to the exit
// max(t_in, A) and counts the blocked time as the paper's Figure 2 does:
// wait until the message starts (S), then latency until S + l, then
// bandwidth until the arrival A; computation before t_in overlaps first
// the latency, then the bandwidth time (Section III-E).
func split(clk, from, wait, lat, bw, A, S, L []float64, lag float64) {
	n := len(clk)
	from, wait, lat, bw, A, S, L = from[:n], wait[:n], lat[:n], bw[:n], A[:n], S[:n], L[:n]
	for c := 0; c < n; c++ {
		t := from[c] + lag
		a, s := A[c], S[c]
		latEnd := s + L[c]
		if s > t {
			wait[c] += s - t
			t = s
		}
		if latEnd > t {
			lat[c] += latEnd - t
			t = latEnd
		}
		if a > t {
			bw[c] += a - t
			t = a
		}
		clk[c] = t
	}
}
