package waitstate

import (
	"os"
	"path/filepath"
	"testing"

	"kairos/format"
	"kairos/internal/testenv"
	"kairos/internal/tracertest"
)

// record builds Kairos' tracer with OTF2 and runs app (with args) on 4
// ranks of Open MPI with it preloaded, in dir; it returns the archive.
func record(t *testing.T, dir string, app ...string) string {
	t.Helper()
	m := tracertest.OpenMPI
	lib := m.Tracer(t, dir, true)
	m.Launch(t, tracertest.Recording{Lib: lib, Trace: filepath.Join(dir, "trace"), Format: "otf2", NP: 4, Dir: dir}, app[0], app[1:]...)
	return filepath.Join(dir, "trace", "traces.otf2")
}

func analyzeFile(t *testing.T, path string) *Analysis {
	t.Helper()
	src, _, err := format.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	a, err := Analyze(src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestRecordedDelay records a real MPI program (testdata/delayed.c: a
// ring exchange on 4 ranks whose rank 2 works 0.4 s longer in two
// iterations) with Kairos' OTF2 tracer and names rank 2's computation
// first, with most of the waiting: its neighbour waits directly, the
// others by propagation around the ring and at the allreduces.
func TestRecordedDelay(t *testing.T) {
	dir := t.TempDir()
	tracertest.OpenMPI.Need(t)
	app := tracertest.OpenMPI.Compile(t, dir, filepath.Join(testenv.RepoRoot(), "waitstate", "testdata", "delayed.c"))
	a := analyzeFile(t, record(t, dir, app))
	c := a.Causes[0]
	if c.Rank != 2 || c.Activity != "computation" || c.Share < 0.5 || c.Direct <= 0 || c.Propagated <= 0 {
		t.Errorf("first cause %+v", c)
	}
}

// TestRecordedPolling records a program whose rank 0 polls its receives
// with MPI_Testsome (testdata/polling.c), and names a sender's work the
// first cause and rank 3, the slowest, the critical path's: before the
// wait that ends a polling loop took the tests' time, rank 0's tests
// were the first cause (99% of the waiting in a run) and held the
// critical path, and no late sender was found.
func TestRecordedPolling(t *testing.T) {
	a := recordedReceiver(t, "polling.c", 3)
	for _, c := range a.Causes {
		if c.Activity == "MPI_Testsome" && c.Share > 0.05 {
			t.Errorf("cause %+v: rank 0's tests", c)
		}
	}
	var late float64
	for _, k := range a.Kinds {
		if k.Kind == LateSender {
			late = k.Seconds
		}
	}
	if late <= 0 {
		t.Errorf("no late sender in %+v", a.Kinds)
	}
}

// TestRecordedMatchedProbes records a program whose rank 0 receives by
// matched probes (testdata/mprobe.c: MPI_Mprobe, then a loop of
// MPI_Improbe, each followed by MPI_Mrecv), and names a sender's work the
// first cause and rank 2, the slowest, the critical path's: before the
// wait that completes a matched probe took its time, rank 0's probes (an
// MPI_Irecv and MPI_Improbe) were the two first causes and held the
// critical path.
func TestRecordedMatchedProbes(t *testing.T) { recordedReceiver(t, "mprobe.c", 2) }

// recordedReceiver records testdata/program, whose rank 0 receives from
// senders that work before they send, slowest the rank slowest, and
// checks that a sender's work is the first cause and that the slowest
// sender holds most of the critical path.
func recordedReceiver(t *testing.T, program string, slowest int32) *Analysis {
	t.Helper()
	dir := t.TempDir()
	tracertest.OpenMPI.Need(t)
	app := tracertest.OpenMPI.Compile(t, dir, filepath.Join(testenv.RepoRoot(), "waitstate", "testdata", program))
	a := analyzeFile(t, record(t, dir, app))
	if c := a.Causes[0]; c.Rank == 0 || c.Activity != "computation" {
		t.Errorf("first cause %+v, want a sender's work", c)
	}
	if p := a.CriticalPath.Ranks; len(p) == 0 || p[0].Rank != slowest {
		t.Errorf("critical path by rank %+v, want rank %d's first", p, slowest)
	}
	return a
}

// TestRecordedLAMMPS records LAMMPS' Lennard-Jones melt on 4 ranks and
// checks that the analysis of a real application's trace holds together
// (the costs sum to the waiting, the critical path is the run).
func TestRecordedLAMMPS(t *testing.T) {
	if !testenv.Long() {
		t.Skip("records LAMMPS: a long test (KAIROS_LONG=1)")
	}
	lmp := testenv.Tool(t, "lmp", "lammps")
	dir := t.TempDir()
	in, err := os.ReadFile("/usr/share/lammps/examples/melt/in.melt")
	if err != nil {
		t.Fatalf("LAMMPS' melt example: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "in.melt"), in, 0o644); err != nil {
		t.Fatal(err)
	}
	a := analyzeFile(t, record(t, dir, lmp, "-in", "in.melt", "-log", "none", "-screen", "none"))
	sum := a.Unexplained
	for _, c := range a.Causes {
		sum += c.Cost
	}
	if a.Waiting <= 0 || len(a.Causes) == 0 || sum < a.Waiting*(1-1e-9) || sum > a.Waiting*(1+1e-9) ||
		a.CriticalPath.Seconds > a.Runtime*(1+1e-9) || a.CriticalPath.Seconds < 0.9*a.Runtime {
		t.Errorf("LAMMPS melt: waiting %g s, costs %g s, critical path %g s, run %g s", a.Waiting, sum, a.CriticalPath.Seconds, a.Runtime)
	}
}
