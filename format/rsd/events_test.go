package rsd

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"kairos/format/ktr"
	"kairos/prsd"
	"kairos/trace"
)

// mixed is an 8-rank trace: ranks 0-3 a ring of 300 identical steps,
// which fold into one loop, and ranks 4-7 irregular calls (random kinds,
// partners, sizes and timed gaps), which fold into nothing.
func mixed() *trace.Trace {
	rng := rand.New(rand.NewPCG(1, 2))
	t := trace.New(8, trace.NewMeta())
	for r := range 4 {
		for range 300 {
			c := trace.NewEvent(trace.Compute)
			c.Compute = 1e6
			s := trace.NewEvent(trace.Send)
			s.Partner, s.SendBytes = int32((r+1)%4), 4096
			v := trace.NewEvent(trace.Recv)
			v.Partner, v.RecvBytes = int32((r+3)%4), 4096
			t.Ranks[r].Append(&c)
			t.Ranks[r].Append(&s)
			t.Ranks[r].Append(&v)
		}
	}
	at := trace.Time(0)
	for r := 4; r < 8; r++ {
		for range 600 {
			var e trace.Event
			switch rng.IntN(3) {
			case 0:
				e = trace.NewEvent(trace.Send)
				e.Partner, e.SendBytes = int32(4+rng.IntN(4)), int64(rng.IntN(1<<20))
			case 1:
				e = trace.NewEvent(trace.Recv)
				e.Partner, e.RecvBytes, e.Tag = int32(4+rng.IntN(4)), int64(rng.IntN(1<<20)), int32(rng.IntN(9))
			default:
				e = trace.NewEvent(trace.Allreduce)
				e.SendBytes = int64(8 << rng.IntN(6))
			}
			e.HasTime = true
			e.Enter = at + trace.Time(rng.IntN(1e7))
			e.Exit = e.Enter + trace.Time(rng.IntN(1e6))
			at = e.Exit
			t.Ranks[r].Append(&e)
		}
	}
	return t
}

// mixedBuilt returns mixed() and its compressed form, the regular and
// the irregular ranks two clusters.
func mixedBuilt(t testing.TB) (*trace.Trace, *prsd.Trace) {
	src := mixed()
	tr, err := prsd.Build(src, [][]int32{{0, 1, 2, 3}, {4, 5, 6, 7}}, prsd.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	return src, tr
}

// TestEventsClusters: of a trace with a regular and an irregular
// cluster, the irregular one is kept as its events (since version 4; the
// file is written in the current version), which
// read back as the trace's own, times rounded within the time error
// (trace.Rounded); the regular one as loops; the file encodes back to the
// same bytes.
func TestEventsClusters(t *testing.T) {
	src, tr := mixedBuilt(t)
	b, asEvents, _, err := EncodeCounting(tr)
	if err != nil {
		t.Fatal(err)
	}
	if v := binary.LittleEndian.Uint16(b[8:]); v != Version || asEvents != 1 {
		t.Fatalf("version %d, %d clusters as events; want %d, 1", v, asEvents, Version)
	}
	back, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if back.Clusters[0].Events != nil || back.Clusters[1].Events == nil {
		t.Fatalf("clusters kept as events: %v, %v; want the second only", back.Clusters[0].Events != nil, back.Clusters[1].Events != nil)
	}
	if err := prsd.Verify(src, back); err != nil {
		t.Error(err)
	}
	sameEvents(t, trace.Rounded(src, tr.TimeError), back, 4, 8) // the times as written
	if again := mustEncode(t, back); !bytes.Equal(again, b) {
		t.Errorf("the decoded file encodes to other bytes (%d, not %d)", len(again), len(b))
	}
	// Without the choice the file is all loops, larger, and version 3.
	loops, _, _, err := encode(tr, 3)
	if err != nil {
		t.Fatal(err)
	}
	if v := binary.LittleEndian.Uint16(loops[8:]); v != 3 || len(loops) <= len(b) {
		t.Errorf("all loops: version %d, %d bytes against %d", v, len(loops), len(b))
	}
}

// TestEventsLeftInFile: a file opened by its path leaves the cluster
// kept as its events in the file, and its ranks read there the events
// Decode reads from the file's bytes; a byte changed in those events is
// the cluster's checksum error, a file cut short in them an overrun, as
// when the file is read whole.
func TestEventsLeftInFile(t *testing.T) {
	_, tr := mixedBuilt(t)
	b := mustEncode(t, tr)
	dir := t.TempDir()
	path := filepath.Join(dir, "t.rsd")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	fromFile, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	fromBytes, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if fromFile.Clusters[1].Events == nil {
		t.Fatal("the irregular cluster is not kept as its events")
	}
	sameEvents(t, fromBytes, fromFile, 0, fromBytes.NumRanks())
	off, end := clusterBlock(b, 1)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	in := &input{f: f, size: len(b)}
	if _, start, size, ok := in.leftEvents(off, Version, tr.NumRanks(), new(arena)); !ok || start+size != end {
		t.Errorf("cluster 1 left in the file %v, its events to byte %d of %d", ok, start+size, end)
	}
	for _, c := range []struct {
		name, want string
		file       []byte
	}{
		{"a byte changed", "cluster 1's checksum", func() []byte {
			bad := slices.Clone(b)
			bad[(off+end)/2] ^= 0x40
			return bad
		}()},
		{"cut short", "cluster 1's block", b[:end-5]},
	} {
		bad := filepath.Join(dir, "bad.rsd")
		if err := os.WriteFile(bad, c.file, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Open(bad)
		_, memErr := Decode(c.file)
		if err == nil || !strings.Contains(err.Error(), c.want) || memErr == nil || !strings.HasSuffix(err.Error(), memErr.Error()) {
			t.Errorf("%s: opened: %v; decoded: %v; want %q in both", c.name, err, memErr, c.want)
		}
	}
}

// sameEvents fails t unless ranks from to to of got read want's events,
// with their times.
func sameEvents(t *testing.T, want, got trace.Source, from, to int) {
	t.Helper()
	for r := from; r < to; r++ {
		a, err := want.OpenRank(r)
		if err != nil {
			t.Fatal(err)
		}
		c, err := got.OpenRank(r)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; ; i++ {
			okA, okC := a.Next(), c.Next()
			if okA != okC {
				t.Fatalf("rank %d: event %d read from one only", r, i)
			}
			if !okA {
				break
			}
			if x, y := a.Event(), c.Event(); x.String() != y.String() || x.Enter != y.Enter || x.Exit != y.Exit {
				t.Fatalf("rank %d event %d: %v (%d-%d), read %v (%d-%d)", r, i, x, x.Enter, x.Exit, y, y.Enter, y.Exit)
			}
		}
		if err := errors.Join(a.Err(), c.Err()); err != nil {
			t.Fatal(err)
		}
	}
}

// clusterBlock returns where cluster block i of file b starts and ends.
func clusterBlock(b []byte, i int) (off, end int) {
	off = 16
	for k := 0; k < 2+i; k++ { // the metadata, the trace header, the clusters before
		off += 8 + int(binary.LittleEndian.Uint32(b[off:]))
	}
	return off, off + 8 + int(binary.LittleEndian.Uint32(b[off:]))
}

// withCluster returns file b with cluster block i's body replaced.
func withCluster(t *testing.T, b []byte, i int, body []byte) []byte {
	t.Helper()
	off, end := clusterBlock(b, i)
	out := append(bytes.Clone(b[:off]), appendBlock(nil, body)...)
	return append(out, b[end:]...)
}

// TestEventsShare: the readers of a file's clusters kept as events share
// their distinct events, as the readers of one ktr file do.
func TestEventsShare(t *testing.T) {
	tr, err := prsd.Build(mixed(), [][]int32{{0, 1, 2, 3}, {4, 5}, {6, 7}}, prsd.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	b, err := Encode(tr)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	x, okX := back.Clusters[1].Events.(*ktr.Source)
	y, okY := back.Clusters[2].Events.(*ktr.Source)
	if !okX || !okY {
		t.Fatalf("clusters 1 and 2 kept as events: %v, %v; want both", okX, okY)
	}
	if !x.Shares(y) {
		t.Error("the clusters' events do not share their readers' distinct events")
	}
}

// TestEventsClusterErrors: a cluster's events that hold another
// cluster's ranks, or other metadata, or that a version 3 file has, are
// refused with the byte offset; a damaged chunk of them is reported when
// its rank is read, naming the file's byte.
func TestEventsClusterErrors(t *testing.T) {
	src, tr := mixedBuilt(t)
	good := mustEncode(t, tr)
	stream := func(s trace.Source) []byte { // as the file writes it
		var w bytes.Buffer
		if err := ktr.Encode(&w, trace.Rounded(s, tr.TimeError), eventsOptions); err != nil {
			t.Fatal(err)
		}
		return w.Bytes()
	}
	body := func(events []byte) []byte {
		return append(append(appendRanklist(nil, prsd.NewRanklist([]int32{4, 5, 6, 7})), 0), events...)
	}
	other := mixed()
	other.Meta().Attrs["program"] = "another"
	loops, _, _, err := encode(tr, 3)
	if err != nil {
		t.Fatal(err)
	}
	v3 := withCluster(t, loops, 1, body(stream(clusterSource{tr, 1})))
	for _, c := range []struct {
		name string
		b    []byte
		want string
	}{
		{"every rank's events", withCluster(t, good, 1, body(stream(src))), "hold rank 0's, which is in cluster 0"},
		{"other metadata", withCluster(t, good, 1, body(stream(other))), "its events' metadata is not the file's"},
		{"version 3", v3, "bytes after the cluster's items"},
		{"truncated events", withCluster(t, good, 1, body(stream(src)[:100])), "its events: "},
	} {
		_, err := Decode(c.b)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "byte ") {
			t.Errorf("%s: %v, want %q and a byte offset", c.name, err, c.want)
		}
	}
	// A flipped byte inside a chunk's payload: found when rank 4 is read.
	ev := stream(clusterSource{tr, 1})
	at := bytes.Index(good, ev)
	if at < 0 {
		t.Fatal("the cluster's events are not in the file")
	}
	bad := bytes.Clone(good)
	bad[at+len(ev)/2] ^= 0x40
	back, err := Decode(fixChecksums(bad))
	if err != nil {
		t.Fatalf("the damage is in a chunk, read with its rank: %v", err)
	}
	failed := false
	for r := 4; r < 8 && !failed; r++ {
		rd, _ := back.OpenRank(r)
		for rd.Next() {
		}
		if err := rd.Err(); err != nil {
			failed = true
			if !strings.Contains(err.Error(), "the compressed trace: byte ") {
				t.Errorf("rank %d: %v, want the file's byte offset", r, err)
			}
		}
	}
	if !failed {
		t.Error("a damaged chunk read without error")
	}
}

// TestCompressedItems: a cluster's items in the zstd form read as the
// same trace; a frame that expands to more or fewer bytes than announced,
// or an announcement beyond 64 times the frame, is refused.
func TestCompressedItems(t *testing.T) {
	src, tr := mixedBuilt(t)
	rl := appendRanklist(nil, prsd.NewRanklist([]int32{0, 1, 2, 3}))
	cl := &tr.Clusters[0]
	items := newItemsWriter(siteTable(tr, make([][]byte, len(tr.Clusters))), cl.Ranks.Ranks(), Version).cluster(nil, cl.Items)
	frame := zstdEncoder().EncodeAll(items, nil)
	good := mustEncode(t, tr)
	with := func(n int, frame []byte) []byte {
		body := binary.AppendUvarint(append(bytes.Clone(rl), formZstd), uint64(n))
		return withCluster(t, good, 0, append(body, frame...))
	}
	back, err := Decode(with(len(items), frame))
	if err != nil {
		t.Fatal(err)
	}
	if err := prsd.Verify(src, back); err != nil {
		t.Error(err)
	}
	for _, c := range []struct {
		name string
		b    []byte
		want string
	}{
		{"fewer bytes", with(len(items)+1, frame), "the zstd frame of the items"},
		{"more bytes", with(len(items)-1, frame), "more than the"}, // within the decoder's slack
		{"more bytes past the slack", with(len(items)-zstdSlack-1, frame), "more than the"},
		{"beyond the ratio", with(maxZstdRatio*len(frame)+1, frame), "expected 1 to 64 times as many"},
		{"not a frame", with(len(items), items), "the zstd frame of the items"},
	} {
		_, err := Decode(c.b)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "byte ") {
			t.Errorf("%s: %v, want %q and a byte offset", c.name, err, c.want)
		}
	}
}

// TestBuildSettles: Build chooses between a cluster's loops and its
// events as its last member is merged, as Encode chooses: the irregular
// cluster keeps its events and no structure, the regular one its loops,
// and the file is the one Encode writes of prsd.Build's trace.
func TestBuildSettles(t *testing.T) {
	src, tr := mixedBuilt(t)
	settled, err := Build(src, [][]int32{{0, 1, 2, 3}, {4, 5, 6, 7}}, prsd.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	loops, events := &settled.Clusters[0], &settled.Clusters[1]
	if !loops.Settled || loops.Items == nil || loops.Columns != nil {
		t.Errorf("regular cluster: settled %v, %d items, %d bytes of columns; want its loops", loops.Settled, len(loops.Items), len(loops.Columns))
	}
	if !events.Settled || events.Items != nil || events.Events == nil || events.Columns == nil {
		t.Errorf("irregular cluster: settled %v, %d items, events %v, %d bytes of columns; want its events and no structure",
			events.Settled, len(events.Items), events.Events != nil, len(events.Columns))
	}
	if got, want := mustEncode(t, settled), mustEncode(t, tr); !bytes.Equal(got, want) {
		t.Errorf("Build's file (%d bytes) differs from Encode's of prsd.Build's trace (%d bytes)", len(got), len(want))
	}
}
