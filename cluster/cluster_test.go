package cluster

import (
	"fmt"
	"slices"
	"strings"
	"testing"

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

func signAll(t *testing.T, src trace.Source) []Signatures {
	t.Helper()
	sigs, err := SignAll(src)
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

// TestParamSignatureTable1 checks the bit layout of Bahmani and Mueller's
// Table 1: count in bits 0-15, relative destination 16-31 and source
// 32-47 (two's complement), datatypes 48-54, operations 55-61 (none in
// Kairos' model), communicators 62-63.
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
		{"operation bits stay zero", 0, 0, 0, 0x7f << 55, 0},
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
	sigs := signAll(t, traceOf(nil, []trace.Event{send, recv}, nil))
	if got, want := sigs[1].Param, uint64(60|1<<16|0xffff<<32|1<<(48+2)|1<<62); got != want {
		t.Errorf("rank 1: %016x, want %016x", got, want)
	}
}

// TestCallPathSignature: the call-path signature tells apart ranks whose
// calls differ in order (the NAS MG case the sequence factor is for) or in
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
	sigs := signAll(t, traceOf(ranks...))
	same := [][2]int{{0, 2}, {3, 6}}
	for _, p := range same {
		if sigs[p[0]].CallPath != sigs[p[1]].CallPath {
			t.Errorf("ranks %d and %d call alike but differ", p[0], p[1])
		}
	}
	for i := range sigs {
		for j := i + 1; j < len(sigs); j++ {
			if sigs[i].CallPath == sigs[j].CallPath && !slices.Contains(same, [2]int{i, j}) {
				t.Errorf("ranks %d and %d call differently but have the same call path %x", i, j, sigs[i].CallPath)
			}
		}
	}
	if sigs[3].Folded != 3 || sigs[5].Folded != 4 {
		t.Errorf("folded lengths %d and %d, want 3 (a loop of a b) and 4", sigs[3].Folded, sigs[5].Folded)
	}
}

// TestFold checks the loop compressor on nested loops.
func TestFold(t *testing.T) {
	var c compressor
	// (a b b b c) x 3, then d: a loop of 3 of [a, loop of 3 of b, c], d.
	for range 3 {
		c.add('a')
		for range 3 {
			c.add('b')
		}
		c.add('c')
	}
	c.add('d')
	got := show(c.seq)
	if want := "3(a 3(b) c) d"; got != want {
		t.Errorf("folded %q, want %q", got, want)
	}
	// Innermost loops of 3, outer of 3: 3 | 3<<16.
	if got := loopSignature(c.seq); got != 3|3<<16 {
		t.Errorf("loop signature %x", got)
	}
}

func show(seq []node) string {
	var parts []string
	for _, n := range seq {
		if n.isLoop() {
			parts = append(parts, fmt.Sprintf("%d(%s)", n.count, show(n.body)))
		} else {
			parts = append(parts, string(rune(n.site)))
		}
	}
	return strings.Join(parts, " ")
}

// TestTable3ClusterCounts: Bahmani and Mueller's Table 3 at 16 processes,
// for the Kairos generators whose communication follows the benchmark
// (main clusters, sub-clusters per main cluster): Sweep3D and LU have nine
// main clusters (the corners, edges and interior of their wavefronts' 4x4
// grid) and one sub-cluster each, FT one of each. Kairos' BT, CG and MG
// skeletons are simpler than the NAS codes (periodic neighbours rather
// than BT's multipartition, no CG transpose exchange or MG coarse-grid
// idling), so their counts are not the table's.
func TestTable3ClusterCounts(t *testing.T) {
	for _, c := range []struct {
		kind      string
		main, sub int
	}{{"sweep", 9, 1}, {"lu", 9, 1}, {"ft", 1, 1}} {
		res := clusterWorkload(t, c.kind, 16)
		if res.Main != c.main || len(res.Groups) != c.main*c.sub || res.Inexact() != 0 {
			t.Errorf("%s: %d main clusters, %d sub-clusters, %d inexact ranks; Table 3: %d and %d per main cluster",
				c.kind, res.Main, len(res.Groups), res.Inexact(), c.main, c.sub)
		}
	}
}

// TestTable6ClusterCountsUnderScaling: as in Bahmani and Mueller's Table
// 6, the number of clusters of Sweep3D and LU (9) and FT (1) does not
// change from 16 to 1,024 processes.
func TestTable6ClusterCountsUnderScaling(t *testing.T) {
	for _, c := range []struct {
		kind     string
		clusters int
	}{{"sweep", 9}, {"lu", 9}, {"ft", 1}} {
		for _, n := range []int{16, 64, 256, 1024} {
			if res := clusterWorkload(t, c.kind, n); len(res.Groups) != c.clusters || res.Inexact() != 0 {
				t.Errorf("%s at %d ranks: %d clusters (%d inexact ranks), Table 6: %d", c.kind, n, len(res.Groups), res.Inexact(), c.clusters)
			}
		}
	}
}

// clusterWorkload clusters a generated trace of kind at n ranks (two
// time steps) with the default method.
func clusterWorkload(t *testing.T, kind string, n int) *Result {
	t.Helper()
	p, err := workload.Defaults(kind)
	if err != nil {
		t.Fatal(err)
	}
	p.Ranks, p.Grid, p.Iterations = n, nil, 2
	src, err := workload.New(kind, p)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Cluster(signAll(t, src), DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	return res
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
	sigs := signAll(t, tr)
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
		n := 0
		for _, g := range res.Groups {
			reps = append(reps, g.Rep)
			n += len(g.Members)
		}
		if !slices.Equal(reps, c.reps) || n != 6 {
			t.Errorf("%s: representatives %v of %d ranks, want %v", c.opt.Method, reps, n, c.reps)
		}
	}
	if _, err := Cluster(sigs, Options{Method: "kmeans"}); err == nil {
		t.Error("an unknown method was accepted")
	}
}

// TestFarthestKeepsNoDuplicate: identical ranks make one cluster however
// large K is.
func TestFarthestKeepsNoDuplicate(t *testing.T) {
	evs := []trace.Event{call(trace.Barrier, 1, trace.NoRank, 0)}
	res, err := Cluster(signAll(t, traceOf(evs, evs, evs, evs, evs)), Options{Method: Acurdion, K: 9})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Groups) != 1 || len(res.Groups[0].Members) != 5 || len(res.Format) != 0 {
		t.Errorf("groups %+v, format %v", res.Groups, res.Format)
	}
}

// TestExpand: members replay their representative's events with
// point-to-point end-points moved by their offset, roots and collectives
// as they are.
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
	if g := strings.Join(got, " "); g != want {
		t.Errorf("got  %s\nwant %s", g, want)
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
	tr := traceOf(nil, r1, r2, nil)
	sigs := signAll(t, tr)
	res := &Result{Ranks: 4, Groups: []Group{{Rep: 0, Members: []int32{0, 3}}, {Rep: 1, Members: []int32{1, 2}}}}
	x, err := Expand(Representatives(tr, res), 4, res.Groups)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Match(tr, x, sigs, res)
	if err != nil {
		t.Fatal(err)
	}
	// Calls: 4 aligned of 5; counts 3 of 4; sources 1 of 2 receives;
	// destinations 2 of 2 sends; tags 4 of 4; loops: no rank has one.
	want := Matching{Count: 75, Loop: 100, Events: 80, Src: 50, Dest: 100, Tag: 100}
	if m != want {
		t.Errorf("matching %+v, want %+v", m, want)
	}
}

// TestAcurdionKeepsEveryCallPath: with more distinct call paths than K,
// K is raised to their number, as ACURDION suggests.
func TestAcurdionKeepsEveryCallPath(t *testing.T) {
	var ranks [][]trace.Event
	for r := range 12 {
		ranks = append(ranks, []trace.Event{call(trace.Barrier, uint64(100+r), trace.NoRank, 0)})
	}
	sigs := signAll(t, traceOf(ranks...))
	for _, m := range []Method{Acurdion, Acurdion2} {
		res, err := Cluster(sigs, Options{Method: m, K: 9})
		if err != nil {
			t.Fatal(err)
		}
		if res.K != 12 || len(res.Groups) != 12 || res.Inexact() != 0 {
			t.Errorf("%s: K %d, %d groups, %d inexact", m, res.K, len(res.Groups), res.Inexact())
		}
	}
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
