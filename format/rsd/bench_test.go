package rsd

import (
	"path/filepath"
	"testing"
	"time"

	"kairos/format"
	_ "kairos/format/alawneh"
	_ "kairos/format/ktr"
	"kairos/internal/testenv"
	"kairos/trace"
	"kairos/workload"
)

// BenchmarkReadNoisy opens and reads every rank of noisy, imbalanced
// traces from their .ktr and their .rsd files side by side (the reading
// that every verb does before its own work, `kairos stats` almost all of
// it), and reports the events read per CPU second.
func BenchmarkReadNoisy(b *testing.B) {
	for _, c := range []struct {
		name, kind string
		set        func(*workload.Params)
	}{
		{"cg256", "cg", func(p *workload.Params) { // gen cg -n 256 -i 5 --inner 5
			p.Ranks, p.Grid, p.Iterations, p.Inner, p.Noise, p.Imbalance = 256, nil, 5, 5, 0.05, 0.2
		}},
		{"stencil32x32", "stencil2d", func(p *workload.Params) { // gen stencil2d --grid 32x32 -i 100
			p.Ranks, p.Grid, p.Iterations, p.Noise, p.Imbalance = 0, []int{32, 32}, 100, 0.05, 0.2
		}},
		{"lu64", "lu", func(p *workload.Params) { // gen lu -n 64
			p.Ranks, p.Grid, p.Noise, p.Imbalance = 64, nil, 0.05, 0.1
		}},
	} {
		p, err := workload.Defaults(c.kind)
		if err != nil {
			b.Fatal(err)
		}
		c.set(&p)
		src, err := workload.New(c.kind, p)
		if err != nil {
			b.Fatal(err)
		}
		benchForms(b, c.name, src)
	}
}

// BenchmarkReadReal is BenchmarkReadNoisy on the trace of a real
// program, SMG2000 on 4 ranks, whose irregular calls make a .rsd of a
// node for every 6 events.
func BenchmarkReadReal(b *testing.B) {
	src, _, err := format.Open(testenv.Shared(b, "traces/alawneh/smg2000-4p"))
	if err != nil {
		b.Fatal(err)
	}
	benchForms(b, "smg2000", src)
}

// benchForms writes src as a .ktr and a .rsd file and runs a benchmark
// of reading each, and one of opening the .rsd.
func benchForms(b *testing.B, name string, src trace.Source) {
	dir := b.TempDir()
	events := 0
	for _, ext := range []string{".ktr", ".rsd"} {
		path := filepath.Join(dir, name+ext)
		f, err := format.ForOutput(path, "")
		if err != nil {
			b.Fatal(err)
		}
		if err := f.Write(path, src); err != nil {
			b.Fatal(err)
		}
		b.Run(name+"/"+ext[1:], func(b *testing.B) {
			cpu0 := testenv.CPUTime()
			for b.Loop() {
				events = readAll(b, path)
			}
			cpu := (testenv.CPUTime() - cpu0) / time.Duration(b.N)
			b.ReportMetric(float64(events)/cpu.Seconds(), "cpu-events/s")
		})
	}
	// The .rsd's opening alone (its items unpacked, its series checked),
	// where a .ktr's opening reads its index only.
	b.Run(name+"/rsd-open", func(b *testing.B) {
		cpu0 := testenv.CPUTime()
		for b.Loop() {
			if _, err := Open(filepath.Join(dir, name+".rsd")); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(testenv.CPUTime()-cpu0)/float64(b.N)/1e6, "cpu-ms/op")
	})
}

// readAll opens path and reads every event of every rank, returning
// their number.
func readAll(b *testing.B, path string) int {
	src, _, err := format.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	if err := trace.ForEach(src, func(_, _ int, _ *trace.Event) error { n++; return nil }); err != nil {
		b.Fatal(err)
	}
	if c, ok := src.(interface{ Close() error }); ok {
		c.Close()
	}
	return n
}
