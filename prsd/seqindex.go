package prsd

import "math/bits"

// seqIndex indexes a compressor's sequence of items for fold, which looks
// for the shortest length l (up to maxBody) at which the sequence's tail
// of l items repeats either the body of a loop just before it or the l
// items before it. Trying every length at every item, signing HPCC's 64
// ranks (10.2 M events, calls that fold into many short loops) spent 62%
// of its time folding, 6 times its reading. The index gives the only
// lengths that can repeat:
//
//   - a new loop of length l > 1 needs the two items l before the last
//     two to be their identities: the previous positions of the pair of
//     identities that ends at each position, chained (prev), give them;
//     of length 1, the item before the last to be the last's identity;
//   - an iteration more of a loop needs a loop whose body is as long as
//     the items after it: the loops are chained by the position where
//     an iteration after them would end (endAt, nextEnd).
//
// (HPCC's sequences hold a loop every other item: a scan of the loops
// within maxBody items tried 31 a call, 1 in 70 of the right length.)
// Identities are unique among calls and loops (Interner), so equal
// identities are equal bodies, of equal lengths.
type seqIndex struct {
	keys    []itemKey // by position
	prev    []int32   // by position: the previous position of its pair (pairKey), -1 if none
	lastAt  posTable  // by pair: its last position, -1 if none
	slot    []int32   // by position: its pair's slot in lastAt, for truncate
	nextEnd []int32   // by position, of a loop: the previous loop of its end, -1 if none
	endAt   []int32   // by end (a loop's position, plus 1 and its body's length): the last loop of it, -1 if none
	// sums are the items' identities hashed as a polynomial, by prefix
	// (sums[p]: the first p), so that the hash of any run of items is
	// two loads (window); bodies, by position, is a loop's body's hash.
	// Different hashes are different items: most lengths fail there,
	// before try's call and its loads of the nodes.
	sums   []uint64
	bodies []uint64
}

// hashBase is the polynomial's base (odd), hashPow its powers.
const hashBase = 0x9e3779b97f4a7c15

var hashPow = func() (p [maxBody + 1]uint64) {
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * hashBase
	}
	return p
}()

// window is the hash of the items at positions a to b-1 (b-a at most
// maxBody).
func (x *seqIndex) window(a, b int) uint64 {
	return x.sums[b] - x.sums[a]*hashPow[b-a]
}

// itemKey is what fold compares of an item of the sequence: its identity
// and its body's length (0: a call).
type itemKey struct {
	id, body int32
}

// push appends an item; of a loop (body > 0), h is its body's hash
// (window's, of the items it was made of).
func (x *seqIndex) push(id int32, body int, h uint64) {
	p := int32(len(x.keys))
	if p == 0 {
		x.sums = append(x.sums[:0], 0)
	}
	x.sums = append(x.sums, x.sums[p]*hashBase+uint64(uint32(id))+1)
	x.bodies = append(x.bodies, h)
	x.keys = append(x.keys, itemKey{id, int32(body)})
	if x.lastAt.full() { // the slots move: the positions' are found again
		x.lastAt.grow()
		for q := range x.slot {
			x.slot[q] = x.lastAt.index(x.pairKey(q))
		}
	}
	i := x.lastAt.index(x.pairKey(int(p)))
	last := &x.lastAt.slots[i].pos
	x.prev = append(x.prev, *last)
	x.slot = append(x.slot, i)
	*last = p
	x.nextEnd = append(x.nextEnd, -1)
	if body > 0 {
		e := int(p) + 1 + body
		x.endAt = grow(x.endAt, e)
		x.nextEnd[p], x.endAt[e] = x.endAt[e], p
	}
}

// pairKey is the identities of the items at p-1 and p (none before the
// first: -1).
func (x *seqIndex) pairKey(p int) uint64 {
	before := int32(-1)
	if p > 0 {
		before = x.keys[p-1].id
	}
	return uint64(uint32(before))<<32 | uint64(uint32(x.keys[p].id))
}

// grow returns s with an index i, its new elements -1.
func grow(s []int32, i int) []int32 {
	for i >= len(s) {
		s = append(s, -1)
	}
	return s
}

// truncate removes the items from position m on. Each removed is the last
// of its identity and of its end: the chains are stacks.
func (x *seqIndex) truncate(m int) {
	for p := len(x.keys) - 1; p >= m; p-- {
		k := x.keys[p]
		x.lastAt.slots[x.slot[p]].pos = x.prev[p]
		if k.body > 0 {
			x.endAt[p+1+int(k.body)] = x.nextEnd[p]
		}
	}
	x.keys, x.prev, x.nextEnd, x.slot = x.keys[:m], x.prev[:m], x.nextEnd[:m], x.slot[:m]
	x.sums, x.bodies = x.sums[:m+1], x.bodies[:m]
}

// reset empties the index and lets its memory go (a sequence given up).
func (x *seqIndex) reset() { *x = seqIndex{} }

// empty empties the index and keeps its room, for another sequence.
func (x *seqIndex) empty() {
	clear(x.lastAt.slots)
	x.lastAt.n = 0
	x.keys, x.prev, x.slot, x.nextEnd, x.endAt = x.keys[:0], x.prev[:0], x.slot[:0], x.nextEnd[:0], x.endAt[:0]
	x.sums, x.bodies = x.sums[:0], x.bodies[:0]
}

// candidates calls try with the lengths l, increasing, at which the
// sequence's tail may repeat the body of a loop just before it (extend)
// or the items before it (!extend; both at one length, extend first),
// until try reports true; it reports whether one did.
func (x *seqIndex) candidates(try func(l int, extend bool) bool) bool {
	n := len(x.keys)
	// A new loop's: of length 1 where the last item repeats the one
	// before (one), then the previous positions of the last pair.
	one := n >= 2 && x.keys[n-2].id == x.keys[n-1].id
	p := x.prev[n-1]
	if p >= 0 && p == int32(n-2) { // length 1 again
		p = x.prev[p]
	}
	q := int32(-1) // a loop's: one whose iteration would end at n
	if n < len(x.endAt) {
		q = x.endAt[n]
	}
	for {
		ln, lq := maxBody+1, maxBody+1 // the next lengths of each kind
		if one {
			ln = 1
		} else if p >= 0 {
			ln = n - 1 - int(p)
		}
		if q >= 0 {
			lq = n - 1 - int(q)
		}
		l := min(ln, lq)
		if l > maxBody {
			return false
		}
		if l == lq {
			body := x.bodies[q]
			q = x.nextEnd[q]
			if body == x.window(n-l, n) && try(l, true) {
				return true
			}
		}
		if l == ln {
			if one {
				one = false
			} else {
				p = x.prev[p]
			}
			if 2*l <= n && x.window(n-2*l, n-l) == x.window(n-l, n) && try(l, false) {
				return true
			}
		}
	}
}

// posTable maps pairs of identities to positions: an open-addressing
// table of the pairs a sequence holds. (Identities are numbered for a
// whole trace's ranks, which a table indexed by them would take for every
// rank's sequence: quadratic in a trace of many ranks that all differ.)
type posTable struct {
	slots []posSlot // a power of two, at most half full
	n     int
	shift uint // 64 - log2(len(slots))
}

type posSlot struct {
	key1 uint64 // the key plus 1; 0: empty
	pos  int32
}

// full reports whether a key more would pass half the slots (grow
// first).
func (t *posTable) full() bool { return 2*(t.n+1) > len(t.slots) }

// index returns the slot of key (below 2^64-1), added with the position
// -1 if absent; the table must not be full.
func (t *posTable) index(key uint64) int32 {
	mask := len(t.slots) - 1
	for i := int(key*0x9e3779b97f4a7c15>>t.shift) & mask; ; i = (i + 1) & mask {
		sl := &t.slots[i]
		if sl.key1 == key+1 {
			return int32(i)
		}
		if sl.key1 == 0 {
			*sl = posSlot{key + 1, -1}
			t.n++
			return int32(i)
		}
	}
}

func (t *posTable) grow() {
	old := t.slots
	size := max(2*len(old), 16)
	t.slots, t.n = make([]posSlot, size), 0
	t.shift = uint(64 - bits.TrailingZeros(uint(size)))
	for _, sl := range old {
		if sl.key1 != 0 {
			t.slots[t.index(sl.key1-1)].pos = sl.pos
		}
	}
}
