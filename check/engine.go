package check

import (
	"fmt"
	"slices"
	"sort"

	"kairos/internal/reqstore"
	"kairos/internal/smallmap"
	"kairos/trace"
)

// pendKind is what a blocked rank waits for.
type pendKind uint8

const (
	pNone  pendKind = iota
	pMsgs           // its posted messages to be matched (send, recv, sendRecv)
	pReqs           // requests to complete (wait, waitall)
	pColl           // every member to enter a collective
	pProbe          // a message to arrive
	pEnd            // SimGrid's final wait for leftover requests
	pSync           // a one-sided synchronisation (rankState.sync)
)

// request is an outstanding non-blocking operation.
type request struct {
	id     uint64
	kind   trace.Kind // the call that started it
	index  int
	m      *msg // nil when the operation was invalid and not posted
	eager  bool // a send that completes at once
	tested bool
	key    reqstore.Key // its key in SimGrid's request storage (keyed.go)
}

func (q *request) complete() bool { return q.m == nil || q.eager || q.m.matched }

// rankState is one rank of the replay.
type rankState struct {
	rd     trace.Reader
	ev     *trace.Event // the current event, valid while the rank is blocked in it
	index  int          // index of ev
	eof    bool
	done   bool
	init   bool // the rank's trace has its MPI_Init
	fin    bool // and its MPI_Finalize
	listed bool // in engine.blocked
	pend   pendKind
	*waits // nil for a rank known to have no events
}

// waits is what an opened rank waits for and has outstanding: apart from
// rankState, so that a trace claiming a million ranks and holding a few
// costs a few dozen bytes a rank.
type waits struct {
	waitMsgs [2]*msg
	waitReqs []*request
	coll     *instance
	probe    *msg // made at the rank's first probe: most ranks never probe
	// reqs are its outstanding requests by id: few, searched in a row
	// rather than hashed (smallmap).
	reqs smallmap.Map[uint64, *request]
	// store is SimGrid's request storage (keyed.go), made at the rank's
	// first wait or test by key; guessed counts, per key, the requests
	// keyed tests completed that the replay checked for may not have
	// completed there (engine.surely) and no keyed wait took since:
	// there, the replay may have one request more under the key.
	store   *reqstore.Store[*request]
	guessed map[reqstore.Key]int
	// sync reports whether a one-sided synchronisation may end (pSync),
	// syncWhat what it waits for.
	sync     func() bool
	syncWhat string
}

// engine is one replay of a trace: the static pass (eager sends, stalls
// forced past, problems reported) or the deadlock pass (the protocol's
// blocking rules, stopping at the first stall).
type engine struct {
	src     trace.Source
	meta    *trace.Meta
	n       int
	proto   Protocol
	limit   int64
	static  bool
	target  Protocol // the protocol checked, of which the static pass is the eager part
	rep     *Report
	ranks   []rankState
	runq    []int32
	head    int
	inq     []bool
	blocked []int32
	mt      *matcher
	comms   map[uint32]*commState
	world   *commState
	forced  bool
	side    *oneSidedState // windows and files (onesided.go), nil until one is used
	largest int64          // the largest message sent
	lonely  int            // receives left unmatched
	msgs    slabOf[msg]
	reqs    slabOf[request]
	nDone   int
}

func newEngine(src trace.Source, rep *Report, proto Protocol, limit int64, static bool) *engine {
	n := src.NumRanks()
	e := &engine{src: src, meta: src.Meta(), n: n, proto: proto, limit: limit, static: static, rep: rep,
		ranks: make([]rankState, n), inq: make([]bool, n), comms: map[uint32]*commState{}}
	e.mt = newMatcher(n, e.matched)
	e.world = newComm(trace.WorldComm, nil, n)
	e.comms[trace.WorldComm] = e.world
	return e
}

// problem records a static problem; the deadlock pass leaves them to the
// static one.
func (e *engine) problem(rank, index int, format string, a ...any) {
	if e.static {
		e.rep.add(Error, rank, index, format, a...)
	}
}

func (e *engine) run() (err error) {
	defer func() {
		for i := range e.ranks {
			if rd := e.ranks[i].rd; rd != nil {
				if cerr := rd.Close(); err == nil && cerr != nil {
					err = fmt.Errorf("rank %d: %w", i, cerr)
				}
			}
		}
	}()
	empty, _ := trace.EmptyRanks(e.src)
	for r := range e.ranks {
		if empty != nil && empty[r] {
			// Known to have no events: never opened.
			e.ranks[r] = rankState{index: -1, eof: true, done: true}
			e.nDone++
			continue
		}
		rd, err := e.src.OpenRank(r)
		if err != nil {
			return fmt.Errorf("rank %d: %w", r, err)
		}
		e.ranks[r] = rankState{rd: rd, index: -1, waits: &waits{}}
		e.push(r)
	}
	for {
		for e.head < len(e.runq) {
			r := e.runq[e.head]
			e.head++
			e.inq[r] = false
			if err := e.step(int(r)); err != nil {
				return err
			}
		}
		e.runq, e.head = e.runq[:0], 0
		if e.nDone == e.n {
			break
		}
		if r := e.stalled(); r >= 0 {
			e.push(r) // a wake-up was missed; resume
			continue
		}
		if !e.static {
			e.deadlock()
			return nil
		}
		if len(e.blocked) == 0 {
			return fmt.Errorf("check: internal error: %d of %d ranks unfinished and none blocked", e.n-e.nDone, e.n)
		}
		e.force()
	}
	if e.static {
		e.finish()
		e.unfinalized()
		e.rep.countEmpty(e.ranks)
	}
	return nil
}

func (e *engine) push(r int) {
	if !e.inq[r] {
		e.inq[r] = true
		e.runq = append(e.runq, int32(r))
	}
}

// wake makes a blocked rank runnable again, to re-check its condition.
func (e *engine) wake(r int32) {
	if e.ranks[r].pend != pNone {
		e.push(int(r))
	}
}

// step advances rank r until it blocks, ends, or has run a slice of
// events (so that no rank runs far ahead of the others).
func (e *engine) step(r int) error {
	rs := &e.ranks[r]
	for budget := 4096; budget > 0; budget-- {
		if rs.pend != pNone {
			if !e.satisfied(rs) {
				if !rs.listed {
					rs.listed = true
					e.blocked = append(e.blocked, int32(r))
				}
				return nil
			}
			e.release(rs)
		}
		if rs.done {
			return nil
		}
		if rs.eof {
			rs.done = true
			e.nDone++
			return nil
		}
		if !rs.rd.Next() {
			if err := rs.rd.Err(); err != nil {
				return fmt.Errorf("rank %d: %w", r, err)
			}
			rs.eof = true
			e.end(r)
			continue
		}
		rs.index++
		rs.ev = rs.rd.Event()
		if e.static {
			e.rep.Events++
			e.volumes(r, rs.index, rs.ev)
			rs.init = rs.init || rs.ev.Kind == trace.Init
			rs.fin = rs.fin || rs.ev.Kind == trace.Finalize
		}
		e.event(r, rs.ev)
	}
	e.push(r)
	return nil
}

// satisfied reports whether a blocked rank may go on.
func (e *engine) satisfied(rs *rankState) bool {
	switch rs.pend {
	case pMsgs:
		for _, m := range rs.waitMsgs {
			if m != nil && !m.matched {
				return false
			}
		}
	case pReqs, pEnd:
		for _, q := range rs.waitReqs {
			if !q.complete() {
				return false
			}
		}
	case pColl:
		return rs.coll.arrived == rs.coll.size
	case pProbe:
		return e.mt.probe(rs.probe)
	case pSync:
		return rs.sync()
	}
	return true
}

// release ends a rank's wait, completing the requests it waited for.
func (e *engine) release(rs *rankState) {
	if rs.pend == pReqs {
		for _, q := range rs.waitReqs {
			rs.forget(q)
		}
	}
	rs.pend = pNone
	rs.waitMsgs = [2]*msg{}
	rs.waitReqs = rs.waitReqs[:0]
	rs.coll = nil
	rs.sync = nil
}

// stalled returns a blocked rank whose condition holds after all, or -1;
// it also drops from e.blocked the ranks no longer blocked.
func (e *engine) stalled() int {
	kept := e.blocked[:0]
	for _, r := range e.blocked {
		rs := &e.ranks[r]
		if rs.pend == pNone || rs.done {
			rs.listed = false
			continue
		}
		if e.satisfied(rs) {
			return int(r)
		}
		kept = append(kept, r)
	}
	e.blocked = kept
	return -1
}

// needsReplay reports whether the deadlock pass under p can find anything
// the static pass did not. The static pass is an eager replay that forces
// its way past stalls; when it never had to, the trace is deadlock-free
// under Eager, and also under SimGrid if no message reaches the eager limit
// (every send is then detached) and no receive is left unmatched (so that
// SimGrid's final wait for leftover requests ends). One-sided starts and
// waits, which only the replay blocks, always need it.
func (e *engine) needsReplay(p Protocol) bool {
	if p != None && e.side != nil && e.side.blocking {
		return true
	}
	switch p {
	case None:
		return false
	case Eager:
		return e.forced
	case SimGrid:
		return e.forced || e.largest >= e.limit || e.lonely > 0
	}
	return true
}

// force lets the earliest-blocked rank go on as if its wait had ended, so
// that the static pass checks the rest of the trace.
func (e *engine) force() {
	e.forced = true
	r := e.blocked[0]
	e.blocked = e.blocked[1:]
	rs := &e.ranks[r]
	rs.listed = false
	e.release(rs)
	e.push(int(r))
}

// end handles the end of rank r's stream.
func (e *engine) end(r int) {
	rs := &e.ranks[r]
	if e.static {
		e.leftovers(r)
		return
	}
	if e.proto != SimGrid {
		return
	}
	// SimGrid waits for the requests left at the end.
	for _, q := range rs.reqs.All() {
		if q := *q; !q.complete() {
			rs.waitReqs = append(rs.waitReqs, q)
		}
	}
	if len(rs.waitReqs) > 0 {
		rs.pend = pEnd
	}
}

func (e *engine) leftovers(r int) {
	rs := &e.ranks[r]
	var left []*request
	for _, q := range rs.reqs.All() {
		if !(*q).tested {
			left = append(left, *q)
		}
	}
	if len(left) == 0 {
		return
	}
	// One warning a rank: a program that polls its receives with MPI_Test
	// leaves thousands to its TI trace's tests, whose success a static
	// pass cannot tell, and listed one by one they hid the errors.
	q := slices.MinFunc(left, func(a, b *request) int { return a.index - b.index })
	if len(left) == 1 {
		e.rep.add(Warning, r, q.index, "request %d (%s) is never completed by a wait", q.id, describeReq(q))
		return
	}
	e.rep.add(Warning, r, q.index, "request %d (%s) and %d later requests of the rank are never completed by a wait",
		q.id, describeReq(q), len(left)-1)
}

func describeReq(q *request) string {
	switch {
	case q.m == nil && !q.kind.IsPointToPoint():
		return q.kind.String()
	case q.m == nil:
		return "invalid"
	case q.m.recv:
		return "irecv from " + rankName(q.m.src) + " tag " + tagName(q.m.tag)
	default:
		return fmt.Sprintf("isend to %d tag %d", q.m.dst, q.m.tag)
	}
}

func rankName(r int32) string {
	if r == trace.AnySource {
		return "any source"
	}
	return fmt.Sprint(r)
}

func tagName(t int32) string {
	if t == trace.AnyTag {
		return "any"
	}
	return fmt.Sprint(t)
}

// finish reports what the static pass left unmatched.
func (e *engine) finish() {
	e.finishOneSided()
	for _, m := range e.mt.unmatched() {
		if m.recv {
			e.lonely++
			e.problem(int(m.rank), m.index, "receive from %s (tag %s, communicator %d) is never matched by a send",
				rankName(m.src), tagName(m.tag), m.comm)
		} else {
			e.rep.Unreceived++
			e.problem(int(m.rank), m.index, "send to %d (tag %d, communicator %d, %d bytes) is never received",
				m.dst, m.tag, m.comm, m.bytes)
		}
	}
	ids := make([]uint32, 0, len(e.comms))
	for id, c := range e.comms {
		if c != nil {
			ids = append(ids, id)
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		c := e.comms[id]
		for _, in := range c.insts {
			if in.arrived < in.size {
				e.problem(in.rank, in.index, "%s (collective #%d on communicator %d) is never entered by %s",
					in.kind, in.num, c.id, c.missing(in.num))
			}
		}
	}
}

// matched is the matcher's callback for a matched pair.
func (e *engine) matched(s, r *msg) {
	if e.static {
		e.rep.Messages++
		if r.bytes >= 0 && r.bytes < s.bytes {
			e.problem(int(r.rank), r.index, "receive of %d bytes truncates the %d-byte message from rank %d (tag %d, its event %d)",
				r.bytes, s.bytes, s.rank, s.tag, s.index)
		}
	}
	s.matched, r.matched = true, true
	e.wake(s.rank)
	e.wake(r.rank)
}

// deadlock reports every blocked rank.
func (e *engine) deadlock() {
	e.rep.Deadlock = true
	for r := range e.ranks {
		rs := &e.ranks[r]
		if rs.pend == pNone || rs.done {
			continue
		}
		e.rep.add(Error, r, rs.index, "deadlock under %s: %s", e.proto, e.waitsFor(rs))
	}
}

// waitsFor says what a blocked rank waits for.
func (e *engine) waitsFor(rs *rankState) string {
	what := rs.ev.Kind.String()
	switch rs.pend {
	case pMsgs:
		for _, m := range rs.waitMsgs {
			if m == nil || m.matched {
				continue
			}
			if m.recv {
				return fmt.Sprintf("%s waits for a message from %s (tag %s)", what, rankName(m.src), tagName(m.tag))
			}
			return fmt.Sprintf("%s waits for rank %d to receive its %d-byte message (tag %d)", what, m.dst, m.bytes, m.tag)
		}
	case pReqs, pEnd:
		if rs.pend == pEnd {
			what = "end of trace (SimGrid waits for the requests left)"
		}
		for _, q := range rs.waitReqs {
			if !q.complete() {
				return fmt.Sprintf("%s waits for request %d (%s, event %d)", what, q.id, describeReq(q), q.index)
			}
		}
	case pColl:
		w := fmt.Sprintf("%s (collective #%d) waits for %s", what, rs.coll.num, rs.coll.comm.missing(rs.coll.num))
		if rs.ev.Request != 0 {
			// A non-blocking collective, read as the blocking one where
			// it completed (docs/formats.md).
			w += "; it was non-blocking, and is read where it completed: a program that overlaps one with " +
				"point-to-point messages its partners wait for reads as deadlocked, though it ran"
		}
		return w
	case pProbe:
		return fmt.Sprintf("probe waits for a message from %s (tag %s)", rankName(rs.probe.src), tagName(rs.probe.tag))
	case pSync:
		return what + " " + rs.syncWhat
	}
	return what
}

// unfinalized counts the ranks whose trace ends without MPI_Finalize
// where it began with MPI_Init or another rank's has one: a run cut short
// (MPI_Abort, a crash, a job killed at its time limit) leaves such
// traces, valid to their end but not the whole run. Traces that record
// neither (hand-made, generated) say nothing of it, nor those whose
// writer stopped measuring before the end (trace.AttrNoFinalize) unless
// another rank has its MPI_Finalize.
func (e *engine) unfinalized() {
	anyFin := slices.ContainsFunc(e.ranks, func(rs rankState) bool { return rs.fin })
	_, early := e.meta.Attrs[trace.AttrNoFinalize]
	cut := func(r int) bool {
		rs := &e.ranks[r]
		return rs.index >= 0 && !rs.fin && (rs.init && !early || anyFin)
	}
	for r := range e.ranks {
		if cut(r) {
			e.rep.Unfinalized++
		}
	}
	if e.rep.Unfinalized > 0 {
		e.rep.UnfinalizedList = trace.RankRanges(e.n, 10, cut)
	}
}

// forget drops q from the outstanding requests, unless its id has been
// started again since.
func (w *waits) forget(q *request) {
	if p := w.reqs.Ref(q.id); p != nil && *p == q {
		w.reqs.Delete(q.id)
	}
}
