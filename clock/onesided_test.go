package clock

import (
	"math"
	"testing"

	"kairos/trace"
)

// rmaRepro is issue 45's program, untimed: rank 1 sleeps 0.2 s, both
// create a window, then each puts 8 KiB to the other and flushes, 200
// times, frees the window and meets the other in a barrier.
func rmaRepro() *trace.Trace {
	tr := trace.New(2, trace.NewMeta())
	ev := func(k trace.Kind, target int32, f func(*trace.Event)) *trace.Event {
		e := trace.NewEvent(k)
		e.Handle, e.Partner = 1, target
		if f != nil {
			f(&e)
		}
		return &e
	}
	for r := range int32(2) {
		rk := &tr.Ranks[r]
		rk.Append(ev(trace.Init, trace.NoRank, nil))
		if r == 1 {
			rk.Append(ev(trace.Sleep, trace.NoRank, func(e *trace.Event) { e.Compute = 0.2 }))
		}
		rk.Append(ev(trace.WinCreate, trace.NoRank, nil))
		rk.Append(ev(trace.WinLockAll, trace.NoRank, nil))
		for range 200 {
			rk.Append(ev(trace.Put, 1-r, func(e *trace.Event) { e.SendBytes = 8192 }))
			rk.Append(ev(trace.WinFlush, 1-r, nil))
		}
		rk.Append(ev(trace.WinUnlockAll, trace.NoRank, nil))
		rk.Append(ev(trace.WinFree, trace.NoRank, nil))
		rk.Append(ev(trace.Barrier, trace.NoRank, func(e *trace.Event) { e.Handle = 0 }))
		rk.Append(ev(trace.Finalize, trace.NoRank, nil))
	}
	return tr
}

// TestOneSidedCounted: the puts are communication (latency and
// bandwidth time, 400 x 8 KiB at 1 Gbit/s and 50 us), the sleep rank 0
// waits for in the window's creation is wait, and the program is not
// computation-bound on any interconnect.
func TestOneSidedCounted(t *testing.T) {
	opt := DefaultOptions()
	opt.Configs = []Config{{BW: 1, Lat: 50}}
	opt.Speed = 1e9
	res, err := Replay(rmaRepro(), opt)
	if err != nil {
		t.Fatal(err)
	}
	// Each put: 50 us + 8192 B / 125 MB/s = 115.5 us, waited for at its flush.
	per := 50e-6 + 8192/(1e9/8)
	if got, want := res.Lat[0]+res.BW[0], 400*per; math.Abs(got-want) > 0.01*want {
		t.Errorf("latency + bandwidth time %g s, want about %g", got, want)
	}
	if res.Comp[0] != 0.2 || res.Wait[0] < 0.2 {
		t.Errorf("computation %g s (want rank 1's 0.2 s sleep), wait %g s (want rank 0's 0.2 s at least)", res.Comp[0], res.Wait[0])
	}
	cl, err := Classify(rmaRepro(), Interconnects, opt, DefaultThresholds())
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range cl.Verdicts {
		if v.Class == "Comp." {
			t.Errorf("%s: classified computation-bound (%+v)", v.Interconnect.Name, v.Evidence)
		}
	}
}

// TestIOCounted: I/O time is neither computation nor communication.
func TestIOCounted(t *testing.T) {
	tr := trace.New(1, trace.NewMeta())
	w := trace.NewEvent(trace.FileWrite)
	w.Handle, w.SendBytes, w.Compute = 1, 4096, 0.5
	tr.Ranks[0].Append(&w)
	opt := DefaultOptions()
	opt.Configs = []Config{{BW: 1, Lat: 50}}
	res, err := Replay(tr, opt)
	if err != nil {
		t.Fatal(err)
	}
	if res.IO[0] != 0.5 || res.Comp[0] != 0 || res.Time[0] != 0.5 {
		t.Errorf("I/O %g, computation %g, time %g; want 0.5, 0, 0.5", res.IO[0], res.Comp[0], res.Time[0])
	}
}

// TestOneSidedEpochs replays each kind of active-target epoch between an
// origin (rank 0) and a target (rank 1) that sleeps 0.1 s before it and
// 0.05 s after, with and without the origin's transfers: the origin waits for the target's
// synchronisation (a fence, a post), and the epoch's closing
// synchronisation (the second fence, the target's wait for the origin's
// complete) waits for the transfers, which add a megabyte's latency and
// bandwidth time to the origin and to both ranks' end. A put and a get
// in one epoch go at once, as any two messages in this contention-free
// model.
func TestOneSidedEpochs(t *testing.T) {
	ev := func(k trace.Kind, target int32, f func(*trace.Event)) trace.Event {
		e := trace.NewEvent(k)
		e.Handle, e.Partner = 1, target
		if f != nil {
			f(&e)
		}
		return e
	}
	create, free := ev(trace.WinCreate, trace.NoRank, nil), ev(trace.WinFree, trace.NoRank, nil)
	fence := ev(trace.WinFence, trace.NoRank, nil)
	put := ev(trace.Put, 1, func(e *trace.Event) { e.SendBytes = 1e6 })
	get := ev(trace.Get, 1, func(e *trace.Event) { e.RecvBytes = 1e6 })
	sleep := ev(trace.Sleep, trace.NoRank, func(e *trace.Event) { e.Compute = 0.1 })
	// The target's work after the epoch: it starts when the epoch ends,
	// so the transfers delay the end only if the epoch waited for them.
	after := ev(trace.Sleep, trace.NoRank, func(e *trace.Event) { e.Compute = 0.05 })
	group := func(k trace.Kind, comm uint32) trace.Event {
		return ev(k, trace.NoRank, func(e *trace.Event) { e.NewComm = comm })
	}
	complete, wait := ev(trace.WinComplete, trace.NoRank, nil), ev(trace.WinWait, trace.NoRank, nil)
	// A megabyte's transfer at 1 Gbit/s and 50 us, before the
	// synchronisation that completes it can start.
	xfer := 50e-6 + 1e6/(1e9/8)
	cases := []struct {
		name  string
		ranks [2][]trace.Event
	}{
		{"fence", [2][]trace.Event{
			{create, fence, put, fence, free},
			{create, sleep, fence, fence, after, free},
		}},
		{"fence, put and get", [2][]trace.Event{
			{create, fence, put, get, fence, free},
			{create, sleep, fence, fence, after, free},
		}},
		{"post/start/complete/wait", [2][]trace.Event{
			{create, group(trace.WinStart, 2), put, complete, free},
			{create, sleep, group(trace.WinPost, 1), wait, after, free},
		}},
	}
	replay := func(t *testing.T, ranks [2][]trace.Event, transfers bool) *Result {
		m := trace.NewMeta()
		m.Comms = []trace.Comm{{ID: 1, Members: []int32{0}}, {ID: 2, Members: []int32{1}}}
		tr := trace.New(2, m)
		for r, evs := range ranks {
			for i := range evs {
				if transfers || evs[i].Kind != trace.Put && evs[i].Kind != trace.Get {
					tr.Ranks[r].Append(&evs[i])
				}
			}
		}
		opt := DefaultOptions()
		opt.Configs = []Config{{BW: 1, Lat: 50}}
		opt.PerRank = true
		res, err := Replay(tr, opt)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			with, without := replay(t, c.ranks, true), replay(t, c.ranks, false)
			r0, s0 := with.PerRank[0], without.PerRank[0]
			if r0.Wait[0] < 0.1 {
				t.Errorf("the origin waits %g s, want at least the target's 0.1 s sleep", r0.Wait[0])
			}
			if got := r0.Lat[0] + r0.BW[0] - s0.Lat[0] - s0.BW[0]; math.Abs(got-xfer) > 1e-9 {
				t.Errorf("the transfers add %g s of latency and bandwidth to the origin, want %g s", got, xfer)
			}
			for r := range with.PerRank {
				end, base := with.PerRank[r].Clock[0], without.PerRank[r].Clock[0]
				if base < 0.1 || math.Abs(end-base-xfer) > 1e-9 {
					t.Errorf("rank %d ends at %g s with the transfers and %g s without; want after the 0.1 s sleep, and %g s apart",
						r, end, base, xfer)
				}
			}
			if got := with.PerRank[1].Comp; math.Abs(got-0.15) > 1e-12 {
				t.Errorf("the target computes %g s, want its sleeps' 0.15 s", got)
			}
		})
	}
}
