package sim

import (
	"kairos/internal/reqstore"
	"kairos/internal/smallmap"
	"kairos/sim/maxmin"
	"kairos/trace"
)

// rank is one MPI process: a state machine over its trace.
//
// It runs in turns, as SimGrid's actors do: in each turn a rank issues at
// most one simcall (posting a request, waiting, starting or waiting for a
// computation, sleeping, testing). A simcall answered at once lets the rank
// continue in its next turn, queued after the ranks already runnable; one
// that blocks lets it continue, answered, in the turn after it is woken.
// This reproduces the order in which SimGrid matches messages and starts
// transfers at one simulated date (see Config.Subrounds).
type rank struct {
	// What a send reads of its destination, in the first cache lines: at
	// thousands of ranks, the destination is rarely in cache.
	done bool
	mbox mailbox

	id   int32
	host int
	rd   trace.Reader
	ev   *trace.Event

	// grp is the block (see order.go) of the round of advance grpAdv
	// that woke the rank, 0 if none.
	grp, grpAdv uint64

	busy      bool // inside an action
	step      int  // progress within the action
	queued    bool
	blocked   bool
	computing bool
	backoff   bool // blocked in the sleep before an MPI_Test (RankResult.Backoff)
	turnUsed  bool // the simcall of this turn was issued
	unlockDue bool // its next simcall is the unlock ending its last start (async.go)
	execBusy  bool // a computation or sleep of this rank is in progress
	// single is set while the rank waits for one request with SMPI's
	// Request::wait (not a waitany): blocked, it then holds its host's CPU
	// constraint, as SimGrid's wait does with a sleep action (see hold).
	single  bool
	holding bool // it holds its host's CPU constraint (see hold)
	slept   bool // the overhead before the send being posted is slept (see overhead)
	// sendFrom is when the send being posted began, before its overhead
	// (set if sendFromSet).
	sendFrom    float64
	sendFromSet bool
	// The receive overheads (smpi/or) of the complete requests waited
	// for, slept as the waitany loop consumes them (see queueOverhead),
	// and the one to sleep next.
	orQueue []float64
	orSleep float64
	start   float64
	// started is set at the rank's first turn; initDue until it has
	// slept smpi/init (or found none to sleep); initSleep while it sleeps
	// it, which counts in none of its times; delaying while it computes
	// its instance's start delay (Config.StartDelays), not an action.
	started, initDue, initSleep, delaying bool
	// endDue is set while the action that ended in the last turn waits
	// for this one to be reported (see endAction).
	endDue bool

	// The requests the rank waits for, as SimGrid's waitany loop sees
	// them: wPend not complete yet, wDone complete but not consumed;
	// resume is set while a blocked waitany awaits its answer.
	wPend, wDone int
	resume       bool
	regSeq       uint64 // when the blocked waitany started waiting

	blockStart float64
	matchMax   float64

	ending  bool                           // the trace is over; waiting for leftover requests
	store   reqstore.Store[*request]       // SimGrid's RequestStorage
	byID    smallmap.Map[uint64, *request] // the same requests by trace request id (traces whose waits name ids)
	pending uint8                          // what it does with its last simcall's answer, at its next turn
	res     RankResult
	io      bool // set while it replays the duration of an I/O call
	// arrived are the messages its current action has returned with, for
	// a MessageObserver (see arrive).
	arrived []*Message

	// What follows is read by fewer actions (probes, tests, collectives,
	// small-message mode, one-sided calls), after what every action
	// reads: at thousands of ranks a rank's state leaves the cache between
	// two of its actions, and each line it spans costs a miss.
	pos trace.Positioner

	// With a concurrency limit, the hold is SimGrid's sleep variable
	// itself, and holdWait tells a wait's from a sleep's.
	sleepVar   *maxmin.Variable
	holdWait   bool
	sleepAct   *action  // the timed sleep holding (sleepFor)
	probeStep  int8     // progress of the probe a receive of unknown size makes first
	probeEnds  uint32   // the iprobe computations it has ended (see pollCycled)
	probed     int64    // the size that probe found
	probeFlops float64  // the computation of its current iprobe
	testReq    *request // a request kept across turns (test, sendRecv)
	testKey    reqKey
	testByID   bool
	coll       collState
	memos      collMemos // its last collective of each kind (coll_memo.go)
	memo       *collMemo // that of its current collective

	// smbox is SMPI's small mailbox and mtx the mutex of both, used in
	// small-message mode only (see async.go).
	smbox mailbox
	mtx   mutexState
	async asyncState
	// sent and recvd count the messages sent to each (destination, tag)
	// and received from each (source, tag), in small-message mode.
	sent, recvd smallmap.Map[uint64, uint32]
	// rma is its progress through a one-sided call (onesided.go).
	rma rmaCall
}

// runRank gives r a turn: it runs until its next simcall after the one it
// may issue now, until it blocks, or until its trace ends.
func (s *simulation) runRank(r *rank) {
	r.turnUsed = false
	if r.unlockDue {
		// The unlock ending its last start in small-message mode takes
		// this turn's simcall.
		s.unlockMailboxes(r)
		r.turnUsed = true
	}
	if !r.started {
		r.started, r.initDue = true, true
		if s.startInstance(r) {
			return
		}
	}
	if r.pending != noPending {
		s.resume(r)
	}
	if r.endDue {
		r.endDue = false
		s.endAction(r)
	}
	for !r.done {
		if r.initDue && !r.busy {
			if d := s.cfg.InitSleep; d > 0 {
				if !s.turn(r) {
					return
				}
				r.initDue, r.initSleep = false, true
				s.sleepFor(r, d, false)
				return
			}
			r.initDue = false
		}
		if !r.busy {
			if r.ending {
				// The answer of the last simcall is acted on in the
				// rank's next turn, even at its end; and an actor that
				// issued a simcall in this turn (a waitany answered at
				// once, say) ends in the next: which rank ends last
				// sets the time printed.
				if (r.pending != noPending || r.unlockDue || r.turnUsed) && !s.turn(r) {
					return
				}
				s.finishRank(r)
				return
			}
			if !r.rd.Next() {
				if err := r.rd.Err(); err != nil {
					s.err = err
					return
				}
				r.ending = true
				s.endRequests(r)
				r.busy, r.step = true, 0
				r.ev = nil
				continue
			}
			r.ev = r.rd.Event()
			r.busy, r.step, r.start = true, 0, s.now
			if isAction(r.ev.Kind) {
				s.stats.actions++
			}
		}
		if r.ev == nil { // the leftover requests at the end
			if !s.waitStep(r) {
				return
			}
			if len(r.arrived) > 0 {
				s.report(r, -1) // not an action of the trace
			}
			if s.cfg.FinalizationBarrier {
				r.ev, r.step = &finalBarrier, 0
				continue
			}
			r.busy = false
			continue
		}
		if !s.exec(r) {
			return
		}
		r.busy = false
		if r.delaying {
			r.delaying = false
			continue
		}
		if r.turnUsed {
			// The action's last simcall was answered at once: SimGrid's
			// actor returns from it, and ends the action, in the next
			// sub-round.
			r.endDue = true
			s.requeue(r)
			return
		}
		s.endAction(r)
	}
}

// endAction reports r's action, which has ended, to the observers.
func (s *simulation) endAction(r *rank) {
	if s.obs != nil && r.ev != &finalBarrier {
		s.obs.Action(int(r.id), r.ev, r.start, s.now)
	}
	if len(r.arrived) > 0 {
		s.report(r, r.start)
	}
}

// startInstance starts r as SimGrid's smpi_replay_init does when there
// are start delays (Config.StartDelays): a rank with a delay computes it
// (s4u's execute, whatever smpi/simulate-computation says), any other
// yields its first turn; both then sleep smpi/init. It reports whether
// r's turn is over.
func (s *simulation) startInstance(r *rank) bool {
	if s.cfg.StartDelays == nil {
		return false
	}
	d := s.cfg.StartDelays[r.id]
	if d <= 0 {
		r.turnUsed = true
		s.requeue(r)
		return true
	}
	ev := trace.NewEvent(trace.Compute)
	ev.Compute = d
	r.ev, r.busy, r.step, r.start, r.delaying = &ev, true, 0, s.now, true
	return false
}

// finalBarrier is the barrier SMPI's replay ends with under
// smpi/finalization-barrier (not a trace action: observers do not see it).
var finalBarrier = trace.Event{Kind: trace.Barrier, Comm: trace.WorldComm}

// position returns the trace position (file:line) of r's current action,
// if its reader knows it. It is asked only when reporting a problem:
// formatting it for every action would cost an allocation each.
func (r *rank) position() string {
	if r.pos == nil || r.rd == nil {
		return ""
	}
	return r.pos.Position()
}

// turn reports whether r may issue a simcall now; if not, r is queued for
// its next turn.
func (s *simulation) turn(r *rank) bool {
	if !s.resumed(r) {
		return false
	}
	if s.cfg.Subrounds {
		r.turnUsed = true
	}
	return true
}

// resumed reports whether r runs in this sub-round, that is, has issued no
// simcall in it yet; if it has, SimGrid's actor waits for its answer
// until the next sub-round, and r is queued for its next turn. Actions
// whose first effects come before their first simcall (a collective's
// temporary buffers) ask it first.
func (s *simulation) resumed(r *rank) bool {
	if s.cfg.Subrounds && r.turnUsed {
		s.requeue(r)
		return false
	}
	return true
}

// requeue queues r for its next turn.
func (s *simulation) requeue(r *rank) {
	r.queued = true
	r.grp, r.grpAdv = s.grp, s.advances
	s.runq = append(s.runq, r)
}

func (s *simulation) finishRank(r *rank) {
	r.done = true
	r.res.Finish = s.now
	s.lastDone = r
	r.rd.Close()
	r.rd = nil
}

// endRequests makes r wait for the requests still stored when its trace
// ends. As SimGrid 3.32 (a FIXME in smpi_replay_main), only the last
// request of each key is waited for.
func (s *simulation) endRequests(r *rank) {
	for q := range r.store.Queues() {
		items := q.Items()
		if s.cfg.Compat {
			if last := items[len(items)-1]; last != nil {
				s.addWait(r, last)
			}
			continue
		}
		for _, x := range items {
			if x != nil {
				s.addWait(r, x)
			}
		}
	}
}

// addWait adds q to the requests r waits for. A detached send is skipped:
// SMPI returns it without a simcall.
func (s *simulation) addWait(r *rank, q *request) {
	if q.detached || s.flaggedWait(r, q) {
		return
	}
	if q.done {
		r.wDone++
		s.queueOverhead(r, q)
		s.arrive(q)
		return
	}
	q.awaited = true
	q.refs++
	r.wPend++
}

// waitStep is SimGrid's waitany loop over r's awaited requests: each call
// (a simcall) consumes one completed request, or blocks until one
// completes. It reports whether all are consumed.
func (s *simulation) waitStep(r *rank) bool {
	if r.resume {
		// The answer of the waitany that blocked.
		r.resume = false
		r.wDone--
		s.consumeOverhead(r)
	}
	for {
		if !s.recvOverhead(r) {
			return false
		}
		if r.wDone == 0 && r.wPend == 0 {
			r.single = false
			return true
		}
		if !s.turn(r) {
			return false
		}
		if r.wDone > 0 {
			r.wDone--
			s.consumeOverhead(r)
			continue
		}
		r.resume = true
		s.waitSeq++
		r.regSeq = s.waitSeq
		s.block(r, false)
		if r.single {
			s.hold(r, true)
		}
		return false
	}
}

// size returns a datatype's size for this trace.
func (s *simulation) size(t trace.Datatype) int64 { return t.Size(s.meta.DefaultType) }

// sendType and recvType return the datatypes of e's send and receive
// sides, the trace's default for DefaultType.
func (s *simulation) sendType(e *trace.Event) trace.Datatype { return s.resolve(e.SendType) }
func (s *simulation) recvType(e *trace.Event) trace.Datatype { return s.resolve(e.RecvType) }

func (s *simulation) resolve(t trace.Datatype) trace.Datatype {
	if t == trace.DefaultType {
		return s.meta.DefaultType
	}
	return t
}

// exec runs r's current action from r.step; it returns true when the
// action is over, false when r yielded its turn or blocked.
func (s *simulation) exec(r *rank) bool {
	e := r.ev
	switch e.Kind {
	case trace.Init:
		r.res.Init = s.now
		return true
	case trace.Compute:
		if !s.cfg.SimulateComputation && !r.delaying {
			return true
		}
		return s.compute(r, e.Compute, 0)
	case trace.Sleep:
		if e.Compute <= 0 {
			return true // s4u's sleep_for: a no-op, not even a simcall
		}
		if r.step == 0 {
			if !s.turn(r) {
				return false
			}
			r.step = 1
			s.sleepFor(r, e.Compute, true)
			return false
		}
		return true
	case trace.Send, trace.Isend, trace.Recv, trace.Irecv:
		return s.pointToPoint(r, e)
	case trace.Wait:
		if r.step == 0 {
			r.step = 1
			q, ok := s.popReq(r, e)
			if !ok {
				s.fail(r, "wait with no request outstanding (SimGrid 3.32 aborts the replay here)")
				return false
			}
			if q == nil {
				return true
			}
			s.addWait(r, q)
			s.unref(q)
			r.single = true
		}
		return s.waitStep(r)
	case trace.Waitall:
		if r.step == 0 {
			r.step = 1
			s.waitAll(r, e)
		}
		return s.waitStep(r)
	case trace.Test:
		return s.test(r, e)
	case trace.SendRecv:
		if r.step == 0 {
			if e.Partner == r.id && e.Source == r.id {
				return true
			}
			if !s.checkPeer(r, e.Partner) || e.Source != trace.AnySource && !s.checkPeer(r, e.Source) {
				return false
			}
			if !s.overhead(r, s.sendOverhead(r, true, e.SendBytes)) {
				return false
			}
			if !s.startTurn(r, true, e.Partner, e.Tag, s.p2pComm(e.Comm), e.SendBytes) {
				return false
			}
			r.step, r.slept = 1, false
			// Both halves carry the event's tag: 0 in a TI trace, which has
			// none (SimGrid's replay), the send tag in a timed trace, so that
			// a sendrecv meets the plain sends and receives of its peers.
			r.testReq = s.newRequest(r, true, e.Partner, e.Tag, e.SendBytes)
			r.testReq.typed, r.testReq.dtype, r.testReq.pc = true, s.sendType(e), s.p2pComm(e.Comm)
			s.post(r.testReq)
		}
		if r.step == 1 {
			if !s.startTurn(r, false, e.Source, e.Tag, s.p2pComm(e.Comm), e.RecvBytes) {
				return false
			}
			r.step = 2
			q := s.newRequest(r, false, e.Source, e.Tag, e.RecvBytes)
			q.typed, q.dtype, q.pc = true, s.recvType(e), s.p2pComm(e.Comm)
			s.post(q)
			s.addWait(r, r.testReq)
			s.addWait(r, q)
			r.testReq = nil
		}
		return s.waitStep(r)
	case trace.Probe, trace.Iprobe, trace.Finalize, trace.CommSize, trace.CommSplit, trace.CommDup,
		trace.CommCreate, trace.CommFree, trace.Location, trace.Local, trace.Deferred:
		return true
	}
	switch {
	case e.Kind.IsWindow():
		return s.oneSided(r, e)
	case e.Kind.IsIO():
		return s.io(r, e)
	}
	if e.Kind.IsCollective() {
		return s.collective(r, e)
	}
	s.fail(r, "cannot simulate action %s", e.Kind)
	return false
}

// pointToPoint runs send, isend, recv and irecv: post the request (a
// simcall), then for the blocking ones wait for it (another, except for a
// detached send, which SMPI does not wait for).
func (s *simulation) pointToPoint(r *rank, e *trace.Event) bool {
	send := e.Kind.IsSend()
	if r.step == 0 {
		if (send || e.Partner != trace.AnySource) && !s.checkPeer(r, e.Partner) {
			return false
		}
		bytes := e.SendBytes
		if !send {
			bytes = e.RecvBytes
			if bytes < 0 && s.cfg.Compat {
				if !s.probe(r, e.Partner, e.Tag, s.p2pComm(e.Comm)) {
					return false
				}
				bytes = r.probed
			}
		}
		if send && !s.overhead(r, s.sendOverhead(r, e.Kind == trace.Isend, bytes)) {
			return false
		}
		pc := s.p2pComm(e.Comm)
		if !s.startTurn(r, send, e.Partner, e.Tag, pc, bytes) {
			return false
		}
		r.step, r.probeStep, r.slept = 1, 0, false
		q := s.newRequest(r, send, e.Partner, e.Tag, bytes)
		q.typed, q.dtype, q.pc = true, e.RecvType, pc
		if send {
			q.dtype = e.SendType
		}
		q.dtype = s.resolve(q.dtype)
		s.post(q)
		switch e.Kind {
		case trace.Isend:
			s.storeReq(r, reqKey{Src: s.actorKey(r.id), Dst: s.actorKey(e.Partner), Tag: e.Tag}, q)
			s.indexReq(r, q, e.Request)
			return true
		case trace.Irecv:
			s.storeReq(r, reqKey{Src: s.actorKey(e.Partner), Dst: s.actorKey(r.id), Tag: e.Tag}, q)
			s.indexReq(r, q, e.Request)
			return true
		}
		s.addWait(r, q)
		r.single = true // Request::send, Request::recv
	}
	return s.waitStep(r)
}

// sendOverhead returns the sleep SMPI's Request::start injects before it
// posts a send of bytes: smpi/ois for a non-blocking send (MPI_Isend, and
// the isend_init of sendrecv and of the collectives), smpi/os for a
// blocking one that is detached (eager), none for a blocking rendezvous.
func (s *simulation) sendOverhead(r *rank, nonBlocking bool, bytes int64) float64 {
	h := &s.m.Hosts[r.host]
	switch {
	case nonBlocking && h.ISendOverhead != nil:
		return h.ISendOverhead.At(bytes)
	case nonBlocking:
		return s.cfg.ISendOverhead.At(bytes)
	case bytes >= s.cfg.DetachedThreshold:
		return 0
	case h.SendOverhead != nil:
		return h.SendOverhead.At(bytes)
	}
	return s.cfg.SendOverhead.At(bytes)
}

// recvOverheadOf returns smpi/or on r's host for a receive of bytes that
// matched a detached send.
func (s *simulation) recvOverheadOf(r *rank, bytes int64) float64 {
	if o := s.m.Hosts[r.host].RecvOverhead; o != nil {
		return o.At(bytes)
	}
	return s.cfg.RecvOverhead.At(bytes)
}

// overhead makes r sleep d seconds before it posts a send; it reports
// whether that sleep is over. The caller clears r.slept once the send is
// posted.
func (s *simulation) overhead(r *rank, d float64) bool {
	if d <= 0 || r.slept {
		return true
	}
	// SimGrid's Request::start traces the send (tracing/smpi/internals)
	// before it sleeps.
	r.sendFrom, r.sendFromSet = s.now, true
	r.slept = s.inject(r, d)
	return false
}

// queueOverhead records the receive overhead of q, complete and waited for
// by r, to sleep when r's waitany loop consumes a request.
func (s *simulation) queueOverhead(r *rank, q *request) {
	if q.overhead > 0 {
		r.orQueue = append(r.orQueue, q.overhead)
	}
}

// consumeOverhead is finish_wait for a request r's waitany loop consumed:
// the next receive overhead is to be slept. Which complete request a
// waitany returns does not change when the loop ends (its sleeps and
// consumptions follow one another without a gap), so they are slept in
// the order the receives completed.
func (s *simulation) consumeOverhead(r *rank) {
	if len(r.orQueue) > 0 {
		r.orSleep = r.orQueue[0]
		r.orQueue = append(r.orQueue[:0], r.orQueue[1:]...)
	}
}

// recvOverhead sleeps r.orSleep, if any; it reports whether none is left.
func (s *simulation) recvOverhead(r *rank) bool {
	if r.orSleep <= 0 {
		return true
	}
	if s.inject(r, r.orSleep) {
		r.orSleep = 0
	}
	return false
}

// inject starts a sleep of d seconds that SMPI injects for an overhead (a
// sleep_for simcall), and reports whether it could (false: r must wait
// for its next turn).
func (s *simulation) inject(r *rank, d float64) bool {
	if !s.turn(r) {
		return false
	}
	s.sleepFor(r, d, false)
	return true
}

// probe is the MPI_Probe SimGrid's replay makes before a receive of
// unknown size (-1): iprobes until a matching send waits in r's mailbox.
// Each iprobe computes nsleeps x smpi/iprobe seconds' worth of flops at
// most smpi/iprobe-cpu-usage of the host's speed, then looks at the
// mailbox (a simcall); nsleeps, one counter for all ranks, grows after
// each failed iprobe and is reset after a successful one. It reports
// whether the send was found, its size in r.probed; false means r yielded
// its turn or blocked.
//
// The computation takes five simcalls: exec_init's set_flops_amount and
// set_host, set_bound, start and wait; nsleeps is read in the turn of the
// first.
func (s *simulation) probe(r *rank, src, tag int32, pc uint8) bool {
	for {
		switch r.probeStep {
		case 0:
			if s.cfg.IprobeSleep <= 0 || s.cfg.IprobeCPUUsage <= 0 {
				r.probeStep = probeLook
				continue
			}
			if !s.turn(r) {
				return false
			}
			s.share(&s.probeUse, r)
			r.probeFlops = float64(s.probeSleeps) * s.cfg.IprobeSleep * s.hosts[r.host].speed * s.cfg.IprobeCPUUsage
			r.probeStep = 1
			fallthrough
		case 1, 2: // set_host, set_bound
			for r.probeStep < 3 {
				if !s.turn(r) {
					return false
				}
				r.probeStep++
			}
			fallthrough
		case 3:
			if !s.turn(r) {
				return false
			}
			r.execBusy = true
			// SMPI bounds it at smpi/iprobe-cpu-usage of the host's
			// peak speed, whatever its speed profile says.
			s.startExecBounded(r, r.probeFlops, s.cfg.IprobeCPUUsage*s.hosts[r.host].speed).probe = true
			s.probeExecs++
			r.probeStep = 4
			fallthrough
		case 4:
			if !s.turn(r) {
				return false
			}
			r.probeStep = probeLook
			if r.execBusy {
				s.block(r, false)
				s.hold(r, true)
				return false
			}
			fallthrough
		case probeLook:
			if !s.turn(r) {
				return false
			}
			// Whether the look sees a send posted at this date depends
			// on the order of simultaneous events.
			r.mbox.lastProbe = s.now
			s.nearTie(r.mbox.lastPost)
			if r.mbox.lastPost == s.now {
				s.orderMatters()
			}
			if s.asyncOn() {
				// The small mailbox is looked at first (a simcall of
				// its own in small-message mode), the ordinary one
				// only if it holds nothing for the receive.
				if q, _ := s.oldestSend(&r.smbox, src, tag, pc); q != nil {
					r.probed, r.probeStep = q.bytes, probeFoundStep
					s.answered(r, probeFound)
					return true
				}
			}
			r.probeStep = probeLookOrdinary
			fallthrough
		case probeLookOrdinary:
			if s.asyncOn() && !s.turn(r) {
				return false
			}
			if q, _ := s.oldestSend(&r.mbox, src, tag, pc); q != nil {
				r.probed, r.probeStep = q.bytes, probeFoundStep
				s.answered(r, probeFound)
				return true
			}
			if s.cfg.IprobeSleep <= 0 || s.cfg.IprobeCPUUsage <= 0 {
				s.fail(r, "%s of unknown size: no matching send yet, and iprobes taking no time (smpi/iprobe, smpi/iprobe-cpu-usage) would poll forever at this date", r.ev.Kind)
				return false
			}
			s.answered(r, probeMissed)
			r.probeStep = 0
		default:
			return true
		}
	}
}

// The last steps of probe: the look at the mailbox, and the message found.
const (
	probeLook         = 5
	probeLookOrdinary = 6 // in small-message mode, after the small mailbox
	probeFoundStep    = 7
)

// probeCanSucceed reports whether a rank polling for a message (see
// probe) will find it at its next look; ranks marked frozen never look
// again.
func (s *simulation) probeCanSucceed(frozen []bool) bool {
	for _, r := range s.ranks {
		if frozen != nil && frozen[r.id] {
			continue
		}
		if r.busy && r.ev != nil && r.probeStep > 0 && r.probeStep < probeFoundStep {
			pc := s.p2pComm(r.ev.Comm)
			if q, _ := s.oldestSend(&r.mbox, r.ev.Partner, r.ev.Tag, pc); q != nil {
				return true
			}
			if q, _ := s.oldestSend(&r.smbox, r.ev.Partner, r.ev.Tag, pc); q != nil {
				return true
			}
		}
	}
	return false
}

// What a rank does with the answer of its last simcall (rank.pending).
const (
	noPending   uint8 = iota
	testPassed        // MPI_Test found its request complete: reset the back-off
	testFailed        // it did not: grow the back-off
	probeFound        // MPI_Iprobe found a message: reset the iprobe back-off
	probeMissed       // it did not: grow it
)

// shareTest records that r uses the MPI_Test back-off counter, which
// only matters when tests sleep.
func (s *simulation) shareTest(r *rank) {
	if s.cfg.TestSleep > 0 {
		s.share(&s.testUse, r)
	}
}

// answered records what r does with a simcall's answer. SimGrid runs that
// code when the actor resumes, in the next sub-round (with other ranks'
// code between), so with Config.Subrounds it waits for r's next turn.
func (s *simulation) answered(r *rank, what uint8) {
	r.pending = what
	if !s.cfg.Subrounds {
		s.resume(r)
	}
}

// resume applies what r does with its last simcall's answer.
func (s *simulation) resume(r *rank) {
	switch r.pending {
	case testPassed:
		s.nsleeps = 1
		s.shareTest(r)
	case testFailed:
		if s.cfg.GrowInjectedTimes {
			s.nsleeps++
		}
		s.shareTest(r)
	case probeFound:
		s.probeSleeps = 1
		s.share(&s.probeUse, r)
	case probeMissed:
		if s.cfg.GrowInjectedTimes {
			s.probeSleeps++
		}
		s.share(&s.probeUse, r)
	}
	r.pending = noPending
}

// compute runs flops on r's host as SMPI does (private_execute_flops),
// from step base: exec_init's two simcalls (set_flops_amount, set_host),
// then start the execution (a simcall) and wait for it (another).
func (s *simulation) compute(r *rank, flops float64, base int) bool {
	for r.step-base < 2 {
		if !s.turn(r) {
			return false
		}
		r.step++
	}
	if r.step-base == 2 {
		if !s.turn(r) {
			return false
		}
		r.step++
		r.execBusy = true
		s.startExec(r, flops)
	}
	if r.step-base == 3 {
		if !s.turn(r) {
			return false
		}
		r.step++
		if r.execBusy {
			s.block(r, true)
			s.hold(r, true)
			return false
		}
	}
	return true
}

func (s *simulation) execDone(r *rank) {
	r.execBusy = false
	if r.blocked {
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

// actorKey is the number rank g's requests are stored under
// (Config.ActorKeys); any source is reqstore.AnySourceKey, as SimGrid
// 3.32 files it.
func (s *simulation) actorKey(g int32) int32 {
	if g == trace.AnySource {
		return reqstore.AnySourceKey
	}
	if s.cfg.ActorKeys == nil || g < 0 || int(g) >= len(s.cfg.ActorKeys) {
		return g
	}
	return s.cfg.ActorKeys[g]
}

func (s *simulation) storeReq(r *rank, k reqKey, q *request) {
	if q != nil {
		q.refs++
		q.key = k
	}
	r.store.Push(k, q)
}

// indexReq records q under the trace's request id, for traces whose waits
// name request ids rather than SimGrid's (src, dst, tag) keys.
func (s *simulation) indexReq(r *rank, q *request, id uint64) {
	if id == 0 || !s.indexIDs {
		return
	}
	if old := r.byID.Get(id); old != nil {
		s.dropID(r, old)
	}
	r.byID.Put(id, q)
	q.id = id
	q.refs++
}

// dropID forgets q's request id. The caller must hold a reference to q.
func (s *simulation) dropID(r *rank, q *request) {
	if q.id != 0 {
		r.byID.Delete(q.id)
		q.id = 0
		s.unref(q)
	}
}

// dropKey takes q out of the key store. The caller must hold a reference.
func (s *simulation) dropKey(r *rank, q *request) {
	if r.store.Remove(q.key, q) {
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
		q = r.byID.Get(e.Request)
		if q == nil {
			return nil, true
		}
		q.refs++ // the caller's
		s.dropID(r, q)
		s.dropKey(r, q)
		return q, true
	}
	if r.store.Len() == 0 {
		return nil, false
	}
	q, _ = r.store.Pop(reqKey{Src: e.Source, Dst: e.Partner, Tag: e.Tag})
	if q != nil {
		s.dropID(r, q)
	}
	return q, true
}

// waitAll makes r wait for every stored request (or, for traces that name
// them, the requests listed) and clears them from the store.
func (s *simulation) waitAll(r *rank, e *trace.Event) {
	if e.Requests != nil {
		n, found := r.byID.Len(), 0
		for _, id := range e.Requests {
			if q := r.byID.Get(id); q != nil {
				found++
				q.refs++
				s.dropID(r, q)
				s.dropKey(r, q)
				s.addWait(r, q)
				s.unref(q)
			}
		}
		s.stats.actions += waitallLines(found, n) - 1
		return
	}
	r.store.Drain(func(q *request) {
		if q != nil {
			s.dropID(r, q)
			s.addWait(r, q)
			s.unref(q)
		}
	})
}

// test is MPI_Test as SMPI replays it: sleep smpi/test x n (n grows with
// each failed test, process-wide), then check the request; a completed
// one is replaced by a null request, a pending one goes back at the end
// of its key's queue.
//
// A test that names a request id (OTF2, DUMPI, .ktr) tests the oldest
// pending request of the named one's key (sender, receiver, tag): the
// one the key's next message completes, as MPI matches messages in
// order, and the one the same trace's test in TI finds in SimGrid's
// replay. Where the replay's network is slower than the run's, a program
// that polls a receive and posts the next one from the same sender once
// its test succeeds (ABySS) has, in the replay, an older receive still
// pending when it tests the new one: tested in place, each receive then
// waited for one message more, test after test failed, and ABySS's
// archive replayed in 58.2 s against 55.6 s now (its TI trace, 53.0 s;
// SimGrid's TI replay also skips the test after a successful one, which
// finds the null request the success left; the run, 49.8 s).
func (s *simulation) test(r *rank, e *trace.Event) bool {
	switch r.step {
	case 0:
		var q *request
		if !byKey(e) {
			// By request id: the oldest pending request of its key,
			// forgotten once complete.
			if q = r.byID.Get(e.Request); q == nil {
				return true
			}
			if f, ok := r.store.Front(q.key); ok && f != nil {
				q = f
			}
			q.refs++
			r.testByID = true
		} else if q, _ = s.popReq(r, e); q == nil {
			return true
		}
		r.testReq = q
		r.testKey = reqKey{Src: e.Source, Dst: e.Partner, Tag: e.Tag}
		r.step = 1
		fallthrough
	case 1:
		if s.cfg.TestSleep > 0 {
			if !s.turn(r) {
				return false
			}
			r.step = 2
			s.shareTest(r)
			s.sleepFor(r, s.nsleeps*s.cfg.TestSleep, true)
			r.backoff = true
			return false
		}
		fallthrough
	case 2:
		q := r.testReq
		simcall := !q.detached // SMPI answers a detached send's test itself
		if simcall && !s.turn(r) {
			r.step = 2
			return false
		}
		r.testReq = nil
		r.step = 3
		what := testFailed
		r.res.Tests++
		if !q.done {
			r.res.FailedTests++
		}
		if q.done {
			if s.flaggedWait(r, q) {
				return false
			}
			what = testPassed
			r.orSleep = q.overhead // finish_wait's, after the answer
			s.arrive(q)
		}
		if simcall {
			s.answered(r, what)
		} else {
			s.resume(r)
			r.pending = what
			s.resume(r)
		}
		if r.testByID {
			r.testByID = false
			if q.done {
				s.dropID(r, q)
				s.dropKey(r, q)
			}
			s.unref(q)
			return s.recvOverhead(r)
		}
		if q.done {
			s.storeReq(r, r.testKey, nil)
		} else {
			s.storeReq(r, r.testKey, q)
		}
		s.unref(q)
		fallthrough
	case 3:
		return s.recvOverhead(r)
	}
	return true
}

// isAction tells whether an event of kind k counts as an action of the
// replay (Result.Actions): a TI trace has a line for it.
func isAction(k trace.Kind) bool { return !trace.Passive(k) && k != trace.Local }

// waitallLines is how many lines a TI trace has for a waitall on k of a
// rank's n outstanding requests (format/ti's writer): a waitall where they
// are all of them or none, else a wait for each (an MPI_Waitsome that
// completed some).
func waitallLines(k, n int) int64 {
	if k == 0 || k == n {
		return 1
	}
	return int64(k)
}
