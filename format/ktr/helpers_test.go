package ktr

import (
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"testing"

	"kairos/trace"
)

// stencil builds a realistic 2-D stencil trace on a periodic px x py grid
// of ranks: every iteration computes (flops varying with a per-rank load
// imbalance and per-iteration noise), posts 4 irecv, packs halos, posts 4
// isend and waits for all 8 requests; every 10th iteration computes a
// residual and allreduces it. Every MPI call has its own call-site and
// region; timed traces carry enter and exit times with jitter.
func stencil(px, py, iters int, timed bool) *trace.Trace {
	return stencilNoise(px, py, iters, timed, 0.02)
}

// stencilNoise is stencil with the relative standard deviation of the
// main compute's flops from one iteration to the next (0.02 in stencil;
// the halo packing varies 2.5 times as much, the residual half as much).
func stencilNoise(px, py, iters int, timed bool, noise float64) *trace.Trace {
	meta := trace.NewMeta()
	meta.DefaultType = trace.TypeDouble
	mainR := meta.AddRegion("main", 0)
	step := meta.AddRegion("timestep", mainR)
	kernel := meta.AddRegion("stencil_kernel", step)
	halo := meta.AddRegion("exchange_halo", step)
	resid := meta.AddRegion("residual", step)
	meta.Attrs["generator"] = "ktr test stencil"
	n := px * py
	t := trace.New(n, meta)
	for r := 0; r < n; r++ {
		g := stencilRank{rank: r, px: px, py: py, timed: timed, noise: noise,
			rng:       rand.New(rand.NewPCG(uint64(r), 42)),
			imbalance: 1 + 0.15*rand.New(rand.NewPCG(uint64(r), 7)).Float64(),
			regions:   [3]uint32{kernel, halo, resid}, rk: &t.Ranks[r]}
		g.run(iters)
	}
	return t
}

type stencilRank struct {
	rank, px, py int
	timed        bool
	polls        bool // polls (Iprobe, and Local calls) before each waitall
	noise        float64
	rng          *rand.Rand
	imbalance    float64
	regions      [3]uint32 // kernel, halo, residual
	rk           *trace.Rank
	now          trace.Time
	req          uint64
}

func (g *stencilRank) emit(e *trace.Event, site uint64, region uint32, dur float64) {
	e.CallSite = 0x9e3779b97f4a7c15 ^ site*0x100000001b3
	e.Region = region
	if g.timed { // a clock of nanosecond resolution, as MPI_Wtime's usually is
		ns := func(s float64) trace.Time { return trace.Time(math.Round(s*1e9)) * 1000 }
		g.now += ns(2e-7 * (1 + g.rng.Float64()))
		e.HasTime, e.Enter = true, g.now
		g.now += ns(dur * (1 + 0.1*g.rng.NormFloat64()*g.rng.NormFloat64()))
		e.Exit = g.now
	}
	g.rk.Append(e)
}

func (g *stencilRank) run(iters int) {
	x, y := g.rank%g.px, g.rank/g.px
	at := func(x, y int) int32 { return int32((y+g.py)%g.py*g.px + (x+g.px)%g.px) }
	nbrs := [4]int32{at(x-1, y), at(x+1, y), at(x, y-1), at(x, y+1)}
	const face = 512 * 8 // bytes per halo face
	init := trace.NewEvent(trace.Init)
	g.emit(&init, 1, 0, 1e-3)
	reqs := make([]uint64, 8)
	for it := 0; it < iters; it++ {
		c := trace.NewEvent(trace.Compute)
		c.Compute = math.Round(2.6e6 * g.imbalance * (1 + g.noise*g.rng.NormFloat64()))
		g.emit(&c, 2, g.regions[0], c.Compute/1e9)
		for i, p := range nbrs {
			e := trace.NewEvent(trace.Irecv)
			e.Partner, e.Tag, e.RecvBytes = p, int32(i^1), face
			if g.polls && i == len(nbrs)-1 {
				e.RecvBytes = -1 // of any size: the next event, read thin, must not keep it
			}
			g.req++
			e.Request, reqs[i] = g.req, g.req
			g.emit(&e, 3+uint64(i), g.regions[1], 1e-6)
		}
		pack := trace.NewEvent(trace.Compute)
		pack.Compute = math.Round(4 * face * (1 + 2.5*g.noise*g.rng.NormFloat64()))
		g.emit(&pack, 7, g.regions[1], pack.Compute/1e9)
		for i, p := range nbrs {
			e := trace.NewEvent(trace.Isend)
			e.Partner, e.Tag, e.SendBytes = p, int32(i), face
			g.req++
			e.Request, reqs[4+i] = g.req, g.req
			g.emit(&e, 8+uint64(i), g.regions[1], 2e-6)
		}
		if g.polls {
			g.poll()
		}
		w := trace.NewEvent(trace.Waitall)
		w.Requests = reqs
		g.emit(&w, 12, g.regions[1], 2e-5*(1+g.rng.ExpFloat64()))
		if it%10 == 9 {
			c := trace.NewEvent(trace.Compute)
			c.Compute = math.Round(3e5 * (1 + 0.5*g.noise*g.rng.NormFloat64()))
			g.emit(&c, 13, g.regions[2], c.Compute/1e9)
			a := trace.NewEvent(trace.Allreduce)
			a.SendBytes, a.RecvBytes, a.Compute = 8, 8, 1
			g.emit(&a, 14, g.regions[2], 5e-5*(1+g.rng.ExpFloat64()))
		}
	}
	fin := trace.NewEvent(trace.Finalize)
	g.emit(&fin, 15, 0, 1e-4)
}

// poll emits 0 to 7 polls: probes of any source, and local calls (a test
// the tracer records by its name), each 1 in 3.
func (g *stencilRank) poll() {
	for range g.rng.IntN(8) {
		p := trace.NewEvent(trace.Local)
		if g.rng.IntN(3) == 0 {
			p = trace.NewEvent(trace.Iprobe)
			p.Partner, p.Tag = trace.AnySource, trace.AnyTag
		}
		g.emit(&p, 16+uint64(p.Kind), g.regions[1], 3e-7)
	}
}

// stencilPolls is stencilNoise's timed trace with polls before each
// waitall (poll), as a program that tests its requests before waiting.
func stencilPolls(px, py, iters int) *trace.Trace {
	meta := trace.NewMeta()
	region := meta.AddRegion("MPI_Testany", 0)
	t := trace.New(px*py, meta)
	for r := range px * py {
		g := stencilRank{rank: r, px: px, py: py, timed: true, polls: true, noise: 0.1,
			rng: rand.New(rand.NewPCG(uint64(r), 9)), imbalance: 1, regions: [3]uint32{0, region, 0}, rk: &t.Ranks[r]}
		g.run(iters)
	}
	return t
}

// allFields returns a trace exercising every field of trace.Event and of
// trace.Meta: call-sites, regions, timestamps (negative deltas too),
// vectors (empty and not), requests, communicators, datatypes, computes
// at the limits a reader accepts, and an empty rank between non-empty
// ones.
func allFields() *trace.Trace {
	meta := trace.NewMeta()
	meta.DefaultType = trace.TypeDouble
	a := meta.AddRegion("main", 0)
	b := meta.AddRegion("solve ü", a)
	meta.AddRegion("", b)
	meta.Comms = []trace.Comm{{ID: 3, Members: []int32{2, 0}}, {ID: 9}}
	meta.Attrs["format"] = "test"
	meta.Attrs[""] = "empty key"
	meta.Attrs["clock"] = "1 GHz\x00binary"
	t := trace.New(4, meta)
	ev := func(k trace.Kind, f func(*trace.Event)) trace.Event {
		e := trace.NewEvent(k)
		f(&e)
		return e
	}
	events := []trace.Event{
		ev(trace.Init, func(e *trace.Event) {}),
		ev(trace.Compute, func(e *trace.Event) { e.Compute = 1e9; e.CallSite = 1 << 63; e.Region = b }),
		ev(trace.Compute, func(e *trace.Event) { e.Compute = math.SmallestNonzeroFloat64 }),
		ev(trace.Compute, func(e *trace.Event) { e.Compute = trace.MaxFlops; e.Region = 0 }),
		ev(trace.Sleep, func(e *trace.Event) { e.Compute = trace.MaxSleep; e.CallSite = 0 }),
		ev(trace.Compute, func(e *trace.Event) { e.Compute = 0.25 }),
		ev(trace.Isend, func(e *trace.Event) {
			e.Partner, e.Tag, e.SendBytes, e.Request, e.Comm = 2, 7, 1<<40, 1, 3
			e.HasTime, e.Enter, e.Exit = true, 1_000_000, 2_500_000
		}),
		ev(trace.Irecv, func(e *trace.Event) {
			e.Partner, e.Tag, e.RecvBytes, e.Request = trace.AnySource, trace.AnyTag, -1, math.MaxUint64
			e.HasTime, e.Enter, e.Exit = true, 500, 400 // earlier than the previous exit, negative length
		}),
		ev(trace.Wait, func(e *trace.Event) { e.Request, e.Partner = 1, 2 }),
		ev(trace.Waitall, func(e *trace.Event) { e.Requests = []uint64{} }),
		ev(trace.Waitall, func(e *trace.Event) { e.Requests = []uint64{1, math.MaxUint64, 0} }),
		ev(trace.Alltoallv, func(e *trace.Event) {
			e.SendBytes, e.RecvBytes = 48, 40
			e.SendCounts, e.RecvCounts = []int64{0, 8, 16, 24}, []int64{}
			e.SendType, e.RecvType = trace.TypeInt, trace.TypeNull
		}),
		ev(trace.Bcast, func(e *trace.Event) {
			e.Partner, e.SendBytes, e.CallSite, e.Region = 3, 100, 0xdeadbeefcafe, 2
			e.HasTime, e.Enter, e.Exit = true, math.MaxInt64/4, math.MaxInt64/2
		}),
		ev(trace.SendRecv, func(e *trace.Event) {
			e.Partner, e.Source, e.SendBytes, e.RecvBytes = 1, 0, math.MaxInt64, 0
			e.Tag = math.MinInt32
		}),
		ev(trace.CommSplit, func(e *trace.Event) { e.NewComm, e.Comm = 9, 3; e.SendType = trace.MaxDatatype }),
		ev(trace.Local, func(e *trace.Event) { e.Region = 1; e.Tag = math.MaxInt32 }),
		ev(trace.Finalize, func(e *trace.Event) {}),
	}
	for i := range events {
		t.Ranks[0].Append(&events[i])
	}
	// Rank 1 stays empty; ranks 2 and 3 get the events in other orders.
	for i := len(events) - 1; i >= 0; i-- {
		t.Ranks[2].Append(&events[i])
	}
	for i := range events {
		t.Ranks[3].Append(&events[(i*7)%len(events)])
	}
	return t
}

// repeatedFields is allFields with each rank's events n times over, as a
// program's iterations repeat them.
func repeatedFields(n int) *trace.Trace {
	base := allFields()
	t := trace.New(base.NumRanks(), *base.Meta())
	for r := range base.NumRanks() {
		evs, _ := events(base, r)
		for range n {
			for i := range evs {
				t.Ranks[r].Append(&evs[i])
			}
		}
	}
	return t
}

// writeTemp writes src as a ktr file in a test directory.
func writeTemp(t testing.TB, src trace.Source, o Options) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "t.ktr")
	if err := WriteOptions(path, src, o); err != nil {
		t.Fatal(err)
	}
	return path
}

// sameTrace fails t unless a and b have the same metadata and events.
func sameTrace(t *testing.T, got, want trace.Source) {
	t.Helper()
	gm, wm := *got.Meta(), *want.Meta()
	if gm.DefaultType != wm.DefaultType || !reflect.DeepEqual(gm.Regions, wm.Regions) ||
		!reflect.DeepEqual(gm.Comms, wm.Comms) || !reflect.DeepEqual(gm.Attrs, wm.Attrs) {
		t.Fatalf("meta:\n got %+v\nwant %+v", gm, wm)
	}
	if got.NumRanks() != want.NumRanks() {
		t.Fatalf("%d ranks, want %d", got.NumRanks(), want.NumRanks())
	}
	for r := 0; r < want.NumRanks(); r++ {
		ge, gerr := events(got, r)
		we, werr := events(want, r)
		if gerr != nil || werr != nil {
			t.Fatalf("rank %d: %v, %v", r, gerr, werr)
		}
		if len(ge) != len(we) {
			t.Fatalf("rank %d: %d events, want %d", r, len(ge), len(we))
		}
		for i := range we {
			if !sameEvent(&ge[i], &we[i]) {
				t.Fatalf("rank %d event %d:\n got %+v\nwant %+v", r, i, ge[i], we[i])
			}
		}
	}
}

// sameEvent is reflect.DeepEqual with NaN computes equal.
func sameEvent(a, b *trace.Event) bool {
	x, y := *a, *b
	if math.IsNaN(x.Compute) && math.IsNaN(y.Compute) {
		x.Compute, y.Compute = 0, 0
	}
	return reflect.DeepEqual(x, y)
}

func events(src trace.Source, r int) ([]trace.Event, error) {
	rd, err := src.OpenRank(r)
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	var out []trace.Event
	for rd.Next() {
		out = append(out, rd.Event().Clone())
	}
	return out, rd.Err()
}

// distinctSends is a trace of two ranks each repeating n distinct events
// repeats times: sends of n sizes, or, with vec > 0, all-to-alls whose
// vectors of vec elements differ.
func distinctSends(n, repeats, vec int) *trace.Trace {
	t := trace.New(2, trace.NewMeta())
	for r := range 2 {
		for range repeats {
			for i := range n {
				e := trace.NewEvent(trace.Send)
				e.Partner, e.Tag, e.SendBytes = int32(1-r), int32(i%5), int64(64+i)
				if vec > 0 {
					e = trace.NewEvent(trace.Alltoallv)
					e.SendCounts, e.RecvCounts = make([]int64, vec), make([]int64, vec)
					e.SendCounts[i%vec], e.RecvCounts[(i/vec)%vec] = int64(i+1), int64(i+1)
				}
				t.Ranks[r].Append(&e)
			}
		}
	}
	return t
}
