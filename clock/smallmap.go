package clock

// smallMap maps keys to values for the handful of entries a rank usually
// has (outstanding requests, peers it receives from): a slice searched
// from its end finds them faster than a map does; past smallMapMax
// entries it switches to a map. Iteration follows insertion order while
// the map is small.
type smallMap[K comparable, V any] struct {
	keys []K
	vals []V
	m    map[K]V
}

const smallMapMax = 32

// put sets k's value to v.
func (t *smallMap[K, V]) put(k K, v V) {
	if t.m != nil {
		t.m[k] = v
		return
	}
	if i := t.find(k); i >= 0 {
		t.vals[i] = v
		return
	}
	if len(t.keys) == smallMapMax {
		t.m = make(map[K]V, 2*smallMapMax)
		for i, k := range t.keys {
			t.m[k] = t.vals[i]
		}
		t.keys, t.vals = nil, nil
		t.m[k] = v
		return
	}
	t.keys = append(t.keys, k)
	t.vals = append(t.vals, v)
}

func (t *smallMap[K, V]) find(k K) int {
	for i := len(t.keys) - 1; i >= 0; i-- {
		if t.keys[i] == k {
			return i
		}
	}
	return -1
}

// get returns k's value.
func (t *smallMap[K, V]) get(k K) (V, bool) {
	if t.m != nil {
		v, ok := t.m[k]
		return v, ok
	}
	if i := t.find(k); i >= 0 {
		return t.vals[i], true
	}
	var zero V
	return zero, false
}

// take removes and returns k's value.
func (t *smallMap[K, V]) take(k K) (V, bool) {
	var zero V
	if t.m != nil {
		v, ok := t.m[k]
		if ok {
			delete(t.m, k)
		}
		return v, ok
	}
	i := t.find(k)
	if i < 0 {
		return zero, false
	}
	v := t.vals[i]
	last := len(t.keys) - 1
	t.keys[i], t.vals[i] = t.keys[last], t.vals[last]
	t.vals[last] = zero
	t.keys, t.vals = t.keys[:last], t.vals[:last]
	return v, true
}

// takeAll appends every value to dst and empties the map.
func (t *smallMap[K, V]) takeAll(dst []V) []V {
	if t.m != nil {
		for _, v := range t.m {
			dst = append(dst, v)
		}
		t.m = nil
		return dst
	}
	dst = append(dst, t.vals...)
	clear(t.vals)
	t.keys, t.vals = t.keys[:0], t.vals[:0]
	return dst
}

// each calls fn for every entry.
func (t *smallMap[K, V]) each(fn func(K, V)) {
	if t.m != nil {
		for k, v := range t.m {
			fn(k, v)
		}
		return
	}
	for i, k := range t.keys {
		fn(k, t.vals[i])
	}
}

// len returns the number of entries.
func (t *smallMap[K, V]) len() int {
	if t.m != nil {
		return len(t.m)
	}
	return len(t.keys)
}
