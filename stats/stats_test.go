package stats

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"kairos/trace"
)

func event(k trace.Kind, partner int32, send int64, f func(*trace.Event)) trace.Event {
	e := trace.NewEvent(k)
	e.Partner, e.SendBytes = partner, send
	if f != nil {
		f(&e)
	}
	return e
}

// sample is a 3-rank trace: 0 sends 100 B twice to 1 and 10 B to 2, 1
// sends 50 B to 0, everyone computes and enters an allreduce of 8 B with
// 5 flops and a bcast of 64 B from rank 2.
func sample(timed bool) *trace.Trace {
	ranks := [][]trace.Event{
		{event(trace.Send, 1, 100, nil), event(trace.Isend, 1, 100, nil), event(trace.Send, 2, 10, nil), event(trace.Recv, 1, 0, nil)},
		{event(trace.Recv, 0, 0, nil), event(trace.Recv, 0, 0, nil), event(trace.SendRecv, 0, 50, nil)},
		{event(trace.Compute, trace.NoRank, 0, func(e *trace.Event) { e.Compute = 1e6 }), event(trace.Recv, 0, 0, nil)},
	}
	t := trace.New(3, trace.NewMeta())
	for r, evs := range ranks {
		evs = append(evs,
			event(trace.Allreduce, trace.NoRank, 8, func(e *trace.Event) { e.Compute = 5 }),
			event(trace.Bcast, 2, 64, nil))
		at := trace.Time(0)
		for i := range evs {
			if timed {
				evs[i].HasTime = true
				evs[i].Enter, evs[i].Exit = at+1e9, at+3e9 // 1 ms gap, 2 ms call
				at = evs[i].Exit
			}
			t.Ranks[r].Append(&evs[i])
		}
	}
	return t
}

func TestCollect(t *testing.T) {
	s, err := Collect(sample(false), 2)
	if err != nil {
		t.Fatal(err)
	}
	if s.Ranks != 3 || s.Events != 15 || s.Timed {
		t.Errorf("ranks %d events %d timed %v", s.Ranks, s.Events, s.Timed)
	}
	if s.P2PMessages != 4 || s.P2PBytes != 260 {
		t.Errorf("p2p %d msgs %d bytes", s.P2PMessages, s.P2PBytes)
	}
	// allreduce 3 x 8 B, bcast only the root's 64 B.
	if s.Collectives != 6 || s.CollectiveBytes != 88 || s.Flops != 1e6+15 {
		t.Errorf("collectives %d bytes %d flops %v", s.Collectives, s.CollectiveBytes, s.Flops)
	}
	wantKinds := map[string]int64{"send": 2, "isend": 1, "recv": 4, "sendRecv": 1, "compute": 1, "allreduce": 3, "bcast": 3}
	if !reflect.DeepEqual(s.EventsByKind, wantKinds) {
		t.Errorf("kinds %v", s.EventsByKind)
	}
	wantMatrix := []Pair{{0, 1, 2, 200}, {0, 2, 1, 10}, {1, 0, 1, 50}}
	if !reflect.DeepEqual(s.Matrix, wantMatrix) {
		t.Errorf("matrix %v", s.Matrix)
	}
	if want := []Pair{{0, 1, 2, 200}, {1, 0, 1, 50}}; !reflect.DeepEqual(s.TopPairs, want) {
		t.Errorf("top pairs %v", s.TopPairs)
	}
	r0 := s.PerRank[0]
	if r0.MessagesSent != 3 || r0.BytesSent != 210 || r0.MessagesRecvd != 1 || r0.BytesRecvd != 50 || r0.Flops != 5 {
		t.Errorf("rank 0 %+v", r0)
	}
	if want := []Partner{{1, 3, 250}, {2, 1, 10}}; !reflect.DeepEqual(r0.TopPartners, want) {
		t.Errorf("rank 0 partners %v", r0.TopPartners)
	}
	if r2 := s.PerRank[2]; r2.CollBytesSent != 72 || r2.BytesRecvd != 10 || r2.Flops != 1e6+5 {
		t.Errorf("rank 2 %+v", r2)
	}
}

func TestCollectTimed(t *testing.T) {
	s, err := Collect(sample(true), 0)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Timed {
		t.Fatal("not timed")
	}
	// Rank 2: compute, recv, allreduce, bcast, each 2 ms after a 1 ms gap;
	// 3 MPI calls; from the first entry (1 ms) to the last exit (12 ms).
	r2 := s.PerRank[2]
	if !near(r2.MPISeconds, 6e-3) || !near(r2.TotalSeconds, 11e-3) {
		t.Errorf("rank 2 mpi %v total %v", r2.MPISeconds, r2.TotalSeconds)
	}
}

func near(a, b float64) bool { return a-b < 1e-12 && b-a < 1e-12 }

func TestWriteMatrix(t *testing.T) {
	s, err := Collect(sample(false), 0)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := s.WriteMatrix(&b, Count, true); err != nil {
		t.Fatal(err)
	}
	if want := "src\\dst,0,1,2\n0,0,2,1\n1,1,0,0\n2,0,0,0\n"; b.String() != want {
		t.Errorf("count CSV:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	if err := s.WriteMatrix(&b, Bytes, false); err != nil {
		t.Fatal(err)
	}
	if want := "  src\\dst   0    1   2\n        0   0  200  10\n        1  50    0   0\n        2   0    0   0\n"; b.String() != want {
		t.Errorf("bytes table:\n%q\nwant:\n%q", b.String(), want)
	}
	b.Reset()
	if err := s.WriteRanksCSV(&b); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(b.String(), "\n"); len(lines) != 5 || lines[1] != "0,6,3,210,1,50,2,8,5" {
		t.Errorf("ranks CSV:\n%s", b.String())
	}
}

func TestSparseMatrixTable(t *testing.T) {
	n := DenseLimit + 1
	tr := trace.New(n, trace.NewMeta())
	e := event(trace.Send, 0, 7, nil)
	tr.Ranks[n-1].Append(&e)
	s, err := Collect(tr, 0)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := s.WriteMatrix(&b, Bytes, false); err != nil {
		t.Fatal(err)
	}
	if want := "  src  dst  bytes\n   32    0      7\n"; b.String() != want {
		t.Errorf("got %q want %q", b.String(), want)
	}
}

func TestJSONStable(t *testing.T) {
	s, err := Collect(sample(false), 0)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"ranks":3`, `"events_by_kind"`, `"p2p_bytes":260`, `"per_rank"`, `"matrix":[{"src":0,"dst":1,"messages":2,"bytes":200}`, `"top_partners"`} {
		if !strings.Contains(string(b), key) {
			t.Errorf("JSON lacks %s: %s", key, b)
		}
	}
	var back Stats
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(&back, s) {
		t.Errorf("round trip differs: %v", err)
	}
}

func TestParseMeasure(t *testing.T) {
	if m, err := ParseMeasure("count"); err != nil || m != Count {
		t.Error(m, err)
	}
	if _, err := ParseMeasure("flops"); err == nil {
		t.Error("flops accepted")
	}
}

// BenchmarkCollect reports events summarised per second on a 64-rank
// ring-and-allreduce trace of about a million events.
func BenchmarkCollect(b *testing.B) {
	const n, iters = 64, 4000
	tr := trace.New(n, trace.NewMeta())
	for r := 0; r < n; r++ {
		for i := 0; i < iters; i++ {
			for _, e := range []trace.Event{
				event(trace.Isend, int32((r+1)%n), 4096, nil),
				event(trace.Recv, int32((r+n-1)%n), 0, nil),
				event(trace.Compute, trace.NoRank, 0, func(e *trace.Event) { e.Compute = 1e6 }),
				event(trace.Allreduce, trace.NoRank, 8, nil),
			} {
				tr.Ranks[r].Append(&e)
			}
		}
	}
	for b.Loop() {
		if _, err := Collect(tr, 0); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(tr.NumEvents())*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// TestProfile: the flat profile of the timed sample, every call 2 ms.
func TestProfile(t *testing.T) {
	s, err := Collect(sample(true), 2)
	if err != nil {
		t.Fatal(err)
	}
	const ms = 1e-3
	want := []CallTime{
		{"recv", 4, Spread{8 * ms, 2 * ms, 8 * ms / 3, 4 * ms, 1}},
		{"allreduce", 3, Spread{6 * ms, 2 * ms, 2 * ms, 2 * ms, 0}},
		{"bcast", 3, Spread{6 * ms, 2 * ms, 2 * ms, 2 * ms, 0}},
		{"send", 2, Spread{4 * ms, 0, 4 * ms / 3, 4 * ms, 0}},
		{"isend", 1, Spread{2 * ms, 0, 2 * ms / 3, 2 * ms, 0}},
		{"sendRecv", 1, Spread{2 * ms, 0, 2 * ms / 3, 2 * ms, 1}},
	}
	if len(s.Profile) != len(want) {
		t.Fatalf("profile %+v, want %+v", s.Profile, want)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }
	for i, w := range want {
		g := s.Profile[i]
		if g.Call != w.Call || g.Calls != w.Calls || g.MaxRank != w.MaxRank || !near(g.Seconds, w.Seconds) ||
			!near(g.MinRankSeconds, w.MinRankSeconds) || !near(g.MeanRankSeconds, w.MeanRankSeconds) || !near(g.MaxRankSeconds, w.MaxRankSeconds) {
			t.Errorf("line %d: %+v, want %+v", i, g, w)
		}
	}
	if u, _ := Collect(sample(false), 2); len(u.Profile) != 0 {
		t.Errorf("untimed trace has a profile: %+v", u.Profile)
	}
	var b bytes.Buffer
	if err := s.WriteSummary(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "time in MPI calls (0.028000 s of 0.042000 s over all ranks, 66.7%)") {
		t.Errorf("summary:\n%s", b.String())
	}
}

// TestProfileNamed: calls the trace names (an MPI_Iprobe read as a
// deferred event, an MPI_Comm_rank as a local one) have lines of their
// own, with the ranks that never made them at 0; a deferred call without
// a name stays under its kind.
func TestProfileNamed(t *testing.T) {
	meta := trace.NewMeta()
	iprobe, commRank := meta.AddRegion("MPI_Iprobe", 0), meta.AddRegion("MPI_Comm_rank", 0)
	named := func(k trace.Kind, region uint32) trace.Event {
		return event(k, trace.NoRank, 0, func(e *trace.Event) { e.Region = region })
	}
	tr := trace.New(3, meta)
	for r, evs := range [][]trace.Event{
		{named(trace.Local, commRank)},
		{named(trace.Deferred, iprobe), named(trace.Deferred, iprobe)},
		{named(trace.Deferred, iprobe), event(trace.Deferred, trace.NoRank, 0, nil)},
	} {
		at := trace.Time(0)
		for i := range evs {
			evs[i].HasTime, evs[i].Enter, evs[i].Exit = true, at, at+2e9 // 2 ms
			at = evs[i].Exit
			tr.Ranks[r].Append(&evs[i])
		}
	}
	s, err := Collect(tr, 2)
	if err != nil {
		t.Fatal(err)
	}
	const ms = 1e-3
	want := []CallTime{
		{"MPI_Iprobe", 3, Spread{6 * ms, 0, 2 * ms, 4 * ms, 1}},
		{"MPI_Comm_rank", 1, Spread{2 * ms, 0, 2 * ms / 3, 2 * ms, 0}},
		{"deferred", 1, Spread{2 * ms, 0, 2 * ms / 3, 2 * ms, 2}},
	}
	if len(s.Profile) != len(want) {
		t.Fatalf("profile %+v, want %+v", s.Profile, want)
	}
	for i, w := range want {
		g := s.Profile[i]
		if g.Call != w.Call || g.Calls != w.Calls || g.MaxRank != w.MaxRank || math.Abs(g.Seconds-w.Seconds) > 1e-12 ||
			math.Abs(g.MinRankSeconds-w.MinRankSeconds) > 1e-12 || math.Abs(g.MeanRankSeconds-w.MeanRankSeconds) > 1e-12 ||
			math.Abs(g.MaxRankSeconds-w.MaxRankSeconds) > 1e-12 {
			t.Errorf("line %d: %+v, want %+v", i, g, w)
		}
	}
}

// TestNamedCounts: the calls the trace names are counted by name, those
// in a row at once (a polling loop's), whatever interrupts them.
func TestNamedCounts(t *testing.T) {
	meta := trace.NewMeta()
	a, b := meta.AddRegion("MPI_Testany", 0), meta.AddRegion("MPI_Iprobe", 0)
	tr := trace.New(2, meta)
	for r, regions := range [][]uint32{{a, a, b, a, 0, a}, {b, b}} {
		for _, region := range regions {
			e := event(trace.Deferred, trace.NoRank, 0, func(e *trace.Event) { e.Region = region })
			tr.Ranks[r].Append(&e)
		}
	}
	s, err := Collect(tr, 2)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]int64{"MPI_Testany": 4, "MPI_Iprobe": 3, "deferred": 1}; !reflect.DeepEqual(s.EventsByKind, want) {
		t.Errorf("events by kind %v, want %v", s.EventsByKind, want)
	}
}

// TestNamedByRegion: the events whose kind stands for several MPI
// functions (local, deferred and MPI-IO calls) are counted and timed
// under the function their region names, as the call paths name them;
// those without a name under their kind, and the others under their kind
// whatever their region.
func TestNamedByRegion(t *testing.T) {
	for _, c := range []struct {
		kind   trace.Kind
		region string // "" for none
		want   string
	}{
		{trace.File, "MPI_File_set_view", "MPI_File_set_view"},
		{trace.FileWrite, "MPI_File_write_at_all", "MPI_File_write_at_all"},
		{trace.FileRead, "MPI_File_read_ordered", "MPI_File_read_ordered"},
		{trace.FileOpen, "MPI_File_open", "MPI_File_open"},
		{trace.FileWait, "MPI_File_write_all_end", "MPI_File_write_all_end"},
		{trace.Local, "MPI_Comm_rank", "MPI_Comm_rank"},
		{trace.File, "", "file"},
		{trace.FileWrite, "solver", "file_write"}, // a user region: no MPI name
		{trace.Barrier, "MPI_Barrier", "barrier"},
	} {
		meta := trace.NewMeta()
		e := event(c.kind, trace.NoRank, 0, func(e *trace.Event) { e.HasTime, e.Enter, e.Exit = true, 0, 1e9 })
		if c.region != "" {
			e.Region = meta.AddRegion(c.region, 0)
		}
		tr := trace.New(1, meta)
		tr.Ranks[0].Append(&e)
		s, err := Collect(tr, 0)
		if err != nil {
			t.Fatal(err)
		}
		if s.EventsByKind[c.want] != 1 || len(s.Profile) != 1 || s.Profile[0].Call != c.want {
			t.Errorf("%s in %q: events by kind %v, profile %+v; want one %q", c.kind, c.region, s.EventsByKind, s.Profile, c.want)
		}
	}
}

// TestCommCreationNotCollective: the calls that make communicators are
// under events by kind, not among the collective calls, which DUMPI's
// traces (where they are collectives) and OTF2's (where they are MPI time)
// of one run then count alike (FFTW's: 1,420 against 1,236).
func TestCommCreationNotCollective(t *testing.T) {
	tr := trace.New(2, trace.NewMeta())
	for r := range 2 {
		for _, k := range []trace.Kind{trace.CommDup, trace.CommSplit, trace.Barrier} {
			e := event(k, trace.NoRank, 0, nil)
			tr.Ranks[r].Append(&e)
		}
	}
	s, err := Collect(tr, 2)
	if err != nil {
		t.Fatal(err)
	}
	if s.Collectives != 2 || s.Events != 6 {
		t.Errorf("%d collective calls of %d events, want 2 of 6", s.Collectives, s.Events)
	}
}

// TestSizes: the point-to-point messages by size, in powers of two (the
// sample's 100 B twice, 50 B and 10 B; then the bins' edges), and their
// text.
func TestSizes(t *testing.T) {
	s, err := Collect(sample(false), 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []SizeBin{{8, 16, 1, 10}, {32, 64, 1, 50}, {64, 128, 2, 200}}
	if !reflect.DeepEqual(s.Sizes, want) {
		t.Errorf("sample: %v, want %v", s.Sizes, want)
	}
	var h sizeHist
	for _, b := range []int64{0, 1, 2, 3, 4095, 4096, math.MaxInt64} {
		h.add(b)
	}
	var got []string
	for _, b := range h.bins() {
		got = append(got, b.Range()+" "+itoa(b.Messages)+" "+itoa(b.Bytes))
	}
	wantText := []string{"0 1 0", "[1 B, 2 B) 1 1", "[2 B, 4 B) 2 5", "[2 KiB, 4 KiB) 1 4095", "[4 KiB, 8 KiB) 1 4096",
		"[4 EiB, 8 EiB) 1 9223372036854775807"}
	if !reflect.DeepEqual(got, wantText) {
		t.Errorf("bins %q, want %q", got, wantText)
	}
	var out bytes.Buffer
	if err := s.WriteText(&out, false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "point-to-point messages by size\n") || !strings.Contains(out.String(), "[64 B, 128 B)         2  50.0%    200  76.9%") {
		t.Errorf("text:\n%s", out.String())
	}
}

// TestPaths: the call-path profile of a timed trace. The time between
// two calls is computation at the second call's caller; an MPI function
// the trace names (MPI_Comm_rank, a deferred call) is at its region's
// parent; a rank that never spent time at a line counts as 0.
func TestPaths(t *testing.T) {
	meta := trace.NewMeta()
	mainR := meta.AddRegion("main", 0)
	solve := meta.AddRegion("solve", mainR)
	commRank := meta.AddRegion("MPI_Comm_rank", mainR)
	const ms = trace.Time(1e9)
	timed := func(k trace.Kind, region uint32, enter, exit trace.Time) trace.Event {
		e := trace.NewEvent(k)
		e.Region, e.HasTime, e.Enter, e.Exit = region, true, enter*ms, exit*ms
		e.Partner = 1 - int32(enter%2) // any partner: the profile reads no message
		return e
	}
	ranks := [][]trace.Event{
		{timed(trace.Send, solve, 1, 3), timed(trace.Deferred, commRank, 4, 5)},
		{timed(trace.Recv, solve, 0, 3), timed(trace.Sleep, solve, 3, 4)},
	}
	tr := trace.New(2, meta)
	for r, evs := range ranks {
		for i := range evs {
			tr.Ranks[r].Append(&evs[i])
		}
	}
	s, err := Collect(tr, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range s.Paths {
		got = append(got, fmt.Sprintf("%s@%s %d %.0f %.1f/%.1f/%.0f r%d", p.Activity, p.Path, p.Calls, p.Seconds*1e3,
			p.MinRankSeconds*1e3, p.MeanRankSeconds*1e3, p.MaxRankSeconds*1e3, p.MaxRank))
	}
	want := []string{
		"MPI_Recv@main/solve 1 3 0.0/1.5/3 r1",
		"MPI_Send@main/solve 1 2 0.0/1.0/2 r0",
		"MPI_Comm_rank@main 1 1 0.0/0.5/1 r0",
		"computation@main 0 1 0.0/0.5/1 r0",
		"computation@main/solve 1 1 0.0/0.5/1 r1",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("paths:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if im := s.Paths[0].Imbalance(); math.Abs(im-1.5e-3) > 1e-12 {
		t.Errorf("MPI_Recv's imbalance %g s, want its most loaded rank's 3 ms over the mean 1.5 ms", im)
	}
}
