package waitstate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"kairos/internal/testenv"
	"kairos/trace"
)

// stencil writes the timed trace of a halo exchange run as an MPI library
// with eager sends would run it: each iteration every rank computes (its
// noisy time, longer on rank late in the iterations delayed), posts
// receives from its neighbours, sends to them and waits for all, and
// every reduceEvery iterations joins an allreduce. A message arrives
// latency after its send; an allreduce ends cost after its last member
// entered.
func stencil(rng *rand.Rand, ranks, iterations, reduceEvery int, late int, delayed map[int]bool) *built {
	return halo(rng, ranks, iterations, reduceEvery, late, delayed, false)
}

// halo is stencil's run; where poll, each rank polls its messages with
// failed MPI_Test calls (0.5 µs of work, then 0.5 µs in the test) until
// they have all arrived, before its waitall.
func halo(rng *rand.Rand, ranks, iterations, reduceEvery int, late int, delayed map[int]bool, poll bool) *built {
	b := build()
	const latency, cost, post = 3.0, 5.0, 0.5
	nb := func(r int) []int {
		n := []int{(r + 1) % ranks, (r + ranks - 1) % ranks}
		if ranks%2 == 0 && ranks >= 6 {
			n = append(n, (r+ranks/2)%ranks)
		}
		return n
	}
	// tag is the index of r among p's neighbours: the tag p sends to r with.
	tag := func(p, r int) int {
		for j, q := range nb(p) {
			if q == r {
				return j
			}
		}
		return -1
	}
	evs := make([][]trace.Event, ranks)
	now := make([]float64, ranks)
	sent := make([][]float64, ranks) // when rank r sent to its k-th neighbour
	for r := range evs {
		evs[r] = append(evs[r], call(trace.Init, 0, 1))
		now[r] = 1
		sent[r] = make([]float64, 3)
	}
	for it := 0; it < iterations; it++ {
		for r := range evs {
			work := 100 * (1 + 0.1*rng.Float64())
			if r == late && delayed[it] {
				work *= 6
			}
			evs[r] = append(evs[r], call(trace.Compute, now[r], now[r]+work, in(b.work)))
			now[r] += work
			for k, p := range nb(r) {
				evs[r] = append(evs[r], call(trace.Irecv, now[r], now[r], peer(int32(p)), req(uint64(k+1)),
					func(e *trace.Event) { e.Tag = int32(tag(p, r)) }))
			}
			for k, p := range nb(r) {
				sent[r][k] = now[r]
				evs[r] = append(evs[r], call(trace.Isend, now[r], now[r]+post, peer(int32(p)), req(uint64(k+4)), bytes(64),
					func(e *trace.Event) { e.Tag = int32(k) }))
				now[r] += post
			}
		}
		for r := range evs {
			done := now[r]
			for _, p := range nb(r) {
				done = max(done, sent[p][tag(p, r)]+latency)
			}
			for poll && now[r]+1 <= done {
				evs[r] = append(evs[r], call(trace.Deferred, now[r]+0.5, now[r]+1, in(b.test)))
				now[r]++
			}
			evs[r] = append(evs[r], call(trace.Waitall, now[r], done+post))
			now[r] = done + post
		}
		if reduceEvery > 0 && it%reduceEvery == reduceEvery-1 {
			last := 0.0
			for r := range evs {
				last = max(last, now[r])
			}
			for r := range evs {
				evs[r] = append(evs[r], call(trace.Allreduce, now[r], last+cost, bytes(8)))
				now[r] = last + cost
			}
		}
	}
	return finalized(evs, now)
}

// finalized ends every rank with a finalize that all leave together, a
// microsecond after the last one's clock, now, and builds the trace.
func finalized(evs [][]trace.Event, now []float64) *built {
	last := 0.0
	for r := range evs {
		last = max(last, now[r])
	}
	for r := range evs {
		evs[r] = append(evs[r], call(trace.Finalize, now[r], last+1))
	}
	return build(evs...)
}

// TestRandomRuns checks, on halo exchanges with noise and one rank
// delayed in a few iterations, that the delayed rank's work is the first
// cause, that the costs and the unexplained waiting sum to the waiting,
// that no cost is negative, that the critical path is the run, and that
// the analysis is deterministic; and so where the ranks poll their
// messages with MPI_Test before they wait (the pollers' tests were the
// first cause then), the same with each test a span of its own.
func TestRandomRuns(t *testing.T) {
	runs := 6
	if testenv.Long() {
		runs = 60
	}
	for _, poll := range []bool{false, true} {
		t.Run(fmt.Sprintf("poll=%v", poll), func(t *testing.T) { randomRuns(t, runs, poll) })
	}
}

func randomRuns(t *testing.T, runs int, poll bool) {
	for seed := range runs {
		rng := rand.New(rand.NewPCG(uint64(seed), 7))
		ranks := 4 + rng.IntN(13)
		its := 20 + rng.IntN(40)
		late := rng.IntN(ranks)
		delayed := map[int]bool{}
		for range 3 {
			delayed[rng.IntN(its)] = true
		}
		b := halo(rng, ranks, its, 1+rng.IntN(10), late, delayed, poll)
		a := analyze(t, b)
		if len(a.Causes) == 0 || a.Causes[0].Rank != int32(late) || a.Causes[0].Where() != "computation in main/work" {
			t.Errorf("seed %d: first cause %+v, want rank %d's work", seed, a.Causes[0], late)
		}
		sum := a.Unexplained
		for _, c := range a.Causes {
			if c.Direct < 0 || c.Propagated < 0 || c.Share > 1 {
				t.Errorf("seed %d: cause %+v", seed, c)
			}
			sum += c.Cost
		}
		if math.Abs(sum-a.Waiting) > 1e-9*a.Waiting {
			t.Errorf("seed %d: costs sum to %g s, the waiting is %g s", seed, sum, a.Waiting)
		}
		if math.Abs(a.CriticalPath.Seconds-a.Runtime) > 1e-9 {
			t.Errorf("seed %d: critical path %g s, run %g s", seed, a.CriticalPath.Seconds, a.Runtime)
		}
		if again := analyze(t, b); !reflect.DeepEqual(a, again) {
			t.Errorf("seed %d: two analyses differ", seed)
		}
		foldLocal = false
		if each := analyze(t, b); !reflect.DeepEqual(a, each) {
			t.Errorf("seed %d: the analysis differs with each local call a span of its own", seed)
		}
		foldLocal = true
	}
}
