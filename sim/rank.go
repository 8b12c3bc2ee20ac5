package sim

import (
	"kairos/trace"
)

// rank is one MPI process: a state machine over its trace.
type rank struct {
	id       int32
	host     int
	rd       trace.Reader
	pos      trace.Positioner
	ev       *trace.Event
	position string

	busy      bool // inside an action
	step      int  // progress within the action
	queued    bool
	blocked   bool
	computing bool
	waiting   int // awaited requests or resource actions still pending
	start     float64
	initTime  float64

	blockStart float64
	matchMax   float64

	done     bool
	ending   bool // the trace is over; waiting for leftover requests
	mbox     mailbox
	store    map[reqKey]*queue   // SimGrid's RequestStorage: FIFO per key, nil = null request
	nkeys    int                 // keys with a non-empty queue
	byID     map[uint64]*request // the same requests by trace request id (traces whose waits name ids)
	testReq  *request
	testKey  reqKey
	testByID bool
	coll     collState
	res      RankResult
}

// runRank advances r until it blocks or its trace ends.
func (s *simulation) runRank(r *rank) {
	for !r.done {
		if !r.busy {
			if r.ending {
				s.finishRank(r)
				return
			}
			if !r.rd.Next() {
				if err := r.rd.Err(); err != nil {
					s.err = err
					return
				}
				r.ending = true
				if s.endRequests(r) {
					return
				}
				continue
			}
			r.ev = r.rd.Event()
			if r.pos != nil {
				r.position = r.pos.Position()
			}
			r.busy, r.step, r.start = true, 0, s.now
			s.stats.actions++
		}
		if !s.exec(r) {
			return
		}
		r.busy = false
		if s.obs != nil {
			s.obs.Action(int(r.id), r.ev, r.start, s.now)
		}
	}
}

func (s *simulation) finishRank(r *rank) {
	r.done = true
	r.res.Finish = s.now
	r.rd.Close()
	r.rd = nil
}

// endRequests waits for the requests still stored when the trace ends. As
// SimGrid 3.32 (a FIXME in smpi_replay_main), only the last request of
// each key is waited for. It reports whether r blocks.
func (s *simulation) endRequests(r *rank) bool {
	n := 0
	for _, q := range r.store {
		if q.empty() {
			continue
		}
		if s.cfg.Compat {
			if last := q.items[len(q.items)-1]; last != nil && s.await(r, last) {
				n++
			}
			continue
		}
		for _, x := range q.items[q.head:] {
			if x != nil && s.await(r, x) {
				n++
			}
		}
	}
	if n > 0 {
		s.block(r, false)
		return true
	}
	return false
}

// size returns a datatype's size for this trace.
func (s *simulation) size(t trace.Datatype) int64 { return t.Size(s.meta.DefaultType) }

// exec runs r's current action from r.step; it returns true when the
// action is over, false when r blocked.
func (s *simulation) exec(r *rank) bool {
	e := r.ev
	switch e.Kind {
	case trace.Init:
		r.initTime = s.now
		return true
	case trace.Compute:
		if r.step == 0 && s.cfg.SimulateComputation && e.Compute > 0 {
			r.step = 1
			return s.compute(r, e.Compute)
		}
		return true
	case trace.Sleep:
		if r.step == 0 {
			r.step = 1
			s.startSleep(r, e.Compute)
			r.waiting = 1
			s.block(r, true)
			return false
		}
		return true
	case trace.Send, trace.Isend:
		if r.step == 0 {
			q := s.newRequest(r, true, e.Partner, e.Tag, e.SendBytes)
			if !s.checkPeer(r, e.Partner) {
				return false
			}
			s.post(q)
			if e.Kind == trace.Isend {
				s.storeReq(r, reqKey{r.id, e.Partner, e.Tag}, q)
				s.indexReq(r, q, e.Request)
				return true
			}
			r.step = 1
			return !s.waitFor(r, q)
		}
		return true
	case trace.Recv, trace.Irecv:
		if r.step == 0 {
			if e.Partner != trace.AnySource && !s.checkPeer(r, e.Partner) {
				return false
			}
			q := s.newRequest(r, false, e.Partner, e.Tag, e.RecvBytes)
			s.post(q)
			if e.Kind == trace.Irecv {
				s.storeReq(r, reqKey{e.Partner, r.id, e.Tag}, q)
				s.indexReq(r, q, e.Request)
				return true
			}
			r.step = 1
			return !s.waitFor(r, q)
		}
		return true
	case trace.Wait:
		if r.step == 0 {
			r.step = 1
			q, ok := s.popReq(r, e)
			if !ok {
				s.fail(r, "wait not preceded by any isend or irecv")
				return false
			}
			if q == nil {
				return true
			}
			blocked := s.waitFor(r, q)
			s.unref(q)
			return !blocked
		}
		return true
	case trace.Waitall:
		if r.step == 0 {
			r.step = 1
			return !s.waitAll(r, e)
		}
		return true
	case trace.Test:
		return s.test(r, e)
	case trace.SendRecv:
		if r.step == 0 {
			r.step = 1
			if e.Partner == r.id && e.Source == r.id {
				return true
			}
			if !s.checkPeer(r, e.Partner) || e.Source != trace.AnySource && !s.checkPeer(r, e.Source) {
				return false
			}
			sq := s.newRequest(r, true, e.Partner, 0, e.SendBytes)
			rq := s.newRequest(r, false, e.Source, 0, e.RecvBytes)
			s.post(sq)
			s.post(rq)
			n := 0
			if s.await(r, sq) {
				n++
			}
			if s.await(r, rq) {
				n++
			}
			if n > 0 {
				s.block(r, false)
				return false
			}
		}
		return true
	case trace.Probe, trace.Iprobe, trace.Finalize, trace.CommSize, trace.CommSplit, trace.CommDup,
		trace.CommCreate, trace.CommFree, trace.Location, trace.Local:
		return true
	}
	if e.Kind.IsCollective() {
		return s.collective(r, e)
	}
	s.fail(r, "cannot simulate action %s", e.Kind)
	return false
}

// compute starts flops on r's host and blocks r.
func (s *simulation) compute(r *rank, flops float64) bool {
	s.startExec(r, flops)
	r.waiting = 1
	s.block(r, true)
	return false
}

func (s *simulation) execDone(r *rank) {
	r.waiting--
	if r.waiting == 0 {
		s.wake(r)
	}
}

func (s *simulation) checkPeer(r *rank, p int32) bool {
	if p < 0 || int(p) >= len(s.ranks) {
		s.fail(r, "%s: partner rank %d out of range [0,%d)", r.ev.Kind, p, len(s.ranks))
		return false
	}
	return true
}

// waitFor blocks r on q; it reports whether r blocked.
func (s *simulation) waitFor(r *rank, q *request) bool {
	if s.await(r, q) {
		s.block(r, false)
		return true
	}
	return false
}

func (s *simulation) storeReq(r *rank, k reqKey, q *request) {
	sq := r.store[k]
	if sq == nil {
		sq = &queue{}
		r.store[k] = sq
	}
	if sq.empty() {
		r.nkeys++
	}
	if q != nil {
		q.refs++
		q.key = k
	}
	sq.push(q)
}

// indexReq records q under the trace's request id, for traces whose waits
// name request ids rather than SimGrid's (src, dst, tag) keys.
func (s *simulation) indexReq(r *rank, q *request, id uint64) {
	if id == 0 || !s.indexIDs {
		return
	}
	if r.byID == nil {
		r.byID = map[uint64]*request{}
	}
	if old := r.byID[id]; old != nil {
		s.dropID(r, old)
	}
	r.byID[id] = q
	q.id = id
	q.refs++
}

// dropID forgets q's request id. The caller must hold a reference to q.
func (s *simulation) dropID(r *rank, q *request) {
	if q.id != 0 {
		delete(r.byID, q.id)
		q.id = 0
		s.unref(q)
	}
}

// dropKey takes q out of the key store. The caller must hold a reference.
func (s *simulation) dropKey(r *rank, q *request) {
	if sq := r.store[q.key]; sq != nil && sq.remove(q) {
		if sq.empty() {
			r.nkeys--
		}
		s.unref(q)
	}
}

// byKey reports whether a wait or test names SimGrid's (src, dst, tag) key
// (TI traces), rather than a request id (OTF2, DUMPI, generated traces).
func byKey(e *trace.Event) bool { return e.Source != trace.NoRank && e.Partner != trace.NoRank }

// popReq pops the oldest stored request of the event's key. ok is false
// when the rank has no stored request at all (SimGrid aborts); q is nil
// for an unknown key or a null request (a no-op in SimGrid).
func (s *simulation) popReq(r *rank, e *trace.Event) (q *request, ok bool) {
	if !byKey(e) {
		q = r.byID[e.Request]
		if q == nil {
			return nil, true
		}
		q.refs++ // the caller's
		s.dropID(r, q)
		s.dropKey(r, q)
		return q, true
	}
	if r.nkeys == 0 {
		return nil, false
	}
	k := reqKey{e.Source, e.Partner, e.Tag}
	sq := r.store[k]
	if sq == nil || sq.empty() {
		return nil, true
	}
	q = sq.pop()
	if sq.empty() {
		r.nkeys--
	}
	if q != nil {
		s.dropID(r, q)
	}
	return q, true
}

// waitAll waits for every stored request and clears the store.
func (s *simulation) waitAll(r *rank, e *trace.Event) bool {
	n := 0
	if e.Requests != nil {
		// A waitall naming its requests (OTF2, DUMPI).
		for _, id := range e.Requests {
			if q := r.byID[id]; q != nil {
				q.refs++
				s.dropID(r, q)
				s.dropKey(r, q)
				if s.await(r, q) {
					n++
				}
				s.unref(q)
			}
		}
		if n > 0 {
			s.block(r, false)
			return true
		}
		return false
	}
	if r.nkeys == 0 {
		return false
	}
	for k, sq := range r.store {
		for !sq.empty() {
			if q := sq.pop(); q != nil {
				s.dropID(r, q)
				if s.await(r, q) {
					n++
				}
				s.unref(q)
			}
		}
		if len(r.store) > 64 {
			delete(r.store, k)
		}
	}
	r.nkeys = 0
	if n > 0 {
		s.block(r, false)
		return true
	}
	return false
}

// test is MPI_Test as SMPI replays it: sleep smpi/test x n (n grows with
// each failed test, process-wide), then check the request; a completed
// one is replaced by a null request, a pending one goes back at the end
// of its key's queue.
func (s *simulation) test(r *rank, e *trace.Event) bool {
	switch r.step {
	case 0:
		r.step = 1
		var q *request
		if !byKey(e) {
			// By request id: test in place, forget it once complete.
			if q = r.byID[e.Request]; q == nil {
				return true
			}
			q.refs++
			r.testByID = true
		} else if q, _ = s.popReq(r, e); q == nil {
			return true
		}
		r.testReq = q
		r.testKey = reqKey{e.Source, e.Partner, e.Tag}
		if d := s.nsleeps * s.cfg.TestSleep; d > 0 {
			r.step = 2
			s.startSleep(r, d)
			r.waiting = 1
			s.block(r, true)
			return false
		}
		fallthrough
	case 2:
		q := r.testReq
		r.testReq = nil
		if r.testByID {
			r.testByID = false
			if q.done {
				s.dropID(r, q)
				s.dropKey(r, q)
				s.nsleeps = 1
			} else if s.cfg.GrowInjectedTimes {
				s.nsleeps++
			}
			s.unref(q)
			return true
		}
		if q.done {
			s.storeReq(r, r.testKey, nil)
			s.nsleeps = 1
		} else {
			s.storeReq(r, r.testKey, q)
			if s.cfg.GrowInjectedTimes {
				s.nsleeps++
			}
		}
		s.unref(q)
		return true
	}
	return true
}
