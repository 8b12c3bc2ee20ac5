package stats

import (
	"slices"
	"testing"
)

// TestSpreadOver: the least, median and most of a per-rank quantity with
// their ranks, and its outliers, the most extreme first; the ranks are
// the positions, or those listed.
func TestSpreadOver(t *testing.T) {
	xs := []float64{10, 11, 10, 30, 9, 10, 11, 10, 2}
	for _, c := range []struct {
		ranks        []int
		least, most  int
		outliers     []int
		outliersText string
	}{
		{nil, 8, 3, []int{3, 8}, "2 ranks: 3, 8"},
		{[]int{1, 3, 5, 7, 9, 11, 13, 15, 17}, 17, 7, []int{7, 17}, "2 ranks: 7, 17"},
	} {
		s := SpreadOver(xs, c.ranks)
		if s.Least != 2 || s.LeastRank != c.least || s.Most != 30 || s.MostRank != c.most || s.Median != 10 || s.Same() {
			t.Errorf("ranks %v: spread %+v", c.ranks, s)
		}
		if !slices.Equal(s.Outliers, c.outliers) || s.OutliersText() != c.outliersText {
			t.Errorf("ranks %v: outliers %v (%q), want %v", c.ranks, s.Outliers, s.OutliersText(), c.outliers)
		}
	}
	if s := SpreadOver([]float64{4, 4, 4}, []int{2, 5, 6}); !s.Same() || s.LeastRank != 2 || s.OutliersText() != "none" {
		t.Errorf("equal values: %+v", s)
	}
	if got := RankList([]int{1, 2, 3, 4}, 2); got != "1, 2 and 2 more" {
		t.Errorf("RankList: %q", got)
	}
}
