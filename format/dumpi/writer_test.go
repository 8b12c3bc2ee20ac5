package dumpi

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"kairos/trace"
)

// binWriter writes a DUMPI .bin file for tests: the layout sst-dumpi's
// writer produces (magic, body, END_OF_STREAM, header, footer, datatype
// sizes, 64-byte index), with wall times on every record.
type binWriter struct {
	b       []byte
	version [3]byte
	calls   [numCounted]int32
	ignored [numCounted]int32 // the calls the footer counts as left out
	thread  uint16            // the thread the next records are of
	sizes   []int32
	wallOff int32
	clock   int64 // ns since wallOff, advanced by each record
	noWall  bool
	cpu     bool // records have CPU times (before their wall times, if any)
}

// newBinWriter returns a writer of a DUMPI 0.6.9+ file with dumpi's
// built-in datatype sizes.
func newBinWriter() *binWriter {
	w := &binWriter{version: [3]byte{8, 1, 0}, wallOff: 1000,
		sizes: []int32{0, 0, 1, 1, 1, 1, 4, 2, 2, 4, 4, 8, 8, 4, 8, 16, 8, 8, 8, 1, 0, 0, 8, 12, 12, 6, 8, 20}}
	w.u64(headMagic)
	w.u32(0) // CPU time offset
	w.u32(uint32(w.wallOff))
	return w
}

func (w *binWriter) u8(v uint8)   { w.b = append(w.b, v) }
func (w *binWriter) u16(v uint16) { w.b = binary.BigEndian.AppendUint16(w.b, v) }
func (w *binWriter) u32(v uint32) { w.b = binary.BigEndian.AppendUint32(w.b, v) }
func (w *binWriter) u64(v uint64) { w.b = binary.BigEndian.AppendUint64(w.b, v) }

func (w *binWriter) str32(s string) {
	w.u32(uint32(len(s)))
	w.b = append(w.b, s...)
}

func (w *binWriter) str16(s string) {
	w.u16(uint16(len(s)))
	w.b = append(w.b, s...)
}

// call appends a record of label with its fields in layout order: int
// for integers, []int32 for arrays, string for str, []string for str* and
// str[], []status for statuses (which turns on the status mask bits). A
// root-only field absent at this rank is passed as nil.
func (w *binWriter) call(label int, args ...any) {
	p := &programs()[label]
	if len(args) != len(p.ops) {
		panic(fmt.Sprintf("%s: %d args for %d fields", p.name, len(args), len(p.ops)))
	}
	if label < labelAllFunctions {
		w.calls[label]++
		w.calls[labelAllFunctions]++
	}
	w.u16(uint16(label))
	mask := uint8(maskThread)
	if !w.noWall {
		mask |= maskWall
	}
	if w.cpu {
		mask |= maskCPU
	}
	for i, o := range p.ops {
		if o.code == opStatus && args[i] != nil {
			mask |= maskStatus
		}
	}
	w.u8(mask)
	w.u16(w.thread)
	if w.cpu {
		w.times(w.clock / 2) // half as fast as the wall clock: the process shared its core
	}
	if !w.noWall {
		w.times(w.clock)
	}
	w.clock += 2000
	for i, o := range p.ops {
		w.field(o, args[i], mask)
	}
}

// times appends a record's enter and exit, at ns and 1 µs later.
func (w *binWriter) times(ns int64) {
	for k := range int64(2) {
		w.u16(uint16((ns + k*1000) / 1e9))
		w.u32(uint32((ns + k*1000) % 1e9))
	}
}

func (w *binWriter) field(o op, a any, mask uint8) {
	if a == nil && o.code != opStatus {
		return
	}
	switch o.code {
	case opI32:
		w.u32(uint32(a.(int)))
	case opArgc:
		w.u32(uint32(a.(int)))
		if !atLeastVersion(w.version, 0, 6, 2) {
			w.u32(uint32(a.(int))) // the old writers' duplicate
		}
	case opU16:
		w.u16(uint16(a.(int)))
	case opU8:
		w.u8(uint8(a.(int)))
	case opI64:
		w.u64(uint64(a.(int)))
	case opI32s, opU16s, opU8s, opI32sOld:
		v := a.([]int32)
		if o.code == opI32sOld && !atLeastVersion(w.version, o.since[0], o.since[1], o.since[2]) {
			w.u32(uint32(v[0]))
			return
		}
		w.u32(uint32(len(v)))
		for _, x := range v {
			switch o.code {
			case opU16s:
				w.u16(uint16(x))
			case opU8s:
				w.u8(uint8(x))
			default:
				w.u32(uint32(x))
			}
		}
	case opI32ss:
		v := a.([]int32) // rows of three
		w.u32(uint32(len(v) / 3))
		for k := 0; k+3 <= len(v); k += 3 {
			w.u32(3)
			for _, x := range v[k : k+3] {
				w.u32(uint32(x))
			}
		}
	case opStr:
		w.str32(a.(string))
	case opStrss:
		v := a.([][]string)
		w.u32(uint32(len(v)))
		for _, ss := range v {
			w.u32(uint32(len(ss)))
			for _, s := range ss {
				w.str32(s)
			}
		}
	case opStrs, opArgv:
		v := a.([]string)
		if o.code == opStrs {
			w.u32(uint32(len(v)))
		}
		for _, s := range v {
			w.str32(s)
		}
	case opStatus:
		if mask&maskStatus == 0 {
			return
		}
		v := a.([]status)
		w.u32(uint32(len(v)))
		for _, s := range v {
			w.u32(uint32(s.bytes))
			w.u32(uint32(s.source))
			w.u8(s.cancelled)
			w.u8(s.err)
			if atLeastVersion(w.version, 0, 6, 3) {
				w.u32(uint32(s.tag))
			}
		}
	default:
		panic(fmt.Sprintf("op %d", o.code))
	}
}

// finish ends the body and appends header, footer, sizes and index.
func (w *binWriter) finish() []byte {
	w.u16(labelEndOfStream)
	header := len(w.b)
	w.b = append(w.b, w.version[:]...)
	w.u64(1700000000)
	w.str16("testhost")
	w.str16("tester")
	w.u32(0) // mesh dimensions
	footer := len(w.b)
	w.u64(footMagic)
	for _, n := range w.calls {
		w.u32(uint32(n))
	}
	for l := range w.calls {
		w.u32(uint32(w.ignored[l]))
	}
	if !atLeastVersion(w.version, 0, 6, 6) {
		// No datatype sizes before 0.6.6: a 7-word index.
		for _, v := range []uint64{headMagic, 0, 0, uint64(header), 8, uint64(footer), 0} {
			w.u64(v)
		}
		return w.b
	}
	sizes := len(w.b)
	w.u32(uint32(len(w.sizes)))
	for _, s := range w.sizes {
		w.u32(uint32(s))
	}
	for _, v := range []uint64{headMagic, uint64(sizes), 0, 0, uint64(header), 8, uint64(footer), 0} {
		w.u64(v)
	}
	return w.b
}

// writeTrace writes ranks' files and a .meta into dir and returns the
// .meta path.
func writeTrace(t testing.TB, dir string, ranks []*binWriter) string {
	t.Helper()
	for r, w := range ranks {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("synth-%04d.bin", r)), w.finish(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	meta := filepath.Join(dir, "synth.meta")
	text := fmt.Sprintf("hostname=testhost\nnumprocs=%d\nusername=tester\nstartime=1700000000\nfileprefix=synth\nversion=8\nsubversion=1\nsubsubversion=0\n", len(ranks))
	if err := os.WriteFile(meta, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return meta
}

// writers returns n fresh writers.
func writers(n int) []*binWriter {
	ws := make([]*binWriter, n)
	for i := range ws {
		ws[i] = newBinWriter()
	}
	return ws
}

// openRank0 writes ranks' files and returns a reader of rank 0, closed
// when the test ends.
func openRank0(t *testing.T, ranks []*binWriter) trace.Reader {
	t.Helper()
	src, err := Open(writeTrace(t, t.TempDir(), ranks))
	if err != nil {
		t.Fatal(err)
	}
	rd, err := src.OpenRank(0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rd.Close() })
	return rd
}
