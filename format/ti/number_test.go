package ti

import (
	"math"
	"strconv"
	"testing"
)

// TestNumbers checks the three number grammars of SimGrid 3.32's parser.
func TestNumbers(t *testing.T) {
	reals := map[string]float64{"1e6": 1e6, "1e+06": 1e6, "6.0475e+06": 6.0475e6, ".5": 0.5, "5.": 5,
		"-2.5E-3": -2.5e-3, "0x10": 16, "0x1p-2": 0.25, "inf": math.Inf(1), "123456789012345678901234": 1.2345678901234568e23}
	for s, want := range reals {
		if got, ok := parseReal([]byte(s)); !ok || got != want {
			t.Errorf("parseReal(%q) = %v, %v; want %v", s, got, ok, want)
		}
	}
	for _, s := range []string{"", ".", "1e", "e5", "1_0", "0x", "1.2.3", "12a", "- 1"} {
		if v, ok := parseReal([]byte(s)); ok {
			t.Errorf("parseReal(%q) = %v, want an error", s, v)
		}
	}
	counts := []struct {
		s    string
		r    countRange
		want int64
		ok   bool
	}{
		{"1e6", rangeInt, 1000000, true}, {"2.9", rangeInt, 2, true}, {"-2.9", rangeSsize, -2, true},
		{"2147483647", rangeInt, math.MaxInt32, true}, {"2147483648", rangeInt, 0, false},
		{"4294967295", rangeUnsigned, math.MaxUint32, true}, {"-1", rangeUnsigned, 0, false},
		{"-0.5", rangeSize, 0, true}, {"-1", rangeSize, 0, false}, {"9.3e18", rangeSsize, 0, false},
		{"nan", rangeSsize, 0, false}, {"x", rangeInt, 0, false},
	}
	for _, c := range counts {
		if got, ok := parseCount([]byte(c.s), c.r); ok != c.ok || ok && got != c.want {
			t.Errorf("parseCount(%q, %d) = %d, %v; want %d, %v", c.s, c.r, got, ok, c.want, c.ok)
		}
	}
	ints := map[string]int32{"0": 0, "-333": -333, "+7": 7, "007": 7, "2147483647": math.MaxInt32}
	for s, want := range ints {
		if got, ok := parseStoi([]byte(s)); !ok || got != want {
			t.Errorf("parseStoi(%q) = %d, %v", s, got, ok)
		}
	}
	for _, s := range []string{"", "-", "1e3", "1.0", "2147483648", "0x1"} {
		if _, ok := parseStoi([]byte(s)); ok {
			t.Errorf("parseStoi(%q) accepted", s)
		}
	}
	for s, want := range map[string]int8{"-1": -1, "0": 0, "6": 6, "59": 59} {
		if got, ok := parseDatatype([]byte(s)); !ok || got != want {
			t.Errorf("parseDatatype(%q) = %d, %v", s, got, ok)
		}
	}
	for _, s := range []string{"60", "06", "-2", "+1", "", "1.0"} {
		if _, ok := parseDatatype([]byte(s)); ok {
			t.Errorf("parseDatatype(%q) accepted", s)
		}
	}
}

// FuzzReal checks that the fast decimal path agrees with strconv.
func FuzzReal(f *testing.F) {
	for _, s := range []string{"1e6", "0.1", "123.456e-7", "9007199254740993", "1e22", "1e23", "-0",
		"-1e6", "1e300", "1e308", "1e400", "NaN", "inf", "-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := fastReal([]byte(s))
		if !ok {
			return
		}
		want, err := strconv.ParseFloat(s, 64)
		if err != nil || math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("fastReal(%q) = %v, strconv gives %v, %v", s, got, want, err)
		}
	})
}
