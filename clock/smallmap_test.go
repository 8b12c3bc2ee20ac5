package clock

import "testing"

// TestSmallMap: the map finds, replaces and removes entries the same way
// below and above the size where it switches to a Go map.
func TestSmallMap(t *testing.T) {
	for _, n := range []int{3, smallMapMax, 3 * smallMapMax} {
		var tab smallMap[uint64, *request]
		rqs := make([]*request, n)
		for i := range rqs {
			rqs[i] = &request{idx: int64(i)}
			tab.put(uint64(i), rqs[i])
		}
		again := &request{idx: -1}
		tab.put(1, again)
		if rq, ok := tab.get(1); !ok || rq != again {
			t.Errorf("n=%d: get(1) = %v, %v; want the replacement", n, rq, ok)
		}
		if rq, ok := tab.take(1); !ok || rq != again {
			t.Errorf("n=%d: take(1) = %v, %v; want the replacement", n, rq, ok)
		}
		if _, ok := tab.take(1); ok {
			t.Errorf("n=%d: take(1) twice", n)
		}
		if rq, ok := tab.take(uint64(n - 1)); !ok || rq != rqs[n-1] {
			t.Errorf("n=%d: take(%d) = %v, %v", n, n-1, rq, ok)
		}
		seen := 0
		tab.each(func(uint64, *request) { seen++ })
		if seen != n-2 || tab.len() != n-2 {
			t.Errorf("n=%d: each saw %d entries, len %d, want %d", n, seen, tab.len(), n-2)
		}
		if all := tab.takeAll(nil); len(all) != n-2 {
			t.Errorf("n=%d: takeAll returned %d requests, want %d", n, len(all), n-2)
		}
		if tab.len() != 0 {
			t.Errorf("n=%d: not empty after takeAll", n)
		}
	}
}
