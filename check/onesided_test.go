package check

import (
	"strings"
	"testing"

	"kairos/trace"
)

// One-sided and I/O event builders: window 1 on MPI_COMM_WORLD.

func win(k trace.Kind, target int32) trace.Event {
	return ev(k, func(e *trace.Event) { e.Handle, e.Partner = 1, target })
}

func put(target int32, n int64) trace.Event {
	return ev(trace.Put, func(e *trace.Event) { e.Handle, e.Partner, e.SendBytes = 1, target, n })
}

func rput(target int32, req uint64) trace.Event {
	e := put(target, 8)
	e.Request = req
	return e
}

func lock(target, typ int32) trace.Event {
	e := win(trace.WinLock, target)
	e.Tag = typ
	return e
}

// pscw is a post or start of window 1 naming group comm.
func pscw(k trace.Kind, comm uint32) trace.Event {
	return ev(k, func(e *trace.Event) { e.Handle, e.NewComm = 1, comm })
}

func fileEv(k trace.Kind, f func(*trace.Event)) trace.Event {
	return ev(k, func(e *trace.Event) {
		e.Handle = 7
		if f != nil {
			f(e)
		}
	})
}

// oneSidedTrace builds a trace of the ranks' events with communicators
// 1 = {0}, 2 = {1} (the groups of post and start).
func oneSidedTrace(ranks ...[]trace.Event) *trace.Trace {
	m := trace.NewMeta()
	m.Comms = []trace.Comm{{ID: 1, Members: []int32{0}}, {ID: 2, Members: []int32{1}}}
	tr := trace.New(len(ranks), m)
	for r, evs := range ranks {
		for i := range evs {
			tr.Ranks[r].Append(&evs[i])
		}
	}
	return tr
}

func both(evs ...trace.Event) [][]trace.Event { return [][]trace.Event{evs, evs} }

func TestOneSided(t *testing.T) {
	create, free, fence := win(trace.WinCreate, trace.NoRank), win(trace.WinFree, trace.NoRank), win(trace.WinFence, trace.NoRank)
	cases := []struct {
		name  string
		ranks [][]trace.Event
		want  []string // problems, in order ("" for none)
	}{
		{"lock, puts, flush, unlock", [][]trace.Event{
			{create, lock(1, trace.LockExclusive), put(1, 8192), win(trace.WinFlush, 1), put(1, 8192), win(trace.WinUnlock, 1), free},
			{create, free},
		}, nil},
		{"fence epochs", both(create, fence, put(0, 8), win(trace.Get, 1), fence, free), nil},
		{"lock_all, request-based puts", [][]trace.Event{
			{create, win(trace.WinLockAll, trace.NoRank), rput(1, 5), wait(5), win(trace.WinFlushAll, trace.NoRank), win(trace.WinUnlockAll, trace.NoRank), free},
			{create, free},
		}, nil},
		{"post, start, complete, wait", [][]trace.Event{
			{create, pscw(trace.WinStart, 2), put(1, 64), win(trace.WinComplete, trace.NoRank), free},
			{create, pscw(trace.WinPost, 1), win(trace.WinWait, trace.NoRank), free},
		}, nil},
		{"put outside any epoch", [][]trace.Event{{create, put(1, 8), free}, {create, free}},
			[]string{"rank 0 event 1: put to 1 on window 1 outside any access epoch to its target"}},
		{"request-based put in a fence epoch", both(create, fence, rput(0, 3), wait(3), fence, free),
			[]string{"rank 0 event 2: put to 0 on window 1 has a request but is not in a lock or lock_all epoch",
				"rank 1 event 2: put to 0 on window 1 has a request"}},
		{"unlock without lock", [][]trace.Event{{create, win(trace.WinUnlock, 1), free}, {create, free}},
			[]string{"rank 0 event 1: win_unlock of 1 on window 1, which this rank does not hold"}},
		{"lock twice", [][]trace.Event{{create, lock(1, trace.LockShared), lock(1, trace.LockShared), win(trace.WinUnlock, 1), free}, {create, free}},
			[]string{"rank 0 event 2: win_lock of 1 on window 1, which this rank already holds"}},
		{"freed with a lock held", [][]trace.Event{{create, lock(1, trace.LockExclusive), put(1, 8), free}, {create, free}},
			[]string{"rank 0 event 3: win_free of window 1 with an epoch still open ([lock of 1])"}},
		{"transfers after the last fence", both(create, fence, put(0, 8), free),
			[]string{"rank 0 event 3: win_free of window 1: 1 transfer(s) since the last fence, which no fence completes",
				"rank 1 event 3: win_free of window 1: 1 transfer(s)"}},
		{"fence inside a lock epoch", both(create, lock(0, trace.LockShared), fence, win(trace.WinUnlock, 0), free),
			[]string{"rank 0 event 2: win_fence on window 1 inside a lock or start/post epoch",
				"rank 1 event 2: win_fence on window 1 inside a lock"}},
		{"flush outside a lock epoch", both(create, fence, win(trace.WinFlush, 1), fence, free),
			[]string{"rank 0 event 2: win_flush on window 1 outside a passive-target (lock) epoch",
				"rank 1 event 2: win_flush on window 1 outside"}},
		{"start without its post", [][]trace.Event{
			{create, pscw(trace.WinStart, 2), put(1, 64), win(trace.WinComplete, trace.NoRank), free},
			{create, free},
		}, []string{"rank 0 event 1: win_start: rank 0 starts 1 access epoch(s) to rank 1, which posts 0",
			"rank 0 event 1: deadlock under simgrid: win_start waits for the win_post of ranks [1]",
			"rank 1 event 1: deadlock under simgrid: win_free (collective #1) waits for rank 0"}},
		{"window never created", [][]trace.Event{{put(1, 8)}, {}},
			[]string{"rank 0 event 0: put on window 1, which this rank has not created"}},
		{"window never freed, epoch open", [][]trace.Event{{create, lock(1, trace.LockShared)}, {create}},
			[]string{"rank 0 event 0: window 1 ends the trace with an epoch still open ([lock of 1])",
				"rank 1 event 0: warning: window 1 is never freed"}},
		{"fence entered by one rank only", [][]trace.Event{{create, fence, free}, {create, free}},
			[]string{"rank 0 event 1: win_fence is collective #1 on communicator 0, but rank 1 entered win_free there",
				"rank 0 event 2: win_free (collective #2 on communicator 0) is never entered by rank 1",
				"rank 0 event 2: deadlock under simgrid: win_free (collective #2) waits for rank 1"}},
		{"collective and non-blocking I/O", both(fileEv(trace.FileOpen, nil),
			fileEv(trace.FileWrite, func(e *trace.Event) { e.SendBytes, e.Tag = 4096, trace.IOCollective }),
			fileEv(trace.FileRead, func(e *trace.Event) { e.RecvBytes, e.Tag, e.Request = 4096, trace.IONonBlocking, 9 }),
			fileEv(trace.FileWait, func(e *trace.Event) { e.Request = 9 }),
			fileEv(trace.File, nil),
			fileEv(trace.FileClose, nil)), nil},
		{"I/O on a closed file, request left", both(fileEv(trace.FileOpen, nil), fileEv(trace.FileClose, nil),
			fileEv(trace.FileWrite, func(e *trace.Event) { e.Tag, e.Request = trace.IONonBlocking, 4 })),
			[]string{"rank 0 event 2: file_write on file 7, which is not open",
				"rank 1 event 2: file_write on file 7, which is not open",
				"rank 0 event 2: warning: request 4 (file_write) is never completed by a wait",
				"rank 1 event 2: warning: request 4 (file_write)"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep, err := Check(oneSidedTrace(c.ranks...), Options{Protocol: SimGrid})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range rep.Problems {
				got = append(got, p.String())
			}
			if len(got) != len(c.want) {
				t.Fatalf("problems:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(c.want, "\n  "))
			}
			for i, w := range c.want {
				if !strings.HasPrefix(got[i], w) {
					t.Errorf("problem %d: %q, want %q...", i, got[i], w)
				}
			}
		})
	}
}
