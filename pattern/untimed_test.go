package pattern

import (
	"testing"

	"kairos/trace"
)

// TestUntimed: a trace is untimed for the steps that need timestamps when
// rank 0's first call taking part in patterns has none, or, where it
// makes none, its first MPI call (`slow` on a TI trace of MPI_Init,
// computation and MPI_Finalize found "0 slow instances of 0" and `phases`
// printed times); an untimed MPI_Init before timed calls does not make it
// so, nor does an empty trace. Detect agrees.
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
		{"no communication, untimed", []trace.Event{ev(trace.Init, false), ev(trace.Compute, false), ev(trace.Finalize, false)}, true},
		{"no communication, timed", []trace.Event{ev(trace.Init, true), ev(trace.Finalize, true)}, false},
	} {
		tr := trace.New(1, trace.NewMeta())
		for i := range c.events {
			tr.Ranks[0].Append(&c.events[i])
		}
		if got := Untimed(tr); got != c.want {
			t.Errorf("%s: Untimed %v, want %v", c.name, got, c.want)
		}
		if p, err := Detect(tr); err != nil || p.Timed == c.want && c.name != "no call" {
			t.Errorf("%s: Detect's Timed %v (%v), want %v", c.name, p != nil && p.Timed, err, !c.want)
		}
	}
	if Untimed(trace.New(0, trace.NewMeta())) {
		t.Error("an empty trace is untimed")
	}
}

// claiming is a trace whose index claims more events than it holds.
type claiming struct{ *trace.Trace }

func (c claiming) RankEvents(int) int64 { return 1 << 60 }

// TestDetectClaimedCount: a source that claims 2^60 events for its first
// rank (a hostile file's index) sizes nothing by that claim: the
// patterns of the events it holds are found.
func TestDetectClaimedCount(t *testing.T) {
	tr := trace.New(2, trace.NewMeta())
	for r := range int32(2) {
		for _, k := range []trace.Kind{trace.Init, trace.Send, trace.Recv, trace.Finalize} {
			e := trace.NewEvent(k)
			if k == trace.Send || k == trace.Recv {
				e.Partner, e.SendBytes, e.RecvBytes = 1-r, 8, 8
			}
			tr.Ranks[r].Append(&e)
		}
	}
	if _, err := Detect(claiming{tr}); err != nil {
		t.Fatal(err)
	}
}
