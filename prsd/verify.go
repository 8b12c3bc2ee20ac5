package prsd

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"kairos/trace"
)

// ErrNotLossless is returned by Verify when a rank's calls differ from
// those its compressed form gives back.
var ErrNotLossless = errors.New("the compressed trace does not give back the calls")

// Verify reads every rank of src and of t side by side and returns an
// error naming the first call that differs in kind, call site or a
// parameter (times aside), or before which the untimed computations do
// not sum to the same flops within t's time error: Build is lossless by
// construction, and Verify is the proof a writer can afford.
func Verify(src trace.Source, t *Trace) error {
	if src.NumRanks() != t.NumRanks() {
		return fmt.Errorf("%w: %d ranks, not %d", ErrNotLossless, t.NumRanks(), src.NumRanks())
	}
	for r := range src.NumRanks() {
		if err := verifyRank(src, t, r); err != nil {
			return err
		}
	}
	return nil
}

func verifyRank(src trace.Source, t *Trace, r int) error {
	a, err := src.OpenRank(r)
	if err != nil {
		return err
	}
	defer a.Close()
	b, err := t.OpenRank(r)
	if err != nil {
		return fmt.Errorf("rank %d, compressed: %w", r, err)
	}
	defer b.Close()
	for i := 0; ; i++ {
		fa, okA := nextCall(a)
		fb, okB := nextCall(b)
		if err := a.Err(); err != nil {
			return fmt.Errorf("rank %d: %w", r, err)
		}
		if err := b.Err(); err != nil {
			return fmt.Errorf("rank %d, compressed: %w", r, err)
		}
		if !sameFlops(fa, fb, t.TimeError) {
			return fmt.Errorf("%w: rank %d computes %g flops before its call %d, %g read back", ErrNotLossless, r, fa, i, fb)
		}
		if !okA || !okB {
			if okA != okB {
				return fmt.Errorf("%w: rank %d has %s calls at call %d", ErrNotLossless, r, map[bool]string{true: "fewer", false: "more"}[okA], i)
			}
			return nil
		}
		if !sameCall(a.Event(), b.Event()) {
			return fmt.Errorf("%w: rank %d call %d is %s, read back as %s", ErrNotLossless, r, i, a.Event(), b.Event())
		}
	}
}

// nextCall advances rd past the untimed computations to its next event,
// and returns their flops.
func nextCall(rd trace.Reader) (float64, bool) {
	flops := 0.0
	for rd.Next() {
		e := rd.Event()
		if e.Kind != trace.Compute || e.HasTime {
			return flops, true
		}
		flops += e.Compute
	}
	return flops, false
}

// sameFlops reports whether b is within the time error of a (up to the
// rounding of their sums).
func sameFlops(a, b, eps float64) bool {
	return math.Abs(a-b) <= (eps+1e-12)*math.Max(math.Abs(a), math.Abs(b))
}

// sameCall compares what a compressed trace keeps exactly.
func sameCall(x, y *trace.Event) bool {
	cx, cy := x.Compute, y.Compute
	if isTiming(x.Kind) {
		cx, cy = 0, 0
	}
	return x.Kind == y.Kind && x.CallSite == y.CallSite && x.Partner == y.Partner && x.Source == y.Source &&
		x.Tag == y.Tag && x.Comm == y.Comm && x.NewComm == y.NewComm && x.SendBytes == y.SendBytes &&
		x.RecvBytes == y.RecvBytes && x.SendType == y.SendType && x.RecvType == y.RecvType &&
		x.Request == y.Request && (x.Requests == nil) == (y.Requests == nil) && slices.Equal(x.Requests, y.Requests) &&
		(x.SendCounts == nil) == (y.SendCounts == nil) && slices.Equal(x.SendCounts, y.SendCounts) &&
		(x.RecvCounts == nil) == (y.RecvCounts == nil) && slices.Equal(x.RecvCounts, y.RecvCounts) &&
		math.Float64bits(cx) == math.Float64bits(cy) && x.Region == y.Region && x.HasTime == y.HasTime && x.Op == y.Op && x.Handle == y.Handle
}
