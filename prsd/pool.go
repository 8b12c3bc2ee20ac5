package prsd

// pool holds the accumulators of calls that no longer count, for the
// next calls' and ranks': a call's instance once it is accumulated, and a
// call's accumulator once fold has merged it into another or the merge
// has read the rank's. Build's ranks each made theirs anew: reducing a
// noisy 128x128 stencil (16,384 ranks of 204 events) allocated 1.76 GB,
// most of it these and their series' runs, and a quarter of its CPU time
// went to allocating and collecting them. Taken with reuse; a
// fieldAcc's builders, up to the capacity of its modes, are empty.
type pool struct {
	raws   []*rawCall
	accs   []*accCall
	fields []*fieldAcc
	stats  []*statAcc
}

// putRaw gives back an instance nothing refers to any more.
func (p *pool) putRaw(r *rawCall) {
	if r == nil {
		return
	}
	*r = rawCall{}
	p.raws = append(p.raws, r)
}

// putAcc gives back an accumulator nothing refers to any more, with its
// fields and statistics, emptied; their builders keep their room.
func (p *pool) putAcc(a *accCall) {
	if a == nil {
		return
	}
	for _, fa := range a.fields {
		if fa == nil {
			continue
		}
		for i := range fa.modes {
			fa.modes[i].reset()
		}
		fa.lens.reset()
		clear(fa.elems)
		fa.modes, fa.elems = fa.modes[:0], fa.elems[:0]
		p.fields = append(p.fields, fa)
	}
	for _, s := range a.stats {
		if s == nil {
			continue
		}
		s.levels.reset()
		s.index.reset()
		*s = statAcc{levels: s.levels, index: s.index, distinct: s.distinct[:0]}
		p.stats = append(p.stats, s)
	}
	*a = accCall{}
	p.accs = append(p.accs, a)
}
