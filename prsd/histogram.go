package prsd

import (
	"encoding/binary"
	"math"
	"slices"
	"sort"
)

// histBuckets is the number of equal shares of a group's instances that
// a histogram keeps (Header.Histograms): a power of two (1<<histBits).
const (
	histBits    = 4
	histBuckets = 1 << histBits
)

// maxGroups bounds the groups of a histogram: populations of a call's
// instances, such as a loop's computations and the larger one its last
// iteration makes, or the spikes of a real program's.
const maxGroups = 16

// Histogram is a rank's instances of a statistic of a call kept as
// ScalaTrace keeps times (Header.Histograms): their distribution, not
// their order. Its positive instances fall into groups of values within
// a spread of their mean; the statistic's Levels series says, for each
// instance, 0 for an instance that is 0 (an absent computation) and g for
// one drawn from group g-1. Which group an instance is in is structure,
// kept in order; within a group, the order is noise, not kept. The series
// of groups folds as the call's structure does, and no more grows with
// the iterations of a noisy loop than that structure does. Ranks of the
// same series whose values of each group all lie within the time error
// of each other share one histogram (merger.nearHists).
type Histogram struct {
	Groups []Shares

	levels Series // while merging: its rank's instances' levels, where no other rank reads it (finishTimes)
}

// Shares is one group of a histogram: its instances, sorted, cut into
// histBuckets equal shares. Within each cycle of histBuckets instances of
// the group, a rank reads each share's mean once, in an order drawn for
// the rank, the call, the statistic, the group and the cycle (draw); the
// instances past the last cycle read Levels[histBuckets], the value that
// makes up their sum, so that a rank reads back its group's sum within
// 1e-6. A group of fewer than histBuckets instances keeps their values,
// sorted, read in that order.
type Shares struct {
	// Levels are the shares' means, then the rest's value (or the few
	// instances' values), on the scale of shareEps (Level).
	Levels []int64
	// N is the number of the group's instances.
	N int64

	vals   []float64 // FromLevel of Levels
	lo, hi float64   // while merging: the least and greatest value of the ranks that read it, over their scales
	sum    float64   // while merging: the sum of the values it was made of
}

// shareEps is the scale of the shares' levels: fine, so that a rank's
// sum is kept, and a group takes a few dozen bytes.
const shareEps = 1e-7

// scaleSteps is how many steps of a rank's scale (Timing.Scales) its
// time error spans: a scale's step is 1+eps/scaleSteps, so that a rank
// reading another's histogram reads back its group's sum within
// eps/(2 scaleSteps), and its scale takes a byte or two.
const scaleSteps = 100

// scaleLevel returns the step l of the scale nearest to s > 0:
// (1+eps/scaleSteps)^l.
func scaleLevel(s, eps float64) int64 {
	return int64(math.Round(math.Log(s) / math.Log1p(eps/scaleSteps)))
}

// fromScale is the scale of step l.
func fromScale(l int64, eps float64) float64 {
	return math.Exp(float64(l) * math.Log1p(eps/scaleSteps))
}

// histogram returns the histogram of a rank's instances l (their exact
// values: Level with eps 0) and the series of their groups, where the
// positive instances fall into at most maxGroups groups, each of values
// within eps of each other (so that every value read back from the
// group, which lies among them, is within eps of its own), one at least
// of histBuckets instances, none is negative,
// and they take fewer bytes than the levels; else false and the
// instances' levels on the scale of eps (a time's, timeLevel's).
func histogram(l *Series, eps float64, time bool) (*Histogram, Series, bool) {
	all := make([]float64, 0, l.N)
	var levels seriesBuilder
	var c cursor
	var ahead float64
	neg := false
	ln1p := math.Log1p(eps)
	for range l.N {
		v := FromLevel(c.next(l), 0)
		if time {
			levels.add(timeLevel(v, eps, ln1p, &ahead))
		} else {
			levels.add(level(v, eps, ln1p))
		}
		all = append(all, v)
		neg = neg || v < 0
	}
	fail := func() (*Histogram, Series, bool) { return nil, levels.finish(), false }
	if neg || len(all) < histBuckets {
		return fail()
	}
	vals := slices.DeleteFunc(slices.Clone(all), func(v float64) bool { return v == 0 })
	slices.Sort(vals)
	// (1-1e-6: the shares' rounding to shareEps stays within the bound.)
	starts, ok := split(vals, 1+eps*(1-1e-6))
	if !ok {
		return fail()
	}
	h, big := &Histogram{Groups: make([]Shares, len(starts))}, false
	for g, a := range starts {
		b := len(vals)
		if g+1 < len(starts) {
			b = starts[g+1]
		}
		h.Groups[g] = shares(vals[a:b])
		big = big || b-a >= histBuckets
	}
	if !big {
		return fail()
	}
	var groups seriesBuilder
	for _, v := range all {
		if v == 0 {
			groups.add(0)
			continue
		}
		g := sort.Search(len(starts), func(g int) bool { return vals[starts[g]] > v })
		groups.add(int64(g))
	}
	// A rank whose histogram another's scaled one can stand for pays its
	// series of groups and its scale (merger.nearHists); one whose
	// histogram no other rank reads pays the histogram too, and keeps its
	// levels where they are smaller (finishTimes). At equal bytes the
	// histogram keeps the rank's sum, the levels do not.
	gs, ls := groups.finish(), levels.finish()
	if len(gs.AppendBinary(nil)) > len(ls.AppendBinary(nil)) {
		return nil, ls, false // the levels take no more: a spread that groups do not fold
	}
	h.levels = ls
	return h, gs, true
}

// split cuts sorted positive values into groups whose greatest is at
// most ratio times their least, and returns where each starts; false
// where that takes more than maxGroups groups, or a run of equal values
// would be cut.
func split(vals []float64, ratio float64) ([]int, bool) {
	var starts []int
	for a := 0; a < len(vals); {
		if len(starts) == maxGroups {
			return nil, false
		}
		b := a + 1
		for b < len(vals) && vals[b] <= vals[a]*ratio {
			b++
		}
		starts = append(starts, a)
		a = b
	}
	return starts, true
}

func sum(vals []float64) float64 {
	s := 0.0
	for _, v := range vals {
		s += v
	}
	return s
}

// shares returns the group of sorted values vals.
func shares(vals []float64) Shares {
	n := int64(len(vals))
	sh := Shares{N: n, lo: vals[0], hi: vals[n-1], sum: sum(vals)}
	if n < histBuckets {
		for _, v := range vals {
			sh.Levels = append(sh.Levels, Level(v, shareEps))
		}
		sh.values()
		return sh
	}
	sh.Levels = make([]int64, histBuckets+1)
	back := 0.0
	for b := range histBuckets {
		lo, hi := b*len(vals)/histBuckets, (b+1)*len(vals)/histBuckets
		sh.Levels[b] = Level(sum(vals[lo:hi])/float64(hi-lo), shareEps)
		back += FromLevel(sh.Levels[b], shareEps)
	}
	// The rest makes up the sum that the cycles' shares of unequal sizes
	// and their levels' rounding leave.
	cycles := n / histBuckets
	if rest := n - cycles*histBuckets; rest > 0 {
		v := (sum(vals) - float64(cycles)*back) / float64(rest)
		sh.Levels[histBuckets] = Level(min(max(v, vals[0]), vals[n-1]), shareEps)
	}
	sh.values()
	return sh
}

// AppendBinary appends the number of groups, then each group's N and
// levels (the first, then differences; histBuckets+1 of them, or N where
// N is less than histBuckets).
func (h *Histogram) AppendBinary(b []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(h.Groups)))
	for g := range h.Groups {
		b = binary.AppendUvarint(b, uint64(h.Groups[g].N))
		last := int64(0)
		for _, x := range h.Groups[g].Levels {
			b = binary.AppendVarint(b, x-last)
			last = x
		}
	}
	return b
}

// NumLevels is the number of levels of a group of n instances.
func NumLevels(n int64) int {
	if n < histBuckets {
		return int(max(n, 0))
	}
	return histBuckets + 1
}

// values computes the shares' values from their levels.
func (sh *Shares) values() {
	sh.vals = make([]float64, len(sh.Levels))
	for i, l := range sh.Levels {
		sh.vals[i] = FromLevel(l, shareEps)
	}
}

// read returns the value of the i-th instance of group g that rank r
// reads of statistic k of node.
func (sh *Shares) read(r, node int32, k, g int, i int64) float64 {
	switch {
	case len(sh.vals) < histBuckets+1: // a few instances, kept
		if i >= int64(len(sh.vals)) {
			return 0 // a corrupt group: more instances than it has
		}
		return sh.vals[i]
	case i >= sh.N/histBuckets*histBuckets:
		return sh.vals[histBuckets]
	}
	return sh.vals[draw(r, node, k<<4|g, i)]
}

// findShares computes the values of items' histograms.
func findShares(items []*Node) {
	for _, n := range items {
		for i := range n.Times {
			for _, h := range n.Times[i].Hists {
				if h == nil {
					continue
				}
				for g := range h.Groups {
					h.Groups[g].values()
				}
			}
		}
		findShares(n.Body)
	}
}

// draw returns the share that rank r reads at instance i of stream s (a
// statistic's group) of node: within each cycle of instances, a
// permutation of the shares (so that each is read once a cycle, and the
// sum kept), drawn from the rank, the node, the stream and the cycle, so
// that ranks' highs meet as independent noise's do. (A fixed order made
// the replay of a noisy stencil 9% longer than the trace's: the critical
// path met the same highs cycle after cycle.)
func draw(r, node int32, s int, i int64) int {
	h := uint64(uint32(r))<<32 ^ uint64(uint32(node))<<6 ^ uint64(s)
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

// MaxGroups is the most groups a histogram has, and HistogramBytes the
// fewest bytes a group takes in a file (format/rsd's bounds).
const (
	MaxGroups      = maxGroups
	HistogramBytes = 1
)
