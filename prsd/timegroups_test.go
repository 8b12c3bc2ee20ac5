package prsd

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestTimeGroupsFirst checks that the groups tried through the index give
// the group that trying every one in the order made gives: the first near
// a rank's means. The anchors are clustered so that many groups fall in a
// window, with some equal, negative, infinite and NaN; the tolerance is
// relative and absolute (times), and the sorted statistic changes as the
// groups double.
func TestTimeGroupsFirst(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	draw := func(k int) float64 {
		switch rng.IntN(40) {
		case 0:
			return math.NaN()
		case 1:
			return math.Inf(1 - 2*rng.IntN(2))
		case 2:
			return -1e6 * float64(rng.IntN(3))
		}
		if k == statDur {
			return float64(rng.IntN(4)) * 1500 // a few values, apart by about the absolute tolerance
		}
		return float64(1+rng.IntN(50)) * 1e6 * (1 + 0.001*float64(rng.IntN(20)))
	}
	for _, eps := range []float64{0, 0.01, 0.3, 2.9, 3} {
		m := &merger{eps: eps}
		for trial := range 20 {
			ts := &timeGroups{}
			mask := uint8(1<<statGap | 1<<statDur | 1<<statComp)
			for i := range 300 {
				var mean [numStats]float64
				a := &accCall{}
				for k := range numStats {
					if mask&(1<<k) != 0 {
						mean[k] = draw(k)
						a.stats[k] = &statAcc{n: int64(1 + rng.IntN(3)), m2: 1e12 * rng.Float64()}
					}
				}
				var hists [numStats]*Histogram
				want := (*timeGroup)(nil)
				for _, g := range ts.list {
					if m.near(g, &mean, a) {
						want = g
						break
					}
				}
				if got := ts.first(m, &mean, &hists, a); got != want {
					t.Fatalf("eps %g, trial %d, rank %d (means %v): index gives group %p, trying each %p", eps, trial, i, mean, got, want)
				}
				if want == nil {
					ts.add(m, &timeGroup{mask: mask, anchor: mean})
				}
			}
		}
	}
}
