package sim

// SMPI's small-message mode (smpi/async-small-thresh, SimGrid 3.32's
// Request::start). Each rank has a second, "small" mailbox with a
// permanent receiver: a send to it that finds no posted receive starts
// its transfer at once and waits, started or complete, in the mailbox's
// done queue for the receive that takes it. A send of fewer bytes than the
// threshold goes there unless its receive is already posted in the
// ordinary mailbox; a receive takes a message waiting in the small
// mailbox first, then one in the ordinary mailbox, and otherwise waits in
// the small mailbox if it is small, in the ordinary one if not. Every
// start, small or not, runs under the receiver's mailbox mutex, with the
// mailbox probes that choose the mailbox between the lock and the
// unlock: each of them is a simcall, taking a turn of the rank, and a rank
// finding the mutex held waits for it in line.

// asyncState is a rank's progress through the simcalls of a start in
// small-message mode.
type asyncState struct {
	step   uint8 // 0: none yet; 1: the mutex is taken (or waited for)
	probes uint8 // mailbox probes still to make
	small  bool  // the request goes to the receiver's small mailbox
	// unlock is the rank whose mailbox mutex this rank releases at its
	// next turn (the start's last simcall; rank.unlockDue), nil if none.
	unlock *rank
}

// mutexState is a rank's mailbox mutex: its owner and the ranks waiting
// for it, first come first served.
type mutexState struct {
	owner   *rank
	waiters []*rank
}

// asyncOn reports whether the small-message mode is on.
func (s *simulation) asyncOn() bool { return s.cfg.AsyncSmallThreshold != 0 }

// startTurn is the simcall that posts a request of r: its turn, and, in
// small-message mode, the mutex lock and the mailbox probes before it.
// A send goes to rank peer, a receive comes from peer (maybe any source)
// with tag; bytes is the request's size. It reports whether r may post
// the request now; post then reads which mailbox r chose.
func (s *simulation) startTurn(r *rank, send bool, peer, tag int32, pc uint8, bytes int64) bool {
	if !s.asyncOn() {
		return s.turn(r)
	}
	return s.startAsync(r, send, peer, tag, pc, bytes)
}

// startAsync is startTurn in small-message mode.
func (s *simulation) startAsync(r *rank, send bool, peer, tag int32, pc uint8, bytes int64) bool {
	a := &r.async
	dst := r
	if send {
		dst = s.ranks[peer]
	}
	if a.step == 0 {
		if !s.turn(r) {
			return false
		}
		a.step = 1
		if m := &dst.mtx; m.owner != nil {
			m.waiters = append(m.waiters, r) // until its owner unlocks
			return false
		}
		dst.mtx.owner = r
	}
	if a.step == 1 {
		// Nothing changes dst's mailboxes while r holds their mutex: the
		// probes' answers are known now.
		a.small, a.probes = s.chooseMailbox(dst, send, peer, tag, pc, bytes, r.id)
		a.step = 2
	}
	for a.probes > 0 {
		if !s.turn(r) {
			return false
		}
		a.probes--
	}
	if !s.turn(r) {
		return false
	}
	a.step = 0
	a.unlock = dst
	if !s.cfg.Subrounds {
		// The rank runs on until it blocks: no one can ask for the
		// mutex before it unlocks.
		s.unlockMailboxes(r)
		return true
	}
	r.unlockDue = true // at its next turn (runRank)
	return true
}

// chooseMailbox returns the mailbox of dst that SMPI's start takes for a
// send from src (to dst) or a receive by dst from peer, with tag and
// bytes, and the number of mailbox probes it makes to choose it.
func (s *simulation) chooseMailbox(dst *rank, send bool, peer, tag int32, pc uint8, bytes int64, src int32) (small bool, probes uint8) {
	thresh := s.cfg.AsyncSmallThreshold
	if send {
		if bytes >= thresh {
			return false, 0
		}
		// Is its receive posted in the ordinary mailbox?
		cand, _ := findRecv(&dst.mbox, src, tag, pc)
		inOrder := s.ranks[src].sent.Get(mkey(peer, tag, pc)) == dst.recvd.Get(mkey(src, tag, pc))
		return cand == nil || !inOrder, 1
	}
	if _, q := s.oldestSend(&dst.smbox, peer, tag, pc); q != nil {
		return true, 1
	}
	if bytes >= thresh {
		return false, 1
	}
	if _, q := s.oldestSend(&dst.mbox, peer, tag, pc); q != nil {
		return false, 2
	}
	return true, 2
}

// unlockMailboxes is the last simcall of r's start: it releases the
// mailbox mutex it holds, handing it to the first rank waiting for it,
// which runs in the next turn.
func (s *simulation) unlockMailboxes(r *rank) {
	dst := r.async.unlock
	r.async.unlock, r.unlockDue = nil, false
	m := &dst.mtx
	if len(m.waiters) == 0 {
		m.owner = nil
		return
	}
	w := m.waiters[0]
	m.waiters = append(m.waiters[:0], m.waiters[1:]...)
	m.owner = w
	s.requeue(w)
}

// postEager starts the transfer of a small send that found no receive:
// it waits in the small mailbox mb of its destination for one.
func (s *simulation) postEager(q *request, mb *mailbox) {
	c := s.newComm()
	c.src, c.dst, c.bytes = q.owner.id, q.peer, q.bytes
	c.sreq = q
	q.comm = c
	q.matched = s.now
	s.stats.messages++
	s.stats.bytes += q.bytes
	mb.sends.Slot(mkey(q.owner.id, q.tag, q.pc)).Push(q)
	mb.nsends++
	s.startComm(c)
}

// attach gives receive rq the eager message of sq, started or complete,
// waiting in rq's owner's small mailbox.
func (s *simulation) attach(sq, rq *request) {
	if sq.typed && rq.typed {
		s.checkMatch(sq, rq)
	}
	c := sq.comm
	c.rreq, rq.comm = rq, c
	rq.matched = s.now
	s.received(sq, rq)
	rq.overhead = s.recvOverheadOf(rq.owner, sq.bytes)
	if c.act == nil {
		// Its transfer is over: the receive completes now. Its poster
		// has not yet taken its references to it (stored it, waited for
		// it): the transfer's is dropped after its turn.
		rq.refs++
		s.commDone(c)
		s.lateUnrefs = append(s.lateUnrefs, rq)
	}
}

// SMPI numbers the messages of each sender, receiver and tag, and a
// receive takes only the next one not yet received (Request::match_recv):
// with two mailboxes, a later message could otherwise overtake an
// earlier one. In the single mailbox of the default mode the order of the
// queue gives it, and no number is kept.

// takeMsgID returns the number of src's next message to dst with tag on
// point-to-point communicator pc, and counts it.
func takeMsgID(src *rank, dst, tag int32, pc uint8) uint32 {
	n := src.sent.Slot(mkey(dst, tag, pc))
	id := *n
	*n++
	return id
}

// inOrder reports whether send q is the next message its receiver is to
// receive from its sender with its tag (always, but in small-message
// mode).
func (s *simulation) inOrder(q *request) bool {
	return !s.asyncOn() || s.isNext(q)
}

func (s *simulation) isNext(q *request) bool {
	return s.ranks[q.peer].recvd.Get(mkey(q.owner.id, q.tag, q.pc)) == q.msgID
}

// received counts the message of sq as received by rq's owner, in
// small-message mode.
func (s *simulation) received(sq, rq *request) {
	if s.asyncOn() {
		s.countReceived(sq, rq)
	}
}

func (s *simulation) countReceived(sq, rq *request) {
	*rq.owner.recvd.Slot(mkey(sq.owner.id, sq.tag, sq.pc))++
}

// SMPI compares a receive with every send its scan of a mailbox meets
// that it accepts by source and tag (Request::match_common), before the
// message numbers may refuse the send; the comparison flags the receive
// as truncated or of the wrong datatype even then, and SMPI aborts when
// the receive is waited for. Only in small-message mode can a compared
// send be refused, so only there are comparisons other than matches.

// compareRecv flags receive q (request.flagged) as SMPI's start of it
// compares it with the sends of its owner's mailboxes: the probe of the
// small mailbox, then, if it found nothing and q is small, of the
// ordinary one, then the receive itself in mailbox mb.
func (s *simulation) compareRecv(q *request, mb *mailbox) {
	if !q.typed {
		return
	}
	me := q.owner
	if !s.compareSends(q, &me.smbox, true) && q.bytes < s.cfg.AsyncSmallThreshold {
		s.compareSends(q, &me.mbox, true)
	}
	s.compareSends(q, mb, false)
}

// compareSends compares receive q with the sends of mb that SMPI's scan
// meets: those q accepts by source and tag, oldest first, up to the first
// whose number is the next one. It reports whether there is one.
func (s *simulation) compareSends(q *request, mb *mailbox, probing bool) bool {
	next, _ := s.oldestSend(mb, q.peer, q.tag, q.pc)
	for _, sq := range mb.sends.All() {
		for _, c := range sq.Items() {
			if !matches(q, c.owner.id, c.tag, c.pc) || next != nil && c.seq > next.seq {
				break // a queue holds one source and tag
			}
			s.compare(q, c, probing)
		}
	}
	return next != nil
}

// compareRecvs flags the receives of mb that SMPI compares send q with
// when its number is not the next one: all it is accepted by.
func (s *simulation) compareRecvs(q *request, mb *mailbox) {
	if rq := mb.recvs.Ref(mkey(q.owner.id, q.tag, q.pc)); rq != nil {
		for _, r := range rq.Items() {
			s.compare(r, q, false)
		}
	}
	for _, w := range mb.wildRecv.Items() {
		if matches(w, q.owner.id, q.tag, q.pc) {
			s.compare(w, q, false)
		}
	}
}

// compare flags receive rq compared with send sq, both of the trace's
// point-to-point calls (a SimGrid quirk: not under Config.Compat false).
func (s *simulation) compare(rq, sq *request, probing bool) {
	if s.cfg.Compat && rq.typed && sq.typed && rq.flagged == "" {
		if m := s.mismatch(sq, rq, probing); m != "" && !s.isNext(sq) {
			rq.flagged = "SMPI's small-message mode compared the receive with a message out of order, which it then refused: " + m
		} else {
			rq.flagged = m
		}
	}
}
