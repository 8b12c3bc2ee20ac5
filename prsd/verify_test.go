package prsd

import (
	"errors"
	"strings"
	"testing"

	"kairos/trace"
)

// verifySource is a trace of 3 ranks, each computing then sending to the
// next and receiving from the one before, 4 times, then finalizing;
// change may alter rank r's i-th event (the computations included) or
// drop it (false).
func verifySource(change func(r, i int, e *trace.Event) bool) *trace.Trace {
	tr := trace.New(3, trace.NewMeta())
	for r := range 3 {
		var evs []trace.Event
		for range 4 {
			c, s, v := trace.NewEvent(trace.Compute), trace.NewEvent(trace.Send), trace.NewEvent(trace.Recv)
			c.Compute = 1e6
			s.Partner, s.SendBytes, s.Tag = int32((r+1)%3), 64, 7
			v.Partner, v.RecvBytes, v.Tag = int32((r+2)%3), 64, 7
			evs = append(evs, c, s, v)
		}
		evs = append(evs, trace.NewEvent(trace.Finalize))
		for i := range evs {
			if change == nil || change(r, i, &evs[i]) {
				tr.Ranks[r].Append(&evs[i])
			}
		}
	}
	return tr
}

// TestVerifyFindsDifferences: a source that differs from the one a
// compressed trace was built from in a call's parameter or kind, in a
// call more or fewer, or in the flops before a call fails Verify, which
// names the rank and the call; the same source passes.
func TestVerifyFindsDifferences(t *testing.T) {
	comp, err := Build(verifySource(nil), nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		change func(r, i int, e *trace.Event) bool
		want   string
	}{
		{"same", nil, ""},
		{"tag", func(r, i int, e *trace.Event) bool {
			if r == 1 && i == 7 {
				e.Tag = 8
			}
			return true
		}, "rank 1 call 4 is"},
		{"kind", func(r, i int, e *trace.Event) bool {
			if r == 2 && e.Kind == trace.Finalize {
				e.Kind = trace.Barrier
			}
			return true
		}, "rank 2 call 8 is"},
		{"call fewer", func(r, i int, e *trace.Event) bool { return r != 0 || i != 12 }, "rank 0 has more calls at call 8"},
		{"flops", func(r, i int, e *trace.Event) bool {
			if r == 2 && i == 3 {
				e.Compute *= 2
			}
			return true
		}, "rank 2 computes 2e+06 flops before its call 2, 1e+06 read back"},
	} {
		err := Verify(verifySource(c.change), comp)
		if c.want == "" && err != nil || c.want != "" && (!errors.Is(err, ErrNotLossless) || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: Verify: %v, want %q", c.name, err, c.want)
		}
	}
	// A call more in the source: rank 0's finalize, which the compressed
	// trace was built without.
	fewer, err := Build(verifySource(func(r, i int, e *trace.Event) bool { return r != 0 || i != 12 }), nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := Verify(verifySource(nil), fewer); !errors.Is(err, ErrNotLossless) || !strings.Contains(err.Error(), "rank 0 has fewer calls at call 8") {
		t.Errorf("call more: Verify: %v", err)
	}
}

// TestVerifyRanks: a source of other ranks than the compressed trace's
// is refused.
func TestVerifyRanks(t *testing.T) {
	comp, err := Build(verifySource(nil), nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	other := trace.New(2, trace.NewMeta())
	if err := Verify(other, comp); !errors.Is(err, ErrNotLossless) {
		t.Errorf("Verify: %v", err)
	}
}
