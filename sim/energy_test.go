package sim_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"kairos/sim"
)

func TestParseWattage(t *testing.T) {
	for _, c := range []struct {
		in      string
		pstates int
		want    []sim.PowerRange
		err     string
	}{
		{"100:200", 1, []sim.PowerRange{{100, 100, 200}}, ""},
		{"95.0:120.0:200.0, 93.0:115.0:170.0", 2, []sim.PowerRange{{95, 120, 200}, {93, 115, 170}}, ""},
		{"100:200", 2, nil, "1 power ranges for 2 pstates"},
		{"100", 1, nil, `"100" is not "Idle:AllCores"`},
		{"100:1:2:3", 1, nil, "is not"},
		{"100:lots", 1, nil, `"lots" is not a number of watts`},
		{"100:200 ", 1, nil, `"200 " is not a number`},
	} {
		got, err := sim.ParseWattage(c.in, c.pstates)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("ParseWattage(%q, %d) error %v, want %q", c.in, c.pstates, err, c.err)
		case c.err == "" && (err != nil || fmt.Sprint(got) != fmt.Sprint(c.want)):
			t.Errorf("ParseWattage(%q, %d) = %v, %v; want %v", c.in, c.pstates, got, err, c.want)
		}
	}
}

// energyPlatform has 8 hosts of 2 cores in their second pstate, with an
// energy profile per pstate; hosts without ranks draw their idle power.
const energyPlatform = `<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="z" routing="Full">
    <cluster id="c" prefix="node-" radical="0-6" suffix="" speed="1Gf,500Mf" core="2" bw="125MBps" lat="50us">
      <prop id="wattage_per_state" value="100:120:200, 90:100:150"/>
      <prop id="wattage_off" value="10"/>
    </cluster>
    <zone id="z2" routing="Full">
      <host id="slow" speed="2Gf,1Gf,500Mf" pstate="1" core="1">
        <prop id="wattage_per_state" value="80:200, 70:150, 60:90"/>
      </host>
      <host id="meterless" speed="1Gf"/>
      <router id="gw"/>
      <link id="up" bandwidth="100MBps" latency="100us"/>
      <route src="slow" dst="gw"><link_ctn id="up"/></route>
      <route src="meterless" dst="gw"><link_ctn id="up"/></route>
      <route src="slow" dst="meterless"><link_ctn id="up"/></route>
    </zone>
    <link id="l" bandwidth="100MBps" latency="10us"/>
    <zoneRoute src="c" dst="z2" gw_src="node-c_router" gw_dst="gw"><link_ctn id="l"/></zoneRoute>
  </zone>
</platform>
`

var energyLine = regexp.MustCompile(`Energy consumption of host (\S+): ([0-9.]+) Joules`)
var energyTotal = regexp.MustCompile(`Total energy consumption: ([0-9.]+) Joules \(used hosts: ([0-9.]+) Joules`)

// TestEnergyMatchesSimGrid replays random traces under SimGrid's
// host_energy plugin and requires every host's energy, the total and the
// used hosts' share as SimGrid prints them (6 decimals): ranks two to a
// host on some hosts, computing at once on 2 cores; one host in its second
// pstate; hosts with no rank; a host without a power profile (0 W).
func TestEnergyMatchesSimGrid(t *testing.T) {
	hostEnergyDifferential(t, randomSeeds(t, 60))
}

// hostEnergyDifferential replays seeds random traces on energyPlatform's
// hosts (two ranks on some) with the host energy plugin and settings
// (key:value), with Kairos and SimGrid, and requires the same time and
// joules.
func hostEnergyDifferential(t *testing.T, seeds int, settings ...string) {
	t.Helper()
	dir := t.TempDir()
	xml, p := platformFile(t, dir, "p.xml", energyPlatform)
	names := []string{"node-0", "node-0", "slow", "node-1", "node-2", "node-2", "meterless", "node-3", "node-3", "node-4"}
	energyDifferential(t, dir, xml, writeHostfile(t, dir, names), deployer(t, p, names), len(names), seeds, 17, settings...)
}

// energyDifferential replays seeds random traces of up to maxRanks ranks
// (random stream) with the host energy plugin, with Kairos (on deploy's
// machines) and SimGrid (platform xml, hostfile), and requires the same
// time and energies.
func energyDifferential(t *testing.T, dir, xml, hostfile string, deploy func(int) *sim.Machine, maxRanks, seeds int, stream uint64, settings ...string) {
	t.Helper()
	pluginDifferential(t, dir, xml, hostfile, deploy, maxRanks, seeds, stream, "host_energy",
		func(name string, res *sim.Result, out string) bool { return compareEnergy(t, name, res.Energy, out) }, settings...)
}

// pluginDifferential replays seeds random traces of up to maxRanks ranks
// (random stream) with a SimGrid plugin and settings (key:value), with
// Kairos (on deploy's machines) and SimGrid (platform xml, hostfile), and
// requires the same time and what compare finds in SimGrid's output.
func pluginDifferential(t *testing.T, dir, xml, hostfile string, deploy func(int) *sim.Machine, maxRanks, seeds int, stream uint64,
	plugin string, compare func(name string, res *sim.Result, out string) bool, settings ...string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "desc"), []byte("t.ti\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := sim.DefaultConfig()
	sgArgs := append(setBoth(t, &cfg, settings), "--cfg=plugin:"+plugin)
	if err := cfg.Set("plugin", plugin); err != nil {
		t.Fatal(err)
	}
	failed := 0
	defer func() { t.Logf("%s: %d random traces, %d stalled or aborted in both", plugin, seeds, failed) }()
	for seed := firstSeed(); seed < firstSeed()+seeds; seed++ {
		rng := rand.New(rand.NewPCG(uint64(seed), stream))
		n := 2 + rng.IntN(maxRanks-1)
		text, tr := writeRandomTrace(t, dir, rng, n)
		res, kerr := sim.Run(tr, deploy(n), cfg, nil)
		sg, out, err := runSimGridOut(dir, "desc", xml, hostfile, n, sgArgs...)
		if kerr != nil || err != nil {
			// Link profiles' quirks stall or abort some replays: both must.
			if kerr == nil || err == nil || !linkProfileFailure(kerr) {
				t.Errorf("seed %d: Kairos: %v; SimGrid: %v\n%s", seed, kerr, err, text)
			}
			failed++
			continue
		}
		name := fmt.Sprintf("seed %d (%d ranks)", seed, n)
		timeOK := math.Abs(res.Time-sg) <= 1e-9
		if !timeOK {
			t.Errorf("%s: Kairos %.9f s, SimGrid %.9f s", name, res.Time, sg)
		}
		if !compare(name, res, out) || !timeOK {
			t.Logf("seed %d trace:\n%s", seed, text)
		}
	}
}

// printedClose reports whether Kairos' k is what SimGrid printed as sg with
// %f (to the printed digit, or a relative 1e-6 for large values).
func printedClose(k float64, sg string) bool {
	v, err := strconv.ParseFloat(sg, 64)
	return err == nil && math.Abs(k-v) <= 1e-6*math.Max(1, math.Abs(v))
}

// compareEnergy checks Kairos' energy report against SimGrid's lines.
func compareEnergy(t *testing.T, name string, e *sim.Energy, out string) bool {
	t.Helper()
	ok := true
	m := energyTotal.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("%s: no energy total in SimGrid's output:\n%s", name, out)
	}
	if !printedClose(e.Total, m[1]) || !printedClose(e.Used, m[2]) {
		ok = false
		t.Errorf("%s: total %f, used %f; SimGrid: %s, %s", name, e.Total, e.Used, m[1], m[2])
	}
	byHost := map[string]float64{}
	for _, h := range e.Hosts {
		byHost[h.Host] = h.Joules
	}
	return compareJoules(t, name, "host", byHost, energyLine.FindAllStringSubmatch(out, -1)) && ok
}

// compareJoules checks Kairos' energy of each resource of a kind against
// SimGrid's report lines (name, joules as printed): the same resources,
// each to the printed digit.
func compareJoules(t *testing.T, name, kind string, kairos map[string]float64, lines [][]string) bool {
	t.Helper()
	ok := true
	if len(lines) != len(kairos) {
		ok = false
		t.Errorf("%s: SimGrid reports %d %ss, Kairos %d", name, len(lines), kind, len(kairos))
	}
	for _, l := range lines {
		if k, found := kairos[l[1]]; !found || !printedClose(k, l[2]) {
			ok = false
			t.Errorf("%s: %s %s: Kairos %f J, SimGrid %s J", name, kind, l[1], k, l[2])
		}
	}
	return ok
}

// FuzzParseWattage: any property value gives ranges or an error, never a
// panic, and the ranges given are one per pstate.
func FuzzParseWattage(f *testing.F) {
	for _, s := range []string{"100:200", "95.0:120.0:200.0, 93.0:115.0:170.0", "1:2:3:4", ",", "::", "1e400:2", "-1:nan", "inf:1"} {
		f.Add(s, 1)
		f.Add(s, 2)
	}
	f.Fuzz(func(t *testing.T, s string, pstates int) {
		got, err := sim.ParseWattage(s, pstates)
		if err == nil && len(got) != pstates {
			t.Fatalf("ParseWattage(%q, %d) gave %d ranges", s, pstates, len(got))
		}
	})
}
