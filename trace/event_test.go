package trace

import (
	"math"
	"testing"
)

// TestSane checks that Sane is Absurd's quick test: an event it passes
// has no fault Absurd finds, and the ordinary events pass it.
func TestSane(t *testing.T) {
	computes := []float64{0, 1, 1e6, MaxSleep, math.Nextafter(MaxSleep, math.Inf(1)), 1e12, MaxFlops, math.Nextafter(MaxFlops, math.Inf(1)), -1, math.Inf(1), math.NaN()}
	bytes := []int64{0, 8, 1 << 40, -1, math.MinInt64}
	for _, k := range []Kind{Compute, Sleep, Send, Recv, Irecv, Allreduce, Alltoallv} {
		for _, c := range computes {
			for _, sb := range bytes {
				for _, rb := range bytes {
					for _, counts := range [][]int64{nil, {8, 0}, {8, -8}} {
						e := NewEvent(k)
						e.Compute, e.SendBytes, e.RecvBytes, e.SendCounts = c, sb, rb, counts
						if e.Sane() && e.Absurd() != "" {
							t.Errorf("%v: sane, but %s", e, e.Absurd())
						}
						ordinary := c >= 0 && c <= MaxSleep && sb >= 0 && rb >= 0 && counts == nil
						if ordinary && !e.Sane() {
							t.Errorf("%v: not sane", e)
						}
						if e.Absurd() == "" && k != Recv && k != Irecv && !e.Sane() && counts == nil {
							t.Errorf("%v: not absurd, not sane", e)
						}
					}
				}
			}
		}
	}
}
