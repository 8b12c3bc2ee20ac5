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
// loop of body length l, a new loop where the last two items' identities
// are l items before them and the sequence holds two lengths l. Identities are
// numbered for a whole trace: a sequence's may be few and large.
func TestSeqIndexCandidates(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, ids := range []int32{2, 5, 40, 1000} {
		var x seqIndex
		for range 5000 {
			if n := len(x.keys); n > 0 && rng.IntN(4) == 0 {
				x.truncate(n - rng.IntN(min(n, 2*maxBody)+1))
			} else {
				id := rng.Int32N(ids)
				body := 0
				if id%3 == 0 { // an identity is a loop or a call, for good
					body = int(id)%maxBody + 1
				}
				x.push(id*40_009%(1<<30), body)
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
			n, last := len(x.keys), x.keys[len(x.keys)-1].id
			for l := 1; l <= maxBody && l < n; l++ {
				if int(x.keys[n-l-1].body) == l {
					want = append(want, cand{l, true})
				}
				if 2*l <= n && x.keys[n-l-1].id == last && (l == 1 || x.keys[n-l-2] == x.keys[n-2]) {
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
// drops are used again or not, on random nests of loops broken by stray
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
	shape := func(sites []uint64) string {
		s := NewShape(NewInterner())
		for _, site := range sites {
			s.Add(&trace.Event{Kind: trace.Send, CallSite: site})
		}
		s.Finish()
		return s.Key()
	}
	defer func(r bool) { recycle = r }(recycle)
	for range 300 {
		var sites []uint64
		for len(sites) < 2000 {
			sites = emit(0, sites)
		}
		recycle = true
		got := shape(sites)
		recycle = false
		if want := shape(sites); got != want {
			t.Fatalf("%d calls: the shapes differ with nodes recycled", len(sites))
		}
	}
}
