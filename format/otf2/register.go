package otf2

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"kairos/format"
)

func init() {
	format.Register(format.Format{
		Name:        "otf2",
		Description: "OTF2 archive (Score-P, Vampir): the anchor file traces.otf2 or its directory",
		Detect:      detect,
		Hint:        hint,
		Magics:      [][]byte{anchorMagic(littleEndian), anchorMagic(bigEndian)},
		Starts:      fmt.Sprintf("an anchor file (traces.otf2) starts with 0x03, the byte order (0x%02x or 0x%02x) and %+q", littleEndian, bigEndian, magic+"\x00"),
		Dir:         "traces.otf2",
		Open:        OpenTrace,
		Write:       Write,
		// The anchor file: its archive's other files are beside it.
		Extensions: []string{".otf2"},
	})
}

// anchorMagic returns the first bytes of an anchor file of the given
// byte order.
func anchorMagic(order byte) []byte { return []byte{chunkHeader, order, 'O', 'T', 'F', '2', 0} }

// hint says that path, which is not an anchor file, is one of an
// archive's definition or event files, and names the archive's anchor
// file, which is what Kairos reads.
func hint(path string, head []byte) string {
	ext := filepath.Ext(path)
	if len(head) < 2 || head[0] != chunkHeader || head[1] != littleEndian && head[1] != bigEndian || ext != ".def" && ext != ".evt" {
		return ""
	}
	what := map[string]string{".def": "definitions", ".evt": "events"}[ext]
	anchor := strings.TrimSuffix(path, ext) + ".otf2" // traces.def: traces.otf2
	if _, err := os.Stat(anchor); err != nil {
		anchor = filepath.Dir(path) + ".otf2" // traces/0.evt: traces.otf2
	}
	if _, err := os.Stat(anchor); err != nil {
		return fmt.Sprintf("an OTF2 %s file, one part of an archive: give the archive's anchor file (traces.otf2) or its directory", what)
	}
	return fmt.Sprintf("an OTF2 %s file, one part of an archive: give the archive's anchor file, %s, or its directory", what, anchor)
}

// detect recognises an anchor file by its magic, or a directory holding
// traces.otf2.
func detect(path string, head []byte, isDir bool) bool {
	if isDir {
		st, err := os.Stat(filepath.Join(path, "traces.otf2"))
		return err == nil && !st.IsDir()
	}
	return IsAnchor(head)
}
