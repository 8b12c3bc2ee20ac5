package platform

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// unitTable maps a unit suffix to its multiplier, built the way SimGrid
// 3.32 builds its tables (xbt_parse_units.cpp): each prefix multiplies the
// previous value by 1000 (or 1024), so the products round exactly as there.
type unitTable map[string]float64

func (t unitTable) add(unit string, value float64, binary, abbrev bool) {
	mult := 1000.0
	prefixes := []string{"k", "M", "G", "T", "P", "E", "Z", "Y"}
	switch {
	case binary && abbrev:
		mult, prefixes = 1024, []string{"Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "Zi", "Yi"}
	case binary:
		mult, prefixes = 1024, []string{"kibi", "mebi", "gibi", "tebi", "pebi", "exbi", "zebi", "yobi"}
	case !abbrev:
		prefixes = []string{"kilo", "mega", "giga", "tera", "peta", "exa", "zeta", "yotta"}
	}
	if _, ok := t[unit]; !ok {
		t[unit] = value
	}
	for _, p := range prefixes {
		value *= mult
		if _, ok := t[p+unit]; !ok {
			t[p+unit] = value
		}
	}
}

// quantity is one kind of value with units.
type quantity struct {
	what        string // "speed", "bandwidth", "time"
	units       unitTable
	defaultUnit string
	hint        string
}

var (
	speedQ = func() quantity {
		t := unitTable{}
		t.add("f", 1, false, true)
		t.add("flops", 1, false, false)
		return quantity{"speed", t, "f", "f, kf, Mf, Gf, Tf, Pf, Ef, Zf, Yf or flops, kiloflops..."}
	}()
	bandwidthQ = func() quantity {
		t := unitTable{}
		t.add("bps", 0.125, true, true)
		t.add("bps", 0.125, false, true)
		t.add("Bps", 1, true, true)
		t.add("Bps", 1, false, true)
		return quantity{"bandwidth", t, "Bps", "Bps, kBps, MBps, GBps, TBps, KiBps, MiBps... or bps, kbps, Mbps, Kibps..."}
	}()
	timeQ = quantity{"time", unitTable{
		"w": 7 * 24 * 60 * 60, "d": 24 * 60 * 60, "h": 60 * 60, "m": 60, "s": 1,
		"ms": 1e-3, "us": 1e-6, "ns": 1e-9, "ps": 1e-12,
	}, "s", "s, ms, us, ns, ps, m, h, d or w"}
)

// parse reads "<number><unit>" as SimGrid does: the number is the longest
// prefix strtod accepts, the rest must be a known unit; a bare number uses
// the default unit (SimGrid logs a deprecation warning unless it is 0,
// returned here as warn).
func (q quantity) parse(s string) (v float64, warn string, err error) {
	num, rest := splitNumber(s)
	if num == "" {
		return 0, "", fmt.Errorf("cannot parse %s %q: expected a number followed by a unit (%s)", q.what, s, q.hint)
	}
	v, perr := strconv.ParseFloat(num, 64)
	if perr != nil {
		return 0, "", fmt.Errorf("%s %q: expected a finite number, this one is out of range", q.what, s)
	}
	unit := rest
	if rest == "" {
		unit = q.defaultUnit
		if v != 0 {
			warn = fmt.Sprintf("deprecated unit-less %s %q, read as %s%s", q.what, s, num, q.defaultUnit)
		}
	}
	m, ok := q.units[unit]
	if !ok {
		return 0, "", fmt.Errorf("%s %q: unknown unit %q (expected %s)", q.what, s, unit, q.hint)
	}
	v *= m
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return 0, "", fmt.Errorf("%s %q: expected a finite number", q.what, s)
	case v < 0 && q.what == "time":
		return 0, "", fmt.Errorf("%s %q: expected 0 or more, not a negative time", q.what, s)
	case v <= 0 && q.what != "time":
		return 0, "", fmt.Errorf("%s %q: expected a positive %s, not %g", q.what, s, q.what, v)
	}
	return v, warn, nil
}

// splitNumber splits s into the prefix C's strtod would consume (decimal
// and inf/nan forms, after leading white space) and the rest.
func splitNumber(s string) (num, rest string) {
	i := 0
	for i < len(s) && strings.IndexByte(" \t\n\v\f\r", s[i]) >= 0 {
		i++
	}
	start := i
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	low := strings.ToLower(s[i:])
	for _, word := range []string{"infinity", "inf", "nan"} {
		if strings.HasPrefix(low, word) {
			return s[start : i+len(word)], s[i+len(word):]
		}
	}
	digits := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
		digits++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			digits++
		}
	}
	if digits == 0 {
		return "", s
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		if j < len(s) && s[j] >= '0' && s[j] <= '9' {
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			i = j
		}
	}
	return s[start:i], s[i:]
}

// ParseSpeed reads a speed such as "1Gf" or "98.095Mf" into flop/s.
func ParseSpeed(s string) (float64, error) { v, _, err := speedQ.parse(s); return v, err }

// ParseBandwidth reads a bandwidth such as "125MBps" or "10Gbps" into
// bytes/s.
func ParseBandwidth(s string) (float64, error) { v, _, err := bandwidthQ.parse(s); return v, err }

// ParseTime reads a duration such as "50us" into seconds.
func ParseTime(s string) (float64, error) { v, _, err := timeQ.parse(s); return v, err }
