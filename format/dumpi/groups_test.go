package dumpi

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"kairos/internal/testenv"
	"kairos/trace"
)

// TestGroupOp computes each group call's group of world ranks as MPI
// defines it: the ranks' order in the first group kept, a union's new
// members in the second group's order, out-of-range ranks and bad
// triples refused.
func TestGroupOp(t *testing.T) {
	g, g2 := []int32{7, 3, 5, 1, 9}, []int32{1, 4, 7, 8}
	for _, c := range []struct {
		name  string
		label int
		ranks []int32
		want  []int32
		ok    bool
	}{
		{"incl", lGroupIncl, []int32{4, 0, 2}, []int32{9, 7, 5}, true},
		{"incl out of range", lGroupIncl, []int32{0, 5}, nil, false},
		{"excl", lGroupExcl, []int32{3, 0}, []int32{3, 5, 9}, true},
		{"excl all", lGroupExcl, []int32{0, 1, 2, 3, 4}, nil, true},
		{"range incl", lGroupRangeIncl, []int32{0, 4, 2, 3, 1, -2}, []int32{7, 5, 9, 1, 3}, true},
		{"range excl", lGroupRangeExcl, []int32{1, 3, 1}, []int32{7, 9}, true},
		{"range of stride 0", lGroupRangeIncl, []int32{0, 4, 0}, nil, false},
		{"range out of range", lGroupRangeIncl, []int32{3, 5, 1}, nil, false},
		{"range, not triples", lGroupRangeExcl, []int32{0, 1}, nil, false},
		{"union", lGroupUnion, nil, []int32{7, 3, 5, 1, 9, 4, 8}, true},
		{"intersect", lGroupIntersect, nil, []int32{7, 1}, true},
		{"difference", lGroupDiff, nil, []int32{3, 5, 9}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, ok := groupOp(&commOp{label: c.label, ranks: c.ranks}, g, g2)
			if ok != c.ok || !slices.Equal(got, c.want) {
				t.Errorf("got %v, %v; want %v, %v", got, ok, c.want, c.ok)
			}
		})
	}
}

// BenchmarkGroupsAtScale opens a trace of P ranks that each make the
// group of MPI_COMM_WORLD, exclude rank 0 from it, take its union with
// itself and make a communicator of it: group calls whose groups hold
// nearly every rank, the communicator pass's work and memory for them.
func BenchmarkGroupsAtScale(b *testing.B) {
	for _, p := range []int{1024, 4096} {
		b.Run(fmt.Sprint(p), func(b *testing.B) {
			ws := writers(p)
			for _, w := range ws {
				w.call(lInit, 0, nil)
				w.call(lCommGroup, commWorld, 7)
				w.call(lGroupExcl, 7, 1, []int32{0}, 8)
				w.call(lGroupUnion, 8, 8, 9)
				w.call(lCommCreate, commWorld, 9, 10)
				w.call(lFinalize)
			}
			benchOpen(b, ws, func(src *Trace) error {
				if len(src.Meta().Comms) == 0 {
					return errors.New("no communicator made")
				}
				return nil
			})
		})
	}
}

// BenchmarkOpenAtScale opens and reads a trace of 4,096 ranks that each
// duplicate MPI_COMM_WORLD, split it in 64, make a 64x64 Cartesian grid
// and its rows, and make 80 collectives on them: what every verb pays
// before its own work (opening 4,096 files, their index and footer, the
// communicator pass, the events).
func BenchmarkOpenAtScale(b *testing.B) {
	const p = 4096
	ws := writers(p)
	for r, w := range ws {
		w.call(lInit, 1, []string{"prog"})
		w.call(lCommDup, commWorld, 4)
		w.call(lCommSplit, commWorld, r%64, -r, 5)
		w.call(lCartCreate, commWorld, 2, []int32{p / 64, 64}, []int32{0, 0}, 0, 6)
		w.call(lCartSub, 2, 6, []int32{0, 1}, 7)
		for range 20 {
			w.call(lAllreduce, 1, 9, 3, 4)
			w.call(lAllreduce, 1, 9, 3, 5)
			w.call(lAllreduce, 1, 9, 3, 7)
			w.call(lBcast, 1, 9, 0, 7)
		}
		w.call(lFinalize)
	}
	benchOpen(b, ws, func(src *Trace) error {
		return trace.ForEach(src, func(int, int, *trace.Event) error { return nil })
	})
}

// benchOpen writes the ranks' files, then opens the trace and uses it
// b.N times.
func benchOpen(b *testing.B, ws []*binWriter, use func(*Trace) error) {
	meta := writeTrace(b, b.TempDir(), ws)
	b.ReportAllocs()
	for b.Loop() {
		src, err := Open(meta)
		if err == nil {
			err = use(src)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
}

// TestSmallBuffers reads the samples and a synthetic trace of long calls
// through readers' buffers of a few bytes (records cut at every place,
// most longer than the buffer): the same events as with the default.
func TestSmallBuffers(t *testing.T) {
	budget, least := readBudget, minRead
	t.Cleanup(func() { readBudget, minRead = budget, least })
	events := func(t *testing.T, path string) []trace.Event {
		src, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		var evs []trace.Event
		if err := trace.ForEach(src, func(_, _ int, e *trace.Event) error { evs = append(evs, e.Clone()); return nil }); err != nil {
			t.Fatal(err)
		}
		return evs
	}
	ws := writers(2)
	for r, w := range ws {
		w.call(lInit, 1, []string{"prog"})
		w.call(lAlltoallv, 2, []int32{1, 1}, []int32{0, 1}, 14, []int32{2, 2}, []int32{0, 2}, 9, commWorld)
		w.call(lSend, 1, 5, 1-r, 3, commWorld)
		w.call(lRecv, 1, 5, 1-r, 3, commWorld, []status{{bytes: 4, source: int32(1 - r), tag: 3}})
		w.call(lFinalize)
	}
	same := func(t *testing.T, path string) {
		readBudget, minRead = budget, least
		want := events(t, path)
		for _, n := range []int{1, 24, 100} {
			readBudget, minRead = 0, n
			if got := events(t, path); !reflect.DeepEqual(got, want) {
				t.Errorf("%s through buffers of %d bytes: %d events differ from the %d read with the default", path, n, len(got), len(want))
			}
		}
	}
	synthetic := writeTrace(t, t.TempDir(), ws)
	t.Run("synthetic", func(t *testing.T) { same(t, synthetic) })
	for _, name := range samples {
		t.Run(name, func(t *testing.T) { same(t, testenv.Shared(t, "traces/dumpi/"+name)) })
	}
}
