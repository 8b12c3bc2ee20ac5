package check

import (
	"math"

	"kairos/trace"
)

// event applies one event of rank r.
func (e *engine) event(r int, ev *trace.Event) {
	switch ev.Kind {
	case trace.Send, trace.Isend:
		e.send(r, ev)
	case trace.Recv, trace.Irecv:
		e.recv(r, ev)
	case trace.SendRecv:
		e.sendRecv(r, ev)
	case trace.Wait:
		if byKey(ev) {
			e.keyedWait(r, ev)
		} else {
			e.wait(r, ev)
		}
	case trace.Waitall:
		e.waitall(r, ev)
	case trace.Test:
		if byKey(ev) {
			e.keyedTest(r, ev)
		} else if q := e.request(r, ev, ev.Request); q != nil {
			q.tested = true
		}
	case trace.Probe:
		e.probe(r, ev)
	default:
		if ev.Kind.IsWindow() || ev.Kind.IsIO() {
			e.oneSided(r, ev)
			return
		}
		if ev.Kind.IsCollective() {
			e.collective(r, ev)
		}
	}
}

// volumes reports negative or non-finite sizes and amounts, and unknown
// kinds.
func (e *engine) volumes(r, i int, ev *trace.Event) {
	if !ev.Kind.Valid() {
		e.problem(r, i, "invalid event kind %d", int(ev.Kind))
	}
	if ev.SendBytes < 0 {
		e.problem(r, i, "%s has a negative send size (%d bytes)", ev.Kind, ev.SendBytes)
	}
	if ev.RecvBytes < 0 && ev.Kind != trace.Recv && ev.Kind != trace.Irecv {
		e.problem(r, i, "%s has a negative receive size (%d bytes)", ev.Kind, ev.RecvBytes)
	}
	for _, v := range [2][]int64{ev.SendCounts, ev.RecvCounts} {
		for j, c := range v {
			if c < 0 {
				e.problem(r, i, "%s has a negative count (%d bytes for member %d)", ev.Kind, c, j)
				break
			}
		}
	}
	if c := ev.Compute; c < 0 || math.IsNaN(c) || math.IsInf(c, 0) {
		unit := "flops"
		if ev.Kind == trace.Sleep || ev.Kind.IsIO() {
			unit = "seconds"
		}
		e.problem(r, i, "%s has an invalid amount (%v %s)", ev.Kind, c, unit)
	}
}

// peerOK checks that rank r may talk to peer on ev's communicator.
func (e *engine) peerOK(r int, ev *trace.Event, peer int32, role string, wildcard bool) bool {
	c := e.comm(ev.Comm)
	if c == nil {
		e.problem(r, e.ranks[r].index, "%s on communicator %d, which is not defined", ev.Kind, ev.Comm)
		return false
	}
	if c.rankOf(int32(r)) < 0 {
		e.problem(r, e.ranks[r].index, "%s on communicator %d, of which rank %d is not a member", ev.Kind, ev.Comm, r)
		return false
	}
	if wildcard && peer == trace.AnySource {
		return true
	}
	if peer < 0 || int(peer) >= e.n {
		e.problem(r, e.ranks[r].index, "%s: %s %d is not a rank of this %d-rank trace", ev.Kind, role, peer, e.n)
		return false
	}
	if c.rankOf(peer) < 0 {
		e.problem(r, e.ranks[r].index, "%s: %s %d is not a member of communicator %d", ev.Kind, role, peer, ev.Comm)
		return false
	}
	return true
}

func (e *engine) tagOK(r int, ev *trace.Event, wildcard bool) bool {
	if ev.Tag >= 0 || wildcard && ev.Tag == trace.AnyTag {
		return true
	}
	e.problem(r, e.ranks[r].index, "%s has a negative tag (%d)", ev.Kind, ev.Tag)
	return false
}

// sendBlocks reports whether a blocking send of n bytes waits for its
// receive under the engine's protocol.
func (e *engine) sendBlocks(n int64) bool {
	switch e.proto {
	case Rendezvous:
		return true
	case SimGrid:
		return n >= e.limit
	}
	return false
}

// postSend posts a message of rank r to dst, or returns nil if the event
// is invalid.
func (e *engine) postSend(r int, ev *trace.Event, dst int32, bytes int64) *msg {
	if !e.peerOK(r, ev, dst, "destination", false) || !e.tagOK(r, ev, false) {
		return nil
	}
	m := e.msgs.next()
	*m = msg{rank: int32(r), index: e.ranks[r].index, comm: ev.Comm, src: int32(r), dst: dst, tag: ev.Tag, bytes: bytes}
	e.largest = max(e.largest, bytes)
	e.mt.postSend(m)
	if e.ranks[dst].pend == pProbe {
		e.wake(dst)
	}
	return m
}

// postRecv posts a receive of rank r from src, or returns nil if the event
// is invalid.
func (e *engine) postRecv(r int, ev *trace.Event, src int32, bytes int64) *msg {
	if !e.peerOK(r, ev, src, "source", true) || !e.tagOK(r, ev, true) {
		return nil
	}
	m := e.msgs.next()
	*m = msg{rank: int32(r), index: e.ranks[r].index, comm: ev.Comm, src: src, dst: int32(r), tag: ev.Tag, bytes: bytes, recv: true}
	e.mt.postRecv(m)
	return m
}

func (e *engine) send(r int, ev *trace.Event) {
	m := e.postSend(r, ev, ev.Partner, ev.SendBytes)
	blocks := e.sendBlocks(ev.SendBytes)
	if ev.Kind == trace.Isend {
		e.start(r, ev, m, !blocks)
	} else if m != nil && blocks {
		e.block(r, m, nil)
	}
}

func (e *engine) recv(r int, ev *trace.Event) {
	m := e.postRecv(r, ev, ev.Partner, ev.RecvBytes)
	if ev.Kind == trace.Irecv {
		e.start(r, ev, m, false)
	} else if m != nil {
		e.block(r, m, nil)
	}
}

// sendRecv sends to Partner and receives from Source, both with Tag.
func (e *engine) sendRecv(r int, ev *trace.Event) {
	s := e.postSend(r, ev, ev.Partner, ev.SendBytes)
	m := e.postRecv(r, ev, ev.Source, ev.RecvBytes)
	if s != nil && !e.sendBlocks(ev.SendBytes) {
		s = nil
	}
	if s != nil || m != nil {
		e.block(r, m, s)
	}
}

func (e *engine) block(r int, a, b *msg) {
	rs := &e.ranks[r]
	rs.pend = pMsgs
	rs.waitMsgs = [2]*msg{a, b}
}

// start records the request of an Isend or Irecv.
func (e *engine) start(r int, ev *trace.Event, m *msg, eager bool) {
	rs := &e.ranks[r]
	if old := rs.reqs.Get(ev.Request); old != nil {
		e.problem(r, rs.index, "%s starts request %d, which is still outstanding (started at event %d)", ev.Kind, ev.Request, old.index)
	}
	q := e.reqs.next()
	*q = request{id: ev.Request, kind: ev.Kind, index: rs.index, m: m, eager: eager, key: keyOf(r, ev)}
	rs.reqs.Put(ev.Request, q)
	if rs.store != nil {
		rs.store.Push(q.key, q)
	}
	if e.static {
		e.rep.Requests++
	}
}

// request returns rank r's outstanding request id, reporting its absence.
func (e *engine) request(r int, ev *trace.Event, id uint64) *request {
	rs := &e.ranks[r]
	q := rs.reqs.Get(id)
	if q == nil {
		e.problem(r, rs.index, "%s on request %d, which is not outstanding (never started or already completed)", ev.Kind, id)
	}
	return q
}

func (e *engine) wait(r int, ev *trace.Event) {
	if q := e.request(r, ev, ev.Request); q != nil {
		rs := &e.ranks[r]
		rs.waitReqs = append(rs.waitReqs[:0], q)
		rs.pend = pReqs
	}
}

func (e *engine) waitall(r int, ev *trace.Event) {
	rs := &e.ranks[r]
	rs.waitReqs = rs.waitReqs[:0]
	if ev.Requests == nil {
		for _, q := range rs.reqs.All() {
			rs.waitReqs = append(rs.waitReqs, *q)
		}
		if rs.store != nil {
			rs.store.Clear()
			clear(rs.guessed)
		}
	} else {
		for _, id := range ev.Requests {
			if q := e.request(r, ev, id); q != nil {
				rs.waitReqs = append(rs.waitReqs, q)
			}
		}
	}
	if len(rs.waitReqs) > 0 {
		rs.pend = pReqs
	}
}

func (e *engine) probe(r int, ev *trace.Event) {
	if !e.peerOK(r, ev, ev.Partner, "source", true) || !e.tagOK(r, ev, true) {
		return
	}
	rs := &e.ranks[r]
	if rs.probe == nil {
		rs.probe = new(msg)
	}
	*rs.probe = msg{comm: ev.Comm, src: ev.Partner, dst: int32(r), tag: ev.Tag, recv: true}
	rs.pend = pProbe
}

// slab is the number of messages or requests allocated at once.
const slab = 256

// slabOf hands out zero values of T allocated slab at a time, to spare the
// garbage collector one object per message or request.
type slabOf[T any] struct{ free []T }

func (s *slabOf[T]) next() *T {
	if len(s.free) == 0 {
		s.free = make([]T, slab)
	}
	p := &s.free[0]
	s.free = s.free[1:]
	return p
}
