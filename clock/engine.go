package clock

import (
	"errors"
	"fmt"
	"math"

	"kairos/internal/smallmap"
	"kairos/trace"
)

// The engine is a dependency-driven scheduler over the ranks' streaming
// readers. Each rank is a state machine that replays its events until one
// needs something another rank has not produced yet (a message, the last
// member of a collective, the receive of a rendezvous send); it then
// blocks, and runs again when that rank wakes it. No goroutine per rank,
// no whole-trace loading: memory is the ranks' clocks plus what is in
// flight.

// rank states
const (
	runnable uint8 = iota
	blocked
	done
)

// rankState is one rank's replay: its reader, logical clock and counters.
type rankState struct {
	id  int32
	rd  trace.Reader
	ev  *trace.Event
	idx int64 // index of ev in the rank's stream

	// The logical clock of configuration c is clk.v[c] + lag: lag is
	// computation not yet added to the vector, so that compute events and
	// local calls cost O(1) whatever the number of configurations. The
	// clock vector is shared, copy on write, with the messages sent since
	// it last changed: a send costs O(1) too.
	clk           *snapshot
	wait, lat, bw []float64
	lag           float64
	comp          float64 // computation counter, the same for all configurations

	// prevExit is r_out of the previous timed event (Section III-D).
	prevExit trace.Time
	hasPrev  bool

	state  uint8
	queued bool
	node   int32

	reqs    smallmap.Map[uint64, *request]  // outstanding non-blocking requests by id
	inbox   smallmap.Map[int32, *pairQueue] // by source rank
	anyRecv []*request                      // posted receives from MPI_ANY_SOURCE

	// What a blocked rank waits for: the requests of a Recv, Wait,
	// Waitall, SendRecv or rendezvous Send, or a collective.
	pending []*request
	coll    *collective
	cs      *commState

	rma *rmaState // one-sided transfers not completed (onesided.go)
	io  float64   // time in MPI-IO calls, the same for all configurations
}

// engine is one replay.
type engine struct {
	opt    Options
	nc     int
	src    trace.Source
	ranks  []rankState
	runq   []int32
	events int64

	// Per-configuration model coefficients (see p2p): latency a·l0 and
	// bandwidth time b·b0 between nodes and within a node.
	aInter, bInter, aIntra, bIntra []float64
	inter, intra                   p2p
	memcpy                         float64 // seconds per byte
	speed                          float64

	comms    map[uint32]*commState
	polls    map[uint32]bool // pollRegions: tests' regions
	msgSeq   uint64
	pool     [][]float64
	snapPool []*snapshot
	reqPool  []*request
	msgPool  []*message

	// scratch vectors of the completion kernels
	bestA, bestS, bestL []float64
	// vectors counts the configuration vectors allocated besides the
	// ranks' counters, for Result.BytesPerRankConfig.
	vectors int

	err error
}

func newEngine(src trace.Source, opt Options) (*engine, error) {
	if opt.MemcpyGBs == 0 {
		opt.MemcpyGBs = DefaultMemcpyGBs
	}
	if opt.MemcpyGBs < 0 || opt.Speed < 0 || math.IsNaN(opt.Speed) {
		return nil, fmt.Errorf("clock: memory-copy bandwidth and speed must not be negative")
	}
	if opt.Protocol == Rendezvous && opt.EagerLimit < 0 {
		return nil, fmt.Errorf("clock: negative eager limit %d", opt.EagerLimit)
	}
	nc := len(opt.Configs)
	e := &engine{
		opt: opt, nc: nc, src: src,
		inter: newP2P(opt.Table), intra: newP2P(opt.IntraTable),
		memcpy: 1 / (opt.MemcpyGBs * 1e9), speed: opt.Speed,
		comms: map[uint32]*commState{}, polls: pollRegions(src.Meta()),
	}
	vec := func() []float64 { return make([]float64, nc) }
	e.aInter, e.bInter, e.aIntra, e.bIntra = vec(), vec(), vec(), vec()
	e.bestA, e.bestS, e.bestL = vec(), vec(), vec()
	ai, bi := e.intra.coeffs(opt.Intra)
	for c, cfg := range opt.Configs {
		e.aInter[c], e.bInter[c] = e.inter.coeffs(cfg)
		e.aIntra[c], e.bIntra[c] = ai, bi
	}
	n := src.NumRanks()
	if n <= 0 {
		return nil, fmt.Errorf("clock: the trace has no ranks")
	}
	e.ranks = make([]rankState, n)
	backing := make([]float64, 3*nc*n) // wait, lat, bw of every rank, contiguous
	rpn := max(opt.RanksPerNode, 1)
	for r := range e.ranks {
		rd, err := src.OpenRank(r)
		if err != nil {
			e.close()
			return nil, fmt.Errorf("rank %d: %w", r, err)
		}
		st := &e.ranks[r]
		b := backing[3*nc*r : 3*nc*(r+1)]
		*st = rankState{
			id: int32(r), rd: rd, node: int32(r / rpn), idx: -1, clk: e.newSnapshot(),
			wait: b[:nc:nc], lat: b[nc : 2*nc : 2*nc], bw: b[2*nc : 3*nc : 3*nc],
		}
	}
	return e, nil
}

func (e *engine) close() {
	for i := range e.ranks {
		if rd := e.ranks[i].rd; rd != nil {
			rd.Close()
		}
	}
}

// snapshot is a rank's clock vector, shared with the messages that
// start from it: S = v + off for each.
type snapshot struct {
	v     []float64
	refs  int32 // messages holding it
	owned bool  // it is still its rank's clock
}

func (e *engine) newSnapshot() *snapshot {
	if n := len(e.snapPool); n > 0 {
		s := e.snapPool[n-1]
		e.snapPool = e.snapPool[:n-1]
		s.owned = true
		return s
	}
	e.vectors++
	return &snapshot{v: make([]float64, e.nc), owned: true}
}

// dropSnapshot releases a message's hold on s.
func (e *engine) dropSnapshot(s *snapshot) {
	s.refs--
	if s.refs == 0 && !s.owned {
		e.snapPool = append(e.snapPool, s)
	}
}

// writeClock returns the vector to write st's new clock to and the one
// holding its current value: the same unless messages still hold the
// current one, which then stays theirs.
func (e *engine) writeClock(st *rankState) (dst, src []float64) {
	cur := st.clk
	if cur.refs == 0 {
		return cur.v, cur.v
	}
	cur.owned = false
	st.clk = e.newSnapshot()
	return st.clk.v, cur.v
}

// vector returns a vector of nc float64 from the pool.
func (e *engine) vector() []float64 {
	if n := len(e.pool); n > 0 {
		v := e.pool[n-1]
		e.pool = e.pool[:n-1]
		return v
	}
	e.vectors++
	return make([]float64, e.nc)
}

func (e *engine) free(v []float64) {
	if v != nil {
		e.pool = append(e.pool, v)
	}
}

// run replays every rank to its end, or reports why it cannot.
func (e *engine) run() error {
	for r := len(e.ranks) - 1; r >= 0; r-- {
		e.runq = append(e.runq, int32(r))
		e.ranks[r].queued = true
	}
	for len(e.runq) > 0 && e.err == nil {
		r := e.runq[len(e.runq)-1]
		e.runq = e.runq[:len(e.runq)-1]
		st := &e.ranks[r]
		st.queued = false
		e.advance(st)
	}
	if e.err != nil {
		return e.err
	}
	return e.finish()
}

// wake makes a blocked rank runnable.
func (e *engine) wake(r int32) {
	st := &e.ranks[r]
	if st.state == blocked && !st.queued {
		st.queued = true
		e.runq = append(e.runq, r)
	}
}

// advance replays st until it blocks or ends.
func (e *engine) advance(st *rankState) {
	if st.state == blocked {
		if !e.resume(st) {
			return
		}
		st.state = runnable
	}
	for st.rd.Next() {
		st.ev = st.rd.Event()
		st.idx++
		e.events++
		if !e.step(st, st.ev) {
			st.state = blocked
			return
		}
		if e.err != nil {
			return
		}
	}
	if err := st.rd.Err(); err != nil {
		e.err = fmt.Errorf("rank %d: %w", st.id, err)
		return
	}
	st.state = done
	st.ev = nil
	e.settle(st)
}

// settle adds the pending computation to every configuration's clock.
func (e *engine) settle(st *rankState) {
	if st.lag != 0 {
		dst, src := e.writeClock(st)
		for c, v := range src {
			dst[c] = v + st.lag
		}
		st.lag = 0
	}
}

// local charges d seconds of computation (Section III-A, 1).
func (st *rankState) local(d float64) {
	if d > 0 {
		st.lag += d
		st.comp += d
	}
}

// duration returns r_out - r_in of a timed event, else 0.
func duration(ev *trace.Event) float64 {
	if !ev.HasTime || ev.Exit < ev.Enter {
		return 0
	}
	return (ev.Exit - ev.Enter).Seconds()
}

// gap charges the computation between the previous event's exit and this
// one's entry: t_in^i = t_out^{i-1} + r_in^i - r_out^{i-1} (Section III-D).
func (st *rankState) gap(ev *trace.Event) {
	if ev.HasTime && st.hasPrev && ev.Enter > st.prevExit {
		st.local((ev.Enter - st.prevExit).Seconds())
	}
}

// exited records r_out of a finished event.
func (st *rankState) exited(ev *trace.Event) {
	if ev.HasTime {
		st.prevExit, st.hasPrev = ev.Exit, true
	}
}

// step replays one event; it returns false if st blocks in it.
func (e *engine) step(st *rankState, ev *trace.Event) bool {
	st.gap(ev)
	switch ev.Kind {
	case trace.Init, trace.Finalize, trace.Location:
		// The clock starts at Init's exit (the starting event of Section
		// III-D); Finalize ends the run.
	case trace.Compute, trace.Sleep:
		e.compute(st, ev)
	case trace.Send:
		m := e.postSend(st, ev, ev.Partner, ev.SendBytes)
		if m != nil && m.rdv {
			st.pending = append(st.pending[:0], e.sendRequest(st, m))
			return e.block(st)
		}
	case trace.Isend:
		m := e.postSend(st, ev, ev.Partner, ev.SendBytes)
		if m != nil {
			e.addRequest(st, ev.Request, e.sendRequest(st, m))
		}
		st.local(duration(ev)) // non-blocking calls are computation (Section III-D)
	case trace.Irecv:
		e.addRequest(st, ev.Request, e.postRecv(st, ev, ev.Partner))
		st.local(duration(ev))
	case trace.Recv:
		st.pending = append(st.pending[:0], e.postRecv(st, ev, ev.Partner))
		return e.block(st)
	case trace.SendRecv:
		st.pending = st.pending[:0]
		if m := e.postSend(st, ev, ev.Partner, ev.SendBytes); m != nil {
			st.pending = append(st.pending, e.sendRequest(st, m))
		}
		st.pending = append(st.pending, e.postRecv(st, ev, ev.Source))
		return e.block(st)
	case trace.Wait:
		st.pending = st.pending[:0]
		if rq, ok := st.reqs.Take(ev.Request); ok {
			st.pending = append(st.pending, rq)
		} else {
			st.local(duration(ev)) // a wait on no known request is local
		}
		return e.block(st)
	case trace.Waitall:
		e.collectWaitall(st, ev)
		return e.block(st)
	case trace.Test:
		// A test that completes nothing: no time of its own (see polls).
	default:
		if ev.Kind.IsWindow() {
			if !e.oneSided(st, ev) {
				return false
			}
			break
		}
		if ev.Kind.IsIO() {
			st.ioTime(ioDuration(ev))
			break
		}
		if ev.Kind.IsCollective() && ev.Kind != trace.CommSplit && ev.Kind != trace.CommDup && ev.Kind != trace.CommCreate {
			return e.enterCollective(st, ev)
		}
		if e.polls[ev.Region] && ev.Kind == trace.Local {
			break // a test that completes nothing (see polls)
		}
		if trace.Passive(ev.Kind) {
			// Probes, communicators' creation, calls whose
			// communication is another event's: no time of their own,
			// as in a replay and in the TI trace of the same run (a
			// blocking probe waits for the message its receive then
			// waits for); counted as computation, a program that
			// probes before it receives looked bound by computation.
			break
		}
		// Other local calls (comm_size, wtime...) count as computation
		// (Section III-A, 1).
		st.local(duration(ev))
	}
	st.exited(ev)
	return true
}

// pollRegions are the regions of the tests: one that completes nothing
// is, as the readers of OTF2 and DUMPI give it, a local or deferred call
// in its MPI function's region (a time-independent trace has no action
// for it). Its time is polling, the recorded run's wait for a message:
// it takes none in the model, which makes the rank wait for the message
// where its request completes, as in simulate and in the TI trace of the
// same run. Charged to every configuration, the recorded wait kept a
// polling program's prediction above it on any network (HPCC's archive
// at 64 ranks, 72 s a rank of MPI_Testany recorded on an oversubscribed
// host: 77.6 s on a 1 Tb/s network, 4.5 s from its TI trace).
func pollRegions(m *trace.Meta) map[uint32]bool {
	polls := map[uint32]bool{}
	for id, r := range m.Regions {
		if r.Name == "MPI_Test" || r.Name == "MPI_Testany" || r.Name == "MPI_Testsome" || r.Name == "MPI_Testall" {
			polls[uint32(id)] = true
		}
	}
	return polls
}

// compute charges a compute or sleep event: its recorded duration in a
// timed trace, else volume / speed (or the seconds of a sleep).
func (e *engine) compute(st *rankState, ev *trace.Event) {
	switch {
	case ev.HasTime:
		st.local(duration(ev))
	case ev.Kind == trace.Sleep:
		st.local(ev.Compute)
	case ev.Compute > 0:
		if e.speed <= 0 {
			e.fail(st, "has a computation volume of %g flops: %w", ev.Compute, ErrNoSpeed)
			return
		}
		st.local(ev.Compute / e.speed)
	}
}

// ErrNoSpeed is the error of a replay that meets a computation volume
// (flops) without Options.Speed to turn it into time.
var ErrNoSpeed = errors.New("give a compute speed (flops/s) to turn volumes into time")

// fail records an error about st's current event.
func (e *engine) fail(st *rankState, format string, a ...any) {
	if e.err == nil {
		e.err = fmt.Errorf("rank %d event %d (%s)%s: %w", st.id, st.idx, st.ev.String(), position(st.rd), fmt.Errorf(format, a...))
	}
}

// position returns " at file:line" if the reader knows it.
func position(rd trace.Reader) string {
	if p, ok := rd.(trace.Positioner); ok {
		if s := p.Position(); s != "" {
			return " at " + s
		}
	}
	return ""
}

// block tries to complete st's blocking call at once; if it cannot, st
// blocks until a wake.
func (e *engine) block(st *rankState) bool { return e.resume(st) }

// resume completes st's blocking call if everything it waits for is
// there, and reports whether it did.
func (e *engine) resume(st *rankState) bool {
	if st.coll != nil {
		if st.coll.arrived < st.coll.size {
			return false
		}
		e.leaveCollective(st)
	} else {
		for _, rq := range st.pending {
			if !rq.ready() {
				return false
			}
		}
		e.completeRequests(st)
	}
	st.exited(st.ev)
	return true
}
