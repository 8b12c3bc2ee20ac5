package sim

import "kairos/trace"

// One-sided communication, as SMPI 3.32 runs MPI-3 RMA programs on-line
// (smpi_win.cpp): SimGrid's replay has no one-sided actions, and a
// replay of a recorded program's windows does what SMPI does for them.
//
//   - A window's creation is an allgather of 8 bytes (the Win pointers)
//     over its communicator; its release a barrier, the completion of the
//     member's own pending transfers, and another barrier.
//   - A put or accumulate is a message from origin to target, a get one
//     from target to origin, both posted by the origin at its call (an
//     RMA send is always detached, after smpi/ois): the transfer starts at
//     once through the network model like any message. The receiving
//     side's request joins the request list of the window member that
//     will complete it: the target's for a put or accumulate, the
//     origin's for a get. A request-based call (MPI_Rput...) returns its
//     send request (MPI_Rget its receive) instead of listing it.
//   - A member completes the requests of a list with a waitall under the
//     list's mutex (finish_comms): flush(t) its own list's requests to or
//     from t, then t's list's to or from itself; flush_local(t) only the
//     first; flush_all and flush_local_all every one; unlock and
//     unlock_all flush their targets; a fence is a barrier, the member's
//     own list, and a barrier; complete and wait the member's own list.
//   - An accumulate flushes its target before returning (SMPI orders
//     accumulates so); get_accumulate (and fetch_and_op) takes the target
//     window's atomic mutex, gets and waits, accumulates and flushes;
//     compare_and_swap gets and waits under that mutex (its swap, which
//     only the data decides, is left out).
//   - Locks are SMPI's: an exclusive lock, or any lock on a window locked
//     exclusively, takes the target's lock mutex (a FIFO; a shared lock
//     gives it back at once), the lock type is added to the target's mode
//     (so a second shared lock no longer looks shared, and an exclusive
//     one then passes), unlock resets the mode and gives the mutex back if
//     the mode was exclusive; lock_all is a shared lock of every member,
//     in rank order. Each lock and unlock flushes its target.
//   - Post sends a zero-byte message to each member of its group, start
//     receives one from each (so it waits for the posts), complete sends
//     one to each target of its start and wait receives one from each
//     origin of its post, each then completing its own list.
//
// The time a rank blocks in these is communication, or wait where a
// partner was late (a lock held, a post not yet made).

// SMPI's RMA tags (SMPI_RMA_TAG and the offsets smpi_win.cpp adds).
const (
	rmaTag            int32 = -6666
	rmaTagPut               = rmaTag + 1
	rmaTagGet               = rmaTag + 2
	rmaTagAcc               = rmaTag - 3
	rmaTagPost              = rmaTag + 4
	rmaTagComplete          = rmaTag + 5
	smpiLockExclusive       = 1 // SMPI's MPI_LOCK_EXCLUSIVE
	smpiLockShared          = 2
)

// rmaWindow is one window of the run: each member's Win object.
type rmaWindow struct {
	members []int32 // world ranks; nil for MPI_COMM_WORLD
	at      map[int32]*winMember
	freed   int
	size    int
}

// winMember is one member's Win object.
type winMember struct {
	reqs    []*request // the requests it completes (requests_)
	mut     simMutex   // mut_, held over a completion
	lockMut simMutex   // lock_mut_, of exclusive locks
	atomic  simMutex   // atomic_mut_, of get_accumulate and compare_and_swap
	mode    int32      // the sum of the lock types held (mode_)
	// access and exposure are the groups (world ranks) of its open start
	// and post epochs.
	access, exposure []int32
}

// simMutex is an s4u mutex: its owner and the ranks waiting, in order.
type simMutex struct {
	owner   *rank
	waiters []*rank
}

// rmaOpKind is a step of a one-sided call.
type rmaOpKind uint8

const (
	opColl      rmaOpKind = iota // a collective (ev)
	opComplete                   // finish_comms: list of member peer, requests to or from filter (all if NoRank)
	opSend                       // start the send request of a transfer of bytes from src to dst (tag)
	opRecv                       // start its receive request: the transfer starts
	opListLast                   // add the last receive request to member peer's list
	opWaitLast                   // wait for the last receive request
	opLock                       // take mutex
	opUnlock                     // give it back
	opWinLock                    // SMPI's lock of member peer, of type bytes
	opWinUnlock                  // SMPI's unlock of member peer
	opSync                       // post zero-byte messages (send) to, or receive them from, group
)

// rmaOp is one step of a one-sided call.
type rmaOp struct {
	kind     rmaOpKind
	peer     int32 // the member whose list or lock (world rank)
	filter   int32
	src, dst int32
	bytes    int64
	tag      int32
	list     bool   // opRecv: the receive request joins member peer's list
	req      uint64 // opRecv: the trace request id (request-based calls) of the send (send) or receive request
	mutex    *simMutex
	group    []int32
	send     bool
	ev       trace.Event
}

// rmaCall is a rank's progress through a one-sided call.
type rmaCall struct {
	active bool
	ops    []rmaOp
	i      int
	sq, rq *request // the requests of the transfer being posted
	last   *request // the receive request of the last transfer (opListLast, opWaitLast)
	sub    int      // progress within an op
	inLine bool     // waiting for a mutex (lockMutex)
}

// win returns window h, creating its record.
func (s *simulation) win(r *rank, e *trace.Event) (*rmaWindow, bool) {
	w := s.wins[e.Handle]
	if w != nil && e.Kind == trace.WinCreate && w.freed >= w.size {
		w = nil // a later window with the same number
	}
	if w == nil {
		if e.Kind != trace.WinCreate {
			s.fail(r, "%s on window %d, which was never created", e.Kind, e.Handle)
			return nil, false
		}
		w = &rmaWindow{at: map[int32]*winMember{}, size: len(s.ranks)}
		if e.Comm != trace.WorldComm {
			w.members = s.meta.Members(e.Comm, len(s.ranks))
			if w.members == nil {
				s.fail(r, "win_create on undefined communicator %d", e.Comm)
				return nil, false
			}
			w.size = len(w.members)
		}
		if s.wins == nil {
			s.wins = map[uint32]*rmaWindow{}
		}
		s.wins[e.Handle] = w
	}
	return w, true
}

// member returns world rank g's Win object of w.
func (w *rmaWindow) member(g int32) *winMember {
	m := w.at[g]
	if m == nil {
		m = &winMember{}
		w.at[g] = m
	}
	return m
}

// world returns the world ranks of w's members.
func (w *rmaWindow) world(n int) []int32 {
	if w.members != nil {
		return w.members
	}
	all := make([]int32, n)
	for i := range all {
		all[i] = int32(i)
	}
	return all
}

// oneSided runs a one-sided call of r; it reports whether it is over.
func (s *simulation) oneSided(r *rank, e *trace.Event) bool {
	c := &r.rma
	if !c.active {
		w, ok := s.win(r, e)
		if !ok {
			return false
		}
		if s.cyc != nil {
			s.cyc.dropAll()
		}
		c.ops = s.rmaOps(r, e, w, c.ops[:0])
		c.i, c.sub, c.sq, c.rq, c.last, c.active = 0, 0, nil, nil, nil, true
		r.step = 0
	}
	for c.i < len(c.ops) {
		if !s.rmaStep(r, &c.ops[c.i]) {
			return false
		}
		c.i++
		c.sub, r.step = 0, 0
	}
	c.active = false
	if e.Kind == trace.WinFree {
		if w := s.wins[e.Handle]; w != nil {
			w.freed++
			delete(w.at, r.id)
			if w.freed >= w.size {
				delete(s.wins, e.Handle)
			}
		}
	}
	return true
}

// rmaOps returns the steps of r's one-sided call e on w, appended to ops.
func (s *simulation) rmaOps(r *rank, e *trace.Event, w *rmaWindow, ops []rmaOp) []rmaOp {
	me := r.id
	coll := func(k trace.Kind, bytes int64) rmaOp {
		ev := trace.NewEvent(k)
		ev.Comm, ev.SendBytes, ev.RecvBytes, ev.SendType, ev.RecvType = e.Comm, bytes, bytes, trace.TypeByte, trace.TypeByte
		return rmaOp{kind: opColl, ev: ev}
	}
	complete := func(member, filter int32) rmaOp { return rmaOp{kind: opComplete, peer: member, filter: filter} }
	flush := func(ops []rmaOp, t int32) []rmaOp {
		ops = append(ops, complete(me, t))
		if t != me {
			ops = append(ops, complete(t, me))
		}
		return ops
	}
	t := e.Partner
	self := t == me
	lock := func(ops []rmaOp, g int32, more ...rmaOp) []rmaOp {
		m := &w.member(g).mut
		ops = append(append(append(ops, rmaOp{kind: opLock, mutex: m}), more...), rmaOp{kind: opUnlock, mutex: m})
		return ops
	}
	// SMPI's put (accumulate: tag rmaTagAcc): the send request starts
	// (own list, unless returned as the request), then, under the
	// target's list mutex, the receive request joins its list and starts.
	put := func(ops []rmaOp, bytes int64, tag int32, req uint64) []rmaOp {
		ops = append(ops, rmaOp{kind: opSend, src: me, dst: t, bytes: bytes, tag: tag})
		if req == 0 && tag == rmaTagPut {
			ops = lock(ops, me)
		}
		ops = lock(ops, t, rmaOp{kind: opRecv, peer: t, list: true, req: req, send: true})
		if req == 0 && tag != rmaTagPut {
			ops = lock(ops, me)
		}
		return ops
	}
	// SMPI's get: the target's send request starts and joins its list,
	// then the origin's receive request starts (the transfer with it) and
	// joins the origin's list, unless returned as the request (or kept,
	// wait, for a wait that follows).
	get := func(ops []rmaOp, bytes int64, req uint64, wait bool) []rmaOp {
		ops = append(ops, rmaOp{kind: opSend, src: t, dst: me, bytes: bytes, tag: rmaTagGet})
		ops = lock(ops, t)
		ops = append(ops, rmaOp{kind: opRecv, req: req})
		switch {
		case wait:
			ops = append(ops, rmaOp{kind: opWaitLast})
		case req == 0:
			ops = lock(ops, me, rmaOp{kind: opListLast, peer: me})
		}
		return ops
	}
	switch e.Kind {
	case trace.WinCreate:
		ops = append(ops, coll(trace.Allgather, 8))
	case trace.WinFree, trace.WinFence:
		ops = append(ops, coll(trace.Barrier, 0), complete(me, trace.NoRank), coll(trace.Barrier, 0))
	case trace.Put:
		if !self {
			ops = put(ops, e.SendBytes, rmaTagPut, e.Request)
		}
	case trace.Get:
		if !self {
			ops = get(ops, e.RecvBytes, e.Request, false)
		}
	case trace.Accumulate:
		ops = put(ops, e.SendBytes, rmaTagAcc, e.Request)
		ops = flush(ops, t)
	case trace.GetAccumulate, trace.CompareAndSwap:
		m := &w.member(t).atomic
		ops = append(ops, rmaOp{kind: opLock, mutex: m})
		if !self {
			ops = get(ops, e.RecvBytes, 0, true)
		}
		if e.Kind == trace.GetAccumulate && e.SendBytes > 0 {
			ops = put(ops, e.SendBytes, rmaTagAcc, 0)
			ops = flush(ops, t)
		}
		ops = append(ops, rmaOp{kind: opUnlock, mutex: m})
	case trace.WinLock, trace.WinUnlock:
		k, typ := opWinLock, int64(smpiLockShared)
		if e.Kind == trace.WinUnlock {
			k = opWinUnlock
		}
		if e.Tag == trace.LockExclusive {
			typ = smpiLockExclusive
		}
		ops = append(ops, rmaOp{kind: k, peer: t, bytes: typ})
		ops = flush(ops, t)
	case trace.WinLockAll, trace.WinUnlockAll:
		k := opWinLock
		if e.Kind == trace.WinUnlockAll {
			k = opWinUnlock
		}
		for _, g := range w.world(len(s.ranks)) {
			ops = append(ops, rmaOp{kind: k, peer: g, bytes: smpiLockShared})
			ops = flush(ops, g)
		}
	case trace.WinFlush:
		if t != trace.NoRank {
			ops = flush(ops, t)
		}
	case trace.WinFlushLocal:
		if t != trace.NoRank {
			ops = append(ops, complete(me, t))
		}
	case trace.WinFlushAll:
		ops = append(ops, complete(me, trace.NoRank))
		for _, g := range w.world(len(s.ranks)) {
			if g != me {
				ops = append(ops, complete(g, me))
			}
		}
	case trace.WinFlushLocalAll:
		ops = append(ops, complete(me, trace.NoRank))
	case trace.WinPost, trace.WinStart:
		group := s.meta.Members(e.NewComm, len(s.ranks))
		m := w.member(me)
		if e.Kind == trace.WinPost {
			m.exposure = group
		} else {
			m.access = group
		}
		ops = append(ops, rmaOp{kind: opSync, group: group, send: e.Kind == trace.WinPost, tag: rmaTagPost})
	case trace.WinComplete, trace.WinWait:
		m := w.member(me)
		group := m.exposure
		if e.Kind == trace.WinComplete {
			group = m.access
		}
		ops = append(ops, rmaOp{kind: opSync, group: group, send: e.Kind == trace.WinComplete, tag: rmaTagComplete},
			complete(me, trace.NoRank))
	}
	return ops
}

// rmaStep runs one step of r's one-sided call; it reports whether it is
// over.
func (s *simulation) rmaStep(r *rank, op *rmaOp) bool {
	c := &r.rma
	w := s.wins[r.ev.Handle]
	switch op.kind {
	case opColl:
		return s.collective(r, &op.ev)
	case opComplete:
		return s.finishComms(r, w.member(op.peer), op.filter)
	case opSend:
		return s.rmaSend(r, op)
	case opRecv:
		s.rmaRecv(r, w, op)
		return true
	case opListLast: // the list takes the kept reference
		m := w.member(op.peer)
		m.reqs = append(m.reqs, c.last)
		c.last = nil
		return true
	case opWaitLast:
		if c.sub == 0 {
			c.sub = 1
			if q := c.last; q != nil {
				c.last = nil
				s.addWait(r, q)
				s.unref(q)
				r.single = true
			}
		}
		return s.waitStep(r)
	case opLock:
		return s.lockMutex(r, op.mutex)
	case opUnlock:
		if !s.turn(r) {
			return false
		}
		s.unlockMutex(op.mutex)
		return true
	case opWinLock:
		return s.winLock(r, w.member(op.peer), int32(op.bytes))
	case opWinUnlock:
		m := w.member(op.peer)
		if m.mode == smpiLockExclusive {
			if !s.turn(r) { // the mutex's unlock
				return false
			}
			s.unlockMutex(&m.lockMut)
		}
		m.mode = 0
		return true
	case opSync:
		return s.rmaSync(r, op)
	}
	return true
}

// rmaSend starts the send request of a one-sided transfer, as SMPI's
// origin does (after smpi/ois). An RMA send is detached and goes to the
// receiver's small mailbox, whose permanent receiver starts the transfer
// at once: its receive request, which rmaRecv starts later, only attaches
// to it.
func (s *simulation) rmaSend(r *rank, op *rmaOp) bool {
	if !s.checkPeer(r, op.src) || !s.checkPeer(r, op.dst) {
		return false
	}
	if !s.overhead(r, s.sendOverhead(r, true, op.bytes)) {
		return false
	}
	if !s.turn(r) {
		return false
	}
	r.slept = false
	sq := s.newRequest(s.ranks[op.src], true, op.dst, op.tag, op.bytes)
	rq := s.newRequest(s.ranks[op.dst], false, op.src, op.tag, op.bytes)
	sq.detached, sq.done = true, true
	// References: the transfer's, and r.rma's until rmaRecv, which a
	// rank waiting for a list's mutex keeps while the transfer may end.
	sq.refs += 2
	rq.refs += 2
	s.match(sq, rq)
	r.rma.sq, r.rma.rq = sq, rq
	return true
}

// rmaRecv starts the receive request of the transfer rmaSend started:
// it joins member peer's list (list), or becomes the trace's request req
// (the send request does where send is set), or is kept for opListLast
// or opWaitLast.
func (s *simulation) rmaRecv(r *rank, w *rmaWindow, op *rmaOp) {
	c := &r.rma
	sq, rq := c.sq, c.rq
	c.sq, c.rq = nil, nil
	defer s.unref(sq) // r.rma's reference
	switch {
	case op.req != 0 && op.send: // MPI_Rput, MPI_Raccumulate: the send request
		s.indexReq(r, sq, op.req)
	case op.req != 0: // MPI_Rget: the receive request
		s.indexReq(r, rq, op.req)
		s.unref(rq)
		return
	}
	if op.list {
		s.listRequest(w.member(op.peer), rq)
		s.unref(rq)
		return
	}
	c.last = rq // r.rma's reference, kept
}

// listRequest adds q to m's list of requests to complete.
func (s *simulation) listRequest(m *winMember, q *request) {
	q.refs++
	m.reqs = append(m.reqs, q)
}

// finishComms is SMPI's finish_comms by r on member m's list: under the
// list's mutex, a waitall of its requests to or from filter (all of them
// if NoRank), taken out of the list.
func (s *simulation) finishComms(r *rank, m *winMember, filter int32) bool {
	c := &r.rma
	switch c.sub {
	case 0:
		if !s.lockMutex(r, &m.mut) {
			return false
		}
		c.sub = 1
		fallthrough
	case 1:
		kept := m.reqs[:0]
		for _, q := range m.reqs {
			if filter != trace.NoRank && q.peer != filter && q.owner.id != filter {
				kept = append(kept, q)
				continue
			}
			// The rank that waits for it owns it now; its transfer keeps
			// its end points.
			q.owner = r
			s.addWait(r, q)
			s.unref(q)
		}
		clear(m.reqs[len(kept):])
		m.reqs = kept
		c.sub = 2
		fallthrough
	case 2:
		if !s.waitStep(r) {
			return false
		}
		c.sub = 3
		fallthrough
	default:
		if !s.turn(r) {
			return false
		}
		s.unlockMutex(&m.mut)
		return true
	}
}

// lockMutex takes mutex m for r (a simcall): at once if it is free, else
// r waits in line until it is handed the mutex. It reports whether r
// holds it.
func (s *simulation) lockMutex(r *rank, m *simMutex) bool {
	c := &r.rma
	if c.inLine { // woken: handed the mutex
		if m.owner != r {
			return false
		}
		c.inLine = false
		return true
	}
	if !s.turn(r) {
		return false
	}
	if m.owner == nil {
		m.owner = r
		return true
	}
	m.waiters = append(m.waiters, r)
	c.inLine = true
	s.block(r, false)
	return false
}

// unlockMutex gives mutex m to the first rank waiting for it, which is
// woken (its wait counted as waiting for a late partner).
func (s *simulation) unlockMutex(m *simMutex) {
	if len(m.waiters) == 0 {
		m.owner = nil
		return
	}
	w := m.waiters[0]
	m.waiters = append(m.waiters[:0], m.waiters[1:]...)
	m.owner = w
	w.matchMax = s.now
	s.wake(w)
}

// winLock is SMPI's lock of member m by r, of SMPI lock type typ.
func (s *simulation) winLock(r *rank, m *winMember, typ int32) bool {
	c := &r.rma
	if c.sub == 0 {
		if !((typ == smpiLockExclusive && m.mode != smpiLockShared) || m.mode == smpiLockExclusive) {
			// No simcall: the mode alone changes.
			if !(m.mode == smpiLockShared && typ == smpiLockExclusive) {
				m.mode += typ
			}
			return true
		}
		c.sub = 1
	}
	if c.sub == 1 {
		if !s.lockMutex(r, &m.lockMut) {
			return false
		}
		m.mode += typ
		if typ != smpiLockShared {
			return true
		}
		c.sub = 2
	}
	if !s.turn(r) {
		return false
	}
	s.unlockMutex(&m.lockMut)
	return true
}

// rmaSync is post and complete (send: a zero-byte message to each member
// of the group, detached) or start and wait (a zero-byte receive from
// each, then a waitall).
func (s *simulation) rmaSync(r *rank, op *rmaOp) bool {
	c := &r.rma
	for c.sub < len(op.group) {
		g := op.group[c.sub]
		if g == r.id {
			c.sub++
			continue
		}
		if !s.checkPeer(r, g) {
			return false
		}
		if op.send && !s.overhead(r, s.sendOverhead(r, false, 0)) {
			return false
		}
		if !s.startTurn(r, op.send, g, op.tag, 0, 0) {
			return false
		}
		r.slept = false
		q := s.newRequest(r, op.send, g, op.tag, 0)
		s.post(q)
		s.addWait(r, q)
		c.sub++
	}
	return s.waitStep(r)
}

// io replays an MPI-IO call: its recorded duration (Compute seconds, from
// the timed trace), as I/O time.
func (s *simulation) io(r *rank, e *trace.Event) bool {
	if e.Compute <= 0 {
		return true
	}
	if r.step == 0 {
		if !s.turn(r) {
			return false
		}
		r.step, r.io = 1, true
		s.sleepFor(r, e.Compute, false)
		return false
	}
	return true
}
