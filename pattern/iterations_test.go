package pattern

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"kairos/trace"
)

// mdTrace is a molecular-dynamics-like run on 4 ranks in a 2x2 grid, with
// no user functions and no MPI_Waitall (the paper's contexts are then
// the whole run): set-up broadcasts, then steps steps of a forward
// exchange (an Irecv, a Send and a Wait with each partner, both ways),
// a force computation and the reverse exchange. Every rebuild-th step
// exchanges atoms with sendrecvs instead of its forward exchange, every
// output-th step ends with three allreduces, and the force computation of
// every fourth step runs an inner exchange loop once more. Times: 1 µs a
// call, 300 µs of force computation, 20 µs between steps.
func mdTrace(steps, rebuild, output int) *trace.Trace {
	const us = trace.Time(1e6)
	tr := trace.New(4, trace.NewMeta())
	for r := range 4 {
		x, y := r^1, r^2 // partners in the two dimensions
		at := trace.Time(0)
		req := uint64(0)
		call := func(e trace.Event, gap trace.Time) {
			at += gap
			e.HasTime, e.Enter, e.Exit = true, at, at+us
			at += us
			tr.Ranks[r].Append(&e)
		}
		pair := func(p int) {
			req++
			e := trace.NewEvent(trace.Irecv)
			e.Partner, e.Request, e.RecvBytes = int32(p), req, 4096
			call(e, 0)
			e = trace.NewEvent(trace.Send)
			e.Partner, e.SendBytes = int32(p), 4096
			call(e, 0)
			e = trace.NewEvent(trace.Wait)
			e.Request = req
			call(e, 0)
		}
		for range 5 {
			e := trace.NewEvent(trace.Bcast)
			e.SendBytes = 64
			call(e, 10*us)
		}
		for s := range steps {
			if s%rebuild == rebuild-1 {
				for _, p := range []int{x, y} {
					e := trace.NewEvent(trace.SendRecv)
					e.Partner, e.Source, e.SendBytes, e.RecvBytes = int32(p), int32(p), 8, 8
					call(e, 0)
					pair(p)
				}
			} else {
				pair(x)
				pair(x)
				pair(y)
				pair(y)
			}
			at += 300 * us
			inner := 2
			if s%4 == 3 {
				inner = 3
			}
			for range inner {
				pair(y)
				pair(x)
			}
			pair(y)
			pair(y)
			pair(x)
			pair(x)
			if s%output == output-1 {
				for range 3 {
					e := trace.NewEvent(trace.Allreduce)
					e.SendBytes = 8
					call(e, 0)
				}
			}
			at += 20 * us
		}
	}
	return tr
}

// TestIterationsFollowSteps: without user functions or MPI_Waitall, the
// paper's method makes the steps a few instances of hundreds of calls,
// while Iterations makes an instance of nearly every step (those the
// rebuilds, outputs and inner-loop variants interrupt stay whole or in
// few pieces).
func TestIterationsFollowSteps(t *testing.T) {
	tr := mdTrace(120, 10, 25)
	paper, err := DetectMethod(tr, Paper)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Detect(tr)
	if err != nil {
		t.Fatal(err)
	}
	longest := 0
	for _, c := range paper.Comm {
		longest = max(longest, c.Events)
	}
	if longest < 4*24*20 {
		t.Errorf("paper: the longest pattern has %d calls, want steps lumped together", longest)
	}
	steps, pairs := 0, 0
	for _, c := range p.Comm {
		if c.Events >= 4*24 && c.Events < 4*24*2 {
			steps += c.Frequency
		}
		if c.Ranks < 4 {
			pairs += c.Frequency
		}
	}
	if steps < 80 || steps > 120 || 100*pairs > 15*len(p.Sequence) || p.Unmatched != 0 {
		t.Errorf("%d step instances of 120 steps, %d instances of fewer ranks among %d, %d unmatched; patterns %+v",
			steps, pairs, len(p.Sequence), p.Unmatched, p.Comm)
	}
}

// TestIterationsBetweenOutputs: the steps of a run with a rebuild every
// 10 steps and an output of diagnostics every 25 repeat as a loop of 100
// steps, whose iterations no single run of the step loop covers three
// quarters of: the runs between a rebuild and an output begin in another
// rotation than those between two rebuilds (LAMMPS' melt, thermo every 50
// steps and a rebuild every 20, on 8 ranks: 5 instances of 100 steps).
// Counted together, whatever their rotations, the runs make the steps the
// iterations (11 instances, the longest of 9,968 calls, before).
func TestIterationsBetweenOutputs(t *testing.T) {
	p, err := Detect(mdTrace(600, 10, 25))
	if err != nil {
		t.Fatal(err)
	}
	steps, longest := 0, 0
	for _, c := range p.Comm {
		if c.Events >= 4*24 && c.Events < 4*24*2 {
			steps += c.Frequency
		}
		longest = max(longest, c.Events)
	}
	if steps < 400 || longest > 4*24*10 {
		t.Errorf("%d step instances of 600 steps, the longest pattern %d calls; want the steps", steps, longest)
	}
}

// TestIterationsStepVariants: steps of two lengths (LAMMPS' neighbour
// lists rebuilt when atoms have moved: for 4 steps after a rebuild no
// check, then an allreduce every step to check) make two step loops whose
// bodies make the same calls. With a rebuild every 12 steps, the 12-step
// cycle repeats, and the longer steps' runs cover only two thirds of it:
// counted with the shorter steps', they make the steps the iterations
// (34 instances of 300 steps, before). Rebuilt at irregular intervals,
// the longer steps are the loop, and the shorter ones between two of its
// iterations are a loop of their own, not a loop within an iteration
// (the four steps after each rebuild were one instance).
func TestIterationsStepVariants(t *testing.T) {
	const steps, delay = 300, 4
	rng := rand.New(rand.NewPCG(1, 2))
	irregular := make([]int, 64)
	for i := range irregular {
		irregular[i] = 9 + rng.IntN(6)
	}
	for name, intervals := range map[string][]int{"every 12": {12}, "irregular": irregular} {
		step := make([]int, 4)
		since := make([]int, 4) // steps since the last rebuild
		next := make([]int, 4)  // rebuilds so far
		tr := exchangeTrace(4, steps, func(r int, add func(trace.Kind, int32, uint64, func(*trace.Event))) {
			if step[r] == 0 || since[r] == intervals[next[r]%len(intervals)] {
				since[r] = 0
				next[r]++
			}
			s := since[r]
			step[r]++
			since[r]++
			x, y := int32(r^1), int32(r^2)
			if s == 0 {
				rebuildExchange(add, x, y)
			}
			pairs(add, y, y, x, x)
			add(trace.Compute, 0, 0, flops(2e4))
			pairs(add, x, x, y, y)
			add(trace.Compute, 0, 0, flops(3e5))
			add(trace.Allreduce, 0, 0, sized(8, 0))
			if s >= delay {
				add(trace.Allreduce, 0, 0, sized(8, 0))
			}
		})
		p, most := largest(t, tr)
		if len(p.Sequence) < steps || most > 2*18 {
			t.Errorf("rebuilt %s: %d instances of %d steps, the largest of %d calls a rank; want a step each", name, len(p.Sequence), steps, most)
		}
	}
}

// TestIterationsNotPairs: LAMMPS' melt on a 2x2 grid exchanges twice with
// each partner in turn, forward then in reverse (Rx Sx Rx Sx Ry Sy Ry Sy,
// its force computation, Ry Sy Ry Sy Rx Sx Rx Sx), thermo output every 50
// steps and a rebuild every 20: the 100-step cycle repeats, and its steps
// are the iterations. The runs of the exchanges with one partner and with
// the other cover a step between them, but they are two loops of
// different calls, not variants of a step: a step of 16 calls stays one
// iteration (with them counted together, 3,000 steps were 46,861
// instances).
func TestIterationsNotPairs(t *testing.T) {
	const steps = 600
	step := make([]int, 4)
	tr := exchangeTrace(4, steps, func(r int, add func(trace.Kind, int32, uint64, func(*trace.Event))) {
		s := step[r]
		step[r]++
		x, y := int32(r^1), int32(r^2)
		if s%20 == 19 {
			rebuildExchange(add, x, y)
		} else {
			pairs(add, x, x, y, y)
		}
		add(trace.Compute, 0, 0, flops(3e5))
		pairs(add, y, y, x, x)
		if s%50 == 49 {
			add(trace.Allreduce, 0, 0, sized(8, 0))
		}
		add(trace.Compute, 0, 0, flops(2e4))
	})
	p, err := Detect(tr)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Sequence) > steps*5/4 {
		t.Errorf("%d instances of %d steps: want a step each, not its exchanges with each partner", len(p.Sequence), steps)
	}
}

// adder adds an event to a rank of exchangeTrace.
type adder = func(k trace.Kind, partner int32, req uint64, set func(*trace.Event))

// pairs adds, for each partner in turn, an Irecv from it, a Send to it
// and the Irecv's Wait.
func pairs(add adder, partners ...int32) {
	for _, p := range partners {
		add(trace.Irecv, p, 1, sized(512, 1))
		add(trace.Send, p, 0, sized(512, 1))
		add(trace.Wait, 0, 2, nil)
	}
}

// rebuildExchange adds a rebuild step's sendrecvs with partners x and y.
func rebuildExchange(add adder, x, y int32) {
	for _, p := range []int32{x, y} {
		add(trace.SendRecv, p, 0, func(e *trace.Event) { e.Source, e.SendBytes, e.RecvBytes = p, 8, 8 })
	}
}

// TestLeastRotation: every rotation of a word gives the offset of the
// same least rotation, the one a brute force finds.
func TestLeastRotation(t *testing.T) {
	rot := func(w []int32, k int) []int32 { return append(slices.Clone(w[k:]), w[:k]...) }
	for _, w := range [][]int32{{1}, {2, 1}, {1, 1, 1}, {3, 1, 2, 1, 2}, {1, 2, 1, 2}, {5, 4, 3, 2, 1, 0}, {0, 1, 0, 0, 1, 0, 0, 0}} {
		least := w
		for k := range w {
			if r := rot(w, k); slices.Compare(r, least) < 0 {
				least = r
			}
		}
		for k := range w {
			r := rot(w, k)
			if got := rot(r, int(leastRotation(r))); !slices.Equal(got, least) {
				t.Errorf("%v: least rotation %v, want %v", r, got, least)
			}
		}
	}
}

// TestIterationsBalanced: a body repeated in a row is a loop of
// iterations only if each iteration leaves as many requests pending as
// it found: receives posted in a loop and completed after it are not
// iterations, sends and receives completed in each iteration are.
func TestIterationsBalanced(t *testing.T) {
	for _, c := range []struct {
		waitEach bool
		cuts     int
	}{{false, 1}, {true, 5}} {
		tr := trace.New(4, trace.NewMeta())
		var reqs []uint64
		for i := range 15 {
			e := trace.NewEvent(trace.Irecv)
			e.Partner, e.Request, e.RecvBytes = int32(1+i%3), uint64(i+1), 8
			tr.Ranks[0].Append(&e)
			reqs = append(reqs, e.Request)
			if c.waitEach && i%3 == 2 {
				for _, q := range reqs {
					e := trace.NewEvent(trace.Wait)
					e.Request = q
					tr.Ranks[0].Append(&e)
				}
				reqs = nil
			}
		}
		for _, q := range reqs {
			e := trace.NewEvent(trace.Wait)
			e.Request = q
			tr.Ranks[0].Append(&e)
		}
		syms := &symbols{ids: map[symKey]int32{}}
		rd, err := readRank(tr, 0, syms, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := iterationCuts(&rd, len(syms.keys), nil, false, nil); len(got) != c.cuts {
			t.Errorf("waits in each iteration %v: contexts start at %v, want %d contexts", c.waitEach, got, c.cuts)
		}
	}
}

// TestTimeShares partitions the run among instances: computation after an
// instance is its, and an instance inside a longer one gets nothing.
func TestTimeShares(t *testing.T) {
	p := &Patterns{Timed: true, Sequence: []Instance{
		{Start: 0, Finish: 10e12},   // 10 s, then 5 s of computation
		{Start: 1e12, Finish: 2e12}, // inside the first
		{Start: 15e12, Finish: 16e12},
		{Start: 15.5e12, Finish: 17e12}, // overlaps the third
	}}
	got := p.TimeShares()
	want := []float64{15, 0, 1, 1}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("shares %v, want %v", got, want)
		}
	}
}

// TestAnySourceOrder: a master that receives one result from each worker
// in the order they come (any source) and broadcasts the next task
// repeats one communication pattern at every iteration, whatever the
// order of its receives (a Boost.MPI loop of 1,000 such steps was 2
// instances, a 60-step loop 17 instances of 7 patterns).
func TestAnySourceOrder(t *testing.T) {
	const steps, workers = 30, 3
	const us = trace.Time(1e6)
	tr := trace.New(workers+1, trace.NewMeta())
	at := make([]trace.Time, workers+1)
	call := func(r int, e trace.Event, gap trace.Time) {
		at[r] += gap
		e.HasTime, e.Enter, e.Exit = true, at[r], at[r]+us
		at[r] += us
		tr.Ranks[r].Append(&e)
	}
	for s := range steps {
		perms := [][]int{{1, 2, 3}, {2, 3, 1}, {3, 1, 2}, {1, 3, 2}, {3, 2, 1}, {2, 1, 3}}
		order := perms[(s*s+s/2)%len(perms)]
		for i, w := range order {
			e := trace.NewEvent(trace.Send)
			e.Partner, e.SendBytes = 0, 8
			call(w, e, trace.Time(10*(i+1))*us)
			e = trace.NewEvent(trace.Recv)
			e.Partner, e.RecvBytes = int32(w), 8
			call(0, e, 0)
		}
		for r := range workers + 1 {
			e := trace.NewEvent(trace.Bcast)
			e.SendBytes = 8
			call(r, e, 0)
		}
	}
	p, err := Detect(tr)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Comm) != 1 || len(p.Sequence) != steps {
		t.Errorf("%d instances of %d patterns, want %d of 1", len(p.Sequence), len(p.Comm), steps)
	}
}

// TestProbesJoinComputation: a rank's loop starts where the same in a
// timed trace as in the time-independent one made from it: the
// computations between a poll's probes are one computation in both (a
// TI trace has no probes). In the timed trace the gap before a call was
// the time since the last probe, so rank 0's iterations, 5 ms before its
// receive from rank 1 and 40 polls of 0.25 ms before the one from rank
// 2, started at R1 in the archive and at R2 in its TI trace (IQ-TREE's
// archive and TI trace had 15 and 16 communication patterns).
func TestProbesJoinComputation(t *testing.T) {
	const ms = trace.Time(1e9)
	tr := trace.New(3, trace.NewMeta())
	at := make([]trace.Time, 3)
	call := func(r int, e trace.Event, gap trace.Time) {
		at[r] += gap
		e.HasTime, e.Enter, e.Exit = true, at[r], at[r]+ms/100
		at[r] += ms / 100
		tr.Ranks[r].Append(&e)
	}
	for range 20 {
		for w := 1; w <= 2; w++ {
			e := trace.NewEvent(trace.Send)
			e.Partner, e.SendBytes = 0, 4
			call(w, e, 15*ms)
		}
		e := trace.NewEvent(trace.Recv)
		e.Partner, e.RecvBytes = 1, 4
		call(0, e, 5*ms)
		for range 40 {
			p := trace.NewEvent(trace.Iprobe)
			p.Partner = 2
			call(0, p, ms/4)
		}
		e.Partner = 2
		call(0, e, ms/4)
	}
	words := func(src trace.Source) []string {
		p, err := Detect(src)
		if err != nil {
			t.Fatal(err)
		}
		var w []string
		for _, pp := range p.Process {
			if pp.Rank == 0 {
				w = append(w, fmt.Sprintf("%s×%d", pp.Word(), len(pp.Positions)))
			}
		}
		return w
	}
	timed, untimed := words(tr), words(trace.Untimed(tr, 1e9))
	if !slices.Equal(timed, untimed) {
		t.Errorf("rank 0's process patterns: %q timed, %q time-independent", timed, untimed)
	}
}
