package prsd

import (
	"fmt"
	"math"
	"slices"

	"kairos/trace"
)

// Parameter aggregation (seed 001, Section 5: counts that differ by a
// small percentage are taken as similar, and their average recorded).
//
// An alltoallv carries a count for every pair of its members: a data-bound
// code (NAS IS, whose keys go to the rank owning their bucket) draws them
// at random, and P² random counts an instance compress to P² values
// whatever the folding, so that the compressed trace grows with the square
// of the ranks. Where every count of an instance (every member's send and
// receive counts) lies within a tolerance of the instance's mean, the
// instance is recorded as that mean: each count reads back as it, within
// the tolerance of its own, the same for the sender and the receiver (the
// instance stays consistent for a replay), each rank's total within the
// tolerance of its own, the trace's total as recorded but for rounding.
// The counts of an instance become equal, which the format keeps in one
// series whatever the ranks. The instances of one call (its call site on
// its communicator) are aggregated all or none: a call whose counts are
// kept at some instances and equal at others would fold worse than
// either.

// CountAggregates are the alltoallv instances of a trace whose counts are
// recorded as their mean.
type CountAggregates struct {
	tol    float64
	values map[aggKey]int64 // the value of every count of the instance
	// Instances and Aggregated count the alltoallv instances and those
	// aggregated; MaxError is the largest relative difference of a value
	// read back from the count it stands for.
	Instances, Aggregated int
	MaxError              float64
}

// aggKey is an alltoallv instance: its communicator and its index among
// the alltoallvs each member makes on it (collectives are ordered on a
// communicator).
type aggKey struct {
	comm uint32
	k    int64
}

// aggStats accumulates an instance's counts.
type aggStats struct {
	sum, n   float64
	min, max int64
	gcd      int64
	ranks    int
	site     uint64 // the call site of its first member's call
	bad      bool   // a member's vectors do not have a count per member, or its call site differs
}

// aggCall is an alltoallv call: its communicator and its call site.
type aggCall struct {
	comm uint32
	site uint64
}

// AggregateCounts reads every rank of src and returns the alltoallv
// instances whose every count lies within tol of the instance's mean
// (tol in (0, 1)).
func AggregateCounts(src trace.Source, tol float64) (*CountAggregates, error) {
	if !(tol > 0 && tol < 1) {
		return nil, fmt.Errorf("prsd: the count tolerance must be in (0, 1), got %g", tol)
	}
	n := src.NumRanks()
	stats := map[aggKey]*aggStats{}
	for r := range n {
		if err := aggregateRank(src, r, stats); err != nil {
			return nil, err
		}
	}
	a := &CountAggregates{tol: tol, values: map[aggKey]int64{}, Instances: len(stats)}
	kept := map[aggCall]bool{}
	errs := map[aggKey]float64{}
	for key, s := range stats {
		v, e, ok := s.value(len(src.Meta().Members(key.comm, n)), tol)
		if !ok {
			kept[aggCall{key.comm, s.site}] = true
			continue
		}
		a.values[key], errs[key] = v, e
	}
	for key := range a.values {
		if kept[aggCall{key.comm, stats[key].site}] {
			delete(a.values, key)
			continue
		}
		a.Aggregated++
		a.MaxError = max(a.MaxError, errs[key])
	}
	return a, nil
}

// value returns the value every count of the instance takes, the largest
// relative difference of a count from it, and whether every count lies
// within tol of it; members is the size of the instance's communicator.
func (s *aggStats) value(members int, tol float64) (int64, float64, bool) {
	if s.bad || s.ranks != members || s.n == 0 || s.gcd == 0 || s.min <= 0 {
		return 0, 0, false
	}
	// The mean to the nearest multiple of the counts' divisor: between
	// the least and the greatest count, which are multiples of it.
	v := int64(math.Round(s.sum/s.n/float64(s.gcd))) * s.gcd
	e := max(float64(v-s.min)/float64(s.min), float64(s.max-v)/float64(s.max))
	return v, e, e <= tol
}

func aggregateRank(src trace.Source, r int, stats map[aggKey]*aggStats) error {
	rd, err := src.OpenRank(r)
	if err != nil {
		return err
	}
	defer rd.Close()
	next := map[uint32]int64{}
	for rd.Next() {
		e := rd.Event()
		if e.Kind != trace.Alltoallv {
			continue
		}
		key := aggKey{e.Comm, next[e.Comm]}
		next[e.Comm]++
		s := stats[key]
		if s == nil {
			s = &aggStats{min: math.MaxInt64, max: math.MinInt64, site: e.CallSite}
			stats[key] = s
		}
		s.bad = s.bad || e.CallSite != s.site
		s.add(e, len(src.Meta().Members(e.Comm, src.NumRanks())))
	}
	if err := rd.Err(); err != nil {
		return fmt.Errorf("rank %d: %w", r, err)
	}
	return nil
}

func (s *aggStats) add(e *trace.Event, members int) {
	s.ranks++
	if len(e.SendCounts) != members || len(e.RecvCounts) != members {
		s.bad = true
		return
	}
	for _, v := range [2][]int64{e.SendCounts, e.RecvCounts} {
		for _, c := range v {
			s.sum += float64(c)
			s.n++
			s.min, s.max = min(s.min, c), max(s.max, c)
			s.gcd = gcd(s.gcd, c)
		}
	}
}

func gcd(a, b int64) int64 {
	a, b = max(a, -a), max(b, -b)
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// Source returns src with the aggregated instances' counts replaced by
// their value (and each rank's bytes sent and received by their sums).
func (a *CountAggregates) Source(src trace.Source) trace.Source {
	return &aggSource{Source: src, a: a}
}

type aggSource struct {
	trace.Source
	a *CountAggregates
}

// Unwrap returns the source whose counts are aggregated.
func (s *aggSource) Unwrap() trace.Source { return s.Source }

func (s *aggSource) OpenRank(r int) (trace.Reader, error) {
	rd, err := s.Source.OpenRank(r)
	if err != nil {
		return nil, err
	}
	return &aggReader{Reader: rd, a: s.a, next: map[uint32]int64{}}, nil
}

type aggReader struct {
	trace.Reader
	a      *CountAggregates
	next   map[uint32]int64
	e      trace.Event
	counts []int64
	cur    *trace.Event
}

func (r *aggReader) Next() bool {
	if !r.Reader.Next() {
		return false
	}
	e := r.Reader.Event()
	r.cur = e
	if e.Kind != trace.Alltoallv {
		return true
	}
	key := aggKey{e.Comm, r.next[e.Comm]}
	r.next[e.Comm]++
	v, ok := r.a.values[key]
	if !ok {
		return true
	}
	r.e = *e
	n := len(e.SendCounts)
	if cap(r.counts) < n || !allEqual(r.counts[:min(n, cap(r.counts))], v) {
		r.counts = slices.Repeat([]int64{v}, n)
	}
	r.e.SendCounts, r.e.RecvCounts = r.counts[:n], r.counts[:n]
	r.e.SendBytes, r.e.RecvBytes = v*int64(n), v*int64(n)
	r.cur = &r.e
	return true
}

func allEqual(s []int64, v int64) bool {
	for _, x := range s {
		if x != v {
			return false
		}
	}
	return true
}

func (r *aggReader) Event() *trace.Event { return r.cur }
