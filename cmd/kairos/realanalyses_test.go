package main

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"testing"

	"kairos/internal/tracertest"
)

// The programs of testdata/real isolate what the analyses met in real
// codes: a receive polled with MPI_Test (HPCC's RandomAccess), a time-step
// loop without user functions (LAMMPS traced without
// -finstrument-functions), a suite of kernels of very different lengths
// (HPCC's benchmarks). Each is recorded with Kairos' tracer (OTF2) under
// Open MPI; the tests skip where mpicc, mpirun or OTF2's headers are
// absent (and fail under KAIROS_REQUIRE_EXTERNAL=1).

// recordReal runs program name of testdata/real on np ranks of Open MPI
// with the tracer lib (OTF2) and returns its archive.
func recordReal(t *testing.T, lib, name string, np int) string {
	t.Helper()
	dir := t.TempDir()
	src, _ := filepath.Abs(filepath.Join("testdata", "real", name+".c"))
	prog := tracertest.OpenMPI.Compile(t, dir, src, "-O2")
	r := tracertest.Recording{Lib: lib, Trace: filepath.Join(dir, "trace"), Format: "otf2", NP: np, Dir: dir}
	tracertest.OpenMPI.Launch(t, r, prog)
	return filepath.Join(dir, "trace", "traces.otf2")
}

// TestRealAnalysesCases records each program once with one build of the
// tracer.
func TestRealAnalysesCases(t *testing.T) {
	lib := tracertest.OpenMPI.Tracer(t, t.TempDir(), true)
	t.Run("polling", func(t *testing.T) { testRealPolling(t, recordReal(t, lib, "poll", 2)) })
	t.Run("steps", func(t *testing.T) { testRealSteps(t, recordReal(t, lib, "steps", 4)) })
	t.Run("kernels", func(t *testing.T) { testRealKernels(t, recordReal(t, lib, "kernels", 4)) })
}

// testRealPolling: a rank that polls a receive with MPI_Test. The
// archive's failed tests are MPI time a replay has no action for, as in
// the TI trace Kairos' tracer writes (a test could complete in a replay a
// request the run completed later, and SimGrid's replay then aborts): the
// replay tests nothing and sleeps no test back-off (the 5,000 tests slept
// it before). The logical-clock replay gives the failed tests no time:
// rank 0 waits where its receive completes, for rank 1's computation.
func testRealPolling(t *testing.T, archive string) {
	var sim struct {
		Ranks []struct {
			Backoff float64 `json:"test_backoff"`
			Tests   int64   `json:"tests"`
		} `json:"ranks"`
		Polling *struct{} `json:"polling"`
	}
	code, out, errb := csRun("simulate", "--cluster", "2x1Gf,10GBps,1us", "--json", archive)
	if code != 0 || json.Unmarshal([]byte(out), &sim) != nil {
		t.Fatalf("simulate: exit %d: %s%s", code, errb, out)
	}
	if sim.Polling != nil || sim.Ranks[0].Backoff != 0 || sim.Ranks[0].Tests != 0 {
		t.Errorf("simulate --json: %s", out)
	}
	var st struct {
		PerRank []struct {
			MPI   float64 `json:"mpi_seconds"`
			Total float64 `json:"total_seconds"`
		} `json:"per_rank"`
		Profile []struct {
			Call    string  `json:"call"`
			Seconds float64 `json:"seconds"`
		} `json:"profile"`
	}
	code, out, errb = csRun("stats", "--json", archive)
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil || len(st.PerRank) != 2 {
		t.Fatalf("stats: exit %d: %s%s", code, errb, out)
	}
	// The model counts a non-blocking call's time as computation
	// (Section III-D): rank 0's MPI_Irecv, a few tens of microseconds
	// here, and in CI under load the 196 µs (1.6% of the computation) by
	// which the prediction passed the ranks' own.
	var post float64
	for _, p := range st.Profile {
		if p.Call == "irecv" {
			post = p.Seconds
		}
	}
	comp0 := st.PerRank[0].Total - st.PerRank[0].MPI + post
	comp1 := st.PerRank[1].Total - st.PerRank[1].MPI
	var pred struct {
		Predictions []struct {
			Computation float64 `json:"computation"`
			Wait        float64 `json:"wait"`
		} `json:"predictions"`
	}
	code, out, errb = csRun("predict", "--config", "10,5", "--json", archive)
	if code != 0 || json.Unmarshal([]byte(out), &pred) != nil || len(pred.Predictions) != 1 {
		t.Fatalf("predict: exit %d: %s%s", code, errb, out)
	}
	p := pred.Predictions[0]
	// The tests' time is not computation: the computation is the ranks'
	// own, with rank 0's receive posted.
	if c := comp0 + comp1; math.Abs(p.Computation-c) > 0.01*c+50e-6 {
		t.Errorf("predict: computation %g s, want the ranks' %g s", p.Computation, c)
	}
	// Rank 0 waits for what rank 1 computes beyond rank 0's own
	// computation (a little less: rank 1 computes after its send too).
	if need := comp1 - comp0; p.Wait < need-0.01*comp1-50e-6 {
		t.Errorf("predict: wait %g s, less than the %g s rank 1 computes beyond rank 0", p.Wait, need)
	}
}

// testRealSteps: without user functions, each of the loop's 100 steps is
// a pattern instance (but the rebuild steps, a variant of their own);
// the paper's contexts make the run a few instances.
func testRealSteps(t *testing.T, archive string) {
	counts := func(args ...string) []int {
		var p struct {
			Comm []struct {
				Frequency int `json:"frequency"`
			} `json:"communication_patterns"`
		}
		code, out, errb := csRun(append([]string{"patterns", "--json"}, append(args, archive)...)...)
		if code != 0 || json.Unmarshal([]byte(out), &p) != nil {
			t.Fatalf("patterns %v: exit %d: %s", args, code, errb)
		}
		var f []int
		for _, c := range p.Comm {
			f = append(f, c.Frequency)
		}
		slices.Sort(f)
		return f
	}
	if f := counts(); f[len(f)-1] < 80 {
		t.Errorf("instances per pattern %v: want the steps' pattern 80 times or more", f)
	}
	if f := counts("--paper"); f[len(f)-1] > 10 {
		t.Errorf("--paper: instances per pattern %v: want the steps lumped together", f)
	}
}

// testRealKernels: the two long random-exchange kernels are in phases of
// their own, apart from the loops (the patterns of a hundred instances or
// more) between and after them, and apart from each other. How long the
// loops take depends on the machine's load; where the kernels' phases end
// does not. A kernel may come out as more than one instance: its
// receives from any source match in the order messages arrive, and under
// load three from one sender in a row read as a loop whose iterations cut
// the kernel (in CI, into pieces of fewer than a hundred events each). A
// kernel's instances are those of kernelEvents events or more of no
// loop's pattern; its phase is that of its longest, which holds its
// sends and their computations. (A piece of its receives alone takes
// little time, and may rightly share the next loop's phase: it did in CI
// on a loaded host.)
func testRealKernels(t *testing.T, archive string) {
	const kernelEvents = 20 // a kernel: 160 events a rank, a piece of it a few dozen
	var pat struct {
		Instances []struct {
			Pattern  int `json:"pattern"`
			Position int `json:"position"`
			Events   int `json:"events"`
		} `json:"instances"`
	}
	code, out, errb := csRun("patterns", "--json", archive)
	if code != 0 || json.Unmarshal([]byte(out), &pat) != nil {
		t.Fatalf("patterns: exit %d: %s", code, errb)
	}
	var ph struct {
		Phases []struct {
			From   int `json:"from"`
			To     int `json:"to"`
			Number int `json:"number"`
		} `json:"phases"`
	}
	code, out, errb = csRun("phases", "--json", archive)
	if code != 0 || json.Unmarshal([]byte(out), &ph) != nil {
		t.Fatalf("phases: exit %d: %s%s", code, errb, out)
	}
	phaseOf := func(pos int) int {
		for _, p := range ph.Phases {
			if p.From <= pos && pos <= p.To {
				return p.Number
			}
		}
		return 0
	}
	count := map[int]int{}
	for _, in := range pat.Instances {
		count[in.Pattern]++
	}
	// Which kernel a long instance is of: how many loops began before it
	// (the ring loop follows the first kernel, the all-to-all the second).
	loopsBefore := func(pos int) int {
		seen := map[int]bool{}
		for _, in := range pat.Instances {
			if in.Position < pos && count[in.Pattern] >= 100 {
				seen[in.Pattern] = true
			}
		}
		return len(seen)
	}
	var longest [2]int // each kernel's longest instance, in events
	var phase [2]int   // and its phase
	var long []string  // the kernels' instances, for a failure's message
	for _, in := range pat.Instances {
		if in.Events < kernelEvents || count[in.Pattern] >= 100 {
			continue
		}
		long = append(long, fmt.Sprintf("pattern %d at %d, %d events", in.Pattern, in.Position, in.Events))
		k := loopsBefore(in.Position)
		if k > 1 {
			t.Fatalf("a kernel's instance after both loops: %v", long)
		}
		if in.Events > longest[k] {
			longest[k], phase[k] = in.Events, phaseOf(in.Position)
		}
	}
	for k := range phase {
		if longest[k] == 0 {
			t.Fatalf("kernel %d has no instance; the kernels' instances: %v", k+1, long)
		}
	}
	if phase[0] == phase[1] {
		t.Errorf("phase %d holds both kernels; the kernels' instances: %v; phases: %s", phase[0], long, out)
	}
	for k, p := range phase {
		n := 0 // loop instances in the kernel's phase
		for _, in := range pat.Instances {
			if count[in.Pattern] >= 100 && phaseOf(in.Position) == p {
				n++
			}
		}
		if n > 10 {
			t.Errorf("phase %d holds kernel %d and %d instances of a loop; the kernels' instances: %v; phases: %s", p, k+1, n, long, out)
		}
	}
}
