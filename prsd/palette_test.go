package prsd

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"kairos/internal/varint"
)

// TestPalette: a long series of values drawn from a few levels in no
// order that runs fold is kept as a palette, in half a byte a value up to
// 16 levels and a byte up to 256, in fewer bytes than its runs; it reads
// back, from its encoding, to the same values, streamed. A short series,
// one of more levels, and one whose runs are shorter keep their runs.
func TestPalette(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	series := func(n int, f func(i int) int64) []int64 {
		v := make([]int64, n)
		for i := range v {
			v[i] = f(i)
		}
		return v
	}
	for _, c := range []struct {
		name    string
		vals    []int64
		palette bool
		nibbles bool
	}{
		{"a computation every other call, 12 levels", series(5000, func(i int) int64 {
			return int64(i%2) * (4260 + int64(rng.IntN(12)))
		}), true, true},
		{"noise of 40 levels", series(3000, func(int) int64 { return 2500 + int64(rng.IntN(40)) }), true, false},
		{"noise of 256 levels", series(3000, func(int) int64 { return 7 * int64(rng.IntN(256)) }), true, false},
		{"noise of 300 levels", series(3000, func(int) int64 { return int64(rng.IntN(300)) }), false, false},
		{"too short", series(256, func(i int) int64 { return int64(i%2) * (4260 + int64(rng.IntN(12))) }), false, false},
		{"rare spikes", series(5000, func(i int) int64 { return int64(i%500/499) * (100 + int64(rng.IntN(3))) }), false, false},
	} {
		var b seriesBuilder
		for _, v := range c.vals {
			b.add(v)
		}
		runs, _ := b.appendFinished(nil) // the runs, never a palette
		s := b.finish()
		if (s.pal != nil) != c.palette {
			t.Errorf("%s: a palette %v, want %v", c.name, s.pal != nil, c.palette)
			continue
		}
		if got := s.Values(); !slices.Equal(got, c.vals) {
			t.Fatalf("%s: the values differ", c.name)
		}
		enc := s.AppendBinary(nil)
		if !c.palette {
			if !bytes.Equal(enc, runs) {
				t.Errorf("%s: encoded %d bytes, its runs %d", c.name, len(enc), len(runs))
			}
			continue
		}
		if s.pal.nibbles != c.nibbles || !s.streamed() {
			t.Errorf("%s: nibbles %v, streamed %v; want nibbles %v, streamed", c.name, s.pal.nibbles, s.streamed(), c.nibbles)
		}
		perValue := 1.0
		if c.nibbles {
			perValue = 0.5
		}
		if len(enc) >= len(runs) || float64(len(enc)) > perValue*float64(len(c.vals))+300 {
			t.Errorf("%s: a palette of %d bytes for %d values, its runs %d", c.name, len(enc), len(c.vals), len(runs))
		}
		d := varint.Reader{B: enc}
		back := ReadSeries(&d)
		if d.Err != nil || d.Off != len(enc) || back.pal == nil || !slices.Equal(back.Values(), c.vals) || !bytes.Equal(back.AppendBinary(nil), enc) {
			t.Errorf("%s: read back: %v at byte %d of %d, a palette %v", c.name, d.Err, d.Off, len(enc), back.pal != nil)
		}
	}
}

// TestPaletteCorrupt: a palette of fewer than 2 or more than 256 levels,
// of levels not increasing or missing, or of missing indexes is an error
// about the palette, at its byte; an index past the last level reads the
// last level.
func TestPaletteCorrupt(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	vals := make([]int64, 1001)
	for i := range vals {
		vals[i] = int64(i%2) * (10 + int64(rng.IntN(7)))
	}
	s := buildSeries(vals)
	if s.pal == nil || len(s.pal.levels) != 8 {
		t.Fatalf("the series is not a palette of 8 levels")
	}
	good := s.AppendBinary(nil)
	// N 1001: 2 bytes, First 0: 1 byte, then 01 00 00, K, the levels
	head := 3 + len(paletteHead)
	if good[head] != 8 {
		t.Fatalf("K is not at byte %d: % x", head, good[:head+4])
	}
	set := func(at int, b ...byte) []byte {
		c := slices.Clone(good)
		return append(c[:at], append(b, c[at+1:]...)...)
	}
	for _, c := range []struct {
		name string
		enc  []byte
	}{
		{"one level", set(head, 1)},
		{"257 levels", set(head, 0x81, 0x02)},
		{"a level repeated", set(head+2, 0)},
		{"an index missing", good[:len(good)-1]},
		{"no levels", good[:head+1]},
	} {
		d := varint.Reader{B: c.enc}
		if ReadSeries(&d); d.Err == nil || !strings.Contains(d.Err.Error(), "palette") || !strings.Contains(d.Err.Error(), "byte ") {
			t.Errorf("%s: error %v, want one about the palette, at its byte", c.name, d.Err)
		}
	}
	past := slices.Clone(good)
	past[len(past)-1] |= 0xf0 // value 1000 (the high half), index 15
	d := varint.Reader{B: past}
	back := ReadSeries(&d)
	got := back.Values()
	if d.Err != nil || len(got) != len(vals) || got[len(got)-1] != slices.Max(vals) || !slices.Equal(got[:len(got)-1], vals[:len(vals)-1]) {
		t.Errorf("an index past the last level: %v, last value %d, want %d", d.Err, got[len(got)-1], slices.Max(vals))
	}
}
