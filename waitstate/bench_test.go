package waitstate

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"kairos/internal/testenv"
)

// BenchmarkAnalyze analyzes halo exchanges of 64 and 256 ranks, 1,000
// iterations with an allreduce every 10 and one delayed rank (stencil),
// held in memory: the analysis alone, without a file's decoding. The
// process's CPU time per analysis is reported beside the wall time.
func BenchmarkAnalyze(b *testing.B) {
	for _, ranks := range []int{64, 256} {
		tr := stencil(rand.New(rand.NewPCG(1, 1)), ranks, 1000, 10, 27, map[int]bool{100: true, 500: true, 900: true})
		events := tr.t.NumEvents()
		b.Run(fmt.Sprintf("ranks=%d", ranks), func(b *testing.B) {
			cpu0 := testenv.CPUTime()
			for b.Loop() {
				if _, err := Analyze(tr.t, Options{}); err != nil {
					b.Fatal(err)
				}
			}
			cpu := (testenv.CPUTime() - cpu0).Seconds() / float64(b.N)
			b.ReportMetric(cpu*1e3, "cpu-ms/op")
			b.ReportMetric(float64(events)/cpu/1e6, "Mevents/cpu-s")
			b.ReportMetric(float64(events), "events")
		})
	}
}
