package pattern_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"kairos/pattern"
	"kairos/platform"
	"kairos/sim"
	"kairos/workload"
)

// End-to-end slow-instance tests: a workload generated with a known delay
// (one rank computing Factor times longer in a few iterations) is
// simulated on a flat cluster with package sim, and the simulated timed
// trace is analysed. What is slow, and who is late, follows from how the
// code's synchronisation propagates the delay; each test states the
// physics it relies on and asserts exactly the slow set it predicts, so a
// missed or an extra slow instance fails.
//
// Common setting: every rank computes 1e7 flops per iteration on 1 Gflop/s
// hosts (10 ms, ±2 % seeded noise), the delayed rank 6 times that (60 ms)
// in its delayed iterations: 50 ms late against exchanges that take about
// 1 ms, far above any noise. The messages (8 KiB halos, 1 KiB tokens) are
// sent eagerly.

const delayedRank = 5

var delayedIters = []int{7, 23, 41}

// simulateDelayed generates kind with p plus the delay, simulates it on
// cluster (a one-line platform.ParseCluster spec) and analyses the timed
// trace with the default options.
func simulateDelayed(t *testing.T, kind string, p workload.Params, delay, cluster string) *pattern.Analysis {
	t.Helper()
	d, err := workload.ParseDelay(delay)
	if err != nil {
		t.Fatal(err)
	}
	p.Delay = d
	src, err := workload.New(kind, p)
	if err != nil {
		t.Fatal(err)
	}
	plat, err := platform.ParseCluster(cluster)
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
	a, err := pattern.Analyze(tt.T, pattern.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// e2eParams are kind's defaults with the common setting.
func e2eParams(kind string, edit func(p *workload.Params)) workload.Params {
	p, _ := workload.Defaults(kind)
	p.Iterations, p.Flops, p.Noise, p.Imbalance, p.Seed = 60, 1e7, 0.02, 0, 1
	edit(&p)
	return p
}

// iterations returns the positions of the instances of the communication
// pattern whose calls are made in function fn, in sequence order: the
// k-th is iteration k's (in these codes each iteration has one instance
// of each pattern, and every rank finishes one before it starts the
// next).
func iterations(t *testing.T, a *pattern.Analysis, fn string, want int) []int {
	t.Helper()
	id := 0
	for _, c := range a.Comm {
		if slices.Contains(c.Functions, fn) {
			id = c.ID
		}
	}
	var pos []int
	for _, in := range a.Sequence {
		if in.Pattern == id {
			pos = append(pos, in.Position)
		}
	}
	if id == 0 || len(pos) != want {
		t.Fatalf("pattern in %s: %d instances, want %d (patterns %+v)", fn, len(pos), want, a.Comm)
	}
	return pos
}

// expect is the predicted lateness of one slow instance: its Late kind and
// the ranks that may be the last to start.
type expect struct {
	what  string // for messages: which instance of which iteration
	late  string
	ranks []int32
}

// checkSlow asserts that the slow instances are exactly those of want (by
// position), each with the predicted lateness.
func checkSlow(t *testing.T, a *pattern.Analysis, want map[int]expect) {
	t.Helper()
	got := map[int]bool{}
	for _, s := range a.Slow {
		got[s.Position] = true
		w, ok := want[s.Position]
		if !ok {
			t.Errorf("instance %d (CP%d, %.0f µs, median %.0f µs, Z %.1f) is slow: not predicted", s.Position, s.Pattern, s.Duration, s.Median, s.Z)
			continue
		}
		if s.Late != w.late || !slices.Contains(w.ranks, s.LastStart) {
			t.Errorf("%s (instance %d): last to start rank %d, %s; want one of %v, %s", w.what, s.Position, s.LastStart, s.Late, w.ranks, w.late)
		}
	}
	for pos, w := range want {
		if !got[pos] {
			t.Errorf("%s (instance %d) is not found slow", w.what, pos)
		}
	}
}

// torus is the Manhattan distance between two ranks of a periodic x-first
// 2-D process grid of nx x ny.
func torus(a, b, nx, ny int) int {
	d := func(u, v, n int) int { x := (u - v + n) % n; return min(x, n-x) }
	return d(a%nx, b%nx, nx) + d(a/nx, b/nx, ny)
}

// ranksWithin returns the ranks of the nx x ny torus whose distance from
// r is in [lo, hi].
func ranksWithin(r, lo, hi, nx, ny int) []int32 {
	var out []int32
	for q := range nx * ny {
		if d := torus(r, q, nx, ny); d >= lo && d <= hi {
			out = append(out, int32(q))
		}
	}
	return out
}

// TestE2EDelayStencilAllreduce: a periodic 4x4 stencil2d with an allreduce
// after every iteration. In a delayed iteration rank 5 posts its halo
// sends 50 ms late: the exchange is slow and rank 5, the last to start, is
// its late sender. Its four neighbours (1, 4, 6, 9) wait for its faces and
// leave the exchange when they arrive, after rank 5 itself (whose
// receives were satisfied long before), so the iteration's allreduce is
// slow too, with one of them as the late process. The allreduce then
// resynchronises every rank: the next iteration starts together and
// nothing else is slow.
func TestE2EDelayStencilAllreduce(t *testing.T) {
	p := e2eParams("stencil2d", func(p *workload.Params) {
		p.Grid, p.Ranks, p.Periodic, p.AllreduceEvery = []int{4, 4}, 0, true, 1
	})
	a := simulateDelayed(t, "stencil2d", p, "5:7,23,41:6", "16x1Gf,125MBps,50us")
	halo := iterations(t, a, "exchange_halo", 60)
	reduce := iterations(t, a, "check_convergence", 60)
	want := map[int]expect{}
	for _, k := range delayedIters {
		want[halo[k]] = expect{fmt.Sprintf("halo exchange of iteration %d", k), "late sender", []int32{delayedRank}}
		want[reduce[k]] = expect{fmt.Sprintf("allreduce of iteration %d", k), "late process", ranksWithin(delayedRank, 1, 1, 4, 4)}
	}
	checkSlow(t, a, want)
}

// TestE2EDelayRing: an 8-rank token ring with no allreduce. Ranks 1..7
// post their receive right after computing and wait for the token, so an
// instance runs from rank 1's receive to the token's return to rank 0. In
// a delayed iteration k the token waits 50 ms at rank 5: instance k is
// slow with rank 5 as late sender. Rank 0 gets the token back 50 ms late,
// so in iteration k+1 it computes and sends 50 ms late while ranks 1..4,
// which passed the token on time in iteration k, already wait: instance
// k+1 is slow with rank 0 as late sender. By iteration k+2 every rank has
// taken the 50 ms shift and the ring is back to normal: exactly two slow
// instances per delay.
func TestE2EDelayRing(t *testing.T) {
	p := e2eParams("ring", func(p *workload.Params) { p.Ranks, p.AllreduceEvery = 8, 0 })
	a := simulateDelayed(t, "ring", p, "5:7,23,41:6", "8x1Gf,125MBps,50us")
	ring := iterations(t, a, "pass_token", 60)
	want := map[int]expect{}
	for _, k := range delayedIters {
		want[ring[k]] = expect{fmt.Sprintf("token pass of iteration %d", k), "late sender", []int32{delayedRank}}
		want[ring[k+1]] = expect{fmt.Sprintf("token pass of iteration %d", k+1), "late sender", []int32{0}}
	}
	checkSlow(t, a, want)
}

// TestE2EDelayStencilWave: the same periodic 4x4 stencil2d with no
// allreduce. Nothing resynchronises the ranks, and with no slack (no
// imbalance) the 50 ms shift spreads one hop per iteration: a rank at
// torus distance d from rank 5 starts 50 ms late from iteration k+d on,
// since it waits for a neighbour at distance d-1. Iteration k+j's exchange
// links all 16 ranks, from ranks the shift has not reached (distance > j)
// to ranks it has (distance <= j), so it is slow for j = 0..3 (the torus's
// diameter is 4) and normal from k+4 on. In each, the last to start is a
// shifted rank (rank 5 itself when j = 0) and the first an unshifted one.
func TestE2EDelayStencilWave(t *testing.T) {
	p := e2eParams("stencil2d", func(p *workload.Params) {
		p.Grid, p.Ranks, p.Periodic, p.AllreduceEvery = []int{4, 4}, 0, true, 0
	})
	a := simulateDelayed(t, "stencil2d", p, "5:7,23,41:6", "16x1Gf,125MBps,50us")
	halo := iterations(t, a, "exchange_halo", 60)
	want := map[int]expect{}
	for _, k := range delayedIters {
		for j := range 4 {
			want[halo[k+j]] = expect{fmt.Sprintf("halo exchange of iteration %d (delay + %d)", k+j, j), "late sender", ranksWithin(delayedRank, 0, j, 4, 4)}
		}
	}
	checkSlow(t, a, want)
	for _, s := range a.Slow {
		if w, ok := want[s.Position]; ok && slices.Contains(w.ranks, s.FirstStart) {
			t.Errorf("%s: the first to start, rank %d, is within reach of the shift", w.what, s.FirstStart)
		}
	}
}

// TestE2EDelayDemo is the demo's workload (8x8 periodic stencil2d, 100
// iterations, an allreduce after every 10th, imbalance 0.1, noise 0.02,
// on 64x1Gf,125MBps,50us) with --delay 27:9,49,89:6: rank 27 (x 3, y 3)
// is slow in iterations that end with an allreduce. As in
// TestE2EDelayStencilAllreduce, each delayed exchange is slow with rank 27
// as late sender, and the allreduce that follows with one of 27's
// neighbours (19, 26, 28, 35) as late process; the allreduce resynchronises
// everyone, so the story has exactly these 6 slow instances. (A delay in
// an iteration that is not followed by an allreduce spreads over up to 8
// iterations of the 8x8 torus: see TestE2EDelayStencilWave.)
func TestE2EDelayDemo(t *testing.T) {
	p, _ := workload.Defaults("stencil2d")
	p.Grid, p.Ranks, p.Iterations = []int{8, 8}, 0, 100
	p.Imbalance, p.Noise, p.Seed = 0.1, 0.02, 1
	a := simulateDelayed(t, "stencil2d", p, "27:9,49,89:6", "64x1Gf,125MBps,50us")
	halo := iterations(t, a, "exchange_halo", 100)
	reduce := iterations(t, a, "check_convergence", 10)
	want := map[int]expect{}
	for _, k := range []int{9, 49, 89} {
		want[halo[k]] = expect{fmt.Sprintf("halo exchange of iteration %d", k), "late sender", []int32{27}}
		want[reduce[k/10]] = expect{fmt.Sprintf("allreduce after iteration %d", k), "late process", ranksWithin(27, 1, 1, 8, 8)}
	}
	checkSlow(t, a, want)
	var story strings.Builder
	if err := a.WriteStory(&story, 5); err != nil {
		t.Fatal(err)
	}
	t.Logf("story:\n%s", story.String())
}

// TestWavefrontLabels: the generator's noisy LU on 16 ranks, whose
// wavefront loops cross a rank's iterations with its neighbours' one
// plane apart, keeps every instance small (at most 6 calls a rank). A
// rank linked to the first settled rank only by the allreduce has its
// plane loops' iterations labelled by none of their matches: labelled as
// the loop before, they held its neighbours to an alignment nothing
// decided, and two instances of 95 and 93 calls a rank joined planes.
func TestWavefrontLabels(t *testing.T) {
	p, _ := workload.Defaults("lu")
	p.Noise, p.Imbalance = 0.05, 0.1
	src, err := workload.New("lu", p)
	if err != nil {
		t.Fatal(err)
	}
	pt, err := pattern.Detect(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range pt.Comm {
		if c.Events > 6*c.Ranks {
			t.Errorf("CP%d: %d instances of %d calls on %d ranks, want at most 6 calls a rank", c.ID, c.Frequency, c.Events, c.Ranks)
		}
	}
}
