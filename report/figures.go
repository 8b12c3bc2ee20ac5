package report

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"

	"kairos/clock"
	"kairos/pattern"
	"kairos/plot"
	"kairos/sim"
	"kairos/stats"
)

// The parts of the figures, in their colours of meaning.
var (
	partComputation   = plot.Part{Name: "computation", Color: plot.Computation}
	partCommunication = plot.Part{Name: "communication", Color: plot.Communication}
	partWait          = plot.Part{Name: "waiting", Color: plot.Waiting}
	// partBlocked is a simulated rank's time blocked on late partners
	// (sim.RankResult.Wait), which is not the wait states' waiting.
	partBlocked   = plot.Part{Name: "blocked on late partners", Color: plot.Waiting}
	partIO        = plot.Part{Name: "I/O", Color: plot.IO}
	partLatency   = plot.Part{Name: "latency", Color: plot.Latency}
	partBandwidth = plot.Part{Name: "bandwidth", Color: plot.Communication}
)

// stateParts are the timeline's states as figure parts.
var stateParts = [numStates]plot.Part{
	Computation:  {Name: "computation", Color: plot.Computation},
	PointToPoint: {Name: "point-to-point", Color: plot.Communication},
	Collective:   {Name: "collective", Color: plot.Collective},
	OtherMPI:     {Name: "other MPI", Color: plot.OtherMPI},
	Waiting:      {Name: "waiting", Color: plot.Waiting},
}

// RankTimes draws each rank's simulated computation, communication and
// time blocked on late partners, its I/O where the trace has any, and its test back-off where a
// rank slept in SMPI's MPI_Test back-off (kairos simulate --svg).
func RankTimes(w io.Writer, res *sim.Result, title string) error {
	labels := make([]string, len(res.Ranks))
	stacks := make([][]float64, 5)
	parts := []plot.Part{partComputation, partCommunication, partBlocked, partIO, {Name: "test back-off", Color: plot.OtherMPI}}
	for i, r := range res.Ranks {
		labels[i] = strconv.Itoa(i)
		stacks[0] = append(stacks[0], r.Compute)
		stacks[1] = append(stacks[1], r.Comm)
		stacks[2] = append(stacks[2], r.Wait)
		stacks[3] = append(stacks[3], r.IO)
		stacks[4] = append(stacks[4], r.Backoff)
	}
	for k := len(parts) - 1; k >= 3; k-- { // I/O and back-off only where a rank has some
		if !slices.ContainsFunc(stacks[k], func(v float64) bool { return v > 0 }) {
			parts, stacks = slices.Delete(parts, k, k+1), slices.Delete(stacks, k, k+1)
		}
	}
	return plot.Bars(w, labels, parts, stacks,
		plot.ChartOptions{Title: fmt.Sprintf("%s: %.6f s simulated", title, res.Time), XLabel: "rank", YLabel: "seconds"})
}

// StateTimes draws each rank's time in each state of the timeline.
func StateTimes(w io.Writer, tl *Timeline, title string) error {
	labels := make([]string, len(tl.Totals))
	stacks := make([][]float64, numStates)
	for r, tot := range tl.Totals {
		labels[r] = strconv.Itoa(r)
		for s := range numStates {
			stacks[s] = append(stacks[s], tot[s].Seconds())
		}
	}
	return plot.Bars(w, labels, stateParts[:], stacks, plot.ChartOptions{Title: title, XLabel: "rank", YLabel: "seconds"})
}

// Classes draws, for each trace and interconnect, the predicted time's
// shares of computation, wait, latency and bandwidth, with the class and
// the time after each bar (kairos classify --svg).
func Classes(w io.Writer, names []string, cls []*clock.Classification) error {
	var rows []plot.ShareRow
	parts := []plot.Part{partComputation, partWait, partLatency, partBandwidth, partIO}
	hasIO := false
	for i, cl := range cls {
		for _, v := range cl.Verdicts {
			e := v.Evidence
			row := plot.ShareRow{Label: v.Interconnect.Label, Note: fmt.Sprintf("%s · %s", v.Class, seconds(e.Time)),
				Values: []float64{e.CompShare * e.Time, e.WaitShare * e.Time, e.LatencyShare * e.Time, e.BandwidthShare * e.Time, e.IOShare * e.Time}}
			if len(cls) > 1 {
				row.Group = filepath.Base(names[i])
			}
			rows = append(rows, row)
			hasIO = hasIO || e.IOShare > 0
		}
	}
	if !hasIO { // the figure of a trace without MPI-IO has no I/O part
		parts = parts[:4]
		for i := range rows {
			rows[i].Values = rows[i].Values[:4]
		}
	}
	title := filepath.Base(names[0]) + ": what bounds it on each interconnect"
	if len(names) > 1 {
		title = fmt.Sprintf("%d traces: what bounds them on each interconnect", len(names))
	}
	return plot.Shares(w, rows, parts,
		plot.ChartOptions{Title: title, XLabel: "share of the predicted time; after each bar, the class and the predicted time"})
}

// SlowInstances draws, along the pattern sequence, the durations of the
// instances of the top most frequent patterns, a line each, and every
// slow instance as a point (kairos slow --svg).
func SlowInstances(w io.Writer, a *pattern.Analysis, name string, top int) error {
	var series []plot.Series
	index := map[int]int{}
	for _, c := range a.MostFrequent(top) {
		index[c.ID] = len(series)
		series = append(series, plot.Series{Name: fmt.Sprintf("%s (%d×)", c.Name(), c.Frequency)})
	}
	for _, in := range a.Sequence {
		if i, ok := index[in.Pattern]; ok {
			series[i].X = append(series[i].X, float64(in.Position))
			series[i].Y = append(series[i].Y, (in.Finish-in.Start).Seconds()*1e6)
		}
	}
	slow := plot.Series{Name: fmt.Sprintf("slow (M > %g)", a.Options.Cutoff), Points: true, Color: plot.Slow}
	for _, s := range a.Slow {
		slow.X = append(slow.X, float64(s.Position))
		slow.Y = append(slow.Y, s.Duration)
	}
	if len(slow.X) > 0 {
		series = append(series, slow)
	}
	if len(series) == 0 {
		return fmt.Errorf("%s: no pattern instance to draw", name)
	}
	return plot.Lines(w, series, plot.ChartOptions{Title: filepath.Base(name) + ": pattern instance durations",
		XLabel: "position in the pattern sequence", YLabel: "duration (µs)"})
}

// Matrix draws the point-to-point matrix of measure m as a heat map
// (kairos stats --svg).
func Matrix(w io.Writer, s *stats.Stats, m stats.Measure, name string) error {
	cells := make([]plot.Cell, 0, len(s.Matrix))
	for _, p := range s.Matrix {
		cells = append(cells, plot.Cell{Row: p.Src, Col: p.Dst, Value: float64(m.Of(p))})
	}
	title := fmt.Sprintf("%s: point-to-point %s, %d ranks", filepath.Base(name), m.Name(), s.Ranks)
	return plot.Heatmap(w, s.Ranks, cells, plot.HeatmapOptions{Title: title, RowLabel: "source rank", ColLabel: "destination rank", Unit: m.Name()})
}

// seconds writes a duration in seconds with a unit a reader takes in at
// a glance: 1.32 s, 12.5 ms, 850 µs.
func seconds(s float64) string {
	switch {
	case s == 0:
		return "0 s"
	case s >= 1 || s <= -1:
		return strconv.FormatFloat(s, 'f', 3, 64) + " s"
	case s >= 1e-3 || s <= -1e-3:
		return strconv.FormatFloat(s*1e3, 'f', 2, 64) + " ms"
	}
	return strconv.FormatFloat(s*1e6, 'f', 1, 64) + " µs"
}
