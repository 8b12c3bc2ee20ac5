package trace

import (
	"fmt"
	"strings"
	"testing"
)

// mergeInput builds a part of n ranks: rank 0 sends to the last rank,
// which receives and waits for it by key, then all reduce on the world
// and on communicator 5 of ranks 0 and 1 (rooted at world rank 1).
func mergeInput(n int, defType Datatype, region string) *Trace {
	meta := NewMeta()
	meta.DefaultType = defType
	reg := meta.AddRegion(region, 0)
	meta.Comms = []Comm{{ID: 5, Members: []int32{0, 1}}}
	t := New(n, meta)
	ev := func(k Kind, set func(e *Event)) *Event {
		e := NewEvent(k)
		set(&e)
		return &e
	}
	t.Ranks[0].Append(ev(Isend, func(e *Event) { e.Partner, e.SendBytes, e.Region = int32(n-1), 8, reg }))
	t.Ranks[n-1].Append(ev(Irecv, func(e *Event) { e.Partner, e.RecvBytes = 0, 8 }))
	t.Ranks[n-1].Append(ev(Wait, func(e *Event) { e.Source, e.Partner = 0, int32(n-1) }))
	for r := range n {
		t.Ranks[r].Append(ev(Allreduce, func(e *Event) { e.SendBytes = 8 }))
		if r < 2 {
			t.Ranks[r].Append(ev(Reduce, func(e *Event) { e.Comm, e.Partner, e.SendBytes, e.SendType = 5, 1, 4, TypeInt }))
		}
	}
	return t
}

// describe lists every event of src as the fields Merge remaps.
func describe(t *testing.T, src Source) string {
	t.Helper()
	var b strings.Builder
	err := ForEach(src, func(r, _ int, e *Event) error {
		fmt.Fprintf(&b, "%d %s partner=%d source=%d comm=%d types=%d,%d region=%q\n", r, e.Kind, e.Partner, e.Source, e.Comm,
			e.SendType, e.RecvType, src.Meta().RegionName(e.Region))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestMerge(t *testing.T) {
	a, b := mergeInput(2, TypeByte, "solve"), mergeInput(3, TypeDouble, "halo")
	m, err := Merge([]Source{a, b}, MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if m.NumRanks() != 5 || fmt.Sprint(m.Offsets()) != "[0 2]" {
		t.Fatalf("%d ranks, offsets %v", m.NumRanks(), m.Offsets())
	}
	comms := fmt.Sprint(m.Meta().Comms)
	if comms != "[{1 [0 1]} {2 [0 1]} {3 [2 3 4]} {4 [2 3]}]" {
		t.Errorf("communicators %s", comms)
	}
	want := `0 isend partner=1 source=-1 comm=1 types=6,6 region="solve"
0 allreduce partner=-1 source=-1 comm=1 types=6,6 region=""
0 reduce partner=1 source=-1 comm=2 types=1,6 region=""
1 irecv partner=0 source=-1 comm=1 types=6,6 region=""
1 wait partner=1 source=0 comm=1 types=6,6 region=""
1 allreduce partner=-1 source=-1 comm=1 types=6,6 region=""
1 reduce partner=1 source=-1 comm=2 types=1,6 region=""
2 isend partner=4 source=-1 comm=3 types=0,0 region="halo"
2 allreduce partner=-1 source=-1 comm=3 types=0,0 region=""
2 reduce partner=3 source=-1 comm=4 types=1,0 region=""
3 allreduce partner=-1 source=-1 comm=3 types=0,0 region=""
3 reduce partner=3 source=-1 comm=4 types=1,0 region=""
4 irecv partner=2 source=-1 comm=3 types=0,0 region=""
4 wait partner=4 source=2 comm=3 types=0,0 region=""
4 allreduce partner=-1 source=-1 comm=3 types=0,0 region=""
`
	if got := describe(t, m); got != want {
		t.Errorf("merged:\n%s\nwant:\n%s", got, want)
	}
	// SimGrid's lookup: the second part's wait keeps its own ranks.
	m, err = Merge([]Source{a, b}, MergeOptions{LocalWaitKeys: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := describe(t, m); !strings.Contains(got, "4 wait partner=2 source=0 comm=3") || !strings.Contains(got, "4 irecv partner=2 ") {
		t.Errorf("local wait keys:\n%s", got)
	}
	if _, err := m.OpenRank(5); err == nil {
		t.Error("rank 5 of 5 opened")
	}
}

func TestMergeUndefinedComm(t *testing.T) {
	a := mergeInput(2, TypeByte, "x")
	e := NewEvent(Barrier)
	e.Comm = 9
	a.Ranks[1].Append(&e)
	m, err := Merge([]Source{a}, MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := ForEach(m, func(int, int, *Event) error { return nil }); err == nil || !strings.Contains(err.Error(), "undefined communicator 9") {
		t.Errorf("error %v", err)
	}
}
