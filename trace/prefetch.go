package trace

import (
	"fmt"
	"math"
	"sync"
	"unsafe"
)

// Prefetch returns src with every rank's events read ahead by a goroutine
// of the rank's own, so that decoding (parsing a text format, say) runs
// on another core while the consumer works on the events already read.
// The readers of distinct ranks of src must be safe to use concurrently.
//
// Events travel between the goroutines in chunks of about chunk bytes,
// two a rank: a few kilobytes a rank, which the consumer reads
// sequentially. The common events (computations, point-to-point calls,
// waits on the world communicator) are fixed-size 24-byte records that
// the consumer copies out; the others are in the compact event codec.
// Position (when src's readers have one) reads the rank again from its
// start up to the current event: it is meant for error reports.
func Prefetch(src Source, chunk int) Source {
	return &prefetchSource{Source: src, chunk: max(chunk, 64)}
}

type prefetchSource struct {
	Source
	chunk int
}

// Unwrap returns the source read ahead.
func (s *prefetchSource) Unwrap() Source { return s.Source }

func (s *prefetchSource) OpenRank(r int) (Reader, error) {
	in, err := s.Source.OpenRank(r)
	if err != nil {
		return nil, err
	}
	p := &prefetchReader{
		src: s.Source, rank: r, in: in, index: -1,
		full: make(chan *eventChunk, 1),
		free: make(chan *eventChunk, 1),
		stop: make(chan struct{}),
		done: make(chan struct{}),
	}
	p.free <- newChunk(s.chunk)
	go p.fill(newChunk(s.chunk), s.chunk)
	return p, nil
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
	val     uint64 // the bits of Compute, or SendBytes, or RecvBytes if recv
	partner int32
	tag     int32
	request uint32
	kind    Kind
	flags   uint8
}

// Flags of a packedEvent.
const (
	pkCoded   = 1 << iota // the event is in the chunk's codec bytes
	pkRecv                // val is RecvBytes
	pkCompute             // val is Compute
)

// pack returns e as a packedEvent, or false if it has fields a packed
// event does not hold.
func pack(e *Event) (packedEvent, bool) {
	if e.SendType != DefaultType || e.RecvType != DefaultType || e.Source != NoRank ||
		e.Comm != WorldComm || e.NewComm != 0 || e.SendCounts != nil || e.RecvCounts != nil ||
		e.Requests != nil || e.HasTime || e.Enter != 0 || e.Exit != 0 || e.CallSite != 0 || e.Region != 0 ||
		e.Request > math.MaxUint32 {
		return packedEvent{}, false
	}
	p := packedEvent{partner: e.Partner, tag: e.Tag, request: uint32(e.Request), kind: e.Kind}
	switch {
	case e.Compute != 0:
		if e.SendBytes != 0 || e.RecvBytes != 0 {
			return packedEvent{}, false
		}
		p.val, p.flags = math.Float64bits(e.Compute), pkCompute
	case e.RecvBytes != 0:
		if e.SendBytes != 0 {
			return packedEvent{}, false
		}
		p.val, p.flags = uint64(e.RecvBytes), pkRecv
	default:
		p.val = uint64(e.SendBytes)
	}
	return p, true
}

// unpack sets e to the event p holds.
func (p *packedEvent) unpack(e *Event) {
	*e = Event{Kind: p.kind, SendType: DefaultType, RecvType: DefaultType, Partner: p.partner, Source: NoRank,
		Tag: p.tag, Request: uint64(p.request)}
	switch p.flags {
	case pkCompute:
		e.Compute = math.Float64frombits(p.val)
	case pkRecv:
		e.RecvBytes = int64(p.val)
	default:
		e.SendBytes = int64(p.val)
	}
}

// prefetchReader copies out or decodes the chunks its goroutine fills.
type prefetchReader struct {
	src   Source
	rank  int
	in    Reader // the filling goroutine's until done is closed
	cur   *eventChunk
	i     int // the next event's index in cur.ev
	off   int // and the next coded event's offset in cur.b
	ev    Event
	st    CodecState
	index int // of the current event in the rank
	err   error
	ended bool

	full, free chan *eventChunk
	stop, done chan struct{}
	closeOnce  sync.Once
}

func newChunk(size int) *eventChunk {
	return &eventChunk{ev: make([]packedEvent, 0, size/packedSize+1), b: make([]byte, 0, size/4)}
}

// packedSize is the size of a packedEvent, for the chunks' budget.
const packedSize = int(unsafe.Sizeof(packedEvent{}))

// fill reads the rank into chunks of about size bytes until its end or
// Close.
func (p *prefetchReader) fill(c *eventChunk, size int) {
	defer close(p.done)
	var st CodecState
	for {
		c.ev, c.b = c.ev[:0], c.b[:0]
		for len(c.ev)*packedSize+len(c.b) < size {
			if !p.in.Next() {
				c.end, c.err = true, p.in.Err()
				break
			}
			e := p.in.Event()
			pe, ok := pack(e)
			if !ok {
				pe.flags = pkCoded
				c.b = AppendEvent(c.b, e, &st)
			}
			c.ev = append(c.ev, pe)
		}
		select {
		case p.full <- c:
		case <-p.stop:
			return
		}
		if c.end {
			return
		}
		select {
		case c = <-p.free:
		case <-p.stop:
			return
		}
	}
}

func (p *prefetchReader) Next() bool {
	for !p.ended && (p.cur == nil || p.i >= len(p.cur.ev)) {
		if p.cur != nil {
			if p.cur.end {
				p.ended, p.err = true, p.cur.err
				break
			}
			p.free <- p.cur
		}
		p.cur, p.i, p.off = <-p.full, 0, 0
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
	var err error
	p.closeOnce.Do(func() {
		close(p.stop)
		<-p.done
		err = p.in.Close()
	})
	return err
}

// Position returns the position of the current event as the rank's own
// reader gives it, read again from the start ("" if it has none).
func (p *prefetchReader) Position() string {
	in, err := p.src.OpenRank(p.rank)
	if err != nil {
		return ""
	}
	defer in.Close()
	pos, ok := in.(Positioner)
	if !ok {
		return ""
	}
	for i := 0; i <= p.index && in.Next(); i++ {
	}
	return pos.Position()
}
