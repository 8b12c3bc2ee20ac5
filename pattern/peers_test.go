package pattern

import (
	"testing"

	"kairos/trace"
)

// TestPeerLoops: each of 16 ranks in turn measures its latency to every
// other rank, five round trips each, and a broadcast ends the turn
// (HPCC's latency test); the whole round repeats five times. Each rank
// repeats its round exactly, and iterationCuts took the round for its
// loop: one instance of 316 calls a rank here, of 617 at 16 ranks on
// HPCC's trace and 1,273 at 32. Cut at each partner's round trips, an
// instance is a turn, or up to three where a rank answers fewer than
// minIterations turns in a row before or after its own (58 calls a rank
// at most here, 83 on HPCC's trace at 32 ranks).
func TestPeerLoops(t *testing.T) {
	p, most := largest(t, peerTrace())
	if turn := ((n-1)*2*trips*2 + n) / n; most > 4*turn || len(p.Sequence) < rounds*n/4 {
		t.Errorf("%d instances, the largest of %d calls a rank; want four turns or less (%d calls a rank), %d instances or more",
			len(p.Sequence), most, 4*turn, rounds*n/4)
	}
}

const n, rounds, trips = 16, 5, 5

// peerTrace is TestPeerLoops' trace.
func peerTrace() *trace.Trace {
	return exchangeTrace(n, rounds, func(r int, add adder) {
		for turn := range n {
			for p := range n {
				switch {
				case p == turn:
				case r == turn:
					for range trips {
						add(trace.Send, int32(p), 0, sized(8, 1))
						add(trace.Recv, int32(p), 0, sized(8, 1))
					}
				case r == p:
					for range trips {
						add(trace.Recv, int32(turn), 0, sized(8, 1))
						add(trace.Send, int32(turn), 0, sized(8, 1))
					}
				}
			}
			add(trace.Compute, 0, 0, flops(1e4))
			add(trace.Bcast, 0, 0, sized(4, 0))
		}
	})
}

// TestPeerLoopsNotHalos: a rank exchanging with each of its three
// neighbours in turn (a receive and a send each), in contexts of over
// minPeerContext calls that do not repeat, keeps each exchange whole:
// it meets fewer than half the other ranks, in fewer than minPeerCalls
// calls each (GPAW's halos).
func TestPeerLoopsNotHalos(t *testing.T) {
	rd := rankData{segs: []int32{0}}
	keys := []symKey{{kind: trace.Recv, partner: 1}, {kind: trace.Send, partner: 1}, {kind: trace.Recv, partner: 2},
		{kind: trace.Send, partner: 2}, {kind: trace.Recv, partner: 7}, {kind: trace.Send, partner: 7}, {kind: trace.Allreduce, partner: trace.NoRank}}
	for i := range 60 {
		s := int32(i % 7)
		if i >= 6 {
			s = 6 // collectives after the exchange
		}
		rd.ev = append(rd.ev, event{sym: s})
		rd.open = append(rd.open, 0)
	}
	if got := peerCuts(&rd, keys, 16, nil); len(got) != 1 {
		t.Errorf("cuts %v, want the context's start alone", got)
	}
	if got := peerCuts(&rd, keys, 4, nil); len(got) != 4 {
		t.Errorf("on 4 ranks (3 neighbours: every other rank): cuts %v, want the 3 exchanges and the collectives after them", got)
	}
}
