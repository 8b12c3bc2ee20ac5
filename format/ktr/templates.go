package ktr

import "kairos/trace"

// tmplTable numbers a chunk's distinct structure events in the order
// they first come: an open-addressing table of their hashes
// (trace.HashEvent), each found again by comparing the events
// (trace.SameEvent). Keying a Go map with each event's bytes took more
// than a quarter of the writing of a .ktr (1.16 of 4.07 s in reduce of
// HPCC on 64 ranks, a sixth of its time).
//
// The event that followed an event last is tried first, without a hash:
// a program's iterations repeat their events in order (of the events of
// a .ktr written again, the noisy LU's 98% are found so, SMG2000's 73%,
// HPCC's and LAMMPS melt's about half; converting HPCC's then takes 1.7%
// fewer instructions, the noisy LU's 12%).
type tmplTable struct {
	slots []tmplSlot    // a power of two, at most half full
	evs   []trace.Event // by number, vectors their own
	next  []uint32      // by number: the event that followed it last, plus 1 (0: none yet)
	last  uint32        // the event found or added last in the chunk, plus 1 (0: none)
	gen   uint32        // the chunk's: a slot of another is empty
}

type tmplSlot struct {
	hash uint64
	gen  uint32
	n    uint32 // the event's number
}

// len is the number of distinct events.
func (t *tmplTable) len() int { return len(t.evs) }

// find returns e's number, if it has one.
func (t *tmplTable) find(e *trace.Event) (uint32, bool) {
	if len(t.evs) == 0 {
		return 0, false
	}
	if t.last > 0 {
		if n := t.next[t.last-1]; n > 0 && trace.SameEvent(&t.evs[n-1], e) {
			t.last = n
			return n - 1, true
		}
	}
	h := trace.HashEvent(e)
	mask := len(t.slots) - 1
	for i := int(h) & mask; ; i = (i + 1) & mask {
		sl := &t.slots[i]
		if sl.gen != t.gen {
			return 0, false
		}
		if sl.hash == h && trace.SameEvent(&t.evs[sl.n], e) {
			t.follow(sl.n)
			return sl.n, true
		}
	}
}

// follow records that event n comes next.
func (t *tmplTable) follow(n uint32) {
	if t.last > 0 {
		t.next[t.last-1] = n + 1
	}
	t.last = n + 1
}

// add numbers e, which find did not find, and returns its number.
func (t *tmplTable) add(e *trace.Event) uint32 {
	if 2*(len(t.evs)+1) > len(t.slots) {
		t.grow()
	}
	n := uint32(len(t.evs))
	c := *e
	c.SendCounts, c.RecvCounts, c.Requests = clip(e.SendCounts), clip(e.RecvCounts), clip(e.Requests)
	t.evs = append(t.evs, c)
	t.next = append(t.next, 0)
	t.put(trace.HashEvent(e), n)
	t.follow(n)
	return n
}

// clip returns a copy of v, nil if v is nil.
func clip[T int64 | uint64](v []T) []T {
	if v == nil {
		return nil
	}
	return append(make([]T, 0, len(v)), v...)
}

// put adds number n of hash h to the slots.
func (t *tmplTable) put(h uint64, n uint32) {
	mask := len(t.slots) - 1
	i := int(h) & mask
	for t.slots[i].gen == t.gen {
		i = (i + 1) & mask
	}
	t.slots[i] = tmplSlot{hash: h, gen: t.gen, n: n}
}

// grow doubles the slots and puts the chunk's events back.
func (t *tmplTable) grow() {
	old, gen := t.slots, t.gen
	t.slots = make([]tmplSlot, max(2*len(old), 64))
	t.gen = 1 // new slots: none of an earlier chunk
	for _, sl := range old {
		if sl.gen == gen {
			t.put(sl.hash, sl.n)
		}
	}
}

// reset empties the table for the next chunk, keeping its room.
func (t *tmplTable) reset() {
	clear(t.evs) // their vectors go
	t.evs, t.next, t.last = t.evs[:0], t.next[:0], 0
	if t.gen++; t.gen == 0 { // wrapped: a slot of 2^32 chunks ago would look current
		clear(t.slots)
		t.gen = 1
	}
}
