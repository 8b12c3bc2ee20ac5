package maxmin

// SimGrid-compatible incremental solving (SimGridSelective and
// Incremental both set).
//
// SimGrid's selective update re-solves the set M of constraints it marks
// as changes happen: each touched constraint with, recursively, the
// constraints of its variables. A variable enabled (or removed) after its
// first constraint was marked in the same round does not pull in its
// other constraints, so M can miss part of a changed component, whose
// shares then stay stale. When M does cover every changed component, its
// solve is the exact max-min share, which the incremental solver computes
// without marking anything. So each round:
//
//   - changes are applied at once and logged, touched constraints are
//     "known" to be in M, and variables touched after the round's first
//     change are candidates for the quirk;
//   - at Solve, every constraint of every candidate must be shown to be in
//     M: connected in the current graph, through variables that are not
//     candidates, to a known constraint (a marked constraint's variables
//     have all their constraints marked, unless they are candidates), or
//     reached through a variable enabled in the round on a first
//     constraint that could not be marked yet (see reachedThrough). A
//     constraint that only the candidate uses may stay out of M if it does
//     not bind the candidate's share;
//   - when that proof fails, the round is undone and replayed with
//     SimGrid's own marking, and M solved as SimGrid solves it. If M did
//     miss part of a component, the quirk has struck (QuirkStruck): the
//     shares there are stale, and rounds are solved SimGrid's way until
//     every stale component has been solved whole again.
//
// SimGrid's marking depends on the order of a round's changes, but not
// everywhere. A variable enabled before the round and removed or
// re-weighted in it is marked whole in any order: every marking of a
// constraint goes through the constraint's enabled variables, so the first
// marking that reached one of its constraints, whenever it came, went
// through it. Enabling a variable is another matter: a variable enabled
// on a constraint marked before, without it, is a candidate. So changes
// made under Simultaneous (enables the caller's order may not share with
// SimGrid's) are certified for any order: none counts as the round's
// first unless no other variable uses its first constraint
// (certifyOrder), and a round that then fails makes OrderDependent true;
// removals and re-weightings are not concerned.
//
// Until the quirk strikes, the results are SimGrid's, to rounding, at the
// cost of the incremental solver in the common case. After, they are
// SimGrid's for the same sequence of changes: the stale components are
// solved SimGrid's way, by SimGrid's marking, until solved whole again;
// a Simultaneous change meanwhile makes OrderDependent true, since
// SimGrid's marking, made as the changes come, could then be another.

// Logged change kinds.
const (
	opExpand uint8 = iota
	opPenalty
	opBound
	opRemove
	opCnstBound
)

// op is a logged change, with what undoing it needs.
type op struct {
	kind  uint8
	v     *Variable
	c     *Constraint
	x     float64 // the weight, penalty or bound set
	old   float64 // the previous weight (of element idx), penalty or bound
	value float64 // the variable's previous value
	idx   int32   // Expand: the element changed, -1 for a new one
	pos   int32   // detaching changes: their positions start at undoPos[pos]
}

// searchBudget bounds the constraints one certificate search visits.
const searchBudget = 64

// slow reports whether changes are marked SimGrid's way (rather than
// logged and certified).
func (s *System) slow() bool {
	return s.SimGridSelective && (!s.Incremental || s.staleCount > 0 || s.replaying || s.exactMode)
}

func (s *System) logging() bool { return s.SimGridSelective && !s.slow() }

// record logs a change. The op is built in place, field by field: built
// on the stack and copied, its wide loads waited on its narrow stores (a
// store-forwarding stall), which was most of Expand's time (7.5% of a
// 64-rank replay's samples before, 2.5% after).
func (s *System) record(kind uint8, v *Variable, c *Constraint, x, old, value float64, idx, pos int32) {
	if !s.logging() {
		return
	}
	s.log = append(s.log, op{})
	o := &s.log[len(s.log)-1]
	o.kind, o.v, o.c, o.x, o.old, o.value, o.idx, o.pos = kind, v, c, x, old, value, idx, pos
}

// fastTouchCnst records a changed constraint: SimGrid marks it.
func (s *System) fastTouchCnst(c *Constraint) {
	s.markDirty(c)
	c.known = s.visit
	s.touched = true
	s.shadowTouchCnst(c)
}

// fastTouchVar records a changed variable. SimGrid marks all the
// constraints of the round's first, and of any whole one (see touchVar);
// any other is a candidate for the quirk, its first constraint marked.
func (s *System) fastTouchVar(v *Variable, whole bool) {
	s.shadowTouchVar(v)
	for i := range v.elems {
		s.markDirty(v.elems[i].c)
	}
	if s.Simultaneous && v.attached == s.visit {
		s.ambiguous = true
		if !s.touched || whole {
			s.simFirst = append(s.simFirst, v) // see certifyOrder
		} else {
			v.elems[0].c.known = s.visit
			s.candidate(v)
		}
	} else if !s.touched || whole {
		for i := range v.elems {
			v.elems[i].c.known = s.visit
		}
	} else {
		v.elems[0].c.known = s.visit
		s.candidate(v)
	}
	s.touched = true
}

func (s *System) candidate(v *Variable) {
	if v.cand != s.visit {
		v.cand = s.visit
		s.cands = append(s.cands, v)
	}
}

// untouched reports whether SimGrid's marking cannot have reached c in
// this round: c was not touched, and no enabled variable used it since the
// round began (marking spreads only through enabled variables).
func (s *System) untouched(c *Constraint) bool {
	return len(c.elems) == 0 && c.known != s.visit && c.detached != s.visit
}

// known reports whether c is known to be in SimGrid's modified set.
func (s *System) known(c *Constraint) bool { return c.known == s.visit }

// clearMarks forgets SimGrid's marked set.
func (s *System) clearMarks() {
	for _, c := range s.list {
		c.inList = false
	}
	s.list = s.list[:0]
}

// alone is a constraint (element idx of v) that only v uses, left out of
// SimGrid's modified set: harmless unless it binds v.
type alone struct {
	v   *Variable
	idx int
}

// solveCompatible is Solve in the SimGrid-compatible incremental mode.
func (s *System) solveCompatible() {
	s.regVars = s.regVars[:0]
	s.seeds = s.seeds[:0]
	if s.exactRound() {
		s.solveExact()
		return
	}
	if !s.certify() {
		// In another order of its simultaneous changes, SimGrid's
		// marking may miss part of a changed component.
		s.orderDep = s.orderDep || s.ambiguous
		s.fallback(false)
		return
	}
	if len(s.dirty) > 0 && !s.solveIncremental() {
		s.fallback(true)
		return
	}
	for _, a := range s.alones {
		e := &a.v.elems[a.idx]
		if e.weight*a.v.value >= e.c.Bound*(1-2*s.Precision) {
			s.fallback(false)
			return
		}
	}
	s.morder, s.mFollowed = s.shadow, !s.shadowLost
}

// certify reports whether every constraint of every candidate is in
// SimGrid's modified set, or only the candidate's and harmless.
func (s *System) certify() bool {
	s.certifyOrder()
	s.alones = s.alones[:0]
	for _, v := range s.cands {
		for j := range v.elems {
			c := v.elems[j].c
			if s.known(c) {
				continue
			}
			reached, exhausted := s.search(c)
			switch {
			case reached:
			case s.reachedThrough(c):
				c.known = s.visit
			case !exhausted:
				return false
			case len(c.elems) == 0:
				// Nothing left on it to solve.
			case len(c.elems) == 1 && c.elems[0].v == v:
				s.alones = append(s.alones, alone{v, j})
			default:
				return false
			}
		}
	}
	return true
}

// certifyOrder decides, for the variables changed under Simultaneous
// that SimGrid's marking went through whole in the caller's order (the
// round's first, or one whose first constraint no marking had reached),
// whether it does in any order: when no other variable uses that first
// constraint now, none changed in the round can have led a marking there
// before it, and SimGrid marks all its constraints in any order; otherwise
// it is a candidate like the others.
func (s *System) certifyOrder() {
	for _, v := range s.simFirst {
		c0 := v.elems[0].c
		if len(c0.elems) == 1 && c0.detached != s.visit {
			for i := range v.elems {
				v.elems[i].c.known = s.visit
			}
			continue
		}
		c0.known = s.visit
		s.candidate(v)
	}
	s.simFirst = s.simFirst[:0]
}

// reachedThrough reports whether SimGrid's marking must have reached c
// through a variable w enabled on it in this round while w's first
// constraint c0 was neither known to be marked nor left by a variable,
// with every other variable on c0 using c too. Either c0 was still
// unmarked, and enabling w marked it and, through w, c; or a recursion
// had marked c0 through a variable then on it, which, not having left,
// is on it now and uses c, so that the recursion marked c too.
func (s *System) reachedThrough(c *Constraint) bool {
	for _, ce := range c.elems {
		w := ce.v
		if w.fresh != s.visit {
			continue
		}
		c0 := w.elems[0].c
		if c0 == c || c0.detached == s.visit {
			continue
		}
		if allUse(c0, c, w) {
			return true
		}
	}
	return false
}

// allUse reports whether every variable on c0 but w also uses c.
func allUse(c0, c *Constraint, w *Variable) bool {
	for _, ce := range c0.elems {
		u := ce.v
		if u == w {
			continue
		}
		uses := false
		for j := range u.elems {
			if u.elems[j].c == c {
				uses = true
				break
			}
		}
		if !uses {
			return false
		}
	}
	return true
}

// search looks, from c, for a known constraint through variables that
// are not candidates. It reports whether it found one (then every
// constraint it crossed is known too) and whether it explored c's whole
// reach (false when it gave up).
func (s *System) search(c *Constraint) (reached, exhausted bool) {
	st := s.nextStamp()
	q := append(s.bfs[:0], c)
	c.mark = st
	defer func() { s.bfs = q[:0] }()
	for i := 0; i < len(q); i++ {
		if i == searchBudget {
			return false, false
		}
		for _, ce := range q[i].elems {
			v := ce.v
			if v.cand == s.visit {
				continue
			}
			for j := range v.elems {
				e := &v.elems[j]
				if e.ci < 0 || e.c.mark == st {
					continue
				}
				if s.known(e.c) {
					for _, k := range q {
						k.known = s.visit
					}
					return true, true
				}
				e.c.mark = st
				q = append(q, e.c)
			}
		}
	}
	return false, true
}

// fallback undoes the round and replays it with SimGrid's marking. When
// the marked set covers every changed component after all, and the
// incremental solver can solve it (not simgrid), the incremental share is
// SimGrid's; otherwise the marked set is solved as SimGrid solves it.
func (s *System) fallback(simgrid bool) {
	s.fallbacks++
	for _, v := range s.regVars {
		v.value = v.old
	}
	s.modified = s.modified[:0]
	// The replay marks SimGrid's way, which does not keep the dirty
	// list: a constraint that a variable leaves empty drops out of it,
	// and enabling a variable on it again touches only the variable's
	// first constraint.
	dirty := append(s.saved[:0], s.dirty...)
	s.saved = dirty
	for i := len(s.log) - 1; i >= 0; i-- {
		s.undo(&s.log[i])
	}
	s.clearMarks() // the incremental solve's region
	s.visit++      // and the round's visits
	s.replaying = true
	for i := range s.log {
		s.redo(&s.log[i])
	}
	s.replaying = false
	if !simgrid && s.staleCount == 0 && s.covered() {
		marked := append(s.marked[:0], s.list...)
		s.marked = marked
		s.clearMarks()
		for _, c := range s.seeds {
			s.markDirty(c)
		}
		for _, c := range dirty {
			s.markDirty(c)
		}
		if s.solveIncremental() {
			s.morder, s.mFollowed = s.marked, true
			return
		}
		s.clearMarks() // the region
		for _, c := range marked {
			s.mark(c)
		}
	}
	for _, c := range s.dirty {
		c.dirty = false
	}
	s.dirty = s.dirty[:0]
	s.solveSimGrid()
}

// covered reports whether SimGrid's marked set holds every constraint of
// the variables its marking skipped (then it is closed).
func (s *System) covered() bool {
	for _, v := range s.suspects {
		for j := range v.elems {
			if c := v.elems[j].c; !c.inList && len(c.elems) > 0 {
				return false
			}
		}
	}
	return true
}

func (s *System) undo(o *op) {
	v := o.v
	switch o.kind {
	case opExpand:
		if o.idx >= 0 {
			e := &v.elems[o.idx]
			e.weight = o.old
			if e.ci >= 0 {
				e.c.elems[e.ci].weight = o.old
				e.c.elems[e.ci].usage = o.old / v.penalty
			}
			return
		}
		e := &v.elems[len(v.elems)-1]
		if e.ci >= 0 {
			e.c.elems = e.c.elems[:e.ci]
		} else {
			e.c.ndis--
		}
		v.elems = v.elems[:len(v.elems)-1]
	case opBound:
		v.bound = o.old
	case opCnstBound:
		o.c.Bound = o.old
	case opPenalty, opRemove:
		switch {
		case v.penalty > 0 && o.old <= 0: // enabled: pop its elements
			for i := len(v.elems) - 1; i >= 0; i-- {
				e := &v.elems[i]
				e.c.elems = e.c.elems[:e.ci]
				e.c.ndis++
				e.ci = -1
			}
		case v.penalty <= 0 && o.old > 0: // disabled or removed
			s.reattach(v, o.old, s.undoPos[o.pos:o.pos+int32(len(v.elems))])
			if o.kind == opPenalty {
				for i := range v.elems {
					v.elems[i].c.ndis--
				}
			}
		case o.kind == opRemove: // a disabled variable removed
			for i := range v.elems {
				v.elems[i].c.ndis++
			}
		default:
			for i := range v.elems {
				if e := &v.elems[i]; e.ci >= 0 {
					e.c.elems[e.ci].usage = e.weight / o.old
				}
			}
		}
		v.penalty = o.old
		v.value = o.value
	}
}

// reattach puts back v's elements where detach took them from.
func (s *System) reattach(v *Variable, penalty float64, pos []int32) {
	for i := len(v.elems) - 1; i >= 0; i-- {
		e := &v.elems[i]
		c, p := e.c, pos[i]
		c.elems = append(c.elems, cElem{})
		copy(c.elems[p+1:], c.elems[p:])
		for k := int(p) + 1; k < len(c.elems); k++ {
			m := &c.elems[k]
			m.v.elems[m.vi].ci = int32(k)
		}
		c.elems[p] = cElem{v: v, weight: e.weight, usage: e.weight / penalty, vi: int32(i)}
		e.ci = p
	}
}

func (s *System) redo(o *op) {
	switch o.kind {
	case opExpand:
		s.Expand(o.c, o.v, o.x)
	case opPenalty:
		s.SetPenalty(o.v, o.x)
	case opBound:
		s.SetBound(o.v, o.x)
	case opCnstBound:
		s.SetConstraintBound(o.c, o.x)
	case opRemove:
		s.Remove(o.v)
	}
}

// solveSimGrid solves SimGrid's modified set, then keeps track of the
// components it left stale.
func (s *System) solveSimGrid() {
	s.morder, s.mFollowed = s.list, true
	s.solve()
	closed := true
	for _, v := range s.suspects {
		for j := range v.elems {
			e := &v.elems[j]
			c := e.c
			if c.inList || len(c.elems) == 0 {
				continue
			}
			if len(c.elems) == 1 && c.elems[0].v == v && e.weight*v.value < c.Bound*(1-2*s.Precision) {
				continue
			}
			closed = false
			s.markStale(c)
		}
	}
	if !s.Incremental || !closed || s.staleCount == 0 {
		return
	}
	// Stale components solved whole are exact again.
	kept := s.staleList[:0]
	for _, c := range s.staleList {
		if c.inList || len(c.elems) == 0 {
			c.stale = false
			continue
		}
		kept = append(kept, c)
	}
	s.staleList = kept
	s.staleCount = len(kept)
}

// QuirkStruck reports whether, in the SimGrid-compatible incremental
// mode, SimGrid's selective update has left stale shares since the start.
func (s *System) QuirkStruck() bool { return s.struck }

// OrderDependent reports whether, in the SimGrid-compatible incremental
// mode, a round of Simultaneous changes could not be certified for every
// order of them: if SimGrid took them in another order than the caller,
// its selective update may have left stale shares there.
func (s *System) OrderDependent() bool { return s.orderDep }

// markStale marks the connected component of c as holding stale shares.
func (s *System) markStale(c *Constraint) {
	if !s.Incremental || c.stale {
		return
	}
	s.struck = true
	c.stale = true
	s.staleList = append(s.staleList, c)
	for i := len(s.staleList) - 1; i < len(s.staleList); i++ {
		for _, ce := range s.staleList[i].elems {
			for j := range ce.v.elems {
				if e := &ce.v.elems[j]; e.ci >= 0 && !e.c.stale {
					e.c.stale = true
					s.staleList = append(s.staleList, e.c)
				}
			}
		}
	}
	s.staleCount = len(s.staleList)
}

// endRound forgets the round's log and candidates.
func (s *System) endRound() {
	s.log = s.log[:0]
	s.undoPos = s.undoPos[:0]
	s.cands = s.cands[:0]
	s.suspects = s.suspects[:0]
	s.alones = s.alones[:0]
	s.touched = false
	s.ambiguous = false
	s.simFirst = s.simFirst[:0]
	s.shadow, s.shadowLost, s.shadowWork = s.shadow[:0], false, 0
	s.sSuspects = s.sSuspects[:0]
	s.morder, s.mFollowed = nil, false
}

// Settled reports whether the system carries nothing from its past rounds
// but its variables and constraints: no change waiting for a solve, no
// stale shares of SimGrid's selective update (once they are solved whole
// again, a quirk that struck before leaves nothing behind).
func (s *System) Settled() bool {
	return s.staleCount == 0 && !s.replaying && !s.Modified()
}
