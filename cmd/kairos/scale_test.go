//go:build unix

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"kairos/format/ktr"
	"kairos/internal/testenv"
	"kairos/trace"
)

// TestMain runs the test binary as the kairos command when
// KAIROS_TEST_ARGS is set (the arguments, one a line), so that a test can
// run kairos in a process of its own: under a file limit, its memory
// measured.
func TestMain(m *testing.M) {
	if args, ok := os.LookupEnv("KAIROS_TEST_ARGS"); ok {
		onInterrupt(os.Stderr, os.Exit)
		code := run(strings.Split(args, "\n"), os.Stdout, os.Stderr)
		if path := os.Getenv("KAIROS_TEST_PEAK"); path != "" {
			// The child's own high-water mark: its rusage would count the
			// parent's memory, which it shared until exec (vfork).
			status, _ := os.ReadFile("/proc/self/status")
			for _, line := range strings.Split(string(status), "\n") {
				if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
					os.WriteFile(path, []byte(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB"))), 0o644)
				}
			}
		}
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// limitedRun is the outcome of runLimited.
type limitedRun struct {
	code           int
	stdout, stderr string
	peakMB         float64       // peak resident memory
	wall, cpu      time.Duration // elapsed, and user + system
}

// runLimited runs kairos args in a process of its own that may open at
// most nofile files (ulimit -n, soft and hard).
func runLimited(t *testing.T, nofile int, args ...string) limitedRun {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", `ulimit -n "$1" && exec "$0"`, os.Args[0], strconv.Itoa(nofile))
	peak := filepath.Join(t.TempDir(), "peak")
	cmd.Env = append(os.Environ(), "KAIROS_TEST_ARGS="+strings.Join(args, "\n"), "KAIROS_TEST_PEAK="+peak)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	began := time.Now()
	err := cmd.Run()
	r := limitedRun{stdout: out.String(), stderr: errb.String(), wall: time.Since(began)}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("kairos %s: %v", strings.Join(args, " "), err)
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	kb, err := os.ReadFile(peak)
	if err != nil {
		t.Skipf("no peak memory from /proc/self/status: %v", err)
	}
	v, err := strconv.ParseFloat(string(kb), 64)
	if err != nil {
		t.Fatalf("peak memory %q: %v", kb, err)
	}
	r.peakMB = v / 1024
	return r
}

// TestRanksBeyondFileLimit: check, simulate and classify read every rank
// at once; a trace of more ranks than the process may open files (a
// .ktr, a shared TI file and per-rank TI files) is read through a bounded
// set of open files, in memory that grows with its ranks by a few
// hundred bytes each (issue 43: "ulimit -n 1024; kairos check
// ring2000.ktr" failed at rank 1015). Under KAIROS_LONG=1 the trace has
// a million ranks and the limit is 1,024 files; BENCHMARKS.md has the
// figures.
func TestRanksBeyondFileLimit(t *testing.T) {
	ranks, perRank, nofile := 1500, 300, 256
	if testenv.Long() {
		ranks, perRank, nofile = 1_000_000, 4000, 1024
	}
	dir := t.TempDir()
	traces := []string{filepath.Join(dir, "ring.ktr"), filepath.Join(dir, "ring.ti"), filepath.Join(dir, "ring")}
	for i, path := range traces {
		n := ranks
		if i == 2 {
			n = perRank
		}
		args := []string{"gen", "ring", "--ranks", strconv.Itoa(n), "--iterations", "1", "-o", path}
		if i == 2 {
			args = append(args, "--to", "ti")
		}
		if code, _, errs := csRun(args...); code != 0 {
			t.Fatalf("gen: %s", errs)
		}
	}
	for i, path := range traces {
		n := ranks
		if i == 2 {
			n = perRank
		}
		// The machine: n ranks on 1,000 hosts, round-robin.
		hosts := filepath.Join(dir, "hosts")
		if err := os.WriteFile(hosts, []byte(fmt.Sprintf("node-0:%d\n", n)), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{
			{"check", path},
			{"simulate", "--analytic", path, "--cluster", "1x1Gf,1GBps,1us", "--hostfile", hosts},
			{"classify", "--speed", "1Gf", path},
		} {
			r := runLimited(t, nofile, args...)
			if r.code != 0 {
				t.Fatalf("ulimit -n %d; kairos %s: exit %d\n%s", nofile, strings.Join(args, " "), r.code, r.stderr)
			}
			// A few kilobytes a rank at most (a million ranks: check
			// 1.1 GB, classify 3 GB), whatever the open files.
			if limit := 64 + float64(n)*8e-3; r.peakMB > limit {
				t.Errorf("kairos %s: %.0f MB, want at most %.0f MB for %d ranks", strings.Join(args, " "), r.peakMB, limit, n)
			}
			t.Logf("%s %s (%d ranks): %.0f MB, %.1f s, %.1f s CPU", args[0], filepath.Base(path), n, r.peakMB, r.wall.Seconds(), r.cpu.Seconds())
		}
	}
}

// TestClaimedRanks: memory follows what a file holds, not the ranks it
// claims (issue 43: the 13-byte "1000000 init" took check 24 s and 2.7
// GB, and stats printed 2.1 million lines). A rank without events costs
// check under a hundred bytes (two million: 149 MB) and stats a few, and
// both say how many ranks have none.
func TestClaimedRanks(t *testing.T) {
	n := 200_000 // the two million under KAIROS_LONG=1
	if testenv.Long() {
		n = 2_000_000
	}
	dir := t.TempDir()
	sparse := filepath.Join(dir, "sparse.ti")
	if err := os.WriteFile(sparse, []byte(fmt.Sprintf("0 finalize\n%d finalize\n", n-1)), 0o644); err != nil {
		t.Fatal(err)
	}
	// A .ktr with valid checksums, n/2 ranks and two events.
	emptyKtr := filepath.Join(dir, "empty.ktr")
	tr := trace.New(n/2, trace.NewMeta())
	fin := trace.NewEvent(trace.Finalize)
	tr.Ranks[0].Append(&fin)
	tr.Ranks[n/2-1].Append(&fin)
	if err := ktr.Write(emptyKtr, tr); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path, empty string
		ranks       int
	}{{sparse, fmt.Sprintf("1-%d", n-2), n}, {emptyKtr, fmt.Sprintf("1-%d", n/2-2), n / 2}} {
		r := runLimited(t, 1024, "check", c.path)
		t.Logf("check %s: %.0f MB, %.1f s, %.1f s CPU", c.path, r.peakMB, r.wall.Seconds(), r.cpu.Seconds())
		want := fmt.Sprintf("warning: %d of the %d ranks have no events (%s)\n", c.ranks-2, c.ranks, c.empty)
		if r.code != 0 || r.stdout != want {
			t.Errorf("check %s: exit %d, %q, want %q", c.path, r.code, r.stdout+r.stderr, want)
		}
		if limit := 64 + float64(c.ranks)*1.2e-4; r.peakMB > limit {
			t.Errorf("check %s: %.0f MB, want at most %.0f MB", c.path, r.peakMB, limit)
		}
		r = runLimited(t, 1024, "stats", c.path)
		lines := strings.Count(r.stdout, "\n")
		if r.code != 0 || lines > 40 || !strings.Contains(r.stdout, fmt.Sprintf("ranks without events  %d (%s: left out below)", c.ranks-2, c.empty)) {
			t.Errorf("stats %s: exit %d, %d lines:\n%s%s", c.path, r.code, lines, r.stdout, r.stderr)
		}
		if limit := 64 + float64(c.ranks)*4e-5; r.peakMB > limit {
			t.Errorf("stats %s: %.0f MB, want at most %.0f MB", c.path, r.peakMB, limit)
		}
		t.Logf("stats %s: %.0f MB, %.1f s, %.1f s CPU", c.path, r.peakMB, r.wall.Seconds(), r.cpu.Seconds())
	}
}

// TestClaimedRanksRefused: the verbs that keep state for every rank refuse
// a trace that claims millions of ranks in a few bytes (simulate and
// reduce ran out of 4 GB on "0 init\n10000000 init\n"), naming where it
// claims them; simulate replays it with -np.
func TestClaimedRanksRefused(t *testing.T) {
	far := filepath.Join(t.TempDir(), "far.ti")
	if err := os.WriteFile(far, []byte("0 init\n10000000 init\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"simulate", far, "--cluster", "2x1Gf,125MBps,50us"}, {"reduce", far}, {"classify", far},
		{"slow", far}, {"patterns", far}, {"report", "-o", filepath.Join(t.TempDir(), "r.html"), far},
	} {
		code, _, errb := csRun(args...)
		if code != exitFailed || !strings.Contains(errb, "far.ti:2 names rank 10000000: 10000001 ranks, of which 2 have lines") {
			t.Errorf("%s: exit %d: %s", args[0], code, errb)
		}
	}
	if code, out, errb := csRun("simulate", far, "--cluster", "2x1Gf,125MBps,50us", "-np", "2"); code != 0 || !strings.Contains(out, "Simulation time 0.000000") {
		t.Errorf("simulate -np 2: exit %d: %s%s", code, out, errb)
	}
	// A .ktr whose index lists 10,000 ranks, two of them with events.
	sparse := filepath.Join(t.TempDir(), "sparse.ktr")
	tr := trace.New(10000, trace.NewMeta())
	fin := trace.NewEvent(trace.Finalize)
	tr.Ranks[0].Append(&fin)
	tr.Ranks[9999].Append(&fin)
	if err := ktr.Write(sparse, tr); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"simulate", sparse, "--cluster", "2x1Gf,125MBps,50us"}, {"reduce", sparse}} {
		if code, _, errb := csRun(args...); code != exitFailed || !strings.Contains(errb, "10000 ranks, of which 2 have events") {
			t.Errorf("%v: exit %d: %s", args, code, errb)
		}
	}
}

// TestStreamMemory: stats and simulate --analytic stream a trace, so
// their memory does not follow its length: ten times the events (a noisy,
// imbalanced 8x8 stencil, 640 events an iteration) may cost the same
// buffers, not more (issue 43; BENCHMARKS.md has 10^7 to 10^9 events,
// KAIROS_LONG=1 runs 10^7 against 10^8 here).
func TestStreamMemory(t *testing.T) {
	iters := []int{160, 1600}
	if testenv.Long() {
		iters = []int{15_625, 156_250}
	}
	dir := t.TempDir()
	peaks := map[string][]float64{}
	for _, n := range iters {
		path := filepath.Join(dir, fmt.Sprintf("st%d.ktr", n))
		if code, _, errs := csRun("gen", "stencil2d", "--grid", "8x8", "--iterations", strconv.Itoa(n), "--noise", "0.05", "--imbalance", "0.1", "-o", path); code != 0 {
			t.Fatalf("gen: %s", errs)
		}
		events := 0
		for _, args := range [][]string{
			{"stats", path},
			{"simulate", "--analytic", path, "--cluster", "64x1Gf,1GBps,1us"},
		} {
			r := runLimited(t, 1024, args...)
			if args[0] == "stats" {
				fmt.Sscanf(r.stdout, "ranks %d\nevents %d", new(int), &events)
			}
			want := fmt.Sprintf("; %d actions,", events)
			if r.code != 0 || events < 640*n || args[0] == "simulate" && !strings.Contains(r.stdout, want) {
				t.Fatalf("kairos %s: exit %d, %d events, want at least %d (and %q)\n%s%s", strings.Join(args, " "), r.code, events, 640*n, want, r.stdout, r.stderr)
			}
			peaks[args[0]] = append(peaks[args[0]], r.peakMB)
			t.Logf("%s, %d iterations: %.0f MB, %.1f s, %.1f s CPU", args[0], n, r.peakMB, r.wall.Seconds(), r.cpu.Seconds())
		}
	}
	for verb, p := range peaks {
		if p[1] > p[0]+48 {
			t.Errorf("%s: %.0f MB for ten times the events, %.0f MB for the trace a tenth as long", verb, p[1], p[0])
		}
	}
}
