package platform

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const hdr = `<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
`

// TestParseErrors checks that bad descriptions give an error naming the
// file, the line, the attribute and what was expected.
func TestParseErrors(t *testing.T) {
	cases := []struct {
		name, body string
		want       string
	}{
		{"unknown element", `<zone id="z" routing="Full">
<hots id="a" speed="1Gf"/></zone>`, `p.xml:5: <hots> unknown element inside <zone>`},
		{"unknown attribute", `<zone id="z" routing="Full">
<host id="a" speed="1Gf" cores="4"/></zone>`, `p.xml:5: <host> attribute cores: unknown attribute (expected one of availability_file, coordinates, core,`},
		{"missing attribute", `<zone id="z" routing="Full"><host id="a"/></zone>`, `p.xml:4: <host> attribute speed: required attribute is missing`},
		{"bad speed unit", `<zone id="z" routing="Full">

<host id="a" speed="1Gflop"/></zone>`, `p.xml:6: <host> attribute speed: speed "1Gflop": unknown unit "Gflop" (expected f, kf, Mf`},
		{"bad bandwidth", `<zone id="z" routing="Full"><host id="a" speed="1Gf"/>
<link id="l" bandwidth="fast"/></zone>`, `p.xml:5: <link> attribute bandwidth: cannot parse bandwidth "fast"`},
		{"bad latency", `<zone id="z" routing="Full"><host id="a" speed="1Gf"/>
<link id="l" bandwidth="1GBps" latency="1sec"/></zone>`, `attribute latency: time "1sec": unknown unit "sec"`},
		{"bad policy", `<zone id="z" routing="Full"><link id="l" bandwidth="1GBps" sharing_policy="shared"/></zone>`,
			`<link> attribute sharing_policy: invalid value "shared" (expected SHARED, SPLITDUPLEX, FULLDUPLEX, FATPIPE, WIFI)`},
		{"unknown link", `<zone id="z" routing="Full"><host id="a" speed="1Gf"/><host id="b" speed="1Gf"/>
<route src="a" dst="b">
  <link_ctn id="nope"/>
</route></zone>`, `p.xml:6: <link_ctn> attribute id: no such link "nope"`},
		{"split duplex without direction", `<zone id="z" routing="Full"><host id="a" speed="1Gf"/><host id="b" speed="1Gf"/>
<link id="s" bandwidth="1GBps" sharing_policy="SPLITDUPLEX"/>
<route src="a" dst="b"><link_ctn id="s"/></route></zone>`, `link "s" is SPLITDUPLEX: say direction="UP" or "DOWN"`},
		{"direction on plain link", `<zone id="z" routing="Full"><host id="a" speed="1Gf"/><host id="b" speed="1Gf"/>
<link id="s" bandwidth="1GBps"/>
<route src="a" dst="b"><link_ctn id="s" direction="UP"/></route></zone>`, `no SPLITDUPLEX link "s"`},
		{"duplicate host", `<zone id="z" routing="Full"><host id="a" speed="1Gf"/>
<host id="a" speed="2Gf"/></zone>`, `p.xml:5: <host> attribute id: refusing to create a second host called "a"`},
		{"duplicate link", `<zone id="z" routing="Full"><link id="l" bandwidth="1GBps"/>
<link id="l" bandwidth="1GBps"/></zone>`, `p.xml:5: <link> attribute id: link "l" already exists`},
		{"duplicate route", `<zone id="z" routing="Full"><host id="a" speed="1Gf"/><host id="b" speed="1Gf"/><link id="l" bandwidth="1GBps"/>
<route src="a" dst="b"><link_ctn id="l"/></route>
<route src="b" dst="a"><link_ctn id="l"/></route></zone>`, `p.xml:6: <route> the route between b and a already exists`},
		{"unknown route end", `<zone id="z" routing="Full"><host id="a" speed="1Gf"/><link id="l" bandwidth="1GBps"/>
<route src="a" dst="c"><link_ctn id="l"/></route></zone>`, `p.xml:5: <route> attribute dst: "c" does not name a host, router or zone`},
		{"empty route", `<zone id="z" routing="Full"><host id="a" speed="1Gf"/><host id="b" speed="1Gf"/>
<route src="a" dst="b"></route></zone>`, `empty route between a and b`},
		{"bad torus", `<cluster id="c" prefix="n" suffix="" radical="0-7" speed="1Gf" bw="1GBps" lat="1us" topology="TORUS" topo_parameters="2,x"/>`,
			`p.xml:4: <cluster> attribute topo_parameters: torus dimensions "2,x": "x" is not an integer`},
		{"torus too big", `<cluster id="c" prefix="n" suffix="" radical="0-7" speed="1Gf" bw="1GBps" lat="1us" topology="TORUS" topo_parameters="3,3"/>`,
			`has 9 nodes but the radical names only 8 hosts`},
		{"bad fat tree", `<cluster id="c" prefix="n" suffix="" radical="0-7" speed="1Gf" bw="1GBps" lat="1us" topology="FAT_TREE" topo_parameters="2;4,2;1,2"/>`,
			`expected "levels;children,..;parents,..;links,.."`},
		{"fat tree vector", `<cluster id="c" prefix="n" suffix="" radical="0-7" speed="1Gf" bw="1GBps" lat="1us" topology="FAT_TREE" topo_parameters="2;4,2;1;1,2"/>`,
			`2 levels but the parent count vector has 1 values`},
		{"bad dragonfly", `<cluster id="c" prefix="n" suffix="" radical="0-7" speed="1Gf" bw="1GBps" lat="1us" topology="DRAGONFLY" topo_parameters="2,1;2,1;1,1;2"/>`,
			`2 groups but 1 routers per chassis`},
		{"bad topology", `<cluster id="c" prefix="n" suffix="" radical="0-7" speed="1Gf" bw="1GBps" lat="1us" topology="RING"/>`,
			`attribute topology: invalid value "RING"`},
		{"bad radical", `<cluster id="c" prefix="n" suffix="" radical="0-3-5" speed="1Gf" bw="1GBps" lat="1us"/>`,
			`attribute radical: malformed radical "0-3-5"`},
		{"huge radical", `<cluster id="c" prefix="n" suffix="" radical="0-99999999999" speed="1Gf" bw="1GBps" lat="1us"/>`,
			`p.xml:4: <cluster> attribute radical: radical "0-99999999999": "99999999999" is out of range (expected an integer from -2147483648 to 2147483647)`},
		{"old version", ``, `version 3 is too old`},
		{"empty file", ``, `p.xml: no <platform> element: expected a SimGrid platform description, <platform version="4.1"> ... </platform>`},
		{"mixed zone", `<zone id="z" routing="Full"><host id="a" speed="1Gf"/>
<zone id="y" routing="Full"/></zone>`, `p.xml:5: <zone> cannot be mixed with <host/router/route> elements in zone z`},
		{"unsupported routing", `<zone id="z" routing="Wifi"/>`, `routing "Wifi" is not supported`},
		{"unsupported element", `<zone id="z" routing="Full"><host id="a" speed="1Gf"/>
<random id="r" min="0" max="1" mean="0.5" std_deviation="0.1"/></zone>`, `p.xml:5: <random> is not supported`},
		{"peer outside Vivaldi", `<zone id="z" routing="Full"><zone id="y" routing="Full"><host id="a" speed="1Gf"/></zone>
<peer id="p" speed="1Gf" bw_in="1GBps" bw_out="1GBps"/></zone>`, `p.xml:5: <peer> a <peer> belongs in a Vivaldi zone, not in zone z`},
		{"peer outside zones", `<peer id="p" speed="1Gf" bw_in="1GBps" bw_out="1GBps"/>`, `p.xml:4: <peer> a <peer> belongs in a Vivaldi zone`},
		{"bad coordinates", `<zone id="z" routing="Vivaldi"><host id="a" speed="1Gf" coordinates="1 2"/></zone>`, `p.xml:4: <host> attribute coordinates: coordinates "1 2" must have 3 dimensions`},
		{"empty bypass", `<zone id="z" routing="Full"><host id="a" speed="1Gf"/>
<bypassRoute src="a" dst="a"/></zone>`, `p.xml:5: <bypassRoute> bypass route between a and a cannot be empty`},
		{"bypass twice", `<zone id="z" routing="Full"><host id="a" speed="1Gf"/><host id="b" speed="1Gf"/><link id="l" bandwidth="1GBps"/>
<bypassRoute src="a" dst="b"><link_ctn id="l"/></bypassRoute><bypassRoute src="a" dst="b"><link_ctn id="l"/></bypassRoute></zone>`,
			`p.xml:5: <bypassRoute> the bypass route between a and b already exists`},
		{"profiles", `<zone id="z" routing="Full"><host id="a" speed="1Gf" state_file="s.txt"/></zone>`, `attribute state_file: availability profiles are not supported`},
		{"missing speed file", `<zone id="z" routing="Full"><host id="a" speed="1Gf" speed_file="no-such-speed.txt"/></zone>`, `p.xml:4: <host> attribute speed_file: open no-such-speed.txt`},
		{"bad trace", `<zone id="z" routing="Full"><host id="a" speed="1Gf"/><trace id="t" periodicity="-1">
0 1
0.5 x
</trace></zone>`, `p.xml:6: <trace> "0.5 x": expected "DATE VALUE", two numbers`},
		{"unsorted trace", `<trace id="t" periodicity="-1">1 1
0.5 2</trace>`, `p.xml:5: <trace> date 0.5 before the previous one (1)`},
		{"stochastic trace", `<trace id="t" periodicity="-1">STOCHASTIC
DET 1 UNIF 0 1</trace>`, `stochastic profiles are not supported`},
		{"link availability profile", `<zone id="z" routing="Full"><host id="a" speed="1Gf"/><link id="l" bandwidth="1GBps"/></zone>
<trace id="t" periodicity="1">0 1</trace><trace_connect kind="LINK_AVAIL" trace="t" element="l"/>`, `p.xml:5: <trace_connect> attribute kind: LINK_AVAIL profiles are not supported`},
		{"profile twice", `<zone id="z" routing="Full"><host id="a" speed="1Gf"/><trace id="s.txt" periodicity="1">0 1</trace>
<link id="l" bandwidth="1GBps" bandwidth_file="s.txt"/></zone>`, `p.xml:5: <link> attribute bandwidth_file: refusing to define trace "s.txt" twice`},
		{"link bandwidth trace", `<zone id="z" routing="Full"><host id="a" speed="1Gf"/><link id="l" bandwidth="1GBps"/></zone>
<trace id="t" periodicity="1">0 1</trace><trace_connect kind="BANDWIDTH" trace="t" element="l"/>`, `p.xml:5: <trace_connect> attribute kind: SimGrid 3.32 cannot connect a <trace> to a link (it aborts: "Cannot set a bandwidth profile once the Link is sealed"); give the <link> a bandwidth_file`},
		{"trace of no host", `<zone id="z" routing="Full"><host id="a" speed="1Gf"/></zone>
<trace id="t" periodicity="1">0 1</trace><trace_connect kind="SPEED" trace="t" element="b"/>`, `p.xml:5: <trace_connect> attribute element: no host "b"`},
		{"connect of no trace", `<zone id="z" routing="Full"><host id="a" speed="1Gf"/></zone>
<trace_connect kind="SPEED" trace="t" element="a"/>`, `p.xml:5: <trace_connect> attribute trace: no trace "t"`},
		{"profile forever at 0", `<zone id="z" routing="Full"><host id="a" speed="1Gf"/></zone>
<trace id="t" periodicity="-1">LOOPAFTER 0
0 0.5</trace>`, `repeat forever at date 0`},
		{"two roots", `<zone id="z" routing="Full"><host id="a" speed="1Gf"/></zone>
<zone id="y" routing="Full"/>`, `p.xml:5: <zone> attribute id: the platform already has a root zone (z)`},
		{"no host", `<zone id="z" routing="Full"/>`, `the platform has no host`},
		{"malformed xml", `<zone id="z" routing="Full"><host id="a" speed="1Gf"></zone>`, `p.xml:4: malformed XML`},
		{"floyd self route symmetrical", `<zone id="z" routing="Floyd"><host id="a" speed="1Gf"/><link id="l" bandwidth="1GBps"/>
<route src="a" dst="a"><link_ctn id="l"/></route></zone>`, `p.xml:5: <route> the route between a and a already exists`},
		{"zoneRoute gateway outside", `<zone id="r" routing="Full">
<zone id="x" routing="Full"><host id="a" speed="1Gf"/></zone>
<zone id="y" routing="Full"><host id="b" speed="1Gf"/></zone>
<link id="l" bandwidth="1GBps"/>
<zoneRoute src="x" dst="y" gw_src="b" gw_dst="a"><link_ctn id="l"/></zoneRoute></zone>`, `p.xml:8: <zoneRoute> attribute gw_src: gateway "b" is not inside zone x`},
		{"text", `<zone id="z" routing="Full">hello</zone>`, `unexpected text "hello"`},
		{"backbone outside a Cluster zone", `<zone id="z" routing="Full"><host id="a" speed="1Gf"/>
<backbone id="b" bandwidth="1GBps" latency="1us"/></zone>`, `p.xml:5: <backbone> belongs in a routing="Cluster" zone`},
		{"cabinet at the top", `<cabinet id="c" prefix="n" suffix="" radical="0-1" speed="1Gf" bw="1GBps" lat="1us"/>`,
			`p.xml:4: <cabinet> belongs in a routing="Cluster" zone`},
		{"two backbones", `<zone id="z" routing="Cluster"><host id="a" speed="1Gf"/>
<backbone id="b" bandwidth="1GBps" latency="1us"/>
<backbone id="c" bandwidth="1GBps" latency="1us"/></zone>`, `p.xml:6: <backbone> zone z already has a backbone (b, line 5)`},
		{"host_link to no link", `<zone id="z" routing="Cluster"><host id="a" speed="1Gf"/>
<host_link id="a" up="l" down="l"/></zone>`, `p.xml:5: <host_link> attribute up: no such link "l"`},
		{"host_link to a split-duplex link", `<zone id="z" routing="Cluster"><host id="a" speed="1Gf"/>
<link id="l" bandwidth="1GBps" sharing_policy="SPLITDUPLEX"/>
<host_link id="a" up="l_UP" down="l"/></zone>`, `p.xml:6: <host_link> attribute down: link "l" is SPLITDUPLEX: name one of its halves, l_UP or l_DOWN`},
		{"host_link to no host", `<zone id="z" routing="Cluster"><host id="a" speed="1Gf"/><router id="r"/>
<link id="l" bandwidth="1GBps"/>
<host_link id="r" up="l" down="l"/></zone>`, `p.xml:6: <host_link> attribute id: no host "r"`},
		{"host_link to another zone's host", `<zone id="top" routing="Full">
<zone id="x" routing="Full"><host id="a" speed="1Gf"/></zone>
<zone id="y" routing="Cluster"><host id="b" speed="1Gf"/><link id="l" bandwidth="1GBps"/>
<host_link id="a" up="l" down="l"/></zone></zone>`, `p.xml:7: <host_link> attribute id: host "a" is not in zone y`},
		{"cabinet name clash", `<zone id="z" routing="Cluster"><host id="n1" speed="1Gf"/>
<cabinet id="c" prefix="n" suffix="" radical="0-3" speed="1Gf" bw="1GBps" lat="1us"/></zone>`,
			`p.xml:5: <cabinet> attribute radical: refusing to create a second host called "n1"`},
		{"cabinet bad speed", `<zone id="z" routing="Cluster">
<cabinet id="c" prefix="n" suffix="" radical="0-3" speed="fast" bw="1GBps" lat="1us"/></zone>`,
			`p.xml:5: <cabinet> attribute speed:`},
		{"zone in a Cluster zone", `<zone id="z" routing="Cluster"><zone id="y" routing="Full"/></zone>`,
			`p.xml:4: <zone> not allowed in routing="Cluster" zone z`},
		{"route in a Cluster zone", `<zone id="z" routing="Cluster"><host id="a" speed="1Gf"/><host id="b" speed="1Gf"/>
<link id="l" bandwidth="1GBps"/><route src="a" dst="b"><link_ctn id="l"/></route></zone>`,
			`p.xml:5: <route> a routing="Cluster" zone takes only loopback routes (src = dst), not a to b`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			doc := hdr + c.body + "\n</platform>\n"
			switch c.name {
			case "old version":
				doc = `<platform version="3"><zone id="z" routing="Full"><host id="a" speed="1Gf"/></zone></platform>`
			case "empty file":
				doc = ""
			}
			_, err := Parse(strings.NewReader(doc), "p.xml")
			if err == nil {
				t.Fatalf("accepted:\n%s", doc)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q\nwant it to contain %q", err, c.want)
			}
			var pe *Error
			if !errors.As(err, &pe) || pe.File != "p.xml" {
				t.Errorf("error %T does not carry the file name", err)
			}
		})
	}
}

// TestRouteErrors checks routes SimGrid cannot compute (it aborts).
func TestRouteErrors(t *testing.T) {
	doc := hdr + `<zone id="r" routing="Full">
<zone id="x" routing="Full"><host id="a" speed="1Gf"/></zone>
<zone id="y" routing="Floyd"><host id="b" speed="1Gf"/><host id="c" speed="1Gf"/></zone>
</zone></platform>`
	p, err := Parse(strings.NewReader(doc), "p.xml")
	if err != nil {
		t.Fatal(err)
	}
	a, _ := p.Host("a")
	b, _ := p.Host("b")
	c, _ := p.Host("c")
	if _, _, err := p.RouteErr(a, b); err == nil || !strings.Contains(err.Error(), "missing zoneRoute") {
		t.Errorf("a->b: %v", err)
	}
	if _, _, err := p.RouteErr(b, c); err == nil || !strings.Contains(err.Error(), "no route from b to c") {
		t.Errorf("b->c: %v", err)
	}
	if links, lat := p.Route(b, c); links != nil || lat != 0 {
		t.Errorf("Route b->c = %v %v", links, lat)
	}
	// In a Cluster zone, a host given only a loopback route cannot be
	// reached nor left (SimGrid asserts "no link UP from source node").
	doc = hdr + `<zone id="z" routing="Cluster"><host id="a" speed="1Gf"/><host id="b" speed="1Gf"/>
<link id="l" bandwidth="1GBps"/><host_link id="b" up="l" down="l"/>
<route src="a" dst="a"><link_ctn id="l"/></route></zone></platform>`
	if p, err = Parse(strings.NewReader(doc), "p.xml"); err != nil {
		t.Fatal(err)
	}
	a, _ = p.Host("a")
	b, _ = p.Host("b")
	if _, _, err := p.RouteErr(a, b); err == nil || !strings.Contains(err.Error(), "no link up from a") {
		t.Errorf("a->b: %v", err)
	}
	if _, _, err := p.RouteErr(b, a); err == nil || !strings.Contains(err.Error(), "no link down to a") {
		t.Errorf("b->a: %v", err)
	}
	if links, _, err := p.RouteErr(a, a); err != nil || len(links) != 1 {
		t.Errorf("a->a: %v %v, want the loopback route", links, err)
	}
	// SimGrid's Full zone gives an empty route when none is declared.
	doc = hdr + `<zone id="z" routing="Full"><host id="a" speed="1Gf"/><host id="b" speed="1Gf"/></zone></platform>`
	if p, err = Parse(strings.NewReader(doc), "p.xml"); err != nil {
		t.Fatal(err)
	}
	links, lat, err := p.RouteErr(p.Hosts[0], p.Hosts[1])
	if err != nil || len(links) != 0 || lat != 0 {
		t.Errorf("undeclared Full route = %v %v %v", links, lat, err)
	}
}

// FuzzParse feeds arbitrary documents to the parser, which must not panic,
// and routes every pair of hosts of what it accepts.
func FuzzParse(f *testing.F) {
	seeds := []string{
		hdr + `<zone id="z" routing="Full"><host id="a" speed="1Gf"/><host id="b" speed="2Gf" core="2"><prop id="k" value="v"/></host>
<link id="l" bandwidth="1GBps" latency="1us"/><link id="s" bandwidth="1GBps" sharing_policy="SPLITDUPLEX"/>
<route src="a" dst="b"><link_ctn id="l"/><link_ctn id="s" direction="DOWN"/></route></zone></platform>`,
		hdr + `<cluster id="c" prefix="n" suffix="" radical="0-3,9" speed="1Gf" bw="1GBps" lat="1us" bb_bw="2GBps" limiter_link="3GBps" loopback_bw="1GBps"/></platform>`,
		hdr + `<cluster id="c" prefix="n" suffix="" radical="0-11" speed="1Gf" bw="1GBps" lat="1us" topology="TORUS" topo_parameters="3,2,2" limiter_link="1GBps"/></platform>`,
		hdr + `<cluster id="c" prefix="n" suffix="" radical="0-15" speed="1Gf" bw="1GBps" lat="1us" topology="FAT_TREE" topo_parameters="2;4,4;1,2;1,2"/></platform>`,
		hdr + `<cluster id="c" prefix="n" suffix="" radical="0-7" speed="1Gf" bw="1GBps" lat="1us" topology="DRAGONFLY" topo_parameters="2,1;1,1;2,1;2"/></platform>`,
		hdr + `<zone id="g" routing="Dijkstra"><host id="a" speed="1Gf"/><host id="b" speed="1Gf"/><router id="r"/><link id="l" bandwidth="1GBps"/>
<route src="a" dst="r"><link_ctn id="l"/></route><route src="r" dst="b"><link_ctn id="l"/></route></zone></platform>`,
		hdr + `<zone id="g" routing="Floyd"><host id="a" speed="1Gf"/><host id="b" speed="1Gf"/><link id="l" bandwidth="1GBps"/>
<route src="a" dst="b"><link_ctn id="l"/></route></zone></platform>`,
		hdr + `<zone id="r" routing="Full"><zone id="x" routing="Full"><host id="a" speed="1Gf"/><router id="gx"/></zone>
<zone id="y" routing="Full"><host id="b" speed="1Gf"/><router id="gy"/></zone><link id="l" bandwidth="1GBps"/>
<zoneRoute src="x" dst="y" gw_src="gx" gw_dst="gy"><link_ctn id="l"/></zoneRoute></zone></platform>`,
		hdr + `<zone id="s" routing="Cluster"><host id="a" speed="1Gf"/><host id="b" speed="1Gf"/><link id="l" bandwidth="1GBps"/>
<cabinet id="c" prefix="n" suffix="" radical="0-2" speed="1Gf" bw="1GBps" lat="1us"/><host_link id="a" up="l" down="l"/>
<backbone id="bb" bandwidth="1GBps" latency="1us"/><route src="b" dst="b"><link_ctn id="l"/></route></zone></platform>`,
		hdr + `<zone id="z" routing="Full"><host id="a" speed="1Gf"/><trace id="t" periodicity="2">0 1
0.5 0.25
PERIODICITY 3</trace><trace_connect kind="SPEED" trace="t" element="a"/></zone></platform>`,
	}
	// Issue 43: numbers that parse but mean nothing.
	for _, v := range []string{`speed="NaNf"`, `speed="1e308Gf"`, `speed="-1Gf"`, `speed="0f"`, `speed="inff"`} {
		seeds = append(seeds, hdr+`<zone id="z" routing="Full"><host id="a" `+v+`/></zone></platform>`)
	}
	for _, v := range []string{`bandwidth="0Bps" latency="1us"`, `bandwidth="-1GBps"`, `bandwidth="1GBps" latency="-1us"`,
		`bandwidth="infGBps"`, `bandwidth="1GBps" latency="nans"`, `bandwidth="1e400Bps"`} {
		seeds = append(seeds, hdr+`<zone id="z" routing="Full"><host id="a" speed="1Gf"/><host id="b" speed="1Gf"/><link id="l" `+v+`/>
<route src="a" dst="b"><link_ctn id="l"/></route></zone></platform>`)
	}
	for _, name := range []string{"bypass.xml", "nonezones.xml", "vivaldi.xml"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		seeds = append(seeds, string(b))
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		p, err := Parse(strings.NewReader(doc), "fuzz.xml")
		if err != nil {
			return
		}
		n := len(p.Hosts)
		if n > 64 {
			n = 64
		}
		for _, s := range p.Hosts[:n] {
			for _, d := range p.Hosts[:n] {
				p.RouteErr(s, d)
			}
		}
	})
}

// FuzzParseCluster checks the one-line form never panics.
func FuzzParseCluster(f *testing.F) {
	for _, s := range []string{"4x1Gf,1GBps,1us", "8x1Gf,1GBps,1us,bb=1GBps,1us,limiter=1GBps,loopback=1GBps",
		"12x1Gf,1GBps,1us,topo=torus:3,2,2", "16x1Gf,1GBps,1us,topo=fat_tree:2;4,4;1,2;1,2",
		"8x1Gf,1GBps,1us,topo=dragonfly:2,1;1,1;2,1;2,sharing=shared", "4x1Gf,1GBps,1us,watts=100:120:200",
		"4x1Gf,0Bps,1us", "4xnanf,1Bps,1us", "4x1f,1Bps,-1us", "4x1e308Gf,1GBps,1us", "100000000x1Gf,1GBps,1us"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		if n, _, ok := strings.Cut(spec, "x"); ok {
			if v, err := strconv.Atoi(strings.TrimSpace(n)); err == nil && v > 4096 {
				return // legal, but a platform of millions of hosts takes the fuzzer's time
			}
		}
		p, err := ParseCluster(spec)
		if err != nil || len(p.Hosts) > 64 {
			return
		}
		for _, s := range p.Hosts {
			for _, d := range p.Hosts {
				p.Route(s, d)
			}
		}
	})
}

// FuzzHostfile checks the hostfile reader never panics.
func FuzzHostfile(f *testing.F) {
	for _, s := range []string{"a\nb\n", "a:4\n\nb:0\n", "x:y\n", ":3\n", "node-0:0\n", "node-0:-1\n", "node-0:99999999999\n", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		parseHostfile(strings.NewReader(s), "hf")
	})
}

// TestWarnings checks that what SimGrid only warns about loads, with the
// warning recorded.
func TestWarnings(t *testing.T) {
	doc := hdr + `<zone id="w" routing="Full">
<cluster id="t" prefix="n" suffix="" radical="0-9" speed="1e9" bw="1GBps" lat="1us" topology="TORUS" topo_parameters="2,4"/>
<cluster id="f" prefix="m" suffix="" radical="0-1" speed="1Gf" bw="1GBps" lat="1us" sharing_policy="FULLDUPLEX"/>
</zone></platform>`
	p, err := Parse(strings.NewReader(doc), "w.xml")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Hosts) != 10 {
		t.Errorf("%d hosts, want 8 torus nodes and 2 others", len(p.Hosts))
	}
	all := strings.Join(p.Warnings, "\n")
	for _, want := range []string{
		`w.xml:5: <cluster> attribute speed: deprecated unit-less speed "1e9", read as 1e9f`,
		`TORUS cluster t: topology "2,4" has 8 nodes; the other 2 hosts of the radical are not created`,
		`w.xml:6: <cluster> attribute sharing_policy: FULLDUPLEX is deprecated, read as SPLITDUPLEX`,
	} {
		if !strings.Contains(all, want) {
			t.Errorf("warnings lack %q:\n%s", want, all)
		}
	}
}
