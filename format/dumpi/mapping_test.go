package dumpi

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"kairos/check"
	"kairos/internal/testenv"
	"kairos/trace"
)

// mpiTrace writes a 4-rank trace exercising communicator tracking,
// wildcard receives, every completion form and the v-collectives, and
// returns its events and metadata.
//
// Comm_split(color = rank%2, key = -rank) makes {2, 0} and {3, 1} (key
// order); in each, comm rank 0 sends to comm rank 1, which receives from
// MPI_ANY_SOURCE with a stored status; then a Bcast rooted at comm rank
// 1. A Comm_create from Group_incl([3, 1, 2, 0]) of the world group and
// a Comm_dup follow.
func mpiTrace(t *testing.T) (*Trace, [][]trace.Event) {
	ws := writers(4)
	for r, w := range ws {
		w.call(lInit, 1, []string{"prog"})
		w.call(lCommSplit, commWorld, r%2, -r, 5)
		crank := map[int]int{2: 0, 0: 1, 3: 0, 1: 1}[r]
		if crank == 0 {
			w.call(lSend, 2, 14, 1, 7, 5)
		} else {
			w.call(lRecv, 2, 14, -1, 7, 5, []status{{bytes: 16, source: 0, tag: 7}})
		}
		w.call(lBcast, 3, 9, 1, 5)
		w.call(lIsend, 1, 5, (r+1)%4, 3, commWorld, 10)
		w.call(lIrecv, 1, 5, (r+3)%4, 3, commWorld, 11)
		if r == 0 { // a Testany that fails, then one that completes the receive
			w.call(lTestany, 2, []int32{10, 11}, -1, 0, []status{{}})
			w.call(lTestany, 2, []int32{10, 11}, 1, 1, []status{{bytes: 1, source: 3, tag: 3}})
		} else {
			w.call(lWaitany, 2, []int32{10, 11}, 1, []status{{bytes: 1, source: int32((r + 3) % 4), tag: 3}})
		}
		w.call(lWaitsome, 2, []int32{10, 1}, 1, []int32{0}, []status{{}})
		w.call(lCommGroup, commWorld, 7)
		w.call(lGroupIncl, 7, 4, []int32{3, 1, 2, 0}, 8)
		w.call(lCommCreate, commWorld, 8, 9)
		w.call(lCommDup, 9, 10)
		w.call(lCommFree, 5)
		var rc, dsp any
		if r == 0 {
			rc, dsp = []int32{1, 2, 3, 4}, []int32{0, 1, 3, 6}
		}
		// Gatherv on the dup of {3, 1, 2, 0}, root comm rank 3 = world 0.
		crank = map[int]int{3: 0, 1: 1, 2: 2, 0: 3}[r]
		w.call(lGatherv, crank, 4, crank+1, 5, 3, 10, rc, dsp, 5)
		w.call(lAlltoallv, 4, []int32{1, 1, 1, 1}, []int32{0, 1, 2, 3}, 14, []int32{2, 2, 2, 2}, []int32{0, 2, 4, 6}, 9, commWorld)
		w.call(lTestall, 1, []int32{1}, 0, nil)
		w.call(lFinalize)
	}
	src, tr := load(t, ws)
	evs := make([][]trace.Event, tr.NumRanks())
	for r := range evs {
		rd := tr.Ranks[r].Reader()
		for rd.Next() {
			evs[r] = append(evs[r], rd.Event().Clone())
		}
	}
	return src, evs
}

// load opens the trace of the ranks' files and loads it.
func load(t *testing.T, ws []*binWriter) (*Trace, *trace.Trace) {
	t.Helper()
	src, err := Open(writeTrace(t, t.TempDir(), ws))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := trace.Load(src)
	if err != nil {
		t.Fatal(err)
	}
	return src, tr
}

func TestMappingCommunicators(t *testing.T) {
	src, evs := mpiTrace(t)
	want := []trace.Comm{{ID: 1, Members: []int32{2, 0}}, {ID: 2, Members: []int32{3, 1}},
		{ID: 3, Members: []int32{3, 1, 2, 0}}, {ID: 4, Members: []int32{3, 1, 2, 0}}}
	if got := src.Meta().Comms; !reflect.DeepEqual(got, want) {
		t.Fatalf("comms %v, want %v", got, want)
	}
	// Rank 0 is comm rank 1 of {2, 0}: its wildcard receive resolves to
	// world rank 2 through the status; its Bcast root is world rank 0.
	e := evs[0]
	if e[1].Kind != trace.CommSplit || e[1].Comm != 0 || e[1].NewComm != 1 {
		t.Errorf("split: %v new=%d", &e[1], e[1].NewComm)
	}
	if e[2].Kind != trace.Recv || e[2].Partner != 2 || e[2].Comm != 1 || e[2].RecvBytes != 16 || e[2].RecvType != trace.TypeDouble {
		t.Errorf("recv: %v", &e[2])
	}
	if e[3].Kind != trace.Bcast || e[3].Partner != 0 || e[3].SendBytes != 12 || e[3].SendType != trace.TypeInt {
		t.Errorf("bcast: %v", &e[3])
	}
	if s := evs[3][2]; s.Kind != trace.Send || s.Partner != 1 || s.Comm != 2 {
		t.Errorf("rank 3 send: %v", &s)
	}
	if b := evs[3][3]; b.Partner != 1 {
		t.Errorf("rank 3 bcast root %d, want world 1", b.Partner)
	}
	e = e[1:] // rank 0 tests twice where the others wait once
	if c := e[10]; c.Kind != trace.CommCreate || c.NewComm != 3 {
		t.Errorf("create: %v new=%d", &c, c.NewComm)
	}
	if c := e[11]; c.Kind != trace.CommDup || c.Comm != 3 || c.NewComm != 4 {
		t.Errorf("dup: %v", &c)
	}
	if c := e[12]; c.Kind != trace.CommFree || c.Comm != 1 {
		t.Errorf("free: %v", &c)
	}
}

func TestMappingCompletionsAndCollectives(t *testing.T) {
	_, evs := mpiTrace(t)
	e := evs[0]
	if e[6].Kind != trace.Deferred || e[6].Region == 0 {
		t.Errorf("testany that completes nothing: %v", &e[6])
	}
	// Requests are numbered by their starts: the isend's 1, the irecv's 2
	// (DUMPI handles 10 and 11).
	if e[7].Kind != trace.Wait || e[7].Request != 2 {
		t.Errorf("testany that completes: %v", &e[7])
	}
	if w := evs[1][6]; w.Kind != trace.Wait || w.Request != 2 {
		t.Errorf("waitany: %v", &w)
	}
	e = e[1:] // rank 0 as the others from here
	if e[7].Kind != trace.Wait || e[7].Request != 1 {
		t.Errorf("waitsome: %v", &e[7])
	}
	if e[15].Kind != trace.Deferred {
		t.Errorf("testall that completes nothing: %v", &e[15])
	}
	g := e[13] // rank 0 is the Gatherv root
	if g.Kind != trace.Gatherv || g.Partner != 0 || g.Comm != 4 || g.SendBytes != 4 ||
		!reflect.DeepEqual(g.RecvCounts, []int64{1, 2, 3, 4}) || g.RecvBytes != 10 {
		t.Errorf("gatherv root: %v %v", &g, g.RecvCounts)
	}
	if g := evs[1][13]; g.RecvCounts != nil || g.SendBytes != 2 || g.Partner != 0 {
		t.Errorf("gatherv non-root: %v %v", &g, g.RecvCounts)
	}
	a := e[14]
	if a.Kind != trace.Alltoallv || !reflect.DeepEqual(a.SendCounts, []int64{8, 8, 8, 8}) ||
		!reflect.DeepEqual(a.RecvCounts, []int64{8, 8, 8, 8}) || a.SendBytes != 32 || a.RecvBytes != 32 {
		t.Errorf("alltoallv: %v %v %v", &a, a.SendCounts, a.RecvCounts)
	}
	for r := range evs {
		for i, ev := range evs[r] {
			if !ev.HasTime || ev.Exit < ev.Enter {
				t.Errorf("rank %d event %d: time %v..%v", r, i, ev.Enter, ev.Exit)
			}
		}
	}
}

func TestMappingChecks(t *testing.T) {
	src, _ := mpiTrace(t)
	for _, p := range []check.Protocol{check.None, check.Rendezvous} {
		rep, err := check.Check(src, check.Options{Protocol: p})
		if err != nil {
			t.Fatal(err)
		}
		if !rep.OK() || rep.Warnings != 0 {
			t.Errorf("%s: %v", p, rep.Problems)
		}
	}
}

// TestUnknownCommunicator: calls on a communicator no traced call created
// (created before tracing began, or by a call Kairos does not follow: an
// intercommunicator to a spawned world) are kept as deferred calls (MPI
// time, not computation) named after their function, whose messages are
// not replayed; the trace still checks and replays.
func TestUnknownCommunicator(t *testing.T) {
	ws := writers(2)
	ws[0].call(lSend, 1, 5, 1, 0, 42)
	ws[0].call(lSend, 1, 5, 1, 0, commWorld)
	ws[1].call(lRecv, 1, 5, 0, 0, 42, nil)
	ws[1].call(lRecv, 1, 5, 0, 0, commWorld, nil)
	_, tr := load(t, ws)
	for r, name := range []string{"MPI_Send", "MPI_Recv"} {
		evs := rankEvents(tr, r)
		if len(evs) != 2 || evs[0].Kind != trace.Deferred || tr.Meta().RegionName(evs[0].Region) != name+" (unknown communicator)" || !evs[1].Kind.IsPointToPoint() {
			t.Errorf("rank %d: %v (%s)", r, evs, tr.Meta().RegionName(evs[0].Region))
		}
	}
	if rep, err := check.Check(tr, check.Options{}); err != nil || !rep.OK() {
		t.Errorf("check: %v %v", err, rep)
	}
}

// TestRankFileAlone: a rank's file of a 4-rank run, alone (no .meta, no
// other file), is that rank of a 4-rank MPI_COMM_WORLD (its size from the
// file's MPI_Comm_size): its partners keep their ranks, the other ranks
// have no events, and the trace says which ranks have no file. A
// Comm_dup of MPI_COMM_WORLD is known without the other ranks, the
// communicator of a Comm_split is not: the calls on it are local calls
// on an unknown communicator.
func TestRankFileAlone(t *testing.T) {
	ws := writers(4)
	for r, w := range ws {
		w.call(lInit, 1, []string{"prog"})
		w.call(lCommSize, commWorld, 4)
		w.call(lCommDup, commWorld, 4)
		w.call(lCommSplit, commWorld, r%2, r, 5)
		w.call(lSend, 1, 5, (r+1)%4, 0, commWorld)
		w.call(lRecv, 1, 5, (r+3)%4, 0, commWorld, nil)
		w.call(lAllreduce, 1, 5, 5, 4)
		w.call(lBarrier, 5)
		w.call(lFinalize)
	}
	dir := t.TempDir()
	writeTrace(t, dir, ws)
	alone := filepath.Join(t.TempDir(), "synth-0002.bin")
	data, err := os.ReadFile(filepath.Join(dir, "synth-0002.bin"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(alone, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{alone, filepath.Dir(alone)} {
		src, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := trace.Load(src)
		if err != nil {
			t.Fatal(err)
		}
		if tr.NumRanks() != 4 || len(rankEvents(tr, 0)) != 0 || !strings.Contains(tr.Meta().Attrs["partial"], "ranks 0-1, 3 of MPI_COMM_WORLD's 4") {
			t.Fatalf("%s: %d ranks, partial %q", path, tr.NumRanks(), tr.Meta().Attrs["partial"])
		}
		var got []string
		for _, e := range rankEvents(tr, 2) {
			got = append(got, e.String()+" "+tr.Meta().RegionName(e.Region))
		}
		want := []string{"init ", "local MPI_Comm_size", "comm_dup ", "comm_split ", "send peer=3 tag=0 send=1 ",
			"recv peer=1 tag=0 recv=1 ", "allreduce comm=1 send=1 ", "deferred MPI_Barrier (unknown communicator)", "finalize "}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: rank 2:\n%s\nwant\n%s", path, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if m := tr.Meta().Members(1, 4); len(m) != 4 {
			t.Errorf("%s: the dup's members %v", path, m)
		}
	}
	// With its .meta and the other files missing, the same.
	for r := range 4 {
		if r != 2 {
			os.Remove(filepath.Join(dir, fmt.Sprintf("synth-%04d.bin", r)))
		}
	}
	src, err := Open(filepath.Join(dir, "synth.meta"))
	if err != nil || src.NumRanks() != 4 || src.Meta().Attrs["partial"] == "" {
		t.Fatalf("with the .meta: %v", err)
	}
}

// TestMismatchedCreation: ranks that disagree on communicator creation
// fail the pass with a located error.
func TestMismatchedCreation(t *testing.T) {
	ws := writers(2)
	ws[0].call(lCommDup, commWorld, 4)
	ws[1].call(lCommSplit, commWorld, 0, 0, 4)
	_, err := Open(writeTrace(t, t.TempDir(), ws))
	if err == nil || !strings.Contains(err.Error(), "byte 16") || !strings.Contains(err.Error(), "differ across ranks") {
		t.Fatalf("got %v", err)
	}
}

// TestEveryLabelMaps writes one record of every label (integers 0,
// handles MPI_COMM_WORLD, one-element arrays, one status) into a one-rank
// trace: each must decode and map to exactly one event, without error.
func TestEveryLabelMaps(t *testing.T) {
	w := newBinWriter()
	n := 0
	for label, p := range programs() {
		if !p.known {
			continue
		}
		args := make([]any, len(p.ops))
		for i, o := range p.ops {
			switch o.code {
			case opI32, opU8, opI64, opArgc:
				args[i] = 0
			case opU16:
				args[i] = commWorld
			case opI32s, opU8s, opI32sOld:
				args[i] = []int32{0}
			case opU16s:
				args[i] = []int32{commWorld}
			case opI32ss:
				args[i] = []int32{0, 0, 1}
			case opStr:
				args[i] = "x"
			case opStrs, opArgv:
				args[i] = []string{}
			case opStrss:
				args[i] = [][]string{{"a"}}
			case opStatus:
				args[i] = []status{{source: 0}}
			}
		}
		w.call(label, args...)
		if label != labelFunctionEnter && label != labelFunctionExit {
			n++
		}
	}
	rd := openRank0(t, []*binWriter{w})
	got := 0
	for rd.Next() {
		got++
		if !rd.Event().Kind.Valid() {
			t.Errorf("%s: invalid kind", rd.(*Reader).Position())
		}
	}
	if rd.Err() != nil || got != n {
		t.Fatalf("%d events of %d records: %v", got, n, rd.Err())
	}
}

// TestOldVersions reads a file as DUMPI 0.6.1 wrote it: a 7-word index
// without datatype sizes, Init's argc twice, statuses without tags,
// Type_struct's and Cart_get's single-integer fields. Built-in datatypes
// then take SimGrid's sizes (3 MPI_INT = 12 bytes).
func TestOldVersions(t *testing.T) {
	w := newBinWriter()
	w.version = [3]byte{0, 6, 1}
	w.call(lInit, 2, []string{"prog", "-x"})
	w.call(lTypeStruct, 2, []int32{1, 1}, []int32{0}, []int32{9, 14}, 28)
	w.call(105, 2, commWorld, 2, []int32{1, 1}, []int32{0, 0}, []int32{0}) // Cart_get
	w.call(lRecv, 3, 9, -1, 5, commWorld, []status{{bytes: 0, source: 0}})
	w.call(lFinalize)
	src, err := Open(writeTrace(t, t.TempDir(), []*binWriter{w}))
	if err != nil {
		t.Fatal(err)
	}
	if v := src.Meta().Attrs["dumpi.version"]; v != "0.6.1" || len(src.DatatypeSizes(0)) != 0 {
		t.Fatalf("version %s, %d sizes", v, len(src.DatatypeSizes(0)))
	}
	tr, err := trace.Load(src)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	rd := tr.Ranks[0].Reader()
	for rd.Next() {
		kinds = append(kinds, rd.Event().String())
	}
	want := []string{"init", "local", "local", "recv peer=0 tag=5 recv=12", "finalize"}
	if !reflect.DeepEqual(kinds, want) {
		t.Errorf("events %q, want %q", kinds, want)
	}
}

// TestMerged reads the testbgp sample as one stream: every event once,
// in enter-time order (ties by rank), each rank in program order.
func TestMerged(t *testing.T) {
	src, err := Open(testenv.Shared(t, "traces/dumpi/sst-macro-testbgp"))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := trace.Load(src)
	if err != nil {
		t.Fatal(err)
	}
	m, err := src.Merged()
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	next := make([]int, src.NumRanks())
	readers := make([]*trace.RankReader, src.NumRanks())
	for r := range readers {
		readers[r] = tr.Ranks[r].Reader()
	}
	n, lastT, lastR := 0, trace.Time(-1), -1
	for m.Next() {
		r, e := m.Rank(), m.Event()
		if e.Enter < lastT || e.Enter == lastT && r < lastR {
			t.Fatalf("event %d (rank %d at %v) after rank %d at %v", n, r, e.Enter, lastR, lastT)
		}
		lastT, lastR = e.Enter, r
		if !readers[r].Next() || !reflect.DeepEqual(readers[r].Event().Clone(), e.Clone()) {
			t.Fatalf("rank %d event %d differs from the rank's own stream", r, next[r])
		}
		next[r]++
		n++
	}
	if m.Err() != nil || n != tr.NumEvents() {
		t.Fatalf("%d of %d events: %v", n, tr.NumEvents(), m.Err())
	}
}

// TestWildcardIrecv: an MPI_ANY_SOURCE Irecv takes its source from the
// status its Waitall stores; without a stored status it stays AnySource.
func TestWildcardIrecv(t *testing.T) {
	ws := writers(3)
	ws[1].call(lSend, 1, 9, 0, 4, commWorld)
	ws[2].call(lSend, 1, 9, 0, 4, commWorld)
	w := ws[0]
	w.call(lIrecv, 1, 9, -1, 4, commWorld, 5)
	w.call(lIrecv, 1, 9, -1, 4, commWorld, 6)
	w.call(lBarrier, commSelf)
	w.call(lWaitall, 2, []int32{6, 5}, []status{{bytes: 4, source: 1, tag: 4}, {bytes: 4, source: 2, tag: 4}})
	w.call(lIrecv, 1, 9, -1, 4, commWorld, 7)
	w.call(lWait, 7, nil)
	rd := openRank0(t, ws)
	var got []int32
	for rd.Next() {
		if rd.Event().Kind == trace.Irecv {
			got = append(got, rd.Event().Partner)
		}
	}
	if want := []int32{2, 1, trace.AnySource}; rd.Err() != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("sources %v, want %v (%v)", got, want, rd.Err())
	}
}

// rankEvents returns rank r's events of a loaded trace.
func rankEvents(tr *trace.Trace, r int) []trace.Event {
	var evs []trace.Event
	rd := tr.Ranks[r].Reader()
	for rd.Next() {
		evs = append(evs, rd.Event().Clone())
	}
	return evs
}

// TestSendrecvTags maps an MPI_Sendrecv whose send and receive tags
// differ (FFTW's transposes: a tag for each pair of ranks) to an Isend
// and an Irecv of their own tags and their Waits, and one of equal tags
// to a SendRecv; the trace checks, where it deadlocked with the send's tag
// on both halves.
func TestSendrecvTags(t *testing.T) {
	ws := writers(4)
	for r, w := range ws {
		to, from := (r+1)%4, (r+3)%4
		w.call(lInit, 1, []string{"prog"})
		w.call(lSendrecv, 4, 14, to, 4*r+to, 4, 14, from, 4*from+r, commWorld, []status{{bytes: 32, source: int32(from), tag: int32(4*from + r)}})
		w.call(lSendrecv, 1, 14, to, 7, 1, 14, from, 7, commWorld, []status{{bytes: 8, source: int32(from), tag: 7}})
		w.call(lFinalize)
	}
	src, tr := load(t, ws)
	for r := range 4 {
		var got []string
		for _, e := range rankEvents(tr, r) {
			got = append(got, fmt.Sprintf("%s %d %d", e.Kind, e.Partner, e.Tag))
		}
		to, from := (r+1)%4, (r+3)%4
		want := []string{"init -1 0", fmt.Sprintf("isend %d %d", to, 4*r+to), fmt.Sprintf("irecv %d %d", from, 4*from+r),
			"wait -1 0", "wait -1 0", fmt.Sprintf("sendRecv %d 7", to), "finalize -1 0"}
		if !slices.Equal(got, want) {
			t.Errorf("rank %d: %q, want %q", r, got, want)
		}
	}
	rep, err := check.Check(src, check.Options{Protocol: check.SimGrid})
	if err != nil || !rep.OK() {
		t.Errorf("check: %v %v", err, rep.Problems)
	}
}

// TestWaitsomeWaits: a Waitsome that completes two requests is a wait of
// each, as the tracer and the OTF2 reader write it, the first at the
// call's entry, the second spanning the call.
func TestWaitsomeWaits(t *testing.T) {
	ws := writers(2)
	ws[0].call(lIsend, 1, 5, 1, 3, commWorld, 10)
	ws[0].call(lIsend, 1, 5, 1, 4, commWorld, 11)
	ws[0].call(lWaitsome, 2, []int32{10, 11}, 2, []int32{0, 1}, []status{{}, {}})
	ws[1].call(lRecv, 1, 5, 0, 3, commWorld, []status{{bytes: 4, source: 0, tag: 3}})
	ws[1].call(lRecv, 1, 5, 0, 4, commWorld, []status{{bytes: 4, source: 0, tag: 4}})
	_, tr := load(t, ws)
	var evs []trace.Event
	rd := tr.Ranks[0].Reader()
	for rd.Next() {
		evs = append(evs, rd.Event().Clone())
	}
	if len(evs) != 4 || evs[2].Kind != trace.Wait || evs[3].Kind != trace.Wait || evs[2].Request != 1 || evs[3].Request != 2 {
		t.Fatalf("rank 0: %v, want two isends and a wait of each", evs)
	}
	if w1, w2 := evs[2], evs[3]; w1.Exit != w1.Enter || w2.Enter != w1.Enter || w2.Exit <= w2.Enter {
		t.Errorf("the waits at %v..%v and %v..%v: want the first at the call's entry, the second spanning it", w1.Enter, w1.Exit, w2.Enter, w2.Exit)
	}
}

// TestRequestHandlesReused: a DUMPI request handle names the request
// started under it, not a request for ever. Open MPI gives sends that
// complete at once one shared request, so that three outstanding empty
// isends have handle 4 and their waitall names it three times (HPCC,
// MEEP); a request a successful test completed (a wait, as the tracer
// writes it; a failed test is a deferred call) frees its handle for the
// next isend. Each start is a request of its own, each naming of its
// handle completes the oldest, and the trace checks.
func TestRequestHandlesReused(t *testing.T) {
	ws := writers(4)
	for p := 1; p < 4; p++ {
		ws[0].call(lIsend, 0, 9, p, 7, commWorld, 4)
		ws[p].call(lRecv, 0, 9, 0, 7, commWorld, nil)
	}
	ws[0].call(lWaitall, 3, []int32{4, 4, 4}, nil)
	for k := range 3 {
		ws[0].call(lIsend, 2, 9, 1, 8+k, commWorld, 5)
		ws[0].call(lTest, 5, 0, nil)
		ws[0].call(lTest, 5, 1, nil)
		ws[1].call(lRecv, 2, 9, 0, 8+k, commWorld, nil)
	}
	src, tr := load(t, ws)
	var reqs, waited []uint64
	var failed int
	rd := tr.Ranks[0].Reader()
	for rd.Next() {
		e := rd.Event()
		switch e.Kind {
		case trace.Waitall:
			if !slices.Equal(e.Requests, []uint64{1, 2, 3}) {
				t.Errorf("waitall of %v, want the three isends' 1, 2, 3", e.Requests)
			}
		case trace.Isend:
			reqs = append(reqs, e.Request)
		case trace.Wait:
			waited = append(waited, e.Request)
		case trace.Deferred:
			failed++
		case trace.Test:
			t.Errorf("a test event: %v", e)
		}
	}
	if !slices.Equal(reqs, []uint64{1, 2, 3, 4, 5, 6}) || !slices.Equal(waited, []uint64{4, 5, 6}) || failed != 3 {
		t.Errorf("isends' requests %v, waits of %v, %d failed tests; want 1 to 6, 4 to 6 and 3", reqs, waited, failed)
	}
	if rep, err := check.Check(src, check.Options{}); err != nil || !rep.OK() {
		t.Errorf("check: %v %v", err, rep.Problems)
	}
}

// TestSendrecvProcNull: the ends of a non-periodic shift send or receive
// on MPI_PROC_NULL (Open MPI's -2): their sendrecv is the other half
// alone, as Kairos' tracer writes it, and the trace checks (it was a
// local call, and the message to the last rank was never received).
func TestSendrecvProcNull(t *testing.T) {
	const null = -2
	ws := writers(3)
	for r, w := range ws {
		to, from := r+1, r-1
		if to == 3 {
			to = null
		}
		if from < 0 {
			from = null
		}
		w.call(lSendrecv, 2, 14, to, 5, 2, 14, from, 5, commWorld, nil)
	}
	src, tr := load(t, ws)
	want := []string{"send to 1", "sendRecv to 2", "recv from 1"}
	for r := range ws {
		rd := tr.Ranks[r].Reader()
		if !rd.Next() {
			t.Fatalf("rank %d: no event", r)
		}
		e := rd.Event()
		if got := fmt.Sprintf("%v to %d", e.Kind, e.Partner); e.Kind == trace.Recv {
			got = fmt.Sprintf("%v from %d", e.Kind, e.Partner)
			if got != want[r] || e.RecvBytes != 16 || e.Tag != 5 {
				t.Errorf("rank %d: %v, want %s of 16 bytes", r, e, want[r])
			}
		} else if got != want[r] || e.SendBytes != 16 {
			t.Errorf("rank %d: %v, want %s of 16 bytes", r, e, want[r])
		}
	}
	if rep, err := check.Check(src, check.Options{}); err != nil || !rep.OK() {
		t.Errorf("check: %v %v", err, rep.Problems)
	}
}

// TestCancelledWildcardReceive: a receive from any source that the
// program cancels (HPCC cancels its pending ones and waits for them,
// with a status that says so or with MPI_STATUS_IGNORE) receives nothing:
// it is a deferred call and its wait completes nothing, so that it does
// not take, in a replay, the message a later receive gets (HPCC's
// replays deadlocked).
func TestCancelledWildcardReceive(t *testing.T) {
	for _, st := range [][]status{{{cancelled: 1, source: -1}}, nil} {
		ws := writers(2)
		ws[0].call(lIrecv, 1, 9, -1, -1, commWorld, 7)
		ws[0].call(lCancel, 7)
		ws[0].call(lWait, 7, st)
		ws[0].call(lRecv, 1, 9, 1, 3, commWorld, nil)
		ws[1].call(lSend, 1, 9, 0, 3, commWorld)
		src, tr := load(t, ws)
		var kinds []trace.Kind
		rd := tr.Ranks[0].Reader()
		for rd.Next() {
			kinds = append(kinds, rd.Event().Kind)
		}
		if want := []trace.Kind{trace.Deferred, trace.Local, trace.Deferred, trace.Recv}; !slices.Equal(kinds, want) {
			t.Errorf("status %v: rank 0's events %v, want %v", st, kinds, want)
		}
		if rep, err := check.Check(src, check.Options{}); err != nil || !rep.OK() {
			t.Errorf("status %v: check: %v %v", st, err, rep.Problems)
		}
	}
}

// TestDupOfSelf: a communicator made from MPI_COMM_SELF (PETSc duplicates
// it) is the rank alone, as MPI_COMM_SELF is: their collectives are
// collectives of one member, on a communicator of the rank alone, as the
// OTF2 reader has them (they were local calls, and PETSc's DUMPI archive
// had 114 collectives fewer than its OTF2 one); the trace has no unknown
// communicator (728 of PETSc's calls were read as on one, with a note
// that said it was created before tracing began).
func TestDupOfSelf(t *testing.T) {
	ws := writers(2)
	for _, w := range ws {
		w.call(lCommDup, commSelf, 5)
		w.call(lAllreduce, 1, 14, 3, 5)
		w.call(lBcast, 1, 14, 0, commSelf)
		w.call(lBarrier, commWorld)
	}
	src, tr := load(t, ws)
	if u := src.unknownComms(); u != "" {
		t.Errorf("unknown communicators: %s", u)
	}
	for r := range int32(2) {
		var got []string
		var comms []uint32
		rd := tr.Ranks[r].Reader()
		for rd.Next() {
			e := rd.Event()
			got = append(got, fmt.Sprintf("%s %s %d", e.Kind, src.Meta().RegionName(e.Region), e.Partner))
			comms = append(comms, e.Comm)
		}
		want := []string{"local MPI_Comm_dup -1", "allreduce  -1", fmt.Sprintf("bcast  %d", r), "barrier  -1"}
		if !slices.Equal(got, want) {
			t.Errorf("rank %d: %q, want %q", r, got, want)
			continue
		}
		m := src.Meta().Members(comms[1], 2)
		if comms[1] != comms[2] || !slices.Equal(m, []int32{r}) {
			t.Errorf("rank %d: the collectives on communicators %d and %d (members %v), want both on its own", r, comms[1], comms[2], m)
		}
	}
}

// TestDatatypeIdReused: a derived datatype freed and made again under the
// same id (BLACS and ScaLAPACK do, around every call) has the size of
// the type the id names at each call, followed from its constructor, not
// the one size of the file's table (Quantum ESPRESSO's broadcasts were
// read as 96 bytes on one rank, 144 on another).
func TestDatatypeIdReused(t *testing.T) {
	const vec = 40 // the id every type gets; 11 is MPI_DOUBLE here
	ws := writers(2)
	ws[0].sizes = append(ws[0].sizes, make([]int32, vec+1-len(ws[0].sizes))...)
	ws[0].sizes[vec] = 32 // the table's one size for id 40
	for k := 1; k <= 3; k++ {
		for r, w := range ws {
			w.call(lTypeVector, 1, 4*k, 4*k, 11, vec)
			w.call(lBcast, 1, vec, 0, commWorld)
			if r == 0 {
				w.call(lSend, 1, vec, 1, k, commWorld)
			} else {
				w.call(lRecv, 4*k, 11, 0, k, commWorld, nil)
			}
		}
	}
	src, tr := load(t, ws)
	var got []int64
	rd := tr.Ranks[0].Reader()
	for rd.Next() {
		if e := rd.Event(); e.Kind == trace.Bcast || e.Kind == trace.Send {
			got = append(got, e.SendBytes)
		}
	}
	if want := []int64{32, 32, 64, 64, 96, 96}; !slices.Equal(got, want) {
		t.Errorf("rank 0's bcast and send bytes %v, want %v", got, want)
	}
	if rep, err := check.Check(src, check.Options{}); err != nil || !rep.OK() {
		t.Errorf("check: %v %v", err, rep.Problems)
	}
}

// TestWaitOnUnstartedRequest: a completion of a request the trace never
// started (an MPI_Ibcast's, which sst-dumpi does not record) completes
// nothing: a deferred call, MPI time that a replay does not take as
// computation (a local call was: classify called a rank late into an
// MPI_Ibarrier computation-bound), and the trace checks ("wait on request
// 2, which is not outstanding" before). The trace's warning counts such
// waits, once read; a wait on MPI_REQUEST_NULL is not one. Another counts
// the one-sided calls on windows no call created (MPI-3's, whose
// creation sst-dumpi does not record).
func TestWaitOnUnstartedRequest(t *testing.T) {
	ws := writers(2)
	for r, w := range ws {
		w.call(lWait, 9, nil)
		w.call(lWait, 1, nil) // MPI_REQUEST_NULL
		w.call(lBarrier, commWorld)
		if r == 1 { // on a window MPI_Win_allocate made, which sst-dumpi does not record
			const typeByte = 2
			w.call(lAccumulate, 32, typeByte, 0, 0, 32, typeByte, 1, 7)
			w.call(lWinFree, 7)
		}
	}
	src, tr := load(t, ws)
	if w := src.Warnings(); len(w) != 2 || !strings.HasPrefix(w[0], "2 waits and tests on 2 ranks completed requests that no call") ||
		!strings.HasPrefix(w[1], "2 one-sided calls on 1 ranks are on windows that no call of the trace created") {
		t.Errorf("warnings %q, want 2 waits on 2 ranks, and 2 one-sided calls on 1", w)
	}
	rd := tr.Ranks[0].Reader()
	if !rd.Next() || rd.Event().Kind != trace.Deferred {
		t.Errorf("the wait: %v, want a deferred call", rd.Event())
	}
	if rep, err := check.Check(src, check.Options{}); err != nil || !rep.OK() {
		t.Errorf("check: %v %v", err, rep.Problems)
	}
}

// TestInPlaceCollectives: DUMPI records no buffer, so MPI_IN_PLACE shows
// as a side of no bytes (MPI_IN_PLACE, 0, MPI_DATATYPE_NULL) where the
// other has some; that side moves the member's own block. An in-place
// allgather was replayed sending nothing, and an in-place gather's root
// failed check (it moved 0 of 12 bytes where the others moved 12).
func TestInPlaceCollectives(t *testing.T) {
	const dtNull, dtInt = 1, 9
	ws := writers(4)
	for r, w := range ws {
		w.call(lInit, 1, []string{"prog"})
		w.call(lAllgather, 0, dtNull, 4, dtInt, commWorld)
		w.call(lAlltoall, 0, dtNull, 2, dtInt, commWorld)
		if r == 2 {
			w.call(lGather, 2, 0, dtNull, 2, commWorld, 3, dtInt)
			w.call(lScatter, 2, 0, dtNull, 2, commWorld, 5, dtInt)
		} else {
			w.call(lGather, r, 3, dtInt, 2, commWorld, nil, nil)
			w.call(lScatter, r, 5, dtInt, 2, commWorld, nil, nil)
		}
		w.call(lAllgatherv, 4, 0, dtNull, []int32{1, 2, 3, 4}, []int32{0, 1, 3, 6}, dtInt, commWorld)
		w.call(lFinalize)
	}
	src, tr := load(t, ws)
	for r := range tr.Ranks {
		var got []string
		rd := tr.Ranks[r].Reader()
		for rd.Next() {
			got = append(got, fmt.Sprintf("%s %d/%d", rd.Event().Kind, rd.Event().SendBytes, rd.Event().RecvBytes))
		}
		want := []string{"init 0/0", "allgather 16/16", "alltoall 8/8", "gather 12/12", "scatter 20/20",
			fmt.Sprintf("allgatherv %d/40", 4*(r+1)), "finalize 0/0"}
		if !slices.Equal(got, want) {
			t.Errorf("rank %d: %q, want %q", r, got, want)
		}
	}
	rep, err := check.Check(src, check.Options{})
	if err != nil || !rep.OK() {
		t.Errorf("check: %v %+v", err, rep.Problems)
	}
}

// TestIgnoredCalls: the calls sst-dumpi's configuration left out ("MPI_Isend
// disable"), which its footers count, are said in a note where they
// communicate, so that the receives left without a send are explained
// (check and every replay stopped at them without a word); left-out local
// calls (MPI_Wtime) change nothing and are not said.
func TestIgnoredCalls(t *testing.T) {
	note := func(ignore func(r int, w *binWriter)) string {
		ws := writers(2)
		for r, w := range ws {
			w.call(lInit, 1, []string{"prog"})
			w.call(lFinalize)
			ignore(r, w)
		}
		src, _ := load(t, ws)
		return src.Meta().Attrs[AttrIgnored]
	}
	got := note(func(r int, w *binWriter) {
		w.ignored[lIsend], w.ignored[lBarrier], w.ignored[122] = 40, int32(r), 1000 // 122: MPI_Wtime
	})
	if want := "over all ranks: MPI_Isend 80, MPI_Barrier 1; their messages"; !strings.Contains(got, want) || strings.Contains(got, "MPI_Wtime") {
		t.Errorf("note %q, want it to hold %q and not MPI_Wtime", got, want)
	}
	if got := note(func(_ int, w *binWriter) { w.ignored[122] = 1000 }); got != "" { // 122: MPI_Wtime
		t.Errorf("local calls left out: note %q", got)
	}
}

// TestAnyTagFromStatus: an MPI_ANY_TAG receive takes the tag its stored
// status names. Rank 0 sends tag 4, whose receive the trace lacks (an
// MPI_Mrecv, which sst-dumpi does not record), then tag 3: the any-tag
// receive matched the tag-4 message and left the tag-3 one unreceived.
func TestAnyTagFromStatus(t *testing.T) {
	ws := writers(2)
	for r, w := range ws {
		w.call(lInit, 1, []string{"prog"})
		if r == 0 {
			w.call(lSend, 2, 14, 1, 4, commWorld)
			w.call(lSend, 1, 14, 1, 3, commWorld)
		} else {
			w.call(lRecv, 1, 14, 0, -1, commWorld, []status{{bytes: 8, source: 0, tag: 3}})
		}
		w.call(lFinalize)
	}
	src, tr := load(t, ws)
	rd := tr.Ranks[1].Reader()
	for rd.Next() {
		if e := rd.Event(); e.Kind == trace.Recv && e.Tag != 3 {
			t.Errorf("the any-tag receive has tag %d, want its status's 3", e.Tag)
		}
	}
	rep, err := check.Check(src, check.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Problems) != 1 || !strings.Contains(rep.Problems[0].String(), "send to 1 (tag 4") {
		t.Errorf("problems %v, want the tag-4 send alone unreceived", rep.Problems)
	}
}

// TestThreadsNoted: a rank whose records are of several threads
// (MPI_THREAD_MULTIPLE: they interleave in its file) is said in a note;
// a trace of one thread a rank is not.
func TestThreadsNoted(t *testing.T) {
	for _, threads := range []uint16{1, 3} {
		ws := writers(2)
		for _, w := range ws {
			w.call(lInit, 1, []string{"prog"})
			for th := range threads {
				w.thread = th
				w.call(lBarrier, commWorld)
			}
			w.thread = 0
			w.call(lFinalize)
		}
		src, _ := load(t, ws)
		got := src.Meta().Attrs[AttrThreads]
		if want := threads > 1; (got != "") != want || want && !strings.HasPrefix(got, "2 ranks recorded calls of more than one thread") {
			t.Errorf("%d threads a rank: note %q", threads, got)
		}
	}
}

// TestCartSub: the communicators MPI_Cart_sub makes of a 2x3 grid (its
// rows, then its columns) are known (they were unknown communicators:
// their calls read as deferred, their messages not replayed): a row's
// broadcast is rooted at its first rank, a column's message goes to the
// rank of the other row, and the trace checks.
func TestCartSub(t *testing.T) {
	const dtInt = 9
	ws := writers(6)
	for r, w := range ws {
		w.call(lInit, 1, []string{"prog"})
		w.call(lCartCreate, commWorld, 2, []int32{2, 3}, []int32{0, 0}, 0, 5)
		w.call(lCartSub, 2, 5, []int32{0, 1}, 6)
		w.call(lCartSub, 2, 5, []int32{1, 0}, 7)
		w.call(lBcast, 1, dtInt, 0, 6)
		if r < 3 {
			w.call(lSend, 1, dtInt, 1, 5, 7)
		} else {
			w.call(lRecv, 1, dtInt, 0, 5, 7, nil)
		}
		w.call(lFinalize)
	}
	src, tr := load(t, ws)
	if u := src.Meta().Attrs["unknown-comms"]; u != "" {
		t.Errorf("unknown communicators: %s", u)
	}
	for r := range tr.Ranks {
		var got []string
		rd := tr.Ranks[r].Reader()
		for rd.Next() {
			if e := rd.Event(); e.Kind == trace.Bcast || e.Kind == trace.Send || e.Kind == trace.Recv {
				got = append(got, fmt.Sprintf("%s %d", e.Kind, e.Partner))
			}
		}
		want := []string{fmt.Sprintf("bcast %d", r/3*3), fmt.Sprintf("send %d", r+3)}
		if r >= 3 {
			want[1] = fmt.Sprintf("recv %d", r-3)
		}
		if !slices.Equal(got, want) {
			t.Errorf("rank %d: %q, want %q", r, got, want)
		}
	}
	rep, err := check.Check(src, check.Options{})
	if err != nil || !rep.OK() {
		t.Errorf("check: %v %v", err, rep.Problems)
	}
}

// TestCPUTimes: an archive recorded with "timestamp cpu" has CPU times
// and no wall times; they are read as each rank's times, with a note
// (they were dropped, and the trace read as untimed). Where a record has
// both, its wall times are read.
func TestCPUTimes(t *testing.T) {
	for _, c := range []struct {
		name      string
		wall, cpu bool
		scale     trace.Time // the times read, against the wall clock's
	}{
		{"cpu", false, true, 2},
		{"wall and cpu", true, true, 1},
		{"wall", true, false, 1},
		{"none", false, false, 0},
	} {
		ws := writers(2)
		for _, w := range ws {
			w.noWall, w.cpu = !c.wall, c.cpu
			w.call(lInit, 1, []string{"prog"})
			w.call(lBarrier, commWorld)
			w.call(lFinalize)
		}
		src, tr := load(t, ws)
		note := src.Meta().Attrs[AttrCPUClock]
		if want := c.cpu && !c.wall; (note != "") != want || want && !strings.HasPrefix(note, "2 ranks recorded CPU times") {
			t.Errorf("%s: note %q", c.name, note)
		}
		rd := tr.Ranks[1].Reader()
		for range 3 {
			rd.Next()
		}
		e := rd.Event() // the finalize: 4 µs of wall time after the init's enter
		if e.HasTime != (c.scale > 0) || c.scale > 0 && e.Enter != 4e6/c.scale {
			t.Errorf("%s: finalize timed %v, at %d ps; want %v, at %d", c.name, e.HasTime, e.Enter, c.scale > 0, 4e6/max(c.scale, 1))
		}
	}
}
