package pattern

import (
	"math/rand/v2"
	"testing"

	"kairos/trace"
)

// TestServerChains: a master hands out tasks to three workers in the
// order their results come, a different one at each of 200 rounds: it
// receives a worker's result and sends it its next task. A worker's
// iteration (its task, its result, then its longest computation) links
// two of the master's, and linked by their messages, the master's and the
// workers' iterations made one instance of the whole run, 603 calls a
// rank (as a real master-worker run's did: 241 calls a rank at 8 ranks,
// all of them; Ray's, 654,890 calls in all); unchained, an instance holds
// a tile of each rank at most.
func TestServerChains(t *testing.T) {
	const workers, rounds = 3, 200
	rng := rand.New(rand.NewPCG(1, 2))
	tr := trace.New(workers+1, trace.NewMeta())
	add := func(r int, k trace.Kind, partner int32, tag int32) {
		e := trace.NewEvent(k)
		e.Partner, e.Tag, e.SendBytes, e.RecvBytes = partner, tag, 64, 64
		tr.Ranks[r].Append(&e)
	}
	for w := int32(1); w <= workers; w++ {
		add(0, trace.Send, w, 1)
	}
	order := []int32{1, 2, 3}
	for range rounds {
		rng.Shuffle(workers, func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, w := range order {
			add(0, trace.Recv, w, 2)
			add(0, trace.Send, w, 1)
		}
	}
	for w := 1; w <= workers; w++ {
		for range rounds + 1 {
			add(w, trace.Recv, 0, 1)
			add(w, trace.Send, 0, 2)
			c := trace.NewEvent(trace.Compute) // after its result, the worker's longest: its iterations start at the task
			c.Compute = 1e5
			tr.Ranks[w].Append(&c)
		}
	}
	for _, w := range order {
		add(0, trace.Recv, w, 2)
	}
	p, most := largest(t, tr)
	if most > 16 || len(p.Sequence) < rounds {
		t.Errorf("%d instances, the largest of %d calls a rank; want %d or more, of 16 calls a rank or less", len(p.Sequence), most, rounds)
	}
}

// TestPendingLoops: rank 0 exchanges a message each way with rank 1 at
// each of 2,210 iterations, but with rank 2 at every 13th and rank 3 at
// every 17th, each rank sending with MPI_Isend and completing its sends 8
// at a time, every 8 of its iterations (a message-driven program's
// buffers). No iteration leaves the requests pending as it found them,
// and rank 0's loops were not cut: its calls, one context of 4,420, were
// covered by the repeats of its 221 iterations (an instance of 112 calls
// a rank). Past longContext calls, a context is cut at its loops'
// iterations all the same.
func TestPendingLoops(t *testing.T) {
	p, most := largest(t, pendingTrace())
	if most > 16 || len(p.Sequence) < pendingIters/2 {
		t.Errorf("%d instances, the largest of %d calls a rank; want %d or more, of 16 calls a rank or less", len(p.Sequence), most, pendingIters/2)
	}
}

const pendingIters = 2210

// pendingTrace is TestPendingLoops' trace.
func pendingTrace() *trace.Trace {
	const iters = pendingIters
	tr := trace.New(4, trace.NewMeta())
	ids, sent := [4]uint64{}, [4]int{}
	exchange := func(r, peer int) {
		ids[r]++
		e := trace.NewEvent(trace.Isend)
		e.Partner, e.Request, e.SendBytes = int32(peer), ids[r], 64
		tr.Ranks[r].Append(&e)
		e = trace.NewEvent(trace.Recv)
		e.Partner, e.RecvBytes = int32(peer), 64
		tr.Ranks[r].Append(&e)
		e = trace.NewEvent(trace.Compute)
		e.Compute = 1e4
		tr.Ranks[r].Append(&e)
		if sent[r]++; sent[r]%8 == 0 {
			for k := range uint64(8) {
				w := trace.NewEvent(trace.Wait)
				w.Request = ids[r] - k
				tr.Ranks[r].Append(&w)
			}
		}
	}
	for i := range iters {
		peer := 1
		switch {
		case i%17 == 0:
			peer = 3
		case i%13 == 0:
			peer = 2
		}
		exchange(0, peer)
		exchange(peer, 0)
	}
	return tr
}

// TestRankSets: the ranks of the linked sets, as bit masks (64 ranks or
// fewer) and as lists (more), say alike whether two sets share a rank.
func TestRankSets(t *testing.T) {
	for _, ranks := range []int{8, 100} {
		rankOf := []int32{0, 1, 2, 3, 1, 5, 6, 7} // tile 4 is rank 1's second
		s := newRankSets(rankOf, ranks)
		d := newDSU(len(rankOf))
		join := func(a, b int32) bool {
			a, b = d.find(a), d.find(b)
			if a == b || !s.disjoint(a, b) {
				return false
			}
			d.union(a, b)
			s.merge(d.find(a), a, b)
			return true
		}
		for _, c := range []struct {
			a, b int32
			want bool
		}{
			{0, 1, true}, {2, 3, true}, {1, 4, false}, {0, 2, true}, {4, 3, false},
			{4, 5, true}, {6, 7, true}, {5, 6, true}, {0, 7, false}, {4, 0, false},
		} {
			if got := join(c.a, c.b); got != c.want {
				t.Errorf("%d ranks: joining tiles %d and %d: %v, want %v", ranks, c.a, c.b, got, c.want)
			}
		}
	}
}
