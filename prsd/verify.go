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
	rd, err := openVerifying(src, t, r, nil)
	if err != nil {
		return err
	}
	defer rd.Close()
	for rd.Next() {
	}
	return rd.Err()
}

// Verifying is a Trace whose readers compare each rank, as it is read,
// with the rank of the source it was built from, as Verify does: a pass
// that reads every rank of t anyway (check's) proves t lossless on the
// way, rather than after a pass of its own. A rank read to its end and
// found equal is read plainly afterwards; Rest verifies the ranks that
// were not. Different ranks may be read at once.
type Verifying struct {
	*Trace
	src  trace.Source
	read []bool // by rank: read to its end, equal to src's
}

// NewVerifying returns t, verified against src as it is read.
func NewVerifying(src trace.Source, t *Trace) (*Verifying, error) {
	if src.NumRanks() != t.NumRanks() {
		return nil, fmt.Errorf("%w: %d ranks, not %d", ErrNotLossless, t.NumRanks(), src.NumRanks())
	}
	return &Verifying{Trace: t, src: src, read: make([]bool, t.NumRanks())}, nil
}

// OpenRank returns a reader of rank r's events, compared with src's
// until the rank has once been read to its end. Its Err is Verify's
// error where they differ.
func (v *Verifying) OpenRank(r int) (trace.Reader, error) {
	if r < 0 || r >= len(v.read) || v.read[r] {
		return v.Trace.OpenRank(r)
	}
	return openVerifying(v.src, v.Trace, r, &v.read[r])
}

// Rest verifies the ranks that no reader has read to their end.
func (v *Verifying) Rest() error {
	for r, ok := range v.read {
		if !ok {
			if err := verifyRank(v.src, v.Trace, r); err != nil {
				return err
			}
		}
	}
	return nil
}

// verifying reads rank r of a compressed trace and compares each call
// with the next of the rank's source, and the untimed computations
// before it (summed) with the source's.
type verifying struct {
	a, b  trace.Reader // the source's rank, the compressed one's
	r     int
	eps   float64
	calls int     // the calls compared
	flops float64 // b's untimed computations since its last call
	err   error
	ended *bool // set once b ended equal to a (nil: not kept)
}

func openVerifying(src trace.Source, t *Trace, r int, ended *bool) (*verifying, error) {
	a, err := src.OpenRank(r)
	if err != nil {
		return nil, err
	}
	b, err := t.OpenRank(r)
	if err != nil {
		a.Close()
		return nil, fmt.Errorf("rank %d, compressed: %w", r, err)
	}
	return &verifying{a: a, b: b, r: r, eps: t.TimeError, ended: ended}, nil
}

func (v *verifying) Next() bool {
	if v.err != nil {
		return false
	}
	if v.b.Next() {
		e := v.b.Event()
		if e.Kind == trace.Compute && !e.HasTime {
			v.flops += e.Compute
			return true
		}
		v.err = v.compare(e)
		v.flops = 0
		v.calls++
		return v.err == nil
	}
	if v.err = v.compare(nil); v.err == nil && v.ended != nil {
		*v.ended = true
	}
	return false
}

// compare reads the source's next call and compares it, and the flops
// before it, with the compressed rank's, e (nil: the compressed rank
// ended, or failed).
func (v *verifying) compare(e *trace.Event) error {
	flops, okA := nextCall(v.a)
	if err := v.a.Err(); err != nil {
		return fmt.Errorf("rank %d: %w", v.r, err)
	}
	if err := v.b.Err(); err != nil {
		return fmt.Errorf("rank %d, compressed: %w", v.r, err)
	}
	if !sameFlops(flops, v.flops, v.eps) {
		return fmt.Errorf("%w: rank %d computes %g flops before its call %d, %g read back", ErrNotLossless, v.r, flops, v.calls, v.flops)
	}
	if okB := e != nil; okA != okB {
		return fmt.Errorf("%w: rank %d has %s calls at call %d", ErrNotLossless, v.r, map[bool]string{true: "fewer", false: "more"}[okA], v.calls)
	}
	if e != nil && !sameCall(v.a.Event(), e) {
		return fmt.Errorf("%w: rank %d call %d is %s, read back as %s", ErrNotLossless, v.r, v.calls, v.a.Event(), e)
	}
	return nil
}

func (v *verifying) Event() *trace.Event { return v.b.Event() }
func (v *verifying) Err() error          { return v.err }

func (v *verifying) Close() error {
	return errors.Join(v.a.Close(), v.b.Close())
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
