package ti

import (
	"math/rand/v2"
	"testing"
)

// TestRequestStoreRandom runs random pushes and pops against per-key
// FIFOs, with a request that is never waited for held from the start: the
// store must give the same ids, and its slice must stay proportional to
// the requests outstanding (a pop scanning every request ever pushed made
// such traces quadratic).
func TestRequestStoreRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var s requestStore
	want := map[reqKey][]uint64{}
	id := uint64(0)
	push := func(k reqKey) {
		id++
		s.push(k, id)
		want[k] = append(want[k], id)
	}
	push(reqKey{9, 9, 9}) // never popped
	for step := 0; step < 50000; step++ {
		k := reqKey{0, 1, int32(rng.IntN(12))}
		if rng.IntN(40) > s.live { // a few requests outstanding, never many
			push(k)
			continue
		}
		var w uint64
		if q := want[k]; len(q) > 0 {
			w, want[k] = q[0], q[1:]
		}
		if got := s.pop(k); got != w {
			t.Fatalf("step %d: pop(%v) = %d, want %d", step, k, got, w)
		}
		if s.m == nil && len(s.ents)-s.head > 2*s.live+17 {
			t.Fatalf("step %d: %d entries held for %d requests", step, len(s.ents)-s.head, s.live)
		}
	}
	if s.pop(reqKey{9, 9, 9}) != 1 {
		t.Fatal("the first request was lost")
	}
}
