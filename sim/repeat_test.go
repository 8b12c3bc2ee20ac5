package sim_test

import (
	"math"
	"testing"

	"kairos/sim"
	"kairos/trace"
	"kairos/workload"
)

// TestAutoSolverChoice: the automatic solver replays a trace whose rank 0
// repeats exactly (a stencil without noise, whose periods it may skip)
// with the incremental solver, and one that does not (the same stencil
// with noise, a master-worker's random tasks, a timed trace's varying
// gaps) with SimGrid's re-solves from the start, in the same simulated
// time as SimGrid's re-solves (to rounding where it skips periods): on real traces, where SimGrid's order
// mostly turns out to matter, the incremental run was lost (deal.II on
// 32 ranks: 16.0 s of CPU, 9.5 s with SimGrid's re-solves alone).
func TestAutoSolverChoice(t *testing.T) {
	stencil := func(noise float64) func(*workload.Params) {
		return func(p *workload.Params) { p.Ranks, p.Grid, p.Iterations, p.Noise = 0, []int{4, 4}, 40, noise }
	}
	timed := func(tr *trace.Trace) *trace.Trace {
		for r := range tr.Ranks {
			var evs []trace.Event
			at := trace.Time(0)
			rd := tr.Ranks[r].Reader()
			for i := 0; rd.Next(); i++ {
				e := *rd.Event()
				e.HasTime, e.Enter, e.Exit = true, at+trace.Time(1000+i%7), at+trace.Time(1500+i%7)
				if e.Kind == trace.Compute {
					e.Compute = 0
				}
				at = e.Exit
				evs = append(evs, e)
			}
			tr.Ranks[r] = trace.Rank{}
			for i := range evs {
				tr.Ranks[r].Append(&evs[i])
			}
		}
		return tr
	}
	m := machineOn(t, clusterXML(t, t.TempDir(), 16, ""), 16)
	for _, c := range []struct {
		name string
		tr   *trace.Trace
		want sim.Solver
	}{
		{"stencil", loadKind(t, "stencil2d", stencil(0)), sim.SolverIncremental},
		{"noisy stencil", loadKind(t, "stencil2d", stencil(0.05)), sim.SolverSimGrid},
		{"master-worker", loadKind(t, "masterworker", func(p *workload.Params) { p.Ranks, p.Grid = 16, nil }), sim.SolverSimGrid},
		{"timed, varying gaps", timed(loadKind(t, "stencil2d", stencil(0))), sim.SolverSimGrid},
	} {
		var res [2]*sim.Result
		for i, solver := range []sim.Solver{sim.SolverAuto, sim.SolverSimGrid} {
			cfg := sim.DefaultConfig()
			cfg.Solver = solver
			var err error
			if res[i], err = sim.Run(c.tr, m, cfg, nil); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
		}
		// (The stencil's skipped periods are the whole replay's times to
		// rounding, not to the bit.)
		if res[0].Solver != c.want || math.Abs(res[0].Time-res[1].Time) > 1e-12*res[1].Time {
			t.Errorf("%s: the automatic solver %v, %.12f s; want %v, SimGrid's re-solves' %.12f s", c.name, res[0].Solver, res[0].Time, c.want, res[1].Time)
		}
	}
}
