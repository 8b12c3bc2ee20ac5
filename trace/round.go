package trace

import (
	"math"
	"math/bits"
)

// Rounded returns src with its times and amounts rounded within a
// relative error eps, each to its b most significant bits, b the fewest
// for which 2^-b ≤ eps (7 at 1%). A timed event's gap (its Enter less the
// rank's previous Exit) is rounded as it is, within eps/2 of its own: a
// replay computes for as long. So is the duration of a call a replay
// takes as it was measured (a computation, a local call, a sleep, I/O).
// Any other call's Exit is rounded as its distance from its Enter as
// rounded, so that it reads back within eps/2 of that distance from its
// own: the errors before it are taken back, and the ranks' clocks do not
// drift apart. (Rounding each duration on its own, the errors added up
// to milliseconds over a run of MPB, more than its messages take: slow
// then found 66% more waiting, and receives that ended before their sends
// began. Rounding each Enter as its distance from the previous Exit as
// rounded instead moved the errors into the computations, and a replay of
// PRK's transpose differed by 1.7%.) An Exit that the errors put before
// its Enter reads as the Enter, the rest taken back at the next calls.
// The amount of a Compute or Sleep event is rounded within eps/2 of its
// own. Rounding twice rounds as once. The rounded values end in zero
// bits, which a compressor stores in fewer bytes: a real program's
// timestamps vary in their last digits at every call (LULESH's Score-P
// archive on 27 ranks takes 46% fewer bytes in a .ktr stream at eps 1%).
// A rank's first timed Enter, MPI_Init's times (where a replay starts),
// gaps and durations of zero or less, the amounts of other calls (a
// reduction's flops are a parameter of the call), and events without
// times keep theirs. eps of 0 or less returns src.
func Rounded(src Source, eps float64) Source {
	if !(eps > 0) {
		return src
	}
	return roundedSource{src, bitsFor(eps)}
}

// bitsFor returns the fewest bits b, at least 1, for which 2^-b ≤ eps.
func bitsFor(eps float64) int {
	b := 1
	for b < 62 && math.Ldexp(1, -b) > eps {
		b++
	}
	return b
}

type roundedSource struct {
	Source
	bits int // significant bits kept
}

func (s roundedSource) OpenRank(r int) (Reader, error) {
	rd, err := s.Source.OpenRank(r)
	if err != nil {
		return nil, err
	}
	return &roundedReader{Reader: rd, bits: s.bits}, nil
}

// roundedReader rounds each event of its reader into ev.
type roundedReader struct {
	Reader
	bits int
	ev   Event
	// last is the previous timed event's Exit as read, at its Exit as
	// rounded; timed tells that there was one.
	last, at Time
	timed    bool
}

func (r *roundedReader) Next() bool {
	if !r.Reader.Next() {
		return false
	}
	r.ev = *r.Reader.Event()
	e := &r.ev
	if e.HasTime && e.Kind == Init {
		// A replay starts where MPI_Init returns: its times stay exact
		// (a 193 ms MPI_Init rounded moved the start of Pipit's ping-pong,
		// a 6 ms run, by 5.6% of it).
		r.last, r.at, r.timed = e.Exit, e.Exit, true
	} else if e.HasTime {
		enter, exit := e.Enter, e.Exit
		if r.timed {
			e.Enter = r.at + roundTime(enter-r.last, r.bits)
		}
		e.Exit = e.Enter + roundTime(exit-enter, r.bits)
		if exit > enter && !measured(e.Kind) {
			// Its distance from the Enter as rounded: the Enter's
			// error is not carried on.
			e.Exit = e.Enter + max(roundTime(exit-e.Enter, r.bits), 0)
		}
		r.last, r.at, r.timed = exit, e.Exit, true
	}
	if e.Kind == Compute || e.Kind == Sleep {
		e.Compute = roundAmount(e.Compute, r.bits)
	}
	return true
}

func (r *roundedReader) Event() *Event { return &r.ev }

// measured reports whether a replay of a timed trace takes the duration
// of a k as it was measured (Untimed): a computation, a local call, a
// sleep, an I/O call.
func measured(k Kind) bool { return k == Compute || k == Local || k == Sleep || k.IsIO() }

// roundTime rounds t > 0 to its b most significant bits (to the nearest
// multiple of 2^(e-b), where 2^e ≤ t < 2^(e+1)); it keeps t ≤ 0, and t
// where the rounding would overflow.
func roundTime(t Time, b int) Time {
	e := bits.Len64(uint64(t)) - 1
	if t <= 0 || e <= b {
		return t
	}
	s := Time(1) << (e - b)
	if t > math.MaxInt64-s/2 {
		return t
	}
	return (t + s/2) &^ (s - 1)
}

// roundAmount is roundTime for an amount: it keeps x ≤ 0, infinities
// and NaN.
func roundAmount(x float64, b int) float64 {
	if !(x > 0) || math.IsInf(x, 0) {
		return x
	}
	_, exp := math.Frexp(x) // x in [2^(exp-1), 2^exp)
	s := math.Ldexp(1, exp-1-b)
	if s == 0 || math.IsInf(x/s, 0) {
		return x
	}
	return math.Round(x/s) * s
}
