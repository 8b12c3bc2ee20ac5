package sim

import (
	"math"

	"kairos/trace"
)

// Wildcard receives in the dependency-driven engine.
//
// A receive from MPI_ANY_SOURCE (or with MPI_ANY_TAG) takes, as SMPI
// matches it, the oldest accepting send waiting in its mailbox when it is
// posted, or else the first accepting send posted after it: which one
// depends on the dates of sends that other ranks, each on its own clock,
// may not have reached yet. The engine therefore leaves a wildcard
// receive unmatched until every rank waits or has ended, then bounds from
// below the date of every send still to come while it is not matched: a
// rank that waits posts nothing before the earliest date at which all it
// waits for can be matched, which depends on the bounds of the ranks it
// waits for (a fixed point, as conservative parallel simulations compute
// their lookahead), and a rank that waits for that receive, directly or
// not, posts nothing.
// A receive whose oldest candidate comes strictly before every bound gets
// it; where none can be matched so (a tie, or no send at all), the event
// engine replays the trace. One wildcard receive a rank at a time, and no
// receive of the rank that could take the same messages posted after it
// until it is matched (SMPI would give a message to the older of the
// two): elsewhere, the event engine. Receives posted before it need no
// care: no send waits that one of them takes, and a send to come meets
// the older receive first in both engines.

// depPostWild posts wildcard receive q of rank me, which has no other
// unmatched.
func (s *simulation) depPostWild(me *depRank, q *dreq) {
	me.wild = q
	s.wilds = append(s.wilds, q.owner)
}

// accepts reports whether receive q takes send c.
func (q *dreq) accepts(c *dreq) bool { return q.acceptsFrom(c.owner, c.tag, c.pc) }

// acceptsFrom reports whether receive q takes a message from src with
// tag (collectives' messages, of negative tags, only by their own) on
// point-to-point communicator pc.
func (q *dreq) acceptsFrom(src, tag int32, pc uint8) bool {
	return q.pc == pc && (q.peer == trace.AnySource || q.peer == src) && (q.tag == trace.AnyTag && tag >= 0 || q.tag == tag)
}

// oldestFor returns the oldest send in r's mailbox that receive q accepts
// (the first of each (source, tag) queue is its queue's oldest), and
// whether another from a different rank was posted at the same date.
func (s *simulation) oldestFor(r *depRank, q *dreq) (best *dreq, tie bool) {
	for _, sq := range r.sends.All() {
		if sq.Empty() {
			continue
		}
		c := sq.Front()
		if !q.accepts(c) {
			continue
		}
		switch {
		case best == nil || c.posted < best.posted || c.posted == best.posted && c.owner == best.owner && c.seq < best.seq:
			best, tie = c, false
		case c.posted == best.posted && c.owner != best.owner:
			tie = true // SMPI's order of simultaneous posts decides
		}
	}
	return best, tie
}

// resolveWilds matches the wildcard receives whose sends are certain, or
// hands the replay over.
func (s *simulation) resolveWilds() {
	n := len(s.dr)
	s.wildWork += int64(n)
	if s.wildWork > 64*s.stats.actions+1<<20 {
		s.err = s.fallback("wildcard receives resolved too often for the ranks")
		return
	}
	kept := s.wilds[:0]
	for _, id := range s.wilds {
		r := &s.dr[id]
		q := r.wild
		c, tie := s.oldestFor(r, q)
		if c == nil || tie {
			kept = append(kept, id)
			continue
		}
		s.lowerBounds(q)
		if !s.before(c, r) {
			kept = append(kept, id)
			continue
		}
		r.wild = nil
		r.sends.Ref(mkey(c.owner, c.tag, c.pc)).Pop()
		s.depMatch(c, q)
	}
	if len(kept) == len(s.wilds) {
		s.err = s.fallback("wildcard receives whose senders cannot be ordered (a tie, or a deadlock)")
		return
	}
	s.wilds = kept
}

// before reports whether send c, the oldest candidate of receiver r's
// wildcard receive, comes strictly before every send still to come from
// another rank (s.lb, computed as if that receive were never matched: a
// send to r before c would be posted while it is not).
func (s *simulation) before(c *dreq, r *depRank) bool {
	self := r.wild.owner
	if !r.blocked || !r.wild.awaited {
		self = -1 // it may post a send to itself
	}
	for i, lb := range s.lb {
		if int32(i) != c.owner && int32(i) != self && lb <= c.posted {
			return false
		}
	}
	return true
}

// lowerBounds sets s.lb[i] to a date before which rank i posts nothing,
// every rank waiting or ended, while wildcard receive w is not matched:
// its clock, raised to the earliest date at which all it waits for can
// be matched, to a fixed point (+Inf for the ranks that wait for w,
// directly or not).
func (s *simulation) lowerBounds(w *dreq) {
	n := len(s.dr)
	if cap(s.lb) < n {
		s.lb = make([]float64, n)
	}
	s.lb = s.lb[:n]
	for i := range s.dr {
		s.lb[i] = s.dr[i].now
		if s.dr[i].done {
			s.lb[i] = math.Inf(1)
		}
	}
	for range n + 1 {
		changed := false
		for i := range s.dr {
			r := &s.dr[i]
			if r.done || !r.blocked {
				continue
			}
			b := s.lb[i]
			for _, q := range r.waits {
				switch {
				case q == w:
					b = math.Inf(1)
				case !q.known:
					b = max(b, s.matchBound(q))
				}
			}
			s.wildWork += int64(len(r.waits))
			if b > s.lb[i] {
				s.lb[i], changed = b, true
			}
		}
		if !changed {
			return
		}
	}
}

// matchBound is a date before which request q, not matched, cannot be.
func (s *simulation) matchBound(q *dreq) float64 {
	if !q.send && q == s.dr[q.owner].wild {
		// The oldest accepting send waiting, or one still to come.
		b := math.Inf(1)
		if c, _ := s.oldestFor(&s.dr[q.owner], q); c != nil {
			b = c.posted
		}
		for i, lb := range s.lb {
			if int32(i) != q.owner { // blocked on q, its owner posts nothing before
				b = min(b, lb)
			}
		}
		return max(q.posted, b)
	}
	peer := &s.dr[q.peer]
	if q.send && peer.wild != nil && peer.wild.accepts(q) {
		// The peer's wildcard receive may take it.
		return max(q.posted, peer.wild.posted)
	}
	return max(q.posted, s.lb[q.peer])
}
