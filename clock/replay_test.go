package clock

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"kairos/trace"
	"kairos/workload"
)

// TestWaitall: a Waitall exits at the latest of its messages' exits and
// takes that message's wait, latency and bandwidth (Section III-D), in
// the units of Figure 2 (α = 2, β = 1, memory copy 0.2/byte).
func TestWaitall(t *testing.T) {
	b := newBuilder(3)
	b.p2p(0, trace.Irecv, 1, 0, 10, 1).p2p(0, trace.Irecv, 2, 0, 5, 2).compute(0, 4).add(0, trace.Waitall, nil)
	b.compute(1, 1).p2p(1, trace.Send, 0, 0, 10, 0) // starts at 3, arrives 15
	b.compute(2, 6).p2p(2, trace.Send, 0, 0, 5, 0)  // starts at 7, arrives 14
	res, err := Replay(b.t, unitOptions(2))
	if err != nil {
		t.Fatal(err)
	}
	// Entry 4: the first message decides; it started at 3 < 4, its
	// latency ended at 5: latency 1, bandwidth 10.
	checkCounters(t, "waitall", rankCounters(res, 0), counters{exit: 15, lat: 1, bw: 10})
}

// TestRendezvous: a message at or above the eager limit leaves when both
// sides are posted and the sender waits for its arrival.
func TestRendezvous(t *testing.T) {
	b := newBuilder(2)
	b.compute(0, 12).p2p(0, trace.Recv, 1, 0, 10, 0)
	b.compute(1, 4).p2p(1, trace.Send, 0, 0, 10, 0)
	opt := unitOptions(2)
	opt.Protocol, opt.EagerLimit = Rendezvous, 10
	res, err := Replay(b.t, opt)
	if err != nil {
		t.Fatal(err)
	}
	// The sender waits from 4 to 12 for the receive, then latency 2 and
	// bandwidth 10; both exit at 24.
	checkCounters(t, "sender", rankCounters(res, 1), counters{exit: 24, wait: 8, lat: 2, bw: 10})
	checkCounters(t, "receiver", rankCounters(res, 0), counters{exit: 24, lat: 2, bw: 10})
	// Below the limit the message stays eager.
	opt.EagerLimit = 11
	res, err = Replay(b.t, opt)
	if err != nil {
		t.Fatal(err)
	}
	checkCounters(t, "eager sender", rankCounters(res, 1), counters{exit: 6})
}

// TestTimed: a timed trace gives the same clocks as the equivalent
// time-independent one: the gap between an exit and the next entry is
// computation, and so is a local MPI call or a non-blocking call's time.
func TestTimed(t *testing.T) {
	ti := newBuilder(2)
	ti.compute(0, 12).p2p(0, trace.Recv, 1, 0, 10, 0).compute(0, 3)
	ti.compute(1, 18).p2p(1, trace.Isend, 0, 0, 10, 5).compute(1, 1).p2p(1, trace.Wait, 0, 0, 0, 5)
	td := newBuilder(2)
	// Rank 0: Init until 100, computes 12, Recv recorded 112..140 (its
	// duration is replaced by the model), then comm_size for 1 and 2 of
	// computation before Finalize.
	td.add(0, trace.Init, at(0, 100)).add(0, trace.Recv, func(e *trace.Event) {
		at(112, 140)(e)
		e.Partner, e.RecvBytes = 1, 10
	}).add(0, trace.CommSize, at(141, 142)).add(0, trace.Finalize, at(143, 150))
	// Rank 1: Init until 50, computes 18, Isend 0 long, computes 1, Wait.
	td.add(1, trace.Init, at(0, 50)).add(1, trace.Isend, func(e *trace.Event) {
		at(68, 68)(e)
		e.Partner, e.SendBytes, e.Request = 0, 10, 5
	}).add(1, trace.Wait, func(e *trace.Event) {
		at(69, 75)(e)
		e.Request = 5
	}).add(1, trace.Finalize, at(75, 76))
	opt := unitOptions(2)
	want, err := Replay(ti.t, opt)
	if err != nil {
		t.Fatal(err)
	}
	opt.Speed = 0 // a timed trace needs no speed
	got, err := Replay(td.t, opt)
	if err != nil {
		t.Fatal(err)
	}
	for r := 0; r < 2; r++ {
		checkCounters(t, "timed rank", rankCounters(got, r), rankCounters(want, r))
	}
	checkCounters(t, "receiver", rankCounters(got, 0), counters{exit: 35, wait: 8, lat: 2, bw: 10})
}

// at times an event from enter to exit, in seconds.
func at(enter, exit float64) func(e *trace.Event) {
	return func(e *trace.Event) {
		e.Enter, e.Exit, e.HasTime = trace.FromSeconds(enter), trace.FromSeconds(exit), true
	}
}

// replayWithSender adds rank 1, which sends rank 0 10 bytes at sendAt
// seconds, to b's rank 0, replays the timed trace and returns rank 0's
// result: on the unit network (the message arrives 14 s after it is
// sent: 2 s of copy, 2 s of latency, 10 s of transfer), then on any
// configs more.
func replayWithSender(t *testing.T, b *builder, sendAt float64, configs ...Config) RankResult {
	t.Helper()
	b.add(1, trace.Init, at(0, 100)).add(1, trace.Send, func(e *trace.Event) {
		at(sendAt, sendAt)(e)
		e.Partner, e.SendBytes = 0, 10
	}).add(1, trace.Finalize, at(sendAt, sendAt))
	opt := unitOptions(2)
	opt.Speed = 0
	opt.Configs = append(opt.Configs, configs...)
	got, err := Replay(b.t, opt)
	if err != nil {
		t.Fatal(err)
	}
	return got.PerRank[0]
}

// TestPolling: a rank's MPI_Test calls that complete nothing take no time
// of their own (their time was the recorded run's wait for the message);
// the computation between them stays computation. Rank 0 posts a
// receive, tests it for 5 s in 50 tests 0.02 s apart (0.08 s each), then
// waits for it; rank 1 computes 1.5 s and sends. Without the tests (5 s
// of computation instead), rank 0 computes 4 s more. On the unit
// network, where the message arrives 15.5 s in, the clocks are the same;
// on a fast one, where it arrives 3.5 s in (its
// copy), the polling rank waits for it from 1 s, the computing one
// reaches 5 s. The recorded polling, charged as waiting to every
// network, kept the polling rank's clock at 5 s on any network (HPCC's
// archive on 64 ranks: 72 s a rank of polling, the prediction at 77.6 s
// on a 1 Tb/s network, its TI trace's 4.5 s). Polled with MPI_Testany,
// whose failed calls the readers give as deferred calls in its region
// (no test of a request), the clocks and counters are those of the
// tests.
func TestPolling(t *testing.T) {
	fast := Config{BW: 8e3, Lat: 1e-3} // a microsecond for the message
	run := func(tests, testany bool) RankResult {
		b := newBuilder(2)
		poll := b.t.Meta().AddRegion("MPI_Testany", 0)
		b.add(0, trace.Init, at(0, 100)).add(0, trace.Irecv, func(e *trace.Event) {
			at(100, 100)(e)
			e.Partner, e.RecvBytes, e.Request = 1, 10, 7
		})
		for i := range 50 {
			if tests {
				b.add(0, trace.Test, func(e *trace.Event) {
					at(100.1*1+0.1*float64(i)-0.08, 100+0.1*float64(i+1))(e)
					e.Request = 7
				})
			}
			if testany {
				b.add(0, trace.Deferred, func(e *trace.Event) {
					at(100.1*1+0.1*float64(i)-0.08, 100+0.1*float64(i+1))(e)
					e.Region = poll
				})
			}
		}
		b.add(0, trace.Wait, func(e *trace.Event) {
			at(105, 106)(e)
			e.Request = 7
		}).add(0, trace.Finalize, at(106, 106))
		return replayWithSender(t, b, 101.5, fast)
	}
	polled, computed, testany := run(true, false), run(false, false), run(false, true)
	if math.Abs(polled.Comp-1) > 1e-9 || math.Abs(computed.Comp-5) > 1e-9 || math.Abs(polled.Clock[0]-computed.Clock[0]) > 1e-9 {
		t.Errorf("unit network: polling %+v, computing %+v: want 1 s and 5 s of computation, the same clock", polled, computed)
	}
	if math.Abs(polled.Clock[1]-3.5) > 1e-3 || math.Abs(polled.Wait[1]-2.5) > 1e-3 || math.Abs(computed.Clock[1]-5) > 1e-3 || computed.Wait[1] > 1e-3 {
		t.Errorf("fast network: polling %+v, computing %+v: want clocks at 3.5 s (after 2.5 s of waiting) and 5 s (no wait)", polled, computed)
	}
	if math.Abs(testany.Comp-polled.Comp) > 1e-9 || !slices.Equal(testany.Wait, polled.Wait) || !slices.Equal(testany.Clock, polled.Clock) {
		t.Errorf("polling with MPI_Testany %+v, with MPI_Test %+v: want the same", testany, polled)
	}
}

// TestPassiveCalls: a blocking probe, a communicator's creation and a
// deferred call take no time of their own, as in a replay and in the TI
// trace of the same run: rank 0 probes for 3 s (a deferred call, as the
// OTF2 reader gives a probe), duplicates a communicator for 1 s and
// probes for 1 s (DUMPI's kinds) before it receives the message rank 1
// sends at 104 s. Its clocks and counters are those of the same trace
// without them, its receive right after MPI_Init, as the TI trace has it:
// no computation (it was 5 s).
func TestPassiveCalls(t *testing.T) {
	run := func(calls bool) RankResult {
		b := newBuilder(2)
		b.add(0, trace.Init, at(0, 100))
		if calls {
			b.add(0, trace.Deferred, at(100, 103)).add(0, trace.CommDup, func(e *trace.Event) {
				at(103, 104)(e)
				e.NewComm = 1
			}).add(0, trace.Probe, func(e *trace.Event) {
				at(104, 105)(e)
				e.Partner = 1
			})
		}
		recv := 100.0 // without the calls, the receive follows MPI_Init
		if calls {
			recv = 105
		}
		b.add(0, trace.Recv, func(e *trace.Event) {
			at(recv, recv)(e)
			e.Partner, e.RecvBytes = 1, 10
		}).add(0, trace.Finalize, at(recv, recv))
		return replayWithSender(t, b, 104)
	}
	with, without := run(true), run(false)
	if with.Comp != 0 || math.Abs(with.Wait[0]-without.Wait[0]) > 1e-9 || math.Abs(with.Clock[0]-without.Clock[0]) > 1e-9 {
		t.Errorf("with the calls %+v, without %+v: want no computation, the same waiting and clock", with, without)
	}
}

// TestIntraNode: with two ranks per node, ranks 0 and 1 talk through the
// intra-node model, whatever the network configuration.
func TestIntraNode(t *testing.T) {
	b := newBuilder(4)
	b.p2p(0, trace.Recv, 1, 0, 1000, 0)
	b.p2p(1, trace.Send, 0, 0, 1000, 0).p2p(1, trace.Send, 2, 0, 1000, 0)
	b.p2p(2, trace.Recv, 1, 0, 1000, 0)
	opt := DefaultOptions()
	opt.Configs = []Config{{BW: 1, Lat: 50}, {BW: 10, Lat: 5}}
	opt.RanksPerNode, opt.PerRank = 2, true
	res, err := Replay(b.t, opt)
	if err != nil {
		t.Fatal(err)
	}
	mc := 1000 / 32e9
	intra := mc + 0.5e-6 + 1000*8/256e9
	for c, cfg := range opt.Configs {
		if got := res.PerRank[0].Clock[c]; !near(got, intra) {
			t.Errorf("%v: intra-node receive exits at %g, want %g", cfg, got, intra)
		}
		inter := 2*mc + cfg.Alpha() + 1000*cfg.Beta()
		if got := res.PerRank[2].Clock[c]; !near(got, inter) {
			t.Errorf("%v: inter-node receive exits at %g, want %g", cfg, got, inter)
		}
	}
}

// TestPingPongTable: a ping-pong table that is exactly Hockney's line
// predicts what Hockney's model predicts, at every scaled configuration.
func TestPingPongTable(t *testing.T) {
	tab, err := ParseTable(strings.NewReader("bytes,usec\n0,50\n1000000,8050\n"), "line.csv")
	if err != nil {
		t.Fatal(err)
	}
	if base := tab.Base(); !near(base.BW, 1) || !near(base.Lat, 50) {
		t.Fatalf("table base %v, want (1, 50)", base)
	}
	src := generated(t, "stencil2d", nil)
	opt := DefaultOptions()
	opt.Speed = 1e9
	for _, p := range Interconnects[0].Sweeps() {
		opt.Configs = append(opt.Configs, p.Config)
	}
	want, err := Replay(src, opt)
	if err != nil {
		t.Fatal(err)
	}
	opt.Table = tab
	got, err := Replay(src, opt)
	if err != nil {
		t.Fatal(err)
	}
	sameResults(t, got, want, 1e-9)
}

func sameResults(t *testing.T, got, want *Result, tol float64) {
	t.Helper()
	for i, c := range want.Configs {
		for _, v := range []struct {
			name string
			g, w float64
		}{{"time", got.Time[i], want.Time[i]}, {"wait", got.Wait[i], want.Wait[i]}, {"latency", got.Lat[i], want.Lat[i]},
			{"bandwidth", got.BW[i], want.BW[i]}, {"computation", got.Comp[i], want.Comp[i]}} {
			if math.Abs(v.g-v.w) > tol*math.Max(math.Abs(v.w), 1e-300) {
				t.Errorf("%v %s: got %.17g, want %.17g", c, v.name, v.g, v.w)
			}
		}
	}
}

// TestSinglePath: for each configuration, the multi-configuration replay
// predicts the same times and counters as replaying that configuration
// alone, and splitting the configurations among workers changes nothing.
func TestSinglePath(t *testing.T) {
	src := generated(t, "stencil2d", func(p *workload.Params) {
		p.Ranks, p.Grid, p.Iterations, p.Imbalance, p.Noise = 16, nil, 10, 0.5, 0.2
	})
	for _, proto := range []Protocol{Eager, Rendezvous} {
		opt := DefaultOptions()
		opt.Speed, opt.Protocol, opt.EagerLimit, opt.RanksPerNode = 1e9, proto, 4096, 4
		for _, p := range Interconnects[0].Sweeps()[7:] {
			opt.Configs = append(opt.Configs, p.Config)
		}
		all, err := Replay(src, opt)
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range opt.Configs {
			one := opt
			one.Configs = []Config{c}
			alone, err := Replay(src, one)
			if err != nil {
				t.Fatal(err)
			}
			sub := &Result{Configs: one.Configs, Time: all.Time[i : i+1], Wait: all.Wait[i : i+1], Lat: all.Lat[i : i+1], BW: all.BW[i : i+1], Comp: all.Comp[i : i+1]}
			sameResults(t, sub, alone, 1e-9)
		}
		opt.Workers = 3
		split, err := Replay(src, opt)
		if err != nil {
			t.Fatal(err)
		}
		sameResults(t, split, all, 0)
	}
}

// TestCountersAddUp: every rank's four counters add up to its final
// clock.
func TestCountersAddUp(t *testing.T) {
	for _, kind := range []string{"stencil2d", "masterworker", "ft", "sweep", "cg"} {
		src := generated(t, kind, nil)
		opt := DefaultOptions()
		opt.Speed, opt.PerRank = 1e9, true
		opt.Configs = []Config{{BW: 1, Lat: 50}, {BW: 32, Lat: 1.3}}
		res, err := Replay(src, opt)
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		for r, pr := range res.PerRank {
			for c := range opt.Configs {
				sum := pr.Comp + pr.Wait[c] + pr.Lat[c] + pr.BW[c]
				if !near(sum, pr.Clock[c]) || pr.Wait[c] < 0 || pr.Lat[c] < 0 || pr.BW[c] < 0 {
					t.Errorf("%s rank %d config %d: counters %g+%g+%g+%g = %g, clock %g", kind, r, c, pr.Comp, pr.Wait[c], pr.Lat[c], pr.BW[c], sum, pr.Clock[c])
				}
			}
		}
	}
}

// TestBadTraces: a trace that cannot be replayed is reported with the
// rank, the event and what it waits for, not hung.
func TestBadTraces(t *testing.T) {
	for _, tc := range []struct {
		name  string
		build func(b *builder)
		proto Protocol
		want  []string
	}{
		{"receive never sent", func(b *builder) {
			b.p2p(0, trace.Recv, 1, 4, 8, 0)
			b.compute(1, 1)
		}, Eager, []string{"rank 0 event 0 (recv peer=1 tag=4 recv=8)", "a message from rank 1 with tag 4; rank 1 has finished"}},
		{"crossed receives", func(b *builder) {
			b.p2p(0, trace.Recv, 1, 0, 8, 0).p2p(0, trace.Send, 1, 0, 8, 0)
			b.p2p(1, trace.Recv, 0, 0, 8, 0).p2p(1, trace.Send, 0, 0, 8, 0)
		}, Eager, []string{"2 rank(s)", "rank 1 is blocked at its event 0"}},
		{"rendezvous cycle", func(b *builder) {
			b.p2p(0, trace.Send, 1, 0, 1<<20, 0).p2p(0, trace.Recv, 1, 0, 1<<20, 0)
			b.p2p(1, trace.Send, 0, 0, 1<<20, 0).p2p(1, trace.Recv, 0, 0, 1<<20, 0)
		}, Rendezvous, []string{"rank 0 event 0 (send peer=1 tag=0 send=1048576)", "rank 1 to post the receive of its 1048576-byte rendezvous message"}},
		{"missing collective member", func(b *builder) {
			b.add(0, trace.Barrier, nil)
			b.add(1, trace.Barrier, nil).add(1, trace.Barrier, nil)
		}, Eager, []string{"rank 1 event 1 (barrier)", "collective #1 (barrier) on communicator 0: 1 of 2 members entered; not entered: rank(s) 0"}},
		{"mismatched collectives", func(b *builder) {
			b.add(0, trace.Barrier, nil)
			b.add(1, trace.Allreduce, nil)
		}, Eager, []string{"collective #0 on communicator 0 is allreduce here but barrier on another member"}},
		{"partner out of range", func(b *builder) {
			b.p2p(0, trace.Send, 7, 0, 8, 0)
		}, Eager, []string{"sends to rank 7, which is not in the trace (2 ranks)"}},
		{"no speed", func(b *builder) {
			b.compute(0, 5)
		}, Eager, []string{"has a computation volume of 5 flops: give a compute speed"}},
	} {
		b := newBuilder(2)
		tc.build(b)
		opt := unitOptions(1)
		if tc.name == "no speed" {
			opt.Speed = 0
		}
		opt.Protocol, opt.EagerLimit = tc.proto, 1024
		_, err := Replay(b.t, opt)
		if err == nil {
			t.Errorf("%s: replay succeeded", tc.name)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not say %q", tc.name, err, w)
			}
		}
	}
	var d *DeadlockError
	b := newBuilder(2)
	b.p2p(0, trace.Recv, 1, 0, 8, 0)
	if _, err := Replay(b.t, unitOptions(1)); !errors.As(err, &d) || d.Total != 1 {
		t.Errorf("deadlock error %v, want a *DeadlockError with 1 rank", err)
	}
}

// TestReplayUnmatched: messages without a partner in a replay every rank
// finishes (a real program's last message, never received) do not stop
// it: the result lists them.
func TestReplayUnmatched(t *testing.T) {
	for _, tc := range []struct {
		name  string
		build func(b *builder)
		want  []string
	}{
		{"unmatched send", func(b *builder) {
			b.p2p(0, trace.Send, 1, 3, 8, 0)
		}, []string{"1 unmatched message(s)", "rank 0 event 1 sends 8 bytes to rank 1 with tag 3, which never receives it"}},
		{"unmatched irecv", func(b *builder) {
			b.p2p(1, trace.Irecv, 0, 3, 8, 9)
		}, []string{"rank 1 event 0 receives from rank 0 with tag 3, which never sends it"}},
	} {
		b := newBuilder(2)
		b.compute(0, 2)
		tc.build(b)
		opt := unitOptions(1)
		opt.Protocol, opt.EagerLimit = Eager, 1024
		res, err := Replay(b.t, opt)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if res.Time[0] < 2 || res.Unmatched == nil {
			t.Errorf("%s: time %g, unmatched %v", tc.name, res.Time[0], res.Unmatched)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(res.Unmatched.Error(), w) {
				t.Errorf("%s: %q does not say %q", tc.name, res.Unmatched, w)
			}
		}
	}
}

// TestSendRecv: a SendRecv copies its message, then waits for the one it
// receives, in Figure 2's units.
func TestSendRecv(t *testing.T) {
	b := newBuilder(2)
	sr := func(peer int) func(e *trace.Event) {
		return func(e *trace.Event) {
			e.Partner, e.Source, e.SendBytes, e.RecvBytes = int32(peer), int32(peer), 10, 10
		}
	}
	b.compute(0, 2).add(0, trace.SendRecv, sr(1))
	b.compute(1, 6).add(1, trace.SendRecv, sr(0))
	res, err := Replay(b.t, unitOptions(2))
	if err != nil {
		t.Fatal(err)
	}
	// Rank 0 copies until 4 and waits for rank 1's message, which starts
	// at 8; rank 1 copies until 8, when rank 0's (started at 4) is past
	// its latency.
	checkCounters(t, "rank 0", rankCounters(res, 0), counters{exit: 20, wait: 4, lat: 2, bw: 10})
	checkCounters(t, "rank 1", rankCounters(res, 1), counters{exit: 16, bw: 8})
}

// TestAnySource: receives from MPI_ANY_SOURCE take the messages in the
// order they were sent in the replay.
func TestAnySource(t *testing.T) {
	b := newBuilder(3)
	b.p2p(0, trace.Recv, int(trace.AnySource), 0, 10, 0).p2p(0, trace.Recv, int(trace.AnySource), 0, 10, 0)
	b.compute(1, 1).p2p(1, trace.Send, 0, 0, 10, 0)
	b.compute(2, 5).p2p(2, trace.Send, 0, 0, 10, 0)
	res, err := Replay(b.t, unitOptions(2))
	if err != nil {
		t.Fatal(err)
	}
	// First message: starts 3, arrives 15; second: starts 7, arrives 19,
	// received from 15 (its latency overlapped by the first receive).
	checkCounters(t, "receiver", rankCounters(res, 0), counters{exit: 19, wait: 3, lat: 2, bw: 14})
}

// TestSubCommunicator: a collective on a communicator synchronises its
// members only (α = 1: a barrier of 2 costs 1, of 3 costs 2).
func TestSubCommunicator(t *testing.T) {
	b := newBuilder(3)
	b.t.Meta().Comms = []trace.Comm{{ID: 5, Members: []int32{2, 0}}}
	sub := func(e *trace.Event) { e.Comm = 5 }
	b.compute(0, 3).add(0, trace.Barrier, sub).add(0, trace.Barrier, nil)
	b.compute(1, 1).add(1, trace.Barrier, nil)
	b.compute(2, 9).add(2, trace.Barrier, sub).add(2, trace.Barrier, nil)
	res, err := Replay(b.t, unitOptions(1))
	if err != nil {
		t.Fatal(err)
	}
	// Ranks 0 and 2 meet at 9 and leave at 10; all three leave the world
	// barrier at 12.
	checkCounters(t, "rank 0", rankCounters(res, 0), counters{exit: 12, wait: 6, lat: 3})
	checkCounters(t, "rank 1", rankCounters(res, 1), counters{exit: 12, wait: 9, lat: 2})
	checkCounters(t, "rank 2", rankCounters(res, 2), counters{exit: 12, lat: 3})
}
