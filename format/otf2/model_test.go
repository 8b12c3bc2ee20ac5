package otf2

import (
	"fmt"
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
	if !strings.Contains(at["otf2.ranks"], "no MPI") || !strings.HasPrefix(at["otf2.ignored_locations"], "31 ") {
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

// TestScorePVolumes converts the volumes Score-P 8's byte counting
// (scorep_mpi_coll_bytes_*) records, in place without the member's own
// block, back to the per-member volumes of the model, telling the two
// apart where the sizes can; and, for other creators, n blocks but where
// only n-1 divide.
func TestScorePVolumes(t *testing.T) {
	const b, n = 400, 4 // one member's block; members
	for _, c := range []struct {
		name               string
		k                  trace.Kind
		sent, recv         int64
		root, block        bool
		me                 int
		wantSent, wantRecv int64
	}{
		{"allreduce", trace.Allreduce, n * b, n * b, false, false, 1, b, b},
		{"allreduce in place, 401 bytes", trace.Allreduce, 3 * 401, 3 * 401, false, false, 1, 401, 401},
		{"allreduce in place, 1 double", trace.Allreduce, 3 * 8, 3 * 8, false, false, 1, 8, 8},
		{"allreduce in place, 3 doubles", trace.Allreduce, 3 * 24, 3 * 24, false, false, 1, 24, 24},
		{"allreduce, 3 doubles", trace.Allreduce, 4 * 24, 4 * 24, false, false, 1, 24, 24},
		{"allreduce in place, 8 doubles: as 6 doubles", trace.Allreduce, 3 * 64, 3 * 64, false, false, 1, 48, 48},
		{"allreduce of 2 members, 8 bytes", trace.Allreduce, 8, 8, false, false, 1, 4, 4}, // n=2 below
		{"alltoall in place", trace.Alltoall, 3 * 24, 3 * 24, false, false, 0, 24, 24},
		{"allgather", trace.Allgather, n * 8, n * 8, false, false, 0, 8, 8},
		{"allgather of 3 ints: as 4 in place", trace.Allgather, n * 12, n * 12, false, false, 0, 16, 16},
		{"allgatherv", trace.Allgatherv, n * 16, 64, false, false, 0, 16, 64},
		{"allgatherv in place", trace.Allgatherv, 3 * 24, 72, false, false, 0, 24, 96},
		{"bcast, root", trace.Bcast, n * b, b, true, false, 0, b, b},
		{"bcast, other", trace.Bcast, 0, b, false, false, 0, b, b},
		{"bcast, root without its own block", trace.Bcast, n * b, 0, true, false, 0, b, b},
		{"scatter in place, root", trace.Scatter, 3 * 24, 0, true, false, 0, 24, 24},
		{"gather, root", trace.Gather, b, n * b, true, false, 0, b, b},
		{"gather, other", trace.Gather, b, 0, false, false, 0, b, b},
		{"gather in place, root", trace.Gather, 0, 3 * 24, true, false, 0, 24, 24},
		{"reduce in place, root", trace.Reduce, 0, 3 * 8, true, false, 0, 8, 8},
		{"gatherv in place, root", trace.Gatherv, 0, 72, true, false, 0, 24, 96},
		{"gatherv, other", trace.Gatherv, 24, 0, false, false, 0, 24, 0},
		{"scatterv in place, root", trace.Scatterv, 72, 0, true, false, 0, 96, 24},
		{"reduce_scatter_block", trace.ReduceScatter, n * 24, n * 24, false, true, 0, 0, n * 24},
		{"reduce_scatter_block in place", trace.ReduceScatter, 3 * 24, 3 * 24, false, true, 0, 0, n * 24},
		{"reduce_scatter", trace.ReduceScatter, 96, n * 24, false, false, 0, 0, 96},
		{"reduce_scatter in place", trace.ReduceScatter, 72, 3 * 24, false, false, 0, 0, 96},
		{"scan, member 2", trace.Scan, 2 * b, 3 * b, false, false, 2, b, b},
		{"scan, member 0", trace.Scan, n * b, b, false, false, 0, b, b},
		{"scan in place, member 2", trace.Scan, b, 2 * b, false, false, 2, b, b},
		{"scan in place, member 0", trace.Scan, 3 * b, 0, false, false, 0, b, b},
		{"scan in place, member 3", trace.Scan, 0, 3 * b, false, false, 3, b, b},
		{"exscan, member 0", trace.Exscan, 3 * b, 0, false, false, 0, b, b},
		{"exscan, member 3", trace.Exscan, 0, 3 * b, false, false, 3, b, b},
	} {
		members := n
		if strings.Contains(c.name, "2 members") {
			members = 2
		}
		s, r := volumes(c.k, counted{sent: c.sent, recv: c.recv, root: c.root, block: c.block, me: c.me, n: members,
			inPlaceAware: true})
		if s != c.wantSent || r != c.wantRecv {
			t.Errorf("%s: %d and %d bytes, want %d and %d", c.name, s, r, c.wantSent, c.wantRecv)
		}
	}
	// Before Score-P 8 (and from Kairos' tracer), n blocks where n divides.
	for _, c := range []struct {
		total, want int64
	}{{3 * 64, 48}, {n * 12, 12}, {3 * 8, 6}, {3 * 401, 401}} {
		if got, _ := split(c.total, n, false); got != c.want {
			t.Errorf("split(%d, %d) without in-place awareness: %d, want %d", c.total, n, got, c.want)
		}
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

// TestSpreadCounts: a v-collective's totals (all OTF2 records) become
// per-member counts that differ by at most one byte and add up.
func TestSpreadCounts(t *testing.T) {
	for _, c := range []struct {
		total int64
		n     int
		want  []int64
	}{
		{12, 4, []int64{3, 3, 3, 3}},
		{14, 4, []int64{4, 4, 3, 3}},
		{0, 3, []int64{0, 0, 0}},
		{5, 0, nil},
	} {
		if got := spread(c.total, c.n); !slices.Equal(got, c.want) {
			t.Errorf("spread(%d, %d) = %v, want %v", c.total, c.n, got, c.want)
		}
	}
	ev := trace.NewEvent(trace.Alltoallv)
	ev.SendBytes, ev.RecvBytes = 8, 12
	spreadCounts(&ev, 4)
	if !slices.Equal(ev.SendCounts, []int64{2, 2, 2, 2}) || !slices.Equal(ev.RecvCounts, []int64{3, 3, 3, 3}) {
		t.Errorf("alltoallv counts %v %v", ev.SendCounts, ev.RecvCounts)
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
			got = append(got, rd.Event().String())
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
