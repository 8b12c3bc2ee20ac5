package trace

import (
	"math"
	"math/bits"
)

// Rounded returns src with its times and amounts rounded within a
// relative error eps: an amount to its b most significant bits, a time
// to a multiple of a step of at most 2^-b of it (roundTime), b the
// fewest bits for which that is within eps/2 (7 at 1%). A timed event's
// gap (its Enter less the rank's previous Exit) is rounded as it is,
// within eps/2 of its own: a replay computes for as long. So is the duration of a call a replay
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
// bits (a time of whole nanoseconds, in zero bits of its nanoseconds),
// which a compressor stores in fewer bytes: a real program's
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

// bitsFor returns the fewest bits b, at least 1, for which
// 2^-b·(1+2^-(b+1)) ≤ eps, so that a time roundTime carries into the
// next power of two, and rounds to that power's step, is still within
// eps/2 of its own.
func bitsFor(eps float64) int {
	b := 1
	for b < 62 && math.Ldexp(1+math.Ldexp(1, -b-1), -b) > eps {
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

// roundTime rounds t > 0 to the nearest multiple of a step of at most
// 2^(e-b), where 2^e ≤ t < 2^(e+1): within 2^(e-b-1). The step is
// 2^(e-b) ps, or, where t is whole nanoseconds, nanoStep(e-b), so that
// it stays whole nanoseconds. Where that multiple reaches 2^(e+1), t
// rounds to a multiple of the next power's step instead (which the first
// divides), within half of it. Rounding again keeps the value (a time
// rounded in picoseconds that falls on whole nanoseconds is a multiple
// of the nanoseconds' step too). It keeps t ≤ 0, t of b bits or fewer,
// and t where the rounding would overflow.
func roundTime(t Time, b int) Time {
	e := bits.Len64(uint64(t)) - 1
	if t <= 0 || e <= b {
		return t
	}
	step := picoStep
	if t%1000 == 0 {
		step = nanoStep
	}
	s := step(e - b)
	if t > math.MaxInt64-s {
		return t
	}
	r := (t + s/2) / s * s
	if bits.Len64(uint64(r))-1 > e {
		s = step(e + 1 - b)
		r = (t + s/2) / s * s
	}
	return r
}

// picoStep is the step of a time rounded to at most 2^k ps: 2^k ps.
func picoStep(k int) Time { return 1 << k }

// nanoStep is the step of a time of whole nanoseconds rounded to at
// most 2^k ps: 2^k ps up to 8 ps; below a nanosecond, the largest of 8,
// 40 and 200 ps (divisors of a nanosecond, each dividing the next) at
// most 2^k; from a nanosecond, the largest power of two nanoseconds at
// most 2^k. Every step divides the next. Rounded times of a clock that
// ticks in nanoseconds then stay whole nanoseconds, which a .ktr stream
// divides out (its time unit). Rounded to powers of two picoseconds,
// HPCC's times on 4 ranks took units of 8 to 256 ps, their values 4 to
// 125 times the exact ones', and zstd frames twice as long to decode as
// the exact times'.
func nanoStep(k int) Time {
	switch {
	case k <= 3:
		return 1 << k
	case k < 10: // 2^k < 1000: a divisor of 1000
		return [...]Time{8, 8, 40, 40, 200, 200}[k-4]
	}
	return 1000 << (k - 10)
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
