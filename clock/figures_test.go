package clock

import (
	"math"
	"testing"

	"kairos/trace"
	"kairos/workload"
)

// unitOptions returns options in the abstract units of the paper's
// Figures 2 and 3 (one unit = one second): latency α, an n-byte message's
// bandwidth time n·β with β = 1 s/byte, memory copy 0.2 s/byte, speed 1
// flop/s so that a compute volume is its time.
func unitOptions(alpha float64) Options {
	o := DefaultOptions()
	o.Configs = []Config{{BW: 8e-9, Lat: alpha * 1e6}} // β = 8/(BW·1e9) = 1 s/byte
	o.MemcpyGBs = 5e-9                                 // 0.2 s/byte
	o.Speed = 1
	o.PerRank = true
	return o
}

// builder builds a trace by hand, rank by rank.
type builder struct{ t *trace.Trace }

func newBuilder(n int) *builder { return &builder{trace.New(n, trace.NewMeta())} }

func (b *builder) add(r int, k trace.Kind, f func(e *trace.Event)) *builder {
	e := trace.NewEvent(k)
	if f != nil {
		f(&e)
	}
	b.t.Ranks[r].Append(&e)
	return b
}

func (b *builder) compute(r int, flops float64) *builder {
	return b.add(r, trace.Compute, func(e *trace.Event) { e.Compute = flops })
}

func (b *builder) p2p(r int, k trace.Kind, peer, tag int, n int64, req uint64) *builder {
	return b.add(r, k, func(e *trace.Event) {
		e.Partner, e.Tag, e.Request = int32(peer), int32(tag), req
		if k.IsSend() {
			e.SendBytes = n
		} else {
			e.RecvBytes = n
		}
	})
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

type counters struct{ exit, wait, lat, bw float64 }

func rankCounters(r *Result, rank int) counters {
	p := r.PerRank[rank]
	return counters{p.Clock[0], p.Wait[0], p.Lat[0], p.BW[0]}
}

func checkCounters(t *testing.T, name string, got, want counters) {
	t.Helper()
	if !near(got.exit, want.exit) || !near(got.wait, want.wait) || !near(got.lat, want.lat) || !near(got.bw, want.bw) {
		t.Errorf("%s: got exit %g wait %g latency %g bandwidth %g, want exit %g wait %g latency %g bandwidth %g",
			name, got.exit, got.wait, got.lat, got.bw, want.exit, want.wait, want.lat, want.bw)
	}
}

// TestFigure2 replays the three point-to-point scenarios of the paper's
// Figure 2 (latency 2, bandwidth time 10, memory copy 2): P1 is rank 0,
// the receiver; P2 is rank 1, the sender of a 10-byte message.
func TestFigure2(t *testing.T) {
	for _, tc := range []struct {
		name           string
		recvAt, sendAt float64
		want           counters // at the receiver
	}{
		{"a early sender", 25, 8, counters{exit: 25}},
		{"b early receiver", 12, 18, counters{exit: 32, wait: 8, lat: 2, bw: 10}},
		{"c concurrent", 10, 5, counters{exit: 19, bw: 9}},
	} {
		b := newBuilder(2)
		b.compute(0, tc.recvAt).p2p(0, trace.Recv, 1, 7, 10, 0)
		b.compute(1, tc.sendAt).p2p(1, trace.Send, 0, 7, 10, 0)
		res, err := Replay(b.t, unitOptions(2))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		checkCounters(t, tc.name+" receiver", rankCounters(res, 0), tc.want)
		// The eager sender leaves after its memory copy, counted as
		// computation.
		checkCounters(t, tc.name+" sender", rankCounters(res, 1), counters{exit: tc.sendAt + 2})
		if got := res.PerRank[0].Comp; !near(got, tc.recvAt) {
			t.Errorf("%s: receiver computation %g, want %g", tc.name, got, tc.recvAt)
		}
	}
}

// TestFigure3 replays the collective of the paper's Figure 3: P1 enters
// at 3, the last member at 18; the collective's model time is latency 2
// and bandwidth time 10 (a 3-member bcast of 5 bytes, ⌈log2 3⌉ = 2 steps
// of α = 1 and 5β = 5).
func TestFigure3(t *testing.T) {
	b := newBuilder(3)
	for r, at := range []float64{3, 10, 18} {
		b.compute(r, at).add(r, trace.Bcast, func(e *trace.Event) { e.Partner, e.SendBytes = 0, 5 })
	}
	res, err := Replay(b.t, unitOptions(1))
	if err != nil {
		t.Fatal(err)
	}
	checkCounters(t, "P1", rankCounters(res, 0), counters{exit: 30, wait: 15, lat: 2, bw: 10})
	checkCounters(t, "P2", rankCounters(res, 1), counters{exit: 30, wait: 8, lat: 2, bw: 10})
	checkCounters(t, "P3", rankCounters(res, 2), counters{exit: 30, wait: 0, lat: 2, bw: 10})
}

// generated returns workload kind with its defaults, changed by f.
func generated(t testing.TB, kind string, f func(p *workload.Params)) trace.Source {
	t.Helper()
	p, err := workload.Defaults(kind)
	if err != nil {
		t.Fatal(err)
	}
	if f != nil {
		f(&p)
	}
	src, err := workload.New(kind, p)
	if err != nil {
		t.Fatal(err)
	}
	return src
}
