package sim

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"kairos/trace"
)

// TestSimEventCodec: the events a skip took and put back decode as they
// were, request ids included (from the ids' state at the first), and a
// period whose ids follow the last period's encodes as that one did; and
// the events decoded encode as they did (a skip compares encodings of
// events it put back).
func TestSimEventCodec(t *testing.T) {
	ev := func(k trace.Kind, f func(e *trace.Event)) trace.Event {
		e := trace.NewEvent(k)
		f(&e)
		return e
	}
	period := func(base uint64) []trace.Event {
		return []trace.Event{
			ev(trace.Compute, func(e *trace.Event) { e.Compute = 1e7 }),
			ev(trace.Irecv, func(e *trace.Event) { e.Partner, e.Tag, e.RecvBytes, e.Request = 3, 7, 8192, base+1 }),
			ev(trace.Isend, func(e *trace.Event) { e.Partner, e.Tag, e.SendBytes, e.Request = 5, 7, 8192, base+2 }),
			ev(trace.Wait, func(e *trace.Event) { e.Request = base + 1 }),
			ev(trace.Waitall, func(e *trace.Event) { e.Requests = []uint64{base + 2} }),
			ev(trace.Alltoallv, func(e *trace.Event) {
				e.SendCounts, e.RecvCounts, e.SendType, e.RecvType, e.Comm = []int64{1, -2, 3}, []int64{4, 5, 6}, 3, 4, 2
			}),
			ev(trace.SendRecv, func(e *trace.Event) { e.Partner, e.Source, e.SendBytes, e.RecvBytes = 1, 2, 10, 20 }),
			ev(trace.CommSplit, func(e *trace.Event) { e.NewComm = 9 }),
			ev(trace.Waitall, func(e *trace.Event) {}),
		}
	}
	for _, withIDs := range []bool{true, false} {
		var ids *reqIDs
		if withIDs {
			ids = &reqIDs{hi: 40}
		}
		start := ids.clone()
		var first, second []byte
		for _, e := range period(40) {
			first = appendSimEvent(first, &e, ids)
		}
		for _, e := range period(42) {
			second = appendSimEvent(second, &e, ids)
		}
		if string(first) != string(second) {
			t.Errorf("ids %v: the second period encodes as\n%x\nnot as the first\n%x", withIDs, second, first)
		}
		d := simDecoder{b: append(first, second...), ids: start}
		again := start.clone()
		var reencoded []byte
		for i, want := range append(period(40), period(42)...) {
			var got trace.Event
			d.event(&got)
			reencoded = appendSimEvent(reencoded, &got, again)
			if !withIDs {
				want.Request = 0
				if want.Requests != nil {
					want.Requests = []uint64{}
				}
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("ids %v: event %d decodes as %+v, want %+v", withIDs, i, got, want)
			}
		}
		if string(reencoded) != string(first)+string(second) {
			t.Errorf("ids %v: the events decoded encode as\n%x\nnot as\n%x", withIDs, reencoded, string(first)+string(second))
		}
		if len(d.b) != 0 {
			t.Errorf("ids %v: %d bytes left", withIDs, len(d.b))
		}
	}
}

// TestPeriodic: periodic finds a repetition exactly where the scan of
// every position for every period does: on sequences drawn from a few
// keys (many partial repeats), with a period planted, and without.
func TestPeriodic(t *testing.T) {
	quadratic := func(keys []uint64) bool {
		n := len(keys)
		for p := 1; 3*p <= n; p++ {
			run := 0
			for j := 0; j+p < n; j++ {
				if keys[j] != keys[j+p] {
					run = 0
				} else if run++; run >= max(2*p, repeatRun) {
					return true
				}
			}
		}
		return false
	}
	rng := rand.New(rand.NewPCG(1, 2))
	found := 0
	for i := range 3000 {
		n := 1 + rng.IntN(300)
		keys := make([]uint64, n)
		alphabet := 1 + rng.IntN(4)
		for j := range keys {
			keys[j] = uint64(rng.IntN(alphabet))
		}
		if i%3 == 0 { // plant a period somewhere, of some length
			p, at := 1+rng.IntN(20), rng.IntN(n)
			for j := at + p; j < min(n, at+p+rng.IntN(80)); j++ {
				keys[j] = keys[j-p]
			}
		}
		got, want := periodic(keys), quadratic(keys)
		if got != want {
			t.Fatalf("keys %v: periodic %v, the full scan %v", keys, got, want)
		}
		if want {
			found++
		}
	}
	if found < 300 || found > 2700 {
		t.Fatalf("%d of 3000 sequences repeat: the cases do not test both answers", found)
	}
}
