package report

import (
	"encoding/binary"
	"slices"
	"testing"

	"kairos/trace"
)

const us = trace.Time(1e6) // a microsecond in picoseconds

// timedTrace builds a trace from each rank's events as (kind, enter,
// exit) in microseconds.
func timedTrace(ranks ...[][3]int64) *trace.Trace {
	tr := trace.New(len(ranks), trace.NewMeta())
	for r, evs := range ranks {
		for _, ev := range evs {
			e := trace.NewEvent(trace.Kind(ev[0]))
			e.HasTime, e.Enter, e.Exit = true, trace.Time(ev[1])*us, trace.Time(ev[2])*us
			tr.Ranks[r].Append(&e)
		}
	}
	return tr
}

// segment is a decoded segment: its span in ticks from the run's start.
type segment struct {
	from, to int64
	code     byte
}

func decode(t *testing.T, l Lane) []segment {
	t.Helper()
	var out []segment
	pos, p := l.Start, l.Data
	for len(p) > 0 {
		d, n := binary.Uvarint(p)
		if n <= 0 || n >= len(p) {
			t.Fatalf("bad lane data %x", l.Data)
		}
		out = append(out, segment{pos, pos + int64(d), p[n]})
		pos += int64(d)
		p = p[n+1:]
	}
	if len(out) != l.Segments {
		t.Fatalf("%d segments decoded, lane says %d", len(out), l.Segments)
	}
	return out
}

// TestTimelineFullDetail: a trace small enough is drawn call by call; the
// time between calls is computation, the part of a call inside a span of
// waiting is waiting, and the totals by state are exact.
func TestTimelineFullDetail(t *testing.T) {
	c, w, ar := int64(trace.Compute), int64(trace.Waitall), int64(trace.Allreduce)
	is := int64(trace.Isend)
	tr := timedTrace(
		[][3]int64{{c, 0, 100}, {is, 100, 110}, {w, 110, 200}, {ar, 250, 300}}, // 50 µs between the waitall and the allreduce
		[][3]int64{{c, 10, 290}, {ar, 290, 300}},
	)
	waits := Waits{{{Start: 120 * us, End: 180 * us}, {Start: 250 * us, End: 290 * us}}}
	tl, err := BuildTimeline(tr, waits, DefaultTimelineBudget)
	if err != nil {
		t.Fatal(err)
	}
	if tl.Resolution != 0 || tl.Start != 0 || tl.End != 300*us {
		t.Fatalf("resolution %d, span %d-%d", tl.Resolution, tl.Start, tl.End)
	}
	tk := func(x int64) int64 { return int64(trace.Time(x) * us / tl.Tick) }
	want := []segment{
		{tk(0), tk(100), byte(trace.Compute)},
		{tk(100), tk(110), byte(trace.Isend)},
		{tk(110), tk(120), byte(trace.Waitall)},
		{tk(120), tk(180), byte(trace.Waitall) | codeWaiting},
		{tk(180), tk(200), byte(trace.Waitall)},
		{tk(200), tk(250), byte(trace.Compute)},
		{tk(250), tk(290), byte(trace.Allreduce) | codeWaiting},
		{tk(290), tk(300), byte(trace.Allreduce)},
	}
	if got := decode(t, tl.Lanes[0]); !slices.Equal(got, want) {
		t.Errorf("rank 0:\n got %v\nwant %v", got, want)
	}
	if got := decode(t, tl.Lanes[1]); len(got) != 2 || got[0].from != tk(10) {
		t.Errorf("rank 1: %v", got)
	}
	wantTotals := [numStates]trace.Time{Computation: 150 * us, PointToPoint: 40 * us, Collective: 10 * us, Waiting: 100 * us}
	if tl.Totals[0] != wantTotals {
		t.Errorf("rank 0's totals %v, want %v", tl.Totals[0], wantTotals)
	}
}

// TestTimelineDownsampled: with a budget too small for every call, spans
// shorter than the resolution merge into segments drawn in their dominant
// state, the data fits the budget, and the totals stay exact.
func TestTimelineDownsampled(t *testing.T) {
	c, is, w := int64(trace.Compute), int64(trace.Isend), int64(trace.Waitall)
	var evs [][3]int64
	for i := range int64(2000) {
		t0 := i * 100
		// 60 µs of computation, 10 µs of isend, 30 µs of waitall: every
		// 100 µs, the dominant state is computation.
		evs = append(evs, [3]int64{c, t0, t0 + 60}, [3]int64{is, t0 + 60, t0 + 70}, [3]int64{w, t0 + 70, t0 + 100})
	}
	tr := timedTrace(evs, evs)
	full, err := BuildTimeline(tr, nil, DefaultTimelineBudget)
	if err != nil {
		t.Fatal(err)
	}
	if full.Resolution != 0 || full.Lanes[0].Segments != 6000 {
		t.Fatalf("full detail: resolution %d, %d segments", full.Resolution, full.Lanes[0].Segments)
	}
	const budget = 2000
	tl, err := BuildTimeline(tr, nil, budget)
	if err != nil {
		t.Fatal(err)
	}
	if tl.Bytes() > budget || tl.Resolution <= 100*us {
		t.Fatalf("%d bytes for a budget of %d, resolution %d ps", tl.Bytes(), budget, tl.Resolution)
	}
	if tl.Totals[0] != full.Totals[0] {
		t.Errorf("totals %v, at full detail %v", tl.Totals[0], full.Totals[0])
	}
	segs := decode(t, tl.Lanes[0])
	if segs[len(segs)-1].to*int64(tl.Tick) < int64(199000*us) {
		t.Errorf("the lane ends at %d ticks", segs[len(segs)-1].to)
	}
	for _, s := range segs {
		if s.code != byte(trace.Compute)|codeMerged {
			t.Fatalf("segment %v: want merged computation", s)
		}
	}
}
