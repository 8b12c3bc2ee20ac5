package sim

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"kairos/trace"
)

// TestMeshSides: the 2D and 3D mesh splits are SimGrid's (the first
// divisor from the square or cube root up, none for some sizes), exact
// cube roots included.
func TestMeshSides(t *testing.T) {
	for _, c := range []struct {
		n        int32
		x2, y2   int32
		x3, z3   int32
		ok2, ok3 bool // whether there is a 2D, a 3D split
	}{
		{n: 1},
		{n: 2, x2: 1, y2: 2, ok2: true},
		{n: 3, x2: 1, y2: 3, ok2: true, x3: 1, z3: 3, ok3: true},
		{n: 4, x2: 2, y2: 2, ok2: true, x3: 1, z3: 4, ok3: true},
		{n: 5, x3: 1, z3: 5, ok3: true},
		{n: 6, x2: 2, y2: 3, ok2: true, x3: 1, z3: 6, ok3: true},
		{n: 7, x3: 1, z3: 7, ok3: true},
		{n: 8, x2: 2, y2: 4, ok2: true, x3: 2, z3: 2, ok3: true},
		{n: 9, x2: 3, y2: 3, ok2: true, x3: 3, z3: 1, ok3: true},
		{n: 10, x2: 2, y2: 5, ok2: true},
		{n: 11},
		{n: 12, x2: 3, y2: 4, ok2: true, x3: 2, z3: 3, ok3: true},
		{n: 27, x2: 3, y2: 9, ok2: true, x3: 3, z3: 3, ok3: true},
		{n: 64, x2: 8, y2: 8, ok2: true, x3: 4, z3: 4, ok3: true},
	} {
		x, y, ok := meshSides2D(c.n)
		if x != c.x2 || y != c.y2 || ok != c.ok2 {
			t.Errorf("2D split of %d: %d x %d (%v), want %d x %d (%v)", c.n, x, y, ok, c.x2, c.y2, c.ok2)
		}
		x, z, ok := meshSides3D(c.n)
		if x != c.x3 || z != c.z3 || ok != c.ok3 {
			t.Errorf("3D split of %d: %d² x %d (%v), want %d² x %d (%v)", c.n, x, z, ok, c.x3, c.z3, c.ok3)
		}
	}
}

// TestAlltoallMessagesPairUp runs the new alltoall algorithms for every
// member of 1 to 16 (the pair ones on powers of two) and checks that
// every message one member sends another is received by it, and that
// only mvapich2_scatter_dest sends a member messages of its own.
func TestAlltoallMessagesPairUp(t *testing.T) {
	algos := map[string]algorithm{
		"pair_light_barrier": pairBarriers.light, "ring_light_barrier": ringBarriers.light,
		"pairv_light_barrier": pairvBarriers.light, "ringv_light_barrier": ringvBarriers.light,
		"rdb": alltoallRDB, "2dmesh": phased(alltoall2DMesh), "3dmesh": phased(alltoall3DMesh),
		"mvapich2_scatter_dest": alltoallScatterDest,
	}
	for name, a := range algos {
		for n := int32(1); n <= 16; n++ {
			if strings.HasPrefix(name, "pair") && n&(n-1) != 0 {
				continue
			}
			if err := pairUp(memberPhases(a, n), name == "mvapich2_scatter_dest"); err != nil {
				t.Errorf("%s on %d: %v", name, n, err)
			}
		}
	}
}

// memberPhases returns every member's phases of a, for an alltoall (or
// alltoallv) of 8 one-byte elements to every member.
func memberPhases(a algorithm, n int32) [][][]collOp {
	e := &trace.Event{SendBytes: 8, RecvBytes: 8, SendCounts: slices.Repeat([]int64{8}, int(n))}
	all := make([][][]collOp, n)
	scheds := schedules{}
	for me := range n {
		c := &collCall{n: n, me: me, e: e, ssize: 1, rsize: 1, schedules: scheds}
		for p := 0; ; p++ {
			ops, ok := a(c, p, nil)
			if !ok {
				break
			}
			all[me] = append(all[me], ops)
		}
	}
	return all
}

// pairUp checks that every member receives as many messages from each
// other as it sends it, to itself only if self.
func pairUp(all [][][]collOp, self bool) error {
	n := int32(len(all))
	sent := map[[2]int32]int{} // sends minus receives, by (from, to)
	for me, phases := range all {
		for _, op := range flat(phases) {
			if op.wait != waitNone {
				continue
			}
			if op.peer < 0 || op.peer >= n || (op.peer == int32(me) && !self) {
				return fmt.Errorf("member %d exchanges with %d", me, op.peer)
			}
			if op.send || op.sr {
				sent[[2]int32{int32(me), op.peer}]++
			}
			if !op.send {
				sent[[2]int32{op.peer, int32(me)}]--
			}
		}
	}
	for k, v := range sent {
		if v != 0 {
			return fmt.Errorf("member %d sends %d messages more to %d than it receives", k[0], v, k[1])
		}
	}
	return nil
}

// TestAlltoallLightBarrierPhases: rank 0's phases of the light-barrier
// variants on 4 ranks, each a sendrecv: the exchanges of 8 bytes (the
// call's buffers, checked as SMPI checks them), and between them one
// byte with the next exchange's peers (for ring, sent to its source and
// received from its destination).
func TestAlltoallLightBarrierPhases(t *testing.T) {
	sr := func(to, from int32, bytes int64) []collOp {
		typed := bytes == 8
		return []collOp{{send: true, peer: to, bytes: bytes, typed: typed}, {peer: from, bytes: bytes, typed: typed}}
	}
	for _, c := range []struct {
		name string
		a    algorithm
		want [][]collOp
	}{
		{"pair", pairBarriers.light, [][]collOp{sr(1, 1, 8), sr(2, 2, 1), sr(2, 2, 8), sr(3, 3, 1), sr(3, 3, 8)}},
		{"ring", ringBarriers.light, [][]collOp{sr(1, 3, 8), sr(2, 2, 1), sr(2, 2, 8), sr(1, 3, 1), sr(3, 1, 8)}},
	} {
		if got := memberPhases(c.a, 4)[0]; !slices.EqualFunc(got, c.want, slices.Equal) {
			t.Errorf("%s_light_barrier, rank 0 of 4: %v, want %v", c.name, got, c.want)
		}
	}
}

// TestAlltoallBarrierComposites: mpi_barrier runs the configured barrier
// before each of the n steps (step 0, the copy, included), one_barrier
// once before the n-1 exchanges.
func TestAlltoallBarrierComposites(t *testing.T) {
	c := &collCall{n: 4}
	subs := composites["alltoallv:ring_mpi_barrier"](c)
	if len(subs) != 8 {
		t.Fatalf("ring_mpi_barrier on 4: %d parts, want 8", len(subs))
	}
	for i, s := range subs {
		if barrier := i%2 == 0; barrier != (s.run == nil && s.kind == trace.Barrier) || !barrier && s.root != int32(i/2) {
			t.Errorf("ring_mpi_barrier part %d: %+v", i, s)
		}
	}
	subs = composites["alltoall:pair_one_barrier"](c)
	if len(subs) != 2 || subs[0].run != nil || subs[0].kind != trace.Barrier || subs[1].run == nil {
		t.Errorf("pair_one_barrier: %+v", subs)
	}
}
