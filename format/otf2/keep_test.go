package otf2

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"kairos/internal/testenv"
	"kairos/trace"
)

// TestKeptEvents reads archives with the events Open's scan keeps and
// with none kept (every rank mapped from its records again), their v-
// collectives' counts both read from Kairos' attributes and derived: the
// ranks, metadata and events must be the same. Every rank is kept: the
// "late" archive's too, whose kept events are fixed as they are decoded
// (rank 0's isend cancelled after its call, rank 1's irecv let go before
// its completion and filled, its COMM_SELF irecv voided), and those
// whose count vectors are derived from the members' totals (derived as
// they are decoded, or spread where the totals conflict). Read
// one rank at a time, every archive gives the same model and events, and
// no event names a node or a communicator the model does not have; once
// the kept events are dropped, the ranks read again give them.
func TestKeptEvents(t *testing.T) {
	archives := map[string]string{}
	for _, mode := range []string{"features", "nbc", "pending", "scorep8", "unwind", "intercomm", "threads", "late"} {
		archives[mode] = writeArchive(t, mode)
	}
	for _, name := range []string{"pipit-ping-pong-otf2", "sst-macro-mpi-coverage", "tracer-stencil4d-32", "tiny_mpi"} {
		archives[name] = testenv.Shared(t, filepath.Join("traces/otf2", name))
	}
	_, archives["kairos-alltoallv"] = writeBack(t, simulated(t, "is", 4, 3))
	archives["rmawriter"] = oneSided(t).arch.Path
	_, archives["conflicting-vcollectives"] = writeBack(t, conflicting())
	kept := map[string][]bool{}
	for name, path := range archives {
		for _, counts := range []bool{true, false} {
			what := fmt.Sprintf("%s (counts from attributes: %v)", name, counts)
			s := openKeeping(t, path, counts, keepBudget)
			again := openKeeping(t, path, counts, 0)
			sameSources(t, what, s, again)
			sameSources(t, what+" one rank at a time", s, openOneAtATime(t, path, counts))
			var k []bool
			for _, rk := range s.kept {
				k = append(k, rk != nil)
			}
			kept[fmt.Sprint(name, counts)] = k
			s.DropKept()
			sameSources(t, what+" once its kept events are dropped", s, again)
		}
	}
	// Budgets for a few ranks: the first ranks kept, the rest read again;
	// on the stencil, ranks of more than keepStep each, so that the ranks
	// read at once take their shares.
	_, stencil := writeBack(t, simulated(t, "stencil2d", 8, 3000))
	budgets := map[string][]int{"tracer-stencil4d-32": {1 << 10, 1724, 2424, 3124, 3824, 4524, 5224, 5924, 6624, 7324, 8024},
		"stencil": {3 * keepStep, 5*keepStep + 1000, 8 * keepStep}}
	for name, path := range map[string]string{"tracer-stencil4d-32": archives["tracer-stencil4d-32"], "stencil": stencil} {
		checkBudgets(t, name, path, budgets[name])
	}
	for key, want := range map[string][]bool{
		"latetrue":              {true, true},
		"pendingtrue":           {true, true},
		"kairos-alltoallvtrue":  {true, true, true, true},
		"kairos-alltoallvfalse": {true, true, true, true},
	} {
		if got := kept[key]; !slices.Equal(got, want) {
			t.Errorf("%s: ranks kept %v, want %v", key, got, want)
		}
	}
}

// openKeeping opens an archive with the scan's budget set to budget,
// reading three ranks at once.
func openKeeping(t *testing.T, path string, counts bool, budget int) *Source {
	t.Helper()
	defer func(b, w int) { keepBudget, scanWorkers = b, w }(keepBudget, scanWorkers)
	keepBudget, scanWorkers = budget, 3
	s, err := open(path, counts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// openOneAtATime opens an archive scanning one rank after the other.
func openOneAtATime(t *testing.T, path string, counts bool) *Source {
	t.Helper()
	defer func(w int) { scanWorkers = w }(scanWorkers)
	scanWorkers = 1
	s, err := open(path, counts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// sameSources fails t where a and b differ in ranks, metadata, defects or
// events.
func sameSources(t *testing.T, what string, a, b *Source) {
	t.Helper()
	ma, mb := a.Meta(), b.Meta()
	if a.NumRanks() != b.NumRanks() || !slices.Equal(ma.Regions, mb.Regions) || fmt.Sprint(ma.Comms) != fmt.Sprint(mb.Comms) ||
		fmt.Sprint(ma.Attrs) != fmt.Sprint(mb.Attrs) || !slices.Equal(a.Defects(), b.Defects()) {
		t.Fatalf("%s: the metadata differ:\n%v %v\n%v %v", what, ma.Regions, ma.Comms, mb.Regions, mb.Comms)
	}
	all, bll := allEvents(t, a), allEvents(t, b)
	for r := range a.NumRanks() {
		ea, eb := all[r], bll[r]
		if len(ea) != len(eb) {
			t.Fatalf("%s: rank %d: %d events kept, %d read again", what, r, len(ea), len(eb))
		}
		for i := range ea {
			if !ea[i].Equal(&eb[i]) {
				t.Fatalf("%s: rank %d, event %d: kept %v, read again %v", what, r, i, &ea[i], &eb[i])
			}
			if e := &ea[i]; int(e.Region) >= len(ma.Regions) || !known(ma, e.Comm) || !known(ma, e.NewComm) {
				t.Fatalf("%s: rank %d, event %d: %v names a node or communicator the model has not", what, r, i, e)
			}
		}
	}
}

// allEvents returns every rank's events.
func allEvents(t *testing.T, src trace.Source) [][]trace.Event {
	t.Helper()
	evs := make([][]trace.Event, src.NumRanks())
	if err := trace.ForEach(src, func(r, _ int, e *trace.Event) error { evs[r] = append(evs[r], e.Clone()); return nil }); err != nil {
		t.Fatal(err)
	}
	return evs
}

// known reports whether m defines communicator id (or it is the world's).
func known(m *trace.Meta, id uint32) bool {
	return id == trace.WorldComm || slices.ContainsFunc(m.Comms, func(c trace.Comm) bool { return c.ID == id })
}

// conflicting returns two ranks that call different v-collectives at
// once (an allgatherv, an alltoallv): counts derived from their totals
// conflict, and a read spreads them evenly.
func conflicting() *trace.Trace {
	tr := trace.New(2, trace.NewMeta())
	for r, k := range []trace.Kind{trace.Allgatherv, trace.Alltoallv} {
		e := trace.NewEvent(k)
		e.SendBytes, e.RecvBytes, e.RecvCounts = 8, 16, []int64{8, 8}
		if k == trace.Alltoallv {
			e.SendBytes, e.SendCounts = 16, []int64{8, 8}
		}
		e.Enter, e.Exit, e.HasTime = 1000, 2000, true
		tr.Ranks[r].Append(&e)
	}
	return tr
}

// checkBudgets opens the archive at path with each budget: the events read
// are those of reading it with none kept, and the ranks kept are the first
// few, within the budget.
func checkBudgets(t *testing.T, name, path string, budgets []int) {
	t.Helper()
	again := openKeeping(t, path, true, 0)
	for _, budget := range budgets {
		s := openKeeping(t, path, true, budget)
		sameSources(t, fmt.Sprintf("%s (a budget of %d bytes)", name, budget), s, again)
		total := 0
		for _, k := range s.kept {
			total += len(k)
		}
		if n := slices.IndexFunc(s.kept, func(r []byte) bool { return r == nil }); n < 1 || total > budget ||
			slices.ContainsFunc(s.kept[n:], func(r []byte) bool { return r != nil }) {
			t.Errorf("%s, a budget of %d bytes: %d bytes kept, of the ranks before %d, want the first few within the budget",
				name, budget, total, n)
		}
	}
}
