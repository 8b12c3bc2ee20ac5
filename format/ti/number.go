package ti

import (
	"fmt"
	"math"
	"strconv"
	"unsafe"
)

// Number parsing, byte-level and allocation-free on the common paths.
//
// SimGrid 3.32 reads three kinds of numbers:
//   - plain integers with std::stoi (partner, tag, root, wait/test keys,
//     location lines, the per-peer counts of v-collectives);
//   - reals with strtod that must use the whole token (flops, seconds);
//   - counts: a strtod real truncated towards zero and range-checked
//     against the C++ type of the field (parse_integer<T>).

// pow10 holds the powers of ten that are exact in a float64.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// parseStoi parses a plain decimal integer: an optional sign and digits,
// nothing else, within int32. std::stoi would also accept a token that
// merely starts with digits ("1e3" is 1 to it); Kairos rejects those
// rather than silently read a different number.
func parseStoi(b []byte) (int32, bool) {
	i, neg := 0, false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg = b[0] == '-'
		i = 1
	}
	if i == len(b) || len(b)-i > 11 {
		return 0, false
	}
	var v int64
	for ; i < len(b); i++ {
		c := b[i] - '0'
		if c > 9 {
			return 0, false
		}
		v = v*10 + int64(c)
	}
	if neg {
		v = -v
	}
	if v < math.MinInt32 || v > math.MaxInt32 {
		return 0, false
	}
	return int32(v), true
}

// parseReal parses a whole token as C's strtod does: decimal or
// hexadecimal, with an optional exponent, "inf" and "nan" included. It
// reports false if the token is not a number or is out of float64 range.
func parseReal(b []byte) (float64, bool) {
	if v, ok := fastReal(b); ok {
		return v, true
	}
	return slowReal(b)
}

// fastReal handles [+-]digits[.digits][(e|E)[+-]digits] when the value is
// exactly computable: at most 19 significant digits whose integer fits in
// 2^53 and a decimal exponent within ±22 (Clinger's fast path), so that
// the result is the correctly rounded value strtod returns.
func fastReal(b []byte) (float64, bool) {
	i, neg := 0, false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg = b[0] == '-'
		i = 1
	}
	var mant uint64
	digits, exp := 0, 0
	start := i
	for ; i < len(b); i++ {
		c := b[i] - '0'
		if c > 9 {
			break
		}
		if digits < 19 {
			mant = mant*10 + uint64(c)
			if mant != 0 {
				digits++
			}
		} else {
			return 0, false
		}
	}
	intDigits := i - start
	fracDigits := 0
	if i < len(b) && b[i] == '.' {
		i++
		fs := i
		for ; i < len(b); i++ {
			c := b[i] - '0'
			if c > 9 {
				break
			}
			if digits >= 19 {
				return 0, false
			}
			mant = mant*10 + uint64(c)
			if mant != 0 {
				digits++
			}
			exp--
		}
		fracDigits = i - fs
	}
	if intDigits+fracDigits == 0 {
		return 0, false
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		eneg := false
		if i < len(b) && (b[i] == '-' || b[i] == '+') {
			eneg = b[i] == '-'
			i++
		}
		es := i
		e := 0
		for ; i < len(b) && b[i]-'0' <= 9; i++ {
			if e < 10000 {
				e = e*10 + int(b[i]-'0')
			}
		}
		if i == es {
			return 0, false
		}
		if eneg {
			e = -e
		}
		exp += e
	}
	if i != len(b) || mant > 1<<53 {
		return 0, false
	}
	f := float64(mant)
	switch {
	case mant == 0:
		f = 0
	case exp == 0:
	case exp > 0 && exp <= 22:
		f *= pow10[exp]
	case exp < 0 && exp >= -22:
		f /= pow10[-exp]
	default:
		return 0, false
	}
	if neg {
		f = -f
	}
	return f, true
}

// slowReal is the general strtod-compatible path, through strconv.
func slowReal(b []byte) (float64, bool) {
	if len(b) == 0 || len(b) > 4096 {
		return 0, false
	}
	for _, c := range b {
		if c == '_' { // strconv accepts digit separators, strtod does not
			return 0, false
		}
	}
	s := unsafe.String(&b[0], len(b)) // not retained: errors are discarded
	v, err := strconv.ParseFloat(s, 64)
	if err == nil {
		return v, true
	}
	// strtod reads hexadecimal mantissas without a binary exponent
	// ("0x1A"); strconv requires "p".
	if isHexNoExp(b) {
		v, err = strconv.ParseFloat(string(b)+"p0", 64)
		return v, err == nil
	}
	return 0, false
}

func isHexNoExp(b []byte) bool {
	i := 0
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		i = 1
	}
	if len(b)-i < 3 || b[i] != '0' || b[i+1]|0x20 != 'x' {
		return false
	}
	for _, c := range b[i+2:] {
		if c|0x20 == 'p' {
			return false
		}
	}
	return true
}

// countRange is the C++ type SimGrid truncates a count to.
type countRange uint8

const (
	rangeSsize    countRange = iota // ssize_t: send, isend, recv, irecv
	rangeInt                        // int: most collectives, sendRecv
	rangeUnsigned                   // unsigned: reduce, allreduce
	rangeSize                       // size_t: bcast, scan, exscan
)

// parseCount parses a count the way SimGrid's parse_integer<T> does:
// strtod, truncation towards zero, then a range check against T. The
// integer fast path avoids floating point for plain digits.
func parseCount(b []byte, r countRange) (int64, bool) {
	if n := len(b); n > 0 && n <= 18 {
		var v int64
		i := 0
		for ; i < n; i++ {
			c := b[i] - '0'
			if c > 9 {
				break
			}
			v = v*10 + int64(c)
		}
		if i == n {
			return v, inRange(float64(v), r)
		}
	}
	f, ok := parseReal(b)
	if !ok {
		return 0, false
	}
	f = math.Trunc(f)
	if !inRange(f, r) {
		return 0, false
	}
	return int64(f), true
}

// bound says what inRange accepts, for the error about a count it does
// not: ", at most 2147483647".
func (r countRange) bound() string {
	switch r {
	case rangeInt:
		return fmt.Sprintf(", at most %d", math.MaxInt32)
	case rangeUnsigned:
		return fmt.Sprintf(", at most %d", math.MaxUint32)
	}
	return fmt.Sprintf(", at most %d", math.MaxInt64)
}

func inRange(f float64, r countRange) bool {
	switch r {
	case rangeInt:
		return f >= math.MinInt32 && f <= math.MaxInt32
	case rangeUnsigned:
		return f >= 0 && f <= math.MaxUint32
	case rangeSize:
		// size_t; Kairos keeps counts in int64.
		return f >= 0 && f < 1<<63
	}
	return f >= -(1<<63) && f < 1<<63
}

// parseDatatype parses a datatype id as SimGrid's Datatype::decode looks
// it up: the exact decimal spelling of a predefined id, -1 to 59.
func parseDatatype(b []byte) (int8, bool) {
	switch len(b) {
	case 1:
		if c := b[0] - '0'; c <= 9 {
			return int8(c), true
		}
	case 2:
		if b[0] == '-' && b[1] == '1' {
			return -1, true
		}
		c0, c1 := b[0]-'0', b[1]-'0'
		if c0 >= 1 && c0 <= 5 && c1 <= 9 {
			return int8(c0*10 + c1), true
		}
	}
	return 0, false
}
