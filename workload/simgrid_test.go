package workload_test

import (
	"os"
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
// detaches sends under 64 KiB and makes larger ones rendezvous; the
// messages here are 100,000 bytes, so that blocking sends are
// synchronous.
func TestSimGridReplays(t *testing.T) {
	smpirun := testenv.Tool(t, "smpirun", "simgrid")
	dir := t.TempDir()
	platform := filepath.Join(dir, "cluster.xml")
	if err := os.WriteFile(platform, []byte(clusterXML), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, kind := range workload.Kinds() {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			big := func(p *workload.Params) { p.Bytes = 100000 }
			n := 9
			src, ok := small(t, kind, n, big)
			if !ok {
				n = 8
				src, _ = small(t, kind, n, big)
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
			if err != nil || !strings.Contains(string(out), "Simulation time") || strings.Contains(string(out), "Stalling") {
				t.Fatalf("smpirun: %v\n%s", err, out)
			}
		})
	}
}

// clusterXML is a SimGrid platform of 16 hosts on a star of 1 Gbit/s,
// 50 us links.
const clusterXML = `<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <cluster id="c" prefix="node-" radical="0-15" suffix="" speed="1Gf" bw="125MBps" lat="50us"/>
</platform>
`
