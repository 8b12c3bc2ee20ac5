package trace

// The requests of a sendrecv that SendRecvEvents splits, numbered apart
// from any trace's (a rank's counter, or a handle of 32 bits): both
// complete in the call, so that every split sendrecv reuses them.
const (
	SplitSendRequest uint64 = 1<<63 | 1
	SplitRecvRequest uint64 = 1<<63 | 2
)

// SendRecvEvents appends to dst the events of one MPI_Sendrecv from its
// halves: send, a Send (Partner the destination, its Tag and bytes), and
// recv, a Recv (Partner the source, its Tag and bytes). Halves of one tag
// are one SendRecv (Partner the destination, Source the source), the
// model's SendRecv having one tag for both. Halves of different tags
// (FFTW's transposes: a tag for each pair of ranks) are what Kairos'
// tracer writes in TI for them: an Isend and an Irecv of their own tags,
// then a Wait for each. Read as one SendRecv of the send's tag, such a
// receive waited for a message no rank sent, and the replay deadlocked.
func SendRecvEvents(dst []Event, send, recv Event) []Event {
	if send.Tag == recv.Tag {
		send.Kind, send.Source, send.RecvBytes, send.RecvType = SendRecv, recv.Partner, recv.RecvBytes, recv.RecvType
		return append(dst, send)
	}
	send.Kind, send.Request = Isend, SplitSendRequest
	recv.Kind, recv.Request = Irecv, SplitRecvRequest
	wait := func(req uint64) Event { // in the call, as its halves
		w := NewEvent(Wait)
		w.Request = req
		w.Enter, w.Exit, w.HasTime, w.CallSite, w.Region = send.Enter, send.Exit, send.HasTime, send.CallSite, send.Region
		return w
	}
	n := len(dst)
	dst = append(dst, send, recv, wait(SplitSendRequest), wait(SplitRecvRequest))
	ShareCallTime(dst[n:], send.Enter, send.Exit)
	return dst
}

// ShareCallTime gives the events one MPI call is read as (a Startall's
// requests, a sendrecv's halves and waits) the call's times once: each
// but the last starts and ends where the call enters, the last spans the
// call. Their durations then add up to the call's, as the time between
// them, none, is no computation (a Startall of 600 receives counted 600
// times its duration as MPI time when each spanned the call).
func ShareCallTime(evs []Event, enter, exit Time) {
	for i := range evs {
		evs[i].Enter, evs[i].Exit = enter, enter
	}
	if n := len(evs); n > 0 {
		evs[n-1].Exit = exit
	}
}
