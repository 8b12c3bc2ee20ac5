package trace

import (
	"math"
	"strings"
	"testing"
)

func timedEvent(k Kind, enter, exit float64, f func(*Event)) Event {
	e := NewEvent(k)
	e.HasTime, e.Enter, e.Exit = true, FromSeconds(enter), FromSeconds(exit)
	if f != nil {
		f(&e)
	}
	return e
}

func TestUntimed(t *testing.T) {
	send := func(e *Event) { e.Partner, e.Tag, e.SendBytes = 1, 3, 800 }
	cases := []struct {
		name string
		in   []Event
		want []string
	}{
		{"gaps become compute", []Event{
			timedEvent(Init, 0, 0, nil),
			timedEvent(Send, 2e-3, 2.5e-3, send),
			timedEvent(Finalize, 3.5e-3, 3.6e-3, nil),
		}, []string{"init", "compute compute=2e+06", "send peer=1 tag=3 send=800", "compute compute=1e+06", "finalize"}},
		{"local calls and timed compute merge into the gap", []Event{
			timedEvent(Barrier, 0, 1e-3, nil),
			timedEvent(Local, 2e-3, 3e-3, nil),
			timedEvent(Compute, 3e-3, 5e-3, func(e *Event) { e.Compute = 7 }),
			timedEvent(Barrier, 6e-3, 7e-3, nil),
		}, []string{"barrier", "compute compute=5e+06", "barrier"}},
		{"no gap, no compute", []Event{
			timedEvent(Barrier, 0, 1e-3, nil),
			timedEvent(Barrier, 1e-3, 2e-3, nil),
		}, []string{"barrier", "barrier"}},
		{"trailing local call", []Event{
			timedEvent(Barrier, 0, 1e-3, nil),
			timedEvent(Local, 1e-3, 3e-3, nil),
		}, []string{"barrier", "compute compute=2e+06"}},
		{"overlap counts nothing", []Event{
			timedEvent(Barrier, 0, 2e-3, nil),
			timedEvent(Barrier, 1e-3, 3e-3, nil),
		}, []string{"barrier", "barrier"}},
		{"location stays before the compute", []Event{
			timedEvent(Barrier, 0, 1e-3, nil),
			NewEvent(Location),
			timedEvent(Barrier, 3e-3, 4e-3, nil),
		}, []string{"barrier", "location", "barrier"}},
		{"sleep keeps its duration", []Event{
			timedEvent(Sleep, 0, 0.25, nil),
		}, []string{"sleep compute=0.25"}},
		{"I/O keeps its duration, one-sided calls are not computation", []Event{
			timedEvent(Init, 0, 0, nil),
			timedEvent(WinCreate, 1e-3, 201e-3, func(e *Event) { e.Handle = 1 }),
			timedEvent(Put, 201e-3, 202e-3, func(e *Event) { e.Handle, e.Partner, e.SendBytes = 1, 1, 8192 }),
			timedEvent(FileWrite, 202e-3, 452e-3, func(e *Event) { e.Handle, e.SendBytes, e.Tag = 2, 4096, IOCollective }),
		}, []string{"init", "compute compute=1e+06", "win_create handle=1", "put target=1 handle=1 send=8192",
			"file_write handle=2 collective send=4096 compute=0.25"}},
		{"probes and communicators' creation do not split the computation", []Event{
			timedEvent(Barrier, 0, 1e-3, nil),
			timedEvent(Iprobe, 2e-3, 2.5e-3, nil),
			timedEvent(Iprobe, 3e-3, 3.5e-3, nil),
			timedEvent(CommDup, 4e-3, 5e-3, nil),
			timedEvent(Barrier, 6e-3, 7e-3, nil),
		}, []string{"barrier", "iprobe peer=-1 tag=0", "iprobe peer=-1 tag=0", "comm_dup", "compute compute=3e+06", "barrier"}},
		{"nothing before MPI_Init is replayed", []Event{
			timedEvent(Local, 0, 1e-3, nil),
			timedEvent(Local, 2e-3, 3e-3, nil),
			timedEvent(Init, 4e-3, 5e-3, nil),
			timedEvent(Barrier, 6e-3, 7e-3, nil),
		}, []string{"init", "compute compute=1e+06", "barrier"}},
		{"untimed events pass", []Event{
			timedEvent(Barrier, 0, 1e-3, nil),
			NewEvent(Barrier),
			timedEvent(Barrier, 5e-3, 6e-3, nil),
		}, []string{"barrier", "barrier", "barrier"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr := New(1, NewMeta())
			for i := range c.in {
				tr.Ranks[0].Append(&c.in[i])
			}
			src := Untimed(tr, 1e9)
			var got []string
			err := ForEach(src, func(_, _ int, e *Event) error {
				if e.HasTime || e.Enter != 0 || e.Exit != 0 {
					t.Errorf("event %v keeps its time", e)
				}
				got = append(got, e.String())
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(got, "; ") != strings.Join(c.want, "; ") {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
		})
	}
}

func TestUntimedMetaAndSpeed(t *testing.T) {
	tr := New(2, NewMeta())
	src := Untimed(tr, 2e9)
	if src.Meta().Attrs["untimed-speed"] != "2e+09" || tr.Meta().Attrs["untimed-speed"] != "" {
		t.Errorf("attrs %v / %v", src.Meta().Attrs, tr.Meta().Attrs)
	}
	if src.NumRanks() != 2 {
		t.Error("ranks")
	}
	for _, s := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		if _, err := Untimed(tr, s).OpenRank(0); err == nil {
			t.Errorf("speed %v accepted", s)
		}
	}
}

// TestUntimedAbove checks smpi/cpu-threshold's rule: a computation
// shorter than the threshold is dropped, one as long is kept.
func TestUntimedAbove(t *testing.T) {
	in := []Event{
		timedEvent(Barrier, 0, 1e-3, nil),
		timedEvent(Barrier, 1e-3+5e-7, 2e-3, nil), // 0.5 us
		timedEvent(Local, 2e-3, 2e-3+5e-7, nil),   // 0.5 us, then 0.5 us of gap
		timedEvent(Barrier, 2e-3+1e-6, 3e-3, nil),
		timedEvent(Local, 4e-3, 4e-3+2e-6, nil), // trailing: 1 ms + 2 us
	}
	cases := []struct {
		min  Time
		want string
	}{
		{0, "barrier; compute compute=500; barrier; compute compute=1000; barrier; compute compute=1.002e+06"},
		{FromSeconds(1e-6), "barrier; barrier; compute compute=1000; barrier; compute compute=1.002e+06"},
		{FromSeconds(2e-6), "barrier; barrier; barrier; compute compute=1.002e+06"},
		{math.MaxInt64, "barrier; barrier; barrier"},
	}
	for _, c := range cases {
		tr := New(1, NewMeta())
		for i := range in {
			tr.Ranks[0].Append(&in[i])
		}
		var got []string
		if err := ForEach(UntimedAbove(tr, 1e9, c.min), func(_, _ int, e *Event) error {
			got = append(got, e.String())
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if g := strings.Join(got, "; "); g != c.want {
			t.Errorf("min %v:\ngot  %s\nwant %s", c.min, g, c.want)
		}
	}
}

// TestUntimedAbovePassive: around calls a replay does nothing for, each
// computation is kept or dropped on its own, as SMPI drops bursts shorter
// than smpi/cpu-threshold, and those kept make one, as Kairos' tracer
// writes them.
func TestUntimedAbovePassive(t *testing.T) {
	tr := New(1, NewMeta())
	for _, e := range []Event{
		timedEvent(Barrier, 0, 1e-3, nil),
		timedEvent(Iprobe, 1e-3+5e-7, 1.1e-3, nil),     // 0.5 us: dropped
		timedEvent(Iprobe, 1.1e-3+3e-6, 1.2e-3, nil),   // 3 us: kept
		timedEvent(Deferred, 1.2e-3+4e-6, 1.3e-3, nil), // 4 us: kept
		timedEvent(Barrier, 1.3e-3+5e-7, 2e-3, nil),    // 0.5 us: dropped
	} {
		tr.Ranks[0].Append(&e)
	}
	var got []string
	if err := ForEach(UntimedAbove(tr, 1e9, FromSeconds(1e-6)), func(_, _ int, e *Event) error {
		got = append(got, e.String())
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want := "barrier; iprobe peer=-1 tag=0; iprobe peer=-1 tag=0; deferred; compute compute=7000; barrier"
	if g := strings.Join(got, "; "); g != want {
		t.Errorf("got  %s\nwant %s", g, want)
	}
}

// TestUntimedRecorded: the recorded run spans from the earliest start of
// a rank's first call to the latest end of its last, MPI_Init ending and
// MPI_Finalize starting them; untimed events count for nothing.
func TestUntimedRecorded(t *testing.T) {
	tr := New(5, NewMeta())
	for r, ev := range [][]Event{
		{timedEvent(Init, 1e-3, 1.5e-3, nil), timedEvent(Barrier, 2e-3, 4e-3, nil)},
		{timedEvent(Init, 0.5e-3, 1e-3, nil), timedEvent(Barrier, 3e-3, 3.5e-3, nil), timedEvent(Finalize, 3.5e-3, 9e-3, nil)},
		{NewEvent(Barrier)},
		{timedEvent(Barrier, 2e-3, 3e-3, nil), timedEvent(Finalize, 4.5e-3, 5e-3, nil)},
		{timedEvent(Local, 0, 0.2e-3, nil), timedEvent(Init, 0.5e-3, 1e-3, nil)}, // before MPI_Init: not the run's
	} {
		for i := range ev {
			tr.Ranks[r].Append(&ev[i])
		}
	}
	src := UntimedAbove(tr, 1e9, 0)
	if _, ok := src.Recorded(); ok {
		t.Error("a span before any rank was read")
	}
	if err := ForEach(src, func(_, _ int, _ *Event) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if d, ok := src.Recorded(); !ok || d != FromSeconds(3.5e-3) {
		t.Errorf("recorded %v (%v), want 1 ms to 4.5 ms", d, ok)
	}
}

// TestUntimedUnreplayed: the time in calls a replay gives no time
// (probes, Deferred flushes, communicators' creation) is summed over the
// ranks, from MPI_Init's return on, each rank once however often it is
// read; other calls and untimed ranks add nothing.
func TestUntimedUnreplayed(t *testing.T) {
	tr := New(3, NewMeta())
	for r, ev := range [][]Event{
		{timedEvent(Iprobe, 0, 1e-3, nil), timedEvent(Init, 1e-3, 2e-3, nil), // before MPI_Init: not the run's
			timedEvent(Deferred, 2e-3, 5e-3, nil), timedEvent(Barrier, 5e-3, 6e-3, nil),
			timedEvent(CommSplit, 6e-3, 7e-3, nil), timedEvent(Finalize, 7e-3, 8e-3, nil)},
		{timedEvent(Init, 0, 1e-3, nil), timedEvent(Iprobe, 1e-3, 1.5e-3, nil), timedEvent(Barrier, 2e-3, 6e-3, nil)},
		{NewEvent(Init), NewEvent(Deferred)},
	} {
		for i := range ev {
			tr.Ranks[r].Append(&ev[i])
		}
	}
	src := UntimedAbove(tr, 1e9, 0)
	for range 2 {
		if err := ForEach(src, func(_, _ int, _ *Event) error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
	if d, n := src.Unreplayed(); d != FromSeconds(4.5e-3) || n != 2 {
		t.Errorf("unreplayed %v over %d ranks, want 4.5 ms over 2", d, n)
	}
}

// BenchmarkUntimed reports timed events untimed per second.
func BenchmarkUntimed(b *testing.B) {
	tr := New(1, NewMeta())
	for i := 0; i < 1<<20; i++ {
		k := Barrier
		if i%2 == 1 {
			k = Local
		}
		e := timedEvent(k, float64(i)*1e-6, float64(i)*1e-6+5e-7, nil)
		tr.Ranks[0].Append(&e)
	}
	src := Untimed(tr, 1e9)
	for b.Loop() {
		if err := ForEach(src, func(_, _ int, _ *Event) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(tr.NumEvents())*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

func TestUntimedRoundFlops(t *testing.T) {
	tr := New(1, NewMeta())
	for _, e := range []Event{timedEvent(Barrier, 0, 1e-6, nil), timedEvent(Barrier, 121.53371e-6, 122e-6, nil)} {
		tr.Ranks[0].Append(&e)
	}
	var got []float64
	ForEach(Untimed(tr, 1e9), func(_, _ int, e *Event) error {
		if e.Kind == Compute {
			got = append(got, e.Compute)
		}
		return nil
	})
	if len(got) != 1 || got[0] != 120533.71 {
		t.Errorf("got %v, want [120533.71]", got)
	}
}
