package sim_test

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"kairos/internal/testenv"
	"kairos/platform"
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

// TestOverhead checks smpi/os-style piecewise overheads against SimGrid
// 3.32's rule (smpi::Host::osend): the first piece also covers the sizes
// up to its threshold, and a size equal to a threshold stays in the piece
// below.
func TestOverhead(t *testing.T) {
	o, err := sim.ParseOverhead("1024:2e-6:1e-9; 0:1e-6:0:0:0")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		size int64
		want float64
	}{
		{0, 1e-6}, {1, 1e-6}, {1024, 1e-6}, {1025, 2e-6 + 1025e-9}, {1 << 20, 2e-6 + float64(1<<20)*1e-9},
	} {
		if got := o.At(c.size); got != c.want {
			t.Errorf("At(%d) = %g, want %g", c.size, got, c.want)
		}
	}
	if got := (sim.Overhead{}).At(100); got != 0 {
		t.Errorf("empty overhead: At = %g", got)
	}
}

func TestConfigSet(t *testing.T) {
	c := sim.DefaultConfig()
	for _, kv := range [][2]string{
		{"network/model", "LV08"}, {"network/TCP-gamma", "1000"}, {"network/crosstraffic", "no"},
		{"smpi/send-is-detached-thresh", "1e3"}, {"smpi/test", "0"}, {"maxmin/precision", "1e-6"},
		{"smpi/bcast", "flattree"}, {"smpi/host-speed", "100f"}, {"smpi/simulate-computation", "false"},
		{"smpi/coll-selector", "ompi"}, {"smpi/allreduce", "ompi"}, {"smpi/os", "0:0:0"}, {"kairos/incremental", "no"},
		{"smpi/iprobe", "2e-4"}, {"smpi/iprobe-cpu-usage", "0.5"}, {"smpi/ois", "0:1e-6:0;1024:2e-6:1e-9"},
		{"smpi/or", "0:0:0:0:0"}, {"smpi/finalization-barrier", "yes"}, {"path", "~/"}, {"tracing/categorized", "yes"},
		{"cpu/optim", "Lazy"}, {"host/model", "compound"}, {"contexts/factory", "thread"}, {"smpi/init", "1e-3"},
		{"smpi/async-small-thresh", "512"},
	} {
		if err := c.Set(kv[0], kv[1]); err != nil {
			t.Errorf("Set(%s, %s): %v", kv[0], kv[1], err)
		}
	}
	if c.Model != sim.ModelLV08 || c.TCPGamma != 1000 || c.CrossTraffic || c.DetachedThreshold != 1000 ||
		c.Colls["bcast"] != "flattree" || c.SimulateComputation || c.Solver != sim.SolverSimGrid ||
		c.IprobeSleep != 2e-4 || c.IprobeCPUUsage != 0.5 || len(c.ISendOverhead) != 2 || len(c.SendOverhead) != 1 ||
		!c.FinalizationBarrier || c.InitSleep != 1e-3 || c.Selector != "ompi" || c.Colls["allreduce"] != "ompi" ||
		c.AsyncSmallThreshold != 512 {
		t.Errorf("settings not applied: %+v", c)
	}
	for _, kv := range [][2]string{
		{"network/model", "NS3"}, {"network/crosstraffic", "maybe"}, {"smpi/bcast", "nope"},
		{"no/such", "1"}, {"smpi/or", "0:1e-6"}, {"network/TCP-gamma", "x"}, {"smpi/coll-selector", "mpich"}, {"smpi/coll-selector", "mvapich2"}, {"smpi/coll-selector", "impi"},
		{"kairos/incremental", "maybe"}, {"smpi/iprobe", "soon"}, {"smpi/os", "0:1e-6"}, {"smpi/ois", "0:-1:0"},
		{"network/loopback-bw", "fast"}, {"network/optim", "TI"}, {"cpu/optim", "TI"}, {"cpu/optim", "Eager"}, {"host/model", "ptask_L07"},
		{"smpi/init", "-1"}, {"smpi/init", "later"}, {"smpi/async-small-thresh", "small"},
	} {
		if err := c.Set(kv[0], kv[1]); err == nil {
			t.Errorf("Set(%s, %s) accepted", kv[0], kv[1])
		}
	}
}

// TestConfigIgnoresRealCodeSettings checks that the settings SimGrid has
// for running real code, which a smpirun command line may carry, are
// accepted and change nothing.
func TestConfigIgnoresRealCodeSettings(t *testing.T) {
	c := sim.DefaultConfig()
	for _, kv := range [][2]string{
		{"smpi/shared-malloc", "none"},
		{"smpi/privatization", "1"}, {"smpi/privatize-libs", "libgfortran.so.5"}, {"smpi/keep-temps", "yes"},
		{"smpi/display-timing", "yes"}, {"smpi/errors-are-fatal", "no"}, {"smpi/pedantic", "yes"},
		{"smpi/trace-call-location", "yes"}, {"smpi/list-leaks", "10"}, {"smpi/comp-adjustment-file", "adj.csv"},
		{"smpi/wtime", "1e-7"}, {"exception/cutpath", "yes"}, {"debug/clean-atexit", "yes"},
		// SimGrid's defaults, which Kairos' model is.
		{"network/optim", "Lazy"},
		{"maxmin/concurrency-limit", "-1"}, {"network/solver", "maxmin"}, {"cpu/model", "Cas01"},
		// Applied by platform.LoadWith.
		{"network/loopback-bw", "1e9"}, {"network/loopback-lat", "0"},
	} {
		if err := c.Set(kv[0], kv[1]); err != nil {
			t.Errorf("Set(%s, %s): %v", kv[0], kv[1], err)
		}
	}
	if want := sim.DefaultConfig(); !reflect.DeepEqual(c, want) {
		t.Errorf("settings for real code changed the configuration:\n got %+v\nwant %+v", c, want)
	}
}

// TestConfigMeasuredComputation: smpi/host-speed and smpi/cpu-threshold,
// which untime a timed trace, read as SimGrid reads them.
func TestConfigMeasuredComputation(t *testing.T) {
	for _, c := range []struct {
		key, value    string
		speed, thresh float64
		err           bool
	}{
		{"smpi/host-speed", "1Gf", 1e9, 1e-6, false},
		{"smpi/host-speed", "20000f", 20000, 1e-6, false},
		{"smpi/host-speed", "2.5e9", 2.5e9, 1e-6, false},
		{"smpi/host-speed", "0", 0, 0, true},
		{"smpi/host-speed", "-1Gf", 0, 0, true},
		{"smpi/host-speed", "fast", 0, 0, true},
		{"smpi/cpu-threshold", "0", 0, 0, false},
		{"smpi/cpu-threshold", "2e-6", 0, 2e-6, false},
		{"smpi/cpu-threshold", "-1", 0, math.Inf(1), false}, // "-1 for infinity"
		{"smpi/cpu-threshold", "soon", 0, 0, true},
	} {
		cfg := sim.DefaultConfig()
		err := cfg.Set(c.key, c.value)
		if (err != nil) != c.err {
			t.Errorf("%s:%s: error %v, want one: %v", c.key, c.value, err, c.err)
			continue
		}
		if err == nil && (cfg.HostSpeed != c.speed || cfg.CPUThreshold != c.thresh) {
			t.Errorf("%s:%s: host speed %g, threshold %g; want %g, %g", c.key, c.value, cfg.HostSpeed, cfg.CPUThreshold, c.speed, c.thresh)
		}
	}
}

// TestConfigRefusesOtherModels: settings Kairos does not model are
// refused, saying what is supported.
func TestConfigRefusesOtherModels(t *testing.T) {
	for _, c := range [][3]string{
		{"maxmin/concurrency-limit", "ten", "not an integer"},
		{"cpu/solver", "bmf", "only maxmin"},
		{"cpu/model", "ptask_L07", "only Cas01"},
		{"network/loopback-bw", "fast", "not a number"},
	} {
		cfg := sim.DefaultConfig()
		if err := cfg.Set(c[0], c[1]); err == nil || !strings.Contains(err.Error(), c[2]) {
			t.Errorf("Set(%s, %s) = %v, want an error saying %q", c[0], c[1], err, c[2])
		}
	}
}

// TestConfigOptim: network/optim:Full replays with or without selective
// update (network/maxmin-selective-update:no is its default),
// cpu/optim:Full with or without it (the CPUs' shares are the same),
// Lazy needs it; both Full modes take concurrency limits and speed
// profiles, the network's link profiles.
func TestConfigOptim(t *testing.T) {
	dir := t.TempDir()
	flat := machineOn(t, clusterXML(t, dir, 4, ""), 4)
	profiled, err := platform.Load(linkProfilePlatform(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	linked := deployer(t, profiled, []string{"node-5", "node-1", "node-2", "node-5"})(4)
	_, speeds := platformFile(t, dir, "speeds.xml", profilePlatform())
	sped := deployer(t, speeds, []string{"node-0", "node-1", "node-2", "node-3"})(4)
	for _, c := range []struct {
		name string
		cfg  []string
		m    *sim.Machine
		err  string
	}{
		{"full", []string{"network/optim:Full"}, flat, ""},
		{"full without selective update", []string{"network/maxmin-selective-update:no", "network/optim:Full"}, flat, ""},
		{"full with selective update", []string{"network/optim:Full", "network/maxmin-selective-update:yes"}, flat, ""},
		{"lazy without selective update", []string{"network/maxmin-selective-update:no"}, flat, "needs network/optim:Full"},
		{"full with a limit", []string{"network/optim:Full", "maxmin/concurrency-limit:2"}, flat, ""},
		{"full with link profiles", []string{"network/optim:Full"}, linked, ""},
		{"full with speed profiles", []string{"network/optim:Full"}, sped, ""},
		{"cpu full", []string{"cpu/optim:Full"}, flat, ""},
		{"cpu and network full", []string{"cpu/optim:Full", "network/optim:Full"}, flat, ""},
		{"cpu full without selective update", []string{"cpu/maxmin-selective-update:no", "cpu/optim:Full"}, flat, ""},
		{"cpu full with selective update", []string{"cpu/optim:Full", "cpu/maxmin-selective-update:yes"}, flat, ""},
		{"cpu lazy without selective update", []string{"cpu/maxmin-selective-update:no"}, flat, "needs cpu/optim:Full"},
		{"cpu full with a limit", []string{"cpu/optim:Full", "maxmin/concurrency-limit:2"}, flat, ""},
		{"cpu full with speed profiles", []string{"cpu/optim:Full"}, sped, ""},
	} {
		cfg := sim.DefaultConfig()
		for _, kv := range c.cfg {
			k, v, _ := strings.Cut(kv, ":")
			if err := cfg.Set(k, v); err != nil {
				t.Fatalf("%s: Set(%s): %v", c.name, kv, err)
			}
		}
		res, err := runTI(t, testenv.Figure1Ring, c.m, cfg)
		switch {
		case c.err == "" && (err != nil || res.Time <= 0):
			t.Errorf("%s: %v", c.name, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: error %v, want one saying %q", c.name, err, c.err)
		}
	}
}

func FuzzConfigSet(f *testing.F) {
	f.Add("smpi/bw-factor", sim.DefaultBwFactors)
	f.Add("network/weight-S", "8775")
	f.Add("smpi/alltoall", "bruck")
	f.Add("smpi/os", "0:1e-6:0;65536:2e-6:1e-9")
	// Issue 43: unknown keys and values that parse but mean nothing.
	f.Add("smpi/bogus", "1")
	f.Add("smpi/host-speed", "NaNf")
	f.Add("smpi/host-speed", "1e308Gf")
	f.Add("smpi/host-speed", "-1Gf")
	f.Fuzz(func(t *testing.T, k, v string) {
		c := sim.DefaultConfig()
		_ = c.Set(k, v)
	})
}

// FuzzSimulate runs arbitrary TI text, with the default settings, with
// SMPI's overheads set, with the collective algorithms whose sizes are
// computed for all members at once, with Open MPI's rules and with the
// algorithms that carry requests across phases or are built from other
// collectives, with a concurrency limit and with SimGrid's full updates:
// the simulator must return (a result or an error), never panic or hang.
func FuzzSimulate(f *testing.F) {
	for _, seed := range sim.SeedTexts {
		f.Add(seed)
	}
	dir := f.TempDir()
	m := machineOn(f, clusterXML(f, dir, 4, ""), 4)
	over := sim.DefaultConfig()
	for k, v := range map[string]string{"smpi/os": "0:1e-5:1e-9", "smpi/ois": "0:2e-5:0", "smpi/or": "0:3e-6:0;100:1e-5:0"} {
		if err := over.Set(k, v); err != nil {
			f.Fatal(err)
		}
	}
	// The algorithms whose members' sizes depend on one another's.
	algos := sim.DefaultConfig()
	for k, v := range map[string]string{"smpi/bcast": "scatter_rdb_allgather", "smpi/allgather": "rdb",
		"smpi/reduce": "binomial", "smpi/gather": "ompi_binomial", "smpi/scatter": "ompi_binomial"} {
		if err := algos.Set(k, v); err != nil {
			f.Fatal(err)
		}
	}
	// Open MPI's rules, and the algorithms that carry requests across
	// phases or are built from other collectives.
	ompi := sim.DefaultConfig()
	pipes := sim.DefaultConfig()
	for _, kv := range [][3]string{{"o", "smpi/coll-selector", "ompi"}, {"p", "smpi/bcast", "NTSB"}, {"p", "smpi/reduce", "ompi_chain"},
		{"p", "smpi/reduce_scatter", "ompi_ring"}, {"p", "smpi/allreduce", "ompi_ring_segmented"}, {"p", "smpi/gather", "ompi_linear_sync"},
		{"p", "smpi/allgatherv", "GB"}, {"p", "smpi/alltoallv", "ompi_basic_linear"}} {
		cfg := map[string]*sim.Config{"o": &ompi, "p": &pipes}[kv[0]]
		if err := cfg.Set(kv[1], kv[2]); err != nil {
			f.Fatal(err)
		}
	}
	// Speed profiles and the link energy plugin, on the hosts and links of
	// TestSpeedProfilesMatchSimGrid and TestLinkEnergyMatchesSimGrid.
	_, pp := platformFile(f, dir, "profiles.xml", profilePlatform())
	profiled := deployer(f, pp, []string{"node-0", "big-0", "node-2", "node-0"})(4)
	both := sim.DefaultConfig()
	for _, v := range []string{"host_energy", "link_energy"} {
		if err := both.Set("plugin", v); err != nil {
			f.Fatal(err)
		}
	}
	// The InfiniBand model, with the energy plugin.
	ib := sim.DefaultConfig()
	for k, v := range map[string]string{"network/model": "IB", "plugin": "host_energy"} {
		if err := ib.Set(k, v); err != nil {
			f.Fatal(err)
		}
	}
	// SMPI's small-message mode, with the overheads and with the
	// algorithms that carry requests across phases.
	async, asyncPipes := over, pipes
	for _, cfg := range []*sim.Config{&async, &asyncPipes} {
		if err := cfg.Set("smpi/async-small-thresh", "1000"); err != nil {
			f.Fatal(err)
		}
	}
	// Links whose bandwidth and latency change, with SimGrid's quirks and
	// without, under SimGrid's full update of the network and under a
	// concurrency limit (full and limited, below).
	lp, err := platform.Load(linkProfilePlatform(f, dir))
	if err != nil {
		f.Fatal(err)
	}
	linked := deployer(f, lp, []string{"node-5", "node-1", "node-2", "node-5"})(4)
	fixed := sim.DefaultConfig()
	if err := fixed.Set("kairos/simgrid-quirks", "no"); err != nil {
		f.Fatal(err)
	}
	// SimGrid's full update of the network, with the overheads, and of
	// the network and the CPUs with the IB model.
	full, fullIB := over, ib
	for _, cfg := range []*sim.Config{&full, &fullIB} {
		if err := cfg.Set("network/optim", "Full"); err != nil {
			f.Fatal(err)
		}
	}
	if err := fullIB.Set("cpu/optim", "Full"); err != nil {
		f.Fatal(err)
	}
	// A concurrency limit that binds (with overheads, whose sleeps hold
	// CPU slots), also with two ranks on a host.
	limited := over
	if err := limited.Set("maxmin/concurrency-limit", "1"); err != nil {
		f.Fatal(err)
	}
	limitedFull := limited
	for _, k := range []string{"network/optim", "cpu/optim"} {
		if err := limitedFull.Set(k, "Full"); err != nil {
			f.Fatal(err)
		}
	}
	f.Fuzz(func(t *testing.T, text string) {
		tr := sim.TraceOfText(t, text)
		if tr == nil {
			return
		}
		for _, cfg := range []sim.Config{sim.DefaultConfig(), over, algos, ompi, pipes, ib, async, asyncPipes, limited, full, fullIB, limitedFull} {
			if _, err := sim.Run(tr, m, cfg, nil); err != nil && strings.Contains(err.Error(), "panic") {
				t.Fatal(err)
			}
		}
		// Hosts whose speed changes, and links that count energy.
		for _, cfg := range []sim.Config{both, limited} {
			if _, err := sim.Run(tr, profiled, cfg, nil); err != nil && strings.Contains(err.Error(), "panic") {
				t.Fatal(err)
			}
		}
		for _, cfg := range []sim.Config{sim.DefaultConfig(), fixed, full, limited} {
			if _, err := sim.Run(tr, linked, cfg, nil); err != nil && strings.Contains(err.Error(), "panic") {
				t.Fatal(err)
			}
		}
	})
}

// TestPlatformSettingErrors: a bad <config> setting or overhead host
// property is an error naming the platform file, the line of the <prop>
// (and the host).
func TestPlatformSettingErrors(t *testing.T) {
	for _, c := range []struct{ xml, want string }{
		{`<config><prop id="no/such" value="1"/></config>`, "<config>: --cfg no/such"},
		{`<config><prop id="smpi/os" value="0:x:0"/></config>`, "<config>: --cfg smpi/os"},
		{`<config><prop id="cpu/optim" value="TI"/></config>`, "<config>: --cfg cpu/optim"},
		{`<zone id="z" routing="Full"><host id="h" speed="1Gf"><prop id="smpi/ois" value="1"/></host></zone>`, "host h: property smpi/ois"},
	} {
		path := filepath.Join(t.TempDir(), "p.xml")
		xml := "<?xml version='1.0'?>\n<platform version=\"4.1\">\n" + c.xml
		if !strings.Contains(c.xml, "<zone") {
			xml += `<zone id="z" routing="Full"><host id="h" speed="1Gf"/></zone>`
		}
		if err := os.WriteFile(path, []byte(xml+"</platform>\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		p, err := platform.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		cfg := sim.DefaultConfig()
		err = sim.ApplyPlatformConfig(&cfg, p, nil)
		if err == nil {
			_, err = sim.FromPlatform(p, p.Hosts)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), path+":3: <prop> attribute value") {
			t.Errorf("%s: error %v, want one naming %s:3 and %q", c.xml, err, path, c.want)
		}
	}
}
