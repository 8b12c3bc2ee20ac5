// Package rsd reads and writes Kairos' compressed trace format, ".rsd":
// a trace in ScalaTrace's compressed form (package prsd), each cluster of
// ranks one structure of loops (RSDs, power-RSDs) whose calls carry
// ranklists and their parameters per group of ranks, zstd-compressed
// where that is smaller, or, where the loops do not pay (a real program's
// irregular calls), its events in a ktr stream. The file is read whole
// (it is small: kilobytes for millions of events) and every rank is read
// from it without expanding it. docs/rsd-format.md is the
// specification, byte by byte; it is meant to be written as easily from C
// (the PMPI tracer, after clustering its ranks) as from Go.
package rsd

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"math/bits"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/klauspost/compress/zstd"

	"kairos/format"
	"kairos/format/ktr"
	"kairos/internal/fileio"
	"kairos/internal/prefault"
	"kairos/internal/varint"
	"kairos/prsd"
	"kairos/trace"
)

func init() {
	format.Register(format.Format{
		Name:        "rsd",
		Description: "Kairos' compressed trace: ScalaTrace's loops (RSDs) and ranklists, lossless for the calls",
		Detect:      Detect,
		Magics:      [][]byte{Magic},
		Starts:      fmt.Sprintf("the magic %+q", Magic),
		Open:        func(path string) (trace.Source, error) { return Open(path) },
		Write:       Write,
		Extensions:  []string{".rsd"},
	})
}

// Magic is the first 8 bytes of a file: "\x89KRS\r\n\x1a\n", a high byte
// and line endings that catch 7-bit and text-mode damage.
var Magic = []byte("\x89KRS\r\n\x1a\n")

// Version is the format version this package writes. It reads every
// version from 1: version 2 added the element form of vectors whose
// elements are all equal (2), which version 1 files do not use; version 3
// the end-points' XOR mode (prsd.Xor, 0x80); version 4 a cluster's form:
// its items, zstd-compressed or not, or its events in a ktr stream;
// version 5 a histogram's ranks' scales (statistic mode 5); version 6 a
// call's groups written as the index of each of the cluster's ranks'
// group, where that takes fewer bytes than their ranklists; version 7 a
// series' palette (levels and each value's index among them).
const Version = 7

// The header's flags (the 16 bits after the version).
const (
	// flagHistograms: the timings' levels are each rank's distribution
	// of its instances, not their order (prsd.Header.Histograms).
	flagHistograms = 1 << iota
	knownFlags     = flagHistograms
)

// Limits a reader enforces, so that a short file cannot claim what would
// take unbounded memory.
const (
	maxBlock = 1 << 30
	maxRanks = 1 << 26
	maxDims  = 32
	maxDepth = 64
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Detect reports whether head starts with the magic.
func Detect(_ string, head []byte, isDir bool) bool {
	return !isDir && bytes.HasPrefix(head, Magic)
}

// Open reads the compressed trace at path (".gz" and ".zst" decompressed).
// A regular file is read block by block, and the clusters kept as their
// events are read from it as their ranks are (input).
func Open(path string) (*prsd.Trace, error) {
	if !compressedExt(path) && path != "-" {
		if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() {
			return openFile(path)
		}
	}
	f, err := fileio.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// Read into a buffer of the file's size (a compressed file's grows),
	// not one that doubles from 512 bytes.
	var buf bytes.Buffer
	if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() {
		buf.Grow(int(min(st.Size(), 1<<32)) + bytes.MinRead)
	}
	if _, err := buf.ReadFrom(f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	t, err := decode(path, &input{b: buf.Bytes(), size: buf.Len()})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// openFile reads the regular file at path block by block; the trace
// keeps the file open while its clusters' events are read from it.
func openFile(path string) (*prsd.Trace, error) {
	h, err := fileio.OpenHandle(path)
	if err != nil {
		return nil, err
	}
	in := &input{f: h, size: int(h.Size())}
	t, err := decode(path, in)
	if err != nil || !slices.ContainsFunc(t.Clusters, func(c prsd.Cluster) bool { return c.Events != nil }) {
		h.Close()
	} else {
		runtime.AddCleanup(t, func(h *fileio.Handle) { h.Close() }, h)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// compressedExt reports whether path names a file read decompressed.
func compressedExt(path string) bool {
	return strings.HasSuffix(path, ".gz") || strings.HasSuffix(path, ".zst")
}

// Write compresses src into one cluster of every rank (Build, with the
// default options) and writes it to path atomically.
func Write(path string, src trace.Source) error {
	t, err := Build(src, nil, prsd.DefaultOptions())
	if err != nil {
		return err
	}
	return WriteTrace(path, t)
}

// Build is prsd.Build, each cluster's choice between its loops and its
// events made as Encode makes it (the loops kept where they take less
// than half the events' bytes), but as soon as the cluster is merged
// (prsd.Options.Settle): a cluster kept as its events does not hold its
// structure until the trace is written. LAMMPS' TI trace on 64 ranks,
// whose 27 clusters are all kept as their events, held 180 MB of
// structures at the end of its build.
func Build(src trace.Source, groups [][]int32, opt prsd.Options) (*prsd.Trace, error) {
	opt.Settle, opt.LoopsPay = settle, loopsPay
	return prsd.Build(src, groups, opt)
}

// settle returns a cluster's events in columns where its loops do not
// take less than 1/loopsPay of their bytes, nil otherwise. Its sites are
// numbered as the file would number them were it the only cluster: a
// site's number takes a byte or two, whatever the table.
func settle(s *prsd.Settling) ([]byte, error) {
	limit := math.MaxInt // the folding given up: the events are kept
	if !s.Outgrown {
		st := newSites(s.Sites)
		st.walk(s.Items)
		limit = loopsPay * len(pack(newItemsWriter(st, s.Members, Version).cluster(nil, s.Items)))
	}
	c, exact, err := encodeColumns(memberSource{s}, s.TimeError, limit, true)
	if errors.Is(err, errCapped) {
		return nil, nil
	}
	s.Exact = exact
	return c, err
}

// WriteTrace writes t to path atomically.
func WriteTrace(path string, t *prsd.Trace) error {
	b, err := Encode(t)
	if err != nil {
		return err
	}
	return fileio.WriteFile(path, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}

// Encode returns the bytes of t's file, in the current version (Version). Each cluster is
// written as its structure of loops, zstd-compressed where that is
// smaller (a noisy trace's levels and values), or, unless the loops take
// less than half their bytes (loopsPay), as the events of the trace t was
// built from, in a ktr stream: the irregular calls of a real program fold
// into loops of two or three iterations, larger and slower to read than
// the columns.
func Encode(t *prsd.Trace) ([]byte, error) {
	b, _, _, err := encode(t, Version)
	return b, err
}

// EncodeCounting is Encode, and also returns how many clusters it kept as
// their events.
// same tells that every cluster is kept as its events, exactly: the
// file reads back every event as the trace t was built from, times
// included.
func EncodeCounting(t *prsd.Trace) (b []byte, asEvents int, same bool, err error) {
	return encode(t, Version)
}

// Forms of a cluster after its ranklist, version 4 (a byte).
const (
	formEvents = 0 // a ktr stream of its events, to the end of the block
	formItems  = 1 // its items
	formZstd   = 2 // uvarint n, then a zstd frame of its items' n bytes
)

// loopsPay is how many times fewer bytes than its events a cluster's
// loops must take to be kept: a rank read from them walks a node a call
// and holds every node in memory, at about half the columns' speed (a
// real program's loops, CP2K's on 4 ranks, took 1-7% fewer bytes than
// its events and replayed 1.7 times slower).
const loopsPay = 2

// maxZstdRatio bounds how many times its size a cluster's zstd frame
// expands to: writers compress no further, readers refuse more, so that a
// file holds in memory at most that many times its size.
const maxZstdRatio = 64

// zstdSlack is the room past its end that the zstd decoder's fast copies
// need in a buffer (klauspost/compress' compressedBlockOverAlloc).
const zstdSlack = 32

// encode writes t in version (4, or 3 for the tests: every cluster its
// items, as they are); same as EncodeCounting's.
func encode(t *prsd.Trace, version uint16) (b []byte, asEvents int, same bool, err error) {
	same = len(t.Clusters) > 0
	cols := make([][]byte, len(t.Clusters))
	packed := make([][]byte, len(t.Clusters)) // by the first site table
	sites := siteTable(t, cols)
	for i := range t.Clusters {
		cl := &t.Clusters[i]
		if cl.Events == nil && version < 4 {
			continue
		}
		if cl.Events != nil && version < 4 {
			return nil, 0, false, fmt.Errorf("cluster %d: its events need version 4", i)
		}
		if cl.Settled { // chosen as Encode chooses, and the events' columns kept
			if cols[i] = cl.Columns; cols[i] != nil {
				asEvents++
			}
			same = same && cols[i] != nil && cl.Exact
			continue
		}
		limit := math.MaxInt
		if cl.Events == nil {
			packed[i] = pack(newItemsWriter(sites, cl.Ranks.Ranks(), version).cluster(nil, cl.Items))
			if t.Origin() == nil {
				continue // no events to choose: a file read back keeps its loops
			}
			limit = loopsPay * len(packed[i])
		}
		c, exact, err := encodeColumns(clusterSource{t, i}, t.TimeError, limit, cl.Events != nil)
		if err != nil && !errors.Is(err, errCapped) {
			return nil, 0, false, fmt.Errorf("cluster %d: %w", i, err)
		}
		if cols[i] = c; c != nil {
			asEvents++
		}
		same = same && c != nil && exact
	}
	if first := sites; slices.ContainsFunc(cols, func(c []byte) bool { return c != nil }) {
		// The sites of the clusters kept as events leave the table.
		if sites = siteTable(t, cols); !slices.Equal(sites.list, first.list) {
			clear(packed)
		}
	}
	b = append([]byte(nil), Magic...)
	b = binary.LittleEndian.AppendUint16(b, version)
	var flags uint16
	if t.Histograms {
		flags |= flagHistograms
	}
	b = binary.LittleEndian.AppendUint16(b, flags)
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
	b = appendBlock(b, ktr.AppendMeta(nil, t.Meta()))
	head := binary.AppendUvarint(nil, uint64(t.NumRanks()))
	head = binary.LittleEndian.AppendUint64(head, math.Float64bits(t.TimeError))
	head = binary.AppendUvarint(head, uint64(len(t.Plugins)))
	for _, p := range t.Plugins {
		head = binary.AppendUvarint(head, uint64(len(p)))
		head = append(head, p...)
	}
	head = binary.AppendUvarint(head, uint64(len(sites.list)))
	for _, site := range sites.list {
		head = binary.LittleEndian.AppendUint64(head, site)
	}
	head = binary.AppendUvarint(head, uint64(len(t.Clusters)))
	b = appendBlock(b, head)
	for i := range t.Clusters {
		cl := &t.Clusters[i]
		body := appendRanklist(nil, cl.Ranks)
		switch {
		case cols[i] != nil:
			body = append(append(body, formEvents), cols[i]...)
		case version < 4:
			body = newItemsWriter(sites, nil, version).cluster(body, cl.Items)
		case packed[i] != nil:
			body = append(body, packed[i]...)
		default:
			body = append(body, pack(newItemsWriter(sites, cl.Ranks.Ranks(), version).cluster(nil, cl.Items))...)
		}
		b = appendBlock(b, body)
	}
	return b, asEvents, same, nil
}

// pack returns a cluster's items in the smaller of their forms: as they
// are, or zstd-compressed (within maxZstdRatio).
func pack(items []byte) []byte {
	z := zstdEncoder().EncodeAll(items, binary.AppendUvarint([]byte{formZstd}, uint64(len(items))))
	if len(z) < 1+len(items) && len(items) <= maxZstdRatio*len(z) {
		return z
	}
	return append([]byte{formItems}, items...)
}

// zstdEncoder is the encoder of the items, made once (prsd weighs the
// structures it builds with it).
var zstdEncoder = prsd.ItemsEncoder

// zstdDecoders keeps decoders of the items, which a file's clusters
// share.
var zstdDecoders = sync.Pool{New: func() any {
	d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxBlock), zstd.WithDecoderLowmem(true), zstd.WithDecodeAllCapLimit(true))
	if err != nil {
		panic(err) // only for invalid options
	}
	return d
}}

// encodeColumns returns a cluster's events in a ktr stream of every rank
// of src (those of other clusters empty), their times and amounts rounded
// within timeError (trace.Rounded: the bound a structure's timings keep,
// a real program's timestamps in up to half the bytes), or errCapped if
// the events, exact, take limit bytes or more: the choice between the
// loops and the events is the exact events', so that rounding makes a
// file smaller, never one of events where it was of loops. Where the
// exact events take no more bytes, they are kept; smaller makes both
// forms and keeps the smaller where there is no limit too: Encode asks
// it for every cluster kept as its events, which folded little or whose
// folding was given up (a polling loop's times, rounded, took 1.8 times
// the bytes of the exact ones). src gives the ranks' own events, where
// the trace they were built from is at hand. It tells whether the
// events it returns are exact: they read back as the trace's.
func encodeColumns(src trace.Source, timeError float64, limit int, smaller bool) (b []byte, exact bool, err error) {
	if timeError == 0 {
		b, err := encodeCapped(src, limit)
		return b, true, err
	}
	rounded := trace.Rounded(src, timeError)
	switch {
	case limit < math.MaxInt:
		exactCols, err := encodeCapped(src, limit)
		if err != nil {
			return nil, false, err
		}
		// The rounded form is kept only where smaller: it stops at the
		// exact form's bytes.
		b, err = encodeCapped(rounded, len(exactCols))
		if errors.Is(err, errCapped) {
			return exactCols, true, nil // rounding did not pay (it can carry values into longer varints)
		}
		return b, false, err
	case smaller:
		return encodeSmaller(src, rounded)
	}
	b, err = encodeCapped(rounded, math.MaxInt)
	return b, false, err
}

// eventsOptions write a cluster's events: each chunk also at zstd's
// fastest level, kept where it is nearly as small (ktr.Options.Fastest),
// so that the events of a polling program, their times rounded, replay
// as fast as its .ktr's exact ones (HPCC's on 4 ranks: 1.2% more
// instructions, against 3.4% without).
var eventsOptions = ktr.Options{Fastest: true}

// encodeSmaller returns the smaller of the encodings of src, exact, and
// rounded (the exact one where they tie), made at once on two cores, each
// stopped as soon as it takes more bytes than the other took (greq_test's
// rounded form, 1.8 times the exact one's bytes, stops before half its
// events); it tells whether it returns the exact one.
func encodeSmaller(src, rounded trace.Source) ([]byte, bool, error) {
	var exactLen, roundedLen atomic.Int64
	exactLen.Store(-1)
	roundedLen.Store(-1)
	ew := &raced{other: &roundedLen, tie: true}
	done := make(chan error, 1)
	go func() {
		err := ktr.Encode(ew, src, eventsOptions)
		if err == nil {
			exactLen.Store(int64(len(ew.b)))
		}
		done <- err
	}()
	rw := &raced{other: &exactLen}
	rerr := ktr.Encode(rw, rounded, eventsOptions)
	if rerr == nil {
		roundedLen.Store(int64(len(rw.b)))
	}
	eerr := <-done
	for _, err := range []error{eerr, rerr} {
		if err != nil && !errors.Is(err, errCapped) {
			return nil, false, err
		}
	}
	// At most one stopped: each stops only once the other has finished.
	if eerr == nil && (rerr != nil || len(ew.b) <= len(rw.b)) {
		return ew.b, true, nil
	}
	return rw.b, false, nil
}

// raced is a writer that fails (errCapped) once it holds more bytes than
// another encoding of the same events finished with (other, -1 until
// then), or as many unless tie: the first to finish stops the other as
// soon as it loses.
type raced struct {
	b     []byte
	other *atomic.Int64
	tie   bool // a tie goes to this one
}

func (w *raced) Write(p []byte) (int, error) {
	n := int64(len(w.b) + len(p))
	if o := w.other.Load(); o >= 0 && (n > o || n == o && !w.tie) {
		return 0, errCapped
	}
	w.b = append(w.b, p...)
	return len(p), nil
}

// encodeCapped returns src in a ktr stream, or errCapped where it takes
// limit bytes or more.
func encodeCapped(src trace.Source, limit int) ([]byte, error) {
	w := &capped{limit: limit}
	if err := ktr.Encode(w, src, eventsOptions); err != nil {
		return nil, err
	}
	return w.b, nil
}

// capped is a writer that fails once it holds limit bytes.
type capped struct {
	b     []byte
	limit int
}

var errCapped = errors.New("larger than the loops")

func (w *capped) Write(p []byte) (int, error) {
	if len(p) >= w.limit-len(w.b) {
		return 0, errCapped
	}
	w.b = append(w.b, p...)
	return len(p), nil
}

// clusterSource is the ranks of t's cluster c, from the trace t was built
// from, the others empty.
type clusterSource struct {
	t *prsd.Trace
	c int
}

func (s clusterSource) Meta() *trace.Meta { return s.t.Meta() }
func (s clusterSource) NumRanks() int     { return s.t.NumRanks() }

func (s clusterSource) OpenRank(r int) (trace.Reader, error) {
	if s.t.ClusterOf(r) != s.c {
		return new(trace.Rank).Reader(), nil
	}
	if src := s.t.Origin(); src != nil {
		return src.OpenRank(r)
	}
	return s.t.OpenRank(r)
}

// memberSource is the ranks of a settling cluster, the others empty.
type memberSource struct{ s *prsd.Settling }

func (m memberSource) Meta() *trace.Meta { return m.s.Meta }
func (m memberSource) NumRanks() int     { return m.s.Ranks }

func (m memberSource) OpenRank(r int) (trace.Reader, error) {
	if _, ok := slices.BinarySearch(m.s.Members, int32(r)); !ok {
		return new(trace.Rank).Reader(), nil
	}
	return m.s.Origin.OpenRank(r)
}

// sites numbers the call sites of a trace: those its CompSite fields
// number, then those of its calls, in the order they first appear. A call
// names its site by its number.
type sites struct {
	list  []uint64
	index map[uint64]int
}

// newSites returns a table of the sites first, in order.
func newSites(first []uint64) *sites {
	s := &sites{list: slices.Clone(first), index: make(map[uint64]int, len(first))}
	for i, site := range s.list {
		s.index[site] = i
	}
	return s
}

// walk numbers the sites of items' calls not numbered yet.
func (s *sites) walk(items []*prsd.Node) {
	for _, n := range items {
		if !n.IsLoop() && n.Site != 0 {
			if _, ok := s.index[n.Site]; !ok {
				s.index[n.Site] = len(s.list)
				s.list = append(s.list, n.Site)
			}
		}
		s.walk(n.Body)
	}
}

// siteTable numbers the sites of the clusters written as loops (those
// with no columns).
func siteTable(t *prsd.Trace, cols [][]byte) *sites {
	s := newSites(t.Sites)
	for i := range t.Clusters {
		if cols[i] == nil {
			s.walk(t.Clusters[i].Items)
		}
	}
	return s
}

// appendBlock appends a block: its length, its CRC-32C and its body.
func appendBlock(b, body []byte) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(len(body)))
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(body, castagnoli))
	return append(b, body...)
}

// appendRanklist writes a ranklist: its section count (0: none, which a
// node's ranklist means "the enclosing one"), then each section's
// dimension count, start and (length, stride) pairs.
func appendRanklist(b []byte, l prsd.Ranklist) []byte {
	b = binary.AppendUvarint(b, uint64(len(l)))
	for _, s := range l {
		b = binary.AppendUvarint(b, uint64(len(s.Dims)))
		b = binary.AppendUvarint(b, uint64(s.Start))
		for _, d := range s.Dims {
			b = binary.AppendUvarint(b, uint64(d.Len))
			b = binary.AppendUvarint(b, uint64(d.Stride))
		}
	}
	return b
}

// itemsWriter writes a cluster's items: their call sites numbered by a
// table and, from version 6, a call's groups of parameters or of timings
// as the index of each of the cluster's ranks' group where that takes
// fewer bytes than their ranklists once compressed (a noisy run's ranks
// fall into a call's timing groups at random, scattered ranklists of 4
// numbers a section or more, an index a few bits).
type itemsWriter struct {
	*sites
	// members are the cluster's ranks, in increasing order; nil before
	// version 6, where every group writes its ranklist.
	members []int32
	buf     []byte
}

// newItemsWriter returns a writer of the items of a cluster of ranks
// members (increasing), in version (from 6, with indexes).
func newItemsWriter(st *sites, members []int32, version uint16) *itemsWriter {
	if version < 6 {
		members = nil
	}
	return &itemsWriter{sites: st, members: members}
}

// cluster appends a cluster's items.
func (w *itemsWriter) cluster(b []byte, items []*prsd.Node) []byte {
	var live []bool
	if w.members != nil {
		live = make([]bool, len(w.members))
		for p := range live {
			live[p] = true
		}
	}
	return w.items(b, items, live)
}

// items appends items, the nodes run by the cluster's ranks live (by
// position among the members).
func (w *itemsWriter) items(b []byte, items []*prsd.Node, live []bool) []byte {
	b = binary.AppendUvarint(b, uint64(len(items)))
	for _, n := range items {
		if n.IsLoop() {
			b = append(b, 1)
			b = appendRanklist(b, n.Ranks)
			b = binary.AppendUvarint(b, uint64(len(n.Counts)))
			for i := range n.Counts {
				b = appendRanklist(b, n.Counts[i].Ranks)
				b = n.Counts[i].Series.AppendBinary(b)
			}
			b = w.items(b, n.Body, w.live(live, n.Ranks))
			continue
		}
		b = append(b, 0, byte(n.Kind))
		site := 0
		if n.Site != 0 {
			site = w.index[n.Site] + 1
		}
		b = binary.AppendUvarint(b, uint64(site))
		b = appendRanklist(b, n.Ranks)
		runs := w.live(live, n.Ranks)
		var indexed bool
		b, indexed = w.groups(b, runs, len(n.Vars), func(i int) prsd.Ranklist { return n.Vars[i].Ranks }, nil)
		for i := range n.Vars {
			b = appendVariant(b, &n.Vars[i], !indexed)
		}
		b, indexed = w.groups(b, runs, len(n.Times), func(i int) prsd.Ranklist { return n.Times[i].Ranks }, func(i int) bool { return scaled(&n.Times[i]) })
		for i := range n.Times {
			tg := &n.Times[i]
			if !indexed {
				b = appendRanklist(b, tg.Ranks)
			}
			b = append(b, tg.Mask)
			for k := range prsd.NumStats {
				if tg.Mask&(1<<k) != 0 {
					b = appendStat(b, tg, k)
				}
			}
		}
	}
	return b
}

// scaled reports whether a timing has ranks' scales, which follow its
// ranklist.
func scaled(tg *prsd.Timing) bool {
	return slices.ContainsFunc(tg.Scales[:], func(l []int64) bool { return l != nil })
}

// live returns which of the cluster's ranks run a node of ranklist l:
// those of in (which run the enclosing node) that l holds, all of in
// where l is nil. It is nil before version 6, where no one asks.
func (w *itemsWriter) live(in []bool, l prsd.Ranklist) []bool {
	if w.members == nil || l == nil {
		return in
	}
	out := make([]bool, len(w.members))
	for _, r := range l.Ranks() {
		if p, ok := slices.BinarySearch(w.members, r); ok && in[p] {
			out[p] = true
		}
	}
	return out
}

// groups appends the number k of a call's groups of one kind (its
// parameters or its timings), of ranklists list(i), and, from version
// 6, where they are at least 2 and that takes fewer bytes than their
// ranklists once compressed (entropyBytes), the index of each of the
// cluster's ranks' group (indexes);
// it tells whether it did, and the groups are then written without
// their ranklists. In version 6 the count is shifted left one bit, the
// low bit set where the indexes follow.
func (w *itemsWriter) groups(b []byte, live []bool, k int, list func(int) prsd.Ranklist, scaled func(int) bool) ([]byte, bool) {
	if w.members == nil {
		return binary.AppendUvarint(b, uint64(k)), false
	}
	var idx []uint64
	if k >= 2 {
		idx = indexes(w.members, live, k, list, scaled)
	}
	if idx != nil {
		lists := 0
		for i := range k {
			w.buf = appendRanklist(w.buf[:0], list(i))
			lists += len(w.buf)
		}
		w.buf = w.buf[:0]
		for _, g := range idx {
			w.buf = binary.AppendUvarint(w.buf, g)
		}
		if entropyBytes(idx, k) < lists {
			b = binary.AppendUvarint(b, uint64(k)<<1|1)
			return append(b, w.buf...), true
		}
	}
	return binary.AppendUvarint(b, uint64(k)<<1), false
}

// entropyBytes estimates the bytes the indexes idx (at most k) take once
// compressed: their count times their order-0 entropy. A random choice
// among a few groups takes a few bits a rank, where the ranklists'
// scattered sections do not compress.
func entropyBytes(idx []uint64, k int) int {
	n := make([]int, k+1)
	for _, g := range idx {
		n[g]++
	}
	h := 0.0
	for _, c := range n {
		if c > 0 {
			p := float64(c) / float64(len(idx))
			h -= float64(c) * math.Log2(p)
		}
	}
	return int(math.Ceil(h / 8))
}

// indexes returns, for each of the cluster's ranks members (increasing)
// that run a call (live, by position), 1 + the index of the first of its
// k groups, of ranklists list(i), that holds it (a nil ranklist holds
// every rank), 0 for the others: what a rank reads, since it reads the
// first group that holds it. It returns nil where a group would hold
// none of them, or where one with ranks' scales (scaled(i), if scaled is
// not nil) would hold other ranks than its ranklist's, which its scales
// follow: such groups keep their ranklists.
func indexes(members []int32, live []bool, k int, list func(int) prsd.Ranklist, scaled func(int) bool) []uint64 {
	idx := make([]uint64, len(members))
	held := make([]int, k)
	for g := range k {
		l := list(g)
		if l == nil {
			for p := range idx {
				if live[p] && idx[p] == 0 {
					idx[p] = uint64(g) + 1
					held[g]++
				}
			}
		} else {
			for _, r := range l.Ranks() {
				if p, ok := slices.BinarySearch(members, r); ok && live[p] && idx[p] == 0 {
					idx[p] = uint64(g) + 1
					held[g]++
				}
			}
		}
		if held[g] == 0 || scaled != nil && scaled(g) && (l == nil || held[g] != l.Len()) {
			return nil
		}
	}
	return idx
}

// appendStat writes statistic k of a timing: its mode, then the value
// every instance has (0), the levels (1), the distinct values and each
// instance's index among them (2), the mean, least and greatest
// instance (3), or a histogram (4, prsd.Histogram: its groups, then the
// series of each instance's group), or a histogram and its ranks' scales
// (5: mode 4's, then prsd.Timing.Scales, a varint each, as many as the
// timing's ranks times the groups).
func appendStat(b []byte, tg *prsd.Timing, k int) []byte {
	st := tg.Stats[k]
	switch l := tg.Levels[k]; {
	case l != nil && tg.Values[k] != nil:
		b = append(b, 2)
		b = binary.AppendUvarint(b, uint64(len(tg.Values[k])))
		for _, v := range tg.Values[k] {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
		}
		return l.AppendBinary(b)
	case tg.Hists[k] != nil && tg.Scales[k] != nil:
		b = l.AppendBinary(tg.Hists[k].AppendBinary(append(b, 5)))
		for _, s := range tg.Scales[k] {
			b = binary.AppendVarint(b, s)
		}
		return b
	case tg.Hists[k] != nil:
		return l.AppendBinary(tg.Hists[k].AppendBinary(append(b, 4)))
	case l != nil:
		return l.AppendBinary(append(b, 1))
	case st.Min == st.Mean && st.Max == st.Mean:
		return binary.LittleEndian.AppendUint64(append(b, 0), math.Float64bits(st.Mean))
	}
	b = append(b, 3)
	for _, x := range []float64{st.Mean, st.Min, st.Max} {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
	}
	return b
}

// appendVariant writes a group of parameters, with its ranklist unless
// the call's groups are written as the ranks' indexes.
func appendVariant(b []byte, v *prsd.Variant, ranks bool) []byte {
	if ranks {
		b = appendRanklist(b, v.Ranks)
	}
	b = binary.AppendUvarint(b, uint64(v.Mask))
	for f := range prsd.NumFields {
		val := v.Field(f)
		if val == nil {
			continue
		}
		b = append(b, byte(val.Mode))
		b = val.Series.AppendBinary(b)
		if f.IsVector() {
			b = appendElems(b, val)
		}
	}
	return b
}

// appendElems writes a vector field's element series: their number E,
// then byte 2 and one series if the elements of each instance are alike
// (Value.Alike: alltoallv's counts aggregated, prsd.CountAggregates),
// else byte 1 and each element's value, as a varint difference from the
// previous element's (from 0), if every element is constant (a vector
// that does not change from one instance to the next, alltoallv's
// counts), else byte 0 and the E series.
func appendElems(b []byte, val *prsd.Value) []byte {
	elems := val.Elems
	if val.Alike > 0 {
		b = binary.AppendUvarint(b, uint64(val.Alike))
		return elems[0].AppendBinary(append(b, 2))
	}
	b = binary.AppendUvarint(b, uint64(len(elems)))
	if len(elems) == 0 {
		return b
	}
	constant := true
	for i := range elems {
		constant = constant && elems[i].IsConst()
	}
	if !constant {
		b = append(b, 0)
		for i := range elems {
			b = elems[i].AppendBinary(b)
		}
		return b
	}
	b = append(b, 1)
	prev := int64(0)
	for i := range elems {
		b = binary.AppendVarint(b, elems[i].First-prev)
		prev = elems[i].First
	}
	return b
}

// Decode reads a file's bytes. Errors name the byte offset in the file
// and what was expected.
func Decode(b []byte) (*prsd.Trace, error) { return decode("", &input{b: b, size: len(b)}) }

// decode is Decode of the file named name, which the errors of the
// clusters kept as events name when their ranks are read.
func decode(name string, in *input) (*prsd.Trace, error) {
	b, err := in.at(0, min(in.size, 16))
	switch {
	case err != nil:
		return nil, err
	case len(b) < 8 || !bytes.Equal(b[:8], Magic):
		return nil, fmt.Errorf("byte 0: not a compressed trace (expected the magic %+q)", Magic)
	case len(b) < 16:
		return nil, fmt.Errorf("byte %d: truncated: expected the 16 bytes of the header, the file has %d", len(b), len(b))
	}
	version := binary.LittleEndian.Uint16(b[8:])
	if version < 1 || version > Version {
		return nil, fmt.Errorf("byte 8: format version %d, this Kairos reads 1 to %d", version, Version)
	}
	flags := binary.LittleEndian.Uint16(b[10:])
	if fl := flags &^ knownFlags; fl != 0 {
		return nil, fmt.Errorf("byte 10: flags %#x, of which this Kairos knows %#x only", flags, knownFlags)
	}
	if sum, want := binary.LittleEndian.Uint32(b[12:]), crc32.Checksum(b[:12], castagnoli); sum != want {
		return nil, fmt.Errorf("byte 12: the header's checksum is 0x%08x, expected 0x%08x (the CRC-32C of bytes 0-11)", sum, want)
	}
	off := 16
	body, off, err := in.block(off, "the metadata")
	if err != nil {
		return nil, err
	}
	metaBytes := body
	meta, err := ktr.ParseMeta(body)
	if err != nil {
		return nil, fmt.Errorf("metadata at byte %d: %w", off-len(body), err)
	}
	at := off
	body, off, err = in.block(off, "the trace header")
	if err != nil {
		return nil, err
	}
	d := &varint.Reader{B: body}
	ranks := d.Uvarint()
	if d.Err == nil && ranks > maxRanks {
		return nil, fmt.Errorf("byte %d: %d ranks, more than the %d a compressed trace may hold", at+8, ranks, maxRanks)
	}
	timeErr := math.Float64frombits(d.Fixed64())
	plugins := make([]string, d.Count(1, 64))
	for i := range plugins {
		plugins[i] = d.PrefixedString()
	}
	siteList := make([]uint64, d.Count(8, math.MaxInt))
	for i := range siteList {
		siteList[i] = d.Fixed64()
	}
	k := d.Uvarint()
	if d.Err == nil && d.Off != len(body) {
		d.Fail("bytes after the cluster count")
	}
	if d.Err != nil {
		return nil, fmt.Errorf("trace header at byte %d: %w", at+8, d.Err)
	}
	if !(timeErr >= 0 && timeErr < 1) {
		return nil, fmt.Errorf("byte %d: a time error of %g, expected one in [0, 1)", at+8, timeErr)
	}
	if k > uint64(in.size-off)/8 {
		return nil, fmt.Errorf("byte %d: %d clusters, more than the file could hold", at+8, k)
	}
	first := off
	clusters := make([]prsd.Cluster, 0, k)
	starts := make([]int, 0, k) // of the clusters' events
	a := new(arena)
	for i := range int(k) {
		at = off
		cl, start, size, left := in.leftEvents(off, version, int(ranks), a)
		if left {
			off = start + size
		} else {
			body, off, err = in.block(off, fmt.Sprintf("cluster %d", i))
			if err != nil {
				return nil, err
			}
			cl, err = decodeCluster(body, version, int(ranks), siteList, a)
			start, size = at+8+len(body)-len(cl.rest), len(cl.rest)
		}
		starts = append(starts, start)
		if err == nil && cl.Items == nil {
			cl.Events, err = events(name, in.readerAt(), start, size, metaBytes, int(ranks))
		}
		if err != nil {
			return nil, fmt.Errorf("cluster %d at byte %d: %w", i, at+8, err)
		}
		clusters = append(clusters, cl.Cluster)
	}
	if off != in.size {
		return nil, fmt.Errorf("byte %d: %d bytes after the last cluster, expected none", off, in.size-off)
	}
	t, err := prsd.New(meta, int(ranks), clusters, prsd.Header{TimeError: timeErr, Histograms: flags&flagHistograms != 0, Plugins: plugins, Sites: siteList})
	if err != nil {
		return nil, fmt.Errorf("the clusters from byte %d: %w", first, err)
	}
	if err := othersEvents(t, starts); err != nil {
		return nil, err
	}
	shareEvents(t)
	return t, nil
}

// shareEvents makes the readers of the clusters' events share their
// distinct events, as the readers of one ktr file do: each cluster holds
// a few of the ranks a replay reads in turn. HPCC's analytic replay on 64
// ranks, from the .rsd of its 1% time error, spent 22% of its CPU time
// copying private ones (BENCHMARKS.md).
func shareEvents(t *prsd.Trace) {
	var first *ktr.Source
	for c := range t.Clusters {
		ev, ok := t.Clusters[c].Events.(*ktr.Source)
		switch {
		case !ok:
		case first == nil:
			first = ev
		default:
			ev.ShareWith(first)
		}
	}
}

// decoder reads a cluster block.
type decoder struct {
	varint.Reader
	ranks   int
	sites   []uint64
	version uint16
	cluster prsd.Ranklist // the cluster's ranks
	members []int32       // and in increasing order, once a call's groups are indexed
	*arena
}

// arena holds the chunks that a trace's nodes and their small slices are
// cut from: an irregular or noisy trace has tens of thousands of small
// nodes, whose allocations one by one cost more time than their bytes.
type arena struct {
	nodes  slab[prsd.Node]
	vars   slab[prsd.Variant]
	fields slab[prsd.Value]
	times  slab[prsd.Timing]
	series slab[prsd.Series]
	floats slab[float64]
	// The ranklists' sections and their dimensions: a noisy trace's
	// timing has a group, and a ranklist, per rank.
	sections slab[prsd.Section]
	dims     slab[prsd.Dim]
}

// slab cuts slices from chunks that double up to a bound, so that the
// memory stays within twice what the trace's structure takes.
type slab[T any] struct{ buf []T }

// take returns a slice of length 0 and capacity n.
func (s *slab[T]) take(n int) []T {
	const most = 1024
	if n > most/8 {
		return make([]T, 0, n)
	}
	if cap(s.buf)-len(s.buf) < n {
		s.buf = make([]T, 0, min(max(2*cap(s.buf), 2*n), most))
	}
	i := len(s.buf)
	s.buf = s.buf[:i+n]
	return s.buf[i : i : i+n]
}

// one returns a pointer to a new zero T.
func (s *slab[T]) one() *T { return &s.take(1)[:1][0] }

// decoded is a cluster block read: its structure, or (no items) rest,
// the ktr stream of its events.
type decoded struct {
	prsd.Cluster
	rest []byte
}

func decodeCluster(body []byte, version uint16, ranks int, sites []uint64, a *arena) (decoded, error) {
	d := &decoder{Reader: varint.Reader{B: body}, ranks: ranks, sites: sites, version: version, arena: a}
	cl := decoded{Cluster: prsd.Cluster{Ranks: d.ranklist()}}
	d.cluster = cl.Ranks
	if d.Err == nil && cl.Ranks == nil {
		d.Fail("a cluster of no rank")
	}
	if d.Err != nil || version < 4 {
		return cl, d.clusterItems(&cl.Cluster)
	}
	switch form := d.Byte(); form {
	case formEvents:
		cl.rest = body[d.Off:]
		return cl, d.Err
	case formItems:
		return cl, d.clusterItems(&cl.Cluster)
	case formZstd:
		items, err := unpack(d)
		if err != nil {
			return cl, err
		}
		z := &decoder{Reader: varint.Reader{B: items}, ranks: ranks, sites: sites, version: version, cluster: cl.Ranks, arena: a}
		if err := z.clusterItems(&cl.Cluster); err != nil {
			return cl, fmt.Errorf("its items, zstd-compressed from byte %d: %w", d.Off, err)
		}
		return cl, nil
	default:
		d.Off--
		d.Fail(fmt.Sprintf("form %d, expected %d (events), %d (items) or %d (zstd-compressed items)", form, formEvents, formItems, formZstd))
		return cl, d.Err
	}
}

// clusterItems reads a cluster's items, to the end of d. A cluster may
// hold none: its ranks have no events (a rank that called no MPI).
func (d *decoder) clusterItems(cl *prsd.Cluster) error {
	if d.Err != nil {
		return d.Err
	}
	cl.Items = d.items(0)
	if d.Err == nil && d.Off != len(d.B) {
		d.Fail("bytes after the cluster's items")
	}
	return d.Err
}

// unpack returns the items of a cluster in the zstd form, which d is at:
// their length, then the frame to the end of d.
func unpack(d *decoder) ([]byte, error) {
	n := d.Uvarint()
	frame := d.B[min(d.Off, len(d.B)):]
	if d.Err == nil && (n == 0 || n > maxZstdRatio*uint64(len(frame))) {
		d.Fail(fmt.Sprintf("%d bytes of items in a zstd frame of %d, expected 1 to %d times as many", n, len(frame), maxZstdRatio))
	}
	if d.Err != nil {
		return nil, d.Err
	}
	// Decoded into n bytes (WithDecodeAllCapLimit): a frame that expands
	// further is refused without taking more memory. DecodeAll keeps its
	// history in items, where a stream kept a ring of blocks beside them
	// (0.8-1.3 MB, each page a fault at a verb's start). The room past n
	// lets the decoder's assembly copy whole 16-byte blocks to the last
	// byte: in a buffer of exactly n bytes its last blocks decode with
	// exact copies, which took half of its time on the noisy LU's
	// clusters.
	z := zstdDecoders.Get().(*zstd.Decoder)
	defer zstdDecoders.Put(z)
	items := make([]byte, 0, n+zstdSlack)
	prefault.Bytes(items) // decompressed into whole
	items, err := z.DecodeAll(frame, items)
	switch {
	case errors.Is(err, zstd.ErrDecoderSizeExceeded) || err == nil && uint64(len(items)) > n:
		err = fmt.Errorf("more than the %d bytes announced", n)
	case err == nil && uint64(len(items)) != n:
		err = fmt.Errorf("%d bytes, fewer than the %d announced", len(items), n)
	}
	if err != nil {
		return nil, fmt.Errorf("byte %d: the zstd frame of the items: %w", d.Off, err)
	}
	return items, nil
}

// events opens the ktr stream of a cluster's events, the size bytes at
// byte off of the file ra: version 4 keeps so the clusters that its loops
// do not compress.
// The stream must have the file's metadata and ranks.
func events(name string, ra io.ReaderAt, off, size int, meta []byte, ranks int) (trace.Source, error) {
	if name == "" {
		name = "the compressed trace"
	}
	src, err := ktr.OpenSection(name, ra, int64(off), int64(size))
	if err != nil {
		return nil, fmt.Errorf("its events: %w", err)
	}
	if !bytes.Equal(ktr.AppendMeta(nil, src.Meta()), meta) {
		return nil, fmt.Errorf("byte %d: its events' metadata is not the file's", off)
	}
	if src.NumRanks() != ranks {
		return nil, fmt.Errorf("byte %d: events for %d ranks, expected the trace's %d", off, src.NumRanks(), ranks)
	}
	return src, nil
}

// othersEvents reports a cluster whose events hold ranks of another,
// naming the byte where the events start (at, of each cluster).
func othersEvents(t *prsd.Trace, at []int) error {
	for c := range t.Clusters {
		ev, ok := t.Clusters[c].Events.(*ktr.Source)
		if !ok {
			continue
		}
		for r := range t.NumRanks() {
			if t.ClusterOf(r) != c && ev.NumEvents(r) > 0 {
				return fmt.Errorf("cluster %d's events at byte %d hold rank %d's, which is in cluster %d", c, at[c], r, t.ClusterOf(r))
			}
		}
	}
	return nil
}

// ranklist reads a ranklist whose sections nest (each dimension's stride
// beyond the span of the smaller ones) and hold ranks of the trace.
func (d *decoder) ranklist() prsd.Ranklist {
	n := d.Count(3, math.MaxInt)
	if n == 0 || d.Err != nil {
		return nil
	}
	l := prsd.Ranklist(d.sections.take(n))
	for range n {
		at := d.Off
		dims := d.Count(2, maxDims)
		if d.Err == nil && dims == 0 {
			d.Fail("a section of no dimension")
		}
		s := prsd.Section{Start: int32(d.bounded(int64(d.ranks) - 1)), Dims: d.dims.take(dims)}
		for range dims {
			s.Dims = append(s.Dims, prsd.Dim{Len: int32(d.bounded(int64(d.ranks))), Stride: int32(d.bounded(int64(d.ranks)))})
		}
		if d.Err != nil {
			return nil
		}
		if err := s.Check(d.ranks); err != nil {
			d.Off = at
			d.Fail(err.Error())
			return nil
		}
		l = append(l, s)
	}
	return l
}

// bounded reads a uvarint in [0, hi].
func (d *decoder) bounded(hi int64) int64 {
	at := d.Off
	v := d.Uvarint()
	if d.Err == nil && v > uint64(max(hi, 0)) {
		d.Off = at
		d.Fail(fmt.Sprintf("%d, expected at most %d", v, hi))
	}
	return int64(v)
}

func (d *decoder) items(depth int) []*prsd.Node {
	if depth > maxDepth {
		d.Fail(fmt.Sprintf("loops nested more than %d deep", maxDepth))
		return nil
	}
	n := d.Count(3, math.MaxInt)
	items := make([]*prsd.Node, 0, n)
	for range n {
		if d.Err != nil {
			return nil
		}
		switch tag := d.Byte(); tag {
		case 1:
			items = append(items, d.loop(depth))
		case 0:
			items = append(items, d.call())
		default:
			d.Off--
			d.Fail(fmt.Sprintf("item tag %d, expected 0 (a call) or 1 (a loop)", tag))
		}
	}
	return items
}

func (d *decoder) loop(depth int) *prsd.Node {
	n := d.nodes.one()
	n.Ranks = d.ranklist()
	k := d.Count(2, math.MaxInt)
	if d.Err == nil && k == 0 {
		d.Fail("a loop without iteration counts")
	}
	for range k {
		n.Counts = append(n.Counts, prsd.Counts{Ranks: d.ranklist(), Series: prsd.ReadSeries(&d.Reader)})
	}
	at := d.Off
	n.Body = d.items(depth + 1)
	if d.Err == nil && len(n.Body) == 0 {
		d.Off = at
		d.Fail("a loop of an empty body")
	}
	return n
}

func (d *decoder) call() *prsd.Node {
	at := d.Off
	k := trace.Kind(d.Byte())
	if d.Err == nil && !k.Valid() {
		d.Off = at
		d.Fail(fmt.Sprintf("kind %d, not a Kairos event kind", k))
	}
	n := d.nodes.one()
	n.Kind, n.Site, n.Ranks = k, d.site(), d.ranklist()
	nv, lists := d.groups()
	n.Vars = d.vars.take(nv) // bounded by the bytes left
	for i := range nv {
		var v *prsd.Variant
		n.Vars, v = extend(n.Vars)
		d.variant(v, lists, i)
	}
	nt, lists := d.groups()
	n.Times = d.times.take(min(nt, (len(d.B)-d.Off)/4)) // a timing of 256 bytes in 4 or more
	for i := range nt {
		var tg *prsd.Timing
		n.Times, tg = extend(n.Times)
		tg.Ranks = d.groupRanks(lists, i)
		tg.Mask = d.Byte()
		if d.Err == nil && tg.Mask >= 1<<prsd.NumStats {
			d.Off--
			d.Fail(fmt.Sprintf("timing mask %#x, expected bits 0-%d", tg.Mask, prsd.NumStats-1))
		}
		for s := range prsd.NumStats {
			if tg.Mask&(1<<s) != 0 && d.Err == nil {
				d.stat(tg, s)
			}
		}
	}
	return n
}

// groups reads the number of a call's groups of one kind (parameters or
// timings) and, where they are written as the ranks' indexes (version 6:
// the count shifted left one bit, the low bit set), the ranklist of each
// (nil: each group reads its own).
func (d *decoder) groups() (int, []prsd.Ranklist) {
	if d.version < 6 {
		return d.Count(2, math.MaxInt), nil // a ranklist and a mask a group at least
	}
	at := d.Off
	v := d.Uvarint()
	k, indexed := v>>1, v&1 != 0
	least := uint64(2)
	if indexed {
		least = 1 // its mask
	}
	if d.Err == nil && k > uint64(len(d.B)-d.Off)/least {
		d.Off = at
		d.Fail(fmt.Sprintf("count %d exceeds what the remaining %d bytes can hold", k, len(d.B)-at))
	}
	if d.Err != nil {
		return 0, nil // no count read: a caller loops over it
	}
	if !indexed {
		return int(k), nil
	}
	if k < 2 {
		d.Off = at
		d.Fail(fmt.Sprintf("the ranks' indexes of %d group, expected at least 2", k))
		return 0, nil
	}
	return int(k), d.indexes(int(k))
}

// indexes reads the index vector of a call's k groups: for each of the
// cluster's ranks, in increasing order, 0 (no group) or its group + 1.
// It returns the ranklist of each group's ranks, which hold at least one.
func (d *decoder) indexes(k int) []prsd.Ranklist {
	at := d.Off
	switch n := d.cluster.Len(); {
	case n > len(d.B)-d.Off: // an index a byte at least
		d.Fail(fmt.Sprintf("the group indexes of %d ranks, in the %d bytes left", n, len(d.B)-d.Off))
		return nil
	case k > n:
		d.Fail(fmt.Sprintf("the indexes of %d groups, more than the cluster's %d ranks", k, n))
		return nil
	}
	if d.members == nil {
		d.members = d.cluster.Ranks()
	}
	of := make([]int32, len(d.members))
	first := make([]int, k+2) // where each group's ranks start in byGroup, 0 first
	for p := range of {
		at := d.Off
		g := d.Uvarint()
		if d.Err == nil && g > uint64(k) {
			d.Off = at
			d.Fail(fmt.Sprintf("group index %d for rank %d, expected 0 to %d (the call's %d groups)", g, d.members[p], k, k))
		}
		if d.Err != nil {
			return nil
		}
		of[p] = int32(g)
		first[g+1]++
	}
	for g := 1; g <= k+1; g++ {
		first[g] += first[g-1]
	}
	byGroup := make([]int32, len(of))
	next := slices.Clone(first)
	for p, g := range of {
		byGroup[next[g]] = d.members[p]
		next[g]++
	}
	lists := make([]prsd.Ranklist, k)
	for g := range lists {
		ranks := byGroup[first[g+1]:first[g+2]]
		if len(ranks) == 0 {
			d.Off = at
			d.Fail(fmt.Sprintf("the ranks' indexes name no rank of group %d, of %d", g, k))
			return nil
		}
		lists[g] = prsd.RanklistOfSorted(ranks)
	}
	return lists
}

// groupRanks reads the ranklist of a call's group i, or takes it from
// the groups' indexes (lists, where not nil).
func (d *decoder) groupRanks(lists []prsd.Ranklist, i int) prsd.Ranklist {
	if lists != nil {
		return lists[i]
	}
	return d.ranklist()
}

// extend returns s with one more element, zero where s has the room
// (the arena's chunks are), and a pointer to it: the decoder fills the
// elements in place rather than copying them.
func extend[T any](s []T) ([]T, *T) {
	if len(s) < cap(s) {
		s = s[:len(s)+1]
	} else {
		s = append(s, *new(T))
	}
	return s, &s[len(s)-1]
}

func (d *decoder) float() float64 { return math.Float64frombits(d.Fixed64()) }

// elems reads a vector field's element series (see appendElems), and
// the length of a vector whose elements are alike (0: they are not).
func (d *decoder) elems() ([]prsd.Series, int64) {
	at := d.Off
	n := d.Uvarint()
	if n == 0 || d.Err != nil {
		return nil, 0
	}
	if d.Off < len(d.B) && d.B[d.Off] == 2 {
		if n > prsd.MaxAlike {
			d.Off = at
			d.Fail(fmt.Sprintf("a vector of %d elements alike, more than %d", n, prsd.MaxAlike))
			return nil, 0
		}
		d.Byte()
		return []prsd.Series{prsd.ReadSeries(&d.Reader)}, int64(n)
	}
	if n > uint64(len(d.B)-d.Off) {
		d.Off = at
		d.Fail(fmt.Sprintf("count %d exceeds what the remaining %d bytes can hold", n, len(d.B)-at))
		return nil, 0
	}
	elems := make([]prsd.Series, 0, n)
	switch form := d.Byte(); form {
	case 0:
		for range n {
			elems = append(elems, prsd.ReadSeries(&d.Reader))
		}
	case 1:
		prev := int64(0)
		for range n {
			prev += d.Varint()
			elems = append(elems, prsd.Const(prev, 1))
		}
	default:
		d.Off--
		d.Fail(fmt.Sprintf("element form %d, expected 0 (series), 1 (constants) or 2 (alike)", form))
	}
	return elems, 0
}

// site reads a call's site: 0 for none, else the number of one in the
// trace header's table, from 1.
func (d *decoder) site() uint64 {
	at := d.Off
	i := d.Uvarint()
	if i == 0 || d.Err != nil {
		return 0
	}
	if i > uint64(len(d.sites)) {
		d.Off = at
		d.Fail(fmt.Sprintf("call site %d, the table has %d", i, len(d.sites)))
		return 0
	}
	return d.sites[i-1]
}

// stat reads statistic s of a timing (see appendStat).
func (d *decoder) stat(tg *prsd.Timing, s int) {
	switch mode := d.Byte(); mode {
	case 0:
		v := d.float()
		tg.Stats[s] = prsd.Stat{Mean: v, Min: v, Max: v}
	case 1:
		l := d.series.one()
		*l = prsd.ReadSeries(&d.Reader)
		tg.Levels[s] = l
	case 4:
		d.histogram(tg, s)
	case 5:
		d.histogram(tg, s)
		d.scales(tg, s)
	case 2:
		vs := d.floats.take(d.Count(8, 255))
		vs = vs[:cap(vs)]
		for i := range vs {
			vs[i] = d.float()
		}
		if d.Err == nil && len(vs) == 0 {
			d.Fail("no value for a statistic's instances")
		}
		l := d.series.one()
		*l = prsd.ReadSeries(&d.Reader)
		tg.Levels[s], tg.Values[s] = l, vs
	case 3:
		tg.Stats[s] = prsd.Stat{Mean: d.float(), Min: d.float(), Max: d.float()}
	default:
		d.Off--
		d.Fail(fmt.Sprintf("statistic mode %d, expected 0 to 5", mode))
	}
}

// scales reads the scales of statistic s's histogram: one for each of
// the timing's ranks and the histogram's groups, a byte at least each.
func (d *decoder) scales(tg *prsd.Timing, s int) {
	if d.Err != nil {
		return
	}
	n := tg.Ranks.Len() * len(tg.Hists[s].Groups)
	if tg.Ranks == nil || n <= 0 || n > len(d.B)-d.Off {
		d.Fail(fmt.Sprintf("%d scales of a histogram over ranks %s, in the %d bytes left", n, tg.Ranks, len(d.B)-d.Off))
		return
	}
	l := make([]int64, n)
	for i := range l {
		l[i] = d.Varint()
	}
	tg.Scales[s] = l
}

// histogram reads statistic s's histogram and its series of groups.
func (d *decoder) histogram(tg *prsd.Timing, s int) {
	h := &prsd.Histogram{Groups: make([]prsd.Shares, d.Count(prsd.HistogramBytes, prsd.MaxGroups))}
	at := d.Off
	for g := range h.Groups {
		sh := &h.Groups[g]
		sh.N = int64(d.Uvarint() & (1<<58 - 1)) // 16 of them sum without overflow
		sh.Levels = make([]int64, prsd.NumLevels(sh.N))
		last := int64(0)
		for i := range sh.Levels {
			last += d.Varint()
			sh.Levels[i] = last
		}
	}
	l := d.series.one()
	*l = prsd.ReadSeries(&d.Reader)
	total := int64(0)
	for _, g := range h.Groups {
		total += g.N
	}
	if d.Err == nil && (len(h.Groups) == 0 || total > l.N) {
		d.Off = at
		d.Fail(fmt.Sprintf("a histogram of %d groups and %d instances, of which its series has %d", len(h.Groups), total, l.N))
	}
	tg.Levels[s], tg.Hists[s] = l, h
}

// variant reads group i of a call's parameters into v (its ranks from
// lists, where the groups are indexed).
func (d *decoder) variant(v *prsd.Variant, lists []prsd.Ranklist, i int) {
	v.Ranks = d.groupRanks(lists, i)
	at := d.Off
	mask := d.Uvarint()
	if d.Err == nil && mask >= 1<<prsd.NumFields {
		d.Off = at
		d.Fail(fmt.Sprintf("field mask %#x, expected bits 0-%d", mask, prsd.NumFields-1))
	}
	v.Mask = uint32(mask)
	v.Fields = d.fields.take(bits.OnesCount32(v.Mask))
	for f := range prsd.NumFields {
		if v.Mask&(1<<f) == 0 || d.Err != nil {
			continue
		}
		at := d.Off
		m := prsd.Mode(d.Byte())
		if d.Err == nil && !prsd.ValidMode(f, m) {
			d.Off = at
			d.Fail(fmt.Sprintf("mode %d for field %s", m, f))
		}
		var val *prsd.Value
		v.Fields, val = extend(v.Fields)
		val.Mode, val.Series = m, prsd.ReadSeries(&d.Reader)
		if f.IsVector() {
			val.Elems, val.Alike = d.elems()
		}
	}
}
