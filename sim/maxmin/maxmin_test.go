package maxmin

import (
	"math"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// TestShares checks the weighted max-min shares of small systems against
// values computed by hand.
func TestShares(t *testing.T) {
	s := New(1e-5)
	l1 := s.NewConstraint(100, false)
	l2 := s.NewConstraint(60, false)
	// a uses l1 and l2, b only l1, c only l2: l2 saturates first (a and
	// c get 30), then b takes what a leaves of l1 (70).
	a := s.NewVariable(0, 1, -1, 2)
	b := s.NewVariable(1, 1, -1, 1)
	c := s.NewVariable(2, 1, -1, 1)
	s.Expand(l1, a, 1)
	s.Expand(l2, a, 1)
	s.Expand(l1, b, 1)
	s.Expand(l2, c, 1)
	mod := s.Solve()
	if len(mod) != 3 {
		t.Errorf("%d variables reported, want 3", len(mod))
	}
	for _, w := range []struct {
		v    *Variable
		want float64
	}{{a, 30}, {b, 70}, {c, 30}} {
		if !near(w.v.Value(), w.want) {
			t.Errorf("variable %d: %g, want %g", w.v.ID, w.v.Value(), w.want)
		}
	}
	// Penalty 2 halves a's weight on l2: a gets 20, c 40.
	s.SetPenalty(a, 2)
	s.Solve()
	if !near(a.Value(), 20) || !near(c.Value(), 40) || !near(b.Value(), 80) {
		t.Errorf("weighted: a %g c %g b %g, want 20 40 80", a.Value(), c.Value(), b.Value())
	}
	// A bound below the fair share caps a and frees the rest.
	s.SetBound(a, 10)
	s.Solve()
	if !near(a.Value(), 10) || !near(c.Value(), 50) || !near(b.Value(), 90) {
		t.Errorf("bounded: a %g c %g b %g, want 10 50 90", a.Value(), c.Value(), b.Value())
	}
	// Disabling a gives its share back; removing c leaves l2 unused.
	s.SetPenalty(a, 0)
	s.Remove(c)
	s.Solve()
	if a.Value() != 0 || !near(b.Value(), 100) {
		t.Errorf("after disable/remove: a %g b %g, want 0 100", a.Value(), b.Value())
	}
}

// TestFatPipe: a fat pipe bounds each variable, not their sum.
func TestFatPipe(t *testing.T) {
	s := New(1e-5)
	fp := s.NewConstraint(50, true)
	var vs []*Variable
	for i := 0; i < 3; i++ {
		v := s.NewVariable(int32(i), 1, -1, 1)
		s.Expand(fp, v, 1)
		vs = append(vs, v)
	}
	s.Solve()
	for _, v := range vs {
		if !near(v.Value(), 50) {
			t.Errorf("fat pipe share %g, want 50", v.Value())
		}
	}
}

// TestCrossTraffic: a flow's small reverse-route weight takes a little of
// the reverse link.
func TestCrossTraffic(t *testing.T) {
	s := New(1e-5)
	up := s.NewConstraint(100, false)
	down := s.NewConstraint(100, false)
	f := s.NewVariable(0, 1, -1, 2)
	g := s.NewVariable(1, 1, -1, 2)
	s.Expand(up, f, 1)
	s.Expand(down, f, 0.05)
	s.Expand(down, g, 1)
	s.Expand(up, g, 0.05)
	s.Solve()
	// Symmetric: x + 0.05 x = 100 on each link.
	if want := 100 / 1.05; !near(f.Value(), want) || !near(g.Value(), want) {
		t.Errorf("shares %g %g, want %g", f.Value(), g.Value(), want)
	}
}

// TestIncremental: a change in one component leaves the other alone and
// reports only its own variables.
func TestIncremental(t *testing.T) {
	s := New(1e-5)
	c1 := s.NewConstraint(10, false)
	c2 := s.NewConstraint(10, false)
	a := s.NewVariable(0, 1, -1, 1)
	b := s.NewVariable(1, 1, -1, 1)
	s.Expand(c1, a, 1)
	s.Expand(c2, b, 1)
	s.Solve()
	d := s.NewVariable(2, 1, -1, 1)
	s.Expand(c2, d, 1)
	mod := s.Solve()
	if len(mod) != 2 || !near(b.Value(), 5) || !near(a.Value(), 10) {
		t.Errorf("%d modified, a %g b %g; want 2, 10, 5", len(mod), a.Value(), b.Value())
	}
	if s.Modified() {
		t.Error("still modified after Solve")
	}
}

// TestManyElements: a variable can use more constraints than announced.
func TestManyElements(t *testing.T) {
	s := New(1e-5)
	v := s.NewVariable(0, 1, -1, 1)
	for i := 0; i < 10; i++ {
		s.Expand(s.NewConstraint(float64(10+i), false), v, 1)
	}
	s.Solve()
	if !near(v.Value(), 10) {
		t.Errorf("share %g, want 10", v.Value())
	}
	s.Remove(v)
	s.Solve()
}

// TestExpandTwice: using a constraint twice adds the weights, also for an
// enabled variable whose element is already in the constraint.
func TestExpandTwice(t *testing.T) {
	s := New(1e-5)
	l := s.NewConstraint(90, false)
	a := s.NewVariable(0, 1, -1, 1)
	b := s.NewVariable(1, 1, -1, 1)
	s.Expand(l, a, 1)
	s.Expand(l, b, 1)
	s.Expand(l, a, 1) // a now consumes 2 per unit of rate: 2x + x = 90
	s.Solve()
	if !near(a.Value(), 30) || !near(b.Value(), 30) {
		t.Errorf("a %g b %g, want 30 30", a.Value(), b.Value())
	}
}

// TestEmptiedConstraintLeavesModifiedSet: a constraint whose last
// variable is removed leaves the set of constraints to solve, as in
// SimGrid (make_constraint_inactive), so that a variable using it later
// in the round comes in the order of its arrival: the order of the
// shares Solve reports, which sets the order of simultaneous events.
func TestEmptiedConstraintLeavesModifiedSet(t *testing.T) {
	for _, mode := range orderModes {
		s, a, b, newVar := orderSystem(mode.selective, mode.incremental)
		x, y := newVar(0, a), newVar(1, b)
		s.Solve()
		s.Remove(x)
		s.Remove(y)
		newVar(2, b)
		newVar(3, a)
		if got := solvedIDs(s); len(got) != 2 || got[0] != 2 || got[1] != 3 {
			t.Errorf("%s: Solve reports variables %v, want [2 3]", mode.name, got)
		}
	}
}

// orderModes are the solver modes whose order of reported variables the
// order tests check.
var orderModes = []struct {
	name                   string
	selective, incremental bool
}{{"simgrid", true, false}, {"incremental", false, true}}

// orderSystem returns a system in a mode, two constraints of capacity 10
// and a function adding a variable of weight 1 on one of them.
func orderSystem(selective, incremental bool) (*System, *Constraint, *Constraint, func(int32, *Constraint) *Variable) {
	s := New(1e-5)
	s.SimGridSelective, s.Incremental = selective, incremental
	newVar := func(id int32, c *Constraint) *Variable {
		v := s.NewVariable(id, 1, -1, 1)
		s.Expand(c, v, 1)
		return v
	}
	return s, s.NewConstraint(10, false), s.NewConstraint(10, false), newVar
}

// solvedIDs solves s and returns the ids of the variables it reports.
func solvedIDs(s *System) []int32 {
	var ids []int32
	for _, v := range s.Solve() {
		ids = append(ids, v.ID)
	}
	return ids
}

// A held constraint (a disabled element, as SimGrid's sleep actions put on
// a CPU) is not emptied when its last variable leaves: it keeps its place
// in the modified set, so its new variables are re-solved (and reported)
// first. Released first, it leaves the set as in
// TestEmptiedConstraintLeavesModifiedSet.
func TestHoldKeepsConstraintInModifiedSet(t *testing.T) {
	for _, mode := range orderModes {
		for _, held := range []bool{true, false} {
			s, a, b, newVar := orderSystem(mode.selective, mode.incremental)
			x := newVar(0, a)
			s.Hold(a)
			s.Solve()
			s.Remove(x) // a is modified (first), and held or emptied
			if !held {
				s.Release(a)
			}
			newVar(1, b)
			newVar(2, a)
			got := solvedIDs(s)
			want := []int32{1, 2}
			if held {
				want = []int32{2, 1}
			}
			if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
				t.Errorf("%s, held %v: Solve reports variables %v, want %v", mode.name, held, got, want)
			}
		}
	}
}
