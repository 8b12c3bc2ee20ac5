package pattern

import (
	"encoding/json"
	"math"
)

// RatioWeights returns the AHP priorities of alternatives scored by
// values (all positive): the principal eigenvector, normalised to sum 1,
// of the pairwise comparison matrix a(i, j) = v_i / v_j (Tables 8a and
// 9a). That matrix is consistent (a(i, j) a(j, k) = a(i, k)), so its
// principal eigenvector is the values themselves, normalised (Saaty): the
// weights take one pass over the values, not the power method's passes
// over the n² entries (25 s of a report on 6.5 M events).
// Values whose sum is not a positive finite number give equal weights.
func RatioWeights(values []float64) []float64 {
	w := make([]float64, len(values))
	sum := 0.0
	for _, v := range values {
		sum += v
	}
	for i, v := range values {
		w[i] = v / sum
	}
	if !(sum > 0) || math.IsInf(sum, 0) {
		for i := range w {
			w[i] = 1 / float64(len(values))
		}
	}
	return w
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
