package trace

// SendQueue holds the sends of one channel (a source, a destination and a
// communicator) in posting order, and matches receives with them as MPI
// does: a receive takes the first unmatched send with a tag it accepts
// (MPI's non-overtaking order). Analyses that pair messages share it.
type SendQueue struct {
	id      []int32
	tag     []int32
	matched []bool
	next    int // every send before next is matched
}

// Push appends a send, known to the caller as id, with its tag.
func (q *SendQueue) Push(id, tag int32) {
	q.id = append(q.id, id)
	q.tag = append(q.tag, tag)
	q.matched = append(q.matched, false)
}

// Take matches a receive of tag (AnyTag for any) with the first unmatched
// send that suits it, and returns the send's id, or -1 if there is none.
func (q *SendQueue) Take(tag int32) int32 {
	for q.next < len(q.id) && q.matched[q.next] {
		q.next++
	}
	for j := q.next; j < len(q.id); j++ {
		if !q.matched[j] && (tag == AnyTag || q.tag[j] == tag) {
			q.matched[j] = true
			return q.id[j]
		}
	}
	return -1
}
