package ktr

import (
	"math/rand/v2"
	"slices"
	"testing"

	"kairos/trace"
)

// TestTmplTable: the table numbers each chunk's distinct events in the
// order they first come, as a search of the events so far does, events
// in cycles and at random, across
// chunks of up to a thousand distinct events (growing within a chunk,
// after earlier chunks), vectors nil, empty and not, the caller's
// vectors changed after they were added.
func TestTmplTable(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var tab tmplTable
	for chunk := range 40 {
		distinct := 1 + rng.IntN(1000)
		var seen []trace.Event
		for i := range 3000 {
			e := trace.NewEvent(trace.Send)
			e.Partner, e.Tag = int32(rng.IntN(distinct)), int32(chunk)
			if i%100 < 70 { // runs of a cycle, which the events that follow find
				e.Partner = int32(i % min(distinct, 1+chunk%9))
			}
			switch rng.IntN(4) {
			case 1:
				e.SendCounts = []int64{}
			case 2:
				e.SendCounts = []int64{int64(e.Partner % 3)}
			}
			want := slices.IndexFunc(seen, func(s trace.Event) bool { return trace.SameEvent(&s, &e) })
			got, ok := tab.find(&e)
			if ok != (want >= 0) || ok && int(got) != want {
				t.Fatalf("chunk %d: found %d, %v; want %d", chunk, got, ok, want)
			}
			if !ok {
				if n := tab.add(&e); int(n) != len(seen) {
					t.Fatalf("chunk %d: added as %d, want %d", chunk, n, len(seen))
				}
				seen = append(seen, e.Clone())
				if len(e.SendCounts) > 0 {
					e.SendCounts[0] = 99 // the caller's vector changes: the table keeps its own
				}
			}
		}
		if tab.len() != len(seen) {
			t.Fatalf("chunk %d: %d events, want %d", chunk, tab.len(), len(seen))
		}
		tab.reset()
	}
}
