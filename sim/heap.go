package sim

import (
	"math"
	"math/bits"
)

// actionHeap orders the pending actions by date, ties in the order of
// their last update, as SimGrid's action heap (boost's stable pairing
// heap, where an update counts as a new insertion) pops them.
//
// Simulated actions often share their exact date (symmetric ranks compute
// and send alike), and a rescheduled action often keeps its date. So the
// actions are grouped in buckets by exact date, each a FIFO in update
// order (a doubly linked list through the actions' slots), and only the
// buckets are kept in a 4-ary min-heap by date. Every update unlinks the
// action and appends it to the tail of its date's bucket, which keeps each
// bucket in update order: the pop order is the total order of (date, last
// update), exactly that of a heap keyed by (date, sequence number), with
// O(1) work for an action joining an existing date.
//
// Actions are named by slot, an index given for life by register; the
// per-slot arrays are dense so that the links touch no action.
type actionHeap struct {
	bh     []bucketRef // 4-ary min-heap of the non-empty buckets by date
	b      []bucket    // buckets, by index
	free   []int32     // unused bucket indices
	byDate dateIndex   // bucket index of each date in bh
	last   int32       // the bucket used last (a cache), -1 for none
	n      int         // actions in the heap

	act  []*action // by slot
	link []link    // by slot: its bucket and neighbours
}

// link is a slot's bucket (-1 when not in the heap) and its neighbours in
// the bucket's FIFO (-1 at the ends): in one slice, so that an update
// indexes (and checks) it once, and at thousands of ranks misses in one
// array rather than two.
type link struct{ prev, next, bkt int32 }

// bucket is the FIFO of the actions due at one date.
type bucket struct {
	date       float64
	head, tail int32 // slots
	hi         int32 // index in actionHeap.bh
}

// bucketRef is a bucket's entry in the heap, with its date inline so that
// comparisons touch no bucket. The date is kept as its order key
// (dateOrder): integers compare without a branch, and down's choice of
// the least of four children, a branch on each date's comparison, was
// among the replay's most mispredicted branches.
type bucketRef struct {
	key uint64
	b   int32
}

// dateOrder maps dates to integers in the same order (the IEEE 754 bits,
// negatives reversed below the positives). NaN has no place: no date is
// one. -0 and +0 differ, but a date's bucket holds both (dateKey).
func dateOrder(d float64) uint64 {
	u := math.Float64bits(d)
	if u>>63 != 0 {
		return ^u
	}
	return u | 1<<63
}

const heapArity = 4 // down compares four children without a loop

// each calls f with every action in the heap, in no particular order.
func (h *actionHeap) each(f func(a *action)) {
	for _, ref := range h.bh {
		for i := h.b[ref.b].head; i >= 0; i = h.link[i].next {
			f(h.act[i])
		}
	}
}

// register gives a new action its slot.
func (h *actionHeap) register(a *action) {
	if len(h.act) == 0 {
		h.last = -1
	}
	a.slot = int32(len(h.act))
	h.act = append(h.act, a)
	h.link = append(h.link, link{-1, -1, -1})
}

// empty reports whether no action is pending.
func (h *actionHeap) empty() bool { return len(h.bh) == 0 }

// minDate returns the earliest date (the heap must not be empty).
func (h *actionHeap) minDate() float64 { return h.b[h.bh[0].b].date }

// top returns the action that pops first (the heap must not be empty).
func (h *actionHeap) top() *action { return h.act[h.b[h.bh[0].b].head] }

// dateOf returns a's date (a must be in the heap).
func (h *actionHeap) dateOf(a *action) float64 { return h.b[h.link[a.slot].bkt].date }

// contains reports whether a is in the heap.
func (h *actionHeap) contains(a *action) bool { return h.link[a.slot].bkt >= 0 }

// set schedules a at date, after every action already due then.
func (h *actionHeap) set(a *action, date float64) {
	slot := a.slot
	if cur := h.link[slot].bkt; cur >= 0 {
		b := &h.b[cur]
		if b.date == date {
			// Kept its date (a share re-solved unchanged, most
			// often): it moves to its bucket's tail, which stays.
			h.toTail(cur, slot)
			return
		}
		if b.head == slot && b.tail == slot {
			if other, at := h.find(date); other < 0 {
				// Alone at its date and alone at the new one (a
				// date moved by a rounding, most often): the
				// bucket takes the new date in place.
				h.redate(cur, date, at)
				return
			}
		}
		h.unlink(slot)
	}
	bi := h.bucketAt(date)
	b := &h.b[bi]
	h.link[slot] = link{prev: b.tail, next: -1, bkt: bi}
	if b.tail >= 0 {
		h.link[b.tail].next = slot
	} else {
		b.head = slot
	}
	b.tail = slot
	h.n++
}

// toTail moves the action of slot, in bucket bi, to the bucket's tail.
func (h *actionHeap) toTail(bi, slot int32) {
	b := &h.b[bi]
	if b.tail == slot {
		return
	}
	l := h.link[slot] // l.next >= 0: slot is not the tail
	if l.prev >= 0 {
		h.link[l.prev].next = l.next
	} else {
		b.head = l.next
	}
	h.link[l.next].prev = l.prev
	h.link[slot] = link{prev: b.tail, next: -1, bkt: bi}
	h.link[b.tail].next = slot
	b.tail = slot
}

// redate moves bucket bi, whose date no other bucket has, to date,
// whose entry goes at slot at of the index (find's).
func (h *actionHeap) redate(bi int32, date float64, at int) {
	b := &h.b[bi]
	later := date > b.date
	b.date = date
	h.index(at, date, bi) // (a rebuild of the index moves no bucket)
	i := int(b.hi)
	h.bh[i].key = dateOrder(date)
	if later {
		h.down(i)
	} else {
		h.up(i)
	}
}

// remove takes a out of the heap, if it is in.
func (h *actionHeap) remove(a *action) {
	if h.link[a.slot].bkt >= 0 {
		h.unlink(a.slot)
	}
}

// unlink takes the action of slot out of its bucket, and the bucket out of
// the heap once empty.
func (h *actionHeap) unlink(slot int32) {
	bi := h.link[slot].bkt
	b := &h.b[bi]
	p, n := h.link[slot].prev, h.link[slot].next
	if p >= 0 {
		h.link[p].next = n
	} else {
		b.head = n
	}
	if n >= 0 {
		h.link[n].prev = p
	} else {
		b.tail = p
	}
	h.link[slot].bkt = -1
	h.n--
	if b.head < 0 {
		h.dropBucket(bi)
	}
}

// bucketAt returns the bucket of date, creating it if needed.
func (h *actionHeap) bucketAt(date float64) int32 {
	if h.last >= 0 && h.b[h.last].date == date {
		return h.last
	}
	bi, at := h.find(date)
	if bi < 0 {
		if n := len(h.free); n > 0 {
			bi = h.free[n-1]
			h.free = h.free[:n-1]
		} else {
			bi = int32(len(h.b))
			h.b = append(h.b, bucket{})
		}
		h.b[bi] = bucket{date: date, head: -1, tail: -1, hi: int32(len(h.bh))}
		h.bh = append(h.bh, bucketRef{dateOrder(date), bi})
		h.up(len(h.bh) - 1)
		h.index(at, date, bi)
	}
	h.last = bi
	return bi
}

// dropBucket takes the empty bucket bi out of the heap.
func (h *actionHeap) dropBucket(bi int32) {
	b := &h.b[bi]
	if h.last == bi {
		h.last = -1
	}
	i := int(b.hi)
	last := len(h.bh) - 1
	if i != last {
		h.bh[i] = h.bh[last]
		h.b[h.bh[i].b].hi = int32(i)
	}
	h.bh = h.bh[:last]
	if i != last {
		x := h.bh[i].b
		h.down(i)
		if int(h.b[x].hi) == i {
			h.up(i) // not moved down: it may belong higher
		}
	}
	h.free = append(h.free, bi)
}

func (h *actionHeap) up(i int) {
	e := h.bh
	x := e[i]
	for i > 0 {
		p := (i - 1) / heapArity
		if x.key >= e[p].key {
			break
		}
		h.place(i, e[p])
		i = p
	}
	h.place(i, x)
}

func (h *actionHeap) down(i int) {
	e := h.bh
	n := len(e)
	x := e[i]
	for {
		first := heapArity*i + 1
		if first >= n {
			break
		}
		m := first // the least child
		if first+heapArity <= n {
			// All four children: the least of each pair, then of
			// the two, computed without a branch.
			ch := e[first : first+heapArity]
			a := below(ch[1].key, ch[0].key)
			b := 2 + below(ch[3].key, ch[2].key)
			m += a + below(ch[b].key, ch[a].key)*(b-a)
		} else {
			for c := first + 1; c < n; c++ {
				if e[c].key < e[m].key {
					m = c
				}
			}
		}
		if e[m].key >= x.key {
			break
		}
		h.place(i, e[m])
		i = m
	}
	h.place(i, x)
}

// below is 1 if x < y, else 0: a comparison made a number, without a
// branch.
func below(x, y uint64) int {
	if x < y {
		return 1
	}
	return 0
}

// place puts x at index i of the heap.
func (h *actionHeap) place(i int, x bucketRef) {
	h.bh[i] = x
	h.b[x.b].hi = int32(i)
}

// dateIndex maps dates to the buckets that hold them: an open-addressing
// table with linear probing, cheaper than a Go map. Its entries are never
// deleted: a bucket dropped, or moved to another date, leaves its entry,
// which a lookup finds stale (find checks the bucket), and which the
// next entry of its date overwrites in place. The table is rebuilt from
// the buckets in the heap once its entries, live or stale, pass a quarter
// of its slots. (An entry deleted as its bucket was dropped, the entries
// after it shifted back, took 3% of the noisy LU's replay, whose buckets
// mostly hold one action; without it, the replay takes 5% less CPU
// time.) Dates are keyed by their bits, -0 as +0 (the heap compares them
// equal).
type dateIndex struct {
	slots []dateSlot // power-of-two length
	used  int        // slots holding an entry, live or stale
	shift uint       // 64 - log2(len(slots))
}

type dateSlot struct {
	key uint64
	b   int32 // -1 when empty
}

func dateKey(d float64) uint64 {
	if d == 0 {
		return 0
	}
	return math.Float64bits(d)
}

func (x *dateIndex) home(k uint64) int { return int((k * 0x9e3779b97f4a7c15) >> x.shift) }

// find returns the bucket in the heap whose date is date, -1 if none, and
// the slot of the index where date's entry is, or goes.
func (h *actionHeap) find(date float64) (int32, int) {
	x := &h.byDate
	if x.slots == nil {
		x.reset(64)
	}
	k, mask := dateKey(date), len(x.slots)-1
	for i := x.home(k); ; i = (i + 1) & mask {
		sl := &x.slots[i]
		if sl.b < 0 {
			return -1, i
		}
		if sl.key == k {
			if b := &h.b[sl.b]; b.date == date && int(b.hi) < len(h.bh) && h.bh[b.hi].b == sl.b {
				return sl.b, i
			}
			return -1, i // stale: the slot takes the date's next entry
		}
	}
}

// index sets the entry of date, at slot at (find's), to bucket bi, which
// is in the heap with that date.
func (h *actionHeap) index(at int, date float64, bi int32) {
	x := &h.byDate
	sl := &x.slots[at]
	if sl.b < 0 {
		x.used++
	}
	*sl = dateSlot{dateKey(date), bi}
	if 4*x.used > len(x.slots) {
		h.rebuildIndex()
	}
}

// rebuildIndex makes the index anew from the buckets in the heap, in a
// table of at least 8 slots a bucket.
func (h *actionHeap) rebuildIndex() {
	x := &h.byDate
	size := len(x.slots)
	for size < 8*len(h.bh) {
		size *= 2
	}
	x.reset(size)
	mask := size - 1
	for _, ref := range h.bh {
		k := dateKey(h.b[ref.b].date)
		i := x.home(k)
		for x.slots[i].b >= 0 {
			i = (i + 1) & mask
		}
		x.slots[i] = dateSlot{k, ref.b}
		x.used++
	}
}

// reset empties x into size slots (a power of two).
func (x *dateIndex) reset(size int) {
	if cap(x.slots) >= size {
		x.slots = x.slots[:size]
	} else {
		x.slots = make([]dateSlot, size)
	}
	for i := range x.slots {
		x.slots[i].b = -1
	}
	x.used = 0
	x.shift = uint(64 - bits.TrailingZeros(uint(size)))
}
