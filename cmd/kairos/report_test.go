package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kairos/internal/testenv"
)

// TestReport writes the report of a generated stencil: every section, its
// four figures, no error; and the report of a trace SimGrid's model cannot
// replay (a receive with no send) says so in the sections that replay it.
func TestReport(t *testing.T) {
	dir := t.TempDir()
	tr, page := filepath.Join(dir, "st.ktr"), filepath.Join(dir, "r.html")
	if code, _, errs := csRun("gen", "stencil2d", "--grid", "4x4", "--iterations", "20", "--imbalance", "0.2", "-o", tr); code != 0 {
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
	for _, want := range []string{"<h2 id=\"s1\">1. Summary</h2>", "2. Validation", "valid: every message matched",
		"3. Simulation on 16x1Gf,125MBps,50us", "Simulation time ", "4. Classification", "ENET-1G (1, 50): ",
		"5. Patterns, phases and slow instances", "(of the simulated run)", "6. Reduction", "16 ranks -&gt; ", "ACC = "} {
		if !strings.Contains(s, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if n := strings.Count(s, "<svg "); n != 4 || strings.Contains(s, `class="error"`) {
		t.Errorf("%d figures, error: %v", n, strings.Contains(s, `class="error"`))
	}

	bad := testenv.WriteFile(t, "bad.ti", "0 init\n1 init\n1 recv 0 0 8\n0 finalize\n1 finalize\n")
	if code, _, errs := csRun("report", bad, "-o", page); code != 1 || !strings.Contains(errs, "sections failed; the page says why") {
		t.Fatalf("bad trace: exit %d: %s", code, errs)
	}
	data, _ = os.ReadFile(page)
	if s := string(data); strings.Count(s, `class="error"`) < 2 || !strings.Contains(s, "rank 1 event 1: ") {
		t.Errorf("bad trace's report:\n%s", s)
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
