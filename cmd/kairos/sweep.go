package main

import (
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"kairos/format"
	"kairos/internal/fileio"
	"kairos/plot"
	"kairos/sim"
	"kairos/trace"
)

// sweepRow is one run of a what-if sweep.
type sweepRow struct {
	BwScale       float64 `json:"bw_scale"`
	LatScale      float64 `json:"lat_scale"`
	SpeedScale    float64 `json:"speed_scale"`
	SimulatedTime float64 `json:"simulated_time"`
	// Speedup is the first run's time over this one's (0 if this one
	// takes no time).
	Speedup float64 `json:"speedup"`
	// Energy and LinkEnergy are the hosts' and the links' joules, with
	// the energy plugins.
	Energy     *float64 `json:"energy_joules,omitempty"`
	LinkEnergy *float64 `json:"link_energy_joules,omitempty"`
}

// sweepJSON is the stable JSON form of a sweep.
type sweepJSON struct {
	Trace    string     `json:"trace"`
	Platform string     `json:"platform"`
	Model    string     `json:"model"`
	Runs     []sweepRow `json:"runs"`
	// UntimedAt is the speed (flop/s) a timed trace's computation was
	// measured at (smpi/host-speed).
	UntimedAt float64 `json:"untimed_at,omitempty"`
	// Recorded is how long the timed trace's recorded run lasted.
	Recorded float64 `json:"recorded_time,omitempty"`
}

// runSweep replays the trace once for every combination of the scale
// lists (bandwidth outermost, speed innermost) and prints a row for each:
// how the time moves with a faster network or faster hosts, with
// contention.
func runSweep(cmd *cobra.Command, path string, tf format.Format, src trace.Source, f *simulateFlags, cfg sim.Config, given map[string]bool) error {
	for _, o := range []struct {
		flag string
		set  bool
	}{{"--timed-trace", f.timed != ""}, {"--perfetto", f.perfetto != ""}, {"--paje", f.paje != ""}, {"--verbose", f.verbose}, {"--ranks", f.perRank}} {
		if o.set {
			return usagef("%s writes one run: give one value to --bw-scale, --lat-scale and --speed-scale", o.flag)
		}
	}
	out := sweepJSON{Trace: path, Model: cfg.Model}
	var untimed *trace.UntimedSource
	if cfg.Analytic {
		out.Model += " (analytic)"
	}
	for _, bw := range f.bwScale {
		for _, lat := range f.latScale {
			for _, speed := range f.speedScale {
				mc, err := simulateMachine(f, cfg, given, src.NumRanks(), scales{bw, lat, speed})
				if err != nil {
					return err
				}
				if len(out.Runs) == 0 {
					printMap(cmd.ErrOrStderr(), f, mc.names)
					// The speed a timed trace is untimed at is taken before the scales.
					if untimed, err = untimeForReplay(cmd.ErrOrStderr(), path, tf, src, mc); err != nil {
						return err
					}
					if untimed != nil {
						src = untimed
					}
				}
				res, err := sim.Run(src, mc.m, mc.cfg, nil)
				if err != nil {
					err = naming(path, fmt.Errorf("bandwidth x%g, latency x%g, speed x%g: %w", bw, lat, speed, err))
					fmt.Fprintln(cmd.ErrOrStderr(), "kairos:", err)
					return reported{err}
				}
				row := sweepRow{BwScale: bw, LatScale: lat, SpeedScale: speed, SimulatedTime: res.Time}
				if res.Energy != nil {
					row.Energy = &res.Energy.Total
				}
				if res.LinkEnergy != nil {
					row.LinkEnergy = &res.LinkEnergy.Total
				}
				out.Platform = mc.p.Name
				out.Runs = append(out.Runs, row)
			}
		}
	}
	out.UntimedAt, out.Recorded = untimedJSON(untimed)
	for i := range out.Runs {
		if t := out.Runs[i].SimulatedTime; t > 0 {
			out.Runs[i].Speedup = out.Runs[0].SimulatedTime / t
		}
	}
	if f.svg != "" {
		if err := fileio.WriteFile(f.svg, func(w io.Writer) error { return sweepLines(w, &out, f) }); err != nil {
			return err
		}
	}
	if f.json {
		return writeJSON(cmd.OutOrStdout(), out)
	}
	return writeSweepText(cmd.OutOrStdout(), &out)
}

// sweepLines draws the sweep's simulated times against its first varying
// scale, a line for each setting of the other two.
func sweepLines(w io.Writer, s *sweepJSON, f *simulateFlags) error {
	axis, name := func(r sweepRow) float64 { return r.BwScale }, "bandwidth"
	rest := func(r sweepRow) string { return fmt.Sprintf("latency x%g, speed x%g", r.LatScale, r.SpeedScale) }
	switch {
	case len(f.bwScale) > 1:
	case len(f.latScale) > 1:
		axis, name = func(r sweepRow) float64 { return r.LatScale }, "latency"
		rest = func(r sweepRow) string { return fmt.Sprintf("bandwidth x%g, speed x%g", r.BwScale, r.SpeedScale) }
	default:
		axis, name = func(r sweepRow) float64 { return r.SpeedScale }, "speed"
		rest = func(r sweepRow) string { return fmt.Sprintf("bandwidth x%g, latency x%g", r.BwScale, r.LatScale) }
	}
	var series []plot.Series
	index := map[string]int{}
	for _, r := range s.Runs {
		k := rest(r)
		i, ok := index[k]
		if !ok {
			i = len(series)
			index[k] = i
			series = append(series, plot.Series{Name: k})
		}
		series[i].X = append(series[i].X, axis(r))
		series[i].Y = append(series[i].Y, r.SimulatedTime)
	}
	for i := range series {
		sortSeries(&series[i])
	}
	return plot.Lines(w, series, plot.ChartOptions{Title: filepath.Base(s.Trace) + " on " + s.Platform + ", " + s.Model + " model",
		XLabel: name + " scale", YLabel: "simulated time (s)", LogX: true})
}

// sortSeries orders a series' points by x.
func sortSeries(s *plot.Series) {
	idx := make([]int, len(s.X))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return s.X[idx[a]] < s.X[idx[b]] })
	x, y := make([]float64, len(idx)), make([]float64, len(idx))
	for i, j := range idx {
		x[i], y[i] = s.X[j], s.Y[j]
	}
	s.X, s.Y = x, y
}

func writeSweepText(w io.Writer, s *sweepJSON) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s on %s, %s model: %d runs\n", s.Trace, s.Platform, s.Model, len(s.Runs))
	if s.Recorded > 0 {
		fmt.Fprintf(&b, "  recorded run %.9f s (the trace's, from MPI_Init's return to MPI_Finalize's entry, the span a replay simulates)\n", s.Recorded)
	}
	b.WriteString("  bandwidth x  latency x    speed x  simulated time (s)  speed-up")
	if s.Runs[0].Energy != nil {
		b.WriteString("  energy (J)")
	}
	if s.Runs[0].LinkEnergy != nil {
		b.WriteString("  links (J)")
	}
	b.WriteString("\n")
	for _, r := range s.Runs {
		fmt.Fprintf(&b, "  %11g  %9g  %9g  %18.9f  %8.3f", r.BwScale, r.LatScale, r.SpeedScale, r.SimulatedTime, r.Speedup)
		if r.Energy != nil {
			fmt.Fprintf(&b, "  %10.3f", *r.Energy)
		}
		if r.LinkEnergy != nil {
			fmt.Fprintf(&b, "  %9.3f", *r.LinkEnergy)
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
