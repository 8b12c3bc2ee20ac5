package sim

import "testing"

// TestKeyMap checks keyMap against a Go map on both sides of its switch
// from slices to a map, including deletion while iterating.
func TestKeyMap(t *testing.T) {
	for _, n := range []int{0, 1, keyMapLinear - 1, keyMapLinear, keyMapLinear + 1, 4 * keyMapLinear} {
		var km keyMap[reqKey, *queue]
		want := map[reqKey]*queue{}
		for i := 0; i < n; i++ {
			k := reqKey{int32(i), int32(i % 3), int32(-i)}
			q := &queue{}
			km.put(k, q)
			want[k] = q
		}
		if km.len() != len(want) {
			t.Fatalf("%d keys: len %d", n, km.len())
		}
		for k, q := range want {
			if km.get(k) != q {
				t.Fatalf("%d keys: get(%v) is not its queue", n, k)
			}
		}
		if km.get(reqKey{-1, -1, -1}) != nil {
			t.Fatalf("%d keys: an absent key has a queue", n)
		}
		// Delete every other key while iterating: every key is still
		// visited once.
		seen, drop := 0, false
		for k := range km.all() {
			seen++
			if drop {
				km.delete(k)
				delete(want, k)
			}
			drop = !drop
		}
		if seen != n || km.len() != len(want) {
			t.Fatalf("%d keys: visited %d, %d left, want %d", n, seen, km.len(), len(want))
		}
		for k, q := range want {
			if km.get(k) != q {
				t.Fatalf("%d keys: after deletions, get(%v) is not its queue", n, k)
			}
		}
	}
}
