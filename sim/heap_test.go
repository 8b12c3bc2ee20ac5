package sim

import (
	"math"
	"math/rand"
	"sort"
	"testing"
)

// TestActionHeapOrder checks the bucketed heap against its definition:
// actions pop by date, equal dates in the order of their last set, under
// random sets (new dates, repeated dates, same date again: a move to its
// bucket's tail), removals and pops.
func TestActionHeapOrder(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	var h actionHeap
	acts := make([]*action, 200)
	for i := range acts {
		acts[i] = &action{}
		h.register(acts[i])
	}
	type key struct {
		date float64
		seq  int
	}
	ref := map[*action]key{} // the actions in the heap
	seq := 0
	dates := []float64{0, 1, 1.5, 2, 3}
	for step := 0; step < 20000; step++ {
		a := acts[rng.Intn(len(acts))]
		switch op := rng.Intn(10); {
		case op < 6:
			d := dates[rng.Intn(len(dates))]
			if rng.Intn(4) == 0 {
				d = rng.Float64() * 4
			}
			seq++
			h.set(a, d)
			ref[a] = key{d, seq}
		case op < 8:
			h.remove(a)
			delete(ref, a)
		default:
			if len(ref) == 0 {
				if !h.empty() {
					t.Fatalf("step %d: heap not empty", step)
				}
				continue
			}
			var want *action
			for x, k := range ref {
				if w, ok := ref[want]; want == nil || !ok || k.date < w.date || k.date == w.date && k.seq < w.seq {
					want = x
				}
			}
			if got := h.top(); got != want || h.minDate() != ref[want].date {
				t.Fatalf("step %d: top is %p (date %g), want %p (date %g)", step, got, h.minDate(), want, ref[want].date)
			}
			h.remove(want)
			delete(ref, want)
		}
		if h.empty() != (len(ref) == 0) {
			t.Fatalf("step %d: empty() = %v with %d actions", step, h.empty(), len(ref))
		}
	}
}

// TestDateIndex checks the date table against a Go map under random
// insertions and deletions (deletion shifts entries back).
func TestDateIndex(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	var x dateIndex
	ref := map[float64]int32{}
	for step := 0; step < 50000; step++ {
		d := float64(rng.Intn(500)) / 7
		if _, ok := ref[d]; ok {
			x.delete(d)
			delete(ref, d)
		} else {
			b := int32(rng.Intn(1000))
			x.put(d, b)
			ref[d] = b
		}
		if x.n != len(ref) {
			t.Fatalf("step %d: %d entries, want %d", step, x.n, len(ref))
		}
	}
	keys := make([]float64, 0, len(ref))
	for d := range ref {
		keys = append(keys, d)
	}
	sort.Float64s(keys)
	for _, d := range keys {
		if got := x.get(d); got != ref[d] {
			t.Errorf("get(%g) = %d, want %d", d, got, ref[d])
		}
	}
	for i := 0; i < 500; i++ {
		d := float64(i) / 7
		if _, ok := ref[d]; !ok && x.get(d) != -1 {
			t.Errorf("get(%g) = %d, want -1", d, x.get(d))
		}
	}
	var z dateIndex
	z.put(math.Copysign(0, -1), 7)
	if got := z.get(0); got != 7 {
		t.Errorf("get(+0) after put(-0) = %d, want 7", got)
	}
}
