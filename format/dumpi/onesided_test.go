package dumpi

import (
	"testing"

	"kairos/trace"
)

// TestOneSidedAndIOCalls: DUMPI's one-sided calls are deferred events
// (MPI time, which is not computation when the trace is untimed) and its
// MPI-IO calls I/O events, kept with their recorded time.
func TestOneSidedAndIOCalls(t *testing.T) {
	const (
		lPut, lWinCreate, lWinFence, lFileOpen = 143, 145, 146, 230
		typeByte                               = 2
	)
	ws := writers(2)
	for r, w := range ws {
		w.call(lInit, 1, []string{"prog"})
		w.call(lWinCreate, 64, 1, 0, commWorld, 1)
		w.call(lWinFence, 0, 1)
		w.call(lPut, 8, typeByte, 1-r, 0, 8, typeByte, 1)
		w.call(lWinFence, 0, 1)
		w.call(lFileOpen, commWorld, "out.dat", 1, 0, 3)
		w.call(lFinalize)
	}
	src, err := Open(writeTrace(t, t.TempDir(), ws))
	if err != nil {
		t.Fatal(err)
	}
	var kinds []trace.Kind
	err = trace.ForEach(src, func(r, _ int, e *trace.Event) error {
		if r == 0 {
			kinds = append(kinds, e.Kind)
			if !e.HasTime || e.Duration() <= 0 {
				t.Errorf("%v has no duration", e)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []trace.Kind{trace.Init, trace.Deferred, trace.Deferred, trace.Deferred, trace.Deferred, trace.File, trace.Finalize}
	if len(kinds) != len(want) {
		t.Fatalf("kinds %v, want %v", kinds, want)
	}
	for i := range want {
		if kinds[i] != want[i] {
			t.Errorf("event %d: %s, want %s", i, kinds[i], want[i])
		}
	}
}
