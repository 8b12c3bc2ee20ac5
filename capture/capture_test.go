package capture_test

import (
	"fmt"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"kairos/capture"
	"kairos/check"
	"kairos/cluster"
	"kairos/format"
	"kairos/format/otf2"
	"kairos/format/ti"
	"kairos/internal/testenv"
	"kairos/internal/tracertest"
	"kairos/platform"
	"kairos/prsd"
	"kairos/sim"
	"kairos/trace"
)

// build builds the tracer (with OTF2 if otf2 is set) and the test
// program with Open MPI's mpicc.
func build(t *testing.T, dir string, otf2 bool) (lib, app string) {
	t.Helper()
	lib = tracertest.OpenMPI.Tracer(t, dir, otf2)
	return lib, tracertest.OpenMPI.Compile(t, dir, tracertest.Testdata("app.c"))
}

var run = tracertest.Command

// mpirun runs app on 4 processes of Open MPI with the tracer preloaded,
// writing the trace to dir/trace in the tracer's default formats, and
// returns mpirun's output.
func mpirun(t *testing.T, dir, lib, app string, args ...string) string {
	t.Helper()
	return mpirunFormat(t, dir, "", lib, app, args...)
}

// mpirunFormat is mpirun with KAIROS_TRACE_FORMAT set to format.
func mpirunFormat(t *testing.T, dir, format, lib, app string, args ...string) string {
	t.Helper()
	r := tracertest.Recording{Lib: lib, Trace: filepath.Join(dir, "trace"), Format: format, NP: 4, Dir: dir}
	return tracertest.OpenMPI.Launch(t, r, app, args...)
}

// calls returns each rank's MPI calls in a trace, as comparable text:
// kind, partners, tag and bytes, without computation.
func calls(t *testing.T, path string) [][]string {
	t.Helper()
	src, _, err := format.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	out := make([][]string, src.NumRanks())
	if err := trace.ForEach(src, func(r, _ int, e *trace.Event) error {
		if e.Kind.IsMPI() {
			out[r] = append(out[r], fmt.Sprintf("%s %d %d %d %d %d %v %v", e.Kind, e.Partner, e.Source, e.Tag, e.SendBytes, e.RecvBytes, e.SendCounts, e.RecvCounts))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestTracer traces the test program on Open MPI: a trace of 4 ranks that
// Kairos validates, with computation between the calls, sendrecv with
// MPI_PROC_NULL written as its one half, and the collective on a
// sub-communicator (which TI cannot express) left out and counted.
func TestTracer(t *testing.T) {
	dir := t.TempDir()
	lib, app := build(t, dir, false)
	out := mpirun(t, dir, lib, app, "split", "shift", "more")
	// The summary: what TI leaves out, by kind, and where every call is.
	for _, want := range []string{"kairos_trace: the TI trace leaves out 4 calls (all ranks)",
		"MPI_Barrier on sub-communicators", "kairos convert --speed 1e+09 " + filepath.Join(dir, "trace", "traces.otf2")} {
		if !strings.Contains(out, want) {
			t.Errorf("mpirun output lacks %q:\n%s", want, out)
		}
	}
	index := filepath.Join(dir, "trace", "index.txt")
	src, _, err := format.Open(index)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := check.Check(src, check.Options{Protocol: check.SimGrid})
	if err != nil || !rep.OK() {
		t.Fatalf("check: %v %+v", err, rep)
	}
	got := calls(t, index)
	// Per rank: init, 3 x 12 calls of the time-step loop, the shift (4
	// calls in the middle of the line), 18 calls of "more", 13
	// collectives, finalize.
	if len(got) != 4 || len(got[1]) != 1+3*12+4+18+13+1 {
		t.Fatalf("%d ranks, rank 1 has %d calls:\n%s", len(got), len(got[1]), strings.Join(got[1], "\n"))
	}
	// Rank 1's first time step: the ring (receive from 0 first), the
	// halo exchange, a wait on one request, sendrecv and allreduce.
	want := []string{
		"init -1 -1 0 0 0 [] []",
		"recv 0 -1 1 0 800 [] []",
		"send 2 -1 1 800 0 [] []",
		"irecv 0 -1 2 0 8192 [] []",
		"irecv 2 -1 3 0 8192 [] []",
		"isend 2 -1 2 8192 0 [] []",
		"isend 0 -1 3 8192 0 [] []",
		"waitall -1 -1 0 0 0 [] []",
		"irecv 0 -1 4 0 40 [] []",
		"send 2 -1 4 40 0 [] []",
		"wait 1 0 4 0 0 [] []",
		"sendRecv 2 0 0 8 8 [] []",
		"allreduce -1 -1 0 128 0 [] []",
	}
	if !slices.Equal(got[1][:len(want)], want) {
		t.Errorf("rank 1 begins\n%s\nwant\n%s", strings.Join(got[1][:len(want)], "\n"), strings.Join(want, "\n"))
	}
	// "more": waitany, waitsome and testall are a wait per completed
	// request, persistent requests an isend or irecv per start.
	more := []string{
		"irecv 0 -1 7 0 32 [] []", "isend 2 -1 7 32 0 [] []", "wait", "wait",
		"irecv 0 -1 8 0 32 [] []", "isend 2 -1 8 32 0 [] []", "wait", "wait",
		"irecv 0 -1 9 0 32 [] []", "isend 2 -1 9 32 0 [] []", "wait", "wait",
		"irecv 0 -1 10 0 32 [] []", "isend 2 -1 10 32 0 [] []", "waitall -1 -1 0 0 0 [] []",
		"irecv 0 -1 10 0 32 [] []", "isend 2 -1 10 32 0 [] []", "waitall -1 -1 0 0 0 [] []",
	}
	for i, w := range more {
		if g := got[1][5+3*12+i]; !strings.HasPrefix(g, w) {
			t.Errorf("rank 1's call %d: %s, want %s", 5+3*12+i, g, w)
		}
	}
	// The shift, a sendrecv of tag 6: the ends' with MPI_PROC_NULL is
	// their one half, the others' its isend, irecv and waits (a sendRecv
	// line has no tags: the replay takes them as 0).
	for r, w := range map[int][]string{
		0: {"send 1 -1 6 6 0 [] []"},
		1: {"isend 2 -1 6 6 0 [] []", "irecv 0 -1 6 0 6 [] []", "wait 2 1 6 0 0 [] []", "wait 1 0 6 0 0 [] []"},
		3: {"recv 2 -1 6 0 6 [] []"},
	} {
		if g := got[r][1+3*12 : 1+3*12+len(w)]; !slices.Equal(g, w) {
			t.Errorf("rank %d's shift: %v, want %v", r, g, w)
		}
	}
	computes := 0
	if err := trace.ForEach(src, func(_, _ int, e *trace.Event) error {
		if e.Kind == trace.Compute && e.Compute > 0 {
			computes++
		}
		return nil
	}); err != nil || computes < 4*3 {
		t.Errorf("%d computations recorded (%v)", computes, err)
	}
}

// otf2Tracer builds the tracer with OTF2 (skipping the test where
// Debian's libotf2-trace-dev is not installed).
func otf2Tracer(t *testing.T, dir string) (lib, app string) {
	t.Helper()
	return build(t, dir, true)
}

// openArchive has otf2-print read the tracer's 4-rank archive and opens
// it, checking that Kairos finds no defects in it.
func openArchive(t *testing.T, archive string) trace.Source {
	t.Helper()
	if p, err := exec.LookPath("otf2-print"); err == nil {
		run(t, filepath.Dir(archive), nil, p, archive)
	} else if testenv.Required() {
		t.Fatal("KAIROS_REQUIRE_EXTERNAL=1 but otf2-print is not installed (Debian package otf2-tools)")
	}
	src, _, err := format.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	if src.NumRanks() != 4 {
		t.Fatalf("%s: %d ranks", archive, src.NumRanks())
	}
	if d := src.(*otf2.Source).Defects(); len(d) > 0 {
		t.Errorf("the archive's defects: %v", d)
	}
	return src
}

// simulate replays a trace on a 4-node cluster, a timed one with the time
// between its calls as computation at 1 Gf (the tracer's default
// KAIROS_TRACE_SPEED) above SimGrid's 1 us threshold.
func simulate(t *testing.T, path string, timed bool) float64 {
	t.Helper()
	src, _, err := format.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if timed {
		src = trace.UntimedAbove(src, 1e9, trace.FromSeconds(1e-6))
	}
	p, err := platform.ParseCluster("4x1Gf,125MBps,50us")
	if err != nil {
		t.Fatal(err)
	}
	res, err := sim.Simulate(src, p, nil, sim.DefaultConfig(), nil)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return res.Time
}

// TestTracerOTF2 traces the test program (with a message to self, a
// receive from any source, every send mode, MPI_IN_PLACE, probes and
// non-blocking collectives) with the
// OTF2 tracer, writing both formats in one run: otf2-print reads the archive; Kairos reads it
// as 4 ranks that validate, with every call of the TI trace and, which TI
// cannot express, the barriers of the two sub-communicators; a second run
// into the same directory leaves the traces alone; and the OTF2 trace,
// replayed with its computation at the TI trace's speed, takes the same
// simulated time as the TI trace.
func TestTracerOTF2(t *testing.T) {
	dir := t.TempDir()
	lib, app := otf2Tracer(t, dir)
	mpirunFormat(t, dir, "ti,otf2", lib, app, "split", "shift", "more", "self", "modes", "inplace", "probe", "icoll", "ipoll")
	archive := filepath.Join(dir, "trace", "traces.otf2")
	src := openArchive(t, archive)
	rep, err := check.Check(src, check.Options{})
	if err != nil || !rep.OK() {
		t.Fatalf("check: %v %+v", err, rep)
	}
	// The ranks share rank 0's node, and its clock: offsets 0, unmeasured.
	for r := range 4 {
		offs, err := src.(*otf2.Source).Archive().ClockOffsets(src.(*otf2.Source).RankLocation(r))
		if err != nil || len(offs) != 2 || offs[0].Offset != 0 || offs[1].Offset != 0 || offs[0].StdDev != 0 || offs[1].StdDev != 0 {
			t.Errorf("rank %d: clock offsets %+v (%v), want two of 0 ns within 0 ns", r, offs, err)
		}
	}
	// The calls of each kind but completions, which the two formats group
	// differently (a waitsome of one request is a wait in TI, a waitall
	// in OTF2; a testany that completes nothing is not in TI), and the
	// calls that TI does not have (probes, the calls of non-blocking
	// collectives and their completions that complete nothing more,
	// MPI_Comm_free); a sendrecv of tags other than 0 is an isend and an
	// irecv in TI.
	kinds := func(path string) []map[string]int {
		out := make([]map[string]int, 4)
		for r, calls := range calls(t, path) {
			out[r] = map[string]int{}
			for _, c := range calls {
				f := strings.Fields(c)
				switch k := f[0]; {
				case k == "wait" || k == "waitall" || k == "test" || k == "local" || k == "deferred" || k == "comm_free":
				case k == "sendRecv" && f[3] != "0": // TI's is an isend and an irecv
					out[r]["isend"]++
					out[r]["irecv"]++
				default:
					out[r][k]++
				}
			}
		}
		return out
	}
	ti, otf2 := kinds(filepath.Join(dir, "trace", "index.txt")), kinds(archive)
	for r := range 4 {
		ti[r]["barrier"]++ // on the sub-communicator
		if !maps.Equal(ti[r], otf2[r]) {
			t.Errorf("rank %d: OTF2 calls %v, want %v", r, otf2[r], ti[r])
		}
	}
	comms, frees := map[int]bool{}, 0
	if err := trace.ForEach(src, func(r, _ int, e *trace.Event) error {
		if e.Kind == trace.Barrier && e.Comm != trace.WorldComm {
			comms[int(e.Comm)] = true
		}
		if e.Kind == trace.CommFree && e.Duration() > 0 {
			frees++ // its time MPI time, as sst-dumpi and Score-P have it
		}
		return nil
	}); err != nil || len(comms) != 2 || frees != 4 {
		t.Errorf("barriers on %d sub-communicators (%v), want 2; %d comm_free of 4", len(comms), err, frees)
	}

	// A second run leaves the first's traces alone and writes to a
	// fresh directory, and says so.
	if out := mpirunFormat(t, dir, "otf2", lib, app); !strings.Contains(out, "holds a trace already: this run's is written to") {
		t.Errorf("a second run into the archive's directory: %s", out)
	}
	if again, _, err := format.Open(archive); err != nil || again.NumRanks() != 4 {
		t.Errorf("the first run's archive after the second: %v", err)
	}

	// Without the sub-communicators, nor polling (a testall that completes
	// nothing is in the archive, as Score-P records it, and not in TI), the
	// two traces replay alike: the reader places the non-blocking
	// collectives where the tracer writes them in TI.
	dir = t.TempDir()
	mpirunFormat(t, dir, "ti,otf2", lib, app, "shift", "self", "modes", "inplace", "icoll", "probe")
	want, got := simulate(t, filepath.Join(dir, "trace", "index.txt"), false), simulate(t, filepath.Join(dir, "trace", "traces.otf2"), true)
	t.Logf("simulated: TI trace %.9f s, OTF2 trace %.9f s", want, got)
	if math.Abs(got-want) > 1e-9*want {
		t.Errorf("the OTF2 trace replays in %.9f s, the TI trace in %.9f s", got, want)
	}
}

// TestTracerCommunicators: the archive names each point-to-point call's
// communicator and the partner's rank in it, as Score-P's does: a pair and
// tag that crosses on a duplicate of MPI_COMM_WORLD checks and replays
// (both were read as world's, and the replay truncated), and the messages
// of a split half read with the world ranks the TI trace has. Broadcasts
// on world and on its duplicate by MPI_Comm_idup, in a different order on
// rank 0, check (the duplicate was world, and check found mismatched
// collectives).
func TestTracerCommunicators(t *testing.T) {
	dir := t.TempDir()
	lib, app := otf2Tracer(t, dir)
	mpirunFormat(t, dir, "ti,otf2", lib, app, "comms")
	archive := filepath.Join(dir, "trace", "traces.otf2")
	src := openArchive(t, archive)
	if rep, err := check.Check(src, check.Options{}); err != nil || !rep.OK() {
		t.Fatalf("check: %v %+v", err, rep)
	}
	simulate(t, archive, true) // it fails the test where the replay does
	p2p := func(path string) [][]string {
		var out [][]string
		for _, cs := range calls(t, path) {
			var mine []string
			for _, c := range cs {
				switch f := strings.Fields(c); f[0] {
				case "send", "recv", "isend", "irecv":
					mine = append(mine, c)
				case "sendRecv": // TI's, of a tag other than 0, an isend and an irecv
					mine = append(mine, fmt.Sprintf("isend %s -1 %s %s 0 [] []", f[1], f[3], f[4]),
						fmt.Sprintf("irecv %s -1 %s 0 %s [] []", f[2], f[3], f[5]))
				}
			}
			slices.Sort(mine)
			out = append(out, mine)
		}
		return out
	}
	ti, otf2 := p2p(filepath.Join(dir, "trace", "index.txt")), p2p(archive)
	if !slices.EqualFunc(ti, otf2, slices.Equal) {
		t.Errorf("point-to-point calls: OTF2 %q, TI %q", otf2, ti)
	}
	comms := map[uint32]bool{}
	if err := trace.ForEach(src, func(r, _ int, e *trace.Event) error {
		if e.Kind.IsPointToPoint() {
			comms[e.Comm] = true
		}
		return nil
	}); err != nil || len(comms) != 4 {
		t.Errorf("point-to-point calls on %d communicators (%v), want 4: world, the duplicate and the two halves", len(comms), err)
	}
}

// TestTracerMatchesSimGrid: the same program traced by Kairos' tracer on
// Open MPI and by SimGrid 3.32's own (smpirun -trace-ti) makes the same
// calls with the same partners, tags and bytes on every rank (the
// computation differs: it is measured).
func TestTracerMatchesSimGrid(t *testing.T) {
	smpicc := testenv.Tool(t, "smpicc", "libsimgrid-dev")
	testenv.Tool(t, "smpirun", "libsimgrid-dev")
	dir := t.TempDir()
	lib, app := build(t, dir, false)
	mpirun(t, dir, lib, app)
	ours := calls(t, filepath.Join(dir, "trace", "index.txt"))

	run(t, dir, nil, smpicc, "-O1", "-o", "app_sg", filepath.Join(testenv.RepoRoot(), "capture", "testdata", "app.c"))
	writeCluster(t, dir)
	run(t, dir, nil, "smpirun", "-np", "4", "-platform", "p.xml", "-hostfile", "hf", "-trace-ti",
		"--cfg=tracing/filename:sgti", "--cfg=smpi/host-speed:1Gf", "--log=root.thresh:warning", "./app_sg")
	theirs := calls(t, filepath.Join(dir, "sgti"))
	if len(ours) != len(theirs) {
		t.Fatalf("%d ranks, SimGrid %d", len(ours), len(theirs))
	}
	for r := range ours {
		if !slices.Equal(ours[r], theirs[r]) {
			t.Errorf("rank %d:\nKairos' tracer\n%s\nSimGrid's\n%s", r, strings.Join(ours[r], "\n"), strings.Join(theirs[r], "\n"))
		}
	}
}

// writeCluster writes dir/p.xml, SimGrid's form of the 4-node cluster
// simulate replays on, and dir/hf, its hostfile.
func writeCluster(t *testing.T, dir string) {
	t.Helper()
	plat := `<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1"><cluster id="c" prefix="node-" radical="0-3" suffix="" speed="1Gf" bw="125MBps" lat="50us"/></platform>
`
	if err := os.WriteFile(filepath.Join(dir, "p.xml"), []byte(plat), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "hf"), []byte("node-0\nnode-1\nnode-2\nnode-3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkTracerOverhead times a ping-pong of 8-byte messages between two
// Open MPI processes (200,000 round trips) without the tracer, with it
// writing TI and, where OTF2 is installed, with it built with OTF2 writing
// the archive, and reports the time per round trip (a send and a receive
// on each side).
func BenchmarkTracerOverhead(b *testing.B) {
	for name, s := range tracerOverhead(b, "overhead.c", "200000") {
		b.ReportMetric(s*1e9, "ns/roundtrip-"+name)
	}
}

// tracerOverhead builds the tracer (TI, and OTF2 where libotf2 is
// installed) and the program src of testdata, runs it with args on 2
// ranks of Open MPI without and with each tracer, b.N times, and returns
// the mean seconds the program prints (a line of its own), by tracer
// ("plain" without).
func tracerOverhead(b *testing.B, src string, args ...string) map[string]float64 {
	dir := b.TempDir()
	mpicc := testenv.Tool(b, "mpicc", "libopenmpi-dev")
	testenv.Tool(b, "mpirun", "openmpi-bin")
	tracer := filepath.Join(dir, capture.FileName)
	if err := os.WriteFile(tracer, capture.Source, 0o644); err != nil {
		b.Fatal(err)
	}
	prog := filepath.Join(dir, strings.TrimSuffix(src, ".c"))
	run(b, dir, nil, mpicc, "-O2", "-o", prog, filepath.Join(testenv.RepoRoot(), "capture", "testdata", src))
	libs := map[string]string{"plain": ""}
	libs["ti"] = filepath.Join(dir, "libkairos_trace.so")
	run(b, dir, nil, mpicc, "-O2", "-shared", "-fPIC", "-o", libs["ti"], tracer)
	if _, err := os.Stat("/usr/include/otf2/otf2.h"); err == nil {
		libs["otf2"] = filepath.Join(dir, "libkairos_trace_otf2.so")
		run(b, dir, nil, mpicc, "-O2", "-shared", "-fPIC", "-DKAIROS_OTF2", "-o", libs["otf2"], tracer, "-lotf2")
	}
	libs["ti+reduce"] = libs["ti"]   // signing and folding every call, reducing at MPI_Finalize (callpath)
	libs["ti+acurdion"] = libs["ti"] // the same, the calls folded into loops too
	total := map[string]float64{}
	for b.Loop() {
		for name, lib := range libs {
			trace := filepath.Join(dir, "trace-"+name)
			os.RemoveAll(trace)
			env := []string{"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1", "KAIROS_TRACE=" + trace, "KAIROS_TRACE_REDUCE="}
			switch name {
			case "ti+reduce":
				env[len(env)-1] += "callpath"
			case "ti+acurdion":
				env[len(env)-1] += "acurdion"
			}
			full := []string{"--oversubscribe", "-np", "2"}
			if lib != "" {
				full = append(full, "-x", "LD_PRELOAD="+lib, "-x", "KAIROS_TRACE", "-x", "KAIROS_TRACE_REDUCE")
			}
			out := run(b, dir, env, "mpirun", append(append(full, prog), args...)...)
			s, ok := -1.0, false
			for _, line := range strings.Split(out, "\n") { // the program's line, among the tracer's
				if v, err := strconv.ParseFloat(strings.TrimSpace(line), 64); err == nil {
					s, ok = v, true
				}
			}
			if !ok {
				b.Fatalf("no time in the output:\n%s", out)
			}
			total[name] += s
		}
	}
	for name := range total {
		total[name] /= float64(b.N)
	}
	return total
}

// TestTracerInPlace traces the collectives with MPI_IN_PLACE, whose
// ignored arguments the program passes as 0, MPI_DATATYPE_NULL and NULL:
// the trace records the blocks the calls move (3 doubles a member), the
// program runs to its end, and the trace validates.
func TestTracerInPlace(t *testing.T) {
	index, got := traceWith(t, "inplace")
	v := "[24 24 24 24]"
	want := []string{
		"allgather -1 -1 0 24 24 [] []",
		"allgatherv -1 -1 0 24 96 [] " + v,
		"alltoall -1 -1 0 24 24 [] []",
		"alltoallv -1 -1 0 96 96 " + v + " " + v,
		"gather 0 -1 0 24 24 [] []",
		"gatherv 0 -1 0 24 96 [] " + v, // the root's counts; zeros elsewhere, as SimGrid writes
		"scatter 0 -1 0 24 24 [] []",
		"scatterv 0 -1 0 96 24 " + v + " []",
		"reducescatter -1 -1 0 0 96 [] " + v, // reduce_scatter_block
		"allreduce -1 -1 0 24 0 [] []",
		"finalize -1 -1 0 0 0 [] []",
	}
	for r := 0; r < 2; r++ {
		if r == 1 {
			want[5], want[7] = "gatherv 0 -1 0 24 0 [] [0 0 0 0]", "scatterv 0 -1 0 0 24 [0 0 0 0] []"
		}
		if tail := got[r][max(0, len(got[r])-len(want)):]; !slices.Equal(tail, want) {
			t.Errorf("rank %d ends\n%s\nwant\n%s", r, strings.Join(tail, "\n"), strings.Join(want, "\n"))
		}
	}
	replays(t, index)
}

// TestTracerSendModes traces the ready, buffered and synchronous sends,
// blocking, non-blocking and persistent, and sendrecv_replace: each is the
// send or isend of its mode-less form (the sendrecv_replace, tagged, an
// isend and an irecv; MPI_Bsend an isend, waited for at
// MPI_Buffer_detach: the pending request keeps the reader from reading
// the waits of a Waitall as one), so that every receive of the trace has
// its send and the trace replays.
func TestTracerSendModes(t *testing.T) {
	index, got := traceWith(t, "modes")
	want := []string{
		"irecv 0 -1 13 0 64 [] []", "barrier -1 -1 0 0 0 [] []", "send 2 -1 13 64 0 [] []", "wait 1 0 13 0 0 [] []",
		// MPI_Bsend's isend, waited for at MPI_Buffer_detach (below).
		"isend 2 -1 14 64 0 [] []", "recv 0 -1 14 0 64 [] []",
		"irecv 0 -1 15 0 64 [] []", "irecv 0 -1 16 0 64 [] []", "irecv 0 -1 17 0 64 [] []", "barrier -1 -1 0 0 0 [] []",
		"isend 2 -1 15 64 0 [] []", "isend 2 -1 16 64 0 [] []", "isend 2 -1 17 64 0 [] []",
		"wait 1 0 15 0 0 [] []", "wait 1 0 16 0 0 [] []", "wait 1 0 17 0 0 [] []",
		"wait 2 1 15 0 0 [] []", "wait 2 1 16 0 0 [] []", "wait 2 1 17 0 0 [] []",
		// sendrecv_replace, of tag 18: its isend, irecv and waits.
		"isend 2 -1 18 64 0 [] []", "irecv 0 -1 18 0 64 [] []", "wait 2 1 18 0 0 [] []", "wait 1 0 18 0 0 [] []",
		"irecv 0 -1 19 0 64 [] []", "irecv 0 -1 20 0 64 [] []", "irecv 0 -1 21 0 64 [] []", "barrier -1 -1 0 0 0 [] []",
		"isend 2 -1 19 64 0 [] []", "isend 2 -1 20 64 0 [] []", "isend 2 -1 21 64 0 [] []",
		"wait 1 0 19 0 0 [] []", "wait 1 0 20 0 0 [] []", "wait 1 0 21 0 0 [] []",
		"wait 2 1 19 0 0 [] []", "wait 2 1 20 0 0 [] []", "wait 2 1 21 0 0 [] []",
		"wait 2 1 14 0 0 [] []",
	}
	// Rank 1, after init, the time steps and the collectives.
	first := 1 + 3*12 + 13
	if len(got[1]) < first+len(want) || !slices.Equal(got[1][first:first+len(want)], want) {
		t.Errorf("rank 1:\n%s\nwant from call %d\n%s", strings.Join(got[1], "\n"), first, strings.Join(want, "\n"))
	}
	replays(t, index)
}

// TestTracerProbes traces probes before receives: blocking, polling, and
// matched ones, written as the irecv of the probed source, tag and size,
// completed where MPI_Mrecv or MPI_Imrecv's request receives it; and the time rank 1 spends
// in MPI_Probe, waiting for rank 0's long computation, is not written as
// its computation (it was, when the tracer did not wrap probes); the
// summary counts the probes and their time.
func TestTracerProbes(t *testing.T) {
	dir := t.TempDir()
	lib, app := build(t, dir, false)
	out := mpirun(t, dir, lib, app, "probe")
	m := regexp.MustCompile(`kairos_trace: (\d+) probes \(MPI_Probe, MPI_Iprobe\.\.\.; all ranks\) took [0-9.]+ s`).FindStringSubmatch(out)
	if m == nil {
		t.Errorf("mpirun output lacks the probes' line:\n%s", out)
	} else if n, _ := strconv.Atoi(m[1]); n < 4 { // MPI_Probe, MPI_Mprobe, and the polls of MPI_Iprobe and MPI_Improbe
		t.Errorf("the summary counts %d probes, want 4 or more", n)
	}
	index := filepath.Join(dir, "trace", "index.txt")
	got := calls(t, index)
	want := []string{"recv 0 -1 30 0 56 [] []", "recv 2 -1 31 0 88 [] []", "irecv 3 -1 32 0 20 [] []", "wait 1 3 32 0 0 [] []", "irecv 0 -1 33 0 72 [] []", "wait 1 0 33 0 0 [] []"}
	i := slices.Index(got[1], want[0])
	if i < 0 || !slices.Equal(got[1][i:min(i+len(want), len(got[1]))], want) {
		t.Fatalf("rank 1:\n%s\nwant, in a row:\n%s", strings.Join(got[1], "\n"), strings.Join(want, "\n"))
	}
	src, _, err := format.Open(index)
	if err != nil {
		t.Fatal(err)
	}
	// The computation each rank wrote just before its call of tag 30.
	before := map[int]float64{}
	last := map[int]float64{}
	if err := trace.ForEach(src, func(r, _ int, e *trace.Event) error {
		switch {
		case e.Kind == trace.Compute:
			last[r] = e.Compute
		case e.Kind.IsMPI():
			if e.Tag == 30 {
				before[r] = last[r]
			}
			last[r] = 0
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// Rank 0 computes 50 million iterations first (tens of milliseconds,
	// written as flops at 1 Gf/s); rank 1 probes at once.
	if before[0] < 2e7 || before[1] > before[0]/4 {
		t.Errorf("computation before the message of tag 30: rank 0 %g flops, rank 1 %g (its wait in MPI_Probe?)", before[0], before[1])
	}
	replays(t, index)
}

// replays checks that the TI trace at index validates under SimGrid's
// protocol and replays.
func replays(t *testing.T, index string) {
	t.Helper()
	src, _, err := format.Open(index)
	if err != nil {
		t.Fatal(err)
	}
	if rep, err := check.Check(src, check.Options{Protocol: check.SimGrid}); err != nil || !rep.OK() {
		t.Fatalf("check: %v %+v", err, rep)
	}
	simulate(t, index, false)
}

// traceWith traces the test program run with option and returns the TI
// trace's index and its calls.
func traceWith(t *testing.T, option string) (index string, got [][]string) {
	t.Helper()
	dir := t.TempDir()
	lib, app := build(t, dir, false)
	mpirun(t, dir, lib, app, option)
	index = filepath.Join(dir, "trace", "index.txt")
	return index, calls(t, index)
}

// TestTracerClockSync runs the test program with its ranks' clocks off as
// unsynchronized nodes' are (capture/testdata/skew.c, preloaded before the
// tracer: rank r's clock is r x 50 ms ahead and runs r x 5% fast): the
// archive has each rank's two offsets to rank 0's clock, measured at
// MPI_Init and MPI_Finalize, each within its stated error (half the round
// trip it was measured with) of the injected one; and on the clock Kairos
// corrects with them no rank leaves a barrier (or another collective whose
// results depend on every rank) before the last rank entered it, but for
// the measures' errors (on an idle machine microseconds; on an
// oversubscribed one, where a rank waits for the core, up to a
// millisecond or two), which the injected error breaks by 50 ms or more.
func TestTracerClockSync(t *testing.T) {
	const skew, drift = 50e6, 0.05 // ns, per rank
	dir := t.TempDir()
	lib, app := otf2Tracer(t, dir)
	shim := filepath.Join(dir, "skew.so")
	run(t, dir, nil, "mpicc", "-O2", "-Wall", "-Werror", "-shared", "-fPIC", "-o", shim,
		filepath.Join(testenv.RepoRoot(), "capture", "testdata", "skew.c"), "-ldl")
	epoch := time.Now().UnixNano()
	env := []string{"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1", "KAIROS_TRACE=" + filepath.Join(dir, "trace"),
		"KAIROS_TRACE_FORMAT=otf2", fmt.Sprintf("KAIROS_TEST_SKEW=%g", skew), fmt.Sprintf("KAIROS_TEST_DRIFT=%g", drift),
		fmt.Sprintf("KAIROS_TEST_EPOCH=%d", epoch)}
	run(t, dir, env, "mpirun", "--oversubscribe", "-np", "4", "-x", "LD_PRELOAD="+shim+":"+lib, "-x", "KAIROS_TRACE",
		"-x", "KAIROS_TRACE_FORMAT", "-x", "KAIROS_TEST_SKEW", "-x", "KAIROS_TEST_DRIFT", "-x", "KAIROS_TEST_EPOCH", app, "split", "shift", "more", "modes", "inplace")
	src := openArchive(t, filepath.Join(dir, "trace", "traces.otf2"))
	s := src.(*otf2.Source)
	// A rank's corrected time is off by at most the larger of its
	// measures' errors (where the two offsets are within both errors of
	// each other, ko_sync gives both the more precise one's); two ranks'
	// by twice that, bounded here by the first's plus twice the second's.
	var worst float64
	for r := range 4 {
		offs, err := s.Archive().ClockOffsets(s.RankLocation(r))
		if err != nil || len(offs) != 2 {
			t.Fatalf("rank %d: clock offsets %v (%v), want 2", r, offs, err)
		}
		for _, o := range offs {
			// The local reading L is t + r*skew + r*drift*(t - epoch)
			// at rank 0's (the true) time t; the offset is t - L.
			rs, rd := float64(r)*skew, float64(r)*drift
			want := (float64(o.Time)-rs+rd*float64(epoch))/(1+rd) - float64(o.Time)
			t.Logf("rank %d at %d: offset %d ns, injected %.0f ns, measured within %.0f ns", r, o.Time, o.Offset, want, o.StdDev)
			if math.Abs(float64(o.Offset)-want) > o.StdDev+1e3 || o.StdDev > 10e6 {
				t.Errorf("rank %d: offset %d ns at %d (within %.0f ns), injected %.0f ns", r, o.Offset, o.Time, o.StdDev, want)
			}
		}
		worst = max(worst, offs[0].StdDev+2*offs[1].StdDev)
	}
	slack := trace.FromSeconds(20e-6 + 2*worst*1e-9)
	// Of each collective on MPI_COMM_WORLD whose every result depends on
	// every rank's input, the latest entry and the earliest exit.
	var last, first []trace.Time
	var seen [4]int
	if err := trace.ForEach(src, func(r, _ int, e *trace.Event) error {
		switch e.Kind {
		case trace.Barrier, trace.Allreduce, trace.Alltoall, trace.Alltoallv, trace.Allgather, trace.Allgatherv, trace.ReduceScatter:
		default:
			return nil
		}
		if e.Comm != trace.WorldComm {
			return nil
		}
		k := seen[r]
		seen[r]++
		if k == len(last) {
			last, first = append(last, e.Enter), append(first, e.Exit)
		}
		last[k], first[k] = max(last[k], e.Enter), min(first[k], e.Exit)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(last) < 10 {
		t.Fatalf("%d all-to-all collectives on MPI_COMM_WORLD", len(last))
	}
	for k := range last {
		t.Logf("collective %d: last entry %.6f s, first exit %.6f s", k, last[k].Seconds(), first[k].Seconds())
		if last[k] > first[k]+slack {
			t.Errorf("collective %d: a rank leaves at %.6f s before the last enters at %.6f s", k, first[k].Seconds(), last[k].Seconds())
		}
	}
}

// TestTracerUserFunctions traces the test program compiled with
// -finstrument-functions and -rdynamic and linked with the OTF2 tracer
// (whose hooks record its functions, as Score-P's compiler
// instrumentation): otf2-print reads the archive, Kairos reads it without
// defects, every MPI call has the call path main (entered before MPI_Init,
// left at MPI_Finalize; named by dladdr), and the static function work,
// which main calls between them, is a region under main (named from the
// program's symbol table: dladdr does not see static functions).
func TestTracerUserFunctions(t *testing.T) {
	dir := t.TempDir()
	lib, _ := otf2Tracer(t, dir)
	app := filepath.Join(dir, "appi")
	run(t, dir, nil, "mpicc", "-O1", "-finstrument-functions", "-rdynamic", "-o", app,
		filepath.Join(testenv.RepoRoot(), "capture", "testdata", "app.c"), "-L"+filepath.Dir(lib), "-lkairos_trace",
		"-Wl,-rpath,"+filepath.Dir(lib))
	env := []string{"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1", "KAIROS_TRACE=" + filepath.Join(dir, "trace")}
	run(t, dir, env, "mpirun", "--oversubscribe", "-np", "4", "-x", "KAIROS_TRACE", app, "shift", "more")
	src := openArchive(t, filepath.Join(dir, "trace", "traces.otf2"))
	if rep, err := check.Check(src, check.Options{}); err != nil || !rep.OK() {
		t.Fatalf("check: %v %+v", err, rep)
	}
	meta := src.Meta()
	n := 0
	if err := trace.ForEach(src, func(r, _ int, e *trace.Event) error {
		p := meta.CallPath(e.Region)
		if (e.Kind == trace.Deferred || e.Kind == trace.Local) && len(p) == 2 && strings.HasPrefix(p[1], "MPI_") {
			p = p[:1] // a call a replay does nothing for keeps its MPI function's region (an MPI_Testall that completed nothing)
		}
		if !slices.Equal(p, []string{"main"}) || e.CallSite == 0 {
			t.Errorf("rank %d: %s in %v (call site %x), want in main", r, e.Kind, p, e.CallSite)
		}
		n++
		return nil
	}); err != nil || n == 0 {
		t.Fatalf("%d events: %v", n, err)
	}
	work := false
	for _, reg := range meta.Regions {
		work = work || reg.Name == "work" && meta.Regions[reg.Parent].Name == "main"
	}
	if !work {
		t.Errorf("no region work under main among the regions %v", meta.Regions)
	}
}

// TestTracerNonBlockingCollectives traces the non-blocking collectives
// (and alltoallw), completed by waits, waitall with point-to-point
// requests, waitsome, waitany and tests, in orders that differ between
// ranks: each is written as its blocking collective where it completes,
// or before a collective called after it, so that every rank has them in
// the order of their calls; alltoallw is the alltoallv of its bytes
// (each rank sends 16 bytes a member in its own datatype); the trace
// validates and replays, in Kairos and in SimGrid 3.32, in the same
// simulated time.
func TestTracerNonBlockingCollectives(t *testing.T) {
	index, got := traceWith(t, "icoll")
	v := "[16 16 16 16]"
	want := []string{
		"allreduce -1 -1 0 128 0 [] []", // completed after the computation it overlapped
		// Rank 1 waits for the bcast first, then the barrier called
		// before it; rank 0 for the two and its messages at once.
		"irecv 0 -1 40 0 32 [] []", "isend 2 -1 40 32 0 [] []", "barrier -1 -1 0 0 0 [] []", "bcast 1 -1 0 256 0 [] []",
		"waitall -1 -1 0 0 0 [] []",
		"reduce 0 -1 0 64 0 [] []", "alltoall -1 -1 0 16 16 [] []", "allgather -1 -1 0 12 12 [] []", // waitsome
		"gather 0 -1 0 32 32 [] []", "scatter 0 -1 0 32 32 [] []", // waitall
		"alltoallv -1 -1 0 64 64 " + v + " " + v, "allgatherv -1 -1 0 16 64 [] " + v, // waitany
		"gatherv 0 -1 0 16 0 [] [0 0 0 0]", "scatterv 0 -1 0 0 16 [0 0 0 0] []",
		// The exscan, called last, waited for first.
		"reducescatter -1 -1 0 0 64 [] " + v, "reducescatter -1 -1 0 0 64 [] " + v, "scan -1 -1 0 32 0 [] []",
		"exscan -1 -1 0 32 0 [] []",
		// Alltoallw, then ialltoallw, whose wait comes after a barrier.
		"alltoallv -1 -1 0 64 64 " + v + " " + v, "alltoallv -1 -1 0 64 64 " + v + " " + v, "barrier -1 -1 0 0 0 [] []",
		"finalize -1 -1 0 0 0 [] []",
	}
	if tail := got[1][max(0, len(got[1])-len(want)):]; !slices.Equal(tail, want) {
		t.Errorf("rank 1 ends\n%s\nwant\n%s", strings.Join(tail, "\n"), strings.Join(want, "\n"))
	}
	replays(t, index)
	replaysInSimGrid(t, index)
}

// replaysInSimGrid replays the TI trace at index with SimGrid 3.32 on the
// cluster simulate uses: the simulated times agree to SimGrid's 6 digits.
func replaysInSimGrid(t *testing.T, index string) {
	t.Helper()
	testenv.Tool(t, "smpirun", "libsimgrid-dev")
	dir := filepath.Dir(index)
	writeCluster(t, dir)
	out := run(t, dir, nil, "smpirun", "-np", "4", "-platform", "p.xml", "-hostfile", "hf", "-replay", filepath.Base(index))
	var theirs float64
	if i := strings.LastIndex(out, "Simulation time "); i < 0 {
		t.Fatalf("smpirun -replay printed no simulated time:\n%s", out)
	} else if _, err := fmt.Sscan(out[i+len("Simulation time "):], &theirs); err != nil {
		t.Fatal(err)
	}
	ours := simulate(t, index, false)
	t.Logf("simulated: Kairos %.9f s, SimGrid %.6f s", ours, theirs)
	if math.Abs(ours-theirs) > 5e-7 {
		t.Errorf("Kairos replays the trace in %.9f s, SimGrid in %.6f s", ours, theirs)
	}
}

// TestTracerSendrecvTags traces sendrecvs of tag 9 on the even ranks that
// meet a receive and a send of tag 9 on the odd ones: each sendrecv is
// its isend, irecv and waits, of tag 9, so that the trace replays, in
// Kairos and in SimGrid in the same simulated time (a sendRecv line,
// which the replay sends and receives with tag 0, deadlocked both).
func TestTracerSendrecvTags(t *testing.T) {
	index, got := traceWith(t, "mixed")
	for r, want := range map[int][]string{
		0: {"isend 1 -1 9 7 0 [] []", "irecv 3 -1 9 0 5 [] []", "wait 1 0 9 0 0 [] []", "wait 0 3 9 0 0 [] []"},
		1: {"recv 0 -1 9 0 7 [] []", "send 2 -1 9 5 0 [] []"},
	} {
		i := slices.Index(got[r], want[0])
		if i < 0 || !slices.Equal(got[r][i:min(i+len(want), len(got[r]))], want) {
			t.Errorf("rank %d:\n%s\nwant, in a row:\n%s", r, strings.Join(got[r], "\n"), strings.Join(want, "\n"))
		}
	}
	replays(t, index)
	replaysInSimGrid(t, index)
}

// fortranApp compiles the Fortran test program src (in capture/testdata)
// with Open MPI's mpif90.
func fortranApp(t *testing.T, dir, src string) string {
	t.Helper()
	mpif90 := testenv.Tool(t, "mpif90", "libopenmpi-dev")
	app := filepath.Join(dir, strings.TrimSuffix(src, ".f90"))
	run(t, dir, nil, mpif90, "-O1", "-o", app, filepath.Join(testenv.RepoRoot(), "capture", "testdata", src))
	return app
}

// TestTracerFortran traces the Fortran test program (the mpi module),
// which makes app.c's calls in the same order and checks what the
// tracer's Fortran bindings hand back (statuses, indices from 1, requests
// completed, in-place results): its trace is the C program's, call for
// call on every rank (the completions of one waitany or waitsome loop
// in either order, as the messages arrive), and replays.
func TestTracerFortran(t *testing.T) {
	lib, want := twinCalls(t)
	dir := t.TempDir()
	mpirun(t, dir, lib, fortranApp(t, dir, "app.f90"), twinOptions...)
	index := filepath.Join(dir, "trace", "index.txt")
	sameCalls(t, "the Fortran program", calls(t, index), want)
	replays(t, index)
}

// twinOptions are the test program's options that its Fortran twin
// (app.f90) has too.
var twinOptions = []string{"more", "inplace", "icoll"}

// twinCalls builds the tracer and traces the C test program on Open MPI
// with twinOptions; it returns the tracer and the trace's calls.
func twinCalls(t *testing.T) (lib string, want [][]string) {
	t.Helper()
	dir := t.TempDir()
	lib, app := build(t, dir, false)
	mpirun(t, dir, lib, app, twinOptions...)
	return lib, calls(t, filepath.Join(dir, "trace", "index.txt"))
}

// sameCalls reports every rank whose calls differ from want's, each run of
// waits in any order (the completions of a waitany or waitsome loop come
// as the messages arrive).
func sameCalls(t *testing.T, what string, got, want [][]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d ranks, want %d", what, len(got), len(want))
	}
	for r := range want {
		if w, g := sortedWaits(want[r]), sortedWaits(got[r]); !slices.Equal(g, w) {
			t.Errorf("%s, rank %d:\n%s\nwant (the C program on Open MPI)\n%s", what, r, strings.Join(g, "\n"), strings.Join(w, "\n"))
		}
	}
}

// sortedWaits returns calls with each run of waits sorted.
func sortedWaits(calls []string) []string {
	out := slices.Clone(calls)
	for i := 0; i < len(out); {
		j := i
		for j < len(out) && strings.HasPrefix(out[j], "wait ") {
			j++
		}
		slices.Sort(out[i:j])
		i = max(j, i+1)
	}
	return out
}

// TestTracerFortran08 traces a program of the mpi_f08 module, which Open
// MPI's bindings route through its ompi_*_f functions: the tracer wraps
// those too.
func TestTracerFortran08(t *testing.T) {
	if !testenv.Long() {
		t.Skip("the mpi_f08 binding: KAIROS_LONG=1 (the default pass runs mpif.h's in TestTracerFortran)")
	}
	dir := t.TempDir()
	lib, _ := build(t, dir, false)
	mpirun(t, dir, lib, fortranApp(t, dir, "app08.f90"))
	index := filepath.Join(dir, "trace", "index.txt")
	want := []string{
		"init -1 -1 0 0 0 [] []",
		"irecv 0 -1 1 0 800 [] []", "isend 2 -1 1 800 0 [] []", "waitall -1 -1 0 0 0 [] []",
		"isend 2 -1 3 40 0 [] []", "irecv 0 -1 3 0 40 [] []", "wait 2 1 3 0 0 [] []", "wait 1 0 3 0 0 [] []", // sendrecv, tag 3
		"allreduce -1 -1 0 80 0 [] []", "allreduce -1 -1 0 24 0 [] []", "allreduce -1 -1 0 32 0 [] []",
		"finalize -1 -1 0 0 0 [] []",
	}
	if got := calls(t, index)[1]; !slices.Equal(got, want) {
		t.Errorf("rank 1:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	replays(t, index)
}

// TestTracerMPICH builds the tracer with MPICH (mpicc.mpich, warnings as
// errors) and traces the C and the Fortran test programs on MPICH: both
// traces are the C program's on Open MPI, call for call on every rank.
// MPICH's Fortran bindings call its C functions, but reach the tracer's
// Fortran wrappers first; MPI_IN_PLACE is found by MPICH's name for it.
func TestTracerMPICH(t *testing.T) {
	if !testenv.Long() {
		t.Skip("the test program on MPICH: KAIROS_LONG=1 (the default pass runs MPICH in TestTracerOneSidedFortran)")
	}
	m := tracertest.MPICH
	m.Need(t)
	mpif90 := testenv.Tool(t, m.FC, m.Package)
	_, want := twinCalls(t)
	mdir := t.TempDir()
	mlib := m.Tracer(t, mdir, false)
	testdata := filepath.Join(testenv.RepoRoot(), "capture", "testdata")
	run(t, mdir, nil, m.CC, "-O1", "-o", "app_c", filepath.Join(testdata, "app.c"))
	run(t, mdir, nil, mpif90, "-O1", "-o", "app_f", filepath.Join(testdata, "app.f90"))
	for _, prog := range []string{"app_c", "app_f"} {
		trace := filepath.Join(mdir, "trace-"+prog)
		m.Launch(t, tracertest.Recording{Lib: mlib, Trace: trace, NP: 4, Dir: mdir}, "./"+prog, twinOptions...)
		index := filepath.Join(trace, "index.txt")
		sameCalls(t, prog+" on MPICH", calls(t, index), want)
		replays(t, index)
	}
}

// TestTracerThreads traces capture/testdata/threads.c, whose second
// thread on every rank exchanges messages of tag 100 besides the first
// thread's own. Under MPI_THREAD_MULTIPLE, while the first exchanges its
// own, and under MPI_THREAD_FUNNELED (a promise broken, as PT-Scotch's
// threads break it in DOLFINx), the trace is the first thread's calls,
// which validate and replay, and rank 0 counts the others' (4 ranks x 50
// sendrecvs), on standard error and, for the readers, in a comment line
// that ends rank 0's TI file, which every verb says (the TI trace had no
// word of them) and SimGrid's smpirun -replay skips. Under MPI_THREAD_SERIALIZED the second thread's calls are
// recorded too. The tracer recorded both threads' calls into one sequence
// before, racing on its buffers (lines of one rank in another's file, a
// line written into the middle of another, deadlocked replays).
func TestTracerThreads(t *testing.T) {
	dir := t.TempDir()
	lib, _ := build(t, dir, false)
	prog := filepath.Join(dir, "threads")
	run(t, dir, nil, "mpicc", "-O1", "-o", prog, filepath.Join(testenv.RepoRoot(), "capture", "testdata", "threads.c"))
	mains := map[string]int{"init": 1, "irecv": 50, "isend": 50, "waitall": 50, "allreduce": 1, "finalize": 1}
	for _, tc := range []struct {
		level  string
		second int // the second thread's calls recorded on each rank
	}{
		{"multiple", 0},
		{"funneled", 0},
		{"serialized", 50},
	} {
		t.Run(tc.level, func(t *testing.T) {
			sub := t.TempDir()
			out := mpirun(t, sub, lib, prog, tc.level)
			if strings.Contains(out, "provided") {
				if testenv.Required() {
					t.Fatalf("KAIROS_REQUIRE_EXTERNAL=1 but this Open MPI says: %s", out)
				}
				t.Skipf("this Open MPI does not provide the level (skipping): %s", out)
			}
			counted := strings.Contains(out, "kairos_trace: 200 calls, over all ranks, of threads other than the one that initialized MPI")
			if counted != (tc.second == 0) {
				t.Errorf("the second thread's calls counted: %v, want %v; mpirun output:\n%s", counted, tc.second == 0, out)
			}
			index := filepath.Join(sub, "trace", "index.txt")
			src, _, err := format.Open(index)
			if err != nil {
				t.Fatal(err)
			}
			if note := src.Meta().Attrs[ti.AttrThreadMPI]; (note != "") != (tc.second == 0) || tc.second == 0 && !strings.HasPrefix(note, "the tracer did not record 200 MPI calls of threads") {
				t.Errorf("the TI trace's note on other threads' calls: %q", note)
			}
			for r, calls := range calls(t, index) {
				kinds, second := map[string]int{}, map[string]int{}
				for _, c := range calls {
					f := strings.Fields(c)
					if f[3] == "100" {
						second[f[0]]++
					} else {
						kinds[f[0]]++
					}
				}
				if !maps.Equal(kinds, mains) {
					t.Errorf("rank %d's calls of the first thread %v, want %v", r, kinds, mains)
				}
				if second["isend"] != tc.second || second["irecv"] != tc.second {
					t.Errorf("rank %d's calls of the second thread %v, want %d isends and irecvs", r, second, tc.second)
				}
			}
			replays(t, index)
			if tc.second == 0 { // the note's comment line: SimGrid reads the trace (or the test skips here)
				replaysInSimGrid(t, index)
			}
		})
	}
}

// TestTracerThreadsNoted: under MPI_THREAD_MULTIPLE, the archive says how
// many calls of other threads the tracer did not record (its anchor's
// KAIROS::OTHER_THREAD_CALLS), and the reader notes that their partners'
// messages read as never matched (check reported them with no word of
// why).
func TestTracerThreadsNoted(t *testing.T) {
	dir := t.TempDir()
	lib, _ := build(t, dir, true)
	prog := filepath.Join(dir, "threads")
	run(t, dir, nil, "mpicc", "-O1", "-o", prog, filepath.Join(testenv.RepoRoot(), "capture", "testdata", "threads.c"))
	out := mpirunFormat(t, dir, "otf2", lib, prog, "multiple")
	if strings.Contains(out, "provided") {
		if testenv.Required() {
			t.Fatalf("KAIROS_REQUIRE_EXTERNAL=1 but this Open MPI says: %s", out)
		}
		t.Skipf("this Open MPI does not provide the level (skipping): %s", out)
	}
	src := openArchive(t, filepath.Join(dir, "trace", "traces.otf2"))
	if got := src.Meta().Attrs[otf2.AttrThreadMPI]; !strings.HasPrefix(got, "the tracer did not record 200 MPI calls of threads other than the one") {
		t.Errorf("the archive's note: %q", got)
	}
}

// TestTracerIntercomm traces capture/testdata/intercomm.c on 4 ranks, TI
// and OTF2 in one run: the messages across an intercommunicator between
// the even and odd halves of MPI_COMM_WORLD name their partners' world
// ranks (2i and 2i+1), and its collectives are left out of both traces
// (the archive has their calls' regions alone: it named each side's
// collective on its own half, MPI_ROOT as no root, and check refused
// it); those with the two processes rank 0 spawns, an
// MPI world of their own, on the intercommunicator to them and on the
// communicator merged from it, are left out and counted "with other MPI
// worlds", and the children's run is traced beside (trace-2); the
// collectives on the merged communicator are left out of the TI trace,
// counted "with other MPI worlds" too (they were "on sub-communicators",
// and the summary offered the archive for a trace of them all), and the
// OTF2 archive has their calls' regions alone (its groups hold this
// world's ranks). Every trace passes the check. A partner on an
// intercommunicator was taken in the local group before: the even
// ranks' messages went to themselves, and the trace deadlocked; and a
// collective on the merged communicator, larger than MPI_COMM_WORLD,
// overflowed the OTF2 writer's group of members (the run aborted).
func TestTracerIntercomm(t *testing.T) {
	dir := t.TempDir()
	lib, _ := build(t, dir, true)
	prog := tracertest.OpenMPI.Compile(t, dir, tracertest.Testdata("intercomm.c"))
	out := mpirunFormat(t, dir, "ti,otf2", lib, prog)
	for _, want := range []string{"MPI_Send with other MPI worlds", "MPI_Recv with other MPI worlds",
		"MPI_Barrier with other MPI worlds", "MPI_Allreduce with other MPI worlds"} {
		if !strings.Contains(out, want) {
			t.Errorf("the tracer's summaries lack %q:\n%s", want, out)
		}
	}
	index := filepath.Join(dir, "trace", "index.txt")
	for r, cs := range calls(t, index) {
		n := 0
		for _, c := range cs {
			f := strings.Fields(c)
			if f[0] != "isend" && f[0] != "irecv" {
				continue
			}
			n++
			if f[1] != strconv.Itoa(r^1) {
				t.Errorf("rank %d: %s, want its partner %d", r, c, r^1)
			}
		}
		if n != 12 {
			t.Errorf("rank %d: %d isends and irecvs across the intercommunicator, want 12: %v", r, n, cs)
		}
	}
	replays(t, index)
	checks(t, filepath.Join(dir, "trace", "traces.otf2"), filepath.Join(dir, "trace-2", "index.txt"),
		filepath.Join(dir, "trace-2", "traces.otf2"))
}

// TestTracerSummaryNotes: at MPI_Finalize, a tracer built with OTF2 that
// wrote a TI trace alone asks for KAIROS_TRACE_FORMAT=ti,otf2, not for a
// rebuild with OTF2 (as it did); and with KAIROS_TRACE_CLOCK=cpu and both
// formats, it says that the TI trace's computations are CPU time and the
// archive's the wall's (their replays differ where ranks waited for a
// core: 18.6 s against 109.6 s, deal.II on 8 ranks of 2 cores).
func TestTracerSummaryNotes(t *testing.T) {
	dir := t.TempDir()
	lib, app := build(t, dir, true)
	out := mpirunFormat(t, dir, "ti", lib, app, "split")
	if !strings.Contains(out, "run again with KAIROS_TRACE_FORMAT=ti,otf2,") || strings.Contains(out, "-DKAIROS_OTF2") {
		t.Errorf("a TI trace alone: the summary should ask for KAIROS_TRACE_FORMAT=ti,otf2 alone:\n%s", out)
	}
	r := tracertest.Recording{Lib: lib, Trace: filepath.Join(dir, "cpu"), Format: "ti,otf2", NP: 4, Dir: dir,
		Env: []string{"KAIROS_TRACE_CLOCK=cpu"}}
	out = tracertest.OpenMPI.Launch(t, r, app, "split")
	if !strings.Contains(out, "KAIROS_TRACE_CLOCK=cpu: the TI trace's computations are the ranks' CPU time") {
		t.Errorf("KAIROS_TRACE_CLOCK=cpu with both formats: the summary lacks its note on the clocks:\n%s", out)
	}
}

// TestTracerLeavesLibraryNames runs, under the tracer, a program whose
// shared library defines C functions of the plain names of Fortran's MPI
// bindings (capture/testdata/libnames.c; R's Rmpi defines mpi_send,
// mpi_barrier...): the library's own functions run, not the tracer's
// Fortran wrappers of those names, which crashed Rmpi in MPI_Send's.
func TestTracerLeavesLibraryNames(t *testing.T) {
	dir := t.TempDir()
	lib := tracertest.OpenMPI.Tracer(t, dir, false)
	src := tracertest.Testdata("libnames.c")
	tracertest.OpenMPI.Compile(t, dir, src, "-shared", "-fPIC", "-o", filepath.Join(dir, "libnames.so"))
	prog := filepath.Join(dir, "names")
	tracertest.OpenMPI.Compile(t, dir, src, "-DMAIN", "-o", prog, "-L"+dir, "-lnames", "-Wl,-rpath,"+dir)
	out := mpirun(t, dir, lib, prog)
	if n := strings.Count(out, "the library's mpi_barrier("); n != 4 {
		t.Errorf("the library's mpi_barrier ran %d times, want 4 (once a rank):\n%s", n, out)
	}
	checks(t, filepath.Join(dir, "trace", "index.txt"))
}

// TestTracerTestsAsWaits: an MPI_Test that completes its receive is
// written as a wait, one that does not as nothing (polltest.c). Rank 1's
// two failed tests were written as TI tests: its message comes sooner in
// the replay (the TI trace has no record of the sub-communicator's
// barrier its sender waits in), the first test completes it, the second
// takes away the null request that left, and the program's wait found no
// request: Kairos' replay and SimGrid's aborted (rheolef's trace). The
// OTF2 archive of the same run is read alike, a failed test as MPI time
// (a deferred call), and its replay tests nothing: its failed tests were
// tests, replayed with SMPI's back-off (rheolef's archive took 16.2 s,
// its TI trace 9.6 s).
func TestTracerTestsAsWaits(t *testing.T) {
	dir := t.TempDir()
	lib := tracertest.OpenMPI.Tracer(t, dir, true)
	prog := filepath.Join(dir, "polltest")
	tracertest.OpenMPI.Compile(t, dir, tracertest.Testdata("polltest.c"), "-o", prog)
	mpirunFormat(t, dir, "ti,otf2", lib, prog)
	index, archive := filepath.Join(dir, "trace", "index.txt"), filepath.Join(dir, "trace", "traces.otf2")
	for _, path := range []string{index, archive} {
		var kinds []string
		for _, c := range calls(t, path)[1] {
			if k := strings.Fields(c)[0]; k == "test" || k == "wait" {
				kinds = append(kinds, k)
			}
		}
		if !slices.Equal(kinds, []string{"wait", "wait"}) {
			t.Errorf("%s: rank 1's tests and waits: %q, want two waits", filepath.Base(path), kinds)
		}
	}
	replays(t, index)
	replaysInSimGrid(t, index)
	src, _, err := format.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := platform.ParseCluster("4x1Gf,125MBps,50us")
	res, err := sim.Simulate(trace.UntimedAbove(src, 1e9, trace.FromSeconds(1e-6)), p, nil, sim.DefaultConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if tests := res.Ranks[1].Tests; tests != 0 {
		t.Errorf("the archive's replay tests %d times on rank 1, want none", tests)
	}
}

// TestTracerCongruentCommunicators: communicators of the same members
// are apart in the archive, each known by how it was made (congruent.c:
// a split of MPI_COMM_WORLD of every rank in order, its duplicate): the
// broadcasts the root calls on world and on the split in one order and
// the others in the other pass the check and replay, and the barrier is
// on a third communicator. The tracer unified communicators by their
// members: the two broadcasts were one communicator's, of two sizes in a
// different order on the root (murasaki's archive failed the check and
// the replay). The TI trace, which has no communicators, cannot say it.
func TestTracerCongruentCommunicators(t *testing.T) {
	dir := t.TempDir()
	lib := tracertest.OpenMPI.Tracer(t, dir, true)
	prog := tracertest.OpenMPI.Compile(t, dir, tracertest.Testdata("congruent.c"))
	mpirunFormat(t, dir, "otf2", lib, prog)
	archive := filepath.Join(dir, "trace", "traces.otf2")
	replays(t, archive)
	src, _, err := format.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	for r := range 4 {
		var comms []uint32
		if err := trace.ForEach(src, func(rank, _ int, e *trace.Event) error {
			if rank == r && e.Kind.IsCollective() && e.Kind != trace.CommSplit && e.Kind != trace.CommDup {
				comms = append(comms, e.Comm)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if len(comms) != 3 || comms[0] == comms[1] || comms[2] == comms[0] || comms[2] == comms[1] ||
			(comms[0] == trace.WorldComm) != (r == 0) {
			t.Errorf("rank %d: collectives on communicators %v, want three apart, world's first on rank 0 alone", r, comms)
		}
	}
}

// TestTracerMakesParents: the traces' directory is created with the
// directories above it that do not exist, as mkdir -p (the program ran
// untraced, every rank saying it could not create it).
func TestTracerMakesParents(t *testing.T) {
	dir := t.TempDir()
	lib, app := build(t, dir, false)
	path := filepath.Join(dir, "not", "yet", "trace")
	tracertest.OpenMPI.Launch(t, tracertest.Recording{Lib: lib, Trace: path, NP: 4, Dir: dir}, app)
	checks(t, filepath.Join(path, "index.txt"))
}

// checks requires every trace of paths to pass the check.
func checks(t *testing.T, paths ...string) {
	t.Helper()
	for _, path := range paths {
		src, _, err := format.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if rep, err := check.Check(src, check.Options{Protocol: check.SimGrid}); err != nil || !rep.OK() {
			t.Errorf("%s: check: %v %+v", path, err, rep)
		}
	}
}

// TestTracerNeighbor traces capture/testdata/neighbor.c on 4 ranks, TI and
// OTF2 in one run. Its neighborhood collectives (MPI_Neighbor_alltoall,
// MPI_Ineighbor_allgather, MPI_Neighbor_alltoallw and
// MPI_Neighbor_alltoallv on a periodic 2x2 grid, each neighbour met
// twice) are written as their messages in both traces (the alltoallv's
// blocks to a + neighbour first, which it receives from its - one:
// written in the topology's order, they met the wrong receives, of other
// sizes, and check found truncations): four isends and four irecvs of
// 8,000 bytes with tag 32767, then
// their completions, after the computation the non-blocking one overlaps
// (rank 0 says so, and leaves none out). Both traces pass the check and
// replay alike, and the Fortran twin (neighbor.f90) gives the same calls.
// The non-blocking one was left out before, the Fortran ones were not
// recorded, and the archive had the calls' regions alone.
func TestTracerNeighbor(t *testing.T) {
	dir := t.TempDir()
	lib, _ := build(t, dir, true)
	prog := tracertest.OpenMPI.Compile(t, dir, tracertest.Testdata("neighbor.c"))
	out := mpirunFormat(t, dir, "ti,otf2", lib, prog)
	if want := "88 neighborhood collectives (all ranks) are written as their messages"; !strings.Contains(out, want) {
		t.Errorf("the tracer's summary lacks %q:\n%s", want, out)
	}
	if strings.Contains(out, "leaves out") {
		t.Errorf("the tracer's summary leaves calls out:\n%s", out)
	}
	ti, err := os.ReadFile(filepath.Join(dir, "trace", "rank-0.ti"))
	if err != nil {
		t.Fatal(err)
	}
	for want, times := range map[string]int{"0 isend 1 32767 8000": 42, "0 irecv 2 32767 8000": 42, "0 wait 0 1 32767": 44, "0 wait 2 0 32767": 44} {
		if n := strings.Count(string(ti), want+"\n"); n != times {
			t.Errorf("rank 0's TI trace has %q %d times, want %d (twice a collective)", want, n, times)
		}
	}
	// The allgather's waits come after the computation it overlaps.
	if !regexp.MustCompile(`0 irecv [12] 32767 8000\n0 compute [0-9.]+\n0 wait 0 [12] 32767\n`).Match(ti) {
		t.Errorf("rank 0's TI trace has no computation between an irecv and the waits:\n%.2000s", ti)
	}
	index, archive := filepath.Join(dir, "trace", "index.txt"), filepath.Join(dir, "trace", "traces.otf2")
	checks(t, index, archive)
	want := calls(t, index)
	for r, got := range calls(t, archive) {
		if n := len(slices.DeleteFunc(got, func(c string) bool { return !strings.Contains(c, " 32767 ") })); n != 176 {
			t.Errorf("rank %d: %d isends and irecvs of tag 32767 in the archive, want 176 (8 a collective)", r, n)
		}
	}
	fdir := t.TempDir()
	mpirunFormat(t, fdir, "ti", lib, tracertest.OpenMPI.Compile(t, fdir, tracertest.Testdata("neighbor.f90")))
	sameCalls(t, "neighbor.f90", calls(t, filepath.Join(fdir, "trace", "index.txt")), want)
}

// TestTracerReduceInSitu traces a real 2-D non-periodic halo exchange
// (capture/testdata/halo.c, 4x4 ranks from MPI_Cart_create) with
// KAIROS_TRACE_REDUCE=callpath (and =reference with KAIROS_LONG=1),
// every rank's trace kept too (KAIROS_TRACE_REDUCE_KEEP: the full trace
// of the same run, so that the comparison is of the reduction, not of two
// runs' noise on this oversubscribed machine; computations as CPU time,
// KAIROS_TRACE_CLOCK=cpu, not the waits for a core): each reduction keeps 9
// traces (corners, edges, interior); its clusters are those `kairos reduce
// --method M` finds on the full trace (the Go cluster package); expanded,
// it passes the check, and its replay is within 50% of the full trace's
// (a gross error's bound: one run's spread between members is not the
// reduction's). With KAIROS_LONG=1, the test program's variants on 4 ranks too
// (callpath: their clusters differ from the halo's).
func TestTracerReduceInSitu(t *testing.T) {
	dir := t.TempDir()
	lib, testApp := build(t, dir, false)
	mpicc := testenv.Tool(t, "mpicc", "libopenmpi-dev")
	halo := testProgram(t, dir, mpicc, "halo")
	type program struct {
		name     string
		np, want int // ranks; traces written by a reduction (0: not checked)
		methods  []cluster.Method
		args     []string
	}
	methods := []cluster.Method{cluster.CallPathParam}
	if testenv.Long() {
		methods = append(methods, cluster.Reference)
	}
	programs := []program{{"halo", 16, 9, methods, []string{halo, "40", "256"}}}
	if testenv.Long() {
		for _, opt := range []string{"more", "self", "mixed", "icoll"} {
			programs = append(programs, program{"app-" + opt, 4, 0, []cluster.Method{cluster.CallPathParam}, []string{testApp, opt}})
		}
	}
	for _, p := range programs {
		for _, m := range p.methods {
			reduced, full := traceReduced(t, dir, lib, p.name+"-"+string(m), string(m), 9, p.np, p.args...)
			sameAsOffline(t, full, reduced, m, p.np, p.want)
		}
	}
}

// traceReduced runs args on np ranks of Open MPI with the tracer lib,
// reduced in situ into dir/name with method and K = k, every rank's trace
// kept too, computations as CPU time: it returns the reduced trace's
// index and the full trace's.
func traceReduced(t *testing.T, dir, lib, name, method string, k, np int, args ...string) (reduced, full string) {
	t.Helper()
	env := []string{"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1", "KAIROS_TRACE=" + filepath.Join(dir, name),
		"KAIROS_TRACE_REDUCE=" + method, "KAIROS_TRACE_REDUCE_KEEP=1", "KAIROS_TRACE_K=" + strconv.Itoa(k), "KAIROS_TRACE_CLOCK=cpu"}
	run(t, dir, env, "mpirun", append([]string{"--oversubscribe", "-np", strconv.Itoa(np), "-x", "LD_PRELOAD=" + lib,
		"-x", "KAIROS_TRACE", "-x", "KAIROS_TRACE_REDUCE", "-x", "KAIROS_TRACE_REDUCE_KEEP", "-x", "KAIROS_TRACE_K",
		"-x", "KAIROS_TRACE_CLOCK"}, args...)...)
	return filepath.Join(dir, name, "index.txt"), filepath.Join(dir, name, "full", "index.txt")
}

// testProgram compiles capture/testdata/name.c with mpicc into dir.
func testProgram(t *testing.T, dir, mpicc, name string) string {
	t.Helper()
	bin := filepath.Join(dir, name)
	run(t, dir, nil, mpicc, "-O1", "-o", bin, filepath.Join(testenv.RepoRoot(), "capture", "testdata", name+".c"))
	return bin
}

// TestTracerReduceAcurdion reduces two programs in situ with ACURDION's
// single- and double-step clusterings (KAIROS_TRACE_REDUCE=acurdion,
// acurdion2), the 4×4 halo exchange and a program whose ranks differ in
// computation, message counts, sizes, tags, partners and loops (more
// kinds of ranks than K, so that the K-farthest lists merge clusters
// that differ): the clusters must be those of `kairos reduce --method M`
// on the full trace of the same run, the format (Algorithm 1) the
// signatures on which the off-line ranks differ; the reduced trace is
// checked and replayed. The default pass runs acurdion on the halo (3×3,
// K=4) and acurdion2 on the uneven program (6 ranks, K=3); KAIROS_LONG=1
// runs both methods on both, on 16 ranks, with K 9 and 4, and callpath with
// K = 4 (KAIROS_TRACE_K is `kairos reduce --k` for callpath too: its
// filtering function keeps main clusters whole past K sub-clusters).
func TestTracerReduceAcurdion(t *testing.T) {
	dir := t.TempDir()
	lib, _ := build(t, dir, false)
	mpicc := testenv.Tool(t, "mpicc", "libopenmpi-dev")
	bin := map[string]string{}
	for _, p := range []string{"halo", "uneven"} {
		bin[p] = testProgram(t, dir, mpicc, p)
	}
	type program struct {
		name    string
		np, k   int
		methods []cluster.Method
		args    []string
	}
	both := []cluster.Method{cluster.Acurdion, cluster.Acurdion2}
	programs := []program{{"halo", 9, 4, both[:1], []string{bin["halo"], "20", "64"}},
		{"uneven", 6, 3, both[1:], []string{bin["uneven"], "6"}}}
	if testenv.Long() {
		programs = []program{{"halo", 16, 9, both, []string{bin["halo"], "20", "64"}},
			{"halo-k4", 16, 4, both, []string{bin["halo"], "60", "64"}},
			{"uneven", 16, 9, both, []string{bin["uneven"], "10"}},
			{"uneven-k4", 16, 4, append(both, cluster.CallPathParam), []string{bin["uneven"], "20"}}}
	}
	for _, p := range programs {
		for _, m := range p.methods {
			reduced, full := traceReduced(t, dir, lib, p.name+"-"+string(m), string(m), p.k, p.np, p.args...)
			sameAsOfflineK(t, full, reduced, m, p.np, 0, p.k)
		}
	}
}

// TestTracerReduceCGLike reduces in situ a program that communicates as
// NAS CG does (testdata/cglike.c: recursive doubling across the rows of
// a 4x4 grid, the transpose exchange, an allreduce): the diagonal's ranks
// keep their block (a call path of their own), the others differ by their
// partners relative to their rank, so that each of the 16 ranks has
// signatures of its own and keeps its trace. With every method (callpath
// in the default pass; reference, acurdion and acurdion2 at K 9 and 4
// with KAIROS_LONG=1), the clusters are those of `kairos reduce` on the
// full trace of the same run, 16 traces are written, and the reduction
// checks and replays.
func TestTracerReduceCGLike(t *testing.T) {
	dir := t.TempDir()
	lib, _ := build(t, dir, false)
	cg := testProgram(t, dir, testenv.Tool(t, "mpicc", "libopenmpi-dev"), "cglike")
	type run struct {
		m cluster.Method
		k int
	}
	runs := []run{{cluster.CallPathParam, 9}}
	if testenv.Long() {
		runs = append(runs, run{cluster.Reference, 9}, run{cluster.Acurdion, 9}, run{cluster.Acurdion2, 9}, run{cluster.Acurdion, 4}, run{cluster.Acurdion2, 4})
	}
	for _, r := range runs {
		name := fmt.Sprintf("cg-%s-k%d", r.m, r.k)
		reduced, full := traceReduced(t, dir, lib, name, string(r.m), r.k, 16, cg, "3", "512")
		sameAsOfflineK(t, full, reduced, r.m, 16, 16, r.k)
	}
}

// TestTracerReduceRealApps reduces real applications in situ
// (KAIROS_LONG=1), with every method: LAMMPS' melt example (50 steps) on
// 8 ranks (a periodic 2×2×2 grid, its ranks differ) and HPCC with its
// shipped example input on 4 ranks (wildcard receives and cancels in
// RandomAccess: lines rewritten after they were first written); callpath
// and reference, and acurdion and acurdion2 at K=4. The clusters are those
// of `kairos reduce` on the full trace of the same run; the reduced trace
// is checked and replayed beside it.
func TestTracerReduceRealApps(t *testing.T) {
	if !testenv.Long() {
		t.Skip("LAMMPS and HPCC reduced in situ: KAIROS_LONG=1")
	}
	type app struct {
		name, prog, pkg string
		np              int
		setup           func(dir string)
		args            []string
	}
	apps := []app{
		{"melt", "lmp", "lammps", 8, func(dir string) {
			input, err := os.ReadFile("/usr/share/lammps/examples/melt/in.melt")
			if err != nil {
				t.Fatalf("LAMMPS' melt example: %v", err)
			}
			steps := regexp.MustCompile(`(?m)^run\s+\d+`)
			if err := os.WriteFile(filepath.Join(dir, "in.melt"), steps.ReplaceAll(input, []byte("run 50")), 0o644); err != nil {
				t.Fatal(err)
			}
		}, []string{"-in", "in.melt", "-log", "none", "-screen", "none"}},
		{"hpcc", "hpcc", "hpcc", 4, func(dir string) {
			input, err := os.ReadFile("/usr/share/doc/hpcc/examples/_hpccinf.txt")
			if err != nil {
				t.Fatalf("HPCC's example input: %v", err)
			}
			if err := os.WriteFile(filepath.Join(dir, "hpccinf.txt"), input, 0o644); err != nil {
				t.Fatal(err)
			}
		}, nil},
	}
	for _, a := range apps {
		t.Run(a.name, func(t *testing.T) {
			prog := testenv.Tool(t, a.prog, a.pkg)
			dir := t.TempDir()
			lib, _ := build(t, dir, false)
			a.setup(dir)
			for _, c := range []struct {
				m cluster.Method
				k int
			}{{cluster.CallPathParam, 9}, {cluster.Reference, 9}, {cluster.Acurdion, 4}, {cluster.Acurdion2, 4}} {
				reduced, full := traceReduced(t, dir, lib, a.name+"-"+string(c.m), string(c.m), c.k, a.np, append([]string{prog}, a.args...)...)
				sameAsOfflineK(t, full, reduced, c.m, a.np, 0, c.k)
			}
		})
	}
}

// TestTracerReduceResign reduces in situ (callpath) a program whose
// wildcard receives are matched after their ranks' traces outgrew the
// tracer's 64 KiB buffer (testdata/latewild.c): their irecv lines, held
// in memory until then (the hold: no line is signed or folded while a
// pending request may rewrite it), are rewritten with the source. Signed
// as first written, the three receivers would be one cluster (no source);
// as rewritten, each has its own relative source, as `kairos reduce`
// finds, and the representatives' traces have the lines rewritten.
func TestTracerReduceResign(t *testing.T) {
	dir := t.TempDir()
	lib, _ := build(t, dir, false)
	mpicc := testenv.Tool(t, "mpicc", "libopenmpi-dev")
	reduced, full := traceReduced(t, dir, lib, "latewild-trace", "callpath", 9, 4, testProgram(t, dir, mpicc, "latewild"))
	for r := 1; r < 4; r++ {
		data, err := os.ReadFile(filepath.Join(filepath.Dir(reduced), fmt.Sprintf("rank-%d.ti", r)))
		if err != nil {
			t.Fatal(err)
		}
		if len(data) <= 1<<16 {
			t.Fatalf("rank %d: %d bytes of trace, want more than the tracer's 64 KiB buffer", r, len(data))
		}
		if want := fmt.Sprintf("\n%d irecv 0 5 4 ", r); !strings.Contains(string(data), want) {
			t.Errorf("rank %d: no line %q: the wildcard receive's line is not rewritten", r, strings.TrimSpace(want))
		}
	}
	sameAsOffline(t, full, reduced, cluster.CallPathParam, 4, 4)
}

// sameAsOffline checks a trace reduced in situ with method m against the
// full trace of the same run: no temporary directory left, want
// traces written (0: not checked), the clusters of `kairos reduce`, a
// trace of np ranks that passes the check and replays within 5% of the
// full trace.
func sameAsOffline(t *testing.T, full, reduced string, m cluster.Method, np, want int) {
	t.Helper()
	sameAsOfflineK(t, full, reduced, m, np, want, cluster.DefaultOptions().K)
}

// sameAsOfflineK is sameAsOffline with ACURDION's K, and for its methods
// the format (reduced.format) of the off-line clustering too.
func sameAsOfflineK(t *testing.T, full, reduced string, m cluster.Method, np, want, k int) {
	t.Helper()
	dir := filepath.Dir(reduced)
	name := filepath.Base(dir)
	if _, err := os.Stat(dir + ".partial"); err == nil {
		t.Errorf("%s: the temporary directory is left", name)
	}
	index, err := os.ReadFile(reduced)
	if err != nil {
		t.Fatal(err)
	}
	files := strings.Fields(string(index))
	if want > 0 && len(files) != want {
		t.Errorf("%s: %d traces written, want %d: %v", name, len(files), want, files)
	}
	onlyRepsWrote(t, dir, files)
	src, _, err := format.Open(full)
	if err != nil {
		t.Fatal(err)
	}
	sigs, err := cluster.SignAll(src, cluster.SignOptions{Reference: m == cluster.Reference})
	if err != nil {
		t.Fatal(err)
	}
	opt := cluster.DefaultOptions()
	opt.Method, opt.K = m, k
	res, err := cluster.Cluster(sigs, opt)
	if err != nil {
		t.Fatal(err)
	}
	var offline []string
	for _, g := range res.Groups {
		offline = append(offline, fmt.Sprint(g.Members))
	}
	red, _, err := format.Open(reduced)
	if err != nil {
		t.Fatal(err)
	}
	if got := insituClusters(t, red.Meta().Attrs); !slices.Equal(got, offline) {
		t.Errorf("%s: clusters in situ %v, kairos reduce %v", name, got, offline)
	}
	if m == cluster.Acurdion || m == cluster.Acurdion2 {
		if got, want := red.Meta().Attrs["reduced.format"], strings.Join(res.Format, " "); got != want {
			t.Errorf("%s: format in situ %q, kairos reduce %q", name, got, want)
		}
		t.Logf("%s: %d clusters, format %v", name, len(res.Groups), res.Format)
	}
	whole, err := cluster.FromReduced(red)
	if err != nil {
		t.Fatal(err)
	}
	if whole.NumRanks() != np {
		t.Fatalf("%s: the reduced trace stands for %d ranks, want %d", name, whole.NumRanks(), np)
	}
	if rep, err := check.Check(whole, check.Options{Protocol: check.SimGrid}); err != nil || !rep.OK() {
		t.Fatalf("%s: check of the reduced trace: %v %+v", name, err, rep)
	}
	tf, tr := simulateSource(t, src, np), simulateSource(t, whole, np)
	// The replays are logged, not bounded by the 5%: both rest on
	// one run's measured times on this oversubscribed machine, and the
	// reduced trace replays every member at its cluster's mean computation
	// while the full trace's replay follows its slowest member, so that
	// the gap is that run's spread between members (5.7% in one CI run),
	// not the reduction's error. ACC on traces whose noise is known is
	// cluster's and cmd/kairos's tests'. Only a gross error (a
	// representative's computations lost or scaled twice) fails here.
	if math.Abs(tr-tf) > 0.5*tf {
		t.Errorf("%s: replay of the reduced trace %.6f s, of the full trace %.6f s: more than 50%% apart", name, tr, tf)
	}
	t.Logf("%s: %d traces; replay: full %.6f s, reduced %.6f s (%+.2f%%)", name, len(files), tf, tr, 100*(tr-tf)/tf)
}

// writesRe is reduced.txt's account of the bytes the ranks wrote.
var writesRe = regexp.MustCompile(`(?m)^# bytes written: (\d+) by the (\d+) representatives, (\d+) by the other ranks, (\d+) of them during the run$`)

// foldedRe is reduced.txt's figure of the ranks' folded traces' memory.
var foldedRe = regexp.MustCompile(`(?m)^# the ranks' traces folded online \(calls with their parameters\): at most (\d+) bytes a rank$`)

// onlyRepsWrote checks, from the tracer's own count of the bytes each rank
// wrote (reduced.txt), that no rank wrote a trace during the run and only
// the representatives wrote at MPI_Finalize: the files of the index, to
// their last byte.
func onlyRepsWrote(t *testing.T, dir string, files []string) {
	t.Helper()
	red, err := os.ReadFile(filepath.Join(dir, "reduced.txt"))
	if err != nil {
		t.Fatal(err)
	}
	m := writesRe.FindStringSubmatch(string(red))
	if m == nil {
		t.Fatalf("%s/reduced.txt: no account of the bytes written:\n%s", dir, red)
	}
	var size int64
	for _, f := range files {
		fi, err := os.Stat(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		size += fi.Size()
	}
	if m[1] != strconv.FormatInt(size, 10) || m[2] != strconv.Itoa(len(files)) || m[3] != "0" || m[4] != "0" {
		t.Errorf("%s: %q; want %d bytes by the %d representatives (the index's files), none by the others, none during the run",
			dir, m[0], size, len(files))
	}
}

// TestTracerReduceWritesAtEnd traces the 4x4 halo exchange reduced in
// situ (callpath) without KAIROS_TRACE_REDUCE_KEEP: the directory holds
// the index, reduced.txt and the 9 representatives' traces and nothing
// else, none written during the run (the tracer's own count of each
// rank's bytes), and the whole run passes the check. Then the folded
// traces' memory (the tracer's own figure: nodes, statistics, intern
// table, hold) at 300 and 3,000 iterations on 4 ranks: at most twice as
// large (the computations' histograms gain levels as their tails fill; a
// trace kept whole would be ten times larger). Then a reduction that
// fails (KAIROS_TRACE_REDUCE_FAIL, the tests' way to it): every rank's
// trace written from its folded calls, 16 ranks that pass the check, and
// rank 0 says so. Last, on 2x2 ranks, 600 iterations, a budget of 1 byte,
// which every rank outgrows at its first write (its first 64 KiB of
// lines, some 250 iterations): the ranks spill (their folded calls to
// their files, then their lines as they come), rank 0 says so, and the 4
// traces kept pass the check and replay within 50% of an unspilled run's
// (two runs: a gross error's bound).
func TestTracerReduceWritesAtEnd(t *testing.T) {
	dir := t.TempDir()
	lib, _ := build(t, dir, false)
	mpicc := testenv.Tool(t, "mpicc", "libopenmpi-dev")
	halo := testProgram(t, dir, mpicc, "halo")
	trace := func(name string, np int, budget string, args ...string) (string, string) {
		fail := ""
		if n := len(args); n > 0 && strings.HasPrefix(args[n-1], "KAIROS_TRACE_REDUCE_FAIL=") {
			fail, args = strings.TrimPrefix(args[n-1], "KAIROS_TRACE_REDUCE_FAIL="), args[:n-1]
		}
		env := []string{"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1", "KAIROS_TRACE=" + filepath.Join(dir, name),
			"KAIROS_TRACE_REDUCE=callpath", "KAIROS_TRACE_REDUCE_BUDGET=" + budget, "KAIROS_TRACE_CLOCK=cpu",
			"KAIROS_TRACE_REDUCE_FAIL=" + fail}
		out := run(t, dir, env, "mpirun", append([]string{"--oversubscribe", "-np", strconv.Itoa(np), "-x", "LD_PRELOAD=" + lib,
			"-x", "KAIROS_TRACE", "-x", "KAIROS_TRACE_REDUCE", "-x", "KAIROS_TRACE_REDUCE_BUDGET", "-x", "KAIROS_TRACE_CLOCK",
			"-x", "KAIROS_TRACE_REDUCE_FAIL", halo}, args...)...)
		return filepath.Join(dir, name), out
	}
	replay := func(d string, np int) float64 {
		t.Helper()
		red, _, err := format.Open(filepath.Join(d, "index.txt"))
		if err != nil {
			t.Fatal(err)
		}
		whole, err := cluster.FromReduced(red)
		if err != nil {
			t.Fatal(err)
		}
		if whole.NumRanks() != np {
			t.Fatalf("%s: %d ranks, want %d", d, whole.NumRanks(), np)
		}
		if rep, err := check.Check(whole, check.Options{Protocol: check.SimGrid}); err != nil || !rep.OK() {
			t.Fatalf("%s: check of the reduced trace: %v %+v", d, err, rep)
		}
		return simulateSource(t, whole, np)
	}
	d, _ := trace("halo16", 16, "", "40", "64")
	entries, err := os.ReadDir(d)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	want := []string{"index.txt", "rank-0.ti", "rank-1.ti", "rank-12.ti", "rank-13.ti", "rank-15.ti", "rank-3.ti", "rank-4.ti",
		"rank-5.ti", "rank-7.ti", "reduced.txt"}
	if !slices.Equal(names, want) {
		t.Errorf("%s holds %v, want %v", d, names, want)
	}
	index, err := os.ReadFile(filepath.Join(d, "index.txt"))
	if err != nil {
		t.Fatal(err)
	}
	onlyRepsWrote(t, d, strings.Fields(string(index)))
	replay(d, 16)

	// the folded trace's memory, constant in the iterations: the tracer's
	// own figure (nodes, histograms, intern table, hold) at 300 and 3,000
	// iterations (a trace written as it grows would be ten times larger)
	var mem []float64
	for _, it := range []string{"300", "3000"} {
		d, _ := trace("halo4-"+it, 4, "", it, "8")
		red, err := os.ReadFile(filepath.Join(d, "reduced.txt"))
		if err != nil {
			t.Fatal(err)
		}
		m := foldedRe.FindSubmatch(red)
		if m == nil {
			t.Fatalf("%s/reduced.txt: no figure of the folded traces' memory", d)
		}
		v, _ := strconv.ParseFloat(string(m[1]), 64)
		mem = append(mem, v)
	}
	if mem[1] > 2*mem[0] {
		t.Errorf("folded traces: at most %.0f bytes a rank at 300 iterations, %.0f at 3,000: not constant", mem[0], mem[1])
	}
	t.Logf("folded traces: at most %.0f bytes a rank at 300 iterations, %.0f at 3,000", mem[0], mem[1])

	// a reduction that fails (KAIROS_TRACE_REDUCE_FAIL, the tests' way to
	// it): every rank writes its trace from its folded calls, and rank 0 says so
	d, out := trace("halo16-fallback", 16, "", "20", "32", "KAIROS_TRACE_REDUCE_FAIL=1")
	if !strings.Contains(out, "the in-situ reduction failed") || !strings.Contains(out, "every rank's trace is written") {
		t.Errorf("no message of the fallback:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(d, "reduced.txt")); err == nil {
		t.Errorf("%s: a reduced.txt after the fallback", d)
	}
	src, _, err := format.Open(filepath.Join(d, "index.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if src.NumRanks() != 16 {
		t.Errorf("%s: %d ranks after the fallback, want 16", d, src.NumRanks())
	}
	if rep, err := check.Check(src, check.Options{Protocol: check.SimGrid}); err != nil || !rep.OK() {
		t.Errorf("%s: check of the fallback's trace: %v %+v", d, err, rep)
	}

	folded, _ := trace("halo4", 4, "", "600", "16")
	spilled, out := trace("halo4-spilled", 4, "1", "600", "16")
	if !strings.Contains(out, "4 ranks' folded traces outgrew") {
		t.Errorf("no message of the ranks' spills:\n%s", out)
	}
	tf, ts := replay(folded, 4), replay(spilled, 4)
	t.Logf("replay: folded %.6f s, spilled %.6f s (%+.2f%%)", tf, ts, 100*(ts-tf)/tf)
	// two runs' measured times: only a gross error (a spill's computations
	// lost or counted twice) is bounded, not this machine's noise
	if math.Abs(ts-tf) > 0.5*tf {
		t.Errorf("replay of the spilled run %.6f s, of the folded one %.6f s: more than 50%% apart", ts, tf)
	}
}

// TestTracerReduceMPICH reduces the Fortran twin of the test program and
// the halo exchange in situ on MPICH (KAIROS_LONG=1), with callpath and
// with acurdion2 and acurdion (K = 2): the clusters of `kairos reduce` on
// their full traces, checked and replayed.
func TestTracerReduceMPICH(t *testing.T) {
	if !testenv.Long() {
		t.Skip("MPICH runs of the in-situ reduction: KAIROS_LONG=1")
	}
	m := tracertest.MPICH
	mpif90 := testenv.Tool(t, m.FC, m.Package)
	mpiexec := testenv.Tool(t, m.Run, m.RunPkg)
	dir := t.TempDir()
	lib := m.Tracer(t, dir, false)
	run(t, dir, nil, mpif90, "-O1", "-o", "app_f", tracertest.Testdata("app.f90"))
	m.Compile(t, dir, tracertest.Testdata("halo.c"))
	for _, p := range []struct {
		prog     string
		np, want int
		args     []string
	}{{"app_f", 4, 3, nil}, {"halo", 9, 9, []string{"20", "32"}}} {
		trace := func(name, method string, k int) string {
			run(t, dir, nil, mpiexec, append([]string{"-np", strconv.Itoa(p.np), "-genv", "LD_PRELOAD", lib,
				"-genv", "KAIROS_TRACE", filepath.Join(dir, name), "-genv", "KAIROS_TRACE_REDUCE", method,
				"-genv", "KAIROS_TRACE_K", strconv.Itoa(k), "-genv", "KAIROS_TRACE_REDUCE_KEEP", "1",
				"-genv", "KAIROS_TRACE_CLOCK", "cpu", "./" + p.prog}, p.args...)...)
			return filepath.Join(dir, name, "index.txt")
		}
		reduced := trace(p.prog+"-callpath", "callpath", 9)
		sameAsOffline(t, filepath.Join(filepath.Dir(reduced), "full", "index.txt"), reduced, cluster.CallPathParam, p.np, p.want)
		// ACURDION's methods too, K = 2 (the Fortran program's 4 ranks,
		// the halo's 9 kinds of ranks: clusters merged)
		m := cluster.Acurdion
		if p.prog == "app_f" {
			m = cluster.Acurdion2
		}
		reduced = trace(p.prog+"-"+string(m), string(m), 2)
		sameAsOfflineK(t, filepath.Join(filepath.Dir(reduced), "full", "index.txt"), reduced, m, p.np, 0, 2)
	}
}

// insituClusters returns the clusters of a reduced trace's attributes
// (reduced.cluster.i: head and ranklist), each as its members, by head.
func insituClusters(t *testing.T, attrs map[string]string) []string {
	t.Helper()
	var out []string
	for i := 0; ; i++ {
		v, ok := attrs["reduced.cluster."+strconv.Itoa(i)]
		if !ok {
			return out
		}
		_, list, _ := strings.Cut(v, " ")
		rl, err := prsd.ParseRanklist(list)
		if err != nil {
			t.Fatalf("reduced.cluster.%d: %v", i, err)
		}
		out = append(out, fmt.Sprint(rl.Ranks()))
	}
}

// simulateSource replays src on a crossbar of n hosts.
func simulateSource(t *testing.T, src trace.Source, n int) float64 {
	t.Helper()
	p, err := platform.ParseCluster(strconv.Itoa(n) + "x1Gf,125MBps,50us")
	if err != nil {
		t.Fatal(err)
	}
	res, err := sim.Simulate(src, p, nil, sim.DefaultConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return res.Time
}

// TestTracerReduceWriteFails runs the halo exchange reduced in situ with
// one rank's file size limited to a few KiB (capture/testdata/fsize.sh: its
// writes past that fail with EFBIG): no directory is left, neither the
// trace's nor the temporary one, and rank 0 says why.
func TestTracerReduceWriteFails(t *testing.T) {
	if !testenv.Long() {
		t.Skip("a second MPI run of the tracer: KAIROS_LONG=1")
	}
	dir := t.TempDir()
	lib, _ := build(t, dir, false)
	mpicc := testenv.Tool(t, "mpicc", "libopenmpi-dev")
	app := filepath.Join(dir, "halo")
	run(t, dir, nil, mpicc, "-O1", "-o", app, filepath.Join(testenv.RepoRoot(), "capture", "testdata", "halo.c"))
	env := []string{"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1", "KAIROS_TRACE=" + filepath.Join(dir, "t"),
		"KAIROS_TRACE_REDUCE=callpath"}
	out := run(t, dir, env, "mpirun", "--oversubscribe", "-np", "4", "-x", "LD_PRELOAD="+lib, "-x", "KAIROS_TRACE",
		"-x", "KAIROS_TRACE_REDUCE", filepath.Join(testenv.RepoRoot(), "capture", "testdata", "fsize.sh"), app, "40", "64")
	if !strings.Contains(out, "could not write its trace") {
		t.Errorf("no message of the failed write:\n%s", out)
	}
	for _, d := range []string{"t", "t.partial"} {
		if _, err := os.Stat(filepath.Join(dir, d)); err == nil {
			t.Errorf("%s is left after a failed write", d)
		}
	}
}

// BenchmarkTracerOverheadOneSided measures the tracer's cost per one-sided
// call: 2 ranks each put 8 bytes to the other and flush, 100,000 times,
// without and with the tracer (TI, OTF2).
func BenchmarkTracerOverheadOneSided(b *testing.B) {
	for name, s := range tracerOverhead(b, "rmaoverhead.c", "100000") {
		b.ReportMetric(s*1e9, "ns/put+flush-"+name)
	}
}

// TestTracerAbort traces a run that ends in MPI_Abort: the tracer says the
// measurement is abandoned, the aborting rank's TI trace holds every call
// up to its MPI_Abort, whole lines only, and the other ranks' traces, cut
// where each last wrote its buffer, still read, with fewer calls; check
// says the run was cut short.
func TestTracerAbort(t *testing.T) {
	if !testenv.Long() {
		t.Skip("a run that aborts: KAIROS_LONG=1")
	}
	dir := t.TempDir()
	lib := tracertest.OpenMPI.Tracer(t, dir, false)
	app := tracertest.OpenMPI.Compile(t, dir, tracertest.Testdata("abort.c"))
	const n = 20000
	tr := filepath.Join(dir, "t")
	r := tracertest.Recording{Lib: lib, Trace: tr, Format: "ti", NP: 4, Dir: dir}
	out, err := tracertest.OpenMPI.Try(r, app, strconv.Itoa(n))
	if err == nil {
		t.Fatalf("a run that aborts exited 0:\n%s", out)
	}
	if !strings.Contains(out, "kairos_trace: rank 1 called MPI_Abort (error code 3): the measurement is abandoned") {
		t.Errorf("no message of the abandoned measurement:\n%s", out)
	}
	data, err := os.ReadFile(filepath.Join(tr, "rank-1.ti"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(string(data), "1 allreduce 8 0\n") {
		t.Errorf("rank 1's trace does not end with its last allreduce: ...%q", data[max(0, len(data)-80):])
	}
	for rank, c := range calls(t, filepath.Join(tr, "index.txt")) { // which fails the test if the cut traces do not read
		if want := n + 1; rank == 1 && len(c) != want {
			t.Errorf("rank 1 has %d calls, want %d (init and its allreduces)", len(c), want)
		} else if rank != 1 && len(c) >= n {
			t.Errorf("rank %d has %d calls: its trace was not cut (the test no longer fills its buffer)", rank, len(c))
		}
	}
	src, _, err := format.Open(filepath.Join(tr, "index.txt"))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := check.Check(src, check.Options{MaxProblems: 1})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Unfinalized != 4 {
		t.Errorf("check says %d ranks (%s) end without MPI_Finalize, want 4", rep.Unfinalized, rep.UnfinalizedList)
	}
}
