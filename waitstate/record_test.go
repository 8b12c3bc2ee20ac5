package waitstate

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"kairos/capture"
	"kairos/format"
	"kairos/internal/testenv"
)

// record builds Kairos' tracer with OTF2 and runs app (with args) on 4
// ranks of Open MPI with it preloaded, in dir; it returns the archive.
func record(t *testing.T, dir string, app ...string) string {
	t.Helper()
	mpicc := testenv.Tool(t, "mpicc", "libopenmpi-dev")
	testenv.Tool(t, "mpirun", "openmpi-bin")
	if _, err := os.Stat("/usr/include/otf2/otf2.h"); err != nil {
		if testenv.Required() {
			t.Fatal("KAIROS_REQUIRE_EXTERNAL=1 but OTF2's headers are not installed (Debian package libotf2-trace-dev)")
		}
		t.Skip("OTF2's headers are not installed (Debian package libotf2-trace-dev; skipping)")
	}
	src := filepath.Join(dir, capture.FileName)
	if err := os.WriteFile(src, capture.Source, 0o644); err != nil {
		t.Fatal(err)
	}
	lib := filepath.Join(dir, "libkairos_trace.so")
	command(t, dir, nil, mpicc, "-O0", "-shared", "-fPIC", "-DKAIROS_OTF2", "-o", lib, src, "-lotf2")
	env := []string{"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1", "KAIROS_TRACE=" + filepath.Join(dir, "trace"),
		"KAIROS_TRACE_FORMAT=otf2"}
	command(t, dir, env, "mpirun", append([]string{"--oversubscribe", "-np", "4", "-x", "LD_PRELOAD=" + lib, "-x", "KAIROS_TRACE",
		"-x", "KAIROS_TRACE_FORMAT"}, app...)...)
	return filepath.Join(dir, "trace", "traces.otf2")
}

func command(t *testing.T, dir string, env []string, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
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
	mpicc := testenv.Tool(t, "mpicc", "libopenmpi-dev")
	app := filepath.Join(dir, "delayed")
	command(t, dir, nil, mpicc, "-O1", "-o", app, filepath.Join(testenv.RepoRoot(), "waitstate", "testdata", "delayed.c"))
	a := analyzeFile(t, record(t, dir, app))
	c := a.Causes[0]
	if c.Rank != 2 || c.Activity != "computation" || c.Share < 0.5 || c.Direct <= 0 || c.Propagated <= 0 {
		t.Errorf("first cause %+v", c)
	}
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
