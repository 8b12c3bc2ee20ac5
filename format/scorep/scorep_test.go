package scorep

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"kairos/trace"
)

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
		// In place is the only way a root counts nothing the other way:
		// its block is its n-1 members', whatever splits n ways.
		{"reduce in place, root, 8 doubles", trace.Reduce, 0, 3 * 64, true, false, 0, 64, 64},
		{"gather in place, root, 8 doubles", trace.Gather, 0, 3 * 64, true, false, 0, 64, 64},
		{"scatter in place, root, 8 doubles", trace.Scatter, 3 * 64, 0, true, false, 0, 64, 64},
		{"bcast, root without its own block, 12 doubles", trace.Bcast, n * 96, 0, true, false, 0, 96, 96},
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
		s, r := Volumes(c.k, Counted{Sent: c.sent, Recv: c.recv, Root: c.root, Block: c.block, Me: c.me, N: members,
			InPlaceAware: true})
		if s != c.wantSent || r != c.wantRecv {
			t.Errorf("%s: %d and %d bytes, want %d and %d", c.name, s, r, c.wantSent, c.wantRecv)
		}
	}
	// Before Score-P 8 (and from Kairos' tracer), n blocks where n divides.
	for _, c := range []struct {
		total, want int64
	}{{3 * 64, 48}, {n * 12, 12}, {3 * 8, 6}, {3 * 401, 401}} {
		if got, _ := Split(c.total, n, false); got != c.want {
			t.Errorf("Split(%d, %d) without in-place awareness: %d, want %d", c.total, n, got, c.want)
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
		if got := Spread(c.total, c.n); !slices.Equal(got, c.want) {
			t.Errorf("Spread(%d, %d) = %v, want %v", c.total, c.n, got, c.want)
		}
	}
	ev := trace.NewEvent(trace.Alltoallv)
	ev.SendBytes, ev.RecvBytes = 8, 12
	SpreadCounts(&ev, 4)
	if !slices.Equal(ev.SendCounts, []int64{2, 2, 2, 2}) || !slices.Equal(ev.RecvCounts, []int64{3, 3, 3, 3}) {
		t.Errorf("alltoallv counts %v %v", ev.SendCounts, ev.RecvCounts)
	}
}

// TestDerivedAlltoallv: the matrix derived from random totals (rows the
// senders', columns the receivers', of equal sums) has every row and
// column adding up to its total, whatever the sizes (up to 2^40 bytes),
// and every cell within one byte a member of the proportional share
// S_i·R_j/T but for the leftovers, fewer than n per row.
func TestDerivedAlltoallv(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 300 {
		n := 1 + rng.IntN(12)
		in := NewInstance(trace.Alltoallv, n)
		scale := int64(1) << rng.IntN(41)
		var total int64
		for i := range n {
			if rng.IntN(4) > 0 {
				in.A[i] = rng.Int64N(scale + 1)
			}
			total += in.A[i]
		}
		// The columns: the same total, split at random.
		left := total
		for j := range n - 1 {
			in.B[j] = rng.Int64N(left + 1)
			left -= in.B[j]
		}
		in.B[n-1] = left
		rows := make([][]int64, n)
		for i := range n {
			rows[i] = in.row(i)
			if Sum(rows[i]) != in.A[i] {
				t.Fatalf("trial %d: row %d sums to %d, want %d (%v / %v)", trial, i, Sum(rows[i]), in.A[i], in.A, in.B)
			}
		}
		for j := range n {
			col := in.col(j)
			for i := range n {
				if col[i] != rows[i][j] {
					t.Fatalf("trial %d: cell %d,%d is %d in the row, %d in the column", trial, i, j, rows[i][j], col[i])
				}
			}
			if Sum(col) != in.B[j] {
				t.Fatalf("trial %d: column %d sums to %d, want %d", trial, j, Sum(col), in.B[j])
			}
		}
	}
}

// TestDerivedRootBlock derives a gatherv's and a scatterv's vectors at
// their root, rank 1 of 4, from the members' totals: the root's own block
// is what its record counted less the others' blocks, 0 for a root that
// keeps none (DOLFINx's mesh distribution), where Volumes had guessed an
// in-place call's mean of 10; a record that counts less than the others'
// keeps the guess.
func TestDerivedRootBlock(t *testing.T) {
	for _, tc := range []struct {
		name  string
		kind  trace.Kind
		total int64 // the root's counted bytes: scatterv sent, gatherv received
		want  []int64
	}{
		{"scatterv, no own block", trace.Scatterv, 32, []int64{4, 0, 12, 16}},
		{"scatterv, own block", trace.Scatterv, 40, []int64{4, 8, 12, 16}},
		{"scatterv, nothing counted", trace.Scatterv, 0, []int64{4, 10, 12, 16}},
		{"gatherv, no own block", trace.Gatherv, 32, []int64{4, 0, 12, 16}},
		{"gatherv, own block", trace.Gatherv, 40, []int64{4, 8, 12, 16}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := NewInstance(tc.kind, 4)
			in.Root = 1
			blocks := []int64{4, 10, 12, 16}
			if tc.kind == trace.Scatterv {
				in.B = blocks
				in.A[1] = tc.total
			} else {
				in.A = blocks
				in.B[1] = tc.total
			}
			ev := trace.Event{Kind: tc.kind}
			if !in.Derive(&ev, 1) {
				t.Fatal("not derived")
			}
			got, send, recv := ev.SendCounts, Sum(tc.want), tc.want[1]
			if tc.kind == trace.Gatherv {
				got, send, recv = ev.RecvCounts, tc.want[1], Sum(tc.want)
			}
			if !slices.Equal(got, tc.want) || ev.SendBytes != send || ev.RecvBytes != recv {
				t.Errorf("counts %v, %d sent, %d received; want %v, %d, %d", got, ev.SendBytes, ev.RecvBytes, tc.want, send, recv)
			}
		})
	}
}

// TestResolveInPlace: an allgatherv's or reduce_scatter's members' records
// (Score-P 8 on) together say whether it was in place, where each alone
// could be either (Split reads 96 bytes over 4 members as 4 blocks of 24,
// and 48 as 3 of 16): exactly one reading makes every member's vector sum
// agree. Blocks all equal fit both, and records that fit neither are left.
func TestResolveInPlace(t *testing.T) {
	for _, tc := range []struct {
		name       string
		kind       trace.Kind
		sent, recv []int64
		want       []int64 // nil: not resolved
	}{
		{"allgatherv in place", trace.Allgatherv, []int64{96, 192, 288, 384}, []int64{288, 256, 224, 192}, []int64{32, 64, 96, 128}},
		{"allgatherv", trace.Allgatherv, []int64{48, 96, 144, 192}, []int64{120, 120, 120, 120}, []int64{12, 24, 36, 48}},
		{"reduce_scatter in place", trace.ReduceScatter, []int64{288, 256, 224, 192}, []int64{96, 192, 288, 384}, []int64{32, 64, 96, 128}},
		{"reduce_scatter", trace.ReduceScatter, []int64{120, 120, 120, 120}, []int64{48, 96, 144, 192}, []int64{12, 24, 36, 48}},
		{"blocks all equal", trace.Allgatherv, []int64{96, 96, 96, 96}, []int64{96, 96, 96, 96}, nil},
		{"members that disagree", trace.Allgatherv, []int64{96, 192, 288, 384}, []int64{288, 256, 224, 100}, nil},
		{"not a v-collective of blocks", trace.Alltoallv, []int64{96, 192, 288, 384}, []int64{288, 256, 224, 192}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := NewInstance(tc.kind, 4)
			before := []int64{1, 2, 3, 4}
			copy(in.A, before)
			ok := in.ResolveInPlace(tc.sent, tc.recv)
			if want := tc.want != nil; ok != want {
				t.Fatalf("resolved %v, want %v (blocks %v)", ok, want, in.A)
			}
			want := tc.want
			if want == nil {
				want = before
			}
			if !slices.Equal(in.A, want) {
				t.Errorf("blocks %v, want %v", in.A, want)
			}
		})
	}
}
