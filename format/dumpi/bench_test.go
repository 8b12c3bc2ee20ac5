package dumpi

import (
	"os"
	"testing"
	"time"

	"kairos/internal/testenv"
	"kairos/trace"
)

// benchRead reads every event of the trace at path b.N times on one
// goroutine, reporting events/s and MB/s (of .bin bytes) by the wall clock
// and per CPU second of the process (which includes the GC's work on the
// other core, and which other load on the machine does not inflate).
func benchRead(b *testing.B, path string) {
	src, err := Open(path)
	if err != nil {
		b.Fatal(err)
	}
	var size int64
	for _, f := range src.files {
		st, err := os.Stat(f.path)
		if err != nil {
			b.Fatal(err)
		}
		size += st.Size()
	}
	b.SetBytes(size)
	b.ReportAllocs()
	var events int64
	start, cpu := time.Now(), testenv.CPUTime().Seconds()
	for b.Loop() {
		err := trace.ForEach(src, func(int, int, *trace.Event) error { events++; return nil })
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(events)/time.Since(start).Seconds(), "events/s")
	if c := testenv.CPUTime().Seconds() - cpu; c > 0 {
		// The loop runs on one goroutine: CPU seconds are one core's.
		b.ReportMetric(float64(events)/c, "events/cpu-s")
		b.ReportMetric(float64(size)*float64(b.N)/c/1e6, "MB/cpu-s")
	}
}

// BenchmarkReadSample reads the largest shared sample (testbgp: 7 ranks,
// 1,589 calls).
func BenchmarkReadSample(b *testing.B) {
	benchRead(b, testenv.Shared(b, "traces/dumpi/sst-macro-testbgp"))
}

// BenchmarkReadSynthetic reads a synthetic 2-rank trace of 2 million
// calls (per rank, 250,000 rounds of Isend, Irecv, Waitall and
// Allreduce, all with wall times), written in the set-up.
func BenchmarkReadSynthetic(b *testing.B) {
	dir := b.TempDir()
	const rounds = 250_000
	ws := writers(2)
	for r, w := range ws {
		for i := 0; i < rounds; i++ {
			req := 2 + 2*(i%1000)
			w.call(lIsend, 128, 14, 1-r, i%100, commWorld, req)
			w.call(lIrecv, 128, 14, 1-r, i%100, commWorld, req+1)
			w.call(lWaitall, 2, []int32{int32(req), int32(req + 1)}, nil)
			w.call(lAllreduce, 4, 14, 3, commWorld)
		}
	}
	benchRead(b, writeTrace(b, dir, ws))
}
