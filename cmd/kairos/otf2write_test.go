package main

import (
	"path/filepath"
	"strings"
	"testing"

	"kairos/internal/testenv"
)

// simulatedTime returns the "Simulation time" line of kairos simulate of
// path on a flat cluster.
func simulatedTime(t *testing.T, path string) string {
	t.Helper()
	code, out, errs := csRun("simulate", path, "--cluster", "64x1Gf,125MBps,50us")
	if code != 0 {
		t.Fatalf("simulate %s: exit %d: %s", path, code, errs)
	}
	line, _, _ := strings.Cut(out, "\n")
	if !strings.HasPrefix(line, "Simulation time") {
		t.Fatalf("simulate %s: %q", path, out)
	}
	return line
}

// statsJSON returns kairos stats --json of path.
func statsJSON(t *testing.T, path string) string {
	t.Helper()
	code, out, errs := csRun("stats", "--json", path)
	if code != 0 {
		t.Fatalf("stats %s: exit %d: %s", path, code, errs)
	}
	return out
}

// sameAsOTF2 checks that the archive written of in, out, reads as in
// does: the same kairos stats --json, byte for byte, and the same
// simulated time.
func sameAsOTF2(t *testing.T, in, out string) {
	t.Helper()
	if a, b := statsJSON(t, in), statsJSON(t, out); a != b {
		t.Errorf("stats --json of %s:\n%s\nof %s:\n%s", out, b, in, a)
	}
	if a, b := simulatedTime(t, in), simulatedTime(t, out); a != b {
		t.Errorf("simulate: %s: %s, %s: %s", in, a, out, b)
	}
}

// TestConvertToOTF2 converts the real OTF2 archives to OTF2 again, and
// real DUMPI traces to OTF2, with kairos convert, into a directory that
// does not exist yet.
func TestConvertToOTF2(t *testing.T) {
	for _, name := range []string{"otf2/tiny_mpi", "otf2/sst-macro-mpi-coverage", "otf2/tracer-stencil4d-32", "otf2/pipit-ping-pong-otf2",
		"dumpi/sst-macro-testtrace/testtrace.meta", "dumpi/tauferlab-naive-alltoall-4"} {
		t.Run(name, func(t *testing.T) {
			in := testenv.Shared(t, filepath.Join("traces", name))
			out := filepath.Join(t.TempDir(), "out", "traces.otf2")
			if code, stdout, errs := csRun("convert", in, out); code != 0 || stdout != "" {
				t.Fatalf("convert: exit %d, stdout %q, stderr %q", code, stdout, errs)
			}
			sameAsOTF2(t, in, out)
		})
	}
}

// TestSimulateTimedOTF2 writes the simulated runs of generated workloads,
// noisy and imbalanced, as OTF2 archives with simulate --timed-trace:
// replayed, they take the time of the .ktr written alike, and converted
// to OTF2 again they read the same.
func TestSimulateTimedOTF2(t *testing.T) {
	for _, w := range [][]string{
		{"stencil2d", "--ranks", "16", "--iterations", "20"},
		{"cg", "--ranks", "8", "--iterations", "3"},
		{"lu", "--ranks", "4", "--iterations", "3"},
	} {
		t.Run(w[0], func(t *testing.T) {
			dir := t.TempDir()
			gen := filepath.Join(dir, "gen.ktr")
			if code, _, errs := csRun(append([]string{"gen"}, append(w, "--noise", "0.1", "--imbalance", "0.3", "-o", gen)...)...); code != 0 {
				t.Fatalf("gen: %s", errs)
			}
			timed := map[string]string{}
			for _, ext := range []string{".ktr", ".otf2"} {
				timed[ext] = filepath.Join(dir, "timed"+ext)
				if code, _, errs := csRun("simulate", gen, "--cluster", "16x1Gf,125MBps,50us", "--timed-trace", timed[ext]); code != 0 {
					t.Fatalf("simulate --timed-trace %s: %s", timed[ext], errs)
				}
			}
			if a, b := simulatedTime(t, timed[".ktr"]), simulatedTime(t, timed[".otf2"]); a != b {
				t.Errorf("simulate: %s: %s, %s: %s", timed[".ktr"], a, timed[".otf2"], b)
			}
			again := filepath.Join(dir, "again", "traces.otf2")
			if code, _, errs := csRun("convert", timed[".otf2"], again); code != 0 {
				t.Fatalf("convert: %s", errs)
			}
			sameAsOTF2(t, timed[".otf2"], again)
		})
	}
}

// TestConvertUntimedToOTF2 checks that convert refuses a time-independent
// trace, naming the way to a timed one, and writes nothing.
func TestConvertUntimedToOTF2(t *testing.T) {
	in := testenv.WriteFile(t, "ring.ti", testenv.Figure1Ring)
	out := filepath.Join(t.TempDir(), "ring.otf2")
	code, _, errs := csRun("convert", in, out)
	if code == 0 || !strings.Contains(errs, "kairos simulate") {
		t.Errorf("exit %d, stderr %q; want the untimed trace refused", code, errs)
	}
	if entries, _ := filepath.Glob(filepath.Join(filepath.Dir(out), "*")); len(entries) != 0 {
		t.Errorf("the refused conversion left %v", entries)
	}
}
