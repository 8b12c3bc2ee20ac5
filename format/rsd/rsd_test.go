package rsd

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kairos/format"
	"kairos/format/ktr"
	"kairos/prsd"
	"kairos/trace"
	"kairos/workload"
)

// gen returns a generator's trace of ranks ranks, with 2% noise and 10%
// imbalance.
func gen(t testing.TB, kind string, ranks, iterations int) trace.Source {
	return genNoisy(t, kind, ranks, iterations, 0.02)
}

// genNoisy returns a generator's trace of ranks ranks, with noise and
// 10% imbalance.
func genNoisy(t testing.TB, kind string, ranks, iterations int, noise float64) trace.Source {
	t.Helper()
	p, err := workload.Defaults(kind)
	if err != nil {
		t.Fatal(err)
	}
	p.Ranks, p.Grid, p.Iterations = ranks, nil, iterations
	p.Imbalance, p.Noise = 0.1, noise
	src, err := workload.New(kind, p)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func mustEncode(t testing.TB, tr *prsd.Trace) []byte {
	t.Helper()
	b, err := Encode(tr)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRoundTrip: every generator's trace written and read back gives
// every rank's calls back, and the file is read as this format.
func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	for _, kind := range workload.Kinds() {
		src := gen(t, kind, 16, 3)
		path := filepath.Join(dir, kind+".rsd")
		if err := Write(path, src); err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		back, f, err := format.Open(path)
		if err != nil || f.Name != "rsd" {
			t.Fatalf("%s: opened as %q: %v", kind, f.Name, err)
		}
		if err := prsd.Verify(src, back.(*prsd.Trace)); err != nil {
			t.Errorf("%s: %v", kind, err)
		}
		tr, _ := prsd.Build(src, nil, prsd.DefaultOptions())
		if !bytes.Equal(mustEncode(t, tr), mustEncode(t, back.(*prsd.Trace))) {
			t.Errorf("%s: encoding the decoded trace gives other bytes", kind)
		}
	}
}

// TestSizeFlat: a stencil's and LU's compressed files do not grow with
// their iterations nor, past the grid's kinds of ranks, with their ranks.
func TestSizeFlat(t *testing.T) {
	size := func(kind string, ranks, iterations int) int {
		p, _ := workload.Defaults(kind)
		p.Ranks, p.Grid, p.Iterations, p.Periodic = ranks, nil, iterations, false
		src, err := workload.New(kind, p)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := prsd.Build(src, nil, prsd.DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		b, _, _, err := encode(tr, 3)
		if err != nil {
			t.Fatal(err)
		}
		return len(b)
	}
	// Only the varints of the series' lengths grow.
	for _, c := range []struct {
		kind               string
		ranks, few, many   int
		moreRanks, rankIts int
	}{
		{"stencil2d", 64, 20, 400, 1024, 10},
		{"lu", 16, 20, 200, 256, 5}, // its computation sites: repeats of repeats
	} {
		a, b := size(c.kind, c.ranks, c.few), size(c.kind, c.ranks, c.many)
		if b > a+a/6 {
			t.Errorf("%s: %d bytes at %d iterations, %d at %d", c.kind, a, c.few, b, c.many)
		}
		x, y := size(c.kind, c.ranks, c.rankIts), size(c.kind, c.moreRanks, c.rankIts)
		if y > x+x/4 {
			t.Errorf("%s: %d bytes at %d ranks, %d at %d", c.kind, x, c.ranks, y, c.moreRanks)
		}
	}
}

// TestHistogramsFlat: a noisy stencil's and LU's files with histograms
// (--time-histograms) are written and read back with them, and do not grow
// with their iterations; without them, their noise's levels make them
// grow. Where the time error exceeds the ranks' noise and imbalance, the
// ranks share their histograms, each scaled to its own sum, and the
// stencil's file grows with its ranks by their scales alone, a byte or
// two a rank.
func TestHistogramsFlat(t *testing.T) {
	eps := 0.11
	size := func(kind string, ranks, iterations int, hist bool) int {
		p, _ := workload.Defaults(kind)
		p.Ranks, p.Grid, p.Iterations, p.Periodic = ranks, nil, iterations, false
		p.Imbalance, p.Noise = 0.1, 0.05
		src, err := workload.New(kind, p)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := prsd.Build(src, nil, prsd.Options{TimeError: eps, Histograms: hist})
		if err != nil {
			t.Fatal(err)
		}
		b := mustEncode(t, tr)
		back, err := Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		if back.Histograms != hist || !bytes.Equal(mustEncode(t, back), b) {
			t.Fatalf("%s: histograms %v read back as %v, or encoded again to other bytes", kind, hist, back.Histograms)
		}
		if err := prsd.Verify(src, back); err != nil {
			t.Fatal(err)
		}
		return len(b)
	}
	for _, c := range []struct {
		kind             string
		ranks, few, many int
	}{
		{"stencil2d", 16, 700, 2800},
		{"lu", 4, 100, 400}, // its last plane's larger computation: a group of its own
	} {
		a, b := size(c.kind, c.ranks, c.few, true), size(c.kind, c.ranks, c.many, true)
		if b > a+a/8 {
			t.Errorf("%s with histograms: %d bytes at %d iterations, %d at %d", c.kind, a, c.few, b, c.many)
		}
		if l := size(c.kind, c.ranks, c.many, false); l < 2*b {
			t.Errorf("%s without histograms: %d bytes at %d iterations, with them %d", c.kind, l, c.many, b)
		}
	}
	eps = 0.4 // above 5% noise and 10% imbalance: every rank reads one histogram, scaled to its own sum
	if a, b := size("stencil2d", 16, 100, true), size("stencil2d", 256, 100, true); b > a+2*(256-16) {
		t.Errorf("stencil with shared histograms: %d bytes at 16 ranks, %d at 256: more than its ranks' scales", a, b)
	}
}

// TestSizeFlatCG: NAS CG's compressed file, its row exchanges' partners
// r XOR 2^k in XOR mode and its transpose partner relative to the cg
// plug-in, does not grow with the ranks; without the plug-in, the
// transpose partner, neither absolute nor relative, makes it grow.
func TestSizeFlatCG(t *testing.T) {
	size := func(ranks int, plugins []string) int {
		p, _ := workload.Defaults("cg")
		p.Ranks, p.Iterations, p.Inner = ranks, 3, 1
		src, err := workload.New("cg", p)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := prsd.Build(src, nil, prsd.Options{TimeError: prsd.DefaultOptions().TimeError, Plugins: plugins})
		if err != nil {
			t.Fatal(err)
		}
		b, _, _, err := encode(tr, 3) // the structure's size, not zstd's
		if err != nil {
			t.Fatal(err)
		}
		return len(b)
	}
	x, y := size(16, []string{"cg"}), size(1024, []string{"cg"})
	if y > x+x/4 {
		t.Errorf("cg plug-in: %d bytes at 16 ranks, %d at 1,024", x, y)
	}
	if without := size(1024, nil); without < 2*y {
		t.Errorf("without the plug-in %d bytes at 1,024 ranks, with it %d: the transpose partner should cost", without, y)
	}
}

// aggregatedIS returns an IS trace of ranks ranks (10 rankings, 64 KiB of
// keys a rank: counts drawn within ±5% of their mean, ±7% at 256 ranks
// for their rounding) with its alltoallv counts aggregated within 10%.
func aggregatedIS(t testing.TB, ranks int) (trace.Source, *prsd.CountAggregates) {
	t.Helper()
	p, _ := workload.Defaults("is")
	p.Ranks, p.Iterations, p.Bytes = ranks, 10, 64<<10
	src, err := workload.New("is", p)
	if err != nil {
		t.Fatal(err)
	}
	a, err := prsd.AggregateCounts(src, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	return a.Source(src), a
}

// TestAggregatedCountsFlat: IS's alltoallv counts, random P² an instance,
// make the compressed file grow with the square of the ranks; aggregated
// (every count of an instance alike), the file does not grow with the
// ranks, and reads back as the aggregated trace, in version 2's element
// form 2.
func TestAggregatedCountsFlat(t *testing.T) {
	sizes := map[int]int{}
	for _, ranks := range []int{16, 64} {
		src, a := aggregatedIS(t, ranks)
		if a.Aggregated != a.Instances || a.Instances != 10 {
			t.Fatalf("%d ranks: %d of %d instances aggregated, want 10 of 10", ranks, a.Aggregated, a.Instances)
		}
		tr, err := prsd.Build(src, nil, prsd.DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		b := mustEncode(t, tr)
		sizes[ranks] = len(b)
		back, err := Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		if err := prsd.Verify(src, back); err != nil {
			t.Errorf("%d ranks: %v", ranks, err)
		}
		if !bytes.Equal(mustEncode(t, back), b) {
			t.Errorf("%d ranks: encoding the decoded trace gives other bytes", ranks)
		}
	}
	if sizes[64] > sizes[16]+sizes[16]/10 {
		t.Errorf("aggregated IS: %d bytes at 16 ranks, %d at 64", sizes[16], sizes[64])
	}
}

// TestDecodeErrors: damaged files are refused with the byte offset.
func TestDecodeErrors(t *testing.T) {
	src := gen(t, "ring", 4, 2)
	tr, err := prsd.Build(src, nil, prsd.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	good := mustEncode(t, tr)
	flip := func(i int) []byte {
		b := bytes.Clone(good)
		b[i] ^= 0x40
		return b
	}
	for _, c := range []struct {
		name string
		b    []byte
		want string
	}{
		{"empty", nil, "byte 0: not a compressed trace"},
		{"version", flip(8), "byte 8: format version"},
		{"header crc", flip(13), "byte 12: the header's checksum"},
		{"short header", good[:12], "byte 12: truncated: expected the 16 bytes of the header, the file has 12"},
		{"meta crc", flip(30), "checksum is 0x"},
		{"truncated", good[:len(good)-3], "overruns the file"},
		{"trailing", append(bytes.Clone(good), 0), "bytes after the last cluster"},
	} {
		_, err := Decode(c.b)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// addSeeds adds the fuzz targets' files: generators' traces, noisy ones
// whose series take palettes, histograms, indexed groups, a cluster kept
// as its events, empty and idle traces, and a version 1 file.
func addSeeds(f *testing.F) {
	for _, kind := range []string{"ring", "stencil2d", "cg", "masterworker", "mg"} {
		tr, err := prsd.Build(gen(f, kind, 4, 2), nil, prsd.DefaultOptions())
		if err != nil {
			f.Fatal(err)
		}
		f.Add(mustEncode(f, tr))
	}
	is, _ := aggregatedIS(f, 4)
	if tr, err := prsd.Build(is, nil, prsd.DefaultOptions()); err == nil {
		f.Add(mustEncode(f, tr))
	}
	if tr, err := prsd.Build(gen(f, "stencil2d", 4, 80), nil, prsd.Options{TimeError: 0.1, Histograms: true}); err == nil {
		f.Add(mustEncode(f, tr)) // histograms
	}
	scaled, err := prsd.Build(gen(f, "stencil2d", 16, 60), nil, prsd.Options{TimeError: 0.15, Histograms: true})
	if err != nil || !hasScales(scaled) {
		f.Fatalf("no scaled histogram in the seed: %v", err)
	}
	f.Add(mustEncode(f, scaled)) // histograms read by ranks scaled (statistic mode 5)
	if tr, err := prsd.Build(genNoisy(f, "lu", 4, 300, 0.05), nil, prsd.DefaultOptions()); err == nil {
		f.Add(mustEncode(f, tr)) // long noisy series: palettes (version 7)
	}
	_, indexed, _, _ := tagged(f)
	f.Add(indexed) // a call's groups as the ranks' indexes (version 6)
	_, mixedTr := mixedBuilt(f)
	f.Add(mustEncode(f, mixedTr)) // a cluster kept as its events
	empty, _ := prsd.Build(trace.New(0, trace.NewMeta()), nil, prsd.DefaultOptions())
	f.Add(mustEncode(f, empty))
	idle := trace.New(3, trace.NewMeta()) // rank 1 without events: a cluster of no items
	for _, r := range []int{0, 2} {
		e := trace.NewEvent(trace.Compute)
		e.Compute = 100
		idle.Ranks[r].Append(&e)
	}
	if tr, err := prsd.Build(idle, nil, prsd.DefaultOptions()); err == nil {
		f.Add(mustEncode(f, tr))
	}
	if v1, err := os.ReadFile(filepath.Join("testdata", "v1.rsd")); err == nil {
		f.Add(v1)
	}
}

// FuzzOpen reads arbitrary bytes, their checksums right, from a file:
// block by block, a cluster kept as its events left in the file (input),
// to what Decode reads from the same bytes, the same error or a trace.
func FuzzOpen(f *testing.F) {
	addSeeds(f)
	path := filepath.Join(f.TempDir(), "f.rsd")
	f.Fuzz(func(t *testing.T, b []byte) {
		b = fixChecksums(b)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Decode(b)
		if _, ferr := Open(path); (ferr == nil) != (err == nil) || err != nil && !strings.HasSuffix(ferr.Error(), err.Error()) {
			t.Fatalf("opened: %v; decoded: %v", ferr, err)
		}
	})
}

// FuzzDecode reads arbitrary bytes as a compressed trace: an error, or a
// trace whose ranks read (a bounded number of events each) without panic
// and that encodes back to bytes that decode.
func FuzzDecode(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, err := Decode(b); err != nil && !strings.Contains(err.Error(), "byte ") {
			t.Fatalf("error %q names no offset", err)
		}
		// The same bytes with their checksums right, so that the fuzzer
		// reaches the parsing of the blocks' content.
		tr, err := Decode(fixChecksums(b))
		if err != nil {
			if !strings.Contains(err.Error(), "byte ") {
				t.Fatalf("error %q names no offset", err)
			}
			return
		}
		for r := range min(tr.NumRanks(), 64) {
			rd, err := tr.OpenRank(r)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 10000 && rd.Next(); i++ {
			}
			if err := rd.Err(); err != nil && !errors.Is(err, prsd.ErrCorrupt) && !errors.Is(err, ktr.ErrCorrupt) {
				t.Fatalf("rank %d: %v", r, err)
			}
		}
		b, err = Encode(tr)
		if err != nil {
			return // a cluster's events that do not read
		}
		if _, err := Decode(b); err != nil {
			t.Fatalf("re-encoding: %v", err)
		}
	})
}

// fixChecksums returns b with the header's and every block's checksum
// set to match, as far as its block lengths go.
func fixChecksums(b []byte) []byte {
	b = bytes.Clone(b)
	if len(b) < 16 {
		return b
	}
	binary.LittleEndian.PutUint32(b[12:], crc32.Checksum(b[:12], castagnoli))
	for off := 16; len(b)-off >= 8; {
		n := int(binary.LittleEndian.Uint32(b[off:]))
		if n > len(b)-off-8 {
			break
		}
		binary.LittleEndian.PutUint32(b[off+4:], crc32.Checksum(b[off+8:off+8+n], castagnoli))
		off += 8 + n
	}
	return b
}

// TestVersion1File: the version 1 file in testdata, the CG skeleton at 4
// ranks (one time step, two inner iterations, 5% noise), still reads as
// that trace, and encodes back to the same bytes but for the version (a
// version 1 file is a version 2 file that has no vector of elements
// alike). The file is frozen: no later build writes version 1.
func TestVersion1File(t *testing.T) {
	p, _ := workload.Defaults("cg")
	p.Ranks, p.Iterations, p.Inner, p.Noise = 4, 1, 2, 0.05
	src, err := workload.New("cg", p)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "v1.rsd")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	if err := prsd.Verify(src, tr); err != nil {
		t.Error(err)
	}
	enc, _, _, err := encode(tr, 3)
	if err != nil {
		t.Fatal(err)
	}
	if v := binary.LittleEndian.Uint16(enc[8:]); v != 3 || !bytes.Equal(enc[16:], data[16:]) {
		t.Errorf("the decoded file encodes as version %d, to other bytes", v)
	}
}

// hasScales reports whether a timing of t reads a histogram scaled by rank.
func hasScales(t *prsd.Trace) bool {
	var in func(items []*prsd.Node) bool
	in = func(items []*prsd.Node) bool {
		for _, n := range items {
			for i := range n.Times {
				for _, s := range n.Times[i].Scales {
					if s != nil {
						return true
					}
				}
			}
			if in(n.Body) {
				return true
			}
		}
		return false
	}
	for i := range t.Clusters {
		if in(t.Clusters[i].Items) {
			return true
		}
	}
	return false
}

// TestRoundTripEmptyRanks: ranks without events (a rank that called no
// MPI, an archive with no MPI at all) are a cluster of no items, written
// and read back.
func TestRoundTripEmptyRanks(t *testing.T) {
	dir := t.TempDir()
	for name, ranks := range map[string][]int{"one of three": {0, 2}, "none": nil} {
		tr := trace.New(3, trace.NewMeta())
		for _, r := range ranks {
			for _, k := range []trace.Kind{trace.Init, trace.Compute, trace.Finalize} {
				e := trace.NewEvent(k)
				if k == trace.Compute {
					e.Compute = 100
				}
				tr.Ranks[r].Append(&e)
			}
		}
		path := filepath.Join(dir, "t.rsd")
		if err := Write(path, tr); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		back, _, err := format.Open(path)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := prsd.Verify(tr, back.(*prsd.Trace)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
