package trace

import "fmt"

// Merge returns one source whose ranks are those of parts, one part after
// the other, as several applications run side by side on one machine
// (SimGrid's instances): each part's MPI_COMM_WORLD becomes a
// communicator of its ranks, its communicators and regions are numbered
// anew, its ranks' partners, roots and communicator members are offset to
// the merged ranks, and its default datatype is made explicit in its
// events, so that no message or collective of one part reaches another.
// Merged.Offsets tells where each part's ranks begin.
func Merge(parts []Source, opts MergeOptions) (*Merged, error) {
	m := &Merged{meta: NewMeta(), opts: opts}
	m.meta.Attrs["merged"] = fmt.Sprint(len(parts))
	nextComm := uint32(1)
	for i, src := range parts {
		meta := src.Meta()
		p := mergedPart{src: src, offset: int32(m.n), defType: meta.DefaultType, comms: map[uint32]uint32{}}
		members := func(ids []int32) []int32 {
			out := make([]int32, len(ids))
			for k, r := range ids {
				out[k] = r + p.offset
			}
			return out
		}
		world := make([]int32, src.NumRanks())
		for r := range world {
			world[r] = p.offset + int32(r)
		}
		p.comms[WorldComm] = nextComm
		m.meta.Comms = append(m.meta.Comms, Comm{ID: nextComm, Members: world})
		nextComm++
		for _, c := range meta.Comms {
			if _, dup := p.comms[c.ID]; dup {
				return nil, fmt.Errorf("trace: merged part %d defines communicator %d twice", i, c.ID)
			}
			p.comms[c.ID] = nextComm
			m.meta.Comms = append(m.meta.Comms, Comm{ID: nextComm, Members: members(c.Members)})
			nextComm++
		}
		p.regions = make([]uint32, len(meta.Regions))
		for id := 1; id < len(meta.Regions); id++ {
			p.regions[id] = m.mergeRegion(meta, p.regions, uint32(id), 0)
		}
		m.parts = append(m.parts, p)
		m.n += src.NumRanks()
	}
	return m, nil
}

// MergeOptions are Merge's choices.
type MergeOptions struct {
	// LocalWaitKeys leaves the (source, destination) request keys of
	// waits and tests as the part's own ranks, as SimGrid 3.32's replay of
	// several instances looks them up among keys it stores by actor (a
	// bug: a wait of a part other than the first finds no request, and
	// returns at once, unless a request happens to have that key).
	LocalWaitKeys bool
}

// Merged is the source Merge returns.
type Merged struct {
	meta  Meta
	opts  MergeOptions
	parts []mergedPart
	n     int
}

type mergedPart struct {
	src     Source
	offset  int32
	defType Datatype
	comms   map[uint32]uint32 // the part's communicator ids -> merged ids
	regions []uint32          // the part's region ids -> merged ids
}

// mergeRegion returns the merged id of region id of meta, adding it and
// its callers (ids, filled as they are met; depth guards against a
// parent cycle).
func (m *Merged) mergeRegion(meta *Meta, ids []uint32, id uint32, depth int) uint32 {
	if id == 0 || int(id) >= len(meta.Regions) || depth > len(meta.Regions) {
		return 0
	}
	if ids[id] != 0 {
		return ids[id]
	}
	r := meta.Regions[id]
	ids[id] = m.meta.AddRegion(r.Name, m.mergeRegion(meta, ids, r.Parent, depth+1))
	return ids[id]
}

// Meta returns the merged metadata.
func (m *Merged) Meta() *Meta { return &m.meta }

// NumRanks returns the number of ranks of all parts.
func (m *Merged) NumRanks() int { return m.n }

// Parts returns the merged sources, so that callers can reach their own
// methods (a reader's warnings, say), as Unwrap does for one source.
func (m *Merged) Parts() []Source {
	out := make([]Source, len(m.parts))
	for i, p := range m.parts {
		out[i] = p.src
	}
	return out
}

// Offsets returns the first merged rank of each part.
func (m *Merged) Offsets() []int {
	out := make([]int, len(m.parts))
	for i, p := range m.parts {
		out[i] = int(p.offset)
	}
	return out
}

// OpenRank opens merged rank r: the rank of its part, its events remapped.
func (m *Merged) OpenRank(r int) (Reader, error) {
	if r < 0 || r >= m.n {
		return nil, fmt.Errorf("trace: rank %d out of range (%d ranks)", r, m.n)
	}
	i := len(m.parts) - 1
	for int(m.parts[i].offset) > r {
		i--
	}
	p := &m.parts[i]
	rd, err := p.src.OpenRank(r - int(p.offset))
	if err != nil {
		return nil, err
	}
	return &mergedReader{Reader: rd, part: p, localKeys: m.opts.LocalWaitKeys}, nil
}

// mergedReader remaps one part's events.
type mergedReader struct {
	Reader
	part      *mergedPart
	localKeys bool
	ev        Event
	err       error
}

func (r *mergedReader) Next() bool {
	if r.err != nil || !r.Reader.Next() {
		return false
	}
	e, p := r.Reader.Event(), r.part
	r.ev = *e
	x := &r.ev
	if !r.localKeys || (e.Kind != Wait && e.Kind != Test) {
		if x.Partner >= 0 {
			x.Partner += p.offset
		}
		if x.Source >= 0 {
			x.Source += p.offset
		}
	}
	var ok bool
	if x.Comm, ok = p.comms[e.Comm]; !ok {
		r.err = fmt.Errorf("trace: %s on undefined communicator %d", e.Kind, e.Comm)
		return false
	}
	if e.NewComm != WorldComm {
		if x.NewComm, ok = p.comms[e.NewComm]; !ok {
			r.err = fmt.Errorf("trace: %s creates undefined communicator %d", e.Kind, e.NewComm)
			return false
		}
	}
	if x.SendType == DefaultType {
		x.SendType = p.defType
	}
	if x.RecvType == DefaultType {
		x.RecvType = p.defType
	}
	if int(e.Region) < len(p.regions) {
		x.Region = p.regions[e.Region]
	} else {
		x.Region = 0
	}
	return true
}

func (r *mergedReader) Event() *Event { return &r.ev }

func (r *mergedReader) Err() error {
	if r.err != nil {
		return r.err
	}
	return r.Reader.Err()
}

// Position names the current event's place in its part's input, if its
// reader knows it.
func (r *mergedReader) Position() string {
	if p, ok := r.Reader.(Positioner); ok {
		return p.Position()
	}
	return ""
}
