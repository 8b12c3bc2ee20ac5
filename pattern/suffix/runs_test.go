package suffix

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// naiveRuns finds every maximal repetition with a primitive period and at
// least minReps whole periods by trying every period and start.
func naiveRuns(s []int32, minReps int) []Run {
	var out []Run
	n := len(s)
	for p := 1; p <= n; p++ {
		for i := 0; i+p < n; {
			if s[i] != s[i+p] {
				i++
				continue
			}
			j := i
			for j+p < n && s[j] == s[j+p] {
				j++
			}
			start, end := i, j+p
			if end-start >= minReps*p && primitive(s[start:start+p]) {
				out = append(out, Run{int32(start), int32(end), int32(p)})
			}
			i = j + 1
		}
	}
	return out
}

func primitive(w []int32) bool {
	for d := 1; d < len(w); d++ {
		if len(w)%d == 0 && slices.Equal(w[d:], w[:len(w)-d]) {
			return false
		}
	}
	return true
}

func checkRuns(t *testing.T, s []int32, k, minReps int) {
	t.Helper()
	r := NewRepeats(s, k, nil)
	got := r.Runs(s, minReps, 0)
	want := naiveRuns(s, minReps)
	if !slices.Equal(got, want) {
		t.Fatalf("%v, %d periods: runs %v, want %v", s, minReps, got, want)
	}
	if len(s) > 40 {
		return
	}
	for i := range s {
		for l := 1; i+l <= len(s); l++ {
			var want []int32
			for j := 0; j+l <= len(s); j++ {
				if slices.Equal(s[j:j+l], s[i:i+l]) {
					want = append(want, int32(j))
				}
			}
			got := slices.Sorted(slices.Values(r.Occurrences(i, l)))
			if !slices.Equal(got, want) {
				t.Fatalf("%v: Occurrences(%d, %d) = %v, want %v", s, i, l, got, want)
			}
			if got, want := r.Root(i, l), naiveRoot(s[i:i+l]); got != want {
				t.Fatalf("%v: Root(%d, %d) = %d, want %d", s, i, l, got, want)
			}
			// Word: the same number at every occurrence, another one
			// for every other word of l symbols.
			for j := 0; j+l <= len(s); j++ {
				if same := slices.Contains(want, int32(j)); same != (r.Word(j, l) == r.Word(i, l)) {
					t.Fatalf("%v: Word(%d, %d) = %d, Word(%d, %d) = %d, the words equal: %v",
						s, i, l, r.Word(i, l), j, l, r.Word(j, l), same)
				}
			}
		}
	}
}

func TestRuns(t *testing.T) {
	for _, s := range [][]int32{{0}, {0, 0}, {0, 0, 0, 0, 0}, {0, 1, 0, 1, 0, 1, 0}, {1, 0, 1, 1, 0, 1, 1, 0},
		{0, 1, 1, 0, 1, 1, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0}} {
		for _, m := range []int{2, 3} {
			checkRuns(t, s, 4, m)
		}
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for range 300 {
		n := 1 + rng.IntN(200)
		k := 1 + rng.IntN(3)
		s := make([]int32, n)
		for i := range s {
			s[i] = int32(rng.IntN(k))
		}
		checkRuns(t, s, k+1, 2+rng.IntN(3))
	}
}

// TestRangeMin compares block range minima with a scan.
func TestRangeMin(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	a := make([]int32, 1000)
	for i := range a {
		a[i] = int32(rng.IntN(50))
	}
	rm := newRangeMin(a)
	for range 5000 {
		lo := int32(rng.IntN(len(a)))
		hi := lo + int32(rng.IntN(len(a)-int(lo)))
		if got, want := rm.min(lo, hi), slices.Min(a[lo:hi+1]); got != want {
			t.Fatalf("min(%d, %d) = %d, want %d", lo, hi, got, want)
		}
	}
}

// TestRunsBudget bounds the work on a long run of one symbol: the runs of
// every period are the one run, found once.
func TestRunsBudget(t *testing.T) {
	s := make([]int32, 1<<16)
	r := NewRepeats(s, 1, nil)
	if got := r.Runs(s, 2, 1<<20); !slices.Equal(got, []Run{{0, 1 << 16, 1}}) {
		t.Fatalf("runs %v", got)
	}
}

// naiveRoot returns the length of the primitive root of w if w is an
// exact power u^m with m >= 2, else len(w), from its prefix function.
func naiveRoot(w []int32) int {
	n := len(w)
	pi := make([]int, n)
	for i := 1; i < n; i++ {
		k := pi[i-1]
		for k > 0 && w[i] != w[k] {
			k = pi[k-1]
		}
		if w[i] == w[k] {
			k++
		}
		pi[i] = k
	}
	if p := n - pi[n-1]; p < n && n%p == 0 {
		return p
	}
	return n
}
