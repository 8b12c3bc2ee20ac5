package prsd

import (
	"encoding/binary"
	"fmt"
	"slices"
)

// A palette is the form of a long series whose values, after the first,
// are drawn from a few levels in no order that runs fold: a noisy
// computation's levels, within the time error of a mean, that alternate
// with 0 where the computation is left out (the noisy LU's receives: 12
// levels over 120,000 values, 2.8 bytes a value as runs of one value
// each, half a byte as a palette). Its list of runs is one item, a
// repeat of no repetitions (which runs never hold), then the levels and
// each value's index among them, in half a byte where there are at most
// 16 levels, else in a byte (docs/rsd-format.md, version 7).
type palette struct {
	levels  []int64 // increasing, 2 to maxLevels
	idx     []byte  // the N-1 values' indexes
	nibbles bool    // two indexes a byte, the first in the low half
}

// maxLevels is the most levels a palette holds, and nibbleLevels the
// most whose indexes take half a byte.
const (
	maxLevels    = 256
	nibbleLevels = 16
)

// paletteHead starts a palette's list of runs: one item, a repeat of 0
// repetitions.
var paletteHead = []byte{1, 0, 0}

// paletteOf returns the palette encoding of the series of n values, the
// first first, whose list of runs is list, where it takes fewer bytes
// than list, and whether it does. Only a series that readers stream
// (longer than maxCycled) takes a palette. A palette takes at least half
// a byte a value, so that a list shorter than that is kept without its
// values being walked, and those it walks are fewer than two a byte of
// list.
func paletteOf(list []byte, n, first int64) ([]byte, bool) {
	m := n - 1
	if n <= maxCycled || m/2 >= int64(len(list)) {
		return nil, false
	}
	vals, _, _ := expandRuns(list, 0, make([]int64, 0, m), first)
	levels := make([]int64, 0, nibbleLevels)
	for _, v := range vals {
		if i, ok := slices.BinarySearch(levels, v); !ok {
			if len(levels) == maxLevels {
				return nil, false
			}
			levels = slices.Insert(levels, i, v)
		}
	}
	if len(levels) < 2 {
		return nil, false
	}
	out := append([]byte(nil), paletteHead...)
	out = binary.AppendUvarint(out, uint64(len(levels)))
	out = binary.AppendVarint(out, levels[0])
	for i := 1; i < len(levels); i++ {
		out = binary.AppendUvarint(out, uint64(levels[i]-levels[i-1]))
	}
	nibbles := len(levels) <= nibbleLevels
	for i, v := range vals {
		x, _ := slices.BinarySearch(levels, v)
		switch {
		case !nibbles:
			out = append(out, byte(x))
		case i%2 == 0:
			out = append(out, byte(x))
		default:
			out[len(out)-1] |= byte(x) << 4
		}
		if len(out) >= len(list) {
			return nil, false
		}
	}
	return out, true
}

// hasPaletteHead reports whether enc starts as a palette's list.
func hasPaletteHead(enc []byte) bool {
	return len(enc) >= len(paletteHead) && string(enc[:len(paletteHead)]) == string(paletteHead)
}

// streamPalette sets s, of N and First set, to be streamed from the
// palette at the start of enc, and reports whether there is a valid one.
func (s *Series) streamPalette(enc []byte) bool {
	return hasPaletteHead(enc) && s.readPalette(enc) == ""
}

// readPalette sets s, of N and First set, to be streamed from the
// palette at the start of enc, and returns why it did not, "" where it
// did: a palette is of a series of more than maxCycled values, of 2 to
// maxLevels increasing levels and as many indexes as values after the
// first. An index past the last level reads the last level.
func (s *Series) readPalette(enc []byte) string {
	if s.N <= maxCycled {
		return fmt.Sprintf("a palette of %d values (at most %d take runs)", s.N, maxCycled)
	}
	off := len(paletteHead)
	k, w := binary.Uvarint(enc[off:])
	// each level takes a byte at least
	if w <= 0 || k < 2 || k > maxLevels || k > uint64(len(enc)-off-w) {
		return fmt.Sprintf("a palette of %d levels in %d bytes (2 to %d, a byte at least each)", k, len(enc)-off, maxLevels)
	}
	off += w
	levels := make([]int64, k)
	l, w := binary.Varint(enc[off:])
	if w <= 0 {
		return "a palette's first level is not a varint"
	}
	levels[0], off = l, off+w
	for i := 1; i < len(levels); i++ {
		d, w := binary.Uvarint(enc[off:])
		if w <= 0 || d == 0 {
			return fmt.Sprintf("a palette's level %d is not above the one before", i)
		}
		levels[i], off = levels[i-1]+int64(d), off+w
	}
	m := uint64(s.N - 1)
	nibbles := k <= nibbleLevels
	if nibbles {
		m = (m + 1) / 2
	}
	if m > uint64(len(enc)-off) {
		return fmt.Sprintf("a palette's %d values take %d bytes, %d are left", s.N-1, m, len(enc)-off)
	}
	end := off + int(m)
	s.pal = &palette{levels: levels, idx: enc[off:end:end], nibbles: nibbles}
	s.enc, s.vals, s.varies = enc[:end:end], nil, true
	return ""
}

// next returns value i (from 0) of the values after the first.
func (p *palette) next(i int64) int64 {
	var x byte
	if p.nibbles {
		x = p.idx[i>>1] >> (4 * (i & 1)) & 0xf
	} else {
		x = p.idx[i]
	}
	return p.levels[min(int(x), len(p.levels)-1)]
}
