package waitstate

import (
	"testing"

	"kairos/trace"
)

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

// TestIOCallsNamed: an MPI-IO call, whose kind stands for several MPI
// functions, is named as its region names it (MPI_File_write_at_all), and
// its caller is that region's parent, as a local call's: rank 1 writes
// for 100 µs before the message rank 0 waits for.
func TestIOCallsNamed(t *testing.T) {
	meta := trace.NewMeta()
	main := meta.AddRegion("main", 0)
	write := meta.AddRegion("MPI_File_write_at_all", main)
	tr := trace.New(2, meta)
	for r, evs := range [][]trace.Event{
		{call(trace.Recv, 0, 101, peer(1), in(main))},
		{call(trace.FileWrite, 0, 100, in(write)), call(trace.Send, 100, 101, peer(0), in(main))},
	} {
		for i := range evs {
			tr.Ranks[r].Append(&evs[i])
		}
	}
	a, err := Analyze(tr, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Causes) == 0 || a.Causes[0].Activity != "MPI_File_write_at_all" || a.Causes[0].CallPath != "main" {
		t.Errorf("causes %+v, want rank 1's MPI_File_write_at_all in main first", a.Causes)
	}
}
