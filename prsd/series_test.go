package prsd

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"kairos/internal/varint"
)

func buildSeries(vals []int64) Series {
	var b seriesBuilder
	for _, v := range vals {
		b.add(v)
	}
	return b.finish()
}

// TestSeriesShapes: constants, progressions and periodic patterns take a
// constant number of bytes whatever their length; every series gives its
// values back, from its encoding too.
func TestSeriesShapes(t *testing.T) {
	gen := map[string]func(i int) int64{
		"constant":    func(int) int64 { return 7 },
		"progression": func(i int) int64 { return 3 + 5*int64(i) },
		"period 4":    func(i int) int64 { return []int64{1, 2, 3, 5}[i%4] },
		"alternating": func(i int) int64 { return int64(i % 2) },
		"ramp period": func(i int) int64 { return int64(i % 10) },
		"nested":      func(i int) int64 { return int64(i%3) + 10*int64(i/30%2) },
		"extremes":    func(i int) int64 { return []int64{math.MinInt64, math.MaxInt64, 0}[i%3] },
		// LU's computation sites after a receive: 6×(0 2) 6×(0 3), over
		// and over (a body of two repeats).
		"repeats": func(i int) int64 { return int64(i%2) * (2 + int64(i/12%2)) },
	}
	for name, f := range gen {
		var sizes []int
		for _, n := range []int{60, 600, 6000} {
			vals := make([]int64, n)
			for i := range vals {
				vals[i] = f(i)
			}
			s := buildSeries(vals)
			if got := s.Values(); !slices.Equal(got, vals) {
				t.Fatalf("%s, %d values: got %v", name, n, got[:min(len(got), 20)])
			}
			enc := s.AppendBinary(nil)
			d := varint.Reader{B: enc}
			back := ReadSeries(&d)
			if d.Err != nil || d.Off != len(enc) || !slices.Equal(back.Values(), vals) {
				t.Fatalf("%s, %d values: decoding %v at %d of %d", name, n, d.Err, d.Off, len(enc))
			}
			sizes = append(sizes, len(enc))
		}
		if sizes[2] > sizes[1]+4 {
			t.Errorf("%s: %v bytes for 60, 600 and 6000 values: not constant", name, sizes)
		}
	}
}

// TestSeriesRandom: random sequences of few distinct values survive the
// builder, the cursor, appendSeries and the encoding.
func TestSeriesRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 500 {
		n := rng.IntN(300)
		k := 1 + rng.IntN(5)
		vals := make([]int64, n)
		for i := range vals {
			vals[i] = int64(rng.IntN(k)) - 2
			if rng.IntN(4) == 0 && i > 0 {
				vals[i] = vals[i-1] + 3
			}
		}
		s := buildSeries(vals)
		if got := s.Values(); !slices.Equal(got, vals) {
			t.Fatalf("values %v, got %v", vals, got)
		}
		var b seriesBuilder
		half := buildSeries(vals[:n/2])
		b.appendSeries(&half)
		for _, v := range vals[n/2:] {
			b.add(v)
		}
		if s2 := b.finish(); !slices.Equal(s2.Values(), vals) || !slices.Equal(s2.AppendBinary(nil), s.AppendBinary(nil)) {
			t.Fatalf("appendSeries of %v differs", vals)
		}
	}
}

// TestAppendBuilder: appending a builder's values (a loop's counts merged
// into its body's loop) leaves the builder as adding them one by one does,
// whether they are one run (the fast path) or more.
func TestAppendBuilder(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	values := func() []int64 {
		n := rng.IntN(12)
		if rng.IntN(3) == 0 { // an arithmetic progression: one run
			v, d := int64(rng.IntN(5)), int64(rng.IntN(3)-1)
			out := make([]int64, n)
			for i := range out {
				out[i] = v + d*int64(i)
			}
			return out
		}
		out := make([]int64, n)
		for i := range out {
			out[i] = int64(rng.IntN(3))
		}
		return out
	}
	for range 2000 {
		prefix, vals := values(), values()
		var want, got, src seriesBuilder
		for _, v := range prefix {
			want.add(v)
			got.add(v)
		}
		for _, v := range vals {
			want.add(v)
			src.add(v)
		}
		got.appendBuilder(&src)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%v then %v: got %+v, want %+v", prefix, vals, got, want)
		}
		got.add(9)
		want.add(9)
		g, w := got.finish(), want.finish()
		if !slices.Equal(g.AppendBinary(nil), w.AppendBinary(nil)) {
			t.Fatalf("%v then %v: the series differ", prefix, vals)
		}
	}
}

// TestSeriesDecodeErrors: malformed series are refused with their offset.
func TestSeriesDecodeErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		buf  []byte
	}{
		{"empty", nil},
		{"truncated first", []byte{2}},
		{"runs too short", []byte{5, 0, 1, 2, 0}},
		{"empty repeat", []byte{3, 0, 1, 0, 1, 0}},
		{"zero repeat", []byte{3, 0, 1, 0, 0}},
		{"too many runs", []byte{3, 0, 100, 1, 0}},
		{"deep", append([]byte{3, 0}, slices.Repeat([]byte{1, 0, 2}, 40)...)},
	} {
		d := varint.Reader{B: c.buf}
		ReadSeries(&d)
		if d.Err == nil {
			t.Errorf("%s: accepted", c.name)
		}
	}
}

// TestSeriesFlat: the values a reader takes by index, all of them or one
// period (flatten), those of a series read with its values (ReadSeries)
// and those of a streamed one, are the series' own, from the first again
// past the end; the series encodes to the same bytes and keeps what it
// holds.
func TestSeriesFlat(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	noisy := func(i int) int64 { return 2500 + int64(rng.IntN(40)) }
	// runs of 1 to 8 equal differences, from -2 to 2
	var v, block, left int64
	steps := func(i int) int64 {
		if left == 0 {
			block++
			left = 1 + block*5%8
		}
		left--
		v += block%5 - 2
		return v
	}
	for _, c := range []struct {
		name     string
		n        int
		f        func(i int) int64
		kept     int  // the values flatten keeps (0: none)
		streamed bool // read from its encoding
	}{
		{"noisy", 3000, noisy, 0, true},
		// runs of up to 127 values: the short form
		{"noisy steps", 3000, steps, 0, true},
		// runs of up to 127 values
		{"noisy long runs", 3000, func(i int) int64 { return int64(i / 127 % 2 * i) }, 0, true},
		// noise and, every 50 values, 5 differences of ±3: repeats
		{"noisy repeats", 3000, func(i int) int64 {
			if i%50 < 6 {
				return 2500 + int64(i%2)*3
			}
			return noisy(i)
		}, 0, true},
		// differences past two bytes: values
		{"noisy wide", 3000, func(i int) int64 { return int64(rng.IntN(1 << 20)) }, 3000, false},
		// the short form, at most what a reader cycles: values
		{"noisy 256", 256, noisy, 256, false},
		{"noisy short", 7, noisy, 7, false},
		{"alternating", 3000, func(i int) int64 { return []int64{8, 1}[i%2] }, 2, false},
		// LU's call sites after a send: 30×(0 2) then 30×(0 3), over and
		// over; a period of 240, more than flatLimit for 6 runs, within
		// the trace's budget; one of 1200, longer than maxPeriod.
		{"period 120", 6000, func(i int) int64 { return int64(i%2) * (2 + int64(i/60%2)) }, 120, false},
		{"period 240", 6000, func(i int) int64 { return int64(i%2) * (2 + int64(i/120%2)) }, 240, false},
		{"period 1200", 6000, func(i int) int64 { return int64(i%2) * (2 + int64(i/600%2)) }, 0, false},
		// LU's call site after the last receive of a sweep's 60: 119
		// zeros and a 4, a period of 120 in 6 runs.
		{"period 120 sparse", 6000, func(i int) int64 { return 4 * int64(i%120/119) }, 120, false},
		{"period broken", 3000, func(i int) int64 { return int64(i%2) + int64(i/2999) }, 0, false},
		{"progression", 3000, func(i int) int64 { return int64(3 * i) }, 0, false},
		{"period 7", 100, func(i int) int64 { return int64(i % 7) }, 7, false},
		{"small", 30, func(i int) int64 { return int64(i % 7) }, 30, false},
		{"constant", 3000, func(int) int64 { return 4 }, 0, false},
	} {
		vals := make([]int64, c.n)
		for i := range vals {
			vals[i] = c.f(i)
		}
		built := buildSeries(vals)
		enc := built.AppendBinary(nil)
		d := varint.Reader{B: enc}
		read := ReadSeries(&d)
		if d.Err != nil {
			t.Fatalf("%s: %v", c.name, d.Err)
		}
		for form, s := range map[string]*Series{"built": &built, "read": &read} {
			budget := newFlatBudget()
			s.flatten(&budget)
			if len(s.vals) != c.kept || s.streamed() != c.streamed {
				t.Errorf("%s, %s: %d values kept, streamed %v; want %d, %v", c.name, form, len(s.vals), s.streamed(), c.kept, c.streamed)
			}
			var cur cursor
			for i := range c.n + 3 {
				if got, want := cur.next(s), vals[i%c.n]; got != want {
					t.Fatalf("%s, %s: value %d is %d, want %d", c.name, form, i, got, want)
				}
			}
			if got := s.AppendBinary(nil); !slices.Equal(got, enc) {
				t.Errorf("%s, %s: encodes as %x, want %x", c.name, form, got, enc)
			}
			if s.IsConst() != (c.name == "constant") {
				t.Errorf("%s, %s: IsConst %v", c.name, form, s.IsConst())
			}
		}
	}
}

// TestStreamConst: a streamed series of short runs whose repeats hold
// 800 million values in a few hundred bytes is constant or not by its
// runs' differences, which IsConst reads rather than its values; a
// difference of 0 in two bytes is one too.
func TestStreamConst(t *testing.T) {
	for _, c := range []struct {
		name  string
		delta []byte // the zigzag varint of the last run's difference
		alike bool
	}{{"alike", []byte{0}, true}, {"alike, 0 in two bytes", []byte{0x80, 0}, true}, {"one differs", []byte{2}, false}} {
		body := binary.AppendUvarint(nil, 127)
		for range 127 {
			body = append(body, 127, 0) // 127 differences of 0
		}
		const reps = 1<<14 - 1
		enc := binary.AppendUvarint(nil, 4)
		for range 3 {
			enc = append(binary.AppendUvarint(append(enc, 0), reps), body...)
		}
		enc = append(append(enc, 1), c.delta...)
		n := int64(3*reps*127*127 + 2)
		b := append(binary.AppendVarint(binary.AppendUvarint(nil, uint64(n)), 5), enc...)
		d := varint.Reader{B: b}
		s := ReadSeries(&d)
		if d.Err != nil || s.N != n || !s.streamed() {
			t.Fatalf("%s: read %d values, streamed %v, %v", c.name, s.N, s.streamed(), d.Err)
		}
		if s.IsConst() != c.alike {
			t.Errorf("%s: IsConst %v", c.name, s.IsConst())
		}
	}
}

// TestFlattenBudget: a series of 2^61 values in a few bytes (a repeat of
// 2^60 repetitions) is not walked looking for a period, and periods
// longer than their series' memory are kept only within the trace's
// budget.
func TestFlattenBudget(t *testing.T) {
	s := Series{N: 1<<61 + 1, Runs: []Run{{Reps: 1 << 60, Body: []Run{{Delta: 1, Count: 1}, {Delta: -1, Count: 1}}}}}
	budget := newFlatBudget()
	s.flatten(&budget)
	if s.vals != nil || budget != newFlatBudget() {
		t.Errorf("kept %d values, budget left %+v of %+v", len(s.vals), budget, newFlatBudget())
	}
	small := Series{N: 1001, Runs: []Run{{Reps: 500, Body: []Run{{Delta: 1, Count: 1}, {Delta: -1, Count: 1}}}}}
	small.flatten(&budget)
	if len(small.vals) != 2 || budget.walk != cycleBudget-1001 || budget.keep != keepBudget {
		t.Errorf("a series of 1001 values alternating: kept %v, budget left %+v", small.vals, budget)
	}
	// 119 zeros and a 4, 50 times: a period of 120 values in 6 runs,
	// 120-flatLimit(6) = 24 values beyond them.
	long := Series{N: 6000, Runs: []Run{{Reps: 49, Body: []Run{{Count: 118}, {Delta: 4, Count: 1}, {Delta: -4, Count: 1}}}, {Count: 118}, {Delta: 4, Count: 1}}}
	budget = flatBudget{walk: cycleBudget, keep: 24}
	long.flatten(&budget)
	if len(long.vals) != 120 || budget.keep != 0 {
		t.Errorf("a period of 120 within the budget: kept %d values, budget left %+v", len(long.vals), budget)
	}
	long.flatten(&budget)
	if long.vals != nil || budget.keep != 0 {
		t.Errorf("a period of 120 past the budget: kept %d values, budget left %+v", len(long.vals), budget)
	}
}

// TestSeriesFrozen: a builder that freezes the runs folding no longer
// reaches gives the series one that never freezes gives, value for value
// and byte for byte, on noise, on sparse noise (more values than runs: the
// series keeps its runs), on periods that come and go, and on a series
// continued after a first finish.
func TestSeriesFrozen(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	gen := map[string]func(i int) int64{
		"noise": func(int) int64 { return rng.Int64N(1000) },
		"sparse noise": func(i int) int64 {
			if i%40 == 0 {
				return rng.Int64N(9)
			}
			return 4
		},
		"periods": func(i int) int64 { return int64(i%(3+i/700%5)) + rng.Int64N(2)*int64(i/1500%2) },
		"levels":  func(int) int64 { return 40 + rng.Int64N(3) - 1 },
	}
	defer func(f int) { freezeAt = f }(freezeAt)
	at := freezeAt
	for name, f := range gen {
		vals := make([]int64, 24000)
		for i := range vals {
			vals[i] = f(i)
		}
		build := func(at int) (first, all Series, frozen int64) {
			freezeAt = at
			var b seriesBuilder
			for _, v := range vals[:15000] {
				b.add(v)
			}
			first = b.finish()
			for _, v := range vals[15000:] {
				b.add(v)
			}
			if b.frz != nil {
				frozen = b.frz.runs
			}
			return first, b.finish(), frozen
		}
		want1, want2, _ := build(math.MaxInt)
		got1, got2, frozen := build(at)
		if frozen == 0 && name != "periods" {
			t.Errorf("%s: nothing frozen", name)
		}
		for i, p := range [][2]Series{{want1, got1}, {want2, got2}} {
			if w, g := p[0].AppendBinary(nil), p[1].AppendBinary(nil); !slices.Equal(w, g) {
				t.Errorf("%s, finish %d: encodings differ (%d and %d bytes)", name, i+1, len(w), len(g))
			}
			if w, g := p[0].Values(), p[1].Values(); !slices.Equal(w, g) {
				t.Errorf("%s, finish %d: values differ", name, i+1)
			}
		}
	}
}

// FuzzReadSeries: ReadSeries, which reads the runs of a series kept as
// values in one pass (readFlat), reads what readRuns then readValues read
// (the values, the runs or the error, and where it stops), on any bytes.
func FuzzReadSeries(f *testing.F) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, vals := range [][]int64{
		{1, 2, 3, 5, 8, 13},
		{4, 4, 4, 4},
		func() []int64 { // noise: a run a value
			v := make([]int64, 300)
			for i := range v {
				v[i] = 2500 + int64(rng.IntN(40))
			}
			return v
		}(),
		func() []int64 { // noise and short repeats: streamed
			v := make([]int64, 600)
			for i := range v {
				v[i] = 2500 + int64(rng.IntN(40))
				if i%50 < 6 {
					v[i] = 2500 + int64(i%2)*3
				}
			}
			return v
		}(),
		func() []int64 { // a computation every other call: a palette of 12 levels
			v := make([]int64, 600)
			for i := range v {
				v[i] = int64(i%2) * (4260 + int64(rng.IntN(12)))
			}
			return v
		}(),
		func() []int64 { // a period of 120 in 6 runs
			v := make([]int64, 6000)
			for i := range v {
				v[i] = 4 * int64(i%120/119)
			}
			return v
		}(),
	} {
		s := buildSeries(vals)
		enc := s.AppendBinary(nil)
		f.Add(enc)
		f.Add(enc[:len(enc)-1])
	}
	f.Add([]byte{0x20, 0x02, 0x01, 0x00, 0x05, 0x02, 0x01, 0x02})
	f.Fuzz(func(t *testing.T, b []byte) {
		d := varint.Reader{B: b}
		got := ReadSeries(&d)
		two := varint.Reader{B: b}
		flatReads = false
		want := ReadSeries(&two)
		flatReads = true
		wantOff, wantErr := two.Off, two.Err
		if (d.Err == nil) != (wantErr == nil) || d.Err != nil && d.Err.Error() != wantErr.Error() {
			t.Fatalf("error %v, two passes %v", d.Err, wantErr)
		}
		if d.Err != nil {
			return
		}
		if d.Off != wantOff || got.N != want.N || got.First != want.First || !slices.Equal(got.vals, want.vals) ||
			!slices.Equal(got.enc, want.enc) || (got.Runs == nil) != (want.Runs == nil) {
			t.Fatalf("read %+v to byte %d, two passes %+v to byte %d", got, d.Off, want, wantOff)
		}
		// a streamed series' cursor reads the values its runs give, then
		// the first again
		if got.streamed() && got.N <= 1<<16 {
			vals := paletteValues(&got)
			if got.pal == nil {
				vals, _, _ = expandRuns(got.enc, 0, []int64{got.First}, got.First)
			}
			var c cursor
			for i := range got.N + 1 {
				if v := c.next(&got); v != vals[i%got.N] {
					t.Fatalf("value %d of a streamed series: %d, want %d", i, v, vals[i%got.N])
				}
			}
		}
	})
}

// TestCyclePeriodic: the period cycle finds with periodic's shortcut is
// the one it finds walking every value, on patterns repeated after a
// prefix and before a part of one, with or without a value changed
// anywhere, and with differences that wrap.
func TestCyclePeriodic(t *testing.T) {
	defer func() { periodShortcut = true }()
	rng := rand.New(rand.NewPCG(5, 6))
	shortcuts := 0
	for range 3000 {
		pat := make([]int64, 1+rng.IntN(6))
		for i := range pat {
			pat[i] = int64(rng.IntN(4)) * []int64{1, 1, math.MaxInt64 / 3}[rng.IntN(3)]
		}
		var vals []int64
		for range rng.IntN(4) {
			vals = append(vals, int64(rng.IntN(9)))
		}
		for range 2 + rng.IntN(60) {
			vals = append(vals, pat...)
		}
		vals = append(vals, pat[:rng.IntN(len(pat))]...)
		if rng.IntN(3) == 0 {
			vals[rng.IntN(len(vals))] += int64(1 + rng.IntN(2))
		}
		s := buildSeries(vals)
		if s.Runs == nil {
			continue
		}
		limit := int64(2 + rng.IntN(12))
		periodShortcut = true
		got := s.cycle(limit)
		if b := scratch.Get().(*periodBufs); true {
			head := vals[:min(int64(len(vals)), 2*limit)]
			if p := b.period(head); 2*p <= len(head) && s.periodic(head, p) {
				shortcuts++
			}
			scratch.Put(b)
		}
		periodShortcut = false
		want := s.cycle(limit)
		if !slices.Equal(got, want) || (got == nil) != (want == nil) {
			t.Fatalf("values %v, limit %d: the shortcut's period %v, the walk's %v", vals, limit, got, want)
		}
	}
	if shortcuts < 100 {
		t.Errorf("the shortcut applied %d times", shortcuts)
	}
}

// TestAppendFinished: a builder's encoding without its series
// (appendFinished, the shape's signatures') is finish's AppendBinary, byte
// for byte (but for a palette, which it keeps as runs: TestPalette), and
// its runs give the values after the first (a constant's 0
// byte, a constant), midway and at the end, on short random series, the
// shapes of TestSeriesShapes and noise long enough to freeze runs.
func TestAppendFinished(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	var cases [][]int64
	for range 300 {
		vals := make([]int64, rng.IntN(40))
		k := 1 + rng.IntN(4)
		for i := range vals {
			vals[i] = int64(rng.IntN(k)) + 1
		}
		cases = append(cases, vals)
	}
	for _, f := range []func(i int) int64{
		func(int) int64 { return 7 },
		func(i int) int64 { return 3 + 5*int64(i) },
		func(i int) int64 { return int64(i%2) * (2 + int64(i/12%2)) },
		func(i int) int64 { return int64(i%3) + 10*int64(i/30%2) },
		func(int) int64 { return rng.Int64N(1000) },
	} {
		vals := make([]int64, 3000)
		for i := range vals {
			vals[i] = f(i)
		}
		cases = append(cases, vals)
	}
	check := func(b *seriesBuilder, vals []int64) {
		t.Helper()
		enc, at := b.appendFinished(nil)
		s := b.finish()
		if want := s.AppendBinary(nil); s.pal == nil && !slices.Equal(enc, want) {
			t.Fatalf("%d values %v: encoded %x, finish's %x", len(vals), vals[:min(len(vals), 12)], enc, want)
		}
		if at > 0 {
			if got, _, _ := expandRuns(enc, at, nil, vals[0]); !slices.Equal(got, vals[1:]) {
				t.Fatalf("%d values %v: the encoding's runs give %v", len(vals), vals[:min(len(vals), 12)], got[:min(len(got), 12)])
			}
		} else if slices.ContainsFunc(vals, func(v int64) bool { return v != vals[0] }) {
			t.Fatalf("%d values %v: encoded as a constant", len(vals), vals[:min(len(vals), 12)])
		}
	}
	for _, vals := range cases {
		var b seriesBuilder
		for i, v := range vals {
			b.add(v)
			if i == len(vals)/2 {
				check(&b, vals[:i+1])
			}
		}
		check(&b, vals)
	}
}

// TestStreamableNested: a noisy series in which chance repeats hold
// others (2×(2×(+5 -5) +7) among random differences) is kept streamed,
// its repeats written out, rather than expanded into its values when it
// is finished and when it is read back, wherever the repeat falls and
// however deep; a repeat of more runs than maxUnnested is structure and
// stays. Its values, and its encoding by appendFinished, stay finish's. A
// periodic series of nested repeats keeps them (TestSeriesShapes checks
// its size).
func TestStreamableNested(t *testing.T) {
	nested := []int64{5, -5, 5, -5, 7, 5, -5, 5, -5, 7}
	deeper := slices.Concat(nested, []int64{9}, nested, []int64{9})
	for _, c := range []struct {
		name         string
		before       int
		pattern      []int64
		times        int
		after        int
		wantStreamed bool
	}{
		{"in the middle", 1500, nested, 1, 1500, true},
		{"first", 0, nested, 1, 3000, true},
		{"last", 3000, nested, 1, 0, true},
		{"twice apart", 1000, nested, 2, 1000, true},
		{"three deep", 1500, deeper, 1, 1500, true},
		{"a long period", 1500, nested, 60, 1500, false},
	} {
		rng := rand.New(rand.NewPCG(11, 12))
		var deltas []int64
		noise := func(k int) {
			for range k {
				deltas = append(deltas, rng.Int64N(61)-30)
			}
		}
		noise(c.before)
		for k := range c.times {
			deltas = append(deltas, c.pattern...)
			if k+1 < c.times && c.name == "twice apart" {
				noise(c.before)
			}
		}
		noise(c.after)
		vals := []int64{1000}
		for _, d := range deltas {
			vals = append(vals, vals[len(vals)-1]+d)
		}
		var b seriesBuilder
		for _, v := range vals {
			b.add(v)
		}
		if _, _, _, ok := streamList(rawList(&b), 0, uint64(len(vals))); ok {
			t.Fatalf("%s: the runs stream as they are: the test makes no nested repeat", c.name)
		}
		s := b.finish()
		if s.streamed() != c.wantStreamed {
			t.Errorf("%s: streamed %v, want %v", c.name, s.streamed(), c.wantStreamed)
		}
		if got := s.Values(); !slices.Equal(got, vals) {
			t.Fatalf("%s: the series' values differ", c.name)
		}
		enc := s.AppendBinary(nil)
		if got, _ := b.appendFinished(nil); !slices.Equal(got, enc) {
			t.Fatalf("%s: appendFinished differs from finish's AppendBinary", c.name)
		}
		d := varint.Reader{B: enc}
		back := ReadSeries(&d)
		if d.Err != nil || back.streamed() != c.wantStreamed || !slices.Equal(back.Values(), vals) {
			t.Fatalf("%s: read back: %v, streamed %v", c.name, d.Err, back.streamed())
		}
	}
}

// rawList is the builder's list of runs as finish encodes it, before
// streamable.
func rawList(b *seriesBuilder) []byte {
	b.flush()
	for foldRuns(&b.runs) {
		b.match = 0
	}
	b.folded = true
	var frz frozenRuns
	if b.frz != nil {
		frz = *b.frz
	}
	enc := binary.AppendUvarint(nil, uint64(frz.runs)+uint64(len(b.runs)))
	return appendRunItems(append(enc, frz.enc...), b.runs)
}

// paletteValues returns the values of a palette's series from its
// levels and indexes, nil if it has none.
func paletteValues(s *Series) []int64 {
	p := s.pal
	if p == nil {
		return nil
	}
	vals := []int64{s.First}
	for i := range s.N - 1 {
		var x int
		if p.nibbles {
			x = int(p.idx[i/2]>>(4*(i%2))) & 15
		} else {
			x = int(p.idx[i])
		}
		vals = append(vals, p.levels[min(x, len(p.levels)-1)])
	}
	return vals
}
