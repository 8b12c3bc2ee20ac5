package clock

// reqTable holds a rank's outstanding requests by id. Ranks usually have
// a handful outstanding, which a slice searches faster than a map finds
// them; past smallTable requests the table switches to a map.
type reqTable struct {
	ids []uint64
	rqs []*request
	m   map[uint64]*request
}

const smallTable = 32

// put files rq under id, replacing a request with the same id.
func (t *reqTable) put(id uint64, rq *request) {
	if t.m != nil {
		t.m[id] = rq
		return
	}
	if i := t.find(id); i >= 0 {
		t.rqs[i] = rq
		return
	}
	if len(t.ids) == smallTable {
		t.m = make(map[uint64]*request, 2*smallTable)
		for i, id := range t.ids {
			t.m[id] = t.rqs[i]
		}
		t.ids, t.rqs = t.ids[:0], t.rqs[:0]
		t.m[id] = rq
		return
	}
	t.ids = append(t.ids, id)
	t.rqs = append(t.rqs, rq)
}

func (t *reqTable) find(id uint64) int {
	for i := len(t.ids) - 1; i >= 0; i-- {
		if t.ids[i] == id {
			return i
		}
	}
	return -1
}

// take removes and returns the request filed under id.
func (t *reqTable) take(id uint64) (*request, bool) {
	if t.m != nil {
		rq, ok := t.m[id]
		if ok {
			delete(t.m, id)
		}
		return rq, ok
	}
	i := t.find(id)
	if i < 0 {
		return nil, false
	}
	rq := t.rqs[i]
	last := len(t.ids) - 1
	t.ids[i], t.rqs[i] = t.ids[last], t.rqs[last]
	t.rqs[last] = nil
	t.ids, t.rqs = t.ids[:last], t.rqs[:last]
	return rq, true
}

// takeAll appends every request to dst and empties the table.
func (t *reqTable) takeAll(dst []*request) []*request {
	if t.m != nil {
		for _, rq := range t.m {
			dst = append(dst, rq)
		}
		t.m = nil
		return dst
	}
	dst = append(dst, t.rqs...)
	clear(t.rqs)
	t.ids, t.rqs = t.ids[:0], t.rqs[:0]
	return dst
}
