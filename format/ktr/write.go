package ktr

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"math/bits"
	"sync"

	"github.com/klauspost/compress/zstd"

	"kairos/internal/fileio"
	"kairos/trace"
)

// Options tune the writer. The zero value gives the defaults.
type Options struct {
	// ChunkSize is the uncompressed payload size at which a chunk is
	// closed; DefaultChunkSize if 0. Larger chunks compress a little
	// better, smaller ones let readers hold less.
	ChunkSize int
	// Level is the zstd compression level; zstd.SpeedDefault if 0, which
	// on the columns of a chunk compresses as well as the slower levels
	// (within 1%). Decompression speed hardly depends on it.
	Level zstd.EncoderLevel
	// Fastest also compresses each chunk at zstd's fastest level,
	// without the dictionary, and keeps that frame where it takes at
	// most 1 byte in fastGain more than the other kept would cost (its
	// bytes, and with the dictionary 1 in dictGain of the raw payload's):
	// its fewer, shorter matches decode faster. (The rounded times of a
	// polling program, HPCC's on 4 ranks: 0.7% fewer bytes, and 2.2%
	// fewer instructions in a replay. Its frames with the dictionary,
	// which klauspost/compress decodes in Go, kept as well at 1 in 16,
	// took 7% more.)
	Fastest bool
}

// Scratch are the options of a .ktr that the process writing it reads
// back (an archive copied into memory): zstd's fastest level alone, which
// wrote a polling program's events in less time than the default level
// and in as many bytes (HPCC's 134 M events: 13.1–15.3 s of CPU against
// 16.2–22.0, 302 MB either way, read as fast; a stencil's, 10% more
// bytes).
var Scratch = Options{Level: zstd.SpeedFastest}

// Write writes src to path in the ktr format. The file is written to a
// temporary file in the same directory and renamed into place when
// complete (internal/fileio), so that a failed write leaves nothing
// behind. Ranks are streamed one after the other: the writer holds one
// chunk and the index, never a whole rank.
func Write(path string, src trace.Source) error {
	return WriteOptions(path, src, Options{})
}

// WriteOptions is Write with options.
func WriteOptions(path string, src trace.Source, o Options) error {
	if compressedExt(path) {
		return fmt.Errorf("%s: a ktr file is compressed already; name it .ktr", path)
	}
	f, err := fileio.Create(path)
	if err != nil {
		return err
	}
	defer f.Abort()
	if err := Encode(f, src, o); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Commit()
}

// Encode writes src in the ktr format to w, which need not seek.
func Encode(w io.Writer, src trace.Source, o Options) error {
	e, err := newEncoder(w, o)
	if err != nil {
		return err
	}
	defer e.close()
	if err := e.header(src.Meta()); err != nil {
		return err
	}
	n := src.NumRanks()
	if n < 0 || n > math.MaxUint32 {
		return fmt.Errorf("%d ranks: out of range", n)
	}
	e.index = binary.AppendUvarint(e.index, uint64(n))
	for r := 0; r < n; r++ {
		if err := e.rank(src, r); err != nil {
			return fmt.Errorf("rank %d: %w", r, err)
		}
	}
	return e.trailer()
}

func newEncoder(w io.Writer, o Options) (*encoder, error) {
	if o.ChunkSize <= 0 {
		o.ChunkSize = DefaultChunkSize
	}
	if o.ChunkSize > MaxChunkRaw {
		return nil, fmt.Errorf("chunk size %d exceeds the format's limit %d", o.ChunkSize, MaxChunkRaw)
	}
	if o.Level == 0 {
		o.Level = zstd.SpeedDefault
	}
	// A chunk is compressed alone (EncodeAll): a window beyond its size
	// finds nothing more, and each of the two encoders would hold a
	// history of zstd's default 8 MiB (a reduction writes a stream a
	// cluster).
	window := max(zstd.MinWindowSize, 1<<bits.Len(uint(o.ChunkSize-1)))
	e := &encoder{w: w, chunkSize: o.ChunkSize, zopts: zstdOptions(o.Level, window)}
	e.zpool = zstdPoolOf(o.Level, window)
	if o.Fastest && o.Level != zstd.SpeedFastest {
		e.fast = zstdPoolOf(zstd.SpeedFastest, window)
		e.zfast, _ = e.fast.plain.Get().(*zstd.Encoder)
		if e.zfast == nil {
			z, err := zstd.NewWriter(nil, zstdOptions(zstd.SpeedFastest, window)...)
			if err != nil {
				return nil, err
			}
			e.zfast = z
		}
	}
	if z, ok := e.zpool.plain.Get().(*zstd.Encoder); ok {
		e.zenc = z
		return e, nil
	}
	var err error
	e.zenc, err = zstd.NewWriter(nil, e.zopts...)
	return e, err
}

// zstdOptions are the options of a chunk's compressor.
func zstdOptions(level zstd.EncoderLevel, window int) []zstd.EOption {
	return []zstd.EOption{zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(level),
		zstd.WithEncoderCRC(false), zstd.WithZeroFrames(true), zstd.WithLowerEncoderMem(true),
		zstd.WithWindowSize(window)}
}

// close leaves the encoder's compressors to the next stream's.
func (e *encoder) close() {
	e.zpool.plain.Put(e.zenc)
	if e.zfast != nil {
		e.fast.plain.Put(e.zfast)
	}
	if e.zdict != nil {
		e.zpool.dict.Put(e.zdict)
	}
}

// zstdPool keeps the compressors of finished streams of one level and
// window for the next streams: a compressor's tables take megabytes,
// made and zeroed anew for every stream (1.4 ms and 4.2 MB a stream,
// with its dictionary's compressor, against 10 µs to compress a 64 KiB
// chunk), and a reduction writes a stream a cluster kept as its events
// (128 streams for HPCC's 64 ranks). A chunk is compressed alone
// (EncodeAll), into the same bytes whatever the compressor did before.
type zstdPool struct {
	plain sync.Pool // *zstd.Encoder without a dictionary
	dict  sync.Pool // *zstd.Encoder with a dictionary, to be reset to the stream's
}

// zstdPools are the pools by level and window.
var zstdPools sync.Map // zstdKey -> *zstdPool

type zstdKey struct {
	level  zstd.EncoderLevel
	window int
}

// zstdPoolOf returns the pool of compressors of a level and window.
func zstdPoolOf(level zstd.EncoderLevel, window int) *zstdPool {
	k := zstdKey{level, window}
	if p, ok := zstdPools.Load(k); ok {
		return p.(*zstdPool)
	}
	p, _ := zstdPools.LoadOrStore(k, &zstdPool{})
	return p.(*zstdPool)
}

// dictEncoder returns a compressor with the stream's dictionary.
func (e *encoder) dictEncoder(dict []byte) (*zstd.Encoder, error) {
	opt := zstd.WithEncoderDictRaw(dictID, dict)
	if z, ok := e.zpool.dict.Get().(*zstd.Encoder); ok {
		return z, z.ResetWithOptions(nil, opt)
	}
	return zstd.NewWriter(nil, append(e.zopts, opt)...)
}

// encoder writes one ktr stream, counting the bytes written so that the
// index can record where things are.
type encoder struct {
	w         io.Writer
	off       int64
	zopts     []zstd.EOption
	zenc      *zstd.Encoder // for the first chunk
	zdict     *zstd.Encoder // for the others, with the dictionary
	zpool     *zstdPool     // where they go when the stream ends
	zfast     *zstd.Encoder // at the fastest level (Options.Fastest), or nil
	fast      *zstdPool     // where it goes
	alt       []byte        // the other compression of the current chunk
	shifted   []byte        // the current chunk in the shifted time layout
	chunkSize int

	payload   payloadWriter
	raw, comp []byte
	events    int
	chunks    []chunkRef // the current rank's chunks
	index     []byte     // the index body so far
}

// chunkRef is what the index records of a chunk.
type chunkRef struct {
	size   int64 // header and payload
	events int
}

func (e *encoder) write(b []byte) error {
	n, err := e.w.Write(b)
	e.off += int64(n)
	return err
}

func (e *encoder) header(m *trace.Meta) error {
	var h [headerSize]byte
	copy(h[:], magic)
	binary.LittleEndian.PutUint16(h[8:], Version)
	binary.LittleEndian.PutUint16(h[10:], 0)
	binary.LittleEndian.PutUint32(h[12:], checksum(h[:12]))
	body := appendMeta(nil, m)
	if len(body) > math.MaxUint32 {
		return fmt.Errorf("metadata of %d bytes exceeds the format's 4 GiB limit", len(body))
	}
	var mh [metaHeaderSize]byte
	binary.LittleEndian.PutUint32(mh[0:], uint32(len(body)))
	binary.LittleEndian.PutUint32(mh[4:], checksum(body))
	if err := e.write(h[:]); err != nil {
		return err
	}
	if err := e.write(mh[:]); err != nil {
		return err
	}
	return e.write(body)
}

// rank streams rank r of src into chunks and records them in the index.
func (e *encoder) rank(src trace.Source, r int) (err error) {
	rd, err := src.OpenRank(r)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := rd.Close(); err == nil {
			err = cerr
		}
	}()
	for i := 0; rd.Next(); i++ {
		ev := rd.Event()
		if !ev.Kind.Valid() {
			return fmt.Errorf("event %d: invalid kind %d", i, ev.Kind)
		}
		e.payload.add(ev)
		e.events++
		if n := e.payload.size(); n > MaxChunkRaw {
			return fmt.Errorf("event %d: %d bytes encoded exceed the chunk limit of %d", i, n, MaxChunkRaw)
		} else if n >= e.chunkSize {
			if err := e.flush(r); err != nil {
				return err
			}
		}
	}
	if err := rd.Err(); err != nil {
		return err
	}
	if e.events > 0 {
		if err := e.flush(r); err != nil {
			return err
		}
	}
	e.endRank()
	return nil
}

// endRank records the current rank's chunks in the index.
func (e *encoder) endRank() {
	e.index = binary.AppendUvarint(e.index, uint64(len(e.chunks)))
	for _, c := range e.chunks {
		e.index = binary.AppendUvarint(e.index, uint64(c.size))
		e.index = binary.AppendUvarint(e.index, uint64(c.events))
	}
	e.chunks = e.chunks[:0]
}

// flush compresses and writes the current chunk of rank r and starts a
// new one.
func (e *encoder) flush(r int) error {
	var shifted []byte
	e.raw, shifted = e.payload.appendTo(e.raw[:0], e.shifted[:0])
	if shifted != nil {
		e.shifted = shifted // its room, for the next chunks
	}
	err := e.writeChunk(r, e.raw, shifted, e.events)
	e.events = 0
	return err
}

// writeChunk compresses and writes raw as the next chunk of rank r, or
// shifted, the chunk in the shifted time layout (nil: none), where its
// frame is smaller.
func (e *encoder) writeChunk(r int, raw, shifted []byte, events int) error {
	e.comp = e.zenc.EncodeAll(raw, e.comp[:0])
	cost := len(e.comp) // its bytes, and those a reader's time is worth
	if e.zdict != nil {
		// The dictionary (the file's first chunk) shrinks short ranks
		// that resemble the first one and can bloat others. Its frame
		// is kept where it saves a byte in dictGain of the raw payload:
		// klauspost/compress decodes a frame with a dictionary in Go,
		// not in its assembly, about 2 instructions more a raw byte on
		// HPCC's dense polling. A zstd frame names the dictionary it
		// needs (id 1) or none (id 0), so the reader needs no flag.
		e.alt = e.zdict.EncodeAll(raw, e.alt[:0])
		if n := len(e.alt) + len(raw)/dictGain; n < cost {
			e.comp, e.alt, cost = e.alt, e.comp, n
		}
	}
	kept := raw
	if shifted != nil {
		// The shifted layout's frame (without the dictionary) where it
		// is smaller.
		if e.alt = e.zenc.EncodeAll(shifted, e.alt[:0]); len(e.alt) < cost {
			e.comp, e.alt, cost, kept = e.alt, e.comp, len(e.alt), shifted
		}
	}
	if e.zfast != nil {
		// Options.Fastest's frame of either layout, the smaller, where it
		// costs at most 1 byte in fastGain more.
		limit := cost + cost/fastGain
		for _, p := range [2][]byte{raw, shifted} {
			if p == nil {
				continue
			}
			if e.alt = e.zfast.EncodeAll(p, e.alt[:0]); len(e.alt) <= limit {
				e.comp, e.alt, limit, kept = e.alt, e.comp, len(e.alt), p
			}
		}
	}
	raw = kept
	var h [chunkHeadSize]byte
	binary.LittleEndian.PutUint32(h[0:], uint32(r))
	binary.LittleEndian.PutUint32(h[4:], uint32(len(e.chunks)))
	binary.LittleEndian.PutUint32(h[8:], uint32(events))
	binary.LittleEndian.PutUint32(h[12:], uint32(len(raw)))
	binary.LittleEndian.PutUint32(h[16:], uint32(len(e.comp)))
	binary.LittleEndian.PutUint32(h[20:], checksum(raw))
	binary.LittleEndian.PutUint32(h[24:], chunkCRC(h[:24], e.comp))
	if err := e.write(h[:]); err != nil {
		return err
	}
	if err := e.write(e.comp); err != nil {
		return err
	}
	e.chunks = append(e.chunks, chunkRef{size: int64(chunkHeadSize + len(e.comp)), events: events})
	if e.zdict != nil {
		return nil
	}
	dict := append([]byte(nil), raw[:min(len(raw), maxDict)]...)
	var err error
	e.zdict, err = e.dictEncoder(dict)
	return err
}

// chunkCRC is the CRC-32C of a chunk header's first 24 bytes followed by
// its compressed payload.
func chunkCRC(head, payload []byte) uint32 {
	return crc32.Update(checksum(head), castagnoli, payload)
}

func (e *encoder) trailer() error {
	var t [trailerSize]byte
	binary.LittleEndian.PutUint64(t[0:], uint64(e.off))
	binary.LittleEndian.PutUint64(t[8:], uint64(len(e.index)))
	binary.LittleEndian.PutUint32(t[16:], checksum(e.index))
	binary.LittleEndian.PutUint32(t[20:], checksum(t[:20]))
	copy(t[24:], trailerMagic)
	if err := e.write(e.index); err != nil {
		return err
	}
	return e.write(t[:])
}
