package workload_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"kairos/check"
	"kairos/trace"
	"kairos/workload"
)

// sizes are the rank counts every generator is tested at, where its
// constraints allow.
var sizes = []int{2, 4, 9, 16, 64}

// small returns kind's defaults at n ranks with few iterations, so that
// every kind is fast to check, changed by edits; ok is false if kind
// rejects n ranks.
func small(t testing.TB, kind string, n int, edits ...func(*workload.Params)) (trace.Source, bool) {
	t.Helper()
	p, err := workload.Defaults(kind)
	if err != nil {
		t.Fatal(err)
	}
	p.Ranks, p.Grid = n, nil
	p.Iterations = min(p.Iterations, 3)
	p.Tasks = min(p.Tasks, 40)
	p.Planes = min(p.Planes, 6)
	p.Inner = min(p.Inner, 4)
	p.Imbalance, p.Noise = 0.5, 0.2
	for _, edit := range edits {
		edit(&p)
	}
	src, err := workload.New(kind, p)
	if err != nil {
		if strings.Contains(err.Error(), "needs") {
			return nil, false
		}
		t.Fatalf("%s at %d ranks: %v", kind, n, err)
	}
	return src, true
}

// TestCheckAllKinds: every generator, at several sizes, passes kairos check
// and replays without deadlock under eager and under rendezvous sends (and
// under SimGrid's mix of the two).
func TestCheckAllKinds(t *testing.T) {
	for _, kind := range workload.Kinds() {
		tested := 0
		for _, n := range sizes {
			src, ok := small(t, kind, n)
			if !ok {
				continue
			}
			tested++
			for _, proto := range []check.Protocol{check.Eager, check.Rendezvous, check.SimGrid} {
				t.Run(fmt.Sprintf("%s/%d/%v", kind, n, proto), func(t *testing.T) {
					rep, err := check.Check(src, check.Options{Protocol: proto})
					if err != nil {
						t.Fatal(err)
					}
					if !rep.OK() || rep.Warnings > 0 || rep.Deadlock {
						for _, p := range rep.Problems {
							t.Error(p)
						}
						t.Fatalf("%d errors, %d warnings, deadlock %v", rep.Errors, rep.Warnings, rep.Deadlock)
					}
				})
			}
		}
		if tested < 2 {
			t.Errorf("%s: only %d of the sizes %v tested", kind, tested, sizes)
		}
	}
}

// TestCheckVariants checks the parameter variants that change the
// communication structure: non-periodic stencils, explicit grids of
// extent 1 and uneven extents, more workers than tasks, pingpong sizes that
// are not powers of two.
func TestCheckVariants(t *testing.T) {
	cases := []struct {
		kind string
		edit func(p *workload.Params)
	}{
		{"stencil2d", func(p *workload.Params) { p.Grid, p.Periodic = []int{3, 5}, false }},
		{"stencil2d", func(p *workload.Params) { p.Grid = []int{2, 1} }},
		{"stencil2d", func(p *workload.Params) { p.Grid = []int{1, 1} }},
		{"stencil3d", func(p *workload.Params) { p.Grid, p.Periodic = []int{3, 2, 2}, false }},
		{"stencil3d", func(p *workload.Params) { p.Grid = []int{2, 2, 2} }},
		{"sweep", func(p *workload.Params) { p.Grid = []int{5, 3} }},
		{"lu", func(p *workload.Params) { p.Grid = []int{1, 4} }},
		{"mg", func(p *workload.Params) { p.Grid, p.Periodic = []int{2, 3, 1}, false }},
		{"masterworker", func(p *workload.Params) { p.Ranks, p.Tasks = 9, 3 }},
		{"pingpong", func(p *workload.Params) { p.Ranks, p.Bytes = 6, 1000 }},
		{"cg", func(p *workload.Params) { p.Ranks = 8 }},
		{"bt", func(p *workload.Params) { p.Ranks = 1 }},
	}
	for _, c := range cases {
		p, _ := workload.Defaults(c.kind)
		p.Ranks, p.Grid = 0, nil
		p.Iterations, p.Planes, p.Inner = 2, 5, 2
		c.edit(&p)
		src, err := workload.New(c.kind, p)
		if err != nil {
			t.Errorf("%s %+v: %v", c.kind, p, err)
			continue
		}
		for _, proto := range []check.Protocol{check.Eager, check.Rendezvous} {
			rep, err := check.Check(src, check.Options{Protocol: proto})
			if err != nil {
				t.Fatal(err)
			}
			if !rep.OK() || rep.Warnings > 0 {
				t.Errorf("%s %v under %v: %v", c.kind, p.Grid, proto, rep.Problems)
			}
		}
	}
}

// count returns the number of events of src, by kind.
func count(t testing.TB, src trace.Source) (int, map[trace.Kind]int) {
	t.Helper()
	n, kinds := 0, map[trace.Kind]int{}
	err := trace.ForEach(src, func(_, _ int, e *trace.Event) error {
		n++
		kinds[e.Kind]++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n, kinds
}

// TestStencil2DDefault: the default stencil2d is the benchmark's 64-rank
// periodic 8x8 stencil of 1000 iterations with an allreduce every 10,
// 646,528 events.
func TestStencil2DDefault(t *testing.T) {
	p, _ := workload.Defaults("stencil2d")
	if p.Ranks != 64 || len(p.Grid) != 2 || p.Grid[0] != 8 || p.Grid[1] != 8 ||
		p.Iterations != 1000 || p.AllreduceEvery != 10 || !p.Periodic {
		t.Fatalf("defaults changed: %+v", p)
	}
	src, err := workload.New("stencil2d", p)
	if err != nil {
		t.Fatal(err)
	}
	n, kinds := count(t, src)
	if n != 646528 {
		t.Errorf("%d events, want 646,528", n)
	}
	want := map[trace.Kind]int{
		trace.Init: 64, trace.Finalize: 64, trace.Compute: 64000,
		trace.Irecv: 256000, trace.Isend: 256000, trace.Waitall: 64000, trace.Allreduce: 6400,
	}
	for k, w := range want {
		if kinds[k] != w {
			t.Errorf("%d %v events, want %d", kinds[k], k, w)
		}
	}
}

// TestStencil2DShape checks one rank's sequence in a non-periodic grid:
// a corner has 2 neighbours, an interior rank 4, with direction tags.
func TestStencil2DShape(t *testing.T) {
	p, _ := workload.Defaults("stencil2d")
	p.Grid, p.Ranks, p.Periodic, p.Iterations, p.AllreduceEvery = []int{3, 3}, 0, false, 2, 2
	src, err := workload.New("stencil2d", p)
	if err != nil {
		t.Fatal(err)
	}
	got := func(r int) string {
		var b []string
		rd, _ := src.OpenRank(r)
		for rd.Next() {
			e := rd.Event()
			s := e.Kind.String()
			if e.Kind.IsPointToPoint() {
				s += fmt.Sprintf("(%d,%d,#%d)", e.Partner, e.Tag, e.Request)
			}
			b = append(b, s)
		}
		return strings.Join(b, " ")
	}
	// Rank 0 is at (0,0): its neighbours are 1 (+x) and 3 (+y). Messages
	// are tagged with the direction they travel: 0 -x, 1 +x, 2 -y, 3 +y.
	want0 := "init " +
		"compute irecv(1,0,#1) irecv(3,2,#2) isend(1,1,#3) isend(3,3,#4) waitall " +
		"compute irecv(1,0,#5) irecv(3,2,#6) isend(1,1,#7) isend(3,3,#8) waitall allreduce finalize"
	if g := got(0); g != want0 {
		t.Errorf("rank 0:\n got %s\nwant %s", g, want0)
	}
	want4 := "init compute irecv(3,1,#1) irecv(5,0,#2) irecv(1,3,#3) irecv(7,2,#4) " +
		"isend(3,0,#5) isend(5,1,#6) isend(1,2,#7) isend(7,3,#8) waitall"
	if g := got(4); !strings.HasPrefix(g, want4) {
		t.Errorf("rank 4:\n got %s\nwant prefix %s", g, want4)
	}
}

// TestEventCounts pins the event counts of small instances of every kind,
// so that a change of structure is deliberate.
func TestEventCounts(t *testing.T) {
	cases := []struct {
		kind string
		n    int
		want int
	}{
		// 2 + iterations x (compute, 2 p2p) + 1 allreduce, per rank.
		{"ring", 4, 4 * (2 + 3*3)},
		// 64 x (2 + 3 x (1 + 6 + 6 + 1)) (no allreduce in 3 iterations).
		{"stencil3d", 64, 64 * (2 + 3*14)},
		// 21 sizes 1..1M, each a barrier + 3 x 2.
		{"pingpong", 2, 2 * (2 + 21*(1+3*2))},
	}
	for _, c := range cases {
		src, _ := small(t, c.kind, c.n)
		if n, _ := count(t, src); n != c.want {
			t.Errorf("%s at %d ranks: %d events, want %d", c.kind, c.n, n, c.want)
		}
	}
}

// TestEventShape: every rank starts with Init and ends with Finalize, every
// event has a call site and a region, request ids count 1, 2, 3 ... per
// rank, and the call-path tree starts at main.
func TestEventShape(t *testing.T) {
	for _, kind := range workload.Kinds() {
		src, ok := small(t, kind, 16)
		if !ok {
			src, _ = small(t, kind, 2)
		}
		meta := src.Meta()
		for r := 0; r < src.NumRanks(); r++ {
			rd, err := src.OpenRank(r)
			if err != nil {
				t.Fatal(err)
			}
			var first, last trace.Kind
			nextRq := uint64(1)
			for i := 0; rd.Next(); i++ {
				e := rd.Event()
				if i == 0 {
					first = e.Kind
				}
				last = e.Kind
				if e.CallSite == 0 || e.Region == 0 {
					t.Fatalf("%s rank %d event %d %v: call site %x region %d", kind, r, i, e, e.CallSite, e.Region)
				}
				if path := meta.CallPath(e.Region); path[0] != "main" {
					t.Fatalf("%s: call path %v", kind, path)
				}
				if e.Kind.IsNonBlocking() {
					if e.Request != nextRq {
						t.Fatalf("%s rank %d event %d: request %d, want %d", kind, r, i, e.Request, nextRq)
					}
					nextRq++
				}
			}
			if err := rd.Err(); err != nil {
				t.Fatal(err)
			}
			rd.Close()
			if first != trace.Init || last != trace.Finalize {
				t.Errorf("%s rank %d: starts with %v, ends with %v", kind, r, first, last)
			}
		}
		if meta.Attrs["generator"] != "kairos gen "+kind || meta.Attrs["parameters"] == "" {
			t.Errorf("%s: attrs %v", kind, meta.Attrs)
		}
	}
}

// TestCallSitesDistinct: different call sites have different signatures,
// and one call site has one region.
func TestCallSitesDistinct(t *testing.T) {
	src, _ := small(t, "lu", 16)
	regionOf := map[uint64]uint32{}
	err := trace.ForEach(src, func(r, i int, e *trace.Event) error {
		if reg, ok := regionOf[e.CallSite]; ok && reg != e.Region {
			return fmt.Errorf("call site %x in regions %d and %d", e.CallSite, reg, e.Region)
		}
		regionOf[e.CallSite] = e.Region
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// init, finalize, 2 exchange_1 calls, blts, buts, update, 3 exchange_3
	// calls, rhs, l2norm.
	if len(regionOf) != 12 {
		t.Errorf("%d call sites, want 12", len(regionOf))
	}
}

// events returns every event of src, rank after rank.
func events(t testing.TB, src trace.Source) []trace.Event {
	t.Helper()
	var all []trace.Event
	if err := trace.ForEach(src, func(_, _ int, e *trace.Event) error {
		all = append(all, e.Clone())
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return all
}

// TestDeterminism: the same parameters and seed give the same events, in
// any order of opening the ranks; another seed changes only the compute
// volumes (and, for masterworker, which worker gets which task).
func TestDeterminism(t *testing.T) {
	for _, kind := range workload.Kinds() {
		p, _ := workload.Defaults(kind)
		p.Iterations = min(p.Iterations, 3)
		p.Tasks = min(p.Tasks, 40)
		p.Noise, p.Imbalance = 0.3, 0.5
		a, err := workload.New(kind, p)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := workload.New(kind, p)
		ea, eb := events(t, a), events(t, b)
		if !equal(ea, eb, true) {
			t.Errorf("%s: same seed, different events", kind)
		}
		// Reading the last rank first gives the same events.
		last := b.NumRanks() - 1
		rd, _ := b.OpenRank(last)
		var lastEvents []trace.Event
		for rd.Next() {
			lastEvents = append(lastEvents, rd.Event().Clone())
		}
		if !equal(lastEvents, ea[len(ea)-len(lastEvents):], true) {
			t.Errorf("%s: rank %d differs when read first", kind, last)
		}
		p.Seed++
		c, _ := workload.New(kind, p)
		ec := events(t, c)
		if kind == "pingpong" {
			// No computation, nothing random.
			if !equal(ea, ec, true) {
				t.Errorf("pingpong: the seed changed the events")
			}
			continue
		}
		if equal(ea, ec, true) {
			t.Errorf("%s: another seed gives the same events", kind)
		}
		if kind != "masterworker" && kind != "is" && !equal(ea, ec, false) { // their tasks and keys are drawn
			t.Errorf("%s: another seed changed more than compute volumes", kind)
		}
	}
}

// equal compares two event lists, including the compute volumes if
// withCompute.
func equal(a, b []trace.Event, withCompute bool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if !withCompute {
			x.Compute, y.Compute = 0, 0
		}
		if x.String() != y.String() || x.CallSite != y.CallSite || x.Region != y.Region || x.RecvBytes != y.RecvBytes {
			return false
		}
	}
	return true
}

// TestImbalanceAndNoise: imbalance scales a rank's computations by a
// factor in [1, 1+imbalance]; noise jitters each one within ±noise.
func TestImbalanceAndNoise(t *testing.T) {
	p, _ := workload.Defaults("ring")
	p.Flops, p.Iterations = 1e6, 50
	p.Imbalance = 1
	src, _ := workload.New("ring", p)
	perRank := map[float64]bool{}
	trace.ForEach(src, func(r, _ int, e *trace.Event) error {
		if e.Kind == trace.Compute {
			if e.Compute < 1e6 || e.Compute > 2e6 {
				t.Fatalf("rank %d computes %g with imbalance 1", r, e.Compute)
			}
			perRank[e.Compute] = true
		}
		return nil
	})
	if len(perRank) != p.Ranks {
		t.Errorf("imbalance only: %d distinct compute volumes, want one per rank (%d)", len(perRank), p.Ranks)
	}
	p.Imbalance, p.Noise = 0, 0.1
	src, _ = workload.New("ring", p)
	distinct := map[float64]bool{}
	trace.ForEach(src, func(r, _ int, e *trace.Event) error {
		if e.Kind == trace.Compute {
			if e.Compute < 0.9e6 || e.Compute > 1.1e6 {
				t.Fatalf("rank %d computes %g with noise 0.1", r, e.Compute)
			}
			distinct[e.Compute] = true
		}
		return nil
	})
	if len(distinct) < p.Ranks*p.Iterations/2 {
		t.Errorf("noise: only %d distinct compute volumes of %d", len(distinct), p.Ranks*p.Iterations)
	}
}

// TestMasterWorkerImbalanced: task costs vary strongly, and workers that
// drew cheap tasks do more of them.
func TestMasterWorkerImbalanced(t *testing.T) {
	p, _ := workload.Defaults("masterworker")
	src, err := workload.New("masterworker", p)
	if err != nil {
		t.Fatal(err)
	}
	tasks := make([]int, p.Ranks)
	lo, hi, total := 1e300, 0.0, 0.0
	trace.ForEach(src, func(r, _ int, e *trace.Event) error {
		if e.Kind == trace.Compute {
			tasks[r]++
			lo, hi, total = min(lo, e.Compute), max(hi, e.Compute), total+e.Compute
		}
		return nil
	})
	n := 0
	for _, c := range tasks {
		n += c
	}
	if n != p.Tasks || tasks[0] != 0 {
		t.Fatalf("tasks per rank %v, want %d in all, none on the master", tasks, p.Tasks)
	}
	if hi < 10*lo {
		t.Errorf("task costs in [%g, %g]: not strongly imbalanced", lo, hi)
	}
	if mean := total / float64(n); mean < 0.7*p.Flops || mean > 1.3*p.Flops {
		t.Errorf("mean task cost %g, want about %g", mean, p.Flops)
	}
}

// TestParamErrors: bad parameters are rejected with a message naming them.
func TestParamErrors(t *testing.T) {
	cases := []struct {
		kind string
		edit func(p *workload.Params)
		want string
	}{
		{"nosuch", func(p *workload.Params) {}, `unknown workload "nosuch"`},
		{"stencil2d", func(p *workload.Params) { p.Grid, p.Ranks = []int{4, 4}, 15 }, "grid 4x4 has 16 ranks, not 15"},
		{"stencil2d", func(p *workload.Params) { p.Grid = []int{4, 4, 4} }, "needs a 2-D process grid"},
		{"stencil3d", func(p *workload.Params) { p.Grid, p.Ranks = []int{4, 0, 4}, 0 }, "every extent"},
		{"stencil2d", func(p *workload.Params) { p.Iterations = 0 }, "iterations must be in [1, "},
		{"ring", func(p *workload.Params) { p.Bytes = -5 }, "bytes must be in [1, "},
		{"ring", func(p *workload.Params) { p.Ranks = 1 }, "at least 2 ranks"},
		{"ring", func(p *workload.Params) { p.Flops = -1 }, "flops must be"},
		{"ring", func(p *workload.Params) { p.Noise = 1 }, "noise must be in [0, 1)"},
		{"ring", func(p *workload.Params) { p.Imbalance = -0.1 }, "imbalance must be"},
		{"ring", func(p *workload.Params) { p.AllreduceEvery = -1 }, "allreduce-every"},
		{"ring", func(p *workload.Params) { p.Grid = []int{2, 2} }, "takes no process grid"},
		{"stencil2d", func(p *workload.Params) { p.AllreduceBytes = 0 }, "allreduce-bytes must be in [1, "},
		{"pingpong", func(p *workload.Params) { p.Ranks = 3 }, "even number of ranks"},
		{"cg", func(p *workload.Params) { p.Ranks = 12 }, "power-of-two"},
		{"bt", func(p *workload.Params) { p.Ranks = 8 }, "square number"},
		{"masterworker", func(p *workload.Params) { p.Tasks = 0 }, "tasks must be in [1, "},
		{"masterworker", func(p *workload.Params) { p.Ranks = 1 }, "at least 2 ranks"},
		{"mg", func(p *workload.Params) { p.Levels = 0 }, "levels must be in [1, 30]"},
		{"sweep", func(p *workload.Params) { p.Blocks = 0 }, "blocks must be in [1, "},
		{"lu", func(p *workload.Params) { p.Planes = 2 }, "planes must be in [3, "},
		{"cg", func(p *workload.Params) { p.Inner = 0 }, "inner must be in [1, "},
		{"ring", func(p *workload.Params) { p.Ranks = 1 << 25 }, "ranks must be in [1, 16777216]"},
		{"stencil3d", func(p *workload.Params) { p.Grid, p.Ranks = []int{1 << 10, 1 << 10, 1 << 5}, 0 }, "more than 16777216 ranks"},
		{"ft", func(p *workload.Params) { p.Bytes = 1 << 41 }, "bytes must be in [1, 1099511627776]"},
		{"mg", func(p *workload.Params) { p.Levels = 31 }, "levels must be in [1, 30]"},
		{"stencil2d", func(p *workload.Params) { p.Flops = math.NaN() }, "flops must be in [0, 1e18]"},
	}
	for _, c := range cases {
		p, _ := workload.Defaults(c.kind)
		c.edit(&p)
		_, err := workload.New(c.kind, p)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %+v: error %v, want %q", c.kind, p, err, c.want)
		}
	}
}

// TestParamsNotRead: a parameter a kind does not read is not validated.
func TestParamsNotRead(t *testing.T) {
	p, _ := workload.Defaults("pingpong")
	p.Flops, p.Noise = -1, 5
	if _, err := workload.New("pingpong", p); err != nil {
		t.Errorf("pingpong validated flops or noise, which it does not read: %v", err)
	}
	if workload.Applies("pingpong", workload.ParamFlops) || !workload.Applies("stencil2d", workload.ParamPeriodic) ||
		workload.Applies("ring", workload.ParamGrid) || !workload.Applies("ring", workload.ParamSeed) {
		t.Error("Applies is wrong")
	}
}

// TestGrids: grids parse, and a grid is derived from the ranks as
// MPI_Dims_create does.
func TestGrids(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string
	}{{"8x8", "8x8"}, {"4x4x4", "4x4x4"}, {" 3x1 ", "3x1"}} {
		g, err := workload.ParseGrid(c.in)
		if err != nil || fmt.Sprint(g) != fmt.Sprint(parse(c.want)) {
			t.Errorf("ParseGrid(%q) = %v, %v", c.in, g, err)
		}
	}
	for _, bad := range []string{"", "8x", "x8", "0x4", "-2x2", "2x2x2x2", "axb"} {
		if _, err := workload.ParseGrid(bad); err == nil {
			t.Errorf("ParseGrid(%q) accepted", bad)
		}
	}
	for _, c := range []struct {
		kind  string
		ranks int
		want  string
	}{
		{"stencil2d", 64, "grid=8x8"}, {"stencil2d", 12, "grid=4x3"}, {"stencil2d", 7, "grid=7x1"},
		{"stencil3d", 64, "grid=4x4x4"}, {"stencil3d", 16, "grid=4x2x2"}, {"mg", 32, "grid=4x4x2"},
	} {
		p, _ := workload.Defaults(c.kind)
		p.Ranks, p.Grid = c.ranks, nil
		src, err := workload.New(c.kind, p)
		if err != nil {
			t.Fatal(err)
		}
		if attrs := src.Meta().Attrs["parameters"]; !strings.Contains(attrs, c.want) {
			t.Errorf("%s with %d ranks: %s, want %s", c.kind, c.ranks, attrs, c.want)
		}
	}
}

func parse(s string) []int {
	g, _ := workload.ParseGrid(s)
	return g
}

// TestOpenRankRange: ranks outside the trace are an error.
func TestOpenRankRange(t *testing.T) {
	src, _ := small(t, "ring", 4)
	for _, r := range []int{-1, 4} {
		if _, err := src.OpenRank(r); err == nil {
			t.Errorf("OpenRank(%d) accepted", r)
		}
	}
}

// TestDescribe: every kind has a one-line description and valid defaults.
func TestDescribe(t *testing.T) {
	if len(workload.Kinds()) != 12 {
		t.Errorf("kinds %v", workload.Kinds())
	}
	for _, k := range workload.Kinds() {
		if d := workload.Describe(k); d == "" || strings.Contains(d, "\n") {
			t.Errorf("%s: description %q", k, d)
		}
		p, _ := workload.Defaults(k)
		if _, err := workload.New(k, p); err != nil {
			t.Errorf("%s defaults: %v", k, err)
		}
	}
}

// BenchmarkGenerate measures the generation rate of every kind at its
// defaults (events/s), reading every rank to the end.
func BenchmarkGenerate(b *testing.B) {
	for _, kind := range workload.Kinds() {
		b.Run(kind, func(b *testing.B) {
			p, _ := workload.Defaults(kind)
			src, err := workload.New(kind, p)
			if err != nil {
				b.Fatal(err)
			}
			var n int64
			for b.Loop() {
				for r := 0; r < src.NumRanks(); r++ {
					rd, _ := src.OpenRank(r)
					for rd.Next() {
						n++
					}
					rd.Close()
				}
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "events/s")
			b.ReportMetric(float64(n)/float64(b.N), "events/op")
		})
	}
}
