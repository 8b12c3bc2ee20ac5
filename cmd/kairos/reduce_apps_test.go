package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"kairos/capture"
	"kairos/internal/testenv"
	"kairos/internal/tracertest"
)

// recordLAMMPS records LAMMPS's Lennard-Jones melt (steps time steps) on
// np ranks of Open MPI with the Kairos tracer (TI), and returns the
// trace's index. LAMMPS puts 4 ranks on a 1×2×2 grid, 8 on 2×2×2.
func recordLAMMPS(t *testing.T, np, steps int) string {
	t.Helper()
	mpicc := testenv.Tool(t, "mpicc", "libopenmpi-dev")
	testenv.Tool(t, "mpirun", "openmpi-bin")
	lmp := testenv.Tool(t, "lmp", "lammps")
	input := "/usr/share/lammps/examples/melt/in.melt"
	in, err := os.ReadFile(input)
	if err != nil {
		if testenv.Required() {
			t.Fatalf("%s: %v (Debian's lammps-examples)", input, err)
		}
		t.Skipf("%s: %v (skipping)", input, err)
	}
	dir := t.TempDir()
	in = regexp.MustCompile(`(?m)^run\s+\d+`).ReplaceAll(in, []byte("run "+strconv.Itoa(steps)))
	if err := os.WriteFile(filepath.Join(dir, "in.melt"), in, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, capture.FileName), capture.Source, 0o644); err != nil {
		t.Fatal(err)
	}
	lib := filepath.Join(dir, "libkairos_trace.so")
	if out, err := runIn(dir, time.Minute, mpicc, "-O2", "-shared", "-fPIC", "-o", lib, capture.FileName); err != nil {
		t.Fatalf("building the tracer: %v\n%s", err, out)
	}
	t.Setenv("OMPI_ALLOW_RUN_AS_ROOT", "1")
	t.Setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
	t.Setenv("KAIROS_TRACE", filepath.Join(dir, "trace"))
	record := func() ([]byte, error) {
		return runIn(dir, 5*time.Minute, "mpirun", "--oversubscribe", "-np", strconv.Itoa(np), "-x", "LD_PRELOAD="+lib, "-x", "KAIROS_TRACE",
			lmp, "-in", "in.melt", "-log", "none", "-screen", "none")
	}
	out, err := record()
	if err != nil && tracertest.LostShutdownRace(out) {
		t.Logf("mpirun lost Open MPI's shutdown race (ompi#7833), recording again:\n%s", out)
		out, err = record()
	}
	if err != nil {
		t.Fatalf("recording LAMMPS: %v\n%s", err, out)
	}
	return filepath.Join(dir, "trace", "index.txt")
}

// TestReduceLAMMPS: LAMMPS's melt recorded at 4 ranks (and, with
// KAIROS_LONG=1, at 8) reduces with every method to a reduction that
// every rank reads back, that passes check, and that replays within 5%.
func TestReduceLAMMPS(t *testing.T) {
	runs := [][2]int{{4, 20}}
	if testenv.Long() {
		runs = append(runs, [2]int{8, 100})
	}
	for _, r := range runs {
		index := recordLAMMPS(t, r[0], r[1])
		for _, m := range []string{"callpath", "acurdion", "acurdion2"} {
			res := reduceJSONOf(t, "--method", m, "--accuracy", "-o", filepath.Join(t.TempDir(), "melt.rsd"), index)
			t.Logf("melt on %d ranks, %s: %d clusters, %d bytes, ACC %.4f", r[0], m, res.Clusters, res.Compressed.Bytes, res.Accuracy.ACC)
			if res.Accuracy.ACC < 0.95 || res.Accuracy.Matching != perfect || res.Clusters > 9 {
				t.Errorf("melt on %d ranks, %s: %d clusters, ACC %.4f, Table II %+v", r[0], m, res.Clusters, res.Accuracy.ACC, res.Accuracy.Matching)
			}
		}
	}
}
