package trace

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"unsafe"
)

// Prefetch returns src with every rank's events read ahead, so that
// decoding (parsing a text format, say) runs on other cores while the
// consumer works on the events already read. The readers of distinct
// ranks of src must be safe to use concurrently.
//
// Each rank has two chunks of about chunk bytes of events: the consumer
// reads one while the other is filled. A few worker goroutines (one fewer
// than GOMAXPROCS, at least one) fill the chunks in the order the
// consumer released them, and the consumer fills a chunk itself when no
// worker has started on it yet. A goroutine a rank would be simpler, but
// thousands of runnable goroutines cost the consumer its turns, and their
// stacks cost memory: the analytic replay of the 1,024-rank stencil took
// 0.337 to 0.349 s that way against 0.325 s, and at 4,096 ranks 2.04 to
// 2.66 s and 117 to 121 MB against 1.76 to 1.86 s and 97 MB
// (BENCHMARKS.md).
//
// A worker starts only once a batch of readers waits (see batchOf), and
// fills them all before it stops: a worker woken for every chunk cost the
// scheduler's wake-ups and the idle core's spinning (HPCC's exact replay
// on 64 ranks: 44,466 context switches, 4,009 in batches; BENCHMARKS.md).
// Until then the consumer fills the chunks it reaches itself.
//
// The common events (computations, point-to-point calls, waits on the
// world communicator) are fixed-size 24-byte records that the consumer
// copies out; the others are in the compact event codec. Position (when
// src's readers have one) reads the rank again from its start up to the
// current event: it is meant for error reports.
func Prefetch(src Source, chunk int) Source {
	chunk = max(chunk, 64)
	pool := &fillPool{max: max(runtime.GOMAXPROCS(0)-1, 1), batch: batchOf(chunk, src.NumRanks())}
	return &prefetchSource{Source: src, chunk: chunk, pool: pool}
}

// batchBytes is about how much a worker fills for each time it starts.
const batchBytes = 128 << 10

// batchOf returns how many readers with chunks of the given size must wait
// before a worker starts: batchBytes of chunks, and at most half the
// ranks, so that the consumer does not fill most chunks itself while they
// wait. On the noisy LU, LAMMPS' melt, Quantum ESPRESSO and HPCC (64
// ranks, 4 KiB chunks, batches of 32), the exact replay took 4 to 9% less
// CPU time than with a worker started for every chunk, and no more wall
// time; at 4,096 ranks the analytic replay 3 to 7% less (BENCHMARKS.md).
func batchOf(chunk, ranks int) int {
	return max(min(batchBytes/chunk, ranks/2), 1)
}

type prefetchSource struct {
	Source
	chunk int
	pool  *fillPool
}

// Unwrap returns the source read ahead.
func (s *prefetchSource) Unwrap() Source { return s.Source }

func (s *prefetchSource) OpenRank(r int) (Reader, error) {
	in, err := s.Source.OpenRank(r)
	if err != nil {
		return nil, err
	}
	p := &prefetchReader{
		src: s.Source, rank: r, in: in, index: -1, size: s.chunk, pool: s.pool,
		filled: make(chan struct{}, 1),
	}
	p.request(newChunk(s.chunk))
	return p, nil
}

// fillPool is a queue of readers with a chunk to fill and the workers
// that fill them. Workers start as readers are queued, once batch of them
// wait, up to max, and stop when the queue is empty, so that a source
// never read to its end leaves no goroutine behind.
type fillPool struct {
	mu      sync.Mutex
	queue   []*prefetchReader
	head    int
	running int
	max     int
	batch   int
}

func (q *fillPool) push(p *prefetchReader) {
	q.mu.Lock()
	if q.head > 64 && q.head > len(q.queue)/2 {
		n := copy(q.queue, q.queue[q.head:])
		clear(q.queue[n:])
		q.queue, q.head = q.queue[:n], 0
	}
	q.queue = append(q.queue, p)
	start := q.running < q.max && len(q.queue)-q.head >= q.batch
	if start {
		q.running++
	}
	q.mu.Unlock()
	if start {
		go q.work()
	}
}

func (q *fillPool) work() {
	for {
		q.mu.Lock()
		if q.head == len(q.queue) {
			q.queue, q.head = q.queue[:0], 0
			q.running--
			q.mu.Unlock()
			return
		}
		p := q.queue[q.head]
		q.queue[q.head] = nil
		q.head++
		q.mu.Unlock()
		p.fillPending()
	}
}

// eventChunk is a rank's next events: the common ones as fixed-size
// records (which the consumer copies out faster than it decodes the
// codec), the others in the compact codec. The last chunk of a rank has
// end set.
type eventChunk struct {
	ev  []packedEvent
	b   []byte
	end bool
	err error // the reader's error, at the end
}

// packedEvent is an event whose fields other than these are at their
// zero or default values, in 24 bytes (see pack), or, with pkCoded set, a
// mark that the next event of the chunk's codec bytes comes here. Small,
// because the consumer's core reads it from the other core's cache.
type packedEvent struct {
	val     uint64 // the bits of Compute, or SendBytes, or RecvBytes if recv, or Source
	partner int32
	tag     int32
	request uint32
	kind    Kind
	flags   uint8
	dtype   Datatype // SendType, or RecvType if recv
}

// Flags of a packedEvent: what val holds (SendBytes without one).
const (
	pkCoded   = 1 << iota // the event is in the chunk's codec bytes
	pkRecv                // val is RecvBytes, dtype RecvType
	pkCompute             // val is Compute
	pkSource              // val is Source (a wait's or a test's)
)

// pack sets p to e packed and reports true, or reports false if e has
// fields a packed event does not hold: it holds one amount (bytes on one
// side, with that side's datatype, or flops) or a wait's source, a
// request id below 2^32 and no reduction operation. The point-to-point
// calls, computations and waits of SimGrid's traces (whose lines give a
// datatype) all pack. It sets p's
// fields one by one, in place: a packedEvent built and returned was
// copied with loads that waited on its narrow stores (a store-forwarding
// stall), a tenth of the read-ahead's time.
func pack(e *Event, p *packedEvent) bool {
	if e.Comm != WorldComm || e.NewComm != 0 || e.Handle != 0 || e.SendCounts != nil || e.RecvCounts != nil ||
		e.Requests != nil || e.HasTime || e.Enter != 0 || e.Exit != 0 || e.CallSite != 0 || e.Region != 0 ||
		e.Request > math.MaxUint32 || e.Op != OpNone {
		return false
	}
	onlyOne := e.SendType == DefaultType && e.RecvType == DefaultType && e.SendBytes == 0 && e.RecvBytes == 0
	switch {
	case e.Compute != 0:
		if !onlyOne || e.Source != NoRank {
			return false
		}
		p.val, p.flags, p.dtype = math.Float64bits(e.Compute), pkCompute, DefaultType
	case e.Source != NoRank:
		if !onlyOne {
			return false
		}
		p.val, p.flags, p.dtype = uint64(uint32(e.Source)), pkSource, DefaultType
	case e.RecvBytes != 0 || e.RecvType != DefaultType:
		if e.SendBytes != 0 || e.SendType != DefaultType {
			return false
		}
		p.val, p.flags, p.dtype = uint64(e.RecvBytes), pkRecv, e.RecvType
	default:
		p.val, p.flags, p.dtype = uint64(e.SendBytes), 0, e.SendType
	}
	p.partner, p.tag, p.request, p.kind = e.Partner, e.Tag, uint32(e.Request), e.Kind
	return true
}

// packedBase is the event every packed event starts from.
var packedBase = Event{SendType: DefaultType, RecvType: DefaultType, Source: NoRank}

// unpack sets e to the event p holds. It copies packedBase, then sets the
// fields one by one: a composite literal is built on the stack and copied
// with wide loads that wait on its narrow stores (a store-forwarding
// stall).
func (p *packedEvent) unpack(e *Event) {
	*e = packedBase
	e.Kind, e.Partner, e.Tag, e.Request = p.kind, p.partner, p.tag, uint64(p.request)
	switch p.flags {
	case pkCompute:
		e.Compute = math.Float64frombits(p.val)
	case pkRecv:
		e.RecvBytes, e.RecvType = int64(p.val), p.dtype
	case pkSource:
		e.Source = int32(uint32(p.val))
	default:
		e.SendBytes, e.SendType = int64(p.val), p.dtype
	}
}

// prefetchReader copies out or decodes the chunks the pool fills.
type prefetchReader struct {
	src   Source
	rank  int
	pool  *fillPool
	size  int
	cur   *eventChunk
	i     int // the next event's index in cur.ev
	off   int // and the next coded event's offset in cur.b
	ev    Event
	st    CodecState
	index int // of the current event in the rank
	err   error
	ended bool

	touched uint8 // what touch read, kept so that its loads are not dropped

	// pos reads the rank again for Position, at event posIdx: positions
	// asked in order (a check's problems) cost one reading in all.
	pos    Reader
	posIdx int

	// in and fst (the codec state of the chunks' coded events) belong to
	// whoever fills a chunk: the goroutine that took pending.
	in  Reader
	fst CodecState

	// The chunk other than cur is pending (to fill), being filled by a
	// worker (filling), or ready.
	mu      sync.Mutex
	pending *eventChunk
	ready   *eventChunk
	filling bool
	queued  bool // in the pool's queue
	closed  bool
	filled  chan struct{} // a worker's fill ended (a token, possibly stale)
}

func newChunk(size int) *eventChunk {
	return &eventChunk{ev: make([]packedEvent, 0, size/packedSize+1), b: make([]byte, 0, size/4)}
}

// packedSize is the size of a packedEvent, for the chunks' budget.
const packedSize = int(unsafe.Sizeof(packedEvent{}))

// request makes c the chunk to fill next and queues the reader.
func (p *prefetchReader) request(c *eventChunk) {
	p.mu.Lock()
	p.pending = c
	queue := !p.queued
	p.queued = true
	p.mu.Unlock()
	if queue {
		p.pool.push(p)
	}
}

// fillPending fills the pending chunk, if the consumer has not taken it.
// Workers call it.
func (p *prefetchReader) fillPending() {
	p.mu.Lock()
	p.queued = false
	c := p.pending
	if c == nil || p.closed {
		p.mu.Unlock()
		return
	}
	p.pending, p.filling = nil, true
	p.mu.Unlock()
	p.fill(c)
	p.mu.Lock()
	p.ready, p.filling = c, false
	p.mu.Unlock()
	select {
	case p.filled <- struct{}{}:
	default:
	}
}

// fill reads the rank's next events into c, about p.size bytes of them,
// up to the rank's end.
func (p *prefetchReader) fill(c *eventChunk) {
	c.ev, c.b = c.ev[:0], c.b[:0]
	for len(c.ev)*packedSize+len(c.b) < p.size {
		if !p.in.Next() {
			c.end, c.err = true, p.in.Err()
			return
		}
		e := p.in.Event()
		if len(c.ev) == cap(c.ev) {
			c.ev = append(c.ev, packedEvent{})[:len(c.ev)]
		}
		c.ev = c.ev[:len(c.ev)+1]
		if pe := &c.ev[len(c.ev)-1]; !pack(e, pe) {
			pe.flags = pkCoded
			c.b = AppendEvent(c.b, e, &p.fst)
		}
	}
}

// nextChunk makes the chunk after cur current, filling it here if no
// worker has started on it, and hands the one read to the pool.
func (p *prefetchReader) nextChunk() {
	old := p.cur
	for {
		p.mu.Lock()
		if c := p.ready; c != nil {
			p.cur, p.ready = c, nil
			p.mu.Unlock()
			break
		}
		if c := p.pending; c != nil {
			p.pending = nil
			p.mu.Unlock()
			p.fill(c)
			p.cur = c
			break
		}
		p.mu.Unlock()
		<-p.filled
	}
	p.i, p.off = 0, 0
	p.touch()
	if !p.cur.end {
		if old == nil {
			// The second chunk, made only for a rank that needs it: at
			// 4,096 ranks of a few lines, most fit in one.
			old = newChunk(p.size)
		}
		p.request(old)
	}
}

// touch reads a byte of each cache line of the current chunk's records in
// one pass of loads that do not wait on each other, so that a chunk filled
// on another core comes into this core's cache at once, rather than a miss
// at a time as Next reaches each line with other ranks' work in between
// (which the hardware's stream prefetch, with a stream a rank, does not
// follow). The exact replay of the 64-rank stencil took 3 to 4% less time
// (BENCHMARKS.md).
func (p *prefetchReader) touch() {
	var t uint8
	ev := p.cur.ev
	for i := 0; i < len(ev); i += 64 / packedSize {
		t |= ev[i].flags
	}
	p.touched = t
}

func (p *prefetchReader) Next() bool {
	for !p.ended && (p.cur == nil || p.i >= len(p.cur.ev)) {
		if p.cur != nil && p.cur.end {
			p.ended, p.err = true, p.cur.err
			break
		}
		p.nextChunk()
	}
	if p.ended {
		return false
	}
	pe := &p.cur.ev[p.i]
	p.i++
	p.index++
	if pe.flags != pkCoded {
		pe.unpack(&p.ev)
		return true
	}
	n, err := DecodeEvent(p.cur.b[p.off:], &p.ev, &p.st)
	if err != nil { // the codec cannot read what it wrote: a bug
		p.ended, p.err = true, fmt.Errorf("prefetch: rank %d event %d: %w", p.rank, p.index, err)
		return false
	}
	p.off += n
	return true
}

func (p *prefetchReader) Event() *Event { return &p.ev }

func (p *prefetchReader) Err() error { return p.err }

// Close stops the reading ahead and closes the rank's reader.
func (p *prefetchReader) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed, p.pending = true, nil
	for p.filling {
		p.mu.Unlock()
		<-p.filled
		p.mu.Lock()
	}
	p.mu.Unlock()
	if p.pos != nil {
		p.pos.Close()
	}
	return p.in.Close()
}

// Position returns the position of the current event as the rank's own
// reader gives it ("" if it has none), from a second reader of the rank
// that reads on from the last position asked, or again from the start
// for an earlier event.
func (p *prefetchReader) Position() string {
	if p.pos != nil && p.posIdx > p.index {
		p.pos.Close()
		p.pos = nil
	}
	if p.pos == nil {
		in, err := p.src.OpenRank(p.rank)
		if err != nil {
			return ""
		}
		if _, ok := in.(Positioner); !ok {
			in.Close()
			return ""
		}
		p.pos, p.posIdx = in, -1
	}
	for p.posIdx < p.index && p.pos.Next() {
		p.posIdx++
	}
	return p.pos.(Positioner).Position()
}
