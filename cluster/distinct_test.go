package cluster

import (
	"path/filepath"
	"reflect"
	"testing"

	"kairos/format/ktr"
	"kairos/trace"
)

// TestSignDistinct: signing a .ktr, whose readers name the distinct event
// each event copies (trace.DistinctReader), gives the signatures of
// signing the same trace's events whole, on noisy traces whose ranks
// differ, with plug-ins, communicator splits, vectors and times; and the
// distinct events are what most events were signed from.
func TestSignDistinct(t *testing.T) {
	for _, c := range []struct {
		name  string
		tr    *trace.Trace
		opt   SignOptions
		chunk int // bytes: several chunks a rank, each copying few events
	}{
		{"stencil2d", load(t, workloadSource(t, "stencil2d", 16, nil, 20, true)), SignOptions{}, 512},
		{"lu", load(t, workloadSource(t, "lu", 16, nil, 10, true)), SignOptions{}, 1024},
		{"cg+plugin", load(t, workloadSource(t, "cg", 16, nil, 10, true)), SignOptions{Plugins: []string{"cg"}}, 1024},
		{"ft", load(t, workloadSource(t, "ft", 16, nil, 40, true)), SignOptions{}, 1024},
		{"splits and vectors", splitsAndVectors(), SignOptions{}, 1024},
		{"ft+plugin", load(t, workloadSource(t, "ft", 16, nil, 40, true)), SignOptions{Plugins: []string{"ft"}}, 1024},
		{"mg timed", timed(load(t, workloadSource(t, "mg", 16, nil, 5, true))), SignOptions{}, 8192},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "t.ktr")
			if err := ktr.WriteOptions(path, c.tr, ktr.Options{ChunkSize: c.chunk}); err != nil {
				t.Fatal(err)
			}
			src, err := ktr.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := signAll(t, src, c.opt), signAll(t, c.tr, c.opt); !reflect.DeepEqual(got, want) {
				t.Errorf("from the .ktr %+v\nfrom its events %+v", got, want)
			}
			copies, events, groups := distinctCopies(t, src)
			if 2*copies < events || groups < 2*src.NumRanks() {
				t.Errorf("%d of %d events copy a distinct event, in %d groups of %d ranks: expected most, in several groups a rank", copies, events, groups, src.NumRanks())
			}
		})
	}
}

// splitsAndVectors is NAS FT's pattern (ftGrid): each rank splits the
// world into its row and column, then repeats an all-to-all in its row,
// one with vectors in its column and a computation.
func splitsAndVectors() *trace.Trace {
	tr := trace.New(ftN, ftGrid())
	for r := range int32(ftN) {
		rowSplit, colSplit, a2a := ftCalls(r)
		a2av := call(trace.Alltoallv, 4, trace.NoRank, 0)
		a2av.Comm, a2av.SendCounts, a2av.RecvCounts = uint32(10+r%ftNP2), []int64{8, 16, 8, int64(r)}, []int64{8, 8, 8, 8}
		comp := trace.NewEvent(trace.Compute)
		for i := range 200 {
			comp.Compute = float64(1000 + i*int(r))
			events := []trace.Event{a2a, a2av, comp}
			if i%50 == 0 {
				events = append(events, rowSplit, colSplit)
			}
			for _, e := range events {
				tr.Ranks[r].Append(&e)
			}
		}
	}
	return tr
}

func load(t *testing.T, src trace.Source) *trace.Trace {
	t.Helper()
	tr, err := trace.Load(src)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// timed gives every event of tr times, a microsecond apart.
func timed(tr *trace.Trace) *trace.Trace {
	out := trace.New(tr.NumRanks(), *tr.Meta())
	for r := range tr.NumRanks() {
		rd, _ := tr.OpenRank(r)
		now := trace.Time(r)
		for rd.Next() {
			e := *rd.Event()
			e.HasTime, e.Enter, e.Exit = true, now+1_000_000, now+1_000_000+trace.Time(len(e.Kind.String()))*1_000
			now = e.Exit
			out.Ranks[r].Append(&e)
		}
	}
	return out
}

// distinctCopies reads src with NextDistinct and counts the events that
// copy a distinct event, all, and the groups of distinct events.
func distinctCopies(t *testing.T, src trace.Source) (copies, events, groups int) {
	t.Helper()
	for r := range src.NumRanks() {
		rd, err := src.OpenRank(r)
		if err != nil {
			t.Fatal(err)
		}
		dr := rd.(trace.DistinctReader)
		for last := -1; ; {
			id, group, ok := dr.NextDistinct()
			if !ok {
				break
			}
			if group != last {
				groups, last = groups+1, group
			}
			events++
			if id >= 0 {
				copies++
			}
		}
		if err := dr.Err(); err != nil {
			t.Fatal(err)
		}
		dr.Close()
	}
	return copies, events, groups
}
