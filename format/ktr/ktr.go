// Package ktr reads and writes Kairos' own binary trace format (".ktr").
//
// A ktr file carries every field of the trace model (call-sites, regions
// and timestamps included, which SimGrid's time-independent text cannot)
// in less space than gzipped text, and loads several times faster. Each
// rank's events are cut into chunks; a chunk keeps the events' structure in
// the compact event codec (trace.AppendEvent, restarted in every chunk so
// that each chunk decodes on its own; where the events repeat, each
// distinct one once and an index an event) and their varying values (compute
// amounts, times, request ids) in delta-coded, byte-transposed columns,
// compresses the lot with zstd and protects it with CRC-32C checksums. A
// footer index lets a reader seek straight to any rank and stream it one
// chunk at a time. docs/ktr-format.md specifies the layout byte by byte.
package ktr

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"path/filepath"
	"strings"

	"kairos/format"
	"kairos/trace"
)

// Version is the format version this package writes. It reads it,
// version 1, whose chunks hold their structure as events (no form byte),
// version 2, whose chunks in the templates form hold at most 256
// distinct events (version 3: maxTemplates), and version 3, whose time
// column has one layout (version 4: two, the payload's time unit says
// which).
const Version = 4

// Layout constants; docs/ktr-format.md is their specification.
const (
	magic          = "\x89KTR\r\n\x1a\n" // first 8 bytes of every ktr file
	trailerMagic   = "KTRINDEX"          // last 8 bytes of every ktr file
	headerSize     = 16                  // magic, version, flags, CRC
	metaHeaderSize = 8                   // meta body length, CRC
	chunkHeadSize  = 28                  // rank, seq, events, lengths, CRCs
	trailerSize    = 32                  // index offset and length, CRCs, magic

	// MaxChunkRaw bounds the uncompressed payload of one chunk, so that a
	// reader never allocates more than this for a chunk whatever the file
	// claims. A single event larger than this cannot be written.
	MaxChunkRaw = 64 << 20
	// maxDict bounds the dictionary: the first bytes of the raw payload
	// of a file's first chunk, with which every other chunk is compressed,
	// so that ranks too short to compress well on their own borrow the
	// redundancy of the first.
	maxDict = 64 << 10
	// dictGain is the share of a chunk's raw payload (1 in dictGain)
	// its frame with the dictionary must save to be kept (writeChunk).
	dictGain = 256
	// fastGain is the share of what the frame kept otherwise costs (1 in
	// fastGain) by which a chunk's frame at the fastest level may be
	// larger and be kept (Options.Fastest, writeChunk).
	fastGain = 64
	// dictID is the zstd dictionary id of the chunks compressed with it.
	dictID = 1
	// DefaultChunkSize is the uncompressed payload size at which the
	// writer closes a chunk.
	DefaultChunkSize = 512 << 10
)

// Header flags. A reader rejects a file with a flag it does not know.
const (
	knownFlags = 0
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func checksum(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// ErrCorrupt matches (with errors.Is) every error about a malformed ktr
// file.
var ErrCorrupt = errors.New("corrupt ktr file")

// CorruptError reports where and how a ktr file is malformed.
type CorruptError struct {
	Path   string // the file
	Offset int64  // byte offset of the faulty structure in the file
	Rank   int    // the rank whose chunk is faulty, or -1
	Chunk  int    // the chunk's number within the rank, or -1
	What   string // what was found, and what was expected
	Err    error  // an underlying cause, or nil
}

func (e *CorruptError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: byte %d: ", e.Path, e.Offset)
	if e.Rank >= 0 {
		fmt.Fprintf(&b, "rank %d chunk %d: ", e.Rank, e.Chunk)
	}
	b.WriteString(e.What)
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the underlying cause.
func (e *CorruptError) Unwrap() error { return e.Err }

// Is makes every CorruptError match ErrCorrupt.
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }

// Detect reports whether head starts with the ktr magic.
func Detect(path string, head []byte, isDir bool) bool {
	return !isDir && bytes.HasPrefix(head, []byte(magic))
}

func init() {
	format.Register(format.Format{
		Name:        "ktr",
		Description: "Kairos binary trace: every model field, chunked per rank, zstd-compressed, checksummed",
		Detect:      Detect,
		Magics:      [][]byte{[]byte(magic)},
		Starts:      fmt.Sprintf("the magic %+q", magic),
		Open:        open,
		Write:       Write,
		Extensions:  []string{".ktr"},
	})
}

// open is Open for the format registry, which wants an interface (and a
// nil one on error).
func open(path string) (trace.Source, error) {
	s, err := Open(path)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// compressedExt reports whether path names a .gz or .zst file, which a ktr
// file never is: its chunks are compressed already.
func compressedExt(path string) bool {
	ext := filepath.Ext(path)
	return ext == ".gz" || ext == ".zst"
}
