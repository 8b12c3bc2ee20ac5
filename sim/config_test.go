package sim_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kairos/format/ti"
	"kairos/internal/testenv"
	"kairos/sim"
)

func TestFactors(t *testing.T) {
	f, err := sim.ParseFactors(sim.DefaultBwFactors)
	if err != nil {
		t.Fatal(err)
	}
	// SimGrid 3.32 applies value k strictly above threshold k.
	for _, c := range []struct{ size, want float64 }{
		{0, 1}, {1, 0.812084}, {257, 0.812084}, {258, 0.338112}, {65472, 0.697866}, {65473, 0.940694}, {1e9, 0.940694},
	} {
		if got := f.At(c.size); got != c.want {
			t.Errorf("bw-factor(%g) = %g, want %g", c.size, got, c.want)
		}
	}
	for _, bad := range []string{"1", "x:1", "1:y", "-1:2"} {
		if _, err := sim.ParseFactors(bad); err == nil {
			t.Errorf("ParseFactors(%q) accepted", bad)
		}
	}
}

func TestConfigSet(t *testing.T) {
	c := sim.DefaultConfig()
	for _, kv := range [][2]string{
		{"network/model", "LV08"}, {"network/TCP-gamma", "1000"}, {"network/crosstraffic", "no"},
		{"smpi/send-is-detached-thresh", "1e3"}, {"smpi/test", "0"}, {"maxmin/precision", "1e-6"},
		{"smpi/bcast", "flattree"}, {"smpi/host-speed", "100f"}, {"smpi/simulate-computation", "false"},
		{"smpi/coll-selector", "default"}, {"smpi/os", "0:0:0"}, {"kairos/incremental", "no"},
		{"smpi/iprobe", "2e-4"}, {"smpi/iprobe-cpu-usage", "0.5"},
	} {
		if err := c.Set(kv[0], kv[1]); err != nil {
			t.Errorf("Set(%s, %s): %v", kv[0], kv[1], err)
		}
	}
	if c.Model != sim.ModelLV08 || c.TCPGamma != 1000 || c.CrossTraffic || c.DetachedThreshold != 1000 ||
		c.Colls["bcast"] != "flattree" || c.SimulateComputation || c.Solver != sim.SolverSimGrid ||
		c.IprobeSleep != 2e-4 || c.IprobeCPUUsage != 0.5 {
		t.Errorf("settings not applied: %+v", c)
	}
	for _, kv := range [][2]string{
		{"network/model", "NS3"}, {"network/crosstraffic", "maybe"}, {"smpi/bcast", "nope"},
		{"no/such", "1"}, {"smpi/os", "0:1e-6:0"}, {"network/TCP-gamma", "x"}, {"smpi/coll-selector", "mpich"},
		{"kairos/incremental", "maybe"}, {"smpi/iprobe", "soon"},
	} {
		if err := c.Set(kv[0], kv[1]); err == nil {
			t.Errorf("Set(%s, %s) accepted", kv[0], kv[1])
		}
	}
}

func FuzzConfigSet(f *testing.F) {
	f.Add("smpi/bw-factor", sim.DefaultBwFactors)
	f.Add("network/weight-S", "8775")
	f.Add("smpi/alltoall", "bruck")
	f.Fuzz(func(t *testing.T, k, v string) {
		c := sim.DefaultConfig()
		_ = c.Set(k, v)
	})
}

// FuzzSimulate runs arbitrary TI text: the simulator must return (a
// result or an error), never panic or hang.
func FuzzSimulate(f *testing.F) {
	f.Add(testenv.Figure1Ring)
	f.Add("0 recv 1 0 10\n1 recv 0 0 10\n")
	f.Add("0 isend 1 0 1e5\n0 test 0 1 0\n0 wait 0 1 0\n1 irecv 0 0 1e5\n1 test 0 1 0\n1 waitall\n")
	f.Add("0 barrier\n1 barrier\n0 allreduce 100 1e3\n1 allreduce 100 1e3\n0 alltoall 10 10\n1 alltoall 10 10\n")
	f.Add("0 reducescatter 5 7 1e3\n1 reducescatter 5 7 1e3\n0 alltoallv 10 5 5 10 5 5\n1 alltoallv 10 5 5 10 5 5\n")
	f.Add("0 sendRecv 10 1 10 1 0 0\n1 sendRecv 10 0 10 0 0 0\n0 sleep 0.5\n1 gatherv 5 5 5 0\n")
	dir := f.TempDir()
	m := machineOn(f, clusterXML(f, dir, 4, ""), 4)
	f.Fuzz(func(t *testing.T, text string) {
		p := filepath.Join(t.TempDir(), "f.ti")
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		tr, err := ti.Open(p)
		if err != nil || tr.NumRanks() > 4 {
			return
		}
		if _, err := sim.Run(tr, m, sim.DefaultConfig(), nil); err != nil && strings.Contains(err.Error(), "panic") {
			t.Fatal(err)
		}
	})
}
