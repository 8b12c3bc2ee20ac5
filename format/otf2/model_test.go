package otf2

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"kairos/check"
	"kairos/internal/testenv"
	"kairos/trace"
)

func openSample(t *testing.T, name string) *Source {
	t.Helper()
	s, err := Open(testenv.Shared(t, filepath.Join("traces/otf2", name)))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestMissingEventFiles: the ranks whose location has no event file make
// the trace partial, naming them and the first file missing (they read
// as ranks without events, silently, and otf2-print refuses the archive).
func TestMissingEventFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tiny")
	if err := os.CopyFS(dir, os.DirFS(testenv.Shared(t, "traces/otf2/tiny_mpi"))); err != nil {
		t.Fatal(err)
	}
	if s, err := Open(dir); err != nil {
		t.Fatal(err)
	} else if p := s.Meta().Attrs["partial"]; p != "" {
		t.Fatalf("the whole archive is partial: %s", p)
	}
	for _, c := range []struct{ remove, want string }{
		{"traces/1.evt", "ranks 1 of MPI_COMM_WORLD's 2 have no event file (DIR/traces/1.evt missing)"},
		{"traces/0.evt", "ranks 0-1 of MPI_COMM_WORLD's 2 have no event file (DIR/traces/0.evt missing)"},
	} {
		if err := os.Remove(filepath.Join(dir, c.remove)); err != nil {
			t.Fatal(err)
		}
		s, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		want := strings.ReplaceAll(c.want, "DIR", dir) + ": they have no events, and the messages and collectives they take part in have no partner in the trace"
		if got := s.Meta().Attrs["partial"]; got != want {
			t.Errorf("without %s:\n got %q\nwant %q", c.remove, got, want)
		}
	}
}

// TestModelTiny maps the tiny_mpi sample and compares the two ranks'
// events with what its writer recorded. Its allreduce records Score-P's
// volumes over both ranks (8 bytes sent and received), 4 bytes a member.
func TestModelTiny(t *testing.T) {
	s := openSample(t, "tiny_mpi")
	if s.NumRanks() != 2 || !s.HasMPI() {
		t.Fatalf("%d ranks, MPI %v", s.NumRanks(), s.HasMPI())
	}
	tr, err := trace.Load(s)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for r := range tr.Ranks {
		rd := tr.Ranks[r].Reader()
		for rd.Next() {
			e := rd.Event()
			got = append(got, fmt.Sprintf("%d %s [%d,%d] %s", r, e.String(), e.Enter, e.Exit, strings.Join(tr.Meta().CallPath(e.Region), "/")))
		}
	}
	want := []string{
		"0 send peer=1 tag=42 send=1024 [100000,610000] main",
		"0 irecv peer=1 tag=7 recv=4096 req=1 [660000,685000] main",
		"0 wait req=1 [985000,1695000] main",
		"0 allreduce send=4 recv=4 [1795000,2205000] main",
		"1 recv peer=0 tag=42 recv=1024 [100000,826000] main",
		"1 isend peer=0 tag=7 send=4096 req=9 [1066000,1108000] main",
		"1 wait req=9 [1228000,1720000] main",
		"1 allreduce send=4 recv=4 [2080000,2212000] main",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// knownDefects are the defects of the MPI samples: in the TraceR traces
// rank 0 leaves two regions out of order and ends with two open (the
// shared README: "2 unbalanced Enter"). The others have none.
var knownDefects = map[string][]string{
	"tracer-stencil4d-32": {"rank 0: 2 Enter without Leave", "rank 0: 2 Leave of another region than the innermost"},
	"tracer-stencil4d-64": {"rank 0: 2 Enter without Leave", "rank 0: 2 Leave of another region than the innermost"},
}

// TestModelCheck reads every MPI sample into the model and checks it as
// `kairos check` does: every message matched, every request completed,
// collectives consistent, and no deadlock in SimGrid's replay.
func TestModelCheck(t *testing.T) {
	for _, name := range []string{"tiny_mpi", "pipit-ping-pong-otf2", "pipit-ping-pong-otf2-papi",
		"sst-macro-mpi-coverage", "tracer-stencil4d-32", "tracer-stencil4d-64"} {
		t.Run(name, func(t *testing.T) {
			s := openSample(t, name)
			rep, err := check.Check(s, check.Options{Protocol: check.SimGrid, EagerLimit: check.DefaultEagerLimit})
			if err != nil {
				t.Fatal(err)
			}
			var probs []string
			for _, p := range rep.Problems {
				probs = append(probs, p.String())
			}
			sort.Strings(probs)
			if !rep.OK() || rep.Warnings > 0 {
				t.Errorf("%d errors, %d warnings:\n%s", rep.Errors, rep.Warnings, strings.Join(probs, "\n"))
			}
			// TraceR's traces end with the measurement switched off,
			// before MPI_Finalize: not a run cut short.
			if rep.Unfinalized > 0 {
				t.Errorf("ranks %s end without MPI_Finalize (%s)", rep.UnfinalizedList, s.Meta().Attrs[trace.AttrNoFinalize])
			}
			if got, want := strings.Join(s.Defects(), "; "), strings.Join(knownDefects[name], "; "); got != want {
				t.Errorf("defects %q, want %q", got, want)
			}
			if got := s.Meta().Attrs["otf2.defects"]; got != strings.Join(knownDefects[name], "; ") {
				t.Errorf("Meta.Attrs[otf2.defects] = %q", got)
			}
		})
	}
}

// TestModelNoMPI reads the fastotf2 sample, which has no MPI at all: one
// rank for its one CPU thread (its 29 metric locations and 2 HIP streams
// are not ranks), no events, and Meta says so.
func TestModelNoMPI(t *testing.T) {
	s := openSample(t, "fastotf2-mi300-hip")
	if s.HasMPI() || s.NumRanks() != 1 || s.RankLocation(0) != 0 {
		t.Fatalf("MPI %v, %d ranks", s.HasMPI(), s.NumRanks())
	}
	at := s.Meta().Attrs
	if !strings.Contains(at["otf2.ranks"], "no MPI") || !strings.HasPrefix(at["otf2.ignored_locations"], "31 ") ||
		!strings.HasPrefix(at[AttrNoMPI], "no MPI in this archive (no location group of MPI ranks): its 1 location read as ranks without events") {
		t.Errorf("Attrs: %v", at)
	}
	tr, err := trace.Load(s)
	if err != nil {
		t.Fatal(err)
	}
	if n := tr.NumEvents(); n != 0 {
		t.Errorf("%d model events from a trace without MPI", n)
	}
}

// TestInPlaceAware tells the archives whose in-place collectives leave
// the member's own block out by their creator.
func TestInPlaceAware(t *testing.T) {
	for creator, want := range map[string]bool{"Score-P 9.0": true, "Score-P 8.4": true, "Score-P 10.1": true,
		"Score-P 7.1": false, "Score-P 3.0": false, "Score-P 2.0.2": false, "Kairos tracer": false, "": false} {
		if got := inPlaceAware(creator); got != want {
			t.Errorf("inPlaceAware(%q) = %v, want %v", creator, got, want)
		}
	}
}

// TestNonBlockingCollectiveOrder reads non-blocking collectives as
// Score-P records them (testdata/otf2writer.c's "nbc"): each is its
// blocking collective where it completes, after the places of those
// called before it, so that both ranks have them in the order of their
// calls though rank 0 completes the second first; one called before a
// blocking collective is placed before it and filled in at its
// completion; a test of it is no test of the model's; the calls left
// without communication are deferred events, and the trace checks.
func TestNonBlockingCollectiveOrder(t *testing.T) {
	s, err := Open(writeArchive(t, "nbc"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"deferred", "deferred", // the MPI_Iallreduce calls
		"allreduce send=8 recv=8", "bcast root=0 send=8 recv=8", // rank 0's first wait, for the second
		"deferred",                                             // its second wait, for the first
		"deferred",                                             // the third MPI_Iallreduce
		"allreduce send=8 recv=8", "allreduce send=16 recv=16", // its place, then the blocking allreduce
		"deferred", "deferred", // its test and its wait
	}
	tr, err := trace.Load(s)
	if err != nil {
		t.Fatal(err)
	}
	for r := range tr.Ranks {
		var got []string
		rd := tr.Ranks[r].Reader()
		for rd.Next() {
			e := rd.Event()
			got = append(got, e.String())
			// A non-blocking collective keeps its request: its times are
			// the completing call's (waitstate tells no wait from them).
			if blocking := len(got) == 8-r; e.Kind.IsCollective() && (e.Request == 0) != blocking {
				t.Errorf("rank %d: %s has request %d", r, e, e.Request)
			}
		}
		if r == 1 { // each wait completes one
			want = slices.Delete(want, 4, 5)
		}
		if !slices.Equal(got, want) {
			t.Errorf("rank %d:\n%s\nwant\n%s", r, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
	rep, err := check.Check(s, check.Options{})
	if err != nil || !rep.OK() {
		t.Errorf("check: %v %+v", err, rep)
	}
	if d := s.Defects(); len(d) > 0 {
		t.Errorf("defects: %v", d)
	}
}

// TestPendingRequests reads the "pending" archive of testdata/otf2writer.c:
// the isend and irecv one call starts share its time (the last spans
// it), and a receive never completed is left out with its test (deferred
// calls), said in the otf2.uncompleted attribute, where it once failed the
// read ("irecv receiving -1 bytes"). The trace checks.
func TestPendingRequests(t *testing.T) {
	s, err := Open(writeArchive(t, "pending"))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := trace.Load(s)
	if err != nil {
		t.Fatal(err)
	}
	for r := range tr.Ranks {
		var evs []trace.Event
		rd := tr.Ranks[r].Reader()
		for rd.Next() {
			evs = append(evs, rd.Event().Clone())
		}
		var kinds []trace.Kind
		for _, e := range evs {
			kinds = append(kinds, e.Kind)
		}
		// A wait on a null request is MPI time a replay gives none, as
		// the run's TI trace leaves it out (it was Local: computation);
		// so is a barrier without its collective record, whose members
		// the archive does not say (it was MPI_COMM_WORLD's, and the
		// replay deadlocked on a barrier of a spawned world's process),
		// and so are a receive and a broadcast without their records
		// (they were Local: Gyoto's manager, waiting 12.4 s for its
		// spawned workers' results, replayed in 13.1 s where its TI
		// trace took 0.65 s).
		want := []trace.Kind{trace.Isend, trace.Irecv, trace.Waitall, trace.Deferred, trace.Deferred, trace.Deferred, trace.Deferred,
			trace.Deferred, trace.Deferred}
		if !slices.Equal(kinds, want) {
			t.Fatalf("rank %d: %v, want %v", r, kinds, want)
		}
		if is, ir := evs[0], evs[1]; is.Enter != ir.Enter || is.Exit != is.Enter || ir.Exit <= ir.Enter || evs[1].Partner != int32(1-r) {
			t.Errorf("rank %d: the call's isend %v..%v and irecv %v..%v (from %d), want the isend at its entry, the irecv spanning it",
				r, is.Enter, is.Exit, ir.Enter, ir.Exit, ir.Partner)
		}
	}
	if got := s.Meta().Attrs["otf2.uncompleted"]; !strings.HasPrefix(got, "2 receive requests (MPI_Irecv) were never completed") {
		t.Errorf("otf2.uncompleted: %q", got)
	}
	rep, err := check.Check(s, check.Options{})
	if err != nil || !rep.OK() {
		t.Errorf("check: %v %+v", err, rep)
	}
}

// TestCommunicates: the MPI functions whose calls without records are MPI
// time (Deferred), in their blocking, non-blocking, persistent and
// neighbourhood forms, and those that stay Local.
func TestCommunicates(t *testing.T) {
	for _, c := range []struct {
		name string
		want bool
	}{
		{"MPI_Recv", true}, {"MPI_Issend", true}, {"MPI_Imrecv", true}, {"MPI_Send_init", true}, {"MPI_Bcast_init", true},
		{"MPI_Iallreduce", true}, {"MPI_Neighbor_alltoallw", true}, {"MPI_Ineighbor_allgather", true},
		{"MPI_Comm_spawn", true}, {"MPI_Startall", true}, {"MPI_Reduce_scatter_block", true},
		{"MPI_Init", false}, {"MPI_Info_create", false}, {"MPI_Is_thread_main", false}, {"MPI_Comm_rank", false},
		{"MPI_Wtime", false}, {"MPI_Type_commit", false}, {"MPI_", false}, {"MPI_I", false}, {"Recv", false},
	} {
		if got := communicates(c.name); got != c.want {
			t.Errorf("communicates(%q) = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestScoreP8Records reads testdata/otf2writer.c's "scorep8" archive, as
// Score-P 8 writes MPI_Init, MPI_Comm_split and MPI_Finalize (each with a
// collective that creates or destroys a communicator) and an MPI_Reduce
// in place at its root: the calls keep their kinds (an init read as a
// local call was replayed as computation, 1.3 to 2.2 s of every Score-P
// trace's simulation), the handles' collectives are none a replay makes,
// the root's block is its members' (64 bytes, not 56 of 448 over 8), an
// in-place allgatherv's blocks are what all its members' totals say where
// each member's alone could be either, a buffer flush between two calls is
// a deferred call of its own (its time was replayed as computation), and
// the trace checks.
func TestScoreP8Records(t *testing.T) {
	s, tr := loadArchive(t, "scorep8")
	meta := s.Meta()
	for r := range tr.Ranks {
		// The allgatherv in place: each record alone reads as well as 4
		// blocks of 24(r+1) bytes, not in place; the members' received
		// totals together say in place, 32(r+1).
		want := []string{"init", "deferred MPI_Comm_split", "reduce root=0 send=64 recv=64",
			fmt.Sprintf("allgatherv send=%d recv=320 counts=[32 64 96 128]", 32*(r+1)), "finalize"}
		if r == 1 { // its buffer flush between the split and the reduce, 5 us
			want = slices.Insert(want, 2, "deferred OTF2 buffer flush 5000000ps")
		}
		got := rankLines(tr, r, func(e *trace.Event) string {
			g := e.String()
			if e.Kind == trace.Deferred {
				g += " " + meta.RegionName(e.Region)
			}
			if e.Kind == trace.Allgatherv {
				g += fmt.Sprintf(" counts=%v", e.RecvCounts)
			}
			if e.Kind == trace.Deferred && meta.RegionName(e.Region) == flushName {
				g += fmt.Sprintf(" %dps", e.Exit-e.Enter)
			}
			return g
		})
		if !slices.Equal(got, want) {
			t.Errorf("rank %d:\n%s\nwant\n%s", r, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
	checks(t, s)
	// Rank 1's buffer flush is said.
	if got, want := s.Meta().Attrs["otf2.flushes"], "the tracer flushed its buffers 1 time during the run (0.000005 s in all, rank 1's the longest: 0.000005 s)"; !strings.HasPrefix(got, want) {
		t.Errorf("the flushes' note: %q, want it to begin %q", got, want)
	}
}

// loadArchive writes testdata/otf2writer.c's archive of mode and loads it.
func loadArchive(t *testing.T, mode string) (*Source, *trace.Trace) {
	t.Helper()
	s, err := Open(writeArchive(t, mode))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := trace.Load(s)
	if err != nil {
		t.Fatal(err)
	}
	return s, tr
}

// rankLines returns rank r's events of tr, each as line gives it.
func rankLines(tr *trace.Trace, r int, line func(*trace.Event) string) []string {
	var got []string
	rd := tr.Ranks[r].Reader()
	for rd.Next() {
		got = append(got, line(rd.Event()))
	}
	return got
}

// checks fails t unless s passes kairos check.
func checks(t *testing.T, s *Source) {
	t.Helper()
	if rep, err := check.Check(s, check.Options{}); err != nil || !rep.OK() {
		t.Errorf("check: %v %+v", err, rep)
	}
}

// TestUnwoundCallingContexts reads testdata/otf2writer.c's "unwind"
// archive, as Score-P writes a run when it unwinds the stack
// (SCOREP_ENABLE_UNWINDING): calling-context enters and leaves in place of
// Enter and Leave. The calls are read as calls (they were read as records
// outside any call: an MPI_Init missing, every call of no duration), and
// each call's path is its unwound frames': the send's and the receive's
// in solve, a function only the unwinding saw, the allreduce in main.
func TestUnwoundCallingContexts(t *testing.T) {
	s, tr := loadArchive(t, "unwind")
	meta := s.Meta()
	for r, want := range [][]string{
		{"init main", "send peer=1 tag=7 send=64 main/solve", "allreduce send=4 recv=4 main", "finalize main"},
		{"init main", "recv peer=0 tag=7 recv=64 main/solve", "allreduce send=4 recv=4 main", "finalize main"},
	} {
		got := rankLines(tr, r, func(e *trace.Event) string {
			if e.Exit <= e.Enter {
				t.Errorf("rank %d: %s lasts %v", r, e, e.Exit-e.Enter)
			}
			return e.String() + " " + strings.Join(meta.CallPath(e.Region), "/")
		})
		if !slices.Equal(got, want) {
			t.Errorf("rank %d:\n%s\nwant\n%s", r, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
	checks(t, s)
}

// TestInterComm reads testdata/otf2writer.c's "intercomm" archive: a rank
// of an intercommunicator (OTF2 3.0's InterComm) names a rank of the
// other group, so each sendrecv pairs a rank with the one of the same
// place in the other group (they were read as rank -1, and the
// broadcast's root too); the broadcast over it is a deferred call, as
// the model has no intercommunicator, and a note says so; the trace
// checks.
func TestInterComm(t *testing.T) {
	s, tr := loadArchive(t, "intercomm")
	for r, partner := range []int{1, 0, 3, 2} {
		got := rankLines(tr, r, (*trace.Event).String)
		sr := fmt.Sprintf("sendRecv peer=%d tag=5 comm=3 send=8 recv=8", partner)
		if want := []string{sr, "deferred", "allreduce send=8 recv=8"}; !slices.Equal(got, want) {
			t.Errorf("rank %d:\n%s\nwant\n%s", r, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
	checks(t, s)
	if got := s.Meta().Attrs[AttrInterCollectives]; !strings.HasPrefix(got, "4 calls of collectives on intercommunicators") {
		t.Errorf("note %q", got)
	}
	if d := s.Meta().Attrs["otf2.defects"] + s.Meta().Attrs["otf2.unresolved"]; d != "" {
		t.Errorf("defects: %s", d)
	}
}

// TestThreadMPI reads testdata/otf2writer.c's "threads" archive, whose
// processes each have a second thread that sends and receives (an
// MPI_THREAD_MULTIPLE program): the model reads each rank's own thread
// (its allreduce), and a note says that two threads hold MPI records it
// did not read (they were left out without a word).
func TestThreadMPI(t *testing.T) {
	s, tr := loadArchive(t, "threads")
	if got := s.Meta().Attrs[AttrThreadMPI]; !strings.HasPrefix(got, "2 threads of the ranks' processes besides the ranks' own hold MPI records") {
		t.Errorf("note %q", got)
	}
	for r := range tr.Ranks {
		if got, want := rankLines(tr, r, (*trace.Event).String), []string{"allreduce send=8 recv=8"}; !slices.Equal(got, want) {
			t.Errorf("rank %d: %q, want %q", r, got, want)
		}
	}
	if got := s.Meta().Attrs[AttrDevices]; !strings.HasPrefix(got, "2 accelerator streams (GPUs, coprocessors) of the ranks' processes are not read") {
		t.Errorf("devices note %q", got)
	}
	// An archive whose only threads are the ranks' has no such notes.
	if s, _ := loadArchive(t, "intercomm"); s.Meta().Attrs[AttrThreadMPI] != "" || s.Meta().Attrs[AttrDevices] != "" {
		t.Errorf("intercomm archive: notes %q, %q", s.Meta().Attrs[AttrThreadMPI], s.Meta().Attrs[AttrDevices])
	}
}

// TestCallingContextLoop: a hostile archive's calling contexts whose
// callers loop (each context's caller the next, the last's the first)
// give each context one call-path node, not a chain as deep as the
// nesting limit (65,536 nodes a context: memory beyond the archive's
// size).
func TestCallingContextLoop(t *testing.T) {
	d := newDefs()
	d.Strings[1] = "f"
	d.Regions[0] = Region{Name: 1, Canonical: 1}
	const n = 1000
	for i := uint32(0); i < n; i++ {
		d.CallingCtxs[i] = CallingContext{Region: 0, SourceLoc: undefined32, Parent: (i + 1) % n}
	}
	s := &Source{arch: memArchive(d), meta: trace.NewMeta(), callsites: map[uint32]uint64{0: 0}}
	m := &mapper{src: s, nodes: map[[2]uint32]uint32{}, regions: map[uint32]regionInfo{}}
	for i := uint32(0); i < n; i++ {
		if m.ccNode(i) == 0 {
			t.Fatalf("context %d has no node", i)
		}
	}
	if got := len(s.meta.Regions); got > n+1 {
		t.Errorf("%d call-path nodes for %d contexts", got, n)
	}
}
