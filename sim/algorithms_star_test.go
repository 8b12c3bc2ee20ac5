package sim

import (
	"fmt"
	"testing"

	"kairos/trace"
)

// TestMeshLayouts: the mesh allgathers lay ranks out as SimGrid's
// is_2dmesh and is_3dmesh do, and have no layout where SimGrid throws.
func TestMeshLayouts(t *testing.T) {
	for _, c := range []struct {
		n      int32
		x2, y2 int32 // 0: no 2-D mesh
		x3, z3 int32 // 0: no 3-D mesh
	}{
		{1, 0, 0, 0, 0}, {2, 1, 2, 0, 0}, {3, 1, 3, 1, 3}, {4, 2, 2, 1, 4},
		{5, 0, 0, 1, 5}, {6, 2, 3, 1, 6}, {7, 0, 0, 1, 7}, {8, 2, 4, 2, 2},
		{9, 3, 3, 3, 1}, {10, 2, 5, 0, 0}, {11, 0, 0, 0, 0}, {12, 3, 4, 2, 3},
		{16, 4, 4, 2, 4}, {27, 3, 9, 3, 3}, {64, 8, 8, 4, 4},
	} {
		x, y, ok := mesh2D(c.n)
		if ok != (c.x2 > 0) || x != c.x2 || y != c.y2 {
			t.Errorf("mesh2D(%d) = %d, %d, %v; want %d, %d", c.n, x, y, ok, c.x2, c.y2)
		}
		x, z, ok := mesh3D(c.n)
		if ok != (c.x3 > 0) || x != c.x3 || z != c.z3 {
			t.Errorf("mesh3D(%d) = %d, %d, %v; want %d, %d", c.n, x, z, ok, c.x3, c.z3)
		}
	}
}

// TestStarAlgorithmsPairUp: in every algorithm of algorithms_star.go,
// on every size it accepts up to 20 members and for every root, each
// message a member sends another is one that member receives.
func TestStarAlgorithmsPairUp(t *testing.T) {
	pow2 := func(n int32) bool { return n&(n-1) == 0 }
	mesh2 := func(n int32) bool { _, _, ok := mesh2D(n); return ok }
	mesh3 := func(n int32) bool { _, _, ok := mesh3D(n); return ok }
	any := func(int32) bool { return true }
	for _, a := range []struct {
		name   string
		run    algorithm
		kind   trace.Kind
		accept func(int32) bool
	}{
		{"bcast flattree_pipeline", bcastFlattreePipeline, trace.Bcast, any},
		{"reduce flat_tree", reduceFlatTree, trace.Reduce, any},
		{"reduce mvapich2_knomial", reduceMvapich2Knomial, trace.Reduce, any},
		{"barrier mvapich2_pair", barrierMvapich2Pair, trace.Barrier, any},
		{"allgather rhv", allgatherRHV, trace.Allgather, pow2},
		{"allgather 2dmesh", allgather2DMesh, trace.Allgather, mesh2},
		{"allgather 3dmesh", allgather3DMesh, trace.Allgather, mesh3},
		{"reduce_scatter mpich_noncomm", reduceScatterNoncomm, trace.ReduceScatter, pow2},
		{"allreduce mvapich2_rs", allreduceMvapich2RS, trace.Allreduce, any},
	} {
		for n := int32(1); n <= 20; n++ {
			if !a.accept(n) {
				continue
			}
			for root := int32(0); root < n; root++ {
				e := &trace.Event{Kind: a.kind, SendBytes: 80000, RecvBytes: 80000, RecvCounts: make([]int64, n)}
				for i := range e.RecvCounts {
					e.RecvCounts[i] = 800
				}
				if err := pairsUp(n, func(me int32) *collCall {
					return &collCall{n: n, me: me, root: root, e: e, ssize: 8, rsize: 8}
				}, a.run); err != nil {
					t.Errorf("%s, %d members, root %d: %v", a.name, n, root, err)
				}
			}
		}
	}
}

// pairsUp runs every member's phases of run and checks that the messages
// each ordered pair of members sends and receives are as many.
func pairsUp(n int32, call func(me int32) *collCall, run algorithm) error {
	sent := map[[2]int32]int{}
	for me := range n {
		c := call(me)
		for p := 0; ; p++ {
			if p > 100000 {
				return fmt.Errorf("member %d: no end to its phases", me)
			}
			ops, ok := run(c, p, nil)
			if !ok {
				break
			}
			for _, op := range ops {
				if op.wait != waitNone {
					continue
				}
				if op.peer < 0 || op.peer >= n || op.peer == me {
					return fmt.Errorf("member %d exchanges with %d", me, op.peer)
				}
				if op.send || op.sr {
					sent[[2]int32{me, op.peer}]++
				}
				if !op.send {
					sent[[2]int32{op.peer, me}]--
				}
			}
		}
	}
	for k, v := range sent {
		if v != 0 {
			return fmt.Errorf("%d to %d: %d more sends than receives", k[0], k[1], v)
		}
	}
	return nil
}
