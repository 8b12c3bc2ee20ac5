package sim

import "iter"

// keyMapLinear is how many keys a keyMap searches linearly before it
// indexes them with a Go map.
const keyMapLinear = 16

// keyMapFirst is the room a keyMap's first key allocates.
const keyMapFirst = 4

// keyMap maps keys to values (request queues, routes). A rank has few
// live keys (a stencil's neighbours and tags) and a host few partners,
// and a linear search over a few contiguous keys costs less than hashing
// them: the map lookups of every posted request were a tenth of the
// replay's time. Each value sits next to its key, in the map (a queue,
// not a pointer to one), so that a lookup at thousands of ranks, where
// little of a rank's state is in cache, misses once rather than three
// times (the 4,096-rank analytic replay of the stencil took 8% less
// time with keys next to values, 4% less again with queues by value).
// Beyond keyMapLinear keys, a Go map indexes the slice. Values
// are addressable (ref, slot) until the next insertion or deletion. The
// zero value is empty.
type keyMap[K comparable, V any] struct {
	kv  []keyVal[K, V]
	idx map[K]int32 // positions in kv, nil while kv is short
}

type keyVal[K comparable, V any] struct {
	k K
	v V
}

// find returns k's position in kv, or -1.
func (km *keyMap[K, V]) find(k K) int {
	if km.idx != nil {
		if i, ok := km.idx[k]; ok {
			return int(i)
		}
		return -1
	}
	for i := range km.kv {
		if km.kv[i].k == k {
			return i
		}
	}
	return -1
}

// get returns k's value, or the zero value.
func (km *keyMap[K, V]) get(k K) V {
	if i := km.find(k); i >= 0 {
		return km.kv[i].v
	}
	var zero V
	return zero
}

// ref returns k's value, or nil if k is absent.
func (km *keyMap[K, V]) ref(k K) *V {
	if i := km.find(k); i >= 0 {
		return &km.kv[i].v
	}
	return nil
}

// slot returns k's value, added at the zero value if k is absent.
func (km *keyMap[K, V]) slot(k K) *V {
	i := km.find(k)
	if i < 0 {
		i = km.add(k)
	}
	return &km.kv[i].v
}

// put adds k, which must be absent, with value q.
func (km *keyMap[K, V]) put(k K, q V) { km.kv[km.add(k)].v = q }

// add appends k with the zero value and returns its position.
func (km *keyMap[K, V]) add(k K) int {
	i := len(km.kv)
	if km.kv == nil {
		// Room for a stencil's neighbours at once, rather than
		// growing from one: the first keys of thousands of ranks are
		// a start-up cost.
		km.kv = make([]keyVal[K, V], 0, keyMapFirst)
	}
	km.kv = append(km.kv, keyVal[K, V]{k: k})
	switch {
	case km.idx != nil:
		km.idx[k] = int32(i)
	case i+1 > keyMapLinear:
		km.idx = make(map[K]int32, 2*keyMapLinear)
		for j := range km.kv {
			km.idx[km.kv[j].k] = int32(j)
		}
	}
	return i
}

// len returns the number of keys.
func (km *keyMap[K, V]) len() int { return len(km.kv) }

// delete removes k; while iterating with all, only the current key may
// be deleted.
func (km *keyMap[K, V]) delete(k K) {
	i := km.find(k)
	if i < 0 {
		return
	}
	last := len(km.kv) - 1
	if km.idx != nil {
		delete(km.idx, k)
		if i != last {
			km.idx[km.kv[last].k] = int32(i)
		}
	}
	km.kv[i] = km.kv[last]
	km.kv[last] = keyVal[K, V]{}
	km.kv = km.kv[:last]
	if km.idx != nil && len(km.kv) < keyMapLinear/2 {
		km.idx = nil // few keys again: back to the linear search
	}
}

// all iterates over the keys and their values, which the loop may change.
func (km *keyMap[K, V]) all() iter.Seq2[K, *V] {
	return func(yield func(K, *V) bool) {
		// Backwards, so that deleting the current key (which moves the
		// last, already visited, into its place) skips nothing.
		for i := len(km.kv) - 1; i >= 0; i-- {
			if !yield(km.kv[i].k, &km.kv[i].v) {
				return
			}
		}
	}
}

// queueMap is a keyMap of request queues that forgets the keys whose
// queue is empty once the keys are many: a trace whose tags never repeat
// (a tag an iteration) would otherwise keep a key for every message ever
// sent, and its replay's memory would grow with the trace.
type queueMap[K comparable] struct {
	keyMap[K, queue]
	limit int // the number of keys above which slot prunes
}

// slot returns k's queue, adding an empty one if k is absent. Before
// adding a key beyond the limit, it drops the keys of empty queues and
// sets the limit to twice the keys left, so that pruning costs a constant
// time per key added.
func (m *queueMap[K]) slot(k K) *queue {
	if q := m.ref(k); q != nil {
		return q
	}
	if m.len() >= max(m.limit, keyMapLinear) {
		for k, q := range m.all() {
			if q.empty() {
				m.delete(k)
			}
		}
		m.limit = 2 * m.len()
	}
	return m.keyMap.slot(k)
}
