package sim

import (
	"fmt"
	"testing"

	"kairos/internal/testenv"
	"kairos/platform"
)

// TestPathRows: a route put is found for its pair only, as a copy of
// the host map's; past pathRowsMax ranks nothing is kept.
func TestPathRows(t *testing.T) {
	for _, tc := range []struct {
		ranks int
		kept  bool
	}{{2, true}, {pathRowsMax, true}, {pathRowsMax + 1, false}} {
		p := newPathRows(tc.ranks)
		last := int32(tc.ranks - 1)
		if p.get(0, last) != nil {
			t.Fatalf("%d ranks: a route before any was put", tc.ranks)
		}
		host := &dpath{latency: 1, minBw: 2}
		own := p.put(0, last, host)
		if *own != *host {
			t.Fatalf("%d ranks: put returned %+v, want a copy of %+v", tc.ranks, *own, *host)
		}
		got := p.get(0, last)
		if tc.kept != (got == own && own != host) {
			t.Errorf("%d ranks: get after put = %p (put returned %p, the host's %p), want kept %v", tc.ranks, got, own, host, tc.kept)
		}
		if p.get(last, 0) != nil || p.get(0, 0) != nil {
			t.Errorf("%d ranks: another pair found the route", tc.ranks)
		}
	}
}

// TestDependsOnManyPartners: where hosts have more destinations than
// their maps search linearly (a master's 39 workers, an all-to-all on 32
// ranks), the routes cached by pair of ranks give the event engine's
// analytic times, and are in use. On a torus, whose routes differ in
// their hops, a route cached for another pair would change the times.
func TestDependsOnManyPartners(t *testing.T) {
	for _, tc := range []struct {
		kind, torus string
		ranks       int
	}{{"masterworker", "5,4,2", 40}, {"ft", "4,4,2", 32}} {
		tr := noisyOn(t, tc.kind, tc.ranks, 2)
		m := torusMachine(t, tc.torus, tc.ranks)
		if why := compareEngines(t, tc.kind, tr, m, DefaultConfig()); why != "" {
			t.Fatalf("%s: the dependency-driven engine handed over: %s", tc.kind, why)
		}
		cfg := DefaultConfig()
		cfg.Analytic = true
		s, err := newSim(tr, m, cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.runDeps(); err != nil {
			t.Fatalf("%s: %v", tc.kind, err)
		}
		s.close()
		if s.dpairs.rows == nil || s.dpairs.rows[0] == nil {
			t.Errorf("%s: rank 0's routes were not cached by pair", tc.kind)
		}
	}
}

// torusMachine is a torus of n hosts, dims its dimensions, one rank a
// host.
func torusMachine(t *testing.T, dims string, n int) *Machine {
	t.Helper()
	path := testenv.WriteFile(t, "torus.xml", fmt.Sprintf(`<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
<cluster id="c" prefix="n" suffix="" radical="0-%d" speed="1Gf" bw="125MBps" lat="50us" topology="TORUS" topo_parameters="%s"/>
</platform>
`, n-1, dims))
	pl, err := platform.Load(path)
	return everyHost(t, pl, err)
}
