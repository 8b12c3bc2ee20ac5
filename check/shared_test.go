package check

import (
	"testing"

	"kairos/format"
	_ "kairos/format/ti"
	"kairos/internal/testenv"
)

// TestSharedTraces checks the real SimGrid traces: both replay in SimGrid
// 3.32 (their reference outputs say so), so they must pass every
// protocol. The IS trace's files end in "finalize" without a newline,
// which SimGrid drops as Kairos does: its ranks end without it.
func TestSharedTraces(t *testing.T) {
	cases := []struct {
		path                                    string
		events, messages, collectives, requests int64
		unfinalized                             int
	}{
		{"traces/ti/smpi-ring4/ring4.ti", 103, 15, 7, 24, 0},
		{"traces/ti/simgrid-replay-multiple-32/is32-flat.txt", 3200, 0, 39, 0, 32},
	}
	for _, c := range cases {
		t.Run(c.path, func(t *testing.T) {
			src, _, err := format.Open(testenv.Shared(t, c.path))
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range []Protocol{None, Eager, Rendezvous, SimGrid} {
				rep, err := Check(src, Options{Protocol: p})
				if err != nil {
					t.Fatal(err)
				}
				if len(rep.Problems) != 0 || rep.Deadlock || rep.Unfinalized != c.unfinalized {
					t.Errorf("%s: %v, %d ranks unfinalized (want %d)", p, rep.Problems, rep.Unfinalized, c.unfinalized)
				}
				if rep.Events != c.events || rep.Messages != c.messages || rep.Collectives != c.collectives || rep.Requests != c.requests {
					t.Errorf("%s: events %d messages %d collectives %d requests %d", p, rep.Events, rep.Messages, rep.Collectives, rep.Requests)
				}
			}
		})
	}
}
