package waitstate

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"kairos/trace"
)

// masterWorker writes the timed trace of a master that sends a task to
// each of its workers in turn, then receives their results in turn, for
// some rounds: the master's synchronization intervals with a worker span
// two calls a worker, long intervals.
func masterWorker(rng *rand.Rand, workers, rounds int) *built {
	evs := make([][]trace.Event, workers+1)
	now := make([]float64, workers+1)
	for r := range evs {
		evs[r] = append(evs[r], call(trace.Init, 0, 1))
		now[r] = 1
	}
	for range rounds {
		for w := 1; w <= workers; w++ {
			evs[0] = append(evs[0], call(trace.Send, now[0], now[0]+1, peer(int32(w)), bytes(64)))
			recv := max(now[w], now[0]) + 1
			evs[w] = append(evs[w], call(trace.Recv, now[w], recv, peer(0), bytes(64)))
			now[0]++
			work := 50 * (1 + rng.Float64())
			evs[w] = append(evs[w], call(trace.Compute, recv, recv+work))
			now[w] = recv + work
			evs[w] = append(evs[w], call(trace.Send, now[w], now[w]+1, peer(0), bytes(8)))
			now[w]++
		}
		for w := 1; w <= workers; w++ {
			done := max(now[0], now[w]) + 0.5
			evs[0] = append(evs[0], call(trace.Recv, now[0], done, peer(int32(w)), bytes(8)))
			now[0] = done
		}
	}
	return finalized(evs, now)
}

// TestLongIntervals: reading the intervals from a rank's indexes gives
// the analysis that walking them gives, to the bit, on a master and its
// workers (intervals of hundreds of calls) and on noisy halo exchanges
// with allreduces, every interval read through the indexes.
func TestLongIntervals(t *testing.T) {
	defer func(l int) { walkLimit = l }(walkLimit)
	for seed := range 6 {
		rng := rand.New(rand.NewPCG(uint64(seed), 11))
		var b *built
		if seed%2 == 0 {
			b = masterWorker(rng, 40+rng.IntN(80), 2+rng.IntN(4))
		} else {
			b = stencil(rng, 4+rng.IntN(13), 20+rng.IntN(40), 1+rng.IntN(10), rng.IntN(4), map[int]bool{3: true, 11: true})
		}
		walkLimit = 1 << 30
		walked := analyze(t, b)
		walkLimit = 0
		if indexed := analyze(t, b); !reflect.DeepEqual(walked, indexed) {
			t.Errorf("seed %d: the analysis through the indexes differs from the walk's", seed)
		}
		if len(walked.Causes) == 0 {
			t.Errorf("seed %d: no cause found", seed)
		}
	}
}
