package sim

// pathRows caches the analytic engine's routes by pair of ranks, in a row
// per sending rank: two loads at each message, where a host's map of
// destinations hashes them once the host has more than smallmap.Linear
// partners (collectives' trees give many). With the maps alone, LAMMPS'
// melt on 64 ranks spent 6% of its analytic replay's CPU time finding
// routes, and takes 8% less with the rows (BENCHMARKS.md); a stencil's
// few partners are found as fast by the map's linear search, and are not
// cached here. A row holds every rank, so rows are kept up to
// pathRowsMax ranks (2 MB of rows at most, and 32 bytes a pair cached);
// beyond, the cache is off (get finds nothing, put keeps nothing).
type pathRows struct {
	rows [][]*dpath // by source rank, by destination rank; nil: off
}

// pathRowsMax is the largest number of ranks whose routes are cached.
const pathRowsMax = 512

// newPathRows returns the cache for a replay of ranks ranks.
func newPathRows(ranks int) pathRows {
	if ranks > pathRowsMax {
		return pathRows{}
	}
	return pathRows{rows: make([][]*dpath, ranks)}
}

// get returns the route cached for src to dst, nil if none.
func (p *pathRows) get(src, dst int32) *dpath {
	if int(src) < len(p.rows) { // the bounds checks are the nil checks
		if row := p.rows[src]; int(dst) < len(row) {
			return row[dst]
		}
	}
	return nil
}

// put caches a copy of d for src to dst, and returns it.
func (p *pathRows) put(src, dst int32, d *dpath) *dpath {
	if p.rows == nil {
		return d
	}
	if p.rows[src] == nil {
		p.rows[src] = make([]*dpath, len(p.rows))
	}
	own := new(dpath) // d is in a host's map, whose values move as it grows
	*own = *d
	p.rows[src][dst] = own
	return own
}
