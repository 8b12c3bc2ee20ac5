package trace

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestRoundTime(t *testing.T) {
	const b = 7 // eps 1%
	for _, c := range []struct {
		t, want Time
	}{
		{1_000_003, 999_424},   // 2^19 ≤ t < 2^20: a multiple of 2^12 ps, 244·4096
		{1_001_000, 1_000_000}, // whole nanoseconds: a multiple of 4 ns
		{1_002_000, 1_004_000},
		{100_000, 100_000}, // 2^16 ≤ t < 2^17: a multiple of 200 ps, which 100 ns is
		{0, 0},             // kept
		{-5, -5},           // kept
		{150, 150},         // 7 bits or fewer: kept
		{1000, 1000},       // 2^9 ≤ t: a multiple of 4
		{1003, 1004},       // the nearest
		{1005, 1004},
		{1023, 1024},                   // carried into the next power of two, which rounds as itself
		{math.MaxInt64, math.MaxInt64}, // would overflow: kept
	} {
		got := roundTime(c.t, b)
		if got != c.want {
			t.Errorf("roundTime(%d, %d) = %d, want %d", c.t, b, got, c.want)
		}
		if again := roundTime(got, b); again != got {
			t.Errorf("roundTime(%d, %d) = %d, rounded again %d", c.t, b, got, again)
		}
	}
	// Whole nanoseconds carried to 2^21 by 1 ns steps (b 9): to 2^21's,
	// 2 ns.
	if got := roundTime(2_097_000, 9); got != 2_096_000 {
		t.Errorf("roundTime(2097000, 9) = %d, want 2096000", got)
	}
	for eps, want := range map[float64]int{0.01: 7, 1.0 / 128: 8, 0.5: 2} {
		if b := bitsFor(eps); b != want {
			t.Errorf("bitsFor(%g) = %d, want %d", eps, b, want)
		}
	}
}

// TestRoundTimeSteps: random times, and times of whole nanoseconds, round
// within half of 2^-b·(1+2^-(b+1)) of their own, as again when rounded
// again, and whole nanoseconds stay whole nanoseconds.
func TestRoundTimeSteps(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 200_000 {
		b := 1 + rng.IntN(20)
		v := Time(rng.Int64N(1 << (1 + rng.IntN(60))))
		if i%2 == 0 {
			v = v / 1000 * 1000
		}
		got := roundTime(v, b)
		bound := math.Ldexp(1+math.Ldexp(1, -b-1), -b-1) * float64(v)
		if math.Abs(float64(got-v)) > bound {
			t.Fatalf("roundTime(%d, %d) = %d: off by %d, more than %g", v, b, got, got-v, bound)
		}
		if again := roundTime(got, b); again != got {
			t.Fatalf("roundTime(%d, %d) = %d, rounded again %d", v, b, got, again)
		}
		if v%1000 == 0 && got%1000 != 0 {
			t.Fatalf("roundTime(%d, %d) = %d: not whole nanoseconds", v, b, got)
		}
	}
}

// TestRoundedWithin: every gap and computation of a rounded rank reads
// back within eps/2 of its own, and so does a local call's duration;
// every other Exit within eps/2 of its distance from its Enter as rounded
// (or at that Enter, where the Enter's error put it past the Exit). The
// first entry, MPI_Init's times and the events without times are kept,
// and the values share their low bits.
func TestRoundedWithin(t *testing.T) {
	const eps = 0.01
	rng := rand.New(rand.NewPCG(1, 2))
	tr := New(1, NewMeta())
	at := Time(123_456_789)
	var evs []Event
	for i := range 10_000 {
		e := NewEvent(Send)
		e.Compute = 12345.678 // not an amount of computation: kept
		if i%7 == 3 {
			e = NewEvent(Compute)
			e.Compute = rng.Float64() * 1e9
		} else if i%11 != 5 {
			if i%13 == 2 {
				e = NewEvent(Local) // its duration is computation in a replay
			}
			if i == 1 {
				e = NewEvent(Init) // where a replay starts: exact
			}
			at += Time(rng.Int64N(1e9))
			e.HasTime, e.Enter = true, at
			at += Time(rng.Int64N(1e8))
			e.Exit = at
		}
		tr.Ranks[0].Append(&e)
		evs = append(evs, e)
	}
	rd, err := Rounded(tr, eps).OpenRank(0)
	if err != nil {
		t.Fatal(err)
	}
	within := func(what string, i int, got, want, of float64) {
		if math.Abs(got-want) > eps/2*math.Abs(of) {
			t.Fatalf("event %d: %s %g, want %g within %g%% of %g", i, what, got, want, 100*eps/2, of)
		}
	}
	var last Time
	var lastGot Time
	first := true
	aligned := 0 // durations of 1 µs or more that are multiples of 1,024 ps
	for i := 0; rd.Next(); i++ {
		e, o := rd.Event(), evs[i]
		within("computation", i, e.Compute, o.Compute, o.Compute)
		if o.Kind != Compute && e.Compute != o.Compute {
			t.Fatalf("event %d: %s's amount %g, want %g", i, o.Kind, e.Compute, o.Compute)
		}
		if e.HasTime != o.HasTime || !o.HasTime && (e.Enter != o.Enter || e.Exit != o.Exit) {
			t.Fatalf("event %d: timed %v at %d-%d, want %v at %d-%d", i, e.HasTime, e.Enter, e.Exit, o.HasTime, o.Enter, o.Exit)
		}
		if !o.HasTime {
			continue
		}
		if first && e.Enter != o.Enter {
			t.Fatalf("the first entry %d, want %d", e.Enter, o.Enter)
		}
		if !first {
			within("gap", i, float64(e.Enter-lastGot), float64(o.Enter-last), float64(o.Enter-last))
		}
		if o.Kind == Init {
			if e.Enter != o.Enter || e.Exit != o.Exit {
				t.Fatalf("event %d: MPI_Init at %d-%d, want %d-%d", i, e.Enter, e.Exit, o.Enter, o.Exit)
			}
		} else if o.Kind == Local {
			within("duration", i, float64(e.Exit-e.Enter), float64(o.Exit-o.Enter), float64(o.Exit-o.Enter))
		} else if o.Exit <= e.Enter {
			if e.Exit != e.Enter {
				t.Fatalf("event %d: exit %d, want the enter %d, after the exit %d", i, e.Exit, e.Enter, o.Exit)
			}
		} else {
			within("exit", i, float64(e.Exit), float64(o.Exit), float64(o.Exit-e.Enter))
		}
		if d := e.Exit - e.Enter; d >= 1e6 && d%1024 == 0 {
			aligned++
		}
		first, last, lastGot = false, o.Exit, e.Exit
	}
	if err := rd.Err(); err != nil {
		t.Fatal(err)
	}
	if aligned < 1000 {
		t.Errorf("%d durations of 1 µs or more end in 10 zero bits, want most of them", aligned)
	}
}

// TestRoundedNoDrift: on a rank that computes about a millisecond
// between calls of a microsecond, no time is off by more than a few
// times eps/2 of a gap, after 5,000 calls as after 50,000. Rounding each
// gap and duration on its own, the errors added up: 185 µs by the 5,000th
// call, where messages take microseconds, and the ranks' clocks drifted
// apart. (An Enter's error is taken back at its Exit, but for what the
// Exit cannot take: it does not move before the Enter, and a call shorter
// than the error leaves the rest to the next.)
func TestRoundedNoDrift(t *testing.T) {
	const eps = 0.01
	for _, n := range []int{5_000, 50_000} {
		rng := rand.New(rand.NewPCG(5, 6))
		tr := New(1, NewMeta())
		at := Time(0)
		for range n {
			e := NewEvent(Send)
			e.HasTime, e.Enter = true, at+Time(1e9+rng.Int64N(1e8)) // 1 to 1.1 ms, in ps
			e.Exit = e.Enter + Time(1e6+rng.Int64N(1e5))
			at = e.Exit
			tr.Ranks[0].Append(&e)
		}
		rounded, err := Load(Rounded(tr, eps))
		if err != nil {
			t.Fatal(err)
		}
		a, b := tr.Ranks[0].Reader(), rounded.Ranks[0].Reader()
		worst := 0.0
		for a.Next() && b.Next() {
			x, y := a.Event(), b.Event()
			worst = max(worst, math.Abs(float64(y.Enter-x.Enter)), math.Abs(float64(y.Exit-x.Exit)))
		}
		if limit := 4 * eps / 2 * 1.1e9; worst > limit {
			t.Errorf("%d calls: a time %.0f ps off, want at most %.0f (4 eps/2 of the longest gap)", n, worst, limit)
		}
	}
}

// TestRoundedTwice: a rounded trace (MPI_Init, then computations,
// messages and local calls) rounded again reads the same, so that a file
// written from one read back is the same file.
func TestRoundedTwice(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	tr := New(1, NewMeta())
	at := Time(0)
	kinds := []Kind{Init, Compute, Send, Local, Recv, Compute}
	for i := range 5000 {
		e := NewEvent(kinds[min(i, 1+i%(len(kinds)-1))])
		e.Compute = rng.ExpFloat64() * 1e6
		at += Time(rng.ExpFloat64() * 1e9)
		e.HasTime, e.Enter = true, at
		at += Time(rng.ExpFloat64() * 1e7)
		e.Exit = at
		tr.Ranks[0].Append(&e)
	}
	once, err := Load(Rounded(tr, 0.01))
	if err != nil {
		t.Fatal(err)
	}
	twice, err := Load(Rounded(once, 0.01))
	if err != nil {
		t.Fatal(err)
	}
	a, b := once.Ranks[0].Reader(), twice.Ranks[0].Reader()
	for i := 0; a.Next() && b.Next(); i++ {
		if x, y := a.Event(), b.Event(); x.Enter != y.Enter || x.Exit != y.Exit || x.Compute != y.Compute {
			t.Fatalf("event %d: %d-%d %g rounded once, %d-%d %g twice", i, x.Enter, x.Exit, x.Compute, y.Enter, y.Exit, y.Compute)
		}
	}
}

func TestRoundedZero(t *testing.T) {
	tr := New(1, NewMeta())
	if Rounded(tr, 0) != Source(tr) {
		t.Error("Rounded(src, 0) is not src")
	}
}
