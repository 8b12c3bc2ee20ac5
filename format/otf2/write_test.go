package otf2

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
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

var update = flag.Bool("update", false, "rewrite testdata/tiny.otf2-print.txt")

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
	tt := sim.NewTimedTrace(src.NumRanks(), src.Meta())
	if _, err := sim.Simulate(src, plat, nil, sim.DefaultConfig(), tt); err != nil {
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
// the order they started, as its completion records do; the count
// vectors of a gatherv's or scatterv's members but the root, which MPI
// ignores, none.
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
		if (e.Kind == trace.Gatherv || e.Kind == trace.Scatterv) && e.Partner != int32(r) {
			e.SendCounts, e.RecvCounts = nil, nil // MPI ignores them (nil or zeros)
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

// OpenRank opens rank r, rank 1 to fail.
func (f failing) OpenRank(r int) (trace.Reader, error) {
	rd, err := f.Source.OpenRank(r)
	if err != nil || r != 1 {
		return rd, err
	}
	return &failingReader{Reader: rd}, nil
}

// failingReader fails after four events.
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
	// A location directory holding a file no archive has is not replaced,
	// and the previous archive stays whole.
	if err := os.WriteFile(filepath.Join(dir, "run", "notes.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	before = listFiles(t, dir)
	if err := Write(path, src); err == nil || !strings.Contains(err.Error(), "notes.txt") {
		t.Errorf("got %v, want the directory refused", err)
	}
	if after := listFiles(t, dir); !slices.Equal(before, after) {
		t.Errorf("the refused write changed the archive: %v, was %v", after, before)
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

// tiny returns a 3-rank timed trace of every kind of call the writer
// writes records for: point-to-point calls blocking and not, waits of
// some and of every request, a sendrecv, collectives (rooted, on a
// communicator of two ranks, a v-collective with its counts, a
// non-blocking one read where it completed, an allreduce whose volumes
// Score-P's counts do not give back), a local call, a deferred one, a
// buffer flush, under user regions.
func tiny() *trace.Trace {
	m := trace.NewMeta()
	solve := m.AddRegion("solve", 0)
	halo := m.AddRegion("halo", solve)
	rank := m.AddRegion("MPI_Comm_rank", 0)
	flush := m.AddRegion(flushName, solve)
	probe := m.AddRegion("MPI_Iprobe", halo)
	m.Comms = []trace.Comm{{ID: 1, Members: []int32{2, 0}}}
	tr := trace.New(3, m)
	for r := range 3 {
		at := trace.Time(0)
		call := func(k trace.Kind, region uint32, f func(e *trace.Event)) {
			e := trace.NewEvent(k)
			e.Enter, e.Exit, e.HasTime, e.Region = at, at+1500, true, region
			at += 2000 + trace.Time(r)*100
			if f != nil {
				f(&e)
			}
			tr.Ranks[r].Append(&e)
		}
		next, prev := int32((r+1)%3), int32((r+2)%3)
		call(trace.Init, 0, nil)
		call(trace.Local, rank, nil)
		call(trace.Isend, halo, func(e *trace.Event) { e.Partner, e.Tag, e.SendBytes, e.Request = next, 7, 800, 1 })
		call(trace.Irecv, halo, func(e *trace.Event) { e.Partner, e.Tag, e.RecvBytes, e.Request = prev, 7, 800, 2 })
		call(trace.Deferred, probe, nil)
		call(trace.Waitall, halo, nil)
		call(trace.Send, halo, func(e *trace.Event) { e.Partner, e.Tag, e.SendBytes = next, 3, 1<<20 })
		call(trace.Recv, halo, func(e *trace.Event) { e.Partner, e.Tag, e.RecvBytes = prev, 3, 1<<20 })
		call(trace.Isend, halo, func(e *trace.Event) { e.Partner, e.Tag, e.SendBytes, e.Request = prev, 4, 16, 3 })
		call(trace.Wait, halo, func(e *trace.Event) { e.Request = 3 })
		call(trace.Recv, halo, func(e *trace.Event) { e.Partner, e.Tag, e.RecvBytes = next, 4, 16 })
		call(trace.SendRecv, halo, func(e *trace.Event) { e.Partner, e.Source, e.Tag, e.SendBytes, e.RecvBytes = next, prev, 9, 64, 64 })
		call(trace.Allreduce, solve, func(e *trace.Event) { e.SendBytes = 8 })
		call(trace.Bcast, solve, func(e *trace.Event) { e.Partner, e.SendBytes, e.RecvBytes = 1, 40, 40 })
		call(trace.Deferred, flush, nil)
		call(trace.Gatherv, solve, func(e *trace.Event) {
			e.Partner, e.SendBytes = 0, int64(8*(r+1))
			if r == 0 {
				e.RecvBytes, e.RecvCounts = 48, []int64{8, 16, 24}
			}
		})
		if r != 1 {
			call(trace.Reduce, solve, func(e *trace.Event) { e.Comm, e.Partner, e.SendBytes, e.RecvBytes = 1, 2, 24, 24 })
		}
		call(trace.Allreduce, solve, func(e *trace.Event) { e.SendBytes, e.RecvBytes, e.Request = 16, 16, 5 })
		call(trace.Barrier, 0, nil)
		call(trace.Finalize, 0, nil)
	}
	return tr
}

// TestWriteRoundTripTiny reads back the tiny trace.
func TestWriteRoundTripTiny(t *testing.T) {
	src := tiny()
	back, _ := writeBack(t, src)
	sameEvents(t, src, back, false)
}

// TestWriteGolden compares otf2-print's anchor, definitions and events
// of the tiny trace's archive with testdata/tiny.otf2-print.txt (-update
// rewrites it): libotf2 reads every record, and prints what Vampir
// shows.
func TestWriteGolden(t *testing.T) {
	p := testenv.Tool(t, "otf2-print", "otf2-tools")
	path := filepath.Join(t.TempDir(), "tiny.otf2")
	if err := Write(path, tiny()); err != nil {
		t.Fatal(err)
	}
	got, err := exec.Command(p, "-A", path).CombinedOutput()
	if err != nil {
		t.Fatalf("otf2-print -A: %v\n%s", err, got)
	}
	golden := filepath.Join("testdata", "tiny.otf2-print.txt")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("otf2-print of the tiny archive differs from %s (go test -run TestWriteGolden -update rewrites it):\n%s", golden, got)
	}
}

// TestWriteOtf2Print checks that otf2-print, libotf2's reader, reads the
// archives written of generated runs and of the real archives without
// error and prints every event as Kairos reads it: the same records, in
// the same order, with the same fields.
func TestWriteOtf2Print(t *testing.T) {
	testenv.Tool(t, "otf2-print", "otf2-tools")
	srcs := map[string]func(t *testing.T) trace.Source{
		"tiny":      func(*testing.T) trace.Source { return tiny() },
		"stencil2d": func(t *testing.T) trace.Source { return simulated(t, "stencil2d", 9, 3) },
		"is":        func(t *testing.T) trace.Source { return simulated(t, "is", 4, 2) },
		"rmawriter": func(t *testing.T) trace.Source { return oneSided(t) },
	}
	for _, name := range sharedArchives {
		srcs[name] = func(t *testing.T) trace.Source {
			src, err := Open(testenv.Shared(t, filepath.Join("traces/otf2", name)))
			if err != nil {
				t.Fatal(err)
			}
			return src
		}
	}
	for name, open := range srcs {
		t.Run(name, func(t *testing.T) {
			_, path := writeBack(t, open(t))
			samePrint(t, path)
		})
	}
}

// samePrint checks that otf2-print -A prints the events of the archive
// at path as Kairos' reader reads them.
func samePrint(t *testing.T, path string) {
	t.Helper()
	want, _ := ourEvents(t, path)
	got := otf2PrintEvents(t, path)
	for i := 0; i < max(len(got), len(want)); i++ {
		if i >= len(got) || i >= len(want) || got[i] != want[i] {
			t.Fatalf("event line %d of %d (otf2-print has %d):\n got %q\nwant %q", i, len(want), len(got), at(got, i), at(want, i))
		}
	}
}

// at returns line i of s, "(none)" past its end.
func at(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return "(none)"
}

// TestPropertyKey checks that attribute keys survive their spelling as
// property names.
func TestPropertyKey(t *testing.T) {
	for _, k := range []string{"otf2.switched-off", "format", "no-replay", "clock.offset", "A_b.9", ""} {
		p := propertyKey(k)
		if strings.Trim(p, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != "" {
			t.Errorf("%q spelt %q", k, p)
		}
		if back, err := attrKey(p); err != nil || back != k {
			t.Errorf("%q spelt %q read back as %q, %v", k, p, back, err)
		}
	}
}

// oneSided returns the archive testdata/rmawriter.c writes with libotf2
// as Score-P 8 records one-sided and MPI-IO calls, read.
func oneSided(t *testing.T) *Source {
	dir := filepath.Join(t.TempDir(), "rma")
	if out, err := exec.Command(buildWithOTF2(t, "rmawriter.c"), dir).CombinedOutput(); err != nil {
		t.Fatalf("rmawriter: %v\n%s", err, out)
	}
	src, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// TestWriteRoundTripOneSided writes the one-sided and MPI-IO calls of
// rmawriter.c's archive (windows, transfers with and without requests,
// locks, flushes, fences, post, start, complete and wait; files opened,
// written collectively, read without blocking and waited for, closed)
// and reads them back.
func TestWriteRoundTripOneSided(t *testing.T) {
	src := oneSided(t)
	back, _ := writeBack(t, src)
	sameEvents(t, src, back, true)
}

// TestWriteChunks writes the events in many chunks, of libotf2's
// smallest size (256 KiB, read by otf2-print too) and of a few records
// (by Kairos' reader): no record straddles two chunks, each chunk starts
// with its timestamp, and the events read back.
func TestWriteChunks(t *testing.T) {
	src := simulated(t, "stencil2d", 2, 4000)
	for _, size := range []int{1 << 18, 160} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			defer func(s int) { eventChunkSize = s }(eventChunkSize)
			eventChunkSize = size
			back, path := writeBack(t, src)
			sameEvents(t, src, back, false)
			evt, err := os.Stat(filepath.Join(filepath.Dir(path), "traces", "0.evt"))
			if err != nil {
				t.Fatal(err)
			}
			if evt.Size() <= int64(size) {
				t.Fatalf("rank 0's events take %d bytes, one chunk of %d", evt.Size(), size)
			}
			if size >= 1<<18 {
				samePrint(t, path)
			}
		})
	}
}

// TestArchiveFile: the files an archive's directory may hold, which a new
// archive replaces, and names it must leave alone.
func TestArchiveFile(t *testing.T) {
	for name, want := range map[string]bool{
		"0.evt": true, "12.def": true, "3.snap": true, "007.evt": true,
		".evt": false, "a.evt": false, "1a.def": false, "1.evtx": false, "1.txt": false,
		"1.2.evt": false, "evt": false, "": false, "1.": false, "1.Evt": false,
	} {
		if got := archiveFile(name); got != want {
			t.Errorf("archiveFile(%q) = %v, want %v", name, got, want)
		}
	}
}
