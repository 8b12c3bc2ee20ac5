package clock

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"kairos/trace"
)

// Config is one network configuration: the (BW, L) pair of the paper
// (Section III-G), bandwidth in Gbit/s and latency in microseconds, the
// units of Tables I and III.
type Config struct {
	BW  float64 `json:"bw_gbps"`    // Gbit/s
	Lat float64 `json:"latency_us"` // microseconds
}

// String formats c as the paper's "(BW, L)".
func (c Config) String() string {
	return "(" + strconv.FormatFloat(c.BW, 'g', 6, 64) + ", " + strconv.FormatFloat(c.Lat, 'g', 6, 64) + ")"
}

// Alpha returns the latency α in seconds.
func (c Config) Alpha() float64 { return c.Lat * 1e-6 }

// Beta returns the per-byte time β = 1/BW in seconds per byte.
func (c Config) Beta() float64 { return 8 / (c.BW * 1e9) }

// Valid reports whether c has a positive bandwidth and a non-negative,
// finite latency.
func (c Config) Valid() bool {
	return c.BW > 0 && !math.IsInf(c.BW, 0) && c.Lat >= 0 && !math.IsInf(c.Lat, 0)
}

// Table is a point-to-point time model measured by a ping-pong benchmark
// (Section IV-B): the one-way time of a message of each measured size,
// interpolated linearly in between and extrapolated with the last
// segment's slope beyond the largest size.
type Table struct {
	Name  string
	Sizes []int64   // bytes, strictly increasing
	Times []float64 // seconds, one-way
}

// ParseTable reads a ping-pong table: one "size,time" pair a line, the
// size in bytes and the one-way time in microseconds (the t[usec] column
// of the Intel MPI Benchmarks' PingPong), separated by a comma, a
// semicolon or blanks. Blank lines, lines starting with '#' and a first
// line that is not numeric (a header) are skipped. name names the input
// in errors.
func ParseTable(r io.Reader, name string) (*Table, error) {
	t := &Table{Name: name}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	type row struct {
		n int64
		t float64
	}
	var rows []row
	header := true // the first content line may be a header
	for line := 1; sc.Scan(); line++ {
		s := strings.TrimSpace(sc.Text())
		if s == "" || s[0] == '#' {
			continue
		}
		first := header
		header = false
		f := strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ';' || r == ' ' || r == '\t' })
		if len(f) < 2 && !(first && !startsNumeric(s)) {
			return nil, fmt.Errorf("%s:%d: want \"size,time\", got %q", name, line, s)
		}
		if len(f) < 2 {
			continue // a one-word header
		}
		n, err1 := strconv.ParseInt(f[0], 10, 64)
		us, err2 := strconv.ParseFloat(f[1], 64)
		if err1 != nil || err2 != nil {
			if first && !startsNumeric(f[0]) {
				continue // header
			}
			return nil, fmt.Errorf("%s:%d: want a size in bytes and a time in microseconds, got %q", name, line, s)
		}
		if n < 0 || !(us >= 0) || math.IsInf(us, 0) {
			return nil, fmt.Errorf("%s:%d: size and time must be non-negative and finite, got %q", name, line, s)
		}
		rows = append(rows, row{n, us * 1e-6})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(rows) < 2 {
		return nil, fmt.Errorf("%s: a ping-pong table needs at least 2 sizes, got %d", name, len(rows))
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].n < rows[j].n })
	for i, r := range rows {
		if i > 0 && r.n == rows[i-1].n {
			return nil, fmt.Errorf("%s: size %d appears twice", name, r.n)
		}
		t.Sizes = append(t.Sizes, r.n)
		t.Times = append(t.Times, r.t)
	}
	if t.Times[len(t.Times)-1] <= t.Times[0] {
		return nil, fmt.Errorf("%s: the time of the largest size must exceed that of the smallest", name)
	}
	return t, nil
}

func startsNumeric(s string) bool {
	return s != "" && (s[0] >= '0' && s[0] <= '9' || s[0] == '-' || s[0] == '+' || s[0] == '.')
}

// At returns the interpolated one-way time of an n-byte message.
func (t *Table) At(n float64) float64 {
	s, tm := t.Sizes, t.Times
	i := sort.Search(len(s), func(i int) bool { return float64(s[i]) >= n })
	switch {
	case i == 0:
		return tm[0]
	case i == len(s):
		i = len(s) - 1
	}
	x0, x1 := float64(s[i-1]), float64(s[i])
	v := tm[i-1] + (tm[i]-tm[i-1])*(n-x0)/(x1-x0)
	return math.Max(v, 0)
}

// Base returns the configuration the table describes: its latency is the
// time of the smallest message, its bandwidth the slope between the
// smallest and the largest.
func (t *Table) Base() Config {
	last := len(t.Sizes) - 1
	bytesPerSec := float64(t.Sizes[last]-t.Sizes[0]) / (t.Times[last] - t.Times[0])
	return Config{BW: bytesPerSec * 8 / 1e9, Lat: t.Times[0] * 1e6}
}

// p2p is a point-to-point model in separable form: under configuration c
// an n-byte message has latency a(c)·l0 and bandwidth time b(c)·b0(n).
// Hockney's model (Section III-B) is a = α, l0 = 1, b = β, b0 = n. A
// ping-pong table T is a = L/L_T, l0 = T(smallest), b = BW_T/BW,
// b0 = T(n) - l0: the table's shape, scaled to the configuration. The
// separation is what lets one message's terms be computed once and
// applied to every configuration with two multiplications.
type p2p struct {
	table *Table
	base  Config
}

func newP2P(t *Table) p2p {
	if t == nil {
		return p2p{}
	}
	return p2p{table: t, base: t.Base()}
}

// coeffs returns a(c) and b(c).
func (m p2p) coeffs(c Config) (a, b float64) {
	if m.table == nil {
		return c.Alpha(), c.Beta()
	}
	if m.base.Lat > 0 {
		a = c.Lat / m.base.Lat
	}
	return a, m.base.BW / c.BW
}

// terms returns l0 and b0(n) for a message of n bytes.
func (m p2p) terms(n float64) (l0, b0 float64) {
	if m.table == nil {
		return 1, n
	}
	l0 = m.table.Times[0]
	return l0, math.Max(m.table.At(n)-l0, 0)
}

// collCost is a collective's modelled time in the same separable form:
// kL message latencies plus kB bandwidth times of an m-byte message.
type collCost struct {
	kL, kB, m float64
}

// Message-size switch points of the algorithms Thakur and Gropp model
// (MPICH's defaults).
const (
	allreduceShort = 2048      // bytes: recursive doubling below, Rabenseifner above
	allgatherShort = 512 << 10 // total bytes: recursive doubling / Bruck below, ring above
	alltoallShort  = 256       // bytes per peer: Bruck below, pairwise exchange above
)

// collectiveCost returns Thakur and Gropp's cost [19] of collective e on
// p members, with lg = ⌈log2 p⌉ and n the bytes the formula names:
//
//	barrier                 lg·α                      (dissemination)
//	bcast, reduce           lg·(α + nβ)               (binomial tree, Section III-B)
//	scan, exscan            lg·(α + nβ)               (recursive doubling)
//	allreduce n ≤ 2 KiB     lg·(α + nβ)               (recursive doubling)
//	allreduce n > 2 KiB     2lg·α + 2(p-1)/p·nβ       (Rabenseifner)
//	allgather(v) n < 512 KiB lg·α + (p-1)/p·nβ         (recursive doubling, Bruck), n = total
//	allgather(v) otherwise  (p-1)·α + (p-1)/p·nβ      (ring)
//	gather(v), scatter(v)   lg·α + (p-1)/p·nβ         (binomial tree), n = total
//	reduce_scatter          lg·α + (p-1)/p·nβ         (recursive halving), n = total
//	alltoall ≤ 256 B/peer   lg·α + lg/2·nβ            (Bruck), n = per-peer bytes × p
//	alltoall(v) otherwise   (p-1)·α + nβ              (pairwise exchange), n = bytes a member sends
func collectiveCost(e *trace.Event, p int) collCost {
	if p <= 1 {
		return collCost{}
	}
	lg := math.Ceil(math.Log2(float64(p)))
	fp := float64(p)
	frac := (fp - 1) / fp
	one := float64(max(e.SendBytes, e.RecvBytes))
	switch e.Kind {
	case trace.Barrier:
		return collCost{kL: lg}
	case trace.WinFence, trace.WinFree: // SMPI's two barriers
		return collCost{kL: 2 * lg}
	case trace.WinCreate: // SMPI's allgather of the members' 8-byte handles
		return collCost{lg, frac, 8 * fp}
	case trace.Bcast, trace.Reduce, trace.Scan, trace.Exscan:
		return collCost{lg, lg, one}
	case trace.Allreduce:
		if one <= allreduceShort {
			return collCost{lg, lg, one}
		}
		return collCost{2 * lg, 2 * frac, one}
	case trace.Allgather, trace.Allgatherv:
		n := total(e.RecvCounts, one*fp)
		if n < allgatherShort {
			return collCost{lg, frac, n}
		}
		return collCost{fp - 1, frac, n}
	case trace.Gather, trace.Scatter:
		return collCost{lg, frac, one * fp}
	case trace.Gatherv:
		return collCost{lg, frac, total(e.RecvCounts, float64(e.SendBytes)*fp)}
	case trace.Scatterv:
		return collCost{lg, frac, total(e.SendCounts, float64(e.RecvBytes)*fp)}
	case trace.ReduceScatter:
		return collCost{lg, frac, total(e.RecvCounts, one*fp)}
	case trace.Alltoall:
		if one <= alltoallShort {
			return collCost{lg, lg / 2, one * fp}
		}
		return collCost{fp - 1, 1, one * fp}
	case trace.Alltoallv:
		n := math.Max(total(e.SendCounts, float64(e.SendBytes)), total(e.RecvCounts, float64(e.RecvBytes)))
		return collCost{fp - 1, 1, n}
	}
	return collCost{kL: lg} // any other collective: a synchronisation
}

// total returns the sum of counts, or def when there are none.
func total(counts []int64, def float64) float64 {
	if len(counts) == 0 {
		return def
	}
	s := 0.0
	for _, c := range counts {
		s += float64(c)
	}
	return s
}
