package main

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestDemo runs the demo as a new user would, smaller, and checks that every
// step ran and produced its result, and that -o writes readable outputs.
func TestDemo(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	code := run([]string{"demo", "--grid", "4x4", "--iterations", "30", "--cluster", "16x1Gf,125MBps,50us", "-o", dir}, &out, &errb)
	if code != exitOK {
		t.Fatalf("exit %d, stderr:\n%s", code, errb.String())
	}
	for _, want := range []string{
		"== 1. generate", "valid: every message matched",
		"ranks             16", "Simulation time ", "QDR (32, 1.3): ",
		"communication patterns on 16 ranks", "rank 6, late sender",
		"16 ranks -> 9 clusters in 1 main cluster ", "every rank's calls kept", ": ACC = 0.", "demo done",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("demo output lacks %q:\n%s", want, out.String())
		}
	}
	for _, name := range []string{"stencil.ktr", "simulated.ktr", "simulated.json", "matrix.svg", "ranks.svg", "slow.svg", "report.html"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("demo -o: %v", err)
		}
	}
	// The simulated trace is a timed trace every verb reads.
	out.Reset()
	if code := run([]string{"check", filepath.Join(dir, "simulated.ktr")}, &out, &errb); code != exitOK {
		t.Errorf("check of the simulated trace: exit %d: %s%s", code, out.String(), errb.String())
	}
}

// TestDemoSmallGrids: the demo runs to its end on small grids, its
// reduction replaying (issue 43's 2x2, 3x3 and 2x8).
func TestDemoSmallGrids(t *testing.T) {
	for _, grid := range []string{"2x2", "3x3", "2x8"} {
		var out, errb bytes.Buffer
		code := run([]string{"demo", "--grid", grid, "--iterations", "10"}, &out, &errb)
		if code != exitOK || !strings.Contains(out.String(), ": ACC = ") {
			t.Errorf("--grid %s: exit %d: %s%s", grid, code, out.String(), errb.String())
		}
	}
}

func TestDemoBadUsage(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"demo", "--grid", "4y4"}, &out, &errb); code != exitUsage {
		t.Errorf("bad grid: exit %d, want %d", code, exitUsage)
	}
	if code := run([]string{"demo", "extra"}, &out, &errb); code != exitUsage {
		t.Errorf("extra argument: exit %d, want %d", code, exitUsage)
	}
}

// TestVersion: "kairos --version" names the build and the Go release, for
// bug reports.
func TestVersion(t *testing.T) {
	code, out, errb := csRun("--version")
	if code != exitOK || !strings.HasPrefix(out, "kairos ") || !strings.Contains(out, runtime.Version()) {
		t.Fatalf("exit %d, out %q, err %q", code, out, errb)
	}
}
