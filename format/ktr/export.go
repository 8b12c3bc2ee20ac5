package ktr

import "kairos/trace"

// AppendMeta appends the body of a meta block (docs/ktr-format.md) to
// dst, for other formats that store a trace's metadata the same way.
func AppendMeta(dst []byte, m *trace.Meta) []byte { return appendMeta(dst, m) }

// ParseMeta decodes the body of a meta block; errors give the byte
// offset within the body.
func ParseMeta(b []byte) (trace.Meta, error) { return parseMeta(b) }
