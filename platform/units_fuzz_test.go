package platform

import (
	"math"
	"testing"
)

// FuzzUnits reads arbitrary text as a speed, a bandwidth and a time, as
// every attribute and --cluster spec does. It must never panic, and a
// value it accepts is a finite number (issue 43: "NaNf" and "1e308Gf"
// passed, then made a replay deadlock at time 0).
func FuzzUnits(f *testing.F) {
	for _, s := range []string{
		"1Gf", "98.095Mf", "125MBps", "10Gbps", "50us", "0", "1e308Gf", "NaNf", "inf", "-1Gf", "0MBps",
		"-50us", " 1.5e3kf", "1e-320s", "1E+2GBps", "1.f", ".5ms", "infinityGf", "1e309", "0x10Gf", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for name, parse := range map[string]func(string) (float64, error){
			"speed": ParseSpeed, "bandwidth": ParseBandwidth, "time": ParseTime,
		} {
			v, err := parse(s)
			if err == nil && (math.IsNaN(v) || math.IsInf(v, 0)) {
				t.Fatalf("%s %q: accepted as %v", name, s, v)
			}
		}
	})
}
