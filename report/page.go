package report

import (
	"bytes"
	_ "embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"strings"
	"sync"

	"kairos/clock"
	"kairos/pattern"
	"kairos/plot"
	"kairos/stats"
	"kairos/trace"
	"kairos/waitstate"
)

//go:embed page.html
var pageHTML string

//go:embed style.css
var styleCSS string

//go:embed timeline.js
var timelineJS string

// pageTemplate is parsed at the first page, not at every start of the
// program (3 ms and 3,000 allocations, a tenth of a short run's CPU).
var pageTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("page").Funcs(template.FuncMap{
		"seconds": seconds,
		"bytes":   func(v int64) string { return bytesText(float64(v)) },
		"pct":     func(v float64) string { return fmt.Sprintf("%.1f%%", 100*v) },
		"us":      func(v float64) string { return seconds(v * 1e-6) },
		"add":     func(a, b int) int { return a + b },
		"paths":   breakPaths,
	}).Parse(pageHTML))
})

// breakPaths escapes s for HTML with a line-break opportunity after each
// slash, so that a deep call path (main/timestep/acc_data@hydro.f90:46/...,
// one word to a browser) wraps at its frames within a card or a table
// cell rather than running past the page.
func breakPaths(s string) template.HTML {
	return template.HTML(strings.ReplaceAll(template.HTMLEscapeString(s), "/", "/<wbr>"))
}

// WriteHTML writes the page.
func (r *Report) WriteHTML(w io.Writer) error {
	p := &page{Report: r, Style: template.CSS(styleCSS), Script: template.JS(timelineJS)}
	if r.Timeline != nil {
		p.TimelineData = r.timelineJSON()
	}
	var b bytes.Buffer
	if err := pageTemplate().Execute(&b, p); err != nil {
		return err
	}
	_, err := w.Write(b.Bytes())
	return err
}

// page is what the template reads: the report, and its figures drawn on
// demand.
type page struct {
	*Report
	Style        template.CSS
	Script       template.JS
	TimelineData *timelineJSON
}

// figure is an SVG figure for the page, or why it could not be drawn.
type figure struct {
	SVG template.HTML
	Err error
}

func draw(fn func(io.Writer) error) figure {
	var b bytes.Buffer
	if err := fn(&b); err != nil {
		return figure{Err: err}
	}
	return figure{SVG: template.HTML(b.String())} // written by package plot, escaped there
}

// MatrixFigure draws the communication matrix.
func (p *page) MatrixFigure() figure {
	return draw(func(w io.Writer) error { return Matrix(w, p.Stats, stats.Bytes, p.Options.Name) })
}

// ClassFigure draws the classification.
func (p *page) ClassFigure() figure {
	return draw(func(w io.Writer) error { return Classes(w, []string{p.Options.Name}, []*clock.Classification{p.Class}) })
}

// SlowFigure draws the pattern instances' durations.
func (p *page) SlowFigure() figure {
	return draw(func(w io.Writer) error { return SlowInstances(w, p.Patterns, p.Options.Name, p.Options.Top) })
}

// RanksFigure draws each rank's time: the timeline's states, or, for a
// simulated run whose timeline has no wait states, the simulation's
// computation, communication and waiting.
func (p *page) RanksFigure() figure {
	if !p.Recorded && p.Sim != nil && !p.timelineWaits() {
		return draw(func(w io.Writer) error { return RankTimes(w, p.Sim, "each rank on "+p.Options.Machine) })
	}
	return draw(func(w io.Writer) error { return StateTimes(w, p.Timeline, "each rank's time, "+p.runName()) })
}

// SimFigure draws the simulation's per-rank times, for a recorded run
// (for a simulated one, RanksFigure does).
func (p *page) SimFigure() figure {
	return draw(func(w io.Writer) error { return RankTimes(w, p.Sim, "each rank on "+p.Options.Machine) })
}

func (r *Report) timelineWaits() bool {
	if r.Timeline == nil {
		return false
	}
	for _, tot := range r.Timeline.Totals {
		if tot[Waiting] > 0 {
			return true
		}
	}
	return false
}

// ClassText is the classification's rules, as kairos classify prints them.
func (p *page) ClassText() string {
	var b strings.Builder
	if err := p.Class.WriteText(&b, p.Options.Name, false); err != nil {
		return err.Error()
	}
	return b.String()
}

// maxPatterns bounds the communication patterns the page lists: HPCC's
// TI trace on 64 ranks has 84,008 (a page of 17.5 MB, 16 of them this
// list; 1.3 MB with the bound); kairos patterns lists them all.
const maxPatterns = 200

// PatternsText lists the communication patterns, as kairos patterns does,
// the maxPatterns most frequent where there are more.
func (p *page) PatternsText() string {
	var b strings.Builder
	if err := p.Patterns.WriteCommMost(&b, maxPatterns); err != nil {
		return err.Error()
	}
	return b.String()
}

// PatternsSummary names the list PatternsText gives.
func (p *page) PatternsSummary() string {
	if n := len(p.Patterns.Comm); n > maxPatterns {
		return fmt.Sprintf("The %d most frequent of the %d communication patterns (kairos patterns lists them all)", maxPatterns, n)
	}
	return "The communication patterns"
}

// SlowText lists every slow instance, as kairos slow does.
func (p *page) SlowText() string {
	var b strings.Builder
	if err := p.Patterns.WriteSlow(&b); err != nil {
		return err.Error()
	}
	return b.String()
}

// SlowRow is a slow instance as the page lists it.
type SlowRow struct {
	Index       int // in the timeline's list of slow instances
	Affinity    string
	Phase       int
	Position    int
	Pattern     int
	Ranks       int
	At          string
	Duration    string
	Median      string
	Lost        string
	Z           float64
	Late        string
	LateRank    int32
	Slowest     string
	SlowestRank int32
	// LateBecause says what the rank last to start was doing: waiting for
	// another rank just before (a victim, not the cause), or nothing.
	LateBecause string
}

// SlowRows returns the slow instances to look at first: the highest
// inspection affinity first, then the most time lost, as kairos slow
// --summary orders them (pattern.InspectFirst); n at most.
func (p *page) SlowRows(n int) []SlowRow {
	if p.Patterns == nil {
		return nil
	}
	order := pattern.InspectFirst(p.Patterns.Slow)
	var rows []SlowRow
	for _, i := range order[:min(n, len(order))] {
		s := &p.Patterns.Slow[i]
		in := &p.Patterns.Sequence[s.Position-1]
		rows = append(rows, SlowRow{Index: i, Affinity: s.Affinity.String(), Phase: s.Phase, Position: s.Position, Pattern: s.Pattern,
			Ranks: s.Ranks, At: seconds((in.Start - p.timeZero()).Seconds()), Duration: seconds(s.Duration * 1e-6), Median: seconds(s.Median * 1e-6),
			Lost: seconds(s.Lost() * 1e-6), Z: s.Z, Late: s.Late, LateRank: s.LastStart,
			Slowest: s.Slowest.Op, SlowestRank: s.Slowest.Rank, LateBecause: p.lateBecause(s.LastStart, in.Start, in.Finish, s.Lost()*1e-6)})
	}
	return rows
}

// lateBecause tells whether rank, the last to start an instance that ran
// from start to finish and lost lost seconds, was itself waiting for
// another rank in the instance's span or the span of the same length
// before it, for at least half the time lost: its longest such wait
// state, or "" if it waited for none that long (the delay is its own).
// The root causes name where chains of waits end; this names the first
// link.
func (p *page) lateBecause(rank int32, start, finish trace.Time, lost float64) string {
	if rank < 0 || int(rank) >= len(p.waits) {
		return ""
	}
	from := start - (finish - start)
	var best *WaitSpan
	for i, w := range p.waits[rank] {
		if w.Start >= finish {
			break
		}
		if w.Causer != rank && w.End > from && (best == nil || w.End-w.Start > best.End-best.Start) {
			best = &p.waits[rank][i]
		}
	}
	if best == nil || (best.End-best.Start).Seconds() < lost/2 {
		return ""
	}
	return fmt.Sprintf("it waited %s for rank %d (%s)", seconds((best.End - best.Start).Seconds()), best.Causer, best.Kind)
}

// Problems lists the validation's problems, at most n.
func (p *page) Problems(n int) []string {
	var out []string
	for _, pr := range p.Check.Problems[:min(n, len(p.Check.Problems))] {
		out = append(out, pr.String())
	}
	return out
}

// timelineJSON is the timeline's data in the page, read by timeline.js.
// Times are seconds from the start of the run, lanes' segments ticks.
type timelineJSON struct {
	Run        string      `json:"run"`
	Tick       float64     `json:"tick"`
	Resolution float64     `json:"resolution"`
	Span       int64       `json:"span"`
	Lanes      []string    `json:"lanes"`
	Starts     []int64     `json:"starts"`
	Kinds      []string    `json:"kinds"`
	KindStates []int       `json:"kind_states"`
	SlowColor  string      `json:"slow_color"`
	States     []stateJSON `json:"states"`
	Totals     [][]float64 `json:"totals"`
	Phases     []phaseJSON `json:"phases"`
	Slow       []slowJSON  `json:"slow"`
	Causes     []causeJSON `json:"causes"`
}

// causeJSON is a root cause of waiting, which the timeline marks on its
// rank.
type causeJSON struct {
	Rank  int32   `json:"rank"`
	Share float64 `json:"share"`
	Where string  `json:"where"`
}

type stateJSON struct {
	Name  string `json:"name"`
	Color string `json:"color"`
}

type phaseJSON struct {
	Number   int     `json:"number"`
	Start    float64 `json:"start"`
	End      float64 `json:"end"`
	From     int     `json:"from"`
	To       int     `json:"to"`
	Function string  `json:"function"`
	Slow     int     `json:"slow"`
}

type slowJSON struct {
	Start    float64 `json:"start"`
	End      float64 `json:"end"`
	Pattern  int     `json:"pattern"`
	Position int     `json:"position"`
	Phase    int     `json:"phase"`
	Z        float64 `json:"z"`
	Median   float64 `json:"median"`
	Late     string  `json:"late"`
	Rank     int32   `json:"rank"`
	Ranks    []int32 `json:"ranks"`
	Affinity string  `json:"affinity"`
}

func (r *Report) timelineJSON() *timelineJSON {
	tl := r.Timeline
	rel := func(t trace.Time) float64 { return (t - tl.Start).Seconds() }
	out := &timelineJSON{Run: r.runName(), Tick: tl.Tick.Seconds(), Resolution: tl.Resolution.Seconds(),
		Span: int64((tl.End - tl.Start + tl.Tick - 1) / tl.Tick), SlowColor: plot.Slow, Phases: []phaseJSON{}, Slow: []slowJSON{}, Causes: []causeJSON{}}
	for _, l := range tl.Lanes {
		out.Lanes = append(out.Lanes, base64.StdEncoding.EncodeToString(l.Data))
		out.Starts = append(out.Starts, l.Start)
	}
	for k := range trace.NumKinds {
		out.Kinds = append(out.Kinds, trace.Kind(k).String())
		out.KindStates = append(out.KindStates, int(stateOf(trace.Kind(k))))
	}
	for s := range numStates {
		out.States = append(out.States, stateJSON{stateParts[s].Name, stateParts[s].Color})
	}
	for _, tot := range tl.Totals {
		row := make([]float64, numStates)
		for s, t := range tot {
			row[s] = t.Seconds()
		}
		out.Totals = append(out.Totals, row)
	}
	for _, ph := range r.PhaseSpans() {
		fn := ""
		if len(ph.Functions) > 0 {
			fn = ph.Functions[0]
		}
		out.Phases = append(out.Phases, phaseJSON{ph.Number, rel(ph.Start), rel(ph.End), ph.From, ph.To, fn, ph.Slow})
	}
	if r.Patterns != nil {
		for _, s := range r.Patterns.Slow {
			in := &r.Patterns.Sequence[s.Position-1]
			ranks := in.Ranks
			if len(ranks) == r.Ranks {
				ranks = nil // every rank
			}
			out.Slow = append(out.Slow, slowJSON{rel(in.Start), rel(in.Finish), s.Pattern, s.Position, s.Phase, s.Z, s.Median * 1e-6,
				s.Late, s.LastStart, ranks, s.Affinity.String()})
		}
	}
	if c := r.Causes; c != nil && c.Waiting > 0 {
		for _, k := range c.Causes[:min(5, len(c.Causes))] {
			out.Causes = append(out.Causes, causeJSON{k.Rank, k.Cost / c.Waiting, k.Where()})
		}
	}
	return out
}

// RunName says which run the timeline, the patterns and the waits are of.
func (p *page) RunName() string { return p.runName() }

// Rel returns t in seconds from the start of the timed run.
func (p *page) Rel(t trace.Time) float64 { return (t - p.timeZero()).Seconds() }

// Dur returns the seconds from a to b.
func (p *page) Dur(a, b trace.Time) float64 { return (b - a).Seconds() }

// Frac returns a / b, 0 if b is 0.
func (p *page) Frac(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// PathRows returns the n costliest activities by call path of the timed
// run, of some time.
func (p *page) PathRows(n int) []stats.PathTime {
	rows := p.Paths[:min(n, len(p.Paths))]
	for len(rows) > 0 && rows[len(rows)-1].Seconds <= 0 {
		rows = rows[:len(rows)-1]
	}
	return rows
}

// PathsTotal is the number of activities by call path.
func (p *page) PathsTotal() int { return len(p.Paths) }

// RunSeconds returns the timed run's time summed over ranks.
func (p *page) RunSeconds() float64 {
	var t float64
	for _, l := range p.Paths {
		t += l.Seconds
	}
	return t
}

// Share returns a / b, 0 if b is 0, of counts.
func (p *page) Share(a, b int64) float64 { return p.Frac(float64(a), float64(b)) }

// TopCauses returns the n costliest root causes of waiting.
func (p *page) TopCauses(n int) []waitstate.Cause {
	return p.Causes.Causes[:min(n, len(p.Causes.Causes))]
}

// PathActivities returns the n activities with the most time on the
// critical path.
func (p *page) PathActivities(n int) []waitstate.PathActivity {
	a := p.Causes.CriticalPath.Activities
	return a[:min(n, len(a))]
}

// Colours gives the template the colours of meanings, for its legends.
func (p *page) Colours() map[string]string {
	return map[string]string{"computation": plot.Computation, "communication": plot.Communication, "collective": plot.Collective,
		"waiting": plot.Waiting, "other": plot.OtherMPI, "slow": plot.Slow, "latency": plot.Latency}
}
