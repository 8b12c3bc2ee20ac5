package waitstate

import "testing"

// TestMoved: the kind of wait state whose waiting differs most between two
// analyses, a kind one of them lacks included, or the whole waiting where
// it differs more.
func TestMoved(t *testing.T) {
	an := func(waiting float64, kinds ...KindTotal) *Analysis { return &Analysis{Waiting: waiting, Kinds: kinds} }
	for _, c := range []struct {
		name string
		a, b *Analysis
		what string
		by   float64
	}{
		{"same", an(3, KindTotal{Kind: LateSender, Seconds: 3}), an(3, KindTotal{Kind: LateSender, Seconds: 3}), "waiting", 0},
		{"shifted between kinds", an(3, KindTotal{Kind: LateSender, Seconds: 2}, KindTotal{Kind: LateReceiver, Seconds: 1}),
			an(3, KindTotal{Kind: LateReceiver, Seconds: 0.5}, KindTotal{Kind: LateSender, Seconds: 2.5}), "late sender", 0.5},
		{"a kind gone", an(2, KindTotal{Kind: LateSender, Seconds: 1}, KindTotal{Kind: WaitNxN, Seconds: 1}),
			an(1.25, KindTotal{Kind: LateSender, Seconds: 1.25}), "wait at N×N", 1},
		{"the total", an(4, KindTotal{Kind: LateSender, Seconds: 2}, KindTotal{Kind: LateReceiver, Seconds: 2}),
			an(2, KindTotal{Kind: LateSender, Seconds: 1}, KindTotal{Kind: LateReceiver, Seconds: 1}), "waiting", 2},
	} {
		if what, by := Moved(c.a, c.b); what != c.what || by != c.by {
			t.Errorf("%s: %s by %g, want %s by %g", c.name, what, by, c.what, c.by)
		}
	}
}
