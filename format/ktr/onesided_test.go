package ktr

import (
	"math"
	"testing"

	"kairos/trace"
)

// oneSided is a trace of one-sided and I/O events with their window or
// file (Event.Handle, codec bit 18), lock type, group and I/O time; a seed
// of FuzzOpen.
func oneSided() *trace.Trace {
	tr := trace.New(2, trace.NewMeta())
	for _, e := range []trace.Event{
		{Kind: trace.WinCreate, Handle: 1, Comm: 0, SendBytes: 1 << 20},
		{Kind: trace.WinLock, Handle: 1, Partner: 1, Tag: trace.LockExclusive},
		{Kind: trace.Put, Handle: math.MaxUint32, Partner: 1, SendBytes: 8192, Request: 77},
		{Kind: trace.WinStart, Handle: 1, NewComm: 3},
		{Kind: trace.FileWrite, Handle: 2, Tag: trace.IOCollective, SendBytes: 4096, Compute: 0.125,
			HasTime: true, Enter: 1e9, Exit: 2e9},
	} {
		if e.Partner == 0 {
			e.Partner = trace.NoRank
		}
		e.Source, e.SendType, e.RecvType = trace.NoRank, trace.DefaultType, trace.DefaultType
		tr.Ranks[0].Append(&e)
	}
	return tr
}

// TestOneSidedRoundTrip: one-sided and I/O events keep their fields.
func TestOneSidedRoundTrip(t *testing.T) {
	tr := oneSided()
	src, err := Open(writeTemp(t, tr, Options{}))
	if err != nil {
		t.Fatal(err)
	}
	sameTrace(t, src, tr)
}
