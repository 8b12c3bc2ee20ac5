package prsd

import (
	"testing"
	"time"

	"kairos/internal/testenv"
	"kairos/trace"
	"kairos/workload"
)

// stencil returns the default 8x8 periodic stencil of 1,000 iterations
// (646,528 events), noisy if asked, in memory.
func stencil(b *testing.B, noisy bool) *trace.Trace {
	p, err := workload.Defaults("stencil2d")
	if err != nil {
		b.Fatal(err)
	}
	if noisy {
		p.Imbalance, p.Noise = 0.2, 0.05
	}
	src, err := workload.New("stencil2d", p)
	if err != nil {
		b.Fatal(err)
	}
	tr, err := trace.Load(src)
	if err != nil {
		b.Fatal(err)
	}
	return tr
}

// BenchmarkBuild compresses the stencil, noiseless and noisy, and reports
// the events compressed per CPU second.
func BenchmarkBuild(b *testing.B) {
	for _, noisy := range []bool{false, true} {
		tr := stencil(b, noisy)
		b.Run(map[bool]string{false: "regular", true: "noisy"}[noisy], func(b *testing.B) {
			cpu0 := testenv.CPUTime()
			for b.Loop() {
				if _, err := Build(tr, nil, DefaultOptions()); err != nil {
					b.Fatal(err)
				}
			}
			cpu := (testenv.CPUTime() - cpu0) / time.Duration(b.N)
			b.ReportMetric(float64(tr.NumEvents())/cpu.Seconds(), "cpu-events/s")
		})
	}
}

// BenchmarkRead reads every rank of the compressed stencil and of the
// same trace in memory (the compact codec), and reports the events read
// per CPU second.
func BenchmarkRead(b *testing.B) {
	tr := stencil(b, true)
	comp, err := Build(tr, nil, DefaultOptions())
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		src  trace.Source
	}{{"compressed", comp}, {"memory", tr}} {
		b.Run(c.name, func(b *testing.B) {
			cpu0 := testenv.CPUTime()
			for b.Loop() {
				if err := trace.ForEach(c.src, func(_, _ int, _ *trace.Event) error { return nil }); err != nil {
					b.Fatal(err)
				}
			}
			cpu := (testenv.CPUTime() - cpu0) / time.Duration(b.N)
			b.ReportMetric(float64(tr.NumEvents())/cpu.Seconds(), "cpu-events/s")
		})
	}
}
