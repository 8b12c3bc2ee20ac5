package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"kairos/internal/testenv"
)

// realTraces are the shared traces written by Score-P and DUMPI that
// TestRealTracesMatchSimGrid converts and replays, with their ranks.
var realTraces = []struct {
	path  string
	ranks int
}{
	{"otf2/tiny_mpi/traces.otf2", 2},
	{"otf2/pipit-ping-pong-otf2/traces.otf2", 2},
	{"otf2/sst-macro-mpi-coverage/traces.otf2", 10},
	{"otf2/tracer-stencil4d-32/traces.otf2", 32},
	{"otf2/tracer-stencil4d-64/traces.otf2", 64},
	{"dumpi/sst-macro-testbgp/testbgp.meta", 7},
	{"dumpi/sst-macro-testtrace/testtrace.meta", 4},
	{"dumpi/tauferlab-naive-alltoall-4/dumpi-2019.05.22.11.54.43.meta", 4},
}

// simgridTime is SimGrid's last line: the clock when the last rank ends,
// to the nanosecond (the log format's), and the time it prints, that
// rank's time since its own init, to the microsecond (%f).
var simgridTime = regexp.MustCompile(`\[([0-9.]+)\] Simulation time ([0-9.]+)`)

// TestRealTracesMatchSimGrid converts real traces (Score-P's OTF2, DUMPI)
// to TI with computations at 1 Gf/s, as a user would (kairos convert
// --speed), and replays the result with kairos simulate and with SimGrid's
// smpirun on a crossbar cluster: the same end of the last rank, to the
// nanosecond, and the same simulated time (since that rank's init, after
// the computation before it), to the digit SimGrid prints.
func TestRealTracesMatchSimGrid(t *testing.T) {
	testenv.Tool(t, "smpirun", "libsimgrid-dev")
	for _, c := range realTraces {
		in := testenv.Shared(t, "traces/"+c.path)
		dir := t.TempDir()
		ti := filepath.Join(dir, "t.ti")
		if code, _, errs := csRun("convert", "--speed", "1Gf", in, ti); code != 0 {
			t.Fatalf("convert %s: exit %d: %s", c.path, code, errs)
		}
		plat, hosts := testenv.Cluster(t, dir, c.ranks)
		code, out, errs := csRun("simulate", "--json", ti, "--platform", plat, "--hostfile", hosts)
		var res struct {
			Time  float64 `json:"simulated_time"`
			Ranks []struct {
				Finish float64 `json:"finish"`
			} `json:"ranks"`
		}
		if err := json.Unmarshal([]byte(out), &res); code != 0 || err != nil {
			t.Fatalf("simulate %s: exit %d (%v): %s%s", c.path, code, err, out, errs)
		}
		end := 0.0
		for _, r := range res.Ranks {
			end = max(end, r.Finish)
		}
		if err := os.WriteFile(filepath.Join(dir, "desc"), []byte("t.ti\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		sgEnd, sgTime := smpirunTime(t, dir, c.ranks)
		kEnd, kTime := fmt.Sprintf("%.9f", end), fmt.Sprintf("%f", res.Time)
		t.Logf("%-66s end %s s (SimGrid %s), time %s s (SimGrid %s)", c.path, kEnd, sgEnd, kTime, sgTime)
		if kEnd != sgEnd || kTime != sgTime {
			t.Errorf("%s: Kairos ends at %s s, time %s s; SimGrid at %s s, %s s", c.path, kEnd, kTime, sgEnd, sgTime)
		}
	}
}

// runIn runs a reference tool in dir and returns its combined output; at
// the timeout it is killed with its children (smpirun runs the simulation
// in a child).
func runIn(dir string, timeout time.Duration, name string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.Dir = dir
	return cmd.CombinedOutput()
}

// smpirunTime replays dir/desc on testenv.Cluster's platform with smpirun and returns the
// clock at its end and the simulated time it prints.
func smpirunTime(t *testing.T, dir string, n int) (end, simulated string) {
	t.Helper()
	out, err := runIn(dir, 5*time.Minute, "smpirun", "-np", fmt.Sprint(n), "-platform", "platform.xml", "-hostfile", "hostfile",
		"-replay", "desc", "--log=xbt_cfg.thresh:critical", "--log=smpi_config.thresh:critical", "--log=root.fmt:[%.9r]%e%m%n")
	m := simgridTime.FindSubmatch(out)
	if m == nil {
		t.Fatalf("smpirun: %v\n%s", err, out)
	}
	return string(m[1]), string(m[2])
}

// TestSimulateRealTimedTraces: simulating a real timed trace (OTF2, DUMPI)
// gives the times of its conversion to TI at the same speed, which
// TestRealTracesMatchSimGrid compares with SimGrid's, unless the
// conversion left out events TI cannot express (collectives on other
// communicators than MPI_COMM_WORLD), which the direct replay keeps.
func TestSimulateRealTimedTraces(t *testing.T) {
	type result struct {
		Time  float64 `json:"simulated_time"`
		Ranks []struct {
			Finish float64 `json:"finish"`
		} `json:"ranks"`
	}
	simulate := func(what string, args ...string) result {
		t.Helper()
		var res result
		code, out, errs := csRun(append([]string{"simulate", "--json"}, args...)...)
		if err := json.Unmarshal([]byte(out), &res); code != 0 || err != nil {
			t.Fatalf("simulate %s: exit %d (%v): %s%s", what, code, err, out, errs)
		}
		return res
	}
	for _, c := range realTraces {
		in := testenv.Shared(t, "traces/"+c.path)
		dir := t.TempDir()
		ti := filepath.Join(dir, "t.ti")
		plat, hosts := testenv.Cluster(t, dir, c.ranks)
		// SimGrid's 1 us threshold on both sides (the defaults), and none.
		for _, min := range []string{"1e-6", "0"} {
			code, _, errs := csRun("convert", "--speed", "1Gf", "--min-compute", min, in, ti)
			if code != 0 {
				t.Fatalf("convert %s: exit %d: %s", c.path, code, errs)
			}
			want := simulate(ti, ti, "--platform", plat, "--hostfile", hosts)
			got := simulate(c.path, in, "--platform", plat, "--hostfile", hosts, "--cfg", "smpi/host-speed:1Gf", "--cfg", "smpi/cpu-threshold:"+min)
			if strings.Contains(errs, "were left out") {
				t.Logf("%s: simulated directly %.9f s, converted %.9f s (%s)", c.path, got.Time, want.Time, strings.TrimSpace(errs))
			} else if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s, threshold %s s: simulated directly %v, converted %v", c.path, min, got, want)
			}
		}
	}
}
