package pattern

import (
	"testing"

	"kairos/trace"
)

// pingPongTrace is NetPIPE's or a latency benchmark's loop on 2 ranks:
// rank 0 sends to rank 1 and receives its reply, n times, each rank
// computing between its send and its receive (work µs) and little
// between its receive and its send. Each rank's longest computation then
// comes before its receive, so that, rank by rank, both loops would
// begin there: rank 0 as R1·S1, rank 1 as R0·S0, which do not pair.
func pingPongTrace(n int, work trace.Time) *trace.Trace {
	const us = trace.Time(1e6)
	tr := trace.New(2, trace.NewMeta())
	for r := range 2 {
		at := trace.Time(0)
		call := func(k trace.Kind, gap trace.Time) {
			e := trace.NewEvent(k)
			e.Partner = int32(1 - r)
			if k == trace.Send {
				e.SendBytes = 8
			} else {
				e.RecvBytes = 8
			}
			at += gap
			e.HasTime, e.Enter, e.Exit = true, at, at+us
			at += us
			tr.Ranks[r].Append(&e)
		}
		for range n {
			if r == 0 {
				call(trace.Send, us/10)
				call(trace.Recv, work)
			} else {
				call(trace.Recv, work)
				call(trace.Send, us/10)
			}
		}
	}
	return tr
}

// TestAlignPingPong checks that a ping-pong's exchanges are instances of
// their own: each rank's loop turned to match the other's. Cut rank by
// rank, the whole run was one instance of 2n calls.
func TestAlignPingPong(t *testing.T) {
	const n = 200
	p, err := Detect(pingPongTrace(n, 50*trace.Time(1e6)))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Sequence) < n-2 {
		t.Fatalf("%d instances, want about %d (one exchange each)", len(p.Sequence), n)
	}
	four := 0
	for _, in := range p.Sequence {
		if in.Events > 6 {
			t.Fatalf("instance %d has %d calls, want at most 6: exchanges are chained", in.Position, in.Events)
		}
		if in.Events == 4 {
			four++
		}
	}
	if four < n-2 {
		t.Errorf("%d instances of 4 calls, want %d or more", four, n-2)
	}
}

// TestBestTurn is bestTurn's table: the offsets of each body position to
// its partners' iterations, and the rotation that makes them agree.
func TestBestTurn(t *testing.T) {
	for _, c := range []struct {
		name string
		off  [][]offset
		ok   func(int32) bool
		want int32
	}{
		{"consistent", [][]offset{{{1, 0}}, {{1, 0}}}, nil, 0},
		{"ping-pong", [][]offset{{{1, 0}}, {{1, 1}}}, nil, 1},
		{"refused", [][]offset{{{1, 0}}, {{1, 1}}}, func(int32) bool { return false }, 0},
		{"two partners", [][]offset{{{1, 0}, {2, 0}}, {{1, 1}}, {{2, 1}}}, nil, 1},
		{"no partner", [][]offset{nil, nil, nil}, nil, 0},
		{"three positions, turn two", [][]offset{{{1, 0}}, {{1, 0}}, {{1, 1}}}, nil, 2},
	} {
		ok := c.ok
		if ok == nil {
			ok = func(int32) bool { return true }
		}
		if got := bestTurn(c.off, ok); got != c.want {
			t.Errorf("%s: turn %d, want %d", c.name, got, c.want)
		}
	}
}
