package ktr

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/klauspost/compress/zstd"

	"kairos/internal/fileio"
	"kairos/internal/prefault"
	"kairos/internal/varint"
	"kairos/trace"
)

// Source is an open ktr file: its metadata and index are in memory, the
// events stay on disk until a rank is read. It implements trace.Source.
// Its rank readers read the file at offsets through one pooled handle
// (fileio.Handle), so that any number of ranks may be read at once, from
// several goroutines, with at most one file descriptor; the handle is
// released when the Source is garbage.
type Source struct {
	path   string
	size   int64
	meta   trace.Meta
	chunks []chunkLoc  // every rank's, in rank order
	first  []int64     // rank r's are chunks[first[r]:first[r+1]]
	file   io.ReaderAt // the stream, from its byte 0
	base   int64       // where the stream starts in the file errors name
	// version is the file's format version: 1's chunks have no
	// structure form.
	version uint16

	dictOnce sync.Once
	dictErr  error
	dict     []byte    // the file's dictionary, once a frame names it
	chunkDec sync.Pool // of *chunkDecoder, which ranks read to their end give back
	// share is what its readers share, with those of the sources it was
	// made to share with (ShareWith).
	share *sharing
}

// sharing is what the readers of a file, or of the sources that share
// with each other, share: the distinct events of their chunks, once more
// than sharedReaders hold a chunk (readers).
type sharing struct {
	templates templatePool
	readers   atomic.Int32
}

// ShareWith makes s's readers share their chunks' distinct events with
// other's, and count among them, as the readers of one file do. Sources
// that each hold a few ranks of one trace (a compressed trace's clusters
// kept as their events, of the same metadata) then share as one file
// would: a replay reads every rank of the trace in turn. It is called
// before either is read.
func (s *Source) ShareWith(other *Source) { s.share = other.share }

// Shares reports whether s's readers share with other's (ShareWith).
func (s *Source) Shares(other *Source) bool { return s.share == other.share }

// chunkLoc locates one chunk: where it is, how long it is (header and
// payload) and how many events it holds.
type chunkLoc struct {
	off, size int64
	events    int
}

// Open reads the header, metadata and index of the ktr file at path and
// checks their checksums. Events are read, and their chunks checked, as
// ranks are read.
func Open(path string) (*Source, error) {
	if compressedExt(path) {
		return nil, fmt.Errorf("%s: a ktr file is compressed already and is read as it is; decompress it first", path)
	}
	if path == "-" {
		return nil, errors.New("a ktr trace cannot be read from standard input: its index is at its end; give a file")
	}
	f, err := fileio.OpenHandle(path)
	if err != nil {
		return nil, err
	}
	s := &Source{path: path, size: f.Size(), file: f, share: new(sharing)}
	dataStart, err := s.readHeader(f)
	if err == nil {
		err = s.readIndex(f, dataStart)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	runtime.AddCleanup(s, func(f *fileio.Handle) { f.Close() }, f)
	return s, nil
}

// OpenSection reads a ktr stream held in another file (format/rsd keeps
// the events of a cluster that its loops do not compress so): the size
// bytes of ra from byte base. Errors name path and offsets in ra.
func OpenSection(path string, ra io.ReaderAt, base, size int64) (*Source, error) {
	s := &Source{path: path, size: size, file: io.NewSectionReader(ra, base, size), base: base, share: new(sharing)}
	dataStart, err := s.readHeader(s.file)
	if err == nil {
		err = s.readIndex(s.file, dataStart)
	}
	if err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Source) corrupt(off int64, format string, args ...any) error {
	return &CorruptError{Path: s.path, Offset: s.base + off, Rank: -1, Chunk: -1, What: fmt.Sprintf(format, args...)}
}

// readAt reads len(b) bytes at off, reporting a short file as corruption
// of what was being read.
func (s *Source) readAt(f io.ReaderAt, b []byte, off int64, what string) error {
	if off < 0 || off > s.size || int64(len(b)) > s.size-off {
		return s.corrupt(off, "truncated file: %s needs %d bytes, the file has %d from here", what, len(b), max(s.size-off, 0))
	}
	if _, err := f.ReadAt(b, off); err != nil {
		return fmt.Errorf("%s: byte %d: reading %s: %w", s.path, s.base+off, what, err)
	}
	return nil
}

// readHeader checks the file header, reads the meta block and returns the
// offset of the first chunk.
func (s *Source) readHeader(f io.ReaderAt) (int64, error) {
	var h [headerSize + metaHeaderSize]byte
	if s.size < int64(len(magic)) {
		return 0, s.corrupt(0, "file of %d bytes is too short for a ktr header", s.size)
	}
	if err := s.readAt(f, h[:len(magic)], 0, "the magic number"); err != nil {
		return 0, err
	}
	if string(h[:len(magic)]) != magic {
		return 0, s.corrupt(0, "not a ktr file: magic number %q, expected %q", h[:len(magic)], magic)
	}
	if err := s.readAt(f, h[:], 0, "the header"); err != nil {
		return 0, err
	}
	if got, want := checksum(h[:12]), binary.LittleEndian.Uint32(h[12:]); got != want {
		return 0, s.corrupt(0, "header checksum %#08x, expected %#08x", got, want)
	}
	s.version = binary.LittleEndian.Uint16(h[8:])
	if s.version < 1 || s.version > Version {
		return 0, s.corrupt(8, "format version %d, this Kairos reads versions 1 to %d", s.version, Version)
	}
	if fl := binary.LittleEndian.Uint16(h[10:]); fl&^knownFlags != 0 {
		return 0, s.corrupt(10, "unknown flags %#04x", fl&^knownFlags)
	}
	n := int64(binary.LittleEndian.Uint32(h[16:]))
	bodyOff := int64(headerSize + metaHeaderSize)
	if n > s.size-bodyOff-trailerSize {
		return 0, s.corrupt(headerSize, "meta block length %d exceeds the %d bytes the file has for it", n, max(s.size-bodyOff-trailerSize, 0))
	}
	body := make([]byte, n)
	if err := s.readAt(f, body, bodyOff, "the meta block"); err != nil {
		return 0, err
	}
	if got, want := checksum(body), binary.LittleEndian.Uint32(h[20:]); got != want {
		return 0, s.corrupt(headerSize, "meta block checksum %#08x, expected %#08x", got, want)
	}
	m, err := parseMeta(body)
	if err != nil {
		return 0, &CorruptError{Path: s.path, Offset: s.base + bodyOff, Rank: -1, Chunk: -1, What: "meta block", Err: err}
	}
	s.meta = m
	return bodyOff + n, nil
}

// readIndex reads the trailer and the index it points at, and checks that
// the chunks the index lists tile the file from dataStart to the index.
func (s *Source) readIndex(f io.ReaderAt, dataStart int64) error {
	tOff := s.size - trailerSize
	if tOff < dataStart {
		return s.corrupt(max(tOff, 0), "truncated file: no room for the %d-byte trailer after the meta block ending at byte %d", trailerSize, dataStart)
	}
	var t [trailerSize]byte
	if err := s.readAt(f, t[:], tOff, "the trailer"); err != nil {
		return err
	}
	if string(t[24:]) != trailerMagic {
		return s.corrupt(tOff+24, "trailer magic %q, expected %q (truncated or appended-to file?)", t[24:], trailerMagic)
	}
	if got, want := checksum(t[:20]), binary.LittleEndian.Uint32(t[20:]); got != want {
		return s.corrupt(tOff, "trailer checksum %#08x, expected %#08x", got, want)
	}
	iOff, iLen := binary.LittleEndian.Uint64(t[0:]), binary.LittleEndian.Uint64(t[8:])
	if iOff < uint64(dataStart) || iOff > uint64(tOff) || iLen != uint64(tOff)-iOff {
		return s.corrupt(tOff, "index at byte %d of %d bytes, expected it between byte %d and the trailer at byte %d", iOff, iLen, dataStart, tOff)
	}
	idx := make([]byte, iLen)
	prefault.Bytes(idx)
	if err := s.readAt(f, idx, int64(iOff), "the index"); err != nil {
		return err
	}
	if got, want := checksum(idx), binary.LittleEndian.Uint32(t[16:]); got != want {
		return s.corrupt(int64(iOff), "index checksum %#08x, expected %#08x", got, want)
	}
	if err := s.parseIndex(idx, dataStart, int64(iOff)); err != nil {
		return &CorruptError{Path: s.path, Offset: s.base + int64(iOff), Rank: -1, Chunk: -1, What: "index", Err: err}
	}
	return nil
}

func (s *Source) parseIndex(b []byte, dataStart, end int64) error {
	d := &varint.Reader{B: b}
	n := d.Count(1, math.MaxInt)
	if n > trace.MaxRanks {
		return fmt.Errorf("%d ranks, expected at most %d", n, trace.MaxRanks)
	}
	s.first = make([]int64, n+1) // 8 bytes a rank, however many are empty
	off := dataStart
	for r := 0; r < n && d.Err == nil; r++ {
		s.first[r] = int64(len(s.chunks))
		k := d.Count(2, math.MaxInt)
		for i := 0; i < k; i++ {
			size, events := d.Uvarint(), d.Uvarint()
			if d.Err != nil {
				break
			}
			if size < chunkHeadSize+1 || size > uint64(end-off) {
				return fmt.Errorf("rank %d chunk %d: size %d, expected %d to %d bytes", r, i, size, chunkHeadSize+1, end-off)
			}
			if events == 0 || events > MaxChunkRaw/2 {
				return fmt.Errorf("rank %d chunk %d: %d events, expected 1 to %d", r, i, events, MaxChunkRaw/2)
			}
			s.chunks = append(s.chunks, chunkLoc{off: off, size: int64(size), events: int(events)})
			off += int64(size)
		}
	}
	s.first[n] = int64(len(s.chunks))
	if d.Err != nil {
		return d.Err
	}
	if d.Off != len(b) {
		return fmt.Errorf("%d bytes after the last rank, expected none", len(b)-d.Off)
	}
	if off != end {
		return fmt.Errorf("chunks end at byte %d, expected them to end where the index starts, at byte %d", off, end)
	}
	return nil
}

// Meta returns the trace's metadata.
func (s *Source) Meta() *trace.Meta { return &s.meta }

// ConcurrentRanks reports true: a Source's rank readers may be used from
// several goroutines at once.
func (s *Source) ConcurrentRanks() bool { return true }

// NumRanks returns the number of ranks.
func (s *Source) NumRanks() int { return len(s.first) - 1 }

// rankChunks returns the chunks of rank r.
func (s *Source) rankChunks(r int) []chunkLoc { return s.chunks[s.first[r]:s.first[r+1]] }

// NumEvents returns the number of events of rank r, from the index.
func (s *Source) NumEvents(r int) int64 {
	var n int64
	for _, c := range s.rankChunks(r) {
		n += int64(c.events)
	}
	return n
}

// RankEvents returns the number of events of rank r, from the index: it
// makes the Source a trace.Counter.
func (s *Source) RankEvents(r int) int64 { return s.NumEvents(r) }

// RankBytes returns the bytes of rank r's compressed chunks, from the
// index: it makes the Source a trace.Sizer.
func (s *Source) RankBytes(r int) int64 {
	var n int64
	for _, c := range s.rankChunks(r) {
		n += c.size
	}
	return n
}

// NumChunks returns the number of chunks of rank r.
func (s *Source) NumChunks(r int) int { return len(s.rankChunks(r)) }

// OpenRank returns a reader that streams rank r's events, decompressing
// one chunk at a time.
func (s *Source) OpenRank(r int) (trace.Reader, error) {
	if r < 0 || r >= s.NumRanks() {
		return nil, fmt.Errorf("%s: rank %d out of range [0,%d)", s.path, r, s.NumRanks())
	}
	return &RankReader{src: s, rank: r, chunks: s.rankChunks(r), chunk: -1}, nil
}

// decoders keeps the zstd decoders of every file, each with the
// dictionary it last decoded a frame with. A decoder is told a file's
// dictionary where a frame names it (ResetWithOptions, a map of one entry
// cloned). A decoder a file, as before, made a reduction of a stream a
// cluster 64 decoders (LAMMPS' melt on 64 ranks: 1.3 MB of their blocks,
// and 926 page faults in its replay where it now takes 636;
// BENCHMARKS.md).
var decoders = sync.Pool{New: func() any {
	d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(MaxChunkRaw))
	if err != nil {
		panic(err) // only for invalid options
	}
	return &decoder{Decoder: d}
}}

// decoder is a zstd decoder and the file whose dictionary it knows (nil:
// none).
type decoder struct {
	*zstd.Decoder
	dictOf *Source
}

// decoderFor returns a decoder for frame, a chunk's compressed payload,
// to put back in decoders: where the frame names the file's dictionary
// and dict is set, one that knows it, the dictionary read first if need
// be. A file's dictionary is read only where a frame names it: a
// reduction keeps a stream a cluster, whose dictionaries and decoders
// were made for every stream before (LAMMPS' melt on 64 ranks: 64, where
// the frames of about 15 streams name theirs).
func (s *Source) decoderFor(frame []byte, dict bool) (*decoder, error) {
	d := decoders.Get().(*decoder)
	if !dict || !namesDict(frame) {
		return d, nil
	}
	s.dictOnce.Do(s.loadDict)
	if s.dictErr != nil {
		decoders.Put(d)
		return nil, s.dictErr
	}
	if d.dictOf != s {
		if err := d.ResetWithOptions(nil, zstd.WithDecoderDictRaw(dictID, s.dict)); err != nil {
			panic(err) // only for invalid options
		}
		d.dictOf = s
	}
	return d, nil
}

// namesDict reports whether frame, a zstd frame, has a dictionary id in
// its header (RFC 8878, 3.1.1.1.1: the descriptor's two low bits give the
// field's size, 0 for none). Where frame is not a zstd frame, the plain
// decoder says so.
func namesDict(frame []byte) bool {
	return len(frame) > 4 && binary.LittleEndian.Uint32(frame) == zstdMagic && frame[4]&3 != 0
}

// zstdMagic begins every zstd frame.
const zstdMagic = 0xfd2fb528

// loadDict reads the file's dictionary, the start of its first chunk's
// raw payload. The chunk is decompressed for it alone: read where a frame
// names the dictionary, its rank's reader has gone past it by then (a
// replay reads its ranks' first chunks in rank order), and a chunk kept
// for that reader was kept for nothing.
func (s *Source) loadDict() {
	for r := range s.NumRanks() {
		if s.NumChunks(r) == 0 {
			continue
		}
		var cr chunkReader
		if err := cr.read(s, r, 0, false); err != nil {
			s.dictErr = fmt.Errorf("reading the dictionary, the file's first chunk: %w", err)
			return
		}
		s.dict = bytes.Clone(cr.raw[:min(len(cr.raw), maxDict)])
		break
	}
}

// RankReader streams one rank of a ktr file. It implements trace.Reader.
type RankReader struct {
	// What Next reads for every event first (see payloadReader).
	err    error
	dec    *chunkDecoder
	more   bool // the current chunk may hold more events
	n      int  // events decoded from the current chunk
	events int  // the events the index gives the current chunk
	ev     trace.Event
	dist   trace.Event // Distinct's

	src    *Source
	rank   int
	chunks []chunkLoc
	chunk  int // the current chunk, -1 before the first
	skip   trace.Skip
}

// Next decodes the next event, reading the next chunk when the current one
// is exhausted.
func (r *RankReader) Next() bool {
	for r.err == nil {
		if r.more {
			id, ok, err := r.dec.pr.decode(&r.ev, false)
			if ok && err == nil {
				r.n++
				if id == thinEvent {
					// Its amounts are its distinct event's, not negative
					// (decode), and not set: only Compute may be absurd.
					return r.n <= r.events && trace.SaneCompute(r.ev.Kind, r.ev.Compute) || r.checkCompute()
				}
				return r.n <= r.events && r.ev.Sane() || r.check(&r.ev)
			}
			if !r.ended(err) {
				return false
			}
		}
		if !r.nextChunk() {
			return false
		}
	}
	return false
}

// NextDistinct advances as Next, and names the distinct event of its
// chunk the event copies (trace.DistinctReader); the group is the chunk.
func (r *RankReader) NextDistinct() (id, group int, ok bool) {
	for r.err == nil {
		if r.more {
			id, ok, err := r.dec.pr.decode(&r.ev, true)
			if ok && err == nil {
				r.n++
				if id < 0 {
					return id, r.chunk, r.n <= r.events && r.ev.Sane() || r.check(&r.ev)
				}
				// Its distinct event's amounts are not negative
				// (decode): only Compute may be absurd.
				return id, r.chunk, r.n <= r.events && trace.SaneCompute(r.ev.Kind, r.ev.Compute) || r.checkCompute()
			}
			if !r.ended(err) {
				return -1, r.chunk, false
			}
		}
		if !r.nextChunk() {
			return -1, r.chunk, false
		}
	}
	return -1, r.chunk, false
}

// Distinct returns the current chunk's distinct event id, without the
// values that vary (trace.DistinctReader).
func (r *RankReader) Distinct(id int) *trace.Event {
	r.dec.pr.distinct(&r.dist, id)
	return &r.dist
}

// check is the slow path of the checks of e, the event just decoded: it
// reports false, with the error, where the chunk holds more events than
// the index says or e's amounts are absurd.
func (r *RankReader) check(e *trace.Event) bool {
	if r.n > r.events {
		r.fail(r.chunks[r.chunk].off, "chunk holds more than the %d events the index says", nil, r.chunks[r.chunk].events)
		return false
	}
	if msg := e.Absurd(); msg != "" {
		r.fail(r.chunks[r.chunk].off, "event %d of the chunk: %s", nil, r.n-1, msg)
		return false
	}
	return true
}

// checkCompute is check for an event NextDistinct decoded.
func (r *RankReader) checkCompute() bool {
	return r.check(&trace.Event{Kind: r.ev.Kind, Compute: r.ev.Compute})
}

// ended handles the end of the current chunk's events, or err: it reports
// whether the chunk ended where the index says.
func (r *RankReader) ended(err error) bool {
	if err != nil {
		r.fail(r.chunks[r.chunk].off, "event %d of the decompressed payload", err, r.n)
		return false
	}
	r.more = false
	if r.n != r.events {
		r.fail(r.chunks[r.chunk].off, "chunk holds %d events, the index says %d", nil, r.n, r.chunks[r.chunk].events)
		return false
	}
	return true
}

// nextChunk loads the rank's next chunk; it reports false at the rank's
// end or on an error.
func (r *RankReader) nextChunk() bool {
	if r.chunk+1 >= len(r.chunks) {
		r.Close() // the buffers are not needed any more
		return false
	}
	r.chunk++
	if err := r.load(); err != nil {
		r.err = err
		return false
	}
	return true
}

func (r *RankReader) fail(off int64, format string, err error, args ...any) {
	r.err = &CorruptError{Path: r.src.path, Offset: r.src.base + off, Rank: r.rank, Chunk: r.chunk, What: fmt.Sprintf(format, args...), Err: err}
}

// load reads, checks and decompresses the current chunk and starts
// decoding it.
func (r *RankReader) load() error {
	if r.dec == nil {
		if r.dec, _ = r.src.chunkDec.Get().(*chunkDecoder); r.dec == nil {
			r.dec = new(chunkDecoder)
		}
		r.dec.pr.skip = r.skip
		r.src.share.readers.Add(1)
	}
	if err := r.dec.cr.read(r.src, r.rank, r.chunk, true); err != nil {
		return err
	}
	r.dec.pr.forms, r.dec.pr.layouts = r.src.version >= 2, r.src.version >= 4
	r.dec.pr.pool, r.dec.pr.rank = nil, int32(r.rank)
	if r.src.share.readers.Load() > sharedReaders {
		r.dec.pr.pool = &r.src.share.templates
	}
	r.dec.pr.maxTmpl = maxTemplates
	if r.src.version == 2 {
		r.dec.pr.maxTmpl = maxTemplatesV2
	}
	if err := r.dec.pr.reset(r.dec.cr.raw); err != nil {
		c := r.chunks[r.chunk]
		return &CorruptError{Path: r.src.path, Offset: r.src.base + c.off + chunkHeadSize, Rank: r.rank, Chunk: r.chunk, What: "decompressed payload", Err: err}
	}
	r.n, r.events, r.more = 0, r.chunks[r.chunk].events, true
	return nil
}

// minBytes is the fewest bytes a chunk of events events decompresses to:
// 2 an event (its kind and mask) in version 1, 1 (its index among the
// chunk's distinct events) since.
func (s *Source) minBytes(events uint32) uint64 {
	if s.version == 1 {
		return 2 * uint64(events)
	}
	return uint64(events)
}

// chunkDecoder is what a RankReader needs while it reads: taken at its
// first chunk and given back at its end, so that a rank not yet read, or
// read to its end, costs a replay of a million ranks little, and ranks
// read one after the other reuse the same buffers.
type chunkDecoder struct {
	cr chunkReader
	pr payloadReader
}

// chunkReader reads chunks of a file, reusing its buffer. The chunk as
// read (header and compressed payload) is in a scratch buffer only while
// it is decompressed.
type chunkReader struct {
	raw []byte // the decompressed payload
}

// decodeSlack is the room a chunk's decompression is given past its raw
// length: zstd's decoder takes the copies of its assembly, which may
// write 32 bytes past a block, only where the room after the block allows
// them, and a chunk of one block (a reduction's clusters kept as their
// events, a few KB a rank) was decoded by its safe copies alone (LAMMPS'
// melt on 64 ranks: 1.6% of its replay's CPU samples, against 1.4% for
// the others).
const decodeSlack = 32

// populateRatio bounds, in times its compressed payload, the room a
// chunk's decompression is given mapped at once (prefault).
const populateRatio = 64

// read reads chunk i of rank r into cr.raw, checking everything but the
// events: checksums, header against index, lengths. Without dict, a
// frame that names the file's dictionary does not decompress (the first
// chunk's, from which loadDict takes it).
func (cr *chunkReader) read(s *Source, r, i int, dict bool) error {
	c := s.rankChunks(r)[i]
	bad := func(at int64, err error, format string, args ...any) error {
		return &CorruptError{Path: s.path, Offset: s.base + at, Rank: r, Chunk: i, What: fmt.Sprintf(format, args...), Err: err}
	}
	sp, buf := borrow(int(c.size))
	defer scratch.Put(sp)
	if _, err := s.file.ReadAt(buf, c.off); err != nil {
		return bad(c.off, err, "reading %d bytes", c.size)
	}
	h := buf[:chunkHeadSize]
	payload := buf[chunkHeadSize:]
	if got, want := chunkCRC(h[:24], payload), binary.LittleEndian.Uint32(h[24:]); got != want {
		return bad(c.off, nil, "chunk checksum %#08x, expected %#08x", got, want)
	}
	rank, seq := binary.LittleEndian.Uint32(h[0:]), binary.LittleEndian.Uint32(h[4:])
	events, rawLen := binary.LittleEndian.Uint32(h[8:]), binary.LittleEndian.Uint32(h[12:])
	compLen := binary.LittleEndian.Uint32(h[16:])
	switch {
	case int64(rank) != int64(r) || int64(seq) != int64(i):
		return bad(c.off, nil, "chunk header names rank %d chunk %d, the index puts rank %d chunk %d here", rank, seq, r, i)
	case int64(events) != int64(c.events):
		return bad(c.off+8, nil, "chunk header says %d events, the index %d", events, c.events)
	case int64(compLen) != int64(len(payload)):
		return bad(c.off+16, nil, "compressed length %d, the index leaves %d bytes for it", compLen, len(payload))
	case rawLen > MaxChunkRaw || uint64(rawLen) < s.minBytes(events):
		return bad(c.off+12, nil, "raw length %d, expected %d to %d bytes for %d events", rawLen, s.minBytes(events), MaxChunkRaw, events)
	}
	if cap(cr.raw) < int(rawLen)+decodeSlack {
		cr.raw = make([]byte, 0, int(rawLen)+decodeSlack)
		// Mapped at once, as far as the payload can fill it: a hostile
		// header's length takes no memory.
		prefault.Bytes(cr.raw[:0:min(int(rawLen), populateRatio*len(payload))])
	}
	dec, err := s.decoderFor(payload, dict)
	if err != nil {
		return err
	}
	raw, err := dec.DecodeAll(payload, cr.raw[:0])
	decoders.Put(dec)
	if err != nil {
		return bad(c.off+chunkHeadSize, err, "decompressing the payload")
	}
	cr.raw = raw
	if len(raw) != int(rawLen) {
		return bad(c.off+chunkHeadSize, nil, "payload decompresses to %d bytes, expected %d", len(raw), rawLen)
	}
	if got, want := checksum(raw), binary.LittleEndian.Uint32(h[20:]); got != want {
		return bad(c.off+chunkHeadSize, nil, "decompressed payload checksum %#08x, expected %#08x", got, want)
	}
	return nil
}

// Event returns the current event, valid until the next call to Next.
func (r *RankReader) Event() *trace.Event { return &r.ev }

// Err returns the first error met, nil at a clean end.
func (r *RankReader) Err() error { return r.err }

// Skim leaves the fields of s unset, and their columns unread, in the
// events that follow.
func (r *RankReader) Skim(s trace.Skip) {
	r.skip = s
	if r.dec != nil {
		r.dec.pr.skip = s
		r.dec.pr.st.Skim(s)
	}
}

// Close releases the reader's buffers.
func (r *RankReader) Close() error {
	if r.dec != nil {
		r.src.chunkDec.Put(r.dec)
		r.dec = nil
		r.src.share.readers.Add(-1)
	}
	r.more = false
	return nil
}
