package ktr

import (
	"fmt"
	"testing"

	"kairos/trace"
)

// TestSkipUnreplayed: a reader skimmed with trace.SkipUnreplayed gives
// the events a replay does nothing for (probes, timed local calls and
// computations) with their kind, amount, times and request as read
// whole, and every other event whole; the amounts the event before left
// (a receive of any size, -1 bytes) do not fail the reader's checks.
func TestSkipUnreplayed(t *testing.T) {
	for name, src := range map[string]*trace.Trace{
		"polls":      stencilPolls(3, 2, 100),
		"all fields": allFields(),
	} {
		s, err := Open(writeTemp(t, src, Options{ChunkSize: 4 << 10}))
		if err != nil {
			t.Fatal(err)
		}
		if err := sameThin(s, src); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		thin := 0
		for r := range src.NumRanks() {
			evs, _ := events(src, r)
			for _, e := range evs {
				if trace.Unreplayed(e.Kind, e.HasTime) {
					thin++
				}
			}
		}
		if thin == 0 {
			t.Errorf("%s: no event a replay does nothing for", name)
		}
	}
}

// TestDropUnreplayed: a timed trace untimed with its unreplayed events
// dropped (trace.UntimedSource.DropUnreplayed, the .ktr's read thin) gives
// the events of the same trace untimed whole, but those of Passive kinds,
// and the same recorded span and time in passive calls; also from the
// trace in memory, whose reader is read whole.
func TestDropUnreplayed(t *testing.T) {
	src := stencilPolls(3, 2, 100)
	s, err := Open(writeTemp(t, src, Options{ChunkSize: 4 << 10}))
	if err != nil {
		t.Fatal(err)
	}
	for name, in := range map[string]trace.Source{"ktr": s, "memory": src} {
		for _, shortest := range []trace.Time{0, 2_000_000} {
			all := trace.UntimedAbove(in, 1e9, shortest)
			dropped := trace.UntimedAbove(in, 1e9, shortest)
			dropped.DropUnreplayed()
			for r := range in.NumRanks() {
				a, errA := events(dropped, r)
				b, errB := events(all, r)
				if errA != nil || errB != nil {
					t.Fatalf("%s, rank %d: %v, %v", name, r, errA, errB)
				}
				var want []trace.Event
				for _, e := range b {
					if !trace.Passive(e.Kind) {
						want = append(want, e)
					}
				}
				if len(want) == len(b) {
					t.Fatalf("%s, rank %d: no passive event to drop", name, r)
				}
				if len(a) != len(want) {
					t.Fatalf("%s, shortest %d, rank %d: %d events, want %d", name, shortest, r, len(a), len(want))
				}
				for i := range a {
					if !sameEvent(&a[i], &want[i]) {
						t.Fatalf("%s, shortest %d, rank %d, event %d:\n%+v\nwant\n%+v", name, shortest, r, i, a[i], want[i])
					}
				}
			}
			ga, oka := dropped.Recorded()
			wa, okb := all.Recorded()
			gp, gn := dropped.Unreplayed()
			wp, wn := all.Unreplayed()
			if ga != wa || oka != okb || gp != wp || gn != wn {
				t.Errorf("%s: recorded %d %v, passive %d in %d ranks; want %d %v, %d in %d", name, ga, oka, gp, gn, wa, okb, wp, wn)
			}
		}
	}
}

// sameThin reads src's ranks skimmed with trace.SkipUnreplayed and
// returns the first error, or one saying where an event differs from
// whole's (tr, src read whole; nil where that read failed): the events a
// replay does nothing for in their kind, amount, times and request, the
// others whole.
func sameThin(src trace.Source, whole *trace.Trace) error {
	for r := range src.NumRanks() {
		var want []trace.Event
		if whole != nil {
			var err error
			if want, err = events(whole, r); err != nil {
				return err
			}
		}
		rd, err := src.OpenRank(r)
		if err != nil {
			return err
		}
		trace.Skim(rd, trace.SkipUnreplayed)
		for i := 0; rd.Next(); i++ {
			if whole == nil {
				continue
			}
			got, w := rd.Event(), &want[i]
			if trace.Unreplayed(w.Kind, w.HasTime) {
				if got.Kind != w.Kind || got.Compute != w.Compute || got.HasTime != w.HasTime ||
					got.Enter != w.Enter || got.Exit != w.Exit || got.Request != w.Request {
					return fmt.Errorf("rank %d, event %d: %+v, read whole %+v", r, i, *got, *w)
				}
			} else if !sameEvent(got, w) {
				return fmt.Errorf("rank %d, event %d: %+v, read whole %+v", r, i, *got, *w)
			}
		}
		err = rd.Err()
		rd.Close()
		if err != nil {
			return err
		}
	}
	return nil
}
