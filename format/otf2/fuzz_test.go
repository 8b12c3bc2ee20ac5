package otf2

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"kairos/internal/testenv"
	"kairos/trace"
)

// buf builds OTF2 event buffers for tests.
type buf struct {
	b   []byte
	big bool
}

func newBuf() *buf {
	b := &buf{b: []byte{chunkHeader, littleEndian}}
	b.b = binary.LittleEndian.AppendUint64(b.b, 1)
	b.b = binary.LittleEndian.AppendUint64(b.b, 1)
	return b
}

func (b *buf) u64(dst []byte, v uint64) []byte {
	if b.big {
		return binary.BigEndian.AppendUint64(dst, v)
	}
	return binary.LittleEndian.AppendUint64(dst, v)
}

func (b *buf) ts(t uint64) *buf {
	b.b = b.u64(append(b.b, timestampRec), t)
	return b
}

// comp appends a compressed integer in the buffer's byte order.
func (b *buf) comp(dst []byte, v uint64) []byte {
	if !b.big || v == undefined64 || v == 0 {
		return comp(dst, v)
	}
	le := comp(nil, v)
	dst = append(dst, le[0])
	for i := len(le) - 1; i > 0; i-- {
		dst = append(dst, le[i])
	}
	return dst
}

func (b *buf) payload(vals ...uint64) []byte {
	var p []byte
	for _, v := range vals {
		p = b.comp(p, v)
	}
	return p
}

// comp appends a compressed integer.
func comp(dst []byte, v uint64) []byte {
	if v == undefined64 {
		return append(dst, 0xFF)
	}
	n := 0
	for x := v; x != 0; x >>= 8 {
		n++
	}
	dst = append(dst, byte(n))
	for i := 0; i < n; i++ {
		dst = append(dst, byte(v>>(8*i)))
	}
	return dst
}

func (b *buf) single(typ uint8, v uint64) *buf {
	b.b = b.comp(append(b.b, typ), v)
	return b
}

func (b *buf) rec(typ uint8, payload []byte) *buf {
	b.b = append(b.b, typ)
	if len(payload) < 0xFF {
		b.b = append(b.b, byte(len(payload)))
	} else {
		b.b = b.u64(append(b.b, 0xFF), uint64(len(payload)))
	}
	b.b = append(b.b, payload...)
	return b
}

func (b *buf) end() []byte { return append(b.b, endOfFile, endOfBuffer) }

func payload(vals ...uint64) []byte {
	var p []byte
	for _, v := range vals {
		p = comp(p, v)
	}
	return p
}

// memArchive is an archive with the given definitions and no files.
func memArchive(d *Defs) *Archive {
	d.finish()
	return &Archive{Path: "mem", Anchor: &Anchor{EventChunkSize: 1 << 20, DefChunkSize: 1 << 20}, Defs: d, locals: map[uint64]*localDefs{}, KeepAttrs: true}
}

func memLocation(a *Archive, data []byte, chunk uint64) *LocationReader {
	rd := &LocationReader{arch: a, maps: &[numMapTypes]*idMap{}, cf: memChunkFile("mem.evt", data, chunk)}
	rd.ev.maps = rd.maps
	return rd
}

// readAll reads every event of an in-memory event file, formatting each.
func readAll(data []byte, chunk uint64) (int, error) {
	n, _, err := readText(data, chunk, 0)
	return n, err
}

// readText reads every event of an in-memory event file through a window
// of its chunks (0: whole chunks), and returns their text.
func readText(data []byte, chunk uint64, window int64) (int, string, error) {
	a := memArchive(newDefs())
	rd := memLocation(a, data, chunk)
	rd.cf.window = window
	n := 0
	var out []byte
	for rd.Next() {
		n++
		out = a.AppendText(out, rd.Event())
		if n > len(data) {
			return n, "", errors.New("more events than bytes")
		}
	}
	return n, string(out), rd.Err()
}

// seedBuffers are small event buffers covering every framing case.
func seedBuffers() [][]byte {
	long := make([]byte, 300)
	return [][]byte{
		newBuf().ts(5).single(EvEnter, 1).single(EvLeave, 1).end(),
		newBuf().ts(5).single(EvEnter, undefined64).rec(EvMpiIsend, payload(1, 0, 7, 4096, 9)).end(),
		newBuf().ts(1).rec(attrListRec, append(payload(1, 0), typeUint64, 3, 1, 2, 3)).single(EvEnter, 0).end(),
		newBuf().ts(1).rec(EvProgramBegin, long).rec(EvMetric, append(payload(0), 1, typeDouble, 8, 0, 0, 0, 0, 0, 0, 0xF0, 0x3F)).end(),
		newBuf().ts(2).rec(EvMpiCollectiveEnd, append([]byte{11}, payload(0, undefined64, 8, 8)...)).end(),
		append(newBuf().ts(3).single(EvEnter, 2).b, endOfChunk, 0, 0),
		newBuf().ts(1).rec(99, []byte{1, 2, 3}).end(),
		newBuf().ts(4).rec(EvRmaPut, payload(0, 1, 1024, 77)).rec(evIoSeek, append(payload(0, 5), 2, 1, 9)).
			rec(EvCallingContextSample, payload(1, undefined64, 0)).rec(EvThreadTaskCreate, payload(2, 0, 5)).end(),
		// Issue 43: a message of more than 2^63 bytes.
		newBuf().ts(5).single(EvEnter, undefined64).rec(EvMpiIsend, payload(1, 0, 7, 1<<63+5, 9)).end(),
	}
}

// bothOrders builds the same events as a little- and a big-endian event
// file: chunk header, timestamps, long record lengths and compressed
// integers in each byte order.
func bothOrders(events func(b *buf) *buf) (le, be []byte) {
	le = events(newBuf()).end()
	b := events(&buf{big: true, b: []byte{chunkHeader, bigEndian, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1}}).end()
	return le, b
}

// TestByteOrder decodes the same events written in both byte orders.
func TestByteOrder(t *testing.T) {
	events := func(b *buf) *buf {
		return b.ts(1<<40+7).single(EvEnter, 300).rec(EvMpiIsend, b.payload(5, 1, 70000, 1<<33, 9)).
			rec(EvMpiCollectiveEnd, append([]byte{1}, b.payload(0, 2, 64, 0)...)).single(EvLeave, 300)
	}
	le, be := bothOrders(events)
	read := func(data []byte) []Event {
		a := memArchive(newDefs())
		rd := memLocation(a, data, 1<<20)
		var evs []Event
		for rd.Next() {
			e := *rd.Event()
			e.payload, e.maps, e.Attrs = rbuf{}, nil, nil
			evs = append(evs, e)
		}
		if rd.Err() != nil {
			t.Fatal(rd.Err())
		}
		return evs
	}
	l, b := read(le), read(be)
	if len(l) != 4 || !reflect.DeepEqual(l, b) {
		t.Fatalf("little endian %+v\nbig endian %+v", l, b)
	}
	if l[1].Peer != 5 || l[1].Tag != 70000 || l[1].Bytes != 1<<33 || l[0].Time != 1<<40+7 || l[2].Peer != 2 {
		t.Errorf("decoded %+v", l)
	}
}

// TestReadBuffers decodes the seed buffers and checks what they hold.
func TestReadBuffers(t *testing.T) {
	want := []int{2, 2, 1, 2, 1, -1, 1, 4, 2}
	for i, b := range seedBuffers() {
		n, err := readAll(b, 1<<20)
		if want[i] < 0 {
			if err == nil || !strings.Contains(err.Error(), "mem.evt: byte") {
				t.Errorf("buffer %d: error %v, want a located error", i, err)
			}
			continue
		}
		if err != nil || n != want[i] {
			t.Errorf("buffer %d: %d events, %v; want %d", i, n, err, want[i])
		}
	}
}

// FuzzReadBuffer decodes arbitrary event files: an error or events, never
// a panic, never more events than bytes, memory bounded by the chunk.
func FuzzReadBuffer(f *testing.F) {
	for _, b := range seedBuffers() {
		f.Add(b, uint8(12))
	}
	if dir := sharedDir(f, "traces/otf2/tiny_mpi/traces"); dir != "" {
		for _, n := range []string{"0.evt", "1.evt"} {
			if b, err := os.ReadFile(filepath.Join(dir, n)); err == nil {
				f.Add(b, uint8(20))
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, chunkLog uint8) {
		chunk := uint64(1) << (5 + chunkLog%16)
		n, text, err := readText(data, chunk, 0)
		if err != nil && !strings.Contains(err.Error(), "mem.evt") {
			t.Fatalf("error without the file name: %v", err)
		}
		// Through a window of the chunks, the same events and error.
		window := int64(chunkHeaderSize + int(chunkLog)%64)
		wn, wtext, werr := readText(data, chunk, window)
		if wn != n || wtext != text || fmt.Sprint(werr) != fmt.Sprint(err) {
			t.Fatalf("through a window of %d bytes: %d events, error %v; whole chunks: %d, %v", window, wn, werr, n, err)
		}
	})
}

// sharedDir returns a shared sample directory for seeding, or "" when the
// shared material is absent (the synthetic seeds still run).
func sharedDir(f *testing.F, rel string) string {
	if testenv.Required() {
		return testenv.Shared(f, rel)
	}
	dir := os.Getenv("KAIROS_SHARED")
	if dir == "" {
		dir = filepath.Join(testenv.RepoRoot(), "..", "shared")
	}
	p := filepath.Join(dir, rel)
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	return p
}

// writeFiles writes an archive's three files into a new directory.
func writeFiles(t testing.TB, anchor, defs, evt []byte) string {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "traces"), 0o755)
	os.WriteFile(filepath.Join(dir, "traces.otf2"), anchor, 0o644)
	os.WriteFile(filepath.Join(dir, "traces.def"), defs, 0o644)
	os.WriteFile(filepath.Join(dir, "traces", "0.evt"), evt, 0o644)
	return dir
}

// openAll opens an archive, prints its merged records and loads its model.
func openAll(dir string) error {
	a, err := OpenArchive(dir)
	if err != nil {
		return err
	}
	a.KeepAttrs = true
	if err := a.WriteText(io.Discard); err != nil {
		return err
	}
	s, err := Open(dir)
	if err != nil {
		return err
	}
	_, err = trace.Load(s)
	return err
}

// FuzzOpen opens arbitrary archives (anchor, global definitions and
// location 0's events): an error naming a file, never a panic.
func FuzzOpen(f *testing.F) {
	if dir := sharedDir(f, "traces/otf2/tiny_mpi"); dir != "" {
		a, _ := os.ReadFile(filepath.Join(dir, "traces.otf2"))
		d, _ := os.ReadFile(filepath.Join(dir, "traces.def"))
		e, _ := os.ReadFile(filepath.Join(dir, "traces", "0.evt"))
		f.Add(a, d, e)
		f.Add(a[:len(a)/2], d, e)
		f.Add(a, d[:len(d)-7], e[:len(e)-9])
	}
	f.Add([]byte("\x03\x42OTF2\x00"), []byte{}, seedBuffers()[0])
	f.Fuzz(func(t *testing.T, anchor, defs, evt []byte) {
		dir := writeFiles(t, anchor, defs, evt)
		if err := openAll(dir); err != nil && !strings.Contains(err.Error(), dir) && !strings.Contains(err.Error(), "rank ") {
			t.Fatalf("error does not name the file: %v", err)
		}
	})
}

// TestTruncated cuts and corrupts a real archive's event file at every
// byte: each read ends with events or an error naming the file and byte,
// never a panic.
func TestTruncated(t *testing.T) {
	src := testenv.Shared(t, "traces/otf2/tiny_mpi")
	a, _ := os.ReadFile(filepath.Join(src, "traces.otf2"))
	d, _ := os.ReadFile(filepath.Join(src, "traces.def"))
	e, err := os.ReadFile(filepath.Join(src, "traces", "0.evt"))
	if err != nil {
		t.Fatal(err)
	}
	// The last byte is the end-of-buffer mark after the end-of-file mark:
	// a file without it is complete.
	for n := 0; n < len(e)-1; n++ {
		dir := writeFiles(t, a, d, e[:n])
		err := openAll(dir)
		if err == nil {
			t.Fatalf("event file cut at %d bytes: no error", n)
		}
		if !strings.Contains(err.Error(), filepath.Join(dir, "traces", "0.evt")) || !strings.Contains(err.Error(), "byte ") {
			t.Fatalf("cut at %d: error %q does not locate the problem", n, err)
		}
	}
	for n := 0; n < len(d); n += 3 {
		dir := writeFiles(t, a, d[:n], e)
		if err := openAll(dir); err == nil || !strings.Contains(err.Error(), "traces.def") {
			t.Fatalf("definitions cut at %d bytes: error %v", n, err)
		}
	}
	for i := range e {
		c := append([]byte{}, e...)
		c[i] ^= 0xA5
		openAll(writeFiles(t, a, d, c)) // must not panic
	}
	// No definitions file at all (otf2-buffer-test-endianness's archives).
	dir := writeFiles(t, a, d, e)
	if err := os.Remove(filepath.Join(dir, "traces.def")); err != nil {
		t.Fatal(err)
	}
	if err := openAll(dir); err == nil || !strings.Contains(err.Error(), "traces.otf2: the archive has no global definitions file (traces.def)") {
		t.Errorf("without traces.def: %v", err)
	}
}
