package ti

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"kairos/format"
	"kairos/internal/testenv"
	"kairos/trace"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// allActions is a shared trace of 4 ranks using every action SimGrid 3.32
// replays, each in its general form.
const allActions = `# every action
0 init 1
0 location ring.c 12
0 compute 1234.5
0 sleep 0.5
0 send 1 3 10
0 isend 1 4 10 1
0 irecv 3 4 -1
0 test 3 0 4
0 wait 3 0 4
0 wait 2 0 99
0 irecv -333 -444 2
0 wait -555 0 -444
0 waitall 2
0 sendRecv 1 1 2 3 6 1
0 barrier
0 bcast 5 2
0 bcast 5 0 3
0 reduce 5 1e9 1 4
0 allreduce 7 2.5
0 scan 3 1
0 exscan 3 1 2
0 alltoall 8 9 1 2
0 gather 1 2 3
0 scatter 1 2 0 6
0 allgather 1 2
0 alltoallv 100 1 2 3 4 100 4 3 2 1
0 alltoallv 100 1 2 3 4 100 4 3 2 1 1 0
0 gatherv 1 1 2 3 4 0
0 allgatherv 1 1 2 3 4
0 allgatherv 1 1 2 3 4 1 5
0 allgatherv 1 1 2 3 4 0 1 3 6
0 scatterv 1 2 3 4 5 3 0 0
0 reducescatter 1 2 3 4 1e6 5
0 comm_size 4
0 comm_split
0 comm_dup
0 finalize
1 init 1
1 recv 0 3 10
1 finalize
2 init 1
3 init 1
`

func sharedTrace(t *testing.T, text string) *Trace {
	t.Helper()
	tr, err := Open(testenv.WriteFile(t, "in.ti", text))
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// roundTrip writes src to dir/name, reads it back and checks that the
// events, the default datatype and the regions are identical.
func roundTrip(t *testing.T, src trace.Source, dir, name string) *Trace {
	t.Helper()
	want := loadAll(t, src)
	out := filepath.Join(dir, name)
	st, err := WriteFile(out, src, WriteOptions{Layout: LayoutFor(out)})
	if err != nil {
		t.Fatal(err)
	}
	if st.DroppedTotal() != 0 {
		t.Errorf("%s: %s", name, st.String())
	}
	back, err := Open(out)
	if err != nil {
		t.Fatal(err)
	}
	// A one-rank description has one line, which SimGrid reads as a
	// shared trace.
	if want := LayoutFor(out); back.Layout() != want && src.NumRanks() > 1 {
		t.Errorf("%s: read back as %v", name, back.Layout())
	}
	got := loadAll(t, back)
	if !reflect.DeepEqual(got, want) {
		for r := range want {
			for i := range want[r] {
				if i >= len(got[r]) || !reflect.DeepEqual(got[r][i], want[r][i]) {
					t.Fatalf("%s: rank %d event %d:\n got %+v\nwant %+v", name, r, i, got[r][min(i, len(got[r])-1)], want[r][i])
				}
			}
		}
		t.Fatalf("%s: events differ", name)
	}
	if a, b := back.Meta().DefaultType, src.Meta().DefaultType; a != b {
		t.Errorf("%s: default datatype %d, want %d", name, a, b)
	}
	if a, b := back.Meta().Regions, src.Meta().Regions; !reflect.DeepEqual(a, b) {
		t.Errorf("%s: regions %v, want %v", name, a, b)
	}
	return back
}

// TestRoundTrip reads, writes and reads again, in both layouts and
// compressed.
func TestRoundTrip(t *testing.T) {
	src := sharedTrace(t, allActions)
	dir := t.TempDir()
	for _, name := range []string{"a.ti", "a.ti.gz", "a.ti.zst", "desc", "desc.txt.gz"} {
		roundTrip(t, src, dir, name)
	}
	// Writing again over a per-rank output replaces it.
	roundTrip(t, src, dir, "desc")
}

// TestRoundTripReal round-trips every reference TI trace.
func TestRoundTripReal(t *testing.T) {
	dir := t.TempDir()
	for i, c := range realTraces {
		if c.cwd != "" {
			continue // needs its working directory; its files are read elsewhere
		}
		path := testenv.Shared(t, c.path)
		src, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		roundTrip(t, src, dir, filepath.Base(path)+".ti")
		if i%4 == 0 {
			roundTrip(t, src, dir, filepath.Base(path)+"-split.zst")
		}
	}
}

// TestGolden checks the writer's exact output for every action.
func TestGolden(t *testing.T) {
	src := sharedTrace(t, allActions)
	var buf bytes.Buffer
	var st WriteStats
	if err := WriteShared(&buf, src, &st); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "all-actions.golden.ti")
	if *update {
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("output differs from %s (go test -update to accept):\n%s", golden, buf.String())
	}
}

// TestWriteConversions checks what the writer does with events that do
// not come from TI: kinds TI cannot express, sub-communicators, sizes
// that are not whole elements, a default datatype init cannot select,
// waits by request id, partial waitalls, a rank given its init given its
// finalize.
func TestWriteConversions(t *testing.T) {
	meta := trace.NewMeta()
	meta.DefaultType = trace.TypeInt
	meta.AddRegion("has space.c", 0)
	setView := meta.AddRegion("MPI_File_set_view", 0)
	tr := trace.New(2, meta)
	add := func(r int, k trace.Kind, set func(e *trace.Event)) {
		e := trace.NewEvent(k)
		if set != nil {
			set(&e)
		}
		tr.Ranks[r].Append(&e)
	}
	add(0, trace.Init, nil)
	add(0, trace.Isend, func(e *trace.Event) { e.Partner, e.Tag, e.SendBytes, e.Request = 1, 7, 12, 10 })
	add(0, trace.Irecv, func(e *trace.Event) { e.Partner, e.Tag, e.RecvBytes, e.Request = 1, 8, 6, 11 })
	add(0, trace.Isend, func(e *trace.Event) { e.Partner, e.Tag, e.SendBytes, e.Request = 1, 9, 6, 12 })
	add(0, trace.Waitall, func(e *trace.Event) { e.Requests = []uint64{11, 10} })
	add(0, trace.Wait, func(e *trace.Event) { e.Request = 12 })
	add(0, trace.Wait, func(e *trace.Event) { e.Request = 99 })
	add(0, trace.Probe, func(e *trace.Event) { e.Partner = 1 })
	add(0, trace.CommCreate, nil)
	add(0, trace.Barrier, func(e *trace.Event) { e.Comm = 3 })
	add(0, trace.Location, func(e *trace.Event) { e.Region = 1 })
	add(0, trace.File, func(e *trace.Event) { e.Region = setView })
	add(0, trace.File, func(e *trace.Event) { e.Region = setView })
	add(1, trace.File, nil) // its function unnamed: counted by kind
	add(0, trace.Gatherv, func(e *trace.Event) { e.Partner, e.SendBytes = 1, 8 })
	add(0, trace.Bcast, func(e *trace.Event) { e.Partner, e.SendBytes, e.SendType = 0, 16, trace.TypeDouble })
	add(1, trace.Bcast, func(e *trace.Event) { e.Partner, e.RecvBytes = 0, 8 }) // a non-root's size
	add(1, trace.Alltoallv, func(e *trace.Event) { e.SendCounts = []int64{1, 2, 3} })

	var buf bytes.Buffer
	var st WriteStats
	if err := WriteShared(&buf, tr, &st); err != nil {
		t.Fatal(err)
	}
	want := `0 init
0 isend 1 7 3 1
0 irecv 1 8 6 6
0 isend 1 9 6 6
0 wait 1 0 8
0 wait 0 1 7
0 wait 0 1 9
0 gatherv 2 0 0 1 1 1
0 bcast 2 0 0
1 init
1 bcast 2 0 1
1 finalize
`
	if buf.String() != want || st.Inits != 1 {
		t.Errorf("got (%d inits added)\n%swant (1)\n%s", st.Inits, buf.String(), want)
	}
	wantDropped := map[trace.Kind]int{trace.Wait: 1, trace.Probe: 1, trace.CommCreate: 1, trace.Barrier: 1,
		trace.Location: 1, trace.Alltoallv: 1, trace.File: 1}
	for k, n := range st.Dropped {
		if n != wantDropped[trace.Kind(k)] {
			t.Errorf("dropped %d %v, want %d", n, trace.Kind(k), wantDropped[trace.Kind(k)])
		}
	}
	if len(st.DroppedCalls) != 1 || st.DroppedCalls["MPI_File_set_view"] != 2 {
		t.Errorf("dropped calls %v, want MPI_File_set_view 2", st.DroppedCalls)
	}
	if st.DroppedTotal() != 9 || !strings.Contains(st.String(), "9 events") || !strings.Contains(st.String(), "MPI_File_set_view 2") {
		t.Errorf("stats %q", st.String())
	}
}

// TestRegistered checks the format registry entry: detection of shared,
// per-rank and compressed traces, and the layout chosen by output name.
func TestRegistered(t *testing.T) {
	f, ok := format.ByName("ti")
	if !ok || f.Write == nil {
		t.Fatal("ti is not registered as a writable format")
	}
	src := sharedTrace(t, allActions)
	dir := t.TempDir()
	for _, name := range []string{"x.ti", "x.ti.gz", "y", "y.zst"} {
		out := filepath.Join(dir, name)
		if err := f.Write(out, src); err != nil {
			t.Fatal(err)
		}
		got, ff, err := format.Open(out)
		if err != nil || ff.Name != "ti" {
			t.Fatalf("%s: %v, %s", name, err, ff.Name)
		}
		if got.NumRanks() != 4 {
			t.Errorf("%s: %d ranks", name, got.NumRanks())
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "y_files", "rank-3.ti")); err != nil {
		t.Error(err)
	}
	for _, c := range []struct {
		head string
		want bool
	}{
		{"# c\n\n  0 init\n", true},
		{"12 compute 5\n", true},
		{"0 frobnicate\n", false},
		{"1 smpi_replay.txt 32 0\n", false},
		{"p0 send p1 1e6\n", false},
		{"", false},
	} {
		if got := Detect(filepath.Join(dir, "nothere"), []byte(c.head), false); got != c.want {
			t.Errorf("Detect(%q) = %v", c.head, got)
		}
	}
}

// TestWriteTestKeepsRequest: a TI trace's test (SimGrid's tracer writes
// them) leaves its request outstanding, so that a later waitall of the
// others waits for some, one wait each. (A test that completed its
// request in the run is read from OTF2 and DUMPI as a wait.)
func TestWriteTestKeepsRequest(t *testing.T) {
	tr := trace.New(2, trace.NewMeta())
	add := func(k trace.Kind, req uint64, tag int32, reqs []uint64) {
		e := trace.NewEvent(k)
		e.Partner, e.Tag, e.Request, e.Requests = 1, tag, req, reqs
		if k == trace.Isend {
			e.SendBytes = 4
		} else if k == trace.Irecv {
			e.RecvBytes = 4
		}
		tr.Ranks[0].Append(&e)
	}
	add(trace.Irecv, 1, 1, nil)
	add(trace.Isend, 2, 1, nil)
	add(trace.Test, 1, 0, nil)
	add(trace.Irecv, 3, 2, nil)
	add(trace.Isend, 4, 2, nil)
	add(trace.Waitall, 0, 0, []uint64{2, 3, 4})
	var buf bytes.Buffer
	var st WriteStats
	if err := WriteShared(&buf, tr, &st); err != nil {
		t.Fatal(err)
	}
	want := "0 irecv 1 1 4\n0 isend 1 1 4\n0 test 1 0 1\n0 irecv 1 2 4\n0 isend 1 2 4\n" +
		"0 wait 0 1 1\n0 wait 1 0 2\n0 wait 0 1 2\n"
	if got := strings.TrimPrefix(buf.String(), "0 init\n"); !strings.HasPrefix(got, want) {
		t.Errorf("got\n%swant\n%s", buf.String(), want)
	}
}

// TestWriteWorldAliases: a collective on a communicator of every rank in
// world order (a Comm_dup of world, a Comm_split of one colour) is
// world's in TI, as Kairos' tracer writes it; one on a communicator of
// some ranks, or of all in another order, is left out.
func TestWriteWorldAliases(t *testing.T) {
	meta := trace.NewMeta()
	meta.Comms = []trace.Comm{{ID: 1, Members: []int32{0, 1}}, {ID: 2, Members: []int32{1, 0}}, {ID: 3, Members: []int32{1}}}
	tr := trace.New(2, meta)
	for r := range 2 {
		for _, c := range []uint32{1, 2, 3} {
			e := trace.NewEvent(trace.Barrier)
			e.Comm = c
			tr.Ranks[r].Append(&e)
		}
	}
	var buf bytes.Buffer
	var st WriteStats
	if err := WriteShared(&buf, tr, &st); err != nil {
		t.Fatal(err)
	}
	if want := "0 init\n0 barrier\n0 finalize\n1 init\n1 barrier\n1 finalize\n"; buf.String() != want || st.DroppedTotal() != 4 {
		t.Errorf("got (%d dropped)\n%swant (4 dropped)\n%s", st.DroppedTotal(), buf.String(), want)
	}
}

// TestWriteFinalizes: TI cannot say that a trace's writer stopped
// measuring before MPI_Finalize (trace.AttrNoFinalize: TraceR's archives),
// so that its ranks are written with a finalize, which check would else
// take for a run cut short; a trace without the attribute keeps its end.
func TestWriteFinalizes(t *testing.T) {
	for _, early := range []bool{false, true} {
		meta := trace.NewMeta()
		if early {
			meta.Attrs[trace.AttrNoFinalize] = "switched off"
		}
		tr := trace.New(1, meta)
		for _, k := range []trace.Kind{trace.Init, trace.Barrier} {
			e := trace.NewEvent(k)
			tr.Ranks[0].Append(&e)
		}
		var buf bytes.Buffer
		if err := WriteShared(&buf, tr, &WriteStats{}); err != nil {
			t.Fatal(err)
		}
		want := "0 init\n0 barrier\n"
		if early {
			want += "0 finalize\n"
		}
		if buf.String() != want {
			t.Errorf("switched off %v: got\n%swant\n%s", early, buf.String(), want)
		}
	}
}

// TestWriteAnySourceWait: the wait of a receive from MPI_ANY_SOURCE names
// -556, where SimGrid 3.32 files the receive; with -555 SimGrid's replay
// skipped the wait (a DUMPI archive without statuses replayed 2% faster
// in SimGrid than in Kairos), and the trace reads back to the same
// request.
func TestWriteAnySourceWait(t *testing.T) {
	tr := trace.New(2, trace.NewMeta())
	rv := trace.NewEvent(trace.Irecv)
	rv.Partner, rv.Tag, rv.Request, rv.RecvBytes = trace.AnySource, 3, 7, 8
	w := trace.NewEvent(trace.Wait)
	w.Request = 7
	tr.Ranks[0].Append(&rv)
	tr.Ranks[0].Append(&w)
	var buf bytes.Buffer
	if err := WriteShared(&buf, tr, &WriteStats{}); err != nil {
		t.Fatal(err)
	}
	want := "0 irecv -555 3 8\n0 wait -556 0 3\n"
	if got := strings.TrimPrefix(buf.String(), "0 init\n"); !strings.HasPrefix(got, want) {
		t.Fatalf("got\n%swant\n%s", buf.String(), want)
	}
	evs, err := readRank(t, strings.TrimPrefix(buf.String(), "0 init\n"), 0, 2, trace.TypeByte)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) < 2 || evs[1].Kind != trace.Wait || evs[1].Request != evs[0].Request || evs[0].Request == 0 {
		t.Errorf("read back: %v", evs)
	}
}

// TestLayoutFor: a name ending in .ti (compressed or not) and standard
// output are one file; any other name a description and a file per rank
// ("-" made a description on standard output and its ranks' files in
// ./-_files).
func TestLayoutFor(t *testing.T) {
	for name, want := range map[string]Layout{"run.ti": Shared, "run.ti.gz": Shared, "run.ti.zst": Shared, "-": Shared,
		"index.txt": PerRank, "run": PerRank, "run.ti.txt": PerRank} {
		if got := LayoutFor(name); got != want {
			t.Errorf("LayoutFor(%q) = %v, want %v", name, got, want)
		}
	}
}
