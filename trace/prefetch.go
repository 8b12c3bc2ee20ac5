package trace

import (
	"fmt"
	"sync"
)

// Prefetch returns src with every rank's events read ahead by a goroutine
// of the rank's own, so that decoding (parsing a text format, say) runs
// on another core while the consumer works on the events already read.
// The readers of distinct ranks of src must be safe to use concurrently.
//
// Events travel between the goroutines in the compact event codec, in
// chunks of about chunk bytes, two a rank: a few kilobytes a rank, and
// the consumer decodes them from memory that is sequential and small.
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
		full: make(chan *codecChunk, 1),
		free: make(chan *codecChunk, 1),
		stop: make(chan struct{}),
		done: make(chan struct{}),
	}
	p.free <- &codecChunk{b: make([]byte, 0, s.chunk+s.chunk/4)}
	go p.fill(&codecChunk{b: make([]byte, 0, s.chunk+s.chunk/4)}, s.chunk)
	return p, nil
}

// codecChunk is encoded events; the last chunk of a rank has end set.
type codecChunk struct {
	b   []byte
	end bool
	err error // the reader's error, at the end
}

// prefetchReader decodes the chunks its goroutine fills.
type prefetchReader struct {
	src   Source
	rank  int
	in    Reader // the filling goroutine's until done is closed
	cur   *codecChunk
	off   int
	ev    Event
	st    CodecState
	index int // of the current event in the rank
	err   error
	ended bool

	full, free chan *codecChunk
	stop, done chan struct{}
	closeOnce  sync.Once
}

// fill encodes the rank into chunks of about size bytes until its end or
// Close.
func (p *prefetchReader) fill(c *codecChunk, size int) {
	defer close(p.done)
	var st CodecState
	for {
		c.b = c.b[:0]
		for len(c.b) < size {
			if !p.in.Next() {
				c.end, c.err = true, p.in.Err()
				break
			}
			c.b = AppendEvent(c.b, p.in.Event(), &st)
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
	for !p.ended && (p.cur == nil || p.off >= len(p.cur.b)) {
		if p.cur != nil {
			if p.cur.end {
				p.ended, p.err = true, p.cur.err
				break
			}
			p.free <- p.cur
		}
		p.cur, p.off = <-p.full, 0
	}
	if p.ended {
		return false
	}
	n, err := DecodeEvent(p.cur.b[p.off:], &p.ev, &p.st)
	if err != nil { // the codec cannot read what it wrote: a bug
		p.ended, p.err = true, fmt.Errorf("prefetch: rank %d event %d: %w", p.rank, p.index+1, err)
		return false
	}
	p.off += n
	p.index++
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
