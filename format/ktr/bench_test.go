package ktr

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"kairos/internal/testenv"
	"kairos/trace"
)

// The benchmarks use a 64-rank (8 x 8) stencil of 2,000 iterations:
// 1.33 million events.
const benchPX, benchPY, benchIters = 8, 8, 2000

// benchTrace is built once for all benchmarks.
var benchTraces = map[bool]*trace.Trace{}

func benchTrace(timed bool) *trace.Trace {
	if t, ok := benchTraces[timed]; ok {
		return t
	}
	t := stencil(benchPX, benchPY, benchIters, timed)
	benchTraces[timed] = t
	return t
}

// TestMemoryBytesPerEvent checks the target for the in-memory
// codec (well under 32 bytes per event) on the realistic stencil, timed
// and untimed.
func TestMemoryBytesPerEvent(t *testing.T) {
	for _, timed := range []bool{false, true} {
		tr := stencil(8, 8, 100, timed)
		per := float64(tr.EncodedBytes()) / float64(tr.NumEvents())
		t.Logf("stencil timed=%v: %.2f bytes/event in memory (%d events)", timed, per, tr.NumEvents())
		if per >= 32 {
			t.Errorf("timed=%v: %.2f bytes/event in memory, want well under 32", timed, per)
		}
	}
}

// BenchmarkMemory reports the in-memory size of trace.Trace per event.
func BenchmarkMemory(b *testing.B) {
	for _, timed := range []bool{false, true} {
		b.Run(fmt.Sprintf("timed=%v", timed), func(b *testing.B) {
			tr := benchTrace(timed)
			for b.Loop() {
			}
			b.ReportMetric(float64(tr.EncodedBytes())/float64(tr.NumEvents()), "bytes/event")
		})
	}
}

// BenchmarkWrite measures writing the stencil as a ktr file.
func BenchmarkWrite(b *testing.B) {
	tr := benchTrace(false)
	path := filepath.Join(b.TempDir(), "w.ktr")
	cpu0 := testenv.CPUTime()
	for b.Loop() {
		if err := Write(path, tr); err != nil {
			b.Fatal(err)
		}
	}
	reportRate(b, float64(tr.NumEvents()), cpu0)
}

// BenchmarkLoad measures loading a ktr file into memory (trace.Load) and
// streaming it (trace.ForEach).
func BenchmarkLoad(b *testing.B) {
	for _, timed := range []bool{false, true} {
		tr := benchTrace(timed)
		path := writeTemp(b, tr, Options{})
		b.Run(fmt.Sprintf("timed=%v", timed), func(b *testing.B) {
			benchRead(b, float64(tr.NumEvents()), func() (trace.Source, error) { return open(path) })
		})
	}
}

// benchRead runs "load" (trace.Load) and "stream" (trace.ForEach)
// sub-benchmarks of the trace of n events that open opens.
func benchRead(b *testing.B, n float64, open func() (trace.Source, error)) {
	modes := []struct {
		name string
		read func(trace.Source) error
	}{
		{"load", func(s trace.Source) error { _, err := trace.Load(s); return err }},
		{"stream", func(s trace.Source) error {
			return trace.ForEach(s, func(int, int, *trace.Event) error { return nil })
		}},
	}
	for _, m := range modes {
		b.Run(m.name, func(b *testing.B) {
			cpu0 := testenv.CPUTime()
			for b.Loop() {
				src, err := open()
				if err == nil {
					err = m.read(src)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			reportRate(b, n, cpu0)
		})
	}
}

// reportRate reports the events per second of wall-clock time and the CPU
// nanoseconds per event since cpu0, for n events per iteration.
func reportRate(b *testing.B, n float64, cpu0 time.Duration) {
	b.ReportMetric(n*float64(b.N)/b.Elapsed().Seconds(), "events/s")
	if cpu := testenv.CPUTime() - cpu0; cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/(n*float64(b.N)), "cpu-ns/event")
	}
}
