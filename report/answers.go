package report

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"kairos/check"
	"kairos/pattern"
	"kairos/stats"
	"kairos/trace"
)

// Answer is one of the answers at the top of the page: a question a
// performance engineer asks of a run first, its answer in a few words,
// and the evidence in a sentence or a short list.
type Answer struct {
	Question string
	Value    string
	Detail   string
	Items    []string
	// Err is why the question has no answer.
	Err error
}

// Answers returns the answers at the top of the page: how long the run
// takes, what bounds it on each network, the worst waits and who caused
// them, the slowest phase, the most loaded rank, whether the trace is
// valid.
func (r *Report) Answers() []Answer {
	return []Answer{r.runTime(), r.bounds(), r.worstWaits(), r.slowestPhase(), r.mostLoaded(), r.validity()}
}

func (r *Report) runTime() Answer {
	a := Answer{Question: "How long does it run?"}
	simulated := ""
	if r.Sim != nil {
		simulated = fmt.Sprintf("%s simulated on %s", seconds(r.Sim.Time), r.Options.Machine)
	}
	switch {
	case r.Recorded && r.Timeline != nil:
		run := (r.Timeline.End - r.Timeline.Start).Seconds()
		a.Value = seconds(run)
		a.Detail = "recorded, from the first call to the last"
		if simulated != "" {
			a.Detail += "; " + simulated
		}
		a.Items = r.setUp(run)
	case r.Sim != nil:
		a.Value = seconds(r.Sim.Time)
		a.Detail = fmt.Sprintf("simulated on %s (%s); the trace has no timestamps of its own", r.Options.Machine, r.Model())
	default:
		a.Err = firstErr(r.SimErr, r.TimelineErr)
	}
	return a
}

// setUp names MPI_Init and MPI_Finalize where they take a tenth of a
// recorded run or more: time no change to the application's loops gains.
func (r *Report) setUp(run float64) []string {
	if r.Stats == nil || run <= 0 {
		return nil
	}
	var out []string
	for _, c := range r.Stats.Profile {
		if (c.Call == "init" || c.Call == "finalize") && c.MaxRankSeconds >= run/10 {
			out = append(out, fmt.Sprintf("MPI_%s%s takes up to %s of it (rank %d), %s", strings.ToUpper(c.Call[:1]), c.Call[1:],
				seconds(c.MaxRankSeconds), c.MaxRank, share(c.MaxRankSeconds/run)))
		}
	}
	return out
}

// share writes a fraction as a percentage a reader takes in at a glance.
func share(f float64) string {
	switch {
	case f > 0 && f < 0.01:
		return "under 1%"
	case f > 0.99 && f < 1:
		return "over 99%"
	}
	return fmt.Sprintf("%.0f%%", 100*f)
}

func (r *Report) bounds() Answer {
	a := Answer{Question: "What bounds it?"}
	if r.Class == nil {
		a.Err = r.ClassErr
		return a
	}
	classes := map[string]bool{}
	for _, v := range r.Class.Verdicts {
		e := v.Evidence
		a.Items = append(a.Items, fmt.Sprintf("%s: %s, %s (computation %.0f%%, waiting %.0f%%, latency %.0f%%, bandwidth %.0f%%)",
			v.Interconnect.Label, v.Class, v.Description, 100*e.CompShare, 100*e.WaitShare, 100*e.LatencyShare, 100*e.BandwidthShare))
		classes[v.Class] = true
	}
	if len(classes) == 1 {
		a.Value = r.Class.Verdicts[0].Description
		a.Detail = "on every network: " + networkAdvice(r.Class.Verdicts[0].Class)
	} else {
		var cs []string
		for _, v := range r.Class.Verdicts {
			cs = append(cs, v.Class)
		}
		a.Value = strings.Join(cs, " / ")
		a.Detail = "it depends on the network (Tong et al.'s classes, slowest network first)"
	}
	return a
}

// networkAdvice says what a class means for buying a faster network.
func networkAdvice(class string) string {
	switch strings.TrimSuffix(class, "-s") {
	case "Comp.":
		return "a faster network would not help; the computation is the time"
	case "Imb.":
		return "ranks wait for the slowest ones; a faster network would not help, balancing the load would"
	case "BW":
		return "more bandwidth would help"
	case "Latency":
		return "lower latency would help"
	case "Comm.":
		return "a faster network, in bandwidth and latency, would help"
	case "I/O":
		return "the file system is the time (MPI-IO); a faster network would not help"
	}
	return "no rule of the classification holds"
}

func (r *Report) worstWaits() Answer {
	a := Answer{Question: "Where does it wait, and who caused it?"}
	if share, what, ok := r.waitShare(); ok {
		a.Value = fmt.Sprintf("%s of the ranks' time %s", share1(share), what)
		if c := r.Causes; c != nil && c.Alltoallv > 0 && c.RankTime > 0 {
			// As Scalasca, no wait state is sought in them (they may be
			// a sparse exchange): the answer says how much time that is.
			a.Value += fmt.Sprintf(", %s more in MPI_Alltoallv and Alltoallw, not analysed", share1(c.Alltoallv/c.RankTime))
		}
	}
	if c := r.Causes; c != nil && c.Waiting > 0 && len(c.Causes) > 0 {
		first := c.Causes[0]
		a.Detail = fmt.Sprintf("rank %d's %s caused %s of it (Scalasca's root causes: the delays each wait goes back to, directly or through other waits):",
			first.Rank, first.Where(), share(first.Cost/c.Waiting))
		for _, k := range c.Causes[:min(3, len(c.Causes))] {
			a.Items = append(a.Items, fmt.Sprintf("rank %d, %s: %s of all the waiting (%s directly, %s propagated)",
				k.Rank, k.Where(), share(k.Cost/c.Waiting), share(k.Direct/c.Waiting), share(k.Propagated/c.Waiting)))
		}
	}
	if r.Patterns == nil {
		if a.Detail == "" {
			a.Err = firstErr(r.CausesErr, r.PatternsErr)
		}
		return a
	}
	worst := r.worstSlow(r.Options.Top)
	if len(worst) == 0 {
		if a.Detail == "" {
			a.Detail = "no pattern instance is abnormally slow (modified Z-score above " + fmt.Sprint(r.Patterns.Options.Cutoff) + ")"
		}
		return a
	}
	if a.Detail == "" {
		a.Detail = fmt.Sprintf("%d slow instances; the slowest, with the rank last to start (Alawneh et al.):", len(r.Patterns.Slow))
		for _, s := range worst {
			a.Items = append(a.Items, r.slowItem(s))
		}
		return a
	}
	a.Items = append(a.Items, fmt.Sprintf("the slowest of %d slow instances: %s", len(r.Patterns.Slow), r.slowItem(worst[0])))
	return a
}

// slowItem tells a slow instance in a line: when, how long against its
// pattern's median, and the rank last to start it.
func (r *Report) slowItem(s pattern.Slow) string {
	in := &r.Patterns.Sequence[s.Position-1]
	who := fmt.Sprintf("rank %d %s (the rank last to start)", s.LastStart, lateVerb(s.Late))
	if s.Late == "" {
		who = fmt.Sprintf("on rank %d alone", s.LastStart)
	}
	return fmt.Sprintf("CP%d at %s: %s instead of %s, %s", s.Pattern,
		seconds((in.Start - r.timeZero()).Seconds()), seconds(s.Duration*1e-6), seconds(s.Median*1e-6), who)
}

// share1 writes a fraction as a percentage with a decimal.
func share1(f float64) string { return fmt.Sprintf("%.1f%%", 100*f) }

func lateVerb(late string) string {
	switch late {
	case "late sender":
		return "sent late"
	case "late receiver":
		return "received late"
	case "late process":
		return "entered the collective late"
	}
	return late
}

// worstSlow returns the n slow instances that lost the most time over
// their group's median, most first.
func (r *Report) worstSlow(n int) []pattern.Slow {
	s := slices.Clone(r.Patterns.Slow)
	slices.SortStableFunc(s, func(a, b pattern.Slow) int { return cmp.Compare(b.Lost(), a.Lost()) })
	return s[:min(n, len(s))]
}

// waitShare returns the share of the ranks' time spent waiting, and what
// it is: the wait states', else the simulation's time blocked on late
// partners, else the timeline's.
func (r *Report) waitShare() (float64, string, bool) {
	var wait, all float64
	what := "waiting"
	switch {
	case r.Causes != nil:
		wait, all = r.Causes.Waiting, r.Causes.RankTime
	case r.Sim != nil && !r.Recorded:
		what = "blocked on late partners (simulated)"
		for _, rk := range r.Sim.Ranks {
			wait += rk.Wait
			all += rk.Compute + rk.Comm + rk.Wait + rk.Backoff
		}
	case r.Timeline != nil:
		for _, tot := range r.Timeline.Totals {
			for s, t := range tot {
				all += t.Seconds()
				if State(s) == Waiting {
					wait += t.Seconds()
				}
			}
		}
		if wait == 0 {
			return 0, "", false // the timeline has no wait states
		}
	}
	if all == 0 {
		return 0, "", false
	}
	return wait / all, what, true
}

// timeZero is the start of the timed run.
func (r *Report) timeZero() trace.Time {
	if r.Timeline != nil {
		return r.Timeline.Start
	}
	return 0
}

// PhaseSpan is a phase of the timed run and when it ran.
type PhaseSpan struct {
	pattern.Phase
	Start, End trace.Time // the earliest start and latest finish of its instances
}

// PhaseSpans returns the phases with their time spans.
func (r *Report) PhaseSpans() []PhaseSpan {
	if r.Patterns == nil {
		return nil
	}
	var out []PhaseSpan
	for _, ph := range r.Patterns.Phases {
		sp := PhaseSpan{Phase: ph, Start: trace.Time(1<<63 - 1)}
		for i := ph.From - 1; i < ph.To && i < len(r.Patterns.Sequence); i++ {
			in := &r.Patterns.Sequence[i]
			sp.Start, sp.End = min(sp.Start, in.Start), max(sp.End, in.Finish)
		}
		if sp.End < sp.Start {
			sp.Start = sp.End
		}
		out = append(out, sp)
	}
	return out
}

func (r *Report) slowestPhase() Answer {
	a := Answer{Question: "Which phase is slowest?"}
	spans := r.PhaseSpans()
	if len(spans) == 0 {
		if a.Err = r.PatternsErr; a.Err == nil { // an answer, not a failure
			a.Value, a.Detail = "none", "the trace has no communication pattern instance to make phases of"
		}
		return a
	}
	best := slices.MaxFunc(spans, func(x, y PhaseSpan) int { return cmp.Compare(x.End-x.Start, y.End-y.Start) })
	run := r.runSpan()
	a.Value = fmt.Sprintf("phase %d", best.Number)
	if len(best.Functions) > 0 {
		a.Value += ", " + best.Functions[0]
	}
	a.Detail = fmt.Sprintf("%s from %s (pattern instances %d–%d)", seconds((best.End - best.Start).Seconds()), seconds((best.Start - r.timeZero()).Seconds()), best.From, best.To)
	if run > 0 {
		a.Detail += ", " + share(float64(best.End-best.Start)/float64(run)) + " of the run"
	}
	if r.Patterns.Timed {
		a.Detail += fmt.Sprintf("; %d slow instances", best.Slow)
	}
	if len(spans) > 1 {
		a.Detail += fmt.Sprintf(" (%d phases in all)", len(spans))
	}
	return a
}

func (r *Report) runSpan() trace.Time {
	if r.Timeline == nil {
		return 0
	}
	return r.Timeline.End - r.Timeline.Start
}

// mostLoaded names the rank that computes the most, against the median:
// load imbalance made visible.
func (r *Report) mostLoaded() Answer {
	a := Answer{Question: "Which rank is the most loaded?"}
	var comp []float64
	var ranks []int // nil: comp[r] is rank r's
	switch {
	case r.Timeline != nil:
		for _, tot := range r.Timeline.Totals {
			comp = append(comp, tot[Computation].Seconds())
		}
	case r.Stats != nil:
		for _, p := range r.Stats.PerRank {
			comp = append(comp, p.Flops)
		}
		ranks = r.Stats.ListedRanks()
	default:
		a.Err = firstErr(r.TimelineErr, r.StatsErr)
		return a
	}
	sp := stats.SpreadOver(comp, ranks)
	if sp.Most == 0 {
		a.Value = "none computes"
		return a
	}
	unit := seconds
	if r.Timeline == nil {
		unit = func(f float64) string { return fmt.Sprintf("%.4g flops", f) }
	}
	a.Value = fmt.Sprintf("rank %d", sp.MostRank)
	a.Detail = fmt.Sprintf("computes %s, %+.0f%% against the median rank's %s (least: rank %d, %s)",
		unit(sp.Most), 100*(sp.Most/sp.Median-1), unit(sp.Median), sp.LeastRank, unit(sp.Least))
	if len(sp.Outliers) > 0 {
		a.Detail += "; outliers: " + stats.RankList(sp.Outliers, 8)
	}
	return a
}

func (r *Report) validity() Answer {
	a := Answer{Question: "Is the trace sound?"}
	if r.Check == nil {
		a.Err = r.CheckErr
		return a
	}
	c := r.Check
	if c.OK() {
		a.Value = "valid"
		a.Detail = fmt.Sprintf("every message matched (%d), every request completed, every collective consistent, %s", c.Messages, deadlockNote(c))
		if c.Warnings > 0 {
			a.Detail += "; " + counted(c.Warnings, "warning")
		}
		if n := len(r.Options.Notes); n > 0 {
			a.Detail += "; " + counted(n, "note") + " on how it was read (Validation)"
		}
		return a
	}
	a.Value = counted(c.Errors, "error")
	for _, p := range c.Problems[:min(3, len(c.Problems))] {
		a.Items = append(a.Items, p.String())
	}
	return a
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// deadlockNote says what the check's replay found, or that there was none.
func deadlockNote(c *check.Report) string {
	if c.Protocol == check.None.String() {
		return "no replay (static checks only)"
	}
	return "no deadlock under SimGrid's send protocol"
}

// counted says n things, in the singular for one.
func counted(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}
