package otf2

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// Anchor is the content of an archive's anchor file (traces.otf2): the
// versions, chunk sizes and counts the other files are read with.
type Anchor struct {
	AnchorFormat, TraceFormat uint8
	Version                   [3]uint8 // OTF2 version that wrote the archive
	EventChunkSize            uint64
	DefChunkSize              uint64
	Substrate, Compression    uint8
	NumLocations              uint64
	NumGlobalDefs             uint64
	Machine, Creator, Desc    string
	Properties                [][2]string
	TraceID                   uint64
	BigEndian                 bool
}

// Anchor file limits: OTF2 accepts chunks of 256 KiB to 16 MiB; Kairos
// reads any size from a header's worth up to maxChunkSize, so that a
// corrupt anchor cannot make it allocate without bound.
const (
	maxChunkSize    = 1 << 26
	maxAnchorSize   = 1 << 20
	magic           = "OTF2"
	substratePOSIX  = 1
	compressionNone = 1
)

var errNotOTF2 = errors.New("not an OTF2 anchor file")

// IsAnchor reports whether head starts like an OTF2 anchor file.
func IsAnchor(head []byte) bool {
	return len(head) >= 7 && head[0] == chunkHeader &&
		(head[1] == littleEndian || head[1] == bigEndian) &&
		string(head[2:7]) == magic+"\x00"
}

// readAnchor reads and decodes the anchor file at path.
func readAnchor(path string) (*Anchor, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxAnchorSize))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	a, off, err := parseAnchor(data)
	if err != nil {
		return nil, fmt.Errorf("%s: byte %d: %w", path, off, err)
	}
	return a, nil
}

// parseAnchor decodes an anchor file; on error it returns the offset of
// the field it could not read.
func parseAnchor(data []byte) (*Anchor, int, error) {
	if !IsAnchor(data) {
		return nil, 0, errNotOTF2
	}
	r := rbuf{b: data, pos: 7, big: data[1] == bigEndian}
	a := &Anchor{BigEndian: r.big}
	a.AnchorFormat = r.u8()
	a.TraceFormat = r.u8()
	a.Version = [3]uint8{r.u8(), r.u8(), r.u8()}
	a.EventChunkSize = r.u64full()
	a.DefChunkSize = r.u64full()
	a.Substrate = r.u8()
	a.Compression = r.u8()
	a.NumLocations = r.u64full()
	a.NumGlobalDefs = r.u64full()
	a.Machine, a.Creator, a.Desc = r.str(), r.str(), r.str()
	if a.AnchorFormat > 1 {
		n := r.u32full()
		for i := uint32(0); i < n && !r.failed(); i++ {
			a.Properties = append(a.Properties, [2]string{r.str(), r.str()})
		}
		a.TraceID = r.u64full()
	}
	if r.failed() {
		return nil, r.pos, fmt.Errorf("anchor file ends early: expected %s (truncated?)", anchorField(r.pos))
	}
	switch {
	case a.EventChunkSize < chunkHeaderSize+2 || a.EventChunkSize > maxChunkSize:
		return nil, 12, fmt.Errorf("event chunk size %d out of range [%d, %d]", a.EventChunkSize, chunkHeaderSize+2, maxChunkSize)
	case a.DefChunkSize < chunkHeaderSize+2 || a.DefChunkSize > maxChunkSize:
		return nil, 20, fmt.Errorf("definition chunk size %d out of range [%d, %d]", a.DefChunkSize, chunkHeaderSize+2, maxChunkSize)
	case a.Substrate != substratePOSIX:
		return nil, 28, fmt.Errorf("file substrate %d is not supported (only POSIX files)", a.Substrate)
	case a.Compression != compressionNone:
		return nil, 29, fmt.Errorf("compression %d is not supported (OTF2 itself implements none)", a.Compression)
	}
	return a, 0, nil
}

// anchorFields are the anchor file's fields at fixed offsets, each with
// the offset it ends at, for the error about a file cut short.
var anchorFields = []struct {
	end  int
	name string
}{
	{8, "the anchor format (u8 at byte 7)"}, {9, "the trace format (u8 at byte 8)"}, {12, "the OTF2 version (3 u8 at byte 9)"},
	{20, "the event chunk size (u64 at byte 12)"}, {28, "the definition chunk size (u64 at byte 20)"},
	{29, "the substrate (u8 at byte 28)"}, {30, "the compression (u8 at byte 29)"},
	{38, "the number of locations (u64 at byte 30)"}, {46, "the number of global definitions (u64 at byte 38)"},
}

// anchorField names the field of an anchor file that byte off is in.
func anchorField(off int) string {
	for _, f := range anchorFields {
		if off < f.end {
			return f.name
		}
	}
	return "the machine, creator and description (NUL-terminated strings from byte 46), then the properties"
}

// VersionString returns the OTF2 version that wrote the archive.
func (a *Anchor) VersionString() string {
	return fmt.Sprintf("%d.%d.%d", a.Version[0], a.Version[1], a.Version[2])
}
