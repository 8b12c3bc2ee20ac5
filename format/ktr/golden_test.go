package ktr

import (
	"flag"
	"fmt"
	"testing"

	"kairos/trace"
)

var update = flag.Bool("update", false, "rewrite the testdata file of the current version")

// goldenTraces are the traces of the golden files, by version, and the
// chunk size they were written with: version 2's repeats its events, so
// that its chunks have both forms; version 3's ranks 0 and 1 have
// chunks of more distinct events than version 2 allowed.
var goldenTraces = map[int]struct {
	trace     func() *trace.Trace
	chunkSize int
}{
	1: {allFields, 1024},
	2: {func() *trace.Trace { return repeatedFields(12) }, 1024},
	3: {manyDistinct, 64 << 10},
	4: {shiftedTimes, 64 << 10},
}

// shiftedTimes is manyDistinct and a fifth rank that computes 400 times,
// its gaps and durations 1 to 255 times 2^10 to 2^30 ps, as times rounded
// to their 8 high bits are: a chunk the writer keeps in the shifted time
// layout.
func shiftedTimes() *trace.Trace {
	base := manyDistinct()
	t := trace.New(base.NumRanks()+1, *base.Meta())
	copy(t.Ranks, base.Ranks)
	x, at := uint32(1), trace.Time(1)<<40
	next := func() trace.Time {
		x = x*1664525 + 1013904223
		return trace.Time(x>>24|1) << (10 + x>>8%21)
	}
	for range 400 {
		e := trace.NewEvent(trace.Compute)
		e.Compute, e.HasTime = 1e6, true
		e.Enter = at + next()
		e.Exit = e.Enter + next()
		at = e.Exit
		t.Ranks[base.NumRanks()].Append(&e)
	}
	return t
}

// manyDistinct is allFields after 300 distinct sends repeated 80 times
// on ranks 0 and 1.
func manyDistinct() *trace.Trace {
	base, sends := allFields(), distinctSends(300, 80, 0)
	t := trace.New(base.NumRanks(), *base.Meta())
	for r := range base.NumRanks() {
		for _, src := range []*trace.Trace{sends, base} {
			if r >= src.NumRanks() {
				continue
			}
			evs, _ := events(src, r)
			for i := range evs {
				t.Ranks[r].Append(&evs[i])
			}
		}
	}
	return t
}

// TestGolden reads a file of each version written by an earlier build, so
// that a change which breaks reading existing files cannot go unnoticed.
// Run with -update only for a deliberate format change (and a new
// version): it writes the current version's file.
func TestGolden(t *testing.T) {
	for v := 1; v <= Version; v++ {
		path := fmt.Sprintf("testdata/v%d.ktr", v)
		g := goldenTraces[v]
		want := g.trace()
		if *update && v == Version {
			if err := WriteOptions(path, want, Options{ChunkSize: g.chunkSize}); err != nil {
				t.Fatal(err)
			}
		}
		src, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if int(src.version) != v {
			t.Errorf("%s: version %d", path, src.version)
		}
		sameTrace(t, src, want)
		if src.NumChunks(0) < 2 {
			t.Errorf("%s: rank 0 has %d chunks, want several", path, src.NumChunks(0))
		}
		c := chunkFormsOf(t, src)
		if v >= 2 && (c.tmpl == 0 || c.tmpl == c.chunks) {
			t.Errorf("%s: %d of %d chunks in the templates form, want some", path, c.tmpl, c.chunks)
		}
		if v >= 3 && c.most <= maxTemplatesV2 {
			t.Errorf("%s: at most %d distinct events in a chunk, want more than version 2's %d", path, c.most, maxTemplatesV2)
		}
		if v >= 4 && (c.shifted == 0 || c.shifted == c.chunks) {
			t.Errorf("%s: %d of %d chunks in the shifted time layout, want some", path, c.shifted, c.chunks)
		}
	}
}
