package maxmin

// SimGrid's report order (Stamps).
//
// After each solve, SimGrid lists the variables of the constraints it
// marked (its modified set, in marking order, each constraint's enabled
// variables newest first, a variable where it first appears), and its
// engine re-inserts each one's action in its action heap in that order,
// changed or not. Its heap is stable, an update counting as an insertion:
// of two actions due at one date, the one re-inserted last pops last. The
// incremental solver reports only the variables whose share changed, so
// the caller's heap does not keep that order; the stamps do. With Stamps,
// the SimGrid-compatible incremental mode marks as SimGrid does, besides
// its own bookkeeping, on a shadow set of constraints (SimGrid's modified
// set, with its marking's quirk), and every solve numbers the variables of
// that set in SimGrid's order: a variable's stamp is the number of its
// last report. A round whose marking grows beyond a budget (a whole
// component of many constraints, as in a stencil whose ranks all
// communicate at once) is not followed: the stamps given before it are
// then unknown (StampKnown), since it may have reported any of them.

// shadowBudget bounds the elements one round's shadow marking visits.
const shadowBudget = 4096

// shadowTouchCnst marks c as SimGrid's update_modified_cnst_set does, on
// the shadow set.
func (s *System) shadowTouchCnst(c *Constraint) {
	if !s.Stamps || s.shadowLost || c.sMark == s.visit {
		return
	}
	s.shadowMark(c)
	s.shadowRec(c)
}

// shadowTouchVar marks v's first constraint, if v is enabled (SimGrid's
// update_modified_cnst_set_from_variable). A variable whose first
// constraint was marked without it may keep constraints out of the set
// (SimGrid's quirk): it is a suspect (see solveSimGrid).
func (s *System) shadowTouchVar(v *Variable) {
	if !s.Stamps || s.shadowLost || len(v.elems) == 0 || v.penalty <= 0 {
		return
	}
	if c0 := v.elems[0].c; c0.sMark == s.visit && v.sVisited != s.visit {
		s.sSuspects = append(s.sSuspects, v)
	}
	s.shadowTouchCnst(v.elems[0].c)
}

func (s *System) shadowMark(c *Constraint) {
	c.sMark = s.visit
	s.shadow = append(s.shadow, c)
}

// shadowRec is SimGrid's update_modified_cnst_set_rec on the shadow set.
// Once the budget is spent the marking stops at once, at every depth of
// the recursion: nothing reads a set not followed (the walks that went on
// unwinding a lost round were a quarter of the marking's elements at
// 4,096 ranks).
func (s *System) shadowRec(c *Constraint) {
	s.shadowWork += len(c.elems)
	if s.shadowWork > shadowBudget {
		s.shadowLost = true
		return
	}
	visit := s.visit
	for k := len(c.elems) - 1; k >= 0; k-- {
		v := c.elems[k].v
		if v.sVisited == visit {
			continue
		}
		for j := range v.elems {
			if v.sVisited == visit {
				break
			}
			if c2 := v.elems[j].c; c2 != c && c2.sMark != visit {
				s.shadowMark(c2)
				s.shadowRec(c2)
				if s.shadowLost {
					return
				}
			}
		}
		v.sVisited = visit
	}
}

// shadowEmptied takes c, which no variable uses any more, out of the
// shadow set (SimGrid's make_constraint_inactive).
func (s *System) shadowEmptied(c *Constraint) {
	if c.sMark == s.visit && !s.shadowLost {
		c.sMark = 0
		s.shadow = dropConstraint(s.shadow, c)
	}
}

// Exact rounds. Where SimGrid's marked sets are small, as in a replay
// whose ranks do not all communicate at once, marking and solving them
// whole as SimGrid does costs about what the incremental solver's
// bookkeeping, certificates and regions do, and gives SimGrid's shares
// and reports to the bit (its quirk included): the caller, re-dating
// every reported action as SimGrid does, keeps SimGrid's dates to the bit
// (see Inexact), and no order of simultaneous events is unsure. So a
// round follows the size of the last one's marked set: after a small
// one, it is marked and solved SimGrid's way (exactMode: slow's path,
// which logs nothing); after a large one, incrementally, with the shadow
// marking, and solved whole all the same if its set turned out small
// (exactRound). A round with changes whose order SimGrid may take
// otherwise is incremental, to be certified (Certify).

// exactBudget bounds the elements of a marked set solved whole.
const exactBudget = 1024

// exactRound reports whether an incremental round is solved as SimGrid
// solves it (solveExact): its marked set followed and small, and no
// change whose order SimGrid may take otherwise.
func (s *System) exactRound() bool {
	return s.Stamps && !s.shadowLost && !s.ambiguous && s.shadowWork <= exactBudget
}

// solveExact solves the round's marked set as SimGrid does, and reports
// every one of its variables, in SimGrid's order.
func (s *System) solveExact() {
	for _, c := range s.dirty {
		c.dirty = false
	}
	s.dirty = s.dirty[:0]
	s.list = append(s.list[:0], s.shadow...)
	for _, c := range s.list {
		c.inList = true
	}
	s.suspects = append(s.suspects[:0], s.sSuspects...)
	s.solveSimGrid()
}

// chooseMode sets, at the end of a round, how the next one is marked and
// solved.
func (s *System) chooseMode() {
	work := s.recWork
	if !s.exactMode {
		work = s.shadowWork
		if s.shadowLost {
			work = exactBudget + 1
		}
	}
	s.exactMode, s.recWork = work <= exactBudget, 0
}

// Certify makes the round, whose changes have not begun, incremental: the
// caller is about to make changes whose order SimGrid may take otherwise,
// which the incremental mode certifies for every order (Simultaneous).
func (s *System) Certify() {
	if len(s.list) == 0 && len(s.dirty) == 0 && len(s.log) == 0 {
		s.exactMode = false
	}
}

// stampRound numbers the variables of the round's marked set m in
// SimGrid's report order; a nil m is a round not followed.
func (s *System) stampRound(m []*Constraint, followed bool) {
	s.mFollowedLast = followed
	if !followed {
		s.lostMark = s.stampNext
		return
	}
	start := s.stampNext
	for _, c := range m {
		for k := len(c.elems) - 1; k >= 0; k-- {
			if e := &c.elems[k]; e.weight > 0 && e.v.report < start {
				e.v.report = s.stampNext
				s.stampNext++
			}
		}
	}
}

// Stamp returns the number of v's last report in SimGrid's order (see
// Stamps): of two variables, the one with the larger stamp was reported
// last.
func (v *Variable) Stamp() uint64 { return v.report }

// StampKnown reports whether v's stamp is its last report's: no round
// since was left unfollowed.
func (s *System) StampKnown(v *Variable) bool { return v.report >= s.lostMark }
