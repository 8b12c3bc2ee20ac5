package cluster

import (
	"slices"
	"testing"

	"kairos/trace"
)

// TestMembersOwnCommunicators: a member replaying its head's collective on
// the head's own communicator (a duplicate of MPI_COMM_SELF, one a rank:
// PETSc's, SLEPc's) makes it on its own, the one of the same members
// moved by its offset; a communicator with no such twin is an error, as
// one the member is not in.
func TestMembersOwnCommunicators(t *testing.T) {
	meta := trace.NewMeta()
	for r := range int32(4) {
		meta.Comms = append(meta.Comms, trace.Comm{ID: uint32(r + 1), Members: []int32{r}})
	}
	meta.Comms = append(meta.Comms, trace.Comm{ID: 9, Members: []int32{0, 1}})
	for _, tc := range []struct {
		comm uint32
		want []int64 // each rank's communicator, -1 for an error
	}{
		{1, []int64{1, 2, 3, 4}},
		{trace.WorldComm, []int64{0, 0, 0, 0}},
		{9, []int64{9, 9, -1, -1}}, // {2, 3} and {3, 0} are no communicators of the trace
	} {
		reps := trace.New(1, meta)
		for _, c := range []uint32{tc.comm, trace.WorldComm, tc.comm, tc.comm} {
			e := trace.NewEvent(trace.Allreduce)
			e.Comm, e.SendBytes, e.RecvBytes = c, 8, 8
			reps.Ranks[0].Append(&e)
		}
		x, err := Expand(reps, 4, []Group{{Rep: 0, Members: []int32{0, 1, 2, 3}}})
		if err != nil {
			t.Fatal(err)
		}
		for r := range 4 {
			rd, err := x.OpenRank(r)
			if err != nil {
				t.Fatal(err)
			}
			// The communicators of the four calls, each looked up again
			// after another.
			var got, want []int64
			for rd.Next() {
				got = append(got, int64(rd.Event().Comm))
			}
			if tc.want[r] >= 0 {
				want = []int64{tc.want[r], 0, tc.want[r], tc.want[r]}
			}
			if !slices.Equal(got, want) || (want == nil) != (rd.Err() != nil) {
				t.Errorf("rank %d replaying rank 0's allreduces on %d: communicators %v (%v), want %v", r, tc.comm, got, rd.Err(), want)
			}
		}
	}
}
