package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"kairos/trace"
)

// TestAfterBars: output written through afterBars first clears the bars
// shown, so that it does not land on a bar's line.
func TestAfterBars(t *testing.T) {
	var term, out bytes.Buffer
	b := newBar(&term, -1, "events read")
	b.start = time.Now().Add(-time.Second) // past the first redraw's delay
	b.Add(5)
	barsMu.Lock()
	bars = append(bars, b)
	barsMu.Unlock()
	if _, err := (afterBars{&out}).Write([]byte("result\n")); err != nil {
		t.Fatal(err)
	}
	if !b.stopped || len(bars) != 0 {
		t.Errorf("the bar is not finished before the output (finished %v, %d bars left)", b.stopped, len(bars))
	}
	if s := term.String(); !strings.HasPrefix(s, "\r\x1b[Kevents read: 5 (") || !strings.HasSuffix(s, "\r\x1b[K") || out.String() != "result\n" {
		t.Errorf("terminal %q, output %q", s, out.String())
	}
	b.Add(5) // a finished bar stays cleared
	if s := term.String(); !strings.HasSuffix(s, "\r\x1b[K") {
		t.Errorf("a finished bar was drawn again: %q", s)
	}
}

// TestBarThrottle: a bar is first drawn a tenth of a second after it
// starts (quick work shows none), then at most every tenth of a second,
// with its total where known.
func TestBarThrottle(t *testing.T) {
	var term bytes.Buffer
	b := newBar(&term, 10, "ranks")
	b.Add(1)
	if term.Len() != 0 {
		t.Fatalf("drawn at once: %q", term.String())
	}
	b.start = time.Now().Add(-time.Second)
	b.Add(1)
	b.Add(1) // within the throttle: not drawn
	if s := term.String(); !strings.HasPrefix(s, "\r\x1b[Kranks: 2/10 (20%, ") || strings.Count(s, "\r") != 1 {
		t.Errorf("terminal %q", s)
	}
	b.Finish()
	if s := term.String(); !strings.HasSuffix(s, "\r\x1b[K") {
		t.Errorf("not cleared: %q", s)
	}
	var quiet bytes.Buffer
	q := newBar(&quiet, -1, "x")
	q.Add(3)
	q.Finish()
	if quiet.Len() != 0 {
		t.Errorf("a bar never drawn wrote %q", quiet.String())
	}
}

// TestCountingPassesOn: the progress bar's wrapper keeps what the source
// and its readers offer signing: several ranks read at once, requests
// skipped.
func TestCountingPassesOn(t *testing.T) {
	tr := trace.New(1, trace.NewMeta())
	e := trace.NewEvent(trace.Isend)
	e.Partner, e.Request = 0, 7
	tr.Ranks[0].Append(&e)
	src := &countingSource{Source: tr, bar: &bar{}}
	if !src.ConcurrentRanks() {
		t.Error("an in-memory trace counted: not concurrent")
	}
	rd, err := src.OpenRank(0)
	if err != nil {
		t.Fatal(err)
	}
	trace.Skim(rd, trace.SkipRequests)
	if !rd.Next() || rd.Event().Request != 0 {
		t.Errorf("skimmed: request %d, want 0", rd.Event().Request)
	}
}
