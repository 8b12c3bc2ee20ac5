package pattern

import (
	"testing"

	"kairos/trace"
)

// TestUntimed: a trace is untimed for the steps that need timestamps when
// rank 0's first call taking part in patterns has none; an untimed
// MPI_Init before timed calls does not make it so, nor does an empty
// trace.
func TestUntimed(t *testing.T) {
	ev := func(k trace.Kind, timed bool) trace.Event {
		e := trace.NewEvent(k)
		if k == trace.Send {
			e.Partner, e.SendBytes = 1, 8
		}
		e.HasTime, e.Enter, e.Exit = timed, 1, 2
		return e
	}
	for _, c := range []struct {
		name   string
		events []trace.Event
		want   bool
	}{
		{"timed", []trace.Event{ev(trace.Init, true), ev(trace.Send, true)}, false},
		{"untimed", []trace.Event{ev(trace.Init, false), ev(trace.Send, false)}, true},
		{"untimed init only", []trace.Event{ev(trace.Init, false), ev(trace.Send, true)}, false},
		{"no call", []trace.Event{ev(trace.Compute, false)}, false},
	} {
		tr := trace.New(2, trace.NewMeta())
		for i := range c.events {
			tr.Ranks[0].Append(&c.events[i])
		}
		if got := Untimed(tr); got != c.want {
			t.Errorf("%s: Untimed %v, want %v", c.name, got, c.want)
		}
	}
	if Untimed(trace.New(0, trace.NewMeta())) {
		t.Error("an empty trace is untimed")
	}
}
