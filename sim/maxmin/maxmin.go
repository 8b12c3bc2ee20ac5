// Package maxmin is a weighted max-min fair-sharing solver with selective
// (incremental) update, the linear system SimGrid's fluid models (CM02,
// LV08, SMPI, Cas01) solve to share links and CPUs between activities.
//
// A Constraint is a resource of some capacity (a link's bandwidth, a host's
// flop rate). A Variable is an activity's rate; it uses constraints with
// consumption weights and has a sharing penalty (the inverse of its weight
// in the sharing) and an optional upper bound. Solve gives every variable of
// the constraints touched since the last solve the max-min fair share that
// SimGrid 3.32's lmm::MaxMin computes, with the same precision rules
// (maxmin/precision), so that simulated times agree with SimGrid's.
//
// Only the connected components of the constraint graph that changed are
// solved again (SimGrid's way, or only the region a change reaches with
// Incremental); the variables whose share may have changed are reported so
// that the caller reschedules only those activities.
package maxmin

import "math"

// System is a set of constraints and variables.
type System struct {
	// Precision is SimGrid's maxmin/precision (default 1e-5): a
	// constraint whose remaining capacity falls below Precision times its
	// bound is saturated.
	Precision float64
	// SimGridSelective makes the set of constraints solved again exactly
	// the one SimGrid 3.32's selective update computes, quirks included:
	// it is built as changes happen, and a variable enabled or removed
	// while its first constraint is already marked does not pull in its
	// other constraints, so parts of a component can keep stale shares
	// (and even exceed a link's capacity) until they change themselves.
	// Without it, the whole connected component of every change is
	// solved: the exact max-min share.
	SimGridSelective bool
	// Incremental solves, without SimGridSelective, only the part of a
	// changed component that the change reaches (see incremental.go),
	// and Solve reports only the variables whose share changed.
	Incremental bool

	dirty    []*Constraint // full mode: seeds of the components to solve again
	list     []*Constraint // the constraints to solve
	light    []light
	satCnst  []int
	satVars  []*Variable
	modified []*Variable
	stamp    uint32
	visit    uint32 // SimGrid mode: the current round's visited mark
	round    uint32 // incremental mode: the current solve
	fill     uint32 // the current water-filling (see Variable.fixed)
	region   []*Constraint
	regVars  []*Variable

	// SimGrid-compatible incremental mode (compat.go).
	log        []op
	seeds      []*Constraint // the round's changed constraints
	saved      []*Constraint // the dirty list before a fallback
	fallbacks  int           // rounds undone and replayed (for tests)
	marked     []*Constraint // SimGrid's marked set, kept aside
	undoPos    []int32
	cands      []*Variable
	suspects   []*Variable
	alones     []alone
	bfs        []*Constraint
	staleList  []*Constraint
	staleCount int
	struck     bool
	touched    bool
	replaying  bool
	ambiguous  bool        // a change of the round came under Simultaneous
	simFirst   []*Variable // under Simultaneous, marked whole in the caller's order
	orderDep   bool

	// Inexact is set once an incremental solve has left a share or a
	// report not SimGrid's to the bit: a region solved for a selective
	// system (SimGrid's sums over its whole marked set round otherwise),
	// or a variable re-solved and not reported (SimGrid reports it, and
	// its caller re-dates it with its own rounding).
	Inexact bool

	// Stamps makes the SimGrid-compatible incremental mode number the
	// variables in SimGrid's report order (see stamps.go).
	Stamps     bool
	shadow     []*Constraint // SimGrid's marked set this round, in order
	shadowLost bool          // the round's marking was not followed
	shadowWork int
	recWork    int           // the elements SimGrid's marking went through this round
	exactMode  bool          // this round is marked and solved SimGrid's way (stamps.go)
	sSuspects  []*Variable   // the shadow marking's suspects (see shadowTouchVar)
	morder     []*Constraint // the round's marked set, once solved
	mFollowed  bool
	// mFollowedLast tells whether the last solve's stamps were given.
	mFollowedLast bool
	stampNext     uint64
	lostMark      uint64

	// Simultaneous is set by the caller while it enables variables of
	// events due at one date whose order SimGrid may take otherwise:
	// SimGrid's marking depends on the order of a round's enables, so
	// such a round is certified for any order (see OrderDependent).
	Simultaneous bool

	// Constraints and variables are carved from slabs: the solver's
	// loops chase pointers between them, and neighbours in memory share
	// cache lines and pages.
	cnstSlab []Constraint
	varSlab  []Variable

	// Concurrency limits (concurrency.go).
	limited bool
	limit   int32
	waiting []*Variable
}

// slabSize is the number of constraints or variables allocated at once.
const slabSize = 256

// New returns an empty system with the given precision.
func New(precision float64) *System {
	return &System{Precision: precision, visit: 1, stampNext: 1, lostMark: 1}
}

// Constraint is a shared resource. Its first cache line holds what the
// marking of a component and the solve read (see Variable).
type Constraint struct {
	// Bound is the capacity.
	Bound float64
	// FatPipe makes the constraint bound each variable on its own
	// (max instead of sum), as SimGrid's FATPIPE links.
	FatPipe bool
	inList  bool // SimGrid mode: in the modified constraint set
	dirty   bool
	stale   bool  // its component's shares are SimGrid's stale ones
	ndis    int32 // elements of disabled variables (SimGrid's disabled_element_set_)

	// elems are the enabled variables' elements, SimGrid's
	// enabled_element_set_ from back to front (it pushes at the front;
	// iterating from the end gives SimGrid's order, which sets the order
	// of floating-point sums and of the variables reported modified).
	elems     []cElem
	sMark     uint32 // == System.visit while in the shadow marked set (stamps.go)
	stamp     uint32 // == System.stamp while in the list being solved
	remaining float64
	usage     float64

	// lightIdx is c's index in System.light, -1 when not there;
	// ratioStale marks its ratio to compute again before the next scan:
	// fix changes a constraint once per saturated variable, and only the
	// last ratio, from the final remaining and usage, is ever read. The
	// flag is here rather than in the light entry, where fix would
	// index System.light for every element it updates; one left set by
	// an earlier solve only has the same ratio computed again.
	lightIdx   int32
	ratioStale bool
	known      uint32 // == System.visit when known to be in SimGrid's modified set
	mark       uint32 // == System.stamp when reached by a certificate search
	detached   uint32 // == System.visit when an element left it in the round
	region     uint32 // incremental mode: == System.round while in the region
	// Concurrency limit (-1: none), the slots taken, and the disabled
	// variables in the order they were disabled, kept only with a limit.
	limit, conc int32
	dis         []*Variable

	_ [cnstPad]byte
}

// cnstPad pads a Constraint to 128 bytes, so that the constraints of a
// slab (32 KiB, aligned to its size class) start on cache lines.
const cnstPad = 128 - 120

// NewConstraint returns a constraint of capacity bound.
func (s *System) NewConstraint(bound float64, fatPipe bool) *Constraint {
	if len(s.cnstSlab) == 0 {
		s.cnstSlab = make([]Constraint, slabSize)
	}
	c := &s.cnstSlab[0]
	s.cnstSlab = s.cnstSlab[1:]
	*c = Constraint{Bound: bound, FatPipe: fatPipe, lightIdx: -1, limit: -1}
	if s.limited {
		c.limit = s.limit
	}
	return c
}

// cElem is an enabled variable's use of a constraint, stored in the
// constraint (the solver's inner loops read only these).
type cElem struct {
	v      *Variable
	weight float64
	// usage is weight / v's penalty, computed (with the same operands, so
	// the same bits) when the element or the penalty changes rather than
	// twice per solve.
	usage float64
	vi    int32 // index of the matching vElem in v.elems
}

// vElem is a variable's use of a constraint, stored in the variable.
type vElem struct {
	c      *Constraint
	weight float64
	ci     int32 // index of the matching cElem in c.elems, -1 when disabled
}

// Variable is an activity's rate.
//
// Its fields are laid out by the loops that read them, each group within
// a cache line of a slab-aligned variable (see varPad): the marking of a
// component (rec, shadowRec) reads the elements and the visit marks, the
// solve and the caller's re-dating the rates and the handle. At thousands
// of ranks few variables are in cache when a round reaches them, and each
// line a loop touches is a miss.
type Variable struct {
	elems   []vElem
	visited uint32
	// sVisited is System.visit when the shadow marking went through it
	// this round (stamps.go), next to the fields its loop reads.
	sVisited uint32
	// inline holds the elements of a variable using few constraints (a
	// transfer's route and its reverse in a cluster), next to elems and
	// the visit marks.
	inline [4]vElem

	penalty float64
	bound   float64
	value   float64
	// ID is the caller's handle on the activity.
	ID    int32
	stamp uint32
	cand  uint32 // == System.visit when a certificate candidate
	// attached is System.visit when the variable was last enabled.
	attached uint32
	// fresh is System.visit when the variable was enabled in the round
	// while its first constraint was neither known to be marked nor
	// left by a variable (see reachedThrough).
	fresh uint32
	// fixed is System.fill once the current water-filling has fixed
	// the variable's share (or holds it, see fillRegion): its elements
	// are then inactive, in SimGrid's words. One mark per variable
	// spares fix a write to each of its elements, in its constraints.
	fixed uint32
	inSat bool
	inMod bool
	// changed is set, in the incremental mode, when its share differs
	// from old (see solveIncremental).
	changed bool
	// Incremental mode: the value before this solve (old, valid when
	// oldRound is the solve's round), and the constraint that fixed the
	// variable in the last region solved (nil at its bound).
	old      float64
	oldRound uint32
	at       *Constraint
	// With Stamps: the number of its last report in SimGrid's order.
	report uint64
	// staged is the penalty of a variable waiting for a slot on a
	// limited constraint (SimGrid's staged_sharing_penalty_), 0 if none.
	staged float64

	_ [varPad]byte
}

// varPad pads a Variable to 256 bytes, so that the variables of a slab
// (a 64 KiB allocation, page-aligned) start on cache lines.
const varPad = 256 - 224

// NumConstraints returns the number of constraints v uses.
func (v *Variable) NumConstraints() int { return len(v.elems) }

// Value returns the rate Solve gave the variable.
func (v *Variable) Value() float64 { return v.value }

// Bound returns the variable's rate bound (no bound if not positive).
func (v *Variable) Bound() float64 { return v.bound }

// Penalty returns the sharing penalty (0 for a disabled variable).
func (v *Variable) Penalty() float64 { return v.penalty }

// NewVariable returns a variable with the given sharing penalty (0 makes
// it disabled: it takes no share until its penalty is set) and bound (a
// negative bound means none), using about n constraints.
func (s *System) NewVariable(id int32, penalty, bound float64, n int) *Variable {
	if len(s.varSlab) == 0 {
		s.varSlab = make([]Variable, slabSize)
	}
	v := &s.varSlab[0]
	s.varSlab = s.varSlab[1:]
	v.ID, v.penalty, v.bound = id, penalty, bound // the slab is zeroed
	if n <= len(v.inline) {
		v.elems = v.inline[:0]
	} else {
		v.elems = make([]vElem, 0, n)
	}
	return v
}

// Reset reuses v as a fresh variable (to avoid allocations); v must have
// been removed from the system.
func (v *Variable) Reset(id int32, penalty, bound float64) {
	elems := v.elems[:0]
	*v = Variable{} // then field by field, as System.record's ops
	v.ID, v.penalty, v.bound, v.elems = id, penalty, bound, elems
}

// attach adds v's element i to its constraint's enabled elements.
func attach(v *Variable, i int) {
	e := &v.elems[i]
	c := e.c
	els := c.elems
	n := len(els)
	// Built in place, as System.record's ops; within the capacity, the
	// slice is extended without zeroing the element first.
	if n < cap(els) {
		els = els[:n+1]
	} else {
		els = append(els, cElem{})
	}
	ce := &els[n]
	ce.v, ce.weight, ce.usage, ce.vi = v, e.weight, e.weight/v.penalty, int32(i)
	c.elems = els
	e.ci = int32(n)
}

// Expand makes v use c with the given consumption weight. Using the same
// constraint twice adds the weights (keeps the larger on a fat pipe).
func (s *System) Expand(c *Constraint, v *Variable, weight float64) {
	for i := range v.elems {
		e := &v.elems[i]
		if e.c == c {
			s.record(opExpand, v, c, weight, e.weight, 0, int32(i), 0)
			if s.limited && v.penalty > 0 {
				c.conc -= elemConcurrency(e.weight)
			}
			if c.FatPipe {
				e.weight = math.Max(e.weight, weight)
			} else {
				e.weight += weight
			}
			if e.ci >= 0 {
				c.elems[e.ci].weight = e.weight
				c.elems[e.ci].usage = e.weight / v.penalty
			}
			s.takeSlot(c, v, e.weight)
			if e.weight > 0 || v.penalty > 0 {
				s.touchCnst(c)
			}
			return
		}
	}
	s.record(opExpand, v, c, weight, 0, 0, -1, 0)
	v.elems = append(v.elems, vElem{c: c, weight: weight, ci: -1})
	if v.penalty <= 0 {
		c.ndis++
		if s.limited {
			c.dis = append(c.dis, v)
		}
	} else {
		attach(v, len(v.elems)-1)
		s.takeSlot(c, v, weight)
	}
	switch {
	case v.penalty > 0:
		s.touchCnst(c)
	case weight > 0:
		s.touchDisabled(c)
	}
}

// takeSlot counts, on a system with limits, the slot an enabled v's
// element of weight w takes on c, and stages v if c had none left.
func (s *System) takeSlot(c *Constraint, v *Variable, w float64) {
	if !s.limited || v.penalty <= 0 {
		return
	}
	c.conc += elemConcurrency(w)
	if c.slack() < 0 {
		s.stage(v)
	}
}

// touchDisabled records that a disabled variable now uses c: SimGrid
// marks c, but no share changes.
func (s *System) touchDisabled(c *Constraint) {
	switch {
	case !s.SimGridSelective:
		if !s.Incremental {
			s.markDirty(c)
		}
	case !s.slow():
		c.known = s.visit
		s.touched = true
		s.shadowTouchCnst(c)
	case !c.inList: // touchCnst's last case (the mode is known here)
		s.mark(c)
		s.rec(c)
	}
}

// SetPenalty changes v's sharing penalty; 0 disables it, a positive value
// on a disabled variable enables it.
func (s *System) SetPenalty(v *Variable, p float64) {
	if p == v.penalty {
		return
	}
	s.record(opPenalty, v, nil, p, v.penalty, v.value, 0, int32(len(s.undoPos)))
	switch {
	case p > 0 && v.penalty <= 0:
		if !s.limited || s.unstage(v, p) {
			s.enable(v, p)
		}
	case p <= 0 && v.penalty > 0:
		s.disable(v)
	default:
		v.penalty = p
		for i := range v.elems {
			if e := &v.elems[i]; e.ci >= 0 {
				e.c.elems[e.ci].usage = e.weight / p
			}
		}
		s.touchVar(v, v.attached != s.visit)
	}
}

// enable gives the disabled v penalty p, its elements back on its
// constraints' enabled ones (SimGrid's enable_var).
func (s *System) enable(v *Variable, p float64) {
	whole := s.logging() && len(v.elems) > 0 && s.untouched(v.elems[0].c)
	if s.logging() && len(v.elems) > 0 {
		if c0 := v.elems[0].c; !s.known(c0) && c0.detached != s.visit {
			v.fresh = s.visit
		}
	}
	v.penalty = p
	for i := range v.elems {
		attach(v, i)
		v.elems[i].c.ndis--
	}
	v.attached = s.visit
	s.touchVar(v, whole)
}

// SetBound changes v's upper bound. SimGrid marks every constraint of v
// modified (update_variable_bound), a disabled variable's too, although
// its bound changes no share.
func (s *System) SetBound(v *Variable, b float64) {
	s.record(opBound, v, nil, b, v.bound, 0, 0, 0)
	v.bound = b
	for i := range v.elems {
		s.touchCnst(v.elems[i].c)
	}
}

// Usage is the rate c carries now (SimGrid's get_usage): the sum over its
// enabled variables of weight x value, or their maximum for a fat pipe.
func (c *Constraint) Usage() float64 {
	u := 0.0
	for _, e := range c.elems {
		if c.FatPipe {
			u = max(u, e.weight*e.v.value)
		} else {
			u += e.weight * e.v.value
		}
	}
	return u
}

// Used reports whether c has a variable, enabled or not (SimGrid's
// constraint_used: a constraint stays active while any element is on it).
func (c *Constraint) Used() bool { return len(c.elems) > 0 || c.ndis > 0 }

// Enabled appends c's enabled variables to dst, newest first, as SimGrid
// lists them (its enabled element set), and returns the extended slice.
func (c *Constraint) Enabled(dst []*Variable) []*Variable {
	for k := len(c.elems) - 1; k >= 0; k-- {
		dst = append(dst, c.elems[k].v)
	}
	return dst
}

// Disabled appends to dst the variables disabled on c under a
// concurrency limit, staged or not, in the order a freed slot goes to
// them (see onDisabled), and returns the extended slice. Without a limit
// it appends nothing.
func (c *Constraint) Disabled(dst []*Variable) []*Variable { return append(dst, c.dis...) }

// SetConstraintBound changes c's capacity (SimGrid's
// update_constraint_bound: a CPU's speed changes).
func (s *System) SetConstraintBound(c *Constraint, b float64) {
	s.record(opCnstBound, nil, c, b, c.Bound, 0, 0, 0)
	c.Bound = b
	s.touchCnst(c)
}

// Remove takes v out of the system.
func (s *System) Remove(v *Variable) {
	s.record(opRemove, v, nil, 0, v.penalty, v.value, 0, int32(len(s.undoPos)))
	if s.limited {
		s.removeLimited(v)
		return
	}
	if v.penalty > 0 {
		s.touchVar(v, v.attached != s.visit)
		s.detach(v)
	} else {
		for i := range v.elems {
			v.elems[i].c.ndis--
		}
	}
	v.penalty = 0
	v.value = 0
	for i := range v.elems {
		if c := v.elems[i].c; len(c.elems) == 0 && c.ndis == 0 {
			s.emptied(c)
		}
	}
}

// Hold adds to c the element of a variable that is enabled and at once
// disabled: SimGrid's sleep actions, which every sleep and every blocking
// wait on a computation or a single communication put on the host's CPU
// constraint. It shares nothing, but it marks c modified (which sets the
// order in which c's variables are re-solved and reported) and keeps c
// from being emptied until Release. It is not for the SimGrid-compatible
// incremental mode (SimGridSelective with Incremental), whose rounds can
// be undone.
func (s *System) Hold(c *Constraint) {
	if s.logging() {
		panic("maxmin: Hold in a logged round")
	}
	c.ndis++
	s.touchCnst(c)
}

// Release removes an element Hold added to c. As freeing a disabled
// variable in SimGrid, it marks nothing, but a constraint left without any
// element leaves the modified set (see emptied).
func (s *System) Release(c *Constraint) {
	c.ndis--
	if len(c.elems) == 0 && c.ndis == 0 {
		s.emptied(c)
	} else {
		s.onDisabled(c)
	}
}

// emptied takes c, which no variable uses any more, out of the
// constraints to solve, as SimGrid does (make_constraint_inactive): a
// variable using it later in the round marks it again, at the end of
// SimGrid's modified set, which sets the order of the re-solved shares.
func (s *System) emptied(c *Constraint) {
	if c.dirty {
		c.dirty = false
		s.dirty = dropConstraint(s.dirty, c)
	}
	if c.inList {
		c.inList = false
		s.list = dropConstraint(s.list, c)
	}
	s.shadowEmptied(c)
	c.known = 0
}

// dropConstraint removes c from list, keeping the order.
func dropConstraint(list []*Constraint, c *Constraint) []*Constraint {
	for i := len(list) - 1; i >= 0; i-- {
		if list[i] == c {
			// c is most often near the end: a loop shifts the few
			// constraints after it (copy's typed copy is a call).
			last := len(list) - 1
			for k := i; k < last; k++ {
				list[k] = list[k+1]
			}
			list[last] = nil
			return list[:last]
		}
	}
	return list
}

// detach takes all of v's elements off their constraints' enabled
// elements (detachElem's loop for each, with the round's state read once).
// The vacated last element of each constraint is not cleared: nothing
// reads past a constraint's elements, the next append overwrites it, and
// the variable it points to is in a slab that lives as long as the
// system.
func (s *System) detach(v *Variable) {
	logging, visit := s.logging(), s.visit
	for i := range v.elems {
		e := &v.elems[i]
		if e.ci < 0 {
			continue
		}
		c := e.c
		if logging {
			s.undoPos = append(s.undoPos, e.ci)
		}
		els := c.elems
		last := len(els) - 1
		for k := int(e.ci); k < last; k++ {
			m := els[k+1]
			els[k] = m
			m.v.elems[m.vi].ci = int32(k)
		}
		c.elems = els[:last]
		c.detached = visit
		e.ci = -1
	}
}

// detachElem takes v's element i off its constraint's enabled elements.
func (s *System) detachElem(v *Variable, i int) {
	e := &v.elems[i]
	if e.ci < 0 {
		return
	}
	c := e.c
	if s.logging() {
		s.undoPos = append(s.undoPos, e.ci)
	}
	// Keep the order (SimGrid erases from a linked list): it sets
	// the rounding of sums, and with fat pipes, which near-equal
	// level is reached first.
	// One loop shifts and renumbers (copy's call cost more than the
	// few elements it moves).
	last := len(c.elems) - 1
	for k := int(e.ci); k < last; k++ {
		c.elems[k] = c.elems[k+1]
		m := &c.elems[k]
		m.v.elems[m.vi].ci = int32(k)
	}
	c.elems[last] = cElem{}
	c.elems = c.elems[:last]
	c.detached = s.visit
	e.ci = -1
}

// touchVar records that v changed (SimGrid's
// update_modified_cnst_set_from_variable). whole tells that SimGrid's
// marking reaches all of v's constraints however the round went: v was
// attached before the round (so whichever marking reached its first
// constraint went through v), or v is being enabled on a first constraint
// no marking can have reached yet (so this touch marks it and goes
// through v).
func (s *System) touchVar(v *Variable, whole bool) {
	if !s.SimGridSelective {
		for i := range v.elems {
			s.markDirty(v.elems[i].c)
		}
		return
	}
	if len(v.elems) == 0 || v.penalty <= 0 {
		return
	}
	if !s.slow() {
		s.fastTouchVar(v, whole)
		return
	}
	if s.Simultaneous {
		// SimGrid's marking, made as the changes come, is that of
		// another order if SimGrid's differs.
		s.orderDep = true
	}
	// touchCnst's last case (the mode is known here).
	c0 := v.elems[0].c
	if !c0.inList {
		s.mark(c0)
		s.rec(c0)
	} else if v.visited != s.visit {
		s.suspects = append(s.suspects, v)
	}
}

// Touch records that c's bound was set again (SimGrid's
// update_constraint_bound, with the same bound): c joins the constraints
// the next Solve shares, in SimGrid's order.
func (s *System) Touch(c *Constraint) { s.touchCnst(c) }

// touchCnst records that c changed (SimGrid's update_modified_cnst_set).
func (s *System) touchCnst(c *Constraint) {
	switch {
	case !s.SimGridSelective:
		s.markDirty(c)
	case !s.slow():
		s.fastTouchCnst(c)
	case !c.inList:
		s.mark(c)
		s.rec(c)
	}
}

// rec is SimGrid's update_modified_cnst_set_rec: mark the constraints of
// the variables of c not visited yet in this round, recursively.
//
// The marking changes no element, so c's are read once; a variable the
// recursion went through while its walk was under way is left at once.
func (s *System) rec(c *Constraint) {
	els, visit := c.elems, s.visit
	s.recWork += len(els)
	// Most variables are visited already: their mark is read first, and
	// again only after a recursion, the one place it can change.
	for k := len(els) - 1; k >= 0; k-- {
		v := els[k].v
		if v.visited == visit {
			continue
		}
		for _, e := range v.elems {
			if c2 := e.c; c2 != c && !c2.inList {
				s.mark(c2)
				s.rec(c2)
				if v.visited == visit {
					break
				}
			}
		}
		v.visited = visit
	}
}

// mark adds c to the modified set.
func (s *System) mark(c *Constraint) {
	c.inList = true
	s.list = append(s.list, c)
}

func (s *System) markDirty(c *Constraint) {
	if !c.dirty {
		c.dirty = true
		s.dirty = append(s.dirty, c)
	}
}

// Modified reports whether Solve has work to do.
func (s *System) Modified() bool {
	return len(s.dirty) > 0 || len(s.log) > 0 || len(s.list) > 0 && s.slow()
}

type light struct {
	c                  *Constraint
	remainingOverUsage float64
}

// Solve shares the constraints of every component changed since the last
// call and returns the variables (with a positive-weight element in a
// solved constraint) whose rate must be re-read. The slice is reused by
// the next call.
func (s *System) Solve() []*Variable {
	s.modified = s.modified[:0]
	if !s.Modified() {
		return s.modified
	}
	switch {
	case s.SimGridSelective && !s.slow():
		s.solveCompatible()
	case s.SimGridSelective:
		s.solveSimGrid()
	case s.Incremental:
		if !s.solveIncremental() {
			s.collect()
			s.solve()
		}
	default:
		s.collect()
		s.solve()
	}
	for _, v := range s.modified {
		v.inMod = false
	}
	for _, l := range s.light {
		l.c.lightIdx = -1
	}
	s.light = s.light[:0]
	if s.SimGridSelective {
		if s.Stamps {
			s.stampRound(s.morder, s.mFollowed)
			s.chooseMode()
		}
		for _, c := range s.list {
			c.inList = false
		}
		s.list = s.list[:0]
		s.visit++
		s.endRound()
	}
	return s.modified
}

// collect gathers into s.list the connected components (through enabled
// variables) of the dirty constraints.
func (s *System) collect() {
	st := s.nextStamp()
	s.list = s.list[:0]
	for _, c := range s.dirty {
		c.dirty = false
		if c.stamp != st {
			c.stamp = st
			s.list = append(s.list, c)
		}
	}
	s.dirty = s.dirty[:0]
	for i := 0; i < len(s.list); i++ {
		els := s.list[i].elems
		for k := range els {
			v := els[k].v
			if v.stamp == st {
				continue
			}
			v.stamp = st
			for j := range v.elems {
				c2 := v.elems[j].c
				if c2.stamp != st {
					c2.stamp = st
					s.list = append(s.list, c2)
				}
			}
		}
	}
}

func doublePositive(v, prec float64) bool { return v > prec }

func (s *System) satUpdate(usage float64, idx int, minUsage *float64) {
	if *minUsage < 0 || *minUsage > usage {
		*minUsage = usage
		s.satCnst = append(s.satCnst[:0], idx)
	} else if *minUsage == usage {
		s.satCnst = append(s.satCnst, idx)
	}
}

func (s *System) satVarsUpdate() {
	fill := s.fill
	for _, i := range s.satCnst {
		c := s.light[i].c
		els := c.elems
		for k := range els {
			e := &els[k]
			if v := e.v; e.weight > 0 && !v.inSat && v.fixed != fill {
				v.inSat = true
				v.at = c
				s.satVars = append(s.satVars, v)
			}
		}
	}
}

func (s *System) removeLight(c *Constraint) {
	if c.lightIdx < 0 {
		return
	}
	i, last := c.lightIdx, int32(len(s.light)-1)
	if i != last { // the last one moves into c's place
		l := s.light[last]
		s.light[i] = l
		l.c.lightIdx = i
	}
	s.light = s.light[:last]
	c.lightIdx = -1
}

// solve is SimGrid's lmm::MaxMin::maxmin_solve over s.list.
func (s *System) solve() {
	prec := s.Precision
	minUsage := -1.0
	s.nextFill()
	s.light = s.light[:0]
	s.satCnst = s.satCnst[:0]
	for _, c := range s.list {
		c.lightIdx = -1
		c.remaining = c.Bound
		els := c.elems
		if !doublePositive(c.remaining, c.Bound*prec) {
			for k := len(els) - 1; k >= 0; k-- {
				if v := els[k].v; els[k].weight > 0 && !v.inMod {
					v.inMod = true
					s.modified = append(s.modified, v)
				}
			}
			continue
		}
		// One pass (SimGrid makes two) with the same effects in the
		// same order: the modified variables, their values reset, and
		// the usage summed from back to front.
		usage := 0.0
		for k := len(els) - 1; k >= 0; k-- {
			e := &els[k]
			v := e.v
			v.value = 0
			if e.weight > 0 {
				if !v.inMod {
					v.inMod = true
					s.modified = append(s.modified, v)
				}
				u := e.usage
				if !c.FatPipe {
					usage += u
				} else if usage < u {
					usage = u
				}
			}
		}
		c.usage = usage
		if c.usage > 0 {
			c.lightIdx = int32(len(s.light))
			s.light = append(s.light, light{c: c, remainingOverUsage: c.remaining / c.usage})
			s.satUpdate(c.remaining/c.usage, len(s.light)-1, &minUsage)
		}
	}
	s.waterfill(minUsage)
}

// waterfill is the loop of lmm::MaxMin::maxmin_solve once the light
// constraints and the first minimum usage are known: it fixes the
// variables of the most loaded constraints, level after level.
func (s *System) waterfill(minUsage float64) {
	prec := s.Precision
	minBound := -1.0
	s.satVars = s.satVars[:0]
	s.satVarsUpdate()
	for {
		vars := s.satVars
		if len(vars) == 0 {
			// Only rounding can leave saturated constraints without an
			// active variable (SimGrid asserts); stop rather than spin.
			break
		}
		for _, v := range vars {
			if v.bound > 0 && v.bound*v.penalty < minUsage {
				if minBound < 0 {
					minBound = v.bound * v.penalty
				} else {
					minBound = math.Min(minBound, v.bound*v.penalty)
				}
			}
		}
		for _, v := range vars {
			v.inSat = false
			if minBound < 0 {
				v.value = minUsage / v.penalty
			} else if math.Abs(minBound-v.bound*v.penalty) < prec {
				v.value = v.bound
				v.at = nil
			} else {
				continue
			}
			s.fix(v)
		}
		s.satVars = s.satVars[:0]
		minUsage, minBound = -1, -1
		s.satCnst = s.satCnst[:0]
		if len(s.light) == 0 {
			break
		}
		for i := range s.light {
			l := &s.light[i]
			if c := l.c; c.ratioStale {
				l.remainingOverUsage = c.remaining / c.usage
				c.ratioStale = false
			}
			s.satUpdate(l.remainingOverUsage, i, &minUsage)
		}
		s.satVarsUpdate()
	}
}

// nextFill starts a water-filling: no variable is fixed in it yet.
func (s *System) nextFill() {
	s.fill++
	if s.fill == 0 {
		s.fill = 1
	}
}

// fix updates the constraints of v once its value is set.
func (s *System) fix(v *Variable) {
	prec := s.Precision
	v.fixed = s.fill
	// Nor v's elements nor its share change here: read once (through
	// the stores to its constraints, the compiler would load them again).
	elems, pen, val := v.elems, v.penalty, v.value
	for i := range elems {
		ve := &elems[i]
		c := ve.c
		// The element's usage in c, the same bits as the cElem's (the
		// same operands), without reading c's elements.
		u := ve.weight / pen
		if !c.FatPipe {
			// SimGrid's double_update (subtract, 0 below the
			// precision) of the remaining capacity and the usage, on
			// locals: through c, each store made the next read
			// load the field again.
			capPrec := c.Bound * prec
			rem := c.remaining - ve.weight*val
			if rem < capPrec {
				rem = 0
			}
			use := c.usage - u
			if use < prec {
				use = 0
			}
			c.remaining, c.usage = rem, use
			if !doublePositive(use, prec) || !doublePositive(rem, capPrec) {
				s.removeLight(c)
			} else if c.lightIdx >= 0 {
				c.ratioStale = true
			}
			continue
		}
		c.usage = 0
		for k := range c.elems {
			e2 := &c.elems[k]
			if e2.v.value > 0 {
				continue
			}
			if e2.weight > 0 {
				c.usage = math.Max(c.usage, e2.usage)
			}
		}
		if !doublePositive(c.usage, prec) || !doublePositive(c.remaining, c.Bound*prec) {
			s.removeLight(c)
		} else if c.lightIdx >= 0 {
			c.ratioStale = true
		}
	}
}
