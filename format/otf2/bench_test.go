package otf2

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"kairos/internal/testenv"
	"kairos/trace"
)

var (
	synthOnce sync.Once
	synthDir  string
)

// synthetic returns an archive of 10.2 million events (8 ranks of 1.275
// million Enter/MpiSend|MpiRecv/Leave events) written with libotf2 once
// per test binary.
func synthetic(b *testing.B) string {
	w := otf2Writer(b)
	synthOnce.Do(func() {
		dir := filepath.Join(writerDir, "synthetic")
		if out, err := exec.Command(w, dir, "bench", strconv.Itoa(1275000), "8").CombinedOutput(); err != nil {
			b.Fatalf("otf2writer: %v\n%s", err, out)
		}
		synthDir = dir
	})
	if synthDir == "" {
		b.Fatal("no synthetic archive")
	}
	return synthDir
}

// eventBytes returns the total size of an archive's event files.
func eventBytes(b *testing.B, dir string) int64 {
	m, _ := filepath.Glob(filepath.Join(dir, "traces", "*.evt"))
	var n int64
	for _, p := range m {
		st, err := os.Stat(p)
		if err != nil {
			b.Fatal(err)
		}
		n += st.Size()
	}
	return n
}

// otf2PrintSilent times `otf2-print --silent` (global reader, no output)
// on the archive, the reference the benchmarks compare with.
func otf2PrintSilent(b *testing.B, dir string) time.Duration {
	p := testenv.Tool(b, "otf2-print", "otf2-tools")
	best := time.Duration(0)
	for i := 0; i < 2; i++ {
		start := time.Now()
		if out, err := exec.Command(p, "--silent", filepath.Join(dir, "traces.otf2")).CombinedOutput(); err != nil {
			b.Fatalf("otf2-print --silent: %v\n%s", err, out)
		}
		if d := time.Since(start); best == 0 || d < best {
			best = d
		}
	}
	return best
}

// benchMerged reads every event of dir in global order, as otf2-print
// does, and reports events/s, MB/s and the speed ratio to otf2-print.
func benchMerged(b *testing.B, dir string) {
	ref := otf2PrintSilent(b, dir)
	b.SetBytes(eventBytes(b, dir))
	b.ResetTimer()
	cpu0 := testenv.CPUTime()
	var events int
	for i := 0; i < b.N; i++ {
		a, err := OpenArchive(dir)
		if err != nil {
			b.Fatal(err)
		}
		m, err := a.Merged()
		if err != nil {
			b.Fatal(err)
		}
		events = 0
		for m.Next() {
			events++
		}
		if err := m.Err(); err != nil {
			b.Fatal(err)
		}
		m.Close()
	}
	per := b.Elapsed() / time.Duration(b.N)
	cpu := (testenv.CPUTime() - cpu0) / time.Duration(b.N)
	b.ReportMetric(float64(events)/per.Seconds(), "events/s")
	b.ReportMetric(float64(events)/cpu.Seconds(), "cpu-events/s")
	b.ReportMetric(float64(events)/ref.Seconds(), "otf2print-events/s")
	b.ReportMetric(ref.Seconds()/per.Seconds(), "x-otf2print")
}

// BenchmarkReadMerged measures the global (merged, clock-corrected)
// read of the largest sample and of the 10-million-event synthetic trace.
func BenchmarkReadMerged(b *testing.B) {
	b.Run("fastotf2-mi300-hip", func(b *testing.B) {
		benchMerged(b, testenv.Shared(b, "traces/otf2/fastotf2-mi300-hip"))
	})
	b.Run("synthetic-10M", func(b *testing.B) { benchMerged(b, synthetic(b)) })
}

// BenchmarkReadLocations measures the rank-at-a-time read of the raw
// records of the synthetic trace (no merge).
func BenchmarkReadLocations(b *testing.B) {
	dir := synthetic(b)
	b.SetBytes(eventBytes(b, dir))
	cpu0 := testenv.CPUTime()
	var events int
	for i := 0; i < b.N; i++ {
		a, err := OpenArchive(dir)
		if err != nil {
			b.Fatal(err)
		}
		events = 0
		for _, l := range a.Defs.Locations {
			rd, err := a.OpenLocation(l.ID)
			if err != nil {
				b.Fatal(err)
			}
			for rd.Next() {
				events++
			}
			if err := rd.Err(); err != nil {
				b.Fatal(err)
			}
			rd.Close()
		}
	}
	b.ReportMetric(float64(events)/(b.Elapsed()/time.Duration(b.N)).Seconds(), "events/s")
	b.ReportMetric(float64(events)/((testenv.CPUTime()-cpu0)/time.Duration(b.N)).Seconds(), "cpu-events/s")
}

// BenchmarkModel measures reading the synthetic trace into the Kairos
// model (Open's scan pass plus one pass per rank).
func BenchmarkModel(b *testing.B) {
	dir := synthetic(b)
	b.SetBytes(eventBytes(b, dir))
	cpu0 := testenv.CPUTime()
	var events int
	for i := 0; i < b.N; i++ {
		s, err := Open(dir)
		if err != nil {
			b.Fatal(err)
		}
		events = 0
		if err := trace.ForEach(s, func(int, int, *trace.Event) error { events++; return nil }); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(events)/(b.Elapsed()/time.Duration(b.N)).Seconds(), "mpicalls/s")
	b.ReportMetric(float64(events)/((testenv.CPUTime()-cpu0)/time.Duration(b.N)).Seconds(), "cpu-mpicalls/s")
}

// BenchmarkWrite writes the simulated run of a noisy, imbalanced
// stencil (16 ranks, 1,000 iterations: 161,632 events) held in memory as
// an archive, replacing the previous one: events (computations included)
// per second and per CPU second, and bytes written. (With 64 ranks of
// 100 iterations, creating, renaming and removing the files take most of
// the time.)
func BenchmarkWrite(b *testing.B) {
	src := simulated(b, "stencil2d", 16, 1000)
	dir := b.TempDir()
	path := filepath.Join(dir, "traces.otf2")
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := testenv.CPUTime()
	for range b.N {
		if err := Write(path, src); err != nil {
			b.Fatal(err)
		}
	}
	cpu := (testenv.CPUTime() - cpu0) / time.Duration(b.N)
	events := float64(src.NumEvents())
	b.ReportMetric(events/(b.Elapsed()/time.Duration(b.N)).Seconds(), "events/s")
	b.ReportMetric(events/cpu.Seconds(), "cpu-events/s")
	b.ReportMetric(float64(eventBytes(b, dir)), "evt-bytes")
}
