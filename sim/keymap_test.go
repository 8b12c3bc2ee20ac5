package sim

import (
	"math/rand/v2"
	"testing"
)

// TestKeyMap checks keyMap against a Go map on both sides of its switch
// to an index, including deletion while iterating.
func TestKeyMap(t *testing.T) {
	for _, n := range []int{0, 1, keyMapLinear - 1, keyMapLinear, keyMapLinear + 1, 4 * keyMapLinear} {
		var km keyMap[reqKey, int]
		want := map[reqKey]int{}
		for i := 0; i < n; i++ {
			k := reqKey{int32(i), int32(i % 3), int32(-i)}
			km.put(k, i+1)
			want[k] = i + 1
		}
		check := func(when string) {
			t.Helper()
			if km.len() != len(want) {
				t.Fatalf("%d keys, %s: len %d, want %d", n, when, km.len(), len(want))
			}
			for k, v := range want {
				if km.get(k) != v || km.ref(k) == nil || *km.ref(k) != v {
					t.Fatalf("%d keys, %s: get(%v) = %d, want %d", n, when, k, km.get(k), v)
				}
			}
			if km.get(reqKey{-1, -1, -1}) != 0 || km.ref(reqKey{-1, -1, -1}) != nil {
				t.Fatalf("%d keys, %s: an absent key has a value", n, when)
			}
		}
		check("filled")
		// Delete every other key while iterating: every key is still
		// visited once; values changed through the iteration stay.
		seen, drop := 0, false
		for k, v := range km.all() {
			seen++
			if drop {
				km.delete(k)
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

// TestKeyMapRandom runs random insertions (put, slot), updates and
// deletions against a Go map, across the switch to an index and back
// below it.
func TestKeyMapRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var km keyMap[uint64, int]
	want := map[uint64]int{}
	for step := 0; step < 20000; step++ {
		k := uint64(rng.IntN(3 * keyMapLinear))
		switch rng.IntN(4) {
		case 0:
			if _, ok := want[k]; !ok {
				km.put(k, step)
				want[k] = step
			}
		case 1:
			*km.slot(k) += step
			want[k] += step
		case 2:
			km.delete(k)
			delete(want, k)
		default:
			if got, w := km.get(k), want[k]; got != w {
				t.Fatalf("step %d: get(%d) = %d, want %d", step, k, got, w)
			}
		}
		if km.len() != len(want) {
			t.Fatalf("step %d: len %d, want %d", step, km.len(), len(want))
		}
	}
	for k, v := range want {
		if km.get(k) != v {
			t.Fatalf("end: get(%d) = %d, want %d", k, km.get(k), v)
		}
	}
	// Emptied, it searches linearly again; refilled, it indexes again.
	for k := range want {
		km.delete(k)
		delete(want, k)
		for k2, v := range want {
			if km.get(k2) != v {
				t.Fatalf("emptying: get(%d) = %d, want %d", k2, km.get(k2), v)
			}
		}
	}
	if km.len() != 0 || km.idx != nil {
		t.Fatalf("emptied: %d keys, index %v", km.len(), km.idx != nil)
	}
	for k := uint64(0); k <= keyMapLinear; k++ {
		km.put(k, int(k))
	}
	if km.idx == nil || km.get(keyMapLinear) != keyMapLinear || km.get(3) != 3 {
		t.Fatal("refilled: not indexed, or values lost")
	}
}

// TestQueueMapPrunes checks that a queueMap forgets the keys of empty
// queues once they are many, so that a trace with a tag a message keeps
// few keys, and that it keeps every key whose queue holds a request.
func TestQueueMapPrunes(t *testing.T) {
	var m queueMap[uint64]
	held := &request{}
	m.slot(1 << 40).push(held)
	most := 0
	for i := uint64(0); i < 10000; i++ {
		q := m.slot(i)
		q.push(&request{})
		if i%3 == 0 {
			q.pop()
		}
		if i >= 3 && (i-3)%3 != 0 {
			m.ref(i - 3).pop() // two of three queues empty, three keys late
		}
		most = max(most, m.len())
	}
	if most > 4*keyMapLinear {
		t.Errorf("up to %d keys held for at most 4 non-empty queues", most)
	}
	if q := m.ref(1 << 40); q == nil || q.empty() || q.front() != held {
		t.Error("the key whose queue holds a request was dropped")
	}
}

// TestReqStore: keys pack into 64 bits without collisions where their
// fields fit, and the others are kept apart; each key finds its own
// queue either way.
func TestReqStore(t *testing.T) {
	edge := []int32{-2, -1, 0, 1, 1<<20 - 3, 1<<20 - 2, 1 << 30, -3}
	tags := []int32{-1 << 23, -444, -1, 0, 7, 1<<23 - 1, 1 << 23, -1<<23 - 1}
	var st reqStore
	packed := map[uint64]reqKey{}
	n := 0
	for _, s := range edge {
		for _, d := range edge {
			for _, tag := range tags {
				k := reqKey{s, d, tag}
				p, ok := k.packed()
				fits := s >= -2 && s < 1<<20-2 && d >= -2 && d < 1<<20-2 && tag >= -1<<23 && tag < 1<<23
				if ok != fits {
					t.Fatalf("%v: packed %v, want %v", k, ok, fits)
				}
				if o, dup := packed[p]; ok && dup {
					t.Fatalf("%v and %v pack alike", k, o)
				}
				if ok {
					packed[p] = k
				}
				st.slot(k).push(&request{bytes: int64(n)})
				n++
			}
		}
	}
	n = 0
	for _, s := range edge {
		for _, d := range edge {
			for _, tag := range tags {
				k := reqKey{s, d, tag}
				if q := st.ref(k); q == nil || q.empty() || q.pop().bytes != int64(n) {
					t.Fatalf("%v: not its own queue", k)
				}
				n++
			}
		}
	}
	seen := 0
	for range st.queues {
		seen++
	}
	if seen != n || st.wide.len() == 0 {
		t.Errorf("%d queues (%d apart), want %d", seen, st.wide.len(), n)
	}
}
