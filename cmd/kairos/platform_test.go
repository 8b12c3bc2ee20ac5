package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPlatformVerb(t *testing.T) {
	code, out, errs := csRun("platform", "--cluster", "8x1Gf,125MBps,50us,bb=1GBps,1us,cores=2", "--route", "node-0,node-7")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"8 hosts (16 cores), 17 links", "route node-0 -> node-7: 3 links, latency 0.000101 s",
		"cluster_link_0_UP", "cluster_backbone", "cluster_link_7_DOWN"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	dir := t.TempDir()
	hf := filepath.Join(dir, "hosts")
	os.WriteFile(hf, []byte("node-1:2\nnode-3\n"), 0o644)
	code, out, errs = csRun("platform", "--cluster", "4x1Gf,1GBps,1us", "--hostfile", hf, "--np", "5", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var res platformJSON
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if strings.Join(res.Ranks, " ") != "node-1 node-1 node-3 node-1 node-1" || res.Hosts != 4 {
		t.Errorf("placement %v", res)
	}

	noPath := filepath.Join(dir, "nopath.xml")
	os.WriteFile(noPath, []byte(`<?xml version='1.0'?>
<platform version="4.1"><zone id="z" routing="Full"><host id="a" speed="1Gf"/><host id="b" speed="1Gf"/></zone></platform>
`), 0o644)
	if code, out, _ = csRun("platform", noPath, "--route", "a,b"); code != 0 || !strings.Contains(out, "route a -> b: 0 links, latency 0 s (no connecting path") {
		t.Errorf("empty route (exit %d):\n%s", code, out)
	}

	withProfile := filepath.Join(dir, "profile.xml")
	os.WriteFile(withProfile, []byte(`<?xml version='1.0'?>
<platform version="4.1"><zone id="z" routing="Full"><host id="a" speed="1Gf"><prop id="wattage_per_state" value="90:200"/></host>
<trace id="t" periodicity="0.3">0 1
0.1 0.5</trace><trace_connect kind="SPEED" trace="t" element="a"/></zone></platform>
`), 0o644)
	if code, out, _ = csRun("platform", withProfile, "--hosts"); code != 0 || !strings.Contains(out, "host a  1e+09 flop/s  1 cores  90:200 W  speed profile of 2 values, repeating 0.2 s after the last") {
		t.Errorf("host listing (exit %d):\n%s", code, out)
	}

	os.WriteFile(filepath.Join(dir, "bw.txt"), []byte("0 1e8\n1 2e8\nLOOPAFTER 2\n"), 0o644)
	withLinkProfile := filepath.Join(dir, "links.xml")
	os.WriteFile(withLinkProfile, []byte(`<?xml version='1.0'?>
<platform version="4.1"><zone id="z" routing="Full"><host id="a" speed="1Gf"/><host id="b" speed="1Gf"/>
<link id="l" bandwidth="1GBps" latency="1us" bandwidth_file="bw.txt"/><route src="a" dst="b"><link_ctn id="l"/></route></zone></platform>
`), 0o644)
	if code, out, _ = csRun("platform", withLinkProfile, "--route", "a,b"); code != 0 || !strings.Contains(out, "SHARED  bandwidth profile of 2 values, repeating 2 s after the last") {
		t.Errorf("link listing (exit %d):\n%s", code, out)
	}
	code, out, _ = csRun("platform", withLinkProfile, "--route", "b,a", "--json")
	res = platformJSON{}
	if err := json.Unmarshal([]byte(out), &res); code != 0 || err != nil || len(res.Routes) != 1 || res.Routes[0].Links[0].BandwidthEvents != 2 ||
		*res.Routes[0].Links[0].BandwidthRepeat != 2 || res.Routes[0].Links[0].LatencyRepeat != nil {
		t.Errorf("link JSON (exit %d, %v):\n%s", code, err, out)
	}

	code, out, _ = csRun("platform", "--cluster", "4x1Gf,1GBps,1us", "--np", "6", "--map", "block")
	if code != 0 || !strings.Contains(out, "node-0: ranks 0-1") || !strings.Contains(out, "node-3: ranks 5") || !strings.Contains(out, "node-2: ranks 4") {
		t.Errorf("block placement (exit %d):\n%s", code, out)
	}

	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"platform"}, 2, "needs a platform file"},
		{[]string{"platform", "--cluster", "4x1Gf,1GBps,1us", "--route", "node-0,node-9"}, 2, `no host "node-9"`},
		{[]string{"platform", "--cluster", "4xfast,1GBps,1us"}, 1, `cannot parse speed "fast"`},
		{[]string{"platform", filepath.Join(dir, "missing.xml")}, 1, "no such file"},
		{[]string{"platform", "--cluster", "4x1Gf,1GBps,1us", "--map", "scatter"}, 2, "unknown mapping"},
	} {
		code, _, errs := csRun(c.args...)
		if code != c.code || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", c.args, code, errs, c.code, c.want)
		}
	}
}
