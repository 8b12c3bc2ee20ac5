package cluster

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"kairos/internal/testenv"
	"kairos/prsd"
	"kairos/trace"
	"kairos/workload"
)

// call is a shorthand event for the tests: an MPI call of kind k at site
// with partner p (a world rank, or trace.NoRank) and bytes sent or
// received.
func call(k trace.Kind, site uint64, p int32, bytes int64) trace.Event {
	e := trace.NewEvent(k)
	e.CallSite, e.Partner = site, p
	switch {
	case k.IsSend():
		e.SendBytes = bytes
	case k.IsRecv():
		e.RecvBytes = bytes
	}
	return e
}

// traceOf builds a trace of the given ranks' events.
func traceOf(ranks ...[]trace.Event) *trace.Trace {
	tr := trace.New(len(ranks), trace.NewMeta())
	for r, evs := range ranks {
		for i := range evs {
			tr.Ranks[r].Append(&evs[i])
		}
	}
	return tr
}

func signAll(t *testing.T, src trace.Source, opt SignOptions) []Signatures {
	t.Helper()
	sigs, err := SignAll(src, opt)
	if err != nil {
		t.Fatal(err)
	}
	return sigs
}

// repeat returns n copies of body, in a row.
func repeat(n int, body ...trace.Event) []trace.Event {
	var out []trace.Event
	for range n {
		out = append(out, body...)
	}
	return out
}

// workloadSource returns a generated trace of kind (ranks and grid as
// given, zero: the kind's default) of iterations time steps.
func workloadSource(t *testing.T, kind string, ranks int, grid []int, iterations int, noisy bool) trace.Source {
	t.Helper()
	p, err := workload.Defaults(kind)
	if err != nil {
		t.Fatal(err)
	}
	if ranks > 0 || grid != nil {
		p.Ranks, p.Grid = ranks, grid
	}
	p.Iterations = iterations
	if kind == "cg" {
		p.Inner = 2
	}
	if noisy {
		p.Imbalance, p.Noise = 0.2, 0.05
	}
	src, err := workload.New(kind, p)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// clusterOf clusters src with opt.
func clusterOf(t *testing.T, src trace.Source, opt Options, sopt SignOptions) *Result {
	t.Helper()
	res, err := Cluster(signAll(t, src, sopt), opt)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestParamSignatureTable1 checks the bit layout of Bahmani and Mueller's
// Table 1: count in bits 0-15, relative destination 16-31 and source
// 32-47 (two's complement), datatypes 48-54, operations 55-61,
// communicators 62-63.
func TestParamSignatureTable1(t *testing.T) {
	cases := []struct {
		name             string
		count, dest, src float64
		types            uint64
		want             uint64
	}{
		{"count", 1234, 0, 0, 0, 1234},
		{"count saturates", 1e9, 0, 0, 0, 0xffff},
		{"destination +1", 0, 1, 0, 0, 1 << 16},
		{"source -1", 0, 0, -1, 0, 0xffff << 32},
		{"averages truncate", 0, 2.7, -2.7, 0, 2<<16 | 0xfffe<<32},
		{"types and communicators", 0, 0, 0, 1<<48 | 1<<62 | 1<<63, 1<<48 | 1<<62 | 1<<63},
		{"operations", 0, 0, 0, 1<<55 | 1<<61, 1<<55 | 1<<61},
	}
	for _, c := range cases {
		if got := ParamSignature(c.count, c.dest, c.src, c.types); got != c.want {
			t.Errorf("%s: %016x, want %016x", c.name, got, c.want)
		}
	}
	// From events: a rank 1 that sends 80 doubles to rank 2 and receives
	// 40 from rank 0 on MPI_COMM_WORLD: average count 60, destination +1,
	// source -1, the MPI_DOUBLE bit and the MPI_COMM_WORLD bit.
	send, recv := call(trace.Send, 1, 2, 640), call(trace.Recv, 2, 0, 320)
	send.SendType, recv.RecvType = trace.TypeDouble, trace.TypeDouble
	sigs := signAll(t, traceOf(nil, []trace.Event{send, recv}, nil), SignOptions{})
	if got, want := sigs[1].Param, uint64(60|1<<16|0xffff<<32|1<<(48+2)|1<<62); got != want {
		t.Errorf("rank 1: %016x, want %016x", got, want)
	}
	want := ParamKey{CountSum: 120, CountN: 2, DestSum: 1, DestN: 1, SrcSum: -1, SrcN: 1, Types: 1<<(48+2) | 1<<62}
	if sigs[1].Params != want {
		t.Errorf("rank 1: exact %+v, want %+v", sigs[1].Params, want)
	}
	// The operations: NAS MG's norms, an allreduce sum and one max (bits
	// 57 and 55); a user-defined one (61).
	sum, max, user := call(trace.Allreduce, 1, trace.NoRank, 0), call(trace.Allreduce, 2, trace.NoRank, 0), call(trace.Reduce, 3, 0, 0)
	sum.Op, max.Op, user.Op = trace.OpSum, trace.OpMax, trace.OpUser
	sigs = signAll(t, traceOf([]trace.Event{sum, max}, []trace.Event{user}), SignOptions{})
	if got := sigs[0].Param & opMask; got != 1<<57|1<<55 {
		t.Errorf("sum and max: operation bits %016x", got)
	}
	if got := sigs[1].Param & opMask; got != 1<<61 {
		t.Errorf("user-defined: operation bits %016x", got)
	}
}

// TestExactSignatures: what Table 1's 64 bits merge, the exact signatures
// keep apart: end-points of +1/3 and -1/3 on average (both truncated to
// 0), and counts above 65,535 elements (saturated).
func TestExactSignatures(t *testing.T) {
	var ranks [][]trace.Event
	for r := int32(0); r < 8; r++ {
		var evs []trace.Event
		switch r {
		case 2: // +1, -2, +2: +1/3
			evs = []trace.Event{call(trace.Send, 1, 3, 8), call(trace.Send, 2, 0, 8), call(trace.Send, 3, 4, 8)}
		case 5: // -1, -2, +2: -1/3
			evs = []trace.Event{call(trace.Send, 1, 4, 8), call(trace.Send, 2, 3, 8), call(trace.Send, 3, 7, 8)}
		case 0, 1:
			evs = []trace.Event{call(trace.Send, 4, r+6, 70000*int64(r+1))}
		}
		ranks = append(ranks, evs)
	}
	sigs := signAll(t, traceOf(ranks...), SignOptions{})
	if sigs[2].Param != sigs[5].Param || sigs[0].Param != sigs[1].Param {
		t.Fatalf("Table 1 told them apart: %x %x, %x %x", sigs[2].Param, sigs[5].Param, sigs[0].Param, sigs[1].Param)
	}
	if sigs[2].Params == sigs[5].Params || sigs[0].Params == sigs[1].Params {
		t.Errorf("exact signatures merged them: %+v %+v, %+v %+v", sigs[2].Params, sigs[5].Params, sigs[0].Params, sigs[1].Params)
	}
}

// TestCallPathSignature: the call path tells apart ranks whose calls
// differ in order (the NAS MG case the sequence factor is for) or in
// their loops' iteration counts, and folds loops so that a body repeated
// an even number of times does not cancel out.
func TestCallPathSignature(t *testing.T) {
	a, b, c := call(trace.Barrier, 11, trace.NoRank, 0), call(trace.Barrier, 22, trace.NoRank, 0), call(trace.Barrier, 33, trace.NoRank, 0)
	ranks := [][]trace.Event{
		{a, b, c},                  // 0
		{a, c, b},                  // 1: another order
		{a, b, c},                  // 2: as 0
		repeat(4, a, b),            // 3: four iterations
		repeat(6, a, b),            // 4: six
		append(repeat(4, a, b), c), // 5
		repeat(4, a, b),            // 6: as 3
		nil,                        // 7: no call
	}
	sigs := signAll(t, traceOf(ranks...), SignOptions{})
	same := [][2]int{{0, 2}, {3, 6}}
	for i := range sigs {
		for j := i + 1; j < len(sigs); j++ {
			want := slices.Contains(same, [2]int{i, j})
			if got := sigs[i].Path == sigs[j].Path; got != want {
				t.Errorf("ranks %d and %d: same exact path %v, want %v", i, j, got, want)
			}
			if got := sigs[i].CallPath == sigs[j].CallPath; got != want {
				t.Errorf("ranks %d and %d: same 64-bit call path %v, want %v", i, j, got, want)
			}
		}
	}
	if sigs[3].Folded != 3 || sigs[5].Folded != 4 {
		t.Errorf("folded lengths %d and %d, want 3 (a loop of a b) and 4", sigs[3].Folded, sigs[5].Folded)
	}
	if sigs[3].Loop != 4 {
		t.Errorf("loop signature %x, want 4", sigs[3].Loop)
	}
}

// TestNonPeriodicStencilNineClusters: on a non-periodic 2-D stencil of any
// grid from 3×3, the default method finds the grid's nine kinds of ranks
// (corners, edges, interior), each cluster's members alike; Table 1's
// truncated end-points merge the left and right edges (8 clusters).
func TestNonPeriodicStencilNineClusters(t *testing.T) {
	for _, grid := range [][]int{{3, 3}, {4, 4}, {5, 7}, {8, 8}} {
		p, _ := workload.Defaults("stencil2d")
		p.Grid, p.Ranks, p.Iterations, p.Periodic = grid, 0, 2, false
		src, err := workload.New("stencil2d", p)
		if err != nil {
			t.Fatal(err)
		}
		sigs := signAll(t, src, SignOptions{Reference: true})
		res, err := Cluster(sigs, DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Groups) != 9 {
			t.Errorf("%v: %d clusters, want 9", grid, len(res.Groups))
		}
		for _, g := range res.Groups {
			for _, r := range g.Members {
				if sigs[r].Reference != sigs[g.Rep].Reference {
					t.Errorf("%v: rank %d's calls differ from its head %d's", grid, r, g.Rep)
				}
			}
		}
		if grid[0] == 8 {
			opt := DefaultOptions()
			opt.Table1 = true
			if res, _ := Cluster(sigs, opt); len(res.Groups) != 8 {
				t.Errorf("%v: Table 1's signatures give %d clusters, the issue's 8", grid, len(res.Groups))
			}
		}
	}
}

// TestTable3ClusterCounts: Bahmani and Mueller's Table 3 at 16 processes
// for the Kairos generators whose communication follows the benchmark
// (main clusters, sub-clusters in all): Sweep3D and LU have nine main
// clusters (the corners, edges and interior of their wavefronts' 4x4
// grid) of one sub-cluster each, FT one of each, IS three main clusters
// (rank 0 receives no key in the verification, the last rank sends none)
// of one sub-cluster each, CG one main cluster (whose 16 ranks differ in
// their transpose partner: the filtering function keeps them together).
func TestTable3ClusterCounts(t *testing.T) {
	for _, c := range []struct {
		kind                string
		main, sub, clusters int
	}{{"sweep", 9, 9, 9}, {"lu", 9, 9, 9}, {"ft", 1, 1, 1}, {"is", 3, 3, 3}, {"cg", 1, 13, 1}} {
		res := clusterOf(t, workloadSource(t, c.kind, 16, nil, 2, false), DefaultOptions(), SignOptions{})
		if res.Main != c.main || res.Sub != c.sub || len(res.Groups) != c.clusters {
			t.Errorf("%s: %d main clusters, %d sub-clusters, %d clusters; want %d, %d, %d",
				c.kind, res.Main, res.Sub, len(res.Groups), c.main, c.sub, c.clusters)
		}
	}
}

// TestTable6ClusterCountsUnderScaling: as in Bahmani and Mueller's Table
// 6, the number of clusters of Sweep3D and LU (9) and FT (1) does not
// change from 16 to 1,024 processes.
func TestTable6ClusterCountsUnderScaling(t *testing.T) {
	sizes := []int{16, 64, 256}
	if testenv.Long() {
		sizes = append(sizes, 1024)
	}
	for _, c := range []struct {
		kind     string
		clusters int
	}{{"sweep", 9}, {"lu", 9}, {"ft", 1}} {
		for _, n := range sizes {
			if res := clusterOf(t, workloadSource(t, c.kind, n, nil, 2, false), DefaultOptions(), SignOptions{}); len(res.Groups) != c.clusters {
				t.Errorf("%s at %d ranks: %d clusters, Table 6: %d", c.kind, n, len(res.Groups), c.clusters)
			}
		}
	}
}

// TestTable4CGPlugin: with the CG plug-in, the transpose partners leave
// the signatures, and CG's sub-clusters grow as Table 4's (4, 8, 16, 64
// at 16 to 1,024 ranks), one per column of the process grid, sub-linearly,
// in one main cluster: npcols = 2^⌈log₂P/2⌉ (4, 8, 16, 32 at 16 to 1,024
// ranks; 8, 16, 32, 64 on the non-square grids of 32 to 2,048). Table 4's
// 64 at 1,024 is the columns of 2,048 ranks (docs/reduce.md). Without the
// plug-in, every rank but the transposition's fixed points is its own
// sub-cluster, past P/2: the filtering function engages and keeps them in
// one cluster.
func TestTable4CGPlugin(t *testing.T) {
	sizes := map[int]int{16: 4, 32: 8, 64: 8, 128: 16, 256: 16}
	if testenv.Long() {
		sizes[512], sizes[1024], sizes[2048] = 32, 32, 64
	}
	for n, want := range sizes {
		src := workloadSource(t, "cg", n, nil, 1, false)
		res := clusterOf(t, src, DefaultOptions(), SignOptions{Plugins: []string{"cg"}})
		if res.Main != 1 || res.Sub != want || len(res.Groups) != want {
			t.Errorf("cg at %d ranks with the plug-in: %d main clusters, %d sub-clusters, %d clusters; want 1, %d, %d", n, res.Main, res.Sub, len(res.Groups), want, want)
		}
		if bits.TrailingZeros(uint(n))%2 != 0 {
			continue // a non-square grid: fewer than P/2 sub-clusters without the plug-in (14 at 32 ranks)
		}
		res = clusterOf(t, src, DefaultOptions(), SignOptions{})
		if 2*res.Sub <= n || len(res.Groups) != 1 || res.Groups[0].Subs != res.Sub {
			t.Errorf("cg at %d ranks without the plug-in: %d sub-clusters, %d clusters (%d filtered)", n, res.Sub, len(res.Groups), res.Groups[0].Subs)
		}
		opt := DefaultOptions()
		opt.NoFilter = true
		if res := clusterOf(t, src, opt, SignOptions{}); len(res.Groups) != res.Sub {
			t.Errorf("cg at %d ranks unfiltered: %d clusters of %d sub-clusters", n, len(res.Groups), res.Sub)
		}
	}
}

// TestFilteringThreshold: the filtering function engages only past P/2
// sub-clusters (and past K).
func TestFilteringThreshold(t *testing.T) {
	// 24 ranks in one main cluster, sending to rank 0 s bytes: s distinct
	// counts over the ranks.
	for _, c := range []struct {
		distinct int
		filtered bool
	}{{12, false}, {13, true}, {5, false}} {
		var ranks [][]trace.Event
		for r := range 24 {
			bytes := int64(1000 * (1 + r%c.distinct) * 3)
			ranks = append(ranks, []trace.Event{call(trace.Bcast, 1, 0, 0), call(trace.Allreduce, 2, trace.NoRank, 0)})
			ranks[r][1].SendBytes = bytes
		}
		res := clusterOf(t, traceOf(ranks...), DefaultOptions(), SignOptions{})
		if got := len(res.Groups) == 1 && res.Groups[0].Subs == c.distinct; got != c.filtered || res.Sub != c.distinct {
			t.Errorf("%d sub-clusters of 24 ranks: %d clusters, filtered %v, want %v", res.Sub, len(res.Groups), got, c.filtered)
		}
	}
}

// TestCountRuleAverage: ranks of average counts within 5% of the
// sub-cluster's average join it, whatever their rank order: counts 100,
// 104, 108, 112 make one sub-cluster with the first two and one with
// the last two, however the ranks are numbered.
func TestCountRuleAverage(t *testing.T) {
	counts := []int64{100, 104, 108, 112}
	rng := rand.New(rand.NewPCG(5, 6))
	for range 6 {
		perm := rng.Perm(len(counts))
		var ranks [][]trace.Event
		for _, i := range perm {
			ranks = append(ranks, []trace.Event{call(trace.Allreduce, 1, trace.NoRank, 0)})
			ranks[len(ranks)-1][0].SendBytes = counts[i]
		}
		res := clusterOf(t, traceOf(ranks...), DefaultOptions(), SignOptions{})
		var got [][]int64
		for _, g := range res.Groups {
			var cs []int64
			for _, r := range g.Members {
				cs = append(cs, counts[perm[r]])
			}
			slices.Sort(cs)
			got = append(got, cs)
		}
		slices.SortFunc(got, func(a, b []int64) int { return int(a[0] - b[0]) })
		if fmt.Sprint(got) != "[[100 104] [108 112]]" {
			t.Errorf("ranks %v: sub-clusters %v", perm, got)
		}
	}
}

// TestAcurdionK: ACURDION's single and double step keep at most K
// clusters in all, on codes whose ranks differ (CG, MG, masterworker,
// stencils with noise and imbalance), and each cluster's merged
// structure gives every member its own calls back.
func TestAcurdionK(t *testing.T) {
	sizes := []int{64}
	if testenv.Long() {
		sizes = append(sizes, 256)
	}
	for _, kind := range []string{"cg", "mg", "masterworker", "stencil2d", "stencil3d"} {
		for _, n := range sizes {
			src := workloadSource(t, kind, n, nil, 2, true)
			sigs := signAll(t, src, SignOptions{})
			for _, m := range []Method{Acurdion, Acurdion2} {
				res, err := Cluster(sigs, Options{Method: m, K: 9})
				if err != nil {
					t.Fatal(err)
				}
				if len(res.Groups) > 9 || members(res) != n {
					t.Errorf("%s at %d ranks, %s: %d clusters of %d ranks", kind, n, m, len(res.Groups), members(res))
				}
				tr, err := prsd.Build(src, groupsOf(res), prsd.DefaultOptions())
				if err != nil {
					t.Fatal(err)
				}
				if err := prsd.Verify(src, tr); err != nil {
					t.Errorf("%s at %d ranks, %s: %v", kind, n, m, err)
				}
			}
		}
	}
}

func members(res *Result) int {
	n := 0
	for _, g := range res.Groups {
		n += len(g.Members)
	}
	return n
}

func groupsOf(res *Result) [][]int32 {
	var gs [][]int32
	for _, g := range res.Groups {
		gs = append(gs, g.Members)
	}
	return gs
}

// TestMethods clusters a small trace with every method: ranks 0-3 call
// alike with end-points +1 (ring), 4 and 5 call the same functions with
// other counts.
func TestMethods(t *testing.T) {
	ring := func(r int32, bytes int64) []trace.Event {
		return repeat(3, call(trace.Send, 1, (r+1)%4, bytes), call(trace.Recv, 2, (r+3)%4, bytes))
	}
	other := func(r int32, bytes int64) []trace.Event {
		return repeat(3, call(trace.Send, 1, r^1, bytes), call(trace.Recv, 2, r^1, bytes))
	}
	tr := traceOf(ring(0, 800), ring(1, 800), ring(2, 800), ring(3, 800), other(4, 8000), other(5, 8000))
	sigs := signAll(t, tr, SignOptions{Reference: true})
	for _, c := range []struct {
		opt  Options
		reps []int32
	}{
		// Rank 3 wraps around (+1 is -3), so does rank 0 on receive.
		{DefaultOptions(), []int32{0, 1, 3, 4, 5}},
		{Options{Method: Reference}, []int32{0, 1, 3, 4, 5}},
		// Over the radix tree 0 < (1 < 3, 4), (2 < 5): node 1 keeps
		// itself and 3, farthest in end-points (group 2, which outweighs
		// 4's other counts, group 1); node 0 keeps itself and 3, two
		// end-points away.
		{Options{Method: Acurdion, K: 2}, []int32{0, 3}},
		// One call path: the second step is the single step.
		{Options{Method: Acurdion2, K: 2}, []int32{0, 3}},
	} {
		res, err := Cluster(sigs, c.opt)
		if err != nil {
			t.Fatal(err)
		}
		var reps []int32
		for _, g := range res.Groups {
			reps = append(reps, g.Rep)
		}
		if !slices.Equal(reps, c.reps) || members(res) != 6 {
			t.Errorf("%s: heads %v of %d ranks, want %v", c.opt.Method, reps, members(res), c.reps)
		}
	}
	if _, err := Cluster(sigs, Options{Method: "kmeans"}); err == nil {
		t.Error("an unknown method was accepted")
	}
	if _, err := Cluster(signAll(t, tr, SignOptions{}), Options{Method: Reference}); err == nil {
		t.Error("the reference method ran without reference signatures")
	}
}

// TestAcurdion2KInTotal: with more call paths than K, the double step
// keeps K clusters in all (its first step merges call paths, whose calls
// the merged structures keep), and shares the K among the call-path
// clusters by their diversity.
func TestAcurdion2KInTotal(t *testing.T) {
	var ranks [][]trace.Event
	for r := range 24 {
		e := call(trace.Barrier, uint64(100+r%12), trace.NoRank, 0)
		s := call(trace.Send, 7, int32((r+1)%24), int64(8*(1+r%5)))
		q := call(trace.Recv, 8, int32((r+23)%24), int64(8*(1+(r+23)%5)))
		ranks = append(ranks, []trace.Event{e, s, q})
	}
	sigs := signAll(t, traceOf(ranks...), SignOptions{})
	for _, m := range []Method{Acurdion, Acurdion2} {
		res, err := Cluster(sigs, Options{Method: m, K: 9})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Groups) != 9 || members(res) != 24 {
			t.Errorf("%s: %d clusters of %d ranks, want 9 of 24", m, len(res.Groups), members(res))
		}
	}
}

// TestFarthestKeepsNoDuplicate: identical ranks make one cluster however
// large K is.
func TestFarthestKeepsNoDuplicate(t *testing.T) {
	evs := []trace.Event{call(trace.Barrier, 1, trace.NoRank, 0)}
	res := clusterOf(t, traceOf(evs, evs, evs, evs, evs), Options{Method: Acurdion, K: 9}, SignOptions{})
	if len(res.Groups) != 1 || len(res.Groups[0].Members) != 5 || len(res.Format) != 0 {
		t.Errorf("groups %+v, format %v", res.Groups, res.Format)
	}
}

// NAS FT's grid of ftN ranks, ftNP2 by ftNP2.
const ftN, ftNP2 = 16, 4

// ftGrid is the metadata of NAS FT's grid: its rows' communicators 1 to
// ftNP2, its columns' 10 to 9+ftNP2.
func ftGrid() trace.Meta {
	meta := trace.NewMeta()
	for i := range int32(ftNP2) {
		var row, col []int32
		for j := range int32(ftNP2) {
			row, col = append(row, i*ftNP2+j), append(col, j*ftNP2+i)
		}
		meta.Comms = append(meta.Comms, trace.Comm{ID: uint32(1 + i), Members: row}, trace.Comm{ID: uint32(10 + i), Members: col})
	}
	return meta
}

// ftCalls are rank r's splits of the world into its row and column of
// NAS FT's grid, and an all-to-all in its row.
func ftCalls(r int32) (rowSplit, colSplit, a2a trace.Event) {
	rowSplit, colSplit = call(trace.CommSplit, 1, trace.NoRank, 0), call(trace.CommSplit, 2, trace.NoRank, 0)
	rowSplit.NewComm, colSplit.NewComm = uint32(1+r/ftNP2), uint32(10+r%ftNP2)
	a2a = call(trace.Alltoall, 3, trace.NoRank, 0)
	a2a.Comm, a2a.SendBytes, a2a.RecvBytes = uint32(1+r/ftNP2), 64, 64
	return rowSplit, colSplit, a2a
}

// TestFTPlugin: NAS FT's two splits into the rows and columns of a 4×4
// grid give every rank its own colour and key; the FT plug-in explains
// them, and the ranks share one cluster.
func TestFTPlugin(t *testing.T) {
	tr := trace.New(ftN, ftGrid())
	for r := range int32(ftN) {
		rowSplit, colSplit, a2a := ftCalls(r)
		for _, e := range []trace.Event{rowSplit, colSplit, a2a} {
			tr.Ranks[r].Append(&e)
		}
	}
	opt := Options{Method: Acurdion, K: 9}
	if res := clusterOf(t, tr, opt, SignOptions{}); len(res.Groups) < 2 || !slices.Contains(res.Format, "color") {
		t.Errorf("without the plug-in: %d clusters, differing %v", len(res.Groups), res.Format)
	}
	if res := clusterOf(t, tr, opt, SignOptions{Plugins: []string{"ft"}}); len(res.Groups) != 1 {
		t.Errorf("with the plug-in: %d clusters, differing %v", len(res.Groups), res.Format)
	}
	full, err := prsd.Build(tr, nil, prsd.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if err := prsd.Verify(tr, full); err != nil {
		t.Fatal(err)
	}
	for _, n := range full.Clusters[0].Items {
		if len(n.Vars) != 1 {
			t.Errorf("%s: %d variants, want 1 (communicators by family)", n.Kind, len(n.Vars))
		}
	}
}

// TestExpand: members replay their representative's events with
// point-to-point end-points moved by their offset, roots and collectives
// as they are (the papers' reduction, for Table II).
func TestExpand(t *testing.T) {
	bcast := call(trace.Bcast, 3, 0, 0)
	rep := []trace.Event{call(trace.Send, 1, 2, 8), call(trace.Recv, 2, 0, 8), bcast}
	tr := traceOf(rep)
	x, err := Expand(tr, 4, []Group{{Rep: 1, Members: []int32{0, 1, 2, 3}}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	if err := trace.ForEach(x, func(r, _ int, e *trace.Event) error {
		got = append(got, fmt.Sprintf("%d:%s", r, e))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want := "0:send peer=1 tag=0 send=8 0:recv peer=3 tag=0 recv=8 0:bcast root=0 " +
		"1:send peer=2 tag=0 send=8 1:recv peer=0 tag=0 recv=8 1:bcast root=0 " +
		"2:send peer=3 tag=0 send=8 2:recv peer=1 tag=0 recv=8 2:bcast root=0 " +
		"3:send peer=0 tag=0 send=8 3:recv peer=2 tag=0 recv=8 3:bcast root=0"
	if g := fmt.Sprint(got); g != "["+want+"]" {
		t.Errorf("got  %s\nwant [%s]", g, want)
	}
	for _, bad := range [][]Group{
		{{Rep: 1, Members: []int32{0, 1, 2}}},
		{{Rep: 1, Members: []int32{0, 1, 2, 3, 4}}},
		{{Rep: 1, Members: []int32{0, 1}}, {Rep: 1, Members: []int32{1, 2, 3}}},
	} {
		reps := make([][]trace.Event, len(bad))
		for i := range reps {
			reps[i] = rep
		}
		if _, err := Expand(traceOf(reps...), 4, bad); err == nil {
			t.Errorf("groups %v accepted", bad)
		}
	}
}

// TestMatch: rank 2 replays rank 1's calls, moved by one: its send goes
// to 3 as its own does, but its own receive is from 0, not 1, and carries
// 16 bytes, not 8; it has one call more than rank 1.
func TestMatch(t *testing.T) {
	r1 := []trace.Event{call(trace.Send, 1, 2, 8), call(trace.Recv, 2, 0, 8)}
	r2 := []trace.Event{call(trace.Send, 1, 3, 8), call(trace.Recv, 2, 0, 16), call(trace.Barrier, 3, trace.NoRank, 0)}
	m := matchHeads(t, traceOf(nil, r1, r2, nil), []Group{{Rep: 0, Members: []int32{0, 3}}, {Rep: 1, Members: []int32{1, 2}}})
	// Calls: 4 aligned of 5; counts 3 of 4; sources 1 of 2 receives;
	// destinations 2 of 2 sends; tags 4 of 4; loops: no rank has one.
	want := Matching{Count: 75, Loop: 100, Events: 80, Src: 50, Dest: 100, Tag: 100}
	if m != want {
		t.Errorf("matching %+v, want %+v", m, want)
	}
}

// TestMatchLoops: rank 1 replays rank 0's loop of six send and receive
// pairs, where its own calls are two loops of three, a barrier between
// them: another loop signature. Rank 0 replays its own calls.
func TestMatchLoops(t *testing.T) {
	pair := []trace.Event{call(trace.Send, 1, 1, 8), call(trace.Recv, 2, 1, 8)}
	r0 := repeat(6, pair...)
	r1 := append(append(repeat(3, pair...), call(trace.Barrier, 3, trace.NoRank, 0)), repeat(3, pair...)...)
	if m := matchHeads(t, traceOf(r0, r1), []Group{{Rep: 0, Members: []int32{0, 1}}}); m.Loop != 50 {
		t.Errorf("matching %+v, want loops 50%% (rank 0's alone)", m)
	}
}

// matchHeads returns the Matching of tr's ranks with the calls of their
// groups' representatives.
func matchHeads(t *testing.T, tr *trace.Trace, groups []Group) Matching {
	t.Helper()
	res := &Result{Ranks: tr.NumRanks(), Groups: groups}
	x, err := Expand(Representatives(tr, res), res.Ranks, groups)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Match(tr, x, signAll(t, tr, SignOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestStructure: the paper's example, a loop of 1,000 iterations of a
// loop of 100 send/receive pairs and a barrier, is written in two levels.
func TestStructure(t *testing.T) {
	inner := repeat(100, call(trace.Send, 1, 1, 8), call(trace.Recv, 2, 1, 8))
	evs := append([]trace.Event{call(trace.Init, 5, trace.NoRank, 0)},
		repeat(1000, append(inner, call(trace.Barrier, 3, trace.NoRank, 0))...)...)
	tr := traceOf(evs)
	for _, c := range []struct {
		max  int
		want string
	}{
		{0, "init1 1000×(100×(send1 recv1) barrier1)"},
		{12, "init1 1000×( …"},
	} {
		rd, _ := tr.OpenRank(0)
		got, err := Structure(rd, c.max)
		if err != nil || got != c.want {
			t.Errorf("max %d: %q (%v), want %q", c.max, got, err, c.want)
		}
	}
}

// TestPathsFoldOnce: SignAll, which folds a call path into loops only the
// first time it meets it (and, past maxBuffered calls, as they come),
// gives every rank the call path, 64-bit call-path and loop signatures and
// folded length of folding its own calls, on noisy traces whose ranks
// differ.
func TestPathsFoldOnce(t *testing.T) {
	for _, c := range []struct {
		kind   string
		ranks  int
		buffer int
	}{{"stencil2d", 16, 1 << 20}, {"masterworker", 16, 1 << 20}, {"cg", 16, 1 << 20}, {"stencil2d", 16, 7}, {"mg", 8, 5}} {
		maxBuffered = c.buffer
		src := workloadSource(t, c.kind, c.ranks, nil, 3, true)
		sigs := signAll(t, src, SignOptions{})
		keys := make([]string, len(sigs))
		for r := range sigs {
			rd, err := src.OpenRank(r)
			if err != nil {
				t.Fatal(err)
			}
			shape := prsd.NewShape(nil)
			for rd.Next() {
				if e := rd.Event(); e.Kind.IsMPI() {
					shape.Add(e)
				}
			}
			rd.Close()
			shape.Finish()
			keys[r] = shape.Key()
			if got, want := [3]uint64{sigs[r].CallPath, sigs[r].Loop, uint64(sigs[r].Folded)}, [3]uint64{shape.CallPath(), shape.LoopSignature(), uint64(shape.Len())}; got != want {
				t.Errorf("%s buffer %d rank %d: call path, loop signature, folded length %x, want %x", c.kind, c.buffer, r, got, want)
			}
		}
		for i := range sigs {
			for j := range i {
				if got, want := sigs[i].Path == sigs[j].Path, keys[i] == keys[j]; got != want {
					t.Errorf("%s buffer %d ranks %d and %d: same path %v, want %v", c.kind, c.buffer, j, i, got, want)
				}
			}
		}
	}
	maxBuffered = 1 << 20
}

// TestCallsBuffered: a rank's calls are buffered up to maxBuffered, in
// blocks (few allocations for a long rank) never past maxBuffered (a
// bound on a signer's memory), then folded as they come.
func TestCallsBuffered(t *testing.T) {
	defer func(m int) { maxBuffered = m }(maxBuffered)
	for _, m := range []int{5, 3000, 5000} {
		maxBuffered = m
		p := newPaths(nil).reader()
		p.start()
		grows := 0
		for i := range m + 10 {
			c := cap(p.calls)
			p.add(trace.Send, uint64(i%7))
			if cap(p.calls) != c {
				grows++
			}
			if cap(p.calls) > m {
				t.Fatalf("maxBuffered %d: %d calls buffered in %d", m, len(p.calls), cap(p.calls))
			}
		}
		if want := min(m, 1024); grows > 1+bits.Len(uint(m/want)) {
			t.Errorf("maxBuffered %d: the buffer grew %d times", m, grows)
		}
		if want := (m+9)%m + 1; p.shape == nil || runsHeld(p) != want {
			t.Errorf("maxBuffered %d: past it %d calls buffered, shape %v", m, runsHeld(p), p.shape != nil)
		}
	}
}

// TestCallsBlocksReused: the next rank buffers its calls in the blocks of
// the rank before, without allocating.
func TestCallsBlocksReused(t *testing.T) {
	p := newPaths(nil).reader()
	rank := func() {
		p.start()
		for i := range 3*blockCalls + 5 {
			p.add(trace.Send, uint64(i%7))
		}
	}
	rank()
	if n := testing.AllocsPerRun(3, rank); n != 0 {
		t.Errorf("a rank of %d calls after another allocated %v times", 3*blockCalls+5, n)
	}
	if len(p.full) != 3 || runsHeld(p) != 5 {
		t.Errorf("%d full blocks and %d calls in the last, want 3 and 5", len(p.full), runsHeld(p))
	}
}

// runsHeld is the number of runs of calls p holds in its last block and
// open.
func runsHeld(p *pathReader) int {
	if p.openN > 0 {
		return len(p.calls) + 1
	}
	return len(p.calls)
}

// TestCallRuns: a rank's calls are buffered as runs of one call, and
// paths are equal where the calls are, however they are cut into blocks
// and folded as they come.
func TestCallRuns(t *testing.T) {
	defer func(m int) { maxBuffered = m }(maxBuffered)
	rng := rand.New(rand.NewPCG(3, 4))
	var calls []uint64
	for range 3000 {
		site := uint64(rng.IntN(4))
		for range 1 + rng.IntN(50)*rng.IntN(2) {
			calls = append(calls, site)
		}
	}
	sign := func(max int) (pathKey, string) {
		maxBuffered = max
		p := newPaths(nil).reader()
		p.start()
		for _, c := range calls {
			p.add(trace.Send, c)
		}
		p.finish()
		return p.h, p.shape.Key()
	}
	wantKey, wantShape := sign(1 << 20)
	if runs := int(wantKey.n); runs != len(calls) {
		t.Errorf("%d calls hashed, want %d", runs, len(calls))
	}
	shape := prsd.NewShape(nil)
	for _, c := range calls {
		shape.Add(&trace.Event{Kind: trace.Send, CallSite: c})
	}
	shape.Finish()
	if shape.Key() != wantShape {
		t.Errorf("the runs' shape differs from the calls'")
	}
	for _, max := range []int{1, 2, 7, 1000} {
		if key, s := sign(max); key != wantKey || s != wantShape {
			t.Errorf("folded past %d runs: hash %v shape equal %v, want %v", max, key, s == wantShape, wantKey)
		}
	}
}

// TestSignAllConcurrent: signing the ranks on every core (an in-memory
// trace, trace.Concurrent) gives the signatures, paths numbered alike, of
// signing one rank at a time, on noisy traces whose ranks differ.
func TestSignAllConcurrent(t *testing.T) {
	for _, kind := range []string{"stencil2d", "masterworker", "cg", "mg"} {
		tr, err := trace.Load(workloadSource(t, kind, 16, nil, 3, true))
		if err != nil {
			t.Fatal(err)
		}
		par := signAll(t, tr, SignOptions{Reference: true})
		serial := signAll(t, struct{ trace.Source }{tr}, SignOptions{Reference: true})
		if !reflect.DeepEqual(par, serial) {
			t.Errorf("%s: signed on every core %+v, one rank at a time %+v", kind, par, serial)
		}
	}
}
