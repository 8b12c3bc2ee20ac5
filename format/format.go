// Package format finds the reader for a trace file by its content and name,
// so that every Kairos command takes every supported format. Each format
// package (format/ti, format/ktr, ...) registers itself in its init.
package format

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"kairos/internal/fileio"
	"kairos/trace"
)

// Format is one trace format Kairos reads (if Open is set) and writes (if
// Write is set).
type Format struct {
	// Name is the short name used by --from/--to flags ("ti", "ktr").
	Name string
	// Description is a one-line description for help texts.
	Description string
	// Detect reports whether path holds a trace in this format. head is
	// the first bytes of the file (decompressed), or nil for a directory.
	// Detect and Open are nil for a format Kairos writes only (GOAL).
	Detect func(path string, head []byte, isDir bool) bool
	// Hint, if not nil, says why a file that no format recognises looks
	// like a broken trace of this format ("" if it does not), for the
	// error Detect returns; head is nil for a directory.
	Hint func(path string, head []byte) string
	// Magics are the byte strings a file of this format starts with
	// (any one): a file that no format recognises but nearly starts with
	// one (cut short, or a byte or two damaged) is named as a damaged
	// file of this format, with the byte that differs.
	Magics [][]byte
	// Starts says what a file of this format starts with, for the error
	// about a file that no format recognises.
	Starts string
	// Dir says what a directory read as a trace of this format holds
	// ("" if none is), for the error about one that no format recognises.
	Dir string
	// Open returns the trace at path as a Source.
	Open func(path string) (trace.Source, error)
	// Write writes src to path atomically; nil if the format is read-only.
	Write func(path string, src trace.Source) error
	// Extensions are file name endings that select this format for
	// writing (".ktr").
	Extensions []string
}

var formats []Format

// Register adds a format. It is called from the format packages' init.
func Register(f Format) {
	// Inserted in place, after the names not greater: each package
	// registers its format when it loads, at every start.
	i := len(formats)
	for i > 0 && formats[i-1].Name > f.Name {
		i--
	}
	formats = slices.Insert(formats, i, f)
}

// All returns the registered formats in name order.
func All() []Format { return append([]Format{}, formats...) }

// ByName returns the format called name.
func ByName(name string) (Format, bool) {
	for _, f := range formats {
		if f.Name == name {
			return f, true
		}
	}
	return Format{}, false
}

// ReadableNames returns the names of the formats Kairos reads,
// comma-separated.
func ReadableNames() string { return names(func(f Format) bool { return f.Open != nil }) }

// ErrUnknownFormat is returned when no format recognises an input.
var ErrUnknownFormat = errors.New("not a trace in any format Kairos reads")

// Detect returns the format of the trace at path.
func Detect(path string) (Format, error) {
	if path == "-" {
		return Format{}, errors.New("a trace cannot be read from standard input (its ranks are read at offsets, or more than once): save it to a file")
	}
	st, err := os.Stat(path)
	if err != nil {
		return Format{}, err
	}
	var head []byte
	if !st.IsDir() {
		head, err = readHead(path)
		if err != nil {
			return Format{}, err
		}
	}
	if st.IsDir() {
		if fs := detectAll(path); len(fs) > 1 {
			return Format{}, fmt.Errorf("%s: a directory holding traces in %d formats (%s): give the file of the one to read: %s",
				path, len(fs), strings.Join(fs, ", "), strings.Join(tracesIn(path, true), ", "))
		}
	}
	if f, ok := detect(path, head, st.IsDir()); ok {
		return f, nil
	}
	return Format{}, fmt.Errorf("%s: %w: %s", path, ErrUnknownFormat, unknownWhy(path, head, st))
}

// unknownWhy says why the file or directory at path, which no format
// recognises, is not a trace: empty, a damaged trace of some format (a
// format's Hint, or a magic with a damaged byte), a directory and what
// it holds, or what its first bytes are and what each format's are.
func unknownWhy(path string, head []byte, st os.FileInfo) string {
	if !st.IsDir() && len(head) == 0 {
		if st.Size() > 0 {
			return "the file decompresses to nothing"
		}
		return "the file is empty"
	}
	for _, f := range formats {
		if f.Hint == nil {
			continue
		}
		if h := f.Hint(path, head); h != "" { // head is nil for a directory
			return h
		}
	}
	if !st.IsDir() {
		if h := nearlyHint(head); h != "" {
			return h
		}
		return unknownHint(path, head)
	}
	if found := tracesIn(path, false); len(found) > 0 {
		return "a directory; the traces in it: " + strings.Join(found, ", ")
	}
	var dirs []string
	for _, f := range formats {
		if f.Dir != "" {
			dirs = append(dirs, fmt.Sprintf("%s: %s", f.Name, f.Dir))
		}
	}
	return "a directory holding no trace directly inside it; a directory read as a trace holds " + strings.Join(dirs, "; ")
}

// detect returns the format that recognises path, if one does.
func detect(path string, head []byte, isDir bool) (Format, bool) {
	for _, f := range formats {
		if f.Detect != nil && f.Detect(path, head, isDir) {
			return f, true
		}
	}
	return Format{}, false
}

// detectAll names the formats that recognise the directory dir (kairos
// tracer writes TI and OTF2 side by side with KAIROS_TRACE_FORMAT=ti,otf2).
func detectAll(dir string) []string {
	var names []string
	for _, f := range formats {
		if f.Detect != nil && f.Detect(dir, nil, true) {
			names = append(names, f.Name)
		}
	}
	return names
}

// maxScan bounds the entries tracesIn looks at, so that pointing a command
// at a large directory by mistake costs little.
const maxScan = 256

// tracesIn names the traces directly inside directory dir (at most three,
// with their format; with perFormat, the first of each format only), for
// the error about a directory that is not itself one trace: a user who
// gives the folder holding a trace learns which path to give instead.
func tracesIn(dir string, perFormat bool) []string {
	d, err := os.Open(dir)
	if err != nil {
		return nil
	}
	names, _ := d.Readdirnames(maxScan)
	d.Close()
	slices.Sort(names)
	var found []string
	seen := map[string]bool{}
	for _, name := range names {
		p := filepath.Join(dir, name)
		st, err := os.Stat(p)
		if err != nil || !st.IsDir() && !st.Mode().IsRegular() {
			continue // a named pipe would block the read
		}
		var head []byte
		if !st.IsDir() {
			if head, err = readHead(p); err != nil {
				continue
			}
		}
		if f, ok := detect(p, head, st.IsDir()); ok && !(perFormat && seen[f.Name]) {
			seen[f.Name] = true
			found = append(found, fmt.Sprintf("%s (%s)", p, f.Name))
			if len(found) == 3 {
				break
			}
		}
	}
	return found
}

func readHead(path string) ([]byte, error) {
	r, err := fileio.Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	head := make([]byte, 4096)
	n, err := io.ReadFull(r, head)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return head[:n], nil
}

// Open detects the format of path and opens it.
func Open(path string) (trace.Source, Format, error) {
	f, err := Detect(path)
	if err != nil {
		return nil, Format{}, err
	}
	src, err := f.Open(path)
	return src, f, err
}

// ForOutput returns the writable format for an output path: the one named
// by name if it is not empty, else the one whose extension path ends with
// (compression suffixes aside).
func ForOutput(path, name string) (Format, error) {
	if name != "" {
		f, ok := ByName(name)
		if !ok || f.Write == nil {
			return Format{}, fmt.Errorf("cannot write format %q (writable: %s)", name, WritableNames())
		}
		return f, nil
	}
	base := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(path), ".gz"), ".zst")
	for _, f := range formats {
		for _, ext := range f.Extensions {
			if f.Write != nil && strings.HasSuffix(base, ext) {
				return f, nil
			}
		}
	}
	return Format{}, fmt.Errorf("%s: cannot tell the output format from the name; use --to (%s)", path, WritableNames())
}

// WritableNames returns the names of the formats Kairos writes,
// comma-separated.
func WritableNames() string { return names(func(f Format) bool { return f.Write != nil }) }

func names(keep func(Format) bool) string {
	var n []string
	for _, f := range formats {
		if keep(f) {
			n = append(n, f.Name)
		}
	}
	return strings.Join(n, ", ")
}
