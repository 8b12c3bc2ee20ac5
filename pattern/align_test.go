package pattern

import (
	"strings"
	"testing"

	"kairos/trace"
)

// pingPongTrace is NetPIPE's or a latency benchmark's loop on 2 ranks:
// rank 0 sends to rank 1 and receives its reply, n times, each rank
// computing between its send and its receive (work µs) and little
// between its receive and its send. Each rank's longest computation then
// comes before its receive, so that, rank by rank, both loops would
// begin there: rank 0 as R1·S1, rank 1 as R0·S0, which do not pair.
func pingPongTrace(n int, work trace.Time) *trace.Trace { return pingPongWaitall(n, work, false) }

// pingPongWaitall is pingPongTrace, rank 0 sending with MPI_Isend and completing
// each send with an MPI_Waitall at once if waitall: rank 0's contexts
// are then R1·S1, its program's own.
func pingPongWaitall(n int, work trace.Time, waitall bool) *trace.Trace {
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
		for i := range n {
			if r == 0 && waitall {
				e := trace.NewEvent(trace.Isend)
				e.Partner, e.SendBytes, e.Request = 1, 8, uint64(i+1)
				at += us / 10
				e.HasTime, e.Enter, e.Exit = true, at, at+us
				at += us
				tr.Ranks[0].Append(&e)
				w := trace.NewEvent(trace.Waitall)
				w.Requests = []uint64{uint64(i + 1)}
				w.HasTime, w.Enter, w.Exit = true, at, at+us
				at += us
				tr.Ranks[0].Append(&w)
				call(trace.Recv, work)
			} else if r == 0 {
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
		{"consistent", [][]offset{{{0, 0}}, {{0, 0}}}, nil, 0},
		{"ping-pong", [][]offset{{{0, 0}}, {{0, 1}}}, nil, 1},
		{"refused", [][]offset{{{0, 0}}, {{0, 1}}}, func(int32) bool { return false }, 0},
		{"two partners", [][]offset{{{0, 0}, {2, 0}}, {{0, 1}}, {{2, 1}}}, nil, 1},
		{"no partner", [][]offset{nil, nil, nil}, nil, 0},
		{"three positions, turn two", [][]offset{{{2, 0}}, {{2, 0}}, {{2, 1}}}, nil, 2},
		// Rank 0 and rank 2 disagree: rank 1 (the table's) follows rank 0,
		// aligned already; rank 2 will turn to match it.
		{"the lower partner first", [][]offset{{{0, 0}, {2, 0}}, {{0, 1}, {2, 0}}}, nil, 1},
		{"the lower partner kept", [][]offset{{{0, 1}, {2, 0}}, {{0, 1}, {2, 1}}}, nil, 0},
		// Every rotation as good: the one where fewer requests are
		// pending (pending's table below).
		{"fewer pending", [][]offset{nil, nil, nil}, nil, 2},
	} {
		ok := c.ok
		if ok == nil {
			ok = func(int32) bool { return true }
		}
		below := func(q int32) bool { return q < 1 } // the table's rank is 1
		pending := func(j int32) int32 { return []int32{2, 1, 0}[j] }
		if c.name != "fewer pending" {
			pending = nil
		}
		if got, _ := bestTurn(c.off, below, ok, pending, false); got != c.want {
			t.Errorf("%s: turn %d, want %d", c.name, got, c.want)
		}
	}
}

// biRingTrace is a ring of n ranks exchanging both ways each of steps
// iterations (send right, receive from the left, send left, receive from
// the right), each rank with its longest computation before a different
// call of the four, so that rank by rank the loops begin at different
// calls.
func biRingTrace(n, steps int) *trace.Trace { return biRingReduced(n, steps, 0) }

// biRingReduced is biRingTrace where every every steps a step begins
// with an MPI_Barrier and ends with an MPI_Allreduce (of diagnostics);
// every 0: never.
func biRingReduced(n, steps, every int) *trace.Trace {
	const us = trace.Time(1e6)
	tr := trace.New(n, trace.NewMeta())
	for r := range n {
		right, left := int32((r+1)%n), int32((r+n-1)%n)
		at := trace.Time(0)
		call := func(i int, k trace.Kind, partner int32) {
			e := trace.NewEvent(k)
			e.Partner, e.SendBytes = partner, 64
			if k == trace.Recv {
				e.SendBytes, e.RecvBytes = 0, 64
			}
			at += us / 10
			if i == r%4 {
				at += 50 * us
			}
			e.HasTime, e.Enter, e.Exit = true, at, at+us
			at += us
			tr.Ranks[r].Append(&e)
		}
		for s := range steps {
			reduced := every > 0 && s%every == every-1
			if reduced {
				call(4, trace.Barrier, trace.NoRank)
			}
			call(0, trace.Send, right)
			call(1, trace.Recv, left)
			call(2, trace.Send, left)
			call(3, trace.Recv, right)
			if reduced {
				call(4, trace.Allreduce, trace.NoRank)
			}
		}
	}
	return tr
}

// TestAlignRing checks that a ring's exchanges are cut step by step when
// its ranks' loops begin at four different calls: each rank turns to
// match its lower neighbour, then its upper one (already turned), and
// the last closes the ring.
func TestAlignRing(t *testing.T) {
	const n, steps = 4, 100
	p, err := Detect(biRingTrace(n, steps))
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range p.Sequence {
		if in.Events > 3*4*n {
			t.Fatalf("instance %d has %d calls, want at most %d (about a step's %d): steps are chained", in.Position, in.Events, 3*4*n, 4*n)
		}
	}
	if len(p.Sequence) < steps-4 {
		t.Errorf("%d instances, want about %d (one a step)", len(p.Sequence), steps)
	}
}

// TestAlignReducedSteps: every 12 steps, the ring's step begins with a
// barrier and ends with an allreduce, which on the ranks whose loops
// begin after their first call falls inside their first cut: that step
// is a variant between two runs of the loop, after the barrier. Turned
// on, the run after it gave the variant its first iteration's first
// calls, and each reduced step was one instance with the next, 40 calls;
// the run now takes back the variant's last call instead.
func TestAlignReducedSteps(t *testing.T) {
	const n, steps, every = 4, 200, 12
	p, err := Detect(biRingReduced(n, steps, every))
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range p.Sequence {
		if in.Events > 6*n {
			t.Fatalf("instance %d has %d calls, want at most %d (a step's, its barrier and allreduce): steps are chained", in.Position, in.Events, 6*n)
		}
	}
	if len(p.Sequence) < steps {
		t.Errorf("%d instances, want %d or more (one a step)", len(p.Sequence), steps)
	}
}

// TestAlignKeepsWaitall checks that a loop is not turned across the
// bounds its program sets: rank 0 completes each send with an
// MPI_Waitall, so its contexts are R1·S1 whatever its partner's; rank 1
// turns to match it, and no rank-0 pattern holds a send then a receive.
func TestAlignKeepsWaitall(t *testing.T) {
	const n = 200
	p, err := Detect(pingPongWaitall(n, 50*trace.Time(1e6), true))
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range p.Sequence {
		if in.Events > 6 {
			t.Fatalf("instance %d has %d calls, want at most 6: exchanges are chained", in.Position, in.Events)
		}
	}
	for _, pt := range p.Process {
		if pt.Rank == 0 && strings.Contains(pt.Word(), "S1·R1") {
			t.Errorf("rank 0's %s is %s: it crosses the MPI_Waitall after the send", pt.Name(), pt.Word())
		}
	}
	if len(p.Sequence) < n-2 {
		t.Errorf("%d instances, want about %d", len(p.Sequence), n)
	}
}

// TestBestTurnManyPartners is bestTurn past its scanned table: a body of
// 300 positions, each matched on a partner of its own (a loop of
// point-to-point all-to-all), the first 100 an iteration behind: turning
// by 100 makes them agree, as with few partners.
func TestBestTurnManyPartners(t *testing.T) {
	off := make([][]offset, 300)
	for i := range off {
		d := int32(1)
		if i < 100 {
			d = 0
		}
		off[i] = []offset{{q: int32(i % 150), d: d}}
	}
	all := func(int32) bool { return true }
	if got, _ := bestTurn(off, all, all, nil, false); got != 100 {
		t.Errorf("turn %d, want 100", got)
	}
}

// TestCollIndex: values by communicator and ordinal, the absent value
// where none was set, communicators apart.
func TestCollIndex(t *testing.T) {
	c := newCollIndex(-1)
	*c.ref(collKey{7, 2}) = 20
	*c.ref(collKey{7, 0}) = 0
	*c.ref(collKey{1 << 31, 1}) = 5
	for key, want := range map[collKey]int32{{7, 0}: 0, {7, 1}: -1, {7, 2}: 20, {7, 3}: -1, {1 << 31, 1}: 5, {1 << 31, 0}: -1, {8, 0}: -1} {
		if got := c.at(key); got != want {
			t.Errorf("at(%v) = %d, want %d", key, got, want)
		}
	}
}

// exchangeTrace is an untimed trace of n ranks, steps iterations each of
// the calls calls(rank, add) adds: add(kind, partner, req, set) numbers
// the rank's requests, req 1 starting a new one and req k > 1 naming the
// one started k-2 starts before the last.
func exchangeTrace(n, steps int, calls func(r int, add func(k trace.Kind, partner int32, req uint64, set func(*trace.Event)))) *trace.Trace {
	tr := trace.New(n, trace.NewMeta())
	for r := range n {
		var id uint64
		add := func(k trace.Kind, partner int32, req uint64, set func(*trace.Event)) {
			if req == 1 {
				id++
				req = id
			} else if req > 1 {
				req = id - (req - 2)
			}
			e := trace.NewEvent(k)
			e.Partner, e.Request = partner, req
			if set != nil {
				set(&e)
			}
			tr.Ranks[r].Append(&e)
		}
		for range steps {
			calls(r, add)
		}
	}
	return tr
}

func flops(f float64) func(*trace.Event) { return func(e *trace.Event) { e.Compute = f } }
func sized(n int64, tag int32) func(*trace.Event) {
	return func(e *trace.Event) { e.SendBytes, e.RecvBytes, e.Tag = n, n, tag }
}

// TestPrepostedReceives: a loop that posts its receive before it
// computes and sends (the Parallel Research Kernels' transpose), cut
// after its longest computation, is turned to start at the receive,
// where no request is pending: there, each iteration's send matched the
// partner's next iteration's receive, and 10 iterations were 2 instances.
func TestPrepostedReceives(t *testing.T) {
	const steps = 10
	tr := exchangeTrace(2, steps, func(r int, add func(trace.Kind, int32, uint64, func(*trace.Event))) {
		peer := int32(1 - r)
		add(trace.Irecv, peer, 1, sized(512, 1))
		add(trace.Compute, peer, 0, flops(2e6))
		add(trace.Isend, peer, 1, sized(512, 1))
		add(trace.Wait, peer, 3, nil)
		add(trace.Wait, peer, 2, nil)
		add(trace.Compute, peer, 0, flops(1e3))
	})
	p, err := Detect(tr)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Sequence) < steps {
		t.Errorf("%d instances, want %d or more", len(p.Sequence), steps)
	}
	for _, in := range p.Sequence {
		if in.Events > 4 {
			t.Fatalf("instance %d has %d calls, want at most 4: iterations are chained", in.Position, in.Events)
		}
	}
}

// TestTransposePhases: four ranks transpose in three phases, each rank
// receiving from rank+p and sending to rank-p in phase p, nothing pending
// between phases (the Parallel Research Kernels' transpose on MPICH), so
// that against each partner alone every rotation at a phase's bound is
// as good. Each rank first cuts its iterations after its longest
// computation. Ranks 0, 1 and 3 cutting before phase 2 and rank 2 before
// phase 3, rank 2's matches with them fell each in one of their
// iterations, rank 0's one later than the others': the iterations were
// labelled apart and linked into one instance of 480 calls, until the
// settled ranks' iterations were labelled for all. Rank 0 cutting inside
// phase 3 (its local transpose between the receive and the send, the
// receive pending at the cut) and the others at three different phases'
// bounds, rank 0, settled first, kept its cut and no rotation of the
// others could match it: one instance, until a rank settled against no
// other began where the fewest requests are pending.
func TestTransposePhases(t *testing.T) {
	const steps = 20
	type cut struct {
		phase  int
		inside bool // between the receive and the send
	}
	for _, cuts := range [][4]cut{
		{{2, false}, {2, false}, {3, false}, {2, false}},
		{{3, true}, {3, false}, {2, false}, {1, false}},
	} {
		tr := exchangeTrace(4, steps, func(r int, add func(trace.Kind, int32, uint64, func(*trace.Event))) {
			compute := func(c cut) {
				f := 1e3
				if cuts[r] == c {
					f = 5e6
				}
				add(trace.Compute, 0, 0, flops(f))
			}
			for p := 1; p <= 3; p++ {
				compute(cut{p, false})
				add(trace.Irecv, int32((r+p)%4), 1, sized(512, 1))
				compute(cut{p, true})
				add(trace.Isend, int32((r-p+4)%4), 1, sized(512, 1))
				add(trace.Wait, 0, 3, nil)
				add(trace.Wait, 0, 2, nil)
			}
		})
		p, err := Detect(tr)
		if err != nil {
			t.Fatal(err)
		}
		most := 0
		for _, in := range p.Sequence {
			most = max(most, in.Events)
		}
		if len(p.Sequence) < steps || most > 2*4*6 {
			t.Errorf("cuts %v: %d instances, the largest of %d calls; want %d, a step each", cuts, len(p.Sequence), most, steps)
		}
	}
}

// TestAlignToDelimitedLoop: a rank whose iterations the program delimits
// (an MPI_Waitall ends each) keeps them, and its partners' loops turn to
// match them, whatever their own computations say, though the turn
// starts their iterations where fewer requests are pending (LULESH's
// last rank completes some exchanges with MPI_Waitall, the others with
// MPI_Wait: its 50 time steps linked into one instance). Three ranks exchange with each
// other, allreduce, and exchange again; ranks 0 and 1 compute longest
// before the allreduce, and start their iterations there, rank 2's
// waitall starts its iterations at the first exchange: each of its
// iterations then held a step's first exchange with the others' previous
// one and its allreduce with their current one, and chained them all.
func TestAlignToDelimitedLoop(t *testing.T) {
	const steps = 40
	tr := exchangeTrace(3, steps, func(r int, add func(trace.Kind, int32, uint64, func(*trace.Event))) {
		exchange := func(tag int32, waitall bool) {
			for q := range int32(3) {
				if q != int32(r) {
					add(trace.Irecv, q, 1, sized(64, tag))
					add(trace.Isend, q, 1, sized(64, tag))
				}
			}
			if waitall {
				add(trace.Waitall, 0, 0, nil)
				return
			}
			for k := uint64(5); k >= 2; k-- {
				add(trace.Wait, 0, k, nil)
			}
		}
		big, small := 5e6, 1e3
		if r == 2 {
			big, small = small, big
		}
		exchange(1, false)
		add(trace.Compute, 0, 0, flops(big))
		add(trace.Allreduce, 0, 0, sized(8, 0))
		exchange(2, r == 2)
		add(trace.Compute, 0, 0, flops(small))
	})
	p, err := Detect(tr)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Sequence) < steps-1 {
		t.Errorf("%d instances, want about %d (a step each)", len(p.Sequence), steps)
	}
}

// TestLoopLabel: a loop is numbered only where its matches with numbered
// iterations agree.
func TestLoopLabel(t *testing.T) {
	for _, c := range []struct {
		name string
		off  [][]offset
		d    int32
		ok   bool
	}{
		{"agree", [][]offset{{{settledRanks, 2}, {-3, 1}}, {{4, 0}}, {{settledRanks, 2}}}, 2, true},
		{"disagree", [][]offset{{{settledRanks, -1}}, {{settledRanks, -1}}, {{settledRanks, 0}}}, 0, false},
		{"none numbered", [][]offset{{{-3, 1}}, {{4, 0}}}, 0, false},
		{"empty", nil, 0, false},
	} {
		if d, ok := loopLabel(c.off); d != c.d || ok != c.ok {
			t.Errorf("%s: %d, %v; want %d, %v", c.name, d, ok, c.d, c.ok)
		}
	}
}
