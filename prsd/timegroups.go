package prsd

import (
	"cmp"
	"math"
	"slices"
)

// timeGroups are a call's timing groups of one key (the same statistics,
// each read the same way), in the order they were made. A rank joins the
// first near its own (merger.near). Where ranks' times all differ, as in
// a timed trace of many ranks, trying each group made a merge quadratic
// in the ranks (16,384 ranks: 3.6 s of a 19 s reduce); the groups are
// also sorted by the anchor of one statistic read as a mean, so that only
// those whose anchor is within that statistic's tolerance are tried.
type timeGroups struct {
	list []*timeGroup
	// k is the statistic sorted by (-1: none, every group is tried);
	// sorted are the positions in list of the groups of a finite anchor,
	// by anchor; odd those of the others, tried always.
	k      int
	sorted []int32
	odd    []int32
}

// first returns the first group, in the order made, that a rank whose
// call a has the given means and histograms may join; nil if none. As
// merger.nearHists, it leaves the rank's scales in m.scales.
func (ts *timeGroups) first(m *merger, mean *[numStats]float64, hists *[numStats]*Histogram, a *accCall) *timeGroup {
	cand := m.cands[:0]
	var lo, hi float64
	ok := false
	if ts.k >= 0 {
		lo, hi, ok = window(m, ts.k, mean[ts.k])
	}
	if ok {
		cand = append(cand, ts.odd...)
		for i := sortedFrom(ts, lo); i < len(ts.sorted) && ts.list[ts.sorted[i]].anchor[ts.k] <= hi; i++ {
			cand = append(cand, ts.sorted[i])
		}
		slices.Sort(cand)
	} else {
		for p := range ts.list {
			cand = append(cand, int32(p))
		}
	}
	m.cands = cand
	for _, p := range cand {
		if g := ts.list[p]; m.near(g, mean, a) && m.nearHists(g, hists) {
			return g
		}
	}
	return nil
}

// window returns the anchors of statistic k that merger.near may accept
// for a rank whose mean of k is x: where |x-y| <= e*max(|x|,|y|) + c,
// |x-y| <= (e|x| + c)/(1-e) (widened by a part in 10^9 for rounding). It
// reports false where that bound does not hold (an error of 300% or
// more, a mean not finite).
func window(m *merger, k int, x float64) (lo, hi float64, ok bool) {
	e := m.eps / 3
	if e >= 1 || !finite(x) {
		return 0, 0, false
	}
	d := (e*math.Abs(x) + m.tolerance(k, 0)) / (1 - e) * (1 + 1e-9)
	return x - d, x + d, true
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// sortedFrom returns the position in ts.sorted of the first group whose
// anchor is not below lo.
func sortedFrom(ts *timeGroups, lo float64) int {
	i, _ := slices.BinarySearchFunc(ts.sorted, lo, func(p int32, lo float64) int {
		if ts.list[p].anchor[ts.k] < lo {
			return -1
		}
		return 1
	})
	return i
}

// add appends g, a new group of the key, whose statistics read as means
// are those of every group of the key. The groups are sorted by the first
// such statistic, then, each time their number doubles from 32, by the
// one whose anchors are the most spread (sortBy).
func (ts *timeGroups) add(m *merger, g *timeGroup) {
	if len(ts.list) == 0 {
		ts.k = -1
		for k := range numStats {
			if meanOnly(g, k) {
				ts.k = k
				break
			}
		}
	}
	p := int32(len(ts.list))
	ts.list = append(ts.list, g)
	if ts.k < 0 {
		return
	}
	if n := len(ts.list); n >= 32 && n&(n-1) == 0 {
		ts.sortBy(ts.spread(m))
		return
	}
	ts.insert(p)
}

// meanOnly reports whether g reads statistic k as its mean.
func meanOnly(g *timeGroup, k int) bool {
	return g.mask&(1<<k) != 0 && g.levels[k] == nil && g.hists[k] == nil
}

// spread returns the statistic read as a mean whose groups' anchors fall
// into the most windows apart (each anchor beyond the window of the one
// before, in order): the one whose windows hold the fewest groups.
func (ts *timeGroups) spread(m *merger) int {
	best, most := ts.k, -1
	xs := make([]float64, 0, len(ts.list))
	for k := range numStats {
		if !meanOnly(ts.list[0], k) {
			continue
		}
		xs = xs[:0]
		for _, g := range ts.list {
			xs = append(xs, g.anchor[k])
		}
		slices.Sort(xs)
		apart, end := 0, math.Inf(-1)
		for _, x := range xs {
			if _, hi, ok := window(m, k, x); ok && x > end {
				apart, end = apart+1, hi
			}
		}
		if apart > most {
			best, most = k, apart
		}
	}
	return best
}

// sortBy sorts the groups by statistic k.
func (ts *timeGroups) sortBy(k int) {
	ts.k, ts.sorted, ts.odd = k, ts.sorted[:0], ts.odd[:0]
	for p, g := range ts.list {
		if finite(g.anchor[k]) {
			ts.sorted = append(ts.sorted, int32(p))
		} else {
			ts.odd = append(ts.odd, int32(p))
		}
	}
	slices.SortStableFunc(ts.sorted, func(a, b int32) int {
		return cmp.Compare(ts.list[a].anchor[k], ts.list[b].anchor[k])
	})
}

// insert places group p among the sorted or the odd.
func (ts *timeGroups) insert(p int32) {
	x := ts.list[p].anchor[ts.k]
	if !finite(x) {
		ts.odd = append(ts.odd, p)
		return
	}
	// After the anchors not above x: equal anchors stay in the order made.
	i, _ := slices.BinarySearchFunc(ts.sorted, x, func(q int32, x float64) int {
		if ts.list[q].anchor[ts.k] <= x {
			return -1
		}
		return 1
	})
	ts.sorted = slices.Insert(ts.sorted, i, p)
}
