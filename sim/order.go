package sim

import "math"

// The order of simultaneous events.
//
// SimGrid handles the events due at one date (within surf/precision) in
// the order its action heap pops them: by date, then by last update (a
// stable heap). A latency paid enables its flow at once, in that order,
// and SimGrid's selective update marks what it re-solves as the changes
// come, so that the order of the enables can decide whether its quirk
// strikes (see maxmin.System.Simultaneous). The actions that end are
// handled after every pop, CPUs' first, and wake their ranks in pop order:
// that order is the ranks' order in the round, which orders what they
// start (so the order in which the latencies of transfers started
// together are paid later).
//
// The incremental solver reschedules only the flows whose share changed,
// where SimGrid re-inserts every flow it re-solves. So the solver follows
// SimGrid's marking and numbers the flows in SimGrid's report order
// (maxmin.System.Stamps): transfers due at one date pop in the order of
// their stamps, as in SimGrid's heap. But the incremental solver's dates
// are SimGrid's to rounding, not to the bit: transfers ending a few units
// in the last place apart may be equal in SimGrid, or in the other order,
// and the stamps are unknown after a round whose marking grew too large
// to follow (a stencil whose ranks all communicate at once). Such a group
// of ends is a block, and the ranks it wakes may run in another order
// among themselves (not with the others: a block's ranks keep their place
// in the round's queue, and of those that go on in later sub-rounds, so
// does each). Everything a block's rank starts, or a rank it wakes,
// carries the block's number (action.grp) and the rank that started it
// (action.starter). Elsewhere the order is SimGrid's: latencies and
// computations are dated once, when they start, with SimGrid's
// arithmetic, so that of two due at one date, the one started first pops
// first in both, unless a block's two ranks started them (in the order of
// the ranks' turns, which may be the other).
//
// Only the enables whose order may differ are certified for every order
// (dueAction.unsure); the removals of ended flows need not be: whatever
// SimGrid's order, the marking of a flow enabled all round goes through
// it whole (see maxmin).

// dueAction is an action due now, as popDue took it from the heap.
type dueAction struct {
	a    *action
	date float64
	t    uint8 // its heap entry type
	// unsure marks a latency end whose order among the round's others
	// may not be SimGrid's; stamped a transfer end put in SimGrid's
	// order among those at its date (see orderTies).
	unsure, stamped bool
}

// orderNear is how close, relative to the date, two events' dates may be
// while their order in SimGrid could be the other: 256 units in the last
// place (the dates of transfers are SimGrid's to a few units).
const orderNear = 256 * 0x1p-52

// orderClose reports whether dates a and b are equal, or so close that
// SimGrid's may be equal or in the other order.
func (s *simulation) orderClose(a, b float64) bool {
	return a == b || math.Abs(a-b) <= orderNear*max(1, math.Abs(s.now))
}

// orderWatched reports whether the order of simultaneous events is
// watched: only the automatic solver, which certifies the rounds of the
// incremental solver, needs it (the analytic mode shares nothing).
func (s *simulation) orderWatched() bool {
	return s.cfg.Solver == SolverAuto && s.cfg.Compat && !s.cfg.Analytic
}

// exactDates reports whether the dates in the heap are SimGrid's to the
// bit: the solves so far have all been SimGrid's own (maxmin's
// solveExact) and reported what SimGrid reports (maxmin.System.Inexact),
// nothing was skipped (a skip's dates are the replay's to rounding), and
// neither speed profiles nor the IB model touched the shares. Dates
// close but unequal are then unequal in SimGrid too, in the same order.
func (s *simulation) exactDates() bool {
	return s.netSys.Stamps && !s.netSys.Inexact && !s.cpuSys.Inexact && !s.skipped && len(s.profiled) == 0 && s.ib == nil
}

// tiedStarts reports whether a and b, due at one date, started in an
// order that may not be SimGrid's: started by two ranks of one block.
func tiedStarts(a, b *action) bool {
	return a.grp != 0 && a.grp == b.grp && a.starter != b.starter
}

// markUnsure marks the latency ends of due whose relative order may not
// be SimGrid's: of those due at one date, all those of a block started
// by two ranks or more; and all those at dates close but not equal. It
// reports whether it marked one.
func (s *simulation) markUnsure(due []dueAction) bool {
	if !s.orderWatched() {
		return false
	}
	lat := s.latIdx[:0]
	for i := range due {
		if due[i].t == hLatency {
			lat = append(lat, int32(i))
		}
	}
	s.latIdx = lat
	// Runs of one date and one block: unsure if two ranks started them.
	for i := 0; i < len(lat); {
		first := &due[lat[i]]
		j, mixed := i+1, false
		for ; j < len(lat); j++ {
			q := &due[lat[j]]
			if q.date != first.date || q.a.grp != first.a.grp {
				break
			}
			mixed = mixed || tiedStarts(first.a, q.a)
		}
		if mixed {
			for k := i; k < j; k++ {
				due[lat[k]].unsure = true
			}
		}
		i = j
	}
	// Close unequal dates: every latency end at either.
	for i := 1; i < len(lat) && !s.exactDates(); i++ {
		p, q := &due[lat[i-1]], &due[lat[i]]
		if p.date == q.date || !s.orderClose(p.date, q.date) {
			continue
		}
		for _, k := range lat {
			if d := &due[k]; d.date == p.date || d.date == q.date {
				d.unsure = true
			}
		}
	}
	for _, k := range lat {
		if due[k].unsure {
			return true
		}
	}
	return false
}

// markBlocks puts the transfers of due that end at one date in SimGrid's
// order, where their stamps tell it (see orderTies), and numbers the
// blocks among the actions of due that end (see the top of this file):
// consecutive transfer ends at close dates, or at one date in an unknown
// order; and consecutive computations or sleeps (handled before the
// transfers, among themselves in pop order) at one date started by two
// ranks of one block, or at close unequal dates. An action outside any
// block gets 0.
func (s *simulation) markBlocks(due []dueAction) {
	if !s.orderWatched() {
		return
	}
	s.orderTies(due)
	exact := s.exactDates()
	prev := [2]int{-1, -1} // the last computation's and transfer's
	for i := range due {
		d := &due[i]
		if d.t == hLatency {
			continue
		}
		d.a.blk = 0
		k := 0
		if d.a.kind == actComm {
			k = 1
		}
		if j := prev[k]; j >= 0 {
			p := &due[j]
			var tied bool
			close := p.date != d.date && !exact && s.orderClose(p.date, d.date)
			if k == 1 {
				tied = p.date == d.date && !(d.stamped && p.stamped) || close
			} else {
				tied = p.date == d.date && tiedStarts(p.a, d.a) || close
			}
			if tied {
				if p.a.blk == 0 {
					s.blocks++
					p.a.blk = s.blocks
				}
				d.a.blk = p.a.blk
			}
		}
		prev[k] = i
	}
}

// orderTies sorts each run of transfer ends of due at one date by their
// variables' stamps, SimGrid's order of their last re-insertion in its
// heap (maxmin.System.Stamps), where every stamp of the run is known, and
// marks them stamped: transfers whose dates are equal in Kairos are
// SimGrid's symmetric ones, equal there too, which its heap pops in that
// order.
func (s *simulation) orderTies(due []dueAction) {
	idx := s.latIdx[:0]
	for i := range due {
		if d := &due[i]; d.t != hLatency && d.a.kind == actComm && d.a.inSystem {
			idx = append(idx, int32(i))
		}
	}
	s.latIdx = idx
	for i := 0; i < len(idx); {
		j, known := i+1, s.netSys.StampKnown(due[idx[i]].a.v)
		for ; j < len(idx) && due[idx[j]].date == due[idx[i]].date; j++ {
			known = known && s.netSys.StampKnown(due[idx[j]].a.v)
		}
		if j-i > 1 && known {
			run := idx[i:j]
			// Insertion sort on the run's slots of due: runs are short.
			for p := 1; p < len(run); p++ {
				for q := p; q > 0 && due[run[q]].a.v.Stamp() < due[run[q-1]].a.v.Stamp(); q-- {
					due[run[q]], due[run[q-1]] = due[run[q-1]], due[run[q]]
				}
			}
			for _, k := range run {
				due[k].stamped = true
			}
		}
		i = j
	}
}
