package ti

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"runtime"
)

// Interleaved shared files. A shared file written rank after rank gives
// each rank's reader its own part of the file; one whose ranks' lines
// are interleaved (sorted by time, say) would make each reader scan the
// whole file, a million times at a million ranks. Such a file's lines
// are copied once, rank by rank, to an unnamed temporary file that the
// readers read instead; the original is read again only to name a line
// in an error (lineOf).

// regroupMin is the number of ranks from which an interleaved file is
// regrouped: below, the repeated scans cost less than the copy.
const regroupMin = 16

// regroupBatch bounds the memory of the copy: the ranks are copied in
// groups whose lines take at most this many bytes (one that needs more
// is a group of its own), each group in one pass over the file.
const regroupBatch = 64 << 20

// regroup copies the lines of every rank, in rank order, to a temporary
// file and points the spans there.
func (t *Trace) regroup() error {
	tmp := tempFile()
	if tmp == nil {
		return nil // no temporary file: read as it is, slowly
	}
	runtime.AddCleanup(t, func(f *os.File) { f.Close() }, tmp)
	var end int64 // of the last indexed line
	for _, s := range t.spans {
		end = max(end, s.end)
	}
	dest := make([]int64, len(t.spans)) // where each span's lines go
	var total int64
	for r := range t.slot {
		if i := t.slot[r]; i >= 0 {
			dest[i], total = total, total+t.spans[i].size
		}
	}
	cursor := make([]int64, len(t.spans))
	for lo := 0; lo < len(t.slot); {
		// The group [lo, hi) and its bytes, from dest[lo's span].
		hi, first, size := lo, int64(-1), int64(0)
		for ; hi < len(t.slot) && (size == 0 || size+t.rankSize(hi) <= regroupBatch); hi++ {
			if i := t.slot[hi]; i >= 0 {
				if first < 0 {
					first = dest[i]
				}
				cursor[i] = dest[i] - first
				size += t.spans[i].size
			}
		}
		if size > 0 {
			buf := make([]byte, size)
			if err := t.copyRanks(io.NewSectionReader(t.data, 0, end), lo, hi, buf, cursor); err != nil {
				return err
			}
			if _, err := tmp.WriteAt(buf, first); err != nil {
				return nil // a full disk: read as it is
			}
		}
		lo = hi
	}
	for i := range t.spans {
		t.spans[i] = span{off: dest[i], end: dest[i] + t.spans[i].size, size: t.spans[i].size, line: 1}
	}
	t.orig, t.data = t.data, tmp
	return nil
}

// rankSize returns the bytes of rank r's lines.
func (t *Trace) rankSize(r int) int64 {
	if i := t.slot[r]; i >= 0 {
		return t.spans[i].size
	}
	return 0
}

// copyRanks copies the lines of ranks lo to hi-1 from in to buf, each at
// its span's cursor.
func (t *Trace) copyRanks(in io.Reader, lo, hi int, buf []byte, cursor []int64) error {
	lr := newLineReaderSize(in, 1, 1<<20)
	var p parser
	for {
		line, _, ok := lr.next()
		if !ok {
			break
		}
		if !p.split(line) {
			continue
		}
		r, _ := parseRank(p.toks[0])
		if r < lo || r >= hi || t.slot[r] < 0 {
			continue
		}
		c := &cursor[t.slot[r]]
		*c += int64(copy(buf[*c:], line))
		buf[*c] = '\n'
		*c++
	}
	if lr.err != nil {
		return fmt.Errorf("%s: %w", t.files[0], lr.err)
	}
	return nil
}

// lineOf returns the line number in the original file of the k-th line
// (from 1) of rank r, for a regrouped trace; k itself for another. It
// scans the original file once for each rank asked about in turn.
func (t *Trace) lineOf(r, k int) int {
	if t.orig == nil {
		return k
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	c := &t.lineCache
	if c.lines == nil || c.rank != r {
		c.rank, c.lines = r, c.lines[:0]
		lr := newLineReaderSize(io.NewSectionReader(t.orig, 0, 1<<62), 1, 1<<20)
		var p parser
		tok := []byte(fmt.Sprint(r))
		for {
			line, _, ok := lr.next()
			if !ok {
				break
			}
			if p.split(line) && bytes.Equal(p.toks[0], tok) {
				c.lines = append(c.lines, lr.line)
			}
		}
		if c.lines == nil {
			c.lines = []int{}
		}
	}
	if k >= 1 && k <= len(c.lines) {
		return c.lines[k-1]
	}
	return k
}
