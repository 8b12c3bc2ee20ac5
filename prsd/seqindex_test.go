package prsd

import (
	"math/rand/v2"
	"slices"
	"testing"

	"kairos/trace"
)

// TestSeqIndexCandidates: after random appends and truncations, the
// lengths the index gives fold are those a scan of every length finds, in
// the same order: an iteration more where the item l before the tail is a
// loop whose body is the tail's l items, a new loop where the tail's l
// items repeat the l before them. Identities are numbered for a whole
// trace: a sequence's may be few and large.
func TestSeqIndexCandidates(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, ids := range []int32{2, 5, 40, 1000} {
		// An identity divisible by 3 is a loop's, of a body of calls of
		// its own (bodyOf).
		bodyOf := func(id int32) []itemKey {
			r := rand.New(rand.NewPCG(uint64(id), 0))
			body := make([]itemKey, int(id)%4+1)
			for k := range body {
				body[k] = itemKey{(3*r.Int32N(ids) + 1) * 40_009 % (1 << 30), 0}
			}
			return body
		}
		hash := func(items []itemKey) uint64 {
			var h uint64
			for _, it := range items {
				h = h*hashBase + uint64(uint32(it.id)) + 1
			}
			return h
		}
		var x seqIndex
		var bodies [][]itemKey // by position, a loop's
		for range 5000 {
			switch n := len(x.keys); {
			case n > 0 && rng.IntN(4) == 0:
				m := n - rng.IntN(min(n, 2*maxBody)+1)
				x.truncate(m)
				bodies = bodies[:m]
			case n > 0 && rng.IntN(3) == 0: // an iteration of a recent loop
				q := n - 1 - rng.IntN(min(n, 8))
				for _, it := range bodies[q] {
					x.push(it.id, 0, 0)
					bodies = append(bodies, nil)
				}
			default:
				id := rng.Int32N(ids)
				var body []itemKey
				if id%3 == 0 {
					body = bodyOf(id)
				}
				x.push(id*40_009%(1<<30), len(body), hash(body))
				bodies = append(bodies, body)
			}
			if len(x.keys) == 0 {
				continue
			}
			type cand struct {
				l      int
				extend bool
			}
			var got []cand
			x.candidates(func(l int, extend bool) bool {
				got = append(got, cand{l, extend})
				return false
			})
			var want []cand
			n := len(x.keys)
			for l := 1; l <= maxBody && l < n; l++ {
				if slices.Equal(bodies[n-l-1], x.keys[n-l:]) {
					want = append(want, cand{l, true})
				}
				if 2*l <= n && slices.Equal(x.keys[n-2*l:n-l], x.keys[n-l:]) {
					want = append(want, cand{l, false})
				}
			}
			if !slices.Equal(got, want) {
				t.Fatalf("%d identities, keys %v: candidates %v, want %v", ids, x.keys[max(0, n-2*maxBody):], got, want)
			}
		}
	}
}

// TestRecycledNodes: folding gives the same shapes whether the nodes it
// drops (and their loops' bodies) are used again or not, and whether the
// shape is new or one reset after the previous sequence's (Reset, its
// nodes and tables reused), on random nests of loops broken by stray
// calls (predictions that fail half-way, loops merged into loops).
func TestRecycledNodes(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var emit func(depth int, out []uint64) []uint64
	emit = func(depth int, out []uint64) []uint64 {
		for range 1 + rng.IntN(3) {
			if depth < 3 && rng.IntN(3) == 0 {
				reps := 1 + rng.IntN(4)
				start := len(out)
				out = emit(depth+1, out)
				body := out[start:]
				for range reps - 1 {
					out = append(out, body...)
					if rng.IntN(8) == 0 {
						out = append(out, uint64(rng.IntN(6)))
					}
				}
				continue
			}
			out = append(out, uint64(rng.IntN(6)))
		}
		return out
	}
	reused := NewShape(NewInterner())
	sameShapes(t, &recycle, "nodes recycled", 300, 2000, func() []uint64 { return emit(0, nil) }, func(sites []uint64, want string) {
		reused.Reset()
		if got := foldSites(reused, sites); got != want {
			t.Fatalf("%d calls: the shapes differ in a shape reset", len(sites))
		}
	})
}

// foldSites folds calls of the given sites into s and returns its key.
func foldSites(s *Shape, sites []uint64) string {
	for len(sites) > 0 { // each run of a call site at once, as a signer adds them
		n := 1
		for n < len(sites) && sites[n] == sites[0] {
			n++
		}
		s.AddRun(&trace.Event{Kind: trace.Send, CallSite: sites[0]}, n)
		sites = sites[n:]
	}
	s.Finish()
	return s.Key()
}

// sameShapes folds rounds random sequences of at least n calls (emit's,
// appended until there are) into new shapes with *flag on and off, and
// fails t where the shapes differ; then, the switch on, calls also with
// the sequence and its shape.
func sameShapes(t *testing.T, flag *bool, what string, rounds, n int, emit func() []uint64, also func(sites []uint64, want string)) {
	t.Helper()
	defer func(v bool) { *flag = v }(*flag)
	shape := func(sites []uint64) string { return foldSites(NewShape(NewInterner()), sites) }
	for range rounds {
		var sites []uint64
		for len(sites) < n {
			sites = append(sites, emit()...)
		}
		*flag = true
		got := shape(sites)
		*flag = false
		if want := shape(sites); got != want {
			t.Fatalf("%d calls %v: the shapes differ with %s:\n%s\nwant\n%s", len(sites), sites[:min(len(sites), 60)], what, got, want)
		}
		*flag = true
		if also != nil {
			also(sites, got)
		}
	}
}

// TestSkippedFolds: folding gives the same shapes whether the folds at the
// end of a predicted iteration that the counts waited for rule out
// (compressor.waits) are skipped or not, on random sequences of polling
// loops of varying counts (an item, a pair), each after a call, repeated
// in nests whose counts vary too.
func TestSkippedFolds(t *testing.T) {
	sameShapes(t, &skipFolds, "folds skipped", 500, 1000, pollingLoops(rand.New(rand.NewPCG(9, 10))), nil)
}

// TestExtendedRuns: folding gives the same shapes whether a call that
// repeats a one-call loop ending the sequence is appended and folded or
// taken as an iteration more (compressor.extendRun), on the sequences of
// TestSkippedFolds.
func TestExtendedRuns(t *testing.T) {
	sameShapes(t, &extendRuns, "runs extended", 500, 1000, pollingLoops(rand.New(rand.NewPCG(11, 12))), nil)
}

// TestRuns: folding gives the same shapes whether a run of calls is
// added call by call or its iterations that change only a loop's count
// at once (compressor.addRun), on the sequences of TestSkippedFolds and on
// long runs after a call.
func TestRuns(t *testing.T) {
	sameShapes(t, &runs, "runs added at once", 500, 1000, pollingLoops(rand.New(rand.NewPCG(13, 14))), nil)
	rng := rand.New(rand.NewPCG(15, 16))
	sameShapes(t, &runs, "long runs added at once", 50, 1<<14, func() []uint64 {
		out := []uint64{uint64(rng.IntN(3))}
		for range 1 + rng.IntN(1000) {
			out = append(out, 10)
		}
		return out
	}, nil)
}

// pollingLoops returns a generator of random sequences of polling loops
// of varying counts (an item, a pair), each after a call, repeated and
// nested up to three levels.
func pollingLoops(rng *rand.Rand) func() []uint64 {
	poll := func(out []uint64) []uint64 {
		out = append(out, uint64(rng.IntN(3)))
		body := []uint64{10 + uint64(rng.IntN(2))}
		if rng.IntN(3) == 0 {
			body = append(body, 12)
		}
		for range 1 + rng.IntN(5) {
			out = append(out, body...)
		}
		return out
	}
	var emit func(depth int, out []uint64) []uint64
	emit = func(depth int, out []uint64) []uint64 {
		for range 1 + rng.IntN(3) {
			if depth < 2 && rng.IntN(2) == 0 {
				start := len(out)
				out = emit(depth+1, out)
				body := slices.Clone(out[start:])
				for range rng.IntN(4) {
					out = append(out, body...)
				}
				continue
			}
			out = poll(out)
		}
		return out
	}
	return func() []uint64 { return emit(0, nil) }
}
