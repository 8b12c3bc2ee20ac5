package dumpi

import (
	"reflect"
	"testing"

	"kairos/check"
	"kairos/trace"
)

// persistentTrace is two ranks exchanging through persistent requests
// twice: rank 0 with Startall (and a request on MPI_PROC_NULL), rank 1
// with Start and an unsuccessful Test; then rank 0 completes an inactive
// request, starts an unknown one, frees its requests and reuses a handle
// for a plain Isend, and the handle of an Isend to MPI_PROC_NULL for a
// real one.
func persistentTrace(t *testing.T) trace.Source {
	ws := writers(2)
	w0, w1 := ws[0], ws[1]
	w0.call(lSendInit, 2, 9, 1, 7, commWorld, 11)
	w0.call(lRecvInit, 2, 9, 1, 8, commWorld, 12)
	w0.call(lSendInit, 2, 9, -2, 7, commWorld, 14)
	w1.call(lRecvInit, 2, 9, 0, 7, commWorld, 21)
	w1.call(lSsendInit, 2, 9, 0, 8, commWorld, 22)
	for i := 0; i < 2; i++ {
		w0.call(lStartall, 3, []int32{11, 12, 14})
		w0.call(lWaitall, 3, []int32{11, 12, 14}, nil)
		w1.call(lStart, 21)
		w1.call(lStart, 22)
		w1.call(lTest, 21, 0, nil)
		w1.call(lWaitall, 2, []int32{21, 22}, nil)
	}
	w0.call(lWait, 11, nil)
	w0.call(lStart, 13)
	w0.call(lRequestFree, 11)
	w0.call(lRequestFree, 12)
	w0.call(lIsend, 2, 9, 1, 9, commWorld, 11)
	w0.call(lWait, 11, nil)
	w1.call(lRecv, 2, 9, 0, 9, commWorld, nil)
	// A handle of a call on MPI_PROC_NULL, reused for a real one.
	w0.call(lIsend, 2, 9, -2, 10, commWorld, 30)
	w0.call(lWait, 30, nil)
	w0.call(lIsend, 2, 9, 1, 10, commWorld, 30)
	w0.call(lWait, 30, nil)
	w1.call(lRecv, 2, 9, 0, 10, commWorld, nil)
	src, err := Open(writeTrace(t, t.TempDir(), ws))
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func TestPersistentRequests(t *testing.T) {
	src := persistentTrace(t)
	type ev struct {
		kind    trace.Kind
		partner int32
		tag     int32
		req     uint64
		reqs    []uint64
	}
	got := [][]ev{nil, nil}
	var started []trace.Event // rank 0's isends and irecvs of its two Startalls
	if err := trace.ForEach(src, func(r, _ int, e *trace.Event) error {
		if r == 0 && (e.Kind == trace.Isend || e.Kind == trace.Irecv) && len(started) < 4 {
			started = append(started, e.Clone())
		}
		x := ev{kind: e.Kind, req: e.Request, reqs: append([]uint64(nil), e.Requests...)}
		if e.Kind.IsSend() || e.Kind.IsRecv() {
			x.partner, x.tag = e.Partner, e.Tag
		}
		got[r] = append(got[r], x)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// Each start is a request of its own, numbered in order: the
	// Startalls' 1 to 4, then 5 and 6 (the call on MPI_PROC_NULL between
	// them starts none).
	local := ev{kind: trace.Local}
	deferred := ev{kind: trace.Deferred} // a completion of an inactive request: it completes nothing
	round0 := func(a, b uint64) []ev {
		return []ev{{trace.Isend, 1, 7, a, nil}, {trace.Irecv, 1, 8, b, nil}, {trace.Waitall, 0, 0, 0, []uint64{a, b}}}
	}
	round1 := func(a, b uint64) []ev {
		return []ev{{trace.Irecv, 0, 7, a, nil}, {trace.Isend, 0, 8, b, nil}, {trace.Deferred, 0, 0, 0, nil}, {trace.Waitall, 0, 0, 0, []uint64{a, b}}}
	}
	want := [][]ev{
		append(append(append([]ev{local, local, local}, round0(1, 2)...), round0(3, 4)...),
			deferred, local, local, local, ev{trace.Isend, 1, 9, 5, nil}, ev{trace.Wait, 0, 0, 5, nil},
			local, deferred, ev{trace.Isend, 1, 10, 6, nil}, ev{trace.Wait, 0, 0, 6, nil}),
		append(append([]ev{local, local}, round1(1, 2)...), append(round1(3, 4), ev{trace.Recv, 0, 9, 0, nil}, ev{trace.Recv, 0, 10, 0, nil})...),
	}
	for r := range want {
		if !reflect.DeepEqual(got[r], want[r]) {
			t.Errorf("rank %d:\n got %v\nwant %v", r, got[r], want[r])
		}
	}
	// A Startall's requests share its time: the last spans the call.
	for i := 0; i < len(started); i += 2 {
		if is, ir := started[i], started[i+1]; is.Exit != is.Enter || ir.Enter != is.Enter || ir.Exit <= ir.Enter {
			t.Errorf("Startall %d: isend %v..%v, irecv %v..%v; want the isend at the call's entry, the irecv spanning the call",
				i/2, is.Enter, is.Exit, ir.Enter, ir.Exit)
		}
	}
	rep, err := check.Check(src, check.Options{})
	if err != nil || !rep.OK() {
		t.Errorf("check: %v %v", err, rep.Problems)
	}
}
