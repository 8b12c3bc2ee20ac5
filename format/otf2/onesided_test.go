package otf2

import (
	"strings"
	"testing"

	"kairos/check"
	"kairos/trace"
)

// TestScorePOneSided reads the one-sided and MPI-IO calls of a 2-rank
// archive written as Score-P 8 records them (testdata/rmawriter.c): every
// call is its event, with its window or file, target, bytes, lock type,
// group and request, and the trace checks out.
func TestScorePOneSided(t *testing.T) {
	s := oneSided(t)
	want := [2]string{
		"init; win_create handle=1; win_lock_all handle=1; put target=1 handle=1 send=8192; win_flush target=1 handle=1; " +
			"get target=1 handle=1 recv=1024 req=2; wait req=2; get_accumulate target=1 handle=1 send=8 recv=8; " +
			"win_flush_all handle=1; win_unlock_all handle=1; win_lock target=1 handle=1 exclusive; " +
			"accumulate target=1 handle=1 send=4096; win_unlock target=1 handle=1; win_fence handle=1; " +
			"get target=1 handle=1 recv=2048; win_fence handle=1; win_start handle=1 group=1; put target=1 handle=1 send=512; " +
			"win_complete handle=1; win_free handle=1; file_open handle=1; file_write handle=1 collective send=4096; " +
			"file_read handle=1 nonblocking recv=2048 req=8; file_wait handle=1 req=8; file handle=0; file_close handle=1; finalize",
		"win_post handle=1 group=2; win_wait handle=1; win_free handle=1",
	}
	var got [2][]string
	err := trace.ForEach(s, func(r, _ int, e *trace.Event) error {
		got[r] = append(got[r], e.String())
		if e.Kind.IsWindow() && e.Comm != trace.WorldComm {
			t.Errorf("rank %d: %v on communicator %d, want the world", r, e, e.Comm)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if g := strings.Join(got[0], "; "); g != want[0] {
		t.Errorf("rank 0:\n got %s\nwant %s", g, want[0])
	}
	if g := strings.Join(got[1], "; "); !strings.Contains(g, want[1]) {
		t.Errorf("rank 1:\n got %s\nwant it to hold %s", g, want[1])
	}
	if members := s.Meta().Members(1, 2); len(members) != 1 || members[0] != 1 {
		t.Errorf("group 1 (rank 0's start) has members %v, want [1]", members)
	}
	rep, err := check.Check(s, check.Options{Protocol: check.SimGrid})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || rep.Warnings > 0 {
		t.Errorf("check: %v", rep.Problems)
	}
}
