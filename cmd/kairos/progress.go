package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/term"

	"kairos/trace"
)

// bar is a progress line on stderr: what is being done, how much of it
// (of how much, where known) and at what rate, redrawn at most every
// tenth of a second. A nil *bar does nothing, so that quiet runs need no
// special cases. Its methods may be called from several goroutines.
type bar struct {
	mu      sync.Mutex
	w       io.Writer
	what    string
	total   int64 // -1: not known
	n       int64
	start   time.Time
	drawn   time.Time // the last redraw; zero: never drawn
	spins   int
	stopped bool
}

// barThrottle is the least time between two redraws of a bar.
const barThrottle = 100 * time.Millisecond

// progress returns a progress bar on stderr for long work (total units,
// -1 if not known), or nil when stderr is not a terminal.
func progress(total int64, what string) *bar {
	if !term.IsTerminal(int(os.Stderr.Fd())) {
		return nil
	}
	return newBar(os.Stderr, total, what)
}

func newBar(w io.Writer, total int64, what string) *bar {
	return &bar{w: w, what: what, total: total, start: time.Now()}
}

// Add advances the bar by n.
func (b *bar) Add(n int) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.n += int64(n)
	if now := time.Now(); !b.stopped && now.Sub(b.start) >= barThrottle && now.Sub(b.drawn) >= barThrottle {
		b.drawn = now
		b.draw(now)
	}
}

// draw writes the bar's line over the previous one.
func (b *bar) draw(now time.Time) {
	rate := float64(b.n) / now.Sub(b.start).Seconds()
	if b.total >= 0 {
		fmt.Fprintf(b.w, "\r\x1b[K%s: %d/%d (%.0f%%, %.0f/s)", b.what, b.n, b.total, 100*float64(b.n)/float64(max(b.total, 1)), rate)
		return
	}
	b.spins++
	fmt.Fprintf(b.w, "\r\x1b[K%s: %d (%.0f/s) %c", b.what, b.n, rate, `|/-\`[b.spins%4])
}

// Finish clears the bar's line, if it was drawn, and stops it.
func (b *bar) Finish() {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.drawn.IsZero() && !b.stopped {
		fmt.Fprint(b.w, "\r\x1b[K")
	}
	b.stopped = true
}

// bars are the progress bars shown by this run, cleared when it ends.
var (
	barsMu sync.Mutex
	bars   []*bar
)

// finishProgress clears every progress bar this run showed.
func finishProgress() {
	barsMu.Lock()
	defer barsMu.Unlock()
	for _, b := range bars {
		b.Finish()
	}
	bars = nil
}

// afterBars is a writer that clears the progress bars before it writes,
// so that a verb's output never lands on a bar's line.
type afterBars struct{ w io.Writer }

func (a afterBars) Write(p []byte) (int, error) {
	finishProgress()
	return a.w.Write(p)
}

// progressEvery is how many events a reader reads between two updates of
// the bar, so that counting costs nothing measurable.
const progressEvery = 1 << 16

// eventProgress returns src unchanged when stderr is not a terminal, and
// otherwise a Source whose readers count the events read on a spinner (the
// total is not known before reading).
func eventProgress(src trace.Source, what string) trace.Source {
	b := progress(-1, "events read from "+what)
	if b == nil {
		return src
	}
	barsMu.Lock()
	bars = append(bars, b)
	barsMu.Unlock()
	return &countingSource{Source: src, bar: b}
}

type countingSource struct {
	trace.Source
	bar *bar
}

// Unwrap returns the source counted.
func (s *countingSource) Unwrap() trace.Source { return s.Source }

func (s *countingSource) OpenRank(r int) (trace.Reader, error) {
	rd, err := s.Source.OpenRank(r)
	if err != nil {
		return nil, err
	}
	c := &countingReader{Reader: rd, bar: s.bar}
	if p, ok := rd.(trace.Positioner); ok {
		return &countingPositioner{countingReader: c, Positioner: p}, nil
	}
	return c, nil
}

type countingReader struct {
	trace.Reader
	bar *bar
	n   int
}

func (r *countingReader) Next() bool {
	if !r.Reader.Next() {
		r.bar.Add(r.n)
		r.n = 0
		return false
	}
	if r.n++; r.n == progressEvery {
		r.bar.Add(r.n)
		r.n = 0
	}
	return true
}

// ConcurrentRanks reports whether the source counted may have several
// ranks read at once (the bar is safe for that).
func (s *countingSource) ConcurrentRanks() bool { return trace.ConcurrentRanks(s.Source) }

// Skim passes on to the reader counted which fields it may leave unset.
func (r *countingReader) Skim(f trace.Skip) { trace.Skim(r.Reader, f) }

// countingPositioner is a countingReader over a reader of a text format,
// passing on its positions.
type countingPositioner struct {
	*countingReader
	trace.Positioner
}
