package report

import (
	"bytes"
	"encoding/binary"
	"slices"
	"testing"

	"kairos/internal/testenv"
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
	if c := tl.Calls; c[trace.Waitall][0] != 30*us || c[byte(trace.Waitall)|codeWaiting][0] != 60*us || c[trace.Compute][1] != 280*us || c[trace.Isend][1] != 0 {
		t.Errorf("time by call: waitall %v, waiting in it %v, rank 1's computation %v", c[trace.Waitall], c[byte(trace.Waitall)|codeWaiting], c[trace.Compute])
	}
	r := &Report{Timeline: tl}
	rows := r.CallRows()
	if len(rows) != 4 || rows[0].Call != "computation" || rows[0].Total != "430.0 µs" || rows[1].Call != "MPI_Waitall" || rows[1].Waiting != "60.0 µs (67%)" {
		t.Errorf("call rows %+v", rows)
	}
}

// TestCallRowsNamed: a timed trace's deferred and local calls that name
// their MPI function (an archive's MPI_Testany polls) are rows of their
// own, with their waiting part, and the rest of them "other MPI calls":
// HPCC's archive showed 592 s of "other MPI calls", 554 s of them
// MPI_Testany, its costliest call, and had no row of it. So are MPI-IO
// calls, by their function (MPI_File_write_at_all), or by their kind
// where their region names none; a File call so is among the others (it
// was a row of no name). An MPI_Waitall of no request (deferred) is in
// the row of the MPI_Waitall calls (CloverLeaf's archive had two rows
// "MPI_Waitall").
func TestCallRowsNamed(t *testing.T) {
	tr := timedTrace(
		[][3]int64{{int64(trace.Compute), 0, 10}, {int64(trace.Deferred), 10, 60}, {int64(trace.Deferred), 60, 70}, {int64(trace.Local), 70, 75},
			{int64(trace.FileWrite), 75, 85}, {int64(trace.FileWrite), 85, 90}, {int64(trace.File), 90, 92},
			{int64(trace.Waitall), 92, 100}, {int64(trace.Deferred), 100, 102}},
	)
	testany := tr.Meta().AddRegion("MPI_Testany", 0)
	user := tr.Meta().AddRegion("solve", 0)
	writeAtAll := tr.Meta().AddRegion("MPI_File_write_at_all", 0)
	evs := []trace.Event{}
	rd := tr.Ranks[0].Reader()
	for rd.Next() {
		evs = append(evs, *rd.Event())
	}
	evs[1].Region, evs[2].Region, evs[3].Region = testany, user, testany
	evs[4].Region, evs[5].Region, evs[6].Region = writeAtAll, user, user
	evs[8].Region = tr.Meta().AddRegion("MPI_Waitall", 0) // of no request: deferred
	tr.Ranks[0] = trace.Rank{}
	for i := range evs {
		tr.Ranks[0].Append(&evs[i])
	}
	tl, err := BuildTimeline(tr, Waits{{{Start: 20 * us, End: 30 * us}}}, DefaultTimelineBudget)
	if err != nil {
		t.Fatal(err)
	}
	rows := (&Report{Timeline: tl}).CallRows()
	var got []string
	for _, r := range rows {
		got = append(got, r.Call+" "+r.Total+" "+r.Waiting)
	}
	want := []string{"MPI_Testany 55.0 µs 10.0 µs (18%)", "other MPI calls 12.0 µs ", "MPI_File_write_at_all 10.0 µs ",
		"MPI_Waitall 10.0 µs ", "computation 10.0 µs ", "MPI_File_write 5.0 µs "}
	if !slices.Equal(got, want) {
		t.Errorf("call rows %q, want %q", got, want)
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

// recordedStencil builds a timed trace as a tracer records a 2-D halo
// exchange on an 8-wide torus: every iteration each rank computes (with
// noise), posts an irecv and an isend to each of its four neighbours,
// calls that take time, and waits in a waitall until its neighbours'
// messages are in (a late sender makes it wait); an allreduce every tenth
// iteration. Every call has a duration, unlike a simulated run's.
func recordedStencil(ranks, iterations int) *trace.Trace {
	tr := trace.New(ranks, trace.NewMeta())
	now := make([]trace.Time, ranks)
	sent := make([][4]trace.Time, ranks) // when rank r posted its isend to each neighbour
	seed := uint64(1)
	noise := func() trace.Time {
		seed = seed*6364136223846793005 + 1442695040888963407
		return trace.Time(seed>>40) % (200 * us)
	}
	neighbours := func(r int) [4]int {
		return [4]int{(r + 1) % ranks, (r + ranks - 1) % ranks, (r + 8) % ranks, (r + ranks - 8) % ranks}
	}
	add := func(r int, e trace.Event, d trace.Time) {
		e.HasTime, e.Enter, e.Exit = true, now[r], now[r]+d
		tr.Ranks[r].Append(&e)
		now[r] += d
	}
	for it := range iterations {
		for r := range ranks {
			add(r, trace.NewEvent(trace.Compute), 1000*us+noise())
			for i, nb := range neighbours(r) {
				recv := trace.NewEvent(trace.Irecv)
				recv.Partner, recv.RecvBytes, recv.Request = int32(nb), 8192, uint64(2*i+1)
				add(r, recv, 2*us)
				send := trace.NewEvent(trace.Isend)
				send.Partner, send.SendBytes, send.Request = int32(nb), 8192, uint64(2*i+2)
				sent[r][i] = now[r]
				add(r, send, 5*us)
			}
		}
		for r := range ranks {
			arrive := now[r]
			for i, nb := range neighbours(r) {
				// nb's message to r is its isend to its neighbour i^1 (the
				// opposite direction).
				arrive = max(arrive, sent[nb][i^1]+20*us)
			}
			add(r, trace.NewEvent(trace.Waitall), arrive-now[r]+us)
		}
		if it%10 == 9 {
			last := slices.Max(now)
			for r := range ranks {
				e := trace.NewEvent(trace.Allreduce)
				e.SendBytes, e.RecvBytes = 8, 8
				add(r, e, last-now[r]+30*us)
			}
		}
	}
	return tr
}

// TestTimelineSize: a recorded 64-rank stencil whose calls all have
// durations fits the page's budget, down-sampled where it must be, with
// every iteration's computation still apart from its waitall. With
// KAIROS_LONG, the report of 1,000 iterations (646,400 calls) is under 5
// MB; without, 200 iterations against a budget a third of their full
// detail.
func TestTimelineSize(t *testing.T) {
	if testenv.Long() {
		tr := recordedStencil(64, 1000)
		r := Build(tr, Options{Name: "recorded.ktr", Speed: 1e9})
		if r.TimelineErr != nil || r.PatternsErr != nil || r.CausesErr != nil {
			t.Fatal(r.TimelineErr, r.PatternsErr, r.CausesErr)
		}
		if !r.Check.OK() || r.Causes.Waiting == 0 {
			t.Fatalf("the recorded stencil: %d errors, %g s of waiting", r.Check.Errors, r.Causes.Waiting)
		}
		var b bytes.Buffer
		if err := r.WriteHTML(&b); err != nil {
			t.Fatal(err)
		}
		if b.Len() > 5e6 {
			t.Errorf("the page of %d calls takes %d bytes", tr.NumEvents(), b.Len())
		}
		t.Logf("%d calls, %.3f s of waiting: timeline %d bytes (resolution %d ps), page %d bytes", tr.NumEvents(), r.Causes.Waiting,
			r.Timeline.Bytes(), r.Timeline.Resolution, b.Len())
	}
	const iterations = 200
	tr := recordedStencil(64, iterations)
	full, err := BuildTimeline(tr, nil, DefaultTimelineBudget)
	if err != nil {
		t.Fatal(err)
	}
	budget := full.Bytes() / 3
	tl, err := BuildTimeline(tr, nil, budget)
	if err != nil {
		t.Fatal(err)
	}
	if full.Resolution != 0 || tl.Bytes() > budget || tl.Resolution == 0 {
		t.Errorf("full detail: resolution %d; %d bytes for a budget of %d, resolution %d ps", full.Resolution, tl.Bytes(), budget, tl.Resolution)
	}
	for r, l := range tl.Lanes {
		if l.Segments < 2*iterations {
			t.Errorf("rank %d: %d segments for %d iterations", r, l.Segments, iterations)
		}
		if tl.Totals[r] != full.Totals[r] {
			t.Errorf("rank %d: totals %v, at full detail %v", r, tl.Totals[r], full.Totals[r])
		}
	}
}
