package stats

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"kairos/pattern"
)

// RankSpread summarises one quantity over the ranks, as a per-rank table
// too long to read is summarised: the least, the median and the most, with
// their ranks, and the outliers (modified Z-score above pattern's cut-off,
// the most extreme first).
type RankSpread struct {
	Least, Median, Most float64
	LeastRank, MostRank int
	Outliers            []int
}

// SpreadOver summarises xs, the values of the ranks listed in ranks, in
// that order (nil: xs[r] is rank r's).
func SpreadOver(xs []float64, ranks []int) RankSpread {
	if len(xs) == 0 {
		return RankSpread{}
	}
	rank := func(i int) int {
		if ranks == nil {
			return i
		}
		return ranks[i]
	}
	s := RankSpread{Least: xs[0], Most: xs[0], LeastRank: rank(0), MostRank: rank(0), Median: pattern.Median(xs)}
	for i, x := range xs {
		if x < s.Least {
			s.Least, s.LeastRank = x, rank(i)
		}
		if x > s.Most {
			s.Most, s.MostRank = x, rank(i)
		}
	}
	rb := pattern.RobustOf(xs)
	var out []int // indices in xs
	z := make([]float64, len(xs))
	for i, x := range xs {
		if z[i] = math.Abs(rb.Z(x)); z[i] > pattern.DefaultCutoff {
			out = append(out, i)
		}
	}
	slices.SortStableFunc(out, func(a, b int) int { return cmp.Compare(z[b], z[a]) })
	for _, i := range out {
		s.Outliers = append(s.Outliers, rank(i))
	}
	return s
}

// Same reports whether every rank has the same value.
func (s RankSpread) Same() bool { return s.Least == s.Most }

// OutliersText names the outliers: "none", "rank 3", or their number and
// the first eight.
func (s RankSpread) OutliersText() string {
	switch len(s.Outliers) {
	case 0:
		return "none"
	case 1:
		return fmt.Sprintf("rank %d", s.Outliers[0])
	}
	return fmt.Sprintf("%d ranks: %s", len(s.Outliers), RankList(s.Outliers, 8))
}

// RankList writes ranks, at most n of them, and how many more.
func RankList(ranks []int, n int) string {
	var b strings.Builder
	for i, r := range ranks[:min(n, len(ranks))] {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(r))
	}
	if len(ranks) > n {
		fmt.Fprintf(&b, " and %d more", len(ranks)-n)
	}
	return b.String()
}

// ListedRanks returns the ranks of PerRank, in its order: the ranks with
// events.
func (s *Stats) ListedRanks() []int {
	out := make([]int, len(s.PerRank))
	for i, r := range s.PerRank {
		out[i] = r.Rank
	}
	return out
}
