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
		{1_000_003, 999_424}, // 2^19 ≤ t < 2^20: a multiple of 2^12, 244·4096
		{0, 0},               // kept
		{-5, -5},             // kept
		{150, 150},           // 7 bits or fewer: kept
		{1000, 1000},         // 2^9 ≤ t: a multiple of 4
		{1003, 1004},         // the nearest
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
	if b := bitsFor(0.01); b != 7 {
		t.Errorf("bitsFor(0.01) = %d, want 7", b)
	}
}

// TestRoundedWithin: every gap, duration and computation of a rounded
// rank reads back within eps/2 of its own, the clock drifts by at most
// eps/2 of the time elapsed, the first entry and the events without times
// are kept, and the values share their low bits.
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
	within := func(what string, i int, got, want float64) {
		if math.Abs(got-want) > eps/2*math.Abs(want) {
			t.Fatalf("event %d: %s %g, want %g within %g%%", i, what, got, want, 100*eps/2)
		}
	}
	var last, lastGot Time
	var first = true
	aligned := 0 // durations of 1 µs or more that are multiples of 1,024 ps
	for i := 0; rd.Next(); i++ {
		e, o := rd.Event(), evs[i]
		within("computation", i, e.Compute, o.Compute)
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
			within("gap", i, float64(e.Enter-lastGot), float64(o.Enter-last))
		}
		within("duration", i, float64(e.Exit-e.Enter), float64(o.Exit-o.Enter))
		within("clock", i, float64(e.Exit-evs[0].Enter), float64(o.Exit-evs[0].Enter))
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

// TestRoundedTwice: a rounded trace rounded again reads the same, so
// that a file written from one read back is the same file.
func TestRoundedTwice(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	tr := New(1, NewMeta())
	at := Time(0)
	for range 5000 {
		e := NewEvent(Compute)
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
