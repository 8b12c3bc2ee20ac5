// Package smallmap is a map for the few keys a rank or a host usually
// has: its outstanding requests, its partners, its cached routes.
//
// A linear search over a few contiguous keys costs less than hashing
// them: the map lookups of every posted request were a tenth of a
// replay's time. Each value sits next to its key (a request queue by
// value, not a pointer to one), so that a lookup at thousands of ranks,
// where little of a rank's state is in cache, misses once rather than
// three times (the 4,096-rank analytic replay of a stencil took 8% less
// time with keys next to values, 4% less again with queues by value).
// Beyond Linear keys, a Go map indexes the entries.
package smallmap

import "iter"

// Linear is how many keys a Map searches linearly before it indexes
// them with a Go map.
const Linear = 16

// first is the room a Map's first key allocates: a stencil's
// neighbours at once, rather than growing from one, since the first keys
// of thousands of ranks are a start-up cost.
const first = 4

// Map maps keys to values. Values are addressable (Ref, Slot) until the
// next insertion or deletion. The zero value is empty.
type Map[K comparable, V any] struct {
	kv  []entry[K, V]
	idx map[K]int32 // positions in kv, nil while kv is short
}

type entry[K comparable, V any] struct {
	k K
	v V
}

// find returns k's position in kv, or -1.
func (m *Map[K, V]) find(k K) int {
	if m.idx != nil {
		if i, ok := m.idx[k]; ok {
			return int(i)
		}
		return -1
	}
	for i := range m.kv {
		if m.kv[i].k == k {
			return i
		}
	}
	return -1
}

// Get returns k's value, or the zero value.
func (m *Map[K, V]) Get(k K) V {
	if i := m.find(k); i >= 0 {
		return m.kv[i].v
	}
	var zero V
	return zero
}

// Lookup returns k's value and whether k is present.
func (m *Map[K, V]) Lookup(k K) (V, bool) {
	if i := m.find(k); i >= 0 {
		return m.kv[i].v, true
	}
	var zero V
	return zero, false
}

// Ref returns k's value, or nil if k is absent.
func (m *Map[K, V]) Ref(k K) *V {
	if i := m.find(k); i >= 0 {
		return &m.kv[i].v
	}
	return nil
}

// Slot returns k's value, added at the zero value if k is absent.
func (m *Map[K, V]) Slot(k K) *V {
	i := m.find(k)
	if i < 0 {
		i = m.add(k)
	}
	return &m.kv[i].v
}

// Insert adds k, which must be absent (a lookup just missed it), at the
// zero value and returns its value: Slot without its search.
func (m *Map[K, V]) Insert(k K) *V {
	return &m.kv[m.add(k)].v
}

// Put sets k's value to v.
func (m *Map[K, V]) Put(k K, v V) { *m.Slot(k) = v }

// add appends k with the zero value and returns its position.
func (m *Map[K, V]) add(k K) int {
	i := len(m.kv)
	if m.kv == nil {
		m.kv = make([]entry[K, V], 0, first)
	}
	m.kv = append(m.kv, entry[K, V]{k: k})
	switch {
	case m.idx != nil:
		m.idx[k] = int32(i)
	case i+1 > Linear:
		m.idx = make(map[K]int32, 2*Linear)
		for j := range m.kv {
			m.idx[m.kv[j].k] = int32(j)
		}
	}
	return i
}

// Len returns the number of keys.
func (m *Map[K, V]) Len() int { return len(m.kv) }

// Delete removes k; while iterating with All, only the current key may
// be deleted.
func (m *Map[K, V]) Delete(k K) {
	if i := m.find(k); i >= 0 {
		m.deleteAt(i)
	}
}

// deleteAt removes the key at kv[i].
func (m *Map[K, V]) deleteAt(i int) {
	k, last := m.kv[i].k, len(m.kv)-1
	if m.idx != nil {
		delete(m.idx, k)
		if i != last {
			m.idx[m.kv[last].k] = int32(i)
		}
	}
	m.kv[i] = m.kv[last]
	m.kv[last] = entry[K, V]{}
	m.kv = m.kv[:last]
	if m.idx != nil && len(m.kv) < Linear/2 {
		m.idx = nil // few keys again: back to the linear search
	}
}

// DeleteFunc removes every key for which del, called with each key and
// its value in All's order, returns true: All with Delete, without
// searching for each key again.
func (m *Map[K, V]) DeleteFunc(del func(K, *V) bool) {
	for i := len(m.kv) - 1; i >= 0; i-- {
		if del(m.kv[i].k, &m.kv[i].v) {
			m.deleteAt(i)
		}
	}
}

// Take removes k and returns its value, and whether it was present.
func (m *Map[K, V]) Take(k K) (V, bool) {
	i := m.find(k)
	if i < 0 {
		var zero V
		return zero, false
	}
	v := m.kv[i].v
	m.deleteAt(i)
	return v, true
}

// Clear removes every key.
func (m *Map[K, V]) Clear() {
	clear(m.kv)
	m.kv, m.idx = m.kv[:0], nil
}

// TakeAll appends every value to dst, in no particular order, and
// empties the map.
func (m *Map[K, V]) TakeAll(dst []V) []V {
	for i := range m.kv {
		dst = append(dst, m.kv[i].v)
	}
	clear(m.kv)
	m.kv, m.idx = m.kv[:0], nil
	return dst
}

// All iterates over the keys and their values, which the loop may
// change.
func (m *Map[K, V]) All() iter.Seq2[K, *V] {
	return func(yield func(K, *V) bool) {
		// Backwards, so that deleting the current key (which moves the
		// last, already visited, into its place) skips nothing.
		for i := len(m.kv) - 1; i >= 0; i-- {
			if !yield(m.kv[i].k, &m.kv[i].v) {
				return
			}
		}
	}
}
