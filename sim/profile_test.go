package sim_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"kairos/sim"
)

// profilePlatform is 8 hosts (2 cores on the last two), 6 of them with a
// periodic speed profile whose events fall while random traces run, at
// dates no two hosts share: SimGrid applies simultaneous events of several
// hosts in the order of its hash tables, which Kairos does not reproduce.
func profilePlatform() string {
	var b strings.Builder
	b.WriteString(`<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="z" routing="Full">
    <cluster id="c" prefix="node-" radical="0-5" suffix="" speed="1Gf" bw="125MBps" lat="50us">
      <prop id="wattage_per_state" value="100:120:200"/>
    </cluster>
    <cluster id="d" prefix="big-" radical="0-1" suffix="" speed="2Gf" core="2" bw="125MBps" lat="50us" router_id="rd">
      <prop id="wattage_per_state" value="150:200:400"/>
    </cluster>
    <link id="l" bandwidth="1GBps" latency="10us"/>
    <zoneRoute src="c" dst="d" gw_src="node-c_router" gw_dst="rd"><link_ctn id="l"/></zoneRoute>
`)
	hosts := []string{"node-0", "node-1", "node-2", "node-4", "big-0", "big-1"}
	values := []string{"0.5", "2", "0.25", "1.5", "0.7", "3"}
	for i, h := range hosts {
		first := 0.00037 * float64(i+1)
		fmt.Fprintf(&b, "    <trace id=\"t%d\" periodicity=\"%g\">\n%g %s\n%g 1\n</trace>\n", i, 0.0041+0.00023*float64(i), first, values[i], first+0.0013+0.0001*float64(i))
		fmt.Fprintf(&b, "    <trace_connect kind=\"SPEED\" trace=\"t%d\" element=\"%s\"/>\n", i, h)
	}
	b.WriteString("  </zone>\n</platform>\n")
	return b.String()
}

// TestSpeedProfilesMatchSimGrid replays random traces on hosts whose
// speed changes over time, with one and two ranks per host, with a
// concurrency limit, with SimGrid's full updates and with the energy
// plugin (which sees the speed changes); the times and energies must be
// SimGrid's.
func TestSpeedProfilesMatchSimGrid(t *testing.T) {
	t.Parallel()
	seeds := randomSeeds(t, 60)
	dir := t.TempDir()
	xml, p := platformFile(t, dir, "profiles.xml", profilePlatform())
	names := []string{"node-0", "big-0", "node-1", "node-2", "big-0", "node-3", "node-4", "big-1", "node-0"}
	differential(t, "speed profiles", dir, xml, writeHostfile(t, dir, names), deployer(t, p, names), sim.DefaultConfig(), seeds)
	// With a concurrency limit, a CPU's changing speed and its staged
	// computations.
	differential(t, "speed profiles", dir, xml, writeHostfile(t, dir, names), deployer(t, p, names), sim.DefaultConfig(), seeds, "maxmin/concurrency-limit:1")
	// SimGrid's full updates, whose steps the profiles' events cut.
	differential(t, "speed profiles", dir, xml, writeHostfile(t, dir, names), deployer(t, p, names), sim.DefaultConfig(), max(seeds/2, 1), "cpu/optim:Full")
	differential(t, "speed profiles", dir, xml, writeHostfile(t, dir, names), deployer(t, p, names), sim.DefaultConfig(), max(seeds/2, 1), "network/optim:Full", "cpu/optim:Full")

	energyDifferential(t, dir, xml, filepath.Join(dir, "hostfile"), deployer(t, p, names), len(names), seeds, 23)
}
