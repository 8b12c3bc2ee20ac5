package clock

import "testing"

// TestReqTable: the table finds, replaces and removes requests the same
// way below and above the size where it switches to a map.
func TestReqTable(t *testing.T) {
	for _, n := range []int{3, smallTable, 3 * smallTable} {
		var tab reqTable
		rqs := make([]*request, n)
		for i := range rqs {
			rqs[i] = &request{idx: int64(i)}
			tab.put(uint64(i), rqs[i])
		}
		again := &request{idx: -1}
		tab.put(1, again)
		if rq, ok := tab.take(1); !ok || rq != again {
			t.Errorf("n=%d: take(1) = %v, %v; want the replacement", n, rq, ok)
		}
		if _, ok := tab.take(1); ok {
			t.Errorf("n=%d: take(1) twice", n)
		}
		if rq, ok := tab.take(uint64(n - 1)); !ok || rq != rqs[n-1] {
			t.Errorf("n=%d: take(%d) = %v, %v", n, n-1, rq, ok)
		}
		if all := tab.takeAll(nil); len(all) != n-2 {
			t.Errorf("n=%d: takeAll returned %d requests, want %d", n, len(all), n-2)
		}
		if all := tab.takeAll(nil); len(all) != 0 {
			t.Errorf("n=%d: table not empty after takeAll", n)
		}
	}
}
