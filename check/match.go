package check

import (
	"sort"

	"kairos/internal/smallmap"
	"kairos/trace"
)

// msg is a posted send or receive that may still be waiting for its match.
type msg struct {
	seq     uint64 // posting order, global
	rank    int32  // the rank that posted it
	index   int    // its event index there
	comm    uint32
	src     int32 // AnySource allowed for receives
	dst     int32
	tag     int32 // AnyTag allowed for receives
	bytes   int64 // < 0 on a receive: any size
	recv    bool
	matched bool
}

// chanKey names a channel at one destination.
type chanKey struct {
	comm     uint32
	src, tag int32
}

// fifo is a queue of messages of one channel.
type fifo struct {
	items []*msg
	head  int
}

func (q *fifo) empty() bool { return q.head == len(q.items) }
func (q *fifo) front() *msg { return q.items[q.head] }
func (q *fifo) push(m *msg) { q.items = append(q.items, m) }
func (q *fifo) pop() (m *msg) {
	m = q.items[q.head]
	q.items[q.head] = nil
	q.head++
	if q.head == len(q.items) {
		q.items, q.head = q.items[:0], 0
	}
	return m
}

// mailbox holds the unmatched messages addressed to one rank: sends and
// specific receives per channel, wildcard receives in posting order.
type mailbox struct {
	sends smallmap.Map[chanKey, *fifo] // a rank's channels are few
	recvs smallmap.Map[chanKey, *fifo]
	wild  []*msg
}

// matcher pairs sends with receives.
type matcher struct {
	boxes []*mailbox // by destination rank, nil until its first message
	free  []*fifo
	seq   uint64
	// onMatch is called for every pair matched.
	onMatch func(send, recv *msg)
}

func newMatcher(n int, onMatch func(send, recv *msg)) *matcher {
	return &matcher{boxes: make([]*mailbox, n), onMatch: onMatch}
}

// box returns rank dst's mailbox, made at its first message: a rank that
// never receives (most of a trace that claims a million ranks and holds
// a few) costs a pointer.
func (mt *matcher) box(dst int32) *mailbox {
	b := mt.boxes[dst]
	if b == nil {
		b = &mailbox{}
		mt.boxes[dst] = b
	}
	return b
}

// enqueue adds m to the queue k of *qs, taken from the free list or made
// at its first message.
func (mt *matcher) enqueue(qs *smallmap.Map[chanKey, *fifo], k chanKey, m *msg) {
	p := qs.Slot(k)
	if *p == nil {
		if n := len(mt.free); n > 0 {
			*p, mt.free = mt.free[n-1], mt.free[:n-1]
		} else {
			*p = &fifo{}
		}
	}
	(*p).push(m)
}

func (mt *matcher) dequeue(qs *smallmap.Map[chanKey, *fifo], k chanKey) *msg {
	q := qs.Get(k)
	m := q.pop()
	if q.empty() {
		qs.Delete(k)
		mt.free = append(mt.free, q)
	}
	return m
}

func accepts(r *msg, s *msg) bool {
	return r.comm == s.comm &&
		(r.src == trace.AnySource || r.src == s.src) &&
		(r.tag == trace.AnyTag || r.tag == s.tag)
}

// postSend matches s with the earliest-posted eligible receive or queues
// it.
func (mt *matcher) postSend(s *msg) {
	mt.seq++
	s.seq = mt.seq
	box := mt.box(s.dst)
	k := chanKey{s.comm, s.src, s.tag}
	var best *msg
	if q := box.recvs.Get(k); q != nil {
		best = q.front()
	}
	wi := -1
	for i, w := range box.wild {
		if accepts(w, s) {
			if best == nil || w.seq < best.seq {
				best, wi = w, i
			}
			break
		}
	}
	switch {
	case best == nil:
		mt.enqueue(&box.sends, k, s)
		return
	case wi >= 0:
		box.wild = append(box.wild[:wi], box.wild[wi+1:]...)
	default:
		mt.dequeue(&box.recvs, k)
	}
	mt.onMatch(s, best)
}

// postRecv matches r with the earliest-posted eligible message or queues
// it.
func (mt *matcher) postRecv(r *msg) {
	mt.seq++
	r.seq = mt.seq
	box := mt.box(r.dst)
	if r.src != trace.AnySource && r.tag != trace.AnyTag {
		k := chanKey{r.comm, r.src, r.tag}
		if box.sends.Get(k) != nil { // a channel's queue goes when empty
			mt.onMatch(mt.dequeue(&box.sends, k), r)
			return
		}
		mt.enqueue(&box.recvs, k, r)
		return
	}
	if k, ok := mt.earliestSend(box, r); ok {
		mt.onMatch(mt.dequeue(&box.sends, k), r)
		return
	}
	box.wild = append(box.wild, r)
}

// earliestSend finds the channel whose first message is the earliest one
// the wildcard receive r accepts.
func (mt *matcher) earliestSend(box *mailbox, r *msg) (chanKey, bool) {
	var best chanKey
	var seq uint64
	for k, q := range box.sends.All() {
		if f := (*q).front(); accepts(r, f) && (seq == 0 || f.seq < seq) {
			best, seq = k, f.seq
		}
	}
	return best, seq != 0
}

// probe reports whether a message r would accept waits unmatched.
func (mt *matcher) probe(r *msg) bool {
	box := mt.boxes[r.dst]
	if box == nil {
		return false
	}
	if r.src != trace.AnySource && r.tag != trace.AnyTag {
		return box.sends.Get(chanKey{r.comm, r.src, r.tag}) != nil
	}
	_, ok := mt.earliestSend(box, r)
	return ok
}

// unmatched returns every message still waiting, in posting order.
func (mt *matcher) unmatched() []*msg {
	var out []*msg
	for _, b := range mt.boxes {
		if b == nil {
			continue
		}
		for _, qs := range []*smallmap.Map[chanKey, *fifo]{&b.sends, &b.recvs} {
			for _, q := range qs.All() {
				out = append(out, (*q).items[(*q).head:]...)
			}
		}
		out = append(out, b.wild...)
	}
	sortBySeq(out)
	return out
}

// sortBySeq sorts messages in posting order.
func sortBySeq(ms []*msg) {
	sort.Slice(ms, func(i, j int) bool { return ms[i].seq < ms[j].seq })
}
