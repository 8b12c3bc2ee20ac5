package waitstate

import (
	"math"
	"testing"

	"kairos/trace"
)

// TestCollectiveViolations: a collective call that ends before a member
// whose data it receives entered breaks the clock condition; members
// that may leave early (a broadcast's root, a reduction's senders, a
// scan's first members) do not. Member 2 enters at 10, the others at 0;
// each leaves at its exit.
func TestCollectiveViolations(t *testing.T) {
	const both = sends | receives
	enter := []trace.Time{0, 0, 10}
	for _, tc := range []struct {
		kind trace.Kind
		root int32
		data []dataFlags
		exit []trace.Time
		want int
	}{
		{trace.Barrier, 0, []dataFlags{0, 0, 0}, []trace.Time{5, 11, 11}, 1},
		{trace.Allreduce, 0, []dataFlags{both, both, both}, []trace.Time{5, 6, 11}, 2},
		{trace.Allreduce, 0, []dataFlags{both, both, 0}, []trace.Time{5, 6, 11}, 0},           // member 2 sends nothing
		{trace.Bcast, 0, []dataFlags{sends, receives, receives}, []trace.Time{1, 5, 11}, 0},   // the root leaves first
		{trace.Bcast, 2, []dataFlags{receives, receives, sends}, []trace.Time{5, 11, 11}, 1},  // a receiver leaves before the root
		{trace.Reduce, 0, []dataFlags{both, sends, sends}, []trace.Time{5, 1, 11}, 1},         // the root before the latest sender
		{trace.Reduce, 2, []dataFlags{sends, sends, both}, []trace.Time{1, 1, 11}, 0},         // senders leave first
		{trace.Scan, 0, []dataFlags{both, both, both}, []trace.Time{1, 1, 11}, 0},             // members 0 and 1 need not wait for 2
		{trace.Scan, 0, []dataFlags{both, both, both}, []trace.Time{1, 1, 9}, 1},              // member 2 leaves before it entered
		{trace.Exscan, 0, []dataFlags{sends, both, both}, []trace.Time{1, 1, 11}, 0},          // nor in an exscan
		{trace.Gather, 1, []dataFlags{sends, both, sends}, []trace.Time{1, 5, 11}, 1},         // the root before member 2
		{trace.Scatter, 1, []dataFlags{receives, sends, receives}, []trace.Time{1, 0, 11}, 0}, // all after the root entered
		{trace.Allgather, 0, []dataFlags{both, both, both}, []trace.Time{10, 10, 11}, 0},      // an exit at the last entry is no violation
		{trace.ReduceScatter, 0, []dataFlags{both, both, both}, []trace.Time{9, 11, 11}, 1},
	} {
		c := &collective{kind: tc.kind, members: []int32{0, 1, 2}, calls: []int32{0, 0, 0}, root: tc.root, data: tc.data}
		if got := violations(c, enter, tc.exit, int(tc.root)); got != tc.want {
			t.Errorf("%v rooted at %d, exits %v: %d violations, want %d", tc.kind, tc.root, tc.exit, got, tc.want)
		}
	}
}

// TestNonBlockingCollective: an MPI_Ibarrier read as the barrier where
// its MPI_Wait completed it (its Request set) has the wait's times, not
// the post's: rank 0, which waited from 0 to 1, left before rank 2
// entered its wait at 60, all three having posted the barrier at 0. That
// is no clock-condition violation and no wait at a barrier (the OTF2
// archive of such a program had 6); the same calls of a blocking barrier
// are two.
func TestNonBlockingCollective(t *testing.T) {
	for _, c := range []struct {
		request    uint64
		violations int
	}{{7, 0}, {0, 2}} {
		b := build(
			[]trace.Event{call(trace.Barrier, 0, 1, req(c.request))},
			[]trace.Event{call(trace.Compute, 0, 30), call(trace.Barrier, 30, 31, req(c.request))},
			[]trace.Event{call(trace.Compute, 0, 60), call(trace.Barrier, 60, 61, req(c.request))},
		)
		a := analyze(t, b)
		if a.ClockViolations != c.violations {
			t.Errorf("request %d: %d clock-condition violations, want %d", c.request, a.ClockViolations, c.violations)
		}
		if c.request != 0 {
			wantWaits(t, a, nil)
		}
	}
}

// TestWaitsomeCompletesTogether: an MPI_Waitsome that completed two
// receives is read as a wait of each, the first taking no time at the
// call's entry (trace.ShareCallTime); the two complete together at the
// call's end, as in a waitall: no clock-condition violation (the first
// completed at the entry, before its message was sent), and the late
// sender is the one whose message arrived last (rank 1, 70 µs), not the
// first listed (DOLFIN's waitsomes, 10 violations).
func TestWaitsomeCompletesTogether(t *testing.T) {
	b := build(
		[]trace.Event{
			call(trace.Irecv, 0, 1, peer(1), req(1), bytes(8)),
			call(trace.Irecv, 1, 2, peer(2), req(2), bytes(8)),
			call(trace.Wait, 10, 10, req(2)),
			call(trace.Wait, 10, 100, req(1)),
		},
		[]trace.Event{call(trace.Compute, 0, 80), call(trace.Send, 80, 81, peer(0), bytes(8))},
		[]trace.Event{call(trace.Compute, 0, 20), call(trace.Send, 20, 21, peer(0), bytes(8))},
	)
	a := analyze(t, b)
	if a.ClockViolations != 0 {
		t.Errorf("%d clock-condition violations, want none", a.ClockViolations)
	}
	wantWaits(t, a, []Wait{{Rank: 0, Kind: LateSender, Seconds: 70, Causer: 1}})
}

// TestMatchedProbes: Kairos' tracer writes a matched probe (MPI_Mprobe,
// or the MPI_Improbe that matched after those that did not) as the
// irecv of its message, with the probe's time, and the MPI_Mrecv as its
// wait (mpi4py's receives). Rank 1 sends at 42 µs. The wait takes the
// probes' time: blocking, the irecv waited from 2 to 41 µs and the wait
// enters at 2.5 µs (39.5 µs late sender); in a loop, twenty failed
// probes of 1 µs (1 µs of work between them) and the matched one (0.5
// µs) make it enter 20.5 µs early, at 21 µs (21 µs). Read apart, no wait state was
// found and rank 0's probes were the cause of its waiting. An irecv that
// took less time than its wait, without probes, is not a probe (the last
// case): its late sender is the wait's alone.
func TestMatchedProbes(t *testing.T) {
	send := []trace.Event{call(trace.Compute, 0, 42), call(trace.Send, 42, 43, peer(0), bytes(8))}
	for _, c := range []struct {
		name     string
		events   func(probe uint32) []trace.Event
		late, at float64
	}{
		{"mprobe", func(uint32) []trace.Event {
			return []trace.Event{call(trace.Compute, 0, 2), call(trace.Irecv, 2, 41, peer(1), req(1), bytes(8)), call(trace.Waitall, 41.5, 44, req(1))}
		}, 39.5, 2.5},
		{"improbe loop", func(probe uint32) []trace.Event {
			var evs []trace.Event
			for i := range 20 {
				evs = append(evs, call(trace.Deferred, 1+2*float64(i), 2+2*float64(i), in(probe)))
			}
			return append(evs, call(trace.Irecv, 41, 41.5, peer(1), req(1), bytes(8)), call(trace.Wait, 41.5, 44, req(1)))
		}, 21, 21},
		{"irecv, then its wait", func(uint32) []trace.Event {
			return []trace.Event{call(trace.Irecv, 0, 1, peer(1), req(1), bytes(8)), call(trace.Wait, 30, 44, req(1))}
		}, 12, 30},
	} {
		tr, reg, add := handMade(2, "MPI_Improbe")
		add(0, c.events(reg[1])...)
		add(1, send...)
		a := analyze(t, &built{t: tr, main: reg[0]})
		if len(a.Waits) != 1 || a.Waits[0].Kind != LateSender || !near(a.Waits[0].Seconds, c.late) || !near(a.Waits[0].Start, c.at) ||
			a.Waits[0].Causer != 1 {
			t.Errorf("%s: wait states %+v, want rank 0's late sender of %g µs from %g µs caused by rank 1", c.name, a.Waits, c.late, c.at)
		}
		if len(a.Causes) == 0 || a.Causes[0].Rank != 1 || a.ClockViolations != 0 {
			t.Errorf("%s: causes %+v, %d clock violations, want rank 1's computation first", c.name, a.Causes, a.ClockViolations)
		}
		sum := a.Unexplained
		for _, c := range a.Causes {
			sum += c.Cost
		}
		if first := c.events(0)[0].Enter.Seconds(); math.Abs(sum-a.Waiting) > 1e-12 || math.Abs(a.RankTime-(44e-6-first+43e-6)) > 1e-12 {
			t.Errorf("%s: costs sum to %g s of %g s waiting; ranks' time %g s, run %g s", c.name, sum, a.Waiting, a.RankTime, a.Runtime)
		}
	}
}

// TestProbeThenReceive: a receive made right after probes (mpi4py's and
// Boost.MPI's receives probe for the size first: MPI_Mprobe, a loop of
// MPI_Improbe, read from OTF2 as deferred calls named by their region;
// MPI_Iprobe from DUMPI) waited in the probes: a late sender of 200 µs
// caused by the sender's computation, as a plain receive's, where the
// probing rank was named the cause before.
func TestProbeThenReceive(t *testing.T) {
	send := []trace.Event{call(trace.Compute, 0, 200), call(trace.Send, 200, 201, peer(0), bytes(8))}
	recv := call(trace.Recv, 200, 202, peer(1), bytes(8))
	for name, probing := range map[string]func(probe uint32) []trace.Event{
		"plain": func(uint32) []trace.Event { return []trace.Event{call(trace.Recv, 0, 202, peer(1), bytes(8))} },
		"mprobe": func(probe uint32) []trace.Event {
			return []trace.Event{call(trace.Deferred, 0, 200, in(probe)), recv}
		},
		"iprobe loop": func(uint32) []trace.Event {
			return []trace.Event{call(trace.Iprobe, 0, 1, peer(1)), call(trace.Compute, 1, 100), call(trace.Iprobe, 100, 101, peer(1)),
				call(trace.Compute, 101, 199), call(trace.Iprobe, 199, 200, peer(1)), recv}
		},
	} {
		meta := trace.NewMeta()
		probe := meta.AddRegion("MPI_Probe", 0)
		tr := trace.New(2, meta)
		for r, evs := range [][]trace.Event{probing(probe), send} {
			for i := range evs {
				tr.Ranks[r].Append(&evs[i])
			}
		}
		a, err := Analyze(tr, Options{Waits: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(a.Waits) != 1 || a.Waits[0].Kind != LateSender || !near(a.Waits[0].Seconds, 200) || a.Waits[0].Causer != 1 {
			t.Errorf("%s: wait states %+v, want rank 0's late sender of 200 µs caused by rank 1", name, a.Waits)
		}
		if len(a.Causes) == 0 || a.Causes[0].Rank != 1 {
			t.Errorf("%s: causes %+v, want rank 1's computation first", name, a.Causes)
		}
	}
}
