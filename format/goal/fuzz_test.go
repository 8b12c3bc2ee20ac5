package goal

import (
	"bytes"
	"testing"

	"kairos/trace"
)

// FuzzWrite writes traces made of arbitrary events (the fuzz input read
// as the compact event codec, ranks split at zero bytes): the writer
// must return an error or a schedule LogGOPSim's grammar accepts, with
// every dependency on an earlier label, and never panic.
func FuzzWrite(f *testing.F) {
	seed := func(events ...trace.Event) {
		var data []byte
		var st trace.CodecState
		for _, e := range events {
			data = trace.AppendEvent(data, &e, &st)
		}
		f.Add(data)
	}
	ev := func(k trace.Kind, set func(e *trace.Event)) trace.Event {
		e := trace.NewEvent(k)
		set(&e)
		return e
	}
	seed(ev(trace.Compute, func(e *trace.Event) { e.Compute = 1e6 }),
		ev(trace.Isend, func(e *trace.Event) { e.Partner, e.SendBytes, e.Request = 1, 10, 3 }),
		ev(trace.Waitall, func(e *trace.Event) {}))
	seed(ev(trace.Alltoallv, func(e *trace.Event) { e.SendCounts, e.RecvCounts = []int64{1, 2, 3}, []int64{3, 2, 1} }),
		ev(trace.Bcast, func(e *trace.Event) { e.Partner, e.SendBytes = 2, 5 }),
		ev(trace.Recv, func(e *trace.Event) { e.Partner, e.Tag, e.RecvBytes = trace.AnySource, trace.AnyTag, -1 }))
	// Issue 43: amounts the readers refuse, met by a writer anyway.
	seed(ev(trace.Compute, func(e *trace.Event) { e.Compute = -1e6 }),
		ev(trace.Sleep, func(e *trace.Event) { e.Compute = 1e300 }),
		ev(trace.Send, func(e *trace.Event) { e.Partner, e.SendBytes = 1, -1020 }))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr := trace.New(3, trace.NewMeta())
		var st trace.CodecState
		var e trace.Event
		for r, off := 0, 0; off < len(data); {
			n, err := trace.DecodeEvent(data[off:], &e, &st)
			if err != nil {
				if r++; r == 3 {
					break
				}
				off++
				st = trace.CodecState{}
				continue
			}
			off += n
			tr.Ranks[r].Append(&e)
		}
		var b bytes.Buffer
		if err := Write(&b, tr, Options{}); err != nil {
			return
		}
		parse(t, b.String())
	})
}
