package sim

import (
	"cmp"
	"errors"
	"math"
	"slices"

	"kairos/internal/reqstore"
	"kairos/internal/smallmap"
	"kairos/trace"
)

// The analytic mode's dependency-driven engine.
//
// Without sharing, a transfer's time depends on its size and route alone,
// and it starts when both its send and its receive are posted: every date
// of the replay follows from the dates at which the ranks post and wait,
// as Lamport's clocks follow from the messages. This engine computes them
// so, without an event queue or a global date: each rank replays its
// trace on a clock of its own until it waits for a request whose other
// side is not posted yet; it then blocks, and runs again once that side
// is posted. A rank's state stays in cache for a run of its actions.
//
// It models what the event engine's analytic mode does, where the order
// of simultaneous events cannot change a date: traces with no MPI_Test,
// probe of an unknown size, one-sided or I/O call, on hosts where no two
// ranks share a core, without SMPI's overheads, small-message mode, start
// delays, link or speed profiles, energy models or observers other than
// a TimedTrace, which takes each rank's actions in order (dependable); wildcard receives are matched as depend_wild.go says. Its
// dates are the event engine's but for one rounding: the event engine
// ends together the actions due within surf/precision (1e-9 s) of the
// earliest, anywhere in the platform, where this engine does so only
// among the requests one wait is for. Where a replay meets what it does
// not model (a deadlock, a message its receive truncates, a tie at a
// wildcard receive, a test), it stops with errFallback and the event
// engine replays the trace from the start. (The cost of an action grows
// with the ranks only as their states leave the caches: BENCHMARKS.md.)

// errFallback stops the dependency-driven engine: the event engine
// replays the trace.
var errFallback = errors.New("sim: the replay needs the event engine")

// fallback records why the dependency-driven engine stops, and returns
// errFallback.
func (s *simulation) fallback(why string) error {
	s.depWhy = why
	return errFallback
}

// dreq is a request of the dependency-driven engine.
type dreq struct {
	owner, peer, tag      int32
	pc                    uint8 // its point-to-point communicator (request.pc)
	send, detached, typed bool
	known                 bool // matched: matched and end are set
	awaited               bool // its owner is blocked until it is matched
	held                  bool // stored for a wait (or carried): not recycled
	dropped               bool // a detached send its owner is done with, recycled when matched
	dtype                 trace.Datatype
	bytes                 int64
	posted, matched, end  float64
	key                   reqKey
	id                    uint64
	outIdx                int32    // its place in its owner's out
	seq                   uint64   // its owner's posts up to it
	begun                 float64  // when the action that posted it began
	msg                   *Message // a receive's message for a MessageObserver, until waited for
}

// depRank is a rank's replay in the dependency-driven engine.
type depRank struct {
	now                         float64
	rd                          trace.Reader
	host                        int
	speed                       float64 // its computations' rate, alone on a core
	ev                          *trace.Event
	step                        int
	busy, blocked, ending, done bool

	// waits are the requests its current wait is for, unknown how many
	// of them are not matched yet.
	waits   []*dreq
	unknown int

	// Its unmatched receives, and the unmatched sends to it, by (peer,
	// tag); wild is its wildcard receive not matched yet
	// (depend_wild.go). No send waits that one of its receives takes:
	// whichever of the two comes second meets the first.
	recvs, sends reqstore.QueueMap[uint64, *dreq]
	wild         *dreq
	posts        uint64  // the requests it posted
	start        float64 // when its current action began
	// arrived are the messages its current action returned with, for a
	// MessageObserver.
	arrived []Message
	store   reqstore.Store[*dreq] // SimGrid's RequestStorage (depStore)
	out     []*dreq               // requests stored by id, in posting order (nil: taken)
	outDead int                   // the nils in out
	byID    idTable               // by the trace's request id

	coll     *collState // its progress through a collective, made at its first
	memos    collMemos  // its last collective of each kind (coll_memo.go)
	memo     *collMemo  // that of its current collective
	carried  []dcarried // a collective's requests kept for a later phase
	inOrder  []*dreq    // a phase's requests waited for one by one
	orderIdx int
	res      RankResult
}

// dcarried is a carried request and its name (collOp.ref).
type dcarried struct {
	q   *dreq
	ref int32
}

// dependable reports whether the dependency-driven engine can replay
// with s's configuration and observer (see above).
func (s *simulation) dependable(obs Observer) bool {
	c := s.cfg
	if !c.Analytic || c.events || obs != nil && !recordsOnly(obs) || s.asyncOn() || c.TraceInternals || c.FinalizationBarrier ||
		c.InitSleep > 0 || c.StartDelays != nil || c.StartDates != nil || c.ConcurrencyLimit >= 0 || c.CPUFull ||
		c.Energy || c.LinkEnergy || len(s.profiled) > 0 || len(s.linkProfs) > 0 {
		return false
	}
	if !c.SendOverhead.zero() || !c.ISendOverhead.zero() || !c.RecvOverhead.zero() {
		return false
	}
	for i := range s.m.Hosts {
		h := &s.m.Hosts[i]
		if h.SendOverhead != nil || h.ISendOverhead != nil || h.RecvOverhead != nil {
			return false
		}
	}
	for _, h := range s.m.RankHost[:s.nranks] {
		if h >= 0 && h < len(s.hosts) && !s.hosts[h].solo {
			return false // (openRanks refuses an unknown host)
		}
	}
	return true
}

// recordsOnly reports whether obs is a TimedTrace, or a list of them: an
// observer that takes each rank's actions in their order, whatever the
// order of the ranks, and can start over.
func recordsOnly(obs Observer) bool {
	return !anyObserver(obs, func(x Observer) bool { _, ok := x.(*TimedTrace); return !ok })
}

// runDeps replays the trace with the dependency-driven engine.
func (s *simulation) runDeps() (*Result, error) {
	for i := range s.dr {
		s.dr[i].speed = s.hosts[s.dr[i].host].execBound(0)
	}
	s.grownAt = [2]float64{math.Inf(1), math.Inf(1)}
	s.drq = make([]int32, 0, len(s.dr))
	for i := len(s.dr) - 1; i >= 0; i-- {
		s.drq = append(s.drq, int32(i))
	}
	for s.err == nil {
		for len(s.drq) > 0 && s.err == nil {
			id := s.drq[len(s.drq)-1]
			s.drq = s.drq[:len(s.drq)-1]
			s.runDep(id)
		}
		if len(s.wilds) == 0 || s.err != nil {
			break
		}
		// Every rank waits or has ended: match the wildcard receives
		// whose sends can no longer change.
		s.resolveWilds()
	}
	if s.err != nil {
		return nil, s.err
	}
	res := &Result{Actions: s.stats.actions, Messages: s.stats.messages, Bytes: s.stats.bytes, Solver: SolverIncremental,
		Engine: EngineDependencies}
	last := -1
	for i := range s.dr {
		r := &s.dr[i]
		if !r.done || !r.recvs.Empty() || !r.sends.Empty() {
			return nil, s.fallback("a deadlock, or messages never received") // the event engine reports them
		}
		res.Ranks = append(res.Ranks, r.res)
		if last < 0 || r.res.Finish > res.Ranks[last].Finish {
			last = i
		}
	}
	for _, x := range res.Ranks {
		if x.Finish == res.Ranks[last].Finish && x.Init != res.Ranks[last].Init {
			// Which of the ranks ending last SimGrid prints depends on
			// the order it ends them in.
			return nil, s.fallback("ranks ending together from different inits")
		}
	}
	res.Time = res.Ranks[last].Finish - res.Ranks[last].Init
	if s.obs != nil {
		// The event engine records messages as they arrive; the ranks
		// ran here one after the other.
		anyObserver(s.obs, func(x Observer) bool {
			t := x.(*TimedTrace)
			slices.SortStableFunc(t.Messages, func(a, b Message) int { return cmp.Compare(a.Arrived, b.Arrived) })
			return false
		})
	}
	return res, nil
}

// runDep runs rank id until it blocks or ends.
func (s *simulation) runDep(id int32) {
	r := &s.dr[id]
	rd := r.rd
	for !r.done && s.err == nil {
		if !r.busy {
			if r.ending {
				r.done = true
				r.res.Finish = r.now
				return
			}
			if !rd.Next() {
				if err := rd.Err(); err != nil {
					s.err = err
					return
				}
				r.ending, r.busy, r.ev = true, true, nil
				s.depLeftovers(r)
				continue
			}
			r.ev = rd.Event()
			r.busy, r.step, r.start = true, 0, r.now
			if isAction(r.ev.Kind) {
				s.stats.actions++
			}
		}
		if r.ev == nil {
			if !s.depWait(r) {
				return
			}
			r.busy = false
			s.depReport(r, -1) // not an action of the trace
			continue
		}
		if !s.depExec(id, r) {
			return
		}
		r.busy = false
		if s.obs != nil {
			s.obs.Action(int(id), r.ev, r.start, r.now)
			s.depReport(r, r.start)
		}
	}
}

// depReport gives the MessageObserver the messages r's action, which
// began at began and ends now, returned with (as report does).
func (s *simulation) depReport(r *depRank, began float64) {
	for _, m := range r.arrived {
		m.Arrived, m.RecvBegan = r.now, began
		s.msgObs.Message(m)
	}
	r.arrived = r.arrived[:0]
}

// depLeftovers makes r wait for the requests still stored at its trace's
// end, as endRequests does: with SimGrid's quirk, only the last of each
// key.
func (s *simulation) depLeftovers(r *depRank) {
	if len(r.out) > r.outDead && r.store.Len() > 0 {
		s.err = s.fallback("requests stored both by id and by key at the end")
		return
	}
	var last map[reqKey]bool
	if s.cfg.Compat {
		last = map[reqKey]bool{}
	}
	for i := len(r.out) - 1; i >= 0; i-- {
		if q := r.out[i]; q != nil && (last == nil || !last[q.key]) {
			if last != nil {
				last[q.key] = true
			}
			s.depAddWait(r, q)
		}
	}
	for q := range r.store.Queues() {
		items := q.Items()
		if s.cfg.Compat {
			items = items[len(items)-1:]
		}
		for _, x := range items {
			if x != nil {
				s.depAddWait(r, x)
			}
		}
	}
}

// depExec runs r's current action from r.step; it reports whether the
// action is over.
func (s *simulation) depExec(id int32, r *depRank) bool {
	e := r.ev
	switch e.Kind {
	case trace.Init:
		r.res.Init = r.now
		return true
	case trace.Compute:
		if s.cfg.SimulateComputation {
			s.depCompute(id, r, e.Compute)
		}
		return true
	case trace.Sleep:
		if e.Compute > 0 {
			end := r.now + max(e.Compute, s.cfg.SurfPrecision)
			r.res.Compute += end - r.now
			r.now = end
		}
		return true
	case trace.Send, trace.Isend, trace.Recv, trace.Irecv:
		return s.depPointToPoint(id, r, e)
	case trace.Wait:
		if r.step == 0 {
			r.step = 1
			q, ok := s.depPop(r, e)
			if !ok {
				s.err = s.fallback("a wait with no request outstanding") // SimGrid aborts: the event engine says where
				return false
			}
			if q != nil {
				s.depAddWait(r, q)
			}
		}
		return s.depWait(r)
	case trace.Waitall:
		if r.step == 0 {
			r.step = 1
			s.depWaitAll(r, e)
		}
		return s.depWait(r)
	case trace.SendRecv:
		if r.step == 0 {
			if e.Partner == id && e.Source == id {
				return true
			}
			r.step = 1
			sq := s.depRequest(id, true, e.Partner, e.Tag, e.SendBytes)
			rq := s.depRequest(id, false, e.Source, e.Tag, e.RecvBytes)
			if sq == nil || rq == nil {
				return false
			}
			sq.typed, sq.dtype = true, s.sendType(e)
			sq.pc = s.p2pComm(e.Comm)
			rq.pc = sq.pc
			rq.typed, rq.dtype = true, s.recvType(e)
			s.depPost(sq)
			s.depPost(rq)
			s.depAddWait(r, sq)
			s.depAddWait(r, rq)
		}
		return s.depWait(r)
	case trace.Probe, trace.Iprobe, trace.Finalize, trace.CommSize, trace.CommSplit, trace.CommDup,
		trace.CommCreate, trace.CommFree, trace.Location, trace.Local, trace.Deferred:
		return true
	}
	if e.Kind.IsCollective() && !e.Kind.IsWindow() && !e.Kind.IsIO() {
		return s.depCollective(id, r, e)
	}
	switch {
	case e.Kind == trace.Test:
		s.err = s.fallback("MPI_Test: SMPI's sleep before a test grows with the failed tests of all ranks, in time order")
	case e.Kind.IsWindow() || e.Kind.IsOneSided():
		s.err = s.fallback("a one-sided call (" + e.Kind.MPIName() + ")")
	default:
		s.err = s.fallback("a call the engine does not replay (" + e.Kind.MPIName() + ")")
	}
	return false
}

// depCompute runs flops on the rank's host, alone on its core.
func (s *simulation) depCompute(id int32, r *depRank, flops float64) {
	end := r.now + flops/r.speed
	r.res.Compute += end - r.now
	r.now = end
}

// depRequest returns a new request of rank id, posted now; nil (and
// errFallback) for a peer out of range or a receive of unknown size, which
// the event engine replays.
func (s *simulation) depRequest(id int32, send bool, peer, tag int32, bytes int64) *dreq {
	anySource := !send && peer == trace.AnySource
	if !anySource && (peer < 0 || int(peer) >= s.nranks) || !send && bytes < 0 && s.cfg.Compat {
		s.err = s.fallback("a receive of unknown size, or a peer out of range")
		return nil
	}
	q := recycled(&s.freeDreqs)
	r := &s.dr[id]
	q.owner, q.send, q.peer, q.tag, q.bytes, q.pc = id, send, peer, tag, bytes, 0
	q.posted, q.begun = r.now, r.start
	r.posts++
	q.seq = r.posts
	return q
}

// depPointToPoint posts a send or receive; a blocking one then waits for
// it.
func (s *simulation) depPointToPoint(id int32, r *depRank, e *trace.Event) bool {
	if r.step == 0 {
		send := e.Kind.IsSend()
		bytes, dtype := e.SendBytes, e.SendType
		if !send {
			bytes, dtype = e.RecvBytes, e.RecvType
		}
		q := s.depRequest(id, send, e.Partner, e.Tag, bytes)
		if q == nil {
			return false
		}
		q.pc = s.p2pComm(e.Comm)
		q.typed, q.dtype = true, s.resolve(dtype)
		// A request is stored before it is posted: posted, it may be
		// matched at once, and a detached send nothing holds recycled.
		switch e.Kind {
		case trace.Isend:
			s.depStore(r, reqKey{Src: s.actorKey(id), Dst: s.actorKey(e.Partner), Tag: e.Tag}, q, e.Request)
			s.depPost(q)
			return true
		case trace.Irecv:
			s.depStore(r, reqKey{Src: s.actorKey(e.Partner), Dst: s.actorKey(id), Tag: e.Tag}, q, e.Request)
			s.depPost(q)
			return true
		}
		s.depPost(q)
		r.step = 1
		s.depAddWait(r, q)
	}
	return s.depWait(r)
}

// depStore keeps a non-blocking request for its wait: under the trace's
// request id in r.out, in posting order, for traces that name requests;
// under SimGrid's key in r.store for the others. (SimGrid's store keeps
// both under keys, as the event engine does; a list is cheaper, and keys
// are needed only at the trace's end, or by a wait that names a key in a
// trace that names ids, where the event engine takes over.)
func (s *simulation) depStore(r *depRank, k reqKey, q *dreq, id uint64) {
	q.key, q.held = k, true
	if id == 0 || !s.indexIDs {
		r.store.Push(k, q)
		return
	}
	if old := r.byID.put(id, q); old != nil {
		old.id = 0 // still stored, for a waitall
	}
	q.id, q.outIdx = id, int32(len(r.out))
	r.out = append(r.out, q)
}

// depTake takes the request of id id out of r's requests, nil if none.
func (s *simulation) depTake(r *depRank, id uint64) *dreq {
	q := r.byID.take(id)
	if q == nil {
		return nil
	}
	r.out[q.outIdx] = nil
	q.id, q.held = 0, false
	if r.outDead++; 2*r.outDead > len(r.out) {
		// Compact: the list holds what is outstanding, not its history.
		n := 0
		for _, x := range r.out {
			if x != nil {
				x.outIdx = int32(n)
				r.out[n] = x
				n++
			}
		}
		clear(r.out[n:])
		r.out, r.outDead = r.out[:n], 0
	}
	return q
}

// depPop takes the request a wait names out of r's store, as popReq does.
func (s *simulation) depPop(r *depRank, e *trace.Event) (q *dreq, ok bool) {
	if !byKey(e) {
		return s.depTake(r, e.Request), true
	}
	if len(r.out) > r.outDead {
		s.err = s.fallback("a wait naming a key in a trace naming requests")
		return nil, true
	}
	if r.store.Len() == 0 {
		return nil, false
	}
	q, _ = r.store.Pop(reqKey{Src: e.Source, Dst: e.Partner, Tag: e.Tag})
	if q != nil {
		q.held = false
	}
	return q, true
}

// depWaitAll makes r wait for the requests e lists, or all it stores.
func (s *simulation) depWaitAll(r *depRank, e *trace.Event) {
	if e.Requests != nil {
		n, found := r.byID.n, 0
		for _, id := range e.Requests {
			if q := s.depTake(r, id); q != nil {
				found++
				s.depAddWait(r, q)
			}
		}
		s.stats.actions += waitallLines(found, n) - 1
		return
	}
	for i, q := range r.out {
		if q != nil {
			q.id, q.held = 0, false
			s.depAddWait(r, q)
			r.out[i] = nil
		}
	}
	r.out, r.outDead = r.out[:0], 0
	r.byID.clear() // it indexes requests of out only
	r.store.Drain(func(q *dreq) {
		if q != nil {
			q.held = false
			s.depAddWait(r, q)
		}
	})
}

// depAddWait adds q to what r's wait is for; SMPI does not wait for a
// detached send.
func (s *simulation) depAddWait(r *depRank, q *dreq) {
	switch {
	case !q.detached:
		r.waits = append(r.waits, q)
	case q.held:
	case q.known:
		s.freeDreqs = append(s.freeDreqs, q) // matched, and its owner is done with it
	default:
		q.dropped = true // recycled once matched
	}
}

// depPost posts q: it meets the oldest request of the other side with its
// peer and tag, or waits for it in the receiver's queues.
func (s *simulation) depPost(q *dreq) {
	if q.send {
		q.detached = q.bytes < s.cfg.DetachedThreshold
		dst := &s.dr[q.peer]
		if rq := dst.recvs.Ref(mkey(q.owner, q.tag, q.pc)); rq != nil && !rq.Empty() {
			s.depMatch(q, rq.Pop())
			return
		}
		dst.sends.Slot(mkey(q.owner, q.tag, q.pc)).Push(q)
		return
	}
	me := &s.dr[q.owner]
	wild := q.peer == trace.AnySource || q.tag == trace.AnyTag
	if me.wild != nil && (wild || me.wild.acceptsFrom(q.peer, q.tag, q.pc)) {
		// A receive younger than a wildcard one its rank has not
		// matched yet, that could take the same messages: which gets
		// which depends on their order.
		s.err = s.fallback("a receive posted while a wildcard receive that could take its messages waits")
		return
	}
	if wild {
		s.depPostWild(me, q)
		return
	}
	if sq := me.sends.Ref(mkey(q.peer, q.tag, q.pc)); sq != nil && !sq.Empty() {
		s.depMatch(sq.Pop(), q)
		return
	}
	me.recvs.Slot(mkey(q.peer, q.tag, q.pc)).Push(q)
}

// depMatch pairs send sq and receive rq: the transfer starts when the
// later of the two is posted and takes the analytic mode's time.
func (s *simulation) depMatch(sq, rq *dreq) {
	if sq.typed && rq.typed && (rq.bytes >= 0 && rq.bytes < sq.bytes ||
		s.cfg.Compat && sq.bytes != 0 && rq.bytes != 0 && !typesMatch(sq.dtype, rq.dtype)) {
		s.err = s.fallback("a mismatched message") // SMPI aborts where the receive is waited for: the event engine says where
		return
	}
	m := max(sq.posted, rq.posted)
	size := float64(sq.bytes + s.cfg.Envelope)
	p := s.dpath(sq.owner, rq.owner)
	if p.fixedSize != size {
		latF, bwF := s.netFactors(size)
		p.fixedSize, p.fixedDur = size, fixedDuration(p.latency*latF, size, s.rateBound(p.latency, p.minBw)*bwF)
	}
	end := m + p.fixedDur
	s.stats.messages++
	s.stats.bytes += sq.bytes
	if s.msgObs != nil && sq.tag >= 0 {
		// A message of the trace's own (collectives' tags are
		// negative): it arrives when its receiver's wait returns it.
		rq.msg = &Message{Src: int(sq.owner), Dst: int(rq.owner), Tag: sq.tag, Bytes: sq.bytes, Sent: sq.begun, SentBegan: sq.begun}
	}
	for _, q := range [2]*dreq{sq, rq} {
		q.known, q.matched, q.end = true, m, end
		if q.awaited {
			q.awaited = false
			w := &s.dr[q.owner]
			w.unknown--
			if w.unknown == 0 {
				s.drq = append(s.drq, q.owner)
			}
		}
	}
	if sq.dropped {
		s.freeDreqs = append(s.freeDreqs, sq)
	}
}

// dpath is what the dependency-driven engine keeps of a route: its
// latency and slowest bandwidth (as route has them), and the last
// transfer size it timed there, and its time (sizes repeat: a code sends
// few). Kept by value in its source host's map, it costs a replay of
// thousands of ranks neither route's allocations nor a pointer to follow
// at each message.
type dpath struct {
	fixedSize, fixedDur float64
	latency, minBw      float64
}

// dpath returns the route from rank src's host to rank dst's, made at
// the hosts' first message; it is the pair's own (pathRows) where src's
// host has too many partners for its map's linear search.
func (s *simulation) dpath(src, dst int32) *dpath {
	if p := s.dpairs.get(src, dst); p != nil {
		return p
	}
	if s.dpaths == nil {
		s.dpaths = make([]smallmap.Map[int32, dpath], len(s.m.Hosts))
		s.dpairs = newPathRows(s.nranks)
	}
	hs, hd := s.m.RankHost[src], s.m.RankHost[dst]
	from := &s.dpaths[hs]
	p := from.Ref(int32(hd))
	if p == nil {
		p = s.newDpath(from, hs, hd)
	}
	if from.Len() <= smallmap.Linear {
		return p
	}
	return s.dpairs.put(src, dst, p)
}

// newDpath adds the route from host src to host dst to from, src's map.
func (s *simulation) newDpath(from *smallmap.Map[int32, dpath], src, dst int) *dpath {
	var links []int
	var lat float64
	if s.m.RouteAppend == nil {
		links, lat = s.routeLinks(src, dst)
	} else {
		var err error
		links, lat, err = s.m.RouteAppend(s.dlinks[:0], src, dst)
		s.dlinks = links
		s.routeErr(src, dst, links, lat, err)
	}
	p := from.Insert(int32(dst))
	*p = dpath{latency: lat, minBw: s.minBandwidth(links)}
	return p
}

// depWait waits for r.waits: it reports whether all are complete, r's
// clock then at the last one's end; otherwise r blocks until the last of
// them is matched. The time blocked counts as the event engine's
// waitany loop counts it: from each completion to the next, waiting for
// the partner until the request's match, then communicating.
func (s *simulation) depWait(r *depRank) bool {
	if !r.blocked {
		for _, q := range r.waits {
			if !q.known {
				q.awaited = true
				r.unknown++
			}
		}
		if r.unknown > 0 {
			r.blocked = true
			return false
		}
	}
	r.blocked = false
	ws := r.waits
	if s.msgObs != nil {
		s.depArrive(r, ws, true)
	}
	sortByEnd(ws)
	b, prec := r.now, s.cfg.SurfPrecision
	if s.cfg.Subrounds {
		// The rank wakes at each completion, the first of those
		// within surf/precision of one another giving the date and
		// the match.
		for i := 0; i < len(ws); {
			c, m := ws[i].end, ws[i].matched
			j := i + 1
			for j < len(ws) && ws[j].end-c < prec {
				j++
			}
			i = j
			if c <= b {
				continue
			}
			s.depBlocked(r, b, c, m)
			b = c
		}
	} else if n := len(ws); n > 0 && ws[n-1].end > b {
		// It wakes once, when the last completes.
		m := -1.0
		for _, q := range ws {
			if q.end > b {
				m = max(m, q.matched)
			}
		}
		s.depBlocked(r, b, ws[n-1].end, m)
		b = ws[n-1].end
	}
	if s.msgObs != nil {
		s.depArrive(r, ws, false)
	}
	r.now = b
	for i, q := range ws {
		if !q.held {
			s.freeDreqs = append(s.freeDreqs, q)
		}
		ws[i] = nil
	}
	r.waits = ws[:0]
	return true
}

// sortByEnd sorts ws by their ends, stably. A wait is for a few requests
// (a stencil's waitall, a collective's phase): those are sorted in place
// by insertion, with no comparison function to call; longer lists by
// slices.SortStableFunc.
func sortByEnd(ws []*dreq) {
	if len(ws) > 16 {
		slices.SortStableFunc(ws, func(a, b *dreq) int {
			switch {
			case a.end < b.end:
				return -1
			case a.end > b.end:
				return 1
			}
			return 0
		})
		return
	}
	for i := 1; i < len(ws); i++ {
		q, j := ws[i], i
		for ; j > 0 && q.end < ws[j-1].end; j-- {
			ws[j] = ws[j-1]
		}
		ws[j] = q
	}
}

// depArrive hands r's current action the messages of the receives in ws
// that were complete when its wait began (done, in the order they were
// added to it), or the others (in the order they complete), as the event
// engine's waitany loop consumes them.
func (s *simulation) depArrive(r *depRank, ws []*dreq, done bool) {
	for _, q := range ws {
		if q.msg != nil && (q.end <= r.now) == done {
			r.arrived = append(r.arrived, *q.msg)
			q.msg = nil
		}
	}
}

// depBlocked counts r's block from b to c, its last request matched at m,
// as wake does.
func (s *simulation) depBlocked(r *depRank, b, c, m float64) {
	d, w := c-b, 0.0
	if m > b {
		w = min(m, c) - b
	}
	r.res.Wait += w
	r.res.Comm += d - w
}

// depCollective runs a collective's algorithm: phase after phase, its
// operations posted, then waited for.
func (s *simulation) depCollective(id int32, r *depRank, e *trace.Event) bool {
	if r.coll == nil {
		r.coll = new(collState)
	}
	st := r.coll
	if r.step == 0 {
		if e.Kind == trace.CommSplit || e.Kind == trace.CommDup || e.Kind == trace.CommCreate {
			return true
		}
		if s.cfg.Compat && readsTmpNull(e) && !(s.grownAt[0] < r.now && s.grownAt[1] < r.now) {
			// Whether SimGrid's temporary buffers are still null
			// may depend on the order of the ranks' collectives.
			s.err = s.fallback("an empty collective before the temporary buffers surely grew")
			return false
		}
		m, grows, err := s.startColl(&r.memos, st, id, e)
		if err != nil {
			s.err = s.fallback(err.Error()) // the event engine says where
			return false
		}
		r.memo = m
		for i := range grows {
			if grows[i] {
				s.grownAt[i] = min(s.grownAt[i], r.now)
			}
		}
		r.step = 1
	}
	for r.step == 1 {
		if !st.posting {
			if !s.memoNextPhase(r.memo, st, e) {
				r.step = 2
				break
			}
			st.posting = true
			if !s.depPostPhase(id, r, st) {
				return false
			}
		}
		if !s.depWait(r) {
			return false
		}
		if r.orderIdx < len(r.inOrder) {
			s.depAddWait(r, r.inOrder[r.orderIdx])
			r.inOrder[r.orderIdx] = nil
			r.orderIdx++
			continue
		}
		r.inOrder, r.orderIdx = r.inOrder[:0], 0
		st.posting = false
		if cap(st.ops) > smallOps && !r.memo.replaying {
			s.giveOps(st.ops)
			st.ops = nil
		}
	}
	if e.Kind.HasReduction() && e.Compute != 0 {
		s.depCompute(id, r, e.Compute)
	}
	return true
}

// readsTmpNull reports whether an algorithm of collective e may ask
// whether a temporary buffer of SimGrid's replay is still null
// (growTmpBuffers): gathers and scatters with an empty side (the binomial
// ones), reduce-scatters of no element (the ring).
func readsTmpNull(e *trace.Event) bool {
	switch e.Kind {
	case trace.Gather, trace.Scatter:
		return e.SendBytes == 0 || e.RecvBytes == 0
	case trace.ReduceScatter:
		for _, c := range e.RecvCounts {
			if c != 0 {
				return false
			}
		}
		return true
	}
	return false
}

// depPostPhase posts the operations of a collective's phase.
func (s *simulation) depPostPhase(id int32, r *depRank, st *collState) bool {
	for _, op := range st.ops {
		if op.wait != waitNone {
			s.depCarriedWait(r, op)
			continue
		}
		peer := op.peer
		if st.world != nil {
			peer = st.world[peer]
		}
		q := s.depRequest(id, op.send || op.sr, peer, st.call.tag, op.bytes)
		if q == nil {
			return false
		}
		if op.typed {
			q.typed, q.dtype = true, st.call.rtype
			if q.send {
				q.dtype = st.call.stype
			}
		}
		q.held = op.carry
		s.depPost(q)
		switch {
		case op.carry:
			r.carried = append(r.carried, dcarried{q, op.ref})
		case st.call.inOrder:
			r.inOrder = append(r.inOrder, q)
		default:
			s.depAddWait(r, q)
		}
		if op.sr {
			rq := s.depRequest(id, false, peer, st.call.tag, op.rbytes)
			if rq == nil {
				return false
			}
			s.depPost(rq)
			s.depAddWait(r, rq)
		}
	}
	return true
}

// depCarriedWait adds carried requests to the phase's wait, as
// waitCarriedReqs does.
func (s *simulation) depCarriedWait(r *depRank, w collOp) {
	take := func(c dcarried) {
		c.q.held = false
		s.depAddWait(r, c.q)
	}
	if w.wait != waitCarried {
		for i, c := range r.carried {
			if c.ref == w.ref {
				take(c)
				r.carried = slices.Delete(r.carried, i, i+1)
				return
			}
		}
		return
	}
	for _, c := range r.carried {
		take(c)
	}
	clear(r.carried)
	r.carried = r.carried[:0]
}
