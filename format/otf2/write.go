package otf2

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"kairos/internal/fileio"
	"kairos/trace"
)

// Write writes src as an OTF2 archive whose anchor file is path (a name
// ending in .otf2): beside it NAME.def, the global definitions, and the
// directory NAME holding each rank's events (R.evt) and local
// definitions (R.def), NAME being the anchor's base name without .otf2,
// as OTF2 names them. The archive is written as Score-P writes an MPI
// run's: one process and one CPU thread per rank, an MPI region for each
// MPI function called, MPI records between a call's Enter and Leave, the
// trace's call-path tree as user regions (a region "main" around each
// rank if the trace has none), MPI_COMM_WORLD and every communicator of
// Meta.Comms with its members, a timer of one tick per picosecond (the
// model's unit, so that every time is kept exactly).
//
// OTF2 records when every call happens: a trace without timestamps (a
// time-independent one, TI) is refused, naming the way to a timed one
// (kairos simulate --timed-trace). The events' computation between calls
// is the time between them, so that Compute, Sleep and Location events
// are not written; what else the format does not hold is listed in the
// package documentation.
//
// The whole archive is built in a temporary directory beside path, then
// moved into place, its anchor file last (the previous one's first out
// of the way): a failure leaves neither the archive nor the temporary
// directory, and a previous archive of the same name is replaced whole. Memory is one event chunk (1 MiB) and each
// rank's outstanding requests while the events are written, plus the
// definitions.
func Write(path string, src trace.Source) error {
	base := filepath.Base(path)
	name, ok := strings.CutSuffix(base, ".otf2")
	if !ok || name == "" {
		return fmt.Errorf("%s: an OTF2 archive's anchor file is named NAME.otf2 (traces.otf2)", path)
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := fileio.MkdirTemp(dir, "."+base+".tmp*")
	if err != nil {
		return err
	}
	defer fileio.RemoveTemp(tmp)
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	if err := writeAll(filepath.Join(tmp, base), src); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return moveArchive(tmp, dir, name)
}

// writeAll writes every file of the archive whose anchor file is
// anchor: the event files rank by rank, then the definitions, which
// count the events, then the anchor.
func writeAll(anchor string, src trace.Source) error {
	name := strings.TrimSuffix(filepath.Base(anchor), ".otf2")
	dir := filepath.Join(filepath.Dir(anchor), name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	w := newArchiveWriter(src)
	for r := range src.NumRanks() {
		if err := w.writeRank(dir, r); err != nil {
			return err
		}
	}
	ndefs, err := w.writeDefs(filepath.Join(filepath.Dir(anchor), name+".def"))
	if err != nil {
		return err
	}
	return w.writeAnchor(anchor, ndefs)
}

// archiveFile reports whether name is that of a file of an archive's
// directory (NAME/), N.evt, N.def or N.snap: events, local definitions and
// snapshots of location N. (Not a regular expression: compiling one at
// every start of the program took 1% of a small replay.)
func archiveFile(name string) bool {
	i := strings.LastIndexByte(name, '.')
	if i <= 0 {
		return false
	}
	switch name[i+1:] {
	case "evt", "def", "snap":
	default:
		return false
	}
	return strings.Trim(name[:i], "0123456789") == ""
}

// moveArchive moves the archive NAME built in tmp into dir: the
// previous archive's anchor out of the way first (into tmp), so that no
// reader meets an anchor with another archive's files; then the location
// directory, the global definitions, and the anchor, the file a reader
// opens, last. Where the location directory cannot be replaced (it holds
// other files than an archive's), the previous anchor is put back.
func moveArchive(tmp, dir, name string) error {
	anchor := filepath.Join(dir, name+".otf2")
	old := filepath.Join(tmp, "previous.otf2")
	hadOld := os.Rename(anchor, old) == nil
	err := fileio.ReplaceDir(filepath.Join(tmp, name), filepath.Join(dir, name), func(e os.DirEntry) bool {
		return !e.IsDir() && archiveFile(e.Name())
	})
	if err != nil {
		if hadOld {
			os.Rename(old, anchor)
		}
		return err
	}
	for _, f := range []string{name + ".def", name + ".otf2"} {
		if err := os.Rename(filepath.Join(tmp, f), filepath.Join(dir, f)); err != nil {
			return err
		}
	}
	return nil
}

// errUntimed is the error of a trace without timestamps.
var errUntimed = errors.New("OTF2 records when every call happens, and this trace has no timestamps " +
	"(a time-independent trace): simulate it to a timed trace first (kairos simulate IN --timed-trace OUT.otf2)")
