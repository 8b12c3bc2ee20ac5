package prsd

import (
	"encoding/binary"
	"math"
	"slices"
)

// histBuckets is the number of equal shares of a call's instances that
// a histogram keeps (Header.Histograms): a power of two (1<<histBits).
const (
	histBits    = 4
	histBuckets = 1 << histBits
)

// Shares is a histogram of a rank's instances of a statistic
// (Header.Histograms), ScalaTrace's way of keeping times: their
// distribution, not their order. The positive instances, sorted, are cut
// into histBuckets equal shares; within each cycle of histBuckets
// positive instances, a rank reads each share's mean once, in an order
// drawn for the rank, the node, the statistic and the cycle (draw); the
// instances past the last cycle read Levels[histBuckets], the value that
// makes up their sum. The statistic's Levels series is then 0 for an
// instance that is 0 (an absent computation: structure) and 1 for one
// drawn. Its size does not grow with the instances, and the sum of what
// a rank reads back is its instances' sum within shareEps.
type Shares struct {
	// Levels are the shares' means, then the rest's value, on the scale
	// of shareEps (Level).
	Levels [histBuckets + 1]int64
	// N is the number of positive instances.
	N int64

	vals [histBuckets + 1]float64 // FromLevel of Levels
}

// shareEps is the scale of the shares' levels: fine, so that a rank's
// sum is kept, and a histogram takes a few dozen bytes.
const shareEps = 1e-7

// histogram returns the histogram of a rank's instances l (their exact
// values: Level with eps 0) and the series of which instances it draws,
// where there are at least 4 cycles of positive instances, none negative,
// and all within eps/(2+eps) of their mean (so that any two are within eps
// of each other: noise, not structure); else false and the instances'
// levels on the scale of eps.
func histogram(l *Series, eps float64) (*Shares, Series, bool) {
	vals := make([]float64, 0, l.N)
	var flags, levels seriesBuilder
	var c cursor
	neg := false
	for range l.N {
		v := FromLevel(c.next(l), 0)
		levels.add(Level(v, eps))
		if v <= 0 {
			neg = neg || v < 0
			flags.add(0)
			continue
		}
		flags.add(1)
		vals = append(vals, v)
	}
	n := int64(len(vals))
	sum := 0.0
	for _, v := range vals {
		sum += v
	}
	// (1-1e-6: the shares' rounding to shareEps stays within the bound.)
	mean, spread := sum/float64(max(n, 1)), eps/(2+eps)*(1-1e-6)
	if neg || n < 4*histBuckets || slices.ContainsFunc(vals, func(v float64) bool { return math.Abs(v-mean) > spread*mean }) {
		return nil, levels.finish(), false
	}
	slices.Sort(vals)
	sh := &Shares{N: n}
	back := 0.0
	for b := range histBuckets {
		lo, hi := b*len(vals)/histBuckets, (b+1)*len(vals)/histBuckets
		s := 0.0
		for _, v := range vals[lo:hi] {
			s += v
		}
		sh.Levels[b] = Level(s/float64(hi-lo), shareEps)
		back += FromLevel(sh.Levels[b], shareEps)
	}
	// The rest makes up the sum that the cycles' shares of unequal sizes
	// and their levels' rounding leave.
	cycles := n / histBuckets
	if rest := n - cycles*histBuckets; rest > 0 {
		v := (sum - float64(cycles)*back) / float64(rest)
		sh.Levels[histBuckets] = Level(min(max(v, vals[0]), vals[n-1]), shareEps)
	}
	sh.values()
	return sh, flags.finish(), true
}

// AppendBinary appends the shares' levels (the first, then differences)
// and N.
func (sh *Shares) AppendBinary(b []byte) []byte {
	last := int64(0)
	for _, x := range sh.Levels {
		b = binary.AppendVarint(b, x-last)
		last = x
	}
	return binary.AppendUvarint(b, uint64(sh.N))
}

// values computes the shares' values from their levels.
func (sh *Shares) values() {
	for i, l := range sh.Levels {
		sh.vals[i] = FromLevel(l, shareEps)
	}
}

// read returns the value of the i-th positive instance that rank r reads
// of statistic k of node.
func (sh *Shares) read(r, node int32, k int, i int64) float64 {
	if i >= sh.N/histBuckets*histBuckets {
		return sh.vals[histBuckets]
	}
	return sh.vals[draw(r, node, k, i)]
}

// findShares computes the values of items' histograms.
func findShares(items []*Node) {
	for _, n := range items {
		for i := range n.Times {
			for _, sh := range n.Times[i].Shares {
				if sh != nil {
					sh.values()
				}
			}
		}
		findShares(n.Body)
	}
}

// draw returns the share that rank r reads at positive instance i of
// statistic k of node: within each cycle of instances, a permutation of
// the shares (so that each is read once a cycle, and the sum kept),
// drawn from the rank, the node, the statistic and the cycle, so that
// ranks' highs meet as independent noise's do. (A fixed order made the
// replay of a noisy stencil 9% longer than the trace's: the critical path
// met the same highs cycle after cycle.)
func draw(r, node int32, k int, i int64) int {
	h := uint64(uint32(r))<<32 ^ uint64(uint32(node))<<3 ^ uint64(k)
	h = mix64(h*0x9e3779b97f4a7c15 + uint64(i/histBuckets))
	a, b := 2*(h&(histBuckets/2-1))+1, h>>histBits
	return int((a*uint64(i%histBuckets) + b) % histBuckets)
}

// mix64 is splitmix64's finalizer.
func mix64(z uint64) uint64 {
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}
