package check

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"kairos/trace"
)

// Event builders for hand-made traces.

func ev(k trace.Kind, f func(*trace.Event)) trace.Event {
	e := trace.NewEvent(k)
	if f != nil {
		f(&e)
	}
	return e
}

func send(dst, tag int32, n int64) trace.Event {
	return ev(trace.Send, func(e *trace.Event) { e.Partner, e.Tag, e.SendBytes = dst, tag, n })
}

func recv(src, tag int32, n int64) trace.Event {
	return ev(trace.Recv, func(e *trace.Event) { e.Partner, e.Tag, e.RecvBytes = src, tag, n })
}

func isend(dst, tag int32, n int64, req uint64) trace.Event {
	return ev(trace.Isend, func(e *trace.Event) { e.Partner, e.Tag, e.SendBytes, e.Request = dst, tag, n, req })
}

func irecv(src, tag int32, n int64, req uint64) trace.Event {
	return ev(trace.Irecv, func(e *trace.Event) { e.Partner, e.Tag, e.RecvBytes, e.Request = src, tag, n, req })
}

func wait(req uint64) trace.Event {
	return ev(trace.Wait, func(e *trace.Event) { e.Request = req })
}

func test(req uint64) trace.Event {
	return ev(trace.Test, func(e *trace.Event) { e.Request = req })
}

func waitall(reqs ...uint64) trace.Event {
	return ev(trace.Waitall, func(e *trace.Event) { e.Requests = reqs })
}

func coll(k trace.Kind, root int32, n int64) trace.Event {
	return ev(k, func(e *trace.Event) {
		e.SendBytes = n
		if k.IsRooted() {
			e.Partner = root
		}
	})
}

func barrier() trace.Event { return coll(trace.Barrier, 0, 0) }

// The v-collectives, sizes in bytes; nil counts for a non-root.
func gatherv(root int32, send int64, recvCounts []int64) trace.Event {
	return ev(trace.Gatherv, func(e *trace.Event) { e.Partner, e.SendBytes, e.RecvCounts = root, send, recvCounts })
}

func scatterv(root int32, recv int64, sendCounts []int64) trace.Event {
	return ev(trace.Scatterv, func(e *trace.Event) { e.Partner, e.RecvBytes, e.SendCounts = root, recv, sendCounts })
}

func allgatherv(send int64, recvCounts []int64) trace.Event {
	return ev(trace.Allgatherv, func(e *trace.Event) { e.SendBytes, e.RecvCounts = send, recvCounts })
}

func alltoallv(sendCounts, recvCounts []int64) trace.Event {
	return ev(trace.Alltoallv, func(e *trace.Event) { e.SendCounts, e.RecvCounts = sendCounts, recvCounts })
}

// sizes sets a collective's receive size.
func sizes(e trace.Event, recv int64) trace.Event {
	e.RecvBytes = recv
	return e
}

func compute(f float64) trace.Event {
	return ev(trace.Compute, func(e *trace.Event) { e.Compute = f })
}

func onComm(e trace.Event, c uint32) trace.Event { e.Comm = c; return e }

func build(ranks ...[]trace.Event) *trace.Trace {
	t := trace.New(len(ranks), trace.NewMeta())
	for r, evs := range ranks {
		for i := range evs {
			t.Ranks[r].Append(&evs[i])
		}
	}
	return t
}

func problems(t *testing.T, tr trace.Source, p Protocol) []string {
	t.Helper()
	rep, err := Check(tr, Options{Protocol: p})
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, pr := range rep.Problems {
		out = append(out, pr.String())
	}
	if rep.OK() != (rep.Errors == 0) {
		t.Errorf("OK() = %v with %d errors", rep.OK(), rep.Errors)
	}
	return out
}

type checkCase struct {
	name  string
	ranks [][]trace.Event
	proto Protocol
	want  []string
}

func runCases(t *testing.T, cases []checkCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := problems(t, build(c.ranks...), c.proto)
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("got problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
		})
	}
}

func TestPointToPoint(t *testing.T) {
	runCases(t, []checkCase{
		{name: "matched", ranks: [][]trace.Event{
			{send(1, 0, 8), recv(1, 1, 16)},
			{recv(0, 0, 8), send(0, 1, 16)},
		}},
		{name: "in order per tag", ranks: [][]trace.Event{
			{send(1, 5, 8), send(1, 6, 100)},
			{recv(0, 6, 100), recv(0, 5, 8)},
		}},
		{name: "unmatched send", ranks: [][]trace.Event{
			{compute(1), send(1, 3, 8)},
			{},
		}, want: []string{"rank 0 event 1: send to 1 (tag 3, communicator 0, 8 bytes) is never received"}},
		{name: "unmatched receive", ranks: [][]trace.Event{
			{},
			{recv(0, 3, 8)},
		}, want: []string{"rank 1 event 0: receive from 0 (tag 3, communicator 0) is never matched by a send"}},
		{name: "tag mismatch", ranks: [][]trace.Event{
			{send(1, 1, 8)},
			{recv(0, 2, 8)},
		}, want: []string{
			"rank 0 event 0: send to 1 (tag 1, communicator 0, 8 bytes) is never received",
			"rank 1 event 0: receive from 0 (tag 2, communicator 0) is never matched by a send",
		}},
		{name: "truncation", ranks: [][]trace.Event{
			{send(1, 0, 100)},
			{recv(0, 0, 10)},
		}, want: []string{"rank 1 event 0: receive of 10 bytes truncates the 100-byte message from rank 0 (tag 0, its event 0)"}},
		{name: "larger receive is fine", ranks: [][]trace.Event{
			{send(1, 0, 10)},
			{recv(0, 0, 100)},
		}},
		{name: "probe-first receive takes any size", ranks: [][]trace.Event{
			{send(1, 0, 1<<20), send(1, 1, 8)},
			{recv(0, 0, -1), irecv(0, 1, -1, 1), wait(1)},
		}},
		{name: "wildcards match the earliest message", ranks: [][]trace.Event{
			{send(2, 7, 8)},
			{send(2, 9, 64)},
			{recv(trace.AnySource, trace.AnyTag, 8), recv(1, trace.AnyTag, 64)},
		}},
		{name: "wildcard truncation", ranks: [][]trace.Event{
			{send(1, 1, 8), send(1, 2, 80)},
			{recv(0, trace.AnyTag, 8), recv(0, trace.AnyTag, 8)},
		}, want: []string{"rank 1 event 1: receive of 8 bytes truncates the 80-byte message from rank 0 (tag 2, its event 1)"}},
		{name: "bad destination", ranks: [][]trace.Event{
			{send(5, 0, 8)},
			{},
		}, want: []string{"rank 0 event 0: send: destination 5 is not a rank of this 2-rank trace"}},
		{name: "negative tag", ranks: [][]trace.Event{
			{send(1, -4, 8)},
			{recv(0, trace.AnyTag, 8)},
		}, want: []string{
			"rank 0 event 0: send has a negative tag (-4)",
			"rank 1 event 0: receive from 0 (tag any, communicator 0) is never matched by a send",
		}},
		{name: "self message", ranks: [][]trace.Event{
			{isend(0, 0, 8, 1), recv(0, 0, 8), wait(1)},
		}},
		{name: "sendRecv ring", ranks: [][]trace.Event{
			{ev(trace.SendRecv, func(e *trace.Event) { e.Partner, e.Source, e.SendBytes, e.RecvBytes = 1, 1, 8, 8 })},
			{ev(trace.SendRecv, func(e *trace.Event) { e.Partner, e.Source, e.SendBytes, e.RecvBytes = 0, 0, 8, 8 })},
		}, proto: Rendezvous},
	})
}

func TestRequests(t *testing.T) {
	runCases(t, []checkCase{
		{name: "isend irecv wait", ranks: [][]trace.Event{
			{isend(1, 0, 8, 1), irecv(1, 0, 8, 2), wait(1), wait(2)},
			{irecv(0, 0, 8, 7), isend(0, 0, 8, 8), waitall()},
		}, proto: Rendezvous},
		{name: "waitall list", ranks: [][]trace.Event{
			{isend(1, 0, 8, 1), isend(1, 1, 8, 2), waitall(1, 2)},
			{recv(0, 0, 8), recv(0, 1, 8)},
		}},
		{name: "wait twice", ranks: [][]trace.Event{
			{isend(1, 0, 8, 1), wait(1), wait(1)},
			{recv(0, 0, 8)},
		}, want: []string{"rank 0 event 2: wait on request 1, which is not outstanding (never started or already completed)"}},
		{name: "wait never started", ranks: [][]trace.Event{
			{wait(4)},
		}, want: []string{"rank 0 event 0: wait on request 4, which is not outstanding (never started or already completed)"}},
		{name: "waitall unknown", ranks: [][]trace.Event{
			{isend(0, 0, 8, 1), recv(0, 0, 8), waitall(1, 3)},
		}, want: []string{"rank 0 event 2: waitall on request 3, which is not outstanding (never started or already completed)"}},
		{name: "restarted while outstanding", ranks: [][]trace.Event{
			{isend(1, 0, 8, 1), isend(1, 0, 8, 1), waitall()},
			{recv(0, 0, 8), recv(0, 0, 8)},
		}, want: []string{"rank 0 event 1: isend starts request 1, which is still outstanding (started at event 0)"}},
		{name: "never completed is a warning", ranks: [][]trace.Event{
			{isend(1, 0, 8, 1)},
			{recv(0, 0, 8)},
		}, want: []string{"rank 0 event 0: warning: request 1 (isend to 1 tag 0) is never completed by a wait"}},
		{name: "tested then waited", ranks: [][]trace.Event{
			{irecv(1, 0, 8, 1), test(1), test(1), wait(1)},
			{send(0, 0, 8)},
		}},
		{name: "tested only", ranks: [][]trace.Event{
			{irecv(1, 0, 8, 1), compute(5), test(1)},
			{send(0, 0, 8)},
		}},
		{name: "test never started", ranks: [][]trace.Event{
			{test(9)},
		}, want: []string{"rank 0 event 0: test on request 9, which is not outstanding (never started or already completed)"}},
		{name: "reuse after completion", ranks: [][]trace.Event{
			{isend(1, 0, 8, 1), wait(1), isend(1, 0, 8, 1), wait(1)},
			{recv(0, 0, 8), recv(0, 0, 8)},
		}},
	})
}

func TestCollectives(t *testing.T) {
	runCases(t, []checkCase{
		{name: "same order", ranks: [][]trace.Event{
			{barrier(), coll(trace.Bcast, 1, 64), coll(trace.Allreduce, 0, 8)},
			{barrier(), coll(trace.Bcast, 1, 64), coll(trace.Allreduce, 0, 8)},
			{barrier(), coll(trace.Bcast, 1, 64), coll(trace.Allreduce, 0, 8)},
		}, proto: Rendezvous},
		{name: "mismatched order", ranks: [][]trace.Event{
			{coll(trace.Bcast, 0, 8), barrier()},
			{barrier(), coll(trace.Bcast, 0, 8)},
		}, proto: Rendezvous, want: []string{
			"rank 0 event 1: barrier is collective #1 on communicator 0, but rank 1 entered bcast there (its event 1)",
			"rank 1 event 0: barrier is collective #0 on communicator 0, but rank 0 entered bcast there (its event 0)",
		}},
		{name: "different roots", ranks: [][]trace.Event{
			{coll(trace.Bcast, 0, 8)},
			{coll(trace.Bcast, 1, 8)},
		}, want: []string{"rank 1 event 0: bcast (collective #0 on communicator 0) has root 1, but rank 0 gave root 0 (its event 0)"}},
		{name: "different sizes", ranks: [][]trace.Event{
			{coll(trace.Allreduce, 0, 8)},
			{coll(trace.Allreduce, 0, 16)},
		}, want: []string{"rank 1 event 0: allreduce (collective #0 on communicator 0) moves 16/0 bytes (send/recv), but rank 0 moves 8/0 (its event 0)"}},
		{name: "gather sizes", ranks: [][]trace.Event{
			// The receive size is the root's alone: only sends must agree.
			{sizes(coll(trace.Gather, 0, 8), 32)},
			{sizes(coll(trace.Gather, 0, 8), 0)},
			{sizes(coll(trace.Gather, 0, 16), 0)},
		}, want: []string{"rank 2 event 0: gather (collective #0 on communicator 0) moves 16/0 bytes (send/recv), but rank 0 moves 8/32 (its event 0)"}},
		{name: "scatter sizes", ranks: [][]trace.Event{
			{sizes(coll(trace.Scatter, 1, 0), 8)},
			{sizes(coll(trace.Scatter, 1, 16), 8)},
			{sizes(coll(trace.Scatter, 1, 0), 4)},
		}, want: []string{"rank 2 event 0: scatter (collective #0 on communicator 0) moves 0/4 bytes (send/recv), but rank 0 moves 0/8 (its event 0)"}},
		{name: "alltoall sizes", ranks: [][]trace.Event{
			{sizes(coll(trace.Alltoall, 0, 8), 8)},
			{sizes(coll(trace.Alltoall, 0, 8), 16)},
		}, want: []string{"rank 1 event 0: alltoall (collective #0 on communicator 0) moves 8/16 bytes (send/recv), but rank 0 moves 8/8 (its event 0)"}},
		{name: "reduce_scatter counts", ranks: [][]trace.Event{
			{ev(trace.ReduceScatter, func(e *trace.Event) { e.RecvCounts = []int64{8, 8} })},
			{ev(trace.ReduceScatter, func(e *trace.Event) { e.RecvCounts = []int64{8, 16} })},
		}, want: []string{"rank 1 event 0: reducescatter (collective #0 on communicator 0) has receive counts [8 16], but rank 0 gave [8 8] (its event 0)"}},
		{name: "allgatherv counts agree", ranks: [][]trace.Event{
			{ev(trace.Allgatherv, func(e *trace.Event) { e.SendBytes, e.RecvCounts = 8, []int64{8, 16} })},
			{ev(trace.Allgatherv, func(e *trace.Event) { e.SendBytes, e.RecvCounts = 16, []int64{8, 16} })},
		}},
		{name: "root outside", ranks: [][]trace.Event{
			{coll(trace.Reduce, 4, 8)},
			{coll(trace.Reduce, 4, 8)},
		}, want: []string{
			"rank 0 event 0: reduce: root 4 is not a member of communicator 0",
			"rank 1 event 0: reduce: root 4 is not a member of communicator 0",
		}},
		{name: "missing member", ranks: [][]trace.Event{
			{barrier()},
			{barrier()},
			{compute(1)},
		}, want: []string{"rank 0 event 0: barrier (collective #0 on communicator 0) is never entered by rank 2"}},
		{name: "alltoallv counts", ranks: [][]trace.Event{
			{ev(trace.Alltoallv, func(e *trace.Event) { e.SendCounts, e.RecvCounts = []int64{1, 2}, []int64{1, 3} })},
			{ev(trace.Alltoallv, func(e *trace.Event) { e.SendCounts, e.RecvCounts = []int64{3}, []int64{2, 4} })},
		}, want: []string{"rank 1 event 0: alltoallv has 1 counts for a communicator of 2 members"}},
		// Pairwise: what a member sends another is what that one expects.
		{name: "v-collectives agree", ranks: [][]trace.Event{
			{gatherv(0, 1, []int64{1, 2, 3}), scatterv(2, 4, nil), allgatherv(5, []int64{5, 6, 7}), alltoallv([]int64{1, 2, 3}, []int64{1, 4, 7})},
			{gatherv(0, 2, nil), scatterv(2, 5, nil), allgatherv(6, []int64{5, 6, 7}), alltoallv([]int64{4, 5, 6}, []int64{2, 5, 8})},
			{gatherv(0, 3, nil), scatterv(2, 6, []int64{4, 5, 6}), allgatherv(7, []int64{5, 6, 7}), alltoallv([]int64{7, 8, 9}, []int64{3, 6, 9})},
		}},
		{name: "v-collectives disagree", ranks: [][]trace.Event{
			{gatherv(0, 1, []int64{1, 2, 3}), scatterv(2, 4, nil), allgatherv(5, []int64{5, 6, 7}), alltoallv([]int64{1, 2, 3}, []int64{1, 4, 7})},
			{gatherv(0, 9, nil), scatterv(2, 5, nil), allgatherv(6, []int64{5, 6, 7}), alltoallv([]int64{4, 5, 6}, []int64{2, 9, 8})},
			{gatherv(0, 3, nil), scatterv(2, 9, []int64{4, 5, 6}), allgatherv(9, []int64{5, 6, 7}), alltoallv([]int64{7, 8, 9}, []int64{3, 6, 9})},
		}, want: []string{
			"rank 1 event 0: gatherv (collective #0 on communicator 0) sends 9 bytes, but the root, rank 0, expects 2 (its event 0)",
			"rank 1 event 3: alltoallv (collective #3 on communicator 0) expects 9 bytes from rank 1, which sends it 5",
			"rank 2 event 1: scatterv (collective #1 on communicator 0) receives 9 bytes, but the root, rank 2, sends it 6",
			"rank 2 event 2: allgatherv (collective #2 on communicator 0) sends 9 bytes, but the receive counts expect 7 from it",
		}},
	})
}

func TestSubCommunicators(t *testing.T) {
	tr := build(
		[]trace.Event{onComm(barrier(), 1), onComm(send(2, 0, 8), 1)},
		[]trace.Event{onComm(barrier(), 1)},
		[]trace.Event{onComm(barrier(), 1), onComm(recv(0, 0, 8), 1)},
	)
	tr.Meta().Comms = []trace.Comm{{ID: 1, Members: []int32{0, 2}}}
	got := problems(t, tr, Rendezvous)
	want := []string{"rank 1 event 0: barrier on communicator 1, of which rank 1 is not a member"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got %q, want %q", got, want)
	}
	tr = build([]trace.Event{onComm(barrier(), 3)})
	got = problems(t, tr, None)
	want = []string{"rank 0 event 0: barrier on communicator 3, which is not defined"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestFewMembers: communicators of a 16th of the ranks or fewer (each
// rank's own, a pair among 32) are indexed apart from the world's size;
// their members and the ranks not in them are told alike.
func TestFewMembers(t *testing.T) {
	ranks := make([][]trace.Event, 32)
	for r := range ranks {
		ranks[r] = []trace.Event{onComm(barrier(), uint32(r+1))}
	}
	ranks[3] = append(ranks[3], onComm(barrier(), 100))
	ranks[17] = append(ranks[17], onComm(barrier(), 100))
	ranks[5] = append(ranks[5], onComm(barrier(), 100))
	tr := build(ranks...)
	for r := range ranks {
		tr.Meta().Comms = append(tr.Meta().Comms, trace.Comm{ID: uint32(r + 1), Members: []int32{int32(r)}})
	}
	tr.Meta().Comms = append(tr.Meta().Comms, trace.Comm{ID: 100, Members: []int32{17, 3}})
	got := problems(t, tr, Rendezvous)
	want := []string{"rank 5 event 1: barrier on communicator 100, of which rank 5 is not a member"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestVolumes(t *testing.T) {
	runCases(t, []checkCase{
		{name: "negative send", ranks: [][]trace.Event{
			{send(1, 0, -8)},
			{recv(0, 0, 8)},
		}, want: []string{"rank 0 event 0: send has a negative send size (-8 bytes)"}},
		{name: "negative isend", ranks: [][]trace.Event{
			{isend(1, 0, -1, 1), wait(1)},
			{recv(0, 0, 8)},
		}, want: []string{"rank 0 event 0: isend has a negative send size (-1 bytes)"}},
		{name: "NaN compute", ranks: [][]trace.Event{
			{compute(math.NaN()), compute(math.Inf(1)), compute(-1)},
		}, want: []string{
			"rank 0 event 0: compute has an invalid amount (NaN flops)",
			"rank 0 event 1: compute has an invalid amount (+Inf flops)",
			"rank 0 event 2: compute has an invalid amount (-1 flops)",
		}},
		{name: "negative sleep", ranks: [][]trace.Event{
			{ev(trace.Sleep, func(e *trace.Event) { e.Compute = -2 })},
		}, want: []string{"rank 0 event 0: sleep has an invalid amount (-2 seconds)"}},
		{name: "negative count", ranks: [][]trace.Event{
			{ev(trace.Alltoallv, func(e *trace.Event) { e.SendCounts, e.RecvCounts = []int64{1}, []int64{-3} })},
		}, want: []string{"rank 0 event 0: alltoallv has a negative count (-3 bytes for member 0)"}},
	})
}

func TestDeadlock(t *testing.T) {
	headToHead := [][]trace.Event{
		{send(1, 0, 1<<20), recv(1, 0, 1<<20)},
		{send(0, 0, 1<<20), recv(0, 0, 1<<20)},
	}
	small := [][]trace.Event{
		{send(1, 0, 100), recv(1, 0, 100)},
		{send(0, 0, 100), recv(0, 0, 100)},
	}
	runCases(t, []checkCase{
		{name: "head-to-head eager", ranks: headToHead, proto: Eager},
		{name: "head-to-head rendezvous", ranks: headToHead, proto: Rendezvous, want: []string{
			"rank 0 event 0: deadlock under rendezvous: send waits for rank 1 to receive its 1048576-byte message (tag 0)",
			"rank 1 event 0: deadlock under rendezvous: send waits for rank 0 to receive its 1048576-byte message (tag 0)",
		}},
		{name: "head-to-head simgrid large", ranks: headToHead, proto: SimGrid, want: []string{
			"rank 0 event 0: deadlock under simgrid: send waits for rank 1 to receive its 1048576-byte message (tag 0)",
			"rank 1 event 0: deadlock under simgrid: send waits for rank 0 to receive its 1048576-byte message (tag 0)",
		}},
		{name: "head-to-head simgrid small", ranks: small, proto: SimGrid},
		{name: "receive with no sender", ranks: [][]trace.Event{
			{recv(1, 0, 8)},
			{compute(1)},
		}, proto: Eager, want: []string{
			"rank 0 event 0: receive from 1 (tag 0, communicator 0) is never matched by a send",
			"rank 0 event 0: deadlock under eager: recv waits for a message from 1 (tag 0)",
		}},
		{name: "collective missing a member", ranks: [][]trace.Event{
			{barrier()},
			{barrier()},
			{recv(0, 0, 8)},
		}, proto: Rendezvous, want: []string{
			"rank 0 event 0: barrier (collective #0 on communicator 0) is never entered by rank 2",
			"rank 0 event 0: deadlock under rendezvous: barrier (collective #0) waits for rank 2",
			"rank 1 event 0: deadlock under rendezvous: barrier (collective #0) waits for rank 2",
			"rank 2 event 0: receive from 0 (tag 0, communicator 0) is never matched by a send",
			"rank 2 event 0: deadlock under rendezvous: recv waits for a message from 0 (tag 0)",
		}},
		{name: "non-blocking collective overlapping a message", ranks: [][]trace.Event{
			{recv(1, 7, 4), ev(trace.Allreduce, func(e *trace.Event) { e.SendBytes, e.RecvBytes, e.Request = 4, 4, 1 })},
			{ev(trace.Allreduce, func(e *trace.Event) { e.SendBytes, e.RecvBytes, e.Request = 4, 4, 1 }), send(0, 7, 4)},
		}, proto: SimGrid, want: []string{
			"rank 0 event 0: deadlock under simgrid: recv waits for a message from 1 (tag 7)",
			"rank 1 event 0: deadlock under simgrid: allreduce (collective #0) waits for rank 0; it was non-blocking, and is read " +
				"where it completed: a program that overlaps one with point-to-point messages its partners wait for reads as deadlocked, though it ran",
		}},
		{name: "barrier before send", ranks: [][]trace.Event{
			{barrier(), send(1, 0, 8)},
			{recv(0, 0, 8), barrier()},
		}, proto: Eager, want: []string{
			"rank 0 event 0: deadlock under eager: barrier (collective #0) waits for rank 1",
			"rank 1 event 0: deadlock under eager: recv waits for a message from 0 (tag 0)",
		}},
		{name: "isend rendezvous wait", ranks: [][]trace.Event{
			{isend(1, 0, 8, 1), wait(1), recv(1, 0, 8)},
			{isend(0, 0, 8, 1), wait(1), recv(0, 0, 8)},
		}, proto: Rendezvous, want: []string{
			"rank 0 event 1: deadlock under rendezvous: wait waits for request 1 (isend to 1 tag 0, event 0)",
			"rank 1 event 1: deadlock under rendezvous: wait waits for request 1 (isend to 0 tag 0, event 0)",
		}},
		{name: "simgrid waits leftovers", ranks: [][]trace.Event{
			{irecv(1, 0, 8, 1)},
			{barrier()},
		}, proto: SimGrid, want: []string{
			"rank 0 event 0: receive from 1 (tag 0, communicator 0) is never matched by a send",
			"rank 0 event 0: deadlock under simgrid: end of trace (SimGrid waits for the requests left) waits for request 1 (irecv from 1 tag 0, event 0)",
			"rank 1 event 0: barrier (collective #0 on communicator 0) is never entered by rank 0",
			"rank 1 event 0: deadlock under simgrid: barrier (collective #0) waits for rank 0",
			"rank 0 event 0: warning: request 1 (irecv from 1 tag 0) is never completed by a wait", // errors first
		}},
		{name: "probe", ranks: [][]trace.Event{
			{ev(trace.Probe, func(e *trace.Event) { e.Partner, e.Tag = 1, 0 }), recv(1, 0, -1)},
			{compute(1), send(0, 0, 8)},
		}, proto: Rendezvous},
		{name: "probe forever", ranks: [][]trace.Event{
			{ev(trace.Probe, func(e *trace.Event) { e.Partner, e.Tag = 1, 0 })},
			{},
		}, proto: Rendezvous, want: []string{
			"rank 0 event 0: deadlock under rendezvous: probe waits for a message from 1 (tag 0)",
		}},
	})
}

func TestReportJSON(t *testing.T) {
	rep, err := Check(build([]trace.Event{send(1, 0, 8)}, []trace.Event{isend(0, 0, 8, 1)}), Options{Protocol: Rendezvous})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Errors != rep.Errors || len(back.Problems) != len(rep.Problems) || back.Problems[0] != rep.Problems[0] {
		t.Errorf("round trip: %s", b)
	}
	if !strings.Contains(string(b), `"severity":"warning"`) {
		t.Errorf("severity not a string: %s", b)
	}
}

func TestMaxProblems(t *testing.T) {
	var evs []trace.Event
	for i := 0; i < 50; i++ {
		evs = append(evs, wait(uint64(i)))
	}
	rep, err := Check(build(evs), Options{MaxProblems: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Problems) != 10 || rep.Omitted != 40 || rep.Errors != 50 {
		t.Errorf("problems %d omitted %d errors %d", len(rep.Problems), rep.Omitted, rep.Errors)
	}
}

func TestParseProtocol(t *testing.T) {
	for _, p := range []Protocol{None, Eager, Rendezvous, SimGrid} {
		got, err := ParseProtocol(p.String())
		if err != nil || got != p {
			t.Errorf("ParseProtocol(%q) = %v, %v", p, got, err)
		}
	}
	if _, err := ParseProtocol("fast"); err == nil {
		t.Error("ParseProtocol(fast) succeeded")
	}
	if _, err := Check(build(), Options{Protocol: 9}); err == nil {
		t.Error("Check accepted protocol 9")
	}
}

// textSource is a Source over event slices whose readers implement
// trace.Positioner like a text format's, one event per line of
// "rank<r>.txt"; it also carries events the codec cannot encode.
type textSource struct {
	meta  trace.Meta
	ranks [][]trace.Event
}

func (s *textSource) Meta() *trace.Meta { return &s.meta }
func (s *textSource) NumRanks() int     { return len(s.ranks) }
func (s *textSource) OpenRank(r int) (trace.Reader, error) {
	return &textReader{evs: s.ranks[r], file: fmt.Sprintf("rank%d.txt", r), i: -1}, nil
}

type textReader struct {
	evs  []trace.Event
	file string
	i    int
}

func (r *textReader) Next() bool          { r.i++; return r.i < len(r.evs) }
func (r *textReader) Event() *trace.Event { return &r.evs[r.i] }
func (r *textReader) Err() error          { return nil }
func (r *textReader) Close() error        { return nil }
func (r *textReader) Position() string    { return fmt.Sprintf("%s:%d", r.file, r.i+1) }

func TestPositions(t *testing.T) {
	src := &textSource{meta: trace.NewMeta(), ranks: [][]trace.Event{
		{compute(1), ev(trace.KindInvalid, nil), send(1, 0, 80)},
		{compute(1), compute(2), recv(0, 0, 8)},
	}}
	got := problems(t, src, None)
	want := []string{
		"rank0.txt:2: rank 0 event 1: invalid event kind 0",
		"rank1.txt:3: rank 1 event 2: receive of 8 bytes truncates the 80-byte message from rank 0 (tag 0, its event 2)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestErrorsBeforeWarnings: a rank's requests never waited for are one
// warning, listed after the errors, and an error takes a warning's place
// in a full list (a TI trace that polls its receives with MPI_Test once
// listed a thousand such warnings and omitted its errors).
func TestErrorsBeforeWarnings(t *testing.T) {
	var r0, r1 []trace.Event
	for i := range 20 {
		r0 = append(r0, irecv(1, 0, 8, uint64(i+1)))
		r1 = append(r1, send(0, 0, 8))
	}
	for i := range 15 {
		r1 = append(r1, wait(uint64(100+i))) // no such request: an error
	}
	all, err := Check(build(r0, r1), Options{Protocol: None, MaxProblems: -1})
	if err != nil {
		t.Fatal(err)
	}
	if all.Errors != 15 || all.Warnings != 1 || len(all.Problems) != 16 {
		t.Fatalf("errors %d, warnings %d, problems %d; want 15, 1, 16", all.Errors, all.Warnings, len(all.Problems))
	}
	last := all.Problems[15]
	if last.Severity != Warning || last.String() != "rank 0 event 0: warning: request 1 (irecv from 1 tag 0) and 19 later requests of the rank are never completed by a wait" {
		t.Errorf("last problem: %s", last)
	}
	capped, err := Check(build(r0, r1), Options{Protocol: None, MaxProblems: 10}) // rank 0's warning found first
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range capped.Problems {
		if p.Severity != Error {
			t.Errorf("a warning is listed where errors were omitted: %s", p)
		}
	}
	if len(capped.Problems) != 10 || capped.Omitted != 6 {
		t.Errorf("problems %d, omitted %d; want 10 and 6", len(capped.Problems), capped.Omitted)
	}
}

// TestBcastRootLeaves: a broadcast's root leaves it at once where its
// message goes eagerly (SMPI's binomial tree sends and goes on), so that
// broadcasts on MPI_COMM_WORLD and on a duplicate of it, called in one
// order at the root and in the other elsewhere (murasaki), replay; a
// message the protocol sends by rendezvous makes it a deadlock.
func TestBcastRootLeaves(t *testing.T) {
	for _, c := range []struct {
		bytes int64
		proto Protocol
		ok    bool
	}{
		{8, SimGrid, true}, {8, Eager, true}, {1 << 20, SimGrid, false}, {8, Rendezvous, false},
	} {
		b := func(comm uint32) trace.Event { return onComm(coll(trace.Bcast, 0, c.bytes), comm) }
		tr := build(
			[]trace.Event{b(0), b(1)},
			[]trace.Event{b(1), b(0)},
			[]trace.Event{b(1), b(0)},
		)
		tr.Meta().Comms = []trace.Comm{{ID: 1, Members: []int32{0, 1, 2}}}
		got := problems(t, tr, c.proto)
		if (len(got) == 0) != c.ok {
			t.Errorf("%d bytes under %v: problems %q, want ok %v", c.bytes, c.proto, got, c.ok)
		}
	}
}

// TestUnfinalized: ranks whose trace ends without MPI_Finalize, where
// they have their MPI_Init or another rank its MPI_Finalize, are a run
// cut short (RELION's auto-refine ended in MPI_Abort on an even number of
// ranks), unless the writer says it stopped measuring first.
func TestUnfinalized(t *testing.T) {
	in, fin := ev(trace.Init, nil), ev(trace.Finalize, nil)
	for _, c := range []struct {
		name  string
		ranks [][]trace.Event
		early bool
		n     int
		list  string
	}{
		{name: "whole", ranks: [][]trace.Event{{in, barrier(), fin}, {in, barrier(), fin}}},
		{name: "neither recorded", ranks: [][]trace.Event{{barrier()}, {barrier()}}},
		{name: "one cut", ranks: [][]trace.Event{{in, barrier(), fin}, {in, barrier()}}, n: 1, list: "1"},
		{name: "all cut", ranks: [][]trace.Event{{in, barrier()}, {in, barrier()}, {in, barrier()}}, n: 3, list: "0-2"},
		{name: "cut without init", ranks: [][]trace.Event{{barrier(), fin}, {barrier()}, {barrier(), fin}}, n: 1, list: "1"},
		{name: "measurement off", ranks: [][]trace.Event{{in, barrier()}, {in, barrier()}}, early: true},
		{name: "measurement off but one finalized", ranks: [][]trace.Event{{in, barrier()}, {in, barrier(), fin}}, early: true, n: 1, list: "0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tr := build(c.ranks...)
			if c.early {
				tr.Meta().Attrs[trace.AttrNoFinalize] = "switched off"
			}
			rep, err := Check(tr, Options{Protocol: SimGrid})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Unfinalized != c.n || rep.UnfinalizedList != c.list || len(rep.Problems) != 0 {
				t.Errorf("unfinalized %d (%q), problems %v; want %d (%q) and none", rep.Unfinalized, rep.UnfinalizedList, rep.Problems, c.n, c.list)
			}
		})
	}
}
