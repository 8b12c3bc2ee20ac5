package ti

import (
	"math/rand/v2"
	"testing"

	"kairos/internal/reqstore"
)

// TestRequestsAsStore checks the parser's logged store against
// SimGrid's store filed at every push: the same request at every wait
// and test, the same count, over random runs of isends, irecvs, waits,
// tests and waitalls on few keys (so that queues hold several requests),
// some starting with more requests than the log holds.
func TestRequestsAsStore(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for run := range 200 {
		var lazy requests
		var eager reqstore.Store[uint64]
		id := uint64(0)
		key := func() reqKey {
			return reqKey{Src: int32(rng.IntN(3)), Dst: int32(rng.IntN(2)), Tag: int32(rng.IntN(2))}
		}
		if run%10 == 0 { // the log filed when full
			for range 2*maxPending + 5 {
				k := key()
				id++
				lazy.push(k, id)
				eager.Push(k, id)
			}
		}
		for op := range 300 {
			k := key()
			switch c := rng.IntN(10); {
			case c < 5:
				id++
				lazy.push(k, id)
				eager.Push(k, id)
			case c < 7: // a wait
				got, _ := lazy.filed().Pop(k)
				want, _ := eager.Pop(k)
				if got != want {
					t.Fatalf("run %d, op %d: a wait on %v took request %d, SimGrid's store %d", run, op, k, got, want)
				}
			case c < 9: // a test that did not complete: the request goes back
				got, _ := lazy.filed().Pop(k)
				want, _ := eager.Pop(k)
				if got != want {
					t.Fatalf("run %d, op %d: a test on %v took request %d, SimGrid's store %d", run, op, k, got, want)
				}
				if got != 0 {
					lazy.filed().Push(k, got)
					eager.Push(k, want)
				}
			default:
				lazy.clear()
				eager.Clear()
			}
			if lazy.len() != eager.Len() {
				t.Fatalf("run %d, op %d: %d requests stored, SimGrid's store %d", run, op, lazy.len(), eager.Len())
			}
		}
	}
}
