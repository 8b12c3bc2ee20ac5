package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// firstCause matches the first root cause slow --summary and the demo
// print: its rank and where.
var firstCause = regexp.MustCompile(`(?m)^  1\.\s+rank (\d+)\s+(.*?):\s+([\d.]+)% of all waiting`)

// TestRootCauseExample: the docs' example, a 4x4 stencil with an
// allreduce every iteration whose rank 5 computes 6 times longer in
// iterations 7, 23 and 41, simulated on two networks. The paper's rule
// names rank 1 (the last to start the allreduces after the delays, a
// victim); the root causes of waiting name rank 5's computation first, in
// slow --summary, slow --json and slow --causes.
func TestRootCauseExample(t *testing.T) {
	dir := t.TempDir()
	gen := filepath.Join(dir, "slow.ktr")
	if code, _, errb := csRun("gen", "stencil2d", "--grid", "4x4", "-i", "60", "--allreduce-every", "1", "--delay", "5:7,23,41:6", "-o", gen); code != exitOK {
		t.Fatalf("gen: exit %d: %s", code, errb)
	}
	for _, cluster := range []string{"16x1Gf,125MBps,50us", "16x1Gf,10GBps,1us"} {
		sim := filepath.Join(dir, "sim.ktr")
		if code, _, errb := csRun("simulate", gen, "--cluster", cluster, "--timed-trace", sim); code != exitOK {
			t.Fatalf("simulate on %s: exit %d: %s", cluster, code, errb)
		}
		code, out, errb := csRun("slow", "--summary", sim)
		if code != exitOK {
			t.Fatalf("slow --summary: exit %d: %s", code, errb)
		}
		m := firstCause.FindStringSubmatch(out)
		if m == nil || m[1] != "5" || m[2] != "computation in main/timestep/compute_interior" {
			t.Errorf("%s: slow --summary does not name rank 5's computation first:\n%s", cluster, out)
		}
		if !strings.Contains(out, "rank 1, late process") {
			t.Errorf("%s: the paper's table changed:\n%s", cluster, out)
		}
		code, out, errb = csRun("slow", "--json", sim)
		var j struct {
			RootCauses struct {
				Waiting float64 `json:"waiting_s"`
				Causes  []struct {
					Rank       int32   `json:"rank"`
					Activity   string  `json:"activity"`
					Direct     float64 `json:"direct_s"`
					Propagated float64 `json:"propagated_s"`
					Share      float64 `json:"share"`
				} `json:"causes"`
			} `json:"root_causes"`
			Slow []struct {
				LastStart int32 `json:"last_start"`
			} `json:"slow"`
		}
		if code != exitOK || json.Unmarshal([]byte(out), &j) != nil {
			t.Fatalf("slow --json: exit %d: %s%s", code, errb, out)
		}
		if c := j.RootCauses.Causes; len(c) == 0 || c[0].Rank != 5 || c[0].Activity != "computation" || c[0].Share < 0.5 ||
			c[0].Direct <= 0 || c[0].Propagated <= 0 || len(j.Slow) == 0 {
			t.Errorf("%s: slow --json root causes: %s", cluster, out)
		}
		code, out, errb = csRun("slow", "--causes", "--top", "3", sim)
		if code != exitOK || !regexp.MustCompile(`(?m)^  rank\s+activity.*\n  5\s+computation\s+main/timestep/compute_interior`).MatchString(out) ||
			!strings.Contains(out, "Critical path: ") {
			t.Errorf("%s: slow --causes: exit %d: %s%s", cluster, code, errb, out)
		}
	}
}

// TestDemoRootCause: the demo's rank 27 computes six times longer in three
// iterations; the demo names it first.
func TestDemoRootCause(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"demo"}, &out, &errb); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	m := firstCause.FindStringSubmatch(out.String())
	if m == nil || m[1] != "27" || m[2] != "computation in main/timestep/compute_interior" {
		t.Errorf("the demo does not name rank 27 first:\n%s", out.String())
	}
}

func TestSlowCausesUsage(t *testing.T) {
	path := patternsSample(t, true)
	for _, args := range [][]string{{"slow", "--causes", "--json", path}, {"slow", "--causes", "--summary", path}} {
		if code, _, _ := csRun(args...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, exitUsage)
		}
	}
}
