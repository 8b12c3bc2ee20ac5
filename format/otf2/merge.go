package otf2

// Merged streams the events of several locations in the global order
// otf2-print prints them in: by clock-corrected timestamp, ties broken by
// the lower location id, each location's events in file order
// (OTF2_GlobalEvtReader's heap). Memory is a chunk's window per location.
type Merged struct {
	heap    []*LocationReader
	all     []*LocationReader
	started bool
	cur     *LocationReader
	err     error
}

// Merged returns a merged reader of every location the global definitions
// define.
func (a *Archive) Merged() (*Merged, error) {
	ids := make([]uint64, len(a.Defs.Locations))
	for i, l := range a.Defs.Locations {
		ids[i] = l.ID
	}
	return a.MergedOf(ids)
}

// MergedOf returns a merged reader of the given locations.
func (a *Archive) MergedOf(locs []uint64) (*Merged, error) {
	m := &Merged{}
	for _, id := range locs {
		rd, err := a.OpenLocation(id)
		if err != nil {
			m.Close()
			return nil, err
		}
		m.all = append(m.all, rd)
	}
	return m, nil
}

func less(a, b *LocationReader) bool {
	if a.ev.Time != b.ev.Time {
		return a.ev.Time < b.ev.Time
	}
	return a.loc < b.loc
}

func (m *Merged) down(i int) {
	h := m.heap
	for {
		c := 2*i + 1
		if c >= len(h) {
			return
		}
		if c+1 < len(h) && less(h[c+1], h[c]) {
			c++
		}
		if !less(h[c], h[i]) {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}

// Next advances to the next event in global order.
func (m *Merged) Next() bool {
	if m.err != nil {
		return false
	}
	if !m.started {
		m.started = true
		for _, rd := range m.all {
			if rd.Next() {
				m.heap = append(m.heap, rd)
			} else if rd.err != nil {
				m.err = rd.err
				return false
			}
		}
		for i := len(m.heap)/2 - 1; i >= 0; i-- {
			m.down(i)
		}
	} else if len(m.heap) > 0 {
		top := m.heap[0]
		if !top.Next() {
			if top.err != nil {
				m.err = top.err
				return false
			}
			last := len(m.heap) - 1
			m.heap[0] = m.heap[last]
			m.heap = m.heap[:last]
		}
		m.down(0)
	}
	if len(m.heap) == 0 {
		m.cur = nil
		return false
	}
	m.cur = m.heap[0]
	return true
}

// Event returns the current event, valid until the next call to Next.
func (m *Merged) Event() *Event { return &m.cur.ev }

// Err returns the first error met by any location.
func (m *Merged) Err() error { return m.err }

// Close closes every location's event file.
func (m *Merged) Close() error {
	var err error
	for _, rd := range m.all {
		if cerr := rd.Close(); err == nil {
			err = cerr
		}
	}
	return err
}
