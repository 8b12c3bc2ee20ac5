package clock

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"testing"

	"kairos/trace"
	"kairos/workload"
)

// benchIterations is the number of stencil2d iterations of the benchmark
// trace: 646 events each on 64 ranks. KAIROS_BENCH_ITERATIONS=16000 gives
// the 10-million-event trace of BENCHMARKS.md.
func benchIterations() int {
	if n, err := strconv.Atoi(os.Getenv("KAIROS_BENCH_ITERATIONS")); err == nil && n > 0 {
		return n
	}
	return 200
}

var (
	benchOnce  sync.Once
	benchTrace *trace.Trace
)

// benchSource returns the benchmark's 64-rank stencil2d trace, loaded in
// memory so that the benchmark times the replay, not the generator.
func benchSource(b *testing.B) *trace.Trace {
	benchOnce.Do(func() {
		p, err := workload.Defaults("stencil2d")
		if err != nil {
			b.Fatal(err)
		}
		p.Ranks, p.Grid, p.Iterations, p.Imbalance, p.Noise = 64, []int{8, 8}, benchIterations(), 0.3, 0.1
		src, err := workload.New("stencil2d", p)
		if err != nil {
			b.Fatal(err)
		}
		if benchTrace, err = trace.Load(src); err != nil {
			b.Fatal(err)
		}
	})
	return benchTrace
}

// cpuSeconds returns the user and system CPU time of the process.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)*1e-6 }
	return tv(ru.Utime) + tv(ru.Stime)
}

// benchConfigs returns n configurations: the Table III sweeps of the
// three interconnects, then a bandwidth x latency grid.
func benchConfigs(n int) []Config {
	var cs []Config
	for i := 0; len(cs) < n; i++ {
		cs = append(cs, Config{BW: 0.5 * float64(1+i%16), Lat: 0.5 * float64(1+i/16)})
	}
	if n == 21 {
		for i, p := range Interconnects[0].Sweeps() {
			cs[i] = p.Config
		}
	}
	return cs
}

// BenchmarkReplay measures event-configurations replayed per second on a
// 64-rank stencil2d trace, for 1, 21 and 256 configurations, on one core
// and with the configurations split among all cores.
func BenchmarkReplay(b *testing.B) {
	src := benchSource(b)
	events := src.NumEvents()
	for _, workers := range []int{1, runtime.GOMAXPROCS(0)} {
		for _, nc := range []int{1, 21, 256} {
			if workers > 1 && nc == 1 {
				continue
			}
			b.Run(fmt.Sprintf("configs=%d/workers=%d", nc, workers), func(b *testing.B) {
				opt := DefaultOptions()
				opt.Speed, opt.Configs, opt.Workers = 1e9, benchConfigs(nc), workers
				cpu0 := cpuSeconds()
				var res *Result
				for b.Loop() {
					var err error
					if res, err = Replay(src, opt); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(res.BytesPerRankConfig, "bytes/rank/config")
				work := float64(events) * float64(nc) * float64(b.N) / 1e6
				b.ReportMetric(float64(events), "events")
				b.ReportMetric(work/b.Elapsed().Seconds(), "Mevent-configs/s")
				// Per CPU-second of the process (GC included): the
				// throughput of one core, whatever else loads the machine.
				b.ReportMetric(work/(cpuSeconds()-cpu0), "Mevent-configs/cpu-s")
			})
		}
	}
}
