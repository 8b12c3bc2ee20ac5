package clock

import (
	"math"

	"kairos/trace"
)

// One-sided communication. A put, accumulate or atomic is a message from
// origin to target, a get one from target to origin, leaving when the
// origin makes the call (S is the origin's logical time then) and
// counted, as any message, as latency and bandwidth time of the rank that
// waits for it: the origin, at the synchronisation that completes it
// (flush, unlock, fence, complete; an accumulate or atomic at once, as
// SMPI completes them). A fence is a synchronisation of the window's
// members after each completed its transfers, as are the window's
// creation and release; post and complete send a zero-byte message to
// each member of their group, start and wait receive one from each, so
// that a start waits for its posts and a wait for its origins' completes.
// Locks cost nothing and are not contended in this model. MPI-IO calls
// keep their recorded time, counted apart from computation (Result.IO).

// rmaState is a rank's pending one-sided transfers, by window, and the
// groups of its open start and post epochs.
type rmaState struct {
	pending          map[uint32][]*request
	access, exposure map[uint32][]int32
}

// Tags of the zero-byte messages of post/start and complete/wait (SMPI's).
const (
	tagPost     = -6662
	tagComplete = -6661
)

// oneSided replays a one-sided event; it returns false if st blocks.
func (e *engine) oneSided(st *rankState, ev *trace.Event) bool {
	if st.rma == nil {
		st.rma = &rmaState{pending: map[uint32][]*request{}, access: map[uint32][]int32{}, exposure: map[uint32][]int32{}}
	}
	rs := st.rma
	h, t := ev.Handle, ev.Partner
	switch ev.Kind {
	case trace.Put, trace.Get:
		if t == st.id {
			break
		}
		src, dst, n := st.id, t, ev.SendBytes
		if ev.Kind == trace.Get {
			src, dst, n = t, st.id, ev.RecvBytes
		}
		rq := e.transfer(st, src, dst, n)
		if rq == nil {
			break
		}
		switch {
		case ev.Request != 0 && ev.Kind == trace.Get: // MPI_Rget: its wait waits for the data
			e.addRequest(st, ev.Request, rq)
			return true
		case ev.Request != 0: // MPI_Rput: completes locally at once
			e.addRequest(st, ev.Request, e.sendRequest(st, &message{}))
		}
		rs.pending[h] = append(rs.pending[h], rq)
	case trace.Accumulate, trace.GetAccumulate, trace.CompareAndSwap:
		if ev.Kind != trace.Accumulate && ev.RecvBytes > 0 { // the fetch, first
			if rq := e.transfer(st, t, st.id, ev.RecvBytes); rq != nil {
				st.pending = append(st.pending[:0], rq)
				e.completeRequests(st)
			}
		}
		if ev.Kind != trace.CompareAndSwap && ev.SendBytes > 0 {
			if rq := e.transfer(st, st.id, t, ev.SendBytes); rq != nil {
				rs.pending[h] = append(rs.pending[h], rq)
			}
		}
		if ev.Request != 0 {
			e.addRequest(st, ev.Request, e.sendRequest(st, &message{}))
		}
		e.completeWindow(st, h, t)
	case trace.WinFlush, trace.WinFlushLocal, trace.WinUnlock:
		if t != trace.NoRank {
			e.completeWindow(st, h, t)
		}
	case trace.WinFlushAll, trace.WinFlushLocalAll, trace.WinUnlockAll:
		e.completeWindow(st, h, trace.NoRank)
	case trace.WinFence, trace.WinFree:
		e.completeWindow(st, h, trace.NoRank)
		if ev.Kind == trace.WinFree {
			delete(rs.pending, h)
		}
		return e.enterCollective(st, ev)
	case trace.WinCreate:
		return e.enterCollective(st, ev)
	case trace.WinPost, trace.WinStart:
		g := e.src.Meta().Members(ev.NewComm, len(e.ranks))
		if ev.Kind == trace.WinPost {
			rs.exposure[h] = g
			return e.syncGroup(st, ev, g, true, tagPost)
		}
		rs.access[h] = g
		return e.syncGroup(st, ev, g, false, tagPost)
	case trace.WinComplete:
		e.completeWindow(st, h, trace.NoRank)
		return e.syncGroup(st, ev, rs.access[h], true, tagComplete)
	case trace.WinWait:
		e.completeWindow(st, h, trace.NoRank)
		return e.syncGroup(st, ev, rs.exposure[h], false, tagComplete)
	}
	return true
}

// transfer returns a completion request of st for a one-sided message of
// n bytes from src to dst, leaving now; nil if a rank is out of range.
func (e *engine) transfer(st *rankState, src, dst int32, n int64) *request {
	if src < 0 || int(src) >= len(e.ranks) || dst < 0 || int(dst) >= len(e.ranks) {
		e.fail(st, "targets rank %d, which is not in the trace (%d ranks)", st.ev.Partner, len(e.ranks))
		return nil
	}
	m := e.newMessage()
	e.msgSeq++
	*m = message{src: src, dst: dst, n: max(n, 0), seq: e.msgSeq, sendIdx: st.idx, snap: st.clk, off: st.lag, refs: 1}
	st.clk.refs++
	rq := e.newRequest()
	*rq = request{m: m, src: src, owner: st.id, idx: st.idx}
	m.recv = rq
	return rq
}

// completeWindow completes st's pending transfers on window h with target
// t (all of them for NoRank): its clock moves to their latest arrival.
// Their arrivals are known, so it never blocks.
func (e *engine) completeWindow(st *rankState, h uint32, t int32) {
	list := st.rma.pending[h]
	if len(list) == 0 {
		return
	}
	st.pending = st.pending[:0]
	kept := list[:0]
	for _, rq := range list {
		if t != trace.NoRank && rq.m.src != t && rq.m.dst != t {
			kept = append(kept, rq)
			continue
		}
		st.pending = append(st.pending, rq)
	}
	clear(list[len(kept):])
	st.rma.pending[h] = kept
	e.completeRequests(st)
}

// syncGroup sends (send) a zero-byte message with tag to every member of
// group but st, or receives one from each and blocks until they came.
func (e *engine) syncGroup(st *rankState, ev *trace.Event, group []int32, send bool, tag int32) bool {
	msg := trace.Event{Kind: trace.Send, Tag: tag, Comm: trace.WorldComm}
	st.pending = st.pending[:0]
	for _, g := range group {
		if g == st.id {
			continue
		}
		if send {
			e.postSend(st, &msg, g, 0)
			continue
		}
		st.pending = append(st.pending, e.postRecv(st, &msg, g))
	}
	if send {
		return true
	}
	return e.block(st)
}

// ioTime charges d seconds of I/O.
func (st *rankState) ioTime(d float64) {
	if d > 0 && !math.IsInf(d, 0) {
		st.lag += d
		st.io += d
	}
}

// ioDuration returns an I/O call's time: its recorded duration in a timed
// trace, its Compute seconds in an untimed one.
func ioDuration(ev *trace.Event) float64 {
	if ev.HasTime {
		return duration(ev)
	}
	return ev.Compute
}
