package otf2

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"kairos/internal/testenv"
	"kairos/platform"
	"kairos/sim"
	"kairos/trace"
	"kairos/workload"
)

// simulated returns workload kind with p (its grid derived from the
// ranks), noisy and imbalanced, replayed on a flat cluster: the timed
// trace kairos simulate --timed-trace writes.
func simulated(t testing.TB, kind string, ranks, iterations int) *trace.Trace {
	t.Helper()
	p, err := workload.Defaults(kind)
	if err != nil {
		t.Fatal(err)
	}
	p.Ranks, p.Grid, p.Iterations, p.Noise, p.Imbalance, p.Seed = ranks, nil, iterations, 0.1, 0.3, 7
	src, err := workload.New(kind, p)
	if err != nil {
		t.Fatal(err)
	}
	plat, err := platform.ParseCluster(fmt.Sprintf("%dx1Gf,125MBps,50us", ranks))
	if err != nil {
		t.Fatal(err)
	}
	hosts, err := platform.Deploy(plat, nil, src.NumRanks(), platform.RoundRobin)
	if err != nil {
		t.Fatal(err)
	}
	m, err := sim.FromPlatform(plat, hosts)
	if err != nil {
		t.Fatal(err)
	}
	tt := sim.NewTimedTrace(src.NumRanks(), src.Meta())
	if _, err := sim.Run(src, m, sim.DefaultConfig(), tt); err != nil {
		t.Fatal(err)
	}
	return tt.T
}

// writeBack writes src as an archive in a new directory and opens it.
func writeBack(t testing.TB, src trace.Source) (*Source, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "out", "traces.otf2")
	if err := Write(path, src); err != nil {
		t.Fatal(err)
	}
	back, err := Open(path)
	if err != nil {
		t.Fatalf("reading back %s: %v", path, err)
	}
	return back, path
}

// written returns the events of rank r of src as the archive holds them:
// without computations, sleeps and markers (the time between calls is
// the computation), without what OTF2 records nothing of (datatypes, a
// reduction's operation and flops), the call path by its names, and a
// Waitall of every outstanding request (Requests nil) listing them, in
// the order they started, as its completion records do.
func written(t testing.TB, src trace.Source, r int) ([]trace.Event, [][]string) {
	t.Helper()
	rd, err := src.OpenRank(r)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	var evs []trace.Event
	var paths [][]string
	m := src.Meta()
	var open []uint64
	for rd.Next() {
		e := rd.Event().Clone()
		if !e.Kind.IsMPI() {
			continue
		}
		switch {
		case e.Kind.IsNonBlocking():
			open = append(slices.DeleteFunc(open, func(r uint64) bool { return r == e.Request }), e.Request)
		case e.Kind == trace.Wait:
			open = slices.DeleteFunc(open, func(r uint64) bool { return r == e.Request })
		case e.Kind == trace.Waitall && e.Requests == nil:
			e.Requests, open = open, nil
		case e.Kind == trace.Waitall:
			open = slices.DeleteFunc(open, func(r uint64) bool { return slices.Contains(e.Requests, r) })
		}
		paths = append(paths, m.CallPath(e.Region))
		e.SendType, e.RecvType, e.Op, e.Compute, e.Region = trace.DefaultType, trace.DefaultType, trace.OpNone, 0, 0
		evs = append(evs, e)
	}
	if err := rd.Err(); err != nil {
		t.Fatal(err)
	}
	return evs, paths
}

// sameEvents checks that every rank of back holds the events of src
// (written): every field the model keeps and OTF2 records, the call path
// of each event, and, if sites, the call site (a trace read from OTF2,
// whose call sites are its call paths' hashes; a generated trace's read
// back as its paths').
func sameEvents(t *testing.T, src, back trace.Source, sites bool) {
	t.Helper()
	if src.NumRanks() != back.NumRanks() {
		t.Fatalf("%d ranks read back, %d written", back.NumRanks(), src.NumRanks())
	}
	if !slices.EqualFunc(src.Meta().Comms, back.Meta().Comms, func(a, b trace.Comm) bool { return a.ID == b.ID && slices.Equal(a.Members, b.Members) }) {
		t.Errorf("communicators read back %v, written %v", back.Meta().Comms, src.Meta().Comms)
	}
	main := len(src.Meta().Regions) <= 1
	bad := 0
	for r := range src.NumRanks() {
		want, wantPaths := written(t, src, r)
		got, gotPaths := written(t, back, r)
		for i := 0; i < max(len(want), len(got)) && bad < 5; i++ {
			if i >= len(want) || i >= len(got) {
				t.Errorf("rank %d: %d events read back, %d written", r, len(got), len(want))
				bad++
				break
			}
			w, g := want[i], got[i]
			path := gotPaths[i]
			if main && len(path) > 0 && path[0] == "main" {
				path = path[1:]
			}
			if !sites {
				w.CallSite, g.CallSite = 0, 0
			}
			if w.Kind == trace.Wait { // OTF2's completions name no partner
				w.Partner, w.Tag = g.Partner, g.Tag
			}
			if !w.Equal(&g) || !slices.Equal(wantPaths[i], path) {
				t.Errorf("rank %d, event %d:\n got %s %+v in %v\nwant %s %+v in %v", r, i, g.String(), g, path, w.String(), w, wantPaths[i])
				bad++
			}
		}
	}
}

// TestWriteRoundTripGenerated writes simulated runs of generated
// workloads, noisy and imbalanced, and reads them back.
func TestWriteRoundTripGenerated(t *testing.T) {
	for _, c := range []struct {
		kind              string
		ranks, iterations int
	}{{"stencil2d", 16, 12}, {"cg", 8, 3}, {"lu", 4, 4}, {"is", 4, 2}, {"ft", 4, 2}, {"masterworker", 4, 0}, {"sweep", 4, 2}} {
		t.Run(c.kind, func(t *testing.T) {
			src := simulated(t, c.kind, c.ranks, c.iterations)
			back, _ := writeBack(t, src)
			sameEvents(t, src, back, false)
		})
	}
}

// sharedArchives are the archives of ../shared/traces/otf2 with MPI.
var sharedArchives = []string{"tiny_mpi", "pipit-ping-pong-otf2", "pipit-ping-pong-otf2-papi", "sst-macro-mpi-coverage",
	"tracer-stencil4d-32", "tracer-stencil4d-64"}

// TestWriteRoundTripArchives reads the real archives, writes them and
// reads them back.
func TestWriteRoundTripArchives(t *testing.T) {
	for _, name := range sharedArchives {
		t.Run(name, func(t *testing.T) {
			src, err := Open(testenv.Shared(t, filepath.Join("traces/otf2", name)))
			if err != nil {
				t.Fatal(err)
			}
			back, _ := writeBack(t, src)
			sameEvents(t, src, back, true)
		})
	}
}

// failing is a source whose rank 1 fails after a few events.
type failing struct{ trace.Source }

var errFailing = errors.New("disk on fire")

func (f failing) OpenRank(r int) (trace.Reader, error) {
	rd, err := f.Source.OpenRank(r)
	if err != nil || r != 1 {
		return rd, err
	}
	return &failingReader{Reader: rd}, nil
}

type failingReader struct {
	trace.Reader
	n int
}

func (f *failingReader) Next() bool {
	f.n++
	return f.n < 5 && f.Reader.Next()
}

func (f *failingReader) Err() error { return errFailing }

// TestWriteAtomic checks that a failing write leaves nothing: neither
// the archive nor the temporary directory, nor a change to a previous
// archive of the name.
func TestWriteAtomic(t *testing.T) {
	src := simulated(t, "ring", 4, 2)
	dir := t.TempDir()
	path := filepath.Join(dir, "run.otf2")
	err := Write(path, failing{src})
	if !errors.Is(err, errFailing) {
		t.Fatalf("got %v, want the source's error", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("the failed write left %v", entries)
	}
	if err := Write(path, src); err != nil {
		t.Fatal(err)
	}
	before := listFiles(t, dir)
	if err := Write(path, failing{src}); !errors.Is(err, errFailing) {
		t.Fatalf("got %v, want the source's error", err)
	}
	if after := listFiles(t, dir); !slices.Equal(before, after) {
		t.Errorf("the failed write changed the archive: %v, was %v", after, before)
	}
	if _, err := Open(path); err != nil {
		t.Errorf("the previous archive no longer reads: %v", err)
	}
}

// listFiles lists the files under dir with their sizes.
func listFiles(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		files = append(files, fmt.Sprintf("%s %d", strings.TrimPrefix(p, dir), info.Size()))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestWriteUntimed checks that a trace without timestamps is refused,
// with the way to a timed one, and leaves nothing.
func TestWriteUntimed(t *testing.T) {
	p, _ := workload.Defaults("ring")
	p.Ranks, p.Iterations = 2, 1
	src, err := workload.New("ring", p)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	err = Write(filepath.Join(dir, "traces.otf2"), src)
	if !errors.Is(err, errUntimed) || !strings.Contains(err.Error(), "kairos simulate") {
		t.Errorf("got %v, want the untimed trace refused", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("the refused write left %v", entries)
	}
}
