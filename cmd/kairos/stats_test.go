package main

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"kairos/trace"
)

// statsSample is a 3-rank trace with point-to-point traffic, an allreduce
// and a bcast, timed: every call takes 2 ms after a 1 ms gap.
func statsSample(t *testing.T) string {
	t.Helper()
	send := func(dst int32, n int64, k trace.Kind) trace.Event {
		return csEvent(k, func(e *trace.Event) { e.Partner, e.SendBytes, e.Request = dst, n, 1 })
	}
	ranks := [][]trace.Event{
		{send(1, 100, trace.Send), send(1, 100, trace.Isend), csEvent(trace.Wait, func(e *trace.Event) { e.Request = 1 }), send(2, 10, trace.Send)},
		{csRecv(0, 100), csRecv(0, 100), csEvent(trace.Compute, func(e *trace.Event) { e.Compute = 2e6 })},
		{csRecv(0, 10)},
	}
	for r := range ranks {
		ranks[r] = append(ranks[r],
			csEvent(trace.Allreduce, func(e *trace.Event) { e.SendBytes, e.RecvBytes, e.Compute = 8, 8, 5 }),
			csEvent(trace.Bcast, func(e *trace.Event) { e.Partner, e.SendBytes, e.RecvBytes = 0, 64, 64 }))
		at := trace.Time(0)
		for i := range ranks[r] {
			e := &ranks[r][i]
			e.HasTime, e.Enter, e.Exit = true, at+1e9, at+3e9
			at = e.Exit
		}
	}
	return csWrite(t, "ktr", "sample.ktr", ranks...)
}

// golden compares got with testdata/name, rewriting the file when
// KAIROS_UPDATE_GOLDEN=1.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if os.Getenv("KAIROS_UPDATE_GOLDEN") == "1" {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with KAIROS_UPDATE_GOLDEN=1 to create it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s:\n%s", path, got)
	}
}

func TestStatsCLI(t *testing.T) {
	path := statsSample(t)
	cases := []struct {
		golden string
		args   []string
	}{
		{"stats/summary.txt", nil},
		{"stats/summary.json", []string{"--json", "--top", "2"}},
		{"stats/ranks.csv", []string{"--csv"}},
		{"stats/matrix-bytes.txt", []string{"--matrix", "bytes"}},
		{"stats/matrix-count.csv", []string{"--matrix", "count", "--csv"}},
	}
	for _, c := range cases {
		t.Run(c.golden, func(t *testing.T) {
			code, out, errs := csRun(append(append([]string{"stats"}, c.args...), path)...)
			if code != 0 || errs != "" {
				t.Fatalf("exit %d: %s", code, errs)
			}
			golden(t, c.golden, out)
		})
	}
}

// TestStatsManyRanks: above 64 ranks the text summarises the per-rank
// table (golden: a non-periodic 9x9 stencil, whose edge and corner ranks
// send less, with imbalance and rank 40 four times slower in an
// iteration) and leaves out the partners; --per-rank lists both for every
// rank.
func TestStatsManyRanks(t *testing.T) {
	tr := filepath.Join(t.TempDir(), "st81.ktr")
	if code, _, errs := csRun("gen", "stencil2d", "--grid", "9x9", "--iterations", "3", "--periodic=false", "--imbalance", "0.2",
		"--delay", "40:1:4", "-o", tr); code != 0 {
		t.Fatalf("gen: %s", errs)
	}
	code, out, errs := csRun("stats", tr)
	if code != 0 || errs != "" {
		t.Fatalf("exit %d: %s", code, errs)
	}
	golden(t, "stats/summarised.txt", out)
	code, out, errs = csRun("stats", "--per-rank", tr)
	if code != 0 || errs != "" {
		t.Fatalf("--per-rank: exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "\nper rank\n") || len(regexp.MustCompile(`\n  rank \d+: `).FindAllString(out, -1)) != 81 || !strings.Contains(out, "\n  rank 80: ") {
		t.Errorf("--per-rank: not every rank's row and partners:\n%s", out)
	}
}

func TestStatsCLIOutputFile(t *testing.T) {
	path := statsSample(t)
	out := filepath.Join(t.TempDir(), "m.csv")
	code, stdout, errs := csRun("stats", "--matrix", "bytes", "--csv", "-o", out, path)
	if code != 0 || stdout != "" || errs != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, errs)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "stats/matrix-bytes.csv", string(b))
}

func TestStatsCLIUsage(t *testing.T) {
	path := statsSample(t)
	for _, args := range [][]string{
		{"stats", "--matrix", "flops", path},
		{"stats", "--top", "0", path},
		{"stats", "--json", "--csv", path},
		{"stats"},
	} {
		if code, _, errs := csRun(args...); code != 2 || !strings.Contains(errs, "kairos:") {
			t.Errorf("%v: exit %d, stderr %q", args, code, errs)
		}
	}
	if code, _, errs := csRun("stats", filepath.Join(t.TempDir(), "no.ktr")); code != 1 || !strings.Contains(errs, "no.ktr") {
		t.Errorf("missing file: exit %d, stderr %q", code, errs)
	}
}

// TestStatsSVG draws the communication matrix of a generated stencil as a
// heat map: one cell per communicating pair, well-formed SVG.
func TestStatsSVG(t *testing.T) {
	dir := t.TempDir()
	tr, svg := filepath.Join(dir, "st.ktr"), filepath.Join(dir, "m.svg")
	if code, _, errs := csRun("gen", "stencil2d", "--grid", "4x4", "--iterations", "2", "-o", tr); code != 0 {
		t.Fatalf("gen: %s", errs)
	}
	code, _, errs := csRun("stats", "--svg", svg, "--matrix", "count", "--csv", tr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if s := readSVG(t, svg); !strings.Contains(s, "st.ktr: point-to-point messages, 16 ranks") ||
		!strings.Contains(s, "<title>5 → 6: 2 messages</title>") {
		t.Errorf("SVG:\n%.600s", s)
	}
}

// readSVG returns the figure a verb wrote to path, failing the test if it
// is missing or not well-formed XML.
func readSVG(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := xml.Unmarshal(data, new(struct{})); err != nil {
		t.Fatalf("%s is not well-formed XML: %v", filepath.Base(path), err)
	}
	return string(data)
}
