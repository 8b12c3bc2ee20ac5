package ktr

import (
	"encoding/binary"
	"fmt"
	"math"
	"sort"

	"kairos/internal/varint"
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
	d := &varint.Reader{B: b}
	m := trace.Meta{DefaultType: trace.Datatype(int8(d.Byte())), Attrs: map[string]string{}}
	if !m.DefaultType.Known() {
		return m, fmt.Errorf("byte 0: unknown default datatype %d", m.DefaultType)
	}
	n := d.Count(2, math.MaxInt) // a region takes at least 2 bytes
	m.Regions = make([]trace.Region, 0, n)
	for i := 0; i < n && d.Err == nil; i++ {
		m.Regions = append(m.Regions, trace.Region{Name: d.PrefixedString(), Parent: d.Uint32()})
	}
	n = d.Count(2, math.MaxInt)
	if n > 0 {
		m.Comms = make([]trace.Comm, 0, n) // nil when there are none, as in trace.NewMeta
	}
	for i := 0; i < n && d.Err == nil; i++ {
		c := trace.Comm{ID: d.Uint32()}
		k := d.Count(1, math.MaxInt)
		if k > 0 {
			c.Members = make([]int32, 0, k)
		}
		for j := 0; j < k && d.Err == nil; j++ {
			c.Members = append(c.Members, d.Int32())
		}
		m.Comms = append(m.Comms, c)
	}
	n = d.Count(2, math.MaxInt)
	for i := 0; i < n && d.Err == nil; i++ {
		k, v := d.PrefixedString(), d.PrefixedString()
		m.Attrs[k] = v
	}
	if d.Err == nil && d.Off != len(b) {
		d.Fail(fmt.Sprintf("%d bytes after the attributes, expected none", len(b)-d.Off))
	}
	if d.Err != nil {
		return m, d.Err
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
