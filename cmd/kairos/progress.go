package main

import (
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"kairos/trace"
)

// bar is a progress bar on stderr; a nil *bar does nothing, so that quiet
// runs need no special cases.
type bar struct{ pb *progressbar.ProgressBar }

// progress returns a progress bar on stderr for long work, or nil when
// stderr is not a terminal.
func progress(total int64, what string) *bar {
	if !term.IsTerminal(int(os.Stderr.Fd())) {
		return nil
	}
	return &bar{progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(os.Stderr),
		progressbar.OptionSetDescription(what),
		progressbar.OptionShowCount(),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish())}
}

// Add advances the bar by n.
func (b *bar) Add(n int) {
	if b != nil {
		b.pb.Add(n)
	}
}

// Finish completes and clears the bar.
func (b *bar) Finish() {
	if b != nil {
		b.pb.Finish()
	}
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

// countingPositioner is a countingReader over a reader of a text format,
// passing on its positions.
type countingPositioner struct {
	*countingReader
	trace.Positioner
}
