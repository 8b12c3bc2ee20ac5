package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"kairos/compare"
	"kairos/internal/testenv"
)

// TestCompareCLI replays a noisy, imbalanced stencil on a slow and a fast
// network and compares the two simulated runs: the same computation, less
// waiting on the fast one, a speed-up as its efficiency (golden text; the
// JSON's lines agree with it).
func TestCompareCLI(t *testing.T) {
	dir := t.TempDir()
	ti, slow, fast := filepath.Join(dir, "st.ti"), filepath.Join(dir, "slow.ktr"), filepath.Join(dir, "fast.ktr")
	for _, args := range [][]string{
		{"gen", "stencil2d", "--grid", "4x4", "--iterations", "50", "--noise", "0.05", "--imbalance", "0.1", "-o", ti},
		{"simulate", "--cluster", "16x1Gf,125MBps,50us", "--timed-trace", slow, ti},
		{"simulate", "--cluster", "16x1Gf,1.25GBps,5us", "--timed-trace", fast, ti},
	} {
		if code, _, errs := csRun(args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir) // the runs named as the user names them
	code, out, errs := csRun("compare", "slow.ktr", "fast.ktr")
	if code != 0 || errs != "" {
		t.Fatalf("exit %d: %s", code, errs)
	}
	t.Chdir(wd)
	golden(t, "compare/slow-fast.txt", out)

	code, out, errs = csRun("compare", "--json", slow, fast)
	if code != 0 {
		t.Fatalf("--json: exit %d: %s", code, errs)
	}
	var c compare.Comparison
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		t.Fatal(err)
	}
	if len(c.Runs) != 2 || c.Runs[1].Efficiency <= 1 || c.Runs[0].ComputeSeconds != c.Runs[1].ComputeSeconds {
		t.Errorf("runs %+v: want the fast network's a speed-up, the computation alike", c.Runs)
	}
	for _, l := range c.Activities {
		if l.Activity == "waitall" && l.Change >= 0 {
			t.Errorf("waitall changes by %g s a rank on the fast network, want less", l.Change)
		}
	}
}

// TestCompareCLIRefuses: one trace, an untimed one, --top 0.
func TestCompareCLIRefuses(t *testing.T) {
	dir := t.TempDir()
	ti := filepath.Join(dir, "st.ti")
	if code, _, errs := csRun("gen", "stencil2d", "--grid", "2x2", "--iterations", "2", "-o", ti); code != 0 {
		t.Fatal(errs)
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"compare", ti}, 2, "two traces or more"},
		{[]string{"compare", "--top", "0", ti, ti}, 2, "--top"},
		{[]string{"compare", ti, ti}, 1, "st.ti: the trace is not timed"},
	} {
		if code, _, errs := csRun(c.args...); code != c.code || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", c.args, code, errs, c.code, c.want)
		}
	}
}

// TestCompareScaling compares the real stencil4d runs the Kairos tracer
// recorded at 32 and 64 ranks (../shared): each run's time is the span
// simulate takes as the recorded run's (MPI_Init's return to
// MPI_Finalize's entry), MPI_Init is in no line, and every other activity
// of both runs has its line.
func TestCompareScaling(t *testing.T) {
	a := testenv.Shared(t, "traces/otf2/tracer-stencil4d-32/traces.otf2")
	b := testenv.Shared(t, "traces/otf2/tracer-stencil4d-64/traces.otf2")
	code, out, errs := csRun("compare", "--json", a, b)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var c compare.Comparison
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		t.Fatal(err)
	}
	for i, n := range []int{32, 64} {
		_, sim, errs := csRun("simulate", "--cluster", fmt.Sprintf("%dx1Gf,125MBps,50us", n), []string{a, b}[i])
		m := recordedRe.FindStringSubmatch(sim)
		if m == nil {
			t.Fatalf("simulate printed no recorded run: %s%s", sim, errs)
		}
		if got := fmt.Sprintf("%.9f", c.Runs[i].Seconds); got != m[1] || c.Runs[i].Ranks != n {
			t.Errorf("run %d: %d ranks, %s s; simulate's recorded run %s s, %d ranks", i, c.Runs[i].Ranks, got, m[1], n)
		}
	}
	seen := map[string]bool{}
	for _, l := range c.Activities {
		seen[l.Activity] = true
	}
	for _, k := range []string{"computation", "MPI_Send", "MPI_Irecv", "MPI_Waitall", "MPI_Barrier"} {
		if !seen[k] {
			t.Errorf("no line of %s in %d lines", k, len(c.Activities))
		}
	}
	if seen["MPI_Init"] {
		t.Errorf("a line of MPI_Init, which a replay does not time: %+v", c.Activities)
	}
}

// recordedRe is simulate's line of the recorded run's time.
var recordedRe = regexp.MustCompile(`recorded run ([0-9.]+) s`)
