package ti

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"kairos/format"
	"kairos/internal/fileio"
	"kairos/trace"
)

func init() {
	format.Register(format.Format{
		Name:        "ti",
		Description: "SimGrid 3.32 time-independent trace (shared file, or description + per-rank files)",
		Detect:      Detect,
		Hint:        hint,
		Starts:      `a line "RANK ACTION ...", such as "0 init" (a shared or a rank's file), or a rank's file name a line (a description)`,
		Dir:         IndexName + " (a description, as kairos tracer writes)",
		Open:        func(path string) (trace.Source, error) { return Open(path) },
		Write: func(path string, src trace.Source) error {
			_, err := WriteFile(path, src, WriteOptions{Layout: LayoutFor(path)})
			return err
		},
		// .txt is the description of the per-rank layout, as the tracer
		// and SimGrid's examples name it (index.txt).
		Extensions: []string{".ti", ".txt"},
	})
}

// hint says why path, which Detect rejected, looks like a trace
// description whose first file is missing or empty: a first line of one
// token that ends like a trace file's name.
func hint(path string, head []byte) string {
	if bytes.HasPrefix(head, []byte("\xef\xbb\xbf")) && headIsTI(head[3:]) {
		return "a TI trace that starts with a UTF-8 byte-order mark, which SimGrid reads as part of the first rank: remove it"
	}
	if h := rankHint(head); h != "" {
		return h
	}
	line, _, _ := bytes.Cut(bytes.TrimLeft(head, "\n"), []byte("\n"))
	name := string(bytes.TrimSpace(line))
	if name == "" || bytes.ContainsAny(line, " \t\x00") || !strings.HasSuffix(name, ".txt") && !strings.Contains(name, ".ti") {
		return ""
	}
	file, err := resolve(path, name)
	if err != nil {
		return fmt.Sprintf("read as a SimGrid trace description (one trace file a line), %v", err)
	}
	if st, err := os.Stat(file); err == nil && st.Size() == 0 {
		return fmt.Sprintf("read as a SimGrid trace description (one trace file a line), its first trace file %s is empty: "+
			"kairos tracer writes a rank's trace every 64 KiB and at MPI_Finalize, so a run that aborted or was killed leaves empty or cut-short files", file)
	}
	return ""
}

// Detect reports whether path is a TI trace: a data file whose first line
// SimGrid would read is "<rank> <known action> ...", or a description
// file whose first lines name existing data files, the first of them
// that is not empty a TI one. Empty files before it are the ranks of a
// run that aborted or was killed before their tracer wrote anything
// (kairos tracer writes a rank's trace every 64 KiB, at MPI_Abort on the
// rank that calls it, and at MPI_Finalize): the run is read, cut short,
// as check says, rather than refused because rank 0's file is empty.
// head is the start of the (decompressed) file.
func Detect(path string, head []byte, isDir bool) bool {
	if isDir {
		return detectDir(path)
	}
	if headIsTI(head) {
		return true
	}
	for rest := head; ; {
		for len(rest) > 0 && rest[0] == '\n' {
			rest = rest[1:]
		}
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			if len(head) >= 4096 {
				return false // the line is cut by the end of head
			}
			i = len(rest)
		}
		if i == 0 || bytes.IndexByte(rest[:i], 0) >= 0 {
			return false
		}
		name, err := resolve(path, string(rest[:i]))
		if err != nil {
			return false
		}
		h, ok := firstBytes(name)
		if !ok || len(h) > 0 {
			return ok && headIsTI(h)
		}
		rest = rest[i:]
	}
}

// firstBytes returns the first 4 KiB of the (decompressed) file at path,
// and whether it could be opened.
func firstBytes(path string) ([]byte, bool) {
	f, err := fileio.Open(path)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	h := make([]byte, 4096)
	n, _ := io.ReadFull(f, h)
	return h[:n], true
}

// IndexName is the description file kairos tracer writes in its trace
// directory: a directory holding one is read as the trace it describes.
const IndexName = "index.txt"

// indexOf returns the description file of the trace directory path, or
// path itself if it is not a directory holding one.
func indexOf(path string) string {
	if st, err := os.Stat(path); err != nil || !st.IsDir() {
		return path
	}
	index := filepath.Join(path, IndexName)
	if st, err := os.Stat(index); err != nil || !st.Mode().IsRegular() {
		return path
	}
	return index
}

// detectDir reports whether dir holds a TI description file (IndexName).
func detectDir(dir string) bool {
	index := indexOf(dir)
	if index == dir {
		return false
	}
	h, ok := firstBytes(index)
	return ok && Detect(index, h, false)
}

// rankHint says what is wrong with the rank of a first line that is
// otherwise a TI action line ("-1 init", "01 send ..."), or with the
// action of one whose rank is right ("0 inxt"), "" if nothing.
func rankHint(head []byte) string {
	var p parser
	for n := 1; len(head) > 0; n++ {
		line := head
		if i := bytes.IndexByte(head, '\n'); i >= 0 {
			line, head = head[:i], head[i+1:]
		} else {
			head = nil
		}
		if !p.split(line) {
			continue
		}
		if len(p.toks) < 2 {
			return ""
		}
		_, rankOK := parseRank(p.toks[0])
		switch {
		case !rankOK && knownAction(p.toks[1]):
			return fmt.Sprintf("line %d reads as a TI action, but for its rank %q: expected 0 to %d, written as SimGrid matches actor names (no sign, no leading zero)", n, p.toks[0], trace.MaxRanks-1)
		case rankOK && isWord(p.toks[1]):
			return fmt.Sprintf("line %d reads as a TI action of rank %s, but for its action: expected a SimGrid 3.32 action name (init, send, recv, compute, ...), got %q", n, p.toks[0], p.toks[1])
		}
		return ""
	}
	return ""
}

// isWord reports whether tok could be an action's name that a damaged
// byte changed ("inxt"): three letters or underscores or more.
func isWord(tok []byte) bool {
	if len(tok) < 3 {
		return false
	}
	for _, c := range tok {
		if (c|0x20 < 'a' || c|0x20 > 'z') && c != '_' {
			return false
		}
	}
	return true
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
