package reqstore

import (
	"math/rand/v2"
	"testing"

	"kairos/internal/smallmap"
)

type item struct{ n int }

// TestQueueMapPrunes checks that a QueueMap forgets the keys of empty
// queues once they are many, so that a trace with a tag a message keeps
// few keys (from smallmap.Linear, a Store's from fewFloor: every lookup
// searches them), and that it keeps every key whose queue holds a
// request.
func TestQueueMapPrunes(t *testing.T) {
	for _, c := range []struct {
		few  bool
		most int // keys at most, for at most 5 non-empty queues
	}{{false, smallmap.Linear}, {true, 2 * 5}} {
		m := QueueMap[uint64, *item]{few: c.few}
		held := &item{}
		m.Slot(1 << 40).Push(held)
		most := 0
		for i := uint64(0); i < 10000; i++ {
			q := m.Slot(i)
			q.Push(&item{})
			if i%3 == 0 {
				q.Pop()
			}
			if i >= 3 && (i-3)%3 != 0 {
				m.Ref(i - 3).Pop() // two of three queues empty, three keys late
			}
			most = max(most, m.Len())
		}
		if most > c.most {
			t.Errorf("few %v: up to %d keys held for at most 5 non-empty queues, want at most %d", c.few, most, c.most)
		}
		if q := m.Ref(1 << 40); q == nil || q.Empty() || q.Front() != held {
			t.Errorf("few %v: the key whose queue holds a request was dropped", c.few)
		}
	}
	var st Store[*item]
	st.Push(Key{0, 1, 2}, &item{})
	if !st.packed.few {
		t.Error("a Store's keys prune from smallmap.Linear")
	}
}

// TestQueueMapReusesRoom: the keys added after a pruning take the
// rooms of the queues pruned, so that a rank posting to keys in turn
// (a tag a message) allocates nothing once the first rooms are made.
func TestQueueMapReusesRoom(t *testing.T) {
	var m QueueMap[uint64, *item]
	it := &item{}
	k := uint64(0)
	post := func() {
		for range 1000 {
			m.Slot(k).Push(it)
			m.Ref(k).Pop()
			k++
		}
	}
	post()
	if n := testing.AllocsPerRun(10, post); n > 1 {
		t.Errorf("%.0f allocations for 1,000 keys posted to and emptied in turn, want none past the first rooms", n)
	}
}

// TestStoreKeys: keys pack into 64 bits without collisions where their
// fields fit, and the others are kept apart; each key finds its own
// queue either way.
func TestStoreKeys(t *testing.T) {
	edge := []int32{-2, -1, 0, 1, 1<<20 - 3, 1<<20 - 2, 1 << 30, -3}
	tags := []int32{-1 << 23, -444, -1, 0, 7, 1<<23 - 1, 1 << 23, -1<<23 - 1}
	var st Store[*item]
	packed := map[uint64]Key{}
	n := 0
	for _, s := range edge {
		for _, d := range edge {
			for _, tag := range tags {
				k := Key{s, d, tag}
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
				st.Push(k, &item{n})
				n++
			}
		}
	}
	seen := 0
	for range st.Queues() {
		seen++
	}
	if seen != n || st.wide.Len() == 0 || st.Len() != n {
		t.Errorf("%d queues (%d apart), %d requests, want %d", seen, st.wide.Len(), st.Len(), n)
	}
	n = 0
	for _, s := range edge {
		for _, d := range edge {
			for _, tag := range tags {
				k := Key{s, d, tag}
				if v, ok := st.Pop(k); !ok || v.n != n {
					t.Fatalf("%v: not its own queue", k)
				}
				n++
			}
		}
	}
	if st.Len() != 0 {
		t.Errorf("%d requests left", st.Len())
	}
}

// TestStoreOrder follows SimGrid's storage through a test's put-back: the
// oldest of a key first, null requests counted, Remove anywhere, Drain
// key by key, Clear.
func TestStoreOrder(t *testing.T) {
	var st Store[*item]
	a, b, c := Key{0, 1, 5}, Key{1, 0, 5}, Key{0, 1, 6}
	x, y, z := &item{1}, &item{2}, &item{3}
	st.Push(a, x)
	st.Push(a, y)
	st.Push(b, z)
	if v, ok := st.Pop(a); !ok || v != x {
		t.Fatalf("Pop(a) = %v, %v; want the oldest", v, ok)
	}
	st.Push(a, nil) // a test that completed x puts back a null request
	if st.Len() != 3 {
		t.Fatalf("Len %d, want 3 (a null request counts)", st.Len())
	}
	if v, ok := st.Pop(c); ok || v != nil {
		t.Fatalf("Pop of an absent key = %v, %v", v, ok)
	}
	if !st.Remove(a, y) || st.Remove(a, y) {
		t.Fatal("Remove(a, y) should succeed once")
	}
	if v, ok := st.Pop(a); !ok || v != nil {
		t.Fatalf("Pop(a) = %v, %v; want the null request", v, ok)
	}
	st.Push(a, x)
	var got []*item
	st.Drain(func(v *item) { got = append(got, v) })
	if len(got) != 2 || st.Len() != 0 {
		t.Fatalf("Drain gave %v and left %d", got, st.Len())
	}
	st.Push(c, x)
	st.Clear()
	if _, ok := st.Pop(c); ok || st.Len() != 0 {
		t.Fatal("Clear left a request")
	}
}

// TestStoreBounded stores and pops requests under 10,000 keys that never
// repeat, as a trace whose tags never repeat does: the storage ends
// empty, holding few keys.
func TestStoreBounded(t *testing.T) {
	var st Store[*item]
	for tag := range int32(10000) {
		k := Key{0, 1, tag}
		q := &item{}
		st.Push(k, q)
		st.Push(k, nil) // a test's null request
		if got, ok := st.Pop(k); !ok || got != q {
			t.Fatalf("tag %d: popped %v, want the request stored", tag, got)
		}
		if got, ok := st.Pop(k); !ok || got != nil {
			t.Fatalf("tag %d: popped %v, want the null request", tag, got)
		}
	}
	if st.Len() != 0 || st.packed.Len() > 2*smallmap.Linear {
		t.Errorf("%d stored under %d keys; want 0 under at most %d", st.Len(), st.packed.Len(), 2*smallmap.Linear)
	}
	if got, ok := st.Pop(Key{0, 1, 5}); ok || got != nil {
		t.Errorf("a key never stored popped %v", got)
	}
}

// TestStoreRandom runs random pushes and pops against per-key FIFOs, with
// a request that is never waited for held from the start: the store must
// give the same requests, and hold few keys beyond those of the requests
// outstanding (a trace whose tags never repeat).
func TestStoreRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var st Store[uint64]
	want := map[Key][]uint64{}
	id := uint64(0)
	push := func(k Key) {
		id++
		st.Push(k, id)
		want[k] = append(want[k], id)
	}
	push(Key{9, 9, 9}) // never popped
	for step := 0; step < 50000; step++ {
		k := Key{0, 1, int32(rng.IntN(12) + step/1000)}
		if rng.IntN(40) > st.Len() { // a few requests outstanding, never many
			push(k)
			continue
		}
		var w uint64
		if q := want[k]; len(q) > 0 {
			w, want[k] = q[0], q[1:]
		}
		if got, _ := st.Pop(k); got != w {
			t.Fatalf("step %d: Pop(%v) = %d, want %d", step, k, got, w)
		}
		if st.packed.Len() > 2*st.Len()+2*smallmap.Linear {
			t.Fatalf("step %d: %d keys held for %d requests", step, st.packed.Len(), st.Len())
		}
	}
	if got, ok := st.Pop(Key{9, 9, 9}); !ok || got != 1 {
		t.Fatal("the first request was lost")
	}
}

// TestQueueRoundRobin pops and pushes back two items a million times, as
// a rank testing two requests in turn does: the queue keeps them in order
// and its room stays that of a few items.
func TestQueueRoundRobin(t *testing.T) {
	var q Queue[int]
	q.Push(1)
	q.Push(2)
	for i := range 1000000 {
		if v := q.Pop(); v != 1+i%2 {
			t.Fatalf("pop %d: %d, want %d", i, v, 1+i%2)
		}
		q.Push(1 + i%2)
	}
	if q.Len() != 2 || cap(q.items) > 8 {
		t.Errorf("%d items in room for %d", q.Len(), cap(q.items))
	}
}
