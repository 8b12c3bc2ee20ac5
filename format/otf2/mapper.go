package otf2

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"kairos/format/scorep"
	"kairos/internal/smallmap"
	"kairos/trace"
)

// maxLookahead bounds the events a rank reader holds back while an Irecv
// waits for the MpiIrecv record that names its sender (or a non-blocking
// collective for its completion): past it the event is released, filled
// from the completion Open's scan found further on (lateFill), so that
// any distance costs a bounded look-ahead and an entry of the index.
const maxLookahead = 1 << 12

// maxDepth bounds a location's call stack, so that a trace of Enters
// without Leaves cannot grow memory with its events.
const maxDepth = 1 << 16

// frame is one entered region of a location's call stack.
type frame struct {
	region    uint32 // OTF2 region id
	node      uint32 // model region node of the user call path here
	startCall bool   // this Enter began an MPI call
}

// mpiCall is an MPI call being read: its Enter, the model events its MPI
// records make, and the requests it completes.
type mpiCall struct {
	name      string
	class     callClass
	node      uint32 // model region node of the call (user path + MPI name)
	enter     uint64
	ops       []trace.Event
	completed []uint64
	// deferred: the call is MPI time a replay has no action for, where it
	// completes nothing: it tests a request without completing it, calls,
	// tests or completes a non-blocking collective, or cancels a request.
	deferred bool
}

// outQueue is a rank's model events not yet returned; pending marks the
// Irecvs whose sender is not known yet.
type outQueue struct {
	ev      []trace.Event
	pending []bool
	head    int
	base    int // absolute index of ev[0]
}

// heldOut is a held-back event in the queue: its absolute index, and the
// call-path node of its call, which names it if it is voided.
type heldOut struct {
	idx  int
	node uint32
}

// named gives a voided event (a deferred call), or an MPI-IO call's, the
// node of its call, so that it reads as the MPI function it was
// (MPI_Irecv, MPI_File_write_at_all), not as a call of no name or as its
// kind (trace.Kind.NamedByRegion).
func named(ev *trace.Event, node uint32) {
	if ev.Kind == trace.Deferred || ev.Kind.IsIO() {
		ev.Region = node
	}
}

// held is a request whose held-back event was released before it
// completed: the ordinal of the record that started it, and whether it is
// a non-blocking collective's (else an Irecv's).
type held struct {
	ord  uint64
	coll bool
}

// lateFill is what Open's scan found of a request whose held-back event
// was released before its completion: the Irecv's sender, tag,
// communicator and size, or the non-blocking collective, or that it was
// cancelled.
type lateFill struct {
	coll      *trace.Event
	partner   int32
	tag       int32
	comm      uint32
	bytes     int64
	cancelled bool
}

// rankIndex is what Open's scan learns of a rank that its events need
// before their records come, by the ordinal of the record that started
// each request: the completions of events released from the look-ahead,
// and the isends cancelled. Its size is that of those requests, not of
// the trace.
type rankIndex struct {
	late      map[uint64]lateFill
	cancelled map[uint64]bool
	// derived are the v-collectives whose count vectors a read derives
	// from the members' totals, in the order the scan met them: the
	// kept events mark each with its place (keptReader).
	derived []derivedAt
	// fixes are the kept events that a read after the scan gives
	// otherwise, by their place in the rank's events (keptReader): the
	// held-back events released before their completion, which a read
	// fills from late, and the isends cancelled after their call.
	fixes []keptFix
}

// keptFix is a kept event that a read after the scan gives otherwise:
// its place among the rank's events, its call's node, and either that it
// is an isend cancelled after its call or the ordinal of the record that
// started its request (late's key).
type keptFix struct {
	at     int
	ord    uint64
	node   uint32
	cancel bool
}

// derivedAt is a v-collective whose count vectors are derived: the
// rank's seq'th collective, its member me of the communicator.
type derivedAt struct {
	seq uint64
	me  int
}

func (q *outQueue) push(e trace.Event, pending bool) int {
	q.ev = append(q.ev, e)
	q.pending = append(q.pending, pending)
	return q.base + len(q.ev) - 1
}

// mapper turns one location's raw records into model events.
type mapper struct {
	src  *Source
	self uint64
	rank int32

	stack   []frame
	user    uint32 // innermost user region node
	call    *mpiCall
	callBuf mpiCall // the storage call points to, reused
	out     *outQueue
	nodes   map[[2]uint32]uint32 // (OTF2 region, parent node) -> node
	// recent caches nodes, read at every enter, in front of nodes.
	recent  [nodeCache]cachedNode
	regions map[uint32]regionInfo
	peers   map[uint64]int32 // comm<<32 | rank -> world rank
	// ccNodes are the call-path nodes of calling contexts, whose frames
	// name the user's functions in place of Enter and Leave (ccNode).
	ccNodes map[uint32]uint32
	ccChain []uint32
	ccSeen  map[uint32]bool

	// The held-back events: Irecvs whose sender is not known yet and the
	// places of non-blocking collectives not completed yet, by request.
	// Requests are few at a time (a stencil's 8): they are searched
	// linearly (smallmap), where Go maps took a sixth of reading an
	// archive of isends and irecvs (BENCHMARKS.md).
	pendingCall smallmap.Map[uint64, int]     // request -> index in call.ops
	pendingOut  smallmap.Map[uint64, heldOut] // request -> its place in the queue

	// nbcUnplaced holds the non-blocking collectives' requests not placed
	// yet, in the order of their calls.
	nbcUnplaced []uint64

	// ord is the ordinal of the record being read (1 for the first).
	// reqOrd maps each pending request to the ordinal of the record that
	// started it, released those whose held-back events were released
	// before they completed. idx is the rank's index: built while
	// scanning (Open's first read), read afterwards.
	ord      uint64
	reqOrd   smallmap.Map[uint64, uint64]
	released smallmap.Map[uint64, held]
	idx      *rankIndex
	scanning bool
	// isendAt holds, while scanning, each pending isend's place among the
	// rank's events and its call's node: a cancellation fixes it there
	// in the kept events (rankIndex.fixes). unfixed counts the
	// cancellations of started requests that were not such an isend.
	isendAt smallmap.Map[uint64, heldOut]
	unfixed int
	// view holds what the scan of the rank defines (nodes,
	// communicators), apart from the model (nil after the scan).
	view *scanView
	// off is set while the measurement is switched off
	// (MEASUREMENT_ON_OFF): a writer may switch it off for good before
	// MPI_Finalize.
	off bool
	// offs counts the times the measurement was switched off and on
	// again, hidden the time between, offAt when it was last switched
	// off.
	offs   int
	hidden trace.Time
	offAt  uint64
	// flushes counts the tracer's buffer flushes (BufferFlush) and
	// flushed their time, which lies between the rank's calls and so
	// reads as computation.
	flushes int
	flushed trace.Time

	// seq numbers the collectives in the order of their calls (a
	// non-blocking one's call, nbcSeq, not its completion), which MPI
	// makes every member's order on a communicator.
	seq    uint64
	nbcSeq smallmap.Map[uint64, uint64]
	vcache map[uint64][]int64 // count vectors of the kairos attributes, by string

	side *sideState // one-sided and I/O calls (onesided.go)

	unbalancedLeave, mismatchedLeave, unresolved, orphanIrecv, lateIrecv, lateCollective, cancelled, badCounts int
	interColls                                                                                                 int
	err                                                                                                        error
}

// scanFinal reports whether the events the scan gave are those every
// later read gives, once the rank's fixes are made and the count vectors
// derived from the other members' totals (keptReader): every
// cancellation of a started request was an isend's, which the fixes
// void.
func (m *mapper) scanFinal() bool { return m.unfixed == 0 }

// regionInfo is what the mapper needs of a region definition.
type regionInfo struct {
	name  string
	mpi   bool
	class callClass
}

// callClass is how finish reads a call of an MPI function, known from its
// name once (every call compared its name with a dozen).
type callClass struct {
	kind     trace.Kind // of a call that records nothing: callKinds', or by prefix
	test     bool       // MPI_Test, Testany, Testsome, Testall
	wait     bool       // MPI_Wait, Waitall, Waitany, Waitsome
	waitOne  bool       // MPI_Wait, Waitany: a wait of the request it completes
	waitsome bool
	finalize bool
	side     bool // one of sideKinds
}

// classOf returns the callClass of MPI function name.
func classOf(name string) callClass {
	c := callClass{
		test:     name == "MPI_Test" || name == "MPI_Testany" || name == "MPI_Testsome" || name == "MPI_Testall",
		wait:     name == "MPI_Wait" || name == "MPI_Waitall" || name == "MPI_Waitany" || name == "MPI_Waitsome",
		waitOne:  name == "MPI_Wait" || name == "MPI_Waitany",
		waitsome: name == "MPI_Waitsome",
		finalize: name == "MPI_Finalize",
	}
	_, c.side = sideKinds[name]
	var named bool
	c.kind, named = callKinds[name]
	switch {
	case named:
	case strings.HasPrefix(name, "MPI_File_"):
		c.kind = trace.File
	case strings.HasPrefix(name, "MPI_Win_"): // MPI_Win_sync, _attach...: MPI time, no replay's
		c.kind = trace.Deferred
	case communicates(name):
		// A call that sends, receives or takes part in a collective
		// with none of it recorded: with processes the archive does
		// not hold (a world MPI_Comm_spawn started). Its time is the
		// wait for them, not computation.
		c.kind = trace.Deferred
	default:
		c.kind = trace.Local
	}
	return c
}

// communicates reports whether MPI function name sends, receives, takes
// part in a collective or connects to other processes, in any of its
// forms: blocking, non-blocking (MPI_Isend, MPI_Iallreduce), persistent
// (MPI_Send_init, MPI_Bcast_init), neighbourhood.
func communicates(name string) bool {
	f, ok := strings.CutPrefix(name, "MPI_")
	if !ok {
		return false
	}
	f = strings.TrimSuffix(f, "_init")
	if len(f) > 1 && f[0] == 'I' && f[1] >= 'a' && f[1] <= 'z' {
		f = strings.ToUpper(f[1:2]) + f[2:]
	}
	_, ok = communicating[f]
	return ok || strings.HasPrefix(f, "Neighbor_")
}

// communicating are the MPI functions (without "MPI_") communicates
// knows by name, in their blocking form.
var communicating = map[string]struct{}{
	"Send": {}, "Ssend": {}, "Bsend": {}, "Rsend": {}, "Recv": {}, "Mrecv": {}, "Sendrecv": {}, "Sendrecv_replace": {},
	"Start": {}, "Startall": {}, "Barrier": {}, "Bcast": {}, "Reduce": {}, "Allreduce": {}, "Gather": {}, "Gatherv": {},
	"Scatter": {}, "Scatterv": {}, "Allgather": {}, "Allgatherv": {}, "Alltoall": {}, "Alltoallv": {}, "Alltoallw": {},
	"Reduce_scatter": {}, "Reduce_scatter_block": {}, "Scan": {}, "Exscan": {},
	"Comm_spawn": {}, "Comm_spawn_multiple": {}, "Comm_accept": {}, "Comm_connect": {}, "Comm_join": {},
}

// nodeCache is the number of nodes a mapper caches, by region.
const nodeCache = 256

// cachedNode is a region's node below a parent.
type cachedNode struct {
	region, parent, node uint32
	ok                   bool
}

// region returns region id's name, whether it is an MPI function
// (paradigm MPI, or an "MPI_" name where the paradigm is unknown), and how
// a call of it is read.
func (m *mapper) region(id uint32) regionInfo {
	if ri, ok := m.src.region(id); ok {
		return ri
	}
	if ri, ok := m.regions[id]; ok {
		return ri
	}
	ri := m.src.regionInfo(id)
	// While ranks are read at once the model's cache is only read:
	// Source.scan fills it first with every region defined.
	if m.view != nil || !m.src.setRegion(id, ri) {
		m.regions[id] = ri
	}
	return ri
}

// regionInfo returns what the definitions say of OTF2 region id.
func (s *Source) regionInfo(id uint32) regionInfo {
	d := s.arch.Defs
	r, ok := d.Regions[id]
	ri := regionInfo{name: "region " + strconv.FormatUint(uint64(id), 10)}
	if ok {
		ri.name = d.Strings[r.Name]
		ri.mpi = r.Paradigm == ParadigmMPI || (r.Paradigm == 0 && strings.HasPrefix(ri.name, "MPI_"))
	}
	ri.class = classOf(ri.name)
	return ri
}

// addRegion is Meta.AddRegion of the model's tree, or of the scan's view.
func (m *mapper) addRegion(name string, parent uint32) uint32 {
	if m.view != nil {
		return m.view.addRegion(name, parent)
	}
	return m.src.meta.AddRegion(name, parent)
}

// callSite is Source.callSite, or the scan's view's.
func (m *mapper) callSite(node uint32) uint64 {
	if m.view != nil {
		return m.view.callSite(node)
	}
	return m.src.callSite(node)
}

// selfComm is Source.selfComm of the rank, or the scan's view's.
func (m *mapper) selfComm(id uint32) modelComm {
	if m.view != nil {
		return modelComm{id: m.view.comm(viewComm{self: true, id: id}), size: 1}
	}
	return m.src.selfComm(id, m.rank)
}

// groupComm is Source.groupComm, or the scan's view's where the model
// does not have it yet.
func (m *mapper) groupComm(id uint32) uint32 {
	if m.view == nil {
		return m.src.groupComm(id)
	}
	if c, ok := m.src.groupComms[id]; ok {
		return c
	}
	if c, ok := m.view.find(viewComm{id: id}); ok {
		return c
	}
	if m.src.rmaGroupMembers(id) == nil {
		return 0
	}
	return m.view.comm(viewComm{id: id})
}

func (m *mapper) ps(t uint64) trace.Time { return trace.Time(m.src.arch.Picoseconds(t)) }

// step processes one raw record.
func (m *mapper) step(e *Event) {
	switch e.Type {
	case EvEnter:
		m.enter(e, 0, false)
	case EvLeave:
		m.leave(e)
	case EvCallingContextEnter:
		m.ccEnter(e)
	case EvCallingContextLeave:
		m.ccLeave(e)
	case EvMeasurementOnOff:
		switch off := e.Op == MeasurementOff; {
		case off && !m.off:
			m.offAt = e.Time
		case !off && m.off:
			m.offs++
			m.hidden += m.ps(max(e.Time, m.offAt)) - m.ps(m.offAt)
		}
		m.off = e.Op == MeasurementOff
	case EvBufferFlush:
		m.bufferFlush(e)
	case EvNonBlockingCollectiveRequest:
		m.nbcUnplaced = append(m.nbcUnplaced, e.Request)
		m.reqOrd.Put(e.Request, m.ord)
		m.seq++
		m.nbcSeq.Put(e.Request, m.seq)
		if m.call != nil {
			m.call.deferred = true
		}
	case EvMpiSend, EvMpiIsend, EvMpiRecv, EvMpiIrecvRequest, EvMpiIrecv, EvMpiIsendComplete,
		EvMpiRequestTest, EvMpiRequestCancelled, EvMpiCollectiveEnd, EvNonBlockingCollectiveComplete:
		implicit := m.call == nil
		if implicit {
			name := RecordName(e.Type) // an MPI record outside any MPI function's region
			m.begin(regionInfo{name: name, mpi: true, class: classOf(name)}, m.user, e.Time)
		}
		m.record(e)
		if implicit {
			m.finish(e.Time)
		}
	default:
		if isSideRecord(e.Type) {
			m.sideEvent(e)
		}
	}
}

// flushRegion names the deferred calls that stand for the tracer's
// buffer flushes; its id is one no archive's region is given (the
// call-path nodes are keyed by region id).
const (
	flushRegion = undefined32 - 1
	flushName   = "OTF2 buffer flush"
)

// bufferFlush reads a BufferFlush: between calls, the time the tracer took to
// write its buffer, which the record's stop time ends, becomes a deferred
// call named flushName (MPI time, not computation: a replay gives it
// none, and a partner's wait for it goes back to it); inside a call it is
// the call's time already. Either way it is counted for the note.
func (m *mapper) bufferFlush(e *Event) {
	if e.Value <= e.RawTime {
		return
	}
	stop := e.Time + (e.Value - e.RawTime) // the stop time as written, corrected as the start
	c := m.src.arch.Defs.Clock
	if stop < e.Time || c.TraceLength > 0 && stop-c.GlobalOffset > c.TraceLength {
		return // past the clock's or the trace's end: a damaged record
	}
	m.flushes++
	m.flushed += m.ps(stop) - m.ps(e.Time)
	if m.call != nil {
		return
	}
	m.begin(regionInfo{name: flushName, class: classOf(flushName)}, m.nodeOf(flushRegion, m.user, flushName), e.Time)
	m.call.deferred = true
	m.finish(stop)
}

// node returns the call-path node of OTF2 region id entered from parent.
func (m *mapper) node(id, parent uint32, name string) uint32 {
	c := &m.recent[id%nodeCache]
	if c.ok && c.region == id && c.parent == parent {
		return c.node
	}
	n := m.nodeOf(id, parent, name)
	*c = cachedNode{id, parent, n, true}
	return n
}

// nodeOf returns the node of region id below parent, adding it to the
// call-path tree on first sight.
func (m *mapper) nodeOf(id, parent uint32, name string) uint32 {
	k := [2]uint32{id, parent}
	n, ok := m.nodes[k]
	if !ok {
		n = m.addRegion(name, parent)
		m.nodes[k] = n
	}
	return n
}

// begin starts a call of MPI function ri at tick t, reusing the call
// storage.
func (m *mapper) begin(ri regionInfo, node uint32, t uint64) {
	c := &m.callBuf
	*c = mpiCall{name: ri.name, class: ri.class, node: node, enter: t, ops: c.ops[:0], completed: c.completed[:0]}
	m.call = c
	m.side.reset()
}

// enter opens region e.Region at e.Time: an MPI function's call, or a
// user function, the call path's next node (node if known, the region's
// below the current one otherwise).
func (m *mapper) enter(e *Event, node uint32, known bool) {
	if len(m.stack) >= maxDepth {
		if m.err == nil {
			m.err = fmt.Errorf("location %d: more than %d nested regions at tick %d", m.self, maxDepth, e.Time)
		}
		return
	}
	if m.call != nil {
		m.stack = append(m.stack, frame{region: e.Region, node: m.user})
		return
	}
	ri := m.region(e.Region)
	if !known {
		node = m.node(e.Region, m.user, ri.name)
	}
	if ri.mpi && m.src.mpi {
		m.begin(ri, node, e.Time)
		m.stack = append(m.stack, frame{region: e.Region, node: m.user, startCall: true})
		return
	}
	m.user = node
	m.stack = append(m.stack, frame{region: e.Region, node: m.user})
}

// ccEnter is enter for a calling context's frame, as Score-P writes them
// when it unwinds the stack: the frame's region is the one entered, and
// its callers, instrumented or not, its call path.
func (m *mapper) ccEnter(e *Event) {
	cc, ok := m.src.arch.Defs.CallingCtxs[e.Ref]
	if !ok {
		e.Region = undefined32
		m.enter(e, 0, false)
		return
	}
	e.Region = cc.Region
	if m.call == nil {
		m.user = m.ccNode(cc.Parent)
	}
	m.enter(e, m.ccNode(e.Ref), true)
}

// ccLeave is leave for a calling context's frame: the next event's
// context is its caller's.
func (m *mapper) ccLeave(e *Event) {
	cc, ok := m.src.arch.Defs.CallingCtxs[e.Ref]
	e.Region = cc.Region
	if !ok {
		e.Region = undefined32
	}
	m.leave(e)
	if ok && m.call == nil {
		m.user = m.ccNode(cc.Parent)
	}
}

// ccNode returns the call-path node of calling context id: its frames'
// regions from the root down, 0 for none. A chain that loops (a hostile
// archive's) stops at its first repeated frame, so that each calling
// context adds at most one node.
func (m *mapper) ccNode(id uint32) uint32 {
	if n, ok := m.ccNodes[id]; ok {
		return n
	}
	if m.ccNodes == nil {
		m.ccNodes, m.ccSeen = map[uint32]uint32{}, map[uint32]bool{}
	}
	defs := m.src.arch.Defs.CallingCtxs
	chain, node := m.ccChain[:0], uint32(0)
	for c := id; c != undefined32 && !m.ccSeen[c]; c = defs[c].Parent {
		if n, ok := m.ccNodes[c]; ok {
			node = n
			break
		}
		if _, ok := defs[c]; !ok {
			break
		}
		m.ccSeen[c] = true
		chain = append(chain, c)
	}
	clear(m.ccSeen)
	for i := len(chain) - 1; i >= 0; i-- {
		r := defs[chain[i]].Region
		node = m.node(r, node, m.region(r).name)
		m.ccNodes[chain[i]] = node
	}
	m.ccChain = chain
	return node
}

func (m *mapper) leave(e *Event) {
	if len(m.stack) == 0 {
		m.unbalancedLeave++
		return
	}
	top := m.stack[len(m.stack)-1]
	m.stack = m.stack[:len(m.stack)-1]
	if top.region != e.Region {
		m.mismatchedLeave++
	}
	if top.startCall && m.call != nil {
		m.finish(e.Time)
	}
	if len(m.stack) > 0 {
		m.user = m.stack[len(m.stack)-1].node
	} else {
		m.user = 0
	}
}

// record adds the model event of an MPI record to the current call.
func (m *mapper) record(e *Event) {
	c := m.call
	switch e.Type {
	case EvMpiSend, EvMpiIsend:
		k := trace.Send
		if e.Type == EvMpiIsend {
			k = trace.Isend
		}
		ev := trace.NewEvent(k)
		ev.Partner = m.peer(e.Comm, e.Peer)
		ev.Tag, ev.Comm, ev.SendBytes, ev.Request = int32(e.Tag), m.comm(e.Comm).id, int64(e.Bytes), e.Request
		if k == trace.Send {
			ev.Request = 0
		} else {
			m.reqOrd.Put(e.Request, m.ord)
			if !m.scanning && m.idx.cancelled[m.ord] {
				voided(&ev)
			}
		}
		c.ops = append(c.ops, ev)
	case EvMpiRecv:
		ev := trace.NewEvent(trace.Recv)
		ev.Partner = m.peer(e.Comm, e.Peer)
		ev.Tag, ev.Comm, ev.RecvBytes = int32(e.Tag), m.comm(e.Comm).id, int64(e.Bytes)
		c.ops = append(c.ops, ev)
	case EvMpiIrecvRequest:
		ev := trace.NewEvent(trace.Irecv)
		ev.Request = e.Request
		m.pendingCall.Put(e.Request, len(c.ops))
		m.reqOrd.Put(e.Request, m.ord)
		c.ops = append(c.ops, ev)
	case EvMpiIrecv:
		m.completeIrecv(e)
		c.completed = append(c.completed, e.Request)
	case EvMpiIsendComplete:
		m.reqOrd.Delete(e.Request)
		if m.scanning {
			m.isendAt.Delete(e.Request)
		}
		c.completed = append(c.completed, e.Request)
	case EvMpiRequestCancelled:
		m.cancel(e.Request)
		c.deferred = true // a completion of nothing
	case EvMpiRequestTest:
		c.deferred = true // a test that completes nothing, as the tracer has it
	case EvMpiCollectiveEnd:
		if e.Op >= opCreateHandle {
			// Score-P 8 writes the creation and release of a
			// communicator (in MPI_Init, MPI_Comm_split, MPI_Comm_free,
			// MPI_Finalize) as a collective of these operations: not one
			// a replay makes, and the call keeps its own kind (an init,
			// a deferred call) and its time as MPI time.
			break
		}
		if m.interCollective(e) {
			break
		}
		m.placeCollectives(len(m.nbcUnplaced))
		m.seq++
		c.ops = append(c.ops, m.collective(e, m.seq))
	case EvNonBlockingCollectiveComplete:
		m.completeCollective(e)
	}
}

// A non-blocking collective is read as the blocking one (the model has
// none), where it completes, after the computation it overlapped; or
// before, where a collective called after it completes first: each rank's
// collectives are then in the order of their calls, which MPI makes the
// same on every rank, whatever order a rank completes them in (their
// communicators are not known before they complete). Kairos' tracer
// writes its TI traces so.

// placeCollectives holds places in the current call for the first n
// non-blocking collectives called and not placed yet, to be filled when
// they complete.
func (m *mapper) placeCollectives(n int) {
	c := m.call
	for _, req := range m.nbcUnplaced[:n] {
		ev := trace.NewEvent(trace.Local)
		ev.Request = req
		m.pendingCall.Put(req, len(c.ops))
		c.ops = append(c.ops, ev)
	}
	m.nbcUnplaced = m.nbcUnplaced[:copy(m.nbcUnplaced, m.nbcUnplaced[n:])]
}

// completeCollective reads the completion of a non-blocking collective:
// at its place, if held, else here, after the places of those called
// before it.
func (m *mapper) completeCollective(e *Event) {
	m.call.deferred = true
	seq, _ := m.nbcSeq.Take(e.Request)
	m.reqOrd.Delete(e.Request)
	coll := trace.NewEvent(trace.Deferred)
	if !m.interCollective(e) {
		coll = m.collective(e, seq)
		coll.Request = e.Request // read as blocking: its Enter is not the call's
	}
	if m.fillHeld(e.Request, func(ev *trace.Event) { placeColl(ev, coll) }) {
		return
	}
	if h, ok := m.released.Take(e.Request); ok { // its place went out before it completed
		if m.scanning {
			coll.Handle = 0 // a fill, not a kept event: unmarked (keptReader)
			m.idx.late[h.ord] = lateFill{coll: &coll}
		}
		return
	}
	if i := slices.Index(m.nbcUnplaced, e.Request); i >= 0 {
		m.placeCollectives(i)
		m.nbcUnplaced = m.nbcUnplaced[1:]
	}
	m.call.ops = append(m.call.ops, coll)
}

// fillHeld fills the held-back event of request req, in the current call
// or in the queue, and reports whether there was one.
func (m *mapper) fillHeld(req uint64, fill func(*trace.Event)) bool {
	if i, ok := m.pendingCall.Take(req); ok {
		fill(&m.call.ops[i])
		return true
	}
	if h, ok := m.pendingOut.Take(req); ok {
		q := m.out
		fill(&q.ev[h.idx-q.base])
		named(&q.ev[h.idx-q.base], h.node)
		q.pending[h.idx-q.base] = false
		return true
	}
	return false
}

// placeColl puts collective coll in the place ev held for it, keeping
// the place's times and call path.
func placeColl(ev *trace.Event, coll trace.Event) {
	coll.Enter, coll.Exit, coll.HasTime, coll.Region, coll.CallSite = ev.Enter, ev.Exit, ev.HasTime, ev.Region, ev.CallSite
	*ev = coll
}

// completeIrecv fills the Irecv that MpiIrecvRequest started with the
// sender, tag and size the completing MpiIrecv names (or, if it was
// released before, records them in the index while scanning).
func (m *mapper) completeIrecv(e *Event) {
	m.reqOrd.Delete(e.Request)
	f := lateFill{partner: m.peer(e.Comm, e.Peer), tag: int32(e.Tag), comm: m.comm(e.Comm).id, bytes: int64(e.Bytes)}
	if m.fillHeld(e.Request, f.fillIrecv) {
		return
	}
	if h, ok := m.released.Take(e.Request); ok {
		if m.scanning {
			m.idx.late[h.ord] = f
		}
		return
	}
	m.orphanIrecv++
}

// fillIrecv gives an Irecv the sender, tag, communicator and size of its
// completion.
func (f lateFill) fillIrecv(ev *trace.Event) {
	ev.Partner, ev.Tag, ev.Comm, ev.RecvBytes = f.partner, f.tag, f.comm, f.bytes
}

// cancel reads an MpiRequestCancelled: the request was never a message
// (MPI_Cancel, then a completion that MPI_Test_cancelled says is the
// cancellation). Its held-back Irecv is dropped; an Irecv released
// earlier, or an Isend, is dropped by the index in later reads.
func (m *mapper) cancel(req uint64) {
	m.cancelled++
	o, started := m.reqOrd.Take(req)
	if m.fillHeld(req, voided) {
		return
	}
	if h, ok := m.released.Take(req); ok {
		if m.scanning {
			m.idx.late[h.ord] = lateFill{cancelled: true}
		}
		return
	}
	if started && m.scanning {
		m.idx.cancelled[o] = true
		if at, ok := m.isendAt.Take(req); ok {
			m.idx.fixes = append(m.idx.fixes, keptFix{at: at.idx, node: at.node, cancel: true})
		} else {
			m.unfixed++
		}
	}
}

func (m *mapper) comm(id uint32) modelComm {
	if c, ok := m.src.comms[id]; ok {
		if c.self {
			return m.selfComm(id)
		}
		return c
	}
	m.unresolved++
	return modelComm{id: trace.WorldComm, size: len(m.src.ranks)}
}

// peer returns the world rank of rank r of OTF2 communicator comm.
func (m *mapper) peer(comm, r uint32) int32 {
	k := uint64(comm)<<32 | uint64(r)
	if w, ok := m.peers[k]; ok {
		if w == trace.NoRank {
			m.unresolved++
		}
		return w
	}
	w, ok := m.src.worldOf(comm, r, m.self)
	if !ok {
		m.unresolved++
	}
	m.peers[k] = w
	return w
}

// collectiveKinds maps CollectiveOp values to kinds.
var collectiveKinds = [...]trace.Kind{trace.Barrier, trace.Bcast, trace.Gather, trace.Gatherv,
	trace.Scatter, trace.Scatterv, trace.Allgather, trace.Allgatherv, trace.Alltoall, trace.Alltoallv,
	trace.Alltoallv, trace.Allreduce, trace.Reduce, trace.ReduceScatter, trace.Scan, trace.Exscan,
	trace.ReduceScatter}

// collective returns the model event of an MpiCollectiveEnd or a
// NonBlockingCollectiveComplete, the seq'th collective the rank called:
// its kind, communicator and root, the per-member volumes the model keeps
// (the action SimGrid replays) from the bytes Score-P counts (volumes),
// and a v-collective's count vectors (vcounts).
func (m *mapper) collective(e *Event, seq uint64) trace.Event {
	k := trace.Local
	if int(e.Op) < len(collectiveKinds) {
		k = collectiveKinds[e.Op]
	}
	ev := trace.NewEvent(k)
	c := m.comm(e.Comm)
	ev.Comm = c.id
	root := false
	if k.IsRooted() && e.Peer < undefined32-2 {
		ev.Partner = m.peer(e.Comm, e.Peer)
		root = ev.Partner == m.rank
	}
	me := -1
	if k == trace.Scan || k == trace.Exscan {
		me = m.rankIn(c)
	}
	if k != trace.Barrier {
		ev.SendBytes, ev.RecvBytes = scorep.Volumes(k, scorep.Counted{Sent: int64(e.Bytes), Recv: int64(e.Received), Root: root,
			Block: e.Op == opReduceScatterBlock, Me: me, N: c.size, InPlaceAware: m.src.inPlaceAware})
	}
	m.volumeAttrs(&ev, e)
	m.vcounts(&ev, e, c, seq)
	return ev
}

// interCollective reports whether collective record e is on an
// intercommunicator, which the model has none of (SimGrid's replay has
// no communicators): its call is then read as a deferred call, its time
// MPI time, and counted for a note. Its point-to-point messages are
// read, each end naming the other's world rank.
func (m *mapper) interCollective(e *Event) bool {
	if _, ok := m.src.arch.Defs.InterComms[e.Comm]; !ok {
		return false
	}
	m.interColls++
	m.call.deferred = true
	return true
}

// OTF2's CollectiveOps of MPI_Reduce_scatter_block and of the creation of
// a communicator, the first of the operations on handles (create,
// destroy, allocate...) that OTF2 numbers after the collectives.
const (
	opReduceScatterBlock = 16
	opCreateHandle       = 17
)

// rankIn returns the mapper's rank within communicator c, -1 if it is not
// a member.
func (m *mapper) rankIn(c modelComm) int {
	if c.id == trace.WorldComm {
		return int(m.rank)
	}
	for _, cm := range m.src.meta.Comms {
		if cm.ID == c.id {
			for i, r := range cm.Members {
				if r == m.rank {
					return i
				}
			}
		}
	}
	return -1
}

// callKinds names the kind of an MPI call that has no MPI record inside.
// The calls that create communicators are collective (a rank waits there
// for the others) but have no record a replay could use, and SimGrid's
// replay creates no communicator: their time is MPI time, not
// computation, as in the TI trace of the same run. So is a barrier
// without its collective record, whose members the archive does not give
// (Kairos' tracer writes none on a communicator that holds another MPI
// world's processes).
var callKinds = map[string]trace.Kind{
	"MPI_Init": trace.Init, "MPI_Init_thread": trace.Init, "MPI_Finalize": trace.Finalize,
	"MPI_Barrier": trace.Deferred, "MPI_Probe": trace.Deferred, "MPI_Iprobe": trace.Deferred,
	"MPI_Mprobe": trace.Deferred, "MPI_Improbe": trace.Deferred, "MPI_Cancel": trace.Deferred,
	"MPI_Comm_dup": trace.Deferred, "MPI_Comm_dup_with_info": trace.Deferred, "MPI_Comm_idup": trace.Deferred,
	"MPI_Comm_split": trace.Deferred, "MPI_Comm_split_type": trace.Deferred, "MPI_Comm_create": trace.Deferred,
	"MPI_Comm_create_group": trace.Deferred, "MPI_Cart_create": trace.Deferred, "MPI_Cart_sub": trace.Deferred,
	"MPI_Graph_create": trace.Deferred, "MPI_Dist_graph_create": trace.Deferred,
	"MPI_Dist_graph_create_adjacent": trace.Deferred, "MPI_Intercomm_create": trace.Deferred,
	"MPI_Intercomm_merge": trace.Deferred, "MPI_Comm_free": trace.CommFree,
}

// finish ends the current MPI call at tick t and queues its events.
func (m *mapper) finish(t uint64) {
	c := m.call
	m.finishSide(c)
	m.call = nil
	stamp := func(ev *trace.Event, region uint32) {
		ev.Enter, ev.Exit, ev.HasTime = m.ps(c.enter), m.ps(t), true
		ev.Region = region
		ev.CallSite = m.callSite(c.node)
	}
	if len(c.ops) == 2 && c.ops[0].Kind == trace.Send && c.ops[1].Kind == trace.Recv {
		c.ops = trace.SendRecvEvents(c.ops[:0], c.ops[0], c.ops[1])
	}
	first := m.out.base + len(m.out.ev) // the call's events share its time
	defer func() { trace.ShareCallTime(m.out.ev[first-m.out.base:], m.ps(c.enter), m.ps(t)) }()
	for i := range c.ops {
		ev := &c.ops[i]
		stamp(ev, m.user)
		named(ev, c.node) // an Isend already known to be cancelled
		// Held back: an Irecv without its sender, a non-blocking
		// collective's place (a local event) before it completes.
		pending := (ev.Kind == trace.Irecv || ev.Kind == trace.Local) && m.isPending(ev.Request, i)
		idx := m.out.push(*ev, pending)
		if pending {
			m.pendingOut.Put(ev.Request, heldOut{idx, c.node})
		}
		if ev.Kind == trace.Isend && m.scanning {
			m.isendAt.Put(ev.Request, heldOut{idx, c.node})
		}
	}
	m.pendingCall.Clear()
	// A test is, as Kairos' tracer writes it in TI, a wait of each
	// request it completes (so is a waitsome), and nothing for those it
	// does not: a time-independent trace has no action for them, and a
	// test of one could complete it in a replay, before the call that
	// completed it in the run, which then finds no request. The time of
	// one that completes nothing is MPI time, as a deferred call's.
	test := c.class.test
	// A wait that completes nothing (its requests all null) is MPI time
	// a replay gives none, as the run's TI trace leaves it out (PETSc
	// waits so; counted as computation, its time was replayed).
	emptyWait := c.class.wait
	switch {
	case test || c.class.waitsome || len(c.completed) == 1 && c.class.waitOne:
		for _, r := range c.completed { // a wait each, as the tracer writes them
			ev := trace.NewEvent(trace.Wait)
			ev.Request = r
			stamp(&ev, m.user)
			m.out.push(ev, false)
		}
	case len(c.completed) > 0:
		ev := trace.NewEvent(trace.Waitall)
		ev.Requests = append([]uint64{}, c.completed...)
		stamp(&ev, m.user)
		m.out.push(ev, false)
	}
	// MPI_Finalize is one whatever it completes: Kairos' tracer settles
	// there the requests a program left (a wait, a cancellation).
	if len(c.ops) == 0 && len(c.completed) == 0 || c.class.finalize {
		k := c.class.kind
		if k != trace.Finalize && (c.deferred || test || emptyWait) {
			k = trace.Deferred
		}
		ev := trace.NewEvent(k)
		region := m.user
		if k.NamedByRegion() {
			region = c.node
		}
		stamp(&ev, region)
		m.out.push(ev, false)
	}
}

func (m *mapper) isPending(req uint64, i int) bool {
	j, ok := m.pendingCall.Lookup(req)
	return ok && j == i
}

// flush releases every held-back event at the end of the location: none
// was completed. While scanning, those released earlier and never
// completed are counted too.
func (m *mapper) flush() {
	for _, h := range m.pendingOut.All() {
		q := m.out
		q.pending[h.idx-q.base] = false
		m.giveUp(&q.ev[h.idx-q.base])
		named(&q.ev[h.idx-q.base], h.node)
	}
	m.pendingOut.Clear()
	if m.scanning {
		for _, h := range m.released.All() { // released and never completed
			if h.coll {
				m.lateCollective++
			} else {
				m.lateIrecv++
			}
		}
		m.released.Clear()
	}
}

// release lets the held-back event at absolute queue index i go before
// its completion: filled from the index Open's scan built, or, where the
// scan found no completion (the request was never completed), left out
// (giveUp), counted as a defect. node is its call's (heldOut).
func (m *mapper) release(i int, node uint32) {
	q := m.out
	ev := &q.ev[i-q.base]
	defer named(ev, node)
	q.pending[i-q.base] = false
	o := m.reqOrd.Get(ev.Request)
	m.released.Put(ev.Request, held{ord: o, coll: ev.Kind != trace.Irecv})
	if m.scanning { // the scan counts what is never completed: at the end, its completion is not found
		m.idx.fixes = append(m.idx.fixes, keptFix{at: i, ord: o, node: node})
		return
	}
	if !m.idx.fill(ev, o) {
		m.giveUp(ev)
	}
}

// fill makes ev, a held-back event released before its completion, what
// the scan found of its request, started by record o, and reports
// whether the scan found its completion.
func (x *rankIndex) fill(ev *trace.Event, o uint64) bool {
	f, ok := x.late[o]
	switch {
	case !ok:
		return false
	case f.cancelled:
		voided(ev)
	case f.coll != nil:
		placeColl(ev, *f.coll)
	default:
		f.fillIrecv(ev)
	}
	return true
}

// voided makes the Isend or Irecv ev of a cancelled request what its call
// was: an MPI call that communicates nothing (a deferred call: its time
// is the call's, not computation, as in the TI trace).
func voided(ev *trace.Event) {
	v := trace.NewEvent(trace.Deferred)
	v.Enter, v.Exit, v.HasTime, v.Region, v.CallSite = ev.Enter, ev.Exit, ev.HasTime, ev.Region, ev.CallSite
	*ev = v
}

// giveUp makes an event held back for a completion that never comes what
// it can be without it, and counts it as a defect. An Irecv never
// completed (left pending, or cancelled without the completion that
// would say so) is left out as a cancelled one is, its tests with it: the
// archive does not say from whom or how much it would receive, and a
// replay would wait at the end for a message that never comes.
func (m *mapper) giveUp(ev *trace.Event) {
	if ev.Kind != trace.Irecv {
		m.lateCollective++
		return
	}
	voided(ev)
	m.lateIrecv++
}

// defects describes the rank's defects.
func (m *mapper) defects(rank int) []string {
	var d []string
	add := func(n int, what string) {
		if n > 0 {
			d = append(d, fmt.Sprintf("rank %d: %d %s", rank, n, what))
		}
	}
	add(len(m.stack), "Enter without Leave")
	add(m.unbalancedLeave, "Leave without Enter")
	add(m.mismatchedLeave, "Leave of another region than the innermost")
	add(m.unresolved, "communicator ranks not resolved to world ranks")
	add(m.orphanIrecv, "MpiIrecv without MpiIrecvRequest")
	add(m.lateIrecv, "Irecv never completed (left out)")
	add(m.lateCollective, "non-blocking collective never completed (left out)")
	add(m.badCounts, "v-collective count attributes that disagree with the record's totals (ignored)")
	return d
}

// rankReader streams one rank's model events. It implements trace.Reader.
type rankReader struct {
	lr  *LocationReader
	m   mapper
	q   outQueue
	cur trace.Event
	n   int // events returned
	err error
	eof bool
}

// Next advances to the next model event.
func (rd *rankReader) Next() bool {
	q := &rd.q
	for q.head >= len(q.ev) || q.pending[q.head] {
		if q.head < len(q.ev) && len(q.ev)-q.head > maxLookahead {
			req := q.ev[q.head].Request
			h, _ := rd.m.pendingOut.Take(req)
			node := h.node
			rd.m.release(q.base+q.head, node)
			continue
		}
		if rd.eof {
			if q.head < len(q.ev) {
				rd.m.flush()
				continue
			}
			return false
		}
		if !rd.lr.Next() {
			if rd.err = rd.lr.Err(); rd.err != nil {
				return false
			}
			rd.eof = true
			if rd.m.call != nil {
				rd.m.finish(rd.m.call.enter) // an MPI call cut off by the end
			}
			continue
		}
		rd.m.ord = rd.lr.Count()
		rd.m.step(rd.lr.Event())
		if rd.m.err != nil {
			rd.err = rd.m.err
			return false
		}
	}
	if q.head >= len(q.ev) {
		return false
	}
	rd.cur = q.ev[q.head]
	q.head++
	rd.n++
	if msg := rd.cur.Absurd(); msg != "" || rd.cur.RecvBytes < 0 {
		if msg == "" {
			msg = fmt.Sprintf("%s receiving %d bytes: expected 0 or more", rd.cur.Kind, rd.cur.RecvBytes)
		}
		// OTF2's sizes are unsigned: one beyond 2^63 bytes is corrupt.
		rd.err = fmt.Errorf("%s: location %d, event %d of the rank: %s", rd.lr.cf.path, rd.lr.loc, rd.n, msg)
		return false
	}
	switch {
	case q.head == len(q.ev):
		// Drained (the common case: an Irecv is pending only until its
		// call completes): start again at the front, so that the queue
		// holds the events of one look-ahead, not up to a thousand
		// returned ones (230 KB a rank of a stencil, 4,096 ranks a GB).
		q.base += q.head
		q.ev, q.pending, q.head = q.ev[:0], q.pending[:0], 0
	case q.head > 1024 && q.head*2 > len(q.ev):
		n := copy(q.ev, q.ev[q.head:])
		copy(q.pending, q.pending[q.head:])
		q.ev, q.pending = q.ev[:n], q.pending[:n]
		q.base += q.head
		q.head = 0
	}
	return true
}

// Event returns the current event.
func (rd *rankReader) Event() *trace.Event { return &rd.cur }

// Err returns the first error.
func (rd *rankReader) Err() error { return rd.err }

// Close closes the location's event file.
func (rd *rankReader) Close() error { return rd.lr.Close() }
