package suffix

import "math/bits"

// Run is a maximal repetition of a sequence: s[Start:End] has the
// primitive period Period, holds at least two periods, and cannot be
// extended by one symbol on either side with that period.
type Run struct {
	Start, End, Period int32
}

// Reps returns the number of whole periods of the run.
func (r Run) Reps() int { return int(r.End-r.Start) / int(r.Period) }

// Runs returns the maximal repetitions of s (the sequence r was built on)
// with at least minReps whole periods (minReps >= 2), by period then
// start. Each period p is probed at every p-th position with a longest
// common extension query (O(1), from the LCP array), so the search takes
// O(n log n) queries; a run's start is found by comparing backwards, at
// most one period plus its overlap with the previous run of the period.
// Work stops growing past budget symbol comparisons (0: no limit), so
// that a hostile sequence costs bounded time; the runs of the periods
// searched by then are returned.
func (r *Repeats) Runs(s []int32, minReps int, budget int) []Run {
	n := len(s)
	minReps = max(minReps, 2)
	if n < minReps {
		return nil
	}
	if r.lce == nil {
		r.lce = newRangeMin(r.lcp)
	}
	var out []Run
	seen := map[[2]int32]bool{} // extents of the runs found with a smaller period
	work := 0
	for p := 1; p*minReps <= n; p++ {
		for q := 0; q+p < n; {
			work++
			if s[q] != s[q+p] {
				q += p
				continue
			}
			l := r.extension(q, q+p)
			b := 0
			for q-b-1 >= 0 && s[q-b-1] == s[q+p-b-1] {
				b++
			}
			work += b
			start, end := int32(q-b), int32(q+p+l)
			if int(end-start) >= 2*p {
				ext := [2]int32{start, end}
				if !seen[ext] {
					seen[ext] = true
					if int(end-start) >= minReps*p {
						out = append(out, Run{Start: start, End: end, Period: int32(p)})
					}
				}
			}
			next := (int(end)-p)/p*p + p
			q = max(q+p, next)
		}
		if budget > 0 && work > budget {
			break
		}
	}
	return out
}

// Root returns the length of the primitive root of the l symbols at
// position i (l >= 1, i+l within the sequence) if they are an exact power
// u^m with m >= 2, else l: the least proper divisor r of l such that they
// have period r (a longest common extension, O(1) each), O(sqrt(l)) in
// all, where a prefix function would read the l symbols. It is exact: if
// some proper divisor r of l is a period, r <= l/2, so the least period p
// and r fit in l together, and by Fine and Wilf's theorem p divides r,
// hence l, and p is that least divisor.
func (r *Repeats) Root(i, l int) int {
	if r.lce == nil {
		r.lce = newRangeMin(r.lcp)
	}
	period := func(d int) bool { return r.extension(i, i+d) >= l-d }
	var large []int // the divisors above sqrt(l), descending
	for d := 1; d*d <= l; d++ {
		if l%d != 0 {
			continue
		}
		if d < l && period(d) {
			return d
		}
		if e := l / d; e != d && e < l {
			large = append(large, e)
		}
	}
	for k := len(large) - 1; k >= 0; k-- {
		if period(large[k]) {
			return large[k]
		}
	}
	return l
}

// extension returns the length of the longest common prefix of the
// suffixes at i and j (i != j).
func (r *Repeats) extension(i, j int) int {
	a, b := r.rank[i], r.rank[j]
	if a > b {
		a, b = b, a
	}
	return int(r.lce.min(a+1, b))
}

// Occurrences returns the starting positions of every occurrence of the
// l symbols at position i (l >= 1, i+l within the sequence), in suffix
// order; the caller must not modify the slice.
func (r *Repeats) Occurrences(i, l int) []int32 {
	lo, hi := r.span(i, l)
	return r.sa[lo:hi]
}

// Word returns a number of the l symbols at position i that the same
// symbols elsewhere share and no other l symbols have: where their
// occurrences start in suffix order. It costs what Occurrences costs
// without their count: a caller that meets a word many times tells it
// from the others without going through its occurrences each time.
func (r *Repeats) Word(i, l int) int32 {
	lo, _ := r.span(i, l)
	return lo
}

// span returns the range of the suffix array that holds the occurrences
// of the l symbols at position i.
func (r *Repeats) span(i, l int) (lo, hi int32) {
	slot := r.rank[i]
	v := r.leaf[slot]
	if r.nodes[v].lcp < int32(l) {
		return slot, slot + 1
	}
	for p := r.nodes[v].parent; p >= 0 && r.nodes[p].lcp >= int32(l); p = r.nodes[v].parent {
		v = p
	}
	return r.nodes[v].lb, r.nodes[v].rb + 1
}

// rangeMin answers minimum queries over an array in blocks of 16: a
// sparse table over the blocks' minima and a scan of the partial blocks
// at both ends, in O(n) space.
type rangeMin struct {
	a      []int32
	sparse [][]int32 // sparse[k][b]: minimum of blocks b..b+2^k-1
}

const rmqBlock = 16

func newRangeMin(a []int32) *rangeMin {
	nb := (len(a) + rmqBlock - 1) / rmqBlock
	level := make([]int32, nb)
	for b := range level {
		m := a[b*rmqBlock]
		for _, v := range a[b*rmqBlock : min(len(a), (b+1)*rmqBlock)] {
			m = min(m, v)
		}
		level[b] = m
	}
	rm := &rangeMin{a: a, sparse: [][]int32{level}}
	for w := 1; 2*w <= nb; w *= 2 {
		prev := rm.sparse[len(rm.sparse)-1]
		next := make([]int32, nb-2*w+1)
		for b := range next {
			next[b] = min(prev[b], prev[b+w])
		}
		rm.sparse = append(rm.sparse, next)
	}
	return rm
}

// min returns the minimum of a[lo..hi] (inclusive, lo <= hi).
func (rm *rangeMin) min(lo, hi int32) int32 {
	bl, bh := lo/rmqBlock, hi/rmqBlock
	if bh-bl <= 1 {
		m := rm.a[lo]
		for _, v := range rm.a[lo : hi+1] {
			m = min(m, v)
		}
		return m
	}
	m := rm.a[lo]
	for _, v := range rm.a[lo : (bl+1)*rmqBlock] {
		m = min(m, v)
	}
	for _, v := range rm.a[bh*rmqBlock : hi+1] {
		m = min(m, v)
	}
	first, last := bl+1, bh-1
	k := bits.Len32(uint32(last-first+1)) - 1
	return min(m, rm.sparse[k][first], rm.sparse[k][last-(1<<k)+1])
}
