package ti

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"kairos/internal/testenv"
	"kairos/trace"
)

// kindCounts returns "kind:n" for every kind of src's events, sorted.
func kindCounts(t *testing.T, src trace.Source) string {
	t.Helper()
	var n [trace.NumKinds]int
	err := trace.ForEach(src, func(_, _ int, e *trace.Event) error {
		n[e.Kind]++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var s []string
	for k, c := range n {
		if c > 0 {
			s = append(s, trace.Kind(k).String()+":"+strconv.Itoa(c))
		}
	}
	sort.Strings(s)
	return strings.Join(s, " ")
}

// realTraces are every TI trace of the shared reference material, with
// their per-action line counts computed independently of Kairos: for each
// data file, drop the last line if the file does not end with a newline
// (SimGrid's rule), trim, skip empty and '#' lines, and count the second
// field, with
//
//	awk '{l=$0; sub(/^[ \t\r\v\f]+/,"",l); sub(/[ \t\r\v\f]+$/,"",l);
//	     if (l=="" || substr(l,1,1)=="#") next; split(l,a,/[ \t]+/); c[a[2]]++}
//	     END {for (k in c) print k ":" c[k]}'
//
// (teshsuite/ holds tesh scripts only: its traces are the ones in
// generated_by_simgrid_3.32/.) cwd, if set, is the directory to run in,
// for descriptions whose paths are relative to smpirun's directory.
var realTraces = []struct {
	path, cwd string
	ranks     int
	layout    Layout
	dropped   bool // an unterminated last line was dropped
	counts    string
}{
	{path: "simgrid-replay-tests/examples/smpi/replay/actions0.txt", ranks: 1, counts: "finalize:1 init:1 recv:1 send:2"},
	{path: "simgrid-replay-tests/examples/smpi/replay/actions1.txt", ranks: 2, counts: "compute:1 finalize:1 init:1 irecv:1 isend:1 recv:1 wait:1"},
	{path: "simgrid-replay-tests/examples/smpi/replay/split_traces", cwd: "simgrid-replay-tests/examples/smpi", ranks: 2, layout: PerRank,
		counts: "compute:1 finalize:2 init:2 irecv:1 isend:1 recv:2 send:2 wait:1"},
	{path: "simgrid-replay-tests/examples/smpi/replay/actions_allgatherv.txt", ranks: 4, counts: "allgatherv:4 finalize:4 init:4"},
	{path: "simgrid-replay-tests/examples/smpi/replay/actions_allreduce.txt", ranks: 3, counts: "allreduce:3 compute:3 finalize:3 init:3"},
	{path: "simgrid-replay-tests/examples/smpi/replay/actions_alltoall.txt", ranks: 3, counts: "alltoall:3 finalize:3 init:3"},
	{path: "simgrid-replay-tests/examples/smpi/replay/actions_alltoallv.txt", ranks: 3, counts: "alltoallv:3 finalize:3 init:3"},
	{path: "simgrid-replay-tests/examples/smpi/replay/actions_barrier.txt", ranks: 3, counts: "barrier:3 compute:3 finalize:3 init:3 recv:1 send:1"},
	{path: "simgrid-replay-tests/examples/smpi/replay/actions_bcast.txt", ranks: 3, counts: "bcast:6 compute:6 finalize:3 init:3 reduce:3"},
	{path: "simgrid-replay-tests/examples/smpi/replay/actions_bcast_reduce_datatypes.txt", ranks: 3, counts: "bcast:6 compute:6 finalize:3 init:3 reduce:3"},
	{path: "simgrid-replay-tests/examples/smpi/replay/actions_gather.txt", ranks: 4, counts: "finalize:4 gather:4 init:4"},
	{path: "simgrid-replay-tests/examples/smpi/replay/actions_reducescatter.txt", ranks: 4, counts: "finalize:4 init:4 reducescatter:4"},
	{path: "simgrid-replay-tests/examples/smpi/replay/actions_waitall.txt", ranks: 3, counts: "finalize:3 init:3 irecv:3 isend:3 waitall:3"},
	{path: "simgrid-replay-tests/examples/smpi/replay/actions_with_isend.txt", ranks: 3,
		counts: "compute:8 finalize:3 init:3 irecv:2 isend:1 recv:1 send:2 test:2 wait:2"},
	{path: "simgrid-replay-tests/generated_by_simgrid_3.32/replay-ti-colls.trace1", ranks: 4, layout: PerRank,
		counts: "allgather:4 allgatherv:4 allreduce:4 alltoall:4 alltoallv:4 barrier:12 bcast:8 exscan:4 finalize:4 gather:8 gatherv:8 init:4 reduce:8 reducescatter:4 scan:4 scatter:8 scatterv:8"},
	{path: "simgrid-replay-tests/generated_by_simgrid_3.32/pingpong/description.txt", ranks: 4, layout: PerRank, counts: "finalize:4 init:4 recv:6 send:6"},
	{path: "simgrid-replay-tests/examples/smpi/replay_multiple_manual_deploy/coll.txt", ranks: 2, layout: PerRank,
		counts: "alltoall:2 barrier:2 bcast:2 compute:1 finalize:2 init:2 reduce:2"},
	{path: "simgrid-replay-tests/examples/smpi/replay_multiple_manual_deploy/compute_only.txt", ranks: 2, layout: PerRank, counts: "compute:2 finalize:2 init:2"},
	{path: "simgrid-replay-tests/examples/smpi/replay_multiple_manual_deploy/empty.txt", ranks: 2, layout: PerRank, counts: "finalize:2 init:2"},
	{path: "simgrid-replay-tests/examples/smpi/replay_multiple_manual_deploy/mixed.txt", ranks: 2, layout: PerRank, counts: "compute:2 finalize:2 init:2 recv:4 send:4"},
	{path: "simgrid-replay-tests/examples/smpi/replay_multiple/smpi_replay.txt", ranks: 32, layout: PerRank, dropped: true,
		counts: "allreduce:192 alltoall:160 alltoallv:64 barrier:512 bcast:288 comm_size:480 compute:1440 gather:32 init:32"},
	{path: "traces/ti/smpi-ring4/ring4.ti", ranks: 4, layout: PerRank,
		counts: "allreduce:12 barrier:4 bcast:12 compute:25 finalize:4 init:4 irecv:12 isend:12 recv:3 send:3 waitall:12"},
	{path: "traces/ti/simgrid-replay-multiple-32/is32-flat.txt", ranks: 32, layout: PerRank, dropped: true,
		counts: "allreduce:192 alltoall:160 alltoallv:64 barrier:512 bcast:288 comm_size:480 compute:1440 gather:32 init:32"},
}

// TestRealTraces reads every TI trace of the reference material with no
// error and the right number of events of each kind.
func TestRealTraces(t *testing.T) {
	for _, c := range realTraces {
		t.Run(filepath.Base(c.path), func(t *testing.T) {
			path := testenv.Shared(t, c.path)
			if c.cwd != "" {
				t.Chdir(testenv.Shared(t, c.cwd))
			}
			tr, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			if tr.NumRanks() != c.ranks || tr.Layout() != c.layout {
				t.Errorf("%d ranks, %v; want %d, %v", tr.NumRanks(), tr.Layout(), c.ranks, c.layout)
			}
			if got := kindCounts(t, tr); got != c.counts {
				t.Errorf("counts\n got %s\nwant %s", got, c.counts)
			}
			if w := tr.Warnings(); c.dropped != (len(w) > 0) {
				t.Errorf("warnings %q", w)
			}
			if !Detect(path, head(t, path), false) {
				t.Errorf("Detect does not recognise %s", path)
			}
		})
	}
}

// TestRealDatatypes checks sizes in a trace with "init 1" (MPI_DOUBLE
// default) and one with explicit datatype ids.
func TestRealDatatypes(t *testing.T) {
	tr, err := Open(testenv.Shared(t, "traces/ti/simgrid-replay-multiple-32/is32-flat.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if tr.Meta().DefaultType != trace.TypeDouble {
		t.Fatalf("default datatype %d, want MPI_DOUBLE", tr.Meta().DefaultType)
	}
	rd, err := tr.OpenRank(0)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	for rd.Next() {
		if e := rd.Event(); e.Kind == trace.Bcast { // "0 bcast 1": one double
			if e.SendBytes != 8 || e.SendType != trace.DefaultType {
				t.Errorf("bcast: %+v", e)
			}
			break
		}
	}
	tr, err = Open(testenv.Shared(t, "simgrid-replay-tests/examples/smpi/replay/actions_bcast_reduce_datatypes.txt"))
	if err != nil {
		t.Fatal(err)
	}
	evs := loadAll(t, tr)
	// "0 bcast 5e4 1 0" (MPI_DOUBLE), "0 bcast 5e4 0 3" (MPI_SHORT),
	// "0 reduce 5e4 5e8 0 4" (MPI_LONG).
	want := []int64{400000, 100000, 400000}
	var got []int64
	for _, e := range evs[0] {
		if e.Kind == trace.Bcast || e.Kind == trace.Reduce {
			got = append(got, e.SendBytes)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("sizes %v, want %v", got, want)
	}
}

// TestSharedClaimedRanks: a shared file of a few lines that names a rank
// in the millions says so (trace.AttrClaimedRanks, which the verbs that
// keep state for every rank refuse), where it names it; 4,096 ranks or 64
// for each rank with lines do not, nor does a trace opened for a given
// number of ranks (-np). A rank's own file of a large run, opened alone,
// claims the ranks below it.
func TestSharedClaimedRanks(t *testing.T) {
	dir := t.TempDir()
	var hundred strings.Builder
	for r := range 100 {
		fmt.Fprintf(&hundred, "%d init\n", r)
	}
	far := "0 init\n10000000 init\n"
	for _, c := range []struct {
		text, claim string
		ranks       int
	}{
		{far, "t.ti:2 names rank 10000000: 10000001 ranks, of which 2 have lines (a trace of so few may name 4096 ranks at most)", 10000001},
		{"0 init\n0 finalize\n4095 init\n", "", 4096},
		{hundred.String() + "6463 init\n", "", 6464},
		{hundred.String() + "6464 init\n", "6465 ranks, of which 101 have lines", 6465},
		{strings.Repeat("9999 compute 1\n", 700), "10000 ranks, of which 1 have lines", 10000}, // rank 9999's own file
	} {
		path := filepath.Join(dir, "t.ti")
		if err := os.WriteFile(path, []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		tr, err := Open(path)
		if err != nil {
			t.Fatalf("%.40q: %v", c.text, err)
		}
		claim := tr.Meta().Attrs[trace.AttrClaimedRanks]
		if tr.NumRanks() != c.ranks || c.claim == "" && claim != "" || !strings.Contains(claim, c.claim) {
			t.Errorf("%.40q: %d ranks, claim %q; want %d, %q", c.text, tr.NumRanks(), claim, c.ranks, c.claim)
		}
	}
	path := filepath.Join(dir, "far.ti")
	if err := os.WriteFile(path, []byte(far), 0o644); err != nil {
		t.Fatal(err)
	}
	if tr, err := OpenWith(path, ReaderOptions{NumRanks: 20000}); err != nil || tr.NumRanks() != 20000 || tr.Meta().Attrs[trace.AttrClaimedRanks] != "" {
		t.Errorf("-np 20000: %v", err)
	}
}
