package pattern

import (
	"math"
	"slices"
	"testing"
)

// TestRatioWeightsEigenvector checks RatioWeights against the definition
// of the AHP priorities: w is the principal eigenvector of the comparison
// matrix a(i, j) = v_i / v_j, whose eigenvalue is n for a consistent
// matrix (A w = n w), normalised to sum 1.
func TestRatioWeightsEigenvector(t *testing.T) {
	for _, values := range [][]float64{
		{1},
		{2, 2, 2},
		{1e-9, 3.5e-3, 42},
		{7, 1, 1e6, 3, 0.25},
		{math.MaxFloat64 / 4, 1},
	} {
		w := RatioWeights(values)
		n := float64(len(values))
		sum := 0.0
		for i := range w {
			sum += w[i]
			aw := 0.0
			for j := range w {
				aw += values[i] / values[j] * w[j]
			}
			if math.Abs(aw-n*w[i]) > 1e-12*n*w[i] {
				t.Errorf("%v: (A w)[%d] = %g, want n w[%d] = %g", values, i, aw, i, n*w[i])
			}
		}
		if math.Abs(sum-1) > 1e-12 {
			t.Errorf("%v: weights %v sum to %g, want 1", values, w, sum)
		}
	}
	// A sum that overflows leaves no order to give: equal weights.
	if w := RatioWeights([]float64{math.MaxFloat64, math.MaxFloat64}); w[0] != 0.5 || w[1] != 0.5 {
		t.Errorf("overflowing values: weights %v, want equal", w)
	}
}

// TestInspectFirst: the slow instances are ordered by inspection
// affinity, then by the time they lost, then by modified Z-score; a
// one-rank barrier far from its pattern's median but 15 µs long comes
// after a late sender that lost seconds (HPCC at 128 ranks).
func TestInspectFirst(t *testing.T) {
	slow := []Slow{
		{Pattern: 0, Affinity: Medium, Duration: 9e6, Median: 1e3, Z: 50},
		{Pattern: 1, Affinity: High, Duration: 15.353, Median: 0.480, Z: 1114.65},
		{Pattern: 2, Affinity: High, Duration: 2002222.929, Median: 22569.702, Z: 496.21},
		{Pattern: 3, Affinity: Low, Duration: 5e6, Median: 1, Z: 9},
		{Pattern: 4, Affinity: High, Duration: 716023.483, Median: 233336.853, Z: 3089.83},
		{Pattern: 5, Affinity: High, Duration: 1015, Median: 0, Z: 7},
		{Pattern: 6, Affinity: High, Duration: 1016, Median: 1, Z: 8}, // the same time lost as 5: the larger Z first
	}
	var got []int
	for _, i := range InspectFirst(slow) {
		got = append(got, slow[i].Pattern)
	}
	if want := []int{2, 4, 6, 5, 1, 0, 3}; !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
}
