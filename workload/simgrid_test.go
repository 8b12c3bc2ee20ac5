package workload_test

import (
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"kairos/format/ti"
	"kairos/internal/testenv"
	"kairos/workload"
)

// TestSimGridReplays: SimGrid 3.32's own replayer (smpirun -replay) runs
// every generated trace, written as per-rank TI files, to its end. SimGrid
// detaches sends under 64 KiB and makes larger ones rendezvous, so this
// also exercises the mixed protocol on real code.
func TestSimGridReplays(t *testing.T) {
	if testing.Short() {
		t.Skip("runs smpirun 11 times; skipped in -short mode")
	}
	smpirun := testenv.Tool(t, "smpirun", "simgrid")
	platform := testenv.Shared(t, "simgrid-replay-tests/examples/platforms/cluster_crossbar.xml")
	dir := t.TempDir()
	for _, kind := range workload.Kinds() {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			n := 9
			src, ok := small(t, kind, n)
			if !ok {
				n = 8
				src, _ = small(t, kind, n)
			}
			desc := filepath.Join(dir, kind)
			st, err := ti.WriteFile(desc, src, ti.WriteOptions{Layout: ti.PerRank})
			if err != nil {
				t.Fatal(err)
			}
			if st.DroppedTotal() > 0 {
				t.Fatalf("TI dropped events: %s", st.String())
			}
			cmd := exec.Command(smpirun, "-replay", kind, "-np", strconv.Itoa(n), "-platform", platform,
				"--log=xbt_cfg.thresh:critical", "--log=smpi_config.thresh:critical")
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "Simulation time") {
				t.Fatalf("smpirun: %v\n%s", err, out)
			}
		})
	}
}
