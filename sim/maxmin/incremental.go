package maxmin

import "math"

// Incremental solving. A change (a variable enabled, removed, re-weighted)
// moves the max-min shares of its connected component only where the
// change propagates, and in the fluid models that is rarely far: most
// variables of a large component keep their rate. The incremental solve
// water-fills a region of constraints, starting with the changed ones,
// holding the variables outside it at their rates, then checks the
// region's boundary: where a variable that changed shares a saturated
// constraint with a held one, or a held one takes more of a constraint
// than a variable the region fixed there, the held rates may be wrong,
// and the region grows over that constraint and is solved again. When no
// boundary constraint needs it, every variable has a bottleneck (a
// saturated constraint on which no variable has a higher level), which
// characterises the max-min share: the result is the one a solve of the
// whole component gives, to rounding.

const (
	// maxGrowth is the number of times a region may grow before the
	// solve falls back to the whole connected component.
	maxGrowth = 6
	// sameRel is the relative difference under which a recomputed share
	// is the old one: the variable keeps its old value, bit for bit, and
	// is not reported (its completion date need not move).
	sameRel = 1e-12
)

// differs reports whether share a is a new value for a variable whose
// share was b.
func differs(a, b float64) bool {
	return math.Abs(a-b) > sameRel*math.Max(math.Abs(a), math.Abs(b))
}

// solveIncremental solves the region around the dirty constraints and
// reports the variables whose share changed. It reports false, having
// changed nothing (the dirty constraints are dirty again), when the region
// meets a fat pipe shared by several variables: SimGrid's fat pipes fix
// all their unfixed variables at the level of the heaviest, so their
// shares jump with the order in which near-equal levels are reached, and
// only SimGrid's own order of operations gives SimGrid's result.
func (s *System) solveIncremental() bool {
	s.round++
	r := s.round
	s.region = s.region[:0]
	s.seeds = append(s.seeds[:0], s.dirty...)
	for _, c := range s.dirty {
		c.dirty = false
		if c.region != r {
			c.region = r
			s.region = append(s.region, c)
		}
	}
	s.dirty = s.dirty[:0]
	for growth := 0; ; growth++ {
		if growth == maxGrowth {
			s.closeRegion()
		}
		st := s.nextStamp()
		if !s.gather(st) {
			for _, v := range s.regVars {
				v.value = v.old
			}
			s.regVars = s.regVars[:0]
			for _, c := range s.seeds {
				s.markDirty(c)
			}
			return false
		}
		s.fillRegion(st)
		for _, l := range s.light {
			l.c.lightIdx = -1
		}
		s.light = s.light[:0]
		for _, v := range s.regVars {
			v.changed = differs(v.value, v.old)
		}
		if growth == maxGrowth || !s.grow(st) {
			break
		}
	}
	for _, v := range s.regVars {
		if v.changed {
			s.modified = append(s.modified, v)
		} else {
			v.value = v.old
			s.Inexact = true // SimGrid re-dates it (see Inexact)
		}
	}
	if s.SimGridSelective {
		s.Inexact = true
	}
	return true
}

func (s *System) nextStamp() uint32 {
	s.stamp++
	if s.stamp == 0 {
		s.stamp = 1
	}
	return s.stamp
}

// gather lists the region's constraints, then the boundary (the other
// constraints of the region's variables), in s.list, and the region's
// variables (those with an enabled element in it) in s.regVars, saving
// their rates before this solve, and does the region constraints' part of
// the fill. It reports false if a fat pipe shared by several variables is
// among the constraints (the caller then restores the saved rates).
func (s *System) gather(st uint32) bool {
	s.list = s.list[:0]
	s.regVars = s.regVars[:0]
	for _, c := range s.region {
		c.stamp = st
		s.list = append(s.list, c)
	}
	for _, c := range s.region {
		// A region constraint's variables are all the region's, so its
		// part of the fill (fillRegion) is done here, in the same pass:
		// the variables' shares reset, the usage summed from back to
		// front; not on a constraint without capacity, which
		// fillRegion skips.
		fill := doublePositive(c.Bound, c.Bound*s.Precision)
		usage := 0.0
		// Newest first, as SimGrid lists a constraint's variables: the
		// order in which changed shares are reported sets the order of
		// simultaneous completions.
		for k := len(c.elems) - 1; k >= 0; k-- {
			e := &c.elems[k]
			v := e.v
			if v.stamp != st {
				s.addRegVar(v, st)
			}
			if fill {
				usage = fillElem(c, e, usage)
			}
		}
		c.usage = usage
	}
	for _, c := range s.list {
		if c.FatPipe && len(c.elems) > 1 {
			return false
		}
	}
	return true
}

// addRegVar makes v, met on a region constraint, one of the region's
// variables: it saves v's rate before this solve and lists v's other
// constraints.
func (s *System) addRegVar(v *Variable, st uint32) {
	v.stamp = st
	if v.oldRound != s.round {
		v.oldRound = s.round
		v.old = v.value
	}
	s.regVars = append(s.regVars, v)
	for j := range v.elems {
		if e := &v.elems[j]; e.ci >= 0 && e.c.stamp != st {
			e.c.stamp = st
			s.list = append(s.list, e.c)
		}
	}
}

// fillRegion water-fills the region's variables over s.list, the held
// variables' consumption taken off the boundary constraints first.
func (s *System) fillRegion(st uint32) {
	prec := s.Precision
	minUsage := -1.0
	s.nextFill()
	s.satCnst = s.satCnst[:0]
	nRegion := len(s.region)
	for i, c := range s.list {
		c.lightIdx = -1
		c.remaining = c.Bound
		if i < nRegion {
			// Summed by gather: every variable on it is the region's.
			if doublePositive(c.remaining, c.Bound*prec) && c.usage > 0 {
				s.addLight(c, &minUsage)
			}
			continue
		}
		usage := 0.0
		for k := len(c.elems) - 1; k >= 0; k-- {
			e := &c.elems[k]
			v := e.v
			if v.stamp != st {
				v.fixed = s.fill // held
				if !c.FatPipe {
					c.remaining -= e.weight * v.value
				}
				continue
			}
			usage = fillElem(c, e, usage)
		}
		if c.remaining < 0 {
			c.remaining = 0
		}
		c.usage = usage
		if usage > 0 {
			s.addLight(c, &minUsage)
		}
	}
	s.waterfill(minUsage)
}

// fillElem starts the fill of a region variable's element e of c: the
// variable's share reset and its usage added to usage (the
// largest kept, on a fat pipe), which it returns.
func fillElem(c *Constraint, e *cElem, usage float64) float64 {
	e.v.value = 0
	if e.weight > 0 {
		if !c.FatPipe {
			usage += e.usage
		} else if usage < e.usage {
			usage = e.usage
		}
	}
	return usage
}

// addLight lists c, with its remaining capacity and usage set, among the
// constraints the water-filling may saturate.
func (s *System) addLight(c *Constraint, minUsage *float64) {
	c.lightIdx = int32(len(s.light))
	r := c.remaining / c.usage
	s.light = append(s.light, light{c: c, remainingOverUsage: r})
	s.satUpdate(r, len(s.light)-1, minUsage)
}

// grow adds to the region the boundary constraints whose held variables
// may no longer have their max-min share, and reports whether it added
// any. It reads which of the region's variables changed share (changed,
// set after each fill).
func (s *System) grow(st uint32) bool {
	grown := false
	thr := 1 - 2*s.Precision
	for _, c := range s.list[len(s.region):] {
		if c.FatPipe {
			continue // alone on it (gather): nothing held shares it
		}
		changed := false
		oldLoad, newLoad := 0.0, 0.0
		minFixed, maxHeld := math.Inf(1), 0.0
		for k := range c.elems {
			e := &c.elems[k]
			v := e.v
			if v.stamp == st {
				oldLoad += e.weight * v.old
				newLoad += e.weight * v.value
				changed = changed || v.changed
				if level := v.value * v.penalty; v.at == c && level < minFixed {
					minFixed = level
				}
				continue
			}
			l := e.weight * v.value
			oldLoad += l
			newLoad += l
			if level := v.value * v.penalty; e.weight > 0 && level > maxHeld {
				maxHeld = level
			}
		}
		sat := oldLoad >= c.Bound*thr || newLoad >= c.Bound*thr
		if changed && sat || maxHeld > minFixed*(1+1e-9) {
			c.region = s.round
			s.region = append(s.region, c)
			grown = true
		}
	}
	return grown
}

// closeRegion extends the region to the connected components of its
// constraints.
func (s *System) closeRegion() {
	r := s.round
	for i := 0; i < len(s.region); i++ {
		els := s.region[i].elems
		for k := range els {
			v := els[k].v
			for j := range v.elems {
				if e := &v.elems[j]; e.ci >= 0 && e.c.region != r {
					e.c.region = r
					s.region = append(s.region, e.c)
				}
			}
		}
	}
}
