package ktr

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"kairos/format/ti"
	"kairos/internal/testenv"
	"kairos/trace"
)

// The comparison with SimGrid's time-independent text uses format/ti's
// writer and reader on the benchmark stencil, written as one gzipped
// shared file. TI drops what it cannot carry (call-sites, regions,
// request ids); the ktr file keeps all of it.

// writeTIGzip writes tr as a gzipped shared TI file and returns its path.
func writeTIGzip(b testing.TB, tr trace.Source) string {
	b.Helper()
	path := filepath.Join(b.TempDir(), "stencil.ti.gz")
	st, err := ti.WriteFile(path, tr, ti.WriteOptions{Layout: ti.Shared})
	if err != nil {
		b.Fatal(err)
	}
	if st.DroppedTotal() != 0 {
		b.Fatalf("TI writer dropped events: %s", st.String())
	}
	return path
}

func fileSize(b testing.TB, path string) float64 {
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	return float64(st.Size())
}

// BenchmarkSize compares the ktr file of the stencil with the same trace
// as gzipped TI text, and with the ktr file of what TI keeps of it, for
// the benchmark's 2% compute noise and for quieter traces: the noise of
// the compute amounts is most of what neither format can compress.
func BenchmarkSize(b *testing.B) {
	for _, noise := range []float64{0.02, 0.002, 0} {
		b.Run(fmt.Sprintf("noise=%g", noise), func(b *testing.B) {
			tr := benchTrace(false)
			if noise != 0.02 {
				tr = stencilNoise(benchPX, benchPY, benchIters, false, noise)
			}
			tiPath := writeTIGzip(b, tr)
			fromTI, err := ti.Open(tiPath)
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
			}
			n := float64(tr.NumEvents())
			full := fileSize(b, writeTemp(b, tr, Options{}))
			same := fileSize(b, writeTemp(b, fromTI, Options{}))
			tiSize := fileSize(b, tiPath)
			b.ReportMetric(full/n, "ktr-B/event")
			b.ReportMetric(same/n, "ktr-of-ti-B/event")
			b.ReportMetric(tiSize/n, "ti.gz-B/event")
			b.ReportMetric(tiSize/full, "ti.gz/ktr")
			b.ReportMetric(tiSize/same, "ti.gz/ktr-of-ti")
		})
	}
	b.Run("timed", func(b *testing.B) {
		tr := benchTrace(true)
		for b.Loop() {
		}
		b.ReportMetric(fileSize(b, writeTemp(b, tr, Options{}))/float64(tr.NumEvents()), "ktr-B/event")
	})
}

// BenchmarkSizeSimGrid compares sizes on a real SimGrid trace (NAS IS-like,
// 32 ranks, from SimGrid's examples), as shared gzipped TI text and ktr.
func BenchmarkSizeSimGrid(b *testing.B) {
	src, err := ti.Open(testenv.Shared(b, "traces/ti/simgrid-replay-multiple-32/is32-flat.txt"))
	if err != nil {
		b.Fatal(err)
	}
	tr, err := trace.Load(src)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
	}
	n := float64(tr.NumEvents())
	k, t := fileSize(b, writeTemp(b, tr, Options{})), fileSize(b, writeTIGzip(b, tr))
	b.ReportMetric(n, "events")
	b.ReportMetric(k/n, "ktr-B/event")
	b.ReportMetric(t/n, "ti.gz-B/event")
	b.ReportMetric(t/k, "ti.gz/ktr")
}

// BenchmarkLoadTI measures loading (trace.Load) and streaming
// (trace.ForEach) the gzipped TI text of the stencil with format/ti, to
// compare with BenchmarkLoad.
func BenchmarkLoadTI(b *testing.B) {
	tr := benchTrace(false)
	path := writeTIGzip(b, tr)
	benchRead(b, float64(tr.NumEvents()), func() (trace.Source, error) { return ti.Open(path) })
}
