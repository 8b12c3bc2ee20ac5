package platform

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func TestScratchDifferential(t *testing.T) {
	dir := os.Getenv("SCRATCH_DIR")
	if dir == "" {
		t.Skip()
	}
	tool := sgRoutesTool(t)
	files, _ := filepath.Glob(filepath.Join(dir, "*.xml"))
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			out, err := exec.Command(tool, f).Output()
			p, perr := Load(f)
			if err != nil {
				t.Logf("SimGrid fails (%v); we say %v", err, perr)
				return
			}
			if perr != nil {
				t.Fatalf("SimGrid loads it, we fail: %v", perr)
			}
			compareWithSimGrid(t, p, out)
		})
	}
}
