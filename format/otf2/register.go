package otf2

import (
	"os"
	"path/filepath"

	"kairos/format"
)

func init() {
	format.Register(format.Format{
		Name:        "otf2",
		Description: "OTF2 archive (Score-P): the anchor file traces.otf2 or its directory; read only",
		Detect:      detect,
		Open:        OpenTrace,
	})
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
