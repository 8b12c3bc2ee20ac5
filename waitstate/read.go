package waitstate

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"kairos/internal/prefault"
	"kairos/trace"
)

// activity is what a rank spends time on: a computation (kind Compute,
// the time between calls included) or an MPI call of a kind, in a region
// of the call tree. Delays are compared activity by activity.
type activity struct {
	region uint32
	kind   trace.Kind
}

// startUp is the activity of a rank before its first event: its late
// start, from the first event of the trace on.
var startUp = activity{kind: trace.KindInvalid}

// activities numbers the activities of a trace.
type activities struct {
	meta *trace.Meta
	ids  map[activity]uint32
	list []activity
	comp []uint32 // the computation activity of each activity's region
}

func newActivities(meta *trace.Meta) *activities {
	return &activities{meta: meta, ids: map[activity]uint32{}}
}

func (a *activities) id(k activity) uint32 {
	if id, ok := a.ids[k]; ok {
		return id
	}
	id := uint32(len(a.list))
	a.ids[k] = id
	a.list = append(a.list, k)
	a.comp = append(a.comp, id)
	if k.kind != trace.Compute {
		a.comp[id] = a.id(activity{a.caller(k), trace.Compute})
	}
	return id
}

// caller returns the region a call of activity k is made from: its
// region, or, for a call the trace knows by its MPI function's region
// (OTF2's and DUMPI's other MPI calls), that region's parent.
func (a *activities) caller(k activity) uint32 {
	if k.kind.NamedByRegion() && int(k.region) < len(a.meta.Regions) &&
		strings.HasPrefix(a.meta.Regions[k.region].Name, "MPI_") {
		return a.meta.Regions[k.region].Parent
	}
	return k.region
}

// span is one event of a rank on the rank's clock. The time between the
// previous event's end and this one's enter is computation (gap); events
// that overlap earlier ones count only their part after the earlier ones
// end (busy), so that a rank's time is counted once.
type span struct {
	enter, exit trace.Time // as recorded
	start       trace.Time // the rank's clock before the event: the end of the events before
	act         uint32
	flags       uint8
}

// untimed marks an event without times: no wait state involves it.
const untimed uint8 = 1

// completed marks a non-blocking collective read where it completed
// (Event.Request): its times are the completing call's, and its members'
// entries into the collective, their posts, are not in the trace, so no
// wait state or clock-condition violation is told from them.
const completed uint8 = 2

// gap is the time before the event that belongs to it: computation
// leading to the call.
func (s *span) gap() trace.Time { return max(s.enter-s.start, 0) }

// busy is the time of the event itself past the rank's clock.
func (s *span) busy() trace.Time { return max(s.exit-max(s.enter, s.start), 0) }

// end is the rank's clock after the event.
func (s *span) end() trace.Time { return max(s.exit, s.enter, s.start) }

// p2p is one message end: a send or a receive, posted by one call and
// completed by the same call (blocking) or a later wait.
type p2p struct {
	post, done int32 // span indexes; done is -1 until a wait completes it
	peer       int32 // destination of a send, source of a receive
	tag        int32
	comm       uint32
}

// coll is one collective call (MPI_Init and MPI_Finalize included).
type coll struct {
	call int32
	comm uint32
	root int32
	kind trace.Kind
	data dataFlags // whether it sends, receives: only that decides who waits
}

// dataFlags say whether a collective call sends data and receives it.
type dataFlags uint8

const (
	sends dataFlags = 1 << iota
	receives
)

// flags returns the data flags of a call sending and receiving that many
// bytes.
func flags(sent, recv int64) dataFlags {
	var f dataFlags
	if sent > 0 {
		f |= sends
	}
	if recv > 0 {
		f |= receives
	}
	return f
}

// rankData is one rank's timeline and communication.
type rankData struct {
	spans []span
	sends []p2p
	recvs []p2p
	colls []coll
	// exits are the completion times of the messages posted at a span
	// whose completion is an implicit waitall (see splitOpen).
	exits map[int32]trace.Time
	// alltoallv is the rank's time in MPI_Alltoallv (and Alltoallw),
	// which synchronizes nobody here (see synchronizes).
	alltoallv trace.Time
}

// exit returns when message m completed.
func (rd *rankData) exit(m *p2p) trace.Time {
	if t, ok := rd.exits[m.post]; ok {
		return t
	}
	return rd.spans[m.done].exit
}

// reqRef is a pending request: the index of its send or receive.
type reqRef struct {
	recv bool
	i    int32
}

// reader builds a rankData from a rank's events.
type reader struct {
	rd      rankData
	acts    *activities
	clock   trace.Time
	started bool
	pending map[uint64]reqRef
	// group holds the requests the waits of one call completed so far,
	// last the span of the latest (see completeWait).
	group []reqRef
	last  int32
	// probing is the span of the first probe of the probes (and the
	// computation between them) the rank made since its last other call,
	// -1 if none (see event).
	probing int32
	// polling is, likewise, the span of the first of the failed tests
	// the rank made since its last other call, -1 if none (see poll).
	// carried is the span of the wait that took such tests' time
	// (carry), which a wait after it completing in the same call takes
	// over (see completeWait); -1 if none.
	polling, carried int32
	carry            trace.Time
	// posted is the last span if it is a timed MPI_Irecv, with its
	// request and the first of the probes right before it (probed, -1 if
	// none), -1 otherwise (see received).
	posted, probed int32
	postReq        uint64
	// local is the last span if it is a local call that the next may
	// be folded into (see absorb), -1 otherwise.
	local int32
}

// sizes are the expected lengths of a rank's lists.
type sizes struct{ spans, sends, recvs int }

// sizes returns the lengths of rd's lists, an eighth more, as the
// expected ones of the next rank.
func (rd *rankData) sizes() sizes {
	more := func(n int) int { return n + n/8 }
	return sizes{more(len(rd.spans)), more(len(rd.sends)), more(len(rd.recvs))}
}

// readRank reads rank r of src; hint is the lengths of its lists
// expected.
func readRank(src trace.Source, r int, acts *activities, hint sizes) (rankData, error) {
	in, err := src.OpenRank(r)
	if err != nil {
		return rankData{}, fmt.Errorf("rank %d: %w", r, err)
	}
	rr := reader{acts: acts, pending: map[uint64]reqRef{}, probing: -1, polling: -1, carried: -1, posted: -1, local: -1}
	rr.rd.spans = make([]span, 0, hint.spans)
	rr.rd.sends = make([]p2p, 0, hint.sends)
	rr.rd.recvs = make([]p2p, 0, hint.recvs)
	// Mapped at once: a fault a page took a third of the time of reading
	// a long rank (prefault).
	prefault.Slice(rr.rd.spans)
	prefault.Slice(rr.rd.sends)
	prefault.Slice(rr.rd.recvs)
	for in.Next() {
		rr.event(in.Event())
	}
	err = in.Err()
	if cerr := in.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return rankData{}, fmt.Errorf("rank %d: %w", r, err)
	}
	rr.rd.splitOpen(acts)
	return rr.rd, nil
}

// event adds one event. A blocking receive made right after probes
// (MPI_Probe, a loop of MPI_Iprobe and computation; mpi4py's and
// Boost.MPI's receives probe for the message's size first) is one call
// from the first probe on: the rank waited for the message in the
// probes, and a late sender's wait starts there, not at the receive. A
// wait made right after failed tests, or right after the matched probe
// it completes, takes their time (see poll and received).
func (rr *reader) event(e *trace.Event) {
	if e.Kind == trace.Location || !e.Kind.Valid() {
		return
	}
	polled := false
	if rr.polling >= 0 {
		e, polled = rr.poll(e)
	}
	if rr.posted >= 0 && !polled { // a wait takes one run of calls
		e = rr.received(e)
	}
	rr.posted = -1
	probed := rr.probing
	switch {
	case rr.probes(e):
		if rr.probing < 0 && e.HasTime {
			rr.probing = int32(len(rr.rd.spans))
		}
	case e.Kind == trace.Recv && rr.probing >= 0 && e.HasTime:
		first := rr.rd.spans[rr.probing]
		rr.rd.spans, rr.clock = rr.rd.spans[:rr.probing], first.start
		merged := *e
		merged.Enter = first.enter
		e = &merged
		rr.probing = -1
	case e.Kind != trace.Compute && e.Kind != trace.Sleep:
		rr.probing = -1
	}
	idx := rr.push(e)
	if rr.polling < 0 && e.Kind == trace.Deferred && e.HasTime && rr.tests(e) {
		rr.polling = idx
	}
	if e.Kind == trace.Irecv && e.HasTime {
		rr.posted, rr.probed, rr.postReq = idx, probed, e.Request
	}
	rd := &rr.rd
	if e.Kind == trace.Alltoallv && e.HasTime {
		rd.alltoallv += e.Exit - e.Enter
	}
	switch k := e.Kind; {
	case k == trace.Send || k == trace.Isend:
		rr.message(&rd.sends, idx, k == trace.Isend, false, e.Partner, e)
	case k == trace.Recv || k == trace.Irecv:
		rr.message(&rd.recvs, idx, k == trace.Irecv, true, e.Partner, e)
	case k == trace.SendRecv:
		rr.message(&rd.sends, idx, false, false, e.Partner, e)
		rr.message(&rd.recvs, idx, false, true, e.Source, e)
	case k == trace.Wait:
		// A test does not complete its request in the model (it may
		// have found it incomplete); the wait that follows does.
		rr.completeWait(e.Request, idx)
	case k == trace.Waitall:
		if e.Requests == nil {
			for req := range rr.pending {
				rr.complete(req, idx)
			}
		}
		for _, req := range e.Requests {
			rr.complete(req, idx)
		}
	case k == trace.Init || k == trace.Finalize || synchronizes(k):
		c := coll{call: idx, kind: k, comm: e.Comm, root: e.Partner,
			data: flags(max(e.SendBytes, sum(e.SendCounts)), max(e.RecvBytes, sum(e.RecvCounts)))}
		if k == trace.Init || k == trace.Finalize {
			c.comm, c.root = trace.WorldComm, trace.NoRank
		}
		rd.colls = append(rd.colls, c)
	}
}

// probes reports whether e is a probe: MPI_Probe, MPI_Iprobe, or, as
// OTF2 archives have them (deferred calls named by their region),
// MPI_Mprobe and MPI_Improbe too.
func (rr *reader) probes(e *trace.Event) bool {
	switch e.Kind {
	case trace.Probe, trace.Iprobe:
		return true
	case trace.Deferred:
		regions := rr.acts.meta.Regions
		if int(e.Region) < len(regions) {
			switch regions[e.Region].Name {
			case "MPI_Probe", "MPI_Iprobe", "MPI_Mprobe", "MPI_Improbe":
				return true
			}
		}
	}
	return false
}

// poll returns e, or, for a wait (MPI_Wait, MPI_Waitall, or a test that
// completed requests) made right after failed tests (a polling loop of
// MPI_Test, MPI_Testany... and the computation between them), e made
// earlier by the tests' time, which it takes over: the rank waited for
// its requests in the tests as in the wait, and a late sender's wait
// starts there. (Otherwise the tests' time was an activity of the rank,
// which the delays of the ranks waiting for it were blamed on, where the
// rank had waited for a late sender: HPCC's polling loops of
// MPI_Testany.) Only the time in the tests moves: the computation
// between them stays computation, before the wait, so that a loop that
// computes and tests in turn is not made a wait. The tests need not have
// tested the requests the wait completes: a trace does not say which a
// failed test tested.
func (rr *reader) poll(e *trace.Event) (*trace.Event, bool) {
	switch {
	case !e.HasTime || e.Kind != trace.Wait && e.Kind != trace.Waitall:
		if e.Kind != trace.Compute && e.Kind != trace.Sleep && !rr.tests(e) {
			rr.polling = -1
		}
		return e, false
	}
	busy := rr.callsTime(rr.rd.spans[rr.polling:])
	start := rr.rd.spans[rr.polling].start
	rr.rd.spans, rr.clock = rr.rd.spans[:rr.polling], start
	rr.polling, rr.local = -1, -1
	merged := *e
	merged.Enter = min(max(e.Enter-busy, start), e.Enter) // not later: a wait entered inside the tests (clocks apart)
	rr.carried, rr.carry = int32(len(rr.rd.spans)), e.Enter-merged.Enter
	return &merged, true
}

// received returns e, or, for the wait that completes a matched probe
// just before it, e made earlier by the probe's time and that of the
// probes that did not match right before it, which it takes over. Kairos'
// tracer writes MPI_Mprobe (or the MPI_Improbe that matched, after those
// that did not) as the irecv of the message, with the probe's time, and
// the MPI_Mrecv as its wait (mpi4py's receives): the rank's waiting for a
// late sender was the irecv's time, an activity blamed for the waiting of
// others. The trace does not say which irecv was a probe: it is one made
// right after probes, or one that took longer than the wait that
// completes it right after it (the last span: only computation between,
// not overlapping; a wait taking no time is the share of a waitsome, not
// an MPI_Mrecv). The irecv is left at its enter (less the probes' time,
// where they are taken out before it), taking no time, as the post of its
// message. As for tests (poll), only the calls' time moves, not the
// computation between them.
func (rr *reader) received(e *trace.Event) *trace.Event {
	k, probed, req := rr.posted, rr.probed, rr.postReq
	sp := rr.rd.spans
	if !e.HasTime || int(k) != len(sp)-1 || !completes(e, req) || e.Enter < sp[k].exit || e.Exit <= e.Enter ||
		probed < 0 && sp[k].busy() <= e.Exit-e.Enter {
		return e
	}
	ref, ok := rr.pending[req]
	if !ok {
		return e
	}
	post := sp[k]
	var probes trace.Time
	if probed >= 0 && probed < k {
		probes = rr.callsTime(sp[probed:k])
		post.start = sp[probed].start
		rr.rd.spans, k = append(sp[:probed], post), probed
		rr.list(ref)[ref.i].post = k
	}
	p := &rr.rd.spans[k]
	busy := probes + p.busy()
	p.enter = max(p.enter-probes, p.start) // the computation between the probes before it
	p.exit = p.enter
	rr.clock, rr.local = p.end(), -1
	merged := *e
	merged.Enter = min(max(e.Enter-busy, p.enter), e.Enter)
	rr.carried, rr.carry = k+1, e.Enter-merged.Enter
	return &merged
}

// callsTime is the time of the calls among spans (a run of tests or
// probes), not of the computations a trace has as events.
func (rr *reader) callsTime(spans []span) trace.Time {
	var t trace.Time
	for i := range spans {
		if rr.acts.list[spans[i].act].kind != trace.Compute {
			t += spans[i].busy()
		}
	}
	return t
}

// completes reports whether e, a wait, completes request req.
func completes(e *trace.Event, req uint64) bool {
	switch e.Kind {
	case trace.Wait:
		return e.Request == req
	case trace.Waitall:
		return e.Requests == nil || slices.Contains(e.Requests, req)
	}
	return false
}

// tests reports whether e is a failed test (MPI_Test, MPI_Testany,
// MPI_Testsome, MPI_Testall that completed nothing), which OTF2 and DUMPI
// traces have as a deferred call named by its region.
func (rr *reader) tests(e *trace.Event) bool {
	if e.Kind != trace.Deferred {
		return false
	}
	regions := rr.acts.meta.Regions
	if int(e.Region) >= len(regions) {
		return false
	}
	switch regions[e.Region].Name {
	case "MPI_Test", "MPI_Testany", "MPI_Testsome", "MPI_Testall":
		return true
	}
	return false
}

// synchronizes reports whether collective k can make its members wait
// for each other (communicator management and alltoallv are left out, as
// Scalasca leaves them).
func synchronizes(k trace.Kind) bool {
	return k.IsCollective() && k != trace.CommSplit && k != trace.CommDup && k != trace.CommCreate && k != trace.Alltoallv
}

func sum(xs []int64) int64 {
	var s int64
	for _, x := range xs {
		s += max(x, 0)
	}
	return s
}

// push appends e's span and returns its index.
func (rr *reader) push(e *trace.Event) int32 {
	region, kind := e.Region, e.Kind
	if kind == trace.Sleep {
		kind = trace.Compute
	}
	s := span{act: rr.acts.id(activity{region, kind})}
	switch {
	case !e.HasTime:
		s.enter, s.exit, s.flags = rr.clock, rr.clock, untimed
	case !rr.started:
		rr.started = true
		rr.clock = e.Enter
		fallthrough
	default:
		s.enter, s.exit = e.Enter, max(e.Exit, e.Enter)
	}
	if e.Kind.IsCollective() && e.Request != 0 {
		s.flags |= completed
	}
	s.start = rr.clock
	local := (e.Kind == trace.Deferred || e.Kind == trace.Local) && s.flags == 0 && s.enter >= s.start
	if local && foldLocal && rr.absorb(&s) {
		return rr.local
	}
	idx := int32(len(rr.rd.spans))
	rr.rd.spans = append(rr.rd.spans, s)
	rr.clock = s.end()
	rr.local = -1
	if local {
		rr.local = idx
	}
	return idx
}

// foldLocal turns absorb on (off for the tests that compare).
var foldLocal = true

// absorb folds s, a timed local call (a failed test or probe, an
// MPI_Comm_rank) that began at or after the rank's clock, into the span
// before it if that is one too, of the same activity, and is neither the
// rank's first (whose entry starts the rank's time) nor the first of a
// run of probes, whose entry a receive after them takes (see event). The span then holds both calls' time in the call and both
// computations before them, in that order: the sums by activity that
// every analysis makes are the same, and a polling loop's millions of
// failed tests (HPCC's 4.5 million MPI_Testany on 32 ranks, Ray's 50
// million MPI_Iprobe on 4) take a span a run, not one each. Nothing
// refers to a local call's span.
func (rr *reader) absorb(s *span) bool {
	i := rr.local
	if i <= 0 || i != int32(len(rr.rd.spans))-1 || rr.probing == i || rr.probing == i+1 {
		return false
	}
	p := &rr.rd.spans[i]
	if p.act != s.act {
		return false
	}
	busy := (p.exit - p.enter) + (s.exit - s.enter)
	p.exit = s.exit
	p.enter = p.exit - busy
	rr.clock = p.end()
	return true
}

// message adds a send or receive posted at span idx.
func (rr *reader) message(list *[]p2p, idx int32, nonBlocking, recv bool, peer int32, e *trace.Event) {
	m := p2p{post: idx, done: idx, peer: peer, tag: e.Tag, comm: e.Comm}
	if nonBlocking {
		m.done = -1
		rr.pending[e.Request] = reqRef{recv: recv, i: int32(len(*list))}
	}
	*list = append(*list, m)
}

// complete marks the request req completed by span idx, and returns it.
func (rr *reader) complete(req uint64, idx int32) (reqRef, bool) {
	ref, ok := rr.pending[req]
	if !ok {
		return ref, false
	}
	delete(rr.pending, req)
	rr.list(ref)[ref.i].done = idx
	return ref, true
}

// list returns the sends or the receives, as ref is one.
func (rr *reader) list(ref reqRef) []p2p {
	if ref.recv {
		return rr.rd.recvs
	}
	return rr.rd.sends
}

// completeWait completes the request of the wait at span idx. The waits
// one call is read as (an MPI_Waitsome's, a wait of each request, all but
// the last taking no time at the call's entry: trace.ShareCallTime)
// complete their requests together at the last, as a waitall does: the
// call returned when the last message had arrived, and a message
// completed at the call's entry, before it was sent, broke the clock
// condition and blamed the wrong sender.
//
// The wait that took the time of failed tests before it (poll) hands it
// to the next wait of its call, which then starts where it started: the
// time stays with the wait that completes the call's requests.
func (rr *reader) completeWait(req uint64, idx int32) {
	sp := rr.rd.spans
	prev := idx - 1
	enter := func(i int32) trace.Time { // as recorded
		if i == rr.carried {
			return sp[i].enter + rr.carry
		}
		return sp[i].enter
	}
	switch {
	case len(rr.group) == 0 || rr.last != prev || sp[prev].flags&untimed != 0 || sp[prev].exit != enter(prev) ||
		enter(prev) != sp[idx].enter:
		rr.group = rr.group[:0]
	case prev == rr.carried:
		p, s := &sp[prev], &sp[idx]
		p.exit, s.start, s.enter = p.enter, p.enter, p.enter
		rr.carried = idx
	}
	if ref, ok := rr.complete(req, idx); ok {
		rr.group = append(rr.group, ref)
	}
	for _, ref := range rr.group {
		rr.list(ref)[ref.i].done = idx
	}
	rr.last = idx
	if rr.carried != idx { // only the next wait may take it over
		rr.carried = -1
	}
}

// splitOpen reads the point-to-point events written as spans from their
// post to their completion (the seed authors' traces write
// Isend..IsendComplete and IrecvRequest..Irecv so) as the non-blocking
// calls they are: a run of such events that start inside one another is a
// group of posts completed by an implicit MPI_Waitall, from the last post
// to the last completion. Each becomes a post at its enter; the waitall
// follows the group.
func (rd *rankData) splitOpen(acts *activities) {
	spans := rd.spans
	type group struct {
		first, last int32
		post        trace.Time // the last post
	}
	var groups []group
	for i := 0; i < len(spans); {
		j, end, last := i+1, spans[i].exit, spans[i].enter
		for j < len(spans) && spans[j].flags&untimed == 0 && spans[j].enter < end {
			end, last = max(end, spans[j].exit), max(last, spans[j].enter)
			j++
		}
		if spans[i].flags&untimed == 0 && last > spans[i].enter {
			groups = append(groups, group{int32(i), int32(j - 1), last})
		}
		i = j
	}
	if len(groups) == 0 {
		return
	}
	out := make([]span, 0, len(spans)+len(groups))
	moved := make([]int32, len(spans)) // old index -> new index
	doneAt := map[int32]int32{}        // open span -> its waitall's new index
	g := 0
	for i := range spans {
		moved[i] = int32(len(out))
		out = append(out, spans[i])
		if g == len(groups) || groups[g].last != int32(i) {
			continue
		}
		w := span{enter: groups[g].post, exit: groups[g].post, act: acts.id(activity{acts.list[spans[i].act].region, trace.Waitall})}
		var open []int32
		for k := groups[g].first; k <= groups[g].last; k++ {
			if s := &out[moved[k]]; s.exit > s.enter && rd.isMessage(k) {
				open = append(open, k)
				w.exit = max(w.exit, s.exit)
			}
		}
		if w.exit > w.enter {
			if rd.exits == nil {
				rd.exits = map[int32]trace.Time{}
			}
			for _, k := range open {
				doneAt[k] = int32(len(out))
				rd.exits[moved[k]] = out[moved[k]].exit
				out[moved[k]].exit = out[moved[k]].enter
			}
			out = append(out, w)
		}
		g++
	}
	clock := out[0].start
	for i := range out {
		if out[i].flags&untimed == 0 {
			clock = out[i].start
			break
		}
	}
	for i := range out {
		if out[i].flags&untimed != 0 {
			out[i].enter, out[i].exit = clock, clock
		}
		out[i].start = clock
		clock = out[i].end()
	}
	rd.spans = out
	for _, list := range [2][]p2p{rd.sends, rd.recvs} {
		for i := range list {
			m := &list[i]
			if at, ok := doneAt[m.post]; ok && m.done == m.post {
				m.done = at
			} else if m.done >= 0 {
				m.done = moved[m.done]
			}
			m.post = moved[m.post]
		}
	}
	for i := range rd.colls {
		rd.colls[i].call = moved[rd.colls[i].call]
	}
}

// isMessage reports whether span i posts a send or a receive.
func (rd *rankData) isMessage(i int32) bool {
	for _, list := range [2][]p2p{rd.sends, rd.recvs} {
		j := sort.Search(len(list), func(j int) bool { return list[j].post >= i })
		if j < len(list) && list[j].post == i {
			return true
		}
	}
	return false
}
