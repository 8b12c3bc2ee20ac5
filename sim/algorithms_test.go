package sim

import (
	"fmt"
	"testing"
)

// TestRDBSchedules: for every size up to 40 members, the recursive
// doubling of allgather__rdb (count elements a member) and of
// alltoall__rdb (its whole send buffer, n blocks of count) pairs every
// blocking send with a blocking receive of the same two members, in
// order, every sendrecv with its partner's, and leaves every member
// holding n times what it started with.
func TestRDBSchedules(t *testing.T) {
	const count, size = 3, 4
	for _, algo := range []string{"allgather", "alltoall"} {
		for n := int32(1); n <= 40; n++ {
			start := int64(count)
			if algo == "alltoall" {
				start *= int64(n)
			}
			if err := checkRDB(evenRDB(n, start, size, size, size, noRecvSizes), start*size); err != nil {
				t.Fatalf("%s rdb, n=%d: %v", algo, n, err)
			}
		}
	}
}

// noRecvSizes sizes no receive of a recursive doubling.
func noRecvSizes(int32, int32, int, bool) int64 { return 0 }

// checkRDB checks a recursive doubling schedule whose members start with
// start bytes each (see TestRDBSchedules).
func checkRDB(steps schedule, start int64) error {
	n := int32(len(steps))
	// pending[a][b]: the byte counts a sent b that b has not received.
	pending := map[[2]int32][]int64{}
	held := make([]int64, n)
	for r := range held {
		held[r] = start
	}
	for r, ops := range steps {
		for _, op := range flat(ops) {
			if op.peer < 0 || op.peer >= n || op.peer == int32(r) {
				return fmt.Errorf("rank %d exchanges with %d", r, op.peer)
			}
			switch {
			case op.sr:
				held[r] += peerBytes(steps, op.peer, int32(r))
			case op.send:
				k := [2]int32{int32(r), op.peer}
				pending[k] = append(pending[k], op.bytes)
			}
		}
	}
	for r, ops := range steps {
		for _, op := range flat(ops) {
			if op.send || op.sr {
				continue
			}
			k := [2]int32{op.peer, int32(r)}
			if len(pending[k]) == 0 {
				return fmt.Errorf("rank %d receives from %d, which sends it nothing more", r, op.peer)
			}
			held[r] += pending[k][0]
			pending[k] = pending[k][1:]
		}
	}
	for k, v := range pending {
		if len(v) > 0 {
			return fmt.Errorf("%d sends from %d to %d never received", len(v), k[0], k[1])
		}
	}
	for r, h := range held {
		if h != int64(n)*start {
			return fmt.Errorf("rank %d ends with %d bytes, want %d", r, h, int64(n)*start)
		}
	}
	return nil
}

// peerBytes is what peer sends r in their sendrecv (in recursive
// doubling, two members exchange at most once).
func peerBytes(steps schedule, peer, r int32) int64 {
	for _, op := range flat(steps[peer]) {
		if op.sr && op.peer == r {
			return op.bytes
		}
	}
	return -1 << 40
}

// TestScatterRDBAllgatherSchedule: for every size up to 40 members and
// buffers that divide unevenly, the broadcast's scatter pairs every
// blocking send with a receive, and its recursive doubling leaves every
// member with the whole buffer (SimGrid asserts it).
func TestScatterRDBAllgatherSchedule(t *testing.T) {
	for n := int32(1); n <= 40; n++ {
		for _, nbytes := range []int64{1, 97, 1000, 65536} {
			steps := scatterRDBAllgatherSchedule(n, nbytes)
			for rel, ops := range steps {
				for _, op := range flat(ops) {
					if op.peer < 0 || op.peer >= n || op.peer == int32(rel) {
						t.Fatalf("n=%d bytes=%d: member %d exchanges with %d", n, nbytes, rel, op.peer)
					}
				}
			}
			piece := (nbytes + int64(n) - 1) / int64(n)
			curr := make([]int64, n)
			for rel := range curr {
				curr[rel] = max(0, min(piece, nbytes-int64(rel)*piece))
			}
			recursiveDoubling(make(schedule, n), curr, 1, 1, 1, noRecvSizes)
			for rel, c := range curr {
				if n > 1 && c != nbytes {
					t.Errorf("n=%d bytes=%d: member %d ends with %d bytes", n, nbytes, rel, c)
				}
			}
		}
	}
}

// flat lists a member's operations, phase after phase.
func flat(phases [][]collOp) []collOp {
	var ops []collOp
	for _, ph := range phases {
		ops = append(ops, ph...)
	}
	return ops
}

// TestScheduleOfChecksVector: a schedule cached for one count vector is
// not reused for another under the same key (as a hash collision gives).
func TestScheduleOfChecksVector(t *testing.T) {
	c := &collCall{schedules: schedules{}}
	key := scheduleKey{algo: "test", n: 1}
	builds := 0
	build := func() schedule { builds++; return make(schedule, 1) }
	for _, vec := range [][]int64{{1, 2}, {1, 2}, {2, 1}, nil, nil} {
		c.useSchedule(0, key, vec, build)
	}
	if builds != 3 {
		t.Errorf("%d schedules built for 3 distinct vectors", builds)
	}
}
