package ti

// reqKey is SimGrid's request key: (sender, receiver, tag), world ranks
// as written in the trace (MPI_ANY_SOURCE normalised).
type reqKey struct{ src, dst, tag int32 }

// requestStore is SimGrid's per-rank request store: for each key, the
// requests stored under it, oldest first. Most ranks keep a handful of
// requests outstanding, so the store is a slice in push order, searched
// linearly; past bigStore outstanding requests it switches to a map of
// queues until it empties again.
type requestStore struct {
	ents []reqEntry // small mode: in push order; id 0 marks a removed entry
	head int        // ents[:head] are all removed
	live int        // requests stored (SimGrid's store is empty iff 0)
	m    map[reqKey]*fifo
}

type reqEntry struct {
	key reqKey
	id  uint64
}

// fifo is the queue of request ids stored under one key, oldest first.
type fifo struct {
	ids  []uint64
	head int
}

const bigStore = 64

func (s *requestStore) push(k reqKey, id uint64) {
	s.live++
	if s.m != nil {
		s.pushMap(k, id)
		return
	}
	s.ents = append(s.ents, reqEntry{k, id})
	if s.live > bigStore {
		s.m = make(map[reqKey]*fifo, 2*bigStore)
		for _, e := range s.ents[s.head:] {
			if e.id != 0 {
				s.pushMap(e.key, e.id)
			}
		}
		s.ents, s.head = s.ents[:0], 0
	}
}

func (s *requestStore) pushMap(k reqKey, id uint64) {
	f := s.m[k]
	if f == nil {
		f = &fifo{}
		s.m[k] = f
	}
	f.ids = append(f.ids, id)
}

// pop removes and returns the oldest request stored under k, 0 if none.
func (s *requestStore) pop(k reqKey) uint64 {
	if s.m != nil {
		return s.popMap(k)
	}
	for i := s.head; i < len(s.ents); i++ {
		e := &s.ents[i]
		if e.id == 0 || e.key != k {
			continue
		}
		id := e.id
		e.id = 0
		s.live--
		for s.head < len(s.ents) && s.ents[s.head].id == 0 {
			s.head++
		}
		if s.head == len(s.ents) {
			s.ents, s.head = s.ents[:0], 0
		} else if len(s.ents)-s.head > 2*s.live+16 {
			s.compact()
		}
		return id
	}
	return 0
}

// compact drops the removed entries, keeping the others in push order: a
// request never waited for (SimGrid allows it) would otherwise hold the
// slice's head, and every pop would scan every request since.
func (s *requestStore) compact() {
	n := 0
	for _, e := range s.ents[s.head:] {
		if e.id != 0 {
			s.ents[n] = e
			n++
		}
	}
	s.ents, s.head = s.ents[:n], 0
}

func (s *requestStore) popMap(k reqKey) uint64 {
	f := s.m[k]
	if f == nil {
		return 0
	}
	id := f.ids[f.head]
	f.head++
	if f.head == len(f.ids) {
		delete(s.m, k)
	}
	s.live--
	if s.live == 0 {
		s.m = nil
	}
	return id
}

// clear forgets every request (waitall).
func (s *requestStore) clear() {
	s.ents, s.head, s.live, s.m = s.ents[:0], 0, 0, nil
}
