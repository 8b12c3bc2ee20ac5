package sim

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"kairos/format/dumpi"
	"kairos/format/otf2"
	"kairos/format/ti"
	"kairos/internal/testenv"
	"kairos/platform"
	"kairos/trace"
	"kairos/workload"
)

// compareEngines replays src in the analytic mode on both engines and
// compares their results; it returns why the dependency-driven engine
// handed over to the event engine, "" if it did not.
func compareEngines(t *testing.T, name string, src trace.Source, m *Machine, cfg Config) string {
	t.Helper()
	cfg.Analytic = true
	cfg.events = true
	want, werr := Run(src, m, cfg, nil)
	cfg.events = false
	s, err := newSim(src, m, cfg, nil)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	defer s.close()
	if !s.deps {
		t.Fatalf("%s: the configuration does not take the dependency-driven engine", name)
	}
	got, gerr := s.runDeps()
	if errors.Is(gerr, errFallback) {
		if werr != nil {
			return "" // the event engine reports what stopped the dependency-driven one
		}
		return s.depWhy
	}
	if (werr == nil) != (gerr == nil) {
		t.Fatalf("%s: event engine: %v; dependency-driven engine: %v", name, werr, gerr)
	}
	if werr != nil {
		return ""
	}
	if got.Actions != want.Actions || got.Messages != want.Messages || got.Bytes != want.Bytes {
		t.Errorf("%s: %d actions, %d messages, %d bytes; the event engine: %d, %d, %d", name,
			got.Actions, got.Messages, got.Bytes, want.Actions, want.Messages, want.Bytes)
	}
	// The event engine ends together what is due within surf/precision
	// of the earliest: each action's end may move by that much.
	tol := cfg.SurfPrecision * float64(want.Actions)
	if d := math.Abs(got.Time - want.Time); d > max(tol, 1e-12*want.Time) {
		t.Errorf("%s: simulated time %.12g, the event engine's %.12g", name, got.Time, want.Time)
	}
	for i, w := range want.Ranks {
		g := got.Ranks[i]
		for _, f := range []struct {
			what      string
			got, want float64
		}{{"finish", g.Finish, w.Finish}, {"compute", g.Compute, w.Compute}, {"comm", g.Comm, w.Comm}, {"wait", g.Wait, w.Wait}, {"init", g.Init, w.Init}} {
			if math.Abs(f.got-f.want) > tol {
				t.Errorf("%s: rank %d's %s: %.12g, the event engine's %.12g", name, i, f.what, f.got, f.want)
			}
		}
	}
	return ""
}

// TestDependsOnGenerated: on every generated workload, with noise and
// imbalance, the dependency-driven engine gives the event engine's
// analytic times (to the rounding of simultaneous ends), without handing
// over.
func TestDependsOnGenerated(t *testing.T) {
	for _, kind := range workload.Kinds() {
		tr := noisy(t, kind, 6)
		if why := compareEngines(t, kind, tr, flatMachine(t, tr.NumRanks()), DefaultConfig()); why != "" {
			t.Errorf("%s: the dependency-driven engine handed over: %s", kind, why)
		}
	}
}

// noisy is kind's generated trace with its default parameters but for
// iterations, 5% noise and 10% imbalance.
func noisy(t *testing.T, kind string, iterations int) *trace.Trace {
	t.Helper()
	return noisyOn(t, kind, 0, iterations)
}

// noisyOn is noisy on ranks ranks, the default number if 0.
func noisyOn(t *testing.T, kind string, ranks, iterations int) *trace.Trace {
	t.Helper()
	p, err := workload.Defaults(kind)
	if err != nil {
		t.Fatal(err)
	}
	if ranks > 0 {
		p.Ranks = ranks
	}
	p.Iterations, p.Noise, p.Imbalance = iterations, 0.05, 0.1
	src, err := workload.New(kind, p)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := trace.Load(src)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// TestDependsOnWildcards: a master receiving its workers' results from
// MPI_ANY_SOURCE (and with MPI_ANY_TAG), with noise, at several sizes and
// seeds: the dependency-driven engine orders the senders itself and gives
// the event engine's times; with ties (no noise) or receives posted
// behind a wildcard one (every receive of a stencil from any source), it
// hands over, and the event engine's times are the result.
func TestDependsOnWildcards(t *testing.T) {
	for _, c := range []struct {
		kind        string
		ranks       int
		seed        uint64
		noise       float64
		anyTag      bool
		handsOver   bool
		wildOnRanks func(r int) bool
	}{
		{"masterworker", 8, 1, 0.05, false, false, isZero},
		{"masterworker", 16, 2, 0.05, true, false, isZero},
		{"masterworker", 64, 3, 0.05, false, false, isZero},
		{"stencil2d", 16, 1, 0.05, false, true, func(int) bool { return true }},
	} {
		name := fmt.Sprintf("%s-%d-seed%d-noise%g-anytag%v", c.kind, c.ranks, c.seed, c.noise, c.anyTag)
		p, err := workload.Defaults(c.kind)
		if err != nil {
			t.Fatal(err)
		}
		p.Ranks, p.Grid, p.Seed, p.Noise, p.Imbalance = c.ranks, nil, c.seed, c.noise, 0.1
		if c.noise == 0 {
			p.Imbalance = 0
		}
		src, err := workload.New(c.kind, p)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := trace.Load(src)
		if err != nil {
			t.Fatal(err)
		}
		wt := wildcarded(tr, c.wildOnRanks, c.anyTag)
		why := compareEngines(t, name, wt, flatMachine(t, wt.NumRanks()), DefaultConfig())
		if c.handsOver != (why != "") {
			t.Errorf("%s: handed over %v (%s), want %v", name, why != "", why, c.handsOver)
		}
	}
}

func isZero(r int) bool { return r == 0 }

// appendEvent appends to rank r of tr an event of kind k, set changing it
// if not nil.
func appendEvent(tr *trace.Trace, r int, k trace.Kind, set func(*trace.Event)) {
	e := trace.NewEvent(k)
	if set != nil {
		set(&e)
	}
	tr.Ranks[r].Append(&e)
}

// TestDependsOnTwoWildcards: ranks 0 and 1 both receive from
// MPI_ANY_SOURCE. Rank 2's message to rank 0 (after 10 s of computation)
// is posted first in the engine's order, but rank 3's comes first in
// time: rank 3 forwards what rank 1 gets from rank 4 after 1 s. Rank 0's
// first receive must wait until rank 1's is matched.
func TestDependsOnTwoWildcards(t *testing.T) {
	tr := trace.New(5, trace.NewMeta())
	add := func(r int, k trace.Kind, partner int32, flops float64) {
		appendEvent(tr, r, k, func(e *trace.Event) {
			switch {
			case k == trace.Compute:
				e.Compute = flops
			case k.IsSend():
				e.Partner, e.SendBytes = partner, 1000
			case k.IsRecv():
				e.Partner, e.RecvBytes = partner, 1000
			}
		})
	}
	for r, calls := range [][]struct {
		k       trace.Kind
		partner int32
		flops   float64
	}{
		{{trace.Recv, trace.AnySource, 0}, {trace.Recv, trace.AnySource, 0}},
		{{trace.Recv, trace.AnySource, 0}, {trace.Send, 3, 0}},
		{{trace.Compute, 0, 1e10}, {trace.Send, 0, 0}},
		{{trace.Recv, 1, 0}, {trace.Send, 0, 0}},
		{{trace.Compute, 0, 1e9}, {trace.Send, 1, 0}},
	} {
		add(r, trace.Init, 0, 0)
		for _, c := range calls {
			add(r, c.k, c.partner, c.flops)
		}
		add(r, trace.Finalize, 0, 0)
	}
	if why := compareEngines(t, "two wildcards", tr, flatMachine(t, 5), DefaultConfig()); why != "" {
		t.Errorf("handed over: %s", why)
	}
}

// TestDependsOnWildcardBesides: rank 0 posts a receive from rank 2, then
// one from any source with the same tag, then runs an allreduce and a
// receive of another tag while that one waits: none of them competes for
// its messages, so the dependency-driven engine keeps the replay, and
// gives rank 1's message to the wildcard receive and rank 2's to the
// older one, as the event engine does.
func TestDependsOnWildcardBesides(t *testing.T) {
	tr := trace.New(3, trace.NewMeta())
	add := func(r int, k trace.Kind, set func(*trace.Event)) { appendEvent(tr, r, k, set) }
	p2p := func(peer, tag int32, req uint64) func(*trace.Event) {
		return func(e *trace.Event) {
			e.Partner, e.Tag, e.Request = peer, tag, req
			if e.Kind.IsSend() {
				e.SendBytes = 100
			} else {
				e.RecvBytes = 100
			}
		}
	}
	compute := func(f float64) func(*trace.Event) { return func(e *trace.Event) { e.Compute = f } }
	allreduce := func(e *trace.Event) { e.SendBytes = 8 }
	wait := func(req uint64) func(*trace.Event) { return func(e *trace.Event) { e.Request = req } }
	for r := range 3 {
		add(r, trace.Init, nil)
	}
	add(0, trace.Irecv, p2p(2, 5, 1))
	add(0, trace.Irecv, p2p(trace.AnySource, 5, 2))
	add(0, trace.Allreduce, allreduce)
	add(0, trace.Recv, p2p(1, 7, 0))
	add(0, trace.Wait, wait(1))
	add(0, trace.Wait, wait(2))
	add(1, trace.Compute, compute(1e8))
	add(1, trace.Send, p2p(0, 7, 0))
	add(1, trace.Allreduce, allreduce)
	add(1, trace.Compute, compute(1e7))
	add(1, trace.Send, p2p(0, 5, 0))
	add(2, trace.Allreduce, allreduce)
	add(2, trace.Compute, compute(2e8))
	add(2, trace.Send, p2p(0, 5, 0))
	for r := range 3 {
		add(r, trace.Finalize, nil)
	}
	if why := compareEngines(t, "besides", tr, flatMachine(t, 3), DefaultConfig()); why != "" {
		t.Errorf("handed over: %s", why)
	}
}

// TestDependsOnWildcardTies: three ranks send to rank 0 at the same dates,
// which receives from MPI_ANY_SOURCE: which message each receive takes is
// SMPI's order of simultaneous posts, which only the event engine follows;
// the dependency-driven engine hands over.
func TestDependsOnWildcardTies(t *testing.T) {
	tr := trace.New(4, trace.NewMeta())
	add := func(r int, k trace.Kind, set func(*trace.Event)) { appendEvent(tr, r, k, set) }
	for r := range 4 {
		add(r, trace.Init, nil)
		for i := range 3 {
			if r == 0 {
				for range 3 {
					add(0, trace.Recv, func(e *trace.Event) { e.Partner, e.RecvBytes = trace.AnySource, 1000 })
				}
				continue
			}
			add(r, trace.Compute, func(e *trace.Event) { e.Compute = float64(1e6 * (i + 1)) })
			add(r, trace.Send, func(e *trace.Event) { e.Partner, e.SendBytes = 0, 1000 })
		}
		add(r, trace.Finalize, nil)
	}
	if why := compareEngines(t, "ties", tr, flatMachine(t, 4), DefaultConfig()); why == "" {
		t.Error("simultaneous sends to a wildcard receive did not hand over")
	}
}

// TestDependsBuildsItsOwn: newSim builds the event engine's ranks, max-min
// systems and constraints only for the event engine, and a replay the
// dependency-driven engine hands over (simultaneous sends to a wildcard
// receive) is the event engine's, its solver chosen as the event engine
// alone would (SimGrid's re-solves on a trace that does not repeat).
func TestDependsBuildsItsOwn(t *testing.T) {
	tr := trace.New(3, trace.NewMeta())
	for r := range 3 {
		appendEvent(tr, r, trace.Init, nil)
		for range 2 {
			if r == 0 {
				appendEvent(tr, 0, trace.Recv, func(e *trace.Event) { e.Partner, e.RecvBytes = trace.AnySource, 1000 })
			} else {
				appendEvent(tr, r, trace.Send, func(e *trace.Event) { e.Partner, e.SendBytes = 0, 1000 })
			}
		}
		appendEvent(tr, r, trace.Finalize, nil)
	}
	m := flatMachine(t, 3)
	cfg := DefaultConfig()
	cfg.Analytic = true
	for _, events := range []bool{false, true} {
		cfg.events = events
		s, err := newSim(tr, m, cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		built := s.ranks != nil || s.netSys != nil || s.cpuSys != nil || s.links != nil || s.hosts[0].cpu != nil
		if s.deps == events || built != events || (s.dr != nil) == events {
			t.Errorf("events %v: dependency-driven %v, event engine built %v, %d of its ranks", events, s.deps, built, len(s.dr))
		}
		s.close()
	}
	cfg.events = true
	want, err := Run(tr, m, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.events = false
	got, err := Run(tr, m, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.Engine == EngineDependencies || got.Handover == "" {
		t.Fatalf("engine %s, handed over for %q: the ties did not hand over", got.Engine, got.Handover)
	}
	if want.Solver != SolverSimGrid {
		t.Errorf("the event engine's solver %s, not SimGrid's on a trace that does not repeat", want.Solver)
	}
	got.Handover = ""
	if !reflect.DeepEqual(got, want) {
		t.Errorf("handed over: %+v\nthe event engine's: %+v", got, want)
	}
}

// wildcarded is tr with the receives of the ranks wild selects made from
// MPI_ANY_SOURCE, and with MPI_ANY_TAG if anyTag.
func wildcarded(tr *trace.Trace, wild func(int) bool, anyTag bool) *trace.Trace {
	out := trace.New(tr.NumRanks(), *tr.Meta())
	for i, r := range tr.Ranks {
		for rd := r.Reader(); rd.Next(); {
			e := rd.Event()
			if wild(i) && e.Kind.IsRecv() {
				e.Partner = trace.AnySource
				if anyTag {
					e.Tag = trace.AnyTag
				}
			}
			out.Ranks[i].Append(e)
		}
	}
	return out
}

// TestDependsOnAlgorithms: every collective algorithm, on 8 ranks and on
// 5 (where it takes them), members arriving at staggered dates, gives the
// event engine's times, or both engines the same error.
func TestDependsOnAlgorithms(t *testing.T) {
	t.Parallel()
	actions := map[string][]string{
		"bcast": {"bcast 100000", "bcast 1000 2", "bcast 1000 3"}, "barrier": {"barrier"}, "allreduce": {"allreduce 100000 0", "allreduce 17 0"},
		"alltoall": {"alltoall 100 100", "alltoall 10000 10000"}, "allgather": {"allgather 10000 10000", "allgather 100000 100000"},
		"reduce_scatter": {"reducescatter %[1]v 0", "reducescatter %[2]v 0"},
		"reduce":         {"reduce 100000 1000 2", "reduce 3 0 1", "reduce 3 0 2"},
		"gather":         {"gather 10000 10000 0", "gather 100000 100000 3"},
		"scatter":        {"scatter 10000 10000 0", "scatter 100000 100000 3"},
		"alltoallv":      {"alltoallv 100000 %[1]v 100000 %[1]v", "alltoallv 100000 %[2]v 100000 %[2]v", "alltoallv 100000 %[2]v 100000 %[1]v"},
		"allgatherv":     {"allgatherv 1000 %[1]v", "allgatherv 500 %[2]v"},
	}
	n := 0
	for coll, acts := range actions {
		// Each action alone, then all of them twice over, so that the
		// engine's collMemo replays calls it kept (and not others).
		seqs := [][]string{slices.Concat(acts, acts, acts)}
		for _, act := range acts {
			seqs = append(seqs, []string{act})
		}
		for _, algo := range Algorithms(coll) {
			for _, np := range []int{8, 5} {
				for _, seq := range seqs {
					cfg := DefaultConfig()
					if err := cfg.Set("smpi/"+coll, algo); err != nil {
						t.Fatal(err)
					}
					name := fmt.Sprintf("%s:%s on %d: %s", coll, algo, np, strings.Join(seq, ", "))
					if why := compareEngines(t, name, staggered(t, np, seq...), flatMachine(t, np), cfg); why != "" {
						t.Errorf("%s: handed over: %s", name, why)
					}
					n++
				}
			}
		}
	}
	t.Logf("%d replays compared", n)
}

// staggered is np ranks computing rank x 1e6 flops, then running acts
// (TI actions; %[1]v is replaced by a count vector of np elements, 1000
// x (i+1), %[2]v by another, 500 x (i+1)), each after a computation of
// rank x 1e5 flops.
func staggered(t *testing.T, np int, acts ...string) trace.Source {
	t.Helper()
	var counts, counts2 []string
	for i := range np {
		counts = append(counts, fmt.Sprint(1000*(i+1)))
		counts2 = append(counts2, fmt.Sprint(500*(i+1)))
	}
	var b strings.Builder
	for r := range np {
		fmt.Fprintf(&b, "%d init\n%d compute %d\n", r, r, r*1000000)
		for i, act := range acts {
			if strings.Contains(act, "%") {
				act = fmt.Sprintf(act, strings.Join(counts, " "), strings.Join(counts2, " "))
			}
			if i > 0 {
				fmt.Fprintf(&b, "%d compute %d\n", r, r*100000)
			}
			fmt.Fprintf(&b, "%d %s\n", r, act)
		}
		fmt.Fprintf(&b, "%d finalize\n", r)
	}
	path := filepath.Join(t.TempDir(), "staggered.ti")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	tr, err := ti.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// TestDependsOnReal: the real traces of the reference folder (a TI trace
// of IS on 32 ranks, and OTF2 traces of the Kairos tracer on a 4-D
// stencil, computations at 1 Gf).
func TestDependsOnReal(t *testing.T) {
	is := testenv.Shared(t, "traces/ti/simgrid-replay-multiple-32/is32-flat.txt")
	src, err := ti.Open(is)
	if err != nil {
		t.Fatal(err)
	}
	if why := compareEngines(t, "IS-32", src, flatMachine(t, src.NumRanks()), DefaultConfig()); why != "" {
		t.Errorf("IS-32: handed over: %s", why)
	}
	for _, name := range []string{"otf2/tracer-stencil4d-32/traces.otf2", "otf2/tracer-stencil4d-64/traces.otf2",
		"otf2/sst-macro-mpi-coverage/traces.otf2", "otf2/pipit-ping-pong-otf2/traces.otf2",
		"dumpi/sst-macro-testbgp", "dumpi/sst-macro-testtrace", "dumpi/tauferlab-naive-alltoall-4"} {
		path := testenv.Shared(t, filepath.Join("traces", name))
		var a trace.Source
		var err error
		if strings.HasPrefix(name, "dumpi/") {
			a, err = dumpiIn(path)
		} else {
			a, err = otf2.Open(path)
		}
		if err != nil {
			t.Fatal(err)
		}
		src := trace.UntimedAbove(a, 1e9, 0)
		if why := compareEngines(t, name, src, flatMachine(t, src.NumRanks()), DefaultConfig()); why != "" {
			t.Errorf("%s: handed over: %s", name, why)
		}
	}
}

// dumpiIn opens the DUMPI trace of directory dir (its .meta file).
func dumpiIn(dir string) (trace.Source, error) {
	metas, err := filepath.Glob(filepath.Join(dir, "*.meta"))
	if err != nil || len(metas) != 1 {
		return nil, fmt.Errorf("%s: want one .meta file, found %d (%v)", dir, len(metas), err)
	}
	return dumpi.Open(metas[0])
}

// FuzzDependsMatchesEvents replays arbitrary TI text of up to four ranks in
// the analytic mode on both engines (the dependency-driven one handing
// over as it must): both fail, or give the same times to the rounding of
// simultaneous ends.
func FuzzDependsMatchesEvents(f *testing.F) {
	for _, seed := range SeedTexts {
		f.Add(seed)
	}
	f.Add("0 recv -555 0 100\n0 recv -555 0 100\n1 compute 1e6\n1 send 0 0 100\n2 compute 2e6\n2 send 0 0 100\n")
	f.Add("0 irecv -555 -444 100\n0 wait -555 0 -444\n1 send 0 3 100\n2 init\n")
	m := flatMachine(f, 4)
	f.Fuzz(func(t *testing.T, text string) {
		tr := TraceOfText(t, text)
		if tr == nil {
			return
		}
		cfg := DefaultConfig()
		cfg.Analytic, cfg.events = true, true
		want, werr := Run(tr, m, cfg, nil)
		cfg.events = false
		got, gerr := Run(tr, m, cfg, nil)
		if werr != nil || gerr != nil {
			// Both fail (not always on the same rank's first bad line:
			// they read the ranks in different orders).
			if werr == nil || gerr == nil {
				t.Fatalf("event engine: %v; with the dependency-driven one first: %v", werr, gerr)
			}
			return
		}
		tol := cfg.SurfPrecision * float64(want.Actions+1)
		if math.Abs(got.Time-want.Time) > max(tol, 1e-12*want.Time) {
			t.Fatalf("simulated time %.12g (%s engine), the event engine's %.12g", got.Time, got.Engine, want.Time)
		}
		for i, w := range want.Ranks {
			if g := got.Ranks[i]; math.Abs(g.Finish-w.Finish) > tol || math.Abs(g.Wait-w.Wait) > tol || math.Abs(g.Comm-w.Comm) > tol {
				t.Fatalf("rank %d: %+v (%s engine), the event engine's %+v", i, g, got.Engine, w)
			}
		}
	})
}

// SeedTexts are TI texts the simulator's fuzz targets start from: a
// ring, blocking and non-blocking point-to-point calls, tests, every
// family of collectives, sleeps, receives of unknown size, and amounts
// SimGrid aborts on or that mean nothing (issue 43).
var SeedTexts = []string{
	testenv.Figure1Ring,
	"0 recv 1 0 10\n1 recv 0 0 10\n",
	"0 isend 1 0 1e5\n0 test 0 1 0\n0 wait 0 1 0\n1 irecv 0 0 1e5\n1 test 0 1 0\n1 waitall\n",
	"0 barrier\n1 barrier\n0 allreduce 100 1e3\n1 allreduce 100 1e3\n0 alltoall 10 10\n1 alltoall 10 10\n",
	"0 reducescatter 5 7 1e3\n1 reducescatter 5 7 1e3\n0 alltoallv 10 5 5 10 5 5\n1 alltoallv 10 5 5 10 5 5\n",
	"0 sendRecv 10 1 10 1 0 0\n1 sendRecv 10 0 10 0 0 0\n0 sleep 0.5\n1 gatherv 5 5 5 0\n",
	"0 irecv 1 0 -1\n0 sleep 0\n0 wait 1 0 0\n1 send 0 0 8\n1 bcast 10 0\n0 bcast 10 0\n",
	"0 allgather 7 7\n1 allgather 7 7\n2 allgather 7 7\n0 gather 5 5 1\n1 gather 5 5 1\n2 gather 5 5 1\n",
	"0 compute -1e6\n0 sleep -1\n",
	"0 compute 1e300\n1 sleep 1e300\n",
	"3 init\n",
}

// TraceOfText is the trace of a fuzz input for the simulator, nil for one
// that does not parse, has more than four ranks, or a number above 10^7
// (legal, but segmented algorithms make millions of messages of it).
func TraceOfText(t *testing.T, text string) *ti.Trace {
	if testenv.HugeNumber(text) {
		return nil
	}
	p := filepath.Join(t.TempDir(), "f.ti")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	tr, err := ti.Open(p)
	if err != nil || tr.NumRanks() > 4 {
		return nil
	}
	return tr
}

// flatMachine is n hosts of 1 Gf joined by 125 MBps, 50 us links.
func flatMachine(tb testing.TB, n int) *Machine {
	tb.Helper()
	pl, err := platform.ParseCluster(fmt.Sprintf("%dx1Gf,125MBps,50us", n))
	return everyHost(tb, pl, err)
}

// everyHost deploys a rank on each host of pl, failing tb on err, pl's
// reading error, or on the deployment's.
func everyHost(tb testing.TB, pl *platform.Platform, err error) *Machine {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
	m, err := FromPlatform(pl, pl.Hosts)
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

// TestDependsRecordsTimedTrace: a replay recorded as a timed trace (simulate
// --analytic --timed-trace) runs on the dependency-driven engine and
// records what the event engine does: every action at the same dates, the
// same messages (ordered alike but for ties).
func TestDependsRecordsTimedTrace(t *testing.T) {
	for _, kind := range []string{"stencil2d", "lu", "cg", "masterworker"} {
		tr := noisy(t, kind, 4)
		if kind == "masterworker" {
			tr = wildcarded(tr, isZero, false)
		}
		m := flatMachine(t, tr.NumRanks())
		cfg := DefaultConfig()
		cfg.Analytic, cfg.events = true, true
		want := NewTimedTrace(tr.NumRanks(), tr.Meta())
		if _, err := Run(tr, m, cfg, want); err != nil {
			t.Fatal(err)
		}
		cfg.events = false
		got := NewTimedTrace(tr.NumRanks(), tr.Meta())
		res, err := Run(tr, m, cfg, Observers{got})
		if err != nil {
			t.Fatal(err)
		}
		if res.Engine != EngineDependencies {
			t.Fatalf("%s: engine %s (%s)", kind, res.Engine, res.Handover)
		}
		tol := cfg.SurfPrecision * float64(res.Actions)
		for i := range tr.Ranks {
			a, b := want.T.Ranks[i].Reader(), got.T.Ranks[i].Reader()
			for n := 0; ; n++ {
				an, bn := a.Next(), b.Next()
				if an != bn {
					t.Fatalf("%s: rank %d: %d actions recorded and %d", kind, i, want.T.Ranks[i].Len(), got.T.Ranks[i].Len())
				}
				if !an {
					break
				}
				ea, eb := a.Event(), b.Event()
				if ea.Kind != eb.Kind || math.Abs(ea.Enter.Seconds()-eb.Enter.Seconds()) > tol || math.Abs(ea.Exit.Seconds()-eb.Exit.Seconds()) > tol {
					t.Fatalf("%s: rank %d, action %d: %s %v-%v, the event engine's %s %v-%v", kind, i, n, eb.Kind, eb.Enter, eb.Exit, ea.Kind, ea.Enter, ea.Exit)
				}
			}
		}
		if len(got.Messages) != len(want.Messages) {
			t.Fatalf("%s: %d messages, the event engine's %d", kind, len(got.Messages), len(want.Messages))
		}
		key := func(x Message) string {
			return fmt.Sprintf("%d>%d:%d:%d:%.6f", x.Src, x.Dst, x.Tag, x.Bytes, x.Arrived)
		}
		count := map[string]int{}
		for i := range want.Messages {
			count[key(want.Messages[i])]++
			count[key(got.Messages[i])]--
			if d := math.Abs(got.Messages[i].Arrived - want.Messages[i].Arrived); d > tol {
				t.Fatalf("%s: message %d arrived at %g, the event engine's %dth at %g", kind, i, got.Messages[i].Arrived, i, want.Messages[i].Arrived)
			}
		}
		for k, n := range count {
			if n != 0 {
				t.Errorf("%s: message %s recorded %d times more by the event engine", kind, k, n)
			}
		}
	}
}
