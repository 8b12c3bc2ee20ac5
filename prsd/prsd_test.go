package prsd

import (
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"kairos/trace"
	"kairos/workload"
)

// gen returns a generated trace of kind with ranks ranks and iterations
// time steps, noisy and imbalanced.
func gen(t testing.TB, kind string, ranks, iterations int, noisy bool) trace.Source {
	t.Helper()
	p, err := workload.Defaults(kind)
	if err != nil {
		t.Fatal(err)
	}
	if ranks > 0 {
		p.Ranks, p.Grid = ranks, nil
	}
	if iterations > 0 {
		p.Iterations = iterations
	}
	if noisy {
		p.Imbalance, p.Noise = 0.2, 0.05
	}
	src, err := workload.New(kind, p)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// TestLossless: every generator's trace, noisy and imbalanced, compresses
// into one cluster and reads back call for call, parameter for
// parameter.
func TestLossless(t *testing.T) {
	for _, kind := range workload.Kinds() {
		for _, noisy := range []bool{false, true} {
			src := gen(t, kind, 0, 3, noisy)
			tr, err := Build(src, nil, DefaultOptions())
			if err != nil {
				t.Fatalf("%s: %v", kind, err)
			}
			if err := Verify(src, tr); err != nil {
				t.Errorf("%s (noisy %v): %v", kind, noisy, err)
			}
		}
	}
}

// TestTrailingComputation: a computation after a rank's last call reads
// back once, whichever way the rank ends.
func TestTrailingComputation(t *testing.T) {
	tr := trace.New(2, trace.NewMeta())
	for r := range 2 {
		for i := range 3 {
			c, b := trace.NewEvent(trace.Compute), trace.NewEvent(trace.Barrier)
			c.Compute = float64(100 * (i + 1))
			tr.Ranks[r].Append(&c)
			tr.Ranks[r].Append(&b)
		}
		last := trace.NewEvent(trace.Compute)
		last.Compute = 7e9
		tr.Ranks[r].Append(&last)
		if r == 1 {
			tr.Ranks[r].Append(&last)
		}
	}
	comp, err := Build(tr, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := Verify(tr, comp); err != nil {
		t.Error(err)
	}
}

// TestTimingBound: every instance of every computation reads back within
// the time error of its own, exactly with an error of 0.
func TestTimingBound(t *testing.T) {
	for _, kind := range []string{"stencil2d", "masterworker"} {
		src := gen(t, kind, 16, 20, true)
		for _, eps := range []float64{0, 0.01, 0.1} {
			tr, err := Build(src, nil, Options{TimeError: eps})
			if err != nil {
				t.Fatal(err)
			}
			worst := 0.0
			for r := range src.NumRanks() {
				own, back := computations(t, src, r), computations(t, tr, r)
				if len(own) != len(back) {
					t.Fatalf("%s, eps %g: rank %d has %d computations, %d read back", kind, eps, r, len(own), len(back))
				}
				for i, v := range own {
					worst = math.Max(worst, math.Abs(back[i]-v)/v)
				}
			}
			if worst > eps*(1+1e-9) {
				t.Errorf("%s, eps %g: a computation read back %.3g%% off", kind, eps, 100*worst)
			}
		}
	}
}

func computations(t *testing.T, src trace.Source, r int) []float64 {
	t.Helper()
	rd, err := src.OpenRank(r)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	var out []float64
	for rd.Next() {
		if e := rd.Event(); e.Kind == trace.Compute {
			out = append(out, e.Compute)
		}
	}
	if rd.Err() != nil {
		t.Fatal(rd.Err())
	}
	return out
}

// TestDumpStencil: a non-periodic 3×3 stencil of 4 iterations merged into
// one structure (golden): the loop of the time steps, the exchanges'
// calls with the ranklists of the ranks that make them, their end-points
// relative, one group per kind of rank.
func TestDumpStencil(t *testing.T) {
	p, _ := workload.Defaults("stencil2d")
	p.Grid, p.Ranks, p.Iterations, p.Periodic = []int{3, 3}, 0, 4, false
	src, err := workload.New("stencil2d", p)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := Build(src, nil, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := tr.Dump(&b); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "stencil3x3.txt")
	if os.Getenv("KAIROS_UPDATE_GOLDEN") == "1" {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if b.String() != string(want) {
		t.Errorf("dump differs from %s:\n%s", path, b.String())
	}
}

// TestAggregateCounts: an alltoallv instance whose counts all lie within
// the tolerance of their mean reads back with every count that mean (a
// multiple of the counts' greatest common divisor), within the tolerance
// of its own, the same for sender and receiver; within a tolerance
// smaller than the counts' spread nothing is aggregated.
func TestAggregateCounts(t *testing.T) {
	p, _ := workload.Defaults("is")
	p.Ranks, p.Iterations, p.Bytes = 16, 3, 64<<10
	src, err := workload.New("is", p)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		tol  float64
		want int
	}{{0.1, 3}, {0.01, 0}} {
		a, err := AggregateCounts(src, c.tol)
		if err != nil {
			t.Fatal(err)
		}
		if a.Instances != 3 || a.Aggregated != c.want || a.MaxError > c.tol {
			t.Errorf("tolerance %g: %d of %d instances aggregated (max error %g), want %d of 3", c.tol, a.Aggregated, a.Instances, a.MaxError, c.want)
		}
		agg := a.Source(src)
		for r := range src.NumRanks() {
			orig, _ := src.OpenRank(r)
			back, _ := agg.OpenRank(r)
			for orig.Next() && back.Next() {
				e, f := orig.Event(), back.Event()
				if e.Kind != trace.Alltoallv {
					continue
				}
				for i := range e.SendCounts {
					for _, pair := range [][2]int64{{e.SendCounts[i], f.SendCounts[i]}, {e.RecvCounts[i], f.RecvCounts[i]}} {
						if d := math.Abs(float64(pair[1]-pair[0])) / float64(pair[0]); d > c.tol || c.want == 0 && d != 0 || pair[1]%4 != 0 {
							t.Fatalf("tolerance %g rank %d: count %d read back as %d", c.tol, r, pair[0], pair[1])
						}
					}
				}
				if c.want > 0 && (f.SendCounts[0] != f.RecvCounts[len(f.RecvCounts)-1] || f.SendBytes != f.SendCounts[0]*int64(len(f.SendCounts))) {
					t.Fatalf("tolerance %g rank %d: counts %v and %v, %d bytes sent", c.tol, r, f.SendCounts, f.RecvCounts, f.SendBytes)
				}
			}
			orig.Close()
			back.Close()
		}
	}
	if _, err := AggregateCounts(src, 0); err == nil {
		t.Error("a tolerance of 0 accepted")
	}
}

// TestOneSidedHandles: one-sided calls keep their window (Event.Handle)
// through compression and merging, each rank reading back its own: two
// windows, each rank putting to the next through both, in fences.
func TestOneSidedHandles(t *testing.T) {
	const ranks = 4
	tr := trace.New(ranks, trace.NewMeta())
	for r := range int32(ranks) {
		add := func(k trace.Kind, win uint32, target int32, bytes int64) {
			e := trace.NewEvent(k)
			e.Handle, e.Partner, e.SendBytes = win, target, bytes
			tr.Ranks[r].Append(&e)
		}
		init := trace.NewEvent(trace.Init)
		tr.Ranks[r].Append(&init)
		add(trace.WinCreate, 7, trace.NoRank, 0)
		add(trace.WinCreate, 9+uint32(r%2), trace.NoRank, 0)
		for it := range 5 {
			add(trace.WinFence, 7, trace.NoRank, 0)
			add(trace.Put, 7, (r+1)%ranks, 1024*int64(it+1))
			add(trace.Get, 9+uint32(r%2), (r+ranks-1)%ranks, 64)
			add(trace.WinFence, 7, trace.NoRank, 0)
		}
		add(trace.WinFree, 9+uint32(r%2), trace.NoRank, 0)
		add(trace.WinFree, 7, trace.NoRank, 0)
		fin := trace.NewEvent(trace.Finalize)
		tr.Ranks[r].Append(&fin)
	}
	for _, groups := range [][][]int32{nil, {{0, 2}, {1, 3}}} {
		c, err := Build(tr, groups, DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		if err := Verify(tr, c); err != nil {
			t.Errorf("groups %v: %v", groups, err)
		}
	}
}

// TestAggregateCountsAllOrNone: the instances of one alltoallv call are
// aggregated all or none (a call kept at some instances and equal at
// others would fold worse than either); another call's are not affected.
func TestAggregateCountsAllOrNone(t *testing.T) {
	tr := trace.New(2, trace.NewMeta())
	for r := range 2 {
		for i, counts := range [][]int64{{100, 104}, {100, 130}, {96, 100}} {
			for site := range 2 {
				e := trace.NewEvent(trace.Alltoallv)
				e.CallSite = uint64(10 + site)
				c := counts[r]
				if site == 1 {
					c = 100 + int64(i+r) // within 2% of their mean at every instance
				}
				e.SendCounts, e.RecvCounts = []int64{c, c}, []int64{c, c}
				e.SendBytes, e.RecvBytes = 2*c, 2*c
				tr.Ranks[r].Append(&e)
			}
		}
	}
	a, err := AggregateCounts(tr, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	// Site 10: its second instance spreads 100 to 130; site 11 within 2%.
	if a.Instances != 6 || a.Aggregated != 3 {
		t.Errorf("%d of %d instances aggregated, want 3 of 6 (site 11's)", a.Aggregated, a.Instances)
	}
}

// TestCycledInstances: the calls of merged loops whose partners, tags and
// computation sites alternate read their instances from tables (LU's
// sweeps, periods of 2 to 120 instances); without the budget for them,
// from their series, event for event the same.
func TestCycledInstances(t *testing.T) {
	src := gen(t, "lu", 16, 12, true)
	read := func(budget int64) [][]trace.Event {
		comp, err := Build(src, nil, DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		comp.cycleBytes.Store(budget)
		if err := Verify(src, comp); err != nil {
			t.Fatalf("budget %d: %v", budget, err)
		}
		out := make([][]trace.Event, comp.NumRanks())
		for r := range out {
			out[r] = events(t, comp, r)
		}
		switch left := comp.cycleBytes.Load(); {
		case budget > 0 && left == budget:
			t.Errorf("no call read its instances from a table")
		case budget == 0 && left != 0:
			t.Errorf("tables made past the budget: %d bytes left", left)
		}
		return out
	}
	with, without := read(maxCycleBytes), read(0)
	for r := range with {
		if len(with[r]) != len(without[r]) {
			t.Fatalf("rank %d: %d events from the tables, %d from the series", r, len(with[r]), len(without[r]))
		}
		for j := range with[r] {
			a, b := &with[r][j], &without[r][j]
			if !sameCall(a, b) || a.Compute != b.Compute || a.Enter != b.Enter || a.Exit != b.Exit {
				t.Fatalf("rank %d, event %d: %v from the tables, %v from the series", r, j, a, b)
			}
		}
	}
}

// events returns rank r's events read from t, the reader closed.
func events(t *testing.T, src trace.Source, r int) []trace.Event {
	rd, err := src.OpenRank(r)
	if err != nil {
		t.Error(err)
		return nil
	}
	defer rd.Close()
	return readAll(t, rd)
}

// readAll returns the events rd reads.
func readAll(t *testing.T, rd trace.Reader) []trace.Event {
	var out []trace.Event
	for rd.Next() {
		e := *rd.Event()
		e.SendCounts, e.RecvCounts = slices.Clone(e.SendCounts), slices.Clone(e.RecvCounts)
		e.Requests = slices.Clone(e.Requests)
		out = append(out, e)
	}
	if err := rd.Err(); err != nil {
		t.Error(err)
	}
	return out
}

// TestConcurrentReaders: ranks read at once from several goroutines (as
// the signing and the replay do) give the events each reads alone, the
// templates they share made by whichever comes first.
func TestConcurrentReaders(t *testing.T) {
	src := gen(t, "cg", 16, 4, true)
	comp, err := Build(src, nil, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	got := make([][]trace.Event, 2*comp.NumRanks())
	done := make(chan bool)
	for i := range got {
		go func() { got[i] = events(t, comp, i%comp.NumRanks()); done <- true }()
	}
	for range got {
		<-done
	}
	for i, evs := range got {
		want := events(t, comp, i%comp.NumRanks())
		if len(evs) != len(want) {
			t.Fatalf("reader %d: %d events, alone %d", i, len(evs), len(want))
		}
		for j := range evs {
			a, b := &evs[j], &want[j]
			if !sameCall(a, b) || a.Compute != b.Compute || a.Enter != b.Enter || a.Exit != b.Exit {
				t.Fatalf("reader %d, event %d: %v, alone %v", i, j, &evs[j], &want[j])
			}
		}
	}
}

// TestClosedReadersState: ranks read one after the other, each reader
// closed before the next opens (taking the choices and cursors it left),
// give the events of readers that take none.
func TestClosedReadersState(t *testing.T) {
	src := gen(t, "cg", 16, 4, true)
	comp, err := Build(src, nil, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	want := make([][]trace.Event, comp.NumRanks())
	var open []trace.Reader // not closed: their state is left to none
	for r := range want {
		rd, err := comp.OpenRank(r)
		if err != nil {
			t.Fatal(err)
		}
		want[r] = readAll(t, rd)
		open = append(open, rd)
	}
	for range 2 {
		for r := comp.NumRanks() - 1; r >= 0; r-- {
			got := events(t, comp, r)
			if len(got) != len(want[r]) {
				t.Fatalf("rank %d: %d events, %d from a fresh reader", r, len(got), len(want[r]))
			}
			for j := range got {
				a, b := &got[j], &want[r][j]
				if !sameCall(a, b) || a.Compute != b.Compute || a.Enter != b.Enter || a.Exit != b.Exit {
					t.Fatalf("rank %d, event %d: %v, from a fresh reader %v", r, j, a, b)
				}
			}
		}
	}
	for _, rd := range open {
		rd.Close()
	}
}

// TestClusterFinishedEarly: a cluster is finished as its last member is
// added, its merge structure dropped, while the others wait for theirs;
// the trace is the one Build makes.
func TestClusterFinishedEarly(t *testing.T) {
	src := gen(t, "stencil2d", 16, 3, true)
	groups := [][]int32{{8, 9, 10, 11, 12, 13, 14, 15}, {0, 1, 2, 3, 4, 5, 6, 7}}
	want, err := Build(src, groups, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewBuilder(src.Meta(), 16, groups, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	for r := range 16 {
		rd, err := src.OpenRank(r)
		if err != nil {
			t.Fatal(err)
		}
		err = b.Add(r, rd)
		rd.Close()
		if err != nil {
			t.Fatal(err)
		}
		if r != 7 {
			continue
		}
		if c := b.clusters[1]; c.nodes == nil || c.items != nil || c.cache != nil {
			t.Errorf("the complete cluster keeps its merge structure (%d items) or has no nodes (%d)", len(c.items), len(c.nodes))
		}
		if c := b.clusters[0]; c.nodes != nil {
			t.Errorf("the cluster with members to come is finished")
		}
	}
	got, err := b.Trace()
	if err != nil {
		t.Fatal(err)
	}
	if err := Verify(src, got); err != nil {
		t.Fatal(err)
	}
	if g, w := dump(t, got), dump(t, want); g != w {
		t.Errorf("the trace differs from Build's:\n%s\nwant:\n%s", g, w)
	}
}

// TestFoldsLittle: a rank whose calls fold into nothing (every call its
// own site) makes its cluster keep its events, read back as they are,
// whether it is the cluster's first member or not, and is not read to
// its end, nor folded with its parameters where foldsLittleAhead finds
// it out; a member after it is not read at all; a cluster that folds
// keeps its loops, and its members after the first are not read ahead.
func TestFoldsLittle(t *testing.T) {
	const ranks, calls = 6, 4 * minItems
	little := []bool{true, false, false, true, false, false}
	tr := trace.New(ranks, trace.Meta{})
	for r := range ranks {
		for i := range calls {
			e := trace.Event{Kind: trace.Barrier, CallSite: 1}
			if little[r] {
				e.CallSite = uint64(i + 1)
			}
			tr.Ranks[r].Append(&e)
		}
	}
	counted := &countingSource{Source: tr}
	got, err := Build(counted, [][]int32{{0, 1}, {2, 3}, {4, 5}}, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	for c, cl := range got.Clusters {
		if events := cl.Events != nil; events != (c < 2) || events == (cl.Items != nil) {
			t.Errorf("cluster %d: %d items, events %v", c, len(cl.Items), cl.Events)
		}
	}
	// A call goes in as the next event is read: the check at the
	// 2·minItems-th call stops after 2·minItems+1 events, read once:
	// foldsLittleAhead's (the fold reads none of them), or, for a rank
	// after a member of its cluster that folded, the fold's; a
	// cluster's first rank that folds is read by foldsLittleAhead to
	// aheadWell calls, where it folds well, then by the fold.
	well := int(aheadWell) + 1
	want := [ranks]int{calls/2 + 1, 0, calls + well, calls/2 + 1, calls + well, calls}
	if counted.read != want {
		t.Errorf("events read of each rank: %v, want %v", counted.read, want)
	}
	if err := Verify(tr, got); err != nil {
		t.Fatal(err)
	}
}

// TestPollingFoldsLittle: a rank that polls a varying number of times
// before each receive (Boost.MPI's and mpi4py's receives: 1.2 GB merged
// for 222,000 items) folds into about an item for two calls; its cluster
// keeps its events, and it is read no further than the check at the
// first power of two of calls past 2·minItems.
func TestPollingFoldsLittle(t *testing.T) {
	const calls = 40000
	tr := trace.New(1, trace.Meta{})
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < calls; {
		for range rng.IntN(4) {
			e := trace.NewEvent(trace.Iprobe)
			e.CallSite = 1
			tr.Ranks[0].Append(&e)
			i++
		}
		e := trace.NewEvent(trace.Recv)
		e.CallSite, e.Partner, e.RecvBytes = 2, 0, 8
		tr.Ranks[0].Append(&e)
		i++
	}
	counted := &countingSource{Source: tr}
	got, err := Build(counted, nil, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if got.Clusters[0].Events == nil {
		t.Errorf("the polling rank keeps %d items, not its events", len(got.Clusters[0].Items))
	}
	if n := counted.read[0]; n > 4*minItems+1 {
		t.Errorf("%d events read, want at most %d", n, 4*minItems+1)
	}
	if err := Verify(tr, got); err != nil {
		t.Fatal(err)
	}
}

// countingSource counts the events read of each rank.
// dump returns t's Dump.
func dump(tb testing.TB, t *Trace) string {
	var b strings.Builder
	if err := t.Dump(&b); err != nil {
		tb.Fatal(err)
	}
	return b.String()
}

type countingSource struct {
	trace.Source
	read [6]int
}

func (s *countingSource) OpenRank(r int) (trace.Reader, error) {
	rd, err := s.Source.OpenRank(r)
	return &countingReader{rd, &s.read[r]}, err
}

type countingReader struct {
	trace.Reader
	n *int
}

func (r *countingReader) Next() bool {
	ok := r.Reader.Next()
	if ok {
		*r.n++
	}
	return ok
}

// TestRankKeyFoldsLittle: ranks whose calls fold into nothing are keyed
// by a digest of their calls: equal where they make the same calls to the
// same relative partners, different where one parameter differs; a rank
// that folds keeps its structure's key.
func TestRankKeyFoldsLittle(t *testing.T) {
	const ranks, calls = 4, 4 * minItems
	tr := trace.New(ranks, trace.Meta{})
	for r := range int32(ranks) {
		for i := range calls {
			e := trace.NewEvent(trace.Send)
			e.Partner, e.Tag, e.SendBytes, e.CallSite = (r+1)%ranks, 5, 8, uint64(i+1)
			if r == 2 && i == calls-3 {
				e.Tag = 6
			}
			if r == 3 {
				e.CallSite = 1
			}
			tr.Ranks[r].Append(&e)
		}
	}
	fam := NewFamilies(tr.Meta(), ranks)
	keys := make([]string, ranks)
	for r := range ranks {
		var err error
		if keys[r], err = RankKey(tr.Ranks[r].Reader(), r, ranks, fam); err != nil {
			t.Fatal(err)
		}
	}
	if keys[0] != keys[1] || !strings.HasPrefix(keys[0], "h") || len(keys[0]) != 33 {
		t.Errorf("ranks 0 and 1, the same calls to their next rank: keys %q and %q, want one digest", keys[0], keys[1])
	}
	if keys[2] == keys[0] {
		t.Errorf("rank 2, one tag changed, has rank 0's key")
	}
	if strings.HasPrefix(keys[3], "h") || len(keys[3]) > 100 {
		t.Errorf("rank 3, one loop, is keyed by %d bytes: %q", len(keys[3]), keys[3][:min(len(keys[3]), 40)])
	}
}

// TestClocksTogether: each rank's clock reads back within a level step
// of its own, each gap within the time error of its own. Ranks whose
// times differ by less than the time error but more than their noise
// (MPI_Init's 1.5 s, 0.05% apart a rank; a loop's computations, 0.1%
// apart) keep their own, where sharing them had set the clocks
// milliseconds apart (messages take microseconds, and `slow` found waits
// that never happened); and a noisy loop's levels take back each other's
// errors, those of the eight calls of its body together (past its first
// iterations; within half a step a call in them), where the nearest
// levels' drifted 40 to 90 µs over 500 iterations, and each call's
// taking back its own errors 25 µs.
func TestClocksTogether(t *testing.T) {
	const ranks, iterations, body = 8, 500, 8
	for _, noise := range []float64{1e-4, 0.05} {
		rng := rand.New(rand.NewPCG(7, 8))
		tr := trace.New(ranks, trace.NewMeta())
		for r := range ranks {
			init := trace.NewEvent(trace.Init)
			init.HasTime, init.Exit = true, trace.Time(1.5e12*(1+5e-4*float64(r)))
			tr.Ranks[r].Append(&init)
			at := init.Exit
			for i := range iterations * body {
				e := trace.NewEvent(trace.Barrier)
				e.CallSite = uint64(1 + i%body)
				gap := 1e9 * (1 + 1e-3*float64(r%3)) * (1 + noise*(rng.Float64()-0.5)) // 1 ms, in ps
				e.HasTime, e.Enter = true, at+trace.Time(gap)
				e.Exit = e.Enter + 1e7
				at = e.Exit
				tr.Ranks[r].Append(&e)
			}
		}
		comp, err := Build(tr, nil, DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		if len(comp.Clusters) != 1 || comp.Clusters[0].Events != nil {
			t.Fatalf("noise %g: want one cluster kept as loops, got %d", noise, len(comp.Clusters))
		}
		eps := DefaultOptions().TimeError
		for r := range ranks {
			a, b := openRank(t, tr, r), openRank(t, comp, r)
			worst, worstGap := 0.0, 0.0
			var endX, endY trace.Time
			idx, early := 0, 0.0
			for a.Next() && b.Next() {
				x, y := a.Event(), b.Event()
				if idx > 20*body { // a call takes back its own errors till it is sure to read its levels
					worst = max(worst, math.Abs(float64(y.Enter-x.Enter)), math.Abs(float64(y.Exit-x.Exit)))
				}
				early = max(early, math.Abs(float64(y.Enter-x.Enter)), math.Abs(float64(y.Exit-x.Exit)))
				idx++
				if gap := float64(x.Enter - endX); x.Kind != trace.Init {
					worstGap = max(worstGap, (math.Abs(float64(y.Enter-endY)-gap)-timeTolerance)/gap)
				}
				endX, endY = x.Exit, y.Exit
			}
			if worst > 1e7 || early > body*1e7/2 {
				t.Errorf("noise %g, rank %d: a time %.3g µs off (%.3g µs in the first iterations), want at most 10 µs (a level step; half a step a call of the body in the first)",
					noise, r, worst/1e6, early/1e6)
			}
			if worstGap > eps {
				t.Errorf("noise %g, rank %d: a gap %.3g%% off its own, want at most %g%%", noise, r, 100*worstGap, 100*eps)
			}
		}
	}
}

func openRank(t *testing.T, src trace.Source, r int) trace.Reader {
	t.Helper()
	rd, err := src.OpenRank(r)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rd.Close() })
	return rd
}

// TestQuickRelativeSources reads a ring's exchanges, whose partners and
// sources alternate between the rank's neighbours at one call site, from
// a quick template (the table's instances, their relative partners and
// sources decoded per rank), and compares them with the trace's.
func TestQuickRelativeSources(t *testing.T) {
	const ranks, steps = 8, 40
	tr := trace.New(ranks, trace.NewMeta())
	for r := range int32(ranks) {
		add := func(e trace.Event) { tr.Ranks[r].Append(&e) }
		add(trace.NewEvent(trace.Init))
		for i := range steps {
			e := trace.NewEvent(trace.SendRecv)
			e.CallSite, e.SendBytes, e.RecvBytes = 7, 64, 64
			e.Partner, e.Source = (r+1)%ranks, (r+ranks-1)%ranks
			if i%2 == 1 {
				e.Partner, e.Source = e.Source, e.Partner
			}
			add(e)
			c := trace.NewEvent(trace.Compute)
			c.Compute = 1e6
			add(c)
		}
		add(trace.NewEvent(trace.Finalize))
	}
	c, err := Build(tr, nil, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if err := Verify(tr, c); err != nil {
		t.Fatal(err)
	}
	quick := false
	var find func(items []*Node)
	find = func(items []*Node) {
		for _, n := range items {
			find(n.Body)
			for i := range n.tmpls {
				if tp := n.tmpls[i].Load(); tp != nil && tp.quick && slices.Contains(tp.cyc.fields, Source) {
					quick = true
				}
			}
		}
	}
	find(c.Clusters[0].Items)
	if !quick {
		t.Error("no quick template with relative sources: the test reads none")
	}
}

// TestLoopOfNothing reads a loop of 3 iterations whose one call rank 1
// does not execute: an error for rank 1, not a loop that spins, and the
// calls for rank 0.
func TestLoopOfNothing(t *testing.T) {
	call := &Node{Kind: trace.Barrier, Site: 1, Ranks: NewRanklist([]int32{0})}
	loop := &Node{Body: []*Node{call}, Counts: []Counts{{Series: Const(3, 1)}}}
	c, err := New(trace.NewMeta(), 2, []Cluster{{Ranks: NewRanklist([]int32{0, 1}), Items: []*Node{loop}}}, Header{})
	if err != nil {
		t.Fatal(err)
	}
	if evs := events(t, c, 0); len(evs) != 3 {
		t.Errorf("rank 0: %d events, want 3", len(evs))
	}
	rd, err := c.OpenRank(1)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	for rd.Next() {
		t.Fatal("rank 1 reads an event")
	}
	if err := rd.Err(); !errors.Is(err, ErrCorrupt) {
		t.Errorf("rank 1: %v, want %v", err, ErrCorrupt)
	}
}

// TestChoiceSize: a rank's choice at a node, which the walk reads at
// every event (a quick call's table with it), fits in a cache line.
func TestChoiceSize(t *testing.T) {
	if n := unsafe.Sizeof(choice{}); n > 64 {
		t.Errorf("a choice takes %d bytes, more than a cache line", n)
	}
}

// TestUnrolledLoops: loops of a few iterations, as many at each instance,
// are walked as lists of their iterations; a loop whose count varies, one
// of more items than unrollMax and one whose body the rank does not call
// stay loops; the calls read are the same.
func TestUnrolledLoops(t *testing.T) {
	call := func(site uint64, ranks ...int32) *Node {
		n := &Node{Kind: trace.Barrier, Site: site}
		if ranks != nil {
			n.Ranks = NewRanklist(ranks)
		}
		return n
	}
	loop := func(s Series, body ...*Node) *Node { return &Node{Body: body, Counts: []Counts{{Series: s}}} }
	var vary seriesBuilder
	for _, v := range []int64{1, 3, 2} {
		vary.add(v)
	}
	a, b, c, d, e := call(1), call(2), call(3, 0), call(4), call(5, 1)
	twice := loop(Const(2, 3), a)     // a a
	varying := loop(vary.finish(), b) // 1, 3, then 2 b
	pairs := loop(Const(3, 3), c, d)  // rank 0: c d c d c d; rank 1: d d d
	long := loop(Const(5, 3), d, d)   // 10 items
	others := loop(Const(2, 3), e)    // rank 1's only
	others.Ranks = NewRanklist([]int32{1})
	outer := loop(Const(3, 1), twice, varying, pairs, long, others)
	tr, err := New(trace.NewMeta(), 2, []Cluster{{Ranks: NewRanklist([]int32{0, 1}), Items: []*Node{outer}}}, Header{})
	if err != nil {
		t.Fatal(err)
	}
	for r, want := range [][]uint64{
		{1, 1, 2, 3, 4, 3, 4, 3, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 1, 1, 2, 2, 2, 3, 4, 3, 4, 3, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 1, 1, 2, 2, 3, 4, 3, 4, 3, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4},
		{1, 1, 2, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 5, 5, 1, 1, 2, 2, 2, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 5, 5, 1, 1, 2, 2, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 5, 5},
	} {
		rd, err := tr.OpenRank(r)
		if err != nil {
			t.Fatal(err)
		}
		var got []uint64
		for _, ev := range readAll(t, rd) {
			got = append(got, ev.CallSite)
		}
		if !slices.Equal(got, want) {
			t.Errorf("rank %d reads sites %v, want %v", r, got, want)
		}
		// The outer loop's body as walked: the short constant loops
		// unrolled, the others kept.
		walked := outer.Body
		if i := rd.(*reader).choices[outer.index].body; i > 0 {
			walked = nil
			for _, idx := range rd.(*reader).bodies[i-1] {
				walked = append(walked, rd.(*reader).cl.byIndex[idx])
			}
		}
		wantBody := map[int][]*Node{
			0: {a, a, varying, c, d, c, d, c, d, long},
			1: {a, a, varying, d, d, d, long, e, e},
		}[r]
		if !slices.Equal(walked, wantBody) {
			t.Errorf("rank %d walks the outer loop's body as %d items, want %d", r, len(walked), len(wantBody))
		}
		rd.Close()
	}
}

// TestPresentMask: an instance's mask of fields not at their default is
// the fields whose scalar value differs from defaultValue's, or whose
// vector is not nil, on random instances of every kind, each field at its
// default, at another value or at an edge (-0 and NaN flops, a timing's
// flops, empty vectors).
func TestPresentMask(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	pick := func(vals ...int64) int64 { return vals[rng.IntN(len(vals))] }
	for range 20000 {
		r := rawCall{e: trace.NewEvent(trace.Kind(rng.IntN(int(trace.NumKinds)))), req: pick(requestNone, 0, 3)}
		e := &r.e
		e.Partner, e.Source = int32(pick(int64(trace.NoRank), 0, 5)), int32(pick(int64(trace.NoRank), 0, 7))
		e.Tag, e.Comm, e.NewComm = int32(pick(0, 1, -2)), uint32(pick(0, 2)), uint32(pick(0, 4))
		e.SendBytes, e.RecvBytes = pick(0, 8), pick(0, 16)
		e.SendType, e.RecvType = trace.Datatype(pick(int64(trace.DefaultType), 0, 3)), trace.Datatype(pick(int64(trace.DefaultType), 1))
		e.Compute = []float64{0, math.Copysign(0, -1), math.NaN(), 2.5}[rng.IntN(4)]
		e.Region, e.Op, e.Handle = uint32(pick(0, 9)), trace.Op(pick(0, 1)), uint32(pick(0, 3))
		e.HasTime = rng.IntN(2) == 0
		r.compSite, r.compReg = uint64(pick(0, 11)), uint32(pick(0, 12))
		vec := func() []int64 { return [][]int64{nil, {}, {1, 2}}[rng.IntN(3)] }
		r.reqs, e.SendCounts, e.RecvCounts = vec(), vec(), vec()
		var want uint32
		for f := range NumFields {
			present := r.scalar(f) != defaultValue(f)
			if f.IsVector() {
				present = r.vector(f) != nil
			}
			if present {
				want |= 1 << f
			}
		}
		if got := r.presentMask(); got != want {
			t.Fatalf("%v, request %d, site %d, region %d: mask %b, want %b", e, r.req, r.compSite, r.compReg, got, want)
		}
	}
}
