package pattern

import (
	"math/rand/v2"
	"slices"
	"testing"

	"kairos/trace"
)

// ringTrace builds a timed halo exchange on a periodic ring of n ranks:
// every iteration, in the user function "exchange", each rank computes
// (1 ms ± 3 % of seeded noise), posts Isends and Irecvs to both
// neighbours and waits for them with MPI_Waitall, which returns 5 µs after
// both neighbours' sends were posted. Iterations start on a fixed 5 ms
// period, as a time-stepped code with slack does, so a delay does not
// propagate. delayed[k] adds that much computation to rank slowRank in
// iteration k.
func ringTrace(n, iters, slowRank int, delayed map[int]trace.Time) *trace.Trace {
	const us = trace.Time(1e6)
	meta := trace.NewMeta()
	main := meta.AddRegion("main", 0)
	exch := meta.AddRegion("exchange", main)
	tr := trace.New(n, meta)
	rng := rand.New(rand.NewPCG(7, 11))
	start := make([]trace.Time, n)
	for k := range iters {
		for r := range n {
			c := 1000*us + trace.Time(rng.IntN(61)-30)*us
			if r == slowRank {
				c += delayed[k]
			}
			start[r] = trace.Time(k)*5000*us + c
		}
		for r := range n {
			left, right := (r+n-1)%n, (r+1)%n
			t := start[r]
			add := func(e trace.Event, exit trace.Time) {
				e.Region, e.HasTime, e.Enter, e.Exit = exch, true, t, exit
				tr.Ranks[r].Append(&e)
				t = exit
			}
			comp := trace.NewEvent(trace.Compute)
			comp.Region, comp.HasTime, comp.Enter, comp.Exit = exch, true, trace.Time(k)*5000*us, start[r]
			tr.Ranks[r].Append(&comp)
			for i, p := range []int{left, right, left, right} {
				e := trace.NewEvent(trace.Isend)
				if i >= 2 {
					e.Kind = trace.Irecv
					e.RecvBytes = 4096
				} else {
					e.SendBytes = 4096
				}
				e.Partner, e.Request = int32(p), uint64(i+1)
				add(e, t+us)
			}
			arrive := max(start[left], start[right]) + us + 5*us
			add(trace.NewEvent(trace.Waitall), max(t, arrive)+us)
		}
	}
	return tr
}

// TestInjectedDelay checks that the iterations where one rank computes
// longer, and only they, are slow, with that rank as late sender.
func TestInjectedDelay(t *testing.T) {
	const slowRank = 5
	delayed := map[int]trace.Time{7: 400e6, 23: 250e6, 41: 600e6}
	a, err := Analyze(ringTrace(8, 60, slowRank, delayed), DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Comm) != 1 || a.Comm[0].Frequency != 60 || a.Comm[0].Ranks != 8 || a.Comm[0].Events != 32 {
		t.Fatalf("patterns %+v", a.Comm)
	}
	var got []int
	for _, s := range a.Slow {
		got = append(got, s.Position-1)
		if s.LastStart != slowRank || s.Late != "late sender" {
			t.Errorf("instance %d: last to start %d (%s), want %d as late sender", s.Position, s.LastStart, s.Late, slowRank)
		}
		if !(s.Duration > s.Threshold) || s.Bytes != 8*2*4096 || s.Group != 60 {
			t.Errorf("instance %d: %+v", s.Position, s)
		}
	}
	if want := []int{7, 23, 41}; !slices.Equal(got, want) {
		t.Errorf("slow iterations %v, want %v", got, want)
	}
	if len(a.Phases) == 0 || a.Phases[0].Functions[0] != "exchange" {
		t.Errorf("phases %+v", a.Phases)
	}
	for _, s := range a.Slow {
		t.Logf("CP%d at %d: %.0f µs, median %.0f, threshold %.0f, M %.1f", s.Pattern, s.Position, s.Duration, s.Median, s.Threshold, s.Z)
	}
	calm, err := Analyze(ringTrace(8, 60, slowRank, nil), DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if len(calm.Slow) != 0 {
		t.Errorf("without delays, %d slow instances", len(calm.Slow))
	}
}

// TestLatenessNeedsTwo: the last process to start an instance is late
// for the others; an instance of one process (a collective on a
// communicator of one, as GPAW's) has none.
func TestLatenessNeedsTwo(t *testing.T) {
	for _, tc := range []struct {
		ranks []int32
		kind  trace.Kind
		want  string
	}{
		{[]int32{0, 1}, trace.Allreduce, "late process"},
		{[]int32{3}, trace.Allreduce, ""},
		{[]int32{0, 1}, trace.Isend, "late sender"},
		{[]int32{0, 1}, trace.Recv, "late receiver"},
	} {
		in := Instance{Ranks: tc.ranks, lastKind: tc.kind}
		if got := in.Lateness(); got != tc.want {
			t.Errorf("%v on ranks %v: %q, want %q", tc.kind, tc.ranks, got, tc.want)
		}
	}
}

// TestLocalCallsAreComputation: the local MPI calls around a ring's
// computation (MPI_Wtime before and after it, which DUMPI records) are
// computation, as the time between them: the 60 steps are 60 pattern
// instances with them as without. Before, the computation fell between
// two local calls, the steps began where the longest of the small gaps
// left was, after rank 0's irecv and before the others', and one
// instance was found (DUMPI's MEEP 48 instead of 12,047).
func TestLocalCallsAreComputation(t *testing.T) {
	const steps, n = 60, 3
	build := func(local bool) *trace.Trace {
		tr := trace.New(n, trace.NewMeta())
		for r := range n {
			at, req := trace.Time(0), uint64(0)
			add := func(k trace.Kind, peer int32, d float64, id uint64) {
				e := trace.NewEvent(k)
				e.HasTime, e.Enter, e.Exit, e.Partner, e.Request = true, at, at+trace.FromSeconds(d), peer, id
				if k == trace.Isend {
					e.SendBytes = 800
				} else if k == trace.Irecv {
					e.RecvBytes = 800
				}
				tr.Ranks[r].Append(&e)
				at = e.Exit + trace.FromSeconds(1e-5)
				if k == trace.Irecv && r == 0 { // rank 0 waits longer before its isends
					at += trace.FromSeconds(2e-5)
				}
			}
			for range steps {
				if local {
					add(trace.Local, trace.NoRank, 1e-7, 0)
				}
				at += trace.FromSeconds(1e-3) // computation
				if local {
					add(trace.Local, trace.NoRank, 1e-7, 0)
				}
				req += 2
				add(trace.Irecv, int32((r+n-1)%n), 1e-6, req-1)
				add(trace.Isend, int32((r+1)%n), 1e-6, req)
				add(trace.Wait, trace.NoRank, 2e-5, req-1)
				add(trace.Wait, trace.NoRank, 1e-6, req)
			}
		}
		return tr
	}
	for _, local := range []bool{false, true} {
		p, err := Detect(build(local))
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Sequence) != steps {
			t.Errorf("local calls %v: %d pattern instances, want %d", local, len(p.Sequence), steps)
		}
	}
}
