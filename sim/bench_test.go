package sim_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"kairos/platform"
	"kairos/sim"
	"kairos/trace"
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
	p, err := platform.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	hosts := make([]*platform.Host, n)
	for i := range hosts {
		hosts[i] = p.Hosts[i%len(p.Hosts)]
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

func benchStencil(b *testing.B, grid string, n int, analytic bool, incremental ...bool) {
	m := machineOn(b, clusterXML(b, b.TempDir(), n, ""), n)
	src := stencil(b, grid, 1000)
	tr, err := trace.Load(src)
	if err != nil {
		b.Fatal(err)
	}
	cfg := sim.DefaultConfig()
	cfg.Analytic = analytic
	if len(incremental) > 0 && !incremental[0] {
		cfg.Solver = sim.SolverSimGrid
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := sim.Run(tr, m, cfg, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(res.Actions)/b.Elapsed().Seconds()*float64(i+1)/1e6, "Mactions/s")
	}
}

func BenchmarkStencil64(b *testing.B)          { benchStencil(b, "8x8", 64, false) }
func BenchmarkStencil64SimGrid(b *testing.B)   { benchStencil(b, "8x8", 64, false, false) }
func BenchmarkStencil64Analytic(b *testing.B)  { benchStencil(b, "8x8", 64, true) }
func BenchmarkStencil256(b *testing.B)         { benchStencil(b, "16x16", 256, false) }
func BenchmarkStencil256Analytic(b *testing.B) { benchStencil(b, "16x16", 256, true) }

func BenchmarkStencil256SimGrid(b *testing.B) { benchStencil(b, "16x16", 256, false, false) }

func BenchmarkStencil256Exact(b *testing.B) {
	m := machineOn(b, clusterXML(b, b.TempDir(), 256, ""), 256)
	tr, err := trace.Load(stencil(b, "16x16", 1000))
	if err != nil {
		b.Fatal(err)
	}
	cfg := sim.DefaultConfig()
	cfg.Compat = false
	for i := 0; i < b.N; i++ {
		if _, err := sim.Run(tr, m, cfg, nil); err != nil {
			b.Fatal(err)
		}
	}
}
