package sim

import "math/bits"

// idTable holds a rank's outstanding requests by the trace's request id,
// for the dependency-driven engine, which looks one up at every
// non-blocking call and at every wait: an open-addressing table, at most
// half full, probed linearly from a multiplicative hash of the id, whose
// removals shift the entries after them back (so that no tombstone is
// left). A trace numbers a rank's requests one after the other: their
// ids land in slots apart, where a search of a list of a stencil's eight
// outstanding requests compared half of them. Ids are not 0 (0 names no
// request, and marks a free slot).
type idTable struct {
	slots []idSlot // a power of two of them, or none
	n     int      // the ids held
	shift uint8    // 64 minus the bits of a slot's index
}

type idSlot struct {
	id uint64
	q  *dreq
}

// minIDSlots is the size of a table's first slots.
const minIDSlots = 16

// home returns id's first slot.
func (t *idTable) home(id uint64) int { return int(id * 0x9e3779b97f4a7c15 >> t.shift) }

// find returns the slot of id, or the free one that ends its probe.
func (t *idTable) find(id uint64) int {
	mask := len(t.slots) - 1
	i := t.home(id)
	for t.slots[i].id != 0 && t.slots[i].id != id {
		i = (i + 1) & mask
	}
	return i
}

// put makes q id's request and returns the one id had, nil if none.
func (t *idTable) put(id uint64, q *dreq) *dreq {
	if 2*(t.n+1) > len(t.slots) {
		t.grow()
	}
	s := &t.slots[t.find(id)]
	old := s.q
	if s.id == 0 {
		s.id = id
		t.n++
	}
	s.q = q
	return old
}

// take removes id and returns its request, nil if none.
func (t *idTable) take(id uint64) *dreq {
	if t.n == 0 {
		return nil
	}
	i := t.find(id)
	q := t.slots[i].q
	if t.slots[i].id == 0 {
		return nil
	}
	t.n--
	// Each entry after the hole, up to the next free slot, moves into it
	// unless its home slot lies after the hole.
	mask := len(t.slots) - 1
	for j := (i + 1) & mask; t.slots[j].id != 0; j = (j + 1) & mask {
		if h := t.home(t.slots[j].id); (j-h)&mask >= (j-i)&mask {
			t.slots[i] = t.slots[j]
			i = j
		}
	}
	t.slots[i] = idSlot{}
	return q
}

// clear removes every id.
func (t *idTable) clear() {
	clear(t.slots)
	t.n = 0
}

// grow doubles the slots (makes the first ones) and puts the ids back.
func (t *idTable) grow() {
	old := t.slots
	n := max(2*len(old), minIDSlots)
	t.slots, t.n = make([]idSlot, n), 0
	t.shift = uint8(64 - bits.Len(uint(n-1)))
	for _, s := range old {
		if s.id != 0 {
			t.put(s.id, s.q)
		}
	}
}
