package dumpi

import (
	"encoding/binary"
	"io"

	"kairos/trace"
)

// Record mask bits (sst-dumpi settings.h).
const (
	maskStatus = 0x03
	maskCPU    = 0x04
	maskWall   = 0x08
	maskThread = 0x40
	maskPerf   = 0x80
)

// stamp is a DUMPI timestamp: seconds (time offset added) and nanoseconds.
type stamp struct {
	sec  int64
	nsec uint32
}

// since returns s - t0 in picoseconds. (Absolute stamps in picoseconds
// would overflow int64 for Unix times.)
func (s stamp) since(t0 stamp) trace.Time {
	return trace.Time((s.sec-t0.sec)*1e12 + (int64(s.nsec)-int64(t0.nsec))*1e3)
}

// before reports whether s is earlier than u.
func (s stamp) before(u stamp) bool {
	return s.sec < u.sec || s.sec == u.sec && s.nsec < u.nsec
}

// status is one stored MPI_Status.
type status struct {
	bytes, source, tag int32
	cancelled, err     uint8
}

// call is one decoded call record. Its slices are reused by the next
// record.
type call struct {
	label     int
	off       int64 // file offset of the record
	mask      uint8
	thread    uint16
	cpu, wall [2]stamp // enter, exit
	v         [maxFields]int64
	arr       [maxFields][]int32
	statuses  []status
}

// times returns the record's enter and exit: its wall times, else its
// CPU times (sst-dumpi's "timestamp cpu"), with cpu true; ok is false
// where it has neither.
func (c *call) times() (t [2]stamp, cpu, ok bool) {
	switch {
	case c.mask&maskWall != 0:
		return c.wall, false, true
	case c.mask&maskCPU != 0:
		return c.cpu, true, true
	}
	return t, false, false
}

// decoder reads the call records of one .bin body through a buffer.
type decoder struct {
	progs *[len(layouts)]program // programs(), looked up once
	src   io.Reader
	info  *binInfo
	buf   []byte
	r, w  int
	base  int64 // file offset of buf[0]
	end   int64 // file offset where the body ends
	c     call
	err   error
	done  bool
}

const bufSize = 64 << 10

func newDecoder(f io.ReaderAt, info *binInfo) *decoder {
	return newDecoderAt(f, info, info.body+8, bufSize)
}

// newDecoderAt returns a decoder of the records from file offset start,
// with a buffer of at most bufLen bytes.
func newDecoderAt(f io.ReaderAt, info *binInfo, start int64, bufLen int) *decoder {
	d := &decoder{progs: programs(), info: info, base: start, end: info.bodyEnd}
	if d.end < start {
		d.end = start
	}
	// A small body gets a small buffer; fill grows it if a record needs.
	d.buf = make([]byte, min(int64(bufLen), d.end-start+16))
	d.src = io.NewSectionReader(f, start, d.end-start)
	return d
}

// pos returns the file offset of the next unread byte.
func (d *decoder) pos() int64 { return d.base + int64(d.r) }

func (d *decoder) fail(off int64, format string, args ...any) {
	if d.err == nil {
		d.err = formatErr(d.info.path, off, format, args...)
	}
}

// fill makes n bytes available at buf[r:], or fails: the body ends first.
func (d *decoder) fill(n int, what string) bool {
	if d.w-d.r >= n {
		return true
	}
	if d.err != nil {
		return false
	}
	if d.pos()+int64(n) > d.end {
		d.fail(d.pos(), "truncated call record (started at byte %d): %s needs %d bytes, the call records end at byte %d", d.c.off, what, n, d.end)
		return false
	}
	copy(d.buf, d.buf[d.r:d.w])
	d.base += int64(d.r)
	d.w -= d.r
	d.r = 0
	if n > len(d.buf) {
		d.buf = append(d.buf, make([]byte, n-len(d.buf))...)
	}
	m, err := io.ReadAtLeast(d.src, d.buf[d.w:], n-d.w)
	d.w += m
	if err != nil && d.w < n {
		d.fail(d.pos(), "reading %s: %v", what, err)
		return false
	}
	return true
}

func (d *decoder) u8(what string) uint8 {
	if !d.fill(1, what) {
		return 0
	}
	d.r++
	return d.buf[d.r-1]
}

func (d *decoder) u16(what string) uint16 {
	if !d.fill(2, what) {
		return 0
	}
	d.r += 2
	return binary.BigEndian.Uint16(d.buf[d.r-2:])
}

func (d *decoder) u32(what string) uint32 {
	if !d.fill(4, what) {
		return 0
	}
	d.r += 4
	return binary.BigEndian.Uint32(d.buf[d.r-4:])
}

func (d *decoder) u64(what string) uint64 {
	if !d.fill(8, what) {
		return 0
	}
	d.r += 8
	return binary.BigEndian.Uint64(d.buf[d.r-8:])
}

// count reads an element count and checks that count elements of size
// bytes fit in what is left of the body, so that no input makes the
// reader allocate more than the file holds.
func (d *decoder) count(size int, what string) int {
	at := d.pos()
	n := int32(d.u32(what))
	if d.err != nil {
		return 0
	}
	if n < 0 || int64(n)*int64(size) > d.end-d.pos() {
		d.fail(at, "%s count %d does not fit in the rest of the call records (%d bytes)", what, n, d.end-d.pos())
		return 0
	}
	return int(n)
}

// skip advances n bytes.
func (d *decoder) skip(n int, what string) {
	for n > 0 && d.err == nil {
		k := min(n, len(d.buf))
		if !d.fill(k, what) {
			return
		}
		d.r += k
		n -= k
	}
}

// ints reads an i32[], u16[] or u8[] into dst.
func (d *decoder) ints(dst []int32, size int, what string) []int32 {
	n := d.count(size, what)
	if !d.fill(n*size, what) {
		return dst[:0]
	}
	dst = dst[:0]
	b := d.buf[d.r : d.r+n*size]
	switch size {
	case 4:
		for i := 0; i < n; i++ {
			dst = append(dst, int32(binary.BigEndian.Uint32(b[4*i:])))
		}
	case 2:
		for i := 0; i < n; i++ {
			dst = append(dst, int32(binary.BigEndian.Uint16(b[2*i:])))
		}
	default:
		for i := 0; i < n; i++ {
			dst = append(dst, int32(b[i]))
		}
	}
	d.r += n * size
	return dst
}

func (d *decoder) skipStr(what string) {
	n := d.count(1, what)
	d.skip(n, what)
}

// statuses reads the statuses of a record whose mask stores them.
func (d *decoder) readStatuses(dst []status) []status {
	dst = dst[:0]
	if d.c.mask&maskStatus == 0 {
		return dst
	}
	size := 10
	withTag := atLeastVersion(d.info.version, 0, 6, 3)
	if withTag {
		size = 14
	}
	n := d.count(size, "status")
	if !d.fill(n*size, "status") {
		return dst
	}
	b := d.buf[d.r : d.r+n*size]
	for i := 0; i < n; i++ {
		s := b[i*size:]
		st := status{
			bytes:     int32(binary.BigEndian.Uint32(s)),
			source:    int32(binary.BigEndian.Uint32(s[4:])),
			cancelled: s[8],
			err:       s[9],
			tag:       -1,
		}
		if withTag {
			st.tag = int32(binary.BigEndian.Uint32(s[10:]))
		}
		dst = append(dst, st)
	}
	d.r += n * size
	return dst
}

// rows reads an i32[][] and returns its rows concatenated (MPI's
// ranges are rows of three).
func (d *decoder) rows(dst []int32) []int32 {
	dst = dst[:0]
	n := d.count(4, "rows")
	var row []int32
	for j := 0; j < n && d.err == nil; j++ {
		row = d.ints(row, 4, "row")
		dst = append(dst, row...)
	}
	return dst
}

// next decodes the next call record into d.c. It returns false at the end
// of the body (label END_OF_STREAM or the end of the section) and on an
// error, which d.err then holds.
func (d *decoder) next() bool {
	if d.err != nil || d.done {
		return false
	}
	if d.pos() >= d.end {
		d.done = true
		return false
	}
	c := &d.c
	c.off = d.pos()
	c.label = 0
	if d.end-d.pos() == 2 || !d.fill(3, "label and mask") {
		// Only END_OF_STREAM fits in 2 bytes.
		label := d.u16("label")
		if d.err == nil && label != labelEndOfStream {
			d.fail(c.off, "truncated call record: label %d without a mask at the end of the call records", label)
		}
		d.done = true
		return false
	}
	label := int(binary.BigEndian.Uint16(d.buf[d.r:]))
	if label == labelEndOfStream {
		d.r += 2
		d.done = true
		return false
	}
	if label >= len(layouts) || !d.progs[label].known {
		d.fail(c.off, "unknown DUMPI function label %d (known: 0..289, 291, 292, end of stream 293)", label)
		return false
	}
	c.label = label
	d.recordHead(c)
	d.args(c, &d.progs[label])
	return d.err == nil
}

// recordHead reads the mask, thread, times and PAPI counters.
func (d *decoder) recordHead(c *call) {
	c.mask = d.buf[d.r+2]
	d.r += 3
	m := c.mask
	n := 0
	if m&maskThread != 0 {
		n += 2
	}
	if m&maskCPU != 0 {
		n += 12
	}
	if m&maskWall != 0 {
		n += 12
	}
	if !d.fill(n, "record header") {
		return
	}
	c.thread = 0
	if m&maskThread != 0 {
		c.thread = binary.BigEndian.Uint16(d.buf[d.r:])
		d.r += 2
	}
	c.cpu = [2]stamp{}
	if m&maskCPU != 0 {
		c.cpu = d.times(d.info.cpuOffset)
	}
	c.wall = [2]stamp{}
	if m&maskWall != 0 {
		c.wall = d.times(d.info.wallOffset)
	}
	if m&maskPerf != 0 {
		d.u8("perf counter count")
		d.skip(16*d.info.perfCount, "perf counters")
	}
}

// times decodes enter and exit stamps from 12 bytes already buffered.
func (d *decoder) times(offset int32) [2]stamp {
	b := d.buf[d.r:]
	d.r += 12
	return [2]stamp{
		{int64(binary.BigEndian.Uint16(b)) + int64(offset), binary.BigEndian.Uint32(b[2:])},
		{int64(binary.BigEndian.Uint16(b[6:])) + int64(offset), binary.BigEndian.Uint32(b[8:])},
	}
}

// args decodes the fields of program p into c.
func (d *decoder) args(c *call, p *program) {
	i := 0
	if p.fixed > 0 && d.fill(p.fixed, "arguments") {
		i = d.fixedArgs(c, p)
	}
	for ; i < len(p.ops); i++ {
		o := &p.ops[i]
		if o.rootOnly && c.v[0] != c.v[p.root] {
			c.v[i] = 0
			c.arr[i] = c.arr[i][:0]
			continue
		}
		switch o.code {
		case opI32:
			c.v[i] = int64(int32(d.u32("int")))
		case opU16:
			c.v[i] = int64(d.u16("handle"))
		case opU8:
			c.v[i] = int64(d.u8("enum"))
		case opI64:
			c.v[i] = int64(d.u64("int64"))
		case opI32s:
			c.arr[i] = d.ints(c.arr[i], 4, "int array")
			c.v[i] = int64(len(c.arr[i]))
		case opU16s:
			c.arr[i] = d.ints(c.arr[i], 2, "handle array")
			c.v[i] = int64(len(c.arr[i]))
		case opU8s:
			c.arr[i] = d.ints(c.arr[i], 1, "enum array")
			c.v[i] = int64(len(c.arr[i]))
		case opI32sOld:
			if atLeastVersion(d.info.version, o.since[0], o.since[1], o.since[2]) {
				c.arr[i] = d.ints(c.arr[i], 4, "int array")
			} else {
				c.arr[i] = append(c.arr[i][:0], int32(d.u32("int")))
			}
		case opI32ss:
			c.arr[i] = d.rows(c.arr[i])
		case opStr:
			d.skipStr("string")
		case opStrs:
			n := d.count(4, "strings")
			for j := 0; j < n && d.err == nil; j++ {
				d.skipStr("string")
			}
		case opStrss:
			n := d.count(4, "string arrays")
			for j := 0; j < n && d.err == nil; j++ {
				m := d.count(4, "strings")
				for k := 0; k < m && d.err == nil; k++ {
					d.skipStr("string")
				}
			}
		case opArgc:
			c.v[i] = int64(int32(d.u32("argc")))
			if !atLeastVersion(d.info.version, 0, 6, 2) {
				d.u32("argc copy")
			}
		case opArgv:
			n := c.v[i-1]
			if n < 0 || n > (d.end-d.pos())/4 {
				d.fail(d.pos(), "%s: argc %d does not fit in the rest of the call records", p.name, n)
				return
			}
			for j := int64(0); j < n && d.err == nil; j++ {
				d.skipStr("argv")
			}
		case opStatus:
			c.statuses = d.readStatuses(c.statuses)
		}
		if d.err != nil {
			return
		}
	}
}

// fixedArgs decodes the leading fixed-size fields of p, whose p.fixed
// bytes are buffered, and returns the index of the next field.
func (d *decoder) fixedArgs(c *call, p *program) int {
	b := d.buf[d.r : d.r+p.fixed]
	k := 0
	for i := 0; i < p.nfixed; i++ {
		switch p.ops[i].code {
		case opI32:
			c.v[i] = int64(int32(binary.BigEndian.Uint32(b[k:])))
			k += 4
		case opU16:
			c.v[i] = int64(binary.BigEndian.Uint16(b[k:]))
			k += 2
		case opU8:
			c.v[i] = int64(b[k])
			k++
		case opI64:
			c.v[i] = int64(binary.BigEndian.Uint64(b[k:]))
			k += 8
		}
	}
	d.r += p.fixed
	return p.nfixed
}
