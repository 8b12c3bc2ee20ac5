package ktr

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kairos/format"
	_ "kairos/format/alawneh"
	_ "kairos/format/ti"
	"kairos/internal/testenv"
	"kairos/trace"
	"kairos/workload"
)

// BenchmarkReadTraces opens .ktr files of noisy, imbalanced generated
// traces and of real programs and reads every event of every rank, one
// rank after the other on one goroutine, as every verb does before its
// own work. It reports events per CPU second (user+sys, getrusage) beside
// events per wall second. The generated traces are those of
// `kairos gen stencil2d --grid 32x32 -i 100`, `gen lu -n 64` and
// `gen cg -n 256 -i 5 --inner 5` with noise and imbalance; the real one is
// SMG2000 on 4 ranks (../shared). KAIROS_BENCH_TRACES adds traces of any
// format Kairos reads (a comma-separated list of paths), converted to
// .ktr first.
func BenchmarkReadTraces(b *testing.B) {
	type input struct {
		name string
		src  func() (trace.Source, error)
	}
	gen := func(kind string, set func(*workload.Params)) func() (trace.Source, error) {
		return func() (trace.Source, error) {
			p, err := workload.Defaults(kind)
			if err != nil {
				return nil, err
			}
			set(&p)
			return workload.New(kind, p)
		}
	}
	open := func(path string) func() (trace.Source, error) {
		return func() (trace.Source, error) { s, _, err := format.Open(path); return s, err }
	}
	inputs := []input{
		{"stencil32x32", gen("stencil2d", func(p *workload.Params) {
			p.Ranks, p.Grid, p.Iterations, p.Noise, p.Imbalance = 0, []int{32, 32}, 100, 0.05, 0.2
		})},
		{"lu64", gen("lu", func(p *workload.Params) {
			p.Ranks, p.Grid, p.Noise, p.Imbalance = 64, nil, 0.05, 0.1
		})},
		{"cg256", gen("cg", func(p *workload.Params) {
			p.Ranks, p.Grid, p.Iterations, p.Inner, p.Noise, p.Imbalance = 256, nil, 5, 5, 0.05, 0.2
		})},
		{"smg2000", open(testenv.Shared(b, "traces/alawneh/smg2000-4p"))},
	}
	for _, p := range strings.Split(os.Getenv("KAIROS_BENCH_TRACES"), ",") {
		if p != "" {
			inputs = append(inputs, input{strings.ReplaceAll(strings.Trim(p, "/"), "/", "_"), open(p)})
		}
	}
	dir := b.TempDir()
	for _, in := range inputs {
		src, err := in.src()
		if err != nil {
			b.Fatal(err)
		}
		path := filepath.Join(dir, in.name+".ktr")
		if err := Write(path, src); err != nil {
			b.Fatal(err)
		}
		b.Run(in.name+"/ranks", func(b *testing.B) { benchReadAll(b, path, trace.ForEach) })
		b.Run(in.name+"/interleaved", func(b *testing.B) { benchReadAll(b, path, roundRobin) })
	}
}

// benchReadAll opens path and reads every event of every rank with read,
// each iteration, and reports the rates.
func benchReadAll(b *testing.B, path string, read func(trace.Source, func(int, int, *trace.Event) error) error) {
	var events int64
	cpu0, wall0 := testenv.CPUTime(), time.Now()
	for b.Loop() {
		src, err := Open(path)
		if err != nil {
			b.Fatal(err)
		}
		events = 0
		if err := read(src, func(int, int, *trace.Event) error { events++; return nil }); err != nil {
			b.Fatal(err)
		}
	}
	cpu, wall := testenv.CPUTime()-cpu0, time.Since(wall0)
	n := float64(events) * float64(b.N)
	b.ReportMetric(n/cpu.Seconds(), "cpu-events/s")
	b.ReportMetric(n/wall.Seconds(), "wall-events/s")
	b.ReportMetric(float64(cpu.Nanoseconds())/n, "cpu-ns/event")
}

// roundRobin reads src as a replay does: every rank open at once, an
// event of each in turn, so that each rank's reader state and data leave
// the cache before its next event (trace.ForEach reads one rank after the
// other).
func roundRobin(src trace.Source, fn func(rank, index int, e *trace.Event) error) error {
	rds := make([]trace.Reader, src.NumRanks())
	for r := range rds {
		rd, err := src.OpenRank(r)
		if err != nil {
			return err
		}
		defer rd.Close()
		rds[r] = rd
	}
	for i, live := 0, len(rds); live > 0; i++ {
		live = 0
		for r, rd := range rds {
			if rd == nil {
				continue
			}
			if !rd.Next() {
				if err := rd.Err(); err != nil {
					return err
				}
				rds[r] = nil
				continue
			}
			live++
			if err := fn(r, i, rd.Event()); err != nil {
				return err
			}
		}
	}
	return nil
}
