package varint

import (
	"encoding/binary"
	"errors"
	"math"
	"testing"
)

func TestReadThrough(t *testing.T) {
	var b []byte
	b = append(b, 7)
	b = binary.AppendUvarint(b, 300)
	b = binary.AppendVarint(b, -5)
	b = binary.LittleEndian.AppendUint64(b, 0xdeadbeef)
	b = binary.AppendUvarint(b, 3)
	b = append(b, "abc"...)
	d := Reader{B: b}
	if got := d.Byte(); got != 7 {
		t.Errorf("Byte = %d", got)
	}
	if got := d.Uint32(); got != 300 {
		t.Errorf("Uint32 = %d", got)
	}
	if got := d.Int32(); got != -5 {
		t.Errorf("Int32 = %d", got)
	}
	if got := d.Fixed64(); got != 0xdeadbeef {
		t.Errorf("Fixed64 = %#x", got)
	}
	if got := d.PrefixedString(); got != "abc" {
		t.Errorf("String = %q", got)
	}
	if d.Err != nil || d.Off != len(b) {
		t.Errorf("after reading all: off %d of %d, err %v", d.Off, len(b), d.Err)
	}
}

// Each malformed input fails at the offset of the bad value, and every
// read after the first failure returns zero.
func TestErrors(t *testing.T) {
	big := binary.AppendUvarint(nil, math.MaxUint32+1)
	neg := binary.AppendVarint(nil, math.MinInt32-1)
	tests := []struct {
		name string
		in   []byte
		read func(*Reader)
		off  int
	}{
		{"empty byte", nil, func(d *Reader) { d.Byte() }, 0},
		{"truncated uvarint", []byte{0x80}, func(d *Reader) { d.Uvarint() }, 0},
		{"overlong varint", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, func(d *Reader) { d.Varint() }, 0},
		{"uint32 overflow", append([]byte{1}, big...), func(d *Reader) { d.Byte(); d.Uint32() }, 1},
		{"int32 overflow", neg, func(d *Reader) { d.Int32() }, 0},
		{"short fixed64", []byte{1, 2, 3}, func(d *Reader) { d.Fixed64() }, 0},
		{"count beyond input", []byte{5, 1, 2}, func(d *Reader) { d.Count(1, 100) }, 0},
		{"count beyond max", []byte{3, 1, 2, 3}, func(d *Reader) { d.Count(1, 2) }, 0},
		{"string beyond input", []byte{9, 'a'}, func(d *Reader) { d.PrefixedString() }, 0},
	}
	for _, tc := range tests {
		d := Reader{B: tc.in}
		tc.read(&d)
		var e *Error
		if !errors.As(d.Err, &e) || e.Offset != tc.off {
			t.Errorf("%s: err %v, want an *Error at byte %d", tc.name, d.Err, tc.off)
			continue
		}
		if d.Uvarint() != 0 || d.Byte() != 0 || d.Err != error(e) {
			t.Errorf("%s: reads after the failure must return 0 and keep the first error", tc.name)
		}
	}
}

// TestSkip: Skip passes over varints of every length as reading them does,
// and fails on a truncated one.
func TestSkip(t *testing.T) {
	var b []byte
	for _, v := range []int64{0, -1, 300, math.MinInt64, math.MaxInt64} {
		b = binary.AppendVarint(b, v)
	}
	read, skip := &Reader{B: b}, &Reader{B: b}
	for range 5 {
		read.Varint()
		skip.Skip()
		if read.Off != skip.Off || skip.Err != nil {
			t.Fatalf("skipped to byte %d (%v), read to %d", skip.Off, skip.Err, read.Off)
		}
	}
	if skip.Skip(); skip.Err == nil {
		t.Error("skipping past the end: no error")
	}
	trunc := &Reader{B: []byte{0x80, 0x80}}
	if trunc.Skip(); trunc.Err == nil {
		t.Error("truncated varint: no error")
	}
}

// FuzzFast: Fast reads what Reader reads, byte for byte, and fails at the
// offset where Reader fails (ops picks the reads: a byte, an unsigned
// varint, a fixed 64-bit value or a count); once failed, it returns 0.
// ReadByte, ReadUvarint and ReadFixed64 return what Fast's reads return,
// at the offsets Fast's Off holds, failed or not.
func FuzzFast(f *testing.F) {
	var b []byte
	for _, v := range []uint64{0, 1, 127, 128, 300, 1 << 35, math.MaxUint64} {
		b = binary.AppendUvarint(b, v)
	}
	f.Add(b, []byte{1, 1, 1, 1, 1, 1, 1, 1})
	f.Add(b, []byte{0, 2, 1, 3, 1, 1})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02}, []byte{1})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, []byte{1, 0})
	f.Add([]byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00}, []byte{1})
	f.Add([]byte{5, 1, 2}, []byte{3})
	f.Fuzz(func(t *testing.T, in, ops []byte) {
		slow, fast := &Reader{B: in}, &Fast{B: in}
		off := 0 // the Read functions' offset
		for i, op := range ops {
			var want, got, at uint64
			switch op % 4 {
			case 0:
				var c byte
				c, off = ReadByte(in, off)
				want, got, at = uint64(slow.Byte()), uint64(fast.Byte()), uint64(c)
			case 1:
				want, got = slow.Uvarint(), fast.Uvarint()
				at, off = ReadUvarint(in, off)
			case 2:
				want, got = slow.Fixed64(), fast.Fixed64()
				at, off = ReadFixed64(in, off)
			case 3:
				want, got = uint64(slow.Count(2, 100)), uint64(fast.Count(2, 100))
				at, off = got, fast.Off // no Read function counts
			}
			if got != want || fast.Failed() != (slow.Err != nil) {
				t.Fatalf("read %d (op %d): Fast %d (failed %v), Reader %d (%v)", i, op%4, got, fast.Failed(), want, slow.Err)
			}
			if at != got || off != fast.Off {
				t.Fatalf("read %d (op %d): the Read function %d at offset %d, Fast %d at %d", i, op%4, at, off, got, fast.Off)
			}
			if slow.Err == nil && fast.Off != slow.Off {
				t.Fatalf("read %d: Fast at byte %d, Reader at %d", i, fast.Off, slow.Off)
			}
		}
		var e *Error
		if slow.Err != nil {
			if !errors.As(fast.Err(), &e) || e.Offset != slow.Err.(*Error).Offset {
				t.Fatalf("Fast fails with %v, Reader with %v", fast.Err(), slow.Err)
			}
		} else if fast.Err() != nil {
			t.Fatalf("Fast fails with %v, Reader does not", fast.Err())
		}
	})
}

// TestZigzag: Zigzag decodes what binary.AppendVarint encodes.
func TestZigzag(t *testing.T) {
	for _, v := range []int64{0, 1, -1, 63, -64, 1 << 40, math.MinInt64, math.MaxInt64} {
		u, _ := binary.Uvarint(binary.AppendVarint(nil, v))
		if got := Zigzag(u); got != v {
			t.Errorf("Zigzag(%d) = %d, want %d", u, got, v)
		}
	}
}
