package pattern

import (
	"cmp"
	"math"
	"slices"
)

// DefaultCutoff is Iglewicz and Hoaglin's outlier cut-off for the
// modified Z-score.
const DefaultCutoff = 3.5

// Median returns the lower median of xs: the element at index ⌊(n−1)/2⌋
// of the sorted sample. Table 7 fixes this convention: pattern B's
// durations 3, 3, 4, 5, 6, 12 have median 4 (the mean of the middle pair
// would be 4.5). It returns 0 for an empty sample and does not modify xs.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[(len(s)-1)/2]
}

// Robust is the location and scale of a sample for the modified Z-score.
type Robust struct {
	Median float64 `json:"median"` // lower median
	MAD    float64 `json:"mad"`    // lower median of |x − median| (Eq. 19, unscaled)
	// Scale is what x − median is divided by: MAD/0.6745 (Eq. 21), or,
	// when MAD is 0, 1.253314 × the mean absolute deviation (Iglewicz and
	// Hoaglin's fallback); 0 when every value equals the median.
	Scale    float64 `json:"scale"`
	Fallback bool    `json:"fallback"` // MAD was 0 and Scale comes from the mean deviation
}

// RobustOf computes the median, MAD and scale of xs.
func RobustOf(xs []float64) Robust {
	r := Robust{Median: Median(xs)}
	dev := make([]float64, len(xs))
	mean := 0.0
	for i, x := range xs {
		dev[i] = math.Abs(x - r.Median)
		mean += dev[i]
	}
	r.MAD = Median(dev)
	switch {
	case r.MAD > 0:
		r.Scale = r.MAD / 0.6745
	case mean > 0:
		r.Fallback = true
		r.Scale = 1.253314 * mean / float64(len(xs))
	}
	return r
}

// Z returns the modified Z-score of x: 0.6745 (x − median)/MAD, or the
// fallback's (x − median)/(1.253314 · MeanAD); 0 when the scale is 0.
func (r Robust) Z(x float64) float64 {
	if r.Scale == 0 {
		return 0
	}
	return (x - r.Median) / r.Scale
}

// Threshold returns the duration above which an instance is slow at
// cut-off z (the value where Z reaches z); the median when the scale is 0,
// so that nothing is slow in a sample of equal values.
func (r Robust) Threshold(z float64) float64 { return r.Median + z*r.Scale }

// Slow is one abnormally slow pattern instance (Tables 11, 14, 16, 18, 21).
type Slow struct {
	Position  int     `json:"position"`     // 1-based position in the sequence
	Phase     int     `json:"phase"`        // phase number
	InPhase   int     `json:"in_phase"`     // 1-based position in its phase
	Pattern   int     `json:"pattern"`      // CP number
	Bytes     int64   `json:"bytes"`        // total bytes of the instance
	Duration  float64 `json:"duration_us"`  // microseconds
	Median    float64 `json:"median_us"`    // microseconds, of its (pattern, bytes) group
	Threshold float64 `json:"threshold_us"` // microseconds
	Z         float64 `json:"z"`            // modified Z-score
	Group     int     `json:"group"`        // instances in its (pattern, bytes) group
	Fallback  bool    `json:"fallback"`     // the group's MAD was 0 (see Robust)
	Ranks     int     `json:"ranks"`        // processes
	Events    int     `json:"events"`
	// LastStart (PLS) and LastFinish (PLF) are ranks; Late is "late
	// sender", "late receiver" or "late process".
	LastStart   int32    `json:"last_start"`
	FirstStart  int32    `json:"first_start"`
	LastFinish  int32    `json:"last_finish"`
	FirstFinish int32    `json:"first_finish"`
	Late        string   `json:"late"`
	Slowest     EventRef `json:"slowest"`
	Shortest    EventRef `json:"shortest"`
	// Severity and Complexity are the AHP weights within the phase;
	// Angle is atan(severity/complexity) in degrees; Affinity is High,
	// Medium or Low.
	Severity   float64  `json:"severity"`
	Complexity float64  `json:"complexity"`
	Angle      float64  `json:"angle"`
	Affinity   Affinity `json:"affinity"`
}

// Lost is how much longer than its group's median the instance took, in
// microseconds: the time inspecting it may win back.
func (s *Slow) Lost() float64 { return s.Duration - s.Median }

// InspectFirst returns the indices of slow in the order to inspect them:
// the highest inspection affinity first (the paper's categories), and
// within each the most time lost first, then the largest modified
// Z-score. The Z-score says how unusual an instance is for its pattern,
// not what it costs: on HPCC's archive at 128 ranks a 15 µs barrier on
// a one-rank communicator (median 0.5 µs, M = 1,115) ranked third by it,
// above a 2-second late sender.
func InspectFirst(slow []Slow) []int {
	order := make([]int, len(slow))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(i, j int) int {
		a, b := &slow[i], &slow[j]
		if a.Affinity != b.Affinity {
			return cmp.Compare(b.Affinity, a.Affinity)
		}
		if c := cmp.Compare(b.Lost(), a.Lost()); c != 0 {
			return c
		}
		return cmp.Compare(b.Z, a.Z)
	})
	return order
}

// FindSlow compares every instance with the others of its communication
// pattern that move the same number of bytes, over the whole trace, and
// returns those whose modified Z-score exceeds cutoff, in sequence order.
// phaseOf gives each position's phase and its 1-based place in it.
func FindSlow(p *Patterns, cutoff float64, phaseOf func(pos int) (phase, inPhase int)) ([]Slow, error) {
	if !p.Timed {
		return nil, ErrUntimed
	}
	type groupKey struct {
		pattern int
		bytes   int64
	}
	groups := map[groupKey][]int{}
	for i := range p.Sequence {
		in := &p.Sequence[i]
		k := groupKey{in.Pattern, in.Bytes}
		groups[k] = append(groups[k], i)
	}
	var out []Slow
	xs := []float64{}
	for k, idx := range groups {
		xs = xs[:0]
		for _, i := range idx {
			xs = append(xs, micro(p.Sequence[i].Duration()))
		}
		rb := RobustOf(xs)
		for j, i := range idx {
			z := rb.Z(xs[j])
			if !(z > cutoff) {
				continue
			}
			in := &p.Sequence[i]
			ph, at := phaseOf(in.Position)
			out = append(out, Slow{Position: in.Position, Phase: ph, InPhase: at, Pattern: k.pattern, Bytes: k.bytes,
				Duration: xs[j], Median: rb.Median, Threshold: rb.Threshold(cutoff), Z: z, Group: len(idx), Fallback: rb.Fallback,
				Ranks: len(in.Ranks), Events: in.Events, LastStart: in.LastStart, FirstStart: in.FirstStart,
				LastFinish: in.LastFinish, FirstFinish: in.FirstFinish, Late: in.Lateness(),
				Slowest: in.Slowest, Shortest: in.Shortest})
		}
	}
	slices.SortFunc(out, func(a, b Slow) int { return a.Position - b.Position })
	return out, nil
}

func micro[T ~int64](ps T) float64 { return float64(ps) / 1e6 }
