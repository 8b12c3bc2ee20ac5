package trace

import (
	"math"
	"slices"
)

// Equal reports whether e and o are the same event, every field compared
// (times, call site and region included).
func (e *Event) Equal(o *Event) bool {
	return e.Kind == o.Kind && e.SendType == o.SendType && e.RecvType == o.RecvType &&
		e.Partner == o.Partner && e.Source == o.Source && e.Tag == o.Tag &&
		e.Comm == o.Comm && e.NewComm == o.NewComm && e.Handle == o.Handle &&
		e.SendBytes == o.SendBytes && e.RecvBytes == o.RecvBytes && e.Request == o.Request &&
		sameFloat(e.Compute, o.Compute) && e.Op == o.Op &&
		e.Enter == o.Enter && e.Exit == o.Exit && e.HasTime == o.HasTime &&
		e.CallSite == o.CallSite && e.Region == o.Region &&
		slices.Equal(e.SendCounts, o.SendCounts) && slices.Equal(e.RecvCounts, o.RecvCounts) && slices.Equal(e.Requests, o.Requests)
}

// sameFloat compares bits: NaN is itself, 0 and -0 differ.
func sameFloat(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }

// SameReplay reports whether a and b give a replay the same input: the
// same ranks holding the same events (Event.Equal), the same
// communicators and default datatype, the same reason not to replay, if
// any. A deterministic replay of one is then the replay of the other, and
// need not be run twice. It stops at the first difference.
func SameReplay(a, b Source) (bool, error) {
	ma, mb := a.Meta(), b.Meta()
	if a.NumRanks() != b.NumRanks() || ma.DefaultType != mb.DefaultType || ma.Attrs[AttrNoReplay] != mb.Attrs[AttrNoReplay] ||
		!slices.EqualFunc(ma.Comms, mb.Comms, sameComm) {
		return false, nil
	}
	for r := range a.NumRanks() {
		if same, err := sameRank(a, b, r); !same || err != nil {
			return false, err
		}
	}
	return true, nil
}

func sameComm(x, y Comm) bool { return x.ID == y.ID && slices.Equal(x.Members, y.Members) }

// sameRank reports whether rank r reads the same events from a and b.
func sameRank(a, b Source, r int) (bool, error) {
	ra, err := a.OpenRank(r)
	if err != nil {
		return false, err
	}
	defer ra.Close()
	rb, err := b.OpenRank(r)
	if err != nil {
		return false, err
	}
	defer rb.Close()
	for {
		okA, okB := ra.Next(), rb.Next()
		if !okA || !okB {
			if err := ra.Err(); err != nil {
				return false, err
			}
			if err := rb.Err(); err != nil {
				return false, err
			}
			return okA == okB, nil
		}
		if !ra.Event().Equal(rb.Event()) {
			return false, nil
		}
	}
}
