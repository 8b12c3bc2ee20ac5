package prsd

import (
	"math/rand/v2"
	"slices"
	"testing"

	"kairos/trace"
)

// aheadTrace is ranks whose calls fold from well to little: stretches of
// loops (a body of a few calls repeated) and of calls each at a new
// site, the share of the latter growing with the rank, so that some
// ranks fold little at a power of two of their calls, some only once
// every call is in, some never. Between the calls come untimed
// computations at sites of their own (no call, for the fold) and timed
// ones (calls); every other rank starts with untimed computations (the
// fold's first call).
func aheadTrace(ranks int) *trace.Trace {
	tr := trace.New(ranks, trace.Meta{})
	rng := rand.New(rand.NewPCG(11, 12))
	site := uint64(1000)
	for r := range ranks {
		irregular := float64(r) / float64(ranks-1)
		calls := 4500 + rng.IntN(16000)
		var at trace.Time
		add := func(e trace.Event) {
			if e.HasTime {
				e.Enter, e.Exit = at+1, at+2
				at = e.Exit
			}
			tr.Ranks[r].Append(&e)
		}
		compute := func(timed bool) {
			site++
			add(trace.Event{Kind: trace.Compute, Compute: 100, CallSite: site, HasTime: timed})
		}
		if r%2 == 0 {
			compute(false)
			compute(false)
		}
		for n := 0; n < calls; {
			if rng.Float64() < irregular {
				for range 1 + rng.IntN(40) {
					site++
					add(trace.Event{Kind: trace.Send, Partner: 0, CallSite: site})
					n++
				}
				continue
			}
			body := 1 + rng.IntN(4)
			for range 2 + rng.IntN(30) {
				for k := range body {
					add(trace.Event{Kind: trace.Send, Partner: 0, CallSite: uint64(k + 1)})
					n++
					for range rng.IntN(5) / 2 { // none, one or two
						compute(false)
					}
				}
			}
			if rng.IntN(4) == 0 {
				compute(true)
			}
		}
	}
	return tr
}

// TestFoldsLittleAhead: folding a rank's calls without their parameters
// (foldsLittleAhead, run to its end) tells exactly the ranks whose
// folding Build gives up (every rank a cluster of its own), among ranks
// that fold little at a power of two of their calls, at their end, or
// not at all; and Build writes the same trace with it as without it.
func TestFoldsLittleAhead(t *testing.T) {
	const ranks = 12
	tr := aheadTrace(ranks)
	groups := make([][]int32, ranks)
	for r := range groups {
		groups[r] = []int32{int32(r)}
	}
	build := func(on bool) *Trace {
		defer func(a bool) { ahead = a }(ahead)
		ahead = on
		got, err := Build(tr, groups, DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	without := build(false)
	defer func(w int64) { aheadWell = w }(aheadWell)
	aheadWell = 1 << 62
	b, err := NewBuilder(tr.Meta(), ranks, groups, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	b.origin = tr
	little := 0
	for r := range ranks {
		got, want := b.foldsLittleAhead(r), without.Clusters[r].Events != nil
		if got != want {
			t.Errorf("rank %d: folds little ahead %v, Build gave its folding up %v", r, got, want)
		}
		if got {
			little++
		}
	}
	if little < 3 || little > ranks-3 {
		t.Fatalf("%d of %d ranks fold little: the case tells little", little, ranks)
	}
	with := build(true)
	if dump(t, with) != dump(t, without) {
		t.Error("Build's trace differs with foldsLittleAhead")
	}
	// The computations' sites a rank folded little numbers too, in the
	// file's table.
	if !slices.Equal(with.Sites, without.Sites) {
		t.Errorf("sites %d with foldsLittleAhead, %d without", len(with.Sites), len(without.Sites))
	}
}

// TestFoldsLittleAheadEdges: ranks one item either side of foldsLittle's
// bound once every call is in (minItems items), where the item is the
// untimed computation before the first call, a timed computation, or a
// call predicted as a loop's next iteration when the rank ends (flushed
// back into the sequence): foldsLittleAhead counts each as the fold
// does.
func TestFoldsLittleAheadEdges(t *testing.T) {
	unique := func(tr *trace.Trace, n int) {
		for i := range n {
			tr.Ranks[0].Append(&trace.Event{Kind: trace.Send, CallSite: uint64(100 + i)})
		}
	}
	untimed := trace.Event{Kind: trace.Compute, Compute: 1, CallSite: 1}
	timed := trace.Event{Kind: trace.Compute, Compute: 1, CallSite: 2, HasTime: true, Enter: 1, Exit: 2}
	cases := []struct {
		name   string
		events func(tr *trace.Trace)
		little bool
	}{
		{"a computation before the first call", func(tr *trace.Trace) {
			tr.Ranks[0].Append(&untimed)
			unique(tr, minItems)
		}, true},
		{"computations after it", func(tr *trace.Trace) {
			unique(tr, minItems)
			tr.Ranks[0].Append(&untimed)
		}, false},
		{"a timed computation", func(tr *trace.Trace) {
			unique(tr, minItems)
			tr.Ranks[0].Append(&timed)
		}, true},
		{"a loop's next iteration under way", func(tr *trace.Trace) {
			unique(tr, minItems-3)
			for _, s := range []uint64{1, 2, 1, 2, 1} {
				tr.Ranks[0].Append(&trace.Event{Kind: trace.Send, CallSite: s})
			}
		}, true},
		{"a loop's iteration done", func(tr *trace.Trace) {
			unique(tr, minItems-4)
			for _, s := range []uint64{1, 2, 1, 2, 1, 2} {
				tr.Ranks[0].Append(&trace.Event{Kind: trace.Send, CallSite: s})
			}
		}, false},
	}
	defer func(w int64) { aheadWell = w }(aheadWell)
	aheadWell = 1 << 62
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr := trace.New(1, trace.Meta{})
			tc.events(tr)
			defer func(a bool) { ahead = a }(ahead)
			ahead = false
			got, err := Build(tr, nil, DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			if gaveUp := got.Clusters[0].Events != nil; gaveUp != tc.little {
				t.Fatalf("Build gave the folding up %v, want %v", gaveUp, tc.little)
			}
			b, err := NewBuilder(tr.Meta(), 1, nil, DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			b.origin = tr
			if ah := b.foldsLittleAhead(0); ah != tc.little {
				t.Errorf("folds little ahead %v, want %v", ah, tc.little)
			}
		})
	}
}
