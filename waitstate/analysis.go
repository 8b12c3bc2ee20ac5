package waitstate

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"kairos/trace"
)

// Kind is a kind of wait state.
type Kind uint8

// The wait states, with Scalasca's names.
const (
	LateSender Kind = iota
	LateReceiver
	WaitNxN
	WaitBarrier
	LateBroadcast
	EarlyReduce
	EarlyScan
	WaitFinalize
	numKinds
)

var kindNames = [numKinds]string{"late sender", "late receiver", "wait at N×N", "wait at barrier",
	"late broadcast", "early reduce", "early scan", "wait at finalize"}

// String returns the wait state's name, as Scalasca writes it in lower
// case.
func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", int(k))
}

// MarshalText writes the kind's name.
func (k Kind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// ErrUntimed is returned for a trace without timestamps.
var ErrUntimed = errors.New("the trace has no timestamps: wait states need a timed trace (OTF2, DUMPI, Alawneh et al.'s text traces, or kairos simulate --timed-trace)")

// Options are the analysis' settings.
type Options struct {
	// Waits lists every wait state in Analysis.Waits (for timelines).
	Waits bool
}

// Analysis is the result: the wait states and their root causes. Times
// are in seconds.
type Analysis struct {
	Ranks int `json:"ranks"`
	// Runtime is the span of the trace, from the first event's enter to
	// the last one's exit; RankTime is the time of all the ranks
	// together, each from its first event to its last.
	Runtime  float64 `json:"runtime_s"`
	RankTime float64 `json:"rank_time_s"`
	// Waiting is the waiting time of all the wait states.
	Waiting float64 `json:"waiting_s"`
	// Unexplained is the waiting not traced to any delay: a message's
	// transfer, or a causer no later than its partner over their interval.
	Unexplained float64 `json:"unexplained_s"`
	// Kinds are the wait states by kind, the costliest first.
	Kinds []KindTotal `json:"kinds"`
	// Causes are the delays that caused the waiting, the costliest
	// first: Causes[0] is where to look first.
	Causes []Cause `json:"causes"`
	// RankWaiting and RankCost are each rank's waiting time and the
	// waiting its delays caused (direct and propagated).
	RankWaiting []float64 `json:"rank_waiting_s"`
	RankCost    []float64 `json:"rank_cost_s"`
	// CriticalPath is the chain of activities the run's length depends on.
	CriticalPath CriticalPath `json:"critical_path"`
	// Unmatched counts messages without their other end and collectives
	// without all their members, which make no wait states.
	Unmatched int `json:"unmatched"`
	// ClockViolations counts receives that ended before their send
	// began and collective calls that ended before their last member
	// entered: timestamps that break the clock condition (unsynchronized
	// clocks), whose waits are clipped to the calls.
	ClockViolations int `json:"clock_violations"`
	// Alltoallv is the time of all the ranks in MPI_Alltoallv and
	// MPI_Alltoallw, which make no wait states (Scalasca leaves them out:
	// a sparse exchange need not synchronize its members), so that the
	// reports can say how much time that leaves unanalysed.
	Alltoallv float64 `json:"alltoallv_s"`
	// Waits lists every wait state, with Options.Waits.
	Waits []Wait `json:"waits,omitempty"`
}

// Moved compares two analyses of one run (a trace and its reduction,
// whose times differ within an error): it returns the kind of wait state
// whose waiting differs most between them, or "waiting" where the totals
// differ more, and by how many seconds.
func Moved(a, b *Analysis) (what string, by float64) {
	var sa, sb [numKinds]float64
	for _, t := range a.Kinds {
		sa[t.Kind] = t.Seconds
	}
	for _, t := range b.Kinds {
		sb[t.Kind] = t.Seconds
	}
	what, by = "waiting", math.Abs(a.Waiting-b.Waiting)
	for k := range numKinds {
		if d := math.Abs(sa[k] - sb[k]); d > by {
			what, by = k.String(), d
		}
	}
	return what, by
}

// KindTotal is the waiting of one kind of wait state: Direct is the part
// explained by the causer's own delay, Indirect the part that propagated
// from wait states of the causer (Scalasca's direct and indirect wait
// states); the rest is unexplained.
type KindTotal struct {
	Kind     Kind    `json:"kind"`
	Count    int     `json:"count"`
	Seconds  float64 `json:"seconds"`
	Direct   float64 `json:"direct_s"`
	Indirect float64 `json:"indirect_s"`
}

// Cause is a root cause: the delay of one rank in one activity. Direct
// is its short-term cost (the waiting it caused at the next
// synchronization with the waiting ranks), Propagated its long-term cost
// (the waiting it caused further on, through wait states that made
// other ranks late in turn); Share is their sum over all the waiting.
type Cause struct {
	Rank     int32  `json:"rank"`
	Activity string `json:"activity"`  // "computation" or the MPI call
	CallPath string `json:"call_path"` // the region of the call tree, outermost first, "/"-separated; "" if unknown
	// DirectKinds are the direct costs by kind of wait state.
	DirectKinds map[string]float64 `json:"direct_by_kind_s"`
	Direct      float64            `json:"direct_s"`
	Propagated  float64            `json:"propagated_s"`
	Cost        float64            `json:"cost_s"`
	Share       float64            `json:"share"`
}

// Where names the cause's activity and region, as "computation in
// main/solve".
func (c *Cause) Where() string {
	if c.CallPath == "" {
		return c.Activity
	}
	return c.Activity + " in " + c.CallPath
}

// Wait is one wait state: rank Rank waited from Start for Seconds in a
// call of Activity, for rank Causer.
type Wait struct {
	Rank     int32   `json:"rank"`
	Kind     Kind    `json:"kind"`
	Start    float64 `json:"start_s"`
	Seconds  float64 `json:"seconds"`
	Causer   int32   `json:"causer"`
	Activity string  `json:"activity"`
	Direct   float64 `json:"direct_s"`
	Indirect float64 `json:"indirect_s"`
}

// CriticalPath is the profile of the critical path: its length and its
// time by rank and by activity.
type CriticalPath struct {
	Seconds    float64        `json:"seconds"`
	Ranks      []PathRank     `json:"ranks"`      // the most time first
	Activities []PathActivity `json:"activities"` // the most time first
}

// PathRank is a rank's time on the critical path.
type PathRank struct {
	Rank    int32   `json:"rank"`
	Seconds float64 `json:"seconds"`
}

// PathActivity is an activity's time on the critical path, its mean
// non-waiting time per rank and the critical-path imbalance, the excess
// of the first over the second: what shortening the activity on the
// path, not everywhere, would save.
type PathActivity struct {
	Activity  string  `json:"activity"`
	CallPath  string  `json:"call_path"`
	Seconds   float64 `json:"seconds"`
	Mean      float64 `json:"mean_rank_s"`
	Imbalance float64 `json:"imbalance_s"`
}

// Analyze finds the wait states of src and their root causes. It reads
// each rank once.
func Analyze(src trace.Source, opt Options) (*Analysis, error) {
	n := src.NumRanks()
	if n == 0 {
		return nil, errors.New("the trace has no ranks")
	}
	acts := newActivities(src.Meta())
	ranks := make([]rankData, n)
	timed, events := false, 0
	for r := range ranks {
		var hint sizes
		if r > 0 { // the previous rank's, an eighth more: SPMD ranks grow no list by copies
			hint = ranks[r-1].sizes()
		}
		rd, err := readRank(src, r, acts, hint)
		if err != nil {
			return nil, err
		}
		for i := range rd.spans {
			timed = timed || rd.spans[i].flags&untimed == 0
		}
		events += len(rd.spans)
		ranks[r] = rd
	}
	if !timed && events > 0 { // no events, no wait states: nothing to time
		return nil, ErrUntimed
	}
	msgs, unmatched := matchMessages(ranks)
	colls, incomplete := matchCollectives(ranks, src.Meta())
	d := newDetector(ranks)
	d.messages(msgs)
	for i := range colls {
		d.collective(&colls[i])
	}
	for r := range ranks { // matched and detected: a long run's largest lists after its spans
		ranks[r].sends, ranks[r].recvs, ranks[r].colls = nil, nil, nil
	}
	d.sortEntries()
	a := &analyzer{detector: d, acts: acts, meta: src.Meta(), startUp: acts.id(startUp)}
	a.origin, a.firsts = origins(ranks)
	res := a.costs(opt)
	res.Unmatched = unmatched + incomplete
	res.ClockViolations = d.violations
	res.CriticalPath = a.criticalPath()
	return res, nil
}

// origins returns the first enter of the trace and of each rank.
func origins(ranks []rankData) (origin trace.Time, firsts []trace.Time) {
	firsts = make([]trace.Time, len(ranks))
	seen := false
	for r := range ranks {
		lo, _, ok := timedBounds(ranks[r].spans)
		if !ok {
			continue
		}
		firsts[r] = lo
		if !seen || lo < origin {
			origin = lo
		}
		seen = true
	}
	for r := range firsts {
		firsts[r] = max(firsts[r], origin)
	}
	return origin, firsts
}

// name returns an activity's name and call path, as a Cause shows them.
// A call the trace knows only by its region (OTF2's other MPI calls) is
// named by it.
func (a *analyzer) name(id uint32) (activity, path string) {
	k := a.acts.list[id]
	p := a.meta.CallPath(k.region)
	switch {
	case k == startUp:
		return "start-up", ""
	case k.kind == trace.Compute:
		activity = "computation"
	case k.kind.NamedByRegion() && len(p) > 0 && strings.HasPrefix(p[len(p)-1], "MPI_"):
		activity, p = p[len(p)-1], p[:len(p)-1]
	default:
		activity = mpiName(k.kind)
	}
	return activity, strings.Join(p, "/")
}

// mpiName is the MPI function of a kind.
func mpiName(k trace.Kind) string {
	if n := k.MPIName(); n != "" {
		return n
	}
	return "other MPI call"
}

// sortCauses orders causes by cost, then rank and place.
func sortCauses(cs []Cause) {
	slices.SortFunc(cs, func(a, b Cause) int {
		switch {
		case a.Cost != b.Cost:
			if a.Cost > b.Cost {
				return -1
			}
			return 1
		case a.Rank != b.Rank:
			return int(a.Rank - b.Rank)
		}
		return strings.Compare(a.Where(), b.Where())
	})
}
