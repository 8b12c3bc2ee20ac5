package ktr

import (
	"encoding/binary"
	"fmt"
	"math"
	"sort"

	"kairos/trace"
)

// appendMeta appends the meta block body: the default datatype, the
// regions, the communicators and the attributes (sorted by key, so that
// the same trace always gives the same bytes).
func appendMeta(dst []byte, m *trace.Meta) []byte {
	dst = append(dst, byte(m.DefaultType))
	dst = binary.AppendUvarint(dst, uint64(len(m.Regions)))
	for _, r := range m.Regions {
		dst = appendString(dst, r.Name)
		dst = binary.AppendUvarint(dst, uint64(r.Parent))
	}
	dst = binary.AppendUvarint(dst, uint64(len(m.Comms)))
	for _, c := range m.Comms {
		dst = binary.AppendUvarint(dst, uint64(c.ID))
		dst = binary.AppendUvarint(dst, uint64(len(c.Members)))
		for _, w := range c.Members {
			dst = binary.AppendVarint(dst, int64(w))
		}
	}
	keys := make([]string, 0, len(m.Attrs))
	for k := range m.Attrs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	dst = binary.AppendUvarint(dst, uint64(len(keys)))
	for _, k := range keys {
		dst = appendString(dst, k)
		dst = appendString(dst, m.Attrs[k])
	}
	return dst
}

func appendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// parseMeta decodes a meta block body. Errors give the byte offset within
// the body.
func parseMeta(b []byte) (trace.Meta, error) {
	d := &reader{b: b}
	m := trace.Meta{DefaultType: trace.Datatype(int8(d.byte())), Attrs: map[string]string{}}
	if !m.DefaultType.Known() {
		return m, fmt.Errorf("byte 0: unknown default datatype %d", m.DefaultType)
	}
	n := d.count(2) // a region takes at least 2 bytes
	m.Regions = make([]trace.Region, 0, n)
	for i := 0; i < n && d.err == nil; i++ {
		m.Regions = append(m.Regions, trace.Region{Name: d.string(), Parent: d.uint32()})
	}
	n = d.count(2)
	if n > 0 {
		m.Comms = make([]trace.Comm, 0, n) // nil when there are none, as in trace.NewMeta
	}
	for i := 0; i < n && d.err == nil; i++ {
		c := trace.Comm{ID: d.uint32()}
		k := d.count(1)
		if k > 0 {
			c.Members = make([]int32, 0, k)
		}
		for j := 0; j < k && d.err == nil; j++ {
			c.Members = append(c.Members, d.int32())
		}
		m.Comms = append(m.Comms, c)
	}
	n = d.count(2)
	for i := 0; i < n && d.err == nil; i++ {
		k, v := d.string(), d.string()
		m.Attrs[k] = v
	}
	if d.err == nil && d.off != len(b) {
		d.fail(fmt.Sprintf("%d bytes after the attributes, expected none", len(b)-d.off))
	}
	if d.err != nil {
		return m, d.err
	}
	if len(m.Regions) == 0 {
		m.Regions = []trace.Region{{}}
	}
	for i, r := range m.Regions {
		if int(r.Parent) >= len(m.Regions) {
			return m, fmt.Errorf("region %d (%q): parent %d out of range [0,%d)", i, r.Name, r.Parent, len(m.Regions))
		}
	}
	return m, nil
}

// reader decodes the varint structures of the meta block and the index,
// remembering the first error and its offset.
type reader struct {
	b   []byte
	off int
	err error
}

func (d *reader) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("byte %d: %s", d.off, what)
	}
	d.off = len(d.b)
}

func (d *reader) byte() byte {
	if d.off >= len(d.b) {
		d.fail("truncated, expected a byte")
		return 0
	}
	c := d.b[d.off]
	d.off++
	return c
}

func (d *reader) uvarint() uint64 {
	v, n := binary.Uvarint(d.b[d.off:])
	if n <= 0 {
		d.fail("truncated or overlong unsigned varint")
		return 0
	}
	d.off += n
	return v
}

func (d *reader) varint() int64 {
	v, n := binary.Varint(d.b[d.off:])
	if n <= 0 {
		d.fail("truncated or overlong signed varint")
		return 0
	}
	d.off += n
	return v
}

func (d *reader) uint32() uint32 {
	at := d.off
	v := d.uvarint()
	d.check32(at, v <= math.MaxUint32, v)
	return uint32(v)
}

func (d *reader) int32() int32 {
	at := d.off
	v := d.varint()
	d.check32(at, v >= math.MinInt32 && v <= math.MaxInt32, v)
	return int32(v)
}

// check32 fails, at offset at, unless ok says that v fits its 32 bits.
func (d *reader) check32(at int, ok bool, v any) {
	if !ok && d.err == nil {
		d.off = at
		d.fail(fmt.Sprintf("value %v does not fit 32 bits", v))
	}
}

// count reads the number of items that follow, each taking at least min
// bytes, and rejects a count the remaining bytes cannot hold, so that no
// allocation is driven by an unchecked length.
func (d *reader) count(min int) int {
	at := d.off
	n := d.uvarint()
	if d.err == nil && n > uint64((len(d.b)-d.off)/min) {
		d.off = at
		d.fail(fmt.Sprintf("count %d exceeds what the remaining %d bytes can hold", n, len(d.b)-at))
		return 0
	}
	return int(n)
}

func (d *reader) string() string {
	n := d.count(1)
	if d.err != nil {
		return ""
	}
	s := string(d.b[d.off : d.off+n])
	d.off += n
	return s
}
