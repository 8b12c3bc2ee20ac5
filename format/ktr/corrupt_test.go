package ktr

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kairos/trace"
)

// readAll opens path and reads every event of every rank.
func readAll(path string) error {
	src, err := Open(path)
	if err != nil {
		return err
	}
	return trace.ForEach(src, func(int, int, *trace.Event) error { return nil })
}

// layout returns the offsets of a valid file's parts: the start of the
// meta block body, of the first chunk, of the index and of the trailer.
func layout(t *testing.T, data []byte) (meta, chunks, index, trailer int) {
	t.Helper()
	trailer = len(data) - trailerSize
	index = int(binary.LittleEndian.Uint64(data[trailer:]))
	meta = headerSize + metaHeaderSize
	chunks = meta + int(binary.LittleEndian.Uint32(data[headerSize:]))
	return
}

// corruptFile is a small valid file with several chunks per rank.
func corruptFile(t *testing.T) []byte {
	data, err := os.ReadFile(writeTemp(t, allFields(), Options{ChunkSize: 48}))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestCorruptRegions flips a byte in each part of a file and checks that
// the error says it is corrupt, and where.
func TestCorruptRegions(t *testing.T) {
	data := corruptFile(t)
	meta, chunks, index, trailer := layout(t, data)
	firstPayload := chunks + chunkHeadSize
	tests := []struct {
		name string
		at   int
		want []string // in the error message
	}{
		{"magic", 0, []string{"byte 0:", "not a ktr file"}},
		{"version", 8, []string{"byte 0:", "header checksum"}},
		{"header crc", 13, []string{"header checksum"}},
		{"meta length", headerSize, []string{"byte 16:", "meta block"}},
		{"meta crc", headerSize + 5, []string{"byte 16:", "meta block checksum"}},
		{"meta body", meta + 3, []string{"byte 16:", "meta block checksum"}},
		{"chunk header rank", chunks, []string{fmt.Sprintf("byte %d:", chunks), "rank 0 chunk 0", "chunk checksum"}},
		{"chunk header crc", chunks + 25, []string{"rank 0 chunk 0", "chunk checksum"}},
		{"chunk payload", firstPayload + 2, []string{"rank 0 chunk 0", "chunk checksum"}},
		{"last chunk payload", index - 1, []string{"rank 3 chunk", "chunk checksum"}},
		{"index", index + 1, []string{fmt.Sprintf("byte %d:", index), "index checksum"}},
		{"trailer offset", trailer + 2, []string{fmt.Sprintf("byte %d:", trailer), "trailer checksum"}},
		{"trailer crc", trailer + 21, []string{"trailer checksum"}},
		{"trailer magic", len(data) - 1, []string{"trailer magic"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bad := append([]byte{}, data...)
			bad[tt.at] ^= 0x20
			path := filepath.Join(t.TempDir(), "bad.ktr")
			if err := os.WriteFile(path, bad, 0o644); err != nil {
				t.Fatal(err)
			}
			err := readAll(path)
			checkCorrupt(t, err, path, tt.want...)
		})
	}
}

func checkCorrupt(t *testing.T, err error, path string, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatal("corruption not detected")
	}
	if !errors.Is(err, ErrCorrupt) {
		t.Errorf("error %q does not match ErrCorrupt", err)
	}
	msg := err.Error()
	for _, w := range append([]string{path + ": byte "}, want...) {
		if !strings.Contains(msg, w) {
			t.Errorf("error %q does not contain %q", msg, w)
		}
	}
}

// TestCorruptEveryByte flips every byte of a file in turn: every flip must
// be detected, since every byte is under a checksum.
func TestCorruptEveryByte(t *testing.T) {
	data := corruptFile(t)
	path := filepath.Join(t.TempDir(), "bad.ktr")
	for i := range data {
		bad := append([]byte{}, data...)
		bad[i] ^= 1 << (i % 8)
		if err := os.WriteFile(path, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := readAll(path); err == nil || !errors.Is(err, ErrCorrupt) {
			t.Fatalf("flipping bit %d of byte %d: %v, want a corruption error", i%8, i, err)
		}
	}
}

// TestTruncated cuts a file at every 1/20th of its length.
func TestTruncated(t *testing.T) {
	data := corruptFile(t)
	for i := 0; i < 20; i++ {
		n := len(data) * i / 20
		path := filepath.Join(t.TempDir(), "cut.ktr")
		if err := os.WriteFile(path, data[:n], 0o644); err != nil {
			t.Fatal(err)
		}
		t.Run(fmt.Sprintf("%d-of-%d", n, len(data)), func(t *testing.T) {
			checkCorrupt(t, readAll(path), path)
		})
	}
}

// TestChunkMismatch writes files whose chunks are well formed and
// checksummed but disagree with the index, as a buggy writer could.
func TestChunkMismatch(t *testing.T) {
	data := corruptFile(t)
	_, chunks, _, _ := layout(t, data)
	tests := []struct {
		name  string
		field int // offset in the chunk header
		value uint32
		want  string
	}{
		{"rank", 0, 1, "chunk header names rank 1 chunk 0, the index puts rank 0 chunk 0 here"},
		{"seq", 4, 5, "names rank 0 chunk 5"},
		{"events", 8, 99, "chunk header says 99 events"},
		{"raw length", 12, MaxChunkRaw + 1, "raw length"},
		{"compressed length", 16, 3, "compressed length 3"},
		{"raw crc", 20, 0, "decompressed payload checksum"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bad := append([]byte{}, data...)
			h := bad[chunks : chunks+chunkHeadSize]
			payload := bad[chunks+chunkHeadSize : chunks+int(chunkSizeAt(t, bad, chunks))]
			binary.LittleEndian.PutUint32(h[tt.field:], tt.value)
			binary.LittleEndian.PutUint32(h[24:], chunkCRC(h[:24], payload))
			path := filepath.Join(t.TempDir(), "bad.ktr")
			if err := os.WriteFile(path, bad, 0o644); err != nil {
				t.Fatal(err)
			}
			checkCorrupt(t, readAll(path), path, "rank 0 chunk 0", tt.want)
		})
	}
}

// chunkSizeAt returns the size of the chunk at off from its header.
func chunkSizeAt(t *testing.T, data []byte, off int) int64 {
	t.Helper()
	return chunkHeadSize + int64(binary.LittleEndian.Uint32(data[off+16:]))
}

func TestNotKtr(t *testing.T) {
	if Detect("x.ktr", []byte("0 init\n0 compute 1\n"), false) {
		t.Error("Detect accepted TI text")
	}
	if !Detect("x", []byte(magic+"\x01\x00"), false) {
		t.Error("Detect rejected the magic")
	}
	path := filepath.Join(t.TempDir(), "ti.ktr")
	os.WriteFile(path, []byte("0 init\n0 compute 1\n"), 0o644)
	checkCorrupt(t, readAll(path), path, "not a ktr file")
}

// craft writes a one-rank file whose chunks have the given raw payloads
// and event counts, with valid checksums and index: what a buggy writer
// could produce.
func craft(t *testing.T, chunks ...rawChunk) string {
	t.Helper()
	var buf bytes.Buffer
	e, err := newEncoder(&buf, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.close()
	meta := trace.NewMeta()
	if err := e.header(&meta); err != nil {
		t.Fatal(err)
	}
	e.index = binary.AppendUvarint(e.index, 1)
	for _, c := range chunks {
		if err := e.writeChunk(0, c.raw, nil, c.events); err != nil {
			t.Fatal(err)
		}
	}
	e.endRank()
	if err := e.trailer(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "crafted.ktr")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

type rawChunk struct {
	raw    []byte
	events int
}

// payload builds a raw chunk payload from its columns, its structure as
// events (the events form).
func payload(structure, compute, times, requests []byte) []byte {
	return payloadForm(append([]byte{formEvents}, structure...), compute, times, requests)
}

// payloadForm builds a raw chunk payload from its columns, the structure's
// form byte the first of structure.
func payloadForm(structure, compute, times, requests []byte) []byte {
	p := binary.AppendUvarint(nil, uint64(len(structure)))
	p = binary.AppendUvarint(p, uint64(len(compute)))
	p = binary.AppendUvarint(p, uint64(len(times)))
	p = binary.AppendUvarint(p, 2) // time unit 1, times in the plain layout
	p = append(p, structure...)
	p = appendTransposed(p, compute)
	p = appendTransposed(p, times)
	return append(p, requests...)
}

// shiftedPayload is payloadForm with the time unit 1 and times in the
// shifted layout.
func shiftedPayload(structure, times []byte) []byte {
	p := payloadForm(structure, nil, times, nil)
	i := varintLen(uint64(len(structure))) + 1 + varintLen(uint64(len(times)))
	p[i] = 3
	return p
}

// shiftAt is a time column of n values, 0 but value i shifted by z.
func shiftAt(n, i int, z byte) []byte {
	col := make([]byte, 8*n)
	col[8*i] = z
	return col
}

// TestCorruptPayload checks the errors for chunks that are checksummed
// but whose payload does not decode as the events it claims.
func TestCorruptPayload(t *testing.T) {
	var st trace.CodecState
	initEv, compute := trace.NewEvent(trace.Init), trace.NewEvent(trace.Compute)
	compute.Compute = computeInt
	inits := trace.AppendEvent(trace.AppendEvent(nil, &initEv, &st), &initEv, &st)
	st = trace.CodecState{}
	oneCompute := trace.AppendEvent(nil, &compute, &st)
	bogus := compute
	bogus.Compute = 3
	st = trace.CodecState{}
	bogusCompute := trace.AppendEvent(nil, &bogus, &st)
	eight := make([]byte, 8)
	timed := trace.NewEvent(trace.Init)
	timed.HasTime = true
	st = trace.CodecState{}
	timedInit := append([]byte{formEvents}, trace.AppendEvent(nil, &timed, &st)...)
	tests := []struct {
		name  string
		chunk rawChunk
		want  string
	}{
		{"fewer events", rawChunk{payload(inits, nil, nil, nil), 3}, "chunk holds 2 events, the index says 3"},
		{"more events", rawChunk{payload(inits, nil, nil, nil), 1}, "more than the 1 events"},
		{"unknown kind", rawChunk{payload([]byte{200, 0}, nil, nil, nil), 1}, "unknown kind 200"},
		{"truncated event", rawChunk{payload([]byte{byte(trace.Send), 1}, nil, nil, nil), 1}, "structure byte 1: corrupt event encoding"},
		{"column lengths", rawChunk{[]byte{50, 0, 0, 2, 2}, 1}, "column lengths 50, 0 and 0"},
		{"odd compute column", rawChunk{[]byte{2, 3, 0, 2, 0, 1, 2, 3}, 1}, "column lengths"},
		{"compute missing", rawChunk{payload(oneCompute, nil, nil, nil), 1}, "compute column exhausted"},
		{"compute placeholder", rawChunk{payload(bogusCompute, eight, nil, nil), 1}, "compute placeholder 3"},
		{"left over", rawChunk{payload(inits, eight, nil, nil), 2}, "8 compute, 0 time and 0 request bytes left over"},
		{"raw too short", rawChunk{[]byte{0}, 2}, "raw length 1, expected 2"},
		{"no form", rawChunk{[]byte{0, 0, 0, 2}, 1}, "structure column of 0 bytes, expected its form byte"},
		{"time unit 0, shifted", rawChunk{[]byte{0, 0, 0, 1}, 1}, "time unit 0"},
		{"shift too large", rawChunk{shiftedPayload(timedInit, []byte{64, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}), 1}, "time value 0 shifted by 64 bits, expected 0 to 63"},
		{"shift too large, value 9", rawChunk{shiftedPayload(timedInit, shiftAt(20, 9, 128)), 1}, "time value 9 shifted by 128 bits, expected 0 to 63"},
		{"shift too large, value 40", rawChunk{shiftedPayload(timedInit, shiftAt(80, 40, 64)), 1}, "time value 40 shifted by 64 bits, expected 0 to 63"},
		{"unknown form", rawChunk{payloadForm([]byte{7, 0}, nil, nil, nil), 1}, "structure form 7, expected 0 (events) or 1 (templates)"},
		{"no distinct event", rawChunk{payloadForm([]byte{formTemplates, 0, 0}, nil, nil, nil), 1}, "0 distinct events, expected 1 to 4096"},
		{"distinct events truncated", rawChunk{payloadForm([]byte{formTemplates, 0x80}, nil, nil, nil), 1}, "structure byte 1: the count of distinct events is truncated, or an overlong varint"},
		{"distinct events beyond bytes", rawChunk{payloadForm(append([]byte{formTemplates, 3}, inits...), nil, nil, nil), 1}, "3 distinct events, expected 1 to 4096 that the column's 6 bytes can hold"},
		{"distinct event corrupt", rawChunk{payloadForm([]byte{formTemplates, 1, 200, 0, 0}, nil, nil, nil), 1}, "structure byte 2: distinct event 0: corrupt event encoding: unknown kind 200"},
		{"distinct event's compute placeholder", rawChunk{payloadForm(append(append([]byte{formTemplates, 1}, bogusCompute...), 0), eight, nil, nil), 1}, "structure byte 2: distinct event 0: compute placeholder 3, expected 1 or 2"},
		{"index out of range", rawChunk{payloadForm(append(append([]byte{formTemplates, 1}, inits[:2]...), 0, 1), nil, nil, nil), 2}, "structure byte 5: an event's index 1, expected one of the 1 distinct events"},
		{"index truncated", rawChunk{payloadForm(append(append([]byte{formTemplates, 1}, inits[:2]...), 0, 0x80), nil, nil, nil), 2}, "structure byte 5: an event's index truncated, or an overlong varint"},
		{"templates fewer events", rawChunk{payloadForm(append(append([]byte{formTemplates, 1}, inits[:2]...), 0, 0), nil, nil, nil), 3}, "chunk holds 2 events, the index says 3"},
		{"time unit 0", rawChunk{[]byte{0, 0, 0, 0}, 1}, "time unit 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := craft(t, tt.chunk)
			checkCorrupt(t, readAll(path), path, "rank 0 chunk 0", tt.want)
		})
	}
}

// TestTemplatesOfVersion2: a version 2 file holds at most 256 distinct
// events a chunk; version 3 and later, up to 4,096.
func TestTemplatesOfVersion2(t *testing.T) {
	var st trace.CodecState
	structure := binary.AppendUvarint([]byte{formTemplates}, maxTemplatesV2+1)
	for i := range maxTemplatesV2 + 1 {
		e := trace.NewEvent(trace.Send)
		e.Partner, e.SendBytes = 0, int64(i)
		structure = trace.AppendEvent(structure, &e, &st)
	}
	path := craft(t, rawChunk{payloadForm(append(structure, 0), nil, nil, nil), 1})
	if err := readAll(path); err != nil {
		t.Fatalf("version %d: %v", Version, err)
	}
	setVersion(t, path, 2)
	checkCorrupt(t, readAll(path), path, "rank 0 chunk 0", "257 distinct events, expected 1 to 256")
}

// setVersion rewrites the format version in the header of the file at
// path, and the header's checksum.
func setVersion(t *testing.T, path string, v uint16) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	binary.LittleEndian.PutUint16(data[8:], v)
	binary.LittleEndian.PutUint32(data[12:], checksum(data[:12]))
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestAbsurdAmounts: a file whose checksums hold but whose amounts mean
// nothing (a negative or infinite computation, a negative size: issue 43)
// is refused where the event is, as SimGrid aborts on it.
func TestAbsurdAmounts(t *testing.T) {
	for _, c := range []struct {
		set  func(*trace.Event)
		want string
	}{
		{func(e *trace.Event) { e.Kind, e.Compute = trace.Compute, -1e6 }, "compute of -1e+06 flops: expected 0 or more"},
		{func(e *trace.Event) { e.Kind, e.Compute = trace.Compute, math.NaN() }, "compute of NaN flops"},
		{func(e *trace.Event) { e.Kind, e.Compute = trace.Compute, 1e300 }, "compute of 1e+300 flops: expected at most 1e+24"},
		{func(e *trace.Event) { e.Kind, e.Compute = trace.Sleep, math.Inf(1) }, "sleep of +Inf seconds"},
		{func(e *trace.Event) { e.Kind, e.Partner, e.SendBytes = trace.Send, 0, -1020 }, "send sending -1020 bytes"},
		{func(e *trace.Event) { e.Kind, e.RecvBytes = trace.Allreduce, -8 }, "allreduce receiving -8 bytes"},
		{func(e *trace.Event) { e.Kind, e.SendCounts = trace.Alltoallv, []int64{8, -8} }, "-8 bytes for member 1"},
	} {
		tr := trace.New(1, trace.NewMeta())
		init := trace.NewEvent(trace.Init)
		e := trace.NewEvent(trace.Compute)
		c.set(&e)
		tr.Ranks[0].Append(&init)
		tr.Ranks[0].Append(&e)
		err := readAll(writeTemp(t, tr, Options{}))
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "event 1 of the chunk") || !strings.Contains(err.Error(), "byte ") {
			t.Errorf("%s: %v", c.want, err)
		}
	}
}
