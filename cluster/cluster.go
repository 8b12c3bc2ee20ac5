package cluster

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// Method is a clustering method.
type Method string

// The clustering methods.
const (
	// CallPathParam is Bahmani and Mueller's two-level clustering: main
	// clusters of equal call paths, split into sub-clusters of equal
	// parameter signatures (counts within CountTolerance of the
	// sub-cluster's average), main clusters kept whole past P/2
	// sub-clusters (the filtering function).
	CallPathParam Method = "callpath"
	// Reference groups ranks with equal event sequences (parameters
	// included, end-points relative): the exact, costly baseline.
	Reference Method = "reference"
	// Acurdion is ACURDION's single-step K-farthest clustering over the
	// signatures that differ across ranks.
	Acurdion Method = "acurdion"
	// Acurdion2 is ACURDION's double-step clustering: K-farthest over the
	// call paths, then within each of those clusters over the other
	// signatures, K clusters in all.
	Acurdion2 Method = "acurdion2"
)

// Methods lists the methods, the default first.
var Methods = []Method{CallPathParam, Reference, Acurdion, Acurdion2}

// Options choose a method and its parameters.
type Options struct {
	Method Method
	// K is ACURDION's number of clusters (the paper's 9), and the number
	// of sub-clusters under which CallPathParam never filters.
	K int
	// CountTolerance is the relative difference under which an average
	// count is the same as a sub-cluster's (the paper's 5%).
	CountTolerance float64
	// Table1 compares the papers' 64-bit signatures (CallPath, Param)
	// instead of the exact ones, to compare with the papers: truncated
	// end-points and saturated counts merge ranks that differ.
	Table1 bool
	// NoFilter keeps every sub-cluster of CallPathParam however many.
	NoFilter bool
}

// DefaultOptions are the papers' settings.
func DefaultOptions() Options {
	return Options{Method: CallPathParam, K: 9, CountTolerance: 0.05}
}

// Group is one cluster: the rank at its head and its members (the head
// included), ascending. A cluster's members are merged into one
// compressed structure (prsd), each replaying its own calls; the head is
// the paper's representative, whose trace alone would stand for the
// others.
type Group struct {
	Rep     int32
	Members []int32
	// Main is the index of the group's main (call-path) cluster, for the
	// two-level methods; 0 otherwise.
	Main int
	// Subs is the number of sub-clusters the filtering function kept
	// together in this group (0: it did not).
	Subs int
}

// Result is a clustering of a trace's ranks.
type Result struct {
	Method Method
	Ranks  int
	// Groups are the clusters, by head.
	Groups []Group
	// Main is the number of main clusters of the two-level methods (1
	// for the others), Sub the number of their sub-clusters before the
	// filtering function.
	Main, Sub int
	// Format lists ACURDION's signatures that differ across ranks
	// (adaptive signature building), as SignatureNames names them.
	Format []string
	// K is the number of clusters ACURDION's methods keep at most.
	K int
}

// Cluster groups the ranks of sigs (one per rank, in rank order) with opt.
func Cluster(sigs []Signatures, opt Options) (*Result, error) {
	if len(sigs) == 0 {
		return nil, fmt.Errorf("cluster: no rank")
	}
	res := &Result{Method: opt.Method, Ranks: len(sigs), Main: 1}
	sp := newSpace(sigs, opt.Table1)
	res.Format = sp.format()
	all := make([]int32, len(sigs))
	for i := range all {
		all[i] = int32(i)
	}
	switch opt.Method {
	case CallPathParam:
		if !(opt.CountTolerance >= 0 && opt.CountTolerance < 1) {
			return nil, fmt.Errorf("cluster: the count tolerance must be in [0, 1), got %g", opt.CountTolerance)
		}
		res.callPathParam(sigs, all, opt)
	case Reference:
		if sigs[0].Reference < 0 {
			return nil, fmt.Errorf("cluster: the reference method needs the reference signatures (SignOptions.Reference)")
		}
		for _, g := range groupBy(all, func(r int32) uint64 { return uint64(sigs[r].Reference) }) {
			res.Groups = append(res.Groups, Group{Rep: g[0], Members: g})
		}
	case Acurdion, Acurdion2:
		if opt.K < 1 {
			return nil, fmt.Errorf("cluster: K must be at least 1, got %d", opt.K)
		}
		res.K = opt.K
		if opt.Method == Acurdion {
			res.Groups = kFarthest(all, opt.K, sp.distance)
			break
		}
		res.acurdion2(sp, all, opt.K)
	default:
		return nil, fmt.Errorf("cluster: unknown method %q (%v)", opt.Method, Methods)
	}
	slices.SortFunc(res.Groups, func(a, b Group) int { return cmp.Compare(a.Rep, b.Rep) })
	return res, nil
}

// callPathParam makes the main clusters and their sub-clusters. The
// filtering function: past P/2 sub-clusters in all (and past K, as a
// grid's nine kinds of ranks are no scalability problem), each main
// cluster's sub-clusters are kept together, their members' parameters
// merged where they differ, instead of growing with the ranks.
func (res *Result) callPathParam(sigs []Signatures, all []int32, opt Options) {
	path := func(r int32) uint64 { return uint64(sigs[r].Path) }
	if opt.Table1 {
		path = func(r int32) uint64 { return sigs[r].CallPath }
	}
	mains := groupBy(all, path)
	res.Main = len(mains)
	subs := make([][][]int32, len(mains))
	for m, main := range mains {
		subs[m] = subClusters(sigs, main, opt)
		res.Sub += len(subs[m])
	}
	filter := !opt.NoFilter && 2*res.Sub > len(sigs) && res.Sub > opt.K
	for m, main := range mains {
		if filter && len(subs[m]) > 1 {
			res.Groups = append(res.Groups, Group{Rep: main[0], Members: main, Main: m, Subs: len(subs[m])})
			continue
		}
		for _, g := range subs[m] {
			res.Groups = append(res.Groups, Group{Rep: g[0], Members: g, Main: m})
		}
	}
}

// acurdion2 is the double step: K-farthest over the call paths, then
// within each call-path cluster over the other signatures, the K
// clusters shared among the call-path clusters.
func (res *Result) acurdion2(sp *space, all []int32, k int) {
	mains := kFarthest(all, k, sp.callPathDistance)
	res.Main = len(mains)
	shares := shareK(sp, mains, k)
	for m, main := range mains {
		for _, g := range kFarthest(main.Members, shares[m], sp.paramDistance) {
			g.Main = m
			res.Groups = append(res.Groups, g)
		}
	}
}

// shareK gives each call-path cluster one of the k clusters, then the
// rest one at a time to the cluster with the most distinct parameter
// signatures beyond its share (the larger one on a tie), while any has.
func shareK(sp *space, mains []Group, k int) []int {
	shares := make([]int, len(mains))
	distinct := make([]int, len(mains))
	for m, g := range mains {
		shares[m] = 1
		seen := map[ParamKey]bool{}
		for _, r := range g.Members {
			seen[sp.sigs[r].Params] = true
		}
		distinct[m] = len(seen)
	}
	for left := k - len(mains); left > 0; left-- {
		best := -1
		for m := range mains {
			more := distinct[m] - shares[m]
			if more > 0 && (best < 0 || more > distinct[best]-shares[best] ||
				more == distinct[best]-shares[best] && len(mains[m].Members) > len(mains[best].Members)) {
				best = m
			}
		}
		if best < 0 {
			break
		}
		shares[best]++
	}
	return shares
}

// groupBy splits ranks (ascending) into groups of equal key, in the order
// of their first rank.
func groupBy(ranks []int32, key func(int32) uint64) [][]int32 {
	index := map[uint64]int{}
	var groups [][]int32
	for _, r := range ranks {
		k := key(r)
		i, ok := index[k]
		if !ok {
			i = len(groups)
			index[k] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], r)
	}
	return groups
}

// subClusters splits a main cluster by parameter signature: ranks of
// equal signatures but for their average count, taken by increasing
// count, join the sub-cluster being formed while their count is within
// the tolerance of its members' average (the paper records the average),
// and start the next otherwise. The result does not depend on how the
// ranks are numbered.
func subClusters(sigs []Signatures, ranks []int32, opt Options) [][]int32 {
	rest := func(r int32) ParamKey {
		k := sigs[r].Params
		k.CountSum, k.CountN = 0, 0
		return k
	}
	count := func(r int32) float64 { return sigs[r].Params.AvgCount() }
	if opt.Table1 {
		rest = func(r int32) ParamKey { return ParamKey{Types: sigs[r].Param &^ countMask} }
		count = func(r int32) float64 { return float64(sigs[r].Param & countMask) }
	}
	byRest := map[ParamKey][]int32{}
	var order []ParamKey
	for _, r := range ranks {
		k := rest(r)
		if _, ok := byRest[k]; !ok {
			order = append(order, k)
		}
		byRest[k] = append(byRest[k], r)
	}
	var groups [][]int32
	for _, k := range order {
		rs := byRest[k]
		slices.SortStableFunc(rs, func(a, b int32) int { return cmp.Compare(count(a), count(b)) })
		var cur []int32
		sum := 0.0
		for _, r := range rs {
			c := count(r)
			if len(cur) > 0 {
				mean := sum / float64(len(cur))
				if math.Abs(c-mean) > opt.CountTolerance*math.Max(c, mean) {
					groups = append(groups, cur)
					cur, sum = nil, 0
				}
			}
			cur = append(cur, r)
			sum += c
		}
		groups = append(groups, cur)
	}
	for _, g := range groups {
		slices.Sort(g)
	}
	slices.SortFunc(groups, func(a, b []int32) int { return cmp.Compare(a[0], b[0]) })
	return groups
}
