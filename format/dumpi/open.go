package dumpi

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"kairos/format"
	"kairos/trace"
)

func init() {
	format.Register(format.Format{
		Name:        "dumpi",
		Description: "SST DUMPI binary trace (.meta + per-rank .bin files, a directory holding them, or one .bin)",
		Detect:      Detect,
		Open:        func(path string) (trace.Source, error) { return Open(path) },
	})
}

// Detect reports whether path is a DUMPI trace: a .meta file, a directory
// holding one (or holding NNNN-numbered .bin files), or a file starting
// with the DUMPI magic number.
func Detect(path string, head []byte, isDir bool) bool {
	if isDir {
		_, err := dirFiles(path)
		return err == nil
	}
	if len(head) >= 8 && binary.BigEndian.Uint64(head) == headMagic {
		return true
	}
	return strings.HasSuffix(path, ".meta") && bytes.Contains(head, []byte("numprocs="))
}

// Open opens a DUMPI trace: a .meta file (its ranks are
// <prefix>-NNNN.bin beside it), a directory holding one .meta or one set
// of <prefix>-NNNN.bin files, or a single .bin file (a one-rank trace).
func Open(path string) (*Trace, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	var paths []string
	switch {
	case st.IsDir():
		paths, err = dirFiles(path)
	case strings.HasSuffix(path, ".meta"):
		paths, err = metaFiles(path)
	default:
		paths = []string{path}
	}
	if err != nil {
		return nil, err
	}
	return OpenFiles(paths)
}

// binName matches a rank file name: <prefix>-NNNN.bin.
var binName = regexp.MustCompile(`^(.*)-(\d{4,})\.bin$`)

// dirFiles finds the trace in a directory: its one .meta file, or else
// its one family of <prefix>-NNNN.bin files.
func dirFiles(dir string) ([]string, error) {
	metas, _ := filepath.Glob(filepath.Join(dir, "*.meta"))
	switch len(metas) {
	case 1:
		return metaFiles(metas[0])
	case 0:
	default:
		return nil, fmt.Errorf("%s: %d DUMPI .meta files; name one", dir, len(metas))
	}
	bins, _ := filepath.Glob(filepath.Join(dir, "*.bin"))
	prefixes := map[string]bool{}
	for _, b := range bins {
		if m := binName.FindStringSubmatch(b); m != nil {
			prefixes[m[1]] = true
		}
	}
	if len(prefixes) != 1 {
		return nil, fmt.Errorf("%s: no DUMPI trace (want one .meta file or one family of <prefix>-NNNN.bin files, found %d)", dir, len(prefixes))
	}
	for p := range prefixes {
		return rankFiles(p, -1)
	}
	return nil, nil
}

// metaFiles reads a .meta file's numprocs and returns the rank files
// <meta without .meta>-NNNN.bin.
func metaFiles(meta string) ([]string, error) {
	f, err := os.Open(meta)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	n := -1
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if ok && k == "numprocs" {
			if n, err = strconv.Atoi(strings.TrimSpace(v)); err != nil || n <= 0 || n > 1<<24 {
				return nil, fmt.Errorf("%s:%d: numprocs %q is not a positive rank count", meta, line, v)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", meta, err)
	}
	if n < 0 {
		return nil, fmt.Errorf("%s: no numprocs= line: not a DUMPI .meta file", meta)
	}
	return rankFiles(strings.TrimSuffix(meta, ".meta"), n)
}

// rankFiles returns prefix-0000.bin ... for n ranks (n < 0: as many as
// exist), checking that each exists.
func rankFiles(prefix string, n int) ([]string, error) {
	if n < 0 {
		all, _ := filepath.Glob(prefix + "-*.bin")
		var ranks []int
		for _, b := range all {
			if m := binName.FindStringSubmatch(b); m != nil && m[1] == prefix {
				r, _ := strconv.Atoi(m[2])
				ranks = append(ranks, r)
			}
		}
		sort.Ints(ranks)
		for i, r := range ranks {
			if r != i {
				return nil, fmt.Errorf("%s-%04d.bin is missing (found rank %d)", prefix, i, r)
			}
		}
		n = len(ranks)
	}
	paths := make([]string, n)
	for r := range paths {
		paths[r] = fmt.Sprintf("%s-%04d.bin", prefix, r)
		if _, err := os.Stat(paths[r]); err != nil {
			return nil, fmt.Errorf("rank %d of %d: %w", r, n, err)
		}
	}
	return paths, nil
}
