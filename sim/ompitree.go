package sim

// ompiTree is one member's view of a tree of Open MPI's tuned collectives
// (SimGrid's ompi_coll_tree_t): its parent (-1 at the root) and its
// children, in the order the algorithms address them. Ranks are in the
// communicator.
type ompiTree struct {
	prev int32
	next []int32
}

// pown is fanout to the power num (0 for a negative num).
func pown(fanout, num int32) int32 {
	if num < 0 {
		return 0
	}
	p := int32(1)
	for range num {
		p *= fanout
	}
	return p
}

// ompiKaryTree is Open MPI's k-ary tree (ompi_coll_tuned_topo_build_tree)
// of n members rooted at root, seen from me: levels fill breadth-first in
// rank order relative to the root, and a member's children are spaced by
// the width of its level.
func ompiKaryTree(fanout, n, me, root int32) ompiTree {
	t := ompiTree{prev: -1}
	if n < 2 {
		return t
	}
	shifted := me - root
	if shifted < 0 {
		shifted += n
	}
	level, num := int32(0), int32(0)
	for num <= shifted {
		num += pown(fanout, level)
		level++
	}
	level--
	delta := pown(fanout, level)
	for i := int32(0); i < fanout; i++ {
		child := shifted + delta*(i+1)
		if child >= n {
			break
		}
		t.next = append(t.next, (child+root)%n)
	}
	slimit := int32(0) // members on the levels above me
	if fanout > 1 {
		slimit = (pown(fanout, level) - 1) / (fanout - 1)
	}
	if shifted == 0 {
		return t // Open MPI makes the root its own parent
	}
	parent := shifted
	if parent < fanout {
		parent = 0
	} else {
		for parent >= slimit {
			parent -= delta / fanout
		}
	}
	t.prev = (parent + root) % n
	return t
}

// ompiInOrderBintree is Open MPI's in-order binary tree
// (ompi_coll_tuned_topo_build_in_order_bintree), rooted at the last
// member whatever the collective's root: each subtree holds a contiguous
// range of ranks, its root the highest, its left child's range above the
// right child's.
func ompiInOrderBintree(n, me int32) ompiTree {
	t := ompiTree{prev: -1}
	size, myrank, parent, delta := n, me, n-1, int32(0)
	for {
		rightsize := size >> 1
		lchild, rchild := int32(-1), int32(-1)
		if size-1 > 0 {
			lchild = parent - 1
			if lchild > 0 {
				rchild = rightsize - 1
			}
		}
		if myrank == parent {
			if lchild >= 0 {
				t.next = append(t.next, lchild+delta)
			}
			if rchild >= 0 {
				t.next = append(t.next, rchild+delta)
			}
			return t
		}
		if myrank > rchild {
			if myrank == lchild {
				t.prev = parent + delta
			}
			size = size - rightsize - 1
			delta += rightsize
			myrank -= rightsize
			parent = size - 1
		} else {
			if myrank == rchild {
				t.prev = parent + delta
			}
			size = rightsize
			parent = rchild
		}
	}
}

// ompiBinomialTree is Open MPI's binomial tree
// (ompi_coll_tuned_topo_build_bmtree) rooted at root: a member's children
// are its relative rank with each higher bit set in turn, nearest first.
// The root is its own parent there; here its prev is -1.
func ompiBinomialTree(n, me, root int32) ompiTree {
	t := ompiTree{prev: -1}
	index := me - root
	if index < 0 {
		index += n
	}
	mask := int32(1)
	for mask <= index {
		mask <<= 1
	}
	if me != root {
		remote := (index ^ (mask >> 1)) + root
		if remote >= n {
			remote -= n
		}
		t.prev = remote
	}
	for ; mask < n; mask <<= 1 {
		remote := index ^ mask
		if remote >= n {
			break
		}
		remote += root
		if remote >= n {
			remote -= n
		}
		t.next = append(t.next, remote)
	}
	return t
}

// ompiChain is Open MPI's set of chains (ompi_coll_tuned_topo_build_chain):
// the root heads fanout chains of consecutive ranks, the first
// (n-1)%fanout of them one member longer.
func ompiChain(fanout, n, me, root int32) ompiTree {
	t := ompiTree{prev: -1}
	fanout = max(1, min(fanout, 32))
	if n-1 < fanout {
		fanout = n - 1
	}
	srank := me - root
	if srank < 0 {
		srank += n
	}
	switch fanout {
	case 0: // a single member
		return t
	case 1:
		if srank != 0 {
			t.prev = (srank - 1 + root) % n
		}
		if srank+1 < n {
			t.next = append(t.next, (srank+1+root)%n)
		}
		return t
	}
	maxLen := (n - 1) / fanout
	mark := fanout + 1
	if (n-1)%fanout != 0 {
		maxLen++
		mark = (n - 1) % fanout
	}
	if me == root {
		next := (root + 1) % n
		t.next = append(t.next, next)
		for i := int32(1); i < fanout; i++ {
			next += maxLen
			if i > mark {
				next--
			}
			next %= n
			t.next = append(t.next, next)
		}
		return t
	}
	var head, length int32
	if srank-1 < mark*maxLen {
		column := (srank - 1) / maxLen
		head, length = 1+column*maxLen, maxLen
	} else {
		column := mark + (srank-1-mark*maxLen)/(maxLen-1)
		head, length = mark*maxLen+1+(column-mark)*(maxLen-1), maxLen-1
	}
	prev := srank - 1
	if srank == head {
		prev = 0
	}
	t.prev = (prev + root) % n
	if srank != head+length-1 && srank+1 < n {
		t.next = append(t.next, (srank+1+root)%n)
	}
	return t
}
