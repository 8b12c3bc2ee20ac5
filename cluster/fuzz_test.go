package cluster

import (
	"testing"

	"kairos/trace"
)

// FuzzFromReduced reads a reduced trace's metadata from arbitrary
// attributes: an error or a trace whose every event can be read, never a
// panic.
func FuzzFromReduced(f *testing.F) {
	f.Add("4", "1 <1 0 4 1>", "")
	f.Add("4", "1 <1 0 2 1>", "3 <1 2 2 1>")
	f.Add("3", "0 <1 0 1 0> <1 2 1 0>", "1 <1 1 1 0>")
	f.Add("4", "x", "")
	f.Add("-1", "0 <1 0 1 0>", "")
	f.Add("2", "0 <1 0 3 1>", "1 <1 1 1 0>")
	f.Add("2", "0 <1 0 1 0>", "1 <1 0 1 0>")
	f.Add("2000000000", "0 <1 0 1 0>", "1 <1 1 1 0>")
	f.Add("1000000", "0 <1 0 1 0>", "1 <1 999999 1 0>") // issue 43: ranks claimed, not held
	f.Fuzz(func(t *testing.T, ranks, g0, g1 string) {
		send := call(trace.Send, 1, 1, 8)
		tr := traceOf([]trace.Event{send}, []trace.Event{call(trace.Recv, 2, 0, 8)})
		m := tr.Meta()
		m.Attrs[attrRanks], m.Attrs[attrGroup+"0"], m.Attrs[attrGroup+"1"] = ranks, g0, g1
		x, err := FromReduced(tr)
		if err != nil || x.NumRanks() > 64 {
			return
		}
		_ = trace.ForEach(x, func(_, _ int, _ *trace.Event) error { return nil })
	})
}
