package pattern

import (
	"math"
	"testing"
)

// TestDJSCurve: D_JS of two halves with nothing in common is the entropy
// of the whole (ln 2 for two symbols), and a split into halves alike
// is 0, never a rounding error below it.
func TestDJSCurve(t *testing.T) {
	if c := DJSCurve([]int32{0, 0, 1, 1}); math.Abs(c[1]-math.Ln2) > 1e-15 {
		t.Errorf("D_JS of 00|11 = %v, want ln 2", c[1])
	}
	seq := make([]int32, 0, 3000)
	for range 1000 {
		seq = append(seq, 0, 1, 2)
	}
	for i, v := range DJSCurve(seq) {
		if v < 0 || (i+1)%3 == 0 && v > 1e-12 {
			t.Fatalf("D_JS at split %d = %v", i+1, v)
		}
	}
}
