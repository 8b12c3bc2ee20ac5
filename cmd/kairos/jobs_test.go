package main

import (
	"bufio"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"kairos/internal/testenv"
)

func TestParseJobs(t *testing.T) {
	for _, c := range []struct {
		in, want, err string
	}{
		// Sorted by date, then name; lines of text skipped, as SimGrid's
		// example skips them.
		{in: "Two jobs at once\nb x.txt 2 0 0,1\na y.txt 1 0 3\nc x.txt 2 1000 2,3\n", want: "a y.txt 1 0 [3]|b x.txt 2 0 [0 1]|c x.txt 2 1000 [2 3]"},
		{in: "late x.txt 1 5 0\nearly x.txt 1 2 0\n", want: "early x.txt 1 2 [0]|late x.txt 1 5 [0]"},
		{in: "a x.txt 2 0 0,1,2\n", err: "d:1: 3 host indexes for 2 ranks"},
		{in: "\na x.txt 2 0 0,one\n", err: `d:2: host index "one"`},
		{in: "a x.txt 2 0 0,-1\n", err: `d:1: host index "-1"`},
		{in: "a x.txt 0 0 0\n", err: "d:1: ranks 0"},
		{in: "a x.txt 1 -3 0\n", err: "d:1: start -3 is negative"},
		{in: "a x.txt 1 0\n", err: "d:1: 4 fields"},
		{in: "a x.txt 1 0 0 extra\n", err: "d:1: 6 fields"},
		{in: "One app alone\n", err: "d: no job"},
	} {
		jobs, err := parseJobs(strings.NewReader(c.in), "d")
		var got []string
		for _, j := range jobs {
			got = append(got, fmt.Sprintf("%s %s %d %g %v", j.id, j.trace, j.ranks, j.start, j.hosts))
		}
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%q: error %v, want %q", c.in, err, c.err)
		case c.err == "" && (err != nil || strings.Join(got, "|") != c.want):
			t.Errorf("%q: %q, %v; want %q", c.in, strings.Join(got, "|"), err, c.want)
		}
	}
}

// FuzzParseJobs: any workload is read or refused with an error, without a
// panic; what is read is within bounds, sorted, with a host a rank, and
// its actor numbers are distinct.
func FuzzParseJobs(f *testing.F) {
	for _, s := range []string{"b x.txt 2 0 0,1\na y.txt 1 0 3\nc x.txt 2 1000 2,3\n", "text\na x 1 0 0\n", "a x 2 0 0,,1\n", "a x 1 99999999999999999999 0\n",
		"a x 100000000 0 0\n", "a x 1 -1 0\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		jobs, err := parseJobs(strings.NewReader(s), "fuzz")
		if err != nil {
			return
		}
		off, total := 0, 0
		for i, j := range jobs {
			if j.ranks < 1 || j.ranks > maxInstanceRanks || j.start < 0 || len(j.hosts) != j.ranks ||
				i > 0 && (j.start < jobs[i-1].start || j.start == jobs[i-1].start && j.id < jobs[i-1].id) {
				t.Fatalf("%q: read %+v", s, jobs)
			}
			total += j.ranks
		}
		if total > 1<<16 {
			return // a key a rank: keep the check small
		}
		for i := range jobs {
			jobs[i].offset = off
			off += jobs[i].ranks
		}
		seen := map[int32]bool{}
		for _, k := range jobActorKeys(jobs, [2]int{1, 2}) {
			if k < 3 || seen[k] {
				t.Fatalf("%q: actor keys %v", s, jobActorKeys(jobs, [2]int{1, 2}))
			}
			seen[k] = true
		}
	})
}

// TestJobActorKeys: the actor numbers (minus one) of SimGrid's example,
// worked out by hand from how it creates its actors, one a scheduling
// round, a new actor running just before its creator.
func TestJobActorKeys(t *testing.T) {
	jobs := []instance{
		{id: "a", ranks: 2, start: 0, offset: 0},
		{id: "b", ranks: 3, start: 0, offset: 2},
		{id: "c", ranks: 1, start: 7, offset: 5},
	}
	// No noise: the workload is actor 1. Round 1: it creates a's job
	// actor (2). Round 2: job a creates a0 (3), the workload job b's
	// actor (4). Round 3: job a creates a1 (5), job b b0 (6). Round 4:
	// job b creates b1 (7); round 5, b2 (8). At 7 s: c's job actor (9),
	// then c0 (10).
	if got, want := fmt.Sprint(jobActorKeys(jobs, [2]int{})), "[2 4 5 6 7 9]"; got != want {
		t.Errorf("no noise: %s, want %s", got, want)
	}
	// One sleeper at first, two before each job: the workload is actor
	// 2; it creates sleepers 3 and 4 and a's job actor 5; then a0 (6)
	// and sleeper 7; a1 (8) and sleeper 9; b's job actor 10; b0 (11);
	// b1 (12); b2 (13). At 7 s: sleepers 14 and 15, job actor 16, c0 (17).
	if got, want := fmt.Sprint(jobActorKeys(jobs, [2]int{1, 2})), "[5 7 10 11 12 16]"; got != want {
		t.Errorf("noise 1,2: %s, want %s", got, want)
	}
}

// TestJobsFlags: --jobs names the hosts itself, and a host index beyond
// the platform's hosts is an error naming the job.
func TestJobsFlags(t *testing.T) {
	dir := t.TempDir()
	plat, hosts := testenv.Cluster(t, dir, 2)
	if code, out, errs := csRun("gen", "ring", "--ranks", "2", "--iterations", "1", "-o", filepath.Join(dir, "ring"), "--to", "ti"); code != 0 {
		t.Fatalf("gen: %d %s%s", code, out, errs)
	}
	ring := filepath.Join(dir, "ring")
	for _, c := range []struct {
		args []string
		err  string
	}{
		{[]string{"--noise", "1,2", ring + "_files/rank-0.ti"}, "--noise only changes a --jobs replay"},
		{[]string{"--jobs", "--noise", "1", ring}, "--noise takes two counts of actors"},
		{[]string{"--jobs", "--noise", "1,-2", ring}, "--noise takes two counts of actors"},
	} {
		code, _, errs := csRun(append([]string{"simulate", "--platform", plat}, c.args...)...)
		if code == 0 || !strings.Contains(errs, c.err) {
			t.Errorf("%v: exit %d, %s; want an error saying %q", c.args, code, errs, c.err)
		}
	}
	wl := testenv.WriteFile(t, "wl", "a "+ring+" 2 0 0,5\n")
	for _, c := range []struct {
		args []string
		err  string
	}{
		{[]string{"--hostfile", hosts}, "not with --instances or --hostfile"},
		{[]string{"--instances"}, "not with --instances or --hostfile"},
		{nil, "job a: host index 5, but platform"},
	} {
		code, _, errs := csRun(append([]string{"simulate", "--jobs", wl, "--platform", plat}, c.args...)...)
		if code == 0 || !strings.Contains(errs, c.err) {
			t.Errorf("%v: exit %d, %s; want an error saying %q", c.args, code, errs, c.err)
		}
	}
	// As SimGrid's example, a job takes its description's first RANKS
	// traces, and a description listing fewer is an error.
	one := testenv.WriteFile(t, "one", "a "+ring+" 1 0 0\n")
	if code, _, errs := csRun("simulate", "--jobs", one, "--platform", plat); code == 0 || !strings.Contains(errs, "rank-0.ti:3: rank 0: send: partner rank 1 out of range [0,1)") {
		t.Errorf("a 2-rank ring as a 1-rank job: exit %d, %s; want rank 0's send to rank 1 refused", code, errs)
	}
	three := testenv.WriteFile(t, "three", "a "+ring+" 3 0 0,1,0\n")
	if code, _, errs := csRun("simulate", "--jobs", three, "--platform", plat); code == 0 || !strings.Contains(errs, "3 ranks requested but the description lists 2 files") {
		t.Errorf("a 2-rank ring as a 3-rank job: exit %d, %s", code, errs)
	}
}

// TestJobsMatchSimGridTesh replays the workloads of SimGrid's
// replay_multiple_manual tests (its tesh files, whose expected output
// gives the date each rank of each job ends, on the platform's hosts
// sorted by name, with the example's noise and SimGrid's defaults, which
// it runs with: the LV08 network model, surf/precision 1e-5) and
// requires the same dates and the same simulated times.
func TestJobsMatchSimGridTesh(t *testing.T) {
	dir := testenv.Shared(t, "simgrid-replay-tests/examples/smpi/replay_multiple_manual_deploy")
	plat := filepath.Join(dir, "..", "..", "platforms", "small_platform_with_routers.xml")
	teshs, _ := filepath.Glob(filepath.Join(dir, "*.tesh"))
	if len(teshs) == 0 {
		t.Fatalf("no tesh file in %s", dir)
	}
	runs := 0
	for _, tesh := range teshs {
		for _, c := range readJobTesh(t, tesh, dir) {
			if c.workload == "" {
				continue // SimGrid's workload without a job: Kairos refuses it
			}
			runs++
			wl := testenv.WriteFile(t, "workload", c.workload)
			var res simulateJSON
			simulateInto(t, &res, "simulate", "--jobs", wl, "--noise", c.noise, "--platform", plat, "--cfg", "network/model:LV08", "--cfg", "surf/precision:1e-5", "--json")
			first := map[string]int{}
			for _, in := range res.Instances {
				first[in.ID] = in.FirstRank
			}
			for _, e := range c.ends {
				r := res.Ranks[first[e.job]+e.rank]
				if r.Host != e.host || math.Abs(r.Finish-e.at) > 6e-7 {
					t.Errorf("%s, %s: job %s rank %d ends on %s at %.9f; SimGrid: on %s at %.6f", filepath.Base(tesh), c.name, e.job, e.rank, r.Host, r.Finish, e.host, e.at)
				}
			}
			for _, want := range c.times {
				found := false
				for _, in := range res.Instances {
					found = found || math.Abs(in.SimulatedTime-want) <= 6e-7
				}
				if !found {
					t.Errorf("%s, %s: no job's simulated time is SimGrid's %.6f: %+v", filepath.Base(tesh), c.name, want, res.Instances)
				}
			}
		}
	}
	t.Logf("%d runs of %d tesh files", runs, len(teshs))
	if runs < 10 {
		t.Errorf("only %d runs read from the tesh files", runs)
	}
}

// jobTeshCase is a run of replay_multiple_manual in a tesh file: its
// workload (trace paths made absolute) and what SimGrid printed.
type jobTeshCase struct {
	name, noise, workload string
	ends                  []jobEnd
	times                 []float64 // the "Simulation time" lines
}

// jobEnd is the end of a job's rank in SimGrid's output.
type jobEnd struct {
	job  string
	rank int
	host string
	at   float64
}

// readJobTesh reads the runs of a tesh file: the workloads it writes (<
// lines, then "$ mkfile NAME") or that are beside it, and the expected
// ends of the ranks (> lines).
func readJobTesh(t *testing.T, path, dir string) []jobTeshCase {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	files := map[string]string{}
	var pending []string
	var out []jobTeshCase
	var cur *jobTeshCase
	jobs := map[int]string{} // the example's job numbers, in its sorted order
	finished := regexp.MustCompile(`^> \[\s*([0-9.]+)\] \(rank_(\d+)_(\d+)@(\S+)\) Finished replaying rank`)
	simTime := regexp.MustCompile(`^> \[\s*[0-9.]+\] \(rank_\d+_\d+@\S+\) Simulation time ([0-9.]+)`)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "< "):
			pending = append(pending, strings.TrimPrefix(line, "< "))
		case strings.HasPrefix(line, "$ mkfile "):
			files[filepath.Base(strings.Fields(line)[2])] = strings.Join(pending, "\n") + "\n"
			pending = nil
		case strings.HasPrefix(line, "$ ./replay_multiple_manual "):
			name := filepath.Base(strings.Fields(line)[3])
			text, ok := files[name]
			if !ok {
				b, err := os.ReadFile(filepath.Join(dir, name))
				if err != nil {
					t.Fatalf("%s: workload %s: %v", path, name, err)
				}
				text = string(b)
			}
			f := strings.Fields(line)
			noise := f[len(f)-2] + "," + f[len(f)-1] // the example's last two arguments
			out = append(out, jobTeshCase{name: name, noise: noise, workload: absoluteJobs(t, text, dir)})
			cur = &out[len(out)-1]
			jobs = jobNumbers(t, cur.workload)
		case cur != nil && finished.MatchString(line):
			m := finished.FindStringSubmatch(line)
			at, _ := strconv.ParseFloat(m[1], 64)
			j, _ := strconv.Atoi(m[2])
			r, _ := strconv.Atoi(m[3])
			cur.ends = append(cur.ends, jobEnd{jobs[j], r, m[4], at})
		case cur != nil && simTime.MatchString(line):
			v, _ := strconv.ParseFloat(simTime.FindStringSubmatch(line)[1], 64)
			cur.times = append(cur.times, v)
		}
	}
	return out
}

// absoluteJobs returns the workload with its jobs' traces made absolute
// (in dir), or "" if it has no job.
func absoluteJobs(t *testing.T, text, dir string) string {
	t.Helper()
	var b strings.Builder
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) == 5 {
			if _, err := strconv.Atoi(f[2]); err == nil {
				f[1] = filepath.Join(dir, f[1])
				fmt.Fprintln(&b, strings.Join(f, " "))
			}
		}
	}
	return b.String()
}

// jobNumbers returns the job names by the numbers SimGrid's example gives
// them (their order by date, then name).
func jobNumbers(t *testing.T, workload string) map[int]string {
	t.Helper()
	out := map[int]string{}
	if workload == "" {
		return out
	}
	jobs, err := parseJobs(strings.NewReader(workload), "workload")
	if err != nil {
		t.Fatal(err)
	}
	for i, j := range jobs {
		out[i] = j.id
	}
	return out
}

// TestJobsMatchSimGrid replays random workloads of generated jobs (every
// generator, start dates of 0 to 3 s, some equal, on random hosts of a
// 5-host cluster that jobs may share, a random network model, 0 to 2
// noise actors at the start and before each job) with
// kairos simulate --jobs and with SimGrid 3.32 running them as its
// replay_multiple_manual example does (testdata/sgjobs.cpp), and
// requires every rank to end at SimGrid's date (KAIROS_SIM_SEEDS sets how
// many workloads, 16 by default).
func TestJobsMatchSimGrid(t *testing.T) {
	sg := testenv.SimGridProgram(t, filepath.Join("testdata", "sgjobs.cpp"))
	// Jobs of 2 ranks mostly: in SimGrid, a larger job's first ranks may
	// send to ranks not created yet (see jobsDifferential).
	kinds := []struct {
		ranks int
		gen   []string
	}{
		{4, []string{"stencil2d", "--grid", "2x2", "--iterations", "4"}},
		{4, []string{"stencil3d", "--grid", "2x2x1", "--iterations", "3"}},
		{4, []string{"cg", "--ranks", "4", "--iterations", "2"}},
		{4, []string{"bt", "--ranks", "4", "--iterations", "1"}},
		{4, []string{"sweep", "--grid", "2x2", "--iterations", "1"}},
		{3, []string{"ring", "--ranks", "3", "--iterations", "4"}},
		{4, []string{"masterworker", "--ranks", "4"}},
		{2, []string{"stencil2d", "--grid", "2x1", "--iterations", "3"}},
		{2, []string{"cg", "--ranks", "2", "--iterations", "2"}},
		{2, []string{"lu", "--ranks", "2", "--iterations", "2"}},
		{2, []string{"mg", "--ranks", "2", "--iterations", "1"}},
		{2, []string{"ft", "--ranks", "2", "--iterations", "1"}},
		{2, []string{"ring", "--ranks", "2", "--iterations", "3"}},
		{2, []string{"pingpong", "--ranks", "2", "--iterations", "3"}},
		{2, []string{"masterworker", "--ranks", "2"}},
	}
	sets, aborted := 16, 0
	if n, err := strconv.Atoi(os.Getenv("KAIROS_SIM_SEEDS")); err == nil {
		sets = n
	}
	for seed := range sets {
		rng := rand.New(rand.NewPCG(uint64(seed), 31))
		dir := t.TempDir()
		plat, _ := testenv.Cluster(t, dir, 5)
		var wl strings.Builder
		for k := range 2 + rng.IntN(3) {
			kind := kinds[rng.IntN(len(kinds))]
			name := fmt.Sprintf("j%d", k)
			args := append(append([]string{"gen"}, kind.gen...), "--seed", strconv.Itoa(rng.IntN(1000)), "-o", filepath.Join(dir, name), "--to", "ti")
			if code, out, errs := csRun(args...); code != 0 {
				t.Fatalf("%v: exit %d\n%s%s", args, code, out, errs)
			}
			ranks := kind.ranks
			hosts := make([]string, ranks)
			for r := range hosts {
				hosts[r] = strconv.Itoa(rng.IntN(5))
			}
			fmt.Fprintf(&wl, "%s %s %d %d %s\n", name, name, ranks, rng.IntN(4), strings.Join(hosts, ","))
		}
		model := []string{"SMPI", "LV08", "CM02"}[rng.IntN(3)]
		noise := [2]int{rng.IntN(3), rng.IntN(3)}
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			if jobsDifferential(t, sg, dir, plat, wl.String(), model, noise) {
				aborted++
			}
		})
	}
	t.Logf("%d random workloads, %d that SimGrid aborts", sets, aborted)
	if aborted > sets/2 {
		t.Errorf("SimGrid aborted %d of %d workloads: too few compared", aborted, sets)
	}
}

// jobsDifferential replays the workload (in dir) with kairos and with
// SimGrid's driver sg, with noise actors, and compares every rank's end.
// It reports whether SimGrid aborted: a rank of a job whose ranks are not
// all created yet (its job actor creates one a sub-round) sends to one
// that is not, and SimGrid 3.32 aborts ("Actor pid=-1 is gone??"); Kairos
// starts a job's ranks together.
func jobsDifferential(t *testing.T, sg, dir, plat, workload, model string, noise [2]int) (aborted bool) {
	t.Helper()
	wl := filepath.Join(dir, "workload")
	if err := os.WriteFile(wl, []byte(workload), 0o644); err != nil {
		t.Fatal(err)
	}
	sgOut, err := runIn(dir, 2*time.Minute, sg, plat, wl, strconv.Itoa(noise[0]), strconv.Itoa(noise[1]),
		"--cfg=network/model:"+model, "--cfg=surf/precision:1e-9", "--log=root.thresh:critical")
	if err != nil && strings.Contains(string(sgOut), "Actor pid=-1 is gone??") {
		return true
	}
	if err != nil {
		t.Fatalf("sgjobs: %v\n%s", err, sgOut)
	}
	var res simulateJSON
	simulateInto(t, &res, "simulate", "--jobs", wl, "--platform", plat, "--cfg", "network/model:"+model,
		"--noise", fmt.Sprintf("%d,%d", noise[0], noise[1]), "--json")
	first := map[string]int{}
	for _, in := range res.Instances {
		first[in.ID] = in.FirstRank
	}
	ends := regexp.MustCompile(`(?m)^rank (\S+) (\d+) ([0-9.]+)$`).FindAllStringSubmatch(string(sgOut), -1)
	if len(ends) != len(res.Ranks) {
		t.Fatalf("%s%s: SimGrid ended %d ranks, kairos %d\n%s", workload, model, len(ends), len(res.Ranks), sgOut)
	}
	for _, e := range ends {
		r, _ := strconv.Atoi(e[2])
		at, _ := strconv.ParseFloat(e[3], 64)
		if got := res.Ranks[first[e[1]]+r].Finish; math.Abs(got-at) > 1e-9*math.Max(1, at) {
			t.Errorf("%s%s, noise %v: job %s rank %d ends at %.9f, SimGrid: %.9f", workload, model, noise, e[1], r, got, at)
		}
	}
	return false
}
