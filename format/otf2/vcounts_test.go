package otf2

import (
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"kairos/check"
	"kairos/format/scorep"
	"kairos/internal/testenv"
	"kairos/internal/tracertest"
	"kairos/platform"
	"kairos/sim"
	"kairos/trace"
)

// TestDerivedCountsOfRealRun records the irregular v-collectives of
// capture/testdata/cases.c with Kairos' tracer and reads the archive as
// another writer's (the vectors derived from the totals): both traces
// check (every member sends and receives what the others say), the
// gatherv's, scatterv's, allgatherv's and reduce_scatter's vectors are
// the recorded ones, and each alltoallv sends and receives each member's
// recorded totals; the Meta says the counts are derived.
func TestDerivedCountsOfRealRun(t *testing.T) {
	m := tracertest.OpenMPI
	dir := t.TempDir()
	lib := m.Tracer(t, dir, true)
	prog := m.Compile(t, dir, tracertest.Testdata("cases.c"))
	m.Launch(t, tracertest.Recording{Lib: lib, Trace: filepath.Join(dir, "t"), Format: "otf2", NP: 4, Dir: dir}, prog, "vcoll")
	exact, err := open(filepath.Join(dir, "t", "traces.otf2"), true)
	if err != nil {
		t.Fatal(err)
	}
	derived, err := open(filepath.Join(dir, "t", "traces.otf2"), false)
	if err != nil {
		t.Fatal(err)
	}
	if exact.Meta().Attrs[AttrDerivedCounts] != "" || derived.Meta().Attrs[AttrDerivedCounts] == "" {
		t.Errorf("derived counts noted %q with the attributes, %q without", exact.Meta().Attrs[AttrDerivedCounts], derived.Meta().Attrs[AttrDerivedCounts])
	}
	for _, s := range []*Source{exact, derived} {
		if d := s.Defects(); len(d) > 0 {
			t.Errorf("defects: %v", d)
		}
		if rep, err := check.Check(s, check.Options{Protocol: check.SimGrid}); err != nil || !rep.OK() {
			t.Fatalf("check: %v %+v", err, rep)
		}
	}
	colls := func(s *Source) [][]trace.Event {
		out := make([][]trace.Event, s.NumRanks())
		if err := trace.ForEach(s, func(r, _ int, e *trace.Event) error {
			if e.Kind.IsCollective() {
				out[r] = append(out[r], e.Clone())
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	want, got := colls(exact), colls(derived)
	for r := range want {
		if len(got[r]) != len(want[r]) {
			t.Fatalf("rank %d: %d collectives derived, %d read", r, len(got[r]), len(want[r]))
		}
		for i, w := range want[r] {
			g := got[r][i]
			if w.Kind == trace.Alltoallv {
				if scorep.Sum(g.SendCounts) != scorep.Sum(w.SendCounts) || scorep.Sum(g.RecvCounts) != scorep.Sum(w.RecvCounts) {
					t.Errorf("rank %d's alltoallv #%d: derived %v %v, totals %d %d", r, i, g.SendCounts, g.RecvCounts, scorep.Sum(w.SendCounts), scorep.Sum(w.RecvCounts))
				}
				continue
			}
			if !slices.Equal(g.SendCounts, w.SendCounts) || !slices.Equal(g.RecvCounts, w.RecvCounts) {
				t.Errorf("rank %d's %s #%d: derived %v %v, recorded %v %v", r, w.Kind, i, g.SendCounts, g.RecvCounts, w.SendCounts, w.RecvCounts)
			}
		}
	}
}

// TestDerivedCountsOfRealApplications records LAMMPS' peptide (PPPM's
// irregular MPI_Alltoallv and gatherv, 50 steps) and Quantum ESPRESSO's
// pw.x on bulk silicon with two pools (alltoallv, gatherv on the pools'
// communicators) with Kairos' tracer, and replays each archive read
// exactly (the tracer's attributes) and as another writer's (the vectors
// derived from the totals): the derived run checks and replays within
// 0.1% of the exact one. Only under KAIROS_LONG=1.
func TestDerivedCountsOfRealApplications(t *testing.T) {
	if !testenv.Long() {
		t.Skip("records LAMMPS and pw.x: KAIROS_LONG=1 only")
	}
	m := tracertest.OpenMPI
	lib := m.Tracer(t, t.TempDir(), true)
	p, err := platform.ParseCluster("4x1Gf,125MBps,50us")
	if err != nil {
		t.Fatal(err)
	}
	cfg := sim.DefaultConfig()
	if err := cfg.Set("smpi/host-speed", "1Gf"); err != nil {
		t.Fatal(err)
	}
	for _, app := range []struct {
		name, prog, pkg string
		files           map[string]string // input files to write
		args            []string
	}{
		{"peptide", "lmp", "lammps", map[string]string{"in.peptide": "/usr/share/lammps/examples/peptide/in.peptide",
			"data.peptide": "/usr/share/lammps/examples/peptide/data.peptide"}, []string{"-in", "in.peptide", "-log", "none", "-screen", "none"}},
		{"pw.x", "pw.x", "quantum-espresso", map[string]string{"si.scf.in": tracertest.Testdata("si.scf.in")}, []string{"-nk", "2", "-in", "si.scf.in"}},
	} {
		t.Run(app.name, func(t *testing.T) {
			prog := testenv.Tool(t, app.prog, app.pkg)
			dir := t.TempDir()
			for name, src := range app.files {
				b, err := os.ReadFile(src)
				if err != nil {
					t.Fatalf("%v (the package's example input)", err)
				}
				b = regexp.MustCompile(`(?m)^run\s+\d+`).ReplaceAll(b, []byte("run 50"))
				if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			m.Launch(t, tracertest.Recording{Lib: lib, Trace: filepath.Join(dir, "t"), Format: "otf2", NP: 4, Dir: dir}, prog, app.args...)
			var times [2]float64
			for i, counts := range []bool{true, false} {
				s, err := open(filepath.Join(dir, "t", "traces.otf2"), counts)
				if err != nil {
					t.Fatal(err)
				}
				if derived := s.Meta().Attrs[AttrDerivedCounts] != ""; derived == counts {
					t.Errorf("read with the attributes %v: derived counts noted %v", counts, derived)
				}
				if rep, err := check.Check(s, check.Options{Protocol: check.SimGrid}); err != nil || !rep.OK() {
					t.Fatalf("check (attributes read: %v): %v %+v", counts, err, rep)
				}
				res, err := sim.Simulate(s, p, nil, cfg, nil)
				if err != nil {
					t.Fatalf("simulate (attributes read: %v): %v", counts, err)
				}
				times[i] = res.Time
			}
			t.Logf("%s: replayed in %.9f s with the recorded counts, %.9f s with the derived ones", app.name, times[0], times[1])
			if math.Abs(times[1]-times[0]) > 1e-3*times[0] {
				t.Errorf("%s: the derived counts replay in %.9f s, the recorded ones in %.9f s", app.name, times[1], times[0])
			}
		})
	}
}
