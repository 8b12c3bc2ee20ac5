package format

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
)

// The error about a file that no format recognises says which format it
// nearly is (a magic with a damaged byte, cut short, or with its line
// endings translated), or else what its first bytes are and what a file
// of each format starts with.

// minMagicPrefix is the fewest bytes of a magic a file cut short within
// it must hold to be named a truncated file of that format.
const minMagicPrefix = 3

// maxMagicDamage is the most bytes of a magic that may differ for a file
// to be named a damaged file of that format (of 7 or 8 bytes: by chance,
// 1 file in 2^40).
const maxMagicDamage = 2

// nearlyHint says which format's magic head nearly starts with, and how
// it differs; "" if none. Of two magics that head is near (ktr's and
// rsd's differ in two bytes), the one fewer bytes differ from is named.
func nearlyHint(head []byte) string {
	best, bestN := "", maxMagicDamage+1
	for _, f := range formats {
		for _, m := range f.Magics {
			if d, n := magicDamage(head, m); d != "" && n < bestN {
				best, bestN = fmt.Sprintf("nearly a trace of format %s: %s", f.Name, d), n
			}
		}
	}
	return best
}

// magicDamage says how head nearly starts with magic: cut short within
// it, one or two bytes changed, or its "\r\n" turned into "\n"; and in
// how many bytes it differs (0 for the first two). It returns "" if head
// does not, or starts with magic.
func magicDamage(head, magic []byte) (string, int) {
	if len(head) < len(magic) {
		if len(head) >= minMagicPrefix && bytes.HasPrefix(magic, head) {
			return fmt.Sprintf("the file's %d bytes are the first of the magic %s (truncated?)", len(head), quote(magic)), 0
		}
		return "", 0
	}
	if crlf := []byte("\r\n"); bytes.Contains(magic, crlf) && bytes.HasPrefix(head, bytes.ReplaceAll(magic, crlf, []byte("\n"))) {
		return fmt.Sprintf("the magic %s has its \\r\\n turned into \\n (a text-mode transfer?)", quote(magic)), 0
	}
	var diff []string
	for i := range magic {
		if head[i] != magic[i] {
			diff = append(diff, byteDamage(i, head[i], magic[i]))
		}
	}
	if len(diff) == 0 || len(diff) > maxMagicDamage {
		return "", 0
	}
	return fmt.Sprintf("%s, in the magic %s (a damaged file?)", strings.Join(diff, ", "), quote(magic)), len(diff)
}

// byteDamage says that byte off is got where want was expected.
func byteDamage(off int, got, want byte) string {
	s := fmt.Sprintf("byte %d is 0x%02x, expected 0x%02x", off, got, want)
	if got == want&0x7f {
		s += " (its high bit cleared: a 7-bit transfer?)"
	}
	return s
}

// quote writes b as a Go string, its bytes outside printable ASCII
// escaped.
func quote(b []byte) string { return fmt.Sprintf("%+q", b) }

// headLen is how many of a file's first bytes the error about a file of
// no format shows.
const headLen = 16

// unknownHint says what the first bytes of a file of no format are, and
// what a file of each format starts with; a file named with a format's
// extension says so.
func unknownHint(path string, head []byte) string {
	n := min(len(head), headLen)
	s := fmt.Sprintf("it starts with %s (% x); ", quote(head[:n]), head[:n])
	if f, ok := byExtension(path); ok {
		return s + fmt.Sprintf("expected, as its name ends in %s, a %s trace: %s", filepath.Ext(path), f.Name, f.Starts)
	}
	var starts []string
	for _, f := range formats {
		if f.Starts != "" {
			starts = append(starts, fmt.Sprintf("%s: %s", f.Name, f.Starts))
		}
	}
	return s + "expected one of " + strings.Join(starts, "; ")
}

// byExtension returns the readable format whose extension path ends
// with (compression suffixes aside).
func byExtension(path string) (Format, bool) {
	base := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(path), ".gz"), ".zst")
	for _, f := range formats {
		for _, ext := range f.Extensions {
			if f.Open != nil && strings.HasSuffix(base, ext) {
				return f, true
			}
		}
	}
	return Format{}, false
}
