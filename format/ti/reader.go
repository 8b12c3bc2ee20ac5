package ti

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"strconv"

	"kairos/internal/prefault"
	"kairos/trace"
)

// maxLine bounds the length of one line, so that a corrupt input cannot
// make the reader buffer without limit. An alltoallv line of 10^6 ranks
// is about 14 MB.
const maxLine = 64 << 20

// lineReader cuts an io.Reader into lines, without copying them more than
// once and without allocating per line.
type lineReader struct {
	r          io.Reader
	buf        []byte
	start, end int
	eof        bool
	err        error
	line       int   // number of the line last returned (1-based)
	base       int64 // input offset of buf[0]
	size       int   // of buf, when it is made
}

// offset returns the input offset of the next unread byte.
func (l *lineReader) offset() int64 { return l.base + int64(l.start) }

// newLineReader starts with a 32 KiB buffer: as fast to parse from as a
// larger one. Long lines grow it.
func newLineReader(r io.Reader, firstLine int) *lineReader {
	return newLineReaderSize(r, firstLine, 32<<10)
}

// privateBuf is the smallest buffer of a reader of a rank's own file. A
// replay holds one per rank and reads them in turns: at 256 and 1,024
// ranks 4 KiB parses as fast as 32 KiB (measured on the stencils) and
// keeps memory small (40% less at 1,024 ranks). At fewer ranks the
// readers share privateBudget, up to 32 KiB each, for fewer reads (a
// system call costs microseconds on a virtual machine): at 64 ranks 16
// KiB buffers made reading a trace for a replay about 15% cheaper than
// 4 KiB (BenchmarkReadAhead). A shared file, which every rank's
// reader scans in full, keeps the larger buffer and its fewer reads.
const (
	privateBuf    = 4 << 10
	privateBudget = 1 << 20
)

// privateSize returns the buffer size of the readers of the ranks' own
// files of a trace of n ranks.
func privateSize(n int) int {
	return min(max(privateBudget/max(n, 1), privateBuf), 32<<10)
}

// newLineReaderSize returns a line reader whose buffer, of size bytes, is
// made at its first read: a replay opens every rank's reader at once.
func newLineReaderSize(r io.Reader, firstLine, size int) *lineReader {
	return &lineReader{r: r, size: size, line: firstLine - 1}
}

// release frees the buffer, at the end of the input.
func (l *lineReader) release() {
	l.buf, l.start, l.end = nil, 0, 0
}

// next returns the next line without its '\n' and whether it was
// terminated by one. ok is false at the end of input or on error.
func (l *lineReader) next() (line []byte, terminated, ok bool) {
	for {
		if i := bytes.IndexByte(l.buf[l.start:l.end], '\n'); i >= 0 {
			line = l.buf[l.start : l.start+i : l.start+i]
			l.start += i + 1
			l.line++
			return line, true, true
		}
		if l.eof {
			if l.start < l.end {
				line = l.buf[l.start:l.end:l.end]
				l.start = l.end
				l.line++
				return line, false, true
			}
			return nil, false, false
		}
		l.fill()
	}
}

// fill reads more input, moving the partial line to the front of the
// buffer and growing it if the line fills it.
func (l *lineReader) fill() {
	if l.buf == nil {
		l.buf = make([]byte, l.size) // no larger than the input
		prefault.Bytes(l.buf)
	}
	if l.start > 0 {
		l.base += int64(l.start)
		l.end = copy(l.buf, l.buf[l.start:l.end])
		l.start = 0
	}
	if l.end == len(l.buf) {
		if len(l.buf) >= maxLine {
			l.err = fmt.Errorf("line %d is longer than %d bytes", l.line+1, maxLine)
			l.eof = true
			return
		}
		nb := make([]byte, 2*len(l.buf))
		copy(nb, l.buf[:l.end])
		l.buf = nb
	}
	n, err := l.r.Read(l.buf[l.end:])
	l.end += n
	if err == io.EOF {
		l.eof = true
	} else if err != nil {
		l.err = err
		l.eof = true
	}
}

// rankMode says what a Reader does with a line of another rank.
type rankMode uint8

const (
	rankFilter rankMode = iota // shared file: skip it
	rankStrict                 // private file: it is an error
)

// Reader streams the events of one rank of a TI trace. It implements
// trace.Reader and trace.Positioner.
type Reader struct {
	lr      *lineReader
	p       *parser // nil until the first Next of a trace's reader, and after its end
	trace   *Trace  // the trace whose rank this is, to make p from; nil for NewReader's
	name    string
	rank    int32
	rankTok []byte
	meta    *trace.Meta // NewReader's
	mode    rankMode
	keep    bool // keep an unterminated last line
	closer  io.Closer
	err     error
	evLine  int
	done    bool
	warn    func(string)
	dropped bool
}

// NewReader returns a reader of the events of rank in the TI text read
// from r, named name in positions and errors. nranks is the size of
// MPI_COMM_WORLD (it fixes the length of the v-collectives' count
// vectors) and defType the trace's default datatype (trace.TypeByte, or
// trace.TypeDouble after "init <x>"). Lines of other ranks are skipped, as
// in a shared trace file. SimGrid's rule for an unterminated last line
// applies (it is dropped) unless opt.KeepLastLine; opt.NumRanks is not
// used. Location lines add regions to the reader's own Meta.
func NewReader(r io.Reader, name string, rank, nranks int, defType trace.Datatype, opt ReaderOptions) *Reader {
	rd := newRankReader(r, name, rank, 1, rankFilter, opt.KeepLastLine, bufSize(32<<10, math.MaxInt64))
	meta := trace.NewMeta()
	rd.p = newParser(name, int32(rank), nranks, defType)
	rd.p.addRegion = func(s string) uint32 { return meta.AddRegion(s, 0) }
	rd.p.meta = &meta
	rd.meta = &meta
	rd.rankTok = strconv.AppendInt(nil, int64(rank), 10)
	return rd
}

// newRankReader returns a reader of rank's lines read from r with a
// buffer of size bytes (see bufSize). The caller sets its parser, or its
// trace for Next to make one from.
func newRankReader(r io.Reader, name string, rank, firstLine int, mode rankMode, keep bool, size int) *Reader {
	return &Reader{lr: newLineReaderSize(r, firstLine, size), name: name, rank: int32(rank), mode: mode, keep: keep}
}

// start makes the parser of a trace's reader, at its first Next: a
// replay opens a million ranks' readers at once, and a reader takes
// memory only from then until its end.
func (r *Reader) start() {
	t := r.trace
	world := t.n
	if t.world > 0 {
		world = t.world
	}
	r.p = newParser(r.name, r.rank, world, t.meta.DefaultType)
	r.p.regions = t.regions
	r.rankTok = strconv.AppendInt(nil, int64(r.rank), 10)
}

// bufSize returns the buffer size of a reader of input bytes with a
// buffer of size bytes, no more than the input and its end need, so that
// a million ranks of a few lines each take a few hundred bytes each
// rather than gigabytes.
func bufSize(size int, input int64) int {
	if input < int64(size) { // not input+1 < size: NewReader's input is math.MaxInt64
		size = int(max(input+1, 16))
	}
	return size
}

// emptyReader reads a rank that has no line.
type emptyReader struct{}

func (emptyReader) Next() bool          { return false }
func (emptyReader) Event() *trace.Event { return nil }
func (emptyReader) Err() error          { return nil }
func (emptyReader) Close() error        { return nil }

// ReaderOptions change how SimGrid's rules are applied.
type ReaderOptions struct {
	// KeepLastLine keeps a last line that has no terminating newline.
	// SimGrid 3.32 silently drops it; by default Kairos does the same, so
	// that event counts and simulations match SimGrid's, and reports a
	// warning.
	KeepLastLine bool
	// NumRanks is the size of MPI_COMM_WORLD (smpirun's -np). 0 means the
	// number of per-rank files of a description, or the highest rank of a
	// shared file plus one.
	NumRanks int
	// NoRegions reads location lines as markers of the unknown region
	// (Region 0) and leaves the metadata without their regions. Open then
	// reads only the first line and the end of each per-rank file instead
	// of all of it: for replays, whose results do not depend on regions.
	NoRegions bool
}

// Next parses the next line of the rank into an event.
func (r *Reader) Next() bool {
	if r.done {
		return false
	}
	if r.p == nil {
		r.start()
	}
	for {
		if n := r.p.fastAction(r.lr.buf[r.lr.start:r.lr.end], r.rankTok); n > 0 {
			r.lr.start += n
			r.lr.line++
			r.evLine = r.lr.line
			return true
		}
		line, term, ok := r.lr.next()
		if !ok {
			r.finish()
			return false
		}
		if !r.p.split(line) {
			if !term {
				r.finish()
				return false
			}
			continue
		}
		mine := bytes.Equal(r.p.toks[0], r.rankTok)
		if !term && !r.keep {
			r.dropped = mine || r.mode == rankStrict
			r.finish()
			return false
		}
		if !mine {
			if r.mode == rankFilter {
				continue
			}
			r.fail(r.p.errAt(r.lr.line, 0, "rank "+string(r.rankTok)+" (the rank of this file)"))
			return false
		}
		if err := r.p.action(r.lr.line); err != nil {
			r.fail(err)
			return false
		}
		r.evLine = r.lr.line
		return true
	}
}

func (r *Reader) finish() {
	r.done = true
	if r.lr.err != nil && r.err == nil {
		r.err = fmt.Errorf("%s: %w", r.name, r.lr.err)
	}
	if r.warn != nil && r.p.warnEmpty {
		r.warn(fmt.Sprintf("%s: rank %d waits with no request outstanding: SimGrid 3.32 aborts the replay there", r.name, r.rank))
	}
	if r.warn != nil && r.p.warnDispls {
		r.warn(fmt.Sprintf("%s: rank %d's allgatherv displacements are not kept: a replay with allgatherv algorithm GB, which broadcasts up to the largest displacement + count, takes the largest count instead", r.name, r.rank))
	}
	r.release()
}

func (r *Reader) fail(err error) {
	if pe, ok := err.(*ParseError); ok && r.trace != nil && r.trace.orig != nil {
		pe.Line = r.trace.lineOf(int(r.rank), pe.Line) // a regrouped file's line
	}
	r.err = err
	r.done = true
	r.release()
}

// release frees the reader's buffers, parser and input once it has
// ended, so that the ranks that have ended cost a replay little memory
// and no file. A trace's reader keeps no parser (its event stays valid:
// the caller may still hold it).
func (r *Reader) release() {
	r.lr.release()
	if r.trace != nil {
		r.p = nil
	}
	if r.closer != nil {
		r.closer.Close()
		r.closer = nil
	}
}

// Event returns the current event, valid until the next call to Next.
func (r *Reader) Event() *trace.Event { return &r.p.ev }

// Err returns the first error met.
func (r *Reader) Err() error { return r.err }

// Position returns "file:line" of the current event.
func (r *Reader) Position() string {
	line := r.evLine
	if r.trace != nil {
		line = r.trace.lineOf(int(r.rank), line)
	}
	return r.name + ":" + strconv.Itoa(line)
}

// Dropped reports whether an unterminated last line was dropped.
func (r *Reader) Dropped() bool { return r.dropped }

// Meta returns the metadata a reader made by NewReader builds (the
// regions of its location lines); nil for a reader of an opened Trace.
func (r *Reader) Meta() *trace.Meta { return r.meta }

// Close releases the reader's input.
func (r *Reader) Close() error {
	r.done = true
	if r.closer == nil {
		return nil
	}
	c := r.closer
	r.closer = nil
	return c.Close()
}
