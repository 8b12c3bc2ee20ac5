package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// genTrace writes a generated trace of kind at 16 ranks in dir.
func genTrace(t *testing.T, dir, kind string, args ...string) string {
	t.Helper()
	path := filepath.Join(dir, kind+".ktr")
	if code, _, errs := csRun(append([]string{"gen", kind, "--ranks", "16", "--iterations", "4", "-o", path}, args...)...); code != 0 {
		t.Fatalf("gen %s: exit %d: %s", kind, code, errs)
	}
	return path
}

// TestReduce: the Sweep3D skeleton at 16 ranks has Table 3's nine main
// clusters (golden output); its reduction, written and read back by
// simulate, replays as the whole trace (ACC = 1).
func TestReduce(t *testing.T) {
	dir := t.TempDir()
	sweep := genTrace(t, dir, "sweep")
	code, out, errs := csRun("reduce", sweep)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	golden(t, "reduce/sweep16.txt", strings.ReplaceAll(out, dir, "DIR"))
	// An interior rank of the wavefront: per time step, 80 blocks of two
	// receives and two sends, then the allreduce.
	if code, out, errs := csRun("reduce", "--loops", sweep); code != 0 || !strings.Contains(out, "\n  rank 5: init1 4×(80×(2×(recv1) 2×(send1)) allreduce1) finalize1\n") {
		t.Errorf("--loops: exit %d: %s%s", code, out, errs)
	}

	reduced := filepath.Join(dir, "sweep.reduced.ktr")
	code, out, errs = csRun("reduce", "--accuracy", "--json", "-o", reduced, sweep)
	var res struct {
		Representatives int `json:"representatives"`
		Accuracy        struct {
			Original float64 `json:"original_time"`
			Reduced  float64 `json:"reduced_time"`
			ACC      float64 `json:"acc"`
		} `json:"accuracy"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || res.Representatives != 9 || res.Accuracy.ACC != 1 || res.Accuracy.Original <= 0 {
		t.Fatalf("--accuracy: exit %d: %s%s", code, out, errs)
	}
	times := map[string]string{}
	for _, in := range []string{sweep, reduced} {
		code, out, errs := csRun("simulate", in, "--cluster", "16x1Gf,125MBps,50us")
		if code != 0 {
			t.Fatalf("simulate %s: exit %d: %s", in, code, errs)
		}
		times[in] = strings.SplitN(out, "\n", 2)[0]
	}
	if times[sweep] != times[reduced] || !strings.Contains(times[reduced], "20576 actions") {
		t.Errorf("simulated %q, reduced %q", times[sweep], times[reduced])
	}
	if code, out, _ := csRun("stats", reduced); code != 0 || !strings.Contains(out, "ranks             16") {
		t.Errorf("stats of the reduced trace: exit %d\n%s", code, out)
	}
}

// TestReduceInexact: the CG skeleton's parameter signatures merge ranks
// whose calls differ; their reduction does not replay and says why, and
// --exact splits the clusters until it does.
func TestReduceInexact(t *testing.T) {
	cg := genTrace(t, t.TempDir(), "cg")
	code, out, errs := csRun("reduce", "--accuracy", cg)
	if code != 1 || !strings.Contains(out, "the reduction does not replay: 8 ranks replay calls that are not theirs (--exact keeps every rank's): deadlock") ||
		!strings.Contains(out, "count 100.00%, loop 100.00%, events 100.00%, src 63.64%, dest 63.64%, tag 100.00%") {
		t.Errorf("inexact: exit %d: %s%s", code, out, errs)
	}
	// kairos report finds it too, says so, and reduces with exact
	// clusters.
	page := filepath.Join(t.TempDir(), "cg.html")
	if code, _, errs := csRun("report", cg, "-o", page); code != 0 {
		t.Errorf("report: exit %d: %s", code, errs)
	}
	if data, err := os.ReadFile(page); err != nil || !strings.Contains(string(data), "With the default clusters, the reduction does not replay: 8 ranks") {
		t.Errorf("report: %v; no word of the default clusters' failure", err)
	}
	code, out, errs = csRun("reduce", "--accuracy", "--exact", cg)
	if code != 0 || !strings.Contains(out, "ACC = 1.0000") || strings.Contains(out, "replay a representative") {
		t.Errorf("--exact: exit %d: %s%s", code, out, errs)
	}
	for _, m := range []string{"reference", "acurdion", "acurdion2"} {
		if code, out, errs := csRun("reduce", "--method", m, "--json", cg); code != 0 || !strings.Contains(out, `"method": "`+m+`"`) {
			t.Errorf("--method %s: exit %d: %s%s", m, code, out, errs)
		}
	}
}

func TestReduceErrors(t *testing.T) {
	cg := genTrace(t, t.TempDir(), "cg")
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"--method", "kmeans"}, 2, `unknown method "kmeans"`},
		{[]string{"--method", "acurdion", "--k", "0"}, 2, "K must be at least 1"},
		{[]string{"--count-tolerance", "-0.1"}, 2, "the count tolerance must be in [0, 1)"},
		{[]string{"-o", "out.ti"}, 2, "a reduced trace is written as .ktr"},
	} {
		code, _, errs := csRun(append(append([]string{"reduce"}, c.args...), cg)...)
		if code != c.code || !strings.Contains(errs, c.msg) {
			t.Errorf("%v: exit %d: %s", c.args, code, errs)
		}
	}
}
