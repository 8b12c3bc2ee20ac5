package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"kairos/format/ktr"
	"kairos/internal/testenv"
	"kairos/trace"
)

// TestReport writes the report of a generated stencil: the answers first,
// the timeline's data, every analysis, its figures, no error; and the
// report of a trace SimGrid's model cannot replay (a receive with no send)
// says so in the analyses that replay it.
func TestReport(t *testing.T) {
	dir := t.TempDir()
	tr, page := filepath.Join(dir, "st.ktr"), filepath.Join(dir, "r.html")
	if code, _, errs := csRun("gen", "stencil2d", "--grid", "4x4", "--iterations", "20", "--imbalance", "0.2", "--allreduce-every", "5", "--delay", "5:9:6", "-o", tr); code != 0 {
		t.Fatalf("gen: %s", errs)
	}
	if code, _, errs := csRun("report", "--speed", "1Gf", tr, "-o", page); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	data, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	for _, want := range []string{"How long does it run?", "simulated on 16x1Gf,125MBps,50us", "What bounds it?", "ENET-1G: ",
		"Which phase is slowest?", `<script type="application/json" id="tl-data">{"run":"the run simulated on 16x1Gf,125MBps,50us"`,
		"Simulation on 16x1Gf,125MBps,50us", "Valid: every message matched", "16 ranks -&gt; ", "ACC"} {
		if !strings.Contains(s, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if i, j := strings.Index(s, `id="answers"`), strings.Index(s, `id="timeline"`); i < 0 || j < i {
		t.Errorf("the answers are not first")
	}
	if n := strings.Count(s, "<svg "); n != 4 || strings.Contains(s, `class="error"`) {
		t.Errorf("%d figures, error: %v", n, strings.Contains(s, `class="error"`))
	}

	bad := testenv.WriteFile(t, "bad.ti", "0 init\n1 init\n1 recv 0 0 8\n0 finalize\n1 finalize\n")
	if code, _, errs := csRun("report", bad, "-o", page); code != 1 || !strings.Contains(errs, "analyses failed; the page says why") {
		t.Fatalf("bad trace: exit %d: %s", code, errs)
	}
	data, _ = os.ReadFile(page)
	if s := string(data); strings.Count(s, `class="error"`) < 2 || !strings.Contains(s, "rank 1 event 1: ") {
		t.Errorf("bad trace's report:\n%s", s)
	}
}

// TestReportAnalytic: report --analytic simulates the trace and its
// reduction with the contention-free model, gives simulate --analytic's
// time, not the exact one, and names the model where it gives it.
func TestReportAnalytic(t *testing.T) {
	dir := t.TempDir()
	tr := filepath.Join(dir, "st.ktr")
	if code, _, errs := csRun("gen", "stencil2d", "--grid", "4x4", "--iterations", "20", "--imbalance", "0.2", "-o", tr); code != 0 {
		t.Fatalf("gen: %s", errs)
	}
	simTime := func(args ...string) string {
		t.Helper()
		code, out, errs := csRun(append([]string{"simulate", tr, "--cluster", "16x1Gf,125MBps,50us", "--json"}, args...)...)
		if code != 0 {
			t.Fatalf("simulate %v: exit %d: %s", args, code, errs)
		}
		var res struct {
			Time float64 `json:"simulated_time"`
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("Simulation time %.6f s with ", res.Time)
	}
	analytic, exact := simTime("--analytic"), simTime()
	if analytic == exact {
		t.Fatalf("the trace replays alike with both models (%s): it tests nothing", exact)
	}
	for _, c := range []struct {
		flags       []string
		time, model string
	}{
		{nil, exact, "SimGrid&#39;s SMPI model"},
		{[]string{"--analytic"}, analytic, "the contention-free analytic model"},
	} {
		page := filepath.Join(dir, "r.html")
		if code, _, errs := csRun(append([]string{"report", tr, "-o", page}, c.flags...)...); code != 0 {
			t.Fatalf("report %v: exit %d: %s", c.flags, code, errs)
		}
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		s := string(data)
		for _, want := range []string{c.time + c.model, "simulated on 16x1Gf,125MBps,50us (" + c.model + ")", "ACC"} {
			if !strings.Contains(s, want) {
				t.Errorf("report %v lacks %q", c.flags, want)
			}
		}
		if analyticReplay := strings.Contains(s, "50us (analytic): "); analyticReplay != (c.flags != nil) {
			t.Errorf("report %v: the reduction replayed analytic: %v", c.flags, analyticReplay)
		}
	}
	// A replay that takes long (here, any) suggests --analytic, unless
	// it was analytic.
	defer func(d time.Duration) { slowReplay = d }(slowReplay)
	slowReplay = 0
	for _, flags := range [][]string{nil, {"--analytic"}} {
		_, _, errs := csRun(append([]string{"report", tr, "-o", filepath.Join(dir, "r.html")}, flags...)...)
		if hint := strings.Contains(errs, "note: the replay with SimGrid's model took "); hint != (flags == nil) {
			t.Errorf("report %v: the hint to replay --analytic: %v (%q)", flags, hint, errs)
		}
	}
}

// TestReportReduction: the report of the PMPI tracer's 32-rank 4-D
// stencil, whose ranks differ in their neighbours, reduces it to a
// reduction that replays as the trace (the papers' representatives alone
// deadlocked), and has no failed section.
func TestReportReduction(t *testing.T) {
	tr := testenv.Shared(t, "traces/otf2/tracer-stencil4d-32")
	page := filepath.Join(t.TempDir(), "r.html")
	if code, _, errs := csRun("report", tr, "-o", page); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	data, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	for _, want := range []string{"32 ranks -&gt; 2 clusters", "every rank&#39;s calls kept", "ACC = 1.0000"} {
		if !strings.Contains(s, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Contains(s, `class="error"`) {
		t.Errorf("a section failed")
	}
}

// TestReportRealTraceInChromium: the report of a real trace (the 64-rank
// 4-D stencil TraceR recorded with Score-P: a long MPI_Init, no slow
// instance) renders in headless Chromium, its timeline draws every rank,
// and no script error is logged.
func TestReportRealTraceInChromium(t *testing.T) {
	tr := testenv.Shared(t, "traces/otf2/tracer-stencil4d-64/traces.otf2")
	testenv.Tool(t, "chromium", "chromium")
	page := filepath.Join(t.TempDir(), "r.html")
	if code, _, errs := csRun("report", tr, "-o", page); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	dom, log := testenv.Browse(t, page)
	if !strings.Contains(dom, `data-timeline="drawn"`) || !strings.Contains(dom, `data-drawn-ranks="64"`) {
		t.Errorf("the timeline did not draw the 64 ranks; log:\n%s", log)
	}
	if errs := testenv.ScriptErrors(dom, log); errs != nil {
		t.Errorf("script errors: %s", strings.Join(errs, "\n"))
	}
	if !strings.Contains(dom, "recorded, from the first call to the last") {
		t.Errorf("the report does not say the run is the recorded one")
	}
}

// TestReportInMemory: an OTF2 archive's report is built from a .ktr copy
// held in memory, and says what the archive read in place says (but the
// time it took); a .ktr is read as it is.
func TestReportInMemory(t *testing.T) {
	path := testenv.Shared(t, "traces/otf2/tracer-stencil4d-32/traces.otf2")
	src, err := openTrace(path)
	if err != nil {
		t.Fatal(err)
	}
	mem := inMemory(src)
	if _, ok := mem.(*ktr.Source); !ok {
		t.Fatalf("an OTF2 archive is read as %T, want a .ktr in memory", mem)
	}
	gen := filepath.Join(t.TempDir(), "st.ktr")
	if code, _, errs := csRun("gen", "stencil2d", "--grid", "2x2", "--iterations", "2", "-o", gen); code != 0 {
		t.Fatalf("gen: %s", errs)
	}
	if g, err := openTrace(gen); err != nil || inMemory(g) != g {
		t.Errorf("a .ktr is copied (%v)", err)
	}
	conv := filepath.Join(t.TempDir(), "conv.ktr")
	if code, _, errs := csRun("convert", path, conv); code != 0 {
		t.Fatalf("convert: %s", errs)
	}
	if g, err := openTrace(conv); err != nil || inMemory(g) != g {
		t.Errorf("a .ktr converted from an OTF2 archive is copied (%v)", err)
	}
	page := func(s trace.Source) string {
		var b strings.Builder
		if err := buildReport(path, s, &reportFlags{}).WriteHTML(&b); err != nil {
			t.Fatal(err)
		}
		return regexp.MustCompile(`analysed in [0-9.]+ m?s`).ReplaceAllString(b.String(), "")
	}
	if a, b := page(src), page(mem); a != b {
		t.Errorf("the reports differ: %d and %d bytes", len(a), len(b))
	}
}
