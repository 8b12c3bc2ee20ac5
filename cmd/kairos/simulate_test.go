package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kairos/format"
	"kairos/format/ktr"
	"kairos/internal/testenv"
	"kairos/trace"
)

// TestSimulateFigure1 runs the paper's Figure 1 ring from the CLI with
// every output.
func TestSimulateFigure1(t *testing.T) {
	ring := testenv.WriteFile(t, "ring.ti", testenv.Figure1Ring)
	dir := t.TempDir()
	timed, pf := filepath.Join(dir, "ring.ktr"), filepath.Join(dir, "ring.json")
	paje := filepath.Join(dir, "ring.paje")
	code, out, errs := csRun("simulate", ring, "--cluster", "4x1Gf,125MBps,50us", "--timed-trace", timed, "--perfetto", pf, "--paje", paje, "--ranks")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.HasPrefix(out, "Simulation time 0.042675 (0.042675422 s") {
		t.Errorf("output:\n%s", out)
	}
	src, _, err := format.Open(timed)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	if err := trace.ForEach(src, func(r, i int, e *trace.Event) error {
		if e.HasTime {
			n++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n != 12 {
		t.Errorf("timed trace has %d timed events, want 12", n)
	}
	data, err := os.ReadFile(pf)
	if err != nil {
		t.Fatal(err)
	}
	var js struct{ TraceEvents []map[string]any }
	phases := map[any]int{}
	err = json.Unmarshal(data, &js)
	for _, e := range js.TraceEvents {
		phases[e["ph"]]++
	}
	if err != nil || len(js.TraceEvents) != 24 || phases["M"] != 4 || phases["X"] != 12 || phases["s"] != 4 || phases["f"] != 4 {
		t.Errorf("perfetto JSON: %v, events %v (want 4 track names, 12 slices, 4 messages' flows)", err, phases)
	}
	pj, err := os.ReadFile(paje)
	if err != nil || !strings.Contains(string(pj), "%EventDef PajeSetState 3") || strings.Count(string(pj), "\n3 ") != 24 {
		t.Errorf("paje output (%v):\n%s", err, pj)
	}
	// smpirun's -np sets the size of MPI_COMM_WORLD: extra ranks idle.
	if code, out, _ := csRun("simulate", ring, "--cluster", "8x1Gf,125MBps,50us", "-np", "6", "--ranks"); code != 0 || !strings.Contains(out, "\n5 ") {
		t.Errorf("-np 6: exit %d\n%s", code, out)
	}
	code, out, _ = csRun("simulate", ring, "--cluster", "4x1Gf,125MBps,50us", "--json", "--analytic")
	var res struct {
		SimulatedTime float64 `json:"simulated_time"`
		Ranks         []struct{ Finish float64 }
	}
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || len(res.Ranks) != 4 || res.SimulatedTime < 0.0426 {
		t.Errorf("--json: exit %d, %s", code, out)
	}
}

// TestSimulateSimGridCase runs one of SimGrid's replay tests with
// smpirun's spelling of the flags.
func TestSimulateSimGridCase(t *testing.T) {
	dir := testenv.Shared(t, "simgrid-replay-tests/examples/smpi")
	code, out, errs := csRun("simulate", filepath.Join(dir, "replay/actions_bcast.txt"),
		"-platform", filepath.Join(dir, "../platforms/small_platform.xml"),
		"-hostfile", filepath.Join(dir, "hostfile"), "-np", "3", "-v")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "Simulation time 19.692506 ") || !strings.Contains(out, "[13.139083] (2@Fafard) 2 compute") {
		t.Errorf("output:\n%s", out)
	}
}

func TestSimulateErrors(t *testing.T) {
	ring := testenv.WriteFile(t, "ring.ti", testenv.Figure1Ring)
	dead := testenv.WriteFile(t, "dead.ti", "0 recv 1 0 10\n1 recv 0 0 10\n")
	pair := testenv.WriteFile(t, "pair.ti", "0 send 1 0 10\n1 recv 0 0 10\n")
	alone := testenv.WriteFile(t, "rank3.ti", "3 init\n3 recv 0 0 10\n3 finalize\n") // one rank's file of a run
	// Two hosts of a Full zone with no route between them: SimGrid
	// aborts on the send ("no connecting path").
	noPath := testenv.WriteFile(t, "nopath.xml", `<?xml version='1.0'?>
<platform version="4.1"><zone id="z" routing="Full"><host id="a" speed="1Gf"/><host id="b" speed="1Gf"/></zone></platform>
`)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"simulate", ring}, 2, "--platform FILE.xml or --cluster"},
		{[]string{"simulate", ring, "--cluster", "4x1Gf,125MBps,50us", "--cfg", "nope"}, 2, "key:value"},
		{[]string{"simulate", ring, "--cluster", "4x1Gf,125MBps,50us", "--cfg", "network/model:NS3"}, 2, "not supported"},
		{[]string{"simulate", ring, "--cluster", "4x1Gf,125MBps,50us", "-np", "3"}, 1, "out of range"},
		{[]string{"simulate", dead, "--cluster", "2x1Gf,125MBps,50us"}, 1, "deadlock"},
		{[]string{"simulate", dead, "--cluster", "2x1Gf,125MBps,50us"}, 1, "recv=10 (" + dead + ":2)"}, // read ahead, found again
		{[]string{"simulate", ring, "--cluster", "bogus"}, 2, ""},
		{[]string{"simulate", pair, "--platform", noPath}, 1, "no connecting path from a to b: the route has no link and no latency"},
		{[]string{"simulate", pair, "--platform", noPath, "--analytic"}, 1, "no connecting path from a to b: the route has no link and no latency"},
		{[]string{"simulate", alone, "--cluster", "4x1Gf,125MBps,50us"}, 1, "has no events of 3 ranks 0-2 (one rank's file opened alone?"},
	} {
		code, _, errs := csRun(c.args...)
		if code != c.code || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", c.args, code, errs, c.code, c.want)
		}
	}
}

// TestSimulateLoopbackSetting: --cfg network/loopback-bw and -lat shape
// the implicit loopback of a Full zone, over the platform's <config>, as
// in SimGrid (whose times these are: 1,000,000 bytes between two ranks of
// one host through the 10 GB/s loopback, then through 100 MB/s, then with
// 1 ms more latency).
func TestSimulateLoopbackSetting(t *testing.T) {
	tr := testenv.WriteFile(t, "self.ti", "0 init\n0 send 1 0 1000000\n0 finalize\n1 init\n1 recv 0 0 1000000\n1 finalize\n")
	plat := testenv.WriteFile(t, "full.xml", `<?xml version='1.0'?>
<platform version="4.1">
  <config><prop id="network/loopback-bw" value="1e7"/></config>
  <zone id="z" routing="Full"><host id="a" speed="1Gf"/></zone>
</platform>
`)
	hf := testenv.WriteFile(t, "hf", "a\na\n")
	for _, c := range []struct {
		cfg  []string
		want string
	}{
		{[]string{"--cfg", "network/loopback-bw:1e10"}, "Simulation time 0.000106 (0.000106306 s"},
		{[]string{"--cfg", "network/loopback-bw:1e8"}, "Simulation time 0.010631 (0.010630620 s"},
		{[]string{"--cfg=network/loopback-bw:1e10", "--cfg=network/loopback-lat:1e-3"}, "Simulation time 0.012151 (0.012150507 s"},
	} {
		code, out, errs := csRun(append([]string{"simulate", tr, "--platform", plat, "--hostfile", hf}, c.cfg...)...)
		if code != 0 || !strings.HasPrefix(out, c.want) {
			t.Errorf("%v: exit %d, output %q%s; want %q", c.cfg, code, out, errs, c.want)
		}
	}
}

// TestSimulateLog: smpirun's --log settings are accepted; the replay's
// verbose log is --verbose.
func TestSimulateLog(t *testing.T) {
	ring := testenv.WriteFile(t, "ring.ti", testenv.Figure1Ring)
	code, out, errs := csRun("simulate", ring, "--cluster", "4x1Gf,125MBps,50us", "--log=smpi_replay.thresh:verbose",
		"--log=xbt_cfg.thresh:critical", "--log", "root.fmt:[%.9r]%e%m%n")
	if code != 0 || !strings.Contains(out, "(0@node-0) 0 compute") || !strings.Contains(out, "Simulation time 0.042675") {
		t.Errorf("exit %d, output:\n%s%s", code, out, errs)
	}
	if !strings.Contains(errs, "--log xbt_cfg.thresh:critical, root.fmt:[%.9r]%e%m%n ignored") {
		t.Errorf("stderr %q; want the ignored settings named", errs)
	}
}

// TestSimulateWarnings: what the TI reader tolerates but SimGrid would
// not replay the same way is said on stderr, after the result.
func TestSimulateWarnings(t *testing.T) {
	for _, c := range []struct{ name, text, want string }{
		{"unterminated.ti", "0 init\n0 compute 100\n0 finalize", "last line has no newline: dropped"},
		{"displs.ti", "0 allgatherv 10 10 10 0 0 0 10\n1 allgatherv 10 10 10 0 0 0 10\n", "allgatherv displacements are not kept"},
		{"unreceived.ti", "0 init\n0 send 1 5 100\n0 finalize\n1 init\n1 compute 1000\n1 finalize\n", "1 message never received"},
	} {
		tr := testenv.WriteFile(t, c.name, c.text)
		code, out, errs := csRun("simulate", tr, "--cluster", "2x1Gf,125MBps,50us")
		if code != 0 || !strings.HasPrefix(out, "Simulation time") || !strings.Contains(errs, "warning: ") || !strings.Contains(errs, c.want) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want a time and a warning %q", c.name, code, out, errs, c.want)
		}
	}
}

// TestSimulateLargeMessages: a message of 2^31 bytes or more takes its
// size's time, one byte more than 2^31-1 about as long (docs/simulation.md:
// SimGrid 3.32 wraps such a size to about 2^64 bytes, and takes 1.6e11 s
// longer; Kairos departs from it there on purpose).
func TestSimulateLargeMessages(t *testing.T) {
	times := map[int64]float64{}
	for _, n := range []int64{1<<31 - 1, 1 << 31, 3 << 30} {
		tr := testenv.WriteFile(t, "big.ti", fmt.Sprintf("0 init\n0 send 1 9 %d\n0 finalize\n1 init\n1 recv 0 9 %d\n1 finalize\n", n, n))
		code, out, errs := csRun("simulate", "--json", tr, "--cluster", "2x1Gf,125MBps,50us")
		var res struct {
			Time float64 `json:"simulated_time"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &res) != nil {
			t.Fatalf("%d bytes: exit %d: %s%s", n, code, out, errs)
		}
		times[n] = res.Time
	}
	if d := times[1<<31] - times[1<<31-1]; d < 0 || d > 1e-7 || math.Abs(times[3<<30]/times[1<<31]-1.5) > 1e-3 {
		t.Errorf("simulated times %v: want one byte more to take nanoseconds more, 1.5 times the size about 1.5 times the time", times)
	}
}

// TestSimulateTestBackoff: a TI trace's tests (SimGrid's tracer writes
// them) replay with SMPI's test back-off, which simulate reports as its
// own category, says where it happened and how to replay without it.
func TestSimulateTestBackoff(t *testing.T) {
	var b strings.Builder
	b.WriteString("0 init\n0 irecv 1 7 4\n")
	for range 300 {
		b.WriteString("0 test 1 0 7\n")
	}
	b.WriteString("0 finalize\n1 init\n1 compute 1e9\n1 send 0 7 4\n1 finalize\n")
	tr := testenv.WriteFile(t, "poll.ti", b.String())
	var res struct {
		Ranks []struct {
			Backoff float64 `json:"test_backoff"`
			Tests   int64   `json:"tests"`
		} `json:"ranks"`
		Polling *struct {
			FailedTests int64 `json:"failed_tests"`
		} `json:"polling"`
	}
	code, out, errb := csRun("simulate", "--cluster", "2x1Gf,10GBps,1us", "--json", tr)
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil {
		t.Fatalf("simulate: exit %d: %s%s", code, errb, out)
	}
	if res.Polling == nil || res.Polling.FailedTests < 100 || res.Ranks[0].Backoff <= 0 || res.Ranks[0].Tests < 100 {
		t.Errorf("simulate --json: %s", out)
	}
	if code, out, _ := csRun("simulate", "--cluster", "2x1Gf,10GBps,1us", tr); code != 0 || !strings.Contains(out, "test back-off: SMPI slept") ||
		!strings.Contains(out, "--cfg smpi/test:0") {
		t.Errorf("simulate: exit %d:\n%s", code, out)
	}
	if code, out, _ := csRun("simulate", "--cluster", "2x1Gf,10GBps,1us", "--cfg", "smpi/test:0", tr); code != 0 || strings.Contains(out, "test back-off") {
		t.Errorf("simulate --cfg smpi/test:0: exit %d:\n%s", code, out)
	}
}

// TestSimulateOptimFull: the paper's ring with SimGrid's full update of
// the network, and of the CPUs too, takes the ring's time, and the JSON
// result names the solver; the network's Lazy update without selective
// update is refused.
func TestSimulateOptimFull(t *testing.T) {
	ring := testenv.WriteFile(t, "ring.ti", testenv.Figure1Ring)
	var res simulateJSON
	simulateInto(t, &res, "simulate", ring, "--cluster", "4x1Gf,125MBps,50us", "--cfg", "network/optim:Full", "--json")
	if math.Abs(res.SimulatedTime-0.042675422) > 1e-9 || res.Solver != "full" {
		t.Errorf("simulated time %.9f, solver %q; want 0.042675422 and full", res.SimulatedTime, res.Solver)
	}
	// The CPUs' full update too, from a platform's <config>.
	plat := testenv.WriteFile(t, "p.xml", `<?xml version='1.0'?>
<platform version="4.1">
  <config><prop id="cpu/optim" value="Full"/></config>
  <cluster id="c" prefix="n" radical="0-3" suffix="" speed="1Gf" bw="125MBps" lat="50us"/>
</platform>
`)
	simulateInto(t, &res, "simulate", ring, "--platform", plat, "--cfg", "network/optim:Full", "--json")
	if math.Abs(res.SimulatedTime-0.042675422) > 1e-9 {
		t.Errorf("with cpu/optim:Full: simulated time %.9f, want 0.042675422", res.SimulatedTime)
	}
	if code, _, errs := csRun("simulate", ring, "--platform", plat, "--cfg", "network/maxmin-selective-update:no"); code == 0 || !strings.Contains(errs, "needs network/optim:Full") {
		t.Errorf("network/maxmin-selective-update:no with network/optim:Lazy: exit %d, %s", code, errs)
	}
}

// TestSimulateNoMPI: a trace of a program without MPI (Score-P's OTF2 of
// a HIP code, its locations metrics and GPU streams) replays in no time,
// and simulate says that it found nothing to replay.
func TestSimulateNoMPI(t *testing.T) {
	tr := testenv.Shared(t, "traces/otf2/fastotf2-mi300-hip")
	code, out, errs := csRun("simulate", tr, "--cluster", "2x1Gf,125MBps,50us")
	if code != 0 || !strings.HasPrefix(out, "Simulation time 0.000000 ") || !strings.Contains(errs, "holds no MPI call to replay") {
		t.Errorf("exit %d, stdout %q, stderr %q; want time 0 and a note", code, out, errs)
	}
}

// TestSimulatePlatformConfig: a platform's <config> settings apply, as in
// SimGrid, unless --cfg sets the same key (the platform's own, such as
// network/loopback-bw, shape the platform).
func TestSimulatePlatformConfig(t *testing.T) {
	tr := testenv.WriteFile(t, "pair.ti", "0 init\n0 send 1 0 100\n0 finalize\n1 init\n1 recv 0 0 100\n1 finalize\n")
	plat := testenv.WriteFile(t, "p.xml", `<?xml version='1.0'?>
<platform version="4.1">
  <config><prop id="smpi/os" value="0:1e-3:0"/><prop id="network/loopback-bw" value="1e9"/></config>
  <cluster id="c" prefix="n" radical="0-1" suffix="" speed="1Gf" bw="125MBps" lat="50us"/>
</platform>
`)
	time := func(args ...string) float64 {
		t.Helper()
		code, out, errs := csRun(append([]string{"simulate", tr, "--platform", plat, "--json"}, args...)...)
		var res struct {
			SimulatedTime float64 `json:"simulated_time"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &res) != nil {
			t.Fatalf("exit %d: %s%s", code, out, errs)
		}
		return res.SimulatedTime
	}
	withOS, without := time(), time("--cfg", "smpi/os:0:0:0")
	if d := withOS - without; d < 0.999e-3 || d > 1.001e-3 {
		t.Errorf("<config> smpi/os 1 ms: %.9f s against %.9f s without", withOS, without)
	}
}

// TestSimulateEnergy: with SimGrid's host_energy plugin, a host of 2
// cores whose one rank computes 1 Gflop at 1 Gf/s for 1 s draws
// Epsilon + load x (AllCores - Epsilon) = 120 + 0.5 x 80 = 160 W, so
// 160 J; the idle host of the other rank and the host with no rank draw
// Idle = 100 W, 100 J each: 360 J in all, 160 J by used hosts.
func TestSimulateEnergy(t *testing.T) {
	tr := testenv.WriteFile(t, "one.ti", "0 init\n0 compute 1e9\n0 finalize\n1 init\n1 finalize\n")
	plat := testenv.WriteFile(t, "p.xml", `<?xml version='1.0'?>
<platform version="4.1">
  <cluster id="c" prefix="n" radical="0-2" suffix="" speed="1Gf" core="2" bw="125MBps" lat="50us">
    <prop id="wattage_per_state" value="100:120:200"/>
  </cluster>
</platform>
`)
	code, out, errs := csRun("simulate", tr, "--platform", plat, "--cfg", "plugin:host_energy", "--ranks")
	want := []string{"Simulation time 1.000000",
		"Total energy consumption: 360.000000 Joules (used hosts: 160.000000 Joules; unused/idle hosts: 200.000000)",
		"Energy consumption of host n0: 160.000000 Joules", "Energy consumption of host n1: 100.000000 Joules",
		"Energy consumption of host n2: 100.000000 Joules"}
	for _, w := range want {
		if code != 0 || !strings.Contains(out, w) {
			t.Errorf("exit %d, output lacks %q:\n%s%s", code, w, out, errs)
		}
	}
	code, out, errs = csRun("simulate", tr, "--platform", plat, "--cfg", "plugin:host_energy", "--json")
	var res struct {
		Energy struct {
			Total float64 `json:"total_joules"`
			Hosts []struct {
				Host   string  `json:"host"`
				Joules float64 `json:"joules"`
				Used   bool    `json:"used"`
			} `json:"hosts"`
		} `json:"energy"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || res.Energy.Total != 360 || len(res.Energy.Hosts) != 3 || !res.Energy.Hosts[0].Used || res.Energy.Hosts[1].Used {
		t.Errorf("exit %d, JSON energy %+v:\n%s%s", code, res.Energy, out, errs)
	}
	// Without the plugin, no energy is reported.
	if _, out, _ := csRun("simulate", tr, "--platform", plat); strings.Contains(out, "energy") {
		t.Errorf("energy reported without the plugin:\n%s", out)
	}
	bad := testenv.WriteFile(t, "bad.xml", `<?xml version='1.0'?>
<platform version="4.1">
  <cluster id="c" prefix="n" radical="0-1" suffix="" speed="1Gf,500Mf" bw="125MBps" lat="50us">
    <prop id="wattage_per_state" value="100:200"/>
  </cluster>
</platform>
`)
	code, _, errs = csRun("simulate", tr, "--platform", bad, "--cfg", "plugin:host_energy")
	if code == 0 || !strings.Contains(errs, "bad.xml:4: <prop> attribute value: host n0: property wattage_per_state: 1 power ranges for 2 pstates") {
		t.Errorf("exit %d, stderr %q; want the bad property located", code, errs)
	}
	if code, _, errs = csRun("simulate", tr, "--platform", plat, "--cfg", "plugin:host_dvfs"); code == 0 || !strings.Contains(errs, `plugin: "host_dvfs" is not supported`) {
		t.Errorf("exit %d, stderr %q; want host_dvfs refused", code, errs)
	}
}

// TestAnalyticCrossChecksPredict: two implementations of the same
// contention-free model agree. For workloads without collectives (whose
// models differ: Thakur-Gropp formulas in predict, SimGrid's algorithms in
// simulate) whose receives are posted before their messages arrive,
// "kairos predict" (logical clocks, Hockney's model, eager) and "kairos
// simulate --analytic" on the matching cluster (CM02: no factors; no
// envelope, cross-traffic or TCP bound; every send detached) give the
// same time: link latency 50 us twice (up and down) is L = 100 us, and
// 125 MB/s is BW = 1 Gbit/s; predict's eager memory copies are made free.
// (Where a receive is posted late they part: SMPI starts an eager
// transfer only when the receive is posted, the logical clocks when it is
// sent.)
func TestAnalyticCrossChecksPredict(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		kind  string
		ranks int
		args  []string
	}{
		{"stencil2d", 16, []string{"--grid", "4x4", "--iterations", "30", "--allreduce-every", "0"}},
		{"stencil3d", 27, []string{"--grid", "3x3x3", "--iterations", "10", "--allreduce-every", "0", "--periodic=false"}},
		{"ring", 8, []string{"--iterations", "20"}},
	} {
		tr := filepath.Join(dir, c.kind+".ti")
		if code, _, errs := csRun(append([]string{"gen", c.kind, "-o", tr}, c.args...)...); code != 0 {
			t.Fatalf("gen %s: %s", c.kind, errs)
		}
		code, out, errs := csRun("predict", "--speed", "1Gf", "--config", "1,100", "--memcpy-bw", "1e30", "--json", tr)
		var pred struct {
			Predictions []struct{ Time float64 } `json:"predictions"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &pred) != nil || len(pred.Predictions) != 1 {
			t.Fatalf("predict %s: exit %d %s%s", c.kind, code, out, errs)
		}
		code, out, errs = csRun("simulate", tr, "--cluster", fmt.Sprintf("%dx1Gf,125MBps,50us", c.ranks), "--analytic", "--json",
			"--cfg", "network/model:CM02", "--cfg", "kairos/envelope:0", "--cfg", "network/crosstraffic:0",
			"--cfg", "smpi/send-is-detached-thresh:1e15", "--cfg", "network/TCP-gamma:1e30")
		var sim struct {
			SimulatedTime float64 `json:"simulated_time"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &sim) != nil {
			t.Fatalf("simulate %s: exit %d %s%s", c.kind, code, out, errs)
		}
		if p, s := pred.Predictions[0].Time, sim.SimulatedTime; math.Abs(p-s) > 1e-9*s {
			t.Errorf("%s: predict %.12f s, simulate --analytic %.12f s", c.kind, p, s)
		}
	}
}

// TestSimulateScale: --bw-scale, --lat-scale and --speed-scale give the
// time of the platform written with the scaled values.
func TestSimulateScale(t *testing.T) {
	ring := testenv.WriteFile(t, "ring.ti", testenv.Figure1Ring)
	time := func(args ...string) string {
		t.Helper()
		code, out, errs := csRun(append([]string{"simulate", ring}, args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
		return strings.SplitN(out, "\n", 2)[0]
	}
	scaled := time("--cluster", "4x1Gf,125MBps,50us,bb=1GBps,10us", "--bw-scale", "2", "--lat-scale", "0.5", "--speed-scale", "4")
	written := time("--cluster", "4x4Gf,250MBps,25us,bb=2GBps,5us")
	if scaled != written || scaled == time("--cluster", "4x1Gf,125MBps,50us,bb=1GBps,10us") {
		t.Errorf("scaled %q, written %q", scaled, written)
	}
	if code, _, errs := csRun("simulate", ring, "--cluster", "4x1Gf,125MBps,50us", "--bw-scale", "0"); code != 2 || !strings.Contains(errs, "scale factors must be positive") {
		t.Errorf("--bw-scale 0: exit %d, %s", code, errs)
	}
}

// TestSimulateSpeedProfiles: a host's speed_file (repeating with LOOPAFTER)
// and a periodic <trace> connected to another host change their speeds
// while they compute; the times are SimGrid 3.32's on the same files.
// Host b computes 1 Gflop at 1 Gf/s until 0.05 s (0.05 Gflop), at 0.5
// Gf/s until 0.5 s (0.225), at 1.5 Gf/s until the pattern starts again
// 0.2 s after its last event, at 0.75 s (0.375), at 0.5 Gf/s until 1.2 s
// (0.225), and the last 0.125 Gflop at 1.5 Gf/s: it ends at 1.283333 s.
// Host a's speed goes 1, 0.25, 2 every 0.3 s.
func TestSimulateSpeedProfiles(t *testing.T) {
	plat := filepath.Join(testenv.WriteFiles(t, map[string]string{"b.prof": "0.05 0.5\n0.5 1.5\nLOOPAFTER 0.2\n", "p.xml": `<?xml version='1.0'?>
<platform version="4.1">
  <zone id="z" routing="Full">
    <host id="a" speed="1Gf"/>
    <host id="b" speed="1Gf" speed_file="b.prof"/>
    <link id="l" bandwidth="125MBps" latency="50us"/>
    <route src="a" dst="b"><link_ctn id="l"/></route>
    <trace id="ta" periodicity="0.3">
0 1
0.1 0.25
0.2 2
</trace>
    <trace_connect kind="SPEED" trace="ta" element="a"/>
  </zone>
</platform>
`}), "p.xml")
	tr := testenv.WriteFile(t, "two.ti", "0 init\n1 init\n0 compute 1e9\n1 compute 1e9\n0 send 1 0 1000000\n1 recv 0 0 1000000\n1 compute 3e8\n0 compute 5e7\n0 finalize\n1 finalize\n")
	code, out, errs := csRun("simulate", tr, "--platform", plat, "-v")
	for _, want := range []string{"[0.925000] (0@a) 0 compute", "[1.283333] (1@b) 1 compute", "Simulation time 1.578536 (1.578535701 s"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("exit %d, output lacks %q:\n%s%s", code, want, out, errs)
		}
	}
}

// TestSimulateLinkProfiles: a bandwidth event on a link while a transfer
// over it pays its latency stalls the replay, as in SimGrid 3.32, and is
// explained; without SimGrid's quirks the transfer is enabled once its
// latency is paid. By hand: 2,000,000 bytes + the 16-byte envelope take
// the route's 50 us x SMPI's latency factor 11.6436 (above 65,472 bytes) =
// 0.00058218 s of latency; the event at 0.0003 s (SimGrid enables the flow
// then, its latency end changes nothing, nothing else reports it: SimGrid
// stalls at 0.000582180, its deadlock report's date). Fixed, the flow then
// shares l at 50 MBps with its own cross-traffic (weight 1 + 0.05, the
// route back being l too), times the bandwidth factor 0.940694:
// 2000016 / (50e6 / 1.05 x 0.940694) = 0.044648245 s, 0.045230425 s in all.
func TestSimulateLinkProfiles(t *testing.T) {
	plat := filepath.Join(testenv.WriteFiles(t, map[string]string{"l.prof": "0.0003 50000000\n", "p.xml": `<?xml version='1.0'?>
<platform version="4.1">
  <zone id="z" routing="Full">
    <host id="a" speed="1Gf"/>
    <host id="b" speed="1Gf"/>
    <link id="l" bandwidth="125MBps" latency="50us" bandwidth_file="l.prof"/>
    <route src="a" dst="b"><link_ctn id="l"/></route>
  </zone>
</platform>
`}), "p.xml")
	tr := testenv.WriteFile(t, "two.ti", "0 init\n1 init\n0 send 1 0 2000000\n1 recv 0 0 2000000\n0 finalize\n1 finalize\n")
	code, _, errs := csRun("simulate", tr, "--platform", plat)
	if code != 1 || !strings.Contains(errs, "deadlock at simulated time 0.000582180") || !strings.Contains(errs, "1 transfer(s) stalled: a link profile enabled them") {
		t.Errorf("exit %d:\n%s", code, errs)
	}
	code, out, errs := csRun("simulate", tr, "--platform", plat, "--cfg", "kairos/simgrid-quirks:no")
	if code != 0 || !strings.Contains(out, "Simulation time 0.045230 (0.045230425 s") {
		t.Errorf("exit %d:\n%s%s", code, out, errs)
	}
}

// TestSimulateSweep: several scale values replay the trace once per
// combination, each run giving the time of the single run with those
// scales.
func TestSimulateSweep(t *testing.T) {
	ring := testenv.WriteFile(t, "ring.ti", testenv.Figure1Ring)
	cluster := "4x1Gf,125MBps,50us,bb=1GBps,10us"
	single := func(args ...string) float64 {
		t.Helper()
		code, out, errs := csRun(append([]string{"simulate", ring, "--cluster", cluster, "--json"}, args...)...)
		var r struct {
			SimulatedTime float64 `json:"simulated_time"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &r) != nil {
			t.Fatalf("exit %d: %s%s", code, out, errs)
		}
		return r.SimulatedTime
	}
	code, out, errs := csRun("simulate", ring, "--cluster", cluster, "--json", "--bw-scale", "1,2", "--lat-scale", "0.5", "--speed-scale", "1,3")
	var sw sweepJSON
	if code != 0 || json.Unmarshal([]byte(out), &sw) != nil || len(sw.Runs) != 4 {
		t.Fatalf("exit %d: %s%s", code, out, errs)
	}
	for _, r := range sw.Runs {
		want := single("--bw-scale", fmt.Sprint(r.BwScale), "--lat-scale", fmt.Sprint(r.LatScale), "--speed-scale", fmt.Sprint(r.SpeedScale))
		if r.SimulatedTime != want || r.Speedup != sw.Runs[0].SimulatedTime/want {
			t.Errorf("run %+v: want %.9f s", r, want)
		}
	}
	if sw.Runs[3].BwScale != 2 || sw.Runs[3].SpeedScale != 3 || !(sw.Runs[3].Speedup > 1) {
		t.Errorf("order or speed-up: %+v", sw.Runs)
	}
	if code, _, errs := csRun("simulate", ring, "--cluster", cluster, "--bw-scale", "1,2", "-v"); code != 2 || !strings.Contains(errs, "--verbose writes one run") {
		t.Errorf("sweep with -v: exit %d, %s", code, errs)
	}
	if code, out, _ := csRun("simulate", ring, "--cluster", cluster, "--bw-scale", "1,2"); code != 0 || !strings.Contains(out, "2 runs") || !strings.Contains(out, "speed-up") {
		t.Errorf("sweep text (exit %d):\n%s", code, out)
	}
}

// TestSimulateLinkEnergy: SimGrid's link_energy plugin, on three transfers
// through a split-duplex link (whose halves carry no properties in
// SimGrid, so no power), a shared and a fat-pipe link; SimGrid 3.32 prints
// the same figures for this platform and trace.
func TestSimulateLinkEnergy(t *testing.T) {
	plat := testenv.WriteFile(t, "links.xml", `<?xml version='1.0'?>
<platform version="4.1">
  <zone id="z" routing="Full">
    <host id="a" speed="1Gf"/><host id="b" speed="1Gf"/><host id="c" speed="1Gf"/>
    <link id="la" bandwidth="125MBps" latency="50us" sharing_policy="SPLITDUPLEX"><prop id="wattage_range" value="100:200"/></link>
    <link id="lb" bandwidth="125MBps" latency="50us"><prop id="wattage_range" value="10:50"/></link>
    <link id="lc" bandwidth="125MBps" latency="50us" sharing_policy="FATPIPE"><prop id="wattage_range" value="1:2"/></link>
    <link id="bare" bandwidth="125MBps" latency="50us"/>
    <route src="a" dst="b"><link_ctn id="la" direction="UP"/><link_ctn id="lb"/></route>
    <route src="a" dst="c"><link_ctn id="la" direction="UP"/><link_ctn id="lc"/></route>
    <route src="b" dst="c"><link_ctn id="lb"/><link_ctn id="lc"/><link_ctn id="bare"/></route>
  </zone>
</platform>
`)
	hf := testenv.WriteFile(t, "hf", "a\nb\nc\n")
	tr := testenv.WriteFile(t, "three.ti", "0 init\n1 init\n2 init\n0 send 1 0 1000000\n1 recv 0 0 1000000\n0 send 2 0 500000\n2 recv 0 0 500000\n1 send 2 0 2000000\n2 recv 1 0 2000000\n0 finalize\n1 finalize\n2 finalize\n")
	code, out, errs := csRun("simulate", tr, "--platform", plat, "--hostfile", hf, "--cfg", "plugin:link_energy", "--ranks")
	if code, out, _ := csRun("simulate", tr, "--platform", plat, "--hostfile", hf, "--cfg", "plugin:link_energy", "--bw-scale", "1,2"); code != 0 || !strings.Contains(out, "links (J)") || !strings.Contains(out, "0.035116594     1.000      1.598") {
		t.Errorf("sweep with link energy (exit %d):\n%s", code, out)
	}
	for _, want := range []string{"Simulation time 0.035117", "Total energy over all links: 1.598368",
		"Energy consumption of link 'la_UP': 0.000000 Joules", "Energy consumption of link 'lb': 1.539163 Joules",
		"Energy consumption of link 'lc': 0.059205 Joules", "Energy consumption of link 'bare': 0.000000 Joules"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("exit %d, output lacks %q:\n%s%s", code, want, out, errs)
		}
	}
}

// TestSimulateRegions: a trace's location lines do not change the
// simulated time, whether simulate reads their regions (for the timed
// trace) or not, and the timed trace keeps them.
func TestSimulateRegions(t *testing.T) {
	dir := testenv.WriteFiles(t, map[string]string{
		"desc.txt": "r0.ti\nr1.ti\n",
		"r0.ti":    "0 init\n0 location main.c 42\n0 compute 1e6\n0 send 1 0 1000\n",
		"r1.ti":    "1 init\n1 location util.c 7\n1 recv 0 0 1000\n",
	})
	desc, timed := filepath.Join(dir, "desc.txt"), filepath.Join(dir, "timed.ktr")
	code, bare, errs := csRun("simulate", desc, "--cluster", "2x1Gf,125MBps,50us")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	code, full, errs := csRun("simulate", desc, "--cluster", "2x1Gf,125MBps,50us", "--timed-trace", timed)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if bare != full {
		t.Errorf("without regions:\n%s\nwith them:\n%s", bare, full)
	}
	src, err := openTrace(timed)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	trace.ForEach(src, func(r, _ int, e *trace.Event) error {
		if e.Kind == trace.Location {
			names = append(names, src.Meta().RegionName(e.Region))
		}
		return nil
	})
	if strings.Join(names, ",") != "main.c,util.c" {
		t.Errorf("timed trace's location regions %q, want main.c and util.c", names)
	}
}

// timedAdder returns a function that appends to tr's rank r an event of
// kind k, timed from enter to exit (seconds), set further by f if not
// nil: the timed traces of the simulate tests, written call by call.
func timedAdder(tr *trace.Trace) func(r int, k trace.Kind, enter, exit float64, f func(*trace.Event)) {
	return func(r int, k trace.Kind, enter, exit float64, f func(*trace.Event)) {
		e := trace.NewEvent(k)
		e.HasTime, e.Enter, e.Exit = true, trace.FromSeconds(enter), trace.FromSeconds(exit)
		if f != nil {
			f(&e)
		}
		tr.Ranks[r].Append(&e)
	}
}

// TestSimulateTimedTrace: a timed trace is replayed with the time between
// its MPI calls as computation, as SMPI runs real code: at the speed of
// rank 0's host unless smpi/host-speed says the recording machine's, the
// scales applied after, and computations under smpi/cpu-threshold (1 us)
// dropped. Rank 0 computes 2 ms, then 0.5 us, between its calls.
func TestSimulateTimedTrace(t *testing.T) {
	tr := trace.New(2, trace.NewMeta())
	add := timedAdder(tr)
	add(0, trace.Init, 0, 0, nil)
	add(0, trace.Send, 2e-3, 2e-3, func(e *trace.Event) { e.Partner, e.SendBytes = 1, 8 })
	add(0, trace.Finalize, 2e-3+5e-7, 2e-3+5e-7, nil)
	add(1, trace.Init, 0, 0, nil)
	add(1, trace.Recv, 0, 2.1e-3, func(e *trace.Event) { e.Partner, e.RecvBytes = 0, 8 })
	add(1, trace.Finalize, 2.1e-3, 2.1e-3, nil)
	path := filepath.Join(t.TempDir(), "timed.ktr")
	if ktr, _ := format.ByName("ktr"); ktr.Write(path, tr) != nil {
		t.Fatal("writing the timed trace")
	}
	cases := []struct {
		name    string
		args    []string
		compute float64 // rank 0's, in seconds
		at      float64
		note    bool
	}{
		{"rank 0's host speed", nil, 2e-3, 1e9, true},
		{"recording machine twice as fast", []string{"--cfg", "smpi/host-speed:2Gf"}, 4e-3, 2e9, false},
		{"hosts twice as fast", []string{"--speed-scale", "2"}, 1e-3, 1e9, true},
		{"no threshold", []string{"--cfg", "smpi/cpu-threshold:0"}, 2.0005e-3, 1e9, true},
		{"everything under the threshold", []string{"--cfg", "smpi/cpu-threshold:-1"}, 0, 1e9, true},
	}
	for _, c := range cases {
		args := append([]string{"simulate", path, "--cluster", "2x1Gf,125MBps,50us", "--json"}, c.args...)
		code, out, errs := csRun(args...)
		var res struct {
			UntimedAt float64 `json:"untimed_at"`
			Recorded  float64 `json:"recorded_time"`
			Ranks     []struct{ Compute float64 }
		}
		if code != 0 || json.Unmarshal([]byte(out), &res) != nil || len(res.Ranks) != 2 {
			t.Fatalf("%s: exit %d: %s%s", c.name, code, out, errs)
		}
		if got := res.Ranks[0].Compute; math.Abs(got-c.compute) > 1e-15 || res.UntimedAt != c.at {
			t.Errorf("%s: rank 0 computes %g s at %g flop/s, want %g s at %g", c.name, got, res.UntimedAt, c.compute, c.at)
		}
		if math.Abs(res.Recorded-2.1e-3) > 1e-15 {
			t.Errorf("%s: recorded run %g s, want rank 1's receive's end, 2.1 ms", c.name, res.Recorded)
		}
		if note := strings.Contains(errs, "timed.ktr is timed: the time between its MPI calls becomes computation at 1e+09 flop/s, the speed of host node-0, where rank 0 runs"); note != c.note {
			t.Errorf("%s: note %v, want %v: %q", c.name, note, c.note, errs)
		}
	}
	// A sweep untimes at the speed before the scales too: hosts twice as
	// fast end rank 0's computation, and the run, 1 ms earlier.
	code, out, errs := csRun("simulate", path, "--cluster", "2x1Gf,125MBps,50us", "--json", "--speed-scale", "1,2")
	var sweep struct {
		UntimedAt float64 `json:"untimed_at"`
		Runs      []struct {
			SimulatedTime float64 `json:"simulated_time"`
		}
	}
	if code != 0 || json.Unmarshal([]byte(out), &sweep) != nil || len(sweep.Runs) != 2 || sweep.UntimedAt != 1e9 ||
		math.Abs(sweep.Runs[0].SimulatedTime-sweep.Runs[1].SimulatedTime-1e-3) > 1e-12 {
		t.Errorf("sweep: exit %d: %s%s", code, out, errs)
	}
	if code, out, _ := csRun("simulate", path, "--cluster", "2x1Gf,125MBps,50us"); code != 0 ||
		!strings.Contains(out, "\nrecorded run 0.002100000 s (the trace's, from MPI_Init's return to MPI_Finalize's entry, the span a replay simulates): simulated / recorded ") ||
		strings.Contains(out, "in calls a replay gives no time") {
		t.Errorf("text output: exit %d\n%s", code, out)
	}
	// A time-independent trace is replayed as it is, with no note.
	if code, _, errs := csRun("simulate", testenv.WriteFile(t, "ring.ti", testenv.Figure1Ring), "--cluster", "4x1Gf,125MBps,50us"); code != 0 || strings.Contains(errs, "timed") {
		t.Errorf("TI trace: exit %d, %q", code, errs)
	}
}

// TestSimulateUnreplayedNote: a timed trace whose rank polls with
// MPI_Iprobe spent recorded time that its replay has not; simulate says
// how much, next to the recorded run, so that a replay shorter than the
// run is explained (NWChem's MPI_Win_flush_all and ScaLAPACK's
// MPI_Comm_create on oversubscribed cores: a third of the run).
func TestSimulateUnreplayedNote(t *testing.T) {
	tr := trace.New(2, trace.NewMeta())
	add := timedAdder(tr)
	add(0, trace.Init, 0, 0, nil)
	add(0, trace.Send, 2e-3, 2e-3, func(e *trace.Event) { e.Partner, e.SendBytes = 1, 8 })
	add(0, trace.Finalize, 2e-3, 2e-3, nil)
	add(1, trace.Init, 0, 0, nil)
	add(1, trace.Iprobe, 0, 1e-3, func(e *trace.Event) { e.Partner = 0 })
	add(1, trace.Recv, 1e-3, 2.1e-3, func(e *trace.Event) { e.Partner, e.RecvBytes = 0, 8 })
	add(1, trace.Finalize, 2.1e-3, 2.1e-3, nil)
	path := filepath.Join(t.TempDir(), "polling.ktr")
	if ktr, _ := format.ByName("ktr"); ktr.Write(path, tr) != nil {
		t.Fatal("writing the timed trace")
	}
	code, out, errs := csRun("simulate", path, "--cluster", "2x1Gf,125MBps,50us")
	if want := "\nnote: the ranks spent 0.000500 s each on average (23.8% of the recorded run) in calls a replay gives no time"; code != 0 || !strings.Contains(out, want) {
		t.Errorf("exit %d, want %q in\n%s%s", code, want, out, errs)
	}
	code, out, errs = csRun("simulate", path, "--cluster", "2x1Gf,125MBps,50us", "--json")
	var res struct {
		Unreplayed float64 `json:"unreplayed_time"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || math.Abs(res.Unreplayed-5e-4) > 1e-15 {
		t.Errorf("JSON: exit %d, unreplayed %g s, want 0.5 ms: %s%s", code, res.Unreplayed, out, errs)
	}
}

// TestSimulateTimedRoundTrip: the timed trace of a simulated run,
// simulated again on the same machine, gives the same time, and its
// recorded run is that time.
func TestSimulateTimedRoundTrip(t *testing.T) {
	app := testenv.WriteFile(t, "app.ti", `0 init
1 init
0 compute 2.5e6
0 isend 1 0 100000
1 irecv 0 0 100000
1 compute 1e6
0 waitall
1 waitall
1 send 0 1 10
0 recv 1 1 10
0 finalize
1 finalize
`)
	timed := filepath.Join(t.TempDir(), "run.ktr")
	var times []float64
	for _, in := range []string{app, timed} {
		code, out, errs := csRun("simulate", in, "--cluster", "2x1Gf,125MBps,50us", "--json", "--timed-trace", timed+".next", "--to", "ktr")
		var res struct {
			Time     float64 `json:"simulated_time"`
			Recorded float64 `json:"recorded_time"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &res) != nil {
			t.Fatalf("simulate %s: exit %d: %s%s", in, code, out, errs)
		}
		if in == timed && math.Abs(res.Recorded-times[0]) > 1e-12 {
			t.Errorf("recorded run %.12f s, simulated %.12f s", res.Recorded, times[0])
		}
		times = append(times, res.Time)
		if err := os.Rename(timed+".next", timed); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("simulated %.12f s, then %.12f s", times[0], times[1])
	if math.Abs(times[0]-times[1]) > 1e-12 || times[0] < 3.5e-3 {
		t.Errorf("simulated %.12f s, then %.12f s from its timed trace", times[0], times[1])
	}
}

// TestSimulateSVG draws a run (a bar per rank) and a sweep (a line per
// latency, the bandwidth scale across) as SVG.
func TestSimulateSVG(t *testing.T) {
	ring := testenv.WriteFile(t, "ring.ti", testenv.Figure1Ring)
	dir := t.TempDir()
	run, sweep := filepath.Join(dir, "run.svg"), filepath.Join(dir, "sweep.svg")
	if code, _, errs := csRun("simulate", ring, "--cluster", "4x1Gf,125MBps,50us", "--svg", run); code != 0 {
		t.Fatalf("run: exit %d: %s", code, errs)
	}
	if code, _, errs := csRun("simulate", ring, "--cluster", "4x1Gf,125MBps,50us", "--bw-scale", "1,2,4", "--lat-scale", "1,0.5", "--svg", sweep); code != 0 {
		t.Fatalf("sweep: exit %d: %s", code, errs)
	}
	for _, c := range []struct {
		path string
		want []string
	}{
		{run, []string{"ring.ti on 4x1Gf,125MBps,50us: 0.042675 s simulated", "<title>3 communication: "}},
		{sweep, []string{"bandwidth scale", "latency x0.5, speed x1", "<title>latency x1, speed x1: 4, "}},
	} {
		data := readSVG(t, c.path)
		for _, w := range c.want {
			if !strings.Contains(data, w) {
				t.Errorf("%s lacks %q", filepath.Base(c.path), w)
			}
		}
	}
}

// TestSimulateSkipPeriods: a periodic stencil generated and simulated from
// the command line skips its repeated periods (said in the text and the
// JSON) and gives the time of the replay of every action
// (kairos/skip-periods:no), to rounding.
func TestSimulateSkipPeriods(t *testing.T) {
	dir := t.TempDir()
	tr := filepath.Join(dir, "st")
	if code, _, errs := csRun("gen", "stencil2d", "--grid", "4x4", "--iterations", "60", "--allreduce-every", "10", "--noise", "0", "-o", tr, "--to", "ti"); code != 0 {
		t.Fatalf("gen: exit %d: %s", code, errs)
	}
	var on, off simulateJSON
	simulateInto(t, &on, "simulate", tr, "--cluster", "16x1Gf,125MBps,50us", "--json")
	simulateInto(t, &off, "simulate", tr, "--cluster", "16x1Gf,125MBps,50us", "--json", "--cfg", "kairos/skip-periods:no")
	if on.SkippedPeriods == 0 || off.SkippedPeriods != 0 || math.Abs(on.SimulatedTime-off.SimulatedTime) > 1e-12*off.SimulatedTime {
		t.Errorf("skipped %d periods, %.12f s; without skipping %d, %.12f s", on.SkippedPeriods, on.SimulatedTime, off.SkippedPeriods, off.SimulatedTime)
	}
	code, out, errs := csRun("simulate", tr, "--cluster", "16x1Gf,125MBps,50us")
	if code != 0 || !strings.Contains(out, fmt.Sprintf(", %d repeated periods skipped)", on.SkippedPeriods)) {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

// TestSimulateComms: messages that MPI keeps apart by communicator (rank
// 0 sends 40 bytes on a duplicate of MPI_COMM_WORLD, then 80 on world,
// with one tag; rank 1 receives world's first) pass check and replay, in
// both engines: the replay matched them by source and tag alone, and
// aborted on a truncation.
func TestSimulateComms(t *testing.T) {
	meta := trace.NewMeta()
	meta.Comms = []trace.Comm{{ID: 1, Members: []int32{0, 1}}}
	tr := trace.New(2, meta)
	add := func(r int, k trace.Kind, comm uint32, bytes int64) {
		e := trace.NewEvent(k)
		e.Comm, e.Tag = comm, 0
		if k == trace.Send {
			e.Partner, e.SendBytes = 1, bytes
		} else {
			e.Source, e.Partner, e.RecvBytes = 0, 0, bytes
		}
		tr.Ranks[r].Append(&e)
	}
	add(0, trace.Send, 1, 40)
	add(0, trace.Send, trace.WorldComm, 80)
	add(1, trace.Recv, trace.WorldComm, 80)
	add(1, trace.Recv, 1, 40)
	path := filepath.Join(t.TempDir(), "xcomm.ktr")
	if err := ktr.Write(path, tr); err != nil {
		t.Fatal(err)
	}
	if code, out, errs := csRun("check", path); code != 0 {
		t.Fatalf("check: exit %d: %s%s", code, out, errs)
	}
	for _, mode := range []string{"", "--analytic"} {
		args := []string{"simulate", path, "--cluster", "2x1Gf,125MBps,50us"}
		if mode != "" {
			args = append(args, mode)
		}
		if code, out, errs := csRun(args...); code != 0 || !strings.Contains(out, "2 messages") {
			t.Errorf("simulate %s: exit %d: %s%s", mode, code, out, errs)
		}
	}
}
