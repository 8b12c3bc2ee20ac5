package prsd

import (
	"math"
	"strings"
	"testing"

	"kairos/trace"
)

// TestHistogramBounds: with histograms, a noisy stencil's every
// computation reads back within the time error of its own, and the
// instances of each rank's histograms are drawn, not read back in their
// order.
func TestHistogramBounds(t *testing.T) {
	src := gen(t, "stencil2d", 16, 200, true)
	const eps = 0.11 // above the noise's ±5%: every loop's computations qualify
	tr, err := Build(src, nil, Options{TimeError: eps, Histograms: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := Verify(src, tr); err != nil {
		t.Fatal(err)
	}
	if n := numShares(tr.Clusters[0].Items); n == 0 {
		t.Fatal("no histogram in the noisy stencil's structure")
	}
	moved := 0
	for r := range src.NumRanks() {
		own, back := computations(t, src, r), computations(t, tr, r)
		if len(own) != len(back) {
			t.Fatalf("rank %d has %d computations, %d read back", r, len(own), len(back))
		}
		for i, v := range own {
			if e := math.Abs(back[i]-v) / v; e > eps*(1+1e-9) {
				t.Errorf("rank %d, computation %d: %g read back as %g, %.3g%% off", r, i, v, back[i], 100*e)
			}
			if back[i] != v {
				moved++
			}
		}
	}
	if moved == 0 {
		t.Error("every computation read back exactly: no histogram drawn from")
	}
}

func numShares(items []*Node) int {
	n := 0
	for _, it := range items {
		for i := range it.Times {
			for _, h := range it.Times[i].Hists {
				if h != nil {
					n++
				}
			}
		}
		n += numShares(it.Body)
	}
	return n
}

// TestHistogramDraws: each cycle of a histogram's instances reads every
// share once, in an order that differs between ranks and between cycles.
func TestHistogramDraws(t *testing.T) {
	orders := map[[histBuckets]int]bool{}
	for r := range int32(4) {
		for cycle := range int64(8) {
			var o [histBuckets]int
			seen := [histBuckets]bool{}
			for j := range int64(histBuckets) {
				b := draw(r, 3, StatComp, cycle*histBuckets+j)
				if seen[b] {
					t.Fatalf("rank %d, cycle %d: share %d drawn twice", r, cycle, b)
				}
				seen[b], o[j] = true, b
			}
			orders[o] = true
		}
	}
	if len(orders) < 16 {
		t.Errorf("32 cycles of 4 ranks drew %d orders", len(orders))
	}
}

// TestHistogramKeepsStructure: a computation absent from some instances
// stays absent, and instances apart by more than the time error (a
// computation done every other iteration, twice as long) are kept one by
// one.
func TestHistogramKeepsStructure(t *testing.T) {
	tr := trace.New(1, trace.NewMeta())
	for i := range 400 {
		b := trace.NewEvent(trace.Barrier)
		tr.Ranks[0].Append(&b)
		if i%5 != 4 {
			c := trace.NewEvent(trace.Compute)
			c.Compute = math.Round(1e6 * (1 + 0.08*math.Mod(float64(i)*0.618034, 1)))
			tr.Ranks[0].Append(&c)
		}
		s := trace.NewEvent(trace.Bcast)
		s.SendBytes, s.RecvBytes = 8, 8
		tr.Ranks[0].Append(&s)
		c := trace.NewEvent(trace.Compute)
		c.Compute = 1e6 * float64(1+i%2)
		tr.Ranks[0].Append(&c)
	}
	comp, err := Build(tr, nil, Options{TimeError: 0.1, Histograms: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := Verify(tr, comp); err != nil {
		t.Fatal(err)
	}
	if n := numShares(comp.Clusters[0].Items); n != 1 {
		t.Errorf("%d histograms, want 1 (the noisy computation's, not the alternating one's)", n)
	}
	var dump strings.Builder
	if err := comp.Dump(&dump); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(dump.String(), "comp=histogram{320 in [") {
		t.Errorf("the dump does not show the histogram of 320 computations:\n%s", dump.String())
	}
	own, back := computations(t, tr, 0), computations(t, comp, 0)
	if len(own) != len(back) {
		t.Fatalf("%d computations, %d read back", len(own), len(back))
	}
	for i, v := range own {
		if math.Abs(back[i]-v) > 0.1*v {
			t.Fatalf("computation %d: %g read back as %g", i, v, back[i])
		}
	}
}

// TestHistogramSum: a histogram reads back each group's sum within 1e-6
// whatever its instances' number (the rest making up what the cycles
// leave; a group of fewer than a cycle keeps its values), 0 where an
// instance is 0, each instance from its own group (a loop's last
// computation, five times the others, stays apart), and nothing where
// some are negative or spread beyond the groups allowed.
func TestHistogramSum(t *testing.T) {
	for _, n := range []int{64, 100, 1000, 4099} {
		var b seriesBuilder
		sum := [2]float64{}
		for i := range n {
			v := 0.0
			switch {
			case i%10 == 9:
				v = 5 * 5e8 * (1 + 0.04*math.Cos(float64(i)))
			case i%3 != 0:
				v = 5e8 * (1 + 0.04*math.Sin(float64(i)))
			}
			b.add(Level(v, 0))
			sum[min(i%10/9, 1)] += v
		}
		l := b.finish()
		h, groups, ok := histogram(&l, 0.1, false)
		if !ok {
			t.Fatalf("%d instances: no histogram", n)
		}
		if len(h.Groups) != 2 {
			t.Fatalf("%d instances: %d groups, want 2", n, len(h.Groups))
		}
		var c cursor
		back, drawn := [2]float64{}, [2]int64{}
		for i := range n {
			g := c.next(&groups) - 1
			if g < 0 {
				continue
			}
			if want := int64(min(i%10/9, 1)); g != want {
				t.Fatalf("%d instances: instance %d in group %d, want %d", n, i, g, want)
			}
			back[g] += h.Groups[g].read(2, 5, StatValue, int(g), drawn[g])
			drawn[g]++
		}
		for g := range 2 {
			if drawn[g] != h.Groups[g].N || math.Abs(back[g]-sum[g]) > 1e-6*sum[g] {
				t.Errorf("%d instances, group %d: %d drawn of %d, sum %g read back as %g", n, g, drawn[g], h.Groups[g].N, sum[g], back[g])
			}
		}
	}
	spread := make([]float64, 200)
	for i := range spread {
		spread[i] = math.Pow(1.05, float64(i%40)) // 40 values, 5% apart: more than 16 groups
	}
	for name, vals := range map[string][]float64{"negative": {-1, 1}, "spread": spread} {
		var b seriesBuilder
		for i := range 200 {
			b.add(Level(vals[i%len(vals)]*(1+1e-5*float64(i)), 0))
		}
		l := b.finish()
		if _, lv, ok := histogram(&l, 0.1, false); ok || lv.N != 200 {
			t.Errorf("%s instances: histogram %v, %d levels", name, ok, lv.N)
		}
	}
}

// TestHistogramScales: ranks whose computations differ by a factor
// (imbalance), each spread by its own noise, read one histogram, each
// scaled to its own sum: every instance within the time error of its
// own, one histogram for them all, and the sum of each rank that reads it
// within eps/200, half its scale's step (the computation after MPI_Init, one a rank, is kept as a
// mean; a rank whose noise folds into fewer bytes of levels keeps them).
func TestHistogramScales(t *testing.T) {
	const ranks, steps, eps = 12, 400, 0.15
	tr := trace.New(ranks, trace.NewMeta())
	for r := range ranks {
		add := func(k trace.Kind, flops float64) {
			e := trace.NewEvent(k)
			e.Compute = flops
			tr.Ranks[r].Append(&e)
		}
		add(trace.Init, 0)
		factor := 1 + 0.2*float64(r)/ranks // 20% apart: beyond eps for one histogram unscaled
		for i := range steps {
			noise := 1 + 0.06*math.Sin(float64(i*(r+3))) // ±6%, its own at each rank: beyond eps/3 of the mean
			add(trace.Compute, 1e8*factor*noise)
			add(trace.Barrier, 0)
		}
		add(trace.Finalize, 0)
	}
	c, err := Build(tr, nil, Options{TimeError: eps, Histograms: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := Verify(tr, c); err != nil {
		t.Fatal(err)
	}
	if n := numShares(c.Clusters[0].Items); n != 1 {
		t.Errorf("%d histograms for ranks a factor apart, want 1", n)
	}
	scaled := map[int32]bool{} // the ranks reading the histogram, scaled
	var find func(items []*Node)
	find = func(items []*Node) {
		for _, n := range items {
			for i := range n.Times {
				if tg := &n.Times[i]; tg.Scales[StatComp] != nil {
					for _, r := range tg.Ranks.Ranks() {
						scaled[r] = true
					}
				}
			}
			find(n.Body)
		}
	}
	find(c.Clusters[0].Items)
	if len(scaled) < ranks*2/3 {
		t.Errorf("%d ranks read the histogram scaled, want most of the %d", len(scaled), ranks)
	}
	for r := range ranks {
		own, back := computations(t, tr, r), computations(t, c, r)
		if len(own) != len(back) {
			t.Fatalf("rank %d has %d computations, %d read back", r, len(own), len(back))
		}
		var sum, sumBack float64
		for i, v := range own {
			if e := math.Abs(back[i]-v) / v; e > eps*(1+1e-9) {
				t.Errorf("rank %d, computation %d: %g read back as %g, %.3g%% off", r, i, v, back[i], 100*e)
			}
			if i > 0 {
				sum, sumBack = sum+v, sumBack+back[i]
			}
		}
		if scaled[int32(r)] && math.Abs(sumBack-sum) > eps/(2*scaleSteps)*sum {
			t.Errorf("rank %d computes %g in all, %g read back", r, sum, sumBack)
		}
	}
}
