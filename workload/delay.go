package workload

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Delay slows one rank down in a few iterations, so that a generated trace
// has known slow iterations: the ground truth that slow-instance detection
// (package pattern) and prediction are tested and demonstrated against.
// In each listed iteration (0-based), every computation rank Rank makes is
// multiplied by Factor, on top of imbalance and noise. Each kind that reads
// it has one main computation per iteration (stencil2d, stencil3d, ring) or
// splits Flops over several (lu, sweep, cg, mg, bt, ft): either way the
// rank computes Factor times Flops in that iteration. The zero Delay is no
// delay.
type Delay struct {
	Rank       int
	Iterations []int
	Factor     float64
}

// maxFactor bounds a delay's factor, as maxBytes bounds sizes.
const maxFactor = 1e6

// delaySyntax is the form ParseDelay takes, for error messages.
const delaySyntax = "want RANK:IT[,IT...]:FACTOR, such as 5:7,23,41:6"

// IsZero reports whether d is the zero Delay, no delay.
func (d Delay) IsZero() bool { return d.Rank == 0 && len(d.Iterations) == 0 && d.Factor == 0 }

// String formats d as ParseDelay reads it: "5:7,23,41:6".
func (d Delay) String() string {
	its := make([]string, len(d.Iterations))
	for i, it := range d.Iterations {
		its[i] = strconv.Itoa(it)
	}
	return strconv.Itoa(d.Rank) + ":" + strings.Join(its, ",") + ":" + strconv.FormatFloat(d.Factor, 'g', -1, 64)
}

// ParseDelay parses a delay written RANK:IT[,IT...]:FACTOR: "5:7,23,41:6"
// makes rank 5 compute 6 times longer in iterations 7, 23 and 41
// (0-based). Whether the rank and the iterations exist is checked by New,
// which knows the number of ranks and iterations.
func ParseDelay(s string) (Delay, error) {
	parts := strings.Split(s, ":")
	if len(parts) != 3 {
		return Delay{}, fmt.Errorf("delay %q: %s", s, delaySyntax)
	}
	var d Delay
	rank, err := strconv.Atoi(strings.TrimSpace(parts[0]))
	if err != nil || rank < 0 {
		return Delay{}, fmt.Errorf("delay %q: rank %q is not a non-negative integer (%s)", s, parts[0], delaySyntax)
	}
	d.Rank = rank
	for _, f := range strings.Split(parts[1], ",") {
		it, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || it < 0 {
			return Delay{}, fmt.Errorf("delay %q: iteration %q is not a non-negative integer (%s)", s, f, delaySyntax)
		}
		d.Iterations = append(d.Iterations, it)
	}
	d.Factor, err = strconv.ParseFloat(strings.TrimSpace(parts[2]), 64)
	if err != nil || d.checkFactor() != nil {
		return Delay{}, fmt.Errorf("delay %q: factor %q is not a number in [1, %g] (%s)", s, parts[2], float64(maxFactor), delaySyntax)
	}
	if err := d.checkIterations(); err != nil {
		return Delay{}, fmt.Errorf("delay %q: %w", s, err)
	}
	return d, nil
}

// check validates d against a trace of ranks ranks and iterations
// iterations.
func (d Delay) check(ranks, iterations int) error {
	if d.IsZero() {
		return nil
	}
	if d.Rank < 0 || d.Rank >= ranks {
		return fmt.Errorf("delay %s: rank %d is not in [0, %d)", d, d.Rank, ranks)
	}
	if err := d.checkFactor(); err != nil {
		return fmt.Errorf("delay %s: %w", d, err)
	}
	if err := d.checkIterations(); err != nil {
		return fmt.Errorf("delay %s: %w", d, err)
	}
	for _, it := range d.Iterations {
		if it < 0 || it >= iterations {
			return fmt.Errorf("delay %s: iteration %d is not in [0, %d) (iterations are 0-based)", d, it, iterations)
		}
	}
	return nil
}

func (d Delay) checkFactor() error {
	if !(d.Factor >= 1 && d.Factor <= maxFactor) {
		return fmt.Errorf("factor must be in [1, %g], not %g", float64(maxFactor), d.Factor)
	}
	return nil
}

// checkIterations requires at least one iteration and no repeated one.
func (d Delay) checkIterations() error {
	if len(d.Iterations) == 0 {
		return fmt.Errorf("no iteration to delay")
	}
	sorted := slices.Sorted(slices.Values(d.Iterations))
	for i := 1; i < len(sorted); i++ {
		if sorted[i] == sorted[i-1] {
			return fmt.Errorf("iteration %d listed twice", sorted[i])
		}
	}
	return nil
}

// clone returns a copy of d with its iterations sorted, for a trace to
// keep its own.
func (d Delay) clone() Delay {
	if d.Iterations != nil {
		d.Iterations = slices.Sorted(slices.Values(d.Iterations))
	}
	return d
}

// slowdown returns the factor of the computations of iteration it, given
// the sorted iterations a delay slows down by factor: factor if it is one
// of them, else 1.
func slowdown(iterations []int, factor float64, it int) float64 {
	if _, ok := slices.BinarySearch(iterations, it); ok {
		return factor
	}
	return 1
}
