package pattern

import (
	"strings"
	"testing"
)

// TestWriteCommMost: past n patterns, the n most frequent are listed,
// most frequent first (ties in order of appearance), and a line says how
// many are left out; up to n, every pattern in order, as WriteComm.
func TestWriteCommMost(t *testing.T) {
	p := &Patterns{}
	for id := 1; id <= 5; id++ {
		p.Comm = append(p.Comm, CommPattern{ID: id, Frequency: []int{3, 9, 1, 9, 2}[id-1], Ranks: 1, Events: 1, Words: []string{"P0:S1"}})
	}
	names := func(n int) []string {
		var b strings.Builder
		if err := p.WriteCommMost(&b, n); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, l := range strings.Split(strings.TrimSpace(b.String()), "\n")[1:] {
			got = append(got, strings.Fields(l)[0])
		}
		return got
	}
	if got, want := strings.Join(names(3), " "), "CP2 CP4 CP1 …"; got != want {
		t.Errorf("3 of 5: %s, want %s", got, want)
	}
	if got, want := strings.Join(names(5), " "), "CP1 CP2 CP3 CP4 CP5"; got != want {
		t.Errorf("5 of 5: %s, want %s", got, want)
	}
	var b strings.Builder
	if err := p.WriteCommMost(&b, 3); err != nil || !strings.HasSuffix(b.String(), "… and 2 patterns more, each of 2 instances or fewer\n") {
		t.Errorf("the last line: %q, %v", b.String(), err)
	}
}

// TestWriteSlowUnits: the table of slow instances says that its
// durations, medians and thresholds are microseconds; without it a reader
// of NetPIPE's "duration 6.850" could not tell microseconds from seconds.
func TestWriteSlowUnits(t *testing.T) {
	a := &Analysis{Patterns: &Patterns{Timed: true, Sequence: make([]Instance, 2)}, Options: Options{Cutoff: 3.5},
		Phases: []Phase{{Number: 1, From: 1, To: 2, Slow: 1}},
		Slow:   []Slow{{Position: 2, Phase: 1, InPhase: 2, Pattern: 1, Duration: 6.85, Median: 0.69, Threshold: 0.9, Z: 104}}}
	var b strings.Builder
	if err := a.WriteSlow(&b); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	if len(lines) < 4 || !strings.Contains(lines[3], "duration (µs)") || !strings.Contains(lines[3], "median (µs)") || !strings.Contains(lines[3], "threshold (µs)") {
		t.Errorf("no unit in the header:\n%s", b.String())
	}
}
