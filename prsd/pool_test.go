package prsd

import (
	"fmt"
	"testing"

	"kairos/trace"
	"kairos/workload"
)

// TestRecycledAccumulators: a trace compresses to the same structure, and
// every rank reads back the same events to the bit, whether the
// accumulators fold and the merge are done with (and the compressor's
// nodes) serve the next calls and ranks or are made anew: on every
// generator's noisy, imbalanced trace, with the time error and exact, and
// with histograms, whose ranks leave differently filled accumulators
// behind (statistics, vectors of counts, requests, plug-in modes).
func TestRecycledAccumulators(t *testing.T) {
	defer func(r bool) { recycle = r }(recycle)
	opts := map[string]Options{
		"default":    DefaultOptions(),
		"exact":      {},
		"histograms": {TimeError: 0.05, Histograms: true},
		"plug-ins":   {TimeError: 0.01, Plugins: PluginNames()},
	}
	sources := map[string]trace.Source{"waitall": waitallTrace()}
	for _, kind := range workload.Kinds() {
		sources[kind] = gen(t, kind, 0, 4, true)
	}
	for kind, src := range sources {
		for name, opt := range opts {
			recycle = false
			want := build(t, src, opt)
			recycle = true
			got := build(t, src, opt)
			if dump(t, got) != dump(t, want) {
				t.Fatalf("%s, %s: the structures differ with accumulators recycled", kind, name)
			}
			for r := range src.NumRanks() {
				a, b := events(t, got, r), events(t, want, r)
				if err := sameEvents(a, b); err != nil {
					t.Fatalf("%s, %s: rank %d: %v", kind, name, r, err)
				}
			}
		}
	}
}

// build compresses src's ranks, cluster by cluster as Build orders them,
// into one cluster of every rank.
func build(t *testing.T, src trace.Source, opt Options) *Trace {
	t.Helper()
	tr, err := Build(src, nil, opt)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// sameEvents reports the first difference between two ranks' events.
func sameEvents(a, b []trace.Event) error {
	if len(a) != len(b) {
		return fmt.Errorf("%d events against %d", len(a), len(b))
	}
	for i := range a {
		if !trace.SameEvent(&a[i], &b[i]) {
			return fmt.Errorf("event %d: %+v against %+v", i, a[i], b[i])
		}
	}
	return nil
}

// waitallTrace is 3 ranks that post sends and wait for them in batches of
// varying sizes at varying call sites: calls whose only field is a
// vector, so that recycled accumulators hold vectors' series.
func waitallTrace() *trace.Trace {
	tr := trace.New(3, trace.Meta{})
	for r := range int32(3) {
		var reqs []uint64
		for i := range 60 + 7*int(r) {
			e := trace.NewEvent(trace.Isend)
			e.Partner, e.SendBytes, e.CallSite = (r+1)%3, 8, 1
			e.Request = uint64(i + 1)
			reqs = append(reqs, e.Request)
			tr.Ranks[r].Append(&e)
			if (i+int(r))%(2+i%4) == 0 {
				w := trace.NewEvent(trace.Waitall)
				w.Requests, w.CallSite = reqs, uint64(10+i%5)
				tr.Ranks[r].Append(&w)
				reqs = nil
			}
		}
	}
	return tr
}
