package trace

import "testing"

// TestSendQueue matches receives in MPI's non-overtaking order: the first
// unmatched send of a tag the receive accepts.
func TestSendQueue(t *testing.T) {
	var q SendQueue
	for i, tag := range []int32{5, 7, 5, 9} {
		q.Push(int32(10+i), tag)
	}
	for _, c := range []struct{ tag, want int32 }{
		{7, 11}, {AnyTag, 10}, {7, -1}, {5, 12}, {AnyTag, 13}, {AnyTag, -1},
	} {
		if got := q.Take(c.tag); got != c.want {
			t.Errorf("Take(%d) = %d, want %d", c.tag, got, c.want)
		}
	}
}
