package pattern

import (
	"encoding/json"
	"math"
)

// Weights returns the principal eigenvector of the n×n pairwise
// comparison matrix a (a(i, j) says how much alternative i outweighs j),
// normalised to sum 1: the AHP priorities. It uses the power method, which
// for the consistent matrices of ratios AHP builds here converges in one
// step; it stops when no weight moves by more than 1e-12 or after 100
// iterations. The matrix is never stored, so n may be large.
func Weights(n int, a func(i, j int) float64) []float64 {
	w := make([]float64, n)
	for i := range w {
		w[i] = 1 / float64(n)
	}
	next := make([]float64, n)
	for it := 0; it < 100; it++ {
		sum := 0.0
		for i := range next {
			v := 0.0
			for j := range w {
				v += a(i, j) * w[j]
			}
			next[i] = v
			sum += v
		}
		if !(sum > 0) || math.IsInf(sum, 0) {
			return w
		}
		delta := 0.0
		for i := range next {
			next[i] /= sum
			delta = max(delta, math.Abs(next[i]-w[i]))
		}
		w, next = next, w
		if delta < 1e-12 {
			break
		}
	}
	return w
}

// RatioWeights returns the AHP weights of alternatives scored by values
// (all positive): the comparison matrix is a(i, j) = v_i / v_j (Tables 8a
// and 9a).
func RatioWeights(values []float64) []float64 {
	return Weights(len(values), func(i, j int) float64 { return values[i] / values[j] })
}

// Affinity is the inspection affinity of a slow instance (Section 4.3).
type Affinity int

// Inspection affinity levels.
const (
	Low Affinity = iota
	Medium
	High
)

// String returns "Low", "Medium" or "High".
func (a Affinity) String() string {
	switch a {
	case High:
		return "High"
	case Medium:
		return "Medium"
	}
	return "Low"
}

// MarshalJSON writes the affinity as its name.
func (a Affinity) MarshalJSON() ([]byte, error) { return json.Marshal(a.String()) }

// AffinityOf places the point (complexity weight, severity weight) in one
// of three equal 30° sectors (Figure 8): above 60° High, below 30° Low,
// Medium otherwise (boundaries included). It also returns the angle in
// degrees.
func AffinityOf(complexity, severity float64) (Affinity, float64) {
	deg := math.Atan2(severity, complexity) * 180 / math.Pi
	switch {
	case deg > 60:
		return High, deg
	case deg < 30:
		return Low, deg
	}
	return Medium, deg
}

// Classify runs the AHP of Section 4.3 over the slow instances of each
// phase: severity is duration ÷ bytes (duration alone for an instance
// that moves no bytes), complexity is processes × events. It fills each
// Slow's Severity, Complexity, Angle and Affinity.
func Classify(slow []Slow) {
	byPhase := map[int][]int{}
	for i := range slow {
		byPhase[slow[i].Phase] = append(byPhase[slow[i].Phase], i)
	}
	for _, idx := range byPhase {
		sev := make([]float64, len(idx))
		cpx := make([]float64, len(idx))
		for j, i := range idx {
			s := &slow[i]
			sev[j] = max(s.Duration, 1e-9) / float64(max(s.Bytes, 1))
			cpx[j] = float64(max(s.Ranks*s.Events, 1))
		}
		ws, wc := RatioWeights(sev), RatioWeights(cpx)
		for j, i := range idx {
			s := &slow[i]
			s.Severity, s.Complexity = ws[j], wc[j]
			s.Affinity, s.Angle = AffinityOf(wc[j], ws[j])
		}
	}
}
