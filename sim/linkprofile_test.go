package sim_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"kairos/platform"
	"kairos/platform/platformtest"
	"kairos/sim"
)

// linkProfilePlatform is 6 hosts in a Full zone, each with its own link
// (node-5's SPLITDUPLEX) to a shared backbone. The backbone and the links
// of node-1, node-3 and node-5 have bandwidth profiles, the links of
// node-2 and node-5 latency profiles, and node-4 a speed profile, with
// events while random traces run, at dates no two profiles share but 0
// (applied before the replay starts, as SimGrid's presolve does). The links but node-5's draw power
// (wattage_range).
func linkProfilePlatform(t testing.TB, dir string) string {
	t.Helper()
	files := map[string]string{
		"bb-bw.txt":  "0.0021 50000000\n0.0057 200000000\nLOOPAFTER 0.004\n",
		"l1-bw.txt":  "0.00137 30000000\n0.00311 125000000\nPERIODICITY 0.0047\n",
		"l5-bw.txt":  "0.00089 300000000\n0.00263 60000000\nPERIODICITY 0.0061\n",
		"l2-lat.txt": "0.00173 0.0002\n0.00391 0.000005\nPERIODICITY 0.0053\n",
		"l5-lat.txt": "0.00241 0.00012\n0.00457 0.00003\nPERIODICITY 0.0071\n",
		"l3-bw.txt":  "0 60000000\n0.00449 125000000\nPERIODICITY 0.0091\n",
		"h4.txt":     "0 0.7\n0.00373 1.3\nPERIODICITY 0.0083\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var b strings.Builder
	b.WriteString(`<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="z" routing="Full">
`)
	const n = 6
	for i := 0; i < n; i++ {
		speed := ""
		if i == 4 {
			speed = ` speed_file="h4.txt"`
		}
		fmt.Fprintf(&b, "    <host id=\"node-%d\" speed=\"1Gf\"%s/>\n", i, speed)
	}
	extra := map[int]string{1: ` bandwidth_file="l1-bw.txt"`, 2: ` latency_file="l2-lat.txt"`, 3: ` bandwidth_file="l3-bw.txt"`,
		5: ` sharing_policy="SPLITDUPLEX" bandwidth_file="l5-bw.txt" latency_file="l5-lat.txt"`}
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "    <link id=\"l%d\" bandwidth=\"125MBps\" latency=\"50us\"%s>", i, extra[i])
		if i != 5 {
			fmt.Fprintf(&b, "<prop id=\"wattage_range\" value=\"%d:%d\"/>", 10+i, 30+2*i)
		}
		b.WriteString("</link>\n")
	}
	b.WriteString("    <link id=\"bb\" bandwidth=\"250MBps\" latency=\"20us\" bandwidth_file=\"bb-bw.txt\"><prop id=\"wattage_range\" value=\"50:200\"/></link>\n")
	ctn := func(i int, up bool) string {
		switch {
		case i != 5:
			return fmt.Sprintf(`<link_ctn id="l%d"/>`, i)
		case up:
			return `<link_ctn id="l5" direction="UP"/>`
		}
		return `<link_ctn id="l5" direction="DOWN"/>`
	}
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if i != j {
				fmt.Fprintf(&b, "    <route src=\"node-%d\" dst=\"node-%d\" symmetrical=\"NO\">%s<link_ctn id=\"bb\"/>%s</route>\n", i, j, ctn(i, true), ctn(j, false))
			}
		}
	}
	b.WriteString("  </zone>\n</platform>\n")
	path := filepath.Join(dir, "links.xml")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// simgridDeadlock is the line SimGrid prints when the replay stalls.
var simgridDeadlock = regexp.MustCompile(`^\[([0-9.]+)\] Oops! Deadlock detected`)

// TestLinkProfilesMatchSimGrid replays random traces on links whose
// bandwidth and latency change over time, with one and two ranks per
// host: the times must be SimGrid's. Where a profile event enables a flow
// still paying its latency, SimGrid never reschedules it unless a later
// re-solve reports it, and may stall: Kairos must then report a deadlock
// at SimGrid's date.
func TestLinkProfilesMatchSimGrid(t *testing.T) {
	t.Parallel()
	seeds := randomSeeds(t, 80)
	dir := t.TempDir()
	xml := linkProfilePlatform(t, dir)
	p, err := platform.Load(xml)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		names []string
		cfg   []string
	}{
		{[]string{"node-0", "node-1", "node-2", "node-3", "node-4", "node-5"}, nil},
		{[]string{"node-5", "node-1", "node-2", "node-5", "node-0", "node-2", "node-3", "node-1"}, nil},
		// Latencies paid at once: fewer flows an event finds paying theirs.
		{[]string{"node-0", "node-1", "node-2", "node-3", "node-4", "node-5"}, []string{"smpi/lat-factor:0:0.1"}},
		{[]string{"node-5", "node-1", "node-2", "node-5", "node-0", "node-2", "node-3", "node-1"}, []string{"smpi/lat-factor:0:0.1", "network/crosstraffic:0"}},
		// A concurrency limit: the flows an event enables may be staged.
		{[]string{"node-5", "node-1", "node-2", "node-5", "node-0", "node-2", "node-3", "node-1"}, []string{"smpi/lat-factor:0:0.1", "maxmin/concurrency-limit:2"}},
		// SimGrid's full update, which counts a flow enabled early down
		// from then on, its latency too: nothing stalls.
		{[]string{"node-0", "node-1", "node-2", "node-3", "node-4", "node-5"}, []string{"network/optim:Full"}},
		{[]string{"node-5", "node-1", "node-2", "node-5", "node-0", "node-2", "node-3", "node-1"}, []string{"network/optim:Full", "maxmin/concurrency-limit:2"}},
	} {
		linkProfileDifferential(t, dir, xml, p, c.names, firstSeed(), seeds, c.cfg)
	}
}

// linkProfileDifferential replays random traces (seeds of them, from
// first) on platform p (file xml), ranks placed round-robin on names, with
// settings cfg, in Kairos and SimGrid: both must end at the same time, or
// stall at the same date, or abort on a negative penalty.
func linkProfileDifferential(t *testing.T, dir, xml string, p *platform.Platform, names []string, first, seeds int, cfg []string) {
	t.Helper()
	kcfg := sim.DefaultConfig()
	sgArgs := setBoth(t, &kcfg, cfg)
	hostfile := writeHostfile(t, dir, names)
	if err := os.WriteFile(filepath.Join(dir, "desc"), []byte("t.ti\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	deploy := deployer(t, p, names)
	stalled, aborted, lost := 0, 0, 0
	for seed := first; seed < first+seeds; seed++ {
		rng := rand.New(rand.NewPCG(uint64(seed), 13))
		n := 2 + rng.IntN(7)
		text, tr := writeRandomTrace(t, dir, rng, n)
		res, kerr := sim.Run(tr, deploy(n), kcfg, nil)
		_, out, _ := runSimGridOut(dir, "desc", xml, hostfile, n, sgArgs...)
		sg, sgStalled := simgridEnd(out)
		var dl *sim.DeadlockError
		switch {
		case strings.Contains(out, "Cannot saturate more a constraint that has no active element"):
			// SimGrid's solver lost track of a constraint's flows
			// (an assertion of lmm::MaxMin::do_solve) where Kairos
			// goes on: not compared (see TestRandomProfiledGraphsMatchSimGrid).
			lost++
		case strings.Contains(out, "Variable penalty should not be negative!"):
			if kerr == nil || !strings.Contains(kerr.Error(), "should not be negative") {
				t.Errorf("%v seed %d (%d ranks): SimGrid aborts on a negative penalty, Kairos: %v\n%s", cfg, seed, n, kerr, text)
			}
			aborted++
		case sg < 0:
			t.Fatalf("%v seed %d: SimGrid printed no end:\n%s", cfg, seed, out)
		case errors.As(kerr, &dl):
			if !sgStalled || math.Abs(dl.Time-sg) > 1e-9 {
				t.Errorf("%v seed %d (%d ranks): Kairos: %v; SimGrid: %s\n%s", cfg, seed, n, kerr, out, text)
			}
			stalled++
		case kerr != nil:
			t.Errorf("%v seed %d: %v\n%s", cfg, seed, kerr, text)
		case sgStalled || math.Abs(res.Time-sg) > 1e-9:
			t.Errorf("%v seed %d (%d ranks): Kairos %.9f, SimGrid %.9f (stalled: %v)\n%s", cfg, seed, n, res.Time, sg, sgStalled, text)
		}
	}
	t.Logf("%s, %d hosts in the hostfile, %v: %d random traces, %d ended, %d stalled and %d aborted in both, %d on which SimGrid's solver asserts",
		filepath.Base(xml), len(names), cfg, seeds, seeds-stalled-aborted-lost, stalled, aborted, lost)
}

// TestLinkProfilesEnergyMatchesSimGrid: with the link_energy plugin, whose
// power takes the bandwidth a link has when it updates, every link's energy
// is SimGrid's (latencies paid at once, so that few replays stall), with
// SimGrid's lazy and full updates of the network.
func TestLinkProfilesEnergyMatchesSimGrid(t *testing.T) {
	t.Parallel()
	seeds := randomSeeds(t, 60)
	dir := t.TempDir()
	xml := linkProfilePlatform(t, dir)
	p, err := platform.Load(xml)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"node-5", "node-1", "node-2", "node-5", "node-0", "node-2", "node-3", "node-1"}
	for _, cfg := range [][]string{{"smpi/lat-factor:0:0.1"}, {"smpi/lat-factor:0:0.1", "network/optim:Full"}} {
		pluginDifferential(t, dir, xml, writeHostfile(t, dir, names), deployer(t, p, names), len(names), seeds, 31, "link_energy",
			func(name string, res *sim.Result, out string) bool {
				return compareLinkEnergy(t, name, res.LinkEnergy, out)
			}, cfg...)
	}
}

// TestLinkProfilesWithoutQuirks replays the random traces of
// TestLinkProfilesMatchSimGrid, on which SimGrid's quirks stall or abort
// most replays, with those quirks fixed: every replay must end, and the
// analytic mode must end too.
func TestLinkProfilesWithoutQuirks(t *testing.T) {
	dir := t.TempDir()
	p, err := platform.Load(linkProfilePlatform(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"node-5", "node-1", "node-2", "node-5", "node-0", "node-2", "node-3", "node-1"}
	deploy := deployer(t, p, names)
	fixed := sim.DefaultConfig()
	if err := fixed.Set("kairos/simgrid-quirks", "no"); err != nil {
		t.Fatal(err)
	}
	analytic := sim.DefaultConfig()
	analytic.Analytic = true
	for seed := 0; seed < 80; seed++ {
		rng := rand.New(rand.NewPCG(uint64(seed), 13))
		n := 2 + rng.IntN(7)
		text, tr := writeRandomTrace(t, dir, rng, n)
		for _, cfg := range []sim.Config{fixed, analytic} {
			res, err := sim.Run(tr, deploy(n), cfg, nil)
			if err != nil || !(res.Time > 0) {
				t.Fatalf("seed %d (analytic %v): %v\n%s", seed, cfg.Analytic, err, text)
			}
		}
	}
}

// linkProfileFailure reports whether err is a replay that link profiles'
// quirks stalled or aborted.
func linkProfileFailure(err error) bool {
	var dl *sim.DeadlockError
	return errors.As(err, &dl) && dl.Stalled > 0 || strings.Contains(err.Error(), "should not be negative")
}

// simgridEnd returns the simulated time smpirun's output ends at (its
// last "Simulation time", or the date the replay stalled at), and whether
// it stalled, or -1.
func simgridEnd(out string) (float64, bool) {
	end := -1.0
	for _, line := range strings.Split(out, "\n") {
		if m := simgridDeadlock.FindStringSubmatch(line); m != nil {
			v, _ := strconv.ParseFloat(m[1], 64)
			return v, true
		}
		if m := simgridClock.FindStringSubmatch(line); m != nil {
			end, _ = strconv.ParseFloat(m[1], 64)
		}
	}
	return end, false
}

// TestPenaltyFoldLinkEnergy replays a random trace (seed 240097 of
// TestLinkProfilesEnergyMatchesSimGrid's stream) in which two transfers,
// A->B and B->A over links of different bandwidths, are due at the same
// date. SimGrid adds weight-S/bw to a transfer's latency link after link
// in route order, so their sharing penalties, and their shares, differ in
// the last bit: under network/optim:Full one ends a step after the other,
// after a re-solve that raises the other's share, and the link energy
// plugin's last update of l1 sees that share. Kairos, which multiplied
// weight-S by the sum of 1/bw, ended them together: l1's energy was
// 0.381090 J under Full. The expected lines are SimGrid 3.32's (smpirun
// -replay with --cfg=smpi/lat-factor:0:0.1 --cfg=plugin:link_energy, the
// hostfile below).
func TestPenaltyFoldLinkEnergy(t *testing.T) {
	text, err := os.ReadFile(filepath.Join("testdata", "penalty-fold.ti"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := platform.Load(linkProfilePlatform(t, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	m := deployer(t, p, []string{"node-5", "node-1", "node-2", "node-5", "node-0", "node-2", "node-3", "node-1"})(6)
	const others = `Energy consumption of link 'bb': 2.648511 Joules
Energy consumption of link 'l0': 0.379674 Joules
Energy consumption of link 'l2': 0.464443 Joules
Energy consumption of link 'l3': 0.263171 Joules
Energy consumption of link 'l4': 0.283415 Joules
Energy consumption of link 'l5_DOWN': 0.000000 Joules
Energy consumption of link 'l5_UP': 0.000000 Joules
`
	for _, c := range []struct{ optim, simgrid string }{
		{"Lazy", "Total energy over all links: 4.420304\nEnergy consumption of link 'l1': 0.381090 Joules\n" + others},
		{"Full", "Total energy over all links: 4.420315\nEnergy consumption of link 'l1': 0.381101 Joules\n" + others},
	} {
		cfg := sim.DefaultConfig()
		for k, v := range map[string]string{"smpi/lat-factor": "0:0.1", "plugin": "link_energy", "network/optim": c.optim} {
			if err := cfg.Set(k, v); err != nil {
				t.Fatal(err)
			}
		}
		res, err := runTI(t, string(text), m, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(res.Time-0.020243941) > 1e-9 {
			t.Errorf("network/optim:%s: %.9f s, SimGrid 0.020243941 s", c.optim, res.Time)
		}
		compareLinkEnergy(t, "network/optim:"+c.optim, res.LinkEnergy, c.simgrid)
	}
}

// TestZoneLinkProfilesMatchSimGrid replays random traces on a platform of
// zones (two Vivaldi zones and a Full one, joined by links) whose links
// change over time: a transfer's latency is summed again at its start from
// the links' current latencies, in SimGrid's order (the inter-zone links
// first) and with the Vivaldi zones' distances, which no link holds.
func TestZoneLinkProfilesMatchSimGrid(t *testing.T) {
	t.Parallel()
	seeds := randomSeeds(t, 40)
	dir := t.TempDir()
	for name, text := range map[string]string{
		"isp-bw.txt": "0.0013 300000000\n0.0041 1000000000\nPERIODICITY 0.0067\n",
		"wire.txt":   "0.00117 0.00037\n0.00293 0.0000173\nPERIODICITY 0.0051\n",
		"la.txt":     "0.00071 0.000231\n0.00197 0.0000113\nPERIODICITY 0.0043\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	xml, p := platformFile(t, dir, "zones.xml", `<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="root" routing="Full">
    <zone id="wan" routing="Vivaldi">
      <host id="paris" coordinates="12.5 -3.25 0.75" speed="2Gf"/>
      <host id="lyon" coordinates="10.1 -9.9 1.2" speed="1Gf"/>
      <router id="ix" coordinates="0 0 0"/>
    </zone>
    <zone id="homes" routing="Vivaldi">
      <peer id="home1" coordinates="3.3 4.4 10.0" speed="500Mf" bw_in="10MBps" bw_out="1MBps"/>
      <peer id="home2" coordinates="0.1 0.2 0.3" speed="800Mf" bw_in="100MBps" bw_out="20MBps"/>
    </zone>
    <zone id="lab" routing="Full">
      <host id="a" speed="1Gf"/>
      <host id="b" speed="1Gf"/>
      <router id="gw"/>
      <link id="la" bandwidth="125MBps" latency="13us" latency_file="la.txt"/>
      <link id="lb" bandwidth="125MBps" latency="7.1us"/>
      <link id="lg" bandwidth="250MBps" latency="3.3us"/>
      <route src="a" dst="gw"><link_ctn id="la"/><link_ctn id="lg"/></route>
      <route src="b" dst="gw"><link_ctn id="lb"/><link_ctn id="lg"/></route>
      <route src="a" dst="b"><link_ctn id="la"/><link_ctn id="lb"/></route>
    </zone>
    <link id="isp" bandwidth="1GBps" latency="2ms" bandwidth_file="isp-bw.txt"/>
    <link id="wire" bandwidth="500MBps" latency="0.1ms" latency_file="wire.txt"/>
    <zoneRoute src="wan" dst="homes" gw_src="ix" gw_dst="home2"><link_ctn id="isp"/></zoneRoute>
    <zoneRoute src="wan" dst="lab" gw_src="ix" gw_dst="gw"><link_ctn id="wire"/></zoneRoute>
    <zoneRoute src="homes" dst="lab" gw_src="home2" gw_dst="gw"><link_ctn id="isp"/><link_ctn id="wire"/></zoneRoute>
  </zone>
</platform>
`)
	names := []string{"paris", "home1", "a", "lyon", "home2", "b", "paris", "a"}
	for _, cfg := range zoneProfileSettings {
		linkProfileDifferential(t, dir, xml, p, names, firstSeed(), seeds, cfg)
	}
}

// zoneProfileSettings are the settings the zone link-profile tests replay
// under: the default, latencies paid at once without weight-S (so that
// fewer replays stall: see TestLinkProfilesMatchSimGrid), the full update.
var zoneProfileSettings = [][]string{nil, {"smpi/lat-factor:0:0.1", "network/weight-S:0"}, {"network/optim:Full"}}

// TestZoneFileLinkProfilesMatchSimGrid replays random traces on platforms
// of platform/testdata with link profiles added: the hand-built Cluster
// zones of starzones.xml (on a host link, a split-duplex one, a fat pipe
// and the link between the zones; a <backbone> takes none) and the
// Dijkstra zone of graphs.xml (whose routes SimGrid builds backwards).
func TestZoneFileLinkProfilesMatchSimGrid(t *testing.T) {
	t.Parallel()
	seeds := randomSeeds(t, 30)
	type profile struct{ link, attr, file, values string }
	for _, c := range []struct {
		file     string
		names    []string
		profiles []profile
	}{
		{"starzones.xml", []string{"w1", "e1", "w5", "wa-0.west", "e10", "w2", "e-head", "w4", "wa-7.west", "e2", "w3"}, []profile{
			{`<link id="w1-out" `, `bandwidth_file="w1.txt" `, "w1.txt", "0.0009 30000000\n0.0027 125000000\nPERIODICITY 0.0049\n"},
			{`<link id="w2-link" `, `latency_file="w2.txt" `, "w2.txt", "0.00051 0.00021\n0.00173 0.0000031\nPERIODICITY 0.0037\n"},
			{`<link id="w3-link" `, `bandwidth_file="w3.txt" `, "w3.txt", "0.0011 20000000\n0.0031 80000000\nPERIODICITY 0.0053\n"},
			{`<link id="wan" `, `latency_file="wan.txt" `, "wan.txt", "0.0017 0.000013\n0.0039 0.001\nPERIODICITY 0.0059\n"},
		}},
		{"graphs.xml", []string{"h1", "h2", "h2", "h1"}, []profile{
			{`<link id="a" `, `latency_file="a.txt" `, "a.txt", "0.007 0.00031\n0.019 0.0000015\nPERIODICITY 0.047\n"},
			{`<link id="c" `, `latency_file="c.txt" `, "c.txt", "0.013 0.00017\n0.029 0.00000001\nPERIODICITY 0.061\n"},
			{`<link id="d" `, `bandwidth_file="d.txt" `, "d.txt", "0.005 300000000\n0.021 1000000000\nPERIODICITY 0.043\n"},
		}},
	} {
		dir := t.TempDir()
		text, err := os.ReadFile(filepath.Join("..", "platform", "testdata", c.file))
		if err != nil {
			t.Fatal(err)
		}
		xmlText := string(text)
		for _, pr := range c.profiles {
			if !strings.Contains(xmlText, pr.link) {
				t.Fatalf("%s has no %s", c.file, pr.link)
			}
			xmlText = strings.Replace(xmlText, pr.link, pr.link+pr.attr, 1)
			if err := os.WriteFile(filepath.Join(dir, pr.file), []byte(pr.values), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		xml, p := platformFile(t, dir, c.file, xmlText)
		for _, cfg := range zoneProfileSettings {
			linkProfileDifferential(t, dir, xml, p, c.names, firstSeed(), seeds, cfg)
		}
	}
}

// TestRandomProfiledGraphsMatchSimGrid replays random traces on random
// platforms whose links change over time (platformtest.RandomProfiledGraph:
// graph zones, nested or not, a third of the links with bandwidth or
// latency profiles), under each of zoneProfileSettings. SimGrid's solver
// sometimes asserts there ("Cannot saturate more a constraint that has no
// active element", lmm::MaxMin::do_solve: a constraint it keeps without a
// flow it could fix; once in 2,160 replays here) where Kairos' goes on:
// those replays are counted, not compared.
func TestRandomProfiledGraphsMatchSimGrid(t *testing.T) {
	t.Parallel()
	platforms := randomSeeds(t, 10)
	for i := 0; i < platforms; i++ {
		seed := firstSeed() + i
		dir := t.TempDir()
		text, files := platformtest.RandomProfiledGraph(rand.New(rand.NewPCG(uint64(seed), 4)))
		xml, p, names := graphPlatform(t, dir, text, files)
		for _, cfg := range zoneProfileSettings {
			linkProfileDifferential(t, dir, xml, p, names, 1000*seed, 3, cfg)
		}
	}
}
