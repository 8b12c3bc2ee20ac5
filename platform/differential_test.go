package platform

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"kairos/internal/testenv"
)

// sgRoutesTool compiles testdata/sgroutes.cpp against the installed
// SimGrid, caching the binary by source hash so repeated runs are fast.
func sgRoutesTool(t *testing.T) string {
	t.Helper()
	testenv.Tool(t, "smpirun", "libsimgrid-dev")
	gxx := testenv.Tool(t, "g++", "g++")
	src, err := os.ReadFile(filepath.Join("testdata", "sgroutes.cpp"))
	if err != nil {
		t.Fatal(err)
	}
	flags, err := exec.Command("pkg-config", "--cflags", "--libs", "simgrid").Output()
	if err != nil {
		t.Fatalf("pkg-config simgrid: %v", err)
	}
	sum := sha256.Sum256(append(src, flags...))
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "kairos-test")
	bin := filepath.Join(dir, "sgroutes-"+hex.EncodeToString(sum[:8]))
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	tmp := bin + ".tmp" + strconv.Itoa(os.Getpid())
	args := append([]string{"-O1", "-o", tmp, filepath.Join("testdata", "sgroutes.cpp")}, strings.Fields(string(flags))...)
	if out, err := exec.Command(gxx, args...).CombinedOutput(); err != nil {
		t.Fatalf("compiling sgroutes: %v\n%s", err, out)
	}
	if err := os.Rename(tmp, bin); err != nil {
		t.Fatal(err)
	}
	return bin
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
	}{
		{filepath.Join(examples, "cluster_backbone.xml"), 3},
		{filepath.Join(examples, "cluster_crossbar.xml"), 4099},
		{filepath.Join(examples, "cluster_dragonfly.xml"), 1},
		{filepath.Join(examples, "cluster_fat_tree.xml"), 1},
		{filepath.Join(examples, "cluster_torus.xml"), 1},
		{filepath.Join(examples, "small_platform.xml"), 1},
		{filepath.Join(examples, "small_platform_with_routers.xml"), 1},
		{testenv.Shared(t, "traces/ti/simgrid-replay-multiple-32/cluster32.xml"), 1},
		{testenv.Shared(t, "traces/ti/smpi-ring4/cluster4.xml"), 1},
		{filepath.Join("testdata", "nested.xml"), 1},
		{filepath.Join("testdata", "graphs.xml"), 1},
		{filepath.Join("testdata", "topologies.xml"), 1},
	}
	for _, c := range cases {
		t.Run(filepath.Base(c.path), func(t *testing.T) {
			t.Parallel()
			out, err := exec.Command(tool, c.path, strconv.Itoa(c.stride)).Output()
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
