package sim_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"kairos/platform"
	"kairos/sim"
	"kairos/trace"
	"kairos/workload"
)

// clusterXML returns a SimGrid platform file of one flat cluster of n
// hosts (1 Gf, 125 MBps, 50 us, split-duplex private links), with extra
// <cluster> attributes (a backbone, a topology...), written in dir.
func clusterXML(t testing.TB, dir string, n int, extra string) string {
	t.Helper()
	p := filepath.Join(dir, fmt.Sprintf("cluster%d.xml", n))
	xml := fmt.Sprintf(`<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <cluster id="c" prefix="node-" radical="0-%d" suffix=".simgrid.org" speed="1Gf" bw="125MBps" lat="50us" %s/>
</platform>
`, n-1, extra)
	if err := os.WriteFile(p, []byte(xml), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// machineOn loads a platform and deploys n ranks round-robin on its hosts.
func machineOn(t testing.TB, path string, n int) *sim.Machine {
	t.Helper()
	return machinePerHost(t, path, n, 1)
}

// machinePerHost loads a platform and deploys n ranks on its hosts as
// sharedHostfile does: perHost consecutive ranks per host.
func machinePerHost(t testing.TB, path string, n, perHost int) *sim.Machine {
	t.Helper()
	p, err := platform.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	hosts := make([]*platform.Host, n)
	for i := range hosts {
		hosts[i] = p.Hosts[i/perHost%len(p.Hosts)]
	}
	m, err := sim.FromPlatform(p, hosts)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func stencil(t testing.TB, grid string, iters int) trace.Source {
	t.Helper()
	return stencilBytes(t, grid, iters, 0)
}

// benchStencil replays the periodic stencil on a flat cluster with the
// default configuration as set changes it.
func benchStencil(b *testing.B, grid string, n int, set func(*sim.Config)) {
	m := machineOn(b, clusterXML(b, b.TempDir(), n, ""), n)
	tr, err := trace.Load(stencil(b, grid, 1000))
	if err != nil {
		b.Fatal(err)
	}
	benchRun(b, tr, m, set)
}

// benchRun replays tr on m b.N times with the default configuration as
// set changes it, and reports the actions replayed a second.
func benchRun(b *testing.B, tr trace.Source, m *sim.Machine, set func(*sim.Config)) {
	cfg := sim.DefaultConfig()
	set(&cfg)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := sim.Run(tr, m, cfg, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(res.Actions)/b.Elapsed().Seconds()*float64(i+1)/1e6, "Mactions/s")
	}
}

// loadKind generates kind's trace with its default parameters as set
// changes them, and loads it.
func loadKind(tb testing.TB, kind string, set func(*workload.Params)) *trace.Trace {
	tb.Helper()
	p, err := workload.Defaults(kind)
	if err != nil {
		tb.Fatal(err)
	}
	set(&p)
	src, err := workload.New(kind, p)
	if err != nil {
		tb.Fatalf("%s: %v", kind, err)
	}
	tr, err := trace.Load(src)
	if err != nil {
		tb.Fatal(err)
	}
	return tr
}

func asIs(*sim.Config)            {}
func analytic(c *sim.Config)      { c.Analytic = true }
func simgridSolver(c *sim.Config) { c.Solver = sim.SolverSimGrid }
func withoutQuirks(c *sim.Config) { c.Compat = false }

func BenchmarkStencil64(b *testing.B)          { benchStencil(b, "8x8", 64, asIs) }
func BenchmarkStencil64SimGrid(b *testing.B)   { benchStencil(b, "8x8", 64, simgridSolver) }
func BenchmarkStencil64Analytic(b *testing.B)  { benchStencil(b, "8x8", 64, analytic) }
func BenchmarkStencil256(b *testing.B)         { benchStencil(b, "16x16", 256, asIs) }
func BenchmarkStencil256SimGrid(b *testing.B)  { benchStencil(b, "16x16", 256, simgridSolver) }
func BenchmarkStencil256Analytic(b *testing.B) { benchStencil(b, "16x16", 256, analytic) }
func BenchmarkStencil256Exact(b *testing.B)    { benchStencil(b, "16x16", 256, withoutQuirks) }

// benchNoisy replays a generated workload of n ranks with 5% noise and
// 10% imbalance (nothing repeats: every period is replayed) on a flat
// cluster, with the default configuration as set changes it.
func benchNoisy(b *testing.B, kind string, n, iters int, set func(*sim.Config)) {
	m := machineOn(b, clusterXML(b, b.TempDir(), n, ""), n)
	tr := loadKind(b, kind, func(p *workload.Params) {
		p.Ranks, p.Grid, p.Iterations, p.Noise, p.Imbalance = n, nil, iters, 0.05, 0.1
	})
	benchRun(b, tr, m, set)
}

func BenchmarkNoisyStencil64(b *testing.B)         { benchNoisy(b, "stencil2d", 64, 200, asIs) }
func BenchmarkNoisyStencil64SimGrid(b *testing.B)  { benchNoisy(b, "stencil2d", 64, 200, simgridSolver) }
func BenchmarkNoisyStencil64Analytic(b *testing.B) { benchNoisy(b, "stencil2d", 64, 200, analytic) }
func BenchmarkNoisyLU64(b *testing.B)              { benchNoisy(b, "lu", 64, 10, asIs) }
func BenchmarkNoisyLU64SimGrid(b *testing.B)       { benchNoisy(b, "lu", 64, 10, simgridSolver) }
func BenchmarkNoisyStencil1024(b *testing.B)       { benchNoisy(b, "stencil2d", 1024, 10, asIs) }
