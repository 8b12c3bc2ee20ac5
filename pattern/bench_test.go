package pattern

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"testing"

	"kairos/trace"
)

// smgLike builds a timed trace shaped like the paper's largest one
// (SMG2000 on 1,024 ranks, Table 22: a sequence of 64,052 instances of
// 5,777 distinct patterns) scaled by frac of the instances. A template is
// a block of 2^k consecutive ranks exchanging with every hypercube
// neighbour inside the block (Isend and Irecv to each, then Waitall) in
// one of six user functions; the 1,023 blocks of sizes 2 to 1,024 times
// six functions give 6,138 templates, of which the first 5,777 are used.
// Every template runs once, then templates are drawn with sizes 2 (50 %),
// 4 (25 %), 8 (13 %), 16 (8 %), 32 (3 %), 64 (0.8 %) and larger (0.2 %).
// Each member computes 50 µs ± 20 % first; its Waitall ends 10 µs after
// its last partner started sending.
func smgLike(frac float64) (*trace.Trace, int) {
	const (
		ranks    = 1024
		distinct = 5777
		us       = trace.Time(1e6)
	)
	total := int(64052 * frac)
	meta := trace.NewMeta()
	main := meta.AddRegion("main", 0)
	var funcs []uint32
	for _, f := range []string{"SetupGrid", "SetupRAP", "Relax", "Interp", "Restrict", "Solve"} {
		funcs = append(funcs, meta.AddRegion(f, main))
	}
	type tmpl struct {
		log2, first int
		region      uint32
	}
	var ts []tmpl
	bySize := make([][]int, 11)
	for f := 0; f < 6 && len(ts) < distinct; f++ {
		for k := 1; k <= 10 && len(ts) < distinct; k++ {
			for b := 0; b < ranks>>k && len(ts) < distinct; b++ {
				bySize[k] = append(bySize[k], len(ts))
				ts = append(ts, tmpl{k, b << k, funcs[f]})
			}
		}
	}
	tr := trace.New(ranks, meta)
	clock := make([]trace.Time, ranks)
	start := make([]trace.Time, ranks)
	rng := rand.New(rand.NewPCG(1, 1))
	cum := []float64{0.50, 0.75, 0.88, 0.96, 0.99, 0.998, 1}
	for step := range max(total, distinct) {
		t := ts[step%len(ts)]
		if step >= len(ts) {
			u, k := rng.Float64(), 1
			for k < len(cum) && u > cum[k-1] {
				k++
			}
			if k == len(cum) {
				k += rng.IntN(4)
			}
			t = ts[bySize[k][rng.IntN(len(bySize[k]))]]
		}
		n := 1 << t.log2
		begin := trace.Time(0)
		for m := t.first; m < t.first+n; m++ {
			begin = max(begin, clock[m])
		}
		for m := t.first; m < t.first+n; m++ {
			start[m] = begin + 50*us + trace.Time(rng.IntN(21)-10)*us
		}
		for m := t.first; m < t.first+n; m++ {
			at := start[m]
			last := trace.Time(0)
			for d := range t.log2 {
				last = max(last, start[m^(1<<d)])
			}
			for i := range 2 * t.log2 {
				e := trace.NewEvent(trace.Isend)
				peer := m ^ (1 << (i % t.log2))
				if i >= t.log2 {
					e.Kind, e.RecvBytes = trace.Irecv, 4096
				} else {
					e.SendBytes = 4096
				}
				e.Partner, e.Request, e.Region = int32(peer), uint64(i+1), t.region
				e.HasTime, e.Enter, e.Exit = true, at, at+us
				at += us
				tr.Ranks[m].Append(&e)
			}
			w := trace.NewEvent(trace.Waitall)
			w.Region, w.HasTime, w.Enter, w.Exit = t.region, true, at, max(at, last+10*us)+us
			tr.Ranks[m].Append(&w)
			clock[m] = w.Exit
		}
	}
	return tr, len(ts)
}

// BenchmarkPipeline runs the five steps on smgLike traces of a quarter,
// half and all of the paper's 64,052 instances, reporting each step.
//
//	go test -run XXX -bench Pipeline -benchtime 1x ./pattern/
func BenchmarkPipeline(b *testing.B) {
	for _, frac := range []float64{0.25, 0.5, 1} {
		tr, distinct := smgLike(frac)
		b.Run(fmt.Sprintf("instances=%d", int(64052*frac)), func(b *testing.B) {
			var a *Analysis
			for b.Loop() {
				var err error
				if a, err = Analyze(tr, DefaultOptions()); err != nil {
					b.Fatal(err)
				}
			}
			ms := func(d interface{ Seconds() float64 }) float64 { return d.Seconds() * 1e3 }
			b.ReportMetric(float64(tr.NumEvents()), "events")
			b.ReportMetric(float64(len(a.Sequence)), "instances")
			b.ReportMetric(float64(len(a.Comm)), "patterns")
			b.ReportMetric(float64(distinct), "templates")
			b.ReportMetric(float64(len(a.Slow)), "slow")
			b.ReportMetric(ms(a.Times.Read), "read-ms")
			b.ReportMetric(ms(a.Times.Process), "step1-ms")
			b.ReportMetric(ms(a.Times.Comm), "step2-ms")
			b.ReportMetric(ms(a.Times.Phases), "step3-ms")
			b.ReportMetric(ms(a.Times.Slow), "step4-ms")
			b.ReportMetric(ms(a.Times.Classify), "step5-ms")
		})
	}
}

// BenchmarkSplit measures step 3 alone on a sequence with many distinct
// symbols, the case the paper found slowest (220 s).
func BenchmarkSplit(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 5))
	seq := make([]int32, 64052)
	for i := range seq {
		seq[i] = int32(rng.IntN(5777) >> bits.Len(uint(i%7)))
	}
	for b.Loop() {
		Split(seq, SegmentOptions{Criterion: AIC, MaxDepth: 12, MinLength: 2})
	}
}

// pingPong returns a timed two-rank ping-pong of n round trips, one long
// periodic run: the shape of a traced benchmark loop.
func pingPong(n int) *trace.Trace {
	tr := trace.New(2, trace.NewMeta())
	const us = trace.Time(1e6)
	at := trace.Time(0)
	add := func(r int, k trace.Kind, peer int32) {
		e := trace.NewEvent(k)
		e.Partner, e.HasTime, e.Enter, e.Exit = peer, true, at, at+us
		if k == trace.Send {
			e.SendBytes = 8
		} else {
			e.RecvBytes = 8
		}
		tr.Ranks[r].Append(&e)
	}
	for range n {
		add(0, trace.Send, 1)
		add(1, trace.Recv, 0)
		at += us
		add(1, trace.Send, 0)
		add(0, trace.Recv, 1)
		at += us
	}
	return tr
}

// BenchmarkPeriodic runs the pipeline on ping-pongs of 50,000 and 200,000
// round trips, where step 1 cuts one long periodic run into instances.
//
//	go test -run XXX -bench Periodic -benchtime 1x ./pattern/
func BenchmarkPeriodic(b *testing.B) {
	for _, n := range []int{50000, 200000} {
		tr := pingPong(n)
		b.Run(fmt.Sprintf("roundtrips=%d", n), func(b *testing.B) {
			var a *Analysis
			for b.Loop() {
				var err error
				if a, err = Analyze(tr, DefaultOptions()); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(a.Sequence)), "instances")
			b.ReportMetric(a.Times.Process.Seconds()*1e3, "step1-ms")
		})
	}
}
