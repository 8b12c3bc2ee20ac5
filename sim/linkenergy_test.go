package sim_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"kairos/sim"
)

var linkEnergyLine = regexp.MustCompile(`Energy consumption of link '(\S+)': ([0-9.]+) Joules`)
var linkEnergyTotal = regexp.MustCompile(`Total energy over all links: ([0-9.]+)`)

// linkPlatform is 6 hosts of a Full zone, each with a private link, joined
// through a shared core link or a fat pipe; most links have a power range.
func linkPlatform() string {
	var b strings.Builder
	b.WriteString(`<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="z" routing="Full">
`)
	for i := 0; i < 6; i++ {
		fmt.Fprintf(&b, "    <host id=\"h%d\" speed=\"1Gf\"/>\n", i)
	}
	for i := 0; i < 6; i++ {
		fmt.Fprintf(&b, "    <link id=\"p%d\" bandwidth=\"%dMBps\" latency=\"20us\"><prop id=\"wattage_range\" value=\"%d:%d\"/></link>\n", i, 100+25*i, 10+i, 30+2*i)
	}
	b.WriteString(`    <link id="core" bandwidth="200MBps" latency="30us"><prop id="wattage_range" value="100:300"/></link>
    <link id="fat" bandwidth="150MBps" latency="40us" sharing_policy="FATPIPE"><prop id="wattage_range" value="50:65"/></link>
    <link id="dark" bandwidth="300MBps" latency="10us"/>
`)
	for i := 0; i < 6; i++ {
		for j := i + 1; j < 6; j++ {
			mid := []string{"core", "fat", "core\"/><link_ctn id=\"dark"}[(i+j)%3]
			fmt.Fprintf(&b, "    <route src=\"h%d\" dst=\"h%d\"><link_ctn id=\"p%d\"/><link_ctn id=\"%s\"/><link_ctn id=\"p%d\"/></route>\n", i, j, i, mid, j)
		}
	}
	b.WriteString("  </zone>\n</platform>\n")
	return b.String()
}

// TestLinkEnergyMatchesSimGrid replays random traces under SimGrid's
// link_energy plugin and requires every link's energy and the total as
// SimGrid prints them: shared and fat-pipe links, cross-traffic, a link
// without a power range, two ranks on some hosts.
func TestLinkEnergyMatchesSimGrid(t *testing.T) {
	linkEnergyDifferential(t, randomSeeds(t, 60))
}

// linkEnergyDifferential replays seeds random traces on the links of
// linkPlatform with the link energy plugin and settings (key:value), with
// Kairos and SimGrid, and requires the same time and joules.
func linkEnergyDifferential(t *testing.T, seeds int, settings ...string) {
	t.Helper()
	dir := t.TempDir()
	xml, p := platformFile(t, dir, "links.xml", linkPlatform())
	names := []string{"h0", "h3", "h1", "h4", "h2", "h5", "h0", "h1"}
	pluginDifferential(t, dir, xml, writeHostfile(t, dir, names), deployer(t, p, names), len(names), seeds, 29, "link_energy",
		func(name string, res *sim.Result, out string) bool {
			return compareLinkEnergy(t, name, res.LinkEnergy, out)
		}, settings...)
}

// compareLinkEnergy checks Kairos' link energy report against SimGrid's
// lines.
func compareLinkEnergy(t *testing.T, name string, e *sim.LinkEnergy, out string) bool {
	t.Helper()
	ok := true
	if m := linkEnergyTotal.FindStringSubmatch(out); m == nil || !printedClose(e.Total, m[1]) {
		ok = false
		t.Errorf("%s: total %f, SimGrid %v", name, e.Total, m)
	}
	byLink := map[string]float64{}
	for _, l := range e.Links {
		byLink[l.Link] = l.Joules
	}
	return compareJoules(t, name, "link", byLink, linkEnergyLine.FindAllStringSubmatch(out, -1)) && ok
}

func TestParseWattageRange(t *testing.T) {
	if i, b, err := sim.ParseWattageRange("100:200"); err != nil || i != 100 || b != 200 {
		t.Errorf("100:200 = %g %g %v", i, b, err)
	}
	if i, b, err := sim.ParseWattageRange("1:2, 30:40"); err != nil || i != 30 || b != 40 {
		t.Errorf("the last range counts, as in SimGrid: %g %g %v", i, b, err)
	}
	for _, bad := range []string{"", "100", "1:2:3", "a:1", "1:b"} {
		if _, _, err := sim.ParseWattageRange(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// FuzzParseWattageRange: any property value gives watts or an error.
func FuzzParseWattageRange(f *testing.F) {
	for _, s := range []string{"100:200", "1:2,3:4", ":", "1e400:-0", "nan:1", "-1:-2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sim.ParseWattageRange(s)
	})
}
