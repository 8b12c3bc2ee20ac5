package ti

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"kairos/internal/testenv"
	"kairos/trace"
)

// benchText is one rank of a 2-D stencil in TI: per iteration a compute,
// four irecv and four isend to the neighbours, a waitall, and every tenth
// iteration an allreduce. About 1.1 million lines, 26 MB.
var benchText = sync.OnceValues(func() ([]byte, int) {
	var b bytes.Buffer
	lines := 0
	peers := []int{1, 3, 12, 60}
	for it := 0; lines < 1_100_000; it++ {
		b.WriteString("4 compute " + strconv.Itoa(150000+it%977*13) + "\n")
		for _, p := range peers {
			b.WriteString("4 irecv " + strconv.Itoa(p) + " " + strconv.Itoa(it%7) + " 2048 0\n")
		}
		for _, p := range peers {
			b.WriteString("4 isend " + strconv.Itoa(p) + " " + strconv.Itoa(it%7) + " 2048 0\n")
		}
		b.WriteString("4 waitall\n")
		lines += 10
		if it%10 == 9 {
			b.WriteString("4 allreduce 1 2.5e3\n")
			lines++
		}
	}
	return b.Bytes(), lines
})

func benchParse(b *testing.B, open func(data []byte) io.Reader, data []byte, lines int) {
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	cpu0 := testenv.CPUTime()
	for b.Loop() {
		rd := NewReader(open(data), "bench.ti", 4, 64, trace.TypeByte, ReaderOptions{})
		n := 0
		for rd.Next() {
			n++
		}
		if rd.Err() != nil || n != lines {
			b.Fatalf("%d events, %v", n, rd.Err())
		}
	}
	reportRates(b, lines, testenv.CPUTime()-cpu0)
}

// reportRates reports actions per second of wall time and per second of
// this process's CPU time (the machine may be shared).
func reportRates(b *testing.B, lines int, cpu time.Duration) {
	n := float64(lines) * float64(b.N)
	b.ReportMetric(n/b.Elapsed().Seconds(), "actions/s")
	if cpu > 0 {
		b.ReportMetric(n/cpu.Seconds(), "actions/cpu-s")
	}
}

// BenchmarkParse parses a million-line rank from memory.
func BenchmarkParse(b *testing.B) {
	data, lines := benchText()
	benchParse(b, func(d []byte) io.Reader { return bytes.NewReader(d) }, data, lines)
}

// BenchmarkParseGzip parses the same rank from gzip-compressed memory.
func BenchmarkParseGzip(b *testing.B) {
	data, lines := benchText()
	var z bytes.Buffer
	w := gzip.NewWriter(&z)
	w.Write(data)
	w.Close()
	benchParse(b, func(d []byte) io.Reader {
		r, err := gzip.NewReader(bytes.NewReader(d))
		if err != nil {
			b.Fatal(err)
		}
		return r
	}, z.Bytes(), lines)
}

// BenchmarkWrite writes the same rank back as TI.
func BenchmarkWrite(b *testing.B) {
	data, lines := benchText()
	tr := trace.New(65, trace.NewMeta())
	rd := NewReader(bytes.NewReader(data), "bench.ti", 4, 65, trace.TypeByte, ReaderOptions{})
	for rd.Next() {
		tr.Ranks[4].Append(rd.Event())
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	cpu0 := testenv.CPUTime()
	for b.Loop() {
		var st WriteStats
		if err := WriteShared(io.Discard, tr, &st); err != nil || st.Lines != lines {
			b.Fatal(err, st.Lines)
		}
	}
	reportRates(b, lines, testenv.CPUTime()-cpu0)
}

// BenchmarkOpen measures the scan Open makes of a shared file (the
// million-line rank written to disk): indexing ranks, inits, locations.
func BenchmarkOpen(b *testing.B) {
	data, lines := benchText()
	path := filepath.Join(b.TempDir(), "bench.ti")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	cpu0 := testenv.CPUTime()
	for b.Loop() {
		tr, err := Open(path)
		if err != nil || tr.NumRanks() != 5 {
			b.Fatal(err)
		}
	}
	reportRates(b, lines, testenv.CPUTime()-cpu0)
}

// BenchmarkOpenDescription measures opening a description of 64 per-rank
// files of 10,000 stencil lines each (12 MB, as the 64-rank stencil of
// BENCHMARKS.md), with the regions of location lines (every file read in
// full) and without (first line and end only).
func BenchmarkOpenDescription(b *testing.B) {
	path, _ := writeDescription(b, 64)
	for _, noRegions := range []bool{false, true} {
		b.Run("NoRegions="+strconv.FormatBool(noRegions), func(b *testing.B) {
			for b.Loop() {
				tr, err := OpenWith(path, ReaderOptions{NoRegions: noRegions})
				if err != nil || tr.NumRanks() != 64 {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkReadAhead reads a description of 64 per-rank files of 10,000
// stencil lines each as a replay does (NoRegions, trace.Prefetch with 4
// KiB chunks, the ranks taken in turns, an event at a time): the whole
// cost of reading a TI trace for a replay, scan, parse on the read-ahead
// worker, the copy-out on the consumer, in actions per CPU second of the
// process.
func BenchmarkReadAhead(b *testing.B) {
	path, lines := writeDescription(b, 64)
	cpu0 := testenv.CPUTime()
	for b.Loop() {
		tr, err := OpenWith(path, ReaderOptions{NoRegions: true})
		if err != nil {
			b.Fatal(err)
		}
		src := trace.Prefetch(tr, 4096)
		rds := make([]trace.Reader, src.NumRanks())
		for r := range rds {
			if rds[r], err = src.OpenRank(r); err != nil {
				b.Fatal(err)
			}
		}
		n := 0
		for live := slices.Clone(rds); len(live) > 0; {
			live = slices.DeleteFunc(live, func(rd trace.Reader) bool {
				for range 10 {
					if !rd.Next() {
						return true
					}
					n++
				}
				return false
			})
		}
		for _, rd := range rds {
			if rd.Err() != nil {
				b.Fatal(rd.Err())
			}
			rd.Close()
		}
		if n != lines {
			b.Fatalf("%d events, want %d", n, lines)
		}
	}
	reportRates(b, lines, testenv.CPUTime()-cpu0)
}

// writeDescription writes a description of n per-rank files of about
// 10,000 lines of benchText each and returns its path and the lines of
// all the files.
func writeDescription(b *testing.B, n int) (string, int) {
	data, _ := benchText()
	dir := b.TempDir()
	one := data[:bytes.IndexByte(data[190_000:], '\n')+190_001] // about 10,000 lines
	lines := bytes.Count(one, []byte("\n")) * n
	var desc bytes.Buffer
	for r := range n {
		name := "r" + strconv.Itoa(r) + ".ti"
		text := bytes.ReplaceAll(one, []byte("4 "), []byte(strconv.Itoa(r)+" "))
		if err := os.WriteFile(filepath.Join(dir, name), text, 0o644); err != nil {
			b.Fatal(err)
		}
		desc.WriteString(name + "\n")
	}
	path := filepath.Join(dir, "desc.txt")
	if err := os.WriteFile(path, desc.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	return path, lines
}
