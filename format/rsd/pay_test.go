package rsd

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"

	"kairos/format/ktr"
	"kairos/prsd"
	"kairos/trace"
)

// polling is a rank that polls calls times in one loop (MPICH's
// greq_test), each poll's gap and duration one of 12 values 1 ns apart,
// at random: a structure of one loop whose times' levels take a value
// a poll, where the events, in a ktr stream, take a byte and a half.
// With sites call sites drawn at random, the polls do not repeat.
func polling(t testing.TB, calls, sites int) trace.Source {
	tr := trace.New(1, trace.NewMeta())
	rng := rand.New(rand.NewPCG(5, 6))
	var at trace.Time
	for range calls {
		e := trace.NewEvent(trace.Iprobe)
		e.CallSite, e.Partner, e.Tag = uint64(1+rng.IntN(sites)), 0, 7
		gap, dur := trace.Time(50+rng.IntN(12))*1000, trace.Time(100+rng.IntN(12))*1000
		e.HasTime, e.Enter, e.Exit = true, at+gap, at+gap+dur
		at = e.Exit
		tr.Ranks[0].Append(&e)
	}
	var buf bytes.Buffer
	if err := ktr.Encode(&buf, tr, ktr.Options{}); err != nil {
		t.Fatal(err)
	}
	src, err := ktr.OpenSection("polling", bytes.NewReader(buf.Bytes()), 0, int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// TestOutgrownSameFile: a polling rank whose folding is given up early
// (its series outgrow its events' bytes) is written byte for byte as
// when it is folded to its end and Settle keeps its events, at the
// default time error and with exact events.
func TestOutgrownSameFile(t *testing.T) {
	src := polling(t, 1<<18, 1)
	for _, eps := range []float64{prsd.DefaultOptions().TimeError, 0} {
		var files [2][]byte
		var outgrown [2]bool
		for i, loopsPay := range []int{loopsPay, 0} {
			opt := prsd.Options{TimeError: eps, LoopsPay: loopsPay}
			opt.Settle = func(s *prsd.Settling) ([]byte, error) {
				outgrown[i] = s.Outgrown
				return settle(s)
			}
			b, asEvents, same, exact := reduced(t, src, opt)
			if asEvents != 1 || same != exact {
				t.Errorf("time error %g, LoopsPay %d: %d clusters as events, same %v; want 1, %v (the events read back exactly)", eps, loopsPay, asEvents, same, exact)
			}
			files[i] = b
		}
		if !outgrown[0] || outgrown[1] {
			t.Errorf("time error %g: given up %v, and without LoopsPay %v; want true, false", eps, outgrown[0], outgrown[1])
		}
		if !bytes.Equal(files[0], files[1]) {
			t.Errorf("time error %g: %d bytes given up, %d folded to the end", eps, len(files[0]), len(files[1]))
		}
	}
}

// TestEncodeColumnsSmaller: the events' encoding is the smaller of the
// exact and the rounded ones (the exact one on a tie), whether both are
// made at once (smaller, no limit) or the rounded one stops at the
// exact one's bytes (a limit), on a polling rank (exact smaller) and on
// irregular calls (rounded smaller).
func TestEncodeColumnsSmaller(t *testing.T) {
	const eps = 0.01
	for name, src := range map[string]trace.Source{"polling": polling(t, 1<<14, 1), "irregular": mixed()} {
		exact, err := encodeCapped(src, math.MaxInt)
		if err != nil {
			t.Fatal(err)
		}
		rounded, err := encodeCapped(trace.Rounded(src, eps), math.MaxInt)
		if err != nil {
			t.Fatal(err)
		}
		want, wantExact := rounded, false
		if len(exact) <= len(rounded) {
			want, wantExact = exact, true
		}
		for _, limit := range []int{math.MaxInt, 2 * len(exact)} {
			got, isExact, err := encodeColumns(src, eps, limit, true)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) || isExact != wantExact {
				t.Errorf("%s, limit %d: %d bytes, exact %v; want %d, %v (exact %d, rounded %d)", name, limit, len(got), isExact, len(want), wantExact, len(exact), len(rounded))
			}
		}
	}
}

// reduced builds src's reduction with opt and encodes it; it returns
// the file, its clusters kept as events, whether those are exact
// (EncodeCounting's same), and whether the file reads back as src.
func reduced(t *testing.T, src trace.Source, opt prsd.Options) (b []byte, asEvents int, same, exact bool) {
	t.Helper()
	tr, err := prsd.Build(src, nil, opt)
	if err != nil {
		t.Fatal(err)
	}
	b, asEvents, same, err = EncodeCounting(tr)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if exact, err = trace.SameReplay(src, back); err != nil {
		t.Fatal(err)
	}
	return b, asEvents, same, exact
}

// TestFoldsLittleSmaller: a rank whose polls do not repeat (each at one
// of 1,000 call sites, at random) folds little and keeps its events, in
// the smaller form: its times are whole microseconds, which rounding
// makes longer, so the exact events, which read back as the trace.
func TestFoldsLittleSmaller(t *testing.T) {
	_, asEvents, same, exact := reduced(t, polling(t, 1<<14, 1000), prsd.DefaultOptions())
	if asEvents != 1 || !same || !exact {
		t.Errorf("%d clusters as events, same %v, read back exactly %v; want 1, the exact events (smaller)", asEvents, same, exact)
	}
}
