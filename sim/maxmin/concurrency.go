package maxmin

import "math"

// Concurrency limits: SimGrid's maxmin/concurrency-limit. A limited
// constraint lets at most that many variables be enabled on it at once
// (counting only elements of weight at least 1, so that a transfer's
// cross-traffic on the reverse path takes no slot). A variable that
// would exceed a limit is staged instead: disabled, its penalty kept
// aside, and enabled when a variable leaving one of its constraints
// frees a slot, in the order in which the variables were disabled there
// (lmm::System::on_disabled_var). Limits are not for the
// SimGrid-compatible incremental mode, whose rounds can be undone.

// SetConcurrencyLimit limits the constraints created after the call to n
// enabled variables each; a negative n means no limit (the default).
func (s *System) SetConcurrencyLimit(n int) {
	if n >= 0 && s.SimGridSelective && s.Incremental {
		panic("maxmin: concurrency limit in the SimGrid-compatible incremental mode")
	}
	s.limited = n >= 0
	s.limit = int32(min(n, math.MaxInt32))
}

// elemConcurrency is the slot an element of weight w takes on a limited
// constraint (SimGrid's Element::get_concurrency).
func elemConcurrency(w float64) int32 {
	if w >= 1 {
		return 1
	}
	return 0
}

// slack is the number of slots left on c.
func (c *Constraint) slack() int32 {
	if c.limit < 0 {
		return math.MaxInt32
	}
	return c.limit - c.conc
}

// minSlack is the least slack of v's constraints.
func (v *Variable) minSlack() int32 {
	m := int32(math.MaxInt32)
	for i := range v.elems {
		m = min(m, v.elems[i].c.slack())
	}
	return m
}

// Staged reports whether v waits for a slot on a limited constraint.
func (v *Variable) Staged() bool { return v.staged > 0 }

// stage disables v, which just exceeded a limit, and keeps its penalty
// until a slot frees (SimGrid's expand).
func (s *System) stage(v *Variable) {
	p := v.penalty
	s.disable(v)
	for i := range v.elems {
		s.onDisabled(v.elems[i].c)
	}
	v.staged = p
}

// disable takes v's elements off its constraints' enabled elements, to
// the back of their disabled ones (SimGrid's disable_var).
func (s *System) disable(v *Variable) {
	s.touchVar(v, v.attached != s.visit)
	s.detach(v)
	for i := range v.elems {
		e := &v.elems[i]
		e.c.ndis++
		if s.limited {
			e.c.conc -= elemConcurrency(e.weight)
			e.c.dis = append(e.c.dis, v)
		}
	}
	v.penalty = 0
	v.staged = 0
	v.value = 0
}

// unstage is the part of enabling v that the limits add: v's elements
// leave the disabled ones and take their slots. It reports false, with
// v staged at penalty p, if a constraint of v has no slot left.
func (s *System) unstage(v *Variable, p float64) bool {
	v.staged = p
	if v.minSlack() <= 0 {
		return false
	}
	v.staged = 0
	for i := range v.elems {
		e := &v.elems[i]
		e.c.dis = dropVariable(e.c.dis, v)
		e.c.conc += elemConcurrency(e.weight)
	}
	return true
}

// onDisabled enables, in the order they were disabled on c, the staged
// variables of c that now have a slot on each of their constraints, until
// c is full (SimGrid's on_disabled_var).
func (s *System) onDisabled(c *Constraint) {
	if c.limit < 0 || len(c.dis) == 0 {
		return
	}
	waiting := append(s.waiting[:0], c.dis...)
	s.waiting = waiting[:0]
	for _, v := range waiting {
		if p := v.staged; p > 0 && v.minSlack() > 0 {
			s.unstage(v, p)
			s.enable(v, p)
		}
		if c.conc >= c.limit {
			break
		}
	}
}

// removeLimited is Remove on a system with concurrency limits: SimGrid
// frees the variable's slots one constraint after the other, letting the
// staged variables of each take them before it goes on to the next.
func (s *System) removeLimited(v *Variable) {
	on := v.penalty > 0
	if on {
		s.touchVar(v, v.attached != s.visit)
	}
	for i := range v.elems {
		e := &v.elems[i]
		c := e.c
		if on {
			c.conc -= elemConcurrency(e.weight)
			s.detachElem(v, i)
		} else {
			c.ndis--
			c.dis = dropVariable(c.dis, v)
		}
		if c.Used() {
			s.onDisabled(c)
		} else {
			s.emptied(c)
		}
	}
	v.penalty, v.staged, v.value = 0, 0, 0
}

// dropVariable removes v from list, keeping the order.
func dropVariable(list []*Variable, v *Variable) []*Variable {
	for i, w := range list {
		if w == v {
			copy(list[i:], list[i+1:])
			list[len(list)-1] = nil
			return list[:len(list)-1]
		}
	}
	return list
}
