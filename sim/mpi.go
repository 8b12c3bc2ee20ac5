package sim

import (
	"fmt"

	"kairos/internal/reqstore"
	"kairos/trace"
)

// request is one side of a point-to-point message, as an MPI request.
type request struct {
	owner    *rank
	peer     int32 // destination of a send, source of a receive (AnySource allowed)
	tag      int32
	bytes    int64
	seq      uint64 // posting order, for matching
	comm     *comm
	matched  float64 // when both sides were posted; -1 before
	begun    float64 // when the action that posted it began
	posted   float64 // with TraceInternals, when SimGrid traces its start (see newRequest)
	refs     int32   // references: mailbox or transfer, store, id index, waiter
	msgID    uint32  // in small-message mode, a send's number among its sender's to its destination with its tag
	send     bool
	detached bool
	done     bool
	awaited  bool
	// pc is the point-to-point communicator it matches on (see
	// simulation.p2pComm): 0 for MPI_COMM_WORLD, a TI trace's only one,
	// and the collectives' messages.
	pc uint8
	// typed marks a request whose size and datatype dtype SMPI checks
	// against its match's (see checkMatch): the trace's point-to-point
	// calls', and the collective messages of the algorithms that post
	// their buffers as SMPI does (collOp.typed).
	typed bool
	dtype trace.Datatype
	// msg is the message a receive took, for a MessageObserver, until its
	// rank's wait or test returns with it (see arrive).
	msg *Message
	// guessed marks a collective's receive whose size its algorithm does
	// not give (or, for the receive half of a sendrecv, takes to be its
	// send's): in small-message mode, where the size chooses the mailbox,
	// a send may find it in either.
	guessed bool
	key     reqKey // its key in the rank's request store
	id      uint64 // the trace's request id, if indexed
	// overhead is smpi/or for a receive that matched a detached send: the
	// sleep after a wait or test finishes it (SMPI's finish_wait).
	overhead float64
	// flagged is why SMPI flagged this receive when it compared it with a
	// send its message numbers then refused (small-message mode): SMPI
	// aborts when it is waited for, whatever it matches.
	flagged string
}

// comm is a matched message and its transfer.
type comm struct {
	src, dst int32
	bytes    int64
	sreq     *request
	rreq     *request
	act      *action
}

// reqKey is SimGrid's replay request key: (sender, receiver, tag).
type reqKey = reqstore.Key

// queue is a FIFO of requests; queueMap, request queues by (source, tag)
// (mkey).
type (
	queue    = reqstore.Queue[*request]
	queueMap = reqstore.QueueMap[uint64, *request]
)

// mailbox holds a receiving rank's unmatched sends and receives. A send
// reads the fields up to wildRecv, first.
type mailbox struct {
	// lastPost and lastProbe are when a send was last posted to the
	// mailbox and when its owner last probed it (-1 for never).
	lastPost, lastProbe float64
	recvs               queueMap // exact receives by (source, tag)
	wildRecv            queue    // receives with AnySource or AnyTag
	sends               queueMap // by (source, tag)
	nsends              int
}

// mkey is the key of the messages from src with tag on point-to-point
// communicator pc: src and pc (a rank is below trace.MaxRanks, 1<<24)
// above, tag below, as SimGrid's (src, tag) key where pc is 0.
func mkey(src, tag int32, pc uint8) uint64 {
	return (uint64(uint32(src))|uint64(pc)<<24)<<32 | uint64(uint32(tag))
}

// p2pComm returns the point-to-point communicator index of comm: 0 for
// MPI_COMM_WORLD, then one per communicator in the order the replay meets
// them, up to 255 (those beyond share the last: MPI keeps their messages
// apart, the replay does not).
func (s *simulation) p2pComm(comm uint32) uint8 {
	if comm == trace.WorldComm {
		return 0
	}
	pc, ok := s.pcomms[comm]
	if !ok {
		pc = uint8(min(len(s.pcomms)+1, 255))
		if s.pcomms == nil {
			s.pcomms = map[uint32]uint8{}
		}
		s.pcomms[comm] = pc
	}
	return pc
}

func (s *simulation) newRequest(r *rank, send bool, peer, tag int32, bytes int64) *request {
	q := recycled(&s.freeReqs)
	q.owner, q.send, q.peer, q.tag, q.bytes, q.pc = r, send, peer, tag, bytes, 0
	q.matched, q.begun = -1, r.start
	if s.cfg.TraceInternals {
		// SimGrid's Request::start traces it, before the send's overhead.
		q.posted = s.now
		if send && r.sendFromSet {
			q.posted, r.sendFromSet = r.sendFrom, false
		}
	}
	s.seq++
	q.seq = s.seq
	return q
}

// post starts a request: a send looks for a matching receive posted at
// its destination, a receive for a matching send; unmatched, it waits in
// the destination's mailbox. Matching follows MPI (and SMPI) order: the
// oldest matching request of the other side. In small-message mode the
// mailbox is the one its start chose (rank.async.small, see startTurn).
func (s *simulation) post(q *request) {
	q.refs++ // held by the mailbox, then the transfer, until commDone
	small := s.asyncOn() && q.owner.async.small
	if q.send {
		q.detached = q.bytes < s.cfg.DetachedThreshold
		dst := s.ranks[q.peer]
		if dst.done && dst.res.Finish < s.now {
			// SimGrid's send finds no process for it ("Actor pid=%ld
			// is gone??") and aborts. (At the date the destination
			// ends, whether it is gone yet depends on the order of
			// SimGrid's sub-rounds, which is not checked.)
			s.fail(q.owner, "sends to rank %d, which has already finished its trace (SimGrid aborts too)", q.peer)
		}
		dst.mbox.lastPost = s.now
		s.nearTie(dst.mbox.lastProbe)
		if dst.mbox.lastProbe == s.now {
			s.orderMatters() // the probe may have come before or after
		}
		mb := &dst.mbox
		if small {
			mb = &dst.smbox
		}
		if q.detached {
			q.done = true
		}
		if s.asyncOn() {
			q.msgID = takeMsgID(q.owner, q.peer, q.tag, q.pc)
			if !s.inOrder(q) {
				// Every receive it meets refuses it, flagged.
				if q.bytes < s.cfg.AsyncSmallThreshold {
					s.compareRecvs(q, &dst.mbox)
				}
				s.compareRecvs(q, mb)
			}
		}
		cand, from := findRecv(mb, q.owner.id, q.tag, q.pc)
		if cand != nil && !s.inOrder(q) {
			cand = nil
		}
		if cand == nil && !small && s.asyncOn() {
			// A receive whose size was guessed small may wait in the
			// small mailbox where SMPI, knowing its size, put it in
			// this one.
			if c, f := findRecv(&dst.smbox, q.owner.id, q.tag, q.pc); c != nil && c.guessed && s.inOrder(q) {
				cand, from = c, f
			}
		}
		switch {
		case cand != nil:
			if cand == from.Front() {
				from.Pop()
			} else {
				from.Remove(cand)
			}
			s.match(q, cand)
		case small:
			s.postEager(q, mb)
		default:
			mb.sends.Slot(mkey(q.owner.id, q.tag, q.pc)).Push(q)
			mb.nsends++
		}
		return
	}
	me := q.owner
	mb := &me.mbox
	if small {
		mb = &me.smbox
	}
	take := s.match
	if small {
		take = s.attach
	}
	if s.asyncOn() {
		s.compareRecv(q, mb)
	}
	if q.peer != trace.AnySource && q.tag != trace.AnyTag {
		if sq := mb.sends.Ref(mkey(q.peer, q.tag, q.pc)); sq != nil && !sq.Empty() && s.inOrder(sq.Front()) {
			mb.nsends--
			take(sq.Pop(), q)
			return
		}
		mb.recvs.Slot(mkey(q.peer, q.tag, q.pc)).Push(q)
		return
	}
	// Which send a wildcard receive gets can depend on the order of
	// simultaneous events.
	s.orderMatters()
	if best, bq := s.oldestSend(mb, q.peer, q.tag, q.pc); best != nil {
		bq.Remove(best)
		mb.nsends--
		take(best, q)
		return
	}
	mb.wildRecv.Push(q)
}

// findRecv returns the oldest receive in mb that accepts a message from
// src with tag on point-to-point communicator pc, and its queue; nil if
// none.
func findRecv(mb *mailbox, src, tag int32, pc uint8) (*request, *queue) {
	var cand *request
	var from *queue
	if rq := mb.recvs.Ref(mkey(src, tag, pc)); rq != nil && !rq.Empty() {
		cand, from = rq.Front(), rq
	}
	if !mb.wildRecv.Empty() {
		for _, w := range mb.wildRecv.Items() {
			if (cand == nil || w.seq < cand.seq) && matches(w, src, tag, pc) {
				cand, from = w, &mb.wildRecv
				break
			}
		}
	}
	return cand, from
}

// oldestSend returns the oldest unmatched send in mb that a receive from
// src with tag (wildcards allowed) on point-to-point communicator pc
// accepts, and its queue; nil if none.
func (s *simulation) oldestSend(mb *mailbox, src, tag int32, pc uint8) (*request, *queue) {
	if src != trace.AnySource && tag != trace.AnyTag {
		if sq := mb.sends.Ref(mkey(src, tag, pc)); sq != nil && !sq.Empty() && s.inOrder(sq.Front()) {
			return sq.Front(), sq
		}
		return nil, nil
	}
	probe := request{peer: src, tag: tag, pc: pc}
	var best *request
	var bq *queue
	for _, sq := range mb.sends.All() {
		if sq.Empty() {
			continue
		}
		for _, c := range sq.Items() {
			if matches(&probe, c.owner.id, c.tag, c.pc) {
				if (best == nil || c.seq < best.seq) && s.inOrder(c) {
					best, bq = c, sq
				}
				break
			}
		}
	}
	return best, bq
}

// matches reports whether receive r accepts a message from src with tag
// on point-to-point communicator pc.
func matches(r *request, src, tag int32, pc uint8) bool {
	return r.pc == pc && (r.peer == trace.AnySource || r.peer == src) && (r.tag == trace.AnyTag && tag >= 0 || r.tag == tag)
}

// match pairs a send and a receive and starts the transfer.
func (s *simulation) match(sq, rq *request) {
	if sq.typed && rq.typed {
		s.checkMatch(sq, rq)
	}
	c := s.newComm()
	c.src, c.dst, c.bytes = sq.owner.id, rq.owner.id, sq.bytes
	c.sreq, c.rreq = sq, rq
	sq.comm, rq.comm = c, c
	sq.matched, rq.matched = s.now, s.now
	s.received(sq, rq)
	if sq.detached {
		rq.overhead = s.recvOverheadOf(rq.owner, sq.bytes)
	}
	s.stats.messages++
	s.stats.bytes += sq.bytes
	s.startComm(c)
}

func (s *simulation) newComm() *comm { return recycled(&s.freeComms) }

// recycled returns a zero T, the last of free if there is one (taken off
// it), else a new one.
func recycled[T any](free *[]*T) *T {
	n := len(*free)
	if n == 0 {
		return new(T)
	}
	x := (*free)[n-1]
	*free = (*free)[:n-1]
	var zero T
	*x = zero
	return x
}

// commDone completes both sides of a finished transfer.
func (s *simulation) commDone(c *comm) {
	if c.rreq == nil {
		// An eager message of small-message mode that no receive has
		// taken yet: it waits, complete, in the small mailbox.
		return
	}
	if s.msgObs != nil && (c.sreq.tag >= 0 || s.cfg.TraceInternals) {
		// A message of the trace's own (collectives' tags are negative),
		// or any with TraceInternals: it arrives when the receiver's
		// wait or test returns with it.
		c.rreq.msg = &Message{Src: int(c.src), Dst: int(c.dst), Tag: c.sreq.tag, Bytes: c.bytes, Sent: c.sreq.begun, SentBegan: c.sreq.begun}
		if s.cfg.TraceInternals {
			c.rreq.msg.Sent = c.sreq.posted
		}
		if c.rreq.awaited {
			s.arrive(c.rreq)
		}
	}
	// SimGrid answers the simcalls blocked on a communication in the order
	// they started waiting.
	if r, q := c.rreq.owner, c.sreq.owner; c.rreq.awaited && c.sreq.awaited && r.resume && q.resume && r.regSeq < q.regSeq {
		s.complete(c.rreq)
		s.complete(c.sreq)
	} else {
		if !c.sreq.done {
			s.complete(c.sreq)
		}
		s.complete(c.rreq)
	}
	c.sreq.comm, c.rreq.comm = nil, nil
	s.unref(c.sreq)
	s.unref(c.rreq)
	s.freeComms = append(s.freeComms, c)
}

// arrive hands the message receive q took to its rank, to be reported
// when the rank's current action (the wait, test or receive returning with
// it) ends, as SimGrid's tracing ends a message's link; with
// TraceInternals it is reported now, as the wait returns q.
func (s *simulation) arrive(q *request) {
	if q.msg == nil {
		return
	}
	if s.cfg.TraceInternals {
		// SimGrid's finish_wait ends the link as the wait returns the
		// request, inside the action.
		r := q.owner
		began := r.start
		if r.ev == nil || r.ev == &finalBarrier {
			began = -1
		}
		q.msg.Arrived, q.msg.RecvBegan = s.now, began
		s.msgObs.Message(*q.msg)
	} else {
		q.owner.arrived = append(q.owner.arrived, q.msg)
	}
	q.msg = nil
}

// report gives the MessageObserver the messages r's action, which began
// at began and ends now, returned with.
func (s *simulation) report(r *rank, began float64) {
	for _, m := range r.arrived {
		m.Arrived, m.RecvBegan = s.now, began
		s.msgObs.Message(*m)
	}
	r.arrived = r.arrived[:0]
}

// complete marks q done and wakes its owner if that was the last thing it
// waited for.
func (s *simulation) complete(q *request) {
	q.done = true
	if q.awaited {
		q.awaited = false
		r := q.owner
		if q.matched > r.matchMax {
			r.matchMax = q.matched
		}
		r.wPend--
		r.wDone++
		s.queueOverhead(r, q)
		if r.blocked && r.resume && (s.cfg.Subrounds || r.wPend == 0) {
			s.wake(r)
		}
		s.unref(q)
	}
}

// unref drops a reference to q and recycles it when none is left.
func (s *simulation) unref(q *request) {
	q.refs--
	if q.refs == 0 {
		q.owner = nil
		s.freeReqs = append(s.freeReqs, q)
	}
}

// checkMatch flags a receive that SMPI's replay aborts on
// (Request::match_common flags it, then finish_wait aborts under
// MPI_COMM_WORLD's MPI_ERRORS_ARE_FATAL): a message larger than its
// receive (MPI_ERR_TRUNCATE), or, with SimGrid's quirks, non-empty on both
// sides with datatypes that differ, neither being MPI_BYTE or MPI_PACKED
// (MPI_ERR_TYPE; MPI implementations do not check it, SMPI does). As
// SMPI, the replay stops where the receive is waited for, or tested once
// done (flaggedWait): a receive its rank is waiting for stops it at
// once; one never waited for does not, and the replay goes on (to a
// deadlock, where the receive took another's message, as SimGrid's).
func (s *simulation) checkMatch(sq, rq *request) {
	if rq.flagged == "" {
		rq.flagged = s.mismatch(sq, rq, false)
	}
	if rq.flagged != "" && rq.awaited { // named at the later of the two calls, as the trace reads
		poster := sq.owner
		if rq.seq > sq.seq {
			poster = rq.owner
		}
		s.fail(poster, "%s", rq.flagged)
	}
}

// flaggedWait stops the replay where rank r waits for, or finds done, a
// receive SMPI flagged (checkMatch), and reports whether it did.
func (s *simulation) flaggedWait(r *rank, q *request) bool {
	if q.flagged == "" {
		return false
	}
	s.fail(r, "%s", q.flagged)
	return true
}

// mismatch describes why SMPI flags receive rq compared with send sq (as
// truncated, unless it is probing, or of the wrong datatype), or returns
// "".
func (s *simulation) mismatch(sq, rq *request, probing bool) string {
	switch {
	case !probing && rq.bytes >= 0 && rq.bytes < sq.bytes:
		return fmt.Sprintf("a message of %d bytes from rank %d to rank %d (%s) is larger than its receive (%d bytes): SimGrid 3.32 aborts (MPI_ERR_TRUNCATE)",
			sq.bytes, sq.owner.id, rq.owner.id, tagText(sq.tag), rq.bytes)
	case s.cfg.Compat && sq.bytes != 0 && rq.bytes != 0 && !typesMatch(sq.dtype, rq.dtype):
		return fmt.Sprintf("a message from rank %d to rank %d (%s) is sent as %s and received as %s: SimGrid 3.32 aborts (MPI_ERR_TYPE; --cfg kairos/simgrid-quirks:no replays it)",
			sq.owner.id, rq.owner.id, tagText(sq.tag), sq.dtype.Name(), rq.dtype.Name())
	}
	return ""
}

// typesMatch is SMPI's Request::match_types for the predefined datatypes.
func typesMatch(a, b trace.Datatype) bool {
	return a == b || a == trace.TypeByte || b == trace.TypeByte || a == trace.TypePacked || b == trace.TypePacked
}
