package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kairos/cluster"
	"kairos/format"
	"kairos/format/ktr"
	"kairos/internal/testenv"
	"kairos/trace"
	"kairos/workload"
)

// BenchmarkSignKTR signs noisy, imbalanced stencils read from .ktr files,
// as kairos reduce reads them, and reports the rate beside the rate of
// reading the same file alone (every event decompressed and decoded),
// the two passes interleaved so that the machine's load falls on both.
// Then the real programs' traces of ../shared (SMG2000 on 4 ranks, the
// tracer's 4-D stencil on 64), converted to .ktr; KAIROS_BENCH_TRACES
// adds .ktr files (a comma-separated list of paths). The collector runs
// as the kairos command sets it (floorGC), which the rest of the test
// binary's benchmarks then share.
func BenchmarkSignKTR(b *testing.B) {
	floorGC()
	for _, c := range []struct {
		name       string
		grid       []int
		iterations int
	}{{"8x8x2000", []int{8, 8}, 2000}, {"32x32x100", []int{32, 32}, 100}} {
		p, err := workload.Defaults("stencil2d")
		if err != nil {
			b.Fatal(err)
		}
		p.Ranks, p.Grid, p.Iterations, p.Noise, p.Imbalance = 0, c.grid, c.iterations, 0.05, 0.2
		gen, err := workload.New("stencil2d", p)
		if err != nil {
			b.Fatal(err)
		}
		src := ktrOf(b, c.name, gen)
		b.Run(c.name, func(b *testing.B) { benchSignRead(b, src) })
	}
	for _, real := range []struct{ name, rel string }{
		{"smg2000", "traces/alawneh/smg2000-4p"},
		{"stencil4d-64", "traces/otf2/tracer-stencil4d-64/traces.otf2"},
	} {
		b.Run(real.name, func(b *testing.B) {
			in, _, err := format.Open(testenv.Shared(b, real.rel))
			if err != nil {
				b.Fatal(err)
			}
			benchSignRead(b, ktrOf(b, real.name, in))
		})
	}
	for _, p := range strings.Split(os.Getenv("KAIROS_BENCH_TRACES"), ",") {
		if p == "" {
			continue
		}
		src, err := ktr.Open(p)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(strings.TrimSuffix(filepath.Base(p), ".ktr"), func(b *testing.B) { benchSignRead(b, src) })
	}
}

// ktrOf writes src as a .ktr file and opens it.
func ktrOf(b *testing.B, name string, src trace.Source) *ktr.Source {
	path := filepath.Join(b.TempDir(), name+".ktr")
	if err := ktr.Write(path, src); err != nil {
		b.Fatal(err)
	}
	s, err := ktr.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// benchSignRead alternates reading src and signing it, and reports both
// rates in events a CPU second and their ratio.
func benchSignRead(b *testing.B, src trace.Source) {
	var read, sign, readWall, signWall time.Duration
	var events int64
	for b.Loop() {
		cpu0, wall0 := testenv.CPUTime(), time.Now()
		events = 0
		if err := trace.ForEach(src, func(_, _ int, _ *trace.Event) error { events++; return nil }); err != nil {
			b.Fatal(err)
		}
		cpu1, wall1 := testenv.CPUTime(), time.Now()
		if _, err := cluster.SignAll(src, cluster.SignOptions{}); err != nil {
			b.Fatal(err)
		}
		read, sign = read+cpu1-cpu0, sign+testenv.CPUTime()-cpu1
		readWall, signWall = readWall+wall1.Sub(wall0), signWall+time.Since(wall1)
	}
	n := float64(events) * float64(b.N)
	b.ReportMetric(n/sign.Seconds(), "sign-cpu-events/s")
	b.ReportMetric(n/read.Seconds(), "read-cpu-events/s")
	b.ReportMetric(100*read.Seconds()/sign.Seconds(), "%-of-read-rate")
	b.ReportMetric(100*readWall.Seconds()/signWall.Seconds(), "%-of-read-rate-wall")
}
