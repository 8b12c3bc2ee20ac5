package sim

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"kairos/platform"
)

// Model names accepted by network/model.
const (
	ModelSMPI = "SMPI" // CM02 fluid model with SMPI's piecewise factors (smpirun's default)
	ModelLV08 = "LV08" // constant factors 13.01 / 0.97, weight-S 20537
	ModelCM02 = "CM02" // constant factors 1 / 1, weight-S 0
	ModelIB   = "IB"   // SMPI with InfiniBand penalties (smpi/IB-penalty-factors)
)

// Factor is one segment of a piecewise factor table: Value applies to
// sizes strictly above Threshold (up to the next threshold).
type Factor struct {
	Threshold float64
	Value     float64
}

// Factors is a piecewise table sorted by threshold.
type Factors []Factor

// At returns the factor for a message of size bytes (the payload with its
// envelope). SimGrid 3.32's rule: value k applies to t_k < size <= t_k+1,
// sizes up to the smallest threshold get 1.
func (f Factors) At(size float64) float64 {
	cur := 1.0
	for _, s := range f {
		if size <= s.Threshold {
			return cur
		}
		cur = s.Value
	}
	return cur
}

// Overhead is a CPU overhead in seconds as a piecewise-linear function of
// a message's size (without the envelope), SimGrid's smpi/os, smpi/ois
// and smpi/or: piece k costs Base + PerByte x size for sizes in
// (Threshold_k, Threshold_k+1]; the first piece also covers the sizes up
// to its threshold.
type Overhead []OverheadPiece

// zero reports whether o is no overhead at any size.
func (o Overhead) zero() bool {
	for _, p := range o {
		if p.Base != 0 || p.PerByte != 0 {
			return false
		}
	}
	return true
}

// OverheadPiece is one piece of an Overhead.
type OverheadPiece struct{ Threshold, Base, PerByte float64 }

// At returns the overhead of a message of size bytes (SimGrid 3.32's
// smpi::Host::osend and its siblings).
func (o Overhead) At(size int64) float64 {
	if len(o) == 0 {
		return 0
	}
	x := float64(size)
	cur := o[0].Base + o[0].PerByte*x
	for _, p := range o {
		if x <= p.Threshold {
			return cur
		}
		cur = p.Base + p.PerByte*x
	}
	return cur
}

// ParseOverhead reads SimGrid's "threshold:base:per-byte;..." syntax
// (values after the second are ignored, as SimGrid does: its default is
// "0:0:0:0:0").
func ParseOverhead(s string) (Overhead, error) {
	var o Overhead
	err := parsePieces(s, 3, "overhead", "threshold:base:per-byte", func(v []float64) bool {
		if v[1] < 0 || v[2] < 0 || math.IsInf(v[1], 0) || math.IsInf(v[2], 0) {
			return false
		}
		o = append(o, OverheadPiece{v[0], v[1], v[2]})
		return true
	})
	sort.SliceStable(o, func(i, j int) bool { return o[i].Threshold < o[j].Threshold })
	return o, err
}

// ParseFactors reads SimGrid's "thresh:value;thresh:value;..." syntax.
func ParseFactors(s string) (Factors, error) {
	var f Factors
	err := parsePieces(s, 2, "factor", "threshold:value", func(v []float64) bool {
		f = append(f, Factor{v[0], v[1]})
		return v[1] >= 0 && !math.IsInf(v[1], 0) && !math.IsInf(v[0], 0)
	})
	sort.SliceStable(f, func(i, j int) bool { return f[i].Threshold < f[j].Threshold })
	return f, err
}

// parsePieces reads SimGrid's piecewise syntax, pieces separated by ";"
// and numbers by ":", the first a size threshold (not negative), and
// hands the first n numbers of each piece to add, which reports whether
// it accepts them. what and want name the syntax in errors.
func parsePieces(s string, n int, what, want string, add func([]float64) bool) error {
	v := make([]float64, n)
	for _, part := range strings.Split(s, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		f := strings.Split(part, ":")
		if len(f) < n {
			return fmt.Errorf("%s %q: want %s", what, part, want)
		}
		for i := range v {
			x, err := strconv.ParseFloat(f[i], 64)
			if err != nil || i == 0 && x < 0 {
				return fmt.Errorf("%s %q: bad number %q", what, part, f[i])
			}
			v[i] = x
		}
		if !add(v) {
			return fmt.Errorf("%s %q: want finite, non-negative values", what, part)
		}
	}
	return nil
}

// SimGrid 3.32's default SMPI factor tables (smpi/bw-factor, smpi/lat-factor).
const (
	DefaultBwFactors  = "65472:0.940694;15424:0.697866;9376:0.58729;5776:1.08739;3484:0.77493;1426:0.608902;732:0.341987;257:0.338112;0:0.812084"
	DefaultLatFactors = "65472:11.6436;15424:3.48845;9376:2.59299;5776:2.18796;3484:1.88101;1426:1.61075;732:1.9503;257:1.95341;0:2.01467"
)

// Config holds every model constant, each with SimGrid 3.32's default
// under smpirun. Set them with Set using SimGrid's --cfg names.
type Config struct {
	// Model is network/model: SMPI, LV08 or CM02.
	Model string
	// LatencyFactor, BandwidthFactor and WeightS are network/latency-factor,
	// network/bandwidth-factor and network/weight-S; negative means the
	// model's default.
	LatencyFactor, BandwidthFactor, WeightS float64
	// BwFactors and LatFactors are smpi/bw-factor and smpi/lat-factor,
	// used by the SMPI model.
	BwFactors, LatFactors Factors
	// TCPGamma is network/TCP-gamma: a flow's rate is bounded by
	// TCPGamma / (2 x route latency).
	TCPGamma float64
	// CrossTraffic is network/crosstraffic: each flow also loads its
	// reverse route with weight 0.05.
	CrossTraffic bool
	// DetachedThreshold is smpi/send-is-detached-thresh: sends of fewer
	// bytes return at once (eager); larger ones wait for the transfer.
	DetachedThreshold int64
	// AsyncSmallThreshold is smpi/async-small-thresh: messages of fewer
	// bytes start their transfer when sent, received or not (SMPI's
	// permanent receive mailbox), and every send and receive start holds
	// the receiver's mailbox mutex. 0 (the default) turns it off (a
	// negative value, as in SimGrid, keeps the mutex and makes no message
	// small); it may not exceed DetachedThreshold.
	AsyncSmallThreshold int64
	// Envelope is the bytes added to every message on the wire (16).
	Envelope int64
	// TestSleep is smpi/test: the sleep before each MPI_Test, multiplied
	// by one more than the number of failed tests since the last success
	// (of any rank: SimGrid keeps one count for the process).
	TestSleep float64
	// IprobeSleep is smpi/iprobe: the computation time of each MPI_Iprobe
	// (a receive of unknown size probes first), multiplied like TestSleep.
	IprobeSleep float64
	// IprobeCPUUsage is smpi/iprobe-cpu-usage: the share of the host's
	// speed an iprobe's computation may use.
	IprobeCPUUsage float64
	// SendOverhead, ISendOverhead and RecvOverhead are smpi/os, smpi/ois
	// and smpi/or: the sender sleeps SendOverhead before posting a
	// detached (eager) blocking send and ISendOverhead before posting any
	// non-blocking one (MPI_Isend, and the sends SMPI's collectives and
	// sendrecv post); the receiver sleeps RecvOverhead when a wait or a
	// test finishes a receive that matched a detached send.
	SendOverhead, ISendOverhead, RecvOverhead Overhead
	// FinalizationBarrier is smpi/finalization-barrier: every rank ends
	// with a barrier on MPI_COMM_WORLD (the selected algorithm), after
	// waiting for its leftover requests.
	FinalizationBarrier bool
	// InitSleep is smpi/init: every rank sleeps this long (seconds)
	// before its first action, as SMPI's replay does after it starts.
	InitSleep float64
	// StartDelays, if not nil, are the flops each rank computes before
	// its trace, by rank: SimGrid's application instances (its
	// replay_multiple example), where a rank of a delayed instance
	// computes its delay in its first turn and the others yield theirs,
	// all then sleeping smpi/init.
	StartDelays []float64
	// StartDates, if not nil, are the dates (seconds) the ranks start at,
	// by rank: the jobs of a workload (SimGrid's replay_multiple_manual
	// example), whose ranks are created when their job starts. A rank
	// starting later is not there before: it takes no turn and holds no
	// resource. Jobs are instances: set StartDelays too (zeros).
	StartDates []float64
	// ActorKeys, if not nil, are by rank the number SimGrid's replay
	// stores the rank's requests under, for waits and tests to look them
	// up: its actor's number minus one. With several applications, the
	// waits look up their own ranks (trace.MergeOptions.LocalWaitKeys),
	// and a wait whose key no request has returns at once (SimGrid's
	// quirk). Without ActorKeys, a rank's is its rank in the merged trace
	// (the actors of a deployment, one after the other).
	ActorKeys []int32
	// GrowInjectedTimes is smpi/grow-injected-times.
	GrowInjectedTimes bool
	// SimulateComputation is smpi/simulate-computation: when false,
	// compute actions take no time (reduction flops still do, as in
	// SimGrid).
	SimulateComputation bool
	// MaxminPrecision and SurfPrecision are maxmin/precision and
	// surf/precision (smpirun sets 1e-9).
	MaxminPrecision, SurfPrecision float64
	// Speed, if positive, overrides every host's speed (flop/s).
	Speed float64
	// HostSpeed and CPUThreshold are smpi/host-speed and
	// smpi/cpu-threshold, the rules by which SMPI turns the time real
	// code spends between MPI calls into computation: a gap of at least
	// CPUThreshold seconds (+Inf: none) becomes gap x HostSpeed flops.
	// Run replays time-independent traces; its caller untimes a timed
	// one with them (trace.UntimedAbove). HostSpeed 0, the default,
	// leaves the speed to the caller, where SimGrid's default is a
	// placeholder of 20000 flop/s it warns about.
	HostSpeed, CPUThreshold float64
	// Colls selects the algorithm of each collective ("bcast" ->
	// "binomial_tree"), as smpi/<coll> does; "ompi" picks it with Open
	// MPI's rules.
	Colls map[string]string
	// Selector picks the algorithm of the collectives Colls leaves unset,
	// as smpi/coll-selector does: "" (SimGrid's defaults) or "ompi".
	Selector string
	// NetworkFull is network/optim:Full: SimGrid's network model then
	// re-solves the whole sharing at every change (no selective update,
	// none of its quirks) and, at every step of the clock, updates every
	// transfer's remaining bytes and latency by the step and takes the
	// next step to the nearest end (the "full" update, where Lazy keeps a
	// date per transfer). The times differ from Lazy's in rounding, and
	// where the selective update's quirk strikes.
	NetworkFull bool
	// NetworkSelective records network/maxmin-selective-update: 0 if not
	// given, 1 if yes, -1 if no (which only network/optim:Full takes).
	// Full re-solves everything by default; with yes, only what SimGrid's
	// selective update marks, quirk included.
	NetworkSelective int8
	// CPUFull is cpu/optim:Full: at every step of the clock, SimGrid's CPU
	// model counts every computation's remaining flops and every sleep's
	// remaining duration down by the step and takes the next step to the
	// nearest end, where Lazy keeps a date per action; computations and
	// sleeps ending together end in the order they started (Lazy: in
	// the order of their dates' last update). The CPUs' shares are the
	// same: each action uses one CPU.
	CPUFull bool
	// CPUSelective records cpu/maxmin-selective-update as
	// NetworkSelective does (no only with cpu/optim:Full).
	CPUSelective int8
	// Analytic replaces the max-min sharing by a contention-free model:
	// every message takes latency x lat-factor + size / (bound x
	// bw-factor) on its own (Hockney alpha + n beta).
	Analytic bool
	// events runs the analytic mode on the event engine, where it would
	// run on the dependency-driven one (depend.go): for tests.
	events bool
	// Subrounds runs the ranks as SimGrid runs its actors: each issues one
	// simcall per turn, in the order they became runnable, so that
	// messages are matched and transfers start in SimGrid's order at each
	// date (kairos/subrounds, default yes). Off, each rank runs until it
	// blocks: the same times except where simultaneous transfers interact
	// through SimGrid's order-dependent selective max-min update (a few
	// 1e-5..1e-4 relative differences in the differential test).
	Subrounds bool
	// SkipPeriods skips the periods of a replay that repeat one before
	// (kairos/skip-periods, default yes; see cycles in cycle.go): the
	// same times, to rounding, without replaying each iteration.
	SkipPeriods bool
	// IBFactors are the IB model's penalty factors
	// (smpi/IB-penalty-factors).
	IBFactors IBFactors
	// LinkEnergy turns on SimGrid's link energy model (--cfg
	// plugin:link_energy): Result.LinkEnergy gives each link's joules,
	// from its wattage_range property.
	LinkEnergy bool
	// Energy turns on SimGrid's host energy model (--cfg
	// plugin:host_energy): Result.Energy gives each host's joules, from
	// its wattage_per_state property.
	Energy bool
	// Compat keeps SimGrid's quirks that Kairos would otherwise fix (see
	// QUIRKS in the package documentation). True by default.
	Compat bool
	// Solver chooses how the max-min sharing is re-solved after changes
	// (kairos/incremental; see Solver). Without Compat it is always
	// SolverIncremental.
	Solver Solver
	// TraceInternals is tracing/smpi/internals: a MessageObserver sees
	// every message, those inside collectives too, from the post of its
	// send to the return of the wait that gets its receive, as SimGrid's
	// tracing draws them then (without it, the trace's own point-to-point
	// messages, from the sending action's start to the end of the
	// receiving one).
	TraceInternals bool
	// ConcurrencyLimit is the number of activities that may share each
	// link and CPU at once (maxmin/concurrency-limit; negative: no
	// limit, SimGrid's default). Activities beyond it wait, taking no
	// share, until one ends (see maxmin.System.SetConcurrencyLimit).
	ConcurrencyLimit int
}

// Solver is a way of re-solving the max-min sharing.
type Solver uint8

// Solvers. The incremental solver re-solves only where a change reaches
// and reports only the shares that changed: the shares of a whole
// re-solve, to rounding. With Compat it reproduces SimGrid's
// selective-update quirk by proving, round by round, that the quirk
// cannot change the result, and replaying the round SimGrid's way when it
// cannot prove it (the stale shares SimGrid leaves are then re-solved
// SimGrid's way until solved whole again). SimGrid's result also depends
// on the order in which simultaneous events are handled, which the
// incremental solver keeps only where its dates show it (it does not
// reschedule the flows whose share did not change, and its dates are
// SimGrid's to rounding): see order.go.
const (
	// SolverAuto runs SolverSimGrid on a trace whose rank 0 does not
	// repeat exactly in its first events (mayRepeat: any real program's,
	// a noisy skeleton's), where no period can be skipped and the
	// incremental solver gains little. On one that may repeat, it runs
	// the incremental solver, which period skipping needs, and, if the
	// times turn out to depend on an order of simultaneous events that
	// may not be SimGrid's (SimGrid's marking of enables due at one date,
	// two ranks using SMPI's shared back-off counters at one date, a
	// wildcard receive, two transfers ending at one date under the IB
	// model), replays the whole trace again with SolverSimGrid. An
	// observer that is not a Restarter watches a second run, once the
	// first (unobserved) has shown which solver to use; with the verbose
	// log, which lists simultaneous actions in SimGrid's order, it is
	// SolverSimGrid from the start. The default.
	SolverAuto Solver = iota
	// SolverIncremental always runs the incremental solver.
	SolverIncremental
	// SolverSimGrid re-solves what SimGrid's selective update marks, as
	// SimGrid does.
	SolverSimGrid
)

// String returns the solver's kairos/incremental value.
func (v Solver) String() string {
	switch v {
	case SolverAuto:
		return "auto"
	case SolverIncremental:
		return "yes"
	}
	return "no"
}

// DefaultConfig returns SimGrid 3.32's settings under smpirun.
func DefaultConfig() Config {
	bw, _ := ParseFactors(DefaultBwFactors)
	lat, _ := ParseFactors(DefaultLatFactors)
	return Config{
		Model:               ModelSMPI,
		IBFactors:           DefaultIBFactors,
		LatencyFactor:       -1,
		BandwidthFactor:     -1,
		WeightS:             -1,
		BwFactors:           bw,
		LatFactors:          lat,
		TCPGamma:            4194304,
		CrossTraffic:        true,
		DetachedThreshold:   65536,
		Envelope:            16,
		TestSleep:           1e-4,
		IprobeSleep:         1e-4,
		IprobeCPUUsage:      1,
		GrowInjectedTimes:   true,
		SimulateComputation: true,
		CPUThreshold:        1e-6,
		MaxminPrecision:     1e-5,
		SurfPrecision:       1e-9,
		Colls:               map[string]string{},
		Compat:              true,
		Subrounds:           true,
		SkipPeriods:         true,
		ConcurrencyLimit:    -1,
	}
}

// setSelective records a */maxmin-selective-update value in dst as
// Config.NetworkSelective does: 1 for yes, -1 for no.
func setSelective(dst *int8, key, value string) error {
	on, err := ParseBool(key, value)
	switch {
	case err != nil:
		return err
	case on:
		*dst = 1
	default:
		*dst = -1
	}
	return nil
}

// checkOptim refuses the settings the network's and CPU's update modes do
// not take.
func (c Config) checkOptim() error {
	switch {
	case !c.NetworkFull && c.NetworkSelective < 0:
		return errors.New("sim: network/maxmin-selective-update:no needs network/optim:Full (the Lazy update needs selective update, as SimGrid says)")
	case !c.CPUFull && c.CPUSelective < 0:
		return errors.New("sim: cpu/maxmin-selective-update:no needs cpu/optim:Full (the Lazy update needs selective update, as SimGrid says)")
	}
	return nil
}

// CfgNames lists the --cfg keys Set accepts, for help texts.
var CfgNames = []string{
	"network/model", "network/latency-factor", "network/bandwidth-factor", "network/weight-S",
	"network/TCP-gamma", "network/crosstraffic", "smpi/bw-factor", "smpi/lat-factor",
	"smpi/send-is-detached-thresh", "smpi/async-small-thresh", "smpi/test", "smpi/iprobe", "smpi/iprobe-cpu-usage", "smpi/grow-injected-times",
	"smpi/finalization-barrier", "smpi/init",
	"smpi/simulate-computation", "smpi/host-speed (flop/s of the machine a timed trace was recorded on; default: rank 0's host)",
	"smpi/cpu-threshold (a timed trace's computations shorter than this many seconds are dropped, 1e-6; -1: all)",
	"maxmin/precision", "surf/precision", "smpi/coll-selector",
	"smpi/IB-penalty-factors (Be;Bs;ys of network/model:IB, 0.965;0.925;1.35)",
	"plugin (host_energy: each host's energy from its wattage_per_state property; link_energy: each link's from its wattage_range)",
	"smpi/<collective> (bcast, barrier, reduce, allreduce, alltoall, alltoallv, gather, allgather, allgatherv, scatter, reduce_scatter)",
	"smpi/os, smpi/ois, smpi/or (send and receive overheads, threshold:base:per-byte;...)",
	"tracing, tracing/smpi, tracing/filename, tracing/smpi/format (with tracing and tracing/smpi on, kairos simulate writes the replay to tracing/filename as a Paje or a TI trace, as smpirun -trace and -trace-ti; tracing/smpi/internals draws the messages inside collectives too; SimGrid's other tracing/* settings are accepted, no effect), smpi/map (kairos simulate prints each rank's host), smpi/display-timing (it prints the replay's wall time)",
	"smpi/privatization, smpi/shared-malloc, smpi/wtime and SimGrid's other settings for real code, path, contexts/*, debug/*, exception/cutpath (accepted, no effect on a replay)",
	"host/model (default, compound), cpu/model (Cas01), cpu/optim and network/optim (Lazy, or Full), */maxmin-selective-update (yes; no with */optim:Full), */solver (maxmin)",
	"maxmin/concurrency-limit (activities sharing each link and CPU at once, the others waiting until one ends; -1: no limit, the default)",
	"network/loopback-bw, network/loopback-lat (the implicit loopback of Full, Floyd and Dijkstra zones)",
	"kairos/envelope (bytes added to each message, 16)",
	"kairos/subrounds (yes: one simcall per rank and turn, SimGrid's order, the default)",
	"kairos/skip-periods (yes: a period of the replay that repeats the one before is not replayed again, its time is added, the default; no)",
	"kairos/simgrid-quirks (yes: reproduce SimGrid's quirks, the default; no: fix them)",
	"kairos/incremental (auto, the default: as SimGrid, but on a trace whose first events repeat exactly re-solve the sharing only where a change reaches, and replay SimGrid's way if its quirk strikes; yes: re-solve only where a change reaches throughout, SimGrid's times to rounding, not to the bit; no: as SimGrid)",
}

// closestSetting returns ", did you mean K?" for the supported keys K
// nearest to key (at most two edits away), "" if none is.
func closestSetting(key string) string {
	var best []string
	bestD := 3
	for _, entry := range CfgNames {
		for _, k := range strings.Split(strings.SplitN(entry, " (", 2)[0], ", ") {
			switch d := editDistance(key, k); {
			case d > 2:
			case d < bestD:
				best, bestD = []string{k}, d
			case d == bestD:
				best = append(best, k)
			}
		}
	}
	if len(best) == 0 || len(best) > 3 {
		return ""
	}
	return ", did you mean " + strings.Join(best, " or ") + "?"
}

// editDistance is the Levenshtein distance of a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// Set applies one SimGrid --cfg entry ("key:value" split by the caller).
func (c *Config) Set(key, value string) error {
	num := func() (float64, error) {
		v, err := parseSimgridNumber(value)
		if err != nil {
			return 0, fmt.Errorf("--cfg %s: %w", key, err)
		}
		return v, nil
	}
	var err error
	switch key {
	case "network/model":
		switch strings.ToUpper(value) {
		case ModelSMPI, ModelLV08, ModelCM02, ModelIB:
			c.Model = strings.ToUpper(value)
		default:
			return fmt.Errorf("--cfg network/model: %q is not supported (SMPI, IB, LV08, CM02)", value)
		}
	case "network/latency-factor":
		c.LatencyFactor, err = num()
	case "network/bandwidth-factor":
		c.BandwidthFactor, err = num()
	case "network/weight-S":
		c.WeightS, err = num()
	case "network/TCP-gamma", "network/TCP_gamma":
		c.TCPGamma, err = num()
	case "network/crosstraffic":
		c.CrossTraffic, err = ParseBool(key, value)
	case "smpi/bw-factor":
		c.BwFactors, err = ParseFactors(value)
	case "smpi/lat-factor":
		c.LatFactors, err = ParseFactors(value)
	case "smpi/send-is-detached-thresh":
		var v float64
		v, err = num()
		c.DetachedThreshold = int64(v)
	case "smpi/test":
		c.TestSleep, err = num()
	case "smpi/iprobe":
		c.IprobeSleep, err = num()
	case "smpi/IB-penalty-factors":
		c.IBFactors, err = ParseIBFactors(value)
	case "plugin":
		switch value {
		case "host_energy":
			c.Energy = true
		case "link_energy":
			c.LinkEnergy = true
		case "":
		default:
			return fmt.Errorf("--cfg plugin: %q is not supported (host_energy, link_energy)", value)
		}
	case "smpi/iprobe-cpu-usage":
		c.IprobeCPUUsage, err = num()
	case "smpi/grow-injected-times":
		c.GrowInjectedTimes, err = ParseBool(key, value)
	case "smpi/finalization-barrier":
		c.FinalizationBarrier, err = ParseBool(key, value)
	case "smpi/init":
		c.InitSleep, err = num()
		if err == nil && c.InitSleep < 0 {
			err = fmt.Errorf("--cfg %s: negative time %s", key, value)
		}
	case "smpi/simulate-computation":
		c.SimulateComputation, err = ParseBool(key, value)
	case "smpi/host-speed":
		c.HostSpeed, err = platform.ParseSpeed(value)
		if err != nil {
			err = fmt.Errorf("--cfg %s: %w", key, err)
		} else if !(c.HostSpeed > 0 && c.HostSpeed < math.Inf(1)) {
			err = fmt.Errorf("--cfg %s: %s is not a positive speed", key, value)
		}
	case "smpi/cpu-threshold":
		c.CPUThreshold, err = num()
		if err == nil && c.CPUThreshold < 0 {
			c.CPUThreshold = math.Inf(1) // "-1 for infinity"
		}
	case "maxmin/precision":
		c.MaxminPrecision, err = num()
	case "surf/precision":
		c.SurfPrecision, err = num()
	case "kairos/subrounds":
		c.Subrounds, err = ParseBool(key, value)
	case "kairos/skip-periods":
		c.SkipPeriods, err = ParseBool(key, value)
	case "kairos/envelope":
		var v float64
		v, err = num()
		c.Envelope = int64(v)
	case "kairos/simgrid-quirks":
		c.Compat, err = ParseBool(key, value)
	case "kairos/incremental":
		if value == "auto" {
			c.Solver = SolverAuto
			break
		}
		inc, perr := ParseBool(key, value)
		if perr != nil {
			return fmt.Errorf("--cfg %s: %q is not auto, yes or no", key, value)
		}
		c.Solver = map[bool]Solver{true: SolverIncremental, false: SolverSimGrid}[inc]
	case "smpi/coll-selector":
		switch value {
		case "", "default":
			c.Selector = ""
		case "ompi":
			c.Selector = value
		case "mpich":
			return fmt.Errorf("--cfg smpi/coll-selector: mpich is not supported: SimGrid 3.32's replay aborts with it on allreduce, bcast and reduce; use default or ompi, or choose algorithms per collective with smpi/<collective>")
		case "mvapich2", "impi":
			// Both pick SMP-aware algorithms, whose set-up fails under
			// replay (a segmentation fault, an invalid free) even on
			// one rank per host.
			return fmt.Errorf("--cfg smpi/coll-selector: %s is not supported: SimGrid 3.32's replay crashes with it; use default or ompi, or choose algorithms per collective with smpi/<collective>", value)
		default:
			return fmt.Errorf("--cfg smpi/coll-selector: %q is not supported (default, ompi); choose algorithms per collective with smpi/<collective>", value)
		}
	case "smpi/comp-adjustment-file", "smpi/papi-events",
		"smpi/privatization", "smpi/privatize-libs", "smpi/shared-malloc", "smpi/shared-malloc-blocksize",
		"smpi/shared-malloc-hugepage", "smpi/auto-shared-malloc-thresh", "smpi/display-allocs", "smpi/list-leaks",
		"smpi/trace-call-location", "smpi/trace-call-use-absolute-path", "smpi/errors-are-fatal", "smpi/pedantic",
		"smpi/tmpdir", "smpi/keep-temps", "smpi/np", "smpi/hostfile", "smpi/replay", "smpi/display-timing", "path",
		"smpi/wtime", "smpi/map", "exception/cutpath", "storage/max_file_descriptors":
		// Irrelevant to replayed timings: they time, privatise or
		// check real code, which a replay has none of, or only change
		// what SimGrid prints.
	case "host/model":
		if value != "default" && value != "compound" {
			return fmt.Errorf("--cfg host/model: only default and compound (CPU and network models apart) are supported")
		}
	case "cpu/optim":
		switch value {
		case "Lazy", "Full":
			c.CPUFull = value == "Full"
		case "TI":
			return fmt.Errorf("--cfg %s: TI (SimGrid's integration of speed profiles) is refused: SimGrid 3.32's SMPI aborts with it "+
				"(\"Invalid user bound ... in CPU TI model\": SMPI bounds every computation); use Lazy, SimGrid's default, or Full", key)
		default:
			return fmt.Errorf("--cfg %s: %q is not supported (Lazy, SimGrid's default, or Full)", key, value)
		}
	case "network/optim":
		switch value {
		case "Lazy", "Full":
			c.NetworkFull = value == "Full"
		default:
			return fmt.Errorf("--cfg %s: %q is not supported (Lazy, SimGrid's default, or Full)", key, value)
		}
	case "network/loopback-bw", "network/loopback-lat":
		// They shape the platform: platform.LoadWith applies them.
		_, err = num()
	case "network/maxmin-selective-update":
		err = setSelective(&c.NetworkSelective, key, value)
	case "cpu/maxmin-selective-update":
		err = setSelective(&c.CPUSelective, key, value)
	case "maxmin/concurrency-limit":
		n, e := strconv.Atoi(value)
		if e != nil {
			return fmt.Errorf("--cfg %s: %q is not an integer (a number of activities, -1 for no limit)", key, value)
		}
		c.ConcurrencyLimit = n
	case "network/solver", "cpu/solver", "host/solver":
		if value != "maxmin" {
			return fmt.Errorf("--cfg %s: only maxmin, SimGrid's default, is supported", key)
		}
	case "cpu/model":
		if value != "Cas01" {
			return fmt.Errorf("--cfg %s: only Cas01, SimGrid's default, is supported", key)
		}
	case "smpi/os", "smpi/ois", "smpi/or":
		o, perr := ParseOverhead(value)
		if perr != nil {
			return fmt.Errorf("--cfg %s: %v", key, perr)
		}
		switch key {
		case "smpi/os":
			c.SendOverhead = o
		case "smpi/ois":
			c.ISendOverhead = o
		default:
			c.RecvOverhead = o
		}
	case "tracing/smpi/internals":
		c.TraceInternals, err = ParseBool(key, value)
	case "smpi/async-small-thresh":
		var v float64
		v, err = num()
		c.AsyncSmallThreshold = int64(v)
	default:
		if key == "tracing" || strings.HasPrefix(key, "tracing/") || strings.HasPrefix(key, "contexts/") || strings.HasPrefix(key, "debug/") {
			return nil // SimGrid's own tracing, execution contexts and debugging
		}
		if coll, ok := strings.CutPrefix(key, "smpi/"); ok && IsCollectiveName(coll) {
			if !HasAlgorithm(coll, value) {
				return fmt.Errorf("--cfg %s: unknown algorithm %q (known: %s)", key, value, strings.Join(Algorithms(coll), ", "))
			}
			c.Colls[coll] = value
			return nil
		}
		return fmt.Errorf("--cfg %s: unknown setting%s (kairos simulate --help lists the supported ones)", key, closestSetting(key))
	}
	if err == nil {
		err = c.checkRange(key, value)
	}
	if err != nil && !strings.HasPrefix(err.Error(), "--cfg ") {
		err = fmt.Errorf("--cfg %s: %w", key, err)
	}
	return err
}

// checkRange refuses a value that parses but means nothing (issue 43): a
// negative latency factor, a bandwidth factor of 0 (every message would
// take forever: SimGrid reports a false deadlock), negative sizes and
// times, a precision of 0.
func (c *Config) checkRange(key, value string) error {
	var v float64
	positive := false
	switch key {
	case "network/latency-factor":
		v = c.LatencyFactor
	case "network/bandwidth-factor":
		v, positive = c.BandwidthFactor, true
	case "network/weight-S":
		v = c.WeightS
	case "network/TCP-gamma", "network/TCP_gamma":
		v = c.TCPGamma
	case "smpi/send-is-detached-thresh":
		v = float64(c.DetachedThreshold)
	case "smpi/async-small-thresh":
		// Negative is SimGrid's "no message is small": taken as it is.
		v = max(float64(c.AsyncSmallThreshold), 0)
	case "smpi/test":
		v = c.TestSleep
	case "smpi/iprobe":
		v = c.IprobeSleep
	case "smpi/iprobe-cpu-usage":
		v = c.IprobeCPUUsage
	case "maxmin/precision":
		v, positive = c.MaxminPrecision, true
	case "surf/precision":
		v, positive = c.SurfPrecision, true
	case "kairos/envelope":
		v = float64(c.Envelope)
	case "maxmin/concurrency-limit":
		if c.ConcurrencyLimit < -1 {
			return fmt.Errorf("--cfg %s: %q: expected a number of activities, or -1 for no limit", key, value)
		}
		return nil
	case "smpi/bw-factor":
		for _, f := range c.BwFactors {
			if !(f.Value > 0) {
				return fmt.Errorf("--cfg %s: factor %g from %g bytes: expected a positive factor (0 would make every message endless)", key, f.Value, f.Threshold)
			}
		}
		return nil
	default:
		return nil
	}
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return fmt.Errorf("--cfg %s: %q: expected a finite number", key, value)
	case positive && v <= 0:
		return fmt.Errorf("--cfg %s: %q: expected a positive value", key, value)
	case v < 0:
		return fmt.Errorf("--cfg %s: %q: expected 0 or more", key, value)
	}
	return nil
}

// ParseBool reads v, the value of the boolean setting key, as SimGrid's
// configuration does (yes, on, true, 1; no, off, false, 0).
func ParseBool(key, v string) (bool, error) {
	switch strings.ToLower(v) {
	case "yes", "on", "true", "1":
		return true, nil
	case "no", "off", "false", "0":
		return false, nil
	}
	return false, fmt.Errorf("--cfg %s: %q is not a boolean (yes/no)", key, v)
}

// parseSimgridNumber reads a number with an optional SimGrid unit suffix
// (f, kf, Mf, Gf, Bps, MBps, ...), as SimGrid's config does.
func parseSimgridNumber(s string) (float64, error) {
	s = strings.TrimSpace(s)
	end := len(s)
	for end > 0 && (s[end-1] < '0' || s[end-1] > '9') && s[end-1] != '.' {
		end--
	}
	v, err := strconv.ParseFloat(s[:end], 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	unit := s[end:]
	mult := 1.0
	if unit != "" {
		switch unit[0] {
		case 'k':
			mult = 1e3
		case 'M':
			mult = 1e6
		case 'G':
			mult = 1e9
		case 'T':
			mult = 1e12
		}
	}
	return v * mult, nil
}

// netParams returns the constants the network model uses.
func (c *Config) netParams() (latF, bwF, weightS float64) {
	switch c.Model {
	case ModelLV08:
		latF, bwF, weightS = 13.01, 0.97, 20537
	case ModelCM02:
		latF, bwF, weightS = 1, 1, 0
	default:
		latF, bwF, weightS = 1, 1, 8775
	}
	if c.LatencyFactor >= 0 {
		latF = c.LatencyFactor
	}
	if c.BandwidthFactor >= 0 {
		bwF = c.BandwidthFactor
	}
	if c.WeightS >= 0 {
		weightS = c.WeightS
	}
	return
}
