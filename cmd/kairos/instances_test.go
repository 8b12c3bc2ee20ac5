package main

import (
	"encoding/json"
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

func TestParseInstances(t *testing.T) {
	for _, c := range []struct {
		in, want, err string
	}{
		{in: "1 a.ti 32 0\n2 b.ti 4 125e9\n", want: "1 a.ti 32 0|2 b.ti 4 1.25e+11"},
		{in: "# two jobs\n\nx a.ti 2\n", want: "x a.ti 2 0"},
		{in: "1 a.ti\n", err: "d:1: 2 fields"},
		{in: "\n1 a.ti zero\n", err: `d:2: ranks "zero" is not an integer`},
		{in: "1 a.ti 0\n", err: `d:1: ranks "0"`},
		{in: "1 a.ti 2 -5\n", err: `d:1: start delay "-5"`},
		{in: "1 a.ti 2 NaN\n", err: `d:1: start delay "NaN"`},
		{in: "1 a.ti 2 3 4\n", err: "d:1: 5 fields"},
		{in: "# nothing\n", err: "d: no instance"},
	} {
		ins, err := parseInstances(strings.NewReader(c.in), "d")
		var got []string
		for _, x := range ins {
			got = append(got, fmt.Sprintf("%s %s %d %g", x.id, x.trace, x.ranks, x.delay))
		}
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%q: error %v, want %q", c.in, err, c.err)
		case c.err == "" && (err != nil || strings.Join(got, "|") != c.want):
			t.Errorf("%q: %q (%v), want %q", c.in, got, err, c.want)
		}
	}
}

// FuzzParseInstances: any description is read or refused with an error,
// without a panic, and what is read is within bounds.
func FuzzParseInstances(f *testing.F) {
	for _, s := range []string{"1 a.ti 32 0\n2 b.ti 4 125e9\n", "# c\nx a.ti 2\n", "1 a.ti 2 1e400\n", "1 a 99999999999\n",
		"1 big.ti 100000000\n", "1 a.ti 4 -1e6\n", "1 a.ti 4 NaN\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ins, err := parseInstances(strings.NewReader(s), "fuzz")
		if err != nil {
			return
		}
		for _, x := range ins {
			if x.ranks < 1 || x.ranks > maxInstanceRanks || !(x.delay >= 0) {
				t.Fatalf("%q: read %+v", s, x)
			}
		}
	})
}

// TestInstancesErrors: a description that does not fit its traces is
// refused, naming the file and the instance.
func TestInstancesErrors(t *testing.T) {
	ring := testenv.WriteFile(t, "ring.ti", testenv.Figure1Ring)
	dir := filepath.Dir(ring)
	for _, c := range []struct{ desc, want string }{
		{"a ring.ti 3\n", "instance a: " + ring + " has 4 ranks, the description says 3"},
		{"a missing.ti 2\n", "instance a: "},
		{"a ring.ti\n", "desc:1: 2 fields"},
	} {
		desc := filepath.Join(dir, "desc")
		if err := os.WriteFile(desc, []byte(c.desc), 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, errs := csRun("simulate", "--instances", desc, "--cluster", "4x1Gf,125MBps,50us")
		if code == 0 || !strings.Contains(errs, c.want) {
			t.Errorf("%q: exit %d, %s", c.desc, code, errs)
		}
	}
}

// TestInstancesReplayMultiple replays SimGrid's replay_multiple example
// (two instances of a 32-rank NAS-like trace on 5 hosts, the second
// starting after 1.25e11 flops) as SimGrid 3.32's replay_multiple does,
// with SimGrid's default network model (LV08; smpirun sets SMPI): with
// the example tesh's maxmin/concurrency-limit:100, which binds here (64
// ranks on 5 hosts), the tesh's figures, the end 37315.495382 s and the
// last rank's simulated time 10459.738655 s; without the limit, the end
// 37292.121926290 s and 10436.365200 s, as replay_multiple gives them.
func TestInstancesReplayMultiple(t *testing.T) {
	dir := testenv.Shared(t, "simgrid-replay-tests/examples/smpi")
	for _, c := range []struct {
		limit, time, instance string
	}{
		{"100", "Simulation time 10459.738655 ", "simulated time 10459.738655410 s, ended at 37315.495381881 s"},
		{"-1", "Simulation time 10436.365200 ", "simulated time 10436.365199820 s, ended at 37292.121926290 s"},
	} {
		code, out, errs := csRun("simulate", "--instances", filepath.Join(dir, "replay_multiple/description_file"),
			"--platform", filepath.Join(dir, "../platforms/small_platform_with_routers.xml"), "--hostfile", filepath.Join(dir, "hostfile"),
			"--cfg", "network/model:LV08", "--cfg", "maxmin/concurrency-limit:"+c.limit)
		if code != 0 {
			t.Fatalf("limit %s: exit %d:\n%s%s", c.limit, code, out, errs)
		}
		for _, want := range []string{c.time, "instance 2 (smpi_replay.txt, ranks 32-63): " + c.instance} {
			if !strings.Contains(out, want) {
				t.Errorf("limit %s: output lacks %q:\n%s", c.limit, want, out)
			}
		}
	}
}

// TestInstancesOfAnyFormat replays side by side traces SimGrid's instances
// do not take (Score-P's OTF2 and DUMPI, timed and untimed as simulate
// untimes them, and a generated .ktr) with a TI one, each rank on its own
// host of a cluster without a backbone, so that they share nothing: each
// instance must end when its replay alone ends. SimGrid's quirk of waits
// in instances other than the first (see openInstances) is off here, as
// it would change every instance but the first.
func TestInstancesOfAnyFormat(t *testing.T) {
	shared := testenv.Shared(t, "traces")
	dir := t.TempDir()
	gen := filepath.Join(dir, "cg.ktr")
	if code, out, errs := csRun("gen", "cg", "-n", "4", "-o", gen); code != 0 {
		t.Fatalf("gen: exit %d: %s%s", code, out, errs)
	}
	parts := []struct {
		trace string
		ranks int
	}{
		{filepath.Join(shared, "ti/smpi-ring4/ring4.ti"), 4}, // first: the timed ones follow
		{gen, 4},
		{filepath.Join(shared, "otf2/pipit-ping-pong-otf2/traces.otf2"), 2},
		{filepath.Join(shared, "dumpi/tauferlab-naive-alltoall-4/dumpi-2019.05.22.11.54.43.meta"), 4},
	}
	var desc strings.Builder
	for i, p := range parts {
		fmt.Fprintf(&desc, "job%d %s %d\n", i, p.trace, p.ranks)
	}
	descPath := filepath.Join(dir, "desc")
	if err := os.WriteFile(descPath, []byte(desc.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"--cluster", "14x1Gf,125MBps,50us", "--cfg", "kairos/simgrid-quirks:no", "--json"}
	var all simulateJSON
	simulateInto(t, &all, append([]string{"simulate", "--instances", descPath}, args...)...)
	if len(all.Instances) != len(parts) {
		t.Fatalf("%d instances in the result, want %d", len(all.Instances), len(parts))
	}
	for i, p := range parts {
		var alone simulateJSON
		simulateInto(t, &alone, append([]string{"simulate", p.trace}, args...)...)
		got := all.Instances[i]
		if alone.SimulatedTime <= 0 || math.Abs(got.End-alone.SimulatedTime) > 1e-9*alone.SimulatedTime ||
			math.Abs(got.SimulatedTime-alone.SimulatedTime) > 1e-9*alone.SimulatedTime {
			t.Errorf("%s: ended at %.9f s (simulated time %.9f s) among the instances, alone at %.9f s",
				p.trace, got.End, got.SimulatedTime, alone.SimulatedTime)
		}
	}
}

// simulateInto runs kairos with args (a --json simulate) and decodes its
// output into v.
func simulateInto(t *testing.T, v *simulateJSON, args ...string) {
	t.Helper()
	code, out, errs := csRun(args...)
	if code != 0 {
		t.Fatalf("%q: exit %d: %s%s", args, code, out, errs)
	}
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("%q: %v:\n%s", args, err, out)
	}
}

// job is one instance of the differential tests: a generated workload.
type job struct {
	id    string
	gen   []string // kairos gen's arguments
	ranks int
	delay float64 // flops
}

// TestInstancesMatchSimGrid replays generated workloads side by side with
// kairos simulate --instances and with SimGrid 3.32's instances
// (testdata/sginstances.cpp), and requires the same end and the same
// simulated time of the last rank: three workloads, two delayed, on 5
// shared hosts, then random sets of two or three (every generator, random
// delays, 2 to 5 hosts in random order, a random network model, a random
// concurrency limit, an smpi/init sleep in a fourth of them;
// KAIROS_SIM_SEEDS sets how many, 12 by default). Where SimGrid
// deadlocks (a concurrency limit can make it), Kairos must deadlock at
// the same date.
func TestInstancesMatchSimGrid(t *testing.T) {
	sg := testenv.SimGridProgram(t, filepath.Join("testdata", "sginstances.cpp"))
	instancesDifferential(t, sg, []string{"node-3", "node-0", "node-4", "node-1", "node-2"}, []string{"network/model:SMPI"}, []job{
		{"stencil", []string{"stencil2d", "--grid", "2x2", "--iterations", "6"}, 4, 0},
		{"cg", []string{"cg", "--ranks", "4", "--iterations", "3"}, 4, 2e6},
		{"ring", []string{"ring", "--ranks", "3", "--iterations", "5"}, 3, 5e6},
	})
	kinds := []job{
		{gen: []string{"stencil2d", "--grid", "2x2", "--iterations", "4"}, ranks: 4},
		{gen: []string{"stencil3d", "--grid", "2x2x1", "--iterations", "3"}, ranks: 4},
		{gen: []string{"cg", "--ranks", "4", "--iterations", "2"}, ranks: 4},
		{gen: []string{"lu", "--ranks", "4", "--iterations", "2"}, ranks: 4},
		{gen: []string{"mg", "--ranks", "4", "--iterations", "1"}, ranks: 4},
		{gen: []string{"ft", "--ranks", "4", "--iterations", "1"}, ranks: 4},
		{gen: []string{"bt", "--ranks", "4", "--iterations", "1"}, ranks: 4},
		{gen: []string{"sweep", "--grid", "2x2", "--iterations", "1"}, ranks: 4},
		{gen: []string{"ring", "--ranks", "3", "--iterations", "4"}, ranks: 3},
		{gen: []string{"pingpong", "--ranks", "2", "--iterations", "3"}, ranks: 2},
		{gen: []string{"masterworker", "--ranks", "4"}, ranks: 4},
	}
	sets := 12
	if n, err := strconv.Atoi(os.Getenv("KAIROS_SIM_SEEDS")); err == nil {
		sets = n
	}
	for seed := range sets {
		rng := rand.New(rand.NewPCG(uint64(seed), 29))
		hosts := []string{"node-0", "node-1", "node-2", "node-3", "node-4"}
		rng.Shuffle(len(hosts), func(i, j int) { hosts[i], hosts[j] = hosts[j], hosts[i] })
		hosts = hosts[:2+rng.IntN(4)]
		var jobs []job
		for k := range 2 + rng.IntN(2) {
			j := kinds[rng.IntN(len(kinds))]
			j.id = fmt.Sprintf("j%d", k)
			j.gen = append(append([]string{}, j.gen...), "--seed", strconv.Itoa(rng.IntN(1000)))
			j.delay = float64(rng.IntN(3)) * 2e6
			jobs = append(jobs, j)
		}
		cfg := []string{"network/model:" + []string{"SMPI", "LV08", "CM02", "IB"}[rng.IntN(4)]}
		if limit := []int{-1, 2, 3, 5}[rng.IntN(4)]; limit >= 0 {
			cfg = append(cfg, fmt.Sprintf("maxmin/concurrency-limit:%d", limit))
		}
		if rng.IntN(4) == 0 {
			cfg = append(cfg, "smpi/init:1e-3") // slept after the start delays
		}
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) { instancesDifferential(t, sg, hosts, cfg, jobs) })
	}
}

// instancesDifferential replays jobs side by side on a cluster of 5
// hosts, placed on hosts (a hostfile), with the settings cfg (key:value),
// with kairos and with SimGrid's instances driver sg, and compares them.
func instancesDifferential(t *testing.T, sg string, hosts []string, cfg []string, jobs []job) {
	t.Helper()
	dir := t.TempDir()
	plat, _ := testenv.Cluster(t, dir, 5)
	hostfile := filepath.Join(dir, "hosts")
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("hosts", strings.Join(hosts, "\n")+"\n")
	var desc, ids, deploy strings.Builder
	deploy.WriteString("<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n<platform version=\"4.1\">\n")
	actor := 0
	for _, j := range jobs {
		if code, out, errs := csRun(append([]string{"gen"}, append(j.gen, "-o", filepath.Join(dir, j.id), "--to", "ti")...)...); code != 0 {
			t.Fatalf("gen %v: exit %d\n%s%s", j.gen, code, out, errs)
		}
		fmt.Fprintf(&desc, "%s %s %d %g\n", j.id, j.id, j.ranks, j.delay)
		fmt.Fprintf(&ids, "%s %d\n", j.id, j.ranks)
		for r := range j.ranks {
			// As SimGrid's replay_multiple deployments: the instances'
			// ranks one after the other, round-robin on the hostfile.
			fmt.Fprintf(&deploy, "  <actor host=%q function=%q><argument value=%q/><argument value=\"%d\"/><argument value=\"%s_files/rank-%d.ti\"/><argument value=\"%g\"/></actor>\n",
				hosts[actor%len(hosts)], j.id, j.id, r, j.id, r, j.delay)
			actor++
		}
	}
	deploy.WriteString("</platform>\n")
	write("desc", desc.String())
	write("ids", ids.String())
	write("deploy.xml", deploy.String())

	sgArgs := []string{"ids", plat, "deploy.xml", "--log=root.fmt:[%.12r]%e%m%n"}
	kArgs := []string{"simulate", "--instances", filepath.Join(dir, "desc"), "--platform", plat, "--hostfile", hostfile}
	for _, kv := range cfg {
		sgArgs = append(sgArgs, "--cfg="+kv)
		kArgs = append(kArgs, "--cfg", kv)
	}
	sgOut, err := runIn(dir, 2*time.Minute, sg, sgArgs...)
	if d := regexp.MustCompile(`\[([0-9.]+)\] Oops! Deadlock detected`).FindSubmatch(sgOut); err == nil && d != nil {
		// A concurrency limit can make instances deadlock (a staged
		// computation behind a waiting rank's sleep): Kairos must too,
		// at the same date.
		code, out, errs := csRun(kArgs...)
		at, _ := strconv.ParseFloat(string(d[1]), 64)
		k := regexp.MustCompile(`deadlock at simulated time ([0-9.]+)`).FindStringSubmatch(errs)
		if code == 0 || k == nil {
			t.Fatalf("%s, %v: SimGrid deadlocks at %s, kairos: exit %d\n%s%s", desc.String(), cfg, d[1], code, out, errs)
		}
		if kat, _ := strconv.ParseFloat(k[1], 64); math.Abs(kat-at) > 1e-9*math.Max(1, at) {
			t.Errorf("%s, %v: SimGrid deadlocks at %s, kairos at %s", desc.String(), cfg, d[1], k[1])
		}
		return
	}
	m := regexp.MustCompile(`\[([0-9.]+)\] Simulation time ([0-9.]+)`).FindSubmatch(sgOut)
	if err != nil || m == nil {
		t.Fatalf("sginstances: %v\n%s", err, sgOut)
	}
	sgEnd, _ := strconv.ParseFloat(string(m[1]), 64)

	code, out, errs := csRun(kArgs...)
	if code != 0 {
		t.Fatalf("exit %d:\n%s%s", code, out, errs)
	}
	if !strings.Contains(out, "Simulation time "+string(m[2])+" ") {
		t.Errorf("%s, %v: simulated time: SimGrid %s, kairos:\n%s", desc.String(), cfg, m[2], out)
	}
	end := 0.0
	for _, x := range regexp.MustCompile(`ended at ([0-9.]+) s`).FindAllStringSubmatch(out, -1) {
		v, _ := strconv.ParseFloat(x[1], 64)
		end = max(end, v)
	}
	if math.Abs(end-sgEnd) > 1e-9*math.Max(1, sgEnd) {
		t.Errorf("%s, %v: end: SimGrid %.9f, kairos %.9f\n%s", desc.String(), cfg, sgEnd, end, out)
	}
}
