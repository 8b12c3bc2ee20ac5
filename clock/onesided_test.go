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
