package pattern

import (
	"math/rand/v2"
	"testing"
)

// TestPeriodicWindowRoot: the remembered period gives the root the prefix
// function computes, on every window the tiling can ask for (windows
// inside an earlier exact power, at every offset and length), of periodic
// sequences with and without a perturbation.
func TestPeriodicWindowRoot(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 300 {
		u := make([]int32, 1+rng.IntN(4))
		for i := range u {
			u[i] = int32(rng.IntN(3))
		}
		seq := make([]int32, 0, 64)
		for len(seq) < 40+rng.IntN(24) {
			seq = append(seq, u...)
		}
		if trial%2 == 1 {
			seq[rng.IntN(len(seq))] = 3
		}
		var pw periodicWindow
		for s := 0; s < len(seq); s++ {
			for l := len(seq) - s; l > 0; l-- {
				if got, want := pw.root(seq, s, l), root(seq[s:s+l]); got != want {
					t.Fatalf("trial %d, %v: root of [%d:%d] %d, want %d (window %+v)", trial, seq, s, s+l, got, want, pw)
				}
			}
		}
	}
}
