package prsd

import (
	"strings"
	"testing"
)

// TestRestLast: of a node's groups, the one whose ranklist takes the
// most numbers to write loses it and goes last, where it then holds the
// ranks no earlier group holds; the others keep their order.
func TestRestLast(t *testing.T) {
	for _, tc := range []struct {
		name     string
		groups   []string // ranklists; "-" is none
		eligible string   // per group, "n" for one that must keep its ranklist
		want     string
	}{
		{"scattered", []string{"<1 0 2 1>", "<1 2 1 0> <1 5 1 0> <1 7 1 0>", "<1 3 2 1>"}, "", "<1 0 2 1>; <1 3 2 1>; -"},
		{"first of the costliest", []string{"<1 0 1 0>", "<1 1 1 0>"}, "", "<1 1 1 0>; -"},
		{"the costliest not eligible", []string{"<1 0 2 1>", "<1 2 1 0> <1 5 1 0>", "<1 3 2 1>"}, "yny", "<1 2 1 0> <1 5 1 0>; <1 3 2 1>; -"},
		{"none eligible", []string{"<1 0 2 1>", "<1 2 2 1>"}, "nn", "<1 0 2 1>; <1 2 2 1>"},
		{"one group", []string{"<1 0 4 1>"}, "", "<1 0 4 1>"},
		{"one already without", []string{"<1 0 2 1>", "-"}, "", "<1 0 2 1>; -"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			groups := make([]Counts, len(tc.groups))
			for i, s := range tc.groups {
				if s == "-" {
					continue
				}
				l, err := ParseRanklist(s)
				if err != nil {
					t.Fatal(err)
				}
				groups[i].Ranks = l
				groups[i].Series = Const(int64(i), 1) // which group it was
			}
			var eligible func(*Counts) bool
			if tc.eligible != "" {
				eligible = func(c *Counts) bool { return tc.eligible[c.Series.First] != 'n' }
			}
			restLast(groups, func(c *Counts) *Ranklist { return &c.Ranks }, eligible)
			got := make([]string, len(groups))
			for i, g := range groups {
				got[i] = "-"
				if g.Ranks != nil {
					got[i] = g.Ranks.String()
				}
			}
			if s := strings.Join(got, "; "); s != tc.want {
				t.Errorf("got %s, want %s", s, tc.want)
			}
		})
	}
}
