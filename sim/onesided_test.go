package sim_test

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"kairos/internal/testenv"
	"kairos/platform"
	"kairos/sim"
	"kairos/trace"
)

// rmaTrace builds a trace from per-rank event lists, with communicators
// 1 = {0} and 2 = {1} (groups of post and start).
func rmaTrace(ranks ...[]trace.Event) *trace.Trace {
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

func rmaEv(k trace.Kind, target int32, f func(*trace.Event)) trace.Event {
	e := trace.NewEvent(k)
	e.Handle, e.Partner = 1, target
	if f != nil {
		f(&e)
	}
	return e
}

// reproduction is issue 45's program: rank 1 sleeps 0.2 s, both allocate
// a window (rank 0 waits for rank 1 there), then each puts 8 KiB to the
// other and flushes, puts times, then both free the window and meet in a
// barrier.
func reproduction(puts int) *trace.Trace {
	var ranks [2][]trace.Event
	for r := range int32(2) {
		evs := []trace.Event{trace.NewEvent(trace.Init)}
		if r == 1 {
			sleep := trace.NewEvent(trace.Sleep)
			sleep.Compute = 0.2
			evs = append(evs, sleep)
		}
		evs = append(evs, rmaEv(trace.WinCreate, trace.NoRank, nil), rmaEv(trace.WinLockAll, trace.NoRank, nil))
		for range puts {
			evs = append(evs, rmaEv(trace.Put, 1-r, func(e *trace.Event) { e.SendBytes = 8192 }), rmaEv(trace.WinFlush, 1-r, nil))
		}
		evs = append(evs, rmaEv(trace.WinUnlockAll, trace.NoRank, nil), rmaEv(trace.WinFree, trace.NoRank, nil),
			trace.NewEvent(trace.Barrier), trace.NewEvent(trace.Finalize))
		ranks[r] = evs
	}
	return rmaTrace(ranks[0], ranks[1])
}

func clusterMachine(t *testing.T, spec string, n int) *sim.Machine {
	t.Helper()
	p, err := platform.ParseCluster(spec)
	if err != nil {
		t.Fatal(err)
	}
	m, err := sim.FromPlatform(p, p.Hosts[:n])
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestOneSidedReproduction: the puts go through the network. Each
// 8,208-byte put (with SMPI's envelope) flows at bw-factor 1.08739 of the
// bandwidth (SMPI's factor above 5,776 bytes), 7.548 ms at 1 MB/s, half at
// 2 MB/s; each rank's 200 puts follow one another, the two ranks' in
// opposite directions at once, each link carrying one put and the other's
// cross-traffic (weight 0.05): halving the bandwidth adds 200 x 3.774 ms
// x 1.05. Rank 0's wait in the window's creation
// (rank 1 sleeps 0.2 s) is waiting, not computation.
func TestOneSidedReproduction(t *testing.T) {
	tr := reproduction(200)
	var times []float64
	for _, bw := range []string{"2MBps", "1MBps"} {
		res, err := sim.Run(tr, clusterMachine(t, "2x1Gf,"+bw+",1us", 2), sim.DefaultConfig(), nil)
		if err != nil {
			t.Fatal(err)
		}
		times = append(times, res.Time)
		r0 := res.Ranks[0]
		if r0.Compute != 0 || r0.Wait < 0.2 || r0.Wait > 0.21 {
			t.Errorf("%s: rank 0 computes %g s and waits %g s, want 0 and the 0.2 s rank 1 sleeps", bw, r0.Compute, r0.Wait)
		}
		if res.Bytes < 400*8192 {
			t.Errorf("%s: %d bytes simulated, want the puts' %d at least", bw, res.Bytes, 400*8192)
		}
	}
	want := 200 * 8208 / (1.08739 * 1e6) / 2 * 1.05
	if d := times[1] - times[0]; math.Abs(d-want) > 0.01*want {
		t.Errorf("halving the bandwidth adds %.4f s, want about %.4f s (times %v)", d, want, times)
	}
}

// TestOneSidedEpochs runs each kind of epoch and checks that the replay
// ends, that the transfers' bytes went through the network, and that the
// synchronisation makes the partners wait as SMPI's does.
func TestOneSidedEpochs(t *testing.T) {
	create, free := rmaEv(trace.WinCreate, trace.NoRank, nil), rmaEv(trace.WinFree, trace.NoRank, nil)
	fence := rmaEv(trace.WinFence, trace.NoRank, nil)
	put := func(tg int32, n int64) trace.Event {
		return rmaEv(trace.Put, tg, func(e *trace.Event) { e.SendBytes = n })
	}
	get := func(tg int32, n int64) trace.Event {
		return rmaEv(trace.Get, tg, func(e *trace.Event) { e.RecvBytes = n })
	}
	sleep := func(d float64) trace.Event { e := trace.NewEvent(trace.Sleep); e.Compute = d; return e }
	group := func(k trace.Kind, c uint32) trace.Event {
		return rmaEv(k, trace.NoRank, func(e *trace.Event) { e.NewComm = c })
	}
	lock := func(tg, typ int32) trace.Event { return rmaEv(trace.WinLock, tg, func(e *trace.Event) { e.Tag = typ }) }
	cases := []struct {
		name  string
		ranks [][]trace.Event
		bytes int64
		// wait0 is rank 0's least waiting time, from rank 1's sleep
		wait0 float64
	}{
		{"fence", [][]trace.Event{
			{create, fence, put(1, 1e6), get(1, 1e6), fence, free},
			{create, sleep(0.1), fence, fence, free},
		}, 2e6, 0.1},
		{"post/start/complete/wait", [][]trace.Event{
			{create, group(trace.WinStart, 2), put(1, 1e6), rmaEv(trace.WinComplete, trace.NoRank, nil), free},
			{create, sleep(0.1), group(trace.WinPost, 1), rmaEv(trace.WinWait, trace.NoRank, nil), free},
		}, 1e6, 0.1},
		{"exclusive locks in turn", [][]trace.Event{
			{create, lock(1, trace.LockExclusive), rmaEv(trace.Accumulate, 1, func(e *trace.Event) { e.SendBytes = 1e6 }),
				rmaEv(trace.WinUnlock, 1, nil), free},
			{create, lock(1, trace.LockExclusive), sleep(0.1), rmaEv(trace.WinUnlock, 1, nil), free},
		}, 1e6, 0.1},
		{"get_accumulate, compare_and_swap, request-based", [][]trace.Event{
			{create, rmaEv(trace.WinLockAll, trace.NoRank, nil),
				rmaEv(trace.GetAccumulate, 1, func(e *trace.Event) { e.SendBytes, e.RecvBytes = 8, 8 }),
				rmaEv(trace.CompareAndSwap, 1, func(e *trace.Event) { e.SendBytes, e.RecvBytes = 16, 8 }),
				rmaEv(trace.Get, 1, func(e *trace.Event) { e.RecvBytes, e.Request = 1e6, 7 }),
				func() trace.Event { e := trace.NewEvent(trace.Wait); e.Request = 7; return e }(),
				rmaEv(trace.WinFlushAll, trace.NoRank, nil), rmaEv(trace.WinUnlockAll, trace.NoRank, nil), free},
			{create, free},
		}, 1e6 + 24, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := sim.Run(rmaTrace(c.ranks...), clusterMachine(t, "2x1Gf,100MBps,10us", 2), sim.DefaultConfig(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.Bytes < c.bytes {
				t.Errorf("%d bytes simulated, want at least %d", res.Bytes, c.bytes)
			}
			if w := res.Ranks[0].Wait; w < c.wait0 {
				t.Errorf("rank 0 waits %g s, want at least %g", w, c.wait0)
			}
			if res.Ranks[0].Compute != 0 {
				t.Errorf("rank 0 computes %g s", res.Ranks[0].Compute)
			}
			if res.Time < float64(c.bytes)/100e6 {
				t.Errorf("simulated time %g s, shorter than the transfers", res.Time)
			}
		})
	}
}

// TestIOReplay: an I/O call takes its recorded duration, reported as I/O.
func TestIOReplay(t *testing.T) {
	io := func(k trace.Kind, d float64) trace.Event {
		e := trace.NewEvent(k)
		e.Handle, e.Compute = 1, d
		return e
	}
	ranks := [][]trace.Event{
		{io(trace.FileOpen, 0.01), io(trace.FileWrite, 0.25), io(trace.FileClose, 0.01)},
		{io(trace.FileOpen, 0.02), io(trace.FileWrite, 0.5), io(trace.FileClose, 0.01)},
	}
	res, err := sim.Run(rmaTrace(ranks...), clusterMachine(t, "2x1Gf,100MBps,10us", 2), sim.DefaultConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for r, want := range []float64{0.27, 0.53} {
		if got := res.Ranks[r].IO; math.Abs(got-want) > 1e-9 || res.Ranks[r].Compute != 0 {
			t.Errorf("rank %d: I/O %g s, compute %g, want %g and 0", r, got, res.Ranks[r].Compute, want)
		}
	}
	if math.Abs(res.Time-0.53) > 1e-9 {
		t.Errorf("simulated time %g, want 0.53", res.Time)
	}
}

// TestOneSidedContendedList is a pattern of NWChem's Global Arrays
// (ARMCI-MPI) that once crashed the replay: rank 0 accumulates into its
// own window, a microsecond apart, while rank 1 accumulates into it and
// flushes, so that rank 0 waits for its list's mutex, which rank 1's
// flush holds, while its own transfer, posted before, completes: the
// request it then lists must still be its own, or a later flush reads a
// recycled one. The replay ends with every byte through the network.
func TestOneSidedContendedList(t *testing.T) {
	var ranks [2][]trace.Event
	for r := range 2 {
		evs := []trace.Event{rmaEv(trace.WinCreate, trace.NoRank, nil), rmaEv(trace.WinLockAll, trace.NoRank, nil)}
		for range 10 {
			evs = append(evs, rmaEv(trace.Accumulate, 0, func(e *trace.Event) { e.SendBytes = []int64{16, 1024}[r] }))
			c := trace.NewEvent(trace.Compute)
			c.Compute = []float64{1000, 0}[r] // rank 0: 1 µs at 1 Gf/s
			evs = append(evs, c)
			if r == 1 {
				evs = append(evs, rmaEv(trace.WinFlushLocal, 0, nil))
			}
		}
		ranks[r] = append(evs, rmaEv(trace.WinUnlockAll, trace.NoRank, nil), rmaEv(trace.WinFree, trace.NoRank, nil))
	}
	res, err := sim.Run(rmaTrace(ranks[0], ranks[1]), clusterMachine(t, "2x1Gf,10GBps,1us", 2), sim.DefaultConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Bytes < 10*(16+1024) {
		t.Errorf("%d bytes simulated, want the accumulates' %d", res.Bytes, 10*(16+1024))
	}
}

// TestOneSidedUnknownWindow: a transfer on a window never created is a
// clear error, not a hang.
func TestOneSidedUnknownWindow(t *testing.T) {
	_, err := sim.Run(rmaTrace([]trace.Event{rmaEv(trace.Put, 1, nil)}, nil), clusterMachine(t, "2x1Gf,100MBps,10us", 2), sim.DefaultConfig(), nil)
	if err == nil || !strings.Contains(err.Error(), "never created") {
		t.Fatalf("error %v, want one about the window never created", err)
	}
}

// smpiPrograms are the modes of testdata/onesided.c, as traces of the
// same calls.
func smpiPrograms() map[string]*trace.Trace {
	create, free := rmaEv(trace.WinCreate, trace.NoRank, nil), rmaEv(trace.WinFree, trace.NoRank, nil)
	fence := rmaEv(trace.WinFence, trace.NoRank, nil)
	sleep := trace.NewEvent(trace.Sleep)
	sleep.Compute = 0.1
	xfer := func(k trace.Kind, tg int32, send, recv int64) trace.Event {
		return rmaEv(k, tg, func(e *trace.Event) { e.SendBytes, e.RecvBytes = send, recv })
	}
	sync := func(k trace.Kind) trace.Event { return rmaEv(k, trace.NoRank, nil) }
	group := func(k trace.Kind, c uint32) trace.Event {
		return rmaEv(k, trace.NoRank, func(e *trace.Event) { e.NewComm = c })
	}
	// both gives each rank create, the calls f returns (rank 1 sleeping
	// after the first late of them), free and a barrier.
	both := func(late int, f func(p int32) []trace.Event) *trace.Trace {
		var ranks [2][]trace.Event
		for r := range int32(2) {
			evs := f(1 - r)
			if r == 1 {
				evs = append(evs[:late:late], append([]trace.Event{sleep}, evs[late:]...)...)
			}
			ranks[r] = append(append([]trace.Event{create}, evs...), free, trace.NewEvent(trace.Barrier))
		}
		return rmaTrace(ranks[0], ranks[1])
	}
	lock := rmaEv(trace.WinLock, 1, func(e *trace.Event) { e.Tag = trace.LockExclusive })
	pscw := rmaTrace(
		[]trace.Event{create, group(trace.WinStart, 2), xfer(trace.Put, 1, 1e6, 0), sync(trace.WinComplete), free, trace.NewEvent(trace.Barrier)},
		[]trace.Event{create, sleep, group(trace.WinPost, 1), sync(trace.WinWait), free, trace.NewEvent(trace.Barrier)})
	return map[string]*trace.Trace{
		"repro": reproduction(200),
		"fence": both(1, func(p int32) []trace.Event {
			return []trace.Event{fence, xfer(trace.Put, p, 1e6, 0), fence, xfer(trace.Get, p, 0, 1e6), xfer(trace.Accumulate, p, 65536, 0), fence}
		}),
		"pscw": pscw,
		"lock": both(1, func(p int32) []trace.Event {
			return []trace.Event{lock, xfer(trace.Accumulate, 1, 262144, 0), rmaEv(trace.WinUnlock, 1, nil),
				sync(trace.WinLockAll), xfer(trace.GetAccumulate, p, 8192, 8192), xfer(trace.GetAccumulate, p, 8, 8),
				sync(trace.WinFlushAll), sync(trace.WinUnlockAll)}
		}),
	}
}

// TestOneSidedMatchesSMPI compiles testdata/onesided.c with SimGrid's
// smpicc, runs each mode on-line with smpirun (no computation simulated)
// and replays the same calls with Kairos on the same platform: the
// simulated times agree to the nanosecond SMPI prints (the last rank's
// end).
func TestOneSidedMatchesSMPI(t *testing.T) {
	testenv.Tool(t, "smpicc", "libsimgrid-dev")
	dir := t.TempDir()
	bin := filepath.Join(dir, "onesided")
	if out, err := exec.Command("smpicc", "-O2", "-o", bin, "testdata/onesided.c").CombinedOutput(); err != nil {
		t.Fatalf("smpicc: %v\n%s", err, out)
	}
	plat := filepath.Join(dir, "p.xml")
	hf := filepath.Join(dir, "hosts")
	xml := `<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <cluster id="c" prefix="node-" radical="0-1" suffix="" speed="1Gf" bw="10MBps" lat="10us"/>
</platform>
`
	if err := os.WriteFile(plat, []byte(xml), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hf, []byte("node-0\nnode-1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m := machineOn(t, plat, 2)
	for name, tr := range smpiPrograms() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			out, err := exec.Command("smpirun", "-np", "2", "-platform", plat, "-hostfile", hf,
				"--cfg=smpi/simulate-computation:no", "--log=root.thresh:critical", bin, name).CombinedOutput()
			if err != nil {
				t.Fatalf("smpirun: %v\n%s", err, out)
			}
			want := -1.0 // the last rank's end
			for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				var w float64
				if _, err := fmt.Sscanf(line, "wtime %g", &w); err != nil {
					t.Fatalf("smpirun printed %q", out)
				}
				want = max(want, w)
			}
			res, err := sim.Run(tr, m, sim.DefaultConfig(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if d := math.Abs(res.Time - want); d > 1e-9 {
				t.Errorf("Kairos %.9f s, SMPI on-line %.9f s: %.2g s apart", res.Time, want, d)
			}
			t.Logf("Kairos %.9f s, SMPI on-line %.9f s", res.Time, want)
		})
	}
}
