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

// prefetched is a listSource read ahead, every rank open, with the
// number of events read from each (one more once its end was seen).
type prefetched struct {
	t     *testing.T
	chunk int
	src   *listSource
	rds   []Reader
	n     []int
}

func openPrefetched(t *testing.T, ranks, chunk int) *prefetched {
	p := &prefetched{t: t, chunk: chunk, src: newListSource(ranks), n: make([]int, ranks)}
	pre := Prefetch(p.src, chunk)
	for r := 0; r < ranks; r++ {
		rd, err := pre.OpenRank(r)
		if err != nil {
			t.Fatal(err)
		}
		p.rds = append(p.rds, rd)
	}
	return p
}

// step reads rank r's next event and checks it; it reports false once
// the rank ended (and then checks that it ended cleanly, in its place).
func (p *prefetched) step(r int) bool {
	want := p.src.events[r]
	if p.n[r] > len(want) {
		return false
	}
	rd := p.rds[r]
	if !rd.Next() {
		if p.n[r] != len(want) || rd.Err() != nil {
			p.t.Fatalf("chunk %d rank %d: ended after %d of %d events: %v", p.chunk, r, p.n[r], len(want), rd.Err())
		}
		p.n[r]++
		return false
	}
	if got := rd.Event(); !reflect.DeepEqual(got, &want[p.n[r]]) {
		p.t.Fatalf("chunk %d rank %d event %d: got %+v, want %+v", p.chunk, r, p.n[r], got, &want[p.n[r]])
	}
	p.n[r]++
	return true
}

// close closes every reader and checks that the source's were closed.
func (p *prefetched) close() {
	for r, rd := range p.rds {
		if err := rd.Close(); err != nil || !p.src.closed[r] {
			p.t.Fatalf("chunk %d rank %d: Close: %v, closed %v", p.chunk, r, err, p.src.closed[r])
		}
	}
}

// TestPrefetchSameEvents reads ranks in turn, one event of each at a time,
// through chunks smaller and larger than a rank.
func TestPrefetchSameEvents(t *testing.T) {
	for _, chunk := range []int{0, 100, 1000, 1 << 20} {
		p := openPrefetched(t, 4, chunk)
		for live := true; live; {
			live = false
			for r := range p.rds {
				live = p.step(r) || live
			}
		}
		p.close()
	}
}

// TestPrefetchManyRanks reads far more ranks than there are workers, in
// runs of random length in a random order of ranks, so that the consumer
// finds chunks ready, fills others itself and waits for others still
// being filled; then every worker must have stopped.
func TestPrefetchManyRanks(t *testing.T) {
	base := runtime.NumGoroutine()
	p := openPrefetched(t, 200, 100)
	rng := rand.New(rand.NewPCG(1, 2))
	for left := len(p.rds); left > 0; {
		r := rng.IntN(len(p.rds))
		if p.n[r] > len(p.src.events[r]) {
			continue // ended
		}
		for k := rng.IntN(12); k >= 0; k-- {
			if !p.step(r) {
				left--
				break
			}
		}
	}
	p.close()
	for deadline := time.Now().Add(5 * time.Second); runtime.NumGoroutine() > base; {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines after reading every rank, %d before", runtime.NumGoroutine(), base)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestPrefetchPosition asks positions as a check does, at events in
// increasing order: each is the rank's own reader's, and the rank is read
// again once in all, not once a position (which made a check of 600,000
// problems quadratic).
func TestPrefetchPosition(t *testing.T) {
	src := &countingOpens{listSource: newListSource(2)}
	rd, _ := Prefetch(src, 0).OpenRank(1)
	for idx := range 60 {
		if !rd.Next() {
			t.Fatalf("rank 1 ended at event %d", idx)
		}
		if idx%7 != 6 {
			continue
		}
		if got, want := rd.(Positioner).Position(), fmt.Sprintf("rank1:%d", idx); got != want {
			t.Errorf("position %q, want %q", got, want)
		}
	}
	if src.opens != 2 {
		t.Errorf("rank opened %d times, want 2 (the prefetch's and the positions')", src.opens)
	}
	rd.Close()
	if !src.closed[1] {
		t.Error("rank 1 not closed")
	}
}

// countingOpens counts the readers opened.
type countingOpens struct {
	*listSource
	opens int
}

func (s *countingOpens) OpenRank(r int) (Reader, error) {
	s.opens++
	return s.listSource.OpenRank(r)
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

// TestFillPoolBatch: no worker starts until a batch of readers waits; then
// one starts and empties the queue.
func TestFillPoolBatch(t *testing.T) {
	q := &fillPool{max: 1, batch: 3}
	for i := range 3 {
		q.push(&prefetchReader{filled: make(chan struct{}, 1)})
		q.mu.Lock()
		waiting, running := len(q.queue)-q.head, q.running
		q.mu.Unlock()
		if i < 2 && (waiting != i+1 || running != 0) {
			t.Fatalf("after %d pushes: %d waiting, %d workers; want %d and none", i+1, waiting, running, i+1)
		}
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		q.mu.Lock()
		waiting, running := len(q.queue)-q.head, q.running
		q.mu.Unlock()
		if waiting == 0 && running == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a batch pushed: %d still waiting, %d workers", waiting, running)
		}
	}
}

// TestBatchOf: a batch is batchBytes of chunks, at most half the ranks,
// at least one reader.
func TestBatchOf(t *testing.T) {
	for _, c := range []struct{ chunk, ranks, want int }{
		{4096, 64, 32}, {4096, 16, 8}, {1024, 1024, 128}, {512, 4096, 256}, {1 << 20, 64, 1}, {4096, 1, 1},
	} {
		if got := batchOf(c.chunk, c.ranks); got != c.want {
			t.Errorf("batchOf(%d, %d) = %d, want %d", c.chunk, c.ranks, got, c.want)
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
		{ev(func(e *Event) { e.SendType, e.SendBytes = TypeDouble, 16 }), true},
		{ev(func(e *Event) { e.Kind, e.RecvType, e.RecvBytes = Irecv, TypeDouble, 16 }), true},
		{ev(func(e *Event) { e.Kind, e.RecvType = Recv, TypeDouble }), true},
		{ev(func(e *Event) { e.Kind, e.Source, e.Partner, e.Tag, e.Request = Wait, AnySource, 3, 7, 9 }), true},
		{ev(func(e *Event) { e.Kind, e.Source, e.Partner = Test, 2, 1 }), true},
		{ev(func(e *Event) { e.SendType, e.RecvType = TypeDouble, TypeDouble }), false},
		{ev(func(e *Event) { e.SendType, e.RecvBytes = TypeDouble, 8 }), false},
		{ev(func(e *Event) { e.Kind, e.Source, e.SendBytes = SendRecv, 2, 8 }), false},
		{ev(func(e *Event) { e.Kind, e.Source, e.SendType = SendRecv, 2, TypeDouble }), false},
		{ev(func(e *Event) { e.Kind, e.Source, e.Compute = Compute, 2, 1 }), false},
		{ev(func(e *Event) { e.Kind, e.Compute, e.SendType = Compute, 1, TypeDouble }), false},
		{ev(func(e *Event) { e.Comm = 1 }), false},
		{ev(func(e *Event) { e.Region = 1 }), false},
		{ev(func(e *Event) { e.HasTime, e.Exit = true, 5 }), false},
	}
	for _, e := range sampleEvents() {
		var p packedEvent
		ok := pack(&e, &p)
		cases = append(cases, struct {
			e    Event
			pack bool
		}{e, ok})
	}
	for i, tc := range cases {
		var p packedEvent
		ok := pack(&tc.e, &p)
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
