package otf2

import (
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"kairos/check"
	"kairos/internal/tracertest"
	"kairos/trace"
)

// TestDerivedAlltoallv: the matrix derived from random totals (rows the
// senders', columns the receivers', of equal sums) has every row and
// column adding up to its total, whatever the sizes (up to 2^40 bytes),
// and every cell within one byte a member of the proportional share
// S_i·R_j/T but for the leftovers, fewer than n per row.
func TestDerivedAlltoallv(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 300 {
		n := 1 + rng.IntN(12)
		in := &vinst{kind: trace.Alltoallv, a: make([]int64, n), b: make([]int64, n)}
		scale := int64(1) << rng.IntN(41)
		var total int64
		for i := range n {
			if rng.IntN(4) > 0 {
				in.a[i] = rng.Int64N(scale + 1)
			}
			total += in.a[i]
		}
		// The columns: the same total, split at random.
		left := total
		for j := range n - 1 {
			in.b[j] = rng.Int64N(left + 1)
			left -= in.b[j]
		}
		in.b[n-1] = left
		rows := make([][]int64, n)
		for i := range n {
			rows[i] = in.row(i)
			if sum(rows[i]) != in.a[i] {
				t.Fatalf("trial %d: row %d sums to %d, want %d (%v / %v)", trial, i, sum(rows[i]), in.a[i], in.a, in.b)
			}
		}
		for j := range n {
			col := in.col(j)
			for i := range n {
				if col[i] != rows[i][j] {
					t.Fatalf("trial %d: cell %d,%d is %d in the row, %d in the column", trial, i, j, rows[i][j], col[i])
				}
			}
			if sum(col) != in.b[j] {
				t.Fatalf("trial %d: column %d sums to %d, want %d", trial, j, sum(col), in.b[j])
			}
		}
	}
}

// TestDerivedCountsOfRealRun records the irregular v-collectives of
// capture/testdata/cases.c with Kairos' tracer and reads the archive as
// another writer's (the vectors derived from the totals): the trace
// checks (every member sends and receives what the others say), the
// gatherv's, scatterv's, allgatherv's and reduce_scatter's vectors are
// the recorded ones, and each alltoallv sends and receives each member's
// recorded totals; the Meta says the counts are derived.
func TestDerivedCountsOfRealRun(t *testing.T) {
	m := tracertest.OpenMPI
	dir := t.TempDir()
	lib := m.Tracer(t, dir, true)
	prog := m.Compile(t, dir, tracertest.Testdata("cases.c"))
	m.Launch(t, tracertest.Recording{Lib: lib, Trace: filepath.Join(dir, "t"), Format: "otf2", NP: 4, Dir: dir}, prog, "vcoll")
	exact, err := open(filepath.Join(dir, "t", "traces.otf2"), true)
	if err != nil {
		t.Fatal(err)
	}
	derived, err := open(filepath.Join(dir, "t", "traces.otf2"), false)
	if err != nil {
		t.Fatal(err)
	}
	if exact.Meta().Attrs[AttrDerivedCounts] != "" || derived.Meta().Attrs[AttrDerivedCounts] == "" {
		t.Errorf("derived counts noted %q with the attributes, %q without", exact.Meta().Attrs[AttrDerivedCounts], derived.Meta().Attrs[AttrDerivedCounts])
	}
	if d := derived.Defects(); len(d) > 0 {
		t.Errorf("defects: %v", d)
	}
	if rep, err := check.Check(derived, check.Options{Protocol: check.SimGrid}); err != nil || !rep.OK() {
		t.Fatalf("check: %v %+v", err, rep)
	}
	colls := func(s *Source) [][]trace.Event {
		out := make([][]trace.Event, s.NumRanks())
		if err := trace.ForEach(s, func(r, _ int, e *trace.Event) error {
			if e.Kind.IsCollective() {
				out[r] = append(out[r], e.Clone())
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	want, got := colls(exact), colls(derived)
	for r := range want {
		if len(got[r]) != len(want[r]) {
			t.Fatalf("rank %d: %d collectives derived, %d read", r, len(got[r]), len(want[r]))
		}
		for i, w := range want[r] {
			g := got[r][i]
			if w.Kind == trace.Alltoallv {
				if sum(g.SendCounts) != sum(w.SendCounts) || sum(g.RecvCounts) != sum(w.RecvCounts) {
					t.Errorf("rank %d's alltoallv #%d: derived %v %v, totals %d %d", r, i, g.SendCounts, g.RecvCounts, sum(w.SendCounts), sum(w.RecvCounts))
				}
				continue
			}
			if !slices.Equal(g.SendCounts, w.SendCounts) || !slices.Equal(g.RecvCounts, w.RecvCounts) {
				t.Errorf("rank %d's %s #%d: derived %v %v, recorded %v %v", r, w.Kind, i, g.SendCounts, g.RecvCounts, w.SendCounts, w.RecvCounts)
			}
		}
	}
}
