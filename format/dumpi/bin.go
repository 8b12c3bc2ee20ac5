package dumpi

import (
	"encoding/binary"
	"fmt"
	"io"
	"strings"

	"kairos/internal/fileio"
)

// Magic numbers of a .bin file (big-endian u64 at its start and in its
// index; u64 before the footer).
const (
	headMagic = 0xFFAADD44554D5049
	footMagic = 0xF007FEE7
	indexLen  = 64
)

// binInfo is what a .bin file says about itself outside its body: the
// index, header, footer and datatype-size table.
type binInfo struct {
	path    string
	size    int64
	version [3]byte

	// Section offsets from the index (0 = absent).
	header, body, footer, keyval, sizelbl, addrlbl, perflbl int64
	// bodyEnd is where the call records must stop at the latest.
	bodyEnd int64

	startTime  uint64 // Unix seconds, from the header
	host, user string
	meshCoords []int32
	meshSize   []int32

	hasFooter bool
	calls     [numCounted]int32 // per label, from the footer
	ignored   [numCounted]int32

	sizes     []int32 // datatype id -> bytes
	perfCount int     // PAPI counters per record, from the label table

	cpuOffset, wallOffset int32 // seconds added to every record's times
}

// FormatError is a problem in a DUMPI file, located by byte offset.
type FormatError struct {
	Path   string
	Offset int64
	Msg    string
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("%s: byte %d: %s", e.Path, e.Offset, e.Msg)
}

func formatErr(path string, off int64, format string, args ...any) error {
	return &FormatError{Path: path, Offset: off, Msg: fmt.Sprintf(format, args...)}
}

// atLeastVersion reports whether v is version a.b.c or later.
func atLeastVersion(v [3]byte, a, b, c byte) bool {
	if v[0] != a {
		return v[0] > a
	}
	if v[1] != b {
		return v[1] > b
	}
	return v[2] >= c
}

// sectionReader reads big-endian fields at increasing offsets of a file,
// turning short reads into located errors. Fields are served from a
// window of the file read at once (a system call a field made 21 reads
// of each file of a 4,096-rank trace, 8 now), blocks beyond it in one
// read each.
type sectionReader struct {
	f      io.ReaderAt
	path   string
	off    int64
	end    int64
	err    error
	buf    [8]byte
	win    []byte // the file's bytes from winOff
	winOff int64
	blk    []byte // block's
}

// windowSize is how much of the file a field's read brings in (a
// variable for the tests: 1 reads field by field).
var windowSize = 4 << 10

// fetch returns the next n bytes, valid until the next read, from the
// window (read again from the offset where it does not hold them), or nil
// after an error.
func (s *sectionReader) fetch(n int, what string) []byte {
	if s.err == nil && s.off+int64(n) > s.end {
		s.err = formatErr(s.path, s.off, "truncated: %s needs %d bytes, the file ends at %d", what, n, s.end)
	}
	if s.err != nil {
		return nil
	}
	if s.off < s.winOff || s.off+int64(n) > s.winOff+int64(len(s.win)) {
		m := int(min(int64(max(n, windowSize)), s.end-s.off))
		if cap(s.win) < m {
			s.win = make([]byte, m)
		}
		s.win = s.win[:m]
		// The window may end at the file's: a reader may say io.EOF there.
		if k, err := s.f.ReadAt(s.win, s.off); err != nil && !(err == io.EOF && k == m) {
			s.win = s.win[:0]
			s.err = formatErr(s.path, s.off, "reading %s: %v", what, err)
			return nil
		}
		s.winOff = s.off
	}
	b := s.win[s.off-s.winOff:][:n]
	s.off += int64(n)
	return b
}

// read returns the next n bytes (at most 8), zeros after an error.
func (s *sectionReader) read(n int, what string) []byte {
	if b := s.fetch(n, what); b != nil {
		return b
	}
	clear(s.buf[:])
	return s.buf[:n]
}

// block reads the next n bytes, from the window where it holds them, else
// in one read into a buffer reused by the next block; n must be bounded
// by the caller (the file's size, a fixed table).
func (s *sectionReader) block(n int, what string) []byte {
	if s.err == nil && s.off+int64(n) > s.end {
		s.err = formatErr(s.path, s.off, "truncated: %d bytes of %s, the file ends at %d", n, what, s.end)
	}
	if s.err != nil {
		return nil
	}
	if s.off >= s.winOff && s.off+int64(n) <= s.winOff+int64(len(s.win)) {
		return s.fetch(n, what)
	}
	if cap(s.blk) < n {
		s.blk = make([]byte, n)
	}
	b := s.blk[:n]
	if _, err := s.f.ReadAt(b, s.off); err != nil {
		s.err = formatErr(s.path, s.off, "reading %s: %v", what, err)
		return nil
	}
	s.off += int64(n)
	return b
}

// i32Block reads len(dst) big-endian int32 into dst in one read; dst is
// left zero on an error.
func (s *sectionReader) i32Block(dst []int32, what string) {
	b := s.block(4*len(dst), what)
	if b == nil {
		return
	}
	for i := range dst {
		dst[i] = int32(binary.BigEndian.Uint32(b[4*i:]))
	}
}

func (s *sectionReader) u8(what string) byte    { return s.read(1, what)[0] }
func (s *sectionReader) u16(what string) uint16 { return binary.BigEndian.Uint16(s.read(2, what)) }
func (s *sectionReader) i32(what string) int32 {
	return int32(binary.BigEndian.Uint32(s.read(4, what)))
}
func (s *sectionReader) u64(what string) uint64 { return binary.BigEndian.Uint64(s.read(8, what)) }

// count reads an i32 element count of elements of size bytes, rejecting
// one the rest of the file cannot hold.
func (s *sectionReader) count(size int, what string) int {
	at := s.off
	n := s.i32(what)
	if s.err == nil && (n < 0 || int64(n)*int64(size) > s.end-s.off) {
		s.err = formatErr(s.path, at, "%s count %d does not fit in the file", what, n)
	}
	if s.err != nil {
		return 0
	}
	return int(n)
}

func (s *sectionReader) str16(what string) string {
	n := int(s.u16(what + " length"))
	if s.err != nil {
		return ""
	}
	if s.off+int64(n) > s.end {
		s.err = formatErr(s.path, s.off, "truncated: %s of %d bytes", what, n)
		return ""
	}
	return string(s.fetch(n, what))
}

func (s *sectionReader) i32s(what string) []int32 {
	n := s.count(4, what)
	if s.err != nil || n == 0 {
		return nil
	}
	a := make([]int32, n)
	s.i32Block(a, what)
	return a
}

// readBinInfo reads the index, header, footer, datatype sizes and time
// offsets of the .bin file f of size bytes.
func readBinInfo(f io.ReaderAt, path string, size int64) (*binInfo, error) {
	b := &binInfo{path: path, size: size}
	s := &sectionReader{f: f, path: path, end: size}
	if size < 8+indexLen {
		return nil, formatErr(path, 0, "file of %d bytes is too short for a DUMPI trace (magic and index take %d)", size, 8+indexLen)
	}
	if m := s.u64("magic"); s.err == nil && m != headMagic {
		return nil, formatErr(path, 0, "not a DUMPI file: magic %#016x, want %#016x", m, uint64(headMagic))
	}
	if err := b.readIndex(s); err != nil {
		return nil, err
	}
	for _, step := range []func(*sectionReader) error{b.readHeader, b.readFooter, b.readSizes, b.readPerfLabels, b.readTimeOffsets} {
		if err := step(s); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// readIndex reads the last 64 bytes: the magic, then as many of sizelbl,
// addrlbl and perflbl as the writer's version had, then header, body,
// footer and keyval offsets.
func (b *binInfo) readIndex(s *sectionReader) error {
	s.off = b.size - indexLen
	var w [8]uint64
	raw := s.block(8*len(w), "index")
	if s.err != nil {
		return s.err
	}
	for i := range w {
		w[i] = binary.BigEndian.Uint64(raw[8*i:])
	}
	first := -1
	for i := 0; i < 4; i++ {
		if w[i] == headMagic {
			first = i
			break
		}
	}
	if first < 0 {
		return formatErr(b.path, b.size-indexLen, "index has no magic number (file truncated?)")
	}
	opt := []*int64{&b.sizelbl, &b.addrlbl, &b.perflbl}
	for i := first + 1; i < 4; i++ {
		*opt[i-1] = int64(w[i])
	}
	b.header, b.body, b.footer, b.keyval = int64(w[4]), int64(w[5]), int64(w[6]), int64(w[7])
	limit := b.size - indexLen
	for _, o := range []struct {
		name string
		v    int64
	}{{"header", b.header}, {"body", b.body}, {"footer", b.footer}, {"keyval", b.keyval},
		{"datatype sizes", b.sizelbl}, {"address labels", b.addrlbl}, {"perf labels", b.perflbl}} {
		if o.v < 0 || o.v > limit || (o.v > 0 && o.v < 8) {
			return formatErr(b.path, b.size-indexLen, "index: %s offset %d is outside the file (8..%d)", o.name, o.v, limit)
		}
	}
	if b.body < 8 {
		return formatErr(b.path, b.size-indexLen, "index has no body offset")
	}
	b.bodyEnd = limit
	for _, o := range []int64{b.header, b.footer, b.keyval, b.sizelbl, b.addrlbl, b.perflbl} {
		if o > b.body && o < b.bodyEnd {
			b.bodyEnd = o
		}
	}
	return nil
}

func (b *binInfo) readHeader(s *sectionReader) error {
	if b.header == 0 {
		return nil
	}
	s.off = b.header
	for i := range b.version {
		b.version[i] = s.u8("header version")
	}
	b.startTime = s.u64("header start time")
	b.host = s.str16("header hostname")
	b.user = s.str16("header username")
	b.meshCoords = s.i32s("header mesh coordinates")
	if len(b.meshCoords) > 0 && atLeastVersion(b.version, 0, 5, 0) {
		b.meshSize = s.i32s("header mesh size")
	}
	return s.err
}

func (b *binInfo) readFooter(s *sectionReader) error {
	if b.footer == 0 {
		return nil
	}
	s.off = b.footer
	if m := s.u64("footer magic"); s.err == nil && m != footMagic {
		return formatErr(b.path, b.footer, "footer magic %#x, want %#x", m, footMagic)
	}
	s.i32Block(b.calls[:], "footer call counts")
	s.i32Block(b.ignored[:], "footer ignored counts")
	b.hasFooter = s.err == nil
	return s.err
}

func (b *binInfo) readSizes(s *sectionReader) error {
	if b.sizelbl == 0 {
		return nil
	}
	s.off = b.sizelbl
	b.sizes = s.i32s("datatype size table")
	return s.err
}

// readPerfLabels reads the number of PAPI counters: DUMPI's reader takes
// the per-record counter count from this table, not from the record.
func (b *binInfo) readPerfLabels(s *sectionReader) error {
	if b.perflbl == 0 {
		return nil
	}
	s.off = b.perflbl
	n := s.count(2, "perf counter labels")
	for i := 0; i < n && s.err == nil; i++ {
		s.str16("perf counter label")
	}
	b.perfCount = n
	return s.err
}

func (b *binInfo) readTimeOffsets(s *sectionReader) error {
	s.off = b.body
	b.cpuOffset = s.i32("body CPU time offset")
	b.wallOffset = s.i32("body wall time offset")
	return s.err
}

// binFile is an open .bin file: random access, as the index demands.
type binFile interface {
	io.ReaderAt
	io.Closer
}

// opener opens a .bin file and returns its size. Tests and the fuzz target
// use one that serves bytes from memory.
type opener func(path string) (binFile, int64, error)

// openOS opens a regular file.
func openOS(path string) (binFile, int64, error) {
	if strings.HasSuffix(path, ".gz") || strings.HasSuffix(path, ".zst") {
		return nil, 0, fmt.Errorf("%s: compressed DUMPI files are not supported: the reader needs random access (decompress it first)", path)
	}
	f, err := fileio.OpenHandle(path)
	if err != nil {
		return nil, 0, err
	}
	return f, f.Size(), nil
}

// openBin opens and describes one .bin file.
func openBin(open opener, path string) (binFile, *binInfo, error) {
	f, size, err := open(path)
	if err != nil {
		return nil, nil, err
	}
	b, err := readBinInfo(f, path, size)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, b, nil
}

// typeSize returns the size of datatype id from the file's table, 0 if
// the table does not list it. Files older than DUMPI 0.6.6 have no table:
// their built-in types take SimGrid's (x86-64) sizes.
func (b *binInfo) typeSize(id int64) int64 {
	if id >= 0 && id < int64(len(b.sizes)) {
		return int64(b.sizes[id])
	}
	if b.sizelbl == 0 && id >= 0 && id < int64(len(dumpiToSimGrid)) && dumpiToSimGrid[id] >= 0 {
		return dumpiToSimGrid[id].Size(0)
	}
	return 0
}
