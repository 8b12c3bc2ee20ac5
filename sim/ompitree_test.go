package sim

import (
	"fmt"
	"slices"
	"testing"
)

// TestOmpiTreesAreTrees builds every member's view of Open MPI's trees and
// checks that the views agree: each member but the root has one parent,
// which lists it among its children, and every member is reached from the
// root.
func TestOmpiTreesAreTrees(t *testing.T) {
	builders := map[string]func(n, me, root int32) ompiTree{
		"binary":   func(n, me, root int32) ompiTree { return ompiKaryTree(2, n, me, root) },
		"4-ary":    func(n, me, root int32) ompiTree { return ompiKaryTree(4, n, me, root) },
		"binomial": ompiBinomialTree,
		"chain1":   func(n, me, root int32) ompiTree { return ompiChain(1, n, me, root) },
		"chain4":   func(n, me, root int32) ompiTree { return ompiChain(4, n, me, root) },
		"in-order": func(n, me, _ int32) ompiTree { return ompiInOrderBintree(n, me) },
	}
	for name, build := range builders {
		for n := int32(1); n <= 40; n++ {
			for _, root := range []int32{0, n / 2, n - 1} {
				if name == "in-order" {
					root = n - 1 // its root is always the last member
				}
				if err := checkTree(n, root, func(me int32) ompiTree { return build(n, me, root) }); err != nil {
					t.Errorf("%s tree of %d rooted at %d: %v", name, n, root, err)
				}
			}
		}
	}
}

func checkTree(n, root int32, view func(me int32) ompiTree) error {
	trees := make([]ompiTree, n)
	for me := range n {
		trees[me] = view(me)
	}
	if trees[root].prev != -1 {
		return fmt.Errorf("the root has parent %d", trees[root].prev)
	}
	for me, tr := range trees {
		if int32(me) != root && (tr.prev < 0 || tr.prev >= n || !slices.Contains(trees[tr.prev].next, int32(me))) {
			return fmt.Errorf("member %d: parent %d does not list it", me, tr.prev)
		}
	}
	seen := make([]bool, n)
	stack := []int32{root}
	for len(stack) > 0 {
		m := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[m] {
			return fmt.Errorf("member %d reached twice", m)
		}
		seen[m] = true
		stack = append(stack, trees[m].next...)
	}
	if i := slices.Index(seen, false); i >= 0 {
		return fmt.Errorf("member %d not reached from the root", i)
	}
	return nil
}

// TestOmpiChainShape checks Open MPI's chains on a case worked by hand:
// 10 members, 4 chains from root 2: (9 members) / 4 gives chains of 3, 2,
// 2, 2 relative ranks 1-3, 4-5, 6-7, 8-9.
func TestOmpiChainShape(t *testing.T) {
	root := int32(2)
	if got := ompiChain(4, 10, root, root).next; !slices.Equal(got, []int32{3, 6, 8, 0}) {
		t.Errorf("root's chain heads %v, want [3 6 8 0]", got)
	}
	for _, c := range []struct{ me, prev, next int32 }{{3, 2, 4}, {5, 4, -1}, {6, 2, 7}, {7, 6, -1}, {1, 0, -1}} {
		tr := ompiChain(4, 10, c.me, root)
		next := int32(-1)
		if len(tr.next) > 0 {
			next = tr.next[0]
		}
		if tr.prev != c.prev || next != c.next {
			t.Errorf("member %d: prev %d next %d, want %d %d", c.me, tr.prev, next, c.prev, c.next)
		}
	}
}
