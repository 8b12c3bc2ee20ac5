package otf2

import (
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"strings"

	"kairos/trace"
)

// maxLookahead bounds the events a rank reader holds back while an Irecv
// waits for the MpiIrecv record that names its sender: past it the Irecv
// is released as from any source and counted as a defect.
const maxLookahead = 1 << 16

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
	node      uint32 // model region node of the call (user path + MPI name)
	enter     uint64
	ops       []trace.Event
	completed []uint64
	tested    []uint64
	nbc       bool // it calls, tests or completes a non-blocking collective
}

// outQueue is a rank's model events not yet returned; pending marks the
// Irecvs whose sender is not known yet.
type outQueue struct {
	ev      []trace.Event
	pending []bool
	head    int
	base    int // absolute index of ev[0]
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
	regions map[uint32]regionInfo
	peers   map[uint64]int32 // comm<<32 | rank -> world rank

	// The held-back events: Irecvs whose sender is not known yet and the
	// places of non-blocking collectives not completed yet, by request.
	pendingCall map[uint64]int // request -> index in call.ops
	pendingOut  map[uint64]int // request -> absolute queue index

	// nbcOpen holds the non-blocking collectives' requests not completed;
	// nbcUnplaced those not placed yet, in the order of their calls.
	nbcOpen     map[uint64]bool
	nbcUnplaced []uint64

	side *sideState // one-sided and I/O calls (onesided.go)

	unbalancedLeave, mismatchedLeave, unresolved, orphanIrecv, lateIrecv, lateCollective int
	err                                                                                  error
}

// regionInfo is what the mapper needs of a region definition.
type regionInfo struct {
	name string
	mpi  bool
}

// isMPIRegion returns region id's name and whether it is an MPI function
// (paradigm MPI, or an "MPI_" name where the paradigm is unknown).
func (m *mapper) isMPIRegion(id uint32) (string, bool) {
	if ri, ok := m.regions[id]; ok {
		return ri.name, ri.mpi
	}
	d := m.src.arch.Defs
	r, ok := d.Regions[id]
	ri := regionInfo{name: "region " + strconv.FormatUint(uint64(id), 10)}
	if ok {
		ri.name = d.Strings[r.Name]
		ri.mpi = r.Paradigm == ParadigmMPI || (r.Paradigm == 0 && strings.HasPrefix(ri.name, "MPI_"))
	}
	m.regions[id] = ri
	return ri.name, ri.mpi
}

func (m *mapper) ps(t uint64) trace.Time { return trace.Time(m.src.arch.Picoseconds(t)) }

// step processes one raw record.
func (m *mapper) step(e *Event) {
	switch e.Type {
	case EvEnter:
		m.enter(e)
	case EvLeave:
		m.leave(e)
	case EvNonBlockingCollectiveRequest:
		m.nbcOpen[e.Request] = true
		m.nbcUnplaced = append(m.nbcUnplaced, e.Request)
		if m.call != nil {
			m.call.nbc = true
		}
	case EvMpiSend, EvMpiIsend, EvMpiRecv, EvMpiIrecvRequest, EvMpiIrecv, EvMpiIsendComplete,
		EvMpiRequestTest, EvMpiCollectiveEnd, EvNonBlockingCollectiveComplete:
		implicit := m.call == nil
		if implicit {
			m.begin(RecordName(e.Type), m.user, e.Time)
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

// node returns the call-path node of OTF2 region id entered from parent.
func (m *mapper) node(id, parent uint32, name string) uint32 {
	k := [2]uint32{id, parent}
	n, ok := m.nodes[k]
	if !ok {
		n = m.src.meta.AddRegion(name, parent)
		m.nodes[k] = n
	}
	return n
}

// begin starts an MPI call named name at tick t, reusing the call storage.
func (m *mapper) begin(name string, node uint32, t uint64) {
	c := &m.callBuf
	*c = mpiCall{name: name, node: node, enter: t, ops: c.ops[:0], completed: c.completed[:0], tested: c.tested[:0]}
	m.call = c
	m.side.reset()
}

func (m *mapper) enter(e *Event) {
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
	name, isMPI := m.isMPIRegion(e.Region)
	if isMPI && m.src.mpi {
		m.begin(name, m.node(e.Region, m.user, name), e.Time)
		m.stack = append(m.stack, frame{region: e.Region, node: m.user, startCall: true})
		return
	}
	m.user = m.node(e.Region, m.user, name)
	m.stack = append(m.stack, frame{region: e.Region, node: m.user})
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
		m.pendingCall[e.Request] = len(c.ops)
		c.ops = append(c.ops, ev)
	case EvMpiIrecv:
		m.completeIrecv(e)
		c.completed = append(c.completed, e.Request)
	case EvMpiIsendComplete:
		c.completed = append(c.completed, e.Request)
	case EvMpiRequestTest:
		if m.nbcOpen[e.Request] { // a test of a non-blocking collective is none of the model's
			c.nbc = true
		} else {
			c.tested = append(c.tested, e.Request)
		}
	case EvMpiCollectiveEnd:
		m.placeCollectives(len(m.nbcUnplaced))
		c.ops = append(c.ops, m.collective(e))
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
		m.pendingCall[req] = len(c.ops)
		c.ops = append(c.ops, ev)
	}
	m.nbcUnplaced = m.nbcUnplaced[:copy(m.nbcUnplaced, m.nbcUnplaced[n:])]
}

// completeCollective reads the completion of a non-blocking collective:
// at its place, if held, else here, after the places of those called
// before it.
func (m *mapper) completeCollective(e *Event) {
	delete(m.nbcOpen, e.Request)
	m.call.nbc = true
	coll := m.collective(e)
	if m.fillHeld(e.Request, func(ev *trace.Event) {
		coll.Enter, coll.Exit, coll.HasTime, coll.Region, coll.CallSite = ev.Enter, ev.Exit, ev.HasTime, ev.Region, ev.CallSite
		*ev = coll
	}) {
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
	if i, ok := m.pendingCall[req]; ok {
		fill(&m.call.ops[i])
		delete(m.pendingCall, req)
		return true
	}
	if i, ok := m.pendingOut[req]; ok {
		q := m.out
		fill(&q.ev[i-q.base])
		q.pending[i-q.base] = false
		delete(m.pendingOut, req)
		return true
	}
	return false
}

// completeIrecv fills the Irecv that MpiIrecvRequest started with the
// sender, tag and size the completing MpiIrecv names.
func (m *mapper) completeIrecv(e *Event) {
	if !m.fillHeld(e.Request, func(ev *trace.Event) {
		ev.Partner = m.peer(e.Comm, e.Peer)
		ev.Tag, ev.Comm, ev.RecvBytes = int32(e.Tag), m.comm(e.Comm).id, int64(e.Bytes)
	}) {
		m.orphanIrecv++
	}
}

func (m *mapper) comm(id uint32) modelComm {
	if c, ok := m.src.comms[id]; ok {
		if c.self {
			return m.src.selfComm(id, m.rank)
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
// NonBlockingCollectiveComplete: its kind, communicator and root, and the
// per-member volumes the model keeps (the action SimGrid replays) from
// the bytes Score-P counts (volumes).
func (m *mapper) collective(e *Event) trace.Event {
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
		ev.SendBytes, ev.RecvBytes = volumes(k, counted{sent: int64(e.Bytes), recv: int64(e.Received), root: root,
			block: e.Op == opReduceScatterBlock, me: me, n: c.size, inPlaceAware: m.src.inPlaceAware})
	}
	spreadCounts(&ev, c.size)
	return ev
}

// opReduceScatterBlock is OTF2's CollectiveOp of MPI_Reduce_scatter_block.
const opReduceScatterBlock = 16

// counted is what a collective's record says of its bytes.
type counted struct {
	sent, recv int64 // the bytes Score-P counts
	me, n      int   // the member (-1 if unknown) of n
	root       bool  // the member is the root
	block      bool  // a ReduceScatter is a reduce_scatter_block
	// inPlaceAware: in place, the bytes leave the member's own block out
	// (Score-P 8 on).
	inPlaceAware bool
}

// volumes returns the model's send and receive bytes of a collective of
// kind k from what its record counted. Score-P counts a rooted
// collective's bytes at the root for every member, an all-to-all's,
// allreduce's or allgather's over all members at every member, and, since
// Score-P 8, leaves out in place the member's own block
// (scorep_mpi_coll_bytes_*), which the record does not flag: split tells
// the two apart where the sizes can.
func volumes(k trace.Kind, c counted) (int64, int64) {
	sent, recv, n := c.sent, c.recv, c.n
	blockOf := func(total int64) (int64, bool) { return split(total, n, c.inPlaceAware) }
	root := c.root
	switch k {
	case trace.Bcast, trace.Scatter: // the root sends n blocks (n-1 in place, keeping its own)
		if root && recv == 0 {
			b, _ := blockOf(sent)
			return b, b
		}
		return recv, recv
	case trace.Gather, trace.Reduce: // the root receives n blocks (n-1 in place, sending none)
		if root && sent == 0 {
			b, _ := blockOf(recv)
			return b, b
		}
		return sent, sent
	case trace.Gatherv: // at the root in place, its own block is the others' mean
		if root && sent == 0 && n > 1 {
			return recv / int64(n-1), recv + recv/int64(n-1)
		}
	case trace.Scatterv:
		if root && recv == 0 && n > 1 {
			return sent + sent/int64(n-1), sent / int64(n-1)
		}
	case trace.Allreduce, trace.Alltoall, trace.Allgather:
		b, _ := blockOf(sent)
		return b, b
	case trace.Allgatherv: // the received bytes stay the whole vector's
		own, inPlace := blockOf(sent)
		if inPlace {
			recv += own
		}
		return own, recv
	case trace.Scan, trace.Exscan:
		b := scanBlock(k, sent, recv, c.me, n)
		return b, b
	case trace.ReduceScatter: // the whole vector, as the model keeps it
		if c.block {
			b, _ := blockOf(sent)
			return 0, b * int64(n)
		}
		if own, inPlace := blockOf(recv); inPlace {
			sent += own
		}
		return 0, sent
	}
	return sent, recv
}

// split divides total, bytes Score-P counts over the n members of a
// collective, into one member's block: total is n blocks, or n-1 in place
// (reported as inPlace) where only n-1 divides it (a 2-member total is 2
// blocks). For an archive whose in-place counts leave the member's own
// block out (aware), where n and n-1 both divide total, the block of more
// trailing zero bits, up to 3, wins (data are whole elements of 1 to 8
// bytes, and the other split is off by the factor n/(n-1)), n blocks on a
// tie: an in-place allreduce of 1 to 3 doubles over 4 members is read as
// such, but an allgather of 3 ints is read as an in-place one of 4, and
// some totals remain both (an in-place allreduce of 8 doubles over 4
// members is another's of 6), read as n blocks.
func split(total int64, n int, aware bool) (block int64, inPlace bool) {
	if n <= 1 {
		return total, false
	}
	byN := total%int64(n) == 0
	byN1 := n > 2 && total%int64(n-1) == 0
	switch {
	case byN1 && !byN:
		return total / int64(n-1), true
	case byN1 && aware && roundness(total/int64(n-1)) > roundness(total/int64(n)):
		return total / int64(n-1), true
	}
	return total / int64(n), false
}

// roundness returns how many of 2, 4 and 8 divide v.
func roundness(v int64) int {
	if v == 0 {
		return 3
	}
	return min(bits.TrailingZeros64(uint64(v)), 3)
}

// spreadCounts gives a v-collective the per-member counts the model needs
// and OTF2 does not record (only totals): the totals spread evenly over
// the n members, so that the collective can be replayed (zeros where
// Score-P counts nothing, as at a gatherv's other members).
func spreadCounts(ev *trace.Event, n int) {
	switch ev.Kind {
	case trace.Alltoallv:
		ev.SendCounts, ev.RecvCounts = spread(ev.SendBytes, n), spread(ev.RecvBytes, n)
	case trace.Allgatherv, trace.ReduceScatter, trace.Gatherv:
		ev.RecvCounts = spread(ev.RecvBytes, n)
	case trace.Scatterv:
		ev.SendCounts = spread(ev.SendBytes, n)
	}
}

// spread divides total into n counts that differ by at most one byte.
func spread(total int64, n int) []int64 {
	if n <= 0 {
		return nil
	}
	c := make([]int64, n)
	for i := range c {
		c[i] = total / int64(n)
		if int64(i) < total%int64(n) {
			c[i]++
		}
	}
	return c
}

// scanBlock returns the block of a scan or exscan from the volumes Score-P
// records at member me of n: (n-me)*b sent and (me+1)*b received for a
// scan, (n-me-1)*b and me*b for an exscan and (since Score-P 8) for a
// scan in place, which the block then divides.
func scanBlock(k trace.Kind, sent, recv int64, me, n int) int64 {
	switch {
	case me < 0:
		return sent
	case k == trace.Scan && recv%int64(me+1) == 0 && sent == int64(n-me)*(recv/int64(me+1)):
		return recv / int64(me+1)
	case me > 0:
		return recv / int64(me)
	case n > 1:
		return sent / int64(n-1)
	}
	return 0
}

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
var callKinds = map[string]trace.Kind{
	"MPI_Init": trace.Init, "MPI_Init_thread": trace.Init, "MPI_Finalize": trace.Finalize,
	"MPI_Barrier": trace.Barrier, "MPI_Probe": trace.Deferred, "MPI_Iprobe": trace.Deferred,
	"MPI_Mprobe": trace.Deferred, "MPI_Improbe": trace.Deferred,
}

// finish ends the current MPI call at tick t and queues its events.
func (m *mapper) finish(t uint64) {
	c := m.call
	m.finishSide(c)
	m.call = nil
	stamp := func(ev *trace.Event, region uint32) {
		ev.Enter, ev.Exit, ev.HasTime = m.ps(c.enter), m.ps(t), true
		ev.Region = region
		ev.CallSite = m.src.callSite(c.node)
	}
	if len(c.ops) == 2 && c.ops[0].Kind == trace.Send && c.ops[1].Kind == trace.Recv {
		c.ops = mergeSendRecv(c.ops)
	}
	for i := range c.ops {
		ev := &c.ops[i]
		stamp(ev, m.user)
		// Held back: an Irecv without its sender, a non-blocking
		// collective's place (a local event) before it completes.
		pending := (ev.Kind == trace.Irecv || ev.Kind == trace.Local) && m.isPending(ev.Request, i)
		idx := m.out.push(*ev, pending)
		if pending {
			m.pendingOut[ev.Request] = idx
		}
	}
	clear(m.pendingCall)
	if len(c.completed) > 0 {
		ev := trace.NewEvent(trace.Waitall)
		isTest := strings.HasPrefix(c.name, "MPI_Test")
		switch {
		case len(c.completed) == 1 && isTest:
			ev.Kind, ev.Request = trace.Test, c.completed[0]
		case len(c.completed) == 1 && (c.name == "MPI_Wait" || c.name == "MPI_Waitany"):
			ev.Kind, ev.Request = trace.Wait, c.completed[0]
		default:
			ev.Requests = append([]uint64{}, c.completed...)
		}
		stamp(&ev, m.user)
		m.out.push(ev, false)
	}
	for _, r := range c.tested {
		ev := trace.NewEvent(trace.Test)
		ev.Request = r
		stamp(&ev, m.user)
		m.out.push(ev, false)
	}
	if len(c.ops) == 0 && len(c.completed) == 0 && len(c.tested) == 0 {
		k, ok := callKinds[c.name]
		switch {
		case c.nbc:
			k = trace.Deferred
		case !ok && strings.HasPrefix(c.name, "MPI_File_"):
			k = trace.File
		case !ok && strings.HasPrefix(c.name, "MPI_Win_"): // MPI_Win_sync, _attach...: MPI time, no replay's
			k = trace.Deferred
		case !ok:
			k = trace.Local
		}
		ev := trace.NewEvent(k)
		region := m.user
		if k == trace.Local || k == trace.Deferred {
			region = c.node
		}
		stamp(&ev, region)
		m.out.push(ev, false)
	}
}

// mergeSendRecv makes the MpiSend and MpiRecv of one call (MPI_Sendrecv)
// one SendRecv event: Partner the destination, Source the source, Tag the
// send's tag.
func mergeSendRecv(ops []trace.Event) []trace.Event {
	s, r := ops[0], ops[1]
	s.Kind, s.Source, s.RecvBytes = trace.SendRecv, r.Partner, r.RecvBytes
	ops[0] = s
	return ops[:1]
}

func (m *mapper) isPending(req uint64, i int) bool {
	j, ok := m.pendingCall[req]
	return ok && j == i
}

// flush releases every held-back event at the end of the location.
func (m *mapper) flush() {
	for req, i := range m.pendingOut {
		m.release(i)
		delete(m.pendingOut, req)
	}
}

// release gives up on the held-back event at absolute queue index i: an
// Irecv receives from any source with any tag; a non-blocking
// collective's place stays a local event.
func (m *mapper) release(i int) {
	q := m.out
	ev := &q.ev[i-q.base]
	q.pending[i-q.base] = false
	if ev.Kind != trace.Irecv {
		m.lateCollective++
		return
	}
	ev.Partner, ev.Tag = trace.AnySource, trace.AnyTag
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
	add(m.lateIrecv, "Irecv never completed (read as from any source)")
	add(m.lateCollective, "non-blocking collective never completed or past the look-ahead (left out)")
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
			delete(rd.m.pendingOut, req)
			rd.m.release(q.base + q.head)
			break
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
	if q.head > 1024 && q.head*2 > len(q.ev) {
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
