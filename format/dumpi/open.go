package dumpi

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"kairos/format"
	"kairos/internal/fileio"
	"kairos/trace"
)

func init() {
	format.Register(format.Format{
		Name:        "dumpi",
		Description: "SST DUMPI binary trace (.meta + per-rank .bin files, a directory holding them, or one .bin)",
		Detect:      Detect,
		Hint:        hint,
		Magics:      [][]byte{binary.BigEndian.AppendUint64(nil, headMagic)},
		Starts:      fmt.Sprintf("a .bin file starts with the magic %+q, a .meta file with key=value lines, numprocs= among them", binary.BigEndian.AppendUint64(nil, headMagic)),
		Dir:         "a .meta file and its <prefix>-NNNN.bin files, or the .bin files alone",
		Open:        func(path string) (trace.Source, error) { return Open(path) },
		// Not written: the extensions name its files, for the error
		// about a file of no format.
		Extensions: []string{".meta", ".bin"},
	})
}

// hint names the traces of a directory that holds several, which Detect
// refuses: sst-dumpi writes each run's files beside the last run's; and
// says what is wrong with a file that is nearly a .meta file.
func hint(path string, head []byte) string {
	if head != nil {
		return metaHint(path, head)
	}
	metas, _ := filepath.Glob(filepath.Join(fileio.QuoteGlob(path), "*.meta"))
	if len(metas) < 2 {
		return ""
	}
	for i, m := range metas {
		metas[i] = filepath.Base(m)
	}
	return fmt.Sprintf("a directory holding %d DUMPI traces: give the .meta file of the one to read (%s)", len(metas), strings.Join(metas, ", "))
}

// metaHint says why a file that Detect rejected is nearly a .meta file:
// named .meta without a numprocs= line, or holding one and fileprefix=
// under another name.
func metaHint(path string, head []byte) string {
	procs, prefix := bytes.Contains(head, []byte("numprocs=")), bytes.Contains(head, []byte("fileprefix="))
	switch {
	case strings.HasSuffix(path, ".meta") && !procs:
		return "a .meta file without a numprocs= line: expected DUMPI's key=value lines, numprocs= (the number of ranks) among them"
	case !strings.HasSuffix(path, ".meta") && procs && prefix:
		return "the lines of a DUMPI .meta file (numprocs=, fileprefix=) in a file not named .meta: Kairos reads a DUMPI trace by its .meta file, its directory or a .bin file"
	}
	return ""
}

// Detect reports whether path is a DUMPI trace: a .meta file, a directory
// holding one (or holding NNNN-numbered .bin files), or a file starting
// with the DUMPI magic number.
func Detect(path string, head []byte, isDir bool) bool {
	if isDir {
		_, _, _, err := dirFiles(path)
		return err == nil
	}
	if len(head) >= 8 && binary.BigEndian.Uint64(head) == headMagic {
		return true
	}
	return strings.HasSuffix(path, ".meta") && bytes.Contains(head, []byte("numprocs="))
}

// Open opens a DUMPI trace: a .meta file (its ranks are
// <prefix>-NNNN.bin beside it), a directory holding one .meta or one set
// of <prefix>-NNNN.bin files, or a single .bin file. Rank files may be
// missing (see Trace): the ranks are then numbered by their files'
// NNNN, and without a .meta MPI_COMM_WORLD's size is the largest the
// files show (a rank number, an MPI_Comm_size of MPI_COMM_WORLD, a
// partner in it). A single .bin file of a one-rank run is a one-rank
// trace.
func Open(path string) (*Trace, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	var n int
	var files []rankFile
	meta := false
	switch {
	case st.IsDir():
		n, files, meta, err = dirFiles(path)
	case strings.HasSuffix(path, ".meta"):
		n, files, err = metaFiles(path)
		meta = true
	default:
		n, files = 1, []rankFile{{path: path}}
		if _, digits, ok := binName(path); ok {
			r, err := strconv.Atoi(digits)
			if err != nil || r >= trace.MaxRanks {
				return nil, fmt.Errorf("%s: rank %s in the file name: expected 0 to %d", path, digits, trace.MaxRanks-1)
			}
			n, files[0].rank = r+1, r
		}
	}
	if err != nil {
		return nil, err
	}
	if !meta {
		if n, err = worldFiles(n, files); err != nil {
			return nil, err
		}
	}
	return openFiles(n, files, openOS)
}

// binName splits a rank file's name, <prefix>-NNNN.bin (four digits or
// more), into its prefix and rank digits.
func binName(path string) (prefix, rank string, ok bool) {
	s, okB := strings.CutSuffix(path, ".bin")
	i := strings.LastIndexByte(s, '-')
	if !okB || i < 0 {
		return "", "", false
	}
	prefix, rank = s[:i], s[i+1:]
	return prefix, rank, len(rank) >= 4 && strings.Trim(rank, "0123456789") == ""
}

// dirFiles finds the trace in a directory: its one .meta file, or else
// its one family of <prefix>-NNNN.bin files; meta reports a .meta.
func dirFiles(dir string) (n int, files []rankFile, meta bool, err error) {
	metas, _ := filepath.Glob(filepath.Join(fileio.QuoteGlob(dir), "*.meta"))
	switch len(metas) {
	case 1:
		n, files, err = metaFiles(metas[0])
		return n, files, true, err
	case 0:
	default:
		return 0, nil, false, fmt.Errorf("%s: %d DUMPI .meta files; name one", dir, len(metas))
	}
	bins, _ := filepath.Glob(filepath.Join(fileio.QuoteGlob(dir), "*.bin"))
	prefixes := map[string]bool{}
	for _, b := range bins {
		if prefix, _, ok := binName(b); ok {
			prefixes[prefix] = true
		}
	}
	if len(prefixes) != 1 {
		return 0, nil, false, fmt.Errorf("%s: no DUMPI trace (want one .meta file or one family of <prefix>-NNNN.bin files, found %d)", dir, len(prefixes))
	}
	for p := range prefixes {
		n, files, err = rankFiles(p, -1)
	}
	return n, files, false, err
}

// metaFiles reads a .meta file's numprocs and returns the rank files
// <meta without .meta>-NNNN.bin.
func metaFiles(meta string) (int, []rankFile, error) {
	f, err := os.Open(meta)
	if err != nil {
		return 0, nil, err
	}
	defer f.Close()
	n := -1
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if ok && k == "numprocs" {
			if n, err = strconv.Atoi(strings.TrimSpace(v)); err != nil || n <= 0 || n > trace.MaxRanks {
				return 0, nil, fmt.Errorf("%s:%d: expected numprocs a number of ranks from 1 to %d, got %q", meta, line, trace.MaxRanks, v)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return 0, nil, fmt.Errorf("%s: %w", meta, err)
	}
	if n < 0 {
		return 0, nil, fmt.Errorf("%s: no numprocs= line: not a DUMPI .meta file", meta)
	}
	return rankFiles(strings.TrimSuffix(meta, ".meta"), n)
}

// rankFiles returns the ranks below n (n < 0: up to the highest that
// exists) that have a file prefix-NNNN.bin, in rank order, and n; at
// least one must. The directory is listed once: a .meta claiming millions
// of ranks costs the files that exist, not a look-up or an entry a rank.
func rankFiles(prefix string, n int) (int, []rankFile, error) {
	prefix = filepath.Clean(prefix) // as Glob gives its matches: ./x.meta, a//x.meta
	all, _ := filepath.Glob(fileio.QuoteGlob(prefix) + "-*.bin")
	var files []rankFile
	for _, b := range all {
		if p, digits, ok := binName(b); ok && p == prefix {
			r, err := strconv.Atoi(digits)
			if err != nil || b != fmt.Sprintf("%s-%04d.bin", prefix, r) || n >= 0 && r >= n {
				continue
			}
			if r >= trace.MaxRanks {
				return 0, nil, fmt.Errorf("%s: rank %d in the file name: expected 0 to %d", b, r, trace.MaxRanks-1)
			}
			files = append(files, rankFile{rank: r, path: b})
		}
	}
	slices.SortFunc(files, func(a, b rankFile) int { return cmp.Compare(a.rank, b.rank) })
	if n < 0 && len(files) > 0 {
		n = files[len(files)-1].rank + 1
	}
	if len(files) == 0 {
		return 0, nil, fmt.Errorf("%s-NNNN.bin: none of the %d rank files exists", prefix, max(n, 0))
	}
	return n, files, nil
}

// worldFiles returns the size of MPI_COMM_WORLD of a trace without a
// .meta whose files are those of n ranks, if some are missing: the
// largest an MPI_Comm_size of MPI_COMM_WORLD returned or a rank of
// MPI_COMM_WORLD the files name. A complete family of files is the whole
// world.
func worldFiles(n int, files []rankFile) (int, error) {
	if len(files) == n && n > 1 {
		return n, nil
	}
	for _, f := range files {
		w, err := worldSize(openOS, f.path)
		if err != nil {
			return 0, err
		}
		n = max(n, w)
	}
	return n, nil
}

// maxWorld bounds the MPI_COMM_WORLD a rank's file alone may claim.
const maxWorld = 1 << 20

// worldSize reads a rank file and returns the size of MPI_COMM_WORLD it
// shows: what MPI_Comm_size of MPI_COMM_WORLD returned, else one more
// than the largest rank of MPI_COMM_WORLD a point-to-point call names.
func worldSize(open opener, path string) (int, error) {
	f, info, err := openBin(open, path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	d := newDecoder(f, info)
	size, peers := 0, 0
	for d.next() {
		c := &d.c
		switch {
		case c.label == lCommSize:
			if c.v[field(lCommSize, "comm")] == commWorld {
				size = max(size, int(c.v[field(lCommSize, "size")]))
			}
		case p2pOf(c.label) != nil:
			if f := p2pOf(c.label); c.v[f.comm] == commWorld && c.v[f.peer] >= 0 {
				peers = max(peers, int(min(c.v[f.peer], maxWorld))+1)
			}
		}
	}
	if size == 0 {
		size = peers
	}
	if size > maxWorld {
		return 0, fmt.Errorf("%s: MPI_COMM_WORLD of %d ranks, more than the %d a rank's file alone may claim", path, size, maxWorld)
	}
	return size, d.err
}
