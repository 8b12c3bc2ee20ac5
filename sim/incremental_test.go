package sim_test

import (
	"math"
	"os"
	"path/filepath"
	"testing"

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
				p, err := workload.Defaults(kind)
				if err != nil {
					t.Fatal(err)
				}
				p.Ranks, p.Grid, p.Bytes, p.Iterations = 16, nil, 200000, min(p.Iterations, 3)
				src, err := workload.New(kind, p)
				if err != nil {
					t.Fatal(err)
				}
				tr, err := trace.Load(src)
				if err != nil {
					t.Fatal(err)
				}
				m := machineOn(t, plat, 16)
				var times [2]float64
				for i, inc := range []bool{false, true} {
					cfg := sim.DefaultConfig()
					cfg.Compat, cfg.Incremental = compat, inc
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
