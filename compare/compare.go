// Package compare sets the summaries of several timed runs of a program
// side by side: a run before and after a change, at two scales, recorded
// on one machine and simulated on another. It answers what Cube's
// cube_diff, Scalasca's scaling analysis and Pipit's multirun analysis
// answer: which activity, at which call path, takes more or less of the
// run, and by how much.
//
// Times are compared per rank (the mean over ranks of a rank's time in an
// activity), so that runs on different numbers of ranks compare: a
// strong-scaling run whose communication grows shows it where the
// computation shrinks. The first run is the baseline. A run lasts from
// MPI_Init's return to MPI_Finalize's entry, the span a replay simulates,
// and neither call is compared: their time is the MPI library's start-up
// and tear-down (a second in a recorded MPI_Finalize, none in a replay),
// not the program's.
package compare

import (
	"fmt"
	"math"
	"sort"

	"kairos/stats"
	"kairos/trace"
)

// Run is the summary of one run.
type Run struct {
	Name   string `json:"name"`
	Ranks  int    `json:"ranks"`
	Events int64  `json:"events"`
	// Seconds is the run's time, from the earliest return from MPI_Init
	// to the latest entry into MPI_Finalize (stats.Stats.RunSeconds).
	Seconds float64 `json:"run_seconds"`
	// ComputeSeconds and MPISeconds are a rank's mean time out of and in
	// MPI calls (MPI_Init and MPI_Finalize left out).
	ComputeSeconds float64 `json:"compute_seconds_per_rank"`
	MPISeconds     float64 `json:"mpi_seconds_per_rank"`
	// MPIPercent is the share of the ranks' time in MPI calls.
	MPIPercent float64 `json:"mpi_percent"`
	// Efficiency is the baseline's rank-seconds (run time times ranks)
	// over this run's: its parallel efficiency against the baseline when
	// the ranks differ, its speed-up when they do not.
	Efficiency      float64 `json:"efficiency"`
	P2PMessages     int64   `json:"p2p_messages"`
	P2PBytes        int64   `json:"p2p_bytes"`
	Collectives     int64   `json:"collectives"`
	CollectiveBytes int64   `json:"collective_bytes"`
}

// Line is one activity (computation, or an MPI call), at one call path
// or over all of them, in every run.
type Line struct {
	Activity string `json:"activity"`
	// Path is the call path of the program's functions ("" for the
	// activity over all paths, or outside any function the trace names).
	Path string `json:"path,omitempty"`
	// Runs are its time in each run, in the runs' order (all zero where
	// a run has no such line).
	Runs []stats.Spread `json:"runs"`
	// Change is the last run's mean time a rank less the baseline's.
	Change float64 `json:"change_seconds_per_rank"`
}

// Comparison is several runs side by side.
type Comparison struct {
	Runs []Run `json:"runs"`
	// Activities are computation and each MPI call over all call paths,
	// the largest change first.
	Activities []Line `json:"activities"`
	// Paths are each activity at each call path, the largest change
	// first (none unless every run's trace names call paths).
	Paths []Line `json:"call_paths,omitempty"`
	// Unnamed are the runs whose traces name no call path where another
	// run's does (a TI trace replayed into an OTF2 archive, whose writer
	// wraps each rank in "main", beside the tracer's own archive): their
	// time is outside any function, which no call path of the others
	// matches, so that no call paths are compared, rather than every
	// line reading as new in one run and gone in the other.
	Unnamed []string `json:"runs_without_call_paths,omitempty"`
}

// Of compares the runs of summaries s, named names, the first the
// baseline. Every summary must be of a timed trace.
func Of(names []string, s []*stats.Stats) (*Comparison, error) {
	if len(s) < 2 || len(names) != len(s) {
		return nil, fmt.Errorf("compare: %d summaries and %d names: two runs or more, each named", len(s), len(names))
	}
	c := &Comparison{}
	acts := newTable(len(s))
	paths := newTable(len(s))
	var named int // runs whose traces name a call path
	for i, st := range s {
		if !st.Timed {
			return nil, fmt.Errorf("%s: the trace is not timed: compare needs times (replay it first: kairos simulate --timed-trace T.ktr ...)", names[i])
		}
		c.Runs = append(c.Runs, runOf(names[i], st))
		acts.add(i, "computation", "", computation(st))
		for _, p := range st.Profile {
			if name := mpiName(p.Call); !edge(name) {
				acts.add(i, name, "", p.Spread)
			}
		}
		unnamed := true
		for _, p := range st.Paths {
			if !edge(p.Activity) {
				paths.add(i, p.Activity, p.Path, p.Spread)
			}
			unnamed = unnamed && p.Path == ""
		}
		if unnamed {
			c.Unnamed = append(c.Unnamed, names[i])
		} else {
			named++
		}
	}
	base := c.Runs[0].Seconds * float64(c.Runs[0].Ranks)
	for i := range c.Runs {
		if rs := c.Runs[i].Seconds * float64(c.Runs[i].Ranks); rs > 0 {
			c.Runs[i].Efficiency = base / rs
		}
	}
	c.Activities = acts.lines()
	switch {
	case len(c.Unnamed) == 0:
		c.Paths = paths.lines()
	case named == 0:
		c.Unnamed = nil // no run names call paths: nothing to compare
	}
	return c, nil
}

// mpiName is the MPI function of a line of stats' profile, which names a
// kind of call as the model does ("waitall") and a call it names as the
// MPI function ("MPI_Iprobe"): both tables then name calls alike, as the
// call paths and the report do.
func mpiName(call string) string {
	if k, ok := trace.KindByName(call); ok && k.MPIName() != "" {
		return k.MPIName()
	}
	return call
}

// edge reports whether an MPI function is MPI_Init or MPI_Finalize.
func edge(name string) bool { return name == trace.Init.MPIName() || name == trace.Finalize.MPIName() }

// runOf summarises one run.
func runOf(name string, s *stats.Stats) Run {
	r := Run{Name: name, Ranks: s.Ranks, Events: s.Events, Seconds: s.RunSeconds, P2PMessages: s.P2PMessages, P2PBytes: s.P2PBytes,
		Collectives: s.Collectives, CollectiveBytes: s.CollectiveBytes}
	var mpi, total float64
	for _, p := range s.PerRank {
		mpi += p.MPISeconds
		total += p.TotalSeconds
	}
	for _, p := range s.Profile {
		if edge(mpiName(p.Call)) {
			mpi -= p.Seconds
			total -= p.Seconds
		}
	}
	if s.Ranks > 0 {
		r.MPISeconds = mpi / float64(s.Ranks)
		r.ComputeSeconds = (total - mpi) / float64(s.Ranks)
	}
	if total > 0 {
		r.MPIPercent = 100 * mpi / total
	}
	return r
}

// computation is the time out of MPI calls of s's ranks, and its spread.
func computation(s *stats.Stats) stats.Spread {
	sp := stats.Spread{MinRankSeconds: math.Inf(1)}
	if s.EmptyRanks > 0 || len(s.PerRank) == 0 {
		sp.MinRankSeconds = 0
	}
	for i, p := range s.PerRank { // in rank order: the lowest rank of the most
		v := p.TotalSeconds - p.MPISeconds
		sp.Seconds += v
		sp.MinRankSeconds = min(sp.MinRankSeconds, v)
		if i == 0 || v > sp.MaxRankSeconds {
			sp.MaxRankSeconds, sp.MaxRank = v, p.Rank
		}
	}
	if s.Ranks > 0 {
		sp.MeanRankSeconds = sp.Seconds / float64(s.Ranks)
	}
	return sp
}

// table gathers lines by activity and path.
type table struct {
	runs  int
	at    map[[2]string]*Line
	order []*Line
}

func newTable(runs int) *table { return &table{runs: runs, at: map[[2]string]*Line{}} }

// add adds sp to run i's time of activity at path: the model's kind of a
// call and the calls of no kind it names alike (the waitall kind and
// MPI_Waitall calls that complete nothing) are one line.
func (t *table) add(i int, activity, path string, sp stats.Spread) {
	k := [2]string{activity, path}
	l := t.at[k]
	if l == nil {
		l = &Line{Activity: activity, Path: path, Runs: make([]stats.Spread, t.runs)}
		t.at[k] = l
		t.order = append(t.order, l)
	}
	l.Runs[i] = addSpread(l.Runs[i], sp)
}

// addSpread adds two times of one run: its sums and means add, and the
// sums of its least and most ranks' times bound the least and most of
// the sum (exact where one is zero).
func addSpread(a, b stats.Spread) stats.Spread {
	if a == (stats.Spread{}) {
		return b
	}
	if b.MaxRankSeconds > a.MaxRankSeconds {
		a.MaxRank = b.MaxRank
	}
	a.Seconds += b.Seconds
	a.MinRankSeconds += b.MinRankSeconds
	a.MeanRankSeconds += b.MeanRankSeconds
	a.MaxRankSeconds += b.MaxRankSeconds
	return a
}

// lines returns the lines, the largest change first (ties by the
// baseline's time, then by name).
func (t *table) lines() []Line {
	out := make([]Line, 0, len(t.order))
	for _, l := range t.order {
		l.Change = l.Runs[len(l.Runs)-1].MeanRankSeconds - l.Runs[0].MeanRankSeconds
		out = append(out, *l)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := math.Abs(out[i].Change), math.Abs(out[j].Change)
		if a != b {
			return a > b
		}
		if x, y := out[i].Runs[0].MeanRankSeconds, out[j].Runs[0].MeanRankSeconds; x != y {
			return x > y
		}
		if out[i].Activity != out[j].Activity {
			return out[i].Activity < out[j].Activity
		}
		return out[i].Path < out[j].Path
	})
	return out
}
