package otf2

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"kairos/internal/fileio"
)

// WriteText writes every event of the archive in global order as
// `otf2-print -A` prints its event lines (see AppendText), attribute
// lines included when KeepAttrs is set.
func (a *Archive) WriteText(w io.Writer) error {
	m, err := a.Merged()
	if err != nil {
		return err
	}
	defer m.Close()
	var buf []byte
	for m.Next() {
		buf = a.AppendText(buf[:0], m.Event())
		if _, err := w.Write(buf); err != nil {
			return err
		}
	}
	return m.Err()
}

// ReadPrintOutput returns the event lines of an otf2-print output (the
// lines of its events section, without the headers), the form WriteText
// writes, so that the two compare line by line.
func ReadPrintOutput(r io.Reader) ([]string, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<24)
	var lines []string
	in := false
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "=== Events"):
			in = true
		case !in, strings.HasPrefix(l, "Event "), strings.HasPrefix(l, "-----"), l == "":
		default:
			lines = append(lines, l)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("otf2-print output: %w", err)
	}
	return lines, nil
}

// ReadPrintOutputFile is ReadPrintOutput of a saved otf2-print output
// (".gz" and ".zst" files are decompressed).
func ReadPrintOutputFile(path string) ([]string, error) {
	f, err := fileio.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	lines, err := ReadPrintOutput(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return lines, nil
}
