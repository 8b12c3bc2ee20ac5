package main

import (
	"math"
	"testing"
)

// FuzzFlagValues reads arbitrary text as the values of --speed and of the
// byte-count flags. It must never panic; a speed it accepts is finite and
// positive, a size within what an int64 holds times a suffix.
func FuzzFlagValues(f *testing.F) {
	for _, s := range []string{"1Gf", "2e9", "1.5G", "NaN", "NaNf", "inf", "-1", "0", "1e308Gf", "8K", "1G", "-5M", "9223372036854775807", "4611686018427387904K", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if v, err := parseSpeed(s); err == nil && (!(v > 0) || math.IsInf(v, 0)) {
			t.Fatalf("speed %q: accepted as %v", s, v)
		}
		if v, err := parseSize(s); err == nil && (v > 1<<62 || v < -(1<<62)) {
			t.Fatalf("size %q: accepted as %d", s, v)
		}
	})
}
