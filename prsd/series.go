package prsd

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"

	"kairos/internal/varint"
)

// Series is a lossless, compressed sequence of int64 values: an event
// parameter over the instances of one call of a rank's compressed trace
// (a partner, a byte count, a loop's iteration count...). It is the first
// value, then the differences between consecutive values as runs (a
// difference repeated Count times), the runs themselves folded into
// repeats as calls are folded into loops: a constant takes one run, an
// arithmetic progression one run, a periodic pattern (1 2 3 5 1 2 3 5 ...)
// one repeat, whatever the number of values.
type Series struct {
	// N is the number of values.
	N int64
	// First is the first value (if N > 0).
	First int64
	// slot numbers the series among its group of ranks' varying series, for the
	// readers' cursors; -1 for a constant series.
	slot int32
	// varies, in a streamed series, is whether a difference is not 0,
	// which stream finds as it checks the encoding (IsConst walking it
	// again took a fifth of the time of opening a noisy trace's .rsd).
	varies bool
	// vals, where not nil, are the values for the readers, value i
	// vals[i mod len(vals)]: all of them where the runs are about as many,
	// one period where they repeat (flatten). A reader reads N, First,
	// slot and vals: the first 48 bytes.
	vals []int64
	// enc, where Runs is nil, is the encoding of the runs (AppendBinary)
	// and vals holds every value, or nil where the readers decode enc as
	// they go (a long series of short runs, a noisy one: streamed); its
	// pointer and length are the next 16 bytes a reader reads.
	enc []byte
	// pal, in a streamed series whose encoding is a palette (version 7),
	// is its levels and indexes, which nextStream reads.
	pal *palette
	// Runs are the N-1 differences, in order; nil in a series read with
	// its values (ReadSeries: a run about every value), which keeps the
	// runs' encoding instead, and in a constant ReadSeries read (its N-1
	// differences of 0 need no run: a noisy trace has many).
	Runs []Run
}

// streamed reports whether the readers of s decode its runs' encoding
// value by value (nextStream).
func (s *Series) streamed() bool { return s.enc != nil && s.vals == nil }

// Run is an item of a series' differences: Count times Delta (Body nil),
// or Reps times the items of Body.
type Run struct {
	Delta, Count int64
	Reps         int64
	Body         []Run
}

// Const returns the series of n values v.
func Const(v int64, n int64) Series {
	var b seriesBuilder
	b.addN(v, n)
	return b.finish()
}

// IsConst reports whether every value of s is s.First.
func (s *Series) IsConst() bool {
	if s.streamed() { // from its runs' encoding, not its values: a few bytes can hold billions
		return !s.varies
	}
	if s.enc != nil {
		return !slices.ContainsFunc(s.vals, func(v int64) bool { return v != s.First })
	}
	return s.N <= 1 || constRuns(s.Runs)
}

// constRuns reports whether the differences runs hold are all 0.
func constRuns(runs []Run) bool {
	return len(runs) == 0 || len(runs) == 1 && runs[0].Body == nil && runs[0].Delta == 0
}

// Values returns the values of s, for tests and small series.
func (s *Series) Values() []int64 {
	var c cursor
	out := make([]int64, 0, min(s.N, 1<<20))
	for range s.N {
		out = append(out, c.next(s))
	}
	return out
}

// runWindow is the longest body, in runs, that the series' folding looks
// for: periods of up to 16 distinct differences.
const runWindow = 16

// seriesBuilder appends values to a series, folding as it goes. It is
// 88 bytes: a reduction keeps one for each field and mode of every call
// of every loop body, and where a trace folds little (a program that
// polls), there are millions.
type seriesBuilder struct {
	n, first int64 // the series' number of values, its first value
	runs     []Run // its differences, past the frozen ones
	last     int64
	// pendDelta and pendCount are the open run of equal differences
	// (pendCount 0: none).
	pendDelta, pendCount int64
	// match is the number of runs after the last one, a repeat, that
	// repeat the start of its body: the repetition under way.
	match int
	// frz, made at the first freeze, holds the first runs, which
	// folding, looking at most 2*runWindow runs back, no longer changes.
	frz *frozenRuns
	// folded: no fold applies to the runs (folding ran to its end since
	// they last changed), so that a run's flush need not fold first.
	folded bool
}

// frozenRuns is the encoding (appendRuns' items) of a series' first
// runs: a series of noise, a run a value, is kept in a few bytes a value
// rather than a Run's 48. runs counts them, items them and their bodies'
// runs.
type frozenRuns struct {
	enc         []byte
	runs, items int64
}

// Runs are frozen once freezeAt of them are open, all but the last
// keepOpen, which are more than folding reaches. (A variable for the
// tests, which compare with a builder that never freezes.)
var freezeAt = 128

const keepOpen = 4 * runWindow

// reset empties the builder and keeps its runs' room, up to
// keptRuns: a series of noise grows its runs to freezeAt, and builders
// kept for reuse would hold that for every statistic.
func (b *seriesBuilder) reset() {
	runs := b.runs[:0]
	if cap(runs) > keptRuns {
		runs = nil
	}
	clear(b.runs)
	*b = seriesBuilder{runs: runs}
}

const keptRuns = 16

// freeze encodes the runs that folding no longer reaches.
func (b *seriesBuilder) freeze() {
	runs := b.runs
	if len(runs) < freezeAt {
		return
	}
	if b.frz == nil {
		b.frz = &frozenRuns{}
	}
	k := len(runs) - keepOpen
	b.frz.enc = appendRunItems(b.frz.enc, runs[:k])
	b.frz.runs += int64(k)
	b.frz.items += numRuns(runs[:k])
	n := copy(runs, runs[k:])
	clear(runs[n:])
	b.runs = runs[:n]
}

// add appends v.
func (b *seriesBuilder) add(v int64) {
	if b.n == 0 {
		b.n, b.first, b.last = 1, v, v
		return
	}
	b.delta(v-b.last, 1)
	b.last = v
}

// addN appends n copies of v.
func (b *seriesBuilder) addN(v int64, n int64) {
	if n <= 0 {
		return
	}
	b.add(v)
	b.delta(0, n-1)
}

// delta appends n differences d.
func (b *seriesBuilder) delta(d, n int64) {
	if n <= 0 {
		return
	}
	b.n += n
	if b.pendCount > 0 && b.pendDelta == d {
		b.pendCount += n
		return
	}
	b.flush()
	b.pendDelta, b.pendCount = d, n
}

// flush closes the open run: it continues the repetition under way if it
// is the next run of the last repeat's body, else it is folded as
// foldRuns finds.
func (b *seriesBuilder) flush() {
	if b.pendCount == 0 {
		return
	}
	r := Run{Delta: b.pendDelta, Count: b.pendCount}
	b.pendDelta, b.pendCount = 0, 0
	runs := b.runs
	// (r has no body: sameRun is equalRuns for it)
	if n := len(runs) - 1 - b.match; n >= 0 && runs[n].Body != nil && b.match < len(runs[n].Body) && sameRun(&runs[n].Body[b.match], &r) {
		b.folded = false
		if b.match++; b.match == len(runs[n].Body) {
			runs[n].Reps++
			b.runs, b.match = runs[:n+1], 0
			return
		}
		b.runs = append(runs, r)
		return
	}
	// The repetition under way has ended: it may repeat what precedes
	// it (6×(+2 -2) 6×(+3 -3) 6×(+2 -2) 6×(+3 -3) is twice a body of two
	// repeats), which only its last repetition shows.
	b.match = 0
	for !b.folded && foldRuns(&b.runs) {
	}
	b.runs = append(b.runs, r)
	for foldRuns(&b.runs) {
	}
	b.folded = true
	b.freeze()
}

// appendSeries appends the values of s.
func (b *seriesBuilder) appendSeries(s *Series) {
	if s.N == 0 {
		return
	}
	if s.IsConst() {
		b.addN(s.First, s.N)
		return
	}
	var c cursor
	for range s.N {
		b.add(c.next(s))
	}
}

// appendBuilder appends the values of src, which it may change: where
// they are one run (a loop's counts, for most loops of a trace that folds
// into many short ones), without making src's series.
func (b *seriesBuilder) appendBuilder(src *seriesBuilder) {
	if src.frz != nil || len(src.runs) > 0 {
		s := src.finish()
		b.appendSeries(&s)
		return
	}
	if src.n > 0 {
		b.add(src.first)
		b.delta(src.pendDelta, src.pendCount)
		b.last = src.last
	}
}

// finish returns the series built so far; the builder may go on.
func (b *seriesBuilder) finish() Series {
	b.settle()
	s := Series{N: b.n, First: b.first, Runs: b.runs, slot: -1}
	var frz frozenRuns
	if b.frz != nil {
		frz = *b.frz
	}
	if frz.runs > 0 || s.N > 1 && !s.IsConst() && s.N <= flatLimit(numRuns(s.Runs)) {
		// About a run a value (noise): the values or the runs' encoding
		// alone (streamed), as a series read from a file holds them
		// (readValues), take less memory than the runs, and flatten would
		// keep the values anyway; where there are many more values than
		// runs, the runs.
		enc := compactList(b.appendList(nil), s.N, s.First)
		s.Runs = nil
		s.readValues(enc, frz.items+numRuns(b.runs))
		return s
	}
	if s.N > maxCycled && !s.IsConst() {
		if enc := compactList(b.appendList(nil), s.N, s.First); s.stream(enc) {
			s.Runs = nil // runs of a few values each, which readers stream
			return s
		}
	}
	s.Runs = slices.Clone(s.Runs)
	return s
}

// settle closes the open run and folds the runs as far as they fold, as
// finish reads them.
func (b *seriesBuilder) settle() {
	b.flush()
	for foldRuns(&b.runs) {
		b.match = 0
	}
	b.folded = true
}

// appendList appends the encoding of the builder's list of runs, the
// frozen ones first (appendRuns'); the builder must be settled.
func (b *seriesBuilder) appendList(dst []byte) []byte {
	var frz frozenRuns
	if b.frz != nil {
		frz = *b.frz
	}
	dst = binary.AppendUvarint(dst, uint64(frz.runs)+uint64(len(b.runs)))
	return appendRunItems(append(dst, frz.enc...), b.runs)
}

// appendFinished appends the encoding of the series built so far, as
// finish's AppendBinary but for a palette (paletteOf), which it keeps as
// runs, without making the series: Signatures encodes
// every loop's counts, and finish's copies of their runs and values, with
// the cursors that read them back, were a fifth of what signing SMG2000
// allocated. It returns the offset in dst of the encoding's list of runs,
// 0 where it has none (a series of fewer than two values, or a constant:
// a 0 byte); the builder may go on.
func (b *seriesBuilder) appendFinished(dst []byte) ([]byte, int) {
	b.settle()
	dst = binary.AppendUvarint(dst, uint64(b.n))
	if b.n > 0 {
		dst = binary.AppendVarint(dst, b.first)
	}
	if b.n <= 1 {
		return dst, 0
	}
	if b.frz == nil && constRuns(b.runs) {
		return append(dst, 0), 0
	}
	at := len(dst)
	dst = b.appendList(dst)
	if list, ok := streamable(dst[at:], b.n); ok { // as finish keeps it
		dst = append(dst[:at], list...)
	}
	return dst, at
}

// foldRuns folds the end of runs once, as the call compressor folds calls:
// a body that repeats the repeat just before it adds a repetition, a body
// of up to runWindow items seen twice in a row becomes a repeat of two.
func foldRuns(p *[]Run) bool {
	s := *p
	if len(s) < 2 {
		return false
	}
	n := len(s)
	last := &s[n-1]
	for l := 1; l <= runWindow && l < n; l++ {
		// (the tail, s[n-l:], is sliced only where a first test passed:
		// on noisy values, slicing it at each l took a quarter of the
		// loop's instructions)
		if prev := &s[n-l-1]; prev.Body != nil && len(prev.Body) == l && sameRun(&prev.Body[l-1], last) && equalRuns(prev.Body, s[n-l:]) {
			prev.Reps++
			*p = s[:n-l]
			return true
		}
		// a body of l seen twice ends with the same run twice, l apart:
		// on noisy values that test alone rejects almost every l
		if 2*l <= n && sameRun(&s[n-1-l], last) && equalRuns(s[n-2*l:n-l], s[n-l:]) {
			body := slices.Clone(s[n-l:])
			*p = append(s[:n-2*l], Run{Reps: 2, Body: body})
			return true
		}
	}
	return false
}

// sameRun is equalRuns' test of one run, but of a repeat's body only its
// length: a quick rejection before the full comparison.
func sameRun(x, y *Run) bool {
	return x.Delta == y.Delta && x.Count == y.Count && x.Reps == y.Reps && len(x.Body) == len(y.Body)
}

func equalRuns(a, b []Run) bool {
	return slices.EqualFunc(a, b, func(x, y Run) bool {
		return x.Delta == y.Delta && x.Count == y.Count && x.Reps == y.Reps && equalRuns(x.Body, y.Body)
	})
}

// AppendBinary appends the canonical encoding of s (docs/rsd-format.md):
// equal series have equal encodings.
//
//	uvarint N; if N > 0: varint First; if N > 1: the runs, or 0 if every
//	value is First
//	runs: uvarint item count, then each item:
//	  uvarint Count > 0, varint Delta   (a run)
//	  uvarint 0, uvarint Reps, runs     (a repeat)
func (s *Series) AppendBinary(dst []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(s.N))
	if s.N > 0 {
		dst = binary.AppendVarint(dst, s.First)
	}
	switch {
	case s.N > 1 && s.enc != nil:
		dst = append(dst, s.enc...)
	case s.N > 1 && s.IsConst():
		dst = append(dst, 0)
	case s.N > 1:
		dst = appendRuns(dst, s.Runs)
	}
	return dst
}

func appendRuns(dst []byte, runs []Run) []byte {
	return appendRunItems(binary.AppendUvarint(dst, uint64(len(runs))), runs)
}

// appendRunItems appends the items of runs, without their count.
func appendRunItems(dst []byte, runs []Run) []byte {
	for _, r := range runs {
		if r.Body == nil {
			dst = binary.AppendUvarint(dst, uint64(r.Count))
			dst = binary.AppendVarint(dst, r.Delta)
			continue
		}
		dst = binary.AppendUvarint(dst, 0)
		dst = binary.AppendUvarint(dst, uint64(r.Reps))
		dst = appendRuns(dst, r.Body)
	}
	return dst
}

// Bounds of a decoded series, so that corrupt input cannot make a reader
// recurse or loop without limit.
const (
	maxRunDepth = 16
	maxValues   = 1 << 62
)

// ErrCorrupt is wrapped by the errors about a malformed compressed trace.
var ErrCorrupt = errors.New("corrupt compressed trace")

// ReadSeries reads a series written by AppendBinary; d keeps the first
// error.
func ReadSeries(d *varint.Reader) Series {
	s := Series{slot: -1}
	n := d.Uvarint()
	if n > maxValues {
		d.Fail(fmt.Sprintf("a series of %d values", n))
	}
	s.N = int64(n)
	if s.N > 0 {
		s.First = d.Varint()
	}
	switch {
	case s.N > 1 && d.Off < len(d.B) && d.B[d.Off] == 0: // a constant
		d.Off++
	case s.N > 1 && d.Err == nil && hasPaletteHead(d.B[d.Off:]):
		if why := s.readPalette(d.B[d.Off:]); why != "" {
			d.Fail(why)
		} else {
			d.Off += len(s.enc)
		}
	case s.N > 1 && !(flatReads && s.readFlat(d)):
		at := d.Off
		_, items, total := readRuns(d, 0, false)
		if d.Err == nil && total != uint64(s.N-1) {
			d.Off = at
			d.Fail(fmt.Sprintf("the runs hold %d differences, the series %d", total, s.N-1))
		}
		if d.Err == nil {
			s.readValues(d.B[at:d.Off], items)
		}
	}
	if d.Err != nil {
		return Series{slot: -1}
	}
	return s
}

// flatReads turns readFlat on (off in a test, to compare).
var flatReads = true

// readFlat reads the runs of s, of N and First read, in one pass that
// checks them and expands their values, where they are to be kept as
// values (readValues): a noisy series, a run a value. It reports whether
// it did; if not (runs to keep as runs, or a problem to report), it has
// read nothing, and readRuns reads them again. Its work is bounded by
// the runs it reads: it gives up once the values pass flatLimit of the
// runs declared so far.
func (s *Series) readFlat(d *varint.Reader) bool {
	if s.stream(d.B[d.Off:]) {
		d.Off += len(s.enc)
		return true
	}
	x := flatReader{b: d.B, off: d.Off, v: s.First}
	// The first list's runs, each of at least 2 bytes, bound the values.
	n, ok := x.uvarint()
	if !ok || n > uint64((len(x.b)-x.off)/2) {
		return false
	}
	x.out = make([]int64, 1, min(s.N, flatLimit(int64(n))))
	x.out[0] = s.First
	x.off = d.Off
	total, ok := x.list(0)
	if !ok || total != uint64(s.N-1) || s.N > flatLimit(x.items) {
		return false
	}
	s.enc, s.vals = d.B[d.Off:x.off], x.out
	d.Off = x.off
	return true
}

// flatReader reads a valid list of runs at b[off:] and appends their
// values to out, the last of which is v; items counts the runs declared.
type flatReader struct {
	b     []byte
	off   int
	out   []int64
	v     int64
	items int64
}

// short reads a uvarint of one or two bytes, and reports whether there
// was one.
func (x *flatReader) short() (uint64, bool) {
	i, b := x.off, x.b
	if i < len(b) && b[i] < 0x80 {
		x.off = i + 1
		return uint64(b[i]), true
	}
	if i+1 < len(b) && b[i+1] < 0x80 {
		x.off = i + 2
		return uint64(b[i]&0x7f) | uint64(b[i+1])<<7, true
	}
	return 0, false
}

func (x *flatReader) uvarint() (uint64, bool) {
	u, n := binary.Uvarint(x.b[min(x.off, len(x.b)):])
	x.off += max(n, 0)
	return u, n > 0
}

// list reads a list of runs as readRuns does, and returns the number of
// differences it holds; false where readRuns would fail or the values
// pass flatLimit. It reads a noisy series' runs (a count of a byte, a
// delta of one or two) in noisyRuns' loop, without a call, the rest one
// by one (run).
func (x *flatReader) list(depth int) (uint64, bool) {
	n, ok := x.uvarint()
	if !ok || depth >= maxRunDepth || n == 0 || n > uint64((len(x.b)-x.off)/2) {
		return 0, false
	}
	x.items += int64(n)
	// The values may reach lim: the runs read so far bound it, and only
	// a nested list (which updates x.items) declares more.
	lim := flatLimit(x.items)
	var total uint64
	for k := uint64(0); k < n; {
		// Runs of noise, as many as fit in the values' room.
		out := x.out
		room := min(int64(cap(out)), lim) - int64(len(out))
		r, off, j, v := noisyRuns(x.b, x.off, n-k, out[len(out):len(out)+int(max(room, 0))], x.v)
		x.out, x.off, x.v = out[:len(out)+j], off, v
		total += uint64(j)
		if k += r; k == n {
			break
		}
		t, ok := x.run(depth, lim)
		if !ok {
			return 0, false
		}
		lim = flatLimit(x.items)
		total += t
		k++
	}
	return total, true
}

// noisyRuns reads, from b[off:], up to n runs of a count of one byte and
// a delta of one or two (a noisy series'), as long as their values fit in
// dst, which it fills from v on. It returns the runs read, the offset
// after them, the values written and the last one.
func noisyRuns(b []byte, off int, n uint64, dst []int64, v int64) (uint64, int, int, int64) {
	j := 0
	k := uint64(0)
	for ; k < n && off+2 < len(b) && j < len(dst); k++ {
		c := int(b[off])
		u := uint64(b[off+1])
		next := off + 2
		if u >= 0x80 {
			if b[off+2] >= 0x80 {
				break
			}
			u = u&0x7f | uint64(b[off+2])<<7
			next = off + 3
		}
		delta := int64(u>>1) ^ -int64(u&1) // zigzag

		// A run of one value, the usual run of noise.
		if c == 1 {
			v += delta
			dst[j] = v
			j++
			off = next
			continue
		}
		if uint(c-1) >= 0x7f || c > len(dst)-j {
			break
		}
		for i := range dst[j : j+c] {
			v += delta
			dst[j+i] = v
		}
		j += c
		off = next
	}
	return k, off, j, v
}

// run reads one item of a list of runs for list, the values below lim,
// and returns the number of differences it holds.
func (x *flatReader) run(depth int, lim int64) (uint64, bool) {
	c, ok := x.short()
	if !ok {
		c, ok = x.uvarint()
	}
	if !ok || c > maxValues {
		return 0, false
	}
	if c > 0 {
		u, ok := x.short()
		if !ok {
			u, ok = x.uvarint()
		}
		if !ok || c > uint64(lim-int64(len(x.out))) {
			return 0, false
		}
		delta := int64(u >> 1) // zigzag
		if u&1 != 0 {
			delta = ^delta
		}
		for range c {
			x.v += delta
			x.out = append(x.out, x.v)
		}
		return c, true
	}
	reps, ok := x.uvarint()
	if !ok || reps == 0 || reps > maxValues {
		return 0, false
	}
	at := x.off
	body, ok := x.list(depth + 1)
	if !ok || satMul(body, reps-1) > uint64(flatLimit(x.items)-int64(len(x.out))) {
		return 0, false
	}
	for range reps - 1 {
		x.out, _, x.v = expandRuns(x.b, at, x.out, x.v)
	}
	return satMul(body, reps), true
}

// readValues sets the runs of s from their valid encoding enc, of items
// runs: where flatten would keep every value, the values and enc, which
// take less memory than the runs and less time to make.
func (s *Series) readValues(enc []byte, items int64) {
	if s.stream(enc) {
		return
	}
	if s.N > flatLimit(items) {
		s.Runs, _, _ = readRuns(&varint.Reader{B: enc}, 0, true)
		return
	}
	s.enc = enc
	s.vals = make([]int64, 1, s.N)
	s.vals[0] = s.First
	s.vals, _, _ = expandRuns(enc, 0, s.vals, s.First)
}

// stream sets s, of N and First set, to be streamed from the list of
// runs at the start of enc, and reports whether it did: if the series is
// longer than a reader cycles (maxCycled) and its runs are in the short
// form of noise, which its readers decode without a check (nextStream):
// a count of one byte and a delta of one or two, in repeats of up to 127
// such runs, each with less than half the values (more are a period,
// which flatten keeps). Noise folds into a few short repeats by chance.
// Kept as bytes, a noisy series takes 2 or 3 bytes a value rather than 8,
// read in order; a palette (streamPalette), half a byte or one. Nothing
// walks its values but its readers (IsConst reads what the check found),
// so that a few hundred bytes of repeats that hold millions of values
// cost no more at open than other bytes.
func (s *Series) stream(enc []byte) bool {
	if s.N <= maxCycled || len(enc) > math.MaxInt32 {
		return false
	}
	if s.streamPalette(enc) {
		return true
	}
	off, total, varies, ok := streamList(enc, 0, uint64(s.N))
	if !ok || total != uint64(s.N-1) {
		return false
	}
	s.enc, s.vals, s.varies = enc[:off:off], nil, varies
	return true
}

// streamable returns the list of runs enc (appendRuns' encoding, the
// whole of enc) of a series of n values, with the nested repeats of its
// top-level repeats written out run by run where that lets its readers
// stream it (stream; a streamed repeat holds only runs). Noise folds into
// short repeats by chance, and over millions of values a few fold into
// one another: readers expanded 68 such series of the noisy LU's
// computations over 1,000 iterations (2,000 to 120,000 values each) into
// 48 MB of values as they opened its file. Otherwise, and where a
// repeat would take more than maxUnnested runs or the list an eighth more
// bytes, it returns enc; it reports whether it wrote them out.
func streamable(enc []byte, n int64) ([]byte, bool) {
	if n <= maxCycled {
		return enc, false
	}
	if _, total, _, ok := streamList(enc, 0, uint64(n)); ok && total == uint64(n-1) {
		return enc, false
	}
	items, at := uvarintAt(enc, 0)
	out := make([]byte, 0, len(enc)+len(enc)/8)
	count, unnested := uint64(0), false
	for range items {
		c, reps, next := itemAt(enc, at)
		if c > 0 {
			out, at, count = append(out, enc[at:next]...), next, count+1
			continue
		}
		if end, _, _, ok := streamList(enc, next, 0); ok {
			out, at, count = append(out, enc[at:end]...), end, count+1
			continue
		}
		if reps == 0 {
			return enc, false
		}
		budget := maxUnnested
		for range reps {
			if out, at, budget = appendUnnested(out, enc, next, budget); budget < 0 {
				return enc, false
			}
		}
		count += uint64(maxUnnested - budget)
		unnested = true
	}
	if !unnested || len(out) > len(enc)+len(enc)/8 {
		return enc, false
	}
	list := binary.AppendUvarint(make([]byte, 0, len(out)+binary.MaxVarintLen64), count)
	list = append(list, out...)
	if _, total, _, ok := streamList(list, 0, uint64(n)); !ok || total != uint64(n-1) {
		return enc, false
	}
	return list, true
}

// compactList returns the list of runs list of a series of n values, the
// first first, as finish keeps it: its repeats written out where readers
// then stream it (streamable), or a palette where that takes fewer bytes
// (paletteOf).
func compactList(list []byte, n, first int64) []byte {
	list, _ = streamable(list, n)
	if pal, ok := paletteOf(list, n, first); ok {
		return pal
	}
	return list
}

// maxUnnested bounds the runs streamable writes out for one repeat: those
// noise makes by chance are a few runs repeated two or three times; a
// repeat of more is structure, which readers walk as runs.
const maxUnnested = 64

// appendUnnested appends the runs of the list at enc[at:], its repeats
// written out, and returns them with the offset after the list and what
// is left of budget, the runs it may still write (negative: it stopped).
func appendUnnested(dst, enc []byte, at, budget int) ([]byte, int, int) {
	items, at := uvarintAt(enc, at)
	for range items {
		c, reps, next := itemAt(enc, at)
		if c > 0 {
			dst, at = append(dst, enc[at:next]...), next
			if budget--; budget < 0 {
				return dst, at, budget
			}
			continue
		}
		if reps == 0 {
			return dst, at, -1
		}
		for range reps {
			if dst, at, budget = appendUnnested(dst, enc, next, budget); budget < 0 {
				return dst, at, budget
			}
		}
	}
	return dst, at, budget
}

// streamList checks the list of runs at enc[off:] of a series of n
// values for stream (n 0: a repeat's body) and returns the offset after
// it, the number of differences it holds and whether one is not 0.
func streamList(enc []byte, off int, n uint64) (int, uint64, bool, bool) {
	top := n > 0
	items, w := binary.Uvarint(enc[off:])
	if w <= 0 || items == 0 || items > uint64(len(enc)-off-w)/2 || !top && items >= 0x80 {
		return 0, 0, false, false
	}
	off += w
	var total uint64
	varies := false
	for range items {
		if off+1 >= len(enc) {
			return 0, 0, false, false
		}
		c := enc[off]
		if c == 0 && top {
			// at most two bytes of repetitions, half the values
			reps, w := binary.Uvarint(enc[off+1:])
			if w <= 0 || w > 2 || reps == 0 {
				return 0, 0, false, false
			}
			end, body, v, ok := streamList(enc, off+1+w, 0)
			if !ok || 2*reps*body >= n {
				return 0, 0, false, false
			}
			off, total, varies = end, total+reps*body, varies || v
			continue
		}
		if c == 0 || c >= 0x80 {
			return 0, 0, false, false
		}
		if u := enc[off+1]; u >= 0x80 {
			if off+2 >= len(enc) || enc[off+2] >= 0x80 {
				return 0, 0, false, false
			}
			varies = varies || u != 0x80 || enc[off+2] != 0
			off++
		} else {
			varies = varies || u != 0
		}
		off += 2
		total += uint64(c)
	}
	return off, total, varies, true
}

// expandRuns appends the values that the valid encoding of runs at
// enc[at:] gives after v, and returns them with the offset after the
// runs and the last value.
func expandRuns(enc []byte, at int, out []int64, v int64) ([]int64, int, int64) {
	n, at := uvarintAt(enc, at)
	for range n {
		c, d, next := itemAt(enc, at)
		if at = next; c > 0 {
			for range c {
				v += d
				out = append(out, v)
			}
			continue
		}
		for range d {
			out, at, v = expandRuns(enc, next, out, v)
		}
	}
	return out, at, v
}

// itemAt reads the item of a valid list of runs at enc[at:]: a run's
// count (> 0) and difference, and the offset after it; or 0, a repeat's
// repetitions, and the offset of its body.
func itemAt(enc []byte, at int) (uint64, int64, int) {
	c, at := uvarintAt(enc, at)
	u, at := uvarintAt(enc, at)
	if c == 0 {
		return 0, int64(u), at
	}
	return c, int64(u>>1) ^ -int64(u&1), at // zigzag
}

// uvarintAt returns the valid uvarint at enc[at:] and the offset after
// it, a byte's without a call.
func uvarintAt(enc []byte, at int) (uint64, int) {
	if b := enc[at]; b < 0x80 {
		return uint64(b), at + 1
	}
	u, n := binary.Uvarint(enc[at:])
	return u, at + n
}

// readRuns reads a list of runs and returns it (if build) with the number
// of runs, those of the repeats' bodies included, and the number of
// differences it holds (saturated at maxValues).
func readRuns(d *varint.Reader, depth int, build bool) ([]Run, int64, uint64) {
	if depth >= maxRunDepth {
		d.Fail(fmt.Sprintf("repeats nested more than %d deep", maxRunDepth))
		return nil, 0, 0
	}
	n := d.Count(2, math.MaxInt)
	if d.Err == nil && n == 0 {
		d.Fail("an empty list of runs")
	}
	var runs []Run
	if build {
		runs = make([]Run, 0, n)
	}
	items := int64(n)
	var total uint64
	for range n {
		c := d.Uvarint()
		if c > maxValues {
			d.Fail(fmt.Sprintf("a run of %d", c))
		}
		var r Run
		var k uint64
		if c > 0 {
			r = Run{Count: int64(c), Delta: d.Varint()}
			k = c
		} else {
			reps := d.Uvarint()
			if d.Err == nil && (reps == 0 || reps > maxValues) {
				d.Fail(fmt.Sprintf("a repeat of %d", reps))
			}
			var body uint64
			var inner int64
			r.Reps = int64(reps)
			r.Body, inner, body = readRuns(d, depth+1, build)
			items += inner
			k = satMul(body, reps)
		}
		if d.Err != nil {
			return nil, 0, 0
		}
		if build {
			runs = append(runs, r)
		}
		total = min(total+k, maxValues)
	}
	return runs, items, total
}

func satMul(a, b uint64) uint64 {
	if a != 0 && b > maxValues/a {
		return maxValues
	}
	return a * b
}

// flatten keeps the values of s beside its runs, for its readers to take
// each value by its index rather than by walking the runs: all of them,
// if that is at most flatLimit values, or one period where they repeat
// (partners, tags and call sites that alternate), of up to maxPeriod
// values. Looking for a period walks the values, and a period longer
// than flatLimit takes more memory than the series' encoding: budget
// bounds both for a trace, so that a small file cannot make it walk
// without end (a repeat of 2^60 repetitions) nor keep gigabytes.
func (s *Series) flatten(budget *flatBudget) {
	if s.enc != nil {
		return // read with its values
	}
	s.vals = nil
	if s.IsConst() {
		return
	}
	limit := flatLimit(numRuns(s.Runs))
	if s.N <= limit {
		s.vals = s.Values()
		return
	}
	// Values that repeat have been folded into a repeat (of up to
	// runWindow runs a period) that holds most of them: a series without
	// one is not worth looking at.
	if budget.walk >= s.N && slices.ContainsFunc(s.Runs, func(r Run) bool { return r.Body != nil && 2*r.Reps*numDiffs(r.Body) >= s.N }) {
		budget.walk -= s.N
		s.vals = s.cycle(maxPeriod)
		if extra := int64(len(s.vals)) - limit; extra > 0 {
			if budget.keep < extra {
				s.vals = nil
				return
			}
			budget.keep -= extra
		}
	}
}

// flatBudget is what flatten may still do for a trace: walk values
// looking for periods, and keep values beyond flatLimit.
type flatBudget struct{ walk, keep int64 }

func newFlatBudget() flatBudget { return flatBudget{walk: cycleBudget, keep: keepBudget} }

// numDiffs returns the number of differences a list of runs holds.
func numDiffs(runs []Run) int64 {
	n := int64(0)
	for i := range runs {
		if runs[i].Body == nil {
			n += runs[i].Count
		} else {
			n += runs[i].Reps * numDiffs(runs[i].Body)
		}
	}
	return n
}

// flatLimit is the most values flatten keeps of a series of runs runs
// (those of the repeats' bodies included) within the series' memory:
// maxCycle, or 16 a run (a Run takes 48 bytes, a value 8: the levels of a
// noisy computation, a run a value, take less memory as values), so that
// they stay proportional to the series' encoding (at least a byte a run).
// maxPeriod is the longest period flatten looks for, in at most twice as
// many values.
func flatLimit(runs int64) int64 { return max(maxCycle, 16*runs) }

const (
	maxCycle  = 32
	maxPeriod = 512
	// cycleBudget is the values a trace's flatten walks looking for
	// periods (tens of milliseconds), keepBudget those it keeps beyond
	// flatLimit (8 MiB).
	cycleBudget = 1 << 24
	keepBudget  = 1 << 20
)

// cycle returns the values of the first period of s if they repeat with
// a period of at most limit values, and at least twice; nil otherwise.
// It looks at them in buffers it reuses (scratch): a trace has
// thousands of series to look at, of a few values a period.
func (s *Series) cycle(limit int64) []int64 {
	b := scratch.Get().(*periodBufs)
	defer scratch.Put(b)
	b.head = slices.Grow(b.head[:0], int(min(s.N, 2*limit)))[:min(s.N, 2*limit)]
	head := b.head
	head[0] = s.First
	fillRuns(s.Runs, head, 1, s.First)
	p := b.period(head)
	if 2*p > len(head) {
		return nil
	}
	if periodShortcut && s.periodic(head, p) {
		return slices.Clone(head[:p])
	}
	var c cursor
	for range head {
		c.next(s)
	}
	for i, j := int64(len(head)), len(head)%p; i < s.N; i++ {
		if c.next(s) != head[j] {
			return nil
		}
		if j++; j == p {
			j = 0
		}
	}
	return slices.Clone(head[:p])
}

// fillRuns fills dst from j on with the values that runs give after v,
// as many as fit, and returns where it stopped and the last value.
func fillRuns(runs []Run, dst []int64, j int, v int64) (int, int64) {
	for i := range runs {
		if j == len(dst) {
			break
		}
		r := &runs[i]
		if r.Body == nil {
			for c := r.Count; c > 0 && j < len(dst); c-- {
				v += r.Delta
				dst[j] = v
				j++
			}
			continue
		}
		for rep := r.Reps; rep > 0 && j < len(dst); rep-- {
			j, v = fillRuns(r.Body, dst, j, v)
		}
	}
	return j, v
}

// periodic reports, without walking most of them, that the values of s
// have period p, as the first, head, do: where its longest repeat's body
// adds up to 0 and ends within head but for p values. The values to the
// repeat's end then have period p (value i, of i+p past head, is value
// i-mL of the repeat's first L, the body's values, and i+p is i-mL+p,
// both within head), and the values after it (at most len(head)) are
// compared one by one.
func (s *Series) periodic(head []int64, p int) bool {
	m, most := -1, int64(0)
	for i := range s.Runs {
		if r := &s.Runs[i]; r.Body != nil && r.Reps*numDiffs(r.Body) > most {
			m, most = i, r.Reps*numDiffs(r.Body)
		}
	}
	if m < 0 {
		return false
	}
	a := numDiffs(s.Runs[:m])
	l := most / s.Runs[m].Reps
	end := a + most // the index of the value that ends the repeat
	if a+l+int64(p) > int64(len(head)) || numDiffs(s.Runs[m+1:]) > int64(len(head)) || netDelta(s.Runs[m].Body) != 0 {
		return false
	}
	t := tailCheck{head: head, p: int64(p), i: end, v: head[(end)%int64(p)]}
	return t.runs(s.Runs[m+1:]) && t.i == s.N-1
}

// periodShortcut turns periodic on (off in a test, to compare).
var periodShortcut = true

// tailCheck compares values, from index i (of value v) on, with the
// period of head p values long.
type tailCheck struct {
	head []int64
	p, i int64
	v    int64
}

func (t *tailCheck) runs(runs []Run) bool {
	for k := range runs {
		r := &runs[k]
		if r.Body == nil {
			for range r.Count {
				t.v += r.Delta
				t.i++
				if t.head[t.i%t.p] != t.v {
					return false
				}
			}
			continue
		}
		for range r.Reps {
			if !t.runs(r.Body) {
				return false
			}
		}
	}
	return true
}

// netDelta returns what a list of runs adds to a value (wrapping, as the
// values do).
func netDelta(runs []Run) int64 {
	var d int64
	for i := range runs {
		if runs[i].Body == nil {
			d += runs[i].Delta * runs[i].Count
		} else {
			d += runs[i].Reps * netDelta(runs[i].Body)
		}
	}
	return d
}

// periodBufs are the buffers of cycle: the values it looks at, and
// period's failure function.
type periodBufs struct {
	head   []int64
	border []int
}

var scratch = sync.Pool{New: func() any { return new(periodBufs) }}

// period returns the least p > 0 such that v[i] = v[i+p] wherever both
// exist (Knuth, Morris and Pratt's failure function: v less its longest
// border).
func (b *periodBufs) period(v []int64) int {
	b.border = slices.Grow(b.border[:0], len(v)+1)[:len(v)+1]
	border := b.border
	border[0] = -1
	k := -1
	for i, x := range v {
		for k >= 0 && v[k] != x {
			k = border[k]
		}
		k++
		border[i+1] = k
	}
	return len(v) - border[len(v)]
}

// numRuns returns the number of runs of a list, those of the repeats'
// bodies included.
func numRuns(runs []Run) int64 {
	n := int64(len(runs))
	for i := range runs {
		n += numRuns(runs[i].Body)
	}
	return n
}

// cursor reads a series' values one after the other. A reader keeps one
// for each varying series of its groups, tens of thousands in an
// irregular trace: the stack, which only series of runs need, is apart.
type cursor struct {
	v int64 // the last value read; in a series of vals, the next one's index
	n int64 // values read
	// Of a streamed series (in the first 32 bytes, which nextStream
	// reads): the offset of its next item in the encoding; the values
	// left of the current run, and its difference; in a repeat, the
	// offset of its body's first run, the runs of the body and those left
	// in this repetition, and the repetitions left after this one.
	off, body   int32
	left, delta int16
	bodyN, runs uint8
	reps        uint16
	hist        *histCursor // of a histogram's series, its draws
	stack       *[]cframe
}

// histCursor is what a rank has drawn from a histogram: the instances of
// each group, and its scale of each (Timing.Scales; 1 where none).
type histCursor struct {
	drawn [maxGroups]int64
	scale [maxGroups]float64
}

// cframe is a list of runs being read: the next item to start, the
// repetitions of the list left after this one, and what is left of the
// current run.
type cframe struct {
	runs  []Run
	pos   int
	reps  int64
	delta int64
	left  int64
}

// next returns the next value of s (the first value again past the end,
// which a well-formed reader never asks for).
func (c *cursor) next(s *Series) int64 {
	if i := c.v; uint64(i) < uint64(len(s.vals)) && c.n < s.N {
		c.v, c.n = i+1, c.n+1
		return s.vals[i]
	}
	return c.nextSlow(s)
}

// nextSlow is next at the end of a table of values or of the series, or
// of a series walked by its runs.
func (c *cursor) nextSlow(s *Series) int64 {
	if s.streamed() {
		return c.nextStream(s)
	}
	if s.vals != nil {
		if c.n >= s.N || c.v == int64(len(s.vals)) {
			c.v = 0
			if c.n >= s.N {
				c.n = 0
			}
		}
		c.n++
		c.v++
		return s.vals[c.v-1]
	}
	if c.n == 0 || c.n >= s.N {
		c.n, c.v = 1, s.First
		if c.stack == nil {
			c.stack = new([]cframe)
		}
		*c.stack = append((*c.stack)[:0], cframe{runs: s.Runs})
		return c.v
	}
	c.n++
	// step's first case, inlined: most values are within a run
	if st := *c.stack; len(st) > 0 {
		if f := &st[len(st)-1]; f.left > 0 {
			f.left--
			c.v += f.delta
			return c.v
		}
	}
	c.v += c.step()
	return c.v
}

// nextStream is nextSlow for a streamed series, whose runs are in the
// short form that stream checked.
func (c *cursor) nextStream(s *Series) int64 {
	if c.n == 0 || c.n >= s.N {
		_, w := binary.Uvarint(s.enc)
		*c = cursor{n: 1, v: s.First, off: int32(w), hist: c.hist, stack: c.stack}
		return c.v
	}
	c.n++
	if c.left > 0 {
		c.left--
		c.v += int64(c.delta)
		return c.v
	}
	if s.pal != nil {
		c.v = s.pal.next(c.n - 2)
		return c.v
	}
	b := s.enc
	if c.body != 0 && c.runs == 0 { // a repetition's end
		if c.reps > 0 {
			c.reps--
			c.off, c.runs = c.body, c.bodyN
		} else {
			c.body = 0
		}
	}
	off := int(c.off)
	if b[off] == 0 { // a repeat: 0, its repetitions, its body's runs
		reps, w := uint64(b[off+1]), 2
		if reps >= 0x80 {
			reps, w = reps&0x7f|uint64(b[off+2])<<7, 3
		}
		off += w
		c.reps, c.bodyN, c.runs = uint16(reps-1), b[off], b[off]
		off++
		c.body = int32(off)
	}
	n, u := b[off], uint64(b[off+1])
	if off += 2; u >= 0x80 {
		u = u&0x7f | uint64(b[off])<<7
		off++
	}
	if c.body != 0 {
		c.runs--
	}
	d := int64(u>>1) ^ -int64(u&1) // zigzag
	c.off, c.left, c.delta = int32(off), int16(n-1), int16(d)
	c.v += d
	return c.v
}

// step returns the next difference.
func (c *cursor) step() int64 {
	stack := c.stack
	for len(*stack) > 0 {
		f := &(*stack)[len(*stack)-1]
		if f.left > 0 {
			f.left--
			return f.delta
		}
		if f.pos < len(f.runs) {
			r := &f.runs[f.pos]
			f.pos++
			if r.Body == nil {
				f.delta, f.left = r.Delta, r.Count
			} else {
				*stack = append(*stack, cframe{runs: r.Body, reps: r.Reps - 1})
			}
			continue
		}
		if f.reps > 0 {
			f.reps--
			f.pos = 0
			continue
		}
		*stack = (*stack)[:len(*stack)-1]
	}
	return 0
}
