package waitstate

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"kairos/trace"
)

// Times in the hand-made traces are microseconds.
func us(x float64) trace.Time { return trace.Time(math.Round(x * 1e6)) }

// call is an event of a hand-made trace.
func call(k trace.Kind, enter, exit float64, set ...func(*trace.Event)) trace.Event {
	e := trace.NewEvent(k)
	e.Enter, e.Exit, e.HasTime = us(enter), us(exit), true
	for _, f := range set {
		f(&e)
	}
	return e
}

func peer(p int32) func(*trace.Event) { return func(e *trace.Event) { e.Partner = p } }
func req(q uint64) func(*trace.Event) { return func(e *trace.Event) { e.Request = q } }
func bytes(n int64) func(*trace.Event) {
	return func(e *trace.Event) { e.SendBytes, e.RecvBytes = n, n }
}
func in(region uint32) func(*trace.Event) { return func(e *trace.Event) { e.Region = region } }

// built is a hand-made trace with regions "work", "other" and
// "MPI_Test" under "main".
type built struct {
	t                       *trace.Trace
	main, work, other, test uint32
}

func build(ranks ...[]trace.Event) *built {
	meta := trace.NewMeta()
	b := &built{}
	b.main = meta.AddRegion("main", 0)
	b.work = meta.AddRegion("work", b.main)
	b.other = meta.AddRegion("other", b.main)
	b.test = meta.AddRegion("MPI_Test", b.main)
	b.t = trace.New(len(ranks), meta)
	for r, evs := range ranks {
		for i := range evs {
			if evs[i].Region == 0 {
				evs[i].Region = b.main
			}
			b.t.Ranks[r].Append(&evs[i])
		}
	}
	return b
}

// workThen returns ranks that work in "work" until their enter time, then
// make a call entered then.
func workThen(b *built, call func(enter float64) trace.Event, enters ...float64) [][]trace.Event {
	ranks := make([][]trace.Event, len(enters))
	for r, t := range enters {
		w := trace.NewEvent(trace.Compute)
		w.Enter, w.Exit, w.HasTime, w.Region = 0, us(t), true, b.work
		ranks[r] = []trace.Event{w, call(t)}
	}
	return ranks
}

func analyze(t *testing.T, b *built) *Analysis {
	t.Helper()
	a, err := Analyze(b.t, Options{Waits: true})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// near compares seconds with microseconds.
func near(got float64, wantUS float64) bool { return math.Abs(got-wantUS*1e-6) < 1e-12 }

// wantWaits checks the wait states: rank, kind, waiting (µs) and causer.
func wantWaits(t *testing.T, a *Analysis, want []Wait) {
	t.Helper()
	if len(a.Waits) != len(want) {
		t.Fatalf("%d wait states %+v, want %d", len(a.Waits), a.Waits, len(want))
	}
	for i, w := range want {
		g := a.Waits[i]
		if g.Rank != w.Rank || g.Kind != w.Kind || !near(g.Seconds, w.Seconds) || g.Causer != w.Causer {
			t.Errorf("wait %d: rank %d %s %.3f µs for %d, want rank %d %s %.3f µs for %d", i, g.Rank, g.Kind, g.Seconds*1e6, g.Causer,
				w.Rank, w.Kind, w.Seconds, w.Causer)
		}
	}
}

// cost is a cause as the tests check it: µs.
type cost struct {
	rank               int32
	where              string
	direct, propagated float64
}

func wantCosts(t *testing.T, a *Analysis, want []cost) {
	t.Helper()
	if len(a.Causes) != len(want) {
		var got []string
		for _, c := range a.Causes {
			got = append(got, c.Where())
		}
		t.Fatalf("%d causes %v, want %d", len(a.Causes), got, len(want))
	}
	for i, w := range want {
		c := a.Causes[i]
		if c.Rank != w.rank || c.Where() != w.where || !near(c.Direct, w.direct) || !near(c.Propagated, w.propagated) {
			t.Errorf("cause %d: rank %d %s direct %.4f propagated %.4f µs, want rank %d %s %.4f %.4f", i, c.Rank, c.Where(),
				c.Direct*1e6, c.Propagated*1e6, w.rank, w.where, w.direct, w.propagated)
		}
	}
	total := a.Unexplained
	for _, c := range a.Causes {
		total += c.Cost
	}
	if math.Abs(total-a.Waiting) > 1e-12 {
		t.Errorf("causes and unexplained sum to %g s, the waiting is %g s", total, a.Waiting)
	}
}

// TestWaitStateKinds checks each kind of wait state on small traces
// worked by hand, and the delay its causer is charged.
func TestWaitStateKinds(t *testing.T) {
	for _, c := range []struct {
		name  string
		ranks func(b *built) [][]trace.Event
		waits []Wait
		costs []cost
	}{{
		// Rank 1 receives at 2, rank 0 sends at 10: 8 µs, rank 0's 10
		// µs of work against rank 1's 2.
		name: "late sender, blocking",
		ranks: func(b *built) [][]trace.Event {
			return [][]trace.Event{
				{call(trace.Compute, 0, 10, in(b.work)), call(trace.Send, 10, 11, peer(1), bytes(8))},
				{call(trace.Compute, 0, 2, in(b.work)), call(trace.Recv, 2, 12, peer(0), bytes(8))},
			}
		},
		waits: []Wait{{Rank: 1, Kind: LateSender, Seconds: 8, Causer: 0}},
		costs: []cost{{0, "computation in main/work", 8, 0}},
	}, {
		// The wait is in the MPI_Wait of an Irecv: 10 - 3.
		name: "late sender, irecv and wait",
		ranks: func(b *built) [][]trace.Event {
			return [][]trace.Event{
				{call(trace.Compute, 0, 10, in(b.work)), call(trace.Isend, 10, 10.5, peer(1), req(1)), call(trace.Wait, 10.5, 11, req(1))},
				{call(trace.Irecv, 0, 0, peer(0), req(7)), call(trace.Compute, 0, 3, in(b.work)), call(trace.Wait, 3, 12, req(7))},
			}
		},
		waits: []Wait{{Rank: 1, Kind: LateSender, Seconds: 7, Causer: 0}},
		costs: []cost{{0, "computation in main/work", 7, 0}},
	}, {
		// An MPI_Test that finds the message missing completes nothing:
		// the wait that follows waits 10 - 3.5. Rank 0's work exceeds
		// rank 1's by 7, scaled by 6.5/7.
		name: "late sender, test then wait",
		ranks: func(b *built) [][]trace.Event {
			return [][]trace.Event{
				{call(trace.Compute, 0, 10, in(b.work)), call(trace.Isend, 10, 10.5, peer(1), req(1)), call(trace.Wait, 10.5, 11, req(1))},
				{call(trace.Irecv, 0, 0, peer(0), req(7)), call(trace.Compute, 0, 3, in(b.work)), call(trace.Test, 3, 3.5, req(7)),
					call(trace.Wait, 3.5, 12, req(7))},
			}
		},
		waits: []Wait{{Rank: 1, Kind: LateSender, Seconds: 6.5, Causer: 0}},
		costs: []cost{{0, "computation in main/work", 6.5, 0}},
	}, {
		// A waitall counts the message that came last: rank 1's, sent
		// at 15, 14 µs after rank 2 entered the waitall at 1.
		name: "late sender, waitall",
		ranks: func(b *built) [][]trace.Event {
			return [][]trace.Event{
				{call(trace.Compute, 0, 10, in(b.work)), call(trace.Send, 10, 11, peer(2))},
				{call(trace.Compute, 0, 15, in(b.work)), call(trace.Send, 15, 16, peer(2))},
				{call(trace.Irecv, 0, 0, peer(0), req(1)), call(trace.Irecv, 0, 0, peer(1), req(2)), call(trace.Compute, 0, 1, in(b.work)),
					call(trace.Waitall, 1, 17)},
			}
		},
		waits: []Wait{{Rank: 2, Kind: LateSender, Seconds: 14, Causer: 1}},
		costs: []cost{{1, "computation in main/work", 14, 0}},
	}, {
		// Rank 0's send blocks from 0 until rank 1 posts its receive at
		// 8: a late receiver, caused by rank 1's 8 µs of work.
		name: "late receiver",
		ranks: func(b *built) [][]trace.Event {
			return [][]trace.Event{
				{call(trace.Send, 0, 10, peer(1), bytes(1<<20))},
				{call(trace.Compute, 0, 8, in(b.work)), call(trace.Recv, 8, 10.5, peer(0), bytes(1<<20))},
			}
		},
		waits: []Wait{{Rank: 0, Kind: LateReceiver, Seconds: 8, Causer: 1}},
		costs: []cost{{1, "computation in main/work", 8, 0}},
	}, {
		// Enters at 5, 2 and 9: ranks 0 and 1 wait 4 and 7 for rank 2.
		name: "wait at N×N",
		ranks: func(b *built) [][]trace.Event {
			return workThen(b, func(t float64) trace.Event { return call(trace.Allreduce, t, 10, bytes(8)) }, 5, 2, 9)
		},
		waits: []Wait{{Rank: 1, Kind: WaitNxN, Seconds: 7, Causer: 2}, {Rank: 0, Kind: WaitNxN, Seconds: 4, Causer: 2}},
		costs: []cost{{2, "computation in main/work", 11, 0}},
	}, {
		name: "wait at barrier",
		ranks: func(b *built) [][]trace.Event {
			return [][]trace.Event{
				{call(trace.Compute, 0, 6, in(b.work)), call(trace.Barrier, 6, 7)},
				{call(trace.Compute, 0, 1, in(b.other)), call(trace.Barrier, 1, 7)},
			}
		},
		// Rank 1's computation is in another region: rank 0's is all
		// delay, 6 µs, and the wait is 5: scaled by 5/6.
		waits: []Wait{{Rank: 1, Kind: WaitBarrier, Seconds: 5, Causer: 0}},
		costs: []cost{{0, "computation in main/work", 5, 0}},
	}, {
		// The root enters at 8: rank 1 (at 3) waits 5; rank 2 (at 10)
		// does not.
		name: "late broadcast",
		ranks: func(b *built) [][]trace.Event {
			return workThen(b, func(t float64) trace.Event { return call(trace.Bcast, t, 12, peer(0), bytes(64)) }, 8, 3, 10)
		},
		waits: []Wait{{Rank: 1, Kind: LateBroadcast, Seconds: 5, Causer: 0}},
		costs: []cost{{0, "computation in main/work", 5, 0}},
	}, {
		// The root enters at 2 and waits for the latest sender, rank 2
		// at 9.
		name: "early reduce",
		ranks: func(b *built) [][]trace.Event {
			return workThen(b, func(t float64) trace.Event { return call(trace.Reduce, t, 12, peer(0), bytes(64)) }, 2, 6, 9)
		},
		waits: []Wait{{Rank: 0, Kind: EarlyReduce, Seconds: 7, Causer: 2}},
		costs: []cost{{2, "computation in main/work", 7, 0}},
	}, {
		// Enters at 9, 3 and 5: ranks 1 and 2 wait for rank 0.
		name: "early scan",
		ranks: func(b *built) [][]trace.Event {
			return workThen(b, func(t float64) trace.Event { return call(trace.Scan, t, 12, bytes(8)) }, 9, 3, 5)
		},
		waits: []Wait{{Rank: 1, Kind: EarlyScan, Seconds: 6, Causer: 0}, {Rank: 2, Kind: EarlyScan, Seconds: 4, Causer: 0}},
		costs: []cost{{0, "computation in main/work", 10, 0}},
	}, {
		name: "wait at finalize",
		ranks: func(b *built) [][]trace.Event {
			return [][]trace.Event{
				{call(trace.Init, 0, 1), call(trace.Compute, 1, 10, in(b.work)), call(trace.Finalize, 10, 11)},
				{call(trace.Init, 0, 1), call(trace.Compute, 1, 4, in(b.work)), call(trace.Finalize, 4, 11)},
			}
		},
		waits: []Wait{{Rank: 1, Kind: WaitFinalize, Seconds: 6, Causer: 0}},
		costs: []cost{{0, "computation in main/work", 6, 0}},
	}, {
		// A collective without payload does not synchronize.
		name: "allreduce of nothing",
		ranks: func(b *built) [][]trace.Event {
			return [][]trace.Event{
				{call(trace.Compute, 0, 5, in(b.work)), call(trace.Allreduce, 5, 6)},
				{call(trace.Allreduce, 0, 6)},
			}
		},
	}} {
		t.Run(c.name, func(t *testing.T) {
			b := build()
			b = build(c.ranks(b)...)
			a := analyze(t, b)
			wantWaits(t, a, c.waits)
			wantCosts(t, a, c.costs)
		})
	}
}

// TestDelayCosts checks the delay-cost formulas on traces worked by hand:
// the scale min(ω/(D+W), 1), the completion time of the previous
// synchronization point, and the long-term costs that wait states pass
// back along chains.
func TestDelayCosts(t *testing.T) {
	for _, c := range []struct {
		name  string
		ranks func(b *built) [][]trace.Event
		waits []Wait
		costs []cost
		kinds []KindTotal // µs
	}{{
		// A chain: A (rank 0) is late, B (1) waits 8 for it and then C
		// (2) waits 8 for B. B's interval to its send holds nothing but
		// the wait (D = 0, W = 8): C's wait propagates, whole, to B's,
		// whose handler charges A's excess work 8 directly (B's wait)
		// and 8 propagated (C's).
		name: "chain",
		ranks: func(b *built) [][]trace.Event {
			return [][]trace.Event{
				{call(trace.Compute, 0, 10, in(b.work)), call(trace.Send, 10, 10, peer(1))},
				{call(trace.Compute, 0, 2, in(b.work)), call(trace.Recv, 2, 10, peer(0)), call(trace.Send, 10, 10, peer(2))},
				{call(trace.Compute, 0, 2, in(b.work)), call(trace.Recv, 2, 10, peer(1))},
			}
		},
		waits: []Wait{{Rank: 1, Kind: LateSender, Seconds: 8, Causer: 0}, {Rank: 2, Kind: LateSender, Seconds: 8, Causer: 1}},
		costs: []cost{{0, "computation in main/work", 8, 8}},
		kinds: []KindTotal{{Kind: LateSender, Count: 2, Seconds: 16, Direct: 8, Indirect: 8}},
	}, {
		// The same chain with a transfer: B leaves its receive 1 µs after
		// A's send, and C waits 9. B's interval has its receive's 1 µs
		// after the wait (D = 1, an MPI_Recv that C has not) and the
		// wait (W = 8): 1 is B's, 8 propagate to A.
		name: "chain with transfer",
		ranks: func(b *built) [][]trace.Event {
			return [][]trace.Event{
				{call(trace.Compute, 0, 10, in(b.work)), call(trace.Send, 10, 10, peer(1))},
				{call(trace.Compute, 0, 2, in(b.work)), call(trace.Recv, 2, 11, peer(0)), call(trace.Send, 11, 11, peer(2))},
				{call(trace.Compute, 0, 2, in(b.work)), call(trace.Recv, 2, 12, peer(1))},
			}
		},
		waits: []Wait{{Rank: 1, Kind: LateSender, Seconds: 8, Causer: 0}, {Rank: 2, Kind: LateSender, Seconds: 9, Causer: 1}},
		costs: []cost{{0, "computation in main/work", 8, 8}, {1, "MPI_Recv in main", 1, 0}},
		kinds: []KindTotal{{Kind: LateSender, Count: 2, Seconds: 17, Direct: 9, Indirect: 8}},
	}, {
		// Rank 1 waits 6 for rank 0, whose interval has 6 µs of work
		// (rank 1 worked in another region), 2 µs of MPI_Recv after
		// its own wait of 4 for rank 2: D = 8, W = 4, the scale is
		// 6/12. Work is charged 3, MPI_Recv 1, and rank 0's wait passes
		// 2 on: rank 2's 4 µs of excess work is charged 4 directly and
		// 2 propagated.
		name: "scaled",
		ranks: func(b *built) [][]trace.Event {
			return [][]trace.Event{
				{call(trace.Compute, 0, 6, in(b.work)), call(trace.Recv, 6, 12, peer(2)), call(trace.Send, 12, 12.5, peer(1))},
				{call(trace.Compute, 0, 6, in(b.other)), call(trace.Recv, 6, 13, peer(0))},
				{call(trace.Compute, 0, 10, in(b.work)), call(trace.Send, 10, 10.5, peer(0))},
			}
		},
		waits: []Wait{{Rank: 0, Kind: LateSender, Seconds: 4, Causer: 2}, {Rank: 1, Kind: LateSender, Seconds: 6, Causer: 0}},
		costs: []cost{{2, "computation in main/work", 4, 2}, {0, "computation in main/work", 3, 0}, {0, "MPI_Recv in main", 1, 0}},
		kinds: []KindTotal{{Kind: LateSender, Count: 2, Seconds: 10, Direct: 8, Indirect: 2}},
	}, {
		// Two exchanges: the second interval starts at the first
		// synchronization point, the send rank 0 left at 11, where rank
		// 1 still spent 1 µs (its receive's completion time) that counts
		// as MPI_Recv. Rank 0 then works 10 and rank 1 2 (D = 8); the
		// wait of 7 charges work 7/8 of it.
		name: "completion time",
		ranks: func(b *built) [][]trace.Event {
			return [][]trace.Event{
				{call(trace.Compute, 0, 10, in(b.work)), call(trace.Send, 10, 11, peer(1)),
					call(trace.Compute, 11, 21, in(b.work)), call(trace.Send, 21, 22, peer(1))},
				{call(trace.Compute, 0, 2, in(b.work)), call(trace.Recv, 2, 12, peer(0)),
					call(trace.Compute, 12, 14, in(b.work)), call(trace.Recv, 14, 23, peer(0))},
			}
		},
		waits: []Wait{{Rank: 1, Kind: LateSender, Seconds: 8, Causer: 0}, {Rank: 1, Kind: LateSender, Seconds: 7, Causer: 0}},
		costs: []cost{{0, "computation in main/work", 15, 0}},
		kinds: []KindTotal{{Kind: LateSender, Count: 2, Seconds: 15, Direct: 15}},
	}, {
		// A barrier's wait propagates through a late sender: rank 1
		// waits for rank 0's late message, enters the barrier last, and
		// rank 2 waits there for it.
		name: "collective after late sender",
		ranks: func(b *built) [][]trace.Event {
			return [][]trace.Event{
				{call(trace.Compute, 0, 10, in(b.work)), call(trace.Send, 10, 10, peer(1)), call(trace.Barrier, 10, 12)},
				{call(trace.Compute, 0, 2, in(b.work)), call(trace.Recv, 2, 11, peer(0)), call(trace.Barrier, 11, 12)},
				{call(trace.Compute, 0, 2, in(b.work)), call(trace.Barrier, 2, 12)},
			}
		},
		// Rank 1's barrier interval since the start: work 2, receive 1
		// after its wait of 8. Rank 2 waits 9 at the barrier for it and
		// for rank 0 (0 µs). D = 1 (the receive), W = 8: 8 propagate to
		// rank 0's work, and its own wait of 8 at the late sender is
		// charged there directly.
		waits: []Wait{{Rank: 1, Kind: LateSender, Seconds: 8, Causer: 0}, {Rank: 2, Kind: WaitBarrier, Seconds: 9, Causer: 1},
			{Rank: 0, Kind: WaitBarrier, Seconds: 1, Causer: 1}},
		costs: []cost{{0, "computation in main/work", 8, 8}, {1, "MPI_Recv in main", 2, 0}},
		kinds: []KindTotal{{Kind: WaitBarrier, Count: 2, Seconds: 10, Direct: 2, Indirect: 8},
			{Kind: LateSender, Count: 1, Seconds: 8, Direct: 8}},
	}} {
		t.Run(c.name, func(t *testing.T) {
			b := build()
			b = build(c.ranks(b)...)
			a := analyze(t, b)
			wantWaits(t, a, c.waits)
			wantCosts(t, a, c.costs)
			if len(a.Kinds) != len(c.kinds) {
				t.Fatalf("kinds %+v, want %+v", a.Kinds, c.kinds)
			}
			for i, k := range c.kinds {
				g := a.Kinds[i]
				if g.Kind != k.Kind || g.Count != k.Count || !near(g.Seconds, k.Seconds) || !near(g.Direct, k.Direct) || !near(g.Indirect, k.Indirect) {
					t.Errorf("kind %d: %s %d %.3f direct %.3f indirect %.3f µs, want %s %d %.3f %.3f %.3f", i, g.Kind, g.Count,
						g.Seconds*1e6, g.Direct*1e6, g.Indirect*1e6, k.Kind, k.Count, k.Seconds, k.Direct, k.Indirect)
				}
			}
		})
	}
}

// TestCriticalPath follows the late sender back: rank 1 ends last, its
// receive after the wait (2 µs) is on the path, then rank 0's work (10).
func TestCriticalPath(t *testing.T) {
	b := build()
	b = build(
		[]trace.Event{call(trace.Compute, 0, 10, in(b.work)), call(trace.Send, 10, 11, peer(1))},
		[]trace.Event{call(trace.Compute, 0, 2, in(b.work)), call(trace.Recv, 2, 12, peer(0))},
	)
	cp := analyze(t, b).CriticalPath
	if !near(cp.Seconds, 12) || len(cp.Ranks) != 2 || cp.Ranks[0].Rank != 0 || !near(cp.Ranks[0].Seconds, 10) || !near(cp.Ranks[1].Seconds, 2) {
		t.Fatalf("critical path %+v", cp)
	}
	// Work: 10 on the path, (10 + 2)/2 per rank; MPI_Recv: 2, (0 + 2)/2.
	want := []PathActivity{{Activity: "computation", CallPath: "main/work", Seconds: 10, Mean: 6, Imbalance: 4},
		{Activity: "MPI_Recv", CallPath: "main", Seconds: 2, Mean: 1, Imbalance: 1}}
	if len(cp.Activities) != len(want) {
		t.Fatalf("activities %+v", cp.Activities)
	}
	for i, w := range want {
		g := cp.Activities[i]
		if g.Activity != w.Activity || g.CallPath != w.CallPath || !near(g.Seconds, w.Seconds) || !near(g.Mean, w.Mean) || !near(g.Imbalance, w.Imbalance) {
			t.Errorf("activity %d: %+v, want %+v (µs)", i, g, w)
		}
	}
}

// TestSpannedCalls reads point-to-point events written from post to
// completion (the seed authors' format) as non-blocking calls: rank 0
// posts a receive at 0 and a send at 1 and waits from 1 for rank 1's
// message, sent at 10.
func TestSpannedCalls(t *testing.T) {
	b := build()
	b = build(
		[]trace.Event{call(trace.Recv, 0, 12, peer(1)), call(trace.Send, 1, 11, peer(1))},
		[]trace.Event{call(trace.Compute, 0, 10, in(b.work)), call(trace.Send, 10, 10, peer(0)), call(trace.Recv, 10, 11.5, peer(0))},
	)
	a := analyze(t, b)
	wantWaits(t, a, []Wait{{Rank: 0, Kind: LateSender, Seconds: 9, Causer: 1}})
	// Rank 0 posted for 1 µs before it waited (other MPI time, not
	// work): rank 1's work is charged the whole wait.
	wantCosts(t, a, []cost{{1, "computation in main/work", 9, 0}})
	if !near(a.RankTime, 12+11.5) {
		t.Errorf("rank time %g s, want 23.5 µs", a.RankTime)
	}
}

// TestBadTraces: traces that make no wait states, or are not timed.
func TestBadTraces(t *testing.T) {
	untimedEv := trace.NewEvent(trace.Send)
	untimedEv.Partner = 1
	untimed := trace.New(2, trace.NewMeta())
	untimed.Ranks[0].Append(&untimedEv)
	if _, err := Analyze(untimed, Options{}); !errors.Is(err, ErrUntimed) {
		t.Errorf("untimed trace: %v", err)
	}
	if _, err := Analyze(trace.New(0, trace.NewMeta()), Options{}); err == nil {
		t.Error("no ranks: no error")
	}
	// Ranks without events (an archive with no MPI call): no wait states,
	// and a report that says so.
	empty, err := Analyze(trace.New(2, trace.NewMeta()), Options{})
	if err != nil || empty.Waiting != 0 {
		t.Fatalf("ranks without events: %v", err)
	}
	var out strings.Builder
	if err := empty.WriteReport(&out, 5); err != nil || !strings.Contains(out.String(), "Critical path: 0 s (the run: 0 s).\n") {
		t.Errorf("ranks without events: %v\n%s", err, out.String())
	}
	// Unmatched messages, a wait of an unknown request, a collective
	// one rank misses, a partner out of range, a receive from any
	// source: no wait states, counted.
	b := build(
		[]trace.Event{call(trace.Recv, 0, 5, peer(1)), call(trace.Wait, 5, 6, req(9)), call(trace.Allreduce, 6, 7, bytes(8)),
			call(trace.Send, 7, 8, peer(7)), call(trace.Recv, 8, 9, peer(trace.AnySource))},
		[]trace.Event{call(trace.Compute, 0, 9)},
	)
	a := analyze(t, b)
	if a.Waiting != 0 || len(a.Causes) != 0 || a.Unmatched != 4 {
		t.Errorf("waiting %g, %d causes, %d unmatched; want 0, 0, 4", a.Waiting, len(a.Causes), a.Unmatched)
	}
}

// TestAlltoallvNotAnalysed: rank 1 enters an MPI_Alltoallv 20 µs after
// rank 0, and both leave at 30 µs. As in Scalasca, an alltoallv makes no
// wait state (it may be a sparse exchange), and the summary says how much
// time that leaves out: 40 µs of the ranks' 60, where it said only that
// no rank waited (an FFT's all-to-all time, 0.08 to 0.23 s a rank).
func TestAlltoallvNotAnalysed(t *testing.T) {
	b := build()
	counts := func(e *trace.Event) { e.SendCounts, e.RecvCounts = []int64{8, 8}, []int64{8, 8} }
	b = build(workThen(b, func(enter float64) trace.Event { return call(trace.Alltoallv, enter, 30, counts) }, 0, 20)...)
	a := analyze(t, b)
	if a.Waiting != 0 || !near(a.Alltoallv, 40) {
		t.Fatalf("waiting %g s, alltoallv %g s; want none and 40 µs", a.Waiting, a.Alltoallv)
	}
	var out strings.Builder
	if err := a.WriteSummary(&out, 3); err != nil || !strings.Contains(out.String(), "Not analysed: 40") {
		t.Errorf("summary %q (%v): want the 40 µs of MPI_Alltoallv not analysed", out.String(), err)
	}
}

// TestPollingSpans: a rank that polls (a thousand failed MPI_Test, work
// between them) before its late receive, and one that probes before a
// blocking receive, are analysed as they are when each local call keeps
// a span of its own, the polling loop in a few spans.
func TestPollingSpans(t *testing.T) {
	tr, reg, add := handMade(2, "MPI_Test", "MPI_Iprobe")
	main, test, probe := reg[0], reg[1], reg[2]
	add(0, call(trace.Init, 0, 1), call(trace.Irecv, 1, 1.5, peer(1), req(1)))
	for i := range 1000 { // 0.5 µs of work, then 0.5 µs in MPI_Test
		add(0, call(trace.Deferred, 2+float64(i), 2.5+float64(i), in(test)))
	}
	add(0, call(trace.Wait, 1002, 1500, req(1)), call(trace.Send, 1500, 1501, peer(1)), call(trace.Finalize, 1501, 1502))
	add(1, call(trace.Init, 0, 1), call(trace.Send, 1499, 1500, peer(0)))
	for i := range 200 { // probes for rank 0's message, which comes at 1500
		add(1, call(trace.Deferred, 1500.5+float64(i)*0.01, 1500.505+float64(i)*0.01, in(probe)))
	}
	add(1, call(trace.Recv, 1503, 1504, peer(0)), call(trace.Finalize, 1504, 1505))
	b := &built{t: tr, main: main}
	folded := analyze(t, b)
	foldLocal = false
	defer func() { foldLocal = true }()
	if each := analyze(t, b); !reflect.DeepEqual(folded, each) {
		t.Errorf("folded local calls:\n%+v\neach its own span:\n%+v", folded, each)
	}
	foldLocal = true
	rd, err := readRank(tr, 0, newActivities(tr.Meta()), sizes{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rd.spans) > 8 {
		t.Errorf("rank 0 holds %d spans, want its polling loop in a few", len(rd.spans))
	}
}

// TestPollingWaits: a rank that polls for a late message with failed
// MPI_Test (1 µs of work, then 1 µs in the test, forty times) waits for
// its sender in the tests too, and a rank waiting for the poller is
// delayed by the sender's work, not by the poller's tests. Rank 1 works
// until 100 µs, then sends to rank 0, which posted its receive at 1 µs,
// polled from 2 to 82 µs and waits from 82 µs; rank 0 then sends to
// rank 2, which waits from 1 µs. Rank 0's wait takes its forty tests'
// 40 µs: it starts at 42 µs and waits 58 µs for rank 1 (18 µs without
// them, the rest blamed on its MPI_Test). A poll that a completion does
// not end (one then a send, below) stays an activity. The work between
// the tests counts alike whether the trace has it as the time between
// calls (OTF2's) or as events.
func TestPollingWaits(t *testing.T) {
	for _, events := range []bool{false, true} {
		t.Run(fmt.Sprintf("work as events=%v", events), func(t *testing.T) { pollingWaits(t, events) })
	}
}

func pollingWaits(t *testing.T, events bool) {
	tr, reg, add := handMade(3, "work", "MPI_Test")
	main, work, test := reg[0], reg[1], reg[2]
	add(0, call(trace.Init, 0, 1), call(trace.Irecv, 1, 2, peer(1), req(1)))
	for i := range 40 {
		at := 2 + 2*float64(i)
		if events {
			add(0, call(trace.Compute, at, at+1))
		}
		add(0, call(trace.Deferred, at+1, at+2, in(test)))
	}
	add(0, call(trace.Wait, 82, 102, req(1)), call(trace.Deferred, 102, 102.5, in(test)),
		call(trace.Send, 102.5, 103, peer(2)), call(trace.Finalize, 103, 104))
	add(1, call(trace.Init, 0, 1), call(trace.Compute, 1, 100, in(work)), call(trace.Send, 100, 101, peer(0)),
		call(trace.Finalize, 103, 104))
	add(2, call(trace.Init, 0, 1), call(trace.Recv, 1, 103, peer(0)), call(trace.Finalize, 103, 104))
	a := analyze(t, &built{t: tr, main: main})
	wantWaits(t, a, []Wait{
		{Rank: 2, Kind: LateSender, Seconds: 101.5, Causer: 0},
		{Rank: 0, Kind: LateSender, Seconds: 58, Causer: 1},
	})
	wantCosts(t, a, []cost{
		{1, "computation in main/work", 58, 58}, // rank 0's wait, and through it rank 2's
		{0, "computation in main", 40, 0},       // the work between the tests
		{0, "MPI_Wait in main", 2, 0},           // the message's transfer after its send
		{0, "MPI_Irecv in main", 1, 0},
		{0, "MPI_Test in main", 0.5, 0},
	})
}

// TestPollingTestsome: failed tests, then a test that completes two
// receives, read as a wait of each (the first taking no time at the
// call's entry, 30 µs): the tests' 10 µs go to the wait completing the
// call's requests, which then starts at 20 µs and waits 28 µs for the
// later sender (rank 2, at 48 µs). Read apart, the first wait would have
// completed its message at 30 µs, before it was sent.
func TestPollingTestsome(t *testing.T) {
	tr, reg, add := handMade(3, "MPI_Testsome")
	main, test := reg[0], reg[1]
	add(0, call(trace.Init, 0, 1), call(trace.Irecv, 1, 2, peer(1), req(1)), call(trace.Irecv, 2, 3, peer(2), req(2)))
	for i := range 10 {
		add(0, call(trace.Deferred, 4+2*float64(i), 5+2*float64(i), in(test)))
	}
	add(0, call(trace.Wait, 30, 30, req(1)), call(trace.Wait, 30, 50, req(2)), call(trace.Finalize, 50, 51))
	add(1, call(trace.Init, 0, 1), call(trace.Send, 45, 46, peer(0)), call(trace.Finalize, 50, 51))
	add(2, call(trace.Init, 0, 1), call(trace.Send, 48, 49, peer(0)), call(trace.Finalize, 50, 51))
	a := analyze(t, &built{t: tr, main: main})
	wantWaits(t, a, []Wait{{Rank: 0, Kind: LateSender, Seconds: 28, Causer: 2}})
	if a.ClockViolations != 0 {
		t.Errorf("%d clock-condition violations, want none", a.ClockViolations)
	}
}

// handMade returns an empty trace of n ranks with region "main" and the
// named regions under it (their ids in that order, main first), and a
// function that appends events to a rank, in main where they name no
// region.
func handMade(n int, names ...string) (*trace.Trace, []uint32, func(r int, evs ...trace.Event)) {
	meta := trace.NewMeta()
	reg := []uint32{meta.AddRegion("main", 0)}
	for _, name := range names {
		reg = append(reg, meta.AddRegion(name, reg[0]))
	}
	tr := trace.New(n, meta)
	return tr, reg, func(r int, evs ...trace.Event) {
		for i := range evs {
			if evs[i].Region == 0 {
				evs[i].Region = reg[0]
			}
			tr.Ranks[r].Append(&evs[i])
		}
	}
}
