package pattern

import (
	"math/rand/v2"
	"testing"

	"kairos/trace"
)

// TestRefineWideLoops: a ring of four ranks exchanges with both
// neighbours twelve times, then joins 26 collectives, 20 times. Ranks 2
// and 3 send themselves a message after some of these rounds (GPAW's
// ranks differed so), so that only ranks 0 and 1 repeat the round
// exactly: alone, they would iterate at the rounds, the others at the
// exchanges, each round of rank 1 linking a dozen iterations of rank 2,
// and the run chained into few instances. Ranks 0 and 1 are cut at the
// exchanges too: an instance each.
func TestRefineWideLoops(t *testing.T) {
	const n, rounds, inner = 4, 20, 12
	rng := rand.New(rand.NewPCG(5, 6))
	self := [rounds]bool{}
	for k := range self {
		self[k] = rng.IntN(2) == 0
	}
	colls := []trace.Kind{trace.Allreduce, trace.Bcast, trace.Barrier, trace.Reduce}
	round := make([]int, n)
	tr := exchangeTrace(n, rounds, func(r int, add adder) {
		left, right := int32((r+n-1)%n), int32((r+1)%n)
		for range inner {
			add(trace.Irecv, left, 1, sized(512, 1))
			add(trace.Irecv, right, 1, sized(512, 1))
			add(trace.Compute, 0, 0, flops(1e6))
			add(trace.Send, right, 0, sized(512, 1))
			add(trace.Send, left, 0, sized(512, 1))
			add(trace.Wait, 0, 3, nil) // the first Irecv of the two
			add(trace.Wait, 0, 2, nil)
		}
		if r >= 2 && self[round[r]] {
			add(trace.Isend, int32(r), 1, sized(8, 2))
			add(trace.Recv, int32(r), 0, sized(8, 2))
			add(trace.Wait, 0, 2, nil)
		}
		round[r]++
		for c := range 26 {
			add(colls[c%len(colls)], 0, 0, sized(8, 0))
		}
		add(trace.Compute, 0, 0, flops(5e6))
	})
	p, most := largest(t, tr)
	if len(p.Sequence) < rounds*inner || most > 40 {
		t.Errorf("%d instances, the largest of %d calls a rank; want %d exchanges or more, each an instance", len(p.Sequence), most, rounds*inner)
	}
}

// largest detects the patterns of tr and returns them with the calls a
// rank of the largest instance.
func largest(t *testing.T, tr trace.Source) (*Patterns, int) {
	t.Helper()
	p, err := Detect(tr)
	if err != nil {
		t.Fatal(err)
	}
	most := 0
	for _, c := range p.Comm {
		most = max(most, c.Events/c.Ranks)
	}
	return p, most
}
