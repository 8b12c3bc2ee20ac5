package pattern

import (
	"math"
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
