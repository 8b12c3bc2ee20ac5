package sim

import "iter"

// keyMapLinear is how many keys a keyMap holds in its slices before it
// moves them to a Go map.
const keyMapLinear = 16

// keyMap maps keys to values (request queues, routes). A rank has few
// live keys (a stencil's neighbours and tags) and a host few partners,
// and a linear search over a few contiguous keys costs less than hashing
// them: the map lookups of every posted request were a tenth of the
// replay's time. Beyond keyMapLinear keys it is a Go map. Its order of
// iteration is unspecified, as a map's. The zero value is empty.
type keyMap[K comparable, V any] struct {
	keys []K
	vals []V
	m    map[K]V // nil while the keys fit in the slices
}

// get returns k's value, or the zero value.
func (km *keyMap[K, V]) get(k K) V {
	if km.m != nil {
		return km.m[k]
	}
	for i, x := range km.keys {
		if x == k {
			return km.vals[i]
		}
	}
	var zero V
	return zero
}

// put adds k, which must be absent, with value q.
func (km *keyMap[K, V]) put(k K, q V) {
	if km.m == nil && len(km.keys) < keyMapLinear {
		km.keys = append(km.keys, k)
		km.vals = append(km.vals, q)
		return
	}
	if km.m == nil {
		km.m = make(map[K]V, 2*keyMapLinear)
		for i, x := range km.keys {
			km.m[x] = km.vals[i]
		}
		km.keys, km.vals = nil, nil
	}
	km.m[k] = q
}

// len returns the number of keys.
func (km *keyMap[K, V]) len() int {
	if km.m != nil {
		return len(km.m)
	}
	return len(km.keys)
}

// delete removes k; while iterating with all, only the current key may
// be deleted.
func (km *keyMap[K, V]) delete(k K) {
	if km.m != nil {
		delete(km.m, k)
		return
	}
	for i, x := range km.keys {
		if x == k {
			last := len(km.keys) - 1
			km.keys[i], km.vals[i] = km.keys[last], km.vals[last]
			var zero V
			km.vals[last] = zero
			km.keys, km.vals = km.keys[:last], km.vals[:last]
			return
		}
	}
}

// all iterates over the keys and their values.
func (km *keyMap[K, V]) all() iter.Seq2[K, V] {
	return func(yield func(K, V) bool) {
		if km.m != nil {
			for k, q := range km.m {
				if !yield(k, q) {
					return
				}
			}
			return
		}
		// Backwards, so that deleting the current key (which moves the
		// last, already visited, into its place) skips nothing.
		for i := len(km.keys) - 1; i >= 0; i-- {
			if !yield(km.keys[i], km.vals[i]) {
				return
			}
		}
	}
}
