package sim

import "testing"

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
