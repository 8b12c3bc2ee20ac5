package dumpi

import (
	"encoding/binary"
	"slices"
)

// groupTable holds the MPI groups the ranks make, each distinct group of
// world ranks once, under an id (from 1), and remembers each group call's
// result by its operands. Every rank of a trace of P ranks makes the same
// few groups, each of up to P members: computed and kept for each rank,
// they cost P^2 time and memory (opening a trace of 4,096 ranks that each
// excluded a rank from the world's group and made a communicator of the
// rest took 20 s and 456 MB).
type groupTable struct {
	ids  map[string]uint32 // members, 4 bytes each -> id
	list [][]int32         // id-1 -> members (nil: the empty group)
	ops  map[groupCall]uint32
	comm map[uint32]uint32 // communicator id -> its group's id
	key  []byte            // intern's, reused
}

// groupCall is a group call's operands: its label, its groups and its
// rank arguments (4 bytes each).
type groupCall struct {
	label int
	g, g2 uint32
	ranks string
}

// intern returns the id of the group of members g (which it may keep).
func (t *groupTable) intern(g []int32) uint32 {
	t.key = t.key[:0]
	for _, w := range g {
		t.key = binary.LittleEndian.AppendUint32(t.key, uint32(w))
	}
	if id, ok := t.ids[string(t.key)]; ok {
		return id
	}
	if t.ids == nil {
		t.ids = map[string]uint32{}
	}
	if len(g) == 0 {
		g = nil
	}
	t.list = append(t.list, g)
	id := uint32(len(t.list))
	t.ids[string(t.key)] = id
	return id
}

// members returns the world ranks of group id, nil for the empty group
// and for 0 (none); not to be modified.
func (t *groupTable) members(id uint32) []int32 {
	if id == 0 {
		return nil
	}
	return t.list[id-1]
}

// ofComm returns the id of the group of communicator comm, whose members
// are members.
func (t *groupTable) ofComm(comm uint32, members []int32) uint32 {
	if id, ok := t.comm[comm]; ok {
		return id
	}
	if t.comm == nil {
		t.comm = map[uint32]uint32{}
	}
	id := t.intern(members)
	t.comm[comm] = id
	return id
}

// op returns the id of the group o's group call makes of groups g and g2
// (g2 0 where it has none), 0 where the call fails.
func (t *groupTable) op(o *commOp, g, g2 uint32) uint32 {
	k := groupCall{label: o.label, g: g, g2: g2}
	if len(o.ranks) > 0 {
		b := make([]byte, 0, 4*len(o.ranks))
		for _, r := range o.ranks {
			b = binary.LittleEndian.AppendUint32(b, uint32(r))
		}
		k.ranks = string(b)
	}
	if id, ok := t.ops[k]; ok {
		return id
	}
	var id uint32
	if ng, ok := groupOp(o, t.members(g), t.members(g2)); ok {
		id = t.intern(ng)
	}
	if t.ops == nil {
		t.ops = map[groupCall]uint32{}
	}
	t.ops[k] = id
	return id
}

// groupOp computes the world ranks of the group a group call creates.
func groupOp(o *commOp, g, g2 []int32) ([]int32, bool) {
	switch o.label {
	case lGroupIncl:
		var ng []int32
		for _, i := range o.ranks {
			if i < 0 || int(i) >= len(g) {
				return nil, false
			}
			ng = append(ng, g[i])
		}
		return ng, true
	case lGroupExcl:
		return exclude(g, o.ranks), true
	case lGroupRangeIncl, lGroupRangeExcl:
		idx, ok := expandRanges(o.ranks, len(g))
		if !ok {
			return nil, false
		}
		if o.label == lGroupRangeExcl {
			return exclude(g, idx), true
		}
		ng := make([]int32, len(idx))
		for k, i := range idx {
			ng[k] = g[i]
		}
		return ng, true
	case lGroupUnion:
		in := setOf(g)
		ng := slices.Clone(g)
		for _, w := range g2 {
			if _, ok := in[w]; !ok {
				ng = append(ng, w)
			}
		}
		return ng, true
	case lGroupIntersect, lGroupDiff:
		in2 := setOf(g2)
		var ng []int32
		for _, w := range g {
			if _, ok := in2[w]; ok == (o.label == lGroupIntersect) {
				ng = append(ng, w)
			}
		}
		return ng, true
	}
	return nil, false
}

// setOf returns the world ranks of g as a set. (Testing membership in
// the slice made a group call on a group of P ranks cost P^2, and every
// rank makes it: 20 s to open a trace of 4,096 ranks.)
func setOf(g []int32) map[int32]struct{} {
	in := make(map[int32]struct{}, len(g))
	for _, w := range g {
		in[w] = struct{}{}
	}
	return in
}

// exclude returns g without the members at the indexes idx (those out of
// range ignored).
func exclude(g, idx []int32) []int32 {
	drop := make([]bool, len(g))
	for _, i := range idx {
		if i >= 0 && int(i) < len(g) {
			drop[i] = true
		}
	}
	var ng []int32
	for i, w := range g {
		if !drop[i] {
			ng = append(ng, w)
		}
	}
	return ng
}

// expandRanges turns (first, last, stride) triples into group indexes.
func expandRanges(tr []int32, size int) ([]int32, bool) {
	if len(tr)%3 != 0 {
		return nil, false
	}
	var idx []int32
	for k := 0; k < len(tr); k += 3 {
		first, last, stride := tr[k], tr[k+1], tr[k+2]
		if stride == 0 {
			return nil, false
		}
		for i := first; (stride > 0 && i <= last) || (stride < 0 && i >= last); i += stride {
			if i < 0 || int(i) >= size || len(idx) > size {
				return nil, false
			}
			idx = append(idx, i)
		}
	}
	return idx, true
}
