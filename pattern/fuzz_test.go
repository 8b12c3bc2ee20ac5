package pattern

import (
	"testing"

	"kairos/trace"
)

// fuzzKinds are the kinds a fuzzed trace draws from.
var fuzzKinds = []trace.Kind{trace.Send, trace.Isend, trace.Recv, trace.Irecv, trace.Waitall, trace.Wait,
	trace.SendRecv, trace.Allreduce, trace.Bcast, trace.Barrier, trace.Compute, trace.Alltoallv}

// traceFromBytes turns fuzz input into a trace of up to 4 ranks: each
// group of 4 bytes is one event (rank, kind, partner in -2..5, region and
// timing), so that partners may be out of range and messages unmatched.
func traceFromBytes(b []byte, timed bool) *trace.Trace {
	meta := trace.NewMeta()
	meta.AddRegion("f", 0)
	meta.AddRegion("g", 1)
	tr := trace.New(1+int(len(b)%4), meta)
	at := make([]trace.Time, tr.NumRanks())
	for i := 0; i+4 <= len(b); i += 4 {
		r := int(b[i]) % tr.NumRanks()
		e := trace.NewEvent(fuzzKinds[int(b[i+1])%len(fuzzKinds)])
		e.Partner = int32(b[i+2]%8) - 2
		e.Source = int32(b[i+2]/8%8) - 2
		e.Tag = int32(b[i+3] % 3)
		e.Region = uint32(b[i+3] % 4)
		e.SendBytes, e.RecvBytes = int64(b[i+3]), int64(b[i+3])
		e.Request = uint64(b[i+2] % 3)
		if e.Kind == trace.Alltoallv {
			e.SendCounts = []int64{int64(b[i+3]), -1}
		}
		if timed {
			at[r] += trace.Time(b[i+3])
			e.HasTime, e.Enter, e.Exit = true, at[r], at[r]+trace.Time(b[i+2])
		}
		tr.Ranks[r].Append(&e)
	}
	return tr
}

// FuzzAnalyze checks that no trace makes the analysis panic or break its
// invariants: every call of a communication pattern instance is counted
// once, positions run 1..n, and phases tile the sequence.
func FuzzAnalyze(f *testing.F) {
	f.Add([]byte{0, 1, 1, 0, 1, 3, 0, 0, 0, 4, 0, 0, 1, 4, 0, 0}, true)
	f.Add([]byte{0, 7, 0, 1, 1, 7, 0, 1, 2, 7, 0, 1, 0, 2, 3, 2, 3, 0, 2, 2}, false)
	f.Add([]byte{0, 6, 11, 0, 1, 6, 10, 0, 0, 8, 0, 5, 1, 8, 1, 5, 1, 11, 0, 9}, true)
	// Issue 43: a pattern of many calls, whose word is summarised.
	long := make([]byte, 0, 400)
	for len(long) < 400 {
		long = append(long, 0, 1, 1, 0, 1, 3, 0, 0)
	}
	f.Add(long, false)
	// A ping-pong of 24 exchanges whose ranks would begin their loops at
	// their receives (align turns one of them); 385 bytes: 2 ranks.
	pp := make([]byte, 0, 385)
	for range 24 {
		pp = append(pp, 0, 0, 3, 12, 0, 2, 3, 204, 1, 2, 2, 204, 1, 0, 2, 12)
	}
	f.Add(append(pp, 0), true)
	f.Fuzz(func(t *testing.T, b []byte, timed bool) {
		if len(b) > 400 {
			b = b[:400]
		}
		a, err := Analyze(traceFromBytes(b, timed), DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		events := 0
		for i, in := range a.Sequence {
			if in.Position != i+1 || in.Pattern < 1 || in.Pattern > len(a.Comm) {
				t.Fatalf("instance %d: %+v", i, in)
			}
			events += in.Events
		}
		tiled := 0
		for _, p := range a.Process {
			tiled += len(p.Symbols) * len(p.Positions)
		}
		if events != tiled {
			t.Fatalf("%d calls in instances, %d in process-pattern instances", events, tiled)
		}
		next := 1
		for _, ph := range a.Phases {
			if ph.From != next || ph.To < ph.From {
				t.Fatalf("phases %+v", a.Phases)
			}
			next = ph.To + 1
		}
		if next != len(a.Sequence)+1 && len(a.Sequence) > 0 {
			t.Fatalf("phases end at %d of %d", next-1, len(a.Sequence))
		}
	})
}
