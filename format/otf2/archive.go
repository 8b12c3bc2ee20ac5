package otf2

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"kairos/internal/fileio"
)

// Archive is an open OTF2 archive: its anchor, its global definitions and,
// read on demand, each location's local definitions. Event files are
// opened by OpenLocation and Merged, one chunk per open location in
// memory.
type Archive struct {
	Path   string // anchor file
	Dir    string // directory holding traces.def and traces/
	Name   string // archive name: the anchor file's base name without .otf2
	Anchor *Anchor
	Defs   *Defs

	localsMu  sync.Mutex // guards locals: locations are opened at once (Source.scan)
	locals    map[uint64]*localDefs
	KeepAttrs bool // decode attribute lists into Event.Attrs
}

// anchorPath returns the anchor file of path: path itself, or the single
// *.otf2 file (traces.otf2 first) of a directory.
func anchorPath(path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if !st.IsDir() {
		return path, nil
	}
	p := filepath.Join(path, "traces.otf2")
	if _, err := os.Stat(p); err == nil {
		return p, nil
	}
	m, _ := filepath.Glob(filepath.Join(fileio.QuoteGlob(path), "*.otf2"))
	if len(m) == 1 {
		return m[0], nil
	}
	return "", fmt.Errorf("%s: no OTF2 anchor file (traces.otf2) in the directory", path)
}

// OpenArchive opens the OTF2 archive whose anchor file is path (or the
// directory holding traces.otf2) and reads its global definitions.
func OpenArchive(path string) (*Archive, error) {
	ap, err := anchorPath(path)
	if err != nil {
		return nil, err
	}
	a := &Archive{Path: ap, Dir: filepath.Dir(ap), Name: strings.TrimSuffix(filepath.Base(ap), ".otf2"), locals: map[uint64]*localDefs{}}
	if a.Anchor, err = readAnchor(ap); err != nil {
		return nil, err
	}
	a.Defs = newDefs()
	defPath := filepath.Join(a.Dir, a.Name+".def")
	c, err := openChunkFile(defPath, a.Anchor.DefChunkSize)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: the archive has no global definitions file (%s): its events cannot be read without them", ap, filepath.Base(defPath))
	}
	if err != nil {
		return nil, fmt.Errorf("global definitions: %w", err)
	}
	defer c.Close()
	if err := c.records(a.Defs.add); err != nil {
		return nil, err
	}
	if n, want := a.Defs.NumRecords, a.Anchor.NumGlobalDefs; n != want {
		return nil, fmt.Errorf("%s: %d global definitions, the anchor file (byte 38) announces %d", defPath, n, want)
	}
	a.Defs.finish()
	return a, nil
}

func (a *Archive) locationFile(loc uint64, ext string) string {
	return filepath.Join(a.Dir, a.Name, strconv.FormatUint(loc, 10)+ext)
}

// local returns the local definitions of location loc, reading them once.
func (a *Archive) local(loc uint64) (*localDefs, error) {
	a.localsMu.Lock()
	defer a.localsMu.Unlock()
	if ld, ok := a.locals[loc]; ok {
		return ld, nil
	}
	ld, err := readLocalDefs(a.locationFile(loc, ".def"), a.Anchor.DefChunkSize)
	if err != nil {
		return nil, err
	}
	a.locals[loc] = ld
	return ld, nil
}

// ClockOffsets returns the clock offsets of location loc.
func (a *Archive) ClockOffsets(loc uint64) ([]ClockOffset, error) {
	ld, err := a.local(loc)
	if err != nil {
		return nil, err
	}
	return ld.offsets, nil
}

// Seconds converts clock-corrected ticks to seconds since the global
// offset, with the archive's timer resolution.
func (a *Archive) Seconds(t uint64) float64 {
	c := a.Defs.Clock
	if c.Resolution == 0 {
		return float64(t)
	}
	return float64(int64(t-c.GlobalOffset)) / float64(c.Resolution)
}

// Picoseconds converts clock-corrected ticks to picoseconds since the
// global offset, exactly when the resolution divides 10^12.
func (a *Archive) Picoseconds(t uint64) int64 {
	c := a.Defs.Clock
	d := int64(t - c.GlobalOffset)
	if c.Resolution == 0 {
		return d
	}
	if 1e12%c.Resolution == 0 {
		return d * int64(1e12/c.Resolution)
	}
	q, r := d/int64(c.Resolution), d%int64(c.Resolution)
	return q*1e12 + int64(float64(r)*1e12/float64(c.Resolution)+0.5)
}
