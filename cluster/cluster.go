package cluster

import (
	"fmt"
	"math"
	"slices"

	"kairos/trace"
)

// Method is a clustering method.
type Method string

// The clustering methods.
const (
	// CallPathParam is Bahmani and Mueller's two-level clustering: main
	// clusters of equal call-path signatures, split into sub-clusters of
	// equal parameter signatures (counts within CountTolerance).
	CallPathParam Method = "callpath"
	// Reference groups ranks with equal event sequences (parameters
	// included, end-points relative): the exact, costly baseline.
	Reference Method = "reference"
	// Acurdion is ACURDION's single-step K-farthest clustering over the
	// signatures that differ across ranks.
	Acurdion Method = "acurdion"
	// Acurdion2 is ACURDION's double-step clustering: K-farthest over the
	// call-path signatures, then within each of those clusters over the
	// other signatures.
	Acurdion2 Method = "acurdion2"
)

// Methods lists the methods, the default first.
var Methods = []Method{CallPathParam, Reference, Acurdion, Acurdion2}

// Options choose a method and its parameters.
type Options struct {
	Method Method
	// K is ACURDION's number of clusters (the paper's 9), raised to the
	// number of distinct call paths where there are more, as the paper
	// suggests, so that every call sequence keeps a representative.
	K int
	// CountTolerance is the relative difference under which two average
	// counts are the same in CallPathParam (the paper's 5%).
	CountTolerance float64
	// Exact splits every cluster by reference signature afterwards, so
	// that each member's calls are its representative's (no inexact
	// member): signatures of averages can merge ranks that behave
	// differently, and their reduction would not replay as the trace.
	Exact bool
}

// DefaultOptions are the papers' settings.
func DefaultOptions() Options {
	return Options{Method: CallPathParam, K: 9, CountTolerance: 0.05}
}

// Group is one cluster: the rank whose trace stands for it and its members
// (the representative included), ascending.
type Group struct {
	Rep     int32
	Members []int32
	// Main is the index of the group's main (call-path) cluster, for the
	// two-level methods; 0 otherwise.
	Main int
	// Inexact counts the members whose calls differ from the
	// representative's (end-points relative): signatures of averages can
	// merge ranks that do not behave alike, and those members replay
	// calls that are not theirs.
	Inexact int
}

// Result is a clustering of a trace's ranks.
type Result struct {
	Method Method
	Ranks  int
	// Groups are the clusters, by representative.
	Groups []Group
	// Main is the number of main clusters of the two-level methods (1
	// for the others).
	Main int
	// Format lists ACURDION's signatures that differ across ranks
	// (adaptive signature building), as SignatureNames names them.
	Format []string
	// K is the number of clusters ACURDION's methods kept at most:
	// Options.K, or the number of distinct call paths if larger.
	K int
}

// SignAll computes the signatures of every rank of src, one rank at a
// time.
func SignAll(src trace.Source) ([]Signatures, error) {
	n := src.NumRanks()
	sigs := make([]Signatures, n)
	for r := 0; r < n; r++ {
		rd, err := src.OpenRank(r)
		if err != nil {
			return nil, err
		}
		sigs[r], err = Sign(rd, int32(r), n, src.Meta())
		rd.Close()
		if err != nil {
			return nil, err
		}
	}
	return sigs, nil
}

// Cluster groups the ranks of sigs (one per rank, in rank order) with opt.
func Cluster(sigs []Signatures, opt Options) (*Result, error) {
	if len(sigs) == 0 {
		return nil, fmt.Errorf("cluster: no rank")
	}
	res := &Result{Method: opt.Method, Ranks: len(sigs), Main: 1}
	sp := newSpace(sigs)
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
		mains := groupBy(all, func(r int32) uint64 { return sigs[r].CallPath })
		res.Main = len(mains)
		for m, main := range mains {
			for _, g := range subClusters(sigs, main, opt.CountTolerance) {
				res.Groups = append(res.Groups, Group{Rep: g[0], Members: g, Main: m})
			}
		}
	case Reference:
		for _, g := range groupBy(all, func(r int32) uint64 { return sigs[r].Reference }) {
			res.Groups = append(res.Groups, Group{Rep: g[0], Members: g})
		}
	case Acurdion, Acurdion2:
		if opt.K < 1 {
			return nil, fmt.Errorf("cluster: K must be at least 1, got %d", opt.K)
		}
		// "We can change the value of K dynamically should the number of
		// Call-Path patterns increase": no call sequence is lost.
		res.K = max(opt.K, len(groupBy(all, func(r int32) uint64 { return sigs[r].CallPath })))
		if opt.Method == Acurdion {
			res.Groups = kFarthest(all, res.K, sp.distance)
			break
		}
		mains := kFarthest(all, res.K, sp.callPathDistance)
		res.Main = len(mains)
		for m, main := range mains {
			for _, g := range kFarthest(main.Members, opt.K, sp.paramDistance) {
				g.Main = m
				res.Groups = append(res.Groups, g)
			}
		}
	default:
		return nil, fmt.Errorf("cluster: unknown method %q (%v)", opt.Method, Methods)
	}
	if opt.Exact {
		res.Groups = splitExact(sigs, res.Groups)
	}
	slices.SortFunc(res.Groups, func(a, b Group) int { return int(a.Rep - b.Rep) })
	for i := range res.Groups {
		g := &res.Groups[i]
		for _, r := range g.Members {
			if sigs[r].Reference != sigs[g.Rep].Reference {
				g.Inexact++
			}
		}
	}
	return res, nil
}

// Inexact returns the number of ranks whose calls differ from their
// representative's.
func (r *Result) Inexact() int {
	n := 0
	for _, g := range r.Groups {
		n += g.Inexact
	}
	return n
}

// splitExact splits each group into ranks of equal reference signature;
// the part holding the representative keeps it, the others are led by
// their lowest rank.
func splitExact(sigs []Signatures, groups []Group) []Group {
	var out []Group
	for _, g := range groups {
		for _, part := range groupBy(g.Members, func(r int32) uint64 { return sigs[r].Reference }) {
			rep := part[0]
			if slices.Contains(part, g.Rep) {
				rep = g.Rep
			}
			out = append(out, Group{Rep: rep, Members: part, Main: g.Main})
		}
	}
	return out
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

// subClusters splits a main cluster by parameter signature: a rank joins
// the first sub-cluster whose head has the same signature, or the same
// but for an average count within tol of its own.
func subClusters(sigs []Signatures, ranks []int32, tol float64) [][]int32 {
	var groups [][]int32
	byRest := map[uint64][]int{} // the sub-clusters by the bits other than the count
	for _, r := range ranks {
		rest := sigs[r].Param &^ countMask
		joined := false
		for _, i := range byRest[rest] {
			if sameParams(sigs[groups[i][0]].Param, sigs[r].Param, tol) {
				groups[i] = append(groups[i], r)
				joined = true
				break
			}
		}
		if !joined {
			byRest[rest] = append(byRest[rest], len(groups))
			groups = append(groups, []int32{r})
		}
	}
	return groups
}

func sameParams(a, b uint64, tol float64) bool {
	if a&^countMask != b&^countMask {
		return false
	}
	ca, cb := float64(a&countMask), float64(b&countMask)
	return math.Abs(ca-cb) <= tol*math.Max(ca, cb)
}
