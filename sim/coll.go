package sim

import (
	"cmp"
	"fmt"
	"slices"
	"sort"

	"kairos/trace"
)

// collOp is one point-to-point operation of a collective algorithm.
type collOp struct {
	send  bool
	sr    bool  // a sendrecv: send bytes to peer and receive rbytes from peer
	peer  int32 // rank in the communicator
	bytes int64
	// rbytes is a sendrecv's receive size, as the algorithm posts it: in
	// SMPI's small-message mode it chooses the mailbox the receive waits
	// in (0 leaves the receive free to match in either, see
	// request.guessed).
	rbytes int64
	// blocking: SMPI posts it alone with Request::send or Request::recv
	// (a wait for that request only, not a waitall), so that the rank
	// holds its CPU while blocked (see simulation.hold).
	blocking bool
	// carry: the request outlives its phase (an irecv posted ahead of a
	// pipeline's wait, a send completed by a later waitall): it is kept
	// for a wait of a later phase instead of being waited for with this
	// phase's.
	carry bool
	// wait is not an operation but the phase's wait for carried
	// requests: waitOne and waitAllOne for the oldest carried with the
	// same ref (Request::wait, Request::waitall), waitCarried for all of
	// them (Request::waitall, with this phase's own).
	wait uint8
	// ref names a carried request (any number the algorithm chooses;
	// several may share one) for a later waitOne.
	ref int32
	// typed: the message is the collective's own buffer as SMPI posts it
	// (count and datatype of the call's send side for a send, of its
	// receive side for a receive, sizes exactly SMPI's), so that its
	// match is checked as a point-to-point one is (truncation, datatypes,
	// and small-message mode's comparisons; see request.typed). The
	// algorithms whose messages are packed, forwarded or cut set it not.
	typed bool
}

// Waits for carried requests (collOp.wait).
const (
	waitNone    uint8 = iota
	waitOne           // Request::wait on the oldest carried request
	waitAllOne        // Request::waitall on it alone (a waitany)
	waitCarried       // Request::waitall on every carried request
)

// collCall is a collective as one member sees it.
type collCall struct {
	n, me, root int32
	tag         int32
	e           *trace.Event
	ssize       int64 // send datatype size
	rsize       int64
	stype       trace.Datatype // the datatypes of typed sends and receives (collOp.typed)
	rtype       trace.Datatype
	steps       []collOp   // scratch for tree algorithms: one operation per phase
	phases      [][]collOp // scratch for algorithms with several per phase
	shared      [][]collOp // the member's phases of a cached schedule (read-only)
	override    int64      // if positive, the message size of a sub-collective
	inOrder     bool       // its requests are waited for one by one, in order
	tmpNull     bool       // a SimGrid replay temporary buffer is still null (growTmpBuffers)
	tmpSendNull bool       // the temporary send buffer is
	tmpRecvNull bool       // the temporary receive buffer is
	schedules   schedules
}

// schedules holds the operations of collectives whose members' messages
// depend on one another's (computed for all members at once, shared by
// them), by algorithm and sizes.
type schedules map[scheduleKey]scheduled

// scheduled is a schedule and the count vector it was computed for (nil
// when the key holds all its sizes).
type scheduled struct {
	vec []int64
	all schedule
}

// schedule is a collective's operations for every member, phase by phase.
type schedule [][][]collOp

// scheduleKey identifies a schedule: the algorithm, the number of members
// and the sizes it depends on (a hash of them for a count vector).
type scheduleKey struct {
	algo         string
	n            int32
	count        int64
	ssize, rsize int64
	rbytes       int64 // a receive size the schedule's receives depend on
}

// maxSchedules bounds the schedules kept: a trace of many different sizes
// computes them again rather than growing memory.
const maxSchedules = 8

// useSchedule sets c.shared to member m's phases of the schedule key, for
// the count vector vec if the schedule depends on one, computing every
// member's with build if needed. It is for phase 0: later phases read
// c.shared (sharedPhase).
func (c *collCall) useSchedule(m int32, key scheduleKey, vec []int64, build func() schedule) {
	e, ok := c.schedules[key]
	if !ok || !slices.Equal(e.vec, vec) {
		if len(c.schedules) >= maxSchedules {
			clear(c.schedules)
		}
		e = scheduled{vec: slices.Clone(vec), all: build()}
		c.schedules[key] = e
	}
	c.shared = e.all[m]
}

// sharedPhase appends phase p of c.shared, its peers shifted by root (the
// schedule's ranks are relative to it).
func (c *collCall) sharedPhase(p int, ops []collOp, root int32) ([]collOp, bool) {
	if p >= len(c.shared) {
		return ops, false
	}
	for _, op := range c.shared[p] {
		op.peer = (op.peer + root) % c.n
		ops = append(ops, op)
	}
	return ops, true
}

// vecHash is a hash of a count vector, for a schedule key.
func vecHash(vec []int64) int64 {
	h := uint64(14695981039346656037)
	for _, x := range vec {
		h = (h ^ uint64(x)) * 1099511628211
	}
	return int64(h)
}

// algorithm returns the operations of phase p of a collective for one
// member: they are all posted, then all waited for (a detached send
// completes at once). ok is false when there is no phase p.
type algorithm func(c *collCall, p int, ops []collOp) (out []collOp, ok bool)

// collState is a member's progress through a collective.
type collState struct {
	call  collCall
	parts []part
	part  int
	phase int
	world []int32 // communicator rank -> world rank; nil for the world

	ops     []collOp // the operations of the phase being posted
	opIdx   int      // the next one to post
	srHalf  bool     // the send of ops[opIdx] (a sendrecv) is posted
	posting bool     // a phase is in progress
	single  bool     // the phase is one blocking operation (collOp.blocking)

	reqs    []*request // the phase's requests, to wait for in order (collCall.inOrder)
	waitIdx int        // the next one
	carried []carried  // requests posted with collOp.carry, oldest first
}

// reset empties st for a new collective, its scratch slices keeping their
// room from one collective to the next (the call's steps and phases
// included). Field by field: a composite literal of the whole state is
// built aside then copied, with a write barrier per pointer while the
// collector runs (TestCollStateReset checks that every field is reset).
func (st *collState) reset() {
	st.parts, st.ops, st.reqs, st.carried = st.parts[:0], st.ops[:0], st.reqs[:0], st.carried[:0]
	st.part, st.phase, st.world, st.opIdx, st.waitIdx = 0, 0, nil, 0, 0
	st.srHalf, st.posting, st.single = false, false, false
	c := &st.call
	c.n, c.me, c.root, c.tag, c.e, c.override = 0, 0, 0, 0, nil, 0
	c.ssize, c.rsize, c.stype, c.rtype = 0, 0, 0, 0
	c.steps, c.phases, c.shared, c.schedules = c.steps[:0], c.phases[:0], nil, nil
	c.inOrder, c.tmpNull, c.tmpSendNull, c.tmpRecvNull = false, false, false, false
}

// carried is a request kept for a later phase's wait, and its name.
type carried struct {
	q   *request
	ref int32
}

// Collective tags, distinct from user tags (which are >= 0) and from one
// another, as SMPI's COLL_TAG_* values.
const (
	tagBarrier int32 = -(iota + 100)
	tagBcast
	tagReduce
	tagAlltoall
	tagAlltoallv
	tagGather
	tagGatherv
	tagScatter
	tagScatterv
	tagAllgather
	tagAllgatherv
	tagScan
	tagAllreduce
	tagReduceScatter
)

// tagText names a message's tag: a user tag, or the collective whose
// algorithm sent it.
func tagText(tag int32) string {
	if k := tagBarrier - tag; k >= 0 {
		name := collTagNames[int(k)%len(collTagNames)]
		if name[0] == 'a' {
			return "of an " + name
		}
		return "of a " + name
	}
	return fmt.Sprintf("tag %d", tag)
}

// collTagNames are the collectives of the tags from tagBarrier down.
var collTagNames = [...]string{"barrier", "bcast", "reduce", "alltoall", "alltoallv", "gather", "gatherv", "scatter",
	"scatterv", "allgather", "allgatherv", "scan", "allreduce", "reduce_scatter"}

// collNames maps each collective kind to its SimGrid configuration name.
var collNames = map[trace.Kind]string{
	trace.Barrier: "barrier", trace.Bcast: "bcast", trace.Reduce: "reduce", trace.Allreduce: "allreduce",
	trace.Alltoall: "alltoall", trace.Alltoallv: "alltoallv", trace.Gather: "gather", trace.Gatherv: "gatherv",
	trace.Scatter: "scatter", trace.Scatterv: "scatterv", trace.Allgather: "allgather",
	trace.Allgatherv: "allgatherv", trace.ReduceScatter: "reduce_scatter", trace.Scan: "scan", trace.Exscan: "exscan",
}

// collective runs a collective action for r.
func (s *simulation) collective(r *rank, e *trace.Event) bool {
	st := &r.coll
	if r.step == 0 {
		if e.Kind == trace.CommSplit || e.Kind == trace.CommDup || e.Kind == trace.CommCreate {
			return true // SimGrid's replay does not replay communicator creation
		}
		if !s.resumed(r) {
			return false // its temporary buffers are taken in its next turn
		}
		m, _, err := s.startColl(&r.memos, st, r.id, e)
		if err != nil {
			s.fail(r, "%v", err)
			return false
		}
		r.memo = m
		r.step = 1
	}
	for r.step == 1 {
		if !st.posting {
			if !s.memoNextPhase(r.memo, st, e) {
				r.step = 2
				break
			}
			st.opIdx, st.srHalf, st.posting = 0, false, true
			st.single = len(st.ops) == 1 && st.ops[0].blocking
		}
		// Each request is posted by a simcall of its own, then all are
		// waited for (SMPI's waitall: a waitany per request).
		for st.opIdx < len(st.ops) {
			op := st.ops[st.opIdx]
			if op.wait != waitNone {
				s.waitCarriedReqs(r, st, op)
				st.opIdx++
				continue
			}
			peer := op.peer
			if st.world != nil {
				peer = st.world[peer]
			}
			if !st.srHalf && (op.send || op.sr) && !s.overhead(r, s.sendOverhead(r, !op.blocking, op.bytes)) {
				return false
			}
			size := op.bytes
			if st.srHalf {
				size = op.rbytes
			}
			if !s.startTurn(r, (op.send || op.sr) && !st.srHalf, peer, st.call.tag, 0, size) {
				return false
			}
			r.slept = false
			if st.srHalf {
				q := s.newRequest(r, false, peer, st.call.tag, size)
				q.guessed = size == 0
				s.post(q)
				s.addWait(r, q)
				st.srHalf = false
				st.opIdx++
				continue
			}
			q := s.newRequest(r, op.send || op.sr, peer, st.call.tag, op.bytes)
			// An algorithm gives the sizes of its receives where
			// SMPI's small-message mode needs them (see guessed).
			q.guessed = !q.send && op.bytes == 0
			if op.typed {
				q.typed, q.dtype = true, st.call.rtype
				if q.send {
					q.dtype = st.call.stype
				}
			}
			s.post(q)
			if op.carry {
				q.refs++ // held until a later phase waits for it
				st.carried = append(st.carried, carried{q, op.ref})
			} else if st.call.inOrder {
				q.refs++ // held until its turn to be waited for
				st.reqs = append(st.reqs, q)
			} else {
				s.addWait(r, q)
			}
			if op.sr {
				st.srHalf = true
				continue
			}
			st.opIdx++
		}
		if !s.waitPhase(r, st) {
			return false
		}
		st.posting = false
		if cap(st.ops) > smallOps && !r.memo.replaying {
			s.giveOps(st.ops)
			st.ops = nil
		}
	}
	if r.step >= 2 && e.Kind.HasReduction() && e.Compute != 0 {
		// SimGrid runs the reduction's flops even with
		// smpi/simulate-computation:no.
		return s.compute(r, e.Compute, 2)
	}
	return true
}

// nextPhase sets st.ops to the operations of the collective's next phase
// (of e, the action), and reports whether there is one.
func (s *simulation) nextPhase(st *collState, e *trace.Event) bool {
	for st.part < len(st.parts) {
		pt := &st.parts[st.part]
		if st.phase == 0 {
			st.call.root, st.call.override = pt.root, pt.override
			st.call.e, st.call.ssize, st.call.rsize = e, s.size(e.SendType), s.size(e.RecvType)
			if pt.call != nil {
				st.call.e, st.call.ssize, st.call.rsize = &pt.call.e, pt.call.ssize, pt.call.rsize
			}
			st.call.stype, st.call.rtype = s.collTypes(st.call.e)
		}
		if st.ops == nil {
			st.ops = s.takeOps()
		}
		ops, ok := pt.run(&st.call, st.phase, st.ops[:0])
		st.ops = ops
		if ok {
			st.phase++
			return true
		}
		st.part++
		st.phase = 0
	}
	return false
}

// collTypes returns the datatypes SMPI's replay gives collective e's send
// and receive buffers: one for both where the action names one (in
// SendType, or RecvType for reduce_scatter).
func (s *simulation) collTypes(e *trace.Event) (send, recv trace.Datatype) {
	switch e.Kind {
	case trace.Bcast, trace.Reduce, trace.Allreduce, trace.Scan, trace.Exscan:
		t := s.sendType(e)
		return t, t
	case trace.ReduceScatter:
		t := s.recvType(e)
		return t, t
	}
	return s.sendType(e), s.recvType(e)
}

// waitCarriedReqs adds carried requests to the phase's wait: the oldest
// named w.ref (a Request::wait on it alone for waitOne, a waitall of it
// alone for waitAllOne) or all.
func (s *simulation) waitCarriedReqs(r *rank, st *collState, w collOp) {
	if w.wait != waitCarried {
		st.single = w.wait == waitOne
		for i, c := range st.carried {
			if c.ref == w.ref {
				s.addWait(r, c.q)
				s.unref(c.q)
				st.carried = slices.Delete(st.carried, i, i+1)
				return
			}
		}
		return
	}
	for _, c := range st.carried {
		s.addWait(r, c.q)
		s.unref(c.q)
	}
	clear(st.carried)
	st.carried = st.carried[:0]
}

// waitPhase waits for the requests of a collective's phase: all at once
// (SMPI's waitall), or one after the other in the order they were posted
// (SMPI's scan and exscan without a reduction operation, with
// Request::wait). It reports whether all are complete.
func (s *simulation) waitPhase(r *rank, st *collState) bool {
	for {
		r.single = st.single || st.call.inOrder
		if !s.waitStep(r) {
			return false
		}
		if st.waitIdx == len(st.reqs) {
			st.reqs, st.waitIdx = st.reqs[:0], 0
			return true
		}
		q := st.reqs[st.waitIdx]
		st.reqs[st.waitIdx] = nil
		st.waitIdx++
		s.addWait(r, q)
		s.unref(q)
	}
}

// A rank keeps the operations of its phases up to smallOps; larger ones
// (a root's receives from every member) go back to a pool of at most
// maxFreeOps, which the next rank to post a phase takes. A rank then
// does not grow them again at every collective, and memory stays bounded
// by the phases being posted at once, not by ranks times members.
const (
	smallOps   = 256
	maxFreeOps = 8
)

// takeOps returns a slice of operations from the pool, nil if it is
// empty.
func (s *simulation) takeOps() []collOp {
	n := len(s.freeOps)
	if n == 0 {
		return nil
	}
	ops := s.freeOps[n-1]
	s.freeOps = s.freeOps[:n-1]
	return ops[:0]
}

// giveOps returns ops to the pool, unless it is full.
func (s *simulation) giveOps(ops []collOp) {
	if len(s.freeOps) < maxFreeOps {
		s.freeOps = append(s.freeOps, ops[:0])
	}
}

// setupColl starts st, the progress of rank id through collective e.
func (s *simulation) setupColl(st *collState, id int32, e *trace.Event) error {
	st.reset()
	n := int32(s.nranks)
	me := id
	if e.Comm != trace.WorldComm {
		members := s.meta.Members(e.Comm, s.nranks)
		if members == nil {
			return fmt.Errorf("%s on undefined communicator %d", e.Kind, e.Comm)
		}
		st.world = members
		n = int32(len(members))
		me = -1
		for i, w := range members {
			if w == id {
				me = int32(i)
			}
		}
		if me < 0 {
			return fmt.Errorf("%s on communicator %d, which rank %d is not a member of", e.Kind, e.Comm, id)
		}
	}
	root, err := collRoot(e, st.world, n)
	if err != nil {
		return err
	}
	c := &st.call
	c.n, c.me, c.root, c.e, c.schedules = n, me, root, e, s.schedules
	c.ssize, c.rsize = s.size(e.SendType), s.size(e.RecvType)
	s.growTmpBuffers(&st.call)
	parts, tag, err := s.expand(st.parts, e.Kind, &st.call, 0)
	if err != nil {
		return err
	}
	st.parts = parts
	st.call.tag = commTag(tag, e.Comm)
	st.call.root, st.call.override = root, 0
	return nil
}

// commTag is the tag of a collective's messages on communicator comm:
// SMPI's on MPI_COMM_WORLD (a TI trace's only one), one of their own on
// each other, as MPI keeps each communicator's messages apart: an OTF2
// archive's collectives on MPI_COMM_WORLD and on a duplicate of it, which
// ranks may interleave in different orders, received each other's
// messages.
func commTag(tag int32, comm uint32) int32 {
	if comm == trace.WorldComm {
		return tag
	}
	return tag - int32(len(collTagNames))*int32(comm%(1<<26))
}

// collRoot returns the root of e's collective as a rank of its
// communicator, whose members (world ranks) are world, nil for
// MPI_COMM_WORLD of n ranks: the model names roots by world rank.
func collRoot(e *trace.Event, world []int32, n int32) (int32, error) {
	if !e.Kind.IsRooted() || e.Partner == trace.NoRank {
		return 0, nil
	}
	if world == nil {
		if e.Partner < 0 || e.Partner >= n {
			return 0, fmt.Errorf("%s: root %d out of range [0,%d)", e.Kind, e.Partner, n)
		}
		return e.Partner, nil
	}
	for i, w := range world {
		if w == e.Partner {
			return int32(i), nil
		}
	}
	return 0, fmt.Errorf("%s: root (world rank %d) is not a member of communicator %d", e.Kind, e.Partner, e.Comm)
}

// part is one algorithm of a collective, run with its own root and
// message size (override, 0 for the collective's own): the collective's
// algorithm, or one of the collectives it is made of.
type part struct {
	run      algorithm
	root     int32
	override int64
	call     *subCall // nil: the collective's own call
}

// subCall is the call of a collective another calls with buffers of its
// own (colls::alltoall, colls::allgather with the caller's counts): the
// action as the callee sees it and its datatype sizes.
type subCall struct {
	e            trace.Event
	ssize, rsize int64
}

// subColl is a piece of a composite algorithm: a fixed algorithm, or (run
// nil) collective kind run with the algorithm configured for it, as
// SimGrid's algorithms call colls::reduce or colls::bcast; with root
// and message size bytes (0: the caller's), or its own call.
type subColl struct {
	run   algorithm
	kind  trace.Kind
	root  int32
	bytes int64
	call  *subCall
}

// sameTypeCall is the call of a sub-collective of kind that sends and
// receives bytes in the caller's send datatype (size ext).
func sameTypeCall(c *collCall, kind trace.Kind, bytes, ext int64) *subCall {
	e := trace.Event{Kind: kind, Comm: c.e.Comm, SendBytes: bytes, RecvBytes: bytes, SendType: c.e.SendType, RecvType: c.e.SendType}
	return &subCall{e: e, ssize: ext, rsize: ext}
}

// composites are the algorithms made of other collectives, by
// "collective:algorithm".
var composites = map[string]func(c *collCall) []subColl{}

// refused are the algorithms SimGrid 3.32's replay cannot run, by
// "collective:algorithm", and why: Kairos names them and refuses them.
var refused = map[string]string{
	// Its SMP set-up (Comm::init_smp) under replay ends in "free():
	// invalid pointer" on every rank count and size tried (2 to 8
	// ranks, 1 to 100,000 bytes).
	"bcast:mvapich2_knomial_intra_node": "SimGrid 3.32's replay crashes on it (an invalid free in its SMP set-up)",
	// The other SMP-aware algorithms end the same way, even with one
	// rank per host (8 ranks on 8 hosts, TestRefusedAlgorithmsFailInSimGrid).
	"allgather:loosely_lr":                smpCrash,
	"allgather:smp_simple":                smpCrash,
	"allgather:mvapich2_smp":              smpCrash,
	"allreduce:smp_binomial":              smpCrash,
	"allreduce:smp_binomial_pipeline":     smpCrash,
	"allreduce:smp_rdb":                   smpCrash,
	"allreduce:smp_rsag":                  smpCrash,
	"allreduce:smp_rsag_lr":               smpCrash,
	"allreduce:smp_rsag_rab":              smpCrash,
	"allreduce:mvapich2_two_level":        smpCrash,
	"barrier:mpich_smp":                   smpCrash,
	"bcast:mvapich2_inter_node":           smpCrash,
	"bcast:mvapich2_intra_node":           smpCrash,
	"gather:mvapich2_two_level":           smpCrash,
	"reduce:mvapich2_two_level":           smpCrash,
	"scatter:mvapich2_two_level_binomial": smpCrash,
	"scatter:mvapich2_two_level_direct":   smpCrash,
	// Rabenseifner's original code reads out of its buffers under replay.
	"reduce:rab":    "SimGrid 3.32's replay crashes on it (an access violation)",
	"allreduce:rab": "SimGrid 3.32's replay crashes on it (an access violation)",
	// The arrival-pattern algorithms abort under replay.
	"bcast:arrival_pattern_aware":      "SimGrid 3.32's replay aborts on it",
	"bcast:arrival_pattern_aware_wait": "SimGrid 3.32's replay aborts on it",
	"bcast:arrival_scatter":            "SimGrid 3.32's replay aborts on it",
	"reduce:arrival_pattern_aware":     "SimGrid 3.32's replay aborts on it (an invalid free)",
	// One-sided communication in a collective.
	"alltoall:pair_rma": "SimGrid 3.32's replay crashes on it (a segmentation fault)",
}

// smpCrash is why SMP-aware algorithms are refused.
const smpCrash = "SimGrid 3.32's replay crashes on it (an invalid free or an abort in its SMP set-up)"

// Refused lists the algorithms Kairos knows and refuses, as
// "collective:algorithm", sorted.
func Refused() []string {
	names := make([]string, 0, len(refused))
	for k := range refused {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// configured returns the algorithm smpi/<coll> or smpi/coll-selector
// chose for kind ("" for SimGrid's default).
func (s *simulation) configured(k trace.Kind) string {
	e := &s.algos[k]
	if !e.configuredSet {
		e.configured, e.configuredSet = s.cfg.Colls[collNames[k]], true
		if e.configured == "" {
			e.configured = s.cfg.Selector
		}
	}
	return e.configured
}

// algoEntry is a collective kind's configured algorithm, and the tables'
// entries of the last algorithm expanded for it (algo): why it is
// refused, if it is, and its composite's pieces, if it is one.
type algoEntry struct {
	configured    string
	configuredSet bool
	algo          string
	set           bool
	why           string
	refused       bool
	composite     func(c *collCall) []subColl
	pick          pickMemo
}

// collAlgo returns the tables' entries of algorithm algo of kind k.
func (s *simulation) collAlgo(k trace.Kind, algo string) *algoEntry {
	e := &s.algos[k]
	if !e.set || e.algo != algo {
		key := collNames[k] + ":" + algo
		e.algo, e.set = algo, true
		e.why, e.refused = refused[key]
		e.composite = composites[key]
	}
	return e
}

// expand appends to parts those of collective k as c describes it (its
// root and message size), with the algorithm configured for k, composite
// algorithms replaced by their pieces, and returns them with k's tag.
func (s *simulation) expand(parts []part, k trace.Kind, c *collCall, depth int) ([]part, int32, error) {
	if depth > 8 {
		return nil, 0, fmt.Errorf("%s: collective algorithms nested too deep", k)
	}
	algo := s.configured(k)
	picked := algo == "ompi"
	if picked {
		algo = ompiAlgorithm(k, c)
		if algo != "" && !HasAlgorithm(collNames[k], algo) {
			return nil, 0, fmt.Errorf("%s of %d bytes on %d ranks: Open MPI's rules (smpi/coll-selector:ompi) pick SimGrid's %s, which Kairos does not implement yet", k, collBytes(c), c.n, algo)
		}
	}
	entry := s.collAlgo(k, algo)
	if why := entry.why; entry.refused {
		if picked {
			return nil, 0, fmt.Errorf("%s of %d bytes on %d ranks: Open MPI's rules (smpi/coll-selector:ompi) pick %s, which is refused: %s", k, collBytes(c), c.n, algo, why)
		}
		return nil, 0, fmt.Errorf("%s: %s is refused: %s", k, algo, why)
	}
	if algo == "ompi_ring_segmented" && collBytes(c) < max(c.ssize, 1) {
		// Open MPI divides by its segment's count, 0 here: SimGrid 3.32
		// dies of SIGFPE.
		return nil, 0, fmt.Errorf("%s: ompi_ring_segmented of 0 elements is refused: SimGrid 3.32 crashes on it (division by zero)", k)
	}
	f := entry.composite
	if f == nil {
		algos, tag, err := selectAlgorithm(k, algo, c, &s.algos[k].pick)
		for _, a := range algos {
			parts = append(parts, part{a, c.root, c.override, nil})
		}
		return parts, tag, err
	}
	_, tag, err := selectAlgorithm(k, algo, c, &s.algos[k].pick) // k's tag and algo's checks (its table entry is nil)
	if err != nil {
		return nil, 0, err
	}
	root, override := c.root, c.override
	for _, sc := range f(c) {
		bytes := cmp.Or(sc.bytes, override)
		if sc.run != nil {
			parts = append(parts, part{sc.run, sc.root, bytes, nil})
			continue
		}
		c.root, c.override = sc.root, bytes
		from := len(parts)
		if sc.call != nil {
			parts, err = s.expandCall(parts, sc, c, depth)
		} else {
			parts, _, err = s.expand(parts, sc.kind, c, depth+1)
		}
		for i := from; i < len(parts) && sc.call != nil; i++ {
			if parts[i].call == nil {
				parts[i].call = sc.call
			}
		}
		c.root, c.override = root, override
		if err != nil {
			return nil, 0, err
		}
	}
	return parts, tag, nil
}

// expandCall expands sub-collective sc, which has a call of its own: c
// is the callee's call while its algorithm is chosen.
func (s *simulation) expandCall(parts []part, sc subColl, c *collCall, depth int) ([]part, error) {
	e, ssize, rsize, override := c.e, c.ssize, c.rsize, c.override
	c.e, c.ssize, c.rsize, c.override = &sc.call.e, sc.call.ssize, sc.call.rsize, 0
	parts, _, err := s.expand(parts, sc.kind, c, depth+1)
	c.e, c.ssize, c.rsize, c.override = e, ssize, rsize, override
	return parts, err
}

// vecOK checks that a v-collective carries one count per member.
func vecOK(k trace.Kind, v []int64, n int32) error {
	if int32(len(v)) != n {
		return fmt.Errorf("%s: %d counts for %d members", k, len(v), n)
	}
	return nil
}

// rootVecOK is vecOK for the counts MPI reads at the root alone (a
// gatherv's receive counts, a scatterv's send counts): a member that is
// not the root may have none, as sst-dumpi records them.
func rootVecOK(k trace.Kind, v []int64, c *collCall) error {
	if c.me != c.root && len(v) == 0 {
		return nil
	}
	return vecOK(k, v, c.n)
}

// selectAlgorithm returns the parts of the algorithm chosen for kind
// (SimGrid's default selector when algo is "" or "default"), looked up
// through m, kind's memo.
func selectAlgorithm(k trace.Kind, algo string, c *collCall, m *pickMemo) ([]algorithm, int32, error) {
	e := c.e
	if algo == "default" {
		algo = ""
	}
	switch k {
	case trace.Barrier:
		return pick(m, barrierAlgos, algo, "ompi_basic_linear", tagBarrier)
	case trace.Bcast:
		if algo == "ompi_split_bintree" && splitBintreeFallback(c) {
			// Halves under one segment go to SMP_linear, on which SimGrid
			// 3.32's replay crashes (an invalid free in its SMP set-up).
			return nil, 0, fmt.Errorf("%s: ompi_split_bintree of %d bytes is refused: below two segments it falls back to SMP_linear, on which SimGrid 3.32's replay crashes", k, collBytes(c))
		}
		if algo == "ompi_pipeline" && c.ssize > 0 && collBytes(c)/c.ssize == 0 {
			// Its segment's count is 0, and it divides by it: SimGrid
			// 3.32 dies of SIGFPE.
			return nil, 0, fmt.Errorf("%s: ompi_pipeline of 0 elements is refused: SimGrid 3.32 crashes on it (division by zero)", k)
		}
		return pick(m, bcastAlgos, algo, "binomial_tree", tagBcast)
	case trace.Reduce:
		if algo == "scatter_gather" && c.ssize > 0 && c.n&(c.n-1) != 0 {
			// The branch that pads the count to the size sends more
			// than it receives on a size that is not a power of two:
			// SimGrid 3.32 aborts (MPI_ERR_TRUNCATE).
			if count := collBytes(c) / c.ssize; count > 0 && count < int64(c.n) {
				return nil, 0, fmt.Errorf("%s: scatter_gather with fewer elements (%d) than ranks (%d), not a power of two, is refused: SimGrid 3.32 aborts (MPI_ERR_TRUNCATE)", k, count, c.n)
			}
		}
		if c.ssize > 0 && collBytes(c)/c.ssize == 0 && ompiGenericReduce[algo] {
			// Open MPI's generic reduction divides by its segment's
			// count: SimGrid 3.32 dies of SIGFPE on 0 elements.
			return nil, 0, fmt.Errorf("%s: %s of 0 elements is refused: SimGrid 3.32 crashes on it (division by zero)", k, algo)
		}
		return pick(m, reduceAlgos, algo, "default", tagReduce)
	case trace.Allreduce:
		if err := pow2(k, algo, c.n); err != nil {
			return nil, 0, err
		}
		return pick(m, allreduceAlgos, algo, "default", tagAllreduce)
	case trace.Alltoall:
		if algo == "" {
			algo = ompiAlltoall.pick(c.n, e.SendBytes)
		}
		if err := pow2(k, algo, c.n); err != nil {
			return nil, 0, err
		}
		if err := alltoallTruncates(k, algo, c); err != nil {
			return nil, 0, err
		}
		return pick(m, alltoallAlgos, algo, "", tagAlltoall)
	case trace.Alltoallv:
		if err := vecOK(k, e.SendCounts, c.n); err != nil {
			return nil, 0, err
		}
		if err := vecOK(k, e.RecvCounts, c.n); err != nil {
			return nil, 0, err
		}
		if err := pow2(k, algo, c.n); err != nil {
			return nil, 0, err
		}
		return pick(m, alltoallvAlgos, algo, "default", tagAlltoallv)
	case trace.Gather:
		return pick(m, gatherAlgos, algo, "default", tagGather)
	case trace.Gatherv:
		if err := rootVecOK(k, e.RecvCounts, c); err != nil {
			return nil, 0, err
		}
		return []algorithm{gatherLinear}, tagGatherv, nil
	case trace.Scatter:
		return pick(m, scatterAlgos, algo, "default", tagScatter)
	case trace.Scatterv:
		if err := rootVecOK(k, e.SendCounts, c); err != nil {
			return nil, 0, err
		}
		return []algorithm{scattervLinear}, tagScatterv, nil
	case trace.Allgather:
		if err := pow2(k, algo, c.n); err != nil {
			return nil, 0, err
		}
		if err := meshRefused(k, algo, c.n); err != nil {
			return nil, 0, err
		}
		if err := allgatherTruncates(k, algo, c); err != nil {
			return nil, 0, err
		}
		return pick(m, allgatherAlgos, algo, "default", tagAllgather)
	case trace.Allgatherv:
		if err := vecOK(k, e.RecvCounts, c.n); err != nil {
			return nil, 0, err
		}
		if err := pow2(k, algo, c.n); err != nil {
			return nil, 0, err
		}
		return pick(m, allgathervAlgos, algo, "default", tagAllgatherv)
	case trace.ReduceScatter:
		if err := vecOK(k, e.RecvCounts, c.n); err != nil {
			return nil, 0, err
		}
		if algo == "mpich_noncomm" && (c.n&(c.n-1) != 0 || !regular(e.RecvCounts)) {
			return nil, 0, fmt.Errorf("%s: mpich_noncomm needs a power-of-two number of ranks and equal counts (SimGrid aborts too)", k)
		}
		if algo == "" && !regular(e.RecvCounts) {
			// SimGrid's default falls back to reduce_scatter__mpich,
			// which picks pair above 524288 elements (MPI_OP_NULL is
			// commutative) and recursive doubling below.
			total := int64(0)
			for _, x := range e.RecvCounts {
				total += x
			}
			if c.rsize > 0 {
				total /= c.rsize
			}
			algo = "mpich_pair"
			if total <= 524288 {
				algo = "mpich_rdb"
			}
		}
		return pick(m, reduceScatterAlgos, algo, "default", tagReduceScatter)
	case trace.Scan, trace.Exscan:
		c.inOrder = true
		return []algorithm{scanLinear}, tagScan, nil
	}
	return nil, 0, fmt.Errorf("no algorithm for %s", k)
}

// pow2Only are the algorithms SimGrid 3.32 rejects on a size that is not
// a power of two.
var pow2Only = map[string]bool{"pair": true, "pair_light_barrier": true, "pair_mpi_barrier": true,
	"pair_one_barrier": true, "rhv": true, "rab1": true}

// pow2 rejects pow2Only algorithms on a size that is not a power of two
// (SimGrid aborts).
func pow2(k trace.Kind, algo string, n int32) error {
	if n&(n-1) != 0 && pow2Only[algo] {
		return fmt.Errorf("%s: the %s algorithm needs a power-of-two number of ranks, not %d (SimGrid aborts too)", k, algo, n)
	}
	return nil
}

// pick returns algorithm algo of table (def when algo is ""), with k's
// tag, looking it up only when m holds another.
func pick(m *pickMemo, table map[string][]algorithm, algo, def string, tag int32) ([]algorithm, int32, error) {
	if algo == "" {
		algo = def
	}
	if m.set && m.algo == algo {
		return m.algos, tag, nil
	}
	a, ok := table[algo]
	if !ok {
		return nil, 0, fmt.Errorf("unknown algorithm %q", algo)
	}
	*m = pickMemo{algo, a, true}
	return a, tag, nil
}

// pickMemo keeps the table entry pick found last for one collective kind:
// a run picks the same algorithm for most of its calls, and the map
// lookup was a tenth of an allreduce-bound replay.
type pickMemo struct {
	algo  string
	algos []algorithm
	set   bool
}

// algoTables maps each collective's configuration name to its table.
var algoTables = map[string]map[string][]algorithm{}

func init() {
	algoTables["barrier"] = barrierAlgos
	algoTables["bcast"] = bcastAlgos
	algoTables["reduce"] = reduceAlgos
	algoTables["allreduce"] = allreduceAlgos
	algoTables["alltoall"] = alltoallAlgos
	algoTables["alltoallv"] = alltoallvAlgos
	algoTables["gather"] = gatherAlgos
	algoTables["scatter"] = scatterAlgos
	algoTables["allgather"] = allgatherAlgos
	algoTables["allgatherv"] = allgathervAlgos
	algoTables["reduce_scatter"] = reduceScatterAlgos
}

// IsCollectiveName reports whether name is a collective SimGrid lets one
// choose the algorithm of (smpi/<name>).
func IsCollectiveName(name string) bool { _, ok := algoTables[name]; return ok }

// Algorithms lists the algorithms available for a collective: "default"
// and "ompi" (SimGrid's selectors), then the algorithms by name.
func Algorithms(coll string) []string {
	var names []string
	for n := range algoTables[coll] {
		if n != "default" {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return append([]string{"default", "ompi"}, names...)
}

// HasAlgorithm reports whether algo is available for coll (or known and
// refused: the replay then says why).
func HasAlgorithm(coll, algo string) bool {
	if algo == "default" || algo == "ompi" {
		return IsCollectiveName(coll)
	}
	if _, ok := refused[coll+":"+algo]; ok {
		return true
	}
	_, ok := algoTables[coll][algo]
	return ok
}
