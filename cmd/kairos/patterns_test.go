package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kairos/format"
	"kairos/plot"
	"kairos/trace"
)

// patternsSample writes a timed halo exchange on a ring of 4 ranks, 24
// iterations in the user function "exchange", each starting on a 2 ms
// period: compute 1 ms (+0..3 µs by rank and iteration), Isend and Irecv
// to both neighbours (1 µs each), Waitall until both neighbours' sends
// are posted + 5 µs. Rank 2 computes 300 µs longer in iteration 9, and
// iterations 12 to 23 run in the user function "solve". With timed
// false the timestamps are dropped.
func patternsSample(t *testing.T, timed bool) string {
	t.Helper()
	const us = trace.Time(1e6)
	meta := trace.NewMeta()
	main := meta.AddRegion("main", 0)
	regions := []uint32{meta.AddRegion("exchange", main), meta.AddRegion("solve", main)}
	tr := trace.New(4, meta)
	for k := range 24 {
		start := make([]trace.Time, 4)
		for r := range start {
			start[r] = trace.Time(k)*2000*us + 1000*us + trace.Time((r*7+k*3)%4)*us
			if r == 2 && k == 9 {
				start[r] += 300 * us
			}
		}
		for r := range 4 {
			left, right := (r+3)%4, (r+1)%4
			at := start[r]
			add := func(e trace.Event, exit trace.Time) {
				e.Region = regions[k/12]
				if timed {
					e.HasTime, e.Enter, e.Exit = true, at, exit
				}
				tr.Ranks[r].Append(&e)
				at = exit
			}
			for i, p := range []int{left, right, left, right} {
				e := trace.NewEvent(trace.Isend)
				if i >= 2 {
					e.Kind, e.RecvBytes = trace.Irecv, 1024
				} else {
					e.SendBytes = 1024
				}
				e.Partner, e.Request = int32(p), uint64(i+1)
				add(e, at+us)
			}
			add(trace.NewEvent(trace.Waitall), max(at, max(start[left], start[right])+6*us)+us)
		}
	}
	f, _ := format.ByName("ktr")
	path := filepath.Join(t.TempDir(), "ring.ktr")
	if err := f.Write(path, tr); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestPatternsVerbs(t *testing.T) {
	path := patternsSample(t, true)
	dir := filepath.Dir(path)
	for _, c := range []struct {
		golden string
		args   []string
	}{
		{"patterns.txt", []string{"patterns", path}},
		{"process.txt", []string{"patterns", "--process", path}},
		{"phases.txt", []string{"phases", path}},
		{"phases-bic.txt", []string{"phases", "--criterion", "BIC", "--depth", "1", path}},
		{"phases-paper.txt", []string{"phases", "--paper", path}},
		{"slow.txt", []string{"slow", path}},
		{"summary.txt", []string{"slow", "--summary", "--top", "3", path}},
	} {
		code, out, errb := csRun(c.args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args, code, errb)
		}
		golden(t, filepath.Join("patterns", c.golden), strings.ReplaceAll(out, dir, "DIR"))
	}
}

func TestPatternsJSON(t *testing.T) {
	path := patternsSample(t, true)
	code, out, errb := csRun("slow", "--json", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb)
	}
	var s struct {
		Cutoff float64
		Slow   []struct {
			Position  int     `json:"position"`
			LastStart int32   `json:"last_start"`
			Late      string  `json:"late"`
			Duration  float64 `json:"duration_us"`
			Affinity  string  `json:"affinity"`
		}
	}
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatal(err)
	}
	if s.Cutoff != 3.5 || len(s.Slow) != 1 || s.Slow[0].Position != 10 || s.Slow[0].LastStart != 2 || s.Slow[0].Late != "late sender" || s.Slow[0].Affinity != "Medium" {
		t.Errorf("slow --json: %s", out)
	}
	for _, args := range [][]string{{"patterns", "--json", path}, {"phases", "--json", path}} {
		code, out, errb := csRun(args...)
		var v map[string]any
		if code != 0 || json.Unmarshal([]byte(out), &v) != nil {
			t.Errorf("%v: exit %d, %s%s", args, code, errb, out)
		}
	}
}

// TestPhasesCurve: the curve peaks where the user function changes, at
// ln 2 by instance counts (--paper: two halves that share no pattern) and
// at the binary entropy of the halves' time shares with Iterations.
func TestPhasesCurve(t *testing.T) {
	path := patternsSample(t, true)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--paper"}, "12,0.69314718"},
		{nil, "12,0.69291333"},
	} {
		csv := filepath.Join(t.TempDir(), "djs.csv")
		if code, _, errb := csRun(append(append([]string{"phases", "--curve", csv}, c.args...), path)...); code != 0 {
			t.Fatalf("exit %d: %s", code, errb)
		}
		data, err := os.ReadFile(csv)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		if lines[0] != "position,djs" || len(lines) != 24 || !strings.HasPrefix(lines[12], c.want) {
			t.Errorf("%v curve:\n%s", c.args, data)
		}
	}
}

func TestPatternsErrors(t *testing.T) {
	timed, untimed := patternsSample(t, true), patternsSample(t, false)
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"phases", "--criterion", "mdl", timed}, 2, "unknown criterion"},
		{[]string{"phases", "--min-length", "1", timed}, 2, "--min-length"},
		{[]string{"phases", "--curve", "-", "--segment", "9", timed}, 2, "S0..S2"},
		{[]string{"slow", "--z", "0", timed}, 2, "--z"},
		{[]string{"slow", "--summary", "--top", "0", timed}, 2, "--top"},
		{[]string{"slow", "--summary", "--json", timed}, 2, "--summary"},
		{[]string{"slow", "--machine", "4x1Gf,125MBps,50us", timed}, 2, "is timed"},
		{[]string{"patterns", "--json", "--process", timed}, 2, "--json"},
		{[]string{"patterns", filepath.Join(t.TempDir(), "missing.ktr")}, 1, "missing.ktr"},
		{[]string{"patterns"}, 2, "argument"},
	} {
		code, _, errb := csRun(c.args...)
		if code != c.code || !strings.Contains(errb, c.msg) {
			t.Errorf("%v: exit %d, %q; want %d and %q", c.args, code, errb, c.code, c.msg)
		}
	}
	if code, out, errb := csRun("phases", untimed); code != 0 || !strings.Contains(out, "slow (untimed)") {
		t.Errorf("phases of an untimed trace: exit %d %s%s", code, out, errb)
	}
}

// TestSlowUntimed: slow on a time-independent trace analyses its replay
// on --machine, as simulate --timed-trace and slow on the result do, and
// says so.
func TestSlowUntimed(t *testing.T) {
	untimed := patternsSample(t, false)
	run := filepath.Join(t.TempDir(), "run.ktr")
	const machine = "4x2Gf,1GBps,5us"
	if code, _, errb := csRun("simulate", untimed, "--cluster", machine, "--timed-trace", run); code != 0 {
		t.Fatalf("simulate: exit %d: %s", code, errb)
	}
	for _, args := range [][]string{{"--summary"}, {"--causes"}, nil} {
		code, want, errb := csRun(append(append([]string{"slow"}, args...), run)...)
		if code != 0 {
			t.Fatalf("slow %v of the simulated run: exit %d: %s", args, code, errb)
		}
		code, got, errb := csRun(append(append([]string{"slow", "--machine", machine}, args...), untimed)...)
		if code != 0 || !strings.Contains(errb, "has no timestamps: its replay on "+machine) {
			t.Fatalf("slow %v of the trace: exit %d: %s", args, code, errb)
		}
		if got != want {
			t.Errorf("slow %v of the trace:\n%s\nof its simulated run:\n%s", args, got, want)
		}
	}
}

// TestSlowSVG draws the durations of the sample's pattern instances, with
// its slow instance marked.
func TestSlowSVG(t *testing.T) {
	path := patternsSample(t, true)
	svg := filepath.Join(t.TempDir(), "slow.svg")
	code, out, errs := csRun("slow", "--svg", svg, path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	s := readSVG(t, svg)
	if !strings.Contains(s, ": pattern instance durations") || !strings.Contains(s, `fill="`+plot.Slow+`"><title>slow (M &gt; 3.5): `) {
		t.Errorf("SVG:\n%s\nslow output:\n%s", s, out)
	}
}
