package trace

import (
	"slices"
	"testing"
)

// TestShareCallTime: the events of one call add up to its duration, the
// last spanning it.
func TestShareCallTime(t *testing.T) {
	for _, n := range []int{0, 1, 2, 5} {
		evs := make([]Event, n)
		ShareCallTime(evs, 10, 30)
		var total Time
		for i, e := range evs {
			if e.Enter != 10 || i < n-1 && e.Exit != 10 {
				t.Errorf("%d events: event %d at %v..%v, want 10..10", n, i, e.Enter, e.Exit)
			}
			total += e.Exit - e.Enter
		}
		if n > 0 && (evs[n-1].Exit != 30 || total != 20) {
			t.Errorf("%d events: the last ends at %v, the durations add up to %v; want 30 and 20", n, evs[n-1].Exit, total)
		}
	}
}

// TestSendRecvEvents: a sendrecv of one tag is one event; of two, an
// isend, an irecv and their waits, sharing the call's time.
func TestSendRecvEvents(t *testing.T) {
	send, recv := NewEvent(Send), NewEvent(Recv)
	send.Partner, send.Tag, send.SendBytes = 1, 3, 8
	recv.Partner, recv.Tag, recv.RecvBytes = 2, 3, 16
	for _, e := range []*Event{&send, &recv} {
		e.Enter, e.Exit, e.HasTime = 5, 9, true
	}
	one := SendRecvEvents(nil, send, recv)
	if len(one) != 1 || one[0].Kind != SendRecv || one[0].Source != 2 || one[0].RecvBytes != 16 || one[0].Exit != 9 {
		t.Errorf("one tag: %v", one)
	}
	recv.Tag = 4
	four := SendRecvEvents(nil, send, recv)
	var kinds []Kind
	for _, e := range four {
		kinds = append(kinds, e.Kind)
	}
	if want := []Kind{Isend, Irecv, Wait, Wait}; !slices.Equal(kinds, want) {
		t.Fatalf("two tags: %v, want %v", kinds, want)
	}
	if four[1].Tag != 4 || four[3].Request != SplitRecvRequest || four[2].Exit != 5 || four[3].Enter != 5 || four[3].Exit != 9 {
		t.Errorf("two tags: %v", four)
	}
}
