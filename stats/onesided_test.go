package stats

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"kairos/trace"
)

// TestOneSidedAndIO: rank 0 puts 8 KiB to 1 twice and gets 1 KiB from
// it; rank 1 fetches-and-adds 8 bytes at rank 0 and writes 4 KiB to a
// file, reads 2 KiB.
func TestOneSidedAndIO(t *testing.T) {
	put := event(trace.Put, 1, 8192, nil)
	get := event(trace.Get, 1, 0, func(e *trace.Event) { e.RecvBytes = 1024 })
	fop := event(trace.GetAccumulate, 0, 8, func(e *trace.Event) { e.RecvBytes = 8 })
	w := event(trace.FileWrite, trace.NoRank, 4096, nil)
	r := event(trace.FileRead, trace.NoRank, 0, func(e *trace.Event) { e.RecvBytes = 2048 })
	tr := trace.New(2, trace.NewMeta())
	for _, e := range []trace.Event{put, put, get} {
		tr.Ranks[0].Append(&e)
	}
	for _, e := range []trace.Event{fop, w, r} {
		tr.Ranks[1].Append(&e)
	}
	s, err := Collect(tr, 0)
	if err != nil {
		t.Fatal(err)
	}
	if s.OneSidedOps != 4 || s.OneSidedBytes != 2*8192+1024+16 || s.IOOps != 2 || s.IOBytesRead != 2048 || s.IOBytesWritten != 4096 {
		t.Errorf("one-sided %d ops %d B, I/O %d ops %d B read %d B written", s.OneSidedOps, s.OneSidedBytes, s.IOOps, s.IOBytesRead, s.IOBytesWritten)
	}
	want := []Pair{{Src: 0, Dst: 1, Messages: 2 + 1, Bytes: 2*8192 + 8}, {Src: 1, Dst: 0, Messages: 2, Bytes: 1024 + 8}}
	if !reflect.DeepEqual(s.OneSidedMatrix, want) {
		t.Errorf("one-sided matrix %+v, want %+v", s.OneSidedMatrix, want)
	}
	if s.P2PMessages != 0 {
		t.Errorf("%d point-to-point messages, want none", s.P2PMessages)
	}
	var b bytes.Buffer
	if err := s.WriteText(&b, false); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"one-sided transfers      4", "MPI-IO bytes written     4096", "top one-sided pairs by bytes"} {
		if !strings.Contains(b.String(), line) {
			t.Errorf("text lacks %q:\n%s", line, b.String())
		}
	}
}
