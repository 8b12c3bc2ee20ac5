package dumpi

import (
	"slices"
	"testing"

	"kairos/check"
	"kairos/trace"
)

// TestOneSidedAndIOCalls: DUMPI's one-sided calls are one-sided events on
// their window (numbered alike on both ranks), with world-rank targets,
// lock types and post/start groups; a failed MPI_Win_test is MPI time
// (deferred), a successful one a win_wait; an MPI_File_open is an I/O
// event kept with its recorded time (TestFileIO has the others); the
// trace checks out.
func TestOneSidedAndIOCalls(t *testing.T) {
	const (
		typeByte = 2
		win, grp = 3, 8
	)
	ws := writers(2)
	for r, w := range ws {
		peer := 1 - r
		w.call(lInit, 1, []string{"prog"})
		w.call(lWinCreate, 64, 1, 0, commWorld, win)
		w.call(lWinFence, 0, win)
		w.call(lPut, 8, typeByte, peer, 0, 8, typeByte, win)
		w.call(lWinFence, 0, win)
		w.call(lWinLock, 2, 1, 0, win)
		w.call(lAccumulate, 32, typeByte, 1, 0, 32, typeByte, 1, win)
		w.call(lWinUnlock, 1, win)
		w.call(lCommGroup, commWorld, 7)
		w.call(lGroupIncl, 7, 1, []int32{int32(peer)}, grp)
		w.call(lWinPost, grp, 0, win)
		w.call(lWinStart, grp, 0, win)
		w.call(lGet, 16, typeByte, peer, 0, 16, typeByte, win)
		w.call(lWinComplete, win)
		w.call(lWinTest, win, 0)
		w.call(lWinTest, win, 1)
		w.call(lWinFree, win)
		w.call(lFileOpen, commWorld, "out.dat", 1, 0, 3)
		w.call(lFinalize)
	}
	src, err := Open(writeTrace(t, t.TempDir(), ws))
	if err != nil {
		t.Fatal(err)
	}
	want := []trace.Event{
		{Kind: trace.Init},
		{Kind: trace.WinCreate, SendBytes: 64},
		{Kind: trace.WinFence},
		{Kind: trace.Put, Partner: 1, SendBytes: 8},
		{Kind: trace.WinFence},
		{Kind: trace.WinLock, Partner: 1, Tag: trace.LockExclusive},
		{Kind: trace.Accumulate, Partner: 1, SendBytes: 32},
		{Kind: trace.WinUnlock, Partner: 1},
		{Kind: trace.Local}, {Kind: trace.Local}, // Comm_group, Group_incl
		{Kind: trace.WinPost, NewComm: 1},
		{Kind: trace.WinStart, NewComm: 1},
		{Kind: trace.Get, Partner: 1, RecvBytes: 16},
		{Kind: trace.WinComplete},
		{Kind: trace.Deferred},
		{Kind: trace.WinWait},
		{Kind: trace.WinFree},
		{Kind: trace.FileOpen},
		{Kind: trace.Finalize},
	}
	var got []trace.Event
	err = trace.ForEach(src, func(r, _ int, e *trace.Event) error {
		if r == 0 {
			got = append(got, e.Clone())
			if !e.HasTime || e.Duration() <= 0 {
				t.Errorf("%v has no duration", e)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d events, want %d: %v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		if w.Partner == 0 {
			w.Partner = trace.NoRank
		}
		if g.Kind != w.Kind || g.Partner != w.Partner || g.SendBytes != w.SendBytes || g.RecvBytes != w.RecvBytes ||
			g.Tag != w.Tag || g.NewComm != w.NewComm {
			t.Errorf("event %d: %v, want %v", i, &g, &w)
		}
		if g.Kind.IsWindow() && g.Kind != trace.Deferred && g.Handle != windowHandle(trace.WorldComm, 1) {
			t.Errorf("event %d: %v: window %d, want %d", i, &g, g.Handle, windowHandle(trace.WorldComm, 1))
		}
	}
	if m := src.Meta().Members(1, 2); !slices.Equal(m, []int32{1}) {
		t.Errorf("rank 0's post/start group has members %v, want [1]", m)
	}
	rep, err := check.Check(src, check.Options{})
	if err != nil || !rep.OK() {
		t.Errorf("check: %v %v", err, rep.Problems)
	}
}
