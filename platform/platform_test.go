package platform

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"kairos/internal/testenv"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(1, math.Abs(b)) }

type wantRoute struct {
	src, dst string
	links    string // space-separated link names
	lat      float64
}

func checkRoutes(t *testing.T, p *Platform, routes []wantRoute) {
	t.Helper()
	for _, r := range routes {
		src, ok1 := p.Host(r.src)
		dst, ok2 := p.Host(r.dst)
		if !ok1 || !ok2 {
			t.Errorf("%s: missing host %s or %s", p.Name, r.src, r.dst)
			continue
		}
		links, lat, err := p.RouteErr(src, dst)
		if err != nil || linkNames(links) != r.links || !near(lat, r.lat) {
			t.Errorf("%s: route %s -> %s = %q %v (%v), want %q %v", p.Name, r.src, r.dst, linkNames(links), lat, err, r.links, r.lat)
		}
	}
}

// TestLoadSharedPlatforms loads every platform of the shared material and
// checks host counts and hand-computed routes.
func TestLoadSharedPlatforms(t *testing.T) {
	ex := "simgrid-replay-tests/examples/platforms/"
	cases := []struct {
		path   string
		hosts  int
		routes []wantRoute
	}{
		{ex + "small_platform.xml", 7, []wantRoute{
			{"Tremblay", "Jupiter", "9", 1.461517e-3},
			{"Jupiter", "Tremblay", "9", 1.461517e-3},
			{"Tremblay", "Tremblay", "loopback", 15e-6},
			{"Jacquelin", "Jacquelin", "__loopback__", 0}, // no self route: implicit loopback
			{"Boivin", "Jacquelin", "47 44 11 10 16 17 54 56 59 145",
				(6.932556 + 6.932556 + 0.136931 + 0.514433 + 0.514433 + 0.136931 + 35.083019 + 29.5890617 + 0.370788 + 0.410463) * 1e-3},
		}},
		{ex + "small_platform_with_routers.xml", 5, []wantRoute{
			{"Bourassa", "Fafard", "7 6 8", (189.98 + 59.904 + 270.544) * 1e-6},
			{"Tremblay", "Ginette", "4 3 5", (479.78 + 514.433 + 278.066) * 1e-6},
		}},
		{ex + "cluster_backbone.xml", 100, []wantRoute{
			{"node-0.simgrid.org", "node-2.simgrid.org", "cluster0_link_0_UP cluster0_backbone cluster0_link_2_DOWN", 600e-6},
			{"node-7.simgrid.org", "node-7.simgrid.org", "cluster0_link_7_UP cluster0_backbone cluster0_link_7_DOWN", 600e-6},
		}},
		{ex + "cluster_crossbar.xml", 65536, []wantRoute{
			{"node-0.simgrid.org", "node-65535.simgrid.org", "cluster-crossbar_link_0_UP cluster-crossbar_link_65535_DOWN", 100e-6},
		}},
		{ex + "cluster_torus.xml", 12, []wantRoute{
			// 3x2x2: node 0 = (0,0,0), node 10 = (1,1,1): x, then y, then z.
			{"node-0.simgrid.org", "node-10.simgrid.org", "bob_cluster_link_from_0_to_1_UP bob_cluster_link_from_1_to_4_UP bob_cluster_link_from_4_to_10_UP", 150e-6},
			// x from 0 to 2 is shorter through the wrap-around link 2->0.
			{"node-0.simgrid.org", "node-2.simgrid.org", "bob_cluster_link_from_2_to_0_DOWN", 50e-6},
			{"node-3.simgrid.org", "node-3.simgrid.org", "bob_cluster_link_3_loopback", 0},
		}},
		{ex + "cluster_fat_tree.xml", 16, []wantRoute{
			{"node-0.simgrid.org", "node-1.simgrid.org", "link_from_0_31_0_UP link_from_1_31_1_DOWN", 100e-6},
			{"node-0.simgrid.org", "node-15.simgrid.org", "link_from_0_31_0_UP link_from_31_26_19_UP link_from_28_26_30_DOWN link_from_15_28_15_DOWN", 200e-6},
		}},
		{ex + "cluster_dragonfly.xml", 120, []wantRoute{
			{"node-0.simgrid.org", "node-1.simgrid.org", "bob_cluster_link_0_limiter local_link_from_router_0_to_node_0_0_UP bob_cluster_link_239_limiter local_link_from_router_0_to_node_1_1_DOWN bob_cluster_link_1_limiter", 100e-6},
		}},
		{"traces/ti/simgrid-replay-multiple-32/cluster32.xml", 32, []wantRoute{
			{"node-0", "node-31", "c_link_0_UP c_link_31_DOWN", 100e-6},
		}},
		{"traces/ti/smpi-ring4/cluster4.xml", 4, []wantRoute{
			{"node-3", "node-0", "c_link_3_UP c_link_0_DOWN", 100e-6},
			{"node-1", "node-1", "c_link_1_UP c_link_1_DOWN", 100e-6},
		}},
	}
	for _, c := range cases {
		t.Run(filepath.Base(c.path), func(t *testing.T) {
			p, err := Load(testenv.Shared(t, c.path))
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Hosts) != c.hosts {
				t.Errorf("%d hosts, want %d", len(p.Hosts), c.hosts)
			}
			for i, h := range p.Hosts {
				if h.Index != i || p.hostByName[h.Name] != h {
					t.Fatalf("host %d (%s) badly indexed", i, h.Name)
				}
			}
			for i, l := range p.Links {
				if l.Index != i {
					t.Fatalf("link %d (%s) has index %d", i, l.Name, l.Index)
				}
			}
			checkRoutes(t, p, c.routes)
		})
	}
}

func TestSmallPlatformAttributes(t *testing.T) {
	p, err := Load(testenv.Shared(t, "simgrid-replay-tests/examples/platforms/small_platform.xml"))
	if err != nil {
		t.Fatal(err)
	}
	h, _ := p.Host("Jacquelin")
	if h.Speed != 137.333e6 || h.Cores != 1 || h.Index != 5 {
		t.Errorf("Jacquelin = %+v", h)
	}
	links := map[string]*Link{}
	for _, l := range p.Links {
		links[l.Name] = l
	}
	if l := links["loopback"]; l == nil || l.Sharing != FatPipe || l.Bandwidth != 498e6 || l.Latency != 1.4999999999999999e-05 {
		t.Errorf("loopback = %+v", l)
	}
	if l := links["__loopback__"]; l == nil || l.Sharing != FatPipe || l.Bandwidth != 10e9 || l.Latency != 0 {
		t.Errorf("__loopback__ = %+v", l)
	}
	if l := links["145"]; l == nil || l.Sharing != Shared || l.Bandwidth != 2.583375e6 {
		t.Errorf("145 = %+v", l)
	}
}

func TestTestdataPlatforms(t *testing.T) {
	p, err := Load(filepath.Join("testdata", "nested.xml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Hosts) != 16 || p.Config["network/loopback-bw"] != "5e9" {
		t.Fatalf("%d hosts, config %v", len(p.Hosts), p.Config)
	}
	b0, _ := p.Host("b-0")
	if b0.Speed != 1e9 || b0.Props["rack"] != "B" {
		t.Errorf("b-0 = %+v", b0)
	}
	d2, _ := p.Host("desk2")
	if d2.Props["smpi/os"] != "0:1e-6:0" {
		t.Errorf("desk2 props = %v", d2.Props)
	}
	checkRoutes(t, p, []wantRoute{
		// Limiter, private link and backbone are not repeated on a route to self.
		{"a-0.lan", "a-0.lan", "cA_link_0_limiter cA_link_0_UP cA_backbone cA_link_0_DOWN", 4e-6},
		// Between zones: up to the gateway, the zoneRoute, down from the gateway.
		{"a-0.lan", "b-2", "cA_link_0_limiter cA_link_0_UP cA_backbone wan cB_link_2", 1e-6 + 2e-6 + 1e-3 + 10e-6},
		{"b-2", "b-2", "cB_link_2_loopback", 0.1e-6},
		// The reverse of a symmetrical zoneRoute swaps UP and DOWN.
		{"desk1", "a-3.lan", "d1_UP wan2_DOWN cA_backbone cA_link_3_DOWN cA_link_3_limiter", 100e-6 + 2e-3 + 2e-6 + 1e-6},
		// Implicit loopback of a Full zone uses network/loopback-bw.
		{"desk1", "desk1", "__loopback__", 0},
	})
	lb := p.Links[len(p.Links)-1]
	for _, l := range p.Links {
		if l.Name == "__loopback__" {
			lb = l
		}
	}
	if lb.Bandwidth != 5e9 {
		t.Errorf("__loopback__ bandwidth %v, want 5e9 from <config>", lb.Bandwidth)
	}
}

func TestRouteIsCachedAndShared(t *testing.T) {
	p, err := ParseCluster("4x1Gf,1GBps,1us")
	if err != nil {
		t.Fatal(err)
	}
	a, b := p.Hosts[0], p.Hosts[3]
	l1, lat1 := p.Route(a, b)
	l2, lat2 := p.Route(a, b)
	if &l1[0] != &l2[0] || lat1 != lat2 {
		t.Error("second call did not come from the cache")
	}
	back, _ := p.Route(b, a)
	if linkNames(back) != "cluster_link_3_UP cluster_link_0_DOWN" {
		t.Errorf("reverse route %s", linkNames(back))
	}
	if _, _, err := p.RouteErr(nil, b); err == nil {
		t.Error("nil host accepted")
	}
	l3, lat3, err := p.RouteOnce(a, b)
	if err != nil || linkNames(l3) != linkNames(l1) || lat3 != lat1 || &l3[0] == &l1[0] {
		t.Errorf("RouteOnce: %s, %v, %v; want a fresh copy of %s, %v", linkNames(l3), lat3, err, linkNames(l1), lat1)
	}
	if _, _, err := p.RouteOnce(a, nil); err == nil {
		t.Error("RouteOnce: nil host accepted")
	}
}

// TestParseClusterMatchesXML checks that the one-line form builds the same
// platform as the equivalent <cluster> element.
func TestParseClusterMatchesXML(t *testing.T) {
	cases := []struct{ spec, xml string }{
		{"32x1Gf,125MBps,50us,id=c", `<cluster id="c" prefix="node-" suffix="" radical="0-31" speed="1Gf" bw="125MBps" lat="50us"/>`},
		{"12x1Gf,125MBps,50us,topo=torus:3,2,2,loopback=100MBps,0,id=bob,suffix=.org",
			`<cluster id="bob" prefix="node-" suffix=".org" radical="0-11" speed="1Gf" bw="125MBps" lat="50us" topology="TORUS" topo_parameters="3,2,2" loopback_bw="100MBps" loopback_lat="0"/>`},
		{"16x2Gf,1GBps,1us,topo=fat_tree:2;4,4;1,2;1,2,limiter=2GBps,cores=4",
			`<cluster id="cluster" prefix="node-" suffix="" radical="0-15" speed="2Gf" core="4" bw="1GBps" lat="1us" topology="FAT_TREE" topo_parameters="2;4,4;1,2;1,2" limiter_link="2GBps"/>`},
		{"24x1Gf,1GBps,1us,topo=dragonfly:2,2;2,3;3,2;2,sharing=shared",
			`<cluster id="cluster" prefix="node-" suffix="" radical="0-23" speed="1Gf" bw="1GBps" lat="1us" topology="DRAGONFLY" topo_parameters="2,2;2,3;3,2;2" sharing_policy="SHARED"/>`},
		{"8x1Gf,1GBps,1us,bb=10GBps,5us,bb-sharing=fatpipe,sharing=fatpipe,prefix=n",
			`<cluster id="cluster" prefix="n" suffix="" radical="0-7" speed="1Gf" bw="1GBps" lat="1us" bb_bw="10GBps" bb_lat="5us" bb_sharing_policy="FATPIPE" sharing_policy="FATPIPE"/>`},
		{"4x1Gf,1GBps,1us,watts=95:120:200",
			`<cluster id="cluster" prefix="node-" suffix="" radical="0-3" speed="1Gf" bw="1GBps" lat="1us"><prop id="wattage_per_state" value="95:120:200"/></cluster>`},
	}
	for _, c := range cases {
		one, err := ParseCluster(c.spec)
		if err != nil {
			t.Fatalf("%s: %v", c.spec, err)
		}
		xml, err := Parse(strings.NewReader(`<platform version="4.1">`+c.xml+`</platform>`), "spec.xml")
		if err != nil {
			t.Fatalf("%s: %v", c.xml, err)
		}
		if len(one.Hosts) != len(xml.Hosts) || len(one.Links) != len(xml.Links) {
			t.Fatalf("%s: %d hosts %d links, XML %d hosts %d links", c.spec, len(one.Hosts), len(one.Links), len(xml.Hosts), len(xml.Links))
		}
		for i, h := range one.Hosts {
			x := xml.Hosts[i]
			if h.Name != x.Name || h.Speed != x.Speed || h.Cores != x.Cores || h.Props["wattage_per_state"] != x.Props["wattage_per_state"] {
				t.Fatalf("%s: host %d %+v vs %+v", c.spec, i, h, x)
			}
		}
		for i, l := range one.Links {
			if !reflect.DeepEqual(*l, *xml.Links[i]) {
				t.Fatalf("%s: link %d %+v vs %+v", c.spec, i, l, xml.Links[i])
			}
		}
		for _, s := range one.Hosts {
			for _, d := range one.Hosts {
				l1, lat1 := one.Route(s, d)
				xs, _ := xml.Host(s.Name)
				xd, _ := xml.Host(d.Name)
				l2, lat2 := xml.Route(xs, xd)
				if linkNames(l1) != linkNames(l2) || lat1 != lat2 || len(l1) == 0 {
					t.Fatalf("%s: route %s->%s %s vs %s", c.spec, s.Name, d.Name, linkNames(l1), linkNames(l2))
				}
			}
		}
	}
}

func TestParseClusterErrors(t *testing.T) {
	cases := []struct{ spec, want string }{
		{"", "expected NxSPEED"},
		{"64,1GBps,1us", "expected NxSPEED"},
		{"0x1Gf,1GBps,1us", "not an integer from 1 to 4194304"},
		{"5000000x1Gf,1GBps,1us", "not an integer from 1 to 4194304"},
		{"4x1Gz,1GBps,1us", `unknown unit "Gz"`},
		{"4x1Gf,1GB,1us", `unknown unit "GB"`},
		{"4x1Gf,1GBps,1parsec", `unknown unit "parsec"`},
		{"4x1Gf,1GBps,1us,foo=1", "unknown option"},
		{"4x1Gf,1GBps,1us,topo=torus:2,3", "has 6 nodes, not 4"},
		{"4x1Gf,1GBps,1us,topo=ring:4", "expected flat, torus"},
		{"4x1Gf,1GBps,1us,topo=torus:2,x", "not an integer"},
		{"4x1Gf,1GBps,1us,topo=fat_tree:2;2,2;1,2", "4 parts"},
		{"4x1Gf,1GBps,1us,cores=0", "positive number of cores"},
		{"4x1Gf,1GBps,1us,cores=2,cores=3", "given twice"},
		{"4x1Gf,1GBps,1us,7", "expected option=value"},
		{"4x1Gf,1GBps,1us,watts=100", "expected IDLE:ALLCORES"},
		{"4x1Gf,1GBps,1us,watts=1:x:3", "expected IDLE:ALLCORES"},
	}
	for _, c := range cases {
		_, err := ParseCluster(c.spec)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseCluster(%q) = %v, want error containing %q", c.spec, err, c.want)
		}
	}
}

func TestUnits(t *testing.T) {
	// Expected values are what SimGrid 3.32 computes (strtod, then a
	// multiplication by the unit), as printed with %.17g.
	cases := []struct {
		q    quantity
		in   string
		want float64
	}{
		{speedQ, "1Gf", 1e9}, {speedQ, "98.095Mf", 98.095e6}, {speedQ, "1e3kf", 1e6}, {speedQ, "2megaflops", 2e6},
		{speedQ, "1Yf", 1e24}, {speedQ, "100", 100},
		{bandwidthQ, "125MBps", 125e6}, {bandwidthQ, "1Gbps", 125e6}, {bandwidthQ, "1KiBps", 1024},
		{bandwidthQ, "1Mibps", 1024 * 1024 / 8.0}, {bandwidthQ, "8.158MBps", 8157999.9999999991}, {bandwidthQ, "1TBps", 1e12},
		{timeQ, "50us", 4.9999999999999996e-05}, {timeQ, "1.5ms", 1.5e-3}, {timeQ, "2m", 120}, {timeQ, "1h", 3600}, {timeQ, "1d", 86400},
		{timeQ, "1w", 604800}, {timeQ, "3ns", 3.0000000000000004e-09}, {timeQ, "4ps", 4e-12}, {timeQ, " 1e-3s", 1e-3}, {timeQ, "0", 0},
	}
	for _, c := range cases {
		got, _, err := c.q.parse(c.in)
		if err != nil || got != c.want {
			t.Errorf("%s %q = %v, %v; want %v", c.q.what, c.in, got, err, c.want)
		}
	}
	for _, bad := range []struct {
		q  quantity
		in string
	}{{speedQ, "1Kif"}, {speedQ, "fast"}, {speedQ, ""}, {bandwidthQ, "1GB"}, {timeQ, "1e"}, {timeQ, "1 s"}, {timeQ, "1sec"},
		// Numbers that parse but mean nothing (issue 43): SimGrid
		// aborts or deadlocks on them, or warns and goes on.
		{speedQ, "0"}, {speedQ, "NaNf"}, {speedQ, "1e308Gf"}, {speedQ, "-1Gf"}, {speedQ, "inff"}, {bandwidthQ, "0Bps"},
		{bandwidthQ, "-1GBps"}, {bandwidthQ, "1e400Bps"}, {timeQ, "-1us"}, {timeQ, "nans"}, {timeQ, "infs"}} {
		if v, _, err := bad.q.parse(bad.in); err == nil {
			t.Errorf("%s %q accepted as %v", bad.q.what, bad.in, v)
		}
	}
	if _, warn, _ := timeQ.parse("0.5"); warn == "" {
		t.Error("no warning for a unit-less latency")
	}
	if v, err := ParseBandwidth("10Gbps"); err != nil || v != 1.25e9 {
		t.Errorf("ParseBandwidth = %v, %v", v, err)
	}
	if v, err := ParseSpeed("1Gf"); err != nil || v != 1e9 {
		t.Errorf("ParseSpeed = %v, %v", v, err)
	}
	if v, err := ParseTime("1ms"); err != nil || v != 1e-3 {
		t.Errorf("ParseTime = %v, %v", v, err)
	}
}

func TestHostfile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "hosts")
	if err := os.WriteFile(path, []byte("node-1\n\n node-0:2 \nnode-3:0\nnode-2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	names, err := ReadHostfile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(names, ","); got != "node-1,node-0,node-0,node-2" {
		t.Errorf("expanded hostfile %s", got)
	}
	p, err := ParseCluster("4x1Gf,1GBps,1us")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ReadHostfileFor(p, path); err != nil {
		t.Error(err)
	}
	bad := filepath.Join(dir, "bad")
	os.WriteFile(bad, []byte("node-0\nnode-9:2\n"), 0o644)
	if _, err := ReadHostfileFor(p, bad); err == nil || !strings.Contains(err.Error(), "bad:2: host \"node-9\" is not in platform") {
		t.Errorf("unknown host: %v", err)
	}
	os.WriteFile(bad, []byte("node-0\nnode-1:x\n"), 0o644)
	var he *HostfileError
	if _, err := ReadHostfile(bad); !errors.As(err, &he) || he.Line != 2 {
		t.Errorf("bad count: %v", err)
	}
	os.WriteFile(bad, []byte("\n\n"), 0o644)
	if _, err := ReadHostfile(bad); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Errorf("empty hostfile: %v", err)
	}
	if _, err := ReadHostfile(filepath.Join(dir, "missing")); err == nil {
		t.Error("missing hostfile accepted")
	}
	if hf := testenv.Shared(t, "simgrid-replay-tests/teshsuite/smpi/hostfile_coll"); hf != "" {
		names, err := ReadHostfile(hf)
		if err != nil || len(names) != 20 || names[0] != "Tremblay" || names[4] != "Jupiter" {
			t.Errorf("hostfile_coll: %v %v", names, err)
		}
	}
}

// TestHostfileErrors: a malformed line's error names the file and line,
// says what was expected with its bound, and quotes at most 80 bytes of
// the line.
func TestHostfileErrors(t *testing.T) {
	long := strings.Repeat("x", 100) + ":y"
	for _, c := range []struct{ text, want string }{
		{"node-0:abc\n", `hf:1: "node-0:abc": expected host or host:K with K a number of slots from 0 to 1048576`},
		{"node-0\nnode-0:-1\n", `hf:2: "node-0:-1": expected host or host:K with K a number of slots from 0 to 1048576`},
		{"node-0:99999999999999999999\n", `hf:1: "node-0:99999999999999999999": expected host or host:K with K a number of slots from 0 to 1048576`},
		{"node-0:1048577\n", `hf:1: "node-0:1048577": expected host or host:K with K a number of slots from 0 to 1048576`},
		{long + "\n", `hf:1: "` + long[:80] + `...": expected host or host:K with K a number of slots from 0 to 1048576`},
		{":3\n", `hf:1: ":3": missing host name`},
	} {
		if _, err := parseHostfile(strings.NewReader(c.text), "hf"); err == nil || err.Error() != c.want {
			t.Errorf("%q:\n got %v\nwant %s", c.text, err, c.want)
		}
	}
}

func TestDeploy(t *testing.T) {
	p, err := ParseCluster("12x1Gf,1GBps,1us")
	if err != nil {
		t.Fatal(err)
	}
	hosts := func(hs []*Host) string {
		var s []string
		for _, h := range hs {
			s = append(s, strings.TrimPrefix(h.Name, "node-"))
		}
		return strings.Join(s, " ")
	}
	cases := []struct {
		names []string
		np    int
		m     Mapping
		want  string
	}{
		{[]string{"node-0", "node-1", "node-2"}, 7, RoundRobin, "0 1 2 0 1 2 0"},
		{[]string{"node-0", "node-1", "node-2"}, 7, Block, "0 0 0 1 1 2 2"},
		{[]string{"node-0", "node-1", "node-2", "node-3"}, 6, Block, "0 0 1 1 2 3"},
		{[]string{"node-0", "node-1"}, 6, Block, "0 0 0 1 1 1"},
		{[]string{"node-0", "node-1", "node-2"}, 2, Block, "0 1"},
		{[]string{"node-5", "node-5", "node-3"}, 4, RoundRobin, "5 5 3 5"},
		// Without a hostfile SimGrid takes the hosts sorted by name.
		{nil, 12, RoundRobin, "0 1 10 11 2 3 4 5 6 7 8 9"},
		{nil, 3, Block, "0 1 10"},
	}
	for _, c := range cases {
		got, err := Deploy(p, c.names, c.np, c.m)
		if err != nil || hosts(got) != c.want {
			t.Errorf("Deploy(%v, %d, %v) = %s, %v; want %s", c.names, c.np, c.m, hosts(got), err, c.want)
		}
	}
	if _, err := Deploy(p, []string{"node-0", "nope"}, 2, RoundRobin); err == nil || !strings.Contains(err.Error(), `entry 2: host "nope"`) {
		t.Errorf("unknown host: %v", err)
	}
	if _, err := Deploy(p, nil, 0, RoundRobin); err == nil {
		t.Error("np=0 accepted")
	}
	for _, s := range []string{"rr", "block", "RoundRobin"} {
		if _, err := ParseMapping(s); err != nil {
			t.Error(err)
		}
	}
	if _, err := ParseMapping("scatter"); err == nil {
		t.Error("bad mapping accepted")
	}
}

// TestConcurrentRoutes exercises the cache from several goroutines (run
// with -race).
func TestConcurrentRoutes(t *testing.T) {
	p, err := Parse(strings.NewReader(hdr+`<zone id="g" routing="Dijkstra">
<host id="a" speed="1Gf"/><host id="b" speed="1Gf"/><host id="c" speed="1Gf"/><router id="r"/>
<link id="l1" bandwidth="1GBps"/><link id="l2" bandwidth="1GBps"/><link id="l3" bandwidth="1GBps"/>
<route src="a" dst="r"><link_ctn id="l1"/></route><route src="b" dst="r"><link_ctn id="l2"/></route>
<route src="c" dst="r"><link_ctn id="l3"/></route></zone></platform>`), "g.xml")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan string)
	for g := 0; g < 4; g++ {
		go func() {
			var s []string
			for i := 0; i < 50; i++ {
				for _, x := range p.Hosts {
					for _, y := range p.Hosts {
						l, _ := p.Route(x, y)
						s = append(s, linkNames(l))
					}
				}
			}
			done <- strings.Join(s, "|")
		}()
	}
	first := <-done
	for g := 1; g < 4; g++ {
		if <-done != first {
			t.Error("goroutines saw different routes")
		}
	}
	a, _ := p.Host("a")
	c, _ := p.Host("c")
	if l, _ := p.Route(a, c); linkNames(l) != "l1 l3" {
		t.Errorf("a -> c = %s", linkNames(l))
	}
}

// TestFigure7Platform is the platform and deployment of Figure 7 of seed
// paper 003 (the time-independent replay framework). Its v3 file (power=,
// unit-less values) is refused as SimGrid 3.32 refuses it; the same
// cluster in v4.1 loads, and the deployment puts rank i on c-i.me.
func TestFigure7Platform(t *testing.T) {
	v3 := `<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "simgrid.dtd">
<platform version="3">
<cluster id="cluster" prefix="c-" suffix=".me" radical="0-3" power="1E9" bw="1.25E8" lat="15E-6" bb_bw="1.25E9" bblat="15e-6"/>
</platform>`
	if _, err := Parse(strings.NewReader(v3), "fig7.xml"); err == nil || !strings.Contains(err.Error(), "fig7.xml:3: <platform> attribute version: version 3 is too old") {
		t.Errorf("v3 platform: %v", err)
	}
	v41 := `<platform version="4.1">
<cluster id="cluster" prefix="c-" suffix=".me" radical="0-3" speed="1E9f" bw="1.25E8Bps" lat="15E-6s" bb_bw="1.25E9Bps" bb_lat="15e-6s"/>
</platform>`
	p, err := Parse(strings.NewReader(v41), "fig7.xml")
	if err != nil {
		t.Fatal(err)
	}
	checkRoutes(t, p, []wantRoute{
		{"c-0.me", "c-1.me", "cluster_link_0_UP cluster_backbone cluster_link_1_DOWN", 45e-6},
		{"c-3.me", "c-0.me", "cluster_link_3_UP cluster_backbone cluster_link_0_DOWN", 45e-6},
	})
	hosts, err := Deploy(p, []string{"c-0.me", "c-1.me", "c-2.me", "c-3.me"}, 4, RoundRobin)
	if err != nil {
		t.Fatal(err)
	}
	for i, h := range hosts {
		if h.Name != fmt.Sprintf("c-%d.me", i) || h.Speed != 1e9 {
			t.Errorf("rank %d on %+v", i, h)
		}
	}
}

// TestParseWithLoopbackSettings: the implicit loopback settings given by
// the caller win over the platform's <config>, as SimGrid's command line
// does; a bad one is an error naming it.
func TestParseWithLoopbackSettings(t *testing.T) {
	doc := `<?xml version='1.0'?>
<platform version="4.1">
  <config><prop id="network/loopback-bw" value="1e7"/><prop id="network/loopback-lat" value="1e-6"/></config>
  <zone id="z" routing="Full"><host id="a" speed="1Gf"/></zone>
</platform>`
	p, err := ParseWith(strings.NewReader(doc), "p.xml", map[string]string{"network/loopback-bw": "2e9", "smpi/os": "0:0:0"})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := p.Host("a")
	links, lat := p.Route(a, a)
	if len(links) != 1 || links[0].Name != "__loopback__" || links[0].Bandwidth != 2e9 || lat != 1e-6 {
		t.Errorf("loopback %+v, latency %g; want 2e9 B/s from the caller, 1e-6 s from <config>", links, lat)
	}
	if _, err := ParseWith(strings.NewReader(doc), "p.xml", map[string]string{"network/loopback-lat": "soon"}); err == nil ||
		!strings.Contains(err.Error(), `--cfg network/loopback-lat: "soon" is not a number`) {
		t.Errorf("bad setting: %v", err)
	}
}

// TestScale: a scaled platform routes as the one written with the scaled
// values, routes computed before scaling included.
func TestScale(t *testing.T) {
	p, err := ParseCluster("4x1Gf,125MBps,50us,bb=1GBps,10us")
	if err != nil {
		t.Fatal(err)
	}
	a, b := p.Hosts[0], p.Hosts[3]
	if _, lat := p.Route(a, b); math.Abs(lat-110e-6) > 1e-18 {
		t.Fatalf("latency %g before scaling", lat)
	}
	if err := p.Scale(2, 0.5, 3); err != nil {
		t.Fatal(err)
	}
	links, lat := p.Route(a, b)
	if math.Abs(lat-55e-6) > 1e-18 || links[0].Bandwidth != 250e6 || links[1].Bandwidth != 2e9 || a.Speed != 3e9 {
		t.Errorf("scaled: latency %g, links %v, speed %g", lat, links, a.Speed)
	}
	for _, bad := range [][3]float64{{0, 1, 1}, {1, -1, 1}, {1, 1, math.Inf(1)}, {1, math.NaN(), 1}} {
		if err := p.Scale(bad[0], bad[1], bad[2]); err == nil {
			t.Errorf("Scale%v accepted", bad)
		}
	}
}

func TestParseProfile(t *testing.T) {
	for _, c := range []struct {
		text   string
		period float64
		want   string
	}{
		{"0 1\n0.5 0.5\n", -1, "{[{0 1} {0.5 0.5}] -1}"},
		{"# comment\n% other\n\n0.1 2\n0.4 1\n", 1, "{[{0.1 2} {0.30000000000000004 1}] 0.6}"},
		{"0.05 0.5\r\n0.5 1.5\r\nLOOPAFTER 0.2\r\n", -1, "{[{0.05 0.5} {0.45 1.5}] 0.2}"},
		{"PERIODICITY 2\n0 1\n1 0.5\n", -1, "{[{0 1} {1 0.5}] 1}"},
		{"", -1, "{[] -1}"},
	} {
		p, err := ParseProfile(c.text, c.period)
		if err != nil || fmt.Sprint(*p) != c.want {
			t.Errorf("ParseProfile(%q, %g) = %v, %v; want %s", c.text, c.period, p, err, c.want)
		}
	}
	for _, bad := range []string{"1", "a b", "-1 2", "1 1\n0 1", "STOCHASTIC\nDET 1 DET 2", "PERIODICITY x", "PERIODICITY 1\nLOOPAFTER 1\n0 1", "0 1\n2 1\nPERIODICITY 1"} {
		if _, err := ParseProfile(bad, -1); err == nil {
			t.Errorf("ParseProfile(%q) accepted", bad)
		}
	}
}

// FuzzParseProfile: any text gives a profile or an error, never a panic,
// and a repeating profile always moves time forward.
func FuzzParseProfile(f *testing.F) {
	for _, s := range []string{"0 1\n0.5 0.5\n", "PERIODICITY 1\n0 1\n", "LOOPAFTER 0\n0 1\n", "# x\n1e9 0\n",
		"-1 1\n", "0 nan\n", "1e308 1\n0 -1e6\n", "0 1e400\n"} {
		f.Add(s, -1.0)
		f.Add(s, 0.5)
	}
	f.Fuzz(func(t *testing.T, text string, period float64) {
		p, err := ParseProfile(text, period)
		if err != nil || p.Repeat < 0 {
			return
		}
		total := p.Repeat
		for _, e := range p.Events {
			total += e.Delay
		}
		if !(total > 0) {
			t.Fatalf("ParseProfile(%q, %g) repeats without time passing: %+v", text, period, p)
		}
	})
}

// TestProfileFileErrors: a bad speed_file is located in its own file, and
// the platform element naming it is said.
func TestProfileFileErrors(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "s.prof"), []byte("0 1\n# comment\n1 fast\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	plat := filepath.Join(dir, "p.xml")
	if err := os.WriteFile(plat, []byte(`<?xml version='1.0'?>
<platform version="4.1"><zone id="z" routing="Full">
<host id="a" speed="1Gf" speed_file="s.prof"/></zone></platform>
`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(plat)
	want := filepath.Join(dir, "s.prof") + `:3: "1 fast": expected "DATE VALUE", two numbers (the speed_file of the <host> at ` + plat + ":3)"
	if err == nil || err.Error() != want {
		t.Errorf("error %v\nwant %s", err, want)
	}
}

// TestLinkProfiles: a link's bandwidth_file and latency_file are read
// beside the platform, both halves of a SPLITDUPLEX link take the pair's,
// a bad one is located in its own file, and Scale scales their values
// once for links that share a profile (a SPLITDUPLEX link's halves).
func TestLinkProfiles(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{"bw.txt": "0 1e8\n1 2e8\nPERIODICITY 3\n", "bw2.txt": "0 1e8\n1 2e8\nPERIODICITY 3\n", "lat.txt": "0.5 1e-4\n", "bad.txt": "0 1e8\n0.5\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write := func(links string) string {
		plat := filepath.Join(dir, "p.xml")
		if err := os.WriteFile(plat, []byte(`<?xml version='1.0'?>
<platform version="4.1"><zone id="z" routing="Full"><host id="a" speed="1Gf"/>
`+links+`</zone></platform>
`), 0o644); err != nil {
			t.Fatal(err)
		}
		return plat
	}
	p, err := Load(write(`<link id="s" bandwidth="1GBps" bandwidth_file="bw.txt" latency_file="lat.txt"/>
<link id="d" bandwidth="1GBps" sharing_policy="SPLITDUPLEX" bandwidth_file="bw2.txt"/>`))
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*Link{}
	for _, l := range p.Links {
		byName[l.Name] = l
	}
	s, up, down := byName["s"], byName["d_UP"], byName["d_DOWN"]
	if s == nil || up == nil || down == nil {
		t.Fatalf("links %v", byName)
	}
	want := &Profile{Events: []ProfileEvent{{0, 1e8}, {1, 2e8}}, Repeat: 2}
	if !reflect.DeepEqual(s.BandwidthProfile, want) || !reflect.DeepEqual(up.BandwidthProfile, want) || !reflect.DeepEqual(down.BandwidthProfile, want) {
		t.Errorf("bandwidth profiles %+v %+v %+v, want %+v", s.BandwidthProfile, up.BandwidthProfile, down.BandwidthProfile, want)
	}
	if lp := s.LatencyProfile; lp == nil || len(lp.Events) != 1 || lp.Events[0] != (ProfileEvent{0.5, 1e-4}) || up.LatencyProfile != nil {
		t.Errorf("latency profiles %+v %+v", s.LatencyProfile, up.LatencyProfile)
	}
	if err := p.Scale(2, 0.5, 1); err != nil {
		t.Fatal(err)
	}
	if up.BandwidthProfile != down.BandwidthProfile || up.BandwidthProfile.Events[1].Value != 4e8 || s.LatencyProfile.Events[0].Value != 5e-5 {
		t.Errorf("scaled: %+v %+v %+v", up.BandwidthProfile, down.BandwidthProfile, s.LatencyProfile)
	}
	_, err = Load(write(`<link id="s" bandwidth="1GBps" latency_file="bad.txt"/>`))
	if want := filepath.Join(dir, "bad.txt") + `:2: "0.5": expected "DATE VALUE"`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v\nwant %s", err, want)
	}
}

// TestNoneZone: a routing="None" zone (SimGrid's EmptyZone) has no route
// inside it, even from a host to itself, and takes no <route>; its host
// can end a zoneRoute (see testdata/nonezones.xml, compared with SimGrid).
func TestNoneZone(t *testing.T) {
	p, err := Parse(strings.NewReader(`<?xml version='1.0'?>
<platform version="4.1"><zone id="root" routing="Full">
<zone id="pair" routing="None"><host id="p0" speed="1Gf"/><host id="p1" speed="1Gf"/></zone>
<zone id="far" routing="Full"><host id="f" speed="1Gf"/></zone>
<link id="wan" bandwidth="1MBps" latency="1ms"/>
<zoneRoute src="pair" dst="far" gw_src="p0" gw_dst="f"><link_ctn id="wan"/></zoneRoute>
</zone></platform>`), "n.xml")
	if err != nil {
		t.Fatal(err)
	}
	host := func(name string) *Host {
		h, ok := p.Host(name)
		if !ok {
			t.Fatalf("no host %s", name)
		}
		return h
	}
	if links, lat, err := p.RouteErr(host("p0"), host("f")); err != nil || len(links) != 1 || lat != 1e-3 {
		t.Errorf("p0 -> f: %v %v %v", links, lat, err)
	}
	for _, pair := range [][2]string{{"p0", "p1"}, {"p1", "p1"}, {"p1", "f"}} {
		if _, _, err := p.RouteErr(host(pair[0]), host(pair[1])); err == nil || !strings.Contains(err.Error(), `zone pair has routing="None"`) {
			t.Errorf("%s -> %s: error %v", pair[0], pair[1], err)
		}
	}
	_, err = Parse(strings.NewReader(`<?xml version='1.0'?>
<platform version="4.1"><zone id="z" routing="None"><host id="a" speed="1Gf"/><host id="b" speed="1Gf"/>
<link id="l" bandwidth="1GBps"/><route src="a" dst="b"><link_ctn id="l"/></route></zone></platform>`), "n.xml")
	if err == nil || !strings.Contains(err.Error(), "n.xml:3: <route>") || !strings.Contains(err.Error(), "accepts no route") {
		t.Errorf("route in a None zone: %v", err)
	}
}

// TestVivaldiWithoutCoordinates: a route in a Vivaldi zone to a host
// without coordinates is an error (SimGrid aborts), and so is one between
// its sub-zones (see testdata/vivaldi.xml for routes compared with
// SimGrid).
func TestVivaldiWithoutCoordinates(t *testing.T) {
	p, err := Parse(strings.NewReader(`<?xml version='1.0'?>
<platform version="4.1"><zone id="z" routing="Vivaldi">
<zone id="x" routing="Full"><host id="a" speed="1Gf" coordinates="1 2 3"/></zone>
<zone id="y" routing="Vivaldi"><peer id="b" speed="1Gf" bw_in="1GBps" bw_out="1GBps" coordinates="0 0 0"/><peer id="c" speed="1Gf" bw_in="1GBps" bw_out="1GBps"/></zone>
</zone></platform>`), "v.xml")
	if err != nil {
		t.Fatal(err)
	}
	host := func(name string) *Host {
		h, _ := p.Host(name)
		return h
	}
	if _, _, err := p.RouteErr(host("b"), host("c")); err == nil || !strings.Contains(err.Error(), "host c has no Vivaldi coordinates") {
		t.Errorf("b -> c: %v", err)
	}
	if _, _, err := p.RouteErr(host("a"), host("b")); err == nil || !strings.Contains(err.Error(), "zone x has no Vivaldi coordinates") {
		t.Errorf("a -> b: %v", err)
	}
}

// TestRouteLatencyTerms: on every platform of testdata, the addends
// RouteLatency gives for each pair of hosts sum, in their order, to the
// latency Route gives, bit for bit, and name links of the route (not all:
// limiters add no latency in SimGrid); a route through zones starts with
// the links between them, and a Vivaldi zone's distance is a fixed addend.
func TestRouteLatencyTerms(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.xml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no platforms in testdata: %v", err)
	}
	for _, f := range files {
		p, err := Load(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, src := range p.Hosts {
			for _, dst := range p.Hosts {
				links, lat, err := p.RouteErr(src, dst)
				terms := p.RouteLatency(src, dst)
				if err != nil {
					if terms != nil {
						t.Errorf("%s: %s -> %s: no route, but latency terms %v", f, src.Name, dst.Name, terms)
					}
					continue
				}
				sum := 0.0
				for _, term := range terms {
					if term.Link == nil {
						sum += term.Fixed
						continue
					}
					sum += term.Link.Latency
					if !slices.Contains(links, term.Link) {
						t.Errorf("%s: %s -> %s: latency of link %s, not on the route", f, src.Name, dst.Name, term.Link.Name)
					}
				}
				if sum != lat {
					t.Errorf("%s: %s -> %s: terms sum to %v, route latency %v", f, src.Name, dst.Name, sum, lat)
				}
			}
		}
	}
	p, err := Load(filepath.Join("testdata", "vivaldi.xml"))
	if err != nil {
		t.Fatal(err)
	}
	paris, _ := p.Host("paris")
	home1, _ := p.Host("home1")
	terms := p.RouteLatency(paris, home1)
	if len(terms) == 0 || terms[0].Link == nil || terms[0].Link.Name != "isp" {
		t.Fatalf("paris -> home1: terms %v, want the link between the zones first", terms)
	}
	fixed := 0
	for _, term := range terms {
		if term.Link == nil {
			fixed++
		}
	}
	if fixed != 2 {
		t.Errorf("paris -> home1: %d fixed addends, want a distance in each Vivaldi zone", fixed)
	}
}

// TestRouteAppend checks RouteAppend against RouteOnce on every pair of
// hosts of platforms of each kind of zone, after what buf held, and that
// it allocates nothing once its scratch has grown.
func TestRouteAppend(t *testing.T) {
	for _, f := range []string{"bypass.xml", "graphs.xml", "nested.xml", "nonezones.xml", "recursive.xml", "starzones.xml", "topologies.xml", "topologies2.xml", "vivaldi.xml"} {
		p, err := Load(filepath.Join("testdata", f))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		buf := []int{-7}
		for _, a := range p.Hosts {
			for _, b := range p.Hosts {
				want, wlat, werr := p.RouteOnce(a, b)
				got, lat, err := p.RouteAppend(buf[:1], a, b)
				if (err == nil) != (werr == nil) || err != nil && err.Error() != werr.Error() {
					t.Fatalf("%s: %s -> %s: error %v, want %v", f, a.Name, b.Name, err, werr)
				}
				if got[0] != -7 || len(got) != len(want)+1 || lat != wlat {
					t.Fatalf("%s: %s -> %s: %v, %v; want -7 then %s, %v", f, a.Name, b.Name, got, lat, linkNames(want), wlat)
				}
				for i, l := range want {
					if got[i+1] != l.Index {
						t.Fatalf("%s: %s -> %s: %v; want -7 then %s", f, a.Name, b.Name, got, linkNames(want))
					}
				}
				buf = got
			}
		}
	}
	p, err := ParseCluster("4x1Gf,1GBps,1us")
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]int, 0, 8)
	if n := testing.AllocsPerRun(100, func() { buf, _, _ = p.RouteAppend(buf[:0], p.Hosts[0], p.Hosts[3]) }); n != 0 {
		t.Errorf("RouteAppend allocates %v times a route", n)
	}
	if _, _, err := p.RouteAppend(nil, p.Hosts[0], nil); err == nil {
		t.Error("RouteAppend: nil host accepted")
	}
}
