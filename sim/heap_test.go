package sim

import (
	"math"
	"math/rand"
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

// TestDateIndex checks the index of the buckets by date against the heap
// itself under random sets and removals: find gives, for every date, the
// bucket of the heap with that date, or none, however many entries went
// stale (buckets dropped or moved to another date) and however often the
// table was rebuilt.
func TestDateIndex(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	var h actionHeap
	acts := make([]*action, 300)
	for i := range acts {
		acts[i] = &action{}
		h.register(acts[i])
	}
	date := func() float64 { return float64(rng.Intn(400)) / 7 }
	rebuilt := 0
	for step := 0; step < 30000; step++ {
		a := acts[rng.Intn(len(acts))]
		if rng.Intn(3) == 0 {
			h.remove(a)
		} else {
			used := h.byDate.used
			h.set(a, date())
			if h.byDate.used < used { // only a rebuild drops entries
				rebuilt++
			}
		}
		if step%97 != 0 {
			continue
		}
		want := map[float64]int32{}
		for _, ref := range h.bh {
			want[h.b[ref.b].date] = ref.b
		}
		for k := range 400 {
			d := float64(k) / 7
			w, ok := want[d]
			if !ok {
				w = -1
			}
			if got, _ := h.find(d); got != w {
				t.Fatalf("step %d: find(%g) = %d, want %d", step, d, got, w)
			}
		}
	}
	if rebuilt == 0 {
		t.Error("the index was never rebuilt")
	}
	if got, _ := h.find(math.Copysign(0, -1)); got >= 0 && h.b[got].date != 0 {
		t.Errorf("find(-0) = bucket of date %g", h.b[got].date)
	}
}
