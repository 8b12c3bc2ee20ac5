package prsd

import "kairos/trace"

// A real program's ranks mostly fold little (foldsLittle): HPCC's 64
// ranks and three of SMG2000's 4 each give the folding up at 16,384 or
// 32,768 calls, and their clusters keep their events. Builder.Add found
// it out by folding those calls with their parameters and timings, most
// of reduce's compression of HPCC, for a structure then dropped. Whether
// a rank folds little depends on its calls alone (the items and loops
// fold makes of them), so foldsLittleAhead folds the calls first without
// their parameters, as a Shape does, several times faster, and Add keeps
// the cluster's events at once where they fold little. Where they fold
// well it stops early, and Add folds the rank as before; once a member
// of a cluster is folded to its end, the next are not folded ahead
// (an SPMD program's ranks fold alike: noisy LU's 64 ranks, read ahead
// to 1,024 calls each, cost 0.9% more instructions).

// aheadWell is the number of calls from which foldsLittleAhead stops,
// unsure, at a power of two where the rank folds well: into nodes
// aheadMargin times fewer than foldsLittle's bound. (A test sets it past
// its ranks' calls, to compare every decision with the fold's.)
var aheadWell int64 = 1 << 10

const aheadMargin = 2

// ahead turns foldsLittleAhead on (off in a test, to compare).
var ahead = true

// foldsLittleAhead reports whether Add's folding of rank r of the origin
// would give up on it (foldsLittle at a power of two of its calls, or
// once they are all in): the same calls pushed in the same order (add's:
// an untimed computation is no call but the one before the first call,
// lead), into a compressor of the structure only. Where it would, it
// numbers the sites of the computations after the calls the folding
// would have taken in (their first's, as fill does), which the file's
// table keeps. False where it does not know: the rank folds well so far,
// or it cannot be read (Add then reports why); at once for a rank of too
// few events to fold little.
func (b *Builder) foldsLittleAhead(r int) bool {
	if n := trace.RankEvents(b.origin, r); n >= 0 && n <= minItems {
		return false
	}
	rd, err := b.origin.OpenRank(r)
	if err != nil {
		return false
	}
	defer rd.Close()
	if b.ahead == nil {
		b.ahead = NewInterner() // its identities never leave the fold
	}
	c := compressor{in: b.ahead, bounded: true}
	var open, lead trace.Event
	hasOpen, hasLead, comp := false, false, false
	var site uint64 // of the computation after open
	var sites siteOrder
	for !c.little && rd.Next() {
		e := rd.Event()
		if e.Kind == trace.Compute && !e.HasTime {
			switch {
			case !hasOpen && !hasLead:
				lead, hasLead = trace.Event{Kind: e.Kind, CallSite: e.CallSite}, true
			case hasOpen && !comp:
				comp, site = true, e.CallSite
			}
			continue
		}
		if hasLead {
			hasLead = false
			c.push(&lead) // before the first call: no computation after it
		}
		if hasOpen {
			c.push(&open)
			sites.note(site, &b.sites)
			comp, site = false, 0
			if n := c.calls; n >= aheadWell && n&(n-1) == 0 && !c.little &&
				int64(nodes(c.seq))*itemsPerCall*aheadMargin <= n {
				return false
			}
		}
		open, hasOpen = trace.Event{Kind: e.Kind, CallSite: e.CallSite}, true
	}
	if rd.Err() != nil {
		return false
	}
	if !c.little {
		if hasLead {
			c.push(&lead)
		}
		if hasOpen {
			c.push(&open)
			sites.note(site, &b.sites)
		}
		c.flush()
	}
	if !c.little && !foldsLittle(nodes(c.seq), c.calls) {
		return false
	}
	for _, s := range sites.list {
		b.sites.number(s)
	}
	return true
}

// siteOrder is the sites a table does not number yet, in the order they
// come, each once.
type siteOrder struct {
	list []uint64
	seen map[uint64]bool
}

// note adds site, unless 0 (none) or numbered in t or here.
func (o *siteOrder) note(site uint64, t *siteTable) {
	if site == 0 || t.numbers[site] != 0 || o.seen[site] {
		return
	}
	if o.seen == nil {
		o.seen = map[uint64]bool{}
	}
	o.seen[site] = true
	o.list = append(o.list, site)
}
