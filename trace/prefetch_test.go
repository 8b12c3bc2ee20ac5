package trace

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime"
	"testing"
	"time"
)

// listSource is a Source of fixed events per rank whose readers know their
// position, may fail after their events, and record that they were closed.
type listSource struct {
	events [][]Event
	err    error
	closed []bool
}

func (s *listSource) Meta() *Meta   { m := NewMeta(); return &m }
func (s *listSource) NumRanks() int { return len(s.events) }
func (s *listSource) OpenRank(r int) (Reader, error) {
	return &listReader{src: s, rank: r, i: -1}, nil
}

type listReader struct {
	src  *listSource
	rank int
	i    int
}

func (r *listReader) Next() bool {
	if r.i+1 >= len(r.src.events[r.rank]) {
		r.i = len(r.src.events[r.rank])
		return false
	}
	r.i++
	return true
}

func (r *listReader) Event() *Event { return &r.src.events[r.rank][r.i] }

func (r *listReader) Err() error {
	if r.i == len(r.src.events[r.rank]) {
		return r.src.err
	}
	return nil
}

func (r *listReader) Close() error {
	if r.src.closed != nil {
		r.src.closed[r.rank] = true
	}
	return nil
}

func (r *listReader) Position() string { return fmt.Sprintf("rank%d:%d", r.rank, r.i) }

// newListSource returns ranks of 50 to 100 events cycling through
// sampleEvents (every field the codec has, nil and empty vectors).
func newListSource(ranks int) *listSource {
	s := &listSource{events: make([][]Event, ranks), closed: make([]bool, ranks)}
	sample := sampleEvents()
	for r := range s.events {
		for i := 0; i < 50+50*r/max(ranks-1, 1); i++ {
			s.events[r] = append(s.events[r], sample[(i+r)%len(sample)])
		}
	}
	return s
}

// TestPrefetchSameEvents reads ranks in turn, one event of each at a time,
// through chunks smaller and larger than a rank.
func TestPrefetchSameEvents(t *testing.T) {
	for _, chunk := range []int{0, 100, 1000, 1 << 20} {
		src := newListSource(4)
		p := Prefetch(src, chunk)
		rds := make([]Reader, p.NumRanks())
		for r := range rds {
			rd, err := p.OpenRank(r)
			if err != nil {
				t.Fatal(err)
			}
			rds[r] = rd
		}
		n := make([]int, len(rds))
		for live := len(rds); live > 0; {
			live = 0
			for r, rd := range rds {
				if n[r] > len(src.events[r]) {
					continue
				}
				if !rd.Next() {
					if n[r] != len(src.events[r]) || rd.Err() != nil {
						t.Fatalf("chunk %d rank %d: ended after %d of %d events: %v", chunk, r, n[r], len(src.events[r]), rd.Err())
					}
					n[r]++
					continue
				}
				live++
				if got, want := rd.Event(), &src.events[r][n[r]]; !reflect.DeepEqual(got, want) {
					t.Fatalf("chunk %d rank %d event %d: got %+v, want %+v", chunk, r, n[r], got, want)
				}
				n[r]++
			}
		}
		for r, rd := range rds {
			if err := rd.Close(); err != nil || !src.closed[r] {
				t.Fatalf("chunk %d rank %d: Close: %v, closed %v", chunk, r, err, src.closed[r])
			}
		}
	}
}

// TestPrefetchManyRanks reads far more ranks than there are workers, in
// runs of random length in a random order of ranks, so that the consumer
// finds chunks ready, fills others itself and waits for others still
// being filled; then every worker must have stopped.
func TestPrefetchManyRanks(t *testing.T) {
	base := runtime.NumGoroutine()
	src := newListSource(200)
	p := Prefetch(src, 100)
	rds := make([]Reader, p.NumRanks())
	for r := range rds {
		rd, err := p.OpenRank(r)
		if err != nil {
			t.Fatal(err)
		}
		rds[r] = rd
	}
	rng := rand.New(rand.NewPCG(1, 2))
	n := make([]int, len(rds))
	for left := len(rds); left > 0; {
		r := rng.IntN(len(rds))
		for k := rng.IntN(12); k >= 0 && n[r] <= len(src.events[r]); k-- {
			if !rds[r].Next() {
				if n[r] != len(src.events[r]) || rds[r].Err() != nil {
					t.Fatalf("rank %d: ended after %d of %d events: %v", r, n[r], len(src.events[r]), rds[r].Err())
				}
				n[r]++
				left--
				break
			}
			if got, want := rds[r].Event(), &src.events[r][n[r]]; !reflect.DeepEqual(got, want) {
				t.Fatalf("rank %d event %d: got %+v, want %+v", r, n[r], got, want)
			}
			n[r]++
		}
	}
	for r, rd := range rds {
		if err := rd.Close(); err != nil || !src.closed[r] {
			t.Fatalf("rank %d: Close: %v, closed %v", r, err, src.closed[r])
		}
	}
	for deadline := time.Now().Add(5 * time.Second); runtime.NumGoroutine() > base; {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines after reading every rank, %d before", runtime.NumGoroutine(), base)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestPrefetchPosition(t *testing.T) {
	src := newListSource(2)
	rd, _ := Prefetch(src, 0).OpenRank(1)
	defer rd.Close()
	for i := 0; i < 7; i++ {
		rd.Next()
	}
	if got := rd.(Positioner).Position(); got != "rank1:6" {
		t.Errorf("position %q, want rank1:6", got)
	}
}

func TestPrefetchError(t *testing.T) {
	src := newListSource(1)
	src.err = errors.New("corrupt")
	rd, _ := Prefetch(src, 0).OpenRank(0)
	defer rd.Close()
	n := 0
	for rd.Next() {
		n++
	}
	if n != len(src.events[0]) || rd.Err() != src.err {
		t.Fatalf("read %d of %d events, err %v", n, len(src.events[0]), rd.Err())
	}
	if rd.Next() {
		t.Fatal("Next after the end")
	}
}

// TestPrefetchCloseEarly closes readers whose goroutine waits to hand
// over a chunk nobody reads: Close must not hang, and must close the
// source's reader.
func TestPrefetchCloseEarly(t *testing.T) {
	src := newListSource(3)
	p := Prefetch(src, 0)
	for r := 0; r < 3; r++ {
		rd, _ := p.OpenRank(r)
		for i := 0; i < 10*r; i++ {
			rd.Next()
		}
		if err := rd.Close(); err != nil || !src.closed[r] {
			t.Fatalf("rank %d: Close: %v, closed %v", r, err, src.closed[r])
		}
		if err := rd.Close(); err != nil {
			t.Fatalf("second Close: %v", err)
		}
	}
}

// TestPack: an event that packs unpacks to itself, and the events a
// packedEvent cannot hold are not packed.
func TestPack(t *testing.T) {
	ev := func(set func(e *Event)) Event {
		e := NewEvent(Isend)
		set(&e)
		return e
	}
	cases := []struct {
		e    Event
		pack bool
	}{
		{ev(func(e *Event) { e.Partner, e.Tag, e.SendBytes, e.Request = 3, 7, 1<<40, 12 }), true},
		{ev(func(e *Event) { e.Kind, e.Partner, e.Tag, e.RecvBytes = Irecv, AnySource, AnyTag, -1 }), true},
		{ev(func(e *Event) { e.Kind, e.Compute = Compute, 1.5e9 }), true},
		{ev(func(e *Event) { e.Kind, e.Compute = Sleep, -0.25 }), true},
		{ev(func(e *Event) { e.Kind = Waitall }), true},
		{ev(func(e *Event) { e.Request = 1 << 32 }), false},
		{ev(func(e *Event) { e.SendBytes, e.RecvBytes = 1, 2 }), false},
		{ev(func(e *Event) { e.Kind, e.SendBytes, e.Compute = Allreduce, 8, 100 }), false},
		{ev(func(e *Event) { e.Kind, e.Requests = Waitall, []uint64{} }), false},
		{ev(func(e *Event) { e.SendType = TypeDouble }), false},
		{ev(func(e *Event) { e.Source = 2 }), false},
		{ev(func(e *Event) { e.Comm = 1 }), false},
		{ev(func(e *Event) { e.Region = 1 }), false},
		{ev(func(e *Event) { e.HasTime, e.Exit = true, 5 }), false},
	}
	for _, e := range sampleEvents() {
		_, ok := pack(&e)
		cases = append(cases, struct {
			e    Event
			pack bool
		}{e, ok})
	}
	for i, tc := range cases {
		p, ok := pack(&tc.e)
		if ok != tc.pack {
			t.Errorf("case %d (%v): packed %v, want %v", i, &tc.e, ok, tc.pack)
			continue
		}
		if ok {
			var back Event
			p.unpack(&back)
			if !reflect.DeepEqual(back, tc.e) {
				t.Errorf("case %d: %+v unpacks to %+v", i, tc.e, back)
			}
		}
	}
}
