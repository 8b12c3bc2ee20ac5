package ti

import (
	"bytes"
	"io"

	"kairos/format"
	"kairos/internal/fileio"
	"kairos/trace"
)

func init() {
	format.Register(format.Format{
		Name:        "ti",
		Description: "SimGrid 3.32 time-independent trace (shared file, or description + per-rank files)",
		Detect:      Detect,
		Open:        func(path string) (trace.Source, error) { return Open(path) },
		Write: func(path string, src trace.Source) error {
			_, err := WriteFile(path, src, WriteOptions{Layout: LayoutFor(path)})
			return err
		},
		Extensions: []string{".ti"},
	})
}

// Detect reports whether path is a TI trace: a data file whose first line
// SimGrid would read is "<rank> <known action> ...", or a description
// file whose first line names an existing TI data file. head is the
// start of the (decompressed) file.
func Detect(path string, head []byte, isDir bool) bool {
	if isDir {
		return false
	}
	if headIsTI(head) {
		return true
	}
	line := head
	for len(line) > 0 && line[0] == '\n' {
		line = line[1:]
	}
	i := bytes.IndexByte(line, '\n')
	if i < 0 {
		if len(head) >= 4096 {
			return false
		}
		i = len(line)
	}
	if i == 0 || bytes.IndexByte(line[:i], 0) >= 0 {
		return false
	}
	name, err := resolve(path, string(line[:i]))
	if err != nil {
		return false
	}
	f, err := fileio.Open(name)
	if err != nil {
		return false
	}
	defer f.Close()
	h := make([]byte, 4096)
	n, _ := io.ReadFull(f, h)
	return headIsTI(h[:n])
}

// headIsTI reports whether the first significant line of head is a TI
// action line.
func headIsTI(head []byte) bool {
	var p parser
	for len(head) > 0 {
		line := head
		i := bytes.IndexByte(head, '\n')
		if i >= 0 {
			line, head = head[:i], head[i+1:]
		} else {
			head = nil
		}
		if !p.split(line) {
			continue
		}
		if len(p.toks) < 2 {
			return false
		}
		_, ok := parseRank(p.toks[0])
		return ok && knownAction(p.toks[1])
	}
	return false
}
