package cluster

import (
	"fmt"
	"slices"

	"kairos/prsd"
)

// Plugins are Bahmani and Mueller's user plug-in functions (seed 001,
// Section 5.1): where a code computes a parameter from its rank so that
// every rank has its own (NAS CG's transpose partner, NAS FT's split
// colour and key), the plug-in says how, the signatures leave the
// parameters it explains out, and those ranks fall into few
// sub-clusters instead of one each.
//
//   - cg: a point-to-point end-point equal to NAS CG's transpose partner
//     exch_proc of the rank (prsd.CGTranspose).
//   - ft: a communicator split whose new communicator is the rank's row or
//     column of a 2-D grid, as NAS FT's two splits make them: the ranks
//     me/np2 (colour me1, key me2) or me mod np2 (colour me2, key me1),
//     np2 being the communicator's size or the ranks divided by it.
var Plugins = []string{"cg", "ft"}

// plugin explains parameters of a rank's events.
type plugin struct {
	name string
}

func plugins(names []string) ([]plugin, error) {
	var ps []plugin
	for _, n := range names {
		if !slices.Contains(Plugins, n) {
			return nil, fmt.Errorf("cluster: unknown plug-in %q (known: %v)", n, Plugins)
		}
		ps = append(ps, plugin{n})
	}
	return ps, nil
}

// explainsPartner reports whether a plug-in computes end-point p of the
// rank.
func (s *sums) explainsPartner(p int32) bool {
	for _, pl := range s.plugins {
		if pl.name == "cg" && p == prsd.CGTranspose(s.sig.Rank, int32(s.ranks)) {
			return true
		}
	}
	return false
}

// explainsSplit reports whether a plug-in computes the communicator the
// rank's split made (its colour and key).
func (s *sums) explainsSplit(id uint32) bool {
	for _, pl := range s.plugins {
		if pl.name == "ft" && ftGroup(s.meta.Members(id, s.ranks), s.sig.Rank, int32(s.ranks)) {
			return true
		}
	}
	return false
}

// ftGroup reports whether members are rank me's row of NAS FT's grid of
// ranks np1 × np2 (the ranks me/np2·np2 to me/np2·np2 + np2 - 1, in order:
// colour me1, key me2) or its column (the ranks congruent to me modulo
// np1, in order).
func ftGroup(members []int32, me, ranks int32) bool {
	n := int32(len(members))
	if n == 0 || ranks%n != 0 {
		return false
	}
	row, col := true, true
	for i, m := range members {
		row = row && m == me/n*n+int32(i)
		col = col && m == me%(ranks/n)+int32(i)*(ranks/n)
	}
	return row || col
}

// CompressPlugins returns the plug-ins of names that a compressed trace
// encodes end-points relative to (prsd's).
func CompressPlugins(names []string) []string {
	var out []string
	for _, n := range names {
		if prsd.IsPlugin(n) {
			out = append(out, n)
		}
	}
	return out
}
