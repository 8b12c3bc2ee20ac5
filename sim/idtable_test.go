package sim

import (
	"math/rand/v2"
	"testing"
)

// TestIDTable checks idTable against a map through random puts, takes
// and clears, of ids in a run (a trace's) and scattered.
func TestIDTable(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	reqs := make([]dreq, 64)
	for _, spread := range []uint64{1, 7, 1 << 40} {
		var tab idTable
		want := map[uint64]*dreq{}
		next := uint64(1)
		for step := range 50000 {
			switch op := rng.IntN(10); {
			case op < 5:
				id := next * spread
				if rng.IntN(4) == 0 && next > 1 {
					id = (1 + rng.Uint64N(next)) * spread // an id seen before, maybe taken
				} else {
					next++
				}
				q := &reqs[rng.IntN(len(reqs))]
				if got := tab.put(id, q); got != want[id] {
					t.Fatalf("spread %d, step %d: put(%d) returned %p, want %p", spread, step, id, got, want[id])
				}
				want[id] = q
			case op < 9:
				id := (1 + rng.Uint64N(next)) * spread
				got, ok := want[id]
				if q := tab.take(id); q != got {
					t.Fatalf("spread %d, step %d: take(%d) = %p, want %p", spread, step, id, q, got)
				}
				if ok {
					delete(want, id)
				}
			case rng.IntN(50) == 0:
				tab.clear()
				clear(want)
			}
			if tab.n != len(want) {
				t.Fatalf("spread %d, step %d: %d ids, want %d", spread, step, tab.n, len(want))
			}
		}
		for id, q := range want {
			if got := tab.take(id); got != q {
				t.Fatalf("spread %d: at the end, take(%d) = %p, want %p", spread, id, got, q)
			}
		}
		if tab.n != 0 || tab.take(spread) != nil {
			t.Fatalf("spread %d: not empty after taking every id", spread)
		}
	}
}
