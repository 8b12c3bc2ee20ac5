package suffix

import (
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

// naiveArray sorts the suffixes by comparison.
func naiveArray(s []int32) []int32 {
	sa := make([]int32, len(s))
	for i := range sa {
		sa[i] = int32(i)
	}
	sort.Slice(sa, func(a, b int) bool { return slices.Compare(s[sa[a]:], s[sa[b]:]) < 0 })
	return sa
}

// naiveMaximal returns every maximal repeat of s as "len:sorted positions"
// by trying every substring.
func naiveMaximal(s []int32, unique func(int32) bool) map[string]bool {
	out := map[string]bool{}
	n := len(s)
	for l := 1; l <= n; l++ {
		seen := map[string][]int32{}
		for i := 0; i+l <= n; i++ {
			k := key(s[i : i+l])
			seen[k] = append(seen[k], int32(i))
		}
		for _, pos := range seen {
			if len(pos) < 2 {
				continue
			}
			if diverse(s, pos, l, unique) {
				out[repeatKey(l, pos)] = true
			}
		}
	}
	return out
}

func diverse(s []int32, pos []int32, l int, unique func(int32) bool) bool {
	left, right := map[int32]bool{}, map[int32]bool{}
	leftU, rightU := false, false
	for _, p := range pos {
		if p == 0 || unique(s[p-1]) {
			leftU = true
		} else {
			left[s[p-1]] = true
		}
		if int(p)+l == len(s) {
			rightU = true
		} else {
			right[s[int(p)+l]] = true
		}
	}
	return (leftU || len(left) > 1) && (rightU || len(right) > 1)
}

func key(s []int32) string {
	b := make([]byte, 0, 4*len(s))
	for _, c := range s {
		b = append(b, byte(c>>24), byte(c>>16), byte(c>>8), byte(c))
	}
	return string(b)
}

func repeatKey(l int, pos []int32) string {
	p := slices.Clone(pos)
	slices.Sort(p)
	return key(append([]int32{int32(l)}, p...))
}

func checkAll(t *testing.T, s []int32, k int) {
	t.Helper()
	sa := Array(s, k)
	if want := naiveArray(s); !slices.Equal(sa, want) {
		t.Fatalf("Array(%v) = %v, want %v", s, sa, want)
	}
	lcp := LCP(s, sa)
	for i := 1; i < len(s); i++ {
		a, b := s[sa[i-1]:], s[sa[i]:]
		h := 0
		for h < len(a) && h < len(b) && a[h] == b[h] {
			h++
		}
		if int(lcp[i]) != h {
			t.Fatalf("LCP(%v)[%d] = %d, want %d", s, i, lcp[i], h)
		}
	}
	unique := func(c int32) bool { return int(c) >= k-2 } // the two top symbols are separators
	got := map[string]bool{}
	r := NewRepeats(s, k, unique)
	r.Each(func(l int, pos []int32) { got[repeatKey(l, pos)] = true })
	want := naiveMaximal(s, unique)
	if len(got) != len(want) {
		t.Fatalf("%v: %d maximal repeats, want %d", s, len(got), len(want))
	}
	for w := range want {
		if !got[w] {
			t.Fatalf("%v: a maximal repeat is missing", s)
		}
	}
	for i := range s {
		l, occ := r.Longest(i)
		bestL := 0
		for w := range want {
			wl := int(int32(w[0])<<24 | int32(w[1])<<16 | int32(w[2])<<8 | int32(w[3]))
			for j := 4; j < len(w); j += 4 {
				p := int(int32(w[j])<<24 | int32(w[j+1])<<16 | int32(w[j+2])<<8 | int32(w[j+3]))
				if p == i && wl > bestL {
					bestL = wl
					if l == wl && occ != (len(w)-4)/4 {
						t.Fatalf("%v: Longest(%d) occurrences %d, want %d", s, i, occ, (len(w)-4)/4)
					}
				}
			}
		}
		if l != bestL {
			t.Fatalf("%v: Longest(%d) = %d, want %d", s, i, l, bestL)
		}
	}
}

func TestRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 400 {
		n := 1 + rng.IntN(40)
		k := 2 + rng.IntN(4)
		s := make([]int32, n)
		for i := range s {
			s[i] = int32(rng.IntN(k))
		}
		checkAll(t, s, k+2)
	}
}

// TestSparseAlphabet takes a few symbols of a large alphabet, as a rank's
// calls of a large trace do: Array ranks them first, and its suffixes
// must sort as the symbols do.
func TestSparseAlphabet(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const k = 1 << 20
	for range 300 {
		syms := make([]int32, 1+rng.IntN(5))
		for i := range syms {
			syms[i] = int32(rng.IntN(k))
		}
		s := make([]int32, 1+rng.IntN(40))
		for i := range s {
			s[i] = syms[rng.IntN(len(syms))]
		}
		checkAll(t, s, k)
	}
}

func TestPeriodic(t *testing.T) {
	for _, s := range [][]int32{{0}, {0, 0}, {0, 0, 0, 0, 0}, {0, 1, 0, 1, 0, 1, 0}, {1, 0, 1, 1, 0, 1, 1, 0}} {
		checkAll(t, s, 4)
	}
}

func FuzzRepeats(f *testing.F) {
	f.Add([]byte{0, 1, 2, 0, 1, 2, 3, 0, 1})
	f.Add([]byte{5, 5, 5, 5})
	f.Add([]byte{})
	f.Add(make([]byte, 64)) // issue 43: one call repeated, the longest word
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 64 {
			b = b[:64]
		}
		s := make([]int32, len(b))
		for i, c := range b {
			s[i] = int32(c % 6)
		}
		if len(s) == 0 {
			if Array(s, 6) != nil {
				t.Fatal("non-nil array of an empty sequence")
			}
			return
		}
		checkAll(t, s, 6)
		checkRuns(t, s, 6, 2+len(b)%3)
		sameTree(t, &fuzzScratch, s, 6, func(c int32) bool { return c == 5 })
	})
}

// fuzzScratch builds the fuzz target's trees one after another.
var fuzzScratch Scratch

func BenchmarkArray(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	s := make([]int32, 1<<20)
	for i := range s {
		s[i] = int32(rng.IntN(64))
	}
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		NewRepeats(s, 64, nil)
	}
}

// TestScratch builds trees one after another in one Scratch, short and
// long sequences mixed (its blocks grow, and hold the last tree's
// arrays), and finds each the tree NewRepeats builds: the same arrays,
// nodes and runs.
func TestScratch(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var sc Scratch
	for i := range 200 {
		n := 1 + rng.IntN(60)
		if i%10 == 0 {
			n = 2000 + rng.IntN(6000)
		}
		k := 2 + rng.IntN(5)
		s := make([]int32, n)
		for j := range s {
			s[j] = int32(rng.IntN(k))
		}
		s[n-1] = int32(k) // a separator at the end, as a rank's contexts have
		unique := func(c int32) bool { return int(c) == k }
		sameTree(t, &sc, s, k+1, unique)
	}
}

// sameTree builds the repeat tree of s in sc and with NewRepeats, and
// fails unless they have the same arrays, nodes and runs.
func sameTree(t *testing.T, sc *Scratch, s []int32, k int, unique func(int32) bool) {
	t.Helper()
	want := NewRepeats(s, k, unique)
	got := sc.Repeats(s, k, unique)
	for name, pair := range map[string][2][]int32{
		"sa": {got.sa, want.sa}, "rank": {got.rank, want.rank}, "lcp": {got.lcp, want.lcp},
		"leaf": {got.leaf, want.leaf}, "order": {got.order, want.order}, "best": {got.best, want.best},
	} {
		if !slices.Equal(pair[0], pair[1]) {
			t.Fatalf("%d symbols: %s differs from NewRepeats'", len(s), name)
		}
	}
	if !slices.Equal(got.nodes, want.nodes) {
		t.Fatalf("%d symbols: nodes differ from NewRepeats'", len(s))
	}
	if g, w := got.Runs(s, 3, 0), want.Runs(s, 3, 0); !slices.Equal(g, w) {
		t.Fatalf("%d symbols: runs %v, want %v", len(s), g, w)
	}
}
