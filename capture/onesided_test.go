package capture_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"kairos/check"
	"kairos/clock"
	"kairos/format"
	"kairos/format/otf2"
	"kairos/internal/testenv"
	"kairos/internal/tracertest"
	"kairos/platform"
	"kairos/sim"
	"kairos/trace"
)

// tracerFor returns the tracer built with OTF2 with m's mpicc.
func tracerFor(t *testing.T, m tracertest.MPI) string {
	t.Helper()
	return m.Tracer(t, t.TempDir(), true)
}

// mpis returns Open MPI, and MPICH too under testenv.Long.
func mpis() []tracertest.MPI {
	if testenv.Long() {
		return tracertest.Both
	}
	return []tracertest.MPI{tracertest.OpenMPI}
}

// record runs prog on 2 ranks of m under lib, writing both formats into
// dir/trace (or the directory the tracer chooses), and returns the
// launcher's output.
func record(t *testing.T, m tracertest.MPI, dir, lib, prog string, args ...string) string {
	t.Helper()
	r := tracertest.Recording{Lib: lib, Trace: filepath.Join(dir, "trace"), Format: "ti,otf2", NP: 2, Dir: dir}
	return m.Launch(t, r, prog, args...)
}

// kinds counts each rank's events by kind.
func kinds(t *testing.T, src trace.Source) []map[trace.Kind]int {
	t.Helper()
	out := make([]map[trace.Kind]int, src.NumRanks())
	for r := range out {
		out[r] = map[trace.Kind]int{}
	}
	if err := trace.ForEach(src, func(r, _ int, e *trace.Event) error { out[r][e.Kind]++; return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

// openChecked opens a trace and requires that it checks out.
func openChecked(t *testing.T, path string) trace.Source {
	t.Helper()
	src, _, err := format.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := check.Check(src, check.Options{Protocol: check.SimGrid})
	if err != nil || !rep.OK() {
		t.Fatalf("check %s: %v %v", path, err, rep.Problems)
	}
	return src
}

// simulated replays a timed trace (its computation at 1 Gf/s) on two
// nodes of a cluster of bandwidth bw.
func simulated(t *testing.T, src trace.Source, bw string) *sim.Result {
	t.Helper()
	p, err := platform.ParseCluster("2x1Gf," + bw + ",1us")
	if err != nil {
		t.Fatal(err)
	}
	res, err := sim.Simulate(trace.UntimedAbove(src, 1e9, trace.FromSeconds(1e-6)), p, nil, sim.DefaultConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// tiFlops sums the computations of a rank's TI trace, each of which
// must be a whole number of flops (at the tracer's 1 Gf/s, nanoseconds).
func tiFlops(t *testing.T, path string) float64 {
	t.Helper()
	ti, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var flops float64
	for _, line := range strings.Split(string(ti), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[1] == "compute" {
			if strings.ContainsAny(f[2], ".e") {
				t.Errorf("%s: %q is not a whole number of flops", path, line)
			}
			v, _ := strconv.ParseFloat(f[2], 64)
			flops += v
		}
	}
	return flops
}

// onesidedProgram is the C program of the one-sided tests (its modes:
// repro, fence, pscw, lock; sim/testdata/onesided.c).
func onesidedProgram() string {
	return filepath.Join(testenv.RepoRoot(), "sim", "testdata", "onesided.c")
}

// TestTracerOneSided traces issue 45's program on Open MPI: rank 1
// sleeps 0.2 s, both allocate a window (rank 0 waits for rank 1 there),
// then each puts 8 KiB to the other and flushes, 200 times. Both ranks'
// 200 puts are in the archive, with their window, target and bytes, and
// the trace checks out; rank 0's wait in MPI_Win_allocate is in the call,
// not computation, in both traces; TI's summary counts the 400 puts and
// names the archive; the computation amounts are whole; simulating the
// archive takes the 3.2 MB of puts through the network (each rank's 200
// one after the other, the two directions at once: about 1.6 s more at
// 1 MB/s than at 1 GB/s); the classification is not computation-bound;
// and a second run into the directory writes to a fresh one.
func TestTracerOneSided(t *testing.T) {
	dir := t.TempDir()
	lib := tracerFor(t, tracertest.OpenMPI)
	prog := tracertest.OpenMPI.Compile(t, dir, onesidedProgram())
	out := record(t, tracertest.OpenMPI, dir, lib, prog, "repro")
	if !regexp.MustCompile(`kairos_trace: +400 +[0-9.]+ +[0-9.]+% +MPI_Put \(one-sided\)`).MatchString(out) {
		t.Errorf("the tracer's summary does not count the 400 puts:\n%s", out)
	}
	for _, want := range []string{"MPI_Put (one-sided)", "MPI_Win_allocate (one-sided)",
		"the OTF2 archive " + filepath.Join(dir, "trace") + "/traces.otf2 has every call"} {
		if !strings.Contains(out, want) {
			t.Errorf("the tracer's summary lacks %q:\n%s", want, out)
		}
	}
	src := openChecked(t, filepath.Join(dir, "trace", "traces.otf2"))
	for r, k := range kinds(t, src) {
		if k[trace.Put] != 200 || k[trace.WinFlush] != 200 || k[trace.WinCreate] != 1 || k[trace.WinFree] != 1 {
			t.Errorf("rank %d: %v, want 200 puts and flushes, a window created and freed", r, k)
		}
	}
	// Rank 0's 0.2 s wait for rank 1 is in MPI_Win_allocate, in both traces.
	var created trace.Time
	if err := trace.ForEach(src, func(r, _ int, e *trace.Event) error {
		if r == 0 && e.Kind == trace.WinCreate {
			created = e.Duration()
		}
		return nil
	}); err != nil || created < trace.FromSeconds(0.15) {
		t.Errorf("rank 0's window creation takes %v s (%v), want rank 1's 0.2 s sleep", created.Seconds(), err)
	}
	if flops := tiFlops(t, filepath.Join(dir, "trace", "rank-0.ti")); flops >= 1e8 {
		t.Errorf("rank 0 computes %g flops (%g s at 1 Gf/s) in its TI trace: its wait in MPI_Win_allocate is counted", flops, flops/1e9)
	}
	fast, slow := simulated(t, src, "1GBps"), simulated(t, src, "1MBps")
	if slow.Bytes < 400*8192 {
		t.Errorf("%d bytes simulated, want the puts' %d", slow.Bytes, 400*8192)
	}
	if d := slow.Time - fast.Time; d < 1.4 || d > 1.8 {
		t.Errorf("at 1 MB/s the simulated time grows by %.3f s, want about 1.6 s", d)
	}
	opt := clock.DefaultOptions()
	cl, err := clock.Classify(src, clock.Interconnects, opt, clock.DefaultThresholds())
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range cl.Verdicts {
		if v.Class == "Comp." {
			t.Errorf("%s: classified computation-bound", v.Interconnect.Name)
		}
	}
	if out := record(t, tracertest.OpenMPI, dir, lib, prog, "repro"); !strings.Contains(out, "holds a trace already: this run's is written to "+filepath.Join(dir, "trace-2")) {
		t.Errorf("a second run into the directory: %s", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "trace-2", "traces.otf2")); err != nil {
		t.Errorf("the second run's archive: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "trace", "rank-0.ti")); err != nil {
		t.Errorf("the first run's TI trace: %v", err)
	}
}

// TestTracerOneSidedEpochs traces the fence, post/start/complete/wait and
// lock (exclusive locks, get_accumulate, fetch_and_op) programs, one after
// the other in one run, on Open MPI (and MPICH under testenv.Long), as
// the reproduction is: every call is its event and the trace checks out;
// TI's summary counts each kind and names the archive; rank 0's waits for
// rank 1 in the three epochs (0.1 s each) are not computation in its TI
// trace; the replay takes the transfers' bytes through the network; and
// the classification is not computation-bound.
func TestTracerOneSidedEpochs(t *testing.T) {
	want := map[string][]trace.Kind{
		"fence": {trace.WinFence, trace.Put, trace.Get, trace.Accumulate},
		"pscw":  {trace.WinPost, trace.WinStart, trace.WinComplete, trace.WinWait, trace.Put},
		"lock":  {trace.WinLock, trace.WinUnlock, trace.Accumulate, trace.WinLockAll, trace.GetAccumulate, trace.WinFlushAll},
	}
	for _, m := range mpis() {
		t.Run(m.Name, func(t *testing.T) {
			dir := t.TempDir()
			lib := tracerFor(t, m)
			prog := m.Compile(t, dir, onesidedProgram())
			out := record(t, m, dir, lib, prog, "fence", "pscw", "lock")
			for _, call := range []string{"MPI_Win_fence", "MPI_Put", "MPI_Get", "MPI_Accumulate", "MPI_Win_post", "MPI_Win_start",
				"MPI_Win_complete", "MPI_Win_wait", "MPI_Win_lock", "MPI_Win_unlock", "MPI_Get_accumulate", "MPI_Fetch_and_op"} {
				if !strings.Contains(out, call+" (one-sided)") {
					t.Errorf("the tracer's summary does not count %s:\n%s", call, out)
				}
			}
			if !strings.Contains(out, "the OTF2 archive "+filepath.Join(dir, "trace")+"/traces.otf2 has every call") {
				t.Errorf("the tracer's summary does not name the archive:\n%s", out)
			}
			if flops := tiFlops(t, filepath.Join(dir, "trace", "rank-0.ti")); flops >= 1e8 {
				t.Errorf("rank 0 computes %g flops (%g s at 1 Gf/s) in its TI trace: its waits in the epochs are counted", flops, flops/1e9)
			}
			src := openChecked(t, filepath.Join(dir, "trace", "traces.otf2"))
			all := map[trace.Kind]int{}
			for _, k := range kinds(t, src) {
				for kind, n := range k {
					all[kind] += n
				}
			}
			for mode, ks := range want {
				for _, k := range ks {
					if all[k] == 0 {
						t.Errorf("%s: no %s (%v)", mode, k, all)
					}
				}
			}
			if all[trace.WinCreate] != 6 || all[trace.WinFree] != 6 {
				t.Errorf("%d windows created, %d freed, want 3 a rank", all[trace.WinCreate], all[trace.WinFree])
			}
			// fence: each rank puts and gets 1 MB and accumulates 64 KiB;
			// pscw: rank 0 puts 1 MB; lock: each accumulates 256 KiB.
			if res, want := simulated(t, src, "100MBps"), int64(2*(2e6+65536)+1e6+2*262144); res.Bytes < want {
				t.Errorf("%d bytes simulated, want the transfers' %d at least", res.Bytes, want)
			}
			cl, err := clock.Classify(src, clock.Interconnects, clock.DefaultOptions(), clock.DefaultThresholds())
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range cl.Verdicts {
				if v.Class == "Comp." {
					t.Errorf("%s: classified computation-bound", v.Interconnect.Name)
				}
			}
		})
	}
}

// TestTracerOneSidedRequests traces, on Open MPI, the calls the epoch
// programs do not make (testdata/rmarequests.c): MPI_Win_create and a
// dynamic window, the request-based MPI_Rput, MPI_Rget, MPI_Raccumulate
// and MPI_Rget_accumulate completed by MPI_Waitall, MPI_Compare_and_swap,
// MPI_Win_flush_local, MPI_Win_sync, and a post/start/complete epoch ended
// by MPI_Win_test: each transfer is its event with its request, bytes and
// target, the polls that fail are MPI time (deferred), the trace checks
// out and replays, and the TI trace has none of them.
func TestTracerOneSidedRequests(t *testing.T) {
	dir := t.TempDir()
	lib := tracerFor(t, tracertest.OpenMPI)
	prog := tracertest.OpenMPI.Compile(t, dir, tracertest.Testdata("rmarequests.c"))
	out := record(t, tracertest.OpenMPI, dir, lib, prog)
	for _, want := range []string{"MPI_Rput (one-sided)", "MPI_Compare_and_swap (one-sided)", "MPI_Win_test (one-sided)"} {
		if !strings.Contains(out, want) {
			t.Errorf("the tracer's summary lacks %q:\n%s", want, out)
		}
	}
	src := openChecked(t, filepath.Join(dir, "trace", "traces.otf2"))
	want := map[trace.Kind]int{trace.WinCreate: 2, trace.WinFree: 2, trace.Put: 2, trace.Get: 1, trace.Accumulate: 1,
		trace.GetAccumulate: 1, trace.CompareAndSwap: 1, trace.Waitall: 1, trace.WinFlushLocal: 1,
		trace.WinPost: 1, trace.WinStart: 1, trace.WinComplete: 1, trace.WinWait: 1}
	for r, k := range kinds(t, src) {
		for kind, n := range want {
			if k[kind] != n {
				t.Errorf("rank %d: %d %s, want %d (%v)", r, k[kind], kind, n, k)
			}
		}
	}
	if err := trace.ForEach(src, func(r, _ int, e *trace.Event) error {
		switch {
		case e.Kind.IsOneSided() && e.Kind != trace.CompareAndSwap && e.Request == 0 && e.SendBytes != 512:
			t.Errorf("rank %d: %v: the request-based call has no request", r, e)
		case e.Kind == trace.Get && (e.RecvBytes != 4096 || e.Partner != int32(1-r)):
			t.Errorf("rank %d: %v, want 4096 bytes from rank %d", r, e, 1-r)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	remoteCompletions(t, filepath.Join(dir, "trace", "traces.otf2"))
	if res := simulated(t, src, "100MBps"); res.Bytes < 8192+4096+2048+2*1024+16+512 {
		t.Errorf("%d bytes simulated", res.Bytes)
	}
	ti, err := os.ReadFile(filepath.Join(dir, "trace", "rank-0.ti"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(ti), "wait") {
		t.Errorf("rank 0's TI trace waits for a one-sided request:\n%s", ti)
	}
}

// remoteCompletions requires that every one-sided operation of the
// archive but the post/start/complete epoch's put (512 bytes), which its
// epoch's end completes, has its remote completion after its completion at
// the origin, as Score-P writes them: rmarequests.c's compare-and-swap is
// completed at the origin by MPI_Win_flush_local, at the target by
// MPI_Win_unlock_all.
func remoteCompletions(t *testing.T, path string) {
	t.Helper()
	a, err := otf2.OpenArchive(path)
	if err != nil {
		t.Fatal(err)
	}
	m, err := a.Merged()
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	type op struct{ loc, id uint64 }
	state := map[op]string{}
	for m.Next() {
		e := m.Event()
		k := op{e.Location, e.Value}
		switch e.Type {
		case otf2.EvRmaPut, otf2.EvRmaGet, otf2.EvRmaAtomic:
			if e.Bytes != 512 {
				state[k] = "started"
			}
		case otf2.EvRmaOpCompleteNonBlocking:
			if state[k] == "started" {
				state[k] = "done at the origin"
			}
		case otf2.EvRmaOpCompleteRemote:
			if state[k] != "done at the origin" {
				t.Errorf("location %d: operation %d completed remotely when %q", k.loc, k.id, state[k])
			}
			delete(state, k)
		}
	}
	if err := m.Err(); err != nil {
		t.Fatal(err)
	}
	for k, s := range state {
		t.Errorf("location %d: operation %d ends %s, with no remote completion", k.loc, k.id, s)
	}
}

// TestTracerMPIIO traces a collective MPI-IO program on Open MPI: the
// opens, views, collective, independent, non-blocking and split writes
// and reads are I/O events with their bytes, the trace checks out, its
// replay reports their time as I/O, classify counts it (the class is I/O
// where it outweighs computation), and TI's summary counts them.
func TestTracerMPIIO(t *testing.T) {
	dir := t.TempDir()
	lib := tracerFor(t, tracertest.OpenMPI)
	prog := tracertest.OpenMPI.Compile(t, dir, tracertest.Testdata("mpiio.c"))
	out := record(t, tracertest.OpenMPI, dir, lib, prog, filepath.Join(dir, "out.dat"))
	if !strings.Contains(out, "MPI_File_write_all (MPI-IO)") {
		t.Errorf("the tracer's summary lacks the MPI-IO calls:\n%s", out)
	}
	src := openChecked(t, filepath.Join(dir, "trace", "traces.otf2"))
	for r, k := range kinds(t, src) {
		if k[trace.FileOpen] != 1 || k[trace.FileClose] != 1 || k[trace.FileWrite] != 4 || k[trace.FileRead] != 1 || k[trace.FileWait] != 2 {
			t.Errorf("rank %d: %v", r, k)
		}
	}
	res := simulated(t, src, "1GBps")
	for r, rr := range res.Ranks {
		if rr.IO <= 0 {
			t.Errorf("rank %d: no I/O time simulated (%+v)", r, rr)
		}
	}
	cl, err := clock.Classify(src, clock.Interconnects[:1], clock.DefaultOptions(), clock.DefaultThresholds())
	if err != nil {
		t.Fatal(err)
	}
	if v, e := cl.Verdicts[0], cl.Verdicts[0].Evidence; e.IOShare <= 0 || e.IOShare > e.CompShare && e.CommShare < 0.1 && v.Class != "I/O" {
		t.Errorf("classified %s (%s) with MPI-IO %.1f%% of the time", v.Class, v.Description, 100*v.Evidence.IOShare)
	}
}

// TestTracerOneSidedFortran traces the Fortran twin of the repro (with a
// collective write) on MPICH (and Open MPI under testenv.Long): the puts,
// flushes and file calls of the mpi module are recorded as the C
// program's.
func TestTracerOneSidedFortran(t *testing.T) {
	ms := []tracertest.MPI{tracertest.MPICH}
	if testenv.Long() {
		ms = append(ms, tracertest.OpenMPI)
	}
	for _, m := range ms {
		t.Run(m.Name, func(t *testing.T) {
			dir := t.TempDir()
			lib := tracerFor(t, m)
			prog := m.Compile(t, dir, tracertest.Testdata("onesided.f90"))
			record(t, m, dir, lib, prog)
			src := openChecked(t, filepath.Join(dir, "trace", "traces.otf2"))
			for r, k := range kinds(t, src) {
				if k[trace.Put] != 200 || k[trace.WinFlush] != 200 || k[trace.FileOpen] != 1 || k[trace.FileWrite] != 1 {
					t.Errorf("rank %d: %v", r, k)
				}
			}
		})
	}
}

// TestTracerGlobalArrays traces (under testenv.Long) a Global Arrays
// program built with Debian's libglobalarrays-dev, whose ARMCI is ARMCI-MPI (MPI-3 windows:
// allocate, lock_all, accumulate and get_accumulate for puts and gets,
// fetch_and_op, flushes): its one-sided calls are recorded, the trace
// checks out and replays.
func TestTracerGlobalArrays(t *testing.T) {
	if !testenv.Long() {
		t.Skip("a Global Arrays program is traced under KAIROS_LONG=1 (testenv.Long), as .ci/run does")
	}
	if _, err := os.Stat("/usr/include/ga.h"); err != nil {
		if testenv.Required() {
			t.Fatal("KAIROS_REQUIRE_EXTERNAL=1 but Global Arrays is not installed (Debian packages libglobalarrays-dev, libscalapack-openmpi-dev)")
		}
		t.Skip("Global Arrays is not installed (Debian packages libglobalarrays-dev, libscalapack-openmpi-dev; skipping)")
	}
	dir := t.TempDir()
	lib := tracerFor(t, tracertest.OpenMPI)
	prog := tracertest.OpenMPI.Compile(t, dir, tracertest.Testdata("ga.c"),
		"-lga-openmpi", "-larmci-openmpi", "-lscalapack-openmpi", "-llapack", "-lblas", "-lgfortran", "-lm")
	out := record(t, tracertest.OpenMPI, dir, lib, prog, "10")
	if !strings.Contains(out, "MPI_Accumulate (one-sided)") {
		t.Errorf("the tracer's summary lacks ARMCI-MPI's accumulates:\n%s", out)
	}
	src := openChecked(t, filepath.Join(dir, "trace", "traces.otf2"))
	for r, k := range kinds(t, src) {
		if k[trace.Accumulate] == 0 || k[trace.GetAccumulate] == 0 || k[trace.WinCreate] == 0 || k[trace.WinLockAll] == 0 {
			t.Errorf("rank %d: %v, want ARMCI-MPI's windows, accumulates and get_accumulates", r, k)
		}
	}
	if res := simulated(t, src, "1GBps"); res.Messages == 0 {
		t.Error("no one-sided transfer simulated")
	}
}

// TestTracerNWChem traces (under testenv.Long) NWChem from Debian, a
// Global Arrays application whose ARMCI is ARMCI-MPI, computing the SCF
// energy of a water molecule on 2 ranks: the energy is NWChem's, its
// windows, accumulates, get_accumulates and flushes are recorded, the
// trace checks out, replays and is not classified computation-bound.
func TestTracerNWChem(t *testing.T) {
	if !testenv.Long() {
		t.Skip("NWChem is traced under KAIROS_LONG=1 (testenv.Long), as .ci/run does")
	}
	nwchem := testenv.Tool(t, "nwchem.openmpi", "nwchem-openmpi")
	dir := t.TempDir()
	input := filepath.Join(dir, "h2o.nw")
	text := "start h2o\npermanent_dir " + dir + "\nscratch_dir " + dir + `
geometry units angstrom
  O 0 0 0
  H 0 0.757 0.587
  H 0 -0.757 0.587
end
basis
  * library 6-31g
end
task scf energy
`
	if err := os.WriteFile(input, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	out := record(t, tracertest.OpenMPI, dir, tracerFor(t, tracertest.OpenMPI), nwchem, input)
	if !strings.Contains(out, "Total SCF energy =    -75.98394") {
		t.Errorf("NWChem's energy is not in its output:\n%s", out)
	}
	src := openChecked(t, filepath.Join(dir, "trace", "traces.otf2"))
	for r, k := range kinds(t, src) {
		// (ARMCI-MPI's many flush_all with nothing to complete are deferred.)
		if k[trace.WinCreate] == 0 || k[trace.Accumulate] == 0 || k[trace.GetAccumulate] == 0 || k[trace.WinFlushLocal]+k[trace.WinFlush] == 0 {
			t.Errorf("rank %d: %v, want ARMCI-MPI's windows, accumulates, get_accumulates and flushes", r, k)
		}
	}
	if res := simulated(t, src, "1GBps"); res.Messages == 0 {
		t.Error("no one-sided transfer simulated")
	}
	cl, err := clock.Classify(src, clock.Interconnects, clock.DefaultOptions(), clock.DefaultThresholds())
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range cl.Verdicts {
		if v.Class == "Comp." {
			t.Errorf("%s: classified computation-bound (%s)", v.Interconnect.Name, v.Description)
		}
	}
}

// TestTracerMPI4Counted traces, on MPICH 4, MPI-4 calls (testdata/mpi4.c):
// a persistent neighborhood collective started three times, which the
// tracer does not record (TestTracerPersistent has the other persistent
// collectives, recorded): neither trace has its messages, and the summary at MPI_Finalize
// counts its starts (they were left out silently); and an MPI_Isendrecv,
// recorded as its isend and irecv (TestTracerIsendrecv), which the
// summary no longer counts as left out.
func TestTracerMPI4Counted(t *testing.T) {
	m := tracertest.MPICH
	dir := t.TempDir()
	lib := tracerFor(t, m)
	prog := m.Compile(t, dir, tracertest.Testdata("mpi4.c"))
	out := record(t, m, dir, lib, prog)
	for _, want := range []string{
		` 6 +[0-9.]+ +[0-9.]+%  MPI_Start of persistent requests not recorded \(MPI-4's persistent neighborhood collectives\), in neither trace\n`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("the tracer's summary lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "MPI_Isendrecv") {
		t.Errorf("the tracer's summary counts MPI_Isendrecv, which it records:\n%s", out)
	}
}
