package cluster

import (
	"math"
	"slices"
)

// SignatureNames are ACURDION's eleven signatures, in its order.
var SignatureNames = []string{"callpath", "count", "src", "dest", "key", "color", "tag", "comp", "comm", "loop", "types"}

// The signatures compared as equal or not, by index in SignatureNames.
const (
	sigCallPath = 0
	sigLoop     = 9
	sigTypes    = 10
)

// numeric are the averaged signatures, by their index in SignatureNames,
// with their importance group: 1 for count and times, 2 for end-points,
// tags and communicator splits (ACURDION's groups; loops, compared as
// equal or not, are in group 2, call path and types in group 3).
var numeric = []struct {
	index, group int
	value        func(*Signatures) float64
}{
	{1, 1, func(s *Signatures) float64 { return s.Count }},
	{2, 2, func(s *Signatures) float64 { return s.Src }},
	{3, 2, func(s *Signatures) float64 { return s.Dest }},
	{4, 2, func(s *Signatures) float64 { return s.Key }},
	{5, 2, func(s *Signatures) float64 { return s.Color }},
	{6, 2, func(s *Signatures) float64 { return s.Tag }},
	{7, 1, func(s *Signatures) float64 { return s.Comp }},
	{8, 1, func(s *Signatures) float64 { return s.Comm }},
}

// distance is ACURDION's normalised Manhattan distance between two ranks'
// signatures, one sum per importance group, most important first, and
// compared in that order: a difference in a more important group outweighs
// any in the others (the paper shifts the groups' values apart).
type distance [3]float64

func (d distance) less(e distance) bool {
	for i := range d {
		if d[i] != e[i] {
			return d[i] < e[i]
		}
	}
	return false
}

// space holds the ranks' signatures and their averaged signatures
// normalised by their range over the ranks, so that differences lie in
// [0, 1].
type space struct {
	sigs   []Signatures
	scale  []float64       // 1/range per numeric signature, 0 where all ranks agree
	norm   [][len8]float64 // each rank's numeric signatures times their scale
	table1 bool            // compare the 64-bit call paths
}

// len8 is the number of numeric signatures.
const len8 = 8

func newSpace(sigs []Signatures, table1 bool) *space {
	sp := &space{sigs: sigs, scale: make([]float64, len(numeric)), norm: make([][len8]float64, len(sigs)), table1: table1}
	for i, n := range numeric {
		lo, hi := math.Inf(1), math.Inf(-1)
		for k := range sigs {
			v := n.value(&sigs[k])
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
		if hi > lo {
			sp.scale[i] = 1 / (hi - lo)
		}
		for k := range sigs {
			sp.norm[k][i] = n.value(&sigs[k]) * sp.scale[i]
		}
	}
	return sp
}

// format returns the names of the signatures on which some ranks differ:
// what ACURDION's adaptive signature building keeps.
func (sp *space) format() []string {
	differs := make([]bool, len(SignatureNames))
	for i, n := range numeric {
		differs[n.index] = sp.scale[i] > 0
	}
	for i := range sp.sigs[1:] {
		s := &sp.sigs[i+1]
		differs[sigCallPath] = differs[sigCallPath] || !sp.samePath(s, &sp.sigs[0])
		differs[sigLoop] = differs[sigLoop] || s.Loop != sp.sigs[0].Loop
		differs[sigTypes] = differs[sigTypes] || s.Types != sp.sigs[0].Types
	}
	var f []string
	for i, d := range differs {
		if d {
			f = append(f, SignatureNames[i])
		}
	}
	return f
}

// distance compares every signature of ranks a and b.
func (sp *space) distance(a, b int32) distance {
	d := sp.paramDistance(a, b)
	d[0] += sp.callPathDistance(a, b)[0]
	return d
}

// callPathDistance compares the call-path signatures only.
func (sp *space) callPathDistance(a, b int32) distance {
	if !sp.samePath(&sp.sigs[a], &sp.sigs[b]) {
		return distance{1}
	}
	return distance{}
}

// samePath compares two ranks' call paths, exactly or as the papers'
// 64-bit signatures.
func (sp *space) samePath(a, b *Signatures) bool {
	if sp.table1 {
		return a.CallPath == b.CallPath
	}
	return a.Path == b.Path
}

// paramDistance compares every signature but the call path.
func (sp *space) paramDistance(a, b int32) distance {
	var d distance
	sa, sb := &sp.sigs[a], &sp.sigs[b]
	if sa.Types != sb.Types {
		d[0] = 1
	}
	if sa.Loop != sb.Loop {
		d[1] = 1 // loops are in group 2
	}
	na, nb := &sp.norm[a], &sp.norm[b]
	for i := range numeric {
		d[3-numeric[i].group] += math.Abs(na[i] - nb[i])
	}
	return d
}

// kFarthest is ACURDION's Algorithm 2 over a binary radix tree of ranks
// (ascending; position i's children are 2i+1 and 2i+2): each node merges
// its own cluster with its children's, and where they are more than k,
// keeps the k farthest apart and gives each other cluster to the nearest
// kept one. Unlike the paper, a node keeps no cluster identical to one it
// keeps already (at distance 0), so that no two representatives are the
// same.
func kFarthest(ranks []int32, k int, dist func(a, b int32) distance) []Group {
	var visit func(i int) []Group
	visit = func(i int) []Group {
		list := []Group{{Rep: ranks[i], Members: []int32{ranks[i]}}}
		for _, c := range []int{2*i + 1, 2*i + 2} {
			if c < len(ranks) {
				list = append(list, visit(c)...)
			}
		}
		return farthest(list, k, dist)
	}
	groups := visit(0)
	for i := range groups {
		slices.Sort(groups[i].Members)
	}
	return groups
}

// farthest keeps at most k clusters of list: the first, then repeatedly
// the one farthest from those kept (ties to the earlier), while any is at
// a positive distance; every other cluster joins the nearest kept one.
func farthest(list []Group, k int, dist func(a, b int32) distance) []Group {
	kept := []int{0}
	near := make([]distance, len(list)) // distance to the nearest kept cluster
	for j := range list {
		near[j] = dist(list[j].Rep, list[0].Rep)
	}
	isKept := make([]bool, len(list))
	isKept[0] = true
	for len(kept) < k {
		far := -1
		for j := range list {
			if !isKept[j] && near[j] != (distance{}) && (far < 0 || near[far].less(near[j])) {
				far = j
			}
		}
		if far < 0 {
			break
		}
		kept, isKept[far] = append(kept, far), true
		for j := range list {
			if d := dist(list[j].Rep, list[far].Rep); d.less(near[j]) {
				near[j] = d
			}
		}
	}
	out := make([]Group, len(kept))
	for i, j := range kept {
		out[i] = list[j]
	}
	for j := range list {
		if isKept[j] {
			continue
		}
		best, bestD := 0, dist(list[j].Rep, out[0].Rep)
		for i := 1; i < len(out); i++ {
			if d := dist(list[j].Rep, out[i].Rep); d.less(bestD) {
				best, bestD = i, d
			}
		}
		out[best].Members = append(out[best].Members, list[j].Members...)
	}
	return out
}
