package ti

import (
	"math/rand/v2"
	"testing"

	"kairos/internal/reqstore"
)

// TestRequestsAsStore checks the parser's logged store against
// SimGrid's store filed at every push: the same request at every wait
// and test, the same count, over random runs of isends, irecvs, waits,
// tests and waitalls on few keys (so that queues hold several requests).
func TestRequestsAsStore(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for run := range 200 {
		var lazy requests
		var eager reqstore.Store[uint64]
		id := uint64(0)
		for op := range 300 {
			key := reqKey{Src: int32(rng.IntN(3)), Dst: int32(rng.IntN(2)), Tag: int32(rng.IntN(2))}
			switch k := rng.IntN(10); {
			case k < 5:
				id++
				lazy.push(key, id)
				eager.Push(key, id)
			case k < 7: // a wait
				got, _ := lazy.store().Pop(key)
				want, _ := eager.Pop(key)
				if got != want {
					t.Fatalf("run %d, op %d: a wait on %v took request %d, SimGrid's store %d", run, op, key, got, want)
				}
			case k < 9: // a test that did not complete: the request goes back
				got, _ := lazy.store().Pop(key)
				want, _ := eager.Pop(key)
				if got != want {
					t.Fatalf("run %d, op %d: a test on %v took request %d, SimGrid's store %d", run, op, key, got, want)
				}
				if got != 0 {
					lazy.store().Push(key, got)
					eager.Push(key, want)
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
