package otf2

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"kairos/internal/testenv"
)

// scriptStep is one step of OTF2 3.0.3's OTF2_Buffer_test script: a new
// record (kind 0), or a value of an integer kind written compressed or
// full (fixed width).
type scriptStep struct {
	kind uint8 // 0 = record start, else an OTF2_Type
	full bool
	v    int64
}

// bufferScript is the value sequence OTF2_Buffer_test.c writes; each
// record is a timestamp, the test record type 0xFF and the values.
func bufferScript() []scriptStep {
	var s []scriptStep
	rec := func() { s = append(s, scriptStep{}) }
	both := func(k uint8, vs ...int64) {
		for _, v := range vs {
			s = append(s, scriptStep{k, false, v}, scriptStep{k, true, v})
		}
	}
	u32s := []int64{0, 128, 16512, 2113664, 270549120}
	u64s := []int64{0, 128, 16512, 2113664, 270549120, 34630287488, 4432676798592, 567382630219904, 72624976668147840}
	neg := func(v []int64) []int64 {
		n := make([]int64, 0, len(v))
		for _, x := range v[1:] {
			n = append(n, -x)
		}
		return n
	}
	rec()
	both(typeUint8, 0, 64)
	rec()
	both(typeInt8, 0, 64)
	rec()
	both(typeInt8, -64)
	rec()
	both(typeUint16, 0, 128, 16512)
	rec()
	both(typeInt16, 0, 128, 16512)
	rec()
	both(typeInt16, -128, -16512)
	rec()
	both(typeUint32, u32s...)
	rec()
	both(typeInt32, u32s...)
	rec()
	both(typeInt32, neg(u32s)...)
	rec()
	both(typeUint64, u64s...)
	rec()
	both(typeInt64, u64s...)
	rec()
	both(typeInt64, neg(u64s)...)
	return s
}

// readScript decodes a buffer-test event file by the script, repeated
// repeat times, and returns the values and timestamps it read.
func readScript(t *testing.T, path string, repeat int) (vals []int64, times []uint64) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) < chunkHeaderSize || data[0] != chunkHeader {
		t.Fatalf("%s: no chunk header", path)
	}
	r := rbuf{b: data, pos: chunkHeaderSize, big: data[1] == bigEndian}
	script := bufferScript()
	for rep := 0; rep < repeat; rep++ {
		for _, st := range script {
			if st.kind == 0 {
				if r.pos < len(r.b) && r.b[r.pos] != timestampRec {
					t.Fatalf("%s: byte %d: want a timestamp, got 0x%02x", path, r.pos, r.b[r.pos])
				}
				r.u8()
				times = append(times, r.u64full())
				typ := r.u8()
				if typ == EvBufferFlush {
					r.record()
					typ = r.u8()
				}
				if typ != 0xFF {
					t.Fatalf("%s: byte %d: record type 0x%02x, want the test record 0xff", path, r.pos-1, typ)
				}
				continue
			}
			vals = append(vals, readStep(&r, st))
		}
	}
	// The test writes the buffer directly: it ends with the end-of-buffer
	// mark alone.
	if end := r.u8(); r.failed() || end != endOfBuffer || r.left() != 0 {
		t.Fatalf("%s: byte %d: want the end-of-buffer mark ending the file after the script", path, r.pos)
	}
	return vals, times
}

func readStep(r *rbuf, st scriptStep) int64 {
	switch st.kind {
	case typeUint8:
		return int64(r.u8())
	case typeInt8:
		return int64(int8(r.u8()))
	case typeUint16:
		return int64(r.u16())
	case typeInt16:
		return int64(int16(r.u16()))
	case typeUint32:
		if st.full {
			return int64(r.u32full())
		}
		return int64(r.u32())
	case typeInt32:
		if st.full {
			return int64(int32(r.u32full()))
		}
		return int64(int32(r.u32()))
	}
	if st.full {
		return int64(r.u64full())
	}
	return int64(r.u64())
}

// TestBufferEndianness decodes OTF2's own big- and little-endian buffer
// test files (written by OTF2 1.x and 2.x) with Kairos' decoder: both
// must give the script's values and the same timestamps.
func TestBufferEndianness(t *testing.T) {
	dir := testenv.Shared(t, "traces/otf2/otf2-buffer-test-endianness")
	var want []int64
	for _, st := range bufferScript() {
		if st.kind != 0 {
			want = append(want, st.v)
		}
	}
	for _, v := range []string{"", "_1"} {
		const repeat = 128
		be, tbe := readScript(t, filepath.Join(dir, "be"+v, "128.evt"), repeat)
		le, tle := readScript(t, filepath.Join(dir, "le"+v, "128.evt"), repeat)
		for i, x := range be {
			if w := want[i%len(want)]; x != w || le[i] != w {
				t.Fatalf("%s value %d: big-endian %d, little-endian %d, script %d", v, i, x, le[i], w)
			}
		}
		if !reflect.DeepEqual(tbe, tle) {
			t.Errorf("%s: timestamps differ between byte orders", v)
		}
		for _, name := range []string{"be" + v + ".otf2", "le" + v + ".otf2"} {
			a, err := readAnchor(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			if a.NumLocations != 3 || a.EventChunkSize != 256<<10 || a.BigEndian != (name[0] == 'b') {
				t.Errorf("%s: anchor %+v", name, a)
			}
		}
	}
}

// TestAnchorTruncated: an anchor file cut short names the field it ends
// in, with its offset and width.
func TestAnchorTruncated(t *testing.T) {
	le := binary.LittleEndian
	a := []byte("\x03\x42OTF2\x00\x01\x01\x03\x01\x00")
	a = le.AppendUint64(a, 1<<20)
	a = le.AppendUint64(a, 1<<20)
	a = append(a, substratePOSIX, compressionNone)
	a = le.AppendUint64(a, 2)
	a = le.AppendUint64(a, 33)
	a = append(a, "machine\x00creator\x00desc\x00"...)
	if _, _, err := parseAnchor(a); err != nil {
		t.Fatalf("the whole anchor: %v", err)
	}
	for _, c := range []struct {
		n    int
		want string
	}{
		{7, "the anchor format (u8 at byte 7)"},
		{11, "the OTF2 version (3 u8 at byte 9)"},
		{20, "the definition chunk size (u64 at byte 20)"},
		{40, "the number of global definitions (u64 at byte 38)"},
		{50, "the machine, creator and description (NUL-terminated strings from byte 46), then the properties"},
	} {
		_, off, err := parseAnchor(a[:c.n])
		if want := "anchor file ends early: expected " + c.want + " (truncated?)"; err == nil || err.Error() != want || off != c.n {
			t.Errorf("cut at %d: byte %d: %v\nwant byte %d: %s", c.n, off, err, c.n, want)
		}
	}
}

// TestCompressedIntegers reads compressed integers of every width in both
// byte orders, with eight bytes or more after them (u64's single load)
// and at the end of the buffer (its loop), and the malformed ones: a
// width above 8, the undefined value, a value cut short.
func TestCompressedIntegers(t *testing.T) {
	for _, c := range []struct {
		b           []byte // little-endian
		want        uint64
		short, bad  bool
		consumedLen int
	}{
		{[]byte{0}, 0, false, false, 1},
		{[]byte{1, 0x7f}, 0x7f, false, false, 2},
		{[]byte{2, 0x34, 0x12}, 0x1234, false, false, 3},
		{[]byte{3, 0x56, 0x34, 0x12}, 0x123456, false, false, 4},
		{[]byte{4, 0x78, 0x56, 0x34, 0x12}, 0x12345678, false, false, 5},
		{[]byte{5, 1, 2, 3, 4, 5}, 0x0504030201, false, false, 6},
		{[]byte{6, 1, 2, 3, 4, 5, 6}, 0x060504030201, false, false, 7},
		{[]byte{7, 1, 2, 3, 4, 5, 6, 7}, 0x07060504030201, false, false, 8},
		{[]byte{8, 1, 2, 3, 4, 5, 6, 7, 0xf8}, 0xf807060504030201, false, false, 9},
		{[]byte{0xff}, undefined64, false, false, 1},
		{[]byte{9, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 0, false, true, 1},
		{[]byte{4, 1, 2}, 0, true, false, 3},
	} {
		for _, big := range []bool{false, true} {
			b := slices.Clone(c.b)
			if big && b[0] >= 1 && b[0] <= 8 && int(b[0]) < len(b) {
				slices.Reverse(b[1 : 1+int(b[0])])
			}
			for _, pad := range []int{0, 8} {
				if c.short && pad > 0 {
					continue // the bytes after would complete it
				}
				r := rbuf{b: append(slices.Clone(b), make([]byte, pad)...), big: big}
				if v := r.u64(); v != c.want || r.short != c.short || r.bad != c.bad {
					t.Errorf("% x (big-endian %v, %d bytes after): %#x short %v bad %v, want %#x short %v bad %v",
						b, big, pad, v, r.short, r.bad, c.want, c.short, c.bad)
				}
				if want := min(c.consumedLen, len(r.b)); !c.short && r.pos != want {
					t.Errorf("% x (big-endian %v, %d bytes after): at byte %d, want %d", b, big, pad, r.pos, want)
				}
			}
		}
	}
}
