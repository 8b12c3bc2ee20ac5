package ktr

import (
	"testing"
)

func TestExpSmallRanks(t *testing.T) {
	for _, it := range []int{10, 100, 1000, 2000} {
		for _, nz := range []float64{0, 0.02} {
			tr := stencilNoise(16, 16, it, false, nz)
			if it == 2000 {
				tr = stencilNoise(8, 8, it, false, nz)
			}
			n := float64(tr.NumEvents())
			k, ti := fileSize(t, writeTemp(t, tr, Options{})), fileSize(t, writeTIGzip(t, tr))
			t.Logf("iters %d noise %g: ktr %.3f ti.gz %.3f B/ev ratio %.2f", it, nz, k/n, ti/n, ti/k)
		}
	}
}
