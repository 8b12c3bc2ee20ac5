package report

import (
	"bytes"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"kairos/plot"
	"kairos/sim"
	"kairos/trace"
	"kairos/waitstate"
)

// TestPageSelfContained: the page loads nothing from anywhere (no
// external script, style, image or font), opens with the answers, and
// draws its timeline from data in the page; the simulated run's time by
// call path has its table.
func TestPageSelfContained(t *testing.T) {
	r := stencilReport(t, []int{4, 4}, 20)
	var b bytes.Buffer
	if err := r.WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	external := regexp.MustCompile(`(?i)(src|href)\s*=\s*["']?(https?:|//)|url\(\s*["']?(https?:|//)|@import|<link`)
	if m := external.FindString(page); m != "" {
		t.Errorf("the page loads a resource: %q", m)
	}
	answers, timeline, waits := strings.Index(page, `id="answers"`), strings.Index(page, `id="timeline"`), strings.Index(page, `id="waits"`)
	if answers < 0 || !(answers < timeline && timeline < waits) {
		t.Errorf("sections out of order: answers %d, timeline %d, waits %d", answers, timeline, waits)
	}
	for _, want := range []string{`<script type="application/json" id="tl-data">{"run":`, `"kind_states":[`, `"slow_color":"` + plot.Slow + `"`,
		"How long does it run?", "Which rank is the most loaded?", "rank 5", "Where the time goes, by call path",
		`<td class="t">computation</td><td class="t">main/<wbr>timestep/<wbr>compute_interior</td>`} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}

// TestAnswers: on a stencil with rank 5 six times slower in two
// iterations, the answers name the simulated time, the class on each
// network, rank 5's computation as the first root cause of the waiting,
// and rank 5 as the most loaded, an outlier.
func TestAnswers(t *testing.T) {
	r := stencilReport(t, []int{4, 4}, 20)
	got := map[string]Answer{}
	for _, a := range r.Answers() {
		if a.Err != nil {
			t.Errorf("%s: %v", a.Question, a.Err)
		}
		got[a.Question] = a
	}
	if a := got["How long does it run?"]; !strings.Contains(a.Detail, "simulated on 16x1Gf,125MBps,50us") || a.Value == "" {
		t.Errorf("run time: %+v", a)
	}
	if a := got["What bounds it?"]; len(a.Items) != 3 || !strings.HasPrefix(a.Items[0], "ENET-1G: ") {
		t.Errorf("bounds: %+v", a)
	}
	if a := got["Where does it wait, and who caused it?"]; !strings.HasPrefix(a.Detail, "rank 5's computation") || len(a.Items) == 0 || !strings.HasPrefix(a.Items[0], "rank 5, computation") {
		t.Errorf("waits: %+v", a)
	}
	if a := got["Which rank is the most loaded?"]; a.Value != "rank 5" || !strings.Contains(a.Detail, "outliers: 5") {
		t.Errorf("most loaded: %+v", a)
	}
	if a := got["Is the trace sound?"]; a.Value != "valid" {
		t.Errorf("validity: %+v", a)
	}
}

// TestAnswersNoPattern: a trace whose calls make no communication
// pattern (one rank computing) has no phase, an answer and not a failed
// analysis.
func TestAnswersNoPattern(t *testing.T) {
	tr := oneCompute()
	r := Build(tr, Options{Name: "one.ktr", Machine: "1x1Gf,125MBps,50us", Speed: 1e9, Simulate: func(src trace.Source, _ bool) (*sim.Result, *trace.Trace, error) {
		return simulate(src, "1x1Gf,125MBps,50us")
	}})
	for _, a := range r.Answers() {
		if a.Question == "Which phase is slowest?" && (a.Err != nil || a.Value != "none") {
			t.Errorf("slowest phase: %+v", a)
		}
	}
	if n := r.Failed(); n != 0 {
		t.Errorf("%d analyses failed", n)
	}
}

// TestRanksWithoutEvents: a rank without events, which the trace's
// statistics leave out, shifts no other rank's row or name: the table of
// what each rank does lists ranks 0 and 2, and rank 2 is the most loaded.
func TestRanksWithoutEvents(t *testing.T) {
	tr := trace.New(3, trace.NewMeta())
	for r, flops := range map[int]float64{0: 1e6, 2: 5e9} {
		for _, k := range []trace.Kind{trace.Init, trace.Compute, trace.Finalize} {
			e := trace.NewEvent(k)
			e.Compute = flops
			tr.Ranks[r].Append(&e)
		}
	}
	r := Build(tr, Options{Name: "gap.ktr", Machine: "3x1Gf,125MBps,50us", Speed: 1e9})
	for _, a := range r.Answers() {
		if a.Question == "Which rank is the most loaded?" && (a.Value != "rank 2" || !strings.Contains(a.Detail, "least: rank 0")) {
			t.Errorf("most loaded: %+v", a)
		}
	}
	tables := r.RankTables()
	if len(tables) == 0 {
		t.Fatal("no per-rank table")
	}
	var ranks []int
	for _, row := range tables[0].Rows() {
		ranks = append(ranks, row.Rank)
	}
	if !slices.Equal(ranks, []int{0, 2}) {
		t.Errorf("%s: rows of ranks %v, want [0 2]", tables[0].Title, ranks)
	}
	for _, row := range tables[0].Summary() {
		if row.Name == "flops" && (row.MostRank != 2 || row.LeastRank != 0) {
			t.Errorf("flops: most at rank %d, least at rank %d; want 2 and 0", row.MostRank, row.LeastRank)
		}
	}
}

// TestTimelineWaits: the timeline draws the wait states of the analysis
// as waiting, in the calls they are in: its time in the waiting state is
// the analysis' waiting time, rank by rank.
func TestTimelineWaits(t *testing.T) {
	r := stencilReport(t, []int{4, 4}, 20)
	if r.Causes == nil || r.Causes.Waiting == 0 {
		t.Fatalf("no wait states: %v", r.CausesErr)
	}
	for rk, tot := range r.Timeline.Totals {
		if got, want := tot[Waiting].Seconds(), r.Causes.RankWaiting[rk]; math.Abs(got-want) > 1e-9+1e-6*want {
			t.Errorf("rank %d: %g s waiting in the timeline, %g s of wait states", rk, got, want)
		}
	}
}

// TestSlowRowsLateBecause: in a delayed 8x8 stencil, the slow instances
// whose last rank to start is not the delayed rank say that it waited for
// the delayed rank (a victim), and those of the delayed rank say nothing
// (its own delay).
func TestSlowRowsLateBecause(t *testing.T) {
	r := stencilReport(t, []int{8, 8}, 40)
	delayed := int32(r.Ranks / 3)
	rows := (&page{Report: r}).SlowRows(100)
	if len(rows) == 0 {
		t.Fatal("no slow instance")
	}
	victims := 0
	for _, row := range rows {
		if row.LateRank != delayed {
			victims++
		}
		switch {
		case row.LateRank == delayed && row.LateBecause != "":
			t.Errorf("instance %d: rank %d, the delayed one, %s", row.Position, delayed, row.LateBecause)
		case row.LateRank != delayed && !strings.Contains(row.LateBecause, fmt.Sprintf("for rank %d ", delayed)):
			t.Errorf("instance %d: rank %d last to start, %q", row.Position, row.LateRank, row.LateBecause)
		}
	}
	if victims == 0 {
		t.Errorf("no slow instance has another rank than %d last to start: the case is not tested", delayed)
	}
}

// TestAnswersAlltoallv: where no rank waited but the ranks spent 13.1%
// of their time in MPI_Alltoallv and Alltoallw, which the wait states
// leave out (an FFT's transposes), the answer says so, not just 0.0%.
func TestAnswersAlltoallv(t *testing.T) {
	r := &Report{Causes: &waitstate.Analysis{RankTime: 10, Alltoallv: 1.31}}
	if a := r.worstWaits(); a.Value != "0.0% of the ranks' time waiting, 13.1% more in MPI_Alltoallv and Alltoallw, not analysed" {
		t.Errorf("waits: %+v", a)
	}
}

// TestNotes: the reader's notes on how it read the trace are listed under
// Validation, escaped, and counted in the answer on its soundness; a page
// without notes has no such list.
func TestNotes(t *testing.T) {
	r := stencilReport(t, []int{2, 2}, 5)
	page := func() string {
		var b bytes.Buffer
		if err := r.WriteHTML(&b); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	if strings.Contains(page(), "How the trace was read") {
		t.Errorf("notes listed without any")
	}
	r.Options.Notes = []string{"the tracer flushed its buffers <3 times>"}
	if p := page(); !strings.Contains(p, "<h3>How the trace was read</h3>") || !strings.Contains(p, "<li>the tracer flushed its buffers &lt;3 times&gt;</li>") {
		t.Errorf("the notes are not listed")
	}
	for _, a := range r.Answers() {
		if a.Question == "Is the trace sound?" && !strings.HasSuffix(a.Detail, "; 1 note on how it was read (Validation)") {
			t.Errorf("validity: %+v", a)
		}
	}
}

// oneCompute returns a trace of one rank that computes for a second at
// 1 Gf, and does nothing else.
func oneCompute() *trace.Trace {
	tr := trace.New(1, trace.NewMeta())
	for _, k := range []trace.Kind{trace.Init, trace.Compute, trace.Finalize} {
		e := trace.NewEvent(k)
		e.Compute = 1e9
		tr.Ranks[0].Append(&e)
	}
	return tr
}

// TestReductionBeside: the reduction runs beside the other analyses
// unless Memory cannot hold both for the trace's events, and either way
// it is given the simulation's time.
func TestReductionBeside(t *testing.T) {
	tr := oneCompute()
	for _, c := range []struct {
		name   string
		memory int64
		beside bool
	}{
		{"no bound", 0, true},
		{"room", 3 * besideBytes, true},
		{"no room", 3*besideBytes - 1, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			started := make(chan struct{})
			var got float64
			r := Build(tr, Options{Name: "one.ktr", Machine: "1x1Gf,125MBps,50us", Speed: 1e9, Memory: c.memory,
				Simulate: func(src trace.Source, _ bool) (*sim.Result, *trace.Trace, error) {
					if c.beside {
						select {
						case <-started:
						case <-time.After(time.Minute):
							t.Error("the reduction did not start during the simulation")
						}
					} else {
						select {
						case <-started:
							t.Error("the reduction started before the simulation ended")
						default:
						}
					}
					return &sim.Result{Time: 2.5}, nil, nil
				},
				Reduce: func(src trace.Source, simulated func() float64) (*Reduction, error) {
					close(started)
					got = simulated()
					return &Reduction{Ranks: 1}, nil
				},
			})
			if r.Reduction == nil || r.ReduceErr != nil {
				t.Fatalf("reduction %v, %v", r.Reduction, r.ReduceErr)
			}
			if got != 2.5 {
				t.Errorf("simulated time %g given to the reduction, want 2.5", got)
			}
		})
	}
}
