package maxmin

import "testing"

// limitedSystems returns, for each way of re-solving that takes limits
// (SimGrid's selective update, the whole components, the incremental
// solver without SimGrid's quirks), a system with concurrency limit n.
func limitedSystems(n int) map[string]*System {
	out := map[string]*System{}
	for name, mode := range map[string][2]bool{"simgrid": {true, false}, "full": {false, false}, "incremental": {false, true}} {
		s := New(1e-5)
		s.SimGridSelective, s.Incremental = mode[0], mode[1]
		s.SetConcurrencyLimit(n)
		out[name] = s
	}
	return out
}

// TestConcurrencyLimit follows the variables of a link that admits one
// at a time: the second waits, staged, with no share, and takes the slot
// when the first leaves; a cross-traffic element (weight under 1) takes
// no slot; staged variables take freed slots in the order they were
// staged; a variable enabled when one of its constraints is full is
// staged too.
func TestConcurrencyLimit(t *testing.T) {
	for name, s := range limitedSystems(1) {
		l := s.NewConstraint(100, false)
		m := s.NewConstraint(50, false)
		a := s.NewVariable(0, 1, -1, 1)
		b := s.NewVariable(1, 1, -1, 1)
		c := s.NewVariable(2, 1, -1, 1)
		x := s.NewVariable(3, 1, -1, 1)
		s.Expand(l, a, 1)
		s.Expand(l, b, 1)
		s.Expand(l, c, 1)
		s.Expand(l, x, 0.05) // cross-traffic: no slot
		s.Solve()
		if a.Staged() || !b.Staged() || !c.Staged() || x.Staged() {
			t.Errorf("%s: staged a %v b %v c %v x %v, want b and c", name, a.Staged(), b.Staged(), c.Staged(), x.Staged())
		}
		if b.Value() != 0 || c.Value() != 0 || !near(a.Value()+0.05*x.Value(), 100) {
			t.Errorf("%s: a %g b %g c %g x %g, want b and c without share", name, a.Value(), b.Value(), c.Value(), x.Value())
		}
		s.Remove(a)
		s.Solve()
		if b.Staged() || !c.Staged() || b.Value() == 0 || c.Value() != 0 {
			t.Errorf("%s: after a left, b staged %v (%g), c staged %v (%g): want b first", name, b.Staged(), b.Value(), c.Staged(), c.Value())
		}
		// d, disabled (paying its latency), is enabled while m is full.
		d := s.NewVariable(4, 0, -1, 2)
		e := s.NewVariable(5, 1, -1, 1)
		s.Expand(m, e, 1)
		s.Expand(l, d, 1)
		s.Expand(m, d, 1)
		s.Remove(b) // l's slot goes to c, staged before d was on l
		s.SetPenalty(d, 1)
		s.Solve()
		if c.Staged() || !d.Staged() || d.Value() != 0 || !near(e.Value(), 50) {
			t.Errorf("%s: c staged %v, d staged %v (%g), e %g: want d staged", name, c.Staged(), d.Staged(), d.Value(), e.Value())
		}
		// A staged variable disabled stays staged (SimGrid returns early:
		// its penalty is already 0).
		s.SetPenalty(d, 0)
		if !d.Staged() {
			t.Errorf("%s: d disabled is no longer staged", name)
		}
		s.Remove(c)
		s.Remove(e)
		s.Solve()
		if d.Staged() || !near(d.Value(), 50) {
			t.Errorf("%s: with l and m free, d staged %v at %g, want 50", name, d.Staged(), d.Value())
		}
	}
}

// TestConcurrencyUnlimited: a negative limit is none.
func TestConcurrencyUnlimited(t *testing.T) {
	for name, s := range limitedSystems(-1) {
		l := s.NewConstraint(90, false)
		var vs []*Variable
		for i := range 3 {
			v := s.NewVariable(int32(i), 1, -1, 1)
			s.Expand(l, v, 1)
			vs = append(vs, v)
		}
		s.Solve()
		for _, v := range vs {
			if v.Staged() || !near(v.Value(), 30) {
				t.Errorf("%s: variable %d staged %v at %g, want 30", name, v.ID, v.Staged(), v.Value())
			}
		}
	}
}
