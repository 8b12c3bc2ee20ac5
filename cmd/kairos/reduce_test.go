package main

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"kairos/cluster"
	"kairos/format/ktr"
	"kairos/internal/testenv"
	"kairos/prsd"
	"kairos/trace"
)

// genTrace writes a generated trace of kind at 16 ranks in dir.
func genTrace(t *testing.T, dir, kind string, args ...string) string {
	t.Helper()
	path := filepath.Join(dir, kind+".ktr")
	if code, _, errs := csRun(append([]string{"gen", kind, "--ranks", "16", "--iterations", "4", "-o", path}, args...)...); code != 0 {
		t.Fatalf("gen %s: exit %d: %s", kind, code, errs)
	}
	return path
}

// reduceResult is what the tests read of reduce --json.
type reduceResult struct {
	Clusters   int `json:"clusters"`
	Compressed struct {
		Bytes int `json:"bytes"`
	} `json:"compressed"`
	Accuracy struct {
		Matching cluster.Matching  `json:"matching_percent"`
		Heads    *cluster.Matching `json:"heads_matching_percent"`
		Original float64           `json:"original_time"`
		Reduced  float64           `json:"reduced_time"`
		Same     bool              `json:"same_as_trace"`
		ACC      float64           `json:"acc"`
		Waiting  *waitingJSON      `json:"waiting"`
	} `json:"accuracy"`
}

// reduceJSONOf runs reduce --json with args and decodes its output.
func reduceJSONOf(t *testing.T, args ...string) reduceResult {
	t.Helper()
	code, out, errs := csRun(append([]string{"reduce", "--json"}, args...)...)
	var res reduceResult
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil {
		t.Fatalf("reduce %v: exit %d: %s%s", args, code, out, errs)
	}
	return res
}

// TestReduce: the Sweep3D skeleton at 16 ranks has Table 3's nine main
// clusters (golden output); its reduction, written and read back by
// simulate, check and stats, replays as the whole trace (ACC = 1).
func TestReduce(t *testing.T) {
	dir := t.TempDir()
	sweep := genTrace(t, dir, "sweep")
	code, out, errs := csRun("reduce", sweep)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	golden(t, "reduce/sweep16.txt", strings.ReplaceAll(out, dir, "DIR"))
	// An interior rank of the wavefront: per time step, 80 blocks of two
	// receives and two sends, then the allreduce.
	if code, out, errs := csRun("reduce", "--loops", sweep); code != 0 || !strings.Contains(out, "\n  rank 5: init1 4×(80×(2×(recv1) 2×(send1)) allreduce1) finalize1\n") {
		t.Errorf("--loops: exit %d: %s%s", code, out, errs)
	}
	reduced := filepath.Join(dir, "sweep.rsd")
	res := reduceJSONOf(t, "--accuracy", "-o", reduced, sweep)
	if res.Clusters != 9 || !exactACC(res.Accuracy.ACC) || res.Accuracy.Original <= 0 || res.Accuracy.Matching != perfect {
		t.Fatalf("--accuracy: %+v", res)
	}
	if st, err := os.Stat(reduced); err != nil || st.Size() != int64(res.Compressed.Bytes) {
		t.Errorf("the file: %v (%d bytes said)", err, res.Compressed.Bytes)
	}
	times := map[string]string{}
	for _, in := range []string{sweep, reduced} {
		code, out, errs := csRun("simulate", in, "--cluster", "16x1Gf,125MBps,50us")
		if code != 0 {
			t.Fatalf("simulate %s: exit %d: %s", in, code, errs)
		}
		times[in] = strings.SplitN(out, "\n", 2)[0]
	}
	// The same time; two computations in a row are one in the reduction.
	if a, b := strings.SplitN(times[sweep], ";", 2)[0], strings.SplitN(times[reduced], ";", 2)[0]; a != b || !strings.Contains(times[reduced], "7800 messages") {
		t.Errorf("simulated %q, reduced %q", times[sweep], times[reduced])
	}
	if code, out, _ := csRun("stats", reduced); code != 0 || !strings.Contains(out, "ranks             16") {
		t.Errorf("stats of the reduced trace: exit %d\n%s", code, out)
	}
	if code, out, errs := csRun("check", reduced); code != 0 {
		t.Errorf("check of the reduced trace: exit %d: %s%s", code, out, errs)
	}
}

// exactACC reports whether acc is 1 but for floating-point rounding: the
// computations between two calls are summed in the reduction, which can
// move the simulated time by an ulp.
func exactACC(acc float64) bool { return acc > 1-1e-12 && acc <= 1 }

var perfect = cluster.Matching{Count: 100, Loop: 100, Events: 100, Src: 100, Dest: 100, Tag: 100}

// TestReduceNonPeriodicStencil: a non-periodic stencil of any grid from
// 3×3 gives nine clusters with the default method, and its reduction
// replays with ACC = 1.
func TestReduceNonPeriodicStencil(t *testing.T) {
	dir := t.TempDir()
	for _, grid := range []string{"3x3", "8x8"} {
		st := filepath.Join(dir, "st"+grid+".ktr")
		if code, _, errs := csRun("gen", "stencil2d", "--grid", grid, "--periodic=false", "-i", "3", "-o", st); code != 0 {
			t.Fatal(errs)
		}
		res := reduceJSONOf(t, "--accuracy", "-o", filepath.Join(dir, "st"+grid+".rsd"), st)
		if res.Clusters != 9 || !exactACC(res.Accuracy.ACC) {
			t.Errorf("%s: %d clusters, ACC %g", grid, res.Clusters, res.Accuracy.ACC)
		}
	}
}

// TestReduceAcurdion: ACURDION's single and double step with K = 9 keep
// at most nine clusters on codes whose ranks differ, noisy and
// imbalanced, and their reductions replay within 5% (ACC >= 0.95).
func TestReduceAcurdion(t *testing.T) {
	dir := t.TempDir()
	ranks := []string{"64"}
	if testenv.Long() {
		ranks = append(ranks, "256")
	}
	for _, kind := range []string{"cg", "mg", "masterworker", "stencil2d", "stencil3d"} {
		for _, n := range ranks {
			path := filepath.Join(dir, kind+n+".ktr")
			args := []string{"gen", kind, "-n", n, "--imbalance", "0.2", "--noise", "0.05", "-o", path}
			switch kind {
			case "cg":
				args = append(args, "-i", "2", "--inner", "3")
			case "masterworker":
				args = append(args, "--tasks", "400")
			default:
				args = append(args, "-i", "3")
			}
			if code, _, errs := csRun(args...); code != 0 {
				t.Fatal(errs)
			}
			for _, m := range []string{"acurdion", "acurdion2"} {
				res := reduceJSONOf(t, "--method", m, "--accuracy", "-o", filepath.Join(dir, kind+n+m+".rsd"), path)
				t.Logf("%s at %s ranks, %s: %d clusters, %d bytes, ACC %.4f; heads alone %+v", kind, n, m, res.Clusters, res.Compressed.Bytes, res.Accuracy.ACC, res.Accuracy.Heads)
				if res.Clusters > 9 || res.Accuracy.ACC < 0.95 || res.Accuracy.Matching != perfect {
					t.Errorf("%s at %s ranks, %s: %d clusters, ACC %.4f, Table II %+v", kind, n, m, res.Clusters, res.Accuracy.ACC, res.Accuracy.Matching)
				}
			}
		}
	}
}

// TestReduceRealTraces: the real IS-32 trace (SimGrid's) and the 4-D
// stencils of TraceR (OTF2) reduce with every method to reductions that
// replay within 5% and, timed, find the trace's waiting; counts above
// 65,535 elements no longer merge IS's ranks.
func TestReduceRealTraces(t *testing.T) {
	traces := []string{
		testenv.Shared(t, "traces/ti/simgrid-replay-multiple-32/is32-flat.txt"),
		testenv.Shared(t, "traces/otf2/tracer-stencil4d-32/traces.otf2"),
		testenv.Shared(t, "traces/otf2/tracer-stencil4d-64/traces.otf2"),
	}
	// Table 1's 16-bit count saturates at 65,535 elements, which every
	// rank of IS exceeds: its ranks collapse into one cluster even with
	// no count tolerance; the exact counts tell 7 kinds of ranks apart.
	is := traces[0]
	if res := reduceJSONOf(t, "--count-tolerance", "0", is); res.Clusters != 7 {
		t.Errorf("IS, exact counts: %d clusters, want 7", res.Clusters)
	}
	if res := reduceJSONOf(t, "--count-tolerance", "0", "--table1", is); res.Clusters != 1 {
		t.Errorf("IS, Table 1's signatures: %d clusters, want 1 (saturated counts)", res.Clusters)
	}
	for _, path := range traces {
		for _, m := range []string{"callpath", "acurdion", "acurdion2"} {
			out := filepath.Join(t.TempDir(), "r.rsd")
			res := reduceJSONOf(t, "--method", m, "--accuracy", "-o", out, path)
			t.Logf("%s, %s: %d clusters, %d bytes, ACC %.4f; heads alone %+v", filepath.Base(filepath.Dir(path)), m, res.Clusters, res.Compressed.Bytes, res.Accuracy.ACC, res.Accuracy.Heads)
			if res.Accuracy.ACC < 0.95 || res.Accuracy.Matching != perfect || m != "callpath" && res.Clusters > 9 {
				t.Errorf("%s, %s: %d clusters, ACC %.4f, Table II %+v", path, m, res.Clusters, res.Accuracy.ACC, res.Accuracy.Matching)
			}
			// The archives are timed: their wait states, kept as loops,
			// are the trace's within 1% (77 ms of waiting against 66,
			// 10% not traced to a delay, when ranks shared their times).
			w := res.Accuracy.Waiting
			if timed := filepath.Ext(path) == ".otf2"; timed != (w != nil) {
				t.Fatalf("%s, %s: waiting compared %+v", path, m, w)
			}
			if w != nil && (math.Abs(w.Reduced-w.Trace) > 0.01*w.Trace || w.ReducedUntraced > 0.001*w.Reduced) {
				t.Errorf("%s, %s: %.6f s of waiting, %.6f not traced; the trace %.6f s", path, m, w.Reduced, w.ReducedUntraced, w.Trace)
			}
		}
	}
}

// TestReduceRefuses: a reduction that would not pass check is not
// written: its reason is said and no file appears.
func TestReduceRefuses(t *testing.T) {
	dir := t.TempDir()
	tr := trace.New(2, trace.NewMeta())
	for r := range int32(2) {
		recv, send := csRecv(1-r, 8), csSend(1-r, 1<<20)
		tr.Ranks[r].Append(&recv)
		tr.Ranks[r].Append(&send)
	}
	in := filepath.Join(dir, "deadlock.ktr")
	if err := ktr.Write(in, tr); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "deadlock.rsd")
	code, _, errs := csRun("reduce", "-o", out, in)
	if code != 1 || !strings.Contains(errs, "not written: the reduction does not pass check: ") {
		t.Errorf("exit %d: %s", code, errs)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("%s written: %v", out, err)
	}
}

// TestReduceKeepsErrors: a trace with an error that does not stop its
// replay (a real program's last message never received, as Ray leaves
// one) reduces: the reduction has the same error, is written, and a note
// says so.
func TestReduceKeepsErrors(t *testing.T) {
	dir := t.TempDir()
	init, fin := trace.NewEvent(trace.Init), trace.NewEvent(trace.Finalize)
	in := csWrite(t, "ktr", "unreceived.ktr",
		[]trace.Event{init, csSend(1, 28), csSend(0, 28), fin}, // the second to itself, never received
		[]trace.Event{init, csRecv(0, 28), fin})
	out := filepath.Join(dir, "unreceived.rsd")
	code, _, errs := csRun("reduce", "-o", out, in)
	if code != 0 || !strings.HasPrefix(errs, "note: ") || !strings.Contains(errs, "the trace itself does not pass check (1 error, the first: rank 0 event 2: send to 0") {
		t.Errorf("exit %d: %s", code, errs)
	}
	code, stdout, errs := csRun("check", out)
	if code != 1 || !strings.Contains(stdout, "rank 0 event 2: send to 0") {
		t.Errorf("check of the reduction: exit %d: %s%s", code, stdout, errs)
	}
}

// TestReduceAccuracyCutRun: the trace of a run cut short (a rank's
// receive whose sender aborted) replays to a deadlock, and so does its
// reduction: --accuracy says that the trace's own replay fails, where
// and why, not the reduction's.
func TestReduceAccuracyCutRun(t *testing.T) {
	init := trace.NewEvent(trace.Init)
	in := csWrite(t, "ktr", "cut.ktr", []trace.Event{init}, []trace.Event{init, csRecv(0, 8)})
	code, _, errs := csRun("reduce", "--accuracy", "-o", filepath.Join(t.TempDir(), "cut.rsd"), in)
	if code != 1 || !strings.Contains(errs, "no replay accuracy: replaying "+in+": deadlock") || strings.Contains(errs, "reduced") {
		t.Errorf("exit %d: %s", code, errs)
	}
}

// TestReduceEmptyRank: a rank without events (it called no MPI) is a
// cluster of its own, written and read back; so is a trace of no events.
func TestReduceEmptyRank(t *testing.T) {
	dir := t.TempDir()
	compute := trace.NewEvent(trace.Compute)
	compute.Compute = 100
	for name, ranks := range map[string][][]trace.Event{
		"one empty": {{trace.NewEvent(trace.Init), compute, trace.NewEvent(trace.Finalize)}, nil},
		"all empty": {nil, nil},
	} {
		in := csWrite(t, "ktr", strings.ReplaceAll(name, " ", "-")+".ktr", ranks...)
		out := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".rsd")
		if code, _, errs := csRun("reduce", "-o", out, in); code != 0 {
			t.Errorf("%s: reduce: exit %d: %s", name, code, errs)
			continue
		}
		if code, stdout, errs := csRun("check", out); code != 0 {
			t.Errorf("%s: check of the reduction: exit %d: %s%s", name, code, stdout, errs)
		}
	}
}

func TestReduceErrors(t *testing.T) {
	cg := genTrace(t, t.TempDir(), "cg")
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"--method", "kmeans"}, 2, `unknown method "kmeans"`},
		{[]string{"--method", "acurdion", "--k", "0"}, 2, "K must be at least 1"},
		{[]string{"--count-tolerance", "-0.1"}, 2, "the count tolerance must be in [0, 1)"},
		{[]string{"--plugin", "lu"}, 2, "--plugin lu: unknown plug-in (known: cg, ft)"},
		{[]string{"--time-error", "2"}, 2, "the time error must be in [0, 1)"},
		{[]string{"-o", "out.ktr"}, 2, "a reduction is written as .rsd"},
	} {
		code, _, errs := csRun(append(append([]string{"reduce"}, c.args...), cg)...)
		if code != c.code || !strings.Contains(errs, c.msg) {
			t.Errorf("%v: exit %d: %s", c.args, code, errs)
		}
	}
}

// TestReduceMethods: every method reduces CG, with and without the CG
// plug-in, to a reduction every rank reads back.
func TestReduceMethods(t *testing.T) {
	cg := genTrace(t, t.TempDir(), "cg")
	src, err := openTrace(cg)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range cluster.Methods {
		for _, plugins := range [][]string{nil, {"cg"}} {
			out, reduced, _, err := reduceTrace(cg, src, cluster.Options{Method: m, K: 9, CountTolerance: 0.05},
				&reduceFlags{plugins: plugins, timeError: prsd.DefaultOptions().TimeError})
			if err != nil {
				t.Fatalf("%s %v: %v", m, plugins, err)
			}
			if _, err := checkReduction(src, reduced); err != nil {
				t.Errorf("%s %v: %v", m, plugins, err)
			}
			if m == cluster.CallPathParam && len(plugins) > 0 && out.Clusters != 4 {
				t.Errorf("%s %v: %d clusters, want 4 (Table 4)", m, plugins, out.Clusters)
			}
		}
	}
}

// TestCheckReductionLossless: a reduction checked against a trace it
// does not give back (a tag of rank 3 changed, which check alone would
// not see) is refused as not lossless, naming the rank's call.
func TestCheckReductionLossless(t *testing.T) {
	cg := genTrace(t, t.TempDir(), "cg")
	src, err := openTrace(cg)
	if err != nil {
		t.Fatal(err)
	}
	_, reduced, _, err := reduceTrace(cg, src, cluster.Options{Method: cluster.CallPathParam, CountTolerance: 0.05},
		&reduceFlags{timeError: prsd.DefaultOptions().TimeError})
	if err != nil {
		t.Fatal(err)
	}
	other := trace.New(src.NumRanks(), *src.Meta())
	changed := false
	for r := range src.NumRanks() {
		rd, err := src.OpenRank(r)
		if err != nil {
			t.Fatal(err)
		}
		for rd.Next() {
			e := *rd.Event()
			if r == 3 && !changed && (e.Kind == trace.Send || e.Kind == trace.Isend) {
				e.Tag, changed = e.Tag+1, true
			}
			other.Ranks[r].Append(&e)
		}
		rd.Close()
	}
	if _, err := checkReduction(other, reduced); !errors.Is(err, prsd.ErrNotLossless) || !strings.Contains(err.Error(), "rank 3 call") {
		t.Errorf("checkReduction: %v, want rank 3's call not given back", err)
	}
}

// TestReduceOneSided: a one-sided trace (two windows; each rank puts to
// the next and gets from the previous, in fences) reduces: its windows
// (Event.Handle) are kept, every rank reads back its own calls, the
// reduction passes check and is written, and replays as the trace does.
func TestReduceOneSided(t *testing.T) {
	const ranks = 4
	tr := trace.New(ranks, trace.NewMeta())
	for r := range int32(ranks) {
		add := func(k trace.Kind, win uint32, target int32, bytes int64) {
			e := trace.NewEvent(k)
			e.Handle, e.Partner = win, target
			if k == trace.Put {
				e.SendBytes = bytes
			} else if k == trace.Get {
				e.RecvBytes = bytes
			}
			tr.Ranks[r].Append(&e)
		}
		add(trace.Init, 0, trace.NoRank, 0)
		add(trace.WinCreate, 7, trace.NoRank, 0)
		add(trace.WinCreate, 9, trace.NoRank, 0)
		for it := range 5 {
			add(trace.WinFence, 7, trace.NoRank, 0)
			add(trace.WinFence, 9, trace.NoRank, 0)
			add(trace.Put, 7, (r+1)%ranks, 1024*int64(it+1))
			add(trace.Get, 9, (r+ranks-1)%ranks, 64)
			add(trace.WinFence, 7, trace.NoRank, 0)
			add(trace.WinFence, 9, trace.NoRank, 0)
		}
		add(trace.WinFree, 9, trace.NoRank, 0)
		add(trace.WinFree, 7, trace.NoRank, 0)
		add(trace.Finalize, 0, trace.NoRank, 0)
	}
	dir := t.TempDir()
	in, out := filepath.Join(dir, "rma.ktr"), filepath.Join(dir, "rma.rsd")
	if err := ktr.Write(in, tr); err != nil {
		t.Fatal(err)
	}
	res := reduceJSONOf(t, "--accuracy", "-o", out, in)
	if res.Accuracy.ACC < 0.999 {
		t.Errorf("ACC %g", res.Accuracy.ACC)
	}
	back, err := openTrace(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := prsd.Verify(tr, back.(*prsd.Trace)); err != nil {
		t.Error(err)
	}
}

// TestReduceAccuracyAsWritten: the accuracy is that of the reduction as
// written. A timed exchange whose times are irregular is kept as its
// events: at the default time error, their times rounded within it, the
// reduction's replay is the written file's; with --time-error 0 they are
// the trace's, and so is the replay, where its loops, times within 1%,
// would not be. The report's reduction keeps the events exact at the
// default time error.
func TestReduceAccuracyAsWritten(t *testing.T) {
	const ranks, calls = 2, 400
	tr := trace.New(ranks, trace.NewMeta())
	rng := rand.New(rand.NewPCG(1, 2))
	for r := range int32(ranks) {
		now := trace.Time(0)
		for i := range calls {
			k := trace.Send
			if (i+int(r))%2 == 1 {
				k = trace.Recv
			}
			e := trace.NewEvent(k)
			e.Partner, e.Tag, e.CallSite = 1-r, 1, uint64(k)
			e.SendBytes = 1000 * int64(1+i%7)
			if k == trace.Recv {
				e.SendBytes, e.RecvBytes = 0, 1000*int64(1+i%7)
			}
			now += trace.Time(1e6 + rng.IntN(1e7))
			e.Enter, e.Exit, e.HasTime = now, now+trace.Time(1e5+rng.IntN(1e6)), true
			now = e.Exit
			tr.Ranks[r].Append(&e)
		}
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "x.ktr")
	if err := ktr.Write(in, tr); err != nil {
		t.Fatal(err)
	}
	rsd := filepath.Join(dir, "x.rsd")
	for _, exact := range []bool{false, true} {
		args := []string{"reduce", "--json", "--accuracy", "-o", rsd, in}
		if exact {
			args = append(args, "--time-error", "0")
		}
		code, out, errs := csRun(args...)
		var res struct {
			reduceResult
			Compressed struct {
				AsEvents    int  `json:"clusters_as_events"`
				EventsExact bool `json:"events_exact"`
			} `json:"compressed"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &res) != nil {
			t.Fatalf("exit %d: %s%s", code, out, errs)
		}
		if res.Compressed.EventsExact != exact {
			t.Errorf("events_exact %v at --time-error 0 %v", res.Compressed.EventsExact, exact)
		}
		if res.Compressed.AsEvents != res.Clusters {
			t.Fatalf("%d of %d clusters kept as events, want all", res.Compressed.AsEvents, res.Clusters)
		}
		a := res.Accuracy
		if exact {
			if a.Original != a.Reduced || a.Original == 0 || !a.Same {
				t.Errorf("exact: replayed in %.9f s, the reduction as written in %.9f s (same events: %v)", a.Original, a.Reduced, a.Same)
			}
			// The report's reduction keeps the events exact at the
			// default time error: not replayed twice.
			r, err := reportReduction(in, tr, "2x1Gf,125MBps,50us", false, nil)
			if err != nil || r.ACC != 1 || !strings.Contains(r.Text, "times exact") || !strings.Contains(r.Text, "the same replay") {
				t.Errorf("the report's reduction: %v\n%+v", err, r)
			}
			continue
		}
		code, out, errs = csRun("simulate", "--json", rsd, "--cluster", "2x1Gf,125MBps,50us")
		var sim struct {
			Time float64 `json:"simulated_time"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &sim) != nil {
			t.Fatalf("simulate: exit %d: %s%s", code, out, errs)
		}
		if a.Reduced != sim.Time || a.Same || math.Abs(a.Reduced-a.Original) > 0.01*a.Original {
			t.Errorf("rounded: the reduction replays in %.9f s, as written in %.9f s (same events: %v), the trace in %.9f s",
				a.Reduced, sim.Time, a.Same, a.Original)
		}
	}
}

// TestReduceAccuracySameReplay: a reduction that reads back every event
// as recorded is not replayed again (its replay is the trace's); one that
// does not, a noisy trace's timings kept within 1%, is.
func TestReduceAccuracySameReplay(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		gen  []string
		same bool
	}{
		{"regular", nil, true},
		{"noisy", []string{"--noise", "0.05", "--imbalance", "0.1"}, false},
	} {
		path := filepath.Join(dir, c.name+".ktr")
		if code, _, errs := csRun(append([]string{"gen", "stencil2d", "-n", "16", "-i", "20", "-o", path}, c.gen...)...); code != 0 {
			t.Fatal(errs)
		}
		a := reduceJSONOf(t, "--accuracy", path).Accuracy
		if a.Same != c.same || a.Same != (a.Reduced == a.Original) || a.Original <= 0 {
			t.Errorf("%s: same events %v (want %v), replayed in %.9f s, the reduction in %.9f s", c.name, a.Same, c.same, a.Original, a.Reduced)
		}
	}
}

// TestReduceAccuracyNoTime: a trace whose replay takes no time (no
// computation, no message) and its reduction replay alike: ACC 1, not
// the 0 that 1 - |t - t'| / t left for t = 0 (FuzzVerbsPrograms found it).
func TestReduceAccuracyNoTime(t *testing.T) {
	path := filepath.Join(t.TempDir(), "idle.ti")
	if err := os.WriteFile(path, []byte("0 init\n0 compute 0\n0 finalize\n1 init\n1 finalize\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if a := reduceJSONOf(t, "--accuracy", path).Accuracy; a.Original != 0 || a.Reduced != 0 || a.ACC != 1 {
		t.Errorf("replayed in %g s, the reduction in %g s: ACC %g, want 0, 0 and 1", a.Original, a.Reduced, a.ACC)
	}
}

// TestReduceAggregateCounts: with --aggregate-counts, IS's alltoallv
// counts are recorded as their instances' means; the reduction is written
// (it passes check), is smaller than the one that keeps every count, and
// replays close to the trace; a tolerance outside [0, 1) is refused.
func TestReduceAggregateCounts(t *testing.T) {
	dir := t.TempDir()
	is := filepath.Join(dir, "is.ktr")
	if code, _, errs := csRun("gen", "is", "-n", "32", "-i", "3", "-b", "64K", "-o", is); code != 0 {
		t.Fatal(errs)
	}
	kept := reduceJSONOf(t, "-o", filepath.Join(dir, "kept.rsd"), is)
	code, out, errs := csRun("reduce", "--json", "--accuracy", "--aggregate-counts", "0.1", "-o", filepath.Join(dir, "agg.rsd"), is)
	var res struct {
		reduceResult
		Aggregated struct {
			Instances, Aggregated int
			MaxError              float64 `json:"max_error"`
		} `json:"aggregated_counts"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil {
		t.Fatalf("exit %d: %s%s", code, out, errs)
	}
	if res.Aggregated.Aggregated != 3 || res.Aggregated.Instances != 3 || res.Aggregated.MaxError > 0.1 {
		t.Errorf("aggregated %+v, want 3 of 3 within 10%%", res.Aggregated)
	}
	if 2*res.Compressed.Bytes > kept.Compressed.Bytes {
		t.Errorf("%d bytes aggregated, %d kept", res.Compressed.Bytes, kept.Compressed.Bytes)
	}
	if res.Accuracy.ACC < 0.99 || res.Accuracy.Matching.Count == 100 {
		t.Errorf("ACC %g, counts read back as recorded %g%%", res.Accuracy.ACC, res.Accuracy.Matching.Count)
	}
	if code, _, _ := csRun("check", filepath.Join(dir, "agg.rsd")); code != 0 {
		t.Errorf("check of the aggregated reduction: exit %d", code)
	}
	if code, _, errs := csRun("reduce", "--aggregate-counts", "1", is); code != 2 || !strings.Contains(errs, "--aggregate-counts") {
		t.Errorf("--aggregate-counts 1: exit %d: %s", code, errs)
	}
}

// TestReduceAccuracyAnalytic: --accuracy --analytic replays the trace and
// its reduction with the contention-free model (what simulate --analytic
// gives the trace), says so, and the reduction of IS, every rank's calls
// kept and, at --time-error 0, every computation, replays exactly.
func TestReduceAccuracyAnalytic(t *testing.T) {
	dir := t.TempDir()
	is := filepath.Join(dir, "is.ktr")
	if code, _, errs := csRun("gen", "is", "-n", "32", "-i", "3", "-b", "64K", "-o", is); code != 0 {
		t.Fatal(errs)
	}
	code, out, errs := csRun("reduce", "--json", "--accuracy", "--analytic", "--time-error", "0", is)
	var res struct {
		Accuracy struct {
			Analytic bool    `json:"analytic"`
			Original float64 `json:"original_time"`
			ACC      float64 `json:"acc"`
		} `json:"accuracy"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil {
		t.Fatalf("exit %d: %s%s", code, out, errs)
	}
	if !res.Accuracy.Analytic || !exactACC(res.Accuracy.ACC) {
		t.Errorf("accuracy %+v", res.Accuracy)
	}
	code, out, errs = csRun("simulate", "--analytic", "--json", is, "--cluster", "32x1Gf,125MBps,50us")
	var sim struct {
		SimulatedTime float64 `json:"simulated_time"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &sim) != nil {
		t.Fatalf("simulate: exit %d: %s%s", code, out, errs)
	}
	if sim.SimulatedTime != res.Accuracy.Original {
		t.Errorf("replayed in %g s, simulate --analytic says %g s", res.Accuracy.Original, sim.SimulatedTime)
	}
}

// TestReduceTimeHistograms: --time-histograms writes a noisy stencil's
// reduction that says so, is smaller than without, passes check and
// replays within 1% of the trace.
func TestReduceTimeHistograms(t *testing.T) {
	dir := t.TempDir()
	st := filepath.Join(dir, "st.ktr")
	if code, _, errs := csRun("gen", "stencil2d", "--grid", "4x4", "-i", "400", "--noise", "0.05", "--imbalance", "0.1", "-o", st); code != 0 {
		t.Fatal(errs)
	}
	levels := reduceJSONOf(t, "--time-error", "0.11", st)
	code, out, errs := csRun("reduce", "--json", "--accuracy", "--time-error", "0.11", "--time-histograms", "-o", filepath.Join(dir, "h.rsd"), st)
	var res struct {
		reduceResult
		Compressed struct {
			Bytes      int  `json:"bytes"`
			Histograms bool `json:"time_histograms"`
		} `json:"compressed"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil {
		t.Fatalf("exit %d: %s%s", code, out, errs)
	}
	if !res.Compressed.Histograms || res.Compressed.Bytes >= levels.Compressed.Bytes {
		t.Errorf("histograms %v: %d bytes, %d without", res.Compressed.Histograms, res.Compressed.Bytes, levels.Compressed.Bytes)
	}
	if res.Accuracy.ACC < 0.99 {
		t.Errorf("ACC %g", res.Accuracy.ACC)
	}
	if code, _, errs := csRun("check", filepath.Join(dir, "h.rsd")); code != 0 {
		t.Errorf("check of the reduction: exit %d: %s", code, errs)
	}
}

// TestReplayOnFewerHosts: reduce --accuracy and report replay a trace on a
// machine of fewer hosts than ranks as simulate does (ranks round robin
// on the hosts, as smpirun places them), not refuse it.
func TestReplayOnFewerHosts(t *testing.T) {
	dir := t.TempDir()
	st := filepath.Join(dir, "st.ktr")
	if code, _, errs := csRun("gen", "stencil2d", "--grid", "2x3", "-i", "20", "-o", st); code != 0 {
		t.Fatal(errs)
	}
	const machine = "4x1Gf,125MBps,50us"
	acc := reduceJSONOf(t, "--accuracy", "--machine", machine, st).Accuracy
	code, out, errs := csRun("simulate", "--json", st, "--cluster", machine)
	var sim struct {
		SimulatedTime float64 `json:"simulated_time"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &sim) != nil {
		t.Fatalf("simulate: exit %d: %s%s", code, out, errs)
	}
	if acc.Original != sim.SimulatedTime {
		t.Errorf("reduce --accuracy replayed the trace in %g s on %s, simulate in %g s", acc.Original, machine, sim.SimulatedTime)
	}
	if code, _, errs := csRun("report", "--machine", machine, "-o", filepath.Join(dir, "r.html"), st); code != 0 {
		t.Errorf("report --machine %s: exit %d: %s", machine, code, errs)
	}
}

// TestReduceKeepsWaitStates: a noisy, imbalanced stencil's replay, timed,
// reduced at a time error of 10% moves its waiting by 17% there; reduce
// lowers the time error until no kind of wait state moves by more than
// 10% of the trace's waiting, and says so, unless --keep-wait-states=false.
func TestReduceKeepsWaitStates(t *testing.T) {
	dir := t.TempDir()
	ti := filepath.Join(dir, "st.ti")
	timed := filepath.Join(dir, "st.ktr")
	if code, _, errs := csRun("gen", "stencil2d", "--grid", "4x4", "-i", "200", "--noise", "0.05", "--imbalance", "0.1", "--seed", "3", "-o", ti); code != 0 {
		t.Fatalf("gen: %s", errs)
	}
	if code, _, errs := csRun("simulate", "--cluster", "16x1Gf,125MBps,50us", "--timed-trace", timed, ti); code != 0 {
		t.Fatalf("simulate: %s", errs)
	}
	type result struct {
		reduceResult
		Compressed struct {
			TimeError float64      `json:"time_error"`
			Lowered   *loweredJSON `json:"lowered"`
		} `json:"compressed"`
	}
	for _, keep := range []bool{true, false} {
		code, out, errs := csRun("reduce", "--json", "--accuracy", "--analytic", "--time-error", "0.1", "--keep-wait-states="+strconv.FormatBool(keep), timed)
		var res result
		if code != 0 || json.Unmarshal([]byte(out), &res) != nil {
			t.Fatalf("exit %d: %s%s", code, out, errs)
		}
		w, c := res.Accuracy.Waiting, res.Compressed
		if w == nil || w.Trace <= 0 {
			t.Fatalf("keep %v: no wait states compared: %s", keep, out)
		}
		moved := math.Abs(w.Reduced-w.Trace) / w.Trace
		if !keep {
			if c.TimeError != 0.1 || c.Lowered != nil || moved <= 0.1 {
				t.Errorf("kept 10%%: time error %g (%+v), the waiting moved by %.1f%%, want more than 10%%", c.TimeError, c.Lowered, 100*moved)
			}
			continue
		}
		if c.TimeError >= 0.1 || c.Lowered == nil || c.Lowered.Asked != 0.1 || c.Lowered.Moved <= 0.1*c.Lowered.Waiting || moved > 0.1 {
			t.Errorf("time error %g (%+v): the waiting moved by %.1f%%", c.TimeError, c.Lowered, 100*moved)
		}
	}
}
