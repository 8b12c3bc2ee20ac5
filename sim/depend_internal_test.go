package sim

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kairos/format/otf2"
	"kairos/format/ti"
	"kairos/internal/testenv"
	"kairos/platform"
	"kairos/trace"
	"kairos/workload"
)

// flatCluster is n hosts of 1 Gf joined by 125 MBps, 50 us links.
func flatCluster(t *testing.T, n int) *Machine {
	t.Helper()
	pl, err := platform.ParseCluster(fmt.Sprintf("%dx1Gf,125MBps,50us", n))
	if err != nil {
		t.Fatal(err)
	}
	m, err := FromPlatform(pl, pl.Hosts)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// compareEngines replays src in the analytic mode on both engines and
// compares their results; it returns why the dependency-driven engine
// handed over to the event engine, "" if it did not.
func compareEngines(t *testing.T, name string, src trace.Source, m *Machine, cfg Config) string {
	t.Helper()
	cfg.Analytic = true
	cfg.events = true
	want, werr := run(src, m, cfg, nil)
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
// analytic times (to the rounding of simultaneous ends), and hands over
// only the traces with what it does not model (wildcard receives).
func TestDependsOnGenerated(t *testing.T) {
	for _, kind := range workload.Kinds() {
		p, err := workload.Defaults(kind)
		if err != nil {
			t.Fatal(err)
		}
		p.Iterations, p.Noise, p.Imbalance = 6, 0.05, 0.1
		src, err := workload.New(kind, p)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := trace.Load(src)
		if err != nil {
			t.Fatal(err)
		}
		why := compareEngines(t, kind, tr, flatCluster(t, tr.NumRanks()), DefaultConfig())
		if wild := hasWildcard(tr); why != "" && !wild {
			t.Errorf("%s: the dependency-driven engine handed over: %s", kind, why)
		} else if wild && why == "" {
			t.Errorf("%s: a trace with wildcard receives did not hand over", kind)
		}
	}
}

// hasWildcard reports whether a receive of tr takes any source or tag.
func hasWildcard(tr *trace.Trace) bool {
	for _, r := range tr.Ranks {
		for rd := r.Reader(); rd.Next(); {
			e := rd.Event()
			if e.Kind.IsRecv() && (e.Partner == trace.AnySource || e.Tag == trace.AnyTag) || e.Kind == trace.SendRecv && e.Source == trace.AnySource {
				return true
			}
		}
	}
	return false
}

// TestDependsOnAlgorithms: every collective algorithm, on 8 ranks and on
// 5 (where it takes them), members arriving at staggered dates, gives the
// event engine's times, or both engines the same error.
func TestDependsOnAlgorithms(t *testing.T) {
	actions := map[string][]string{
		"bcast": {"bcast 100000", "bcast 1000 2"}, "barrier": {"barrier"}, "allreduce": {"allreduce 100000 0", "allreduce 17 0"},
		"alltoall": {"alltoall 100 100", "alltoall 10000 10000"}, "allgather": {"allgather 10000 10000", "allgather 100000 100000"},
		"reduce_scatter": {"reducescatter %v 0"},
		"reduce":         {"reduce 100000 1000 2", "reduce 3 0 1"},
		"gather":         {"gather 10000 10000 0", "gather 100000 100000 3"},
		"scatter":        {"scatter 10000 10000 0", "scatter 100000 100000 3"},
		"alltoallv":      {"alltoallv 100000 %[1]v 100000 %[1]v"},
		"allgatherv":     {"allgatherv 1000 %v"},
	}
	n := 0
	for coll, acts := range actions {
		for _, algo := range Algorithms(coll) {
			for _, np := range []int{8, 5} {
				for _, act := range acts {
					cfg := DefaultConfig()
					if err := cfg.Set("smpi/"+coll, algo); err != nil {
						t.Fatal(err)
					}
					name := fmt.Sprintf("%s:%s on %d: %s", coll, algo, np, act)
					if why := compareEngines(t, name, staggered(t, np, act), flatCluster(t, np), cfg); why != "" {
						t.Errorf("%s: handed over: %s", name, why)
					}
					n++
				}
			}
		}
	}
	t.Logf("%d replays compared", n)
}

// staggered is np ranks computing rank x 1e6 flops, then running act (a
// TI action; %v is replaced by a count vector of np elements).
func staggered(t *testing.T, np int, act string) trace.Source {
	t.Helper()
	counts := make([]string, np)
	for i := range counts {
		counts[i] = fmt.Sprint(1000 * (i + 1))
	}
	if strings.Contains(act, "%") {
		act = fmt.Sprintf(act, strings.Join(counts, " "))
	}
	var b strings.Builder
	for r := range np {
		fmt.Fprintf(&b, "%d init\n%d compute %d\n%d %s\n%d finalize\n", r, r, r*1000000, r, act, r)
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
	if why := compareEngines(t, "IS-32", src, flatCluster(t, src.NumRanks()), DefaultConfig()); why != "" {
		t.Errorf("IS-32: handed over: %s", why)
	}
	for _, name := range []string{"tracer-stencil4d-32", "tracer-stencil4d-64"} {
		dir := testenv.Shared(t, filepath.Join("traces/otf2", name))
		a, err := otf2.Open(filepath.Join(dir, "traces.otf2"))
		if err != nil {
			t.Fatal(err)
		}
		src := trace.UntimedAbove(a, 1e9, 0)
		if why := compareEngines(t, name, src, flatCluster(t, src.NumRanks()), DefaultConfig()); why != "" {
			t.Errorf("%s: handed over: %s", name, why)
		}
	}
}
