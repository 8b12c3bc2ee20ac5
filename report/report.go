// Package report is what a performance engineer opens first: one
// self-contained HTML page of a trace that works offline, with the answers
// at the top (run time, what bounds it on each network, the worst waits and
// the rank and call path that caused them, the slowest phase), a zoomable timeline of every rank's
// states, and the analyses' figures and tables below; and the figures the
// verbs draw on their own (--svg), so that a figure reads the same
// everywhere, in one colour per meaning (package plot).
//
// It composes the analyses (stats, check, sim, clock, waitstate, pattern) on a trace
// the caller opened; what needs the command line's machinery (building a
// machine from a specification, reducing with an accuracy replay) the
// caller passes as functions.
package report

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"kairos/check"
	"kairos/clock"
	"kairos/pattern"
	"kairos/sim"
	"kairos/stats"
	"kairos/trace"
	"kairos/waitstate"
)

// DefaultTimelineBudget is the most bytes the timeline's data takes before
// base64 (a third more in the page): a 64-rank stencil of 1,000
// iterations fits at full detail.
const DefaultTimelineBudget = 3 << 20

// Options say how to analyse the trace.
type Options struct {
	// Name is the trace as the page names it (its path).
	Name string
	// Machine names the machine Simulate replays on, Speed the flop/s
	// of the classification's computation (for time-independent traces).
	Machine string
	Speed   float64
	// Notes say how the reader read the trace otherwise than it was
	// recorded (the notes every verb prints): the page lists them under
	// Validation, and the answer on the trace's soundness counts them.
	Notes []string
	// Analytic says that Simulate (and the reduction's replay) use the
	// contention-free analytic model, not SimGrid's: the page names it.
	Analytic bool
	// Simulate replays the trace on Machine and returns the result and,
	// if run is set, the simulated run's timed trace (the page's timeline
	// and analyses of a trace without timestamps of its own); nil leaves
	// the simulation out.
	Simulate func(src trace.Source, run bool) (*sim.Result, *trace.Trace, error)
	// Reduce reduces the trace to one trace per cluster of ranks and
	// replays the reduction; nil leaves the reduction out. Build may run
	// it beside the other analyses (see Memory): simulated waits for
	// Simulate's result and returns its simulated time (0 where there is
	// none).
	Reduce func(src trace.Source, simulated func() float64) (*Reduction, error)
	// Memory is the bytes the report may take: Reduce runs beside the
	// other analyses where the trace's events allow it within them, after
	// them otherwise; 0 always beside.
	Memory int64
	// TimelineBudget bounds the timeline's data (DefaultTimelineBudget if
	// 0).
	TimelineBudget int
	// Top is how many slow instances, pairs and outliers the page names
	// (5 if 0).
	Top int
	// NoReplay, if set, says why no replay can follow the trace (a
	// format that does not tell blocking from non-blocking calls): the
	// check is then static only, and the classification is not made.
	NoReplay error
}

// Reduction is the trace reduced to clusters of ranks, each compressed
// into one structure that keeps every rank's calls, as kairos reduce
// --accuracy tells it.
type Reduction struct {
	Ranks, Clusters int
	// Bytes is the compressed size, of Events events; TimeError the
	// relative error bound of its times.
	Bytes     int64
	Events    int64
	TimeError float64
	// ACC is the replay accuracy of the reduction (1 is exact).
	ACC float64
	// Text is kairos reduce's text.
	Text string
}

// Report is everything the page shows: each analysis' result, or the
// error that kept it from being made.
type Report struct {
	Options Options
	Ranks   int
	Took    time.Duration
	// SimTook is how long Options.Simulate took: on a large trace, most
	// of Took with SimGrid's model.
	SimTook time.Duration

	Stats    *stats.Stats
	StatsErr error
	Check    *check.Report
	CheckErr error
	Sim      *sim.Result
	SimErr   error
	Class    *clock.Classification
	ClassErr error
	// Patterns are the patterns, phases and slow instances of the timed
	// run: the trace's if it is timed, else its simulation's.
	Patterns    *pattern.Analysis
	PatternsErr error
	// Causes are the timed run's wait states and their root causes
	// (Scalasca's delay analysis): the rank and call path each wait goes
	// back to. Its list of wait states is left out: waits has them.
	Causes    *waitstate.Analysis
	CausesErr error
	waits     Waits
	// Timeline is the timed run's timeline.
	Timeline    *Timeline
	TimelineErr error
	// Paths is the timed run's time by activity and call path, the
	// costliest first.
	Paths    []stats.PathTime
	PathsErr error
	// Recorded is set when the timed run is the trace's own, not a
	// simulation.
	Recorded  bool
	Reduction *Reduction
	ReduceErr error

	simulated *trace.Trace
}

// Build runs every analysis on src. An analysis that fails leaves its
// error in the report; the others are made.
func Build(src trace.Source, opt Options) *Report {
	if opt.Top <= 0 {
		opt.Top = 5
	}
	if opt.TimelineBudget <= 0 {
		opt.TimelineBudget = DefaultTimelineBudget
	}
	start := time.Now()
	r := &Report{Options: opt, Ranks: src.NumRanks()}
	r.Stats, r.StatsErr = stats.Collect(src, opt.Top)
	simDone := make(chan struct{})
	reduce := r.reduction(src, simDone)
	proto := check.SimGrid
	if opt.NoReplay != nil {
		proto = check.None
	}
	r.Check, r.CheckErr = check.Check(src, check.Options{Protocol: proto})
	if opt.Simulate != nil {
		began := time.Now()
		r.Sim, r.simulated, r.SimErr = opt.Simulate(src, r.Stats == nil || !r.Stats.Timed)
		r.SimTook = time.Since(began)
	}
	close(simDone)
	copt := clock.DefaultOptions()
	copt.Speed = opt.Speed
	if r.ClassErr = opt.NoReplay; r.ClassErr == nil {
		r.Class, r.ClassErr = clock.Classify(src, clock.Interconnects, copt, clock.DefaultThresholds())
	}
	run := r.timedRun(src)
	if run != nil {
		r.Causes, r.CausesErr = waitstate.Analyze(run, waitstate.Options{Waits: true})
		r.waits = waitSpans(r.Causes, run.NumRanks())
		r.Patterns, r.PatternsErr = pattern.Analyze(run, pattern.DefaultOptions())
		r.Timeline, r.TimelineErr = BuildTimeline(run, r.waits, opt.TimelineBudget)
		r.Paths, r.PathsErr = r.callPaths(run)
		r.simulated = nil // the analyses of the run are made: the reduction may have its memory
	}
	reduce()
	r.Took = time.Since(start)
	return r
}

// besideBytes is about the most memory a report takes an event of its
// trace with the reduction made beside the other analyses (at 128 ranks,
// HPCC's archive of 5.8 M events took 930 MB, 160 bytes an event, against
// 630 MB one after the other; LAMMPS' of 1.47 M, 400 MB, 270 bytes).
const besideBytes = 300

// reduction starts the reduction of src beside the other analyses where
// both fit in Options.Memory (or it is 0), and returns the function that
// waits for it; otherwise that function makes it, after them. The
// reduction takes about as long as all the rest on a real program's trace
// (HPCC at 128 ranks: 11.4 of 22.6 s of CPU) and only reads the trace: on
// two cores that page came in 16 s instead of 26. Its accuracy waits for
// the simulation (simDone) for the trace's simulated time.
func (r *Report) reduction(src trace.Source, simDone <-chan struct{}) func() {
	opt := r.Options
	if opt.Reduce == nil {
		return func() {}
	}
	simulated := func() float64 {
		<-simDone
		if r.SimErr != nil || r.Sim == nil {
			return 0
		}
		return r.Sim.Time
	}
	run := func() { r.Reduction, r.ReduceErr = opt.Reduce(src, simulated) }
	if opt.Memory > 0 && (r.Stats == nil || r.Stats.Events > opt.Memory/besideBytes) {
		return run
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		run()
	}()
	return func() { <-done }
}

// callPaths returns the call-path profile of the timed run: the trace's
// statistics have it where the run is the trace's own.
func (r *Report) callPaths(run trace.Source) ([]stats.PathTime, error) {
	if r.Recorded {
		return r.Stats.Paths, nil
	}
	return stats.CallPaths(run)
}

// Model names the model the simulation used, as the page says it.
func (r *Report) Model() string {
	if r.Options.Analytic {
		return "the contention-free analytic model"
	}
	return "SimGrid's SMPI model"
}

// timedRun returns the trace if it is timed, else its simulated run; nil,
// with the errors set, if there is none.
func (r *Report) timedRun(src trace.Source) trace.Source {
	if r.Stats != nil && r.Stats.Timed {
		r.Recorded = true
		return src
	}
	if r.simulated != nil {
		return r.simulated
	}
	err := fmt.Errorf("the trace is not timed and was not simulated")
	if r.SimErr != nil {
		err = fmt.Errorf("the trace is not timed and its simulation failed")
	}
	r.PatternsErr, r.TimelineErr, r.CausesErr, r.PathsErr = err, err, err, err
	return nil
}

// waitSpans returns the wait states of a as each rank's spans of
// waiting, in order, and drops a's list of them: millions on long
// traces, three times the spans' size.
func waitSpans(a *waitstate.Analysis, ranks int) Waits {
	if a == nil {
		return nil
	}
	n := make([]int, ranks)
	for _, w := range a.Waits {
		if w.Rank >= 0 && int(w.Rank) < ranks && w.Seconds > 0 {
			n[w.Rank]++
		}
	}
	out := make(Waits, ranks)
	for r := range out {
		out[r] = make([]WaitSpan, 0, n[r])
	}
	for _, w := range a.Waits {
		if w.Rank >= 0 && int(w.Rank) < ranks && w.Seconds > 0 {
			start := trace.FromSeconds(w.Start)
			out[w.Rank] = append(out[w.Rank], WaitSpan{start, start + trace.FromSeconds(w.Seconds), w.Causer, w.Kind})
		}
	}
	a.Waits = nil
	for _, spans := range out {
		slices.SortFunc(spans, func(a, b WaitSpan) int { return cmp.Compare(a.Start, b.Start) })
	}
	return out
}

// errs returns the analyses' errors.
func (r *Report) errs() []error {
	return []error{r.StatsErr, r.CheckErr, r.SimErr, r.ClassErr, r.CausesErr, r.PatternsErr, r.TimelineErr, r.PathsErr, r.ReduceErr}
}

// Failed returns how many analyses failed.
func (r *Report) Failed() int {
	n := 0
	for _, err := range r.errs() {
		if err != nil {
			n++
		}
	}
	return n
}

// AllFailed returns the first analysis' error if every analysis failed (a
// page of errors only, not worth writing), else nil.
func (r *Report) AllFailed() error {
	errs := r.errs()
	if r.Failed() < len(errs) {
		return nil
	}
	return errs[0]
}
