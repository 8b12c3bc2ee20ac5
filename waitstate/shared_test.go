package waitstate

import (
	"math"
	"slices"
	"testing"

	"kairos/format"
	_ "kairos/format/alawneh"
	_ "kairos/format/dumpi"
	_ "kairos/format/otf2"
	"kairos/internal/testenv"
)

// realAnalysis analyzes a trace of ../shared/traces and checks what holds
// of every analysis: costs and unexplained waiting sum to the waiting, no
// negative cost or share above 1, the causes in order, each rank's cost
// the sum of its causes', and a critical path no longer than the run.
func realAnalysis(t *testing.T, rel string) *Analysis {
	t.Helper()
	src, _, err := format.Open(testenv.Shared(t, "traces/"+rel))
	if err != nil {
		t.Fatal(err)
	}
	a, err := Analyze(src, Options{})
	if err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
	sum := a.Unexplained
	rank := make([]float64, a.Ranks)
	for i, c := range a.Causes {
		if c.Direct < 0 || c.Propagated < 0 || c.Share > 1+1e-9 || (i > 0 && c.Cost > a.Causes[i-1].Cost) {
			t.Errorf("%s: cause %d: %+v", rel, i, c)
		}
		sum += c.Cost
		rank[c.Rank] += c.Cost
	}
	if math.Abs(sum-a.Waiting) > 1e-9*max(a.Waiting, 1e-9) {
		t.Errorf("%s: costs and unexplained sum to %g s, the waiting is %g s", rel, sum, a.Waiting)
	}
	for r := range rank {
		if math.Abs(rank[r]-a.RankCost[r]) > 1e-9 {
			t.Errorf("%s: rank %d's cost %g s, its causes' %g s", rel, r, a.RankCost[r], rank[r])
		}
	}
	if cp := a.CriticalPath.Seconds; cp > a.Runtime*(1+1e-9) || cp < 0.9*a.Runtime {
		t.Errorf("%s: critical path %g s, run %g s", rel, cp, a.Runtime)
	}
	return a
}

// kinds returns the kinds of wait states found, the most waiting first.
func kinds(a *Analysis) []Kind {
	var ks []Kind
	for _, k := range a.Kinds {
		ks = append(ks, k.Kind)
	}
	return ks
}

// TestRealTraces analyzes the traces of real runs (Score-P's OTF2, DUMPI,
// the seed authors' SMG2000) and checks what they show.
func TestRealTraces(t *testing.T) {
	// SMG2000 on 4 processes: its exchanges are non-blocking and the
	// format records their completions, not when the Waitall began, so
	// no wait in a Waitall shows (the run overlaps them with computation:
	// replayed, it takes the recorded time). What waits is the
	// collectives, 0.2% of the run, and rank 0, which exchanges 13% more
	// messages than ranks 2 and 3, causes most of it.
	a := realAnalysis(t, "alawneh/smg2000-4p")
	if i := slices.Index(a.RankCost, slices.Max(a.RankCost)); i != 0 || a.Causes[0].Rank != 0 ||
		!slices.Equal(kinds(a), []Kind{WaitNxN}) || a.Waiting > 0.01*a.Runtime {
		t.Errorf("smg2000-4p: most cost on rank %d, first cause %+v, kinds %v, waiting %g s of %g s", i, a.Causes[0], kinds(a), a.Waiting, a.Runtime)
	}
	// Ping-pong: blocking sends of 16 KiB to 2 MiB wait for rank 1's
	// receives (late receivers); rank 1's computation between them is
	// the cause.
	a = realAnalysis(t, "otf2/pipit-ping-pong-otf2")
	if kinds(a)[0] != LateReceiver || a.Causes[0].Rank != 1 || a.Causes[0].Activity != "computation" {
		t.Errorf("ping-pong: kinds %v, first cause %+v", kinds(a), a.Causes[0])
	}
	// SST/macro's coverage test exercises every kind of collective.
	a = realAnalysis(t, "otf2/sst-macro-mpi-coverage")
	for _, k := range []Kind{LateSender, LateReceiver, WaitNxN, LateBroadcast, EarlyReduce, WaitFinalize} {
		if !slices.Contains(kinds(a), k) {
			t.Errorf("sst-macro-mpi-coverage: no %s among %v", k, kinds(a))
		}
	}
	// TraceR's 4-D stencil: barriers and late senders, on 64 ranks.
	a = realAnalysis(t, "otf2/tracer-stencil4d-64")
	if ks := kinds(a); len(ks) != 2 || ks[0] != WaitBarrier || ks[1] != LateSender {
		t.Errorf("stencil4d-64: kinds %v", ks)
	}
	// DUMPI: rank 0 entered MPI_Init 7.5 ms after rank 2; the first
	// exchange's wait is its late start.
	a = realAnalysis(t, "dumpi/tauferlab-naive-alltoall-4")
	if c := a.Causes[0]; c.Rank != 0 || c.Activity != "start-up" || c.Share < 0.9 {
		t.Errorf("naive-alltoall-4: first cause %+v", c)
	}
	realAnalysis(t, "dumpi/sst-macro-testbgp")
}
