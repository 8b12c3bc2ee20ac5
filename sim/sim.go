// Package sim replays MPI traces on a simulated machine: a discrete-event
// simulator that reproduces SimGrid 3.32's SMPI replay (smpirun -replay)
// to the printed digit, and a contention-free analytic mode for fast
// what-ifs.
//
// The network is SimGrid's fluid model (network/model SMPI, LV08 or CM02,
// or IB, SMPI's with InfiniBand penalties: see infiniband.go):
// a message of s bytes (plus a 16-byte envelope) first waits the route's
// latency times lat-factor(s), then flows at its weighted max-min share of
// the links it crosses (package maxmin) times bw-factor(s), bounded by
// TCP-gamma / (2 x latency); flows also load their reverse route with
// weight 0.05 (cross-traffic). CPUs are shared max-min between the ranks of
// a host (Cas01). MPI semantics are SMPI's: sends under 65,536 bytes are
// detached (eager), larger ones rendezvous; requests are stored and
// waited per (source, destination, tag) key; collectives run as the
// point-to-point algorithms SimGrid's default selector picks, or its ompi
// selector (Open MPI's rules), or the one configured per collective;
// algorithms made of other collectives run those with their configured
// algorithms, as SimGrid's do. SMPI's
// calibrated CPU overheads are slept where SMPI injects them: smpi/os
// before a detached blocking send, smpi/ois before any non-blocking send
// (those of sendrecv and of the collective algorithms included), smpi/or
// when a wait or test finishes a receive that matched a detached send
// (a host's properties of the same names override the settings for the
// ranks on it; SimGrid's user cost callbacks, a C API, have no equivalent).
// Hosts' speed profiles change their speed over time (see profile.go).
// Under smpi/init every rank sleeps before its first action; the time
// printed, as SimGrid's, runs from the last rank's init action. Under
// maxmin/concurrency-limit at most that many transfers share a link, and
// computations a CPU, at once (see maxmin.System.SetConcurrencyLimit);
// SimGrid's own re-solves are then used. Application instances
// (Config.StartDelays) start as SimGrid's smpi_replay_init starts them, and
// a workload's jobs at their dates (Config.StartDates). With
// --cfg plugin:host_energy the hosts' energy is SimGrid's host_energy
// plugin's (see energy.go): the power of a host's load, from its
// wattage_per_state property, over the run. One-sided calls run as SMPI
// runs MPI-3 RMA programs on-line (see onesided.go); MPI-IO calls replay
// their recorded duration, reported as I/O.
//
// Ranks are state machines driven by one event loop, reading their traces
// as streams, so memory does not grow with trace length. Runs are
// deterministic: the same inputs give bit-identical results.
//
// The max-min sharing is re-solved incrementally, only where a change
// reaches (maxmin.System.Incremental); SimGrid's selective-update quirk is
// reproduced by proof, undo and replay, and where it strikes, the stale
// shares it leaves are re-solved SimGrid's way until solved whole again.
// The incremental solver keeps event times but not always the order of
// simultaneous events (SimGrid re-inserts every re-solved action in its
// heap, changed or not, and its dates are SimGrid's to rounding): the
// engine knows where its order may not be SimGrid's (order.go) and has
// the solver certify those rounds for every order. A run whose times
// depend on an order it cannot know (those rounds, when the certificate
// fails; ranks sharing SMPI's back-off counters at one date, probes,
// wildcard receives) starts over with SimGrid's own re-solves (Solver,
// SolverAuto), whose results depend on that order as SimGrid's do; the
// automatic solver runs them from the start on a trace that does not
// repeat exactly (where no period can be skipped: most real traces).
//
// SimGrid quirks Kairos copies, for exactness; those marked (*) are fixed
// when Config.Compat is false (--cfg kairos/simgrid-quirks:no):
//   - factor tables apply strictly above their threshold, on the size with
//     the 16-byte envelope; the eager threshold is on the size without it;
//   - a flow with no latency gets sharing penalty 1 instead of its
//     weight-S penalty;
//   - MPI_Test sleeps smpi/test x n first, n being a process-wide counter
//     of failed tests (reset by a success); a failed test puts its request
//     back at the end of its key's queue;
//   - (*) a receive of unknown size (-1) first polls with MPI_Iprobe until
//     the message is there: each iprobe computes smpi/iprobe x n seconds'
//     worth of flops (at smpi/iprobe-cpu-usage of the host's speed), n
//     being another process-wide counter of failures; fixed, the receive
//     is posted at once and takes the size of the message it matches;
//   - a rank updates those counters when it resumes after the simcall
//     that failed or succeeded, in the next sub-round, and of sleeps
//     started at one date, the last one started is scheduled first;
//   - (*) at the end of a rank's trace only the last stored request of each
//     (src, dst, tag) key is waited for (a FIXME in smpi_replay_main);
//   - (*) the max-min re-solve covers only the constraints SimGrid's
//     selective update marks, which can leave stale shares (see
//     maxmin.System.SimGridSelective); fixed, the exact max-min share is
//     computed incrementally (Config.Solver);
//   - simultaneous events are handled in SimGrid's order: ranks issue one
//     simcall per turn (Config.Subrounds; a computation takes four:
//     exec_init's set_flops_amount and set_host, start, wait, and an
//     iprobe's one more, set_bound; a sleep of 0 s none; an action, or a
//     rank's trace, whose last simcall is answered at once ends in the
//     rank's next turn, which orders the verbose log's lines and decides
//     which rank ends last), its action heap
//     is stable and an update counts as a new insertion, CPU actions end
//     before network ones, and the solver visits elements in the order of
//     SimGrid's intrusive lists, so that even its order-dependent quirks
//     come out the same; the IB model's callback runs as each transfer
//     finishes, the ended transfers' variables are freed after all;
//   - a rank blocked on a computation, a sleep, or a single request
//     (Request::wait, send, recv; not a waitany or waitall) holds its
//     host's CPU with a disabled variable, SimGrid's sleep action that
//     detects host failures: it decides the order in which CPUs are
//     re-solved, and so which of two computations ending together on
//     different hosts ends first;
//   - a host given a pstate other than the first has its CPU in the first
//     re-solve (SimGrid sets the pstate once the host exists, which sets
//     the CPU's bound again), which orders simultaneous events; and the
//     energy plugin counts pstate 0's power until the host's first update
//     (its first computation, or, after time 0, a computation or sleep
//     that ends or a blocking wait that starts);
//   - (*) a link's bandwidth or latency event moves the sharing penalty of
//     every flow on the link, those whose cross-traffic crosses it too (a
//     penalty made negative aborts the run), and enables the flows still
//     paying their latency, which then share the bandwidth early and are
//     rescheduled only when a later re-solve reports them (the replay can
//     stall: a deadlock); fixed, only the flows crossing the link move,
//     and a flow is enabled once its latency is paid (see linkprofile.go);
//   - reduction flops run even with smpi/simulate-computation:no;
//   - zero-byte messages of v-collectives are still sent (16 bytes on the
//     wire), and SimGrid's pair algorithms refuse sizes that are not powers
//     of two;
//   - (*) the replay's collectives share one temporary send and one
//     receive buffer, null until an action first needs bytes of them:
//     reduce_scatter ompi_ring of 0 elements sends nothing while either is
//     null (see growTmpBuffers);
//   - (*) a point-to-point message sent and received as different
//     datatypes, neither MPI_BYTE nor MPI_PACKED, both sides non-empty,
//     aborts the replay (MPI_ERR_TYPE: MPI implementations do not check
//     it); a message larger than its receive aborts it with or without
//     quirks, as MPI requires (MPI_ERR_TRUNCATE). So does a collective's
//     own message where its algorithm posts the call's buffers as SMPI
//     does (collOp.typed: the default algorithms, the pairwise and
//     throttled exchanges, and others); the other algorithms' messages
//     (packed, forwarded or cut) are not checked;
//   - (*) in small-message mode (Config.AsyncSmallThreshold, async.go), a
//     receive compared with a message that SMPI's message numbers then
//     refuse is flagged all the same, and the replay aborts (a truncation
//     or datatype mismatch) whatever it matches; fixed, only the message
//     it matches is checked. (A receive's declared size, not the
//     message's, chooses its mailbox, so that a message can miss the
//     receive meant for it and the replay deadlock, as SimGrid's: that is
//     the mode, not a quirk.)
//   - under maxmin/concurrency-limit (Config.ConcurrencyLimit), the sleep
//     action of a blocked rank takes a CPU slot for an instant, and if
//     there is none it is staged instead and takes the next slot that
//     frees: it then shares the CPU like a computation until the rank
//     wakes, and a timed sleep, a one-flop action, ends once it has
//     computed its flop, before its duration. A slot freed by a variable
//     disabled rather than removed goes to no staged variable until
//     another slot frees on that constraint.
package sim

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"kairos/internal/smallmap"
	"kairos/sim/maxmin"
	"kairos/trace"
)

// Observer receives every action as it ends: the rank, the event (valid
// only during the call), and its start and end in simulated seconds.
type Observer interface {
	Action(rank int, e *trace.Event, start, end float64)
}

// A MessageObserver is an Observer that also sees the trace's own
// point-to-point messages (its sends, isends and sendrecvs; not the
// messages inside collectives), each when the receive, wait, waitall or
// test that returned with it ends: timelines draw them as arrows from
// sender to receiver.
type MessageObserver interface {
	Observer
	Message(m Message)
}

// Message is one point-to-point message of a simulated run.
type Message struct {
	Src, Dst int   // world ranks
	Tag      int32 // the trace's tag
	Bytes    int64
	// Sent is when the sending action began (SimGrid's tracing starts
	// its link there), Arrived when the receive, wait or waitall that
	// returned with the message ended (where SimGrid's tracing ends the
	// link) and RecvBegan when that action began (-1 for the wait for
	// leftover requests at the end of a rank's trace, not an action).
	// With Config.TraceInternals, Sent is when the send was posted and
	// Arrived when the wait returned the receive, inside those actions;
	// SentBegan is when the sending action began (Sent without).
	Sent, Arrived, RecvBegan, SentBegan float64
}

// Result is what a simulation computed.
type Result struct {
	// Time is SimGrid's "Simulation time": the elapsed time, since its
	// init, of the rank that finished last.
	Time float64
	// Ranks holds per-rank figures.
	Ranks []RankResult
	// Actions is the number of the trace's actions replayed: its events
	// but those no TI trace has, which a replay passes over (probes, the
	// calls that make communicators, deferred and local calls), so that a
	// run's OTF2 archive and its TI trace count alike.
	Actions int64
	// Messages and Bytes count the point-to-point transfers simulated
	// (collectives included).
	Messages, Bytes int64
	// Unreceived counts the sends no receive matched by the end: small,
	// detached ones (a larger one would have blocked its sender), which
	// the replay ends without, as SimGrid's does.
	Unreceived int64
	// Solver is the max-min solver that gave the result: SolverIncremental
	// or SolverSimGrid (SolverAuto falls back to it when SimGrid's quirk
	// strikes).
	Solver Solver
	// Skipped counts the periods not replayed again (Config.SkipPeriods),
	// and SkippedActions their actions (counted in Actions).
	Skipped, SkippedActions int64
	// Energy is the hosts' energy, with the energy model
	// (Config.Energy); nil without.
	Energy *Energy
	// LinkEnergy is the links' energy, with the link energy model
	// (Config.LinkEnergy); nil without.
	LinkEnergy *LinkEnergy
	// Work is what the replay that gave the result cost the engine.
	Work Work
	// Engine is the engine that gave the result: EngineEvents, or
	// EngineDependencies for an analytic replay it could run
	// (depend.go). Handover says why the dependency-driven engine
	// handed a replay it started over to the event engine ("" if it did
	// not).
	Engine, Handover string
}

// The engines (Result.Engine).
const (
	EngineEvents       = "events"       // the discrete-event engine
	EngineDependencies = "dependencies" // the analytic mode's dependency-driven engine
)

// Work counts what a replay cost the engine, in numbers that do not
// depend on the computer running it: the dates its clock advanced to, the
// max-min re-solves (network and CPUs), the variables whose share they
// reported changed, and the datings of actions in its event queue (a
// start, or a re-dating after a re-solve). Per action, they say whether
// the engine's work stays flat as a trace grows in ranks, apart from the
// memory latency that its time also pays (BENCHMARKS.md, issue 42).
type Work struct {
	Advances, Solves, Reported, Dated int64
}

// RankResult is one rank's timing breakdown (seconds): Compute is time in
// computation and sleeps; Wait is time blocked in MPI before the awaited
// messages were matched (a late partner), message by message, in the
// point-to-point steps of the collectives' algorithms too (a rank that
// receives last in an algorithm is blocked there, though it entered the
// collective last): not Scalasca's wait states (package waitstate), which
// count a collective's waiting up to its last member's entry; Comm is
// the rest of the time in MPI (transfers, latencies); Backoff is SMPI's sleep before each
// MPI_Test (smpi/test times one more than the failed tests since the
// last success, of any rank),
// the cost of a polling loop in the replay.
type RankResult struct {
	Finish, Compute, Comm, Wait, Backoff float64
	// Tests counts the rank's MPI_Test actions, FailedTests those that
	// found their request incomplete.
	Tests, FailedTests int64
	// IO is time in MPI-IO calls, replayed as recorded.
	IO float64
	// Init is when the rank's init action ran (0 without one): a rank's
	// simulated time, as SimGrid prints it, is Finish - Init.
	Init float64
}

// DeadlockError reports ranks that can never proceed.
type DeadlockError struct {
	Time    float64
	Blocked []Blocked
	// Stalled counts the transfers a link profile enabled before their
	// latency was paid and no re-solve reported since: SimGrid's quirk
	// (see Config.Compat), not the trace's fault.
	Stalled int
}

// Blocked is one rank stuck in an action.
type Blocked struct {
	Rank     int
	Action   string
	Position string // file:line, if the trace reader knows it
}

func (e *DeadlockError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "deadlock at simulated time %.9f: %d rank(s) blocked", e.Time, len(e.Blocked))
	for _, r := range e.Blocked {
		fmt.Fprintf(&b, "\n  rank %d in %s", r.Rank, r.Action)
		if r.Position != "" {
			fmt.Fprintf(&b, " (%s)", r.Position)
		}
	}
	if e.Stalled > 0 {
		fmt.Fprintf(&b, "\n%d transfer(s) stalled: a link profile enabled them before their latency was paid, and nothing "+
			"rescheduled them since (SimGrid 3.32 stalls there too; --cfg kairos/simgrid-quirks:no fixes it)", e.Stalled)
	}
	return b.String()
}

type hostState struct {
	speed  float64 // per core, of the pstate (SimGrid's peak)
	scale  float64 // the speed profile's current value (1 without)
	cores  int
	cpu    *maxmin.Constraint
	energy *hostEnergy // with the energy model only
	// track keeps the computations on the host in execs, for the energy
	// model and speed profiles.
	track bool
	execs []*action
	prof  profileState // the speed profile, if any
	// solo: in the analytic mode, a computation here runs at its bound
	// from start to end (no more ranks than cores, no speed profile or
	// energy model, no concurrency limit): it needs no max-min system
	// (startExecBounded), nor a blocked wait its hold on the CPU, which
	// only orders the system's re-solves.
	solo bool
}

// simulation is one simulation in progress.
type simulation struct {
	cfg       Config
	schedules schedules // collective schedules, shared by their members
	m         *Machine
	meta      *trace.Meta
	obs       Observer
	msgObs    MessageObserver // obs, if it sees messages
	now       float64
	seq       uint64 // request creation order
	heap      actionHeap
	netSys    *maxmin.System
	ib        *ibModel     // the IB model's state, with network/model:IB
	profiled  []*hostState // hosts with a speed profile
	linkProfs []*linkProfile
	// linkBw and linkLat are the links' current bandwidths and latencies,
	// kept only where a link has a profile (nil otherwise).
	linkBw, linkLat []float64
	commSeq         uint64       // transfer start order
	linkEnergy      []linkEnergy // with the link energy model only
	cpuSys          *maxmin.System
	hosts           []hostState
	links           []*maxmin.Constraint
	routes          []smallmap.Map[int32, *route] // cached routes, by source host
	nranks          int                           // the trace's ranks
	ranks           []*rank                       // the event engine's
	lastDone        *rank                         // the rank that ended its trace last
	runq            []*rank
	acts            []*action
	freeIDs         []int32

	freeActs []*action
	// others counts the actions alive that are not computations: while
	// there is one, no date is quiescent (see quiescent).
	others    int
	sleepVars []*maxmin.Variable // sleep variables to reuse (holdLimited)
	// freed holds the actions ended since the last solve: their
	// variables are reused only after it (the solver may replay the
	// round's changes).
	freed     []*action
	freeComms []*comm
	freeOps   [][]collOp // large phases' operations to reuse (giveOps)
	// algos are, per collective kind, its configured algorithm and what
	// the tables say of the last one expanded (collAlgo), looked up once
	// rather than by string at each collective.
	algos [trace.NumKinds]algoEntry
	// lateUnrefs are requests whose reference is dropped after the turn
	// of the rank that posted them (see attach).
	lateUnrefs []*request
	freeReqs   []*request
	endedCPU   []*action
	endedNet   []*action
	// netStarted are the transfers under way with network/optim:Full,
	// in SimGrid's started-action order (the order they started), which
	// orders the ends of one step.
	netStarted []*action
	// cpuStarted are the computations and timed sleeps under way with
	// cpu/optim:Full, in the order they started (SimGrid's started action
	// set, which its full update goes through).
	cpuStarted []*action

	latF, bwF, weightS float64
	nsleeps            float64   // SimGrid's process-wide MPI_Test back-off
	probeSleeps        int       // and its MPI_Iprobe back-off
	sleeps             []*action // started since the last event, not yet in the heap
	testUse, probeUse  sharedUse // of the back-off counters
	probeExecs         int       // iprobe computations in progress
	advances           uint64    // calls of advance
	work               Work      // Result.Work, but for Advances (advances)
	polls              pollCycle // the states met while only probes run
	indexIDs           bool      // index requests by id: waits may name ids (not TI)
	waitSeq            uint64    // order in which ranks started blocking waits
	tmpGrown           [2]bool   // SimGrid's replay temporary send and receive buffers were grown
	err                error
	stats              simStats
	cyc                *cycles               // period skipping, nil when off
	wins               map[uint32]*rmaWindow // one-sided windows, by trace handle
	// due holds the actions popDue took, grp the number of the current
	// round if its ranks may run in another order than SimGrid's (see
	// order.go).
	due    []dueAction
	latIdx []int32
	// grp and starter are what the actions started now carry (see
	// action.grp), blocks the blocks numbered so far.
	grp, blocks uint64
	starter     int32
	skipped     bool // a period was skipped (see exactDates)

	// The dependency-driven engine's state (depend.go): its ranks, those
	// runnable, the requests to reuse, and the earliest dates at which a
	// collective grew SimGrid's temporary send and receive buffers.
	deps      bool // the dependency-driven engine replays
	dr        []depRank
	drq       []int32
	freeDreqs []*dreq
	grownAt   [2]float64
	depWhy    string    // why it stopped (errFallback)
	wilds     []int32   // the ranks with a wildcard receive not matched yet
	lb        []float64 // scratch: lower bounds of the ranks' next posts (resolveWilds)
	wildWork  int64     // the work of resolveWilds so far
	// dpaths are its routes, by source host, then destination host.
	dpaths []smallmap.Map[int32, dpath]
	dpairs pathRows // the same by pair of ranks (dpath)
	dlinks []int    // scratch: a route's links (dpath)

	// pcomms numbers the communicators of point-to-point calls other than
	// MPI_COMM_WORLD (p2pComm).
	pcomms map[uint32]uint8
}

// simStats are the counts a Result reports.
type simStats struct{ messages, bytes, actions int64 }

// Run replays src on m with cfg and returns the simulated times. Rank i
// runs on host m.RankHost[i]; every rank of src must have a host. Events
// are replayed time-independently, timestamps ignored: untime a timed
// trace first (trace.UntimedAbove) to keep its computation.
func Run(src trace.Source, m *Machine, cfg Config, obs Observer) (*Result, error) {
	res, err := runWith(src, m, cfg, obs)
	if err == nil && (math.IsInf(res.Time, 0) || math.IsNaN(res.Time)) {
		// The engines stop there (timeOverflows); the analytic mode ends.
		return nil, errors.New("sim: the simulated time is infinite: a host, link or disk too slow for the amounts it serves")
	}
	return res, err
}

// runWith is Run, with the solver chosen as cfg asks.
func runWith(src trace.Source, m *Machine, cfg Config, obs Observer) (*Result, error) {
	n := src.NumRanks()
	if n == 0 {
		return nil, errors.New("sim: the trace has no rank")
	}
	if t := cfg.AsyncSmallThreshold; t > cfg.DetachedThreshold {
		return nil, fmt.Errorf("sim: smpi/async-small-thresh (%d) must be at most smpi/send-is-detached-thresh (%d), as SimGrid requires", t, cfg.DetachedThreshold)
	}
	if len(m.RankHost) < n {
		return nil, fmt.Errorf("sim: %d ranks but only %d deployed", n, len(m.RankHost))
	}
	if err := checkStarts(cfg, n); err != nil {
		return nil, err
	}
	if cfg.Compat && cfg.ConcurrencyLimit >= 0 {
		// The incremental solver's rounds can be undone; the staging of
		// activities at a limit is done as SimGrid does it, once.
		if cfg.Solver == SolverIncremental {
			return nil, errors.New("sim: kairos/incremental:yes does not take maxmin/concurrency-limit (SimGrid's re-solves do: kairos/incremental:no or auto)")
		}
		cfg.Solver = SolverSimGrid
	}
	if cfg.Compat && cfg.Solver == SolverAuto && (obs != nil && needsSimGridOrder(obs) || m.hasLinkProfiles()) {
		// A flow a link profile enables before its latency is paid is
		// rescheduled when a re-solve next reports it, which only
		// SimGrid's re-solves do (see linkprofile.go).
		cfg.Solver = SolverSimGrid
	}
	// A trace that does not repeat exactly skips no period, gains little
	// from the incremental solver, and loses the run so far where
	// SimGrid's order turns out to matter, which it does on most real
	// traces (deal.II on 32 ranks: 9.5 s of CPU with SimGrid's re-solves
	// from the start, 16.0 s in all when the incremental run stopped at
	// two thirds of it): newSim then chooses SimGrid's re-solves
	// (autoSolver) where the event engine replays. They are chosen here
	// only for an observer that cannot start over, to which a first,
	// unobserved run would otherwise show the solver: such a trace needs
	// no first run.
	watched := obs == nil || restartable(obs)
	if cfg.Compat && cfg.Solver == SolverAuto && !watched && !repeats(src) {
		cfg.Solver = SolverSimGrid
	}
	if cfg.Compat && cfg.Solver == SolverAuto {
		// An observer that cannot start over watches a second run once
		// the first has shown which solver gives SimGrid's result.
		var first Observer
		if watched {
			first = obs
		}
		res, err := run(src, m, cfg, first)
		if !errors.Is(err, errQuirk) {
			if err != nil || watched {
				return res, err
			}
			cfg.Solver = SolverIncremental
		} else {
			cfg.Solver = SolverSimGrid
			if first != nil {
				first.(Restarter).Restart()
			}
		}
	}
	return run(src, m, cfg, obs)
}

// repeats is mayRepeat, which the tests of the incremental solver's
// certificates replace to keep it on traces that do not repeat.
var repeats = mayRepeat

// errQuirk stops an automatic-solver run when SimGrid's selective-update
// quirk strikes, or when the times depend on the order of simultaneous
// events (see SolverAuto).
var errQuirk = errors.New("sim: the run needs SimGrid's order of re-solves")

// sharedUse is the last use of state that all ranks share (SMPI's back-off
// counters): when and by which rank.
type sharedUse struct {
	date float64
	rank int32
	set  bool
}

// share records that r uses shared state u now. Two ranks using it at one
// date make the times depend on the order in which simultaneous events
// are handled, which only SimGrid's own re-solves keep: the incremental
// solver reschedules only the actions whose share changed, not every one
// SimGrid re-inserts in its heap.
func (s *simulation) share(u *sharedUse, r *rank) {
	if u.set {
		s.nearTie(u.date)
	}
	if u.set && u.date == s.now && u.rank != r.id {
		s.orderMatters()
	}
	*u = sharedUse{date: s.now, rank: r.id, set: true}
}

// orderMatters stops a run of the automatic solver, which then starts
// over with SimGrid's (see SolverAuto).
func (s *simulation) orderMatters() {
	if s.cfg.Compat && s.cfg.Solver == SolverAuto && s.err == nil {
		s.err = errQuirk
	}
}

// checkStarts refuses start delays or dates that do not give every one of
// n ranks a finite, non-negative one.
func checkStarts(cfg Config, n int) error {
	for _, c := range []struct {
		what string
		v    []float64
	}{{"start delays", cfg.StartDelays}, {"start dates", cfg.StartDates}} {
		if c.v != nil && len(c.v) < n {
			return fmt.Errorf("sim: %d %s for %d ranks", len(c.v), c.what, n)
		}
		for i, x := range c.v {
			if !(x >= 0 && x <= math.MaxFloat64) {
				return fmt.Errorf("sim: rank %d: start %g is not a finite non-negative number", i, x)
			}
		}
	}
	return nil
}

func run(src trace.Source, m *Machine, cfg Config, obs Observer) (*Result, error) {
	s, err := newSim(src, m, cfg, obs)
	if err != nil {
		return nil, err
	}
	handover := ""
	if s.deps {
		res, err := s.runDeps()
		s.close()
		if !errors.Is(err, errFallback) {
			return res, err
		}
		handover = s.depWhy
		if obs != nil {
			obs.(Restarter).Restart() // a TimedTrace (recordsOnly)
		}
		cfg.events = true // start over on the event engine
		if s, err = newSim(src, m, cfg, obs); err != nil {
			return nil, err
		}
	}
	defer s.close()
	if err := s.loop(); err != nil {
		return nil, err
	}
	res := s.result()
	res.Handover = handover
	return res, nil
}

// newSim prepares the replay of src on m: the dependency-driven engine's
// if it can replay (dependable), the event engine's otherwise. The event
// engine's state (its max-min systems, the hosts' and links' constraints,
// its ranks of 1.4 KB each) is built only for it: the dependency-driven
// engine reads only each rank's reader and host.
func newSim(src trace.Source, m *Machine, cfg Config, obs Observer) (*simulation, error) {
	if cfg.Colls == nil {
		cfg.Colls = map[string]string{}
	}
	if err := cfg.checkOptim(); err != nil {
		return nil, err
	}
	cfg.NetworkFull = cfg.NetworkFull && !cfg.Analytic // no sharing to update
	s := &simulation{cfg: cfg, m: m, meta: src.Meta(), obs: obs, nranks: src.NumRanks(), nsleeps: 1, probeSleeps: 1,
		schedules: schedules{}}
	if mo, ok := obs.(MessageObserver); ok && seesMessages(obs) {
		s.msgObs = mo
	}
	s.latF, s.bwF, s.weightS = cfg.netParams()
	s.indexIDs = s.meta.Attrs["format"] != "ti"
	for _, h := range m.Hosts {
		sp := h.Speed
		if cfg.Speed > 0 {
			sp = cfg.Speed
		}
		if sp <= 0 {
			return nil, fmt.Errorf("sim: host %s has speed %g", h.Name, sp)
		}
		s.hosts = append(s.hosts, hostState{speed: sp, scale: 1, cores: max(h.Cores, 1)})
	}
	if err := s.initProfiles(); err != nil {
		return nil, err
	}
	if cfg.Model == ModelIB && !cfg.Analytic {
		s.ib = newIBModel(cfg.IBFactors, len(s.hosts))
	}
	if cfg.LinkEnergy {
		if err := s.initLinkEnergy(); err != nil {
			return nil, err
		}
	}
	if cfg.Energy {
		if err := s.initEnergy(); err != nil {
			return nil, err
		}
		for i := range s.hosts {
			s.hosts[i].track = true
		}
	}
	for _, l := range m.Links {
		if l.Bandwidth <= 0 {
			return nil, fmt.Errorf("sim: link %s has bandwidth %g", l.Name, l.Bandwidth)
		}
	}
	if err := s.initLinkProfiles(); err != nil {
		return nil, err
	}
	if cfg.Analytic && !cfg.CPUFull && cfg.ConcurrencyLimit < 0 {
		s.markSolo()
	}
	if s.deps = s.dependable(obs); !s.deps {
		s.autoSolver(src)
		s.newSystems()
	}
	if err := s.openRanks(src); err != nil {
		s.close()
		return nil, err
	}
	if !s.deps && s.cyclesOn(obs) {
		s.wrapCycles(src)
	}
	return s, nil
}

// autoSolver chooses SimGrid's re-solves, in the compatible mode's
// automatic choice (SolverAuto), for a trace that does not repeat
// (mayRepeat). It is chosen here, once the event engine is known to
// replay, rather than in runWith: the look for a period is 1% of an
// analytic replay the dependency-driven engine makes. (runWith still
// chooses it first under an observer that cannot start over: see there.)
func (s *simulation) autoSolver(src trace.Source) {
	if s.cfg.Compat && s.cfg.Solver == SolverAuto && !repeats(src) {
		s.cfg.Solver = SolverSimGrid
	}
}

// newSystems builds the event engine's max-min systems, as its
// configuration asks, the hosts' CPU constraints and the links'
// constraints, each system's in the order of the machine's hosts and
// links.
func (s *simulation) newSystems() {
	cfg := s.cfg
	s.routes = make([]smallmap.Map[int32, *route], len(s.m.Hosts))
	s.netSys = maxmin.New(cfg.MaxminPrecision)
	s.cpuSys = maxmin.New(cfg.MaxminPrecision)
	s.netSys.SimGridSelective = cfg.Compat
	s.netSys.Incremental = cfg.Solver != SolverSimGrid || !cfg.Compat
	// Executions use one constraint each: SimGrid's selective update
	// always re-solves them whole, and the incremental solver needs no
	// proof of it.
	s.cpuSys.SimGridSelective = cfg.Compat && !s.netSys.Incremental
	s.cpuSys.Incremental = s.netSys.Incremental
	if cfg.NetworkFull && cfg.NetworkSelective <= 0 {
		// SimGrid's non-selective re-solve of every active constraint:
		// whole components, as changed ones are all that can move.
		s.netSys.SimGridSelective, s.netSys.Incremental = false, false
	}
	if cfg.CPUFull {
		s.cpuSys.SimGridSelective, s.cpuSys.Incremental = false, false
	}
	s.netSys.Stamps = s.orderWatched() && s.netSys.SimGridSelective && s.netSys.Incremental
	if s.netSys.Stamps && !cfg.CPUFull {
		// The CPUs re-solved SimGrid's way, each whole, reporting what
		// SimGrid reports: their dates SimGrid's to the bit (exactDates).
		s.cpuSys.SimGridSelective, s.cpuSys.Incremental = true, false
	}
	s.netSys.SetConcurrencyLimit(cfg.ConcurrencyLimit)
	s.cpuSys.SetConcurrencyLimit(cfg.ConcurrencyLimit)
	for i := range s.hosts {
		h := &s.hosts[i]
		h.cpu = s.cpuSys.NewConstraint(h.speed*float64(h.cores), false)
		if s.m.Hosts[i].PState != 0 {
			// SimGrid's set_pstate on a new host sets its CPU's bound
			// again: the CPU is in the first solve's modified set.
			s.cpuSys.Touch(h.cpu)
		}
	}
	for _, l := range s.m.Links {
		s.links = append(s.links, s.netSys.NewConstraint(l.Bandwidth, l.FatPipe))
	}
}

// openRanks opens every rank's reader, for the engine that replays.
func (s *simulation) openRanks(src trace.Source) error {
	if s.deps {
		s.dr = make([]depRank, s.nranks)
	}
	for i := range s.nranks {
		h := s.m.RankHost[i]
		if h < 0 || h >= len(s.m.Hosts) {
			return fmt.Errorf("sim: rank %d on unknown host %d", i, h)
		}
		rd, err := src.OpenRank(i)
		if err != nil {
			return fmt.Errorf("sim: rank %d: %w", i, err)
		}
		if s.deps {
			s.dr[i].rd, s.dr[i].host = rd, h
			continue
		}
		r := &rank{id: int32(i), host: h, rd: rd, matchMax: -1}
		r.mbox.lastPost, r.mbox.lastProbe = -1, -1
		r.pos, _ = rd.(trace.Positioner)
		s.ranks = append(s.ranks, r)
		if s.cfg.StartDates == nil || s.cfg.StartDates[i] == 0 {
			s.runq = append(s.runq, r)
			continue
		}
		// A timer starts it (in rank order among those of one date).
		a := s.newAction(actStart)
		a.rank = r
		s.heapSet(a, s.cfg.StartDates[i], hMaxDuration)
	}
	return nil
}

// markSolo marks the hosts whose computations never share a core; a rank
// on an unknown host is left to openRanks to refuse.
func (s *simulation) markSolo() {
	n := make([]int, len(s.hosts))
	for _, h := range s.m.RankHost[:s.nranks] {
		if h >= 0 && h < len(n) {
			n[h]++
		}
	}
	for i := range s.hosts {
		h := &s.hosts[i]
		h.solo = n[i] <= h.cores && !h.track && h.energy == nil
	}
}

// close closes the ranks' readers, either engine's.
func (s *simulation) close() {
	for _, r := range s.ranks {
		if r.rd != nil {
			r.rd.Close()
			r.rd = nil
		}
	}
	for i := range s.dr {
		if r := &s.dr[i]; r.rd != nil {
			r.rd.Close()
			r.rd = nil
		}
	}
}

// loop is the simulation: run every runnable rank until it blocks, then
// advance the clock to the next resource event, until nothing is left.
func (s *simulation) loop() error {
	s.presolve()
	for {
		for i := 0; i < len(s.runq); i++ {
			// Ranks woken while running others are appended and run in
			// this same round, at the same date.
			r := s.runq[i]
			r.queued = false
			s.grp, s.starter = 0, r.id
			if r.grpAdv == s.advances {
				s.grp = r.grp
			}
			s.runRank(r)
			s.grp, s.starter = 0, -1
			if len(s.lateUnrefs) > 0 {
				s.dropLateRefs()
			}
			if s.err != nil {
				return s.err
			}
		}
		s.runq = s.runq[:0]
		more := s.advance()
		if s.err != nil {
			return s.err
		}
		if !more {
			break
		}
	}
	var dl DeadlockError
	for _, r := range s.ranks {
		if !r.done {
			b := Blocked{Rank: int(r.id), Action: "end of trace (waiting for its pending requests)"}
			switch {
			case r.ev == &finalBarrier:
				b.Action = "end of trace (the barrier of smpi/finalization-barrier)"
			case r.busy && r.ev != nil:
				b.Action = r.ev.String()
				b.Position = r.position()
			}
			dl.Blocked = append(dl.Blocked, b)
		}
	}
	if len(dl.Blocked) > 0 {
		dl.Time = s.now
		dl.Stalled = s.stalledFlows()
		return &dl
	}
	return nil
}

// dropLateRefs drops the references of lateUnrefs.
func (s *simulation) dropLateRefs() {
	for _, q := range s.lateUnrefs {
		s.unref(q)
	}
	s.lateUnrefs = s.lateUnrefs[:0]
}

func (s *simulation) wake(r *rank) {
	if r.holding {
		s.release(r)
	}
	if r.initSleep {
		r.blocked, r.initSleep = false, false
	}
	if r.blocked {
		r.blocked = false
		d := s.now - r.blockStart
		w := 0.0
		if r.matchMax > r.blockStart {
			w = math.Min(r.matchMax, s.now) - r.blockStart
		}
		switch {
		case r.backoff:
			r.res.Backoff += d
		case r.io:
			r.res.IO += d
			r.io = false
		case r.computing:
			r.res.Compute += d
		default:
			r.res.Wait += w
			r.res.Comm += d - w
		}
		r.backoff = false
	}
	if !r.queued {
		s.requeue(r)
	}
}

// hold puts on r's host the sleep action SimGrid creates for a blocked
// wait on a computation or on a single communication (to notice host
// failures), and for a sleep: a disabled variable on the host's CPU
// constraint, which changes the order in which SimGrid re-solves that
// CPU (and so the order of simultaneous completions), until the awaited
// activity ends (release, when r wakes). The sleep of a wait has no end
// (wait): SimGrid marks it ignored at once, a change of state of a CPU
// action that the energy model notices.
func (s *simulation) hold(r *rank, wait bool) {
	r.holding = true
	h := &s.hosts[r.host]
	switch {
	case h.solo:
	case s.cfg.ConcurrencyLimit >= 0:
		s.holdLimited(r, h, wait)
	default:
		s.cpuSys.Hold(h.cpu)
	}
	if wait && h.energy != nil {
		s.energyStateChange(h, s.now)
	}
}

// release ends r's hold, after the awaited activity left the system, as
// SimGrid frees the sleep action after the activity's own action.
func (s *simulation) release(r *rank) {
	r.holding = false
	r.sleepAct = nil
	if v := r.sleepVar; v != nil {
		s.cpuSys.Remove(v)
		s.sleepVars = append(s.sleepVars, v)
		r.sleepVar = nil
		return
	}
	if h := &s.hosts[r.host]; !h.solo {
		s.cpuSys.Release(h.cpu)
	}
}

// holdLimited is hold under a concurrency limit, where the sleep action's
// variable can matter: SimGrid enables it on the CPU, then disables it,
// and if the CPU had no slot left it is staged instead, and takes the
// next slot that frees there, sharing the CPU as a computation would
// until the rank wakes (a wait's sleep is an ignored action, never
// scheduled; see sleepShared).
func (s *simulation) holdLimited(r *rank, h *hostState, wait bool) {
	id := -2 - r.id
	var v *maxmin.Variable
	if n := len(s.sleepVars); n > 0 {
		v = s.sleepVars[n-1]
		s.sleepVars = s.sleepVars[:n-1]
		v.Reset(id, 1, h.execBound(0))
	} else {
		v = s.cpuSys.NewVariable(id, 1, h.execBound(0), 1)
	}
	s.cpuSys.Expand(h.cpu, v, 1)
	s.cpuSys.SetPenalty(v, 0)
	r.sleepVar, r.holdWait = v, wait
}

// sleepShared handles a sleep variable a re-solve gave a share. SimGrid's
// sleep action is a CPU action of one flop: a wait's is ignored, never
// scheduled, but a timed sleep's (sleepFor) ends when it has computed its
// flop if that comes before its duration.
func (s *simulation) sleepShared(v *maxmin.Variable) {
	r := s.ranks[-2-v.ID]
	a := r.sleepAct
	if r.holdWait || a == nil || !a.running {
		return
	}
	doubleUpdate(&a.remains, a.lastValue*(s.now-a.shareMark), s.cfg.MaxminPrecision*s.cfg.SurfPrecision)
	a.shareMark = s.now
	a.lastValue = v.Value()
	end := a.lastUpdate + a.latency
	if a.lastValue <= 0 {
		s.heapSet(a, end, hMaxDuration)
		return
	}
	t := s.now
	if a.remains > 0 {
		t += a.remains / a.lastValue
	}
	if end < t {
		s.heapSet(a, end, hMaxDuration)
	} else {
		s.heapSet(a, t, hNormal)
	}
}

// block suspends r until what it waits for completes.
func (s *simulation) block(r *rank, computing bool) {
	r.blocked = true
	r.computing = computing
	r.blockStart = s.now
	r.matchMax = -1
}

func (s *simulation) fail(r *rank, format string, a ...any) {
	if s.err != nil {
		return
	}
	pos := r.position()
	if pos != "" {
		pos += ": "
	}
	s.err = fmt.Errorf("%srank %d: %s", pos, r.id, fmt.Sprintf(format, a...))
}

func (s *simulation) result() *Result {
	res := &Result{Actions: s.stats.actions, Messages: s.stats.messages, Bytes: s.stats.bytes, Solver: SolverIncremental, Work: s.work,
		Engine: EngineEvents}
	res.Work.Advances = int64(s.advances)
	if s.cfg.Compat && s.cfg.Solver == SolverSimGrid {
		res.Solver = SolverSimGrid
	}
	for _, r := range s.ranks {
		res.Ranks = append(res.Ranks, r.res)
		res.Unreceived += int64(r.mbox.nsends)
	}
	if s.cyc != nil {
		res.Skipped, res.SkippedActions = s.cyc.periods, s.cyc.actions
	}
	if r := s.lastDone; r != nil {
		// SimGrid's replay prints the time of the rank that ends last,
		// the last of those ending at one date in its order: they differ
		// where ranks started at different dates (instances).
		res.Time = r.res.Finish - r.res.Init
	}
	if s.cfg.Energy {
		res.Energy = s.energy()
	}
	if s.cfg.LinkEnergy {
		res.LinkEnergy = s.linkEnergyReport()
	}
	return res
}

// Summary formats per-rank results as a table, for humans.
// A column of SMPI's test back-off (and the tests) is added when a rank
// slept in it.
func (r *Result) Summary() string {
	var b strings.Builder
	backoff, io := r.Backoff() > 0, false
	for _, x := range r.Ranks {
		io = io || x.IO > 0
	}
	fmt.Fprintf(&b, "%-6s %14s %14s %14s %14s", "rank", "finish", "compute", "comm", "blocked")
	if io {
		fmt.Fprintf(&b, " %14s", "io")
	}
	if backoff {
		fmt.Fprintf(&b, " %14s %10s %10s", "test backoff", "tests", "failed")
	}
	b.WriteByte('\n')
	for i, x := range r.Ranks {
		fmt.Fprintf(&b, "%-6d %14.9f %14.9f %14.9f %14.9f", i, x.Finish, x.Compute, x.Comm, x.Wait)
		if io {
			fmt.Fprintf(&b, " %14.9f", x.IO)
		}
		if backoff {
			fmt.Fprintf(&b, " %14.9f %10d %10d", x.Backoff, x.Tests, x.FailedTests)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// Backoff returns the time all ranks slept in SMPI's test back-off.
func (r *Result) Backoff() float64 {
	var t float64
	for _, x := range r.Ranks {
		t += x.Backoff
	}
	return t
}

// Slowest returns the ranks sorted by finish time, latest first.
func (r *Result) Slowest() []int {
	idx := make([]int, len(r.Ranks))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return r.Ranks[idx[a]].Finish > r.Ranks[idx[b]].Finish })
	return idx
}
