// Package suffix finds repeats in integer sequences in linear time: the
// suffix array (SA-IS), the LCP array (Kasai) and the tree of maximal
// repeats built from them. Pattern detection uses it to find, in each
// rank's stream of MPI calls, the repeats that cannot be extended to the
// left or to the right (maximal repeats, Gusfield 1997, 7.12).
package suffix

import "slices"

// Array returns the suffix array of s, whose symbols must lie in [0, k):
// the starting positions of the suffixes of s in lexicographic order (a
// suffix that is a prefix of another sorts first). It runs in
// O(len(s)+k) time with the SA-IS algorithm (Nong, Zhang and Chan, 2009),
// or O(len(s) log len(s)) where k is larger than len(s): a rank's calls
// use few of a large trace's symbols. It panics if a symbol is out of
// range.
func Array(s []int32, k int) []int32 { return array(s, k, nil) }

// array is Array, its arrays taken from sc (made where sc is nil).
func array(s []int32, k int, sc *Scratch) []int32 {
	n := len(s)
	if n == 0 {
		return nil
	}
	// SA-IS wants a unique smallest sentinel: shift the symbols by one.
	t := sc.int32s(n + 1)
	for i, c := range s {
		if c < 0 || int(c) >= k {
			panic("suffix: symbol out of range")
		}
		t[i] = c + 1
	}
	if k > n {
		k = rank(t[:n])
	}
	sa := sais(t, k+1, sc)
	return sa[1:]
}

// rank replaces the symbols of s, all positive, by their ranks among the
// distinct ones, from 1, and returns how many there are: the suffixes sort
// alike, over an alphabet no larger than s.
func rank(s []int32) int {
	sorted := slices.Clone(s)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	for i, c := range s {
		j, _ := slices.BinarySearch(sorted, c)
		s[i] = int32(j) + 1
	}
	return len(sorted)
}

// sais returns the suffix array of s, whose last symbol is a unique 0 and
// whose other symbols lie in [1, k).
func sais(s []int32, k int, sc *Scratch) []int32 {
	n := len(s)
	sa := sc.int32s(n)
	if n == 1 {
		return sa
	}
	stype := sc.bools(n) // true: S-type suffix
	stype[n-1] = true
	for i := n - 2; i >= 0; i-- {
		stype[i] = s[i] < s[i+1] || (s[i] == s[i+1] && stype[i+1])
	}
	lms := func(i int32) bool { return i > 0 && stype[i] && !stype[i-1] }
	bkt := sc.int32s(k)

	// Sort the LMS substrings by induction from their bucket ends.
	for i := range sa {
		sa[i] = -1
	}
	buckets(s, bkt, true)
	for i := int32(1); i < int32(n); i++ {
		if lms(i) {
			bkt[s[i]]--
			sa[bkt[s[i]]] = i
		}
	}
	induce(s, sa, bkt, stype)

	// Name the sorted LMS substrings.
	n1 := 0
	for _, p := range sa {
		if lms(p) {
			sa[n1] = p
			n1++
		}
	}
	names := sc.int32s(n)
	for i := range names {
		names[i] = -1
	}
	name, prev := int32(0), int32(-1)
	for i := 0; i < n1; i++ {
		p := sa[i]
		if prev < 0 || !sameLMS(s, stype, lms, p, prev) {
			name++
			prev = p
		}
		names[p] = name - 1
	}
	s1 := sc.int32s(n1)[:0]
	pos1 := sc.int32s(n1)[:0]
	for i, v := range names {
		if v >= 0 {
			s1 = append(s1, v)
			pos1 = append(pos1, int32(i))
		}
	}

	// Sort the LMS suffixes: recursively when names repeat.
	var sa1 []int32
	if int(name) < n1 {
		sa1 = sais(s1, int(name), sc)
	} else {
		sa1 = sc.int32s(n1)
		for i, v := range s1 {
			sa1[v] = int32(i)
		}
	}

	// Induce the whole array from the sorted LMS suffixes.
	for i := range sa {
		sa[i] = -1
	}
	buckets(s, bkt, true)
	for i := n1 - 1; i >= 0; i-- {
		p := pos1[sa1[i]]
		bkt[s[p]]--
		sa[bkt[s[p]]] = p
	}
	induce(s, sa, bkt, stype)
	return sa
}

// sameLMS reports whether the LMS substrings at a and b are equal.
func sameLMS(s []int32, stype []bool, lms func(int32) bool, a, b int32) bool {
	n := int32(len(s))
	for d := int32(0); a+d < n && b+d < n; d++ {
		if s[a+d] != s[b+d] || stype[a+d] != stype[b+d] {
			return false
		}
		if d > 0 && (lms(a+d) || lms(b+d)) {
			return lms(a+d) && lms(b+d)
		}
	}
	return false
}

// buckets sets bkt to the start (or end) of each symbol's bucket.
func buckets(s []int32, bkt []int32, end bool) {
	clear(bkt)
	for _, c := range s {
		bkt[c]++
	}
	sum := int32(0)
	for i, c := range bkt {
		sum += c
		if end {
			bkt[i] = sum
		} else {
			bkt[i] = sum - c
		}
	}
}

// induce places the L-type suffixes from the seeded ones, left to right,
// then the S-type suffixes right to left.
func induce(s, sa, bkt []int32, stype []bool) {
	buckets(s, bkt, false)
	for i := 0; i < len(sa); i++ {
		if j := sa[i] - 1; sa[i] > 0 && !stype[j] {
			sa[bkt[s[j]]] = j
			bkt[s[j]]++
		}
	}
	buckets(s, bkt, true)
	for i := len(sa) - 1; i >= 0; i-- {
		if j := sa[i] - 1; sa[i] > 0 && stype[j] {
			bkt[s[j]]--
			sa[bkt[s[j]]] = j
		}
	}
}

// LCP returns the longest-common-prefix array of s and its suffix array
// sa: lcp[i] is the length of the common prefix of the suffixes sa[i-1]
// and sa[i], and lcp[0] is 0. Kasai et al.'s algorithm, O(len(s)).
func LCP(s, sa []int32) []int32 { return lcpOf(s, sa, nil) }

// lcpOf is LCP, its arrays taken from sc (made where sc is nil).
func lcpOf(s, sa []int32, sc *Scratch) []int32 {
	n := len(s)
	lcp := sc.int32s(n)
	rank := sc.int32s(n)
	for i, p := range sa {
		rank[p] = int32(i)
	}
	h := int32(0)
	for i := 0; i < n; i++ {
		r := rank[i]
		if r == 0 {
			h = 0
			continue
		}
		j := int(sa[r-1])
		for i+int(h) < n && j+int(h) < n && s[i+int(h)] == s[j+int(h)] {
			h++
		}
		lcp[r] = h
		if h > 0 {
			h--
		}
	}
	return lcp
}
