package platform

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"kairos/internal/testenv"
	"kairos/platform/platformtest"
)

// sgRoutesTool compiles testdata/sgroutes.cpp against the installed
// SimGrid.
func sgRoutesTool(t *testing.T) string {
	t.Helper()
	return testenv.SimGridProgram(t, filepath.Join("testdata", "sgroutes.cpp"))
}

// TestRoutesMatchSimGrid loads each platform with SimGrid 3.32 and with
// this package and compares hosts, links and every route (link names in
// order, latency bit for bit).
func TestRoutesMatchSimGrid(t *testing.T) {
	tool := sgRoutesTool(t)
	examples := testenv.Shared(t, "simgrid-replay-tests/examples/platforms")
	cases := []struct {
		path   string
		stride int
		noself bool
	}{
		{filepath.Join(examples, "cluster_backbone.xml"), 3, false},
		{filepath.Join(examples, "cluster_crossbar.xml"), 4099, false},
		{filepath.Join(examples, "cluster_dragonfly.xml"), 1, false},
		{filepath.Join(examples, "cluster_fat_tree.xml"), 1, false},
		{filepath.Join(examples, "cluster_torus.xml"), 1, false},
		{filepath.Join(examples, "small_platform.xml"), 1, false},
		{filepath.Join(examples, "small_platform_with_routers.xml"), 1, false},
		{testenv.Shared(t, "traces/ti/simgrid-replay-multiple-32/cluster32.xml"), 1, false},
		{testenv.Shared(t, "traces/ti/smpi-ring4/cluster4.xml"), 1, false},
		{filepath.Join("testdata", "nested.xml"), 1, false},
		{filepath.Join("testdata", "graphs.xml"), 1, false},
		{filepath.Join("testdata", "topologies.xml"), 1, false},
		{filepath.Join("testdata", "topologies2.xml"), 1, false},
		{filepath.Join("testdata", "recursive.xml"), 1, false},
		{filepath.Join("testdata", "starzones.xml"), 1, false},
		{filepath.Join("testdata", "nonezones.xml"), 1, true},
		{filepath.Join("testdata", "bypass.xml"), 1, false},
		{filepath.Join("testdata", "vivaldi.xml"), 1, false},
	}
	for _, c := range cases {
		t.Run(filepath.Base(c.path), func(t *testing.T) {
			t.Parallel()
			args := []string{c.path, strconv.Itoa(c.stride)}
			if c.noself {
				args = append(args, "noself")
			}
			out, err := exec.Command(tool, args...).Output()
			if err != nil {
				t.Fatalf("sgroutes %s: %v", c.path, err)
			}
			p, err := Load(c.path)
			if err != nil {
				t.Fatal(err)
			}
			compareWithSimGrid(t, p, out)
		})
	}
}

func compareWithSimGrid(t *testing.T, p *Platform, out []byte) {
	t.Helper()
	links := map[string]*Link{}
	for _, l := range p.Links {
		links[l.Name] = l
	}
	nHosts, nLinks, nRoutes, bad := 0, 0, 0, 0
	fail := func(format string, a ...any) {
		bad++
		if bad <= 10 {
			t.Errorf(format, a...)
		}
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case "host":
			nHosts++
			h, ok := p.Host(f[1])
			speed, _ := strconv.ParseFloat(f[2], 64)
			cores, _ := strconv.Atoi(f[3])
			if !ok || h.Speed != speed || h.Cores != cores {
				fail("host %s: SimGrid has speed %g cores %d, we have %+v", f[1], speed, cores, h)
			}
		case "link":
			if f[1] == "__loopback__" {
				continue
			}
			nLinks++
			l, ok := links[f[1]]
			bw, _ := strconv.ParseFloat(f[2], 64)
			lat, _ := strconv.ParseFloat(f[3], 64)
			sharing := map[string]Sharing{"0": FatPipe, "1": Shared}[f[4]]
			if !ok || l.Bandwidth != bw || l.Latency != lat || l.Sharing != sharing {
				fail("link %s: SimGrid has bw %v lat %v sharing %s, we have %+v", f[1], bw, lat, f[4], l)
			}
		case "route":
			nRoutes++
			src, _ := p.Host(f[1])
			dst, _ := p.Host(f[2])
			got, lat, err := p.RouteErr(src, dst)
			if f[3] == "error" {
				if err == nil {
					fail("route %s -> %s: SimGrid fails, we give %s", f[1], f[2], linkNames(got))
				}
				continue
			}
			want, _ := strconv.ParseFloat(f[3], 64)
			if err != nil || linkNames(got) != strings.Join(f[4:], " ") || lat != want {
				fail("route %s -> %s:\n SimGrid %v %s\n we have %v %s (%v)", f[1], f[2], want, strings.Join(f[4:], " "), lat, linkNames(got), err)
			}
		}
	}
	if nHosts != len(p.Hosts) {
		t.Errorf("SimGrid has %d hosts, we have %d", nHosts, len(p.Hosts))
	}
	ours := len(p.Links)
	if _, ok := links["__loopback__"]; ok {
		ours--
	}
	if nLinks != ours {
		t.Errorf("SimGrid has %d links, we have %d", nLinks, ours)
	}
	t.Logf("compared %d hosts, %d links, %d routes", nHosts, nLinks, nRoutes)
	if bad > 0 || nRoutes == 0 {
		t.Errorf("%d differences in %d hosts, %d links, %d routes", bad, nHosts, nLinks, nRoutes)
	}
}

func linkNames(ls []*Link) string {
	names := make([]string, len(ls))
	for i, l := range ls {
		names[i] = l.Name
	}
	return strings.Join(names, " ")
}

// TestDeployMatchesSmpirun replays a trivial trace with smpirun and checks
// that Deploy puts every rank on the host SimGrid uses (SimGrid's verbose
// replay log names each rank's host).
func TestDeployMatchesSmpirun(t *testing.T) {
	smpirun := testenv.Tool(t, "smpirun", "libsimgrid-dev")
	dir := t.TempDir()
	const xml = `<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <cluster id="c" prefix="node-" suffix="" radical="0-11" speed="1Gf" bw="125MBps" lat="50us"/>
</platform>
`
	var desc strings.Builder
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("c12.xml", xml)
	for r := 0; r < 16; r++ {
		write(fmt.Sprintf("t%d.txt", r), fmt.Sprintf("%d init\n%d compute 1000\n%d finalize\n", r, r, r))
		fmt.Fprintf(&desc, "t%d.txt\n", r)
	}
	write("desc.txt", desc.String())
	write("hostfile", "node-3:2\nnode-10\n")
	p, err := Load(filepath.Join(dir, "c12.xml"))
	if err != nil {
		t.Fatal(err)
	}
	logLine := regexp.MustCompile(`^\[([^:]+):(\d+):.* compute 1000 `)
	for _, c := range []struct {
		np       int
		hostfile string
	}{{12, ""}, {14, ""}, {5, "hostfile"}} {
		args := []string{"-np", strconv.Itoa(c.np), "-platform", "c12.xml", "-replay", "desc.txt",
			"--log=smpi_replay.thresh:verbose", "--log=xbt_cfg.thresh:warning"}
		var names []string
		if c.hostfile != "" {
			args = append(args, "-hostfile", c.hostfile)
			if names, err = ReadHostfileFor(p, filepath.Join(dir, c.hostfile)); err != nil {
				t.Fatal(err)
			}
		}
		cmd := exec.Command(smpirun, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("smpirun %v: %v\n%s", args, err, out)
		}
		want := make([]string, c.np)
		for _, line := range strings.Split(string(out), "\n") {
			if m := logLine.FindStringSubmatch(line); m != nil {
				r, _ := strconv.Atoi(m[2])
				want[r] = m[1]
			}
		}
		hosts, err := Deploy(p, names, c.np, RoundRobin)
		if err != nil {
			t.Fatal(err)
		}
		for r, h := range hosts {
			if h.Name != want[r] {
				t.Errorf("np %d hostfile %q: rank %d on %s, smpirun puts it on %q", c.np, c.hostfile, r, h.Name, want[r])
			}
		}
	}
}

// TestRandomGraphZonesMatchSimGrid builds random platforms (Floyd,
// Dijkstra, DijkstraCache or Full zones of hosts and routers joined by
// routes of one or two links, shared between routes, of every sharing
// policy, symmetrical or not, with equal latencies and hop counts that
// make ties; every other platform, such zones inside one, joined by
// zoneRoutes between gateways) and requires every route between hosts to
// be SimGrid's: the same links in the same order and the same latency, or
// an error in both. KAIROS_PLATFORM_SEEDS sets how many (40 under
// KAIROS_LONG=1, else 15), from KAIROS_PLATFORM_SEED0.
func TestRandomGraphZonesMatchSimGrid(t *testing.T) {
	randomRoutesDifferential(t, "graph", 3, platformtest.RandomGraph)
}

// TestRandomClustersMatchSimGrid builds random platforms of clusters
// (platformtest.RandomClusters: flat ones with a backbone or not, tori,
// fat trees and dragonflies of random parameters, sharing policies,
// limiters, loopbacks and radicals, alone or joined by zoneRoutes in a
// Full or Floyd zone) and requires every route between hosts to be
// SimGrid's, or both to refuse the platform. KAIROS_PLATFORM_SEEDS sets
// how many (40 under KAIROS_LONG=1, else 15), from KAIROS_PLATFORM_SEED0.
func TestRandomClustersMatchSimGrid(t *testing.T) {
	randomRoutesDifferential(t, "clusters", 31, platformtest.RandomClusters)
}

// randomRoutesDifferential compares with SimGrid's the hosts, links and
// routes of the platforms gen makes from seeds KAIROS_PLATFORM_SEED0 on
// (stream tells generators apart). A platform SimGrid refuses (sgroutes
// fails) must be refused by Load too, and the other way round.
func randomRoutesDifferential(t *testing.T, name string, stream uint64, gen func(*rand.Rand) string) {
	tool := sgRoutesTool(t)
	seeds, first := 15, 0
	if testenv.Long() {
		seeds = 40
	}
	if n, err := strconv.Atoi(os.Getenv("KAIROS_PLATFORM_SEEDS")); err == nil {
		seeds = n
	}
	if n, err := strconv.Atoi(os.Getenv("KAIROS_PLATFORM_SEED0")); err == nil {
		first = n
	}
	dir := t.TempDir()
	refused := 0
	for seed := first; seed < first+seeds; seed++ {
		text := gen(rand.New(rand.NewPCG(uint64(seed), stream)))
		path := filepath.Join(dir, fmt.Sprintf("%s%d.xml", name, seed))
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		out, sgErr := exec.CommandContext(ctx, tool, path).Output()
		timedOut := ctx.Err() != nil
		cancel()
		p, err := Load(path)
		switch {
		case timedOut:
			t.Fatalf("seed %d: sgroutes did not end within a minute\n%s", seed, text)
		case sgErr != nil && err != nil:
			refused++
			continue
		case sgErr != nil:
			t.Fatalf("seed %d: SimGrid refuses the platform (%v), Load takes it\n%s", seed, sgErr, text)
		case err != nil:
			t.Fatalf("seed %d: SimGrid takes the platform, Load says %v\n%s", seed, err, text)
		}
		if !t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) { compareWithSimGrid(t, p, out) }) {
			t.Logf("seed %d:\n%s", seed, text)
		}
	}
	t.Logf("%d %s platforms, %d refused by both", seeds, name, refused)
}
