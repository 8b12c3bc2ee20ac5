package smallmap

import (
	"math/rand/v2"
	"testing"
)

// key3 is a key of three fields, as a request's.
type key3 struct{ a, b, c int32 }

// TestMap checks Map against a Go map on both sides of its switch
// to an index, including deletion while iterating.
func TestMap(t *testing.T) {
	for _, n := range []int{0, 1, Linear - 1, Linear, Linear + 1, 4 * Linear} {
		var km Map[key3, int]
		want := map[key3]int{}
		for i := 0; i < n; i++ {
			k := key3{int32(i), int32(i % 3), int32(-i)}
			km.Put(k, i+1)
			want[k] = i + 1
		}
		check := func(when string) {
			t.Helper()
			if km.Len() != len(want) {
				t.Fatalf("%d keys, %s: len %d, want %d", n, when, km.Len(), len(want))
			}
			for k, v := range want {
				if km.Get(k) != v || km.Ref(k) == nil || *km.Ref(k) != v {
					t.Fatalf("%d keys, %s: get(%v) = %d, want %d", n, when, k, km.Get(k), v)
				}
			}
			if km.Get(key3{-1, -1, -1}) != 0 || km.Ref(key3{-1, -1, -1}) != nil {
				t.Fatalf("%d keys, %s: an absent key has a value", n, when)
			}
		}
		check("filled")
		// Delete every other key while iterating: every key is still
		// visited once; values changed through the iteration stay.
		seen, drop := 0, false
		for k, v := range km.All() {
			seen++
			if drop {
				km.Delete(k)
				delete(want, k)
			} else {
				*v *= 10
				want[k] *= 10
			}
			drop = !drop
		}
		if seen != n {
			t.Fatalf("%d keys: visited %d", n, seen)
		}
		check("after deleting while iterating")
	}
}

// TestMapRandom runs random insertions (put, slot), updates and
// deletions against a Go map, across the switch to an index and back
// below it.
func TestMapRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var km Map[uint64, int]
	want := map[uint64]int{}
	for step := 0; step < 20000; step++ {
		k := uint64(rng.IntN(3 * Linear))
		switch rng.IntN(4) {
		case 0:
			if _, ok := want[k]; !ok {
				if step%2 == 0 {
					km.Put(k, step)
				} else if v := km.Insert(k); *v != 0 {
					t.Fatalf("step %d: Insert(%d) = %d, want the zero value", step, k, *v)
				} else {
					*v = step
				}
				want[k] = step
			}
		case 1:
			*km.Slot(k) += step
			want[k] += step
		case 2:
			km.Delete(k)
			delete(want, k)
		default:
			if got, w := km.Get(k), want[k]; got != w {
				t.Fatalf("step %d: get(%d) = %d, want %d", step, k, got, w)
			}
		}
		if km.Len() != len(want) {
			t.Fatalf("step %d: len %d, want %d", step, km.Len(), len(want))
		}
	}
	for k, v := range want {
		if km.Get(k) != v {
			t.Fatalf("end: get(%d) = %d, want %d", k, km.Get(k), v)
		}
	}
	// Emptied, it searches linearly again; refilled, it indexes again.
	for k := range want {
		km.Delete(k)
		delete(want, k)
		for k2, v := range want {
			if km.Get(k2) != v {
				t.Fatalf("emptying: get(%d) = %d, want %d", k2, km.Get(k2), v)
			}
		}
	}
	if km.Len() != 0 || km.idx != nil {
		t.Fatalf("emptied: %d keys, index %v", km.Len(), km.idx != nil)
	}
	for k := uint64(0); k <= Linear; k++ {
		km.Put(k, int(k))
	}
	if km.idx == nil || km.Get(Linear) != Linear || km.Get(3) != 3 {
		t.Fatal("refilled: not indexed, or values lost")
	}
}

// TestTake: Take and TakeAll find, remove and empty the same way below
// and above the size where the map indexes its keys.
func TestTake(t *testing.T) {
	for _, n := range []int{3, Linear, 3 * Linear} {
		var m Map[uint64, int]
		for i := range n {
			m.Put(uint64(i), i+1)
		}
		m.Put(1, -1)
		if v, ok := m.Lookup(1); !ok || v != -1 {
			t.Errorf("n=%d: Lookup(1) = %d, %v; want the replacement", n, v, ok)
		}
		if v, ok := m.Take(1); !ok || v != -1 {
			t.Errorf("n=%d: Take(1) = %d, %v; want the replacement", n, v, ok)
		}
		if _, ok := m.Take(1); ok {
			t.Errorf("n=%d: Take(1) twice", n)
		}
		if v, ok := m.Take(uint64(n - 1)); !ok || v != n {
			t.Errorf("n=%d: Take(%d) = %d, %v", n, n-1, v, ok)
		}
		all := m.TakeAll(nil)
		if len(all) != n-2 || m.Len() != 0 {
			t.Errorf("n=%d: TakeAll returned %d values and left %d, want %d and 0", n, len(all), m.Len(), n-2)
		}
		m.Put(7, 7)
		if m.Get(7) != 7 || m.Len() != 1 {
			t.Errorf("n=%d: refilled after TakeAll: Get(7) = %d, Len %d", n, m.Get(7), m.Len())
		}
		for i := range n {
			m.Put(uint64(100+i), i)
		}
		m.Clear()
		if _, ok := m.Lookup(7); ok || m.Len() != 0 {
			t.Errorf("n=%d: Clear left %d keys", n, m.Len())
		}
		m.Put(8, 8)
		if m.Get(8) != 8 || m.Len() != 1 {
			t.Errorf("n=%d: refilled after Clear: Get(8) = %d, Len %d", n, m.Get(8), m.Len())
		}
	}
}

// TestDeleteFunc: DeleteFunc visits every key once, with the value All
// gives it, and removes exactly those it is told to, below and above
// the size where the map indexes its keys.
func TestDeleteFunc(t *testing.T) {
	for _, tc := range []struct {
		name string
		n    int
		del  func(k uint64) bool
	}{
		{"none", Linear + 3, func(uint64) bool { return false }},
		{"all of few", Linear / 2, func(uint64) bool { return true }},
		{"all of many", 3 * Linear, func(uint64) bool { return true }},
		{"odd of many", 3 * Linear, func(k uint64) bool { return k%2 == 1 }},
		{"all but one of many", 2 * Linear, func(k uint64) bool { return k != 5 }},
	} {
		var m Map[uint64, int]
		want := map[uint64]int{}
		for i := range tc.n {
			m.Put(uint64(i), 10*i)
			want[uint64(i)] = 10 * i
		}
		seen := map[uint64]bool{}
		m.DeleteFunc(func(k uint64, v *int) bool {
			if seen[k] || *v != want[k] {
				t.Fatalf("%s: key %d seen twice or with value %d", tc.name, k, *v)
			}
			seen[k] = true
			return tc.del(k)
		})
		if len(seen) != tc.n {
			t.Errorf("%s: visited %d keys of %d", tc.name, len(seen), tc.n)
		}
		for k := range want {
			if tc.del(k) {
				delete(want, k)
			}
		}
		if m.Len() != len(want) {
			t.Errorf("%s: %d keys left, want %d", tc.name, m.Len(), len(want))
		}
		for k, v := range want {
			if got, ok := m.Lookup(k); !ok || got != v {
				t.Errorf("%s: Lookup(%d) = %d, %v; want %d", tc.name, k, got, ok, v)
			}
		}
		if len(want) < Linear/2 && m.idx != nil {
			t.Errorf("%s: %d keys left still indexed", tc.name, len(want))
		}
	}
}
