package sim

import (
	"testing"

	"kairos/trace"
)

// TestStarAlgorithmsPairUp: in every algorithm of algorithms_star.go,
// on every size it accepts up to 20 members and for every root, each
// message a member sends another is one that member receives.
func TestStarAlgorithmsPairUp(t *testing.T) {
	pow2 := func(n int32) bool { return n&(n-1) == 0 }
	mesh2 := func(n int32) bool { _, _, ok := meshSides2D(n); return ok }
	mesh3 := func(n int32) bool { _, _, ok := meshSides3D(n); return ok }
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
				all := make([][][]collOp, n)
				for me := range n {
					c := &collCall{n: n, me: me, root: root, e: e, ssize: 8, rsize: 8}
					for p := 0; ; p++ {
						ops, ok := a.run(c, p, nil)
						if !ok {
							break
						}
						all[me] = append(all[me], ops)
					}
				}
				if err := pairUp(all, false); err != nil {
					t.Errorf("%s, %d members, root %d: %v", a.name, n, root, err)
				}
			}
		}
	}
}
