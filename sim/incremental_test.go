package sim_test

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kairos/format/ti"
	"kairos/internal/testenv"
	"kairos/sim"
	"kairos/trace"
	"kairos/workload"
)

// TestIncrementalSolver replays generated traces with the incremental
// max-min solver and with whole re-solves: with SimGrid's quirks fixed the
// two give the same times on every topology of the differential test;
// with the quirks kept, on the flat cluster of the speed benchmark.
func TestIncrementalSolver(t *testing.T) {
	dir := t.TempDir()
	kinds := []string{"stencil2d", "bt", "sweep", "ft", "mg", "masterworker"}
	for _, topo := range diffTopologies {
		tdir := filepath.Join(dir, topo.name)
		if err := os.MkdirAll(tdir, 0o755); err != nil {
			t.Fatal(err)
		}
		plat := clusterXML(t, tdir, 64, topo.attrs)
		for _, kind := range kinds {
			for _, compat := range []bool{false, true} {
				if compat && topo.name != "flat" {
					continue
				}
				tr := loadKind(t, kind, func(p *workload.Params) {
					p.Ranks, p.Grid, p.Bytes, p.Iterations = 16, nil, 200000, min(p.Iterations, 3)
				})
				m := machineOn(t, plat, 16)
				var times [2]float64
				for i, solver := range []sim.Solver{sim.SolverSimGrid, sim.SolverIncremental} {
					cfg := sim.DefaultConfig()
					cfg.Compat, cfg.Solver = compat, solver
					res, err := sim.Run(tr, m, cfg, nil)
					if err != nil {
						t.Fatalf("%s/%s: %v", topo.name, kind, err)
					}
					times[i] = res.Time
				}
				if d := math.Abs(times[1]-times[0]) / times[0]; d > 1e-9 {
					t.Errorf("%s/%s (simgrid-quirks %v): incremental %.9f, whole re-solves %.9f (relative %.2g)",
						topo.name, kind, compat, times[1], times[0], d)
				}
			}
		}
	}
}

// TestAutoSolver: the default solver stays incremental where SimGrid's
// selective-update quirk never strikes (the flat cluster of the speed
// benchmark) and where it strikes in an order it knows (a dragonfly, whose
// transfers end together), and starts over with SimGrid's solver where
// the order of simultaneous events decides and it cannot know it (the IB
// model's transfers ending together), giving SimGrid's solver's time
// exactly, with a timed trace that holds each action once.
func TestAutoSolver(t *testing.T) {
	defer sim.TryIncremental()()
	dir := t.TempDir()
	const dragonfly = `topology="DRAGONFLY" topo_parameters="2,1;4,1;4,1;2" loopback_bw="100MBps" loopback_lat="0"`
	for _, tc := range []struct {
		topo, attrs, model string
		want               sim.Solver
	}{
		{"flat", ``, sim.ModelSMPI, sim.SolverIncremental},
		{"dragonfly", dragonfly, sim.ModelSMPI, sim.SolverIncremental},
		{"flat-IB", ``, sim.ModelIB, sim.SolverSimGrid},
	} {
		tdir := filepath.Join(dir, tc.topo)
		if err := os.MkdirAll(tdir, 0o755); err != nil {
			t.Fatal(err)
		}
		m := machineOn(t, clusterXML(t, tdir, 64, tc.attrs), 16)
		tr, err := trace.Load(stencilBytes(t, "4x4", 3, 1024))
		if err != nil {
			t.Fatal(err)
		}
		var times [2]float64
		for i, solver := range []sim.Solver{sim.SolverSimGrid, sim.SolverAuto} {
			cfg := sim.DefaultConfig()
			cfg.Solver, cfg.Model = solver, tc.model
			timed := sim.NewTimedTrace(len(tr.Ranks), tr.Meta())
			res, err := sim.Run(tr, m, cfg, sim.Observers{timed})
			if err != nil {
				t.Fatal(err)
			}
			times[i] = res.Time
			if solver == sim.SolverAuto && res.Solver != tc.want {
				t.Errorf("%s: the automatic solver ended as %v, want %v", tc.topo, res.Solver, tc.want)
			}
			for r := range tr.Ranks {
				if got, want := timed.T.Ranks[r].Len(), tr.Ranks[r].Len(); got != want {
					t.Errorf("%s: timed trace rank %d has %d events, want %d", tc.topo, r, got, want)
				}
			}
		}
		if d := math.Abs(times[1]-times[0]) / times[0]; d > 1e-9 {
			t.Errorf("%s: automatic solver %.9f, SimGrid's %.9f", tc.topo, times[1], times[0])
		}
		// An observer that cannot start over sees one run only, and the
		// verbose log keeps SimGrid's order.
		var logs, timelines [2]string
		for i, solver := range []sim.Solver{sim.SolverSimGrid, sim.SolverAuto} {
			cfg := sim.DefaultConfig()
			cfg.Solver, cfg.Model = solver, tc.model
			var log, timeline strings.Builder
			hosts := make([]string, 16)
			for r := range hosts {
				hosts[r] = fmt.Sprintf("node-%d", r)
			}
			pf := sim.NewPerfetto(&timeline, hosts)
			timed := sim.NewTimedTrace(len(tr.Ranks), tr.Meta())
			if _, err := sim.Run(tr, m, cfg, sim.Observers{&sim.Verbose{W: &log, Hosts: hosts}}); err != nil {
				t.Fatal(err)
			}
			if _, err := sim.Run(tr, m, cfg, sim.Observers{timed, pf}); err != nil {
				t.Fatal(err)
			}
			if got, want := timed.T.Ranks[0].Len(), tr.Ranks[0].Len(); got != want {
				t.Errorf("%s: timed trace rank 0 has %d events, want %d", tc.topo, got, want)
			}
			if err := pf.Close(); err != nil {
				t.Fatal(err)
			}
			logs[i], timelines[i] = log.String(), timeline.String()
		}
		if logs[0] != logs[1] {
			t.Errorf("%s: the verbose log of the automatic solver differs from SimGrid's solver's", tc.topo)
		}
		if a, b := strings.Count(timelines[0], `"ph":"X"`), strings.Count(timelines[1], `"ph":"X"`); a != b {
			t.Errorf("%s: the automatic solver's timeline has %d slices, SimGrid's solver's %d", tc.topo, b, a)
		}
	}
}

// stencilBytes is the periodic 2-D stencil generator's trace with the
// given grid, iterations and message size (0: the generator's default).
func stencilBytes(t testing.TB, grid string, iters int, bytes int64) trace.Source {
	t.Helper()
	p, err := workload.Defaults("stencil2d")
	if err != nil {
		t.Fatal(err)
	}
	g, err := workload.ParseGrid(grid)
	if err != nil {
		t.Fatal(err)
	}
	p.Grid, p.Ranks, p.Iterations = g, 0, iters
	if bytes > 0 {
		p.Bytes = bytes
	}
	src, err := workload.New("stencil2d", p)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// TestAutoSolverSweep (with KAIROS_LONG=1, as in CI: it takes about a
// minute) replays every generator at 16 and 64 ranks on every topology
// of the differential test, eager and rendezvous sizes, with noise drawn
// from three seeds, with the automatic solver and with SimGrid's solver:
// the times must be the same.
func TestAutoSolverSweep(t *testing.T) {
	t.Parallel()
	if !testenv.Long() {
		t.Skip("a minute long: KAIROS_LONG=1 runs it")
	}
	dir := t.TempDir()
	n, worst, restarted := 0, 0.0, 0
	for _, topo := range diffTopologies {
		tdir := filepath.Join(dir, topo.name)
		if err := os.MkdirAll(tdir, 0o755); err != nil {
			t.Fatal(err)
		}
		plat := clusterXML(t, tdir, 64, topo.attrs)
		for _, kind := range workload.Kinds() {
			for _, ranks := range []int{16, 64} {
				m := machineOn(t, plat, ranks)
				for _, bytes := range []int64{1024, 200000} {
					for seed := uint64(1); seed <= 3; seed++ {
						p, err := workload.Defaults(kind)
						if err != nil {
							t.Fatal(err)
						}
						p.Ranks, p.Grid, p.Bytes, p.Seed = ranks, nil, bytes, seed
						p.Iterations = min(p.Iterations, 3)
						p.Noise = 0.05
						if p.Tasks > 0 {
							p.Tasks = 3 * ranks
						}
						if p.Planes > 0 {
							p.Planes = 4
						}
						src, err := workload.New(kind, p)
						if err != nil {
							continue
						}
						tr, err := trace.Load(src)
						if err != nil {
							t.Fatal(err)
						}
						var res [2]*sim.Result
						for i, solver := range []sim.Solver{sim.SolverSimGrid, sim.SolverAuto} {
							cfg := sim.DefaultConfig()
							cfg.Solver = solver
							if res[i], err = sim.Run(tr, m, cfg, nil); err != nil {
								t.Fatalf("%s/%s/%d/%d/%d: %v", kind, topo.name, ranks, bytes, seed, err)
							}
						}
						d := math.Abs(res[1].Time-res[0].Time) / res[0].Time
						worst = math.Max(worst, d)
						n++
						if res[1].Solver == sim.SolverSimGrid {
							restarted++
						}
						if d > 1e-9 {
							t.Errorf("%s/%s/%d/%dB/seed %d: automatic %.9f, SimGrid's solver %.9f (%.2g)",
								kind, topo.name, ranks, bytes, seed, res[1].Time, res[0].Time, d)
						}
					}
				}
			}
		}
	}
	t.Logf("%d replays, worst relative difference %.2g, %d started over with SimGrid's solver", n, worst, restarted)
}

// TestSimultaneousOrder: in this trace (found by the random differential
// test, alltoallv ring_light_barrier as point-to-point calls), two
// transfers' latencies end at one date, and SimGrid enables them in the
// other order than the incremental solver alone, which does not make
// SimGrid's heap updates of flows whose share is unchanged: in SimGrid's
// order, its selective update misses a flow whose share changes. The
// automatic solver follows SimGrid's report order (the stamps of
// maxmin.System.Stamps), so knows SimGrid's order of the transfers ending
// together earlier, whose ranks started those two, and gives SimGrid's
// time (0.011200389563 s, as SimGrid 3.32 prints it) without starting
// over.
func TestSimultaneousOrder(t *testing.T) {
	defer sim.TryIncremental()()
	m := machineOn(t, clusterXML(t, t.TempDir(), 8, ""), 7)
	times := map[sim.Solver]float64{}
	for _, solver := range []sim.Solver{sim.SolverSimGrid, sim.SolverIncremental, sim.SolverAuto} {
		tr, err := ti.Open(filepath.Join("testdata", "simultaneous-order.ti"))
		if err != nil {
			t.Fatal(err)
		}
		cfg := sim.DefaultConfig()
		cfg.Solver = solver
		res, err := sim.Run(tr, m, cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		times[solver] = res.Time
		if solver == sim.SolverAuto && res.Solver != sim.SolverIncremental {
			t.Errorf("the automatic solver ended as %v, want the incremental one", res.Solver)
		}
	}
	if math.Abs(times[sim.SolverSimGrid]-0.011200389563) > 1e-12 {
		t.Errorf("SimGrid's solver: %.12f s, want SimGrid's 0.011200389563", times[sim.SolverSimGrid])
	}
	if times[sim.SolverAuto] != times[sim.SolverSimGrid] {
		t.Errorf("automatic solver %.12f s, SimGrid's %.12f s", times[sim.SolverAuto], times[sim.SolverSimGrid])
	}
	if times[sim.SolverIncremental] == times[sim.SolverSimGrid] {
		t.Errorf("the incremental solver alone gives SimGrid's time: the trace no longer tests the order of simultaneous events")
	}
}

// TestAutoSolverKeepsIncremental replays noisy, imbalanced generated
// traces on which the automatic solver used to start over with SimGrid's
// re-solves: in cg and mg, transfers end together (their removals are
// marked whole in any order, and the ranks they wake start nothing whose
// order matters later); in lu, SimGrid's selective-update quirk strikes
// (its stale shares are then re-solved SimGrid's way until solved whole
// again). The automatic solver must end with the incremental solver and
// give the time of SimGrid's re-solves to the bit (as smpirun prints it:
// lu 1.606359348 s, cg 13.105802376 s, mg 21.130941828 s).
func TestAutoSolverKeepsIncremental(t *testing.T) {
	defer sim.TryIncremental()()
	plat := clusterXML(t, t.TempDir(), 16, "")
	for _, c := range []struct {
		kind  string
		iters int
		want  float64
	}{
		{"lu", 10, 1.606359348},
		{"cg", 20, 13.105802376},
		{"mg", 20, 21.130941828},
	} {
		tr := loadKind(t, c.kind, func(p *workload.Params) {
			p.Ranks, p.Grid, p.Iterations, p.Seed = 16, nil, c.iters, 1
			p.Noise, p.Imbalance = 0.05, 0.1
		})
		m := machineOn(t, plat, 16)
		var res [2]*sim.Result
		var err error
		for i, solver := range []sim.Solver{sim.SolverSimGrid, sim.SolverAuto} {
			cfg := sim.DefaultConfig()
			cfg.Solver = solver
			if res[i], err = sim.Run(tr, m, cfg, nil); err != nil {
				t.Fatalf("%s: %v", c.kind, err)
			}
		}
		if res[1].Solver != sim.SolverIncremental {
			t.Errorf("%s: the automatic solver ended as %v, want the incremental one", c.kind, res[1].Solver)
		}
		if res[1].Time != res[0].Time {
			t.Errorf("%s: automatic solver %.12f s, SimGrid's re-solves %.12f s", c.kind, res[1].Time, res[0].Time)
		}
		if math.Abs(res[0].Time-c.want) > 5e-10 {
			t.Errorf("%s: SimGrid's re-solves %.12f s, want SimGrid's %.9f", c.kind, res[0].Time, c.want)
		}
	}
}
