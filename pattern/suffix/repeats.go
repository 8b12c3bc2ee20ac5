package suffix

// Repeats is the tree of the right-maximal repeats of a sequence (the
// internal nodes of its suffix tree, as LCP intervals of the suffix
// array), each marked left-maximal or not. A repeat is maximal when it is
// both: no extension by one symbol to the left or to the right keeps all
// its occurrences. Built in O(n).
type Repeats struct {
	sa, rank []int32
	nodes    []node
	leaf     []int32 // deepest node above each suffix-array slot
	order    []int32 // nodes children first (the order the traversal closes them)
	best     []int32 // deepest maximal node at or above each node, -1 if none
	lcp      []int32
	lce      *rangeMin // over lcp, built by the first call of Runs
}

type node struct {
	lcp, lb, rb int32 // repeat length and suffix-array interval [lb, rb]
	parent      int32
	left        int32 // the one symbol before every occurrence, or diverse
}

const (
	leftNone    = -2 // no occurrence seen yet
	leftDiverse = -1 // occurrences preceded by different symbols
)

// NewRepeats builds the repeat tree of s (symbols in [0, k)). unique
// reports symbols that are separators: each occurs once, so no repeat
// crosses one, and an occurrence preceded by one is left-diverse.
func NewRepeats(s []int32, k int, unique func(int32) bool) *Repeats {
	r := &Repeats{}
	r.fill(s, k, unique, nil)
	return r
}

// Scratch holds the memory of repeat trees built one after another, so
// that a worker that builds a tree a rank of a large trace clears and
// maps its arrays once rather than once a rank (fresh memory cost the
// pattern analysis of 28 M calls 2 of its 20 s). Its zero value is ready.
type Scratch struct {
	ints  []int32 // the block being handed out, from ni
	flags []bool  // and from nb
	ni    int
	nb    int
	r     Repeats
}

// Repeats builds the repeat tree of s as NewRepeats does, in sc's memory:
// the tree, and the slices its methods return, are valid until sc's next
// tree. A nil sc builds it in memory of its own (NewRepeats).
func (sc *Scratch) Repeats(s []int32, k int, unique func(int32) bool) *Repeats {
	if sc == nil {
		return NewRepeats(s, k, unique)
	}
	sc.ni, sc.nb = 0, 0
	sc.r = Repeats{nodes: sc.r.nodes[:0], order: sc.r.order[:0]}
	sc.r.fill(s, k, unique, sc)
	return &sc.r
}

// int32s returns n zeros from sc's memory (take), or made where sc is
// nil.
func (sc *Scratch) int32s(n int) []int32 {
	if sc == nil {
		return make([]int32, n)
	}
	return take(&sc.ints, &sc.ni, n)
}

// bools is int32s for booleans.
func (sc *Scratch) bools(n int) []bool {
	if sc == nil {
		return make([]bool, n)
	}
	return take(&sc.flags, &sc.nb, n)
}

// take returns n zeros of *block from *used on, or of a new block twice
// as large where it has not room (the next tree finds it large enough).
func take[T any](block *[]T, used *int, n int) []T {
	if *used+n > len(*block) {
		*block, *used = make([]T, max(2*len(*block), n, 1<<12)), 0
	}
	b := (*block)[*used : *used+n : *used+n]
	*used += n
	clear(b)
	return b
}

// fill builds r, an empty tree (its nodes' and order's room kept), for
// s, its arrays taken from sc.
func (r *Repeats) fill(s []int32, k int, unique func(int32) bool, sc *Scratch) {
	n := len(s)
	r.sa = array(s, k, sc)
	if n == 0 {
		return
	}
	lcp := lcpOf(s, r.sa, sc)
	r.lcp = lcp
	r.rank = sc.int32s(n)
	for i, p := range r.sa {
		r.rank[p] = int32(i)
	}
	r.build(lcp, sc)
	r.markLeft(s, unique)
	r.best = sc.int32s(len(r.nodes))
	for j := len(r.order) - 1; j >= 0; j-- { // parents before children
		i := r.order[j]
		v := &r.nodes[i]
		switch {
		case v.lcp > 0 && v.left == leftDiverse:
			r.best[i] = i
		case v.parent >= 0:
			r.best[i] = r.best[v.parent]
		default:
			r.best[i] = -1
		}
	}
}

// build makes the LCP-interval tree with the bottom-up stack traversal
// (Abouelhoda, Kurtz and Ohlebusch 2004) and records each slot's deepest
// enclosing interval.
func (r *Repeats) build(lcp []int32, sc *Scratch) {
	n := len(lcp)
	// A tree of n leaves has fewer than n internal nodes; periodic
	// sequences come close.
	if cap(r.nodes) < n {
		r.nodes = make([]node, 0, n)
	}
	if cap(r.order) < n {
		r.order = make([]int32, 0, n)
	}
	r.nodes = append(r.nodes[:0], node{lcp: 0, lb: 0, parent: -1, left: leftNone})
	r.order = r.order[:0]
	stack := []int32{0}
	after := sc.int32s(n + 1) // top of stack after boundary k
	after[0] = 0
	for k := 1; k <= n; k++ {
		l := int32(0)
		if k < n {
			l = lcp[k]
		}
		lb := int32(k - 1)
		last := int32(-1)
		for l < r.nodes[stack[len(stack)-1]].lcp {
			top := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			r.nodes[top].rb = int32(k - 1)
			lb = r.nodes[top].lb
			last = top
			r.order = append(r.order, top)
			if next := stack[len(stack)-1]; l <= r.nodes[next].lcp {
				r.nodes[top].parent = next
			}
		}
		if l > r.nodes[stack[len(stack)-1]].lcp {
			id := int32(len(r.nodes))
			r.nodes = append(r.nodes, node{lcp: l, lb: lb, parent: stack[len(stack)-1], left: leftNone})
			if last >= 0 {
				r.nodes[last].parent = id
			}
			stack = append(stack, id)
		}
		after[k] = stack[len(stack)-1]
	}
	r.nodes[0].rb = int32(n - 1)
	r.order = append(r.order, 0)
	r.leaf = sc.int32s(n)
	for k := 0; k < n; k++ {
		a, b := after[k], after[min(k+1, n)]
		if k == 0 || r.nodes[b].lcp > r.nodes[a].lcp {
			a = b
		}
		r.leaf[k] = a
	}
}

// markLeft computes each node's left symbol from its leaves, children
// before parents.
func (r *Repeats) markLeft(s []int32, unique func(int32) bool) {
	for k, p := range r.sa {
		c := int32(leftDiverse)
		if p > 0 && (unique == nil || !unique(s[p-1])) {
			c = s[p-1]
		}
		merge(&r.nodes[r.leaf[k]].left, c)
	}
	for _, i := range r.order {
		if p := r.nodes[i].parent; p >= 0 {
			merge(&r.nodes[p].left, r.nodes[i].left)
		}
	}
}

func merge(dst *int32, c int32) {
	switch {
	case *dst == leftNone:
		*dst = c
	case *dst != c:
		*dst = leftDiverse
	}
}

// Longest returns the length of the longest maximal repeat that starts at
// position i and its number of occurrences (possibly overlapping); 0, 0 if
// no maximal repeat starts at i.
func (r *Repeats) Longest(i int) (length, occurrences int) {
	b := r.best[r.leaf[r.rank[i]]]
	if b < 0 {
		return 0, 0
	}
	v := r.nodes[b]
	return int(v.lcp), int(v.rb - v.lb + 1)
}

// Each calls fn for every maximal repeat with its length and its
// occurrences' starting positions (in suffix order; fn must not keep the
// slice).
func (r *Repeats) Each(fn func(length int, positions []int32)) {
	for i, v := range r.nodes {
		if r.best[i] == int32(i) {
			fn(int(v.lcp), r.sa[v.lb:v.rb+1])
		}
	}
}
