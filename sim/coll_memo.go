package sim

import (
	"slices"

	"kairos/trace"
)

// collMemo is a rank's last collective of a kind as the operations of
// its phases, kept by both engines: a program calls the same
// collective over and over (ExaML's two million broadcasts and
// reductions of a few sizes), and an algorithm's operations depend only
// on the call (kind, communicator, root, sizes, types, counts), so that
// the next call that is the same posts them again without choosing the
// algorithm, expanding it and running its phases (a third of ExaML's
// analytic replay, a tenth of its exact one). Not kept (keepable): calls
// whose algorithm may read whether SimGrid's temporary buffers are still
// null (readsTmpNull), an answer that changes over the run, and calls of
// more than memoMaxOps operations or counts.
type collMemo struct {
	ok                   bool // phases hold the whole of the call below
	kind                 trace.Kind
	comm                 uint32
	partner              int32
	sendBytes, recvBytes int64
	sendType, recvType   trace.Datatype
	hasSend, hasRecv     bool // the counts vectors are not nil
	sendCounts           []int64
	recvCounts           []int64

	tag     int32
	inOrder bool
	parts   int // the algorithm's parts (collState.part at the end)
	world   []int32
	grows   [2]bool // tmpGrows' answer
	phases  []memoPhase
	ops     int // the operations in phases
	// own is the rank's own room for a phase's operations, put aside
	// while the call replays m's and given back after: taking the pool's
	// instead made ranks hold its large slices, half a GB more on an FFT
	// of 1,024 ranks.
	own []collOp

	recording bool // the rank's current collective is being kept
	replaying bool // the rank's current collective replays phases
	next      int  // the phase it posts next
}

// memoPhase is one phase's operations and the datatypes of its part.
type memoPhase struct {
	ops          []collOp
	stype, rtype trace.Datatype
}

// matches reports whether e is the call m holds.
func (m *collMemo) matches(e *trace.Event) bool {
	return m.ok && e.Kind == m.kind && e.Comm == m.comm && e.Partner == m.partner &&
		e.SendBytes == m.sendBytes && e.RecvBytes == m.recvBytes &&
		e.SendType == m.sendType && e.RecvType == m.recvType &&
		(e.SendCounts != nil) == m.hasSend && slices.Equal(e.SendCounts, m.sendCounts) &&
		(e.RecvCounts != nil) == m.hasRecv && slices.Equal(e.RecvCounts, m.recvCounts)
}

// record starts keeping call e, which st was just set up for; its
// phases follow (phase) and it is whole once they end (memoNextPhase).
func (m *collMemo) record(e *trace.Event, st *collState, grows [2]bool) {
	m.ok, m.recording, m.replaying = false, true, false
	m.kind, m.comm, m.partner = e.Kind, e.Comm, e.Partner
	m.sendBytes, m.recvBytes, m.sendType, m.recvType = e.SendBytes, e.RecvBytes, e.SendType, e.RecvType
	m.hasSend, m.hasRecv = e.SendCounts != nil, e.RecvCounts != nil
	m.sendCounts = append(m.sendCounts[:0], e.SendCounts...)
	m.recvCounts = append(m.recvCounts[:0], e.RecvCounts...)
	m.tag, m.inOrder, m.world, m.grows = st.call.tag, st.call.inOrder, st.world, grows
	m.parts = len(st.parts)
	m.phases, m.ops = m.phases[:0], 0
}

// memoMaxOps bounds the operations a memo keeps: a call of more (a root
// gathering from every member, an alltoall) is not kept, so that what
// the ranks keep grows with their number, not with its square (an
// alltoall's 8,190 operations a rank at 4,096 ranks would be 1.3 GB).
const memoMaxOps = 32

// phase keeps the phase st is about to post, or gives the call up if it
// has more operations than memoMaxOps.
func (m *collMemo) phase(st *collState) {
	if m.ops += len(st.ops); m.ops > memoMaxOps {
		m.recording = false
		clear(m.phases) // their operations' room too
		m.phases = m.phases[:0]
		return
	}
	i := len(m.phases)
	if i < cap(m.phases) {
		m.phases = m.phases[:i+1]
	} else {
		m.phases = append(m.phases, memoPhase{})
	}
	p := &m.phases[i]
	p.ops = append(p.ops[:0], st.ops...)
	p.stype, p.rtype = st.call.stype, st.call.rtype
}

// replay sets st up for the call m holds, as setupColl would.
func (m *collMemo) replay(st *collState) {
	st.reset()
	m.own = st.ops
	st.world, st.call.tag, st.call.inOrder = m.world, m.tag, m.inOrder
	m.replaying, m.next = true, 0
}

// nextPhase gives st the operations of the next phase of the call being
// replayed; it reports false after the last, st.ops then the rank's own
// again and st where the algorithm's last phase leaves it (the period
// detection compares it).
func (m *collMemo) nextPhase(st *collState) bool {
	if m.next == len(m.phases) {
		m.replaying, st.ops, m.own = false, m.own, nil
		st.part, st.phase = m.parts, 0
		return false
	}
	p := &m.phases[m.next]
	m.next++
	st.ops, st.call.stype, st.call.rtype = p.ops, p.stype, p.rtype
	return true
}

// collMemos are a rank's memos, one per collective kind, made at its
// first call of the kind, in that order. A code calls few kinds: a table
// of every kind took 512 bytes a rank, a page of fresh memory every eight
// ranks of a replay of thousands.
type collMemos []*collMemo

// of returns the memo of kind k.
func (ms *collMemos) of(k trace.Kind) *collMemo {
	for _, m := range *ms {
		if m.kind == k {
			return m
		}
	}
	m := &collMemo{kind: k} // record keeps the kind
	*ms = append(*ms, m)
	return m
}

// startColl sets st up for collective e of rank id, replaying the call
// kept in ms if it is the same, else as setupColl does, keeping it if
// it can. It returns the memo of e's kind and the temporary buffers the
// call grows (tmpGrows).
func (s *simulation) startColl(ms *collMemos, st *collState, id int32, e *trace.Event) (*collMemo, [2]bool, error) {
	m := ms.of(e.Kind)
	if m.matches(e) {
		m.replay(st)
		s.markTmpGrown(m.grows[0], m.grows[1]) // as growTmpBuffers
		return m, m.grows, nil
	}
	m.ok, m.recording = false, false
	if err := s.setupColl(st, id, e); err != nil {
		return m, [2]bool{}, err
	}
	var grows [2]bool
	grows[0], grows[1] = tmpGrows(&st.call)
	if keepable(e) {
		m.record(e, st, grows)
	}
	return m, grows, nil
}

// memoNextPhase sets st up for the next phase of its collective, from
// m's phases if m replays them, else from the algorithm's, which m keeps
// if it records them. It reports false after the last phase.
func (s *simulation) memoNextPhase(m *collMemo, st *collState, e *trace.Event) bool {
	if m.replaying {
		return m.nextPhase(st)
	}
	if !s.nextPhase(st, e) {
		m.ok, m.recording = m.recording, false // whole, if it was recorded
		return false
	}
	if m.recording {
		m.phase(st)
	}
	return true
}

// keepable reports whether a memo may keep call e: not if its algorithm
// may ask whether SimGrid's temporary buffers are still null, nor if its
// counts have more elements than memoMaxOps (a v-collective's counts
// copied by every rank would grow with the square of the ranks).
func keepable(e *trace.Event) bool {
	return !readsTmpNull(e) && len(e.SendCounts) <= memoMaxOps && len(e.RecvCounts) <= memoMaxOps
}
