package prsd

import (
	"hash/fnv"
	"testing"

	"kairos/trace"
)

// TestShapeSignatures checks Signatures against the papers' definitions
// taken item by item: the call-path signature as Bahmani and Mueller's XOR
// of the items' signatures times their position mod 10 plus 1 (a loop's
// from its counts' encoding, hashed with the standard library's FNV-1a),
// and ACURDION's loop signature as the average count of the loops of each
// height, 16 bits a height.
func TestShapeSignatures(t *testing.T) {
	rep := func(n int, s ...uint64) []uint64 {
		var out []uint64
		for range n {
			out = append(out, s...)
		}
		return out
	}
	cat := func(parts ...[]uint64) []uint64 {
		var out []uint64
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	nest := rep(3, 1, 2)
	for i, n := range []int{2, 2, 2, 4} {
		nest = rep(n, cat([]uint64{uint64(10 + i)}, nest)...)
	}
	for _, c := range []struct {
		name  string
		sites []uint64
		loop  uint64
	}{
		{"calls", []uint64{1, 2, 3}, 0},
		{"a loop of 3", cat([]uint64{1}, rep(3, 2, 3), []uint64{4}), 3},
		{"loops of 4 and 6 at height 1", cat(rep(4, 2), []uint64{9}, rep(6, 3)), 5},
		{"a nest 2 of 5", rep(2, cat([]uint64{7}, rep(5, 2, 3))...), 5 | 2<<16},
		{"a nest of heights 1 to 5", nest, 3 | 2<<16 | 2<<32 | 3<<48}, // heights 4 and 5 averaged
	} {
		s := NewShape(nil)
		for _, site := range c.sites {
			s.Add(&trace.Event{Kind: trace.Send, CallSite: site})
		}
		s.Finish()
		callPath, loop := s.Signatures()
		if loop != c.loop || s.LoopSignature() != loop {
			t.Errorf("%s: loop signature %#x (LoopSignature %#x), want %#x", c.name, loop, s.LoopSignature(), c.loop)
		}
		if want := referenceCallPath(s.seq); callPath != want || s.CallPath() != want {
			t.Errorf("%s: call-path signature %#x (CallPath %#x), want %#x", c.name, callPath, s.CallPath(), want)
		}
	}
}

// referenceCallPath is the call-path signature of items, written out.
func referenceCallPath(items []*rnode) uint64 {
	var sig uint64
	pos := 0
	var walk func([]*rnode)
	walk = func(items []*rnode) {
		for _, n := range items {
			v := StackSignature(n.kind, n.site)
			if n.isLoop() {
				counts := n.counts.finish()
				h := fnv.New64a()
				h.Write(counts.AppendBinary(nil))
				v = mix(0x9e3779b97f4a7c15, h.Sum64()) | 1
			}
			sig ^= v * uint64(pos%10+1)
			pos++
			if n.isLoop() {
				walk(n.body)
			}
		}
	}
	walk(items)
	return sig
}
