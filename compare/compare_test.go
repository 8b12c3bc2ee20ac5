package compare

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"kairos/stats"
)

// summary is a timed summary of ranks ranks, each spending total seconds
// of which mpi in MPI calls: the waitall's share of mpi at the call path
// main/step, the rest in an allreduce; and a second more in MPI_Finalize,
// which a replay does not time.
func summary(ranks int, total, mpi, waitall float64) *stats.Stats {
	s := &stats.Stats{Ranks: ranks, Timed: true, RunSeconds: total}
	for r := range ranks {
		s.PerRank = append(s.PerRank, stats.RankStats{Rank: r, TotalSeconds: total + 1, MPISeconds: mpi + 1})
	}
	spread := func(v float64) stats.Spread {
		return stats.Spread{Seconds: v * float64(ranks), MinRankSeconds: v, MeanRankSeconds: v, MaxRankSeconds: v}
	}
	s.Profile = []stats.CallTime{{Call: "finalize", Calls: 1, Spread: spread(1)}, {Call: "waitall", Calls: 10, Spread: spread(waitall)},
		{Call: "allreduce", Calls: 1, Spread: spread(mpi - waitall)}}
	s.Paths = []stats.PathTime{{Path: "main", Activity: "MPI_Finalize", Calls: 1, Spread: spread(1)},
		{Path: "main/step", Activity: "MPI_Waitall", Calls: 10, Spread: spread(waitall)},
		{Path: "main", Activity: "computation", Calls: 11, Spread: spread(total - mpi)}}
	return s
}

// TestOf compares a baseline of 4 ranks with a run of 8: half the
// computation a rank, twice the waitall. The efficiency is the rank-
// seconds' ratio, the lines come largest change first, MPI_Finalize is
// in none of them, and the text names each run and change.
func TestOf(t *testing.T) {
	c, err := Of([]string{"p4.ktr", "p8.ktr"}, []*stats.Stats{summary(4, 10, 2, 1), summary(8, 6, 2.5, 2)})
	if err != nil {
		t.Fatal(err)
	}
	near := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-12 {
			t.Errorf("%s = %g, want %g", what, got, want)
		}
	}
	near("A's run seconds", c.Runs[0].Seconds, 10)
	near("B's efficiency", c.Runs[1].Efficiency, 40.0/48)
	near("B's compute a rank", c.Runs[1].ComputeSeconds, 3.5)
	near("B's MPI share", c.Runs[1].MPIPercent, 100*2.5/6)
	near("B's MPI a rank", c.Runs[1].MPISeconds, 2.5)
	var order []string
	for _, l := range c.Activities {
		order = append(order, l.Activity)
	}
	if got, want := strings.Join(order, " "), "computation MPI_Waitall MPI_Allreduce"; got != want {
		t.Errorf("activities %q, want %q (the largest change first)", got, want)
	}
	near("computation's change", c.Activities[0].Change, -4.5)
	near("computation's sum in B", c.Activities[0].Runs[1].Seconds, 28)
	near("allreduce's change", c.Activities[2].Change, -0.5)
	if len(c.Paths) != 2 || c.Paths[0].Path != "main" || c.Paths[1].Path != "main/step" {
		t.Errorf("paths %+v", c.Paths)
	}
	var b bytes.Buffer
	if err := c.WriteText(&b, 2); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"A    p4.ktr", "B    p8.ktr", "0.833", "the 2 largest changes of 3", "computation  8.000000  3.500000  -4.500000  0.44",
		"MPI_Waitall  main/step  1.000000  2.000000  +1.000000  2.00", "MPI_Waitall  1.000000  2.000000  +1.000000  2.00"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
}

// TestOfRefuses: fewer than two runs, and an untimed one, named.
func TestOfRefuses(t *testing.T) {
	untimed := summary(2, 1, 0.5, 0.2)
	untimed.Timed = false
	for _, c := range []struct {
		names []string
		s     []*stats.Stats
		want  string
	}{
		{[]string{"a"}, []*stats.Stats{summary(2, 1, 0.5, 0.2)}, "two runs or more"},
		{[]string{"a", "b.ti"}, []*stats.Stats{summary(2, 1, 0.5, 0.2), untimed}, "b.ti: the trace is not timed"},
	} {
		if _, err := Of(c.names, c.s); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.names, err, c.want)
		}
	}
}

// TestOfNames: the model's kind of a call and the calls of no kind stats
// names by their MPI function (a deferred MPI_Waitall) are one line, named
// as the call paths name it.
func TestOfNames(t *testing.T) {
	a, b := summary(2, 4, 2, 1), summary(2, 4, 2, 1)
	b.Profile = append(b.Profile, stats.CallTime{Call: "MPI_Waitall", Calls: 3,
		Spread: stats.Spread{Seconds: 1, MinRankSeconds: 0, MeanRankSeconds: 0.5, MaxRankSeconds: 1, MaxRank: 1}})
	c, err := Of([]string{"a", "b"}, []*stats.Stats{a, b})
	if err != nil {
		t.Fatal(err)
	}
	var waitall []Line
	for _, l := range c.Activities {
		if strings.Contains(l.Activity, "aitall") {
			waitall = append(waitall, l)
		}
	}
	if len(waitall) != 1 || waitall[0].Activity != "MPI_Waitall" || waitall[0].Runs[1].Seconds != 3 || waitall[0].Change != 0.5 ||
		waitall[0].Runs[1].MaxRank != 0 {
		t.Errorf("waitall lines %+v: want one, MPI_Waitall, 3 s summed in b, +0.5 s a rank", waitall)
	}
}

// TestOfUnnamedPaths: call paths are compared only where every run's
// trace names some; a run whose time is all outside any function (the
// tracer's archive beside a TI trace replayed into OTF2, wrapped in
// "main") is named instead of every line reading as new and gone.
func TestOfUnnamedPaths(t *testing.T) {
	unnamed := func() *stats.Stats {
		s := summary(2, 4, 2, 1)
		for i := range s.Paths {
			s.Paths[i].Path = ""
		}
		return s
	}
	for _, c := range []struct {
		name    string
		runs    []*stats.Stats
		paths   int
		unnamed string
		text    string
	}{
		{"every run names paths", []*stats.Stats{summary(2, 4, 2, 1), summary(2, 3, 2, 1)}, 2, "", "time a rank by call path"},
		{"no run names paths", []*stats.Stats{unnamed(), unnamed()}, 0, "", ""},
		{"the second names none", []*stats.Stats{summary(2, 4, 2, 1), unnamed()}, 0, "b",
			"call paths not compared: the trace of b names none"},
		{"two of three name none", []*stats.Stats{unnamed(), summary(2, 4, 2, 1), unnamed()}, 0, "a c",
			"call paths not compared: the traces of a, c name none"},
	} {
		names := []string{"a", "b", "c"}[:len(c.runs)]
		cmp, err := Of(names, c.runs)
		if err != nil {
			t.Fatal(err)
		}
		if len(cmp.Paths) != c.paths || strings.Join(cmp.Unnamed, " ") != c.unnamed {
			t.Errorf("%s: %d call-path lines, unnamed %q; want %d, %q", c.name, len(cmp.Paths), cmp.Unnamed, c.paths, c.unnamed)
		}
		var b bytes.Buffer
		if err := cmp.WriteText(&b, 5); err != nil {
			t.Fatal(err)
		}
		if got := b.String(); c.text != "" && !strings.Contains(got, c.text) ||
			c.text == "" && (strings.Contains(got, "call path")) {
			t.Errorf("%s: text\n%s\nwant %q", c.name, got, c.text)
		}
	}
}
