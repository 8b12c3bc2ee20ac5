package sim_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"kairos/format/ti"
	"kairos/internal/testenv"
	"kairos/sim"
	"kairos/trace"
	"kairos/workload"
)

// periodicTrace writes kind's trace of n ranks and iters iterations, with
// no noise (each iteration repeats the one before), as TI files in dir,
// and opens it.
func periodicTrace(t *testing.T, dir, kind string, n, iters int, bytes int64) trace.Source {
	_, tr := periodicTraces(t, dir, kind, n, iters, bytes)
	return tr
}

// periodicTraces is periodicTrace that also returns the trace as
// generated, whose waits name request ids.
func periodicTraces(t *testing.T, dir, kind string, n, iters int, bytes int64) (gen, tr trace.Source) {
	return periodicTracesFlops(t, dir, kind, n, iters, bytes, 0)
}

// periodicTracesFlops is periodicTraces with flops of computation a rank
// and iteration (the kind's default if 0).
func periodicTracesFlops(t *testing.T, dir, kind string, n, iters int, bytes int64, flops float64) (gen, tr trace.Source) {
	t.Helper()
	p, err := workload.Defaults(kind)
	if err != nil {
		t.Fatal(err)
	}
	p.Ranks, p.Grid, p.Bytes, p.Iterations, p.Noise = n, nil, bytes, iters, 0
	if flops > 0 {
		p.Flops = flops
	}
	if p.Tasks > 0 {
		p.Tasks = 3 * n
	}
	if p.Planes > 0 {
		p.Planes = 4
	}
	if kind == "stencil2d" {
		p.AllreduceEvery = 4
	}
	src, err := workload.New(kind, p)
	if err != nil {
		t.Fatalf("%s: %v", kind, err)
	}
	return src, writePerRank(t, filepath.Join(dir, kind), src)
}

// writePerRank writes src as a TI description desc and per-rank files,
// and opens it.
func writePerRank(t *testing.T, desc string, src trace.Source) trace.Source {
	t.Helper()
	if _, err := ti.WriteFile(desc, src, ti.WriteOptions{Layout: ti.PerRank}); err != nil {
		t.Fatal(err)
	}
	tr, err := ti.Open(desc)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// replayBoth replays tr on m without and with period skipping.
func replayBoth(t *testing.T, tr trace.Source, m *sim.Machine, name string) [2]*sim.Result {
	t.Helper()
	var res [2]*sim.Result
	for i, skip := range []bool{false, true} {
		cfg := sim.DefaultConfig()
		cfg.SkipPeriods = skip
		r, err := sim.Run(tr, m, cfg, nil)
		if err != nil {
			t.Fatalf("%s (skip-periods %v): %v", name, skip, err)
		}
		res[i] = r
	}
	return res
}

// sameResults reports how far b's times are from a's: the largest
// difference of the simulated time or of a rank's finish, computation or
// time in MPI, relative to the simulated time, and the largest of the
// split of a rank's time in MPI between communication and wait; or an
// error if their counts or solvers differ. b, the replay that skips, may
// end with SimGrid's re-solves where a kept the incremental solver: the
// dates after a skip are a's to rounding, not to the bit, so the
// automatic solver watches near ties there that a's dates, SimGrid's to
// the bit, show unequal in SimGrid's order; where one is unsure, it
// starts over with SimGrid's re-solves (whose times a's equal).
func sameResults(a, b *sim.Result) (times, split float64, err error) {
	solvers := a.Solver == b.Solver || a.Solver == sim.SolverIncremental && b.Solver == sim.SolverSimGrid
	if a.Actions != b.Actions || a.Messages != b.Messages || a.Bytes != b.Bytes || len(a.Ranks) != len(b.Ranks) || !solvers {
		return 0, 0, fmt.Errorf("counts %d actions %d messages %d bytes, solver %v, against %d %d %d, %v",
			b.Actions, b.Messages, b.Bytes, b.Solver, a.Actions, a.Messages, a.Bytes, a.Solver)
	}
	times = math.Abs(a.Time - b.Time)
	for i, x := range a.Ranks {
		y := b.Ranks[i]
		times = max(times, math.Abs(x.Finish-y.Finish), math.Abs(x.Compute-y.Compute), math.Abs((x.Comm+x.Wait)-(y.Comm+y.Wait)))
		split = max(split, math.Abs(x.Wait-y.Wait))
	}
	return times / a.Time, split / a.Time, nil
}

func rel(a, b float64) float64 {
	if a == b {
		return 0
	}
	return math.Abs(a-b) / max(math.Abs(a), math.Abs(b))
}

// TestSkipPeriods: skipping the periods that repeat gives the whole
// replay's times and counts (each rank's finish, computation and time in
// MPI to 1e-9 of the simulated time) for every generator on every
// topology of the differential test, eager and rendezvous (without
// KAIROS_LONG=1, both on the flat cluster, one in turn on the others),
// with two ranks sharing each host's CPU, and as generated (waits naming
// request ids, which the skipped periods number anew); and it skips
// where the traces repeat: at least half the actions of the stencils
// (80 iterations; the other kinds run 30), whose allreduce every fourth
// iteration makes the period four iterations once the first skip ends,
// where the replay keeps the incremental solver ("incr." yes; with
// SimGrid's re-solves, where the order of simultaneous events matters,
// nothing is skipped).
//
// The split of a rank's time in MPI between communication and wait may
// move more (up to 1e-5 of the time): the dates after a skip are the
// whole replay's to rounding, not to the bit, and where transfers end at
// one date in the whole replay, they may end a rounding apart after a
// skip, in another order; a waitall then returns on another one first,
// whose match date sets the wait (seen: 5.4e-5 s of one rank's wait
// moved to its communication, in an 8 s stencil on a torus; the times
// the same).
func TestSkipPeriods(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var tab strings.Builder
	fmt.Fprintf(&tab, "%-12s %-13s %7s %-6s %8s %8s %8s %10s %10s\n", "topology", "kind", "bytes", "incr.", "periods", "skipped", "actions", "times", "wait")
	for i, topo := range diffTopologies {
		tdir := filepath.Join(dir, topo.name)
		if err := os.MkdirAll(tdir, 0o755); err != nil {
			t.Fatal(err)
		}
		plat := clusterXML(t, tdir, 64, topo.attrs)
		for j, kind := range workload.Kinds() {
			for k, bytes := range []int64{1000, 200000} {
				if !testenv.Long() && topo.name != "flat" && (i+j+k)%2 != 0 {
					continue // eager or rendezvous in turn, both on the flat cluster
				}
				iters := 30
				if strings.HasPrefix(kind, "stencil") {
					iters = 80
				}
				gen, tr := periodicTraces(t, tdir, kind, 16, iters, bytes)
				skipMatches(t, &tab, topo.name, kind, bytes, machineOn(t, plat, 16), tr)
				if topo.name == "flat" && bytes == 1000 {
					skipMatches(t, &tab, "flat, shared", kind, bytes, machinePerHost(t, plat, 16, 2), tr)
					skipMatches(t, &tab, "flat, ids", kind, bytes, machineOn(t, plat, 16), gen)
				}
			}
		}
	}
	// Late dates: 100 s of computation an iteration (the margins of the
	// near ties are relative to the date).
	ldir := filepath.Join(dir, "late")
	if err := os.MkdirAll(ldir, 0o755); err != nil {
		t.Fatal(err)
	}
	_, tr := periodicTracesFlops(t, ldir, "stencil2d", 16, 80, 1000, 1e11)
	skipMatches(t, &tab, "flat, late", "stencil2d", 1000, machineOn(t, clusterXML(t, ldir, 64, ""), 16), tr)
	t.Logf("skip-periods against the whole replay:\n%s", tab.String())
}

// skipMatches replays tr on m with and without period skipping, and
// checks the results are one, and that the stencils skip.
func skipMatches(t *testing.T, tab *strings.Builder, topo, kind string, bytes int64, m *sim.Machine, tr trace.Source) {
	t.Helper()
	res := replayBoth(t, tr, m, fmt.Sprintf("%s/%s/%d", topo, kind, bytes))
	d, split, err := sameResults(res[0], res[1])
	if err != nil || d > 1e-9 || split > 1e-5 {
		t.Errorf("%s/%s/%d: skipping %d periods: %v, difference %.3g of the time (%.3g in the split of MPI time)",
			topo, kind, bytes, res[1].Skipped, err, d, split)
	}
	if res[0].Skipped != 0 || strings.HasPrefix(kind, "stencil") && res[1].Solver == sim.SolverIncremental && res[1].SkippedActions < res[1].Actions/2 {
		t.Errorf("%s/%s/%d: %d periods skipped (%d of %d actions), %d with skip-periods:no",
			topo, kind, bytes, res[1].Skipped, res[1].SkippedActions, res[1].Actions, res[0].Skipped)
	}
	fmt.Fprintf(tab, "%-12s %-13s %7d %-6v %8d %8d %8d %10.2g %10.2g\n", topo, kind, bytes, res[1].Solver, res[1].Skipped, res[1].SkippedActions, res[1].Actions, d, split)
}

// TestSkipPeriodsMatchSimGrid: replays whose periods are skipped give
// SimGrid 3.32's times (relative difference at most 1e-6): the kinds that
// repeat, at 16 ranks and 40 iterations without noise, on every topology
// of the differential test, and the 64-rank periodic stencil of the speed
// benchmark (60 iterations, an allreduce every tenth) on three; without
// KAIROS_LONG=1, each kind on one topology in turn and the stencil on
// the backbone cluster. The stencils must skip periods where the replay
// keeps the incremental solver ("incr." yes), and the table is printed.
func TestSkipPeriodsMatchSimGrid(t *testing.T) {
	t.Parallel()
	testenv.Tool(t, "smpirun", "libsimgrid-dev")
	dir := t.TempDir()
	hosts := make([]string, 64)
	for i := range hosts {
		hosts[i] = fmt.Sprintf("node-%d.simgrid.org", i)
	}
	hostfile := filepath.Join(dir, "hostfile")
	if err := os.WriteFile(hostfile, []byte(strings.Join(hosts, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	type row struct {
		topo, kind string
		n          int
		desc       string
		tr         trace.Source
	}
	var rows []row
	for i, topo := range diffTopologies {
		for j, kind := range []string{"stencil2d", "stencil3d", "cg", "mg", "bt"} {
			if !testenv.Long() && (i+j)%len(diffTopologies) != 0 {
				continue // each kind on one topology, in turn
			}
			kdir := filepath.Join(dir, topo.name+"-"+kind)
			if err := os.MkdirAll(kdir, 0o755); err != nil {
				t.Fatal(err)
			}
			rows = append(rows, row{topo.name, kind, 16, filepath.Join(kdir, kind), periodicTrace(t, kdir, kind, 16, 40, 1000)})
		}
	}
	p, err := workload.Defaults("stencil2d")
	if err != nil {
		t.Fatal(err)
	}
	p.Ranks, p.Grid, p.Iterations, p.Noise, p.Imbalance, p.Periodic, p.AllreduceEvery = 64, []int{8, 8}, 60, 0, 0, true, 10
	src, err := workload.New("stencil2d", p)
	if err != nil {
		t.Fatal(err)
	}
	desc := filepath.Join(dir, "stencil")
	tr := writePerRank(t, desc, src)
	for i, topo := range diffTopologies[:3] {
		if testenv.Long() || i == 1 {
			rows = append(rows, row{topo.name, "stencil2d", 64, desc, tr})
		}
	}
	plats := map[string]string{}
	for _, topo := range diffTopologies {
		tdir := filepath.Join(dir, topo.name)
		if err := os.MkdirAll(tdir, 0o755); err != nil {
			t.Fatal(err)
		}
		plats[topo.name] = clusterXML(t, tdir, 64, topo.attrs)
	}
	var tab strings.Builder
	fmt.Fprintf(&tab, "%-10s %-10s %5s %-6s %8s %8s %15s %15s %9s\n", "topology", "kind", "ranks", "incr.", "periods", "actions", "Kairos (s)", "SimGrid (s)", "rel. diff")
	for _, r := range rows {
		res, err := sim.Run(r.tr, machineOn(t, plats[r.topo], r.n), sim.DefaultConfig(), nil)
		if err != nil {
			t.Fatalf("%s/%s/%d: %v", r.topo, r.kind, r.n, err)
		}
		sg, err := runSimGrid(filepath.Dir(r.desc), r.desc, plats[r.topo], hostfile, r.n)
		if err != nil {
			t.Fatalf("%s/%s/%d: %v", r.topo, r.kind, r.n, err)
		}
		d := rel(res.Time, sg)
		fmt.Fprintf(&tab, "%-10s %-10s %5d %-6v %8d %8d %15.9f %15.9f %9.2g\n", r.topo, r.kind, r.n, res.Solver, res.Skipped, res.Actions, res.Time, sg, d)
		if res.Skipped == 0 && strings.HasPrefix(r.kind, "stencil") && res.Solver == sim.SolverIncremental {
			t.Errorf("%s/%s/%d: no period skipped", r.topo, r.kind, r.n)
		}
		if d > 1e-6 {
			t.Errorf("%s/%s/%d: Kairos %.9f s, SimGrid %.9f s (relative %.2g)", r.topo, r.kind, r.n, res.Time, sg, d)
		}
	}
	t.Logf("periods skipped, against SimGrid:\n%s", tab.String())
}

// TestSkipPeriodsErrors: a trace that goes wrong after periods were
// skipped (a malformed line, a send missing, which deadlocks) is reported
// as without skipping: the same error, naming the same file and line.
func TestSkipPeriodsErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(lines []string, at int) []string
	}{
		{"malformed", func(l []string, at int) []string { l[at] = "3 compute x"; return l }},
		{"missing send", func(l []string, at int) []string {
			for i := at; i < len(l); i++ {
				if strings.Contains(l[i], " isend ") {
					return append(l[:i], l[i+1:]...)
				}
			}
			t.Fatal("no isend to drop")
			return nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tr := periodicTrace(t, dir, "stencil2d", 16, 40, 1000)
			file := filepath.Join(dir, "stencil2d_files", "rank-3.ti")
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
			lines = tc.edit(lines, len(lines)*9/10)
			if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			m := machineOn(t, clusterXML(t, dir, 16, ""), 16)
			var msgs [2]string
			for i, skip := range []bool{false, true} {
				cfg := sim.DefaultConfig()
				cfg.SkipPeriods = skip
				res, err := sim.Run(tr, m, cfg, nil)
				if err == nil {
					t.Fatalf("skip %v: no error (%d periods skipped)", skip, res.Skipped)
				}
				msgs[i] = err.Error()
			}
			t.Log(msgs[1])
			if msgs[0] != msgs[1] {
				t.Errorf("skipping periods, the error is\n%s\nagainst\n%s", msgs[1], msgs[0])
			}
			if !strings.Contains(msgs[1], "rank-3.ti:") {
				t.Errorf("the error names no line of rank-3.ti: %s", msgs[1])
			}
		})
	}
}

// periodicRandomTrace repeats the body of a random trace (see randomTrace)
// reps times, each repetition after a computation of every rank: a trace
// whose replay has quiescent dates and repeats, with what the random
// traces hold (tests and their back-off, probes, sleeps, sendRecv, eager
// and rendezvous messages, collectives).
func periodicRandomTrace(rng *rand.Rand, n, reps int) string {
	body := make([][]string, n)
	head := make([]string, n)
	for _, line := range strings.Split(strings.TrimSpace(randomTrace(rng, n)), "\n") {
		var r int
		var act string
		fmt.Sscanf(line, "%d %s", &r, &act)
		switch act {
		case "init":
			head[r] = line
		case "finalize":
		default:
			body[r] = append(body[r], line)
		}
	}
	var b strings.Builder
	for r := range body {
		b.WriteString(head[r] + "\n")
		for range reps {
			fmt.Fprintf(&b, "%d compute 2e7\n", r)
			for _, line := range body[r] {
				b.WriteString(line + "\n")
			}
		}
		fmt.Fprintf(&b, "%d finalize\n", r)
	}
	return b.String()
}

// TestSkipPeriodsRandom: random traces repeated 12 times replay with their
// periods skipped in the whole replay's times (as TestSkipPeriods), on
// the random tests' three platforms; and, where SimGrid is installed, in
// SimGrid's (to 1e-9 s). At least a fifth of them must skip (82 of 300
// seeds from 1000 did; the others never all compute at once, or run with
// SimGrid's re-solves).
// KAIROS_SIM_SEEDS sets the number of traces (default 45, 15 without
// KAIROS_LONG=1).
func TestSkipPeriodsRandom(t *testing.T) {
	t.Parallel()
	seeds := 15
	if testenv.Long() {
		seeds = 45
	}
	if n, err := strconv.Atoi(os.Getenv("KAIROS_SIM_SEEDS")); err == nil {
		seeds = n
	}
	_, errSG := exec.LookPath("smpirun")
	if errSG != nil && testenv.Required() {
		t.Fatal("smpirun not found (apt-get install libsimgrid-dev) and KAIROS_REQUIRE_EXTERNAL=1")
	}
	skipped := 0
	for seed := firstSeed(); seed < firstSeed()+seeds; seed++ {
		plat := threePlatforms[seed%len(threePlatforms)]
		dir, xml, hostfile := smallCluster(t, 8, plat.attrs)
		if plat.perHost > 1 {
			hostfile = sharedHostfile(t, dir, 8, plat.perHost)
		}
		rng := rand.New(rand.NewPCG(uint64(seed), 13))
		n := 2 + rng.IntN(7)
		text := periodicRandomTrace(rng, n, 12)
		tr := writeTrace(t, dir, text)
		res := replayBoth(t, tr, machinePerHost(t, xml, n, plat.perHost), fmt.Sprintf("%s seed %d:\n%s\n", plat.name, seed, text))
		if res[1].Skipped > 0 {
			skipped++
		}
		d, split, err := sameResults(res[0], res[1])
		if err != nil || d > 1e-9 || split > 1e-5 {
			t.Errorf("%s seed %d: skipping %d periods: %v, difference %.3g of the time (%.3g in the split)\n%s",
				plat.name, seed, res[1].Skipped, err, d, split, text)
		}
		if errSG != nil {
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, "desc"), []byte("t.ti\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		sg, err := runSimGrid(dir, "desc", xml, hostfile, n)
		if err != nil {
			t.Fatalf("%s seed %d: %v", plat.name, seed, err)
		}
		if math.Abs(res[1].Time-sg) > 1e-9 {
			t.Errorf("%s seed %d: Kairos %.9f s (%d periods skipped), SimGrid %.9f s\n%s", plat.name, seed, res[1].Time, res[1].Skipped, sg, text)
		}
	}
	t.Logf("%d of %d periodic random traces skipped periods", skipped, seeds)
	if skipped*5 < seeds {
		t.Errorf("only %d of %d periodic random traces skipped periods", skipped, seeds)
	}
}
