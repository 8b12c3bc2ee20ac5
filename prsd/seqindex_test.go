package prsd

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSeqIndexCandidates: after random appends and truncations, the
// lengths the index gives fold are those a scan of every length finds, in
// the same order: an iteration more where the item l before the tail is a
// loop of body length l, a new loop where the last item's identity is l
// items before it and the sequence holds two lengths l. Identities are
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
				if 2*l <= n && x.keys[n-l-1].id == last {
					want = append(want, cand{l, false})
				}
			}
			if !slices.Equal(got, want) {
				t.Fatalf("%d identities, keys %v: candidates %v, want %v", ids, x.keys[max(0, n-2*maxBody):], got, want)
			}
		}
	}
}
