// Package reqstore is SimGrid's request storage: how SMPI's replay of a
// time-independent trace finds the request of a wait or a test.
//
// A TI trace names the request of a wait or test by its key (sender,
// receiver, tag), not by an id. SimGrid 3.32's replay keeps, per rank,
// the requests its isends and irecvs started under their keys, oldest
// first; a wait pops the oldest of its key, a test pops it and puts it
// back at the end of the key's queue (as a null request if it
// completed), a waitall empties the storage. The replay (sim), the
// check of a trace (check) and the TI reader's static guess (format/ti)
// keep the same storage, this one.
package reqstore

import (
	"iter"

	"kairos/internal/smallmap"
)

// Key is a request's key: sender, receiver and tag, as the trace writes
// them.
type Key struct{ Src, Dst, Tag int32 }

// AnySourceKey is the sender a receive from MPI_ANY_SOURCE is stored
// under. SimGrid 3.32 files a request under its actors' ids less one (the
// ranks, under smpirun), and MPI_ANY_SOURCE (-555) less one is -556: a
// wait or test naming -555 (or -333) does not find the receive, and does
// nothing, while one naming -556 finds it.
const AnySourceKey int32 = -556

// packed returns k in 64 bits, and whether its fields fit: end-points
// from -2 to 2^20-3, tags within ±2^23 (every trace's). A map hashes a
// uint64 about four times faster than three int32.
func (k Key) packed() (uint64, bool) {
	s, d, t := uint64(int64(k.Src)+2), uint64(int64(k.Dst)+2), uint64(int64(k.Tag)+1<<23)
	if s >= 1<<20 || d >= 1<<20 || t >= 1<<24 {
		return 0, false
	}
	return s<<44 | d<<24 | t, true
}

// Queue is a FIFO of requests (or of anything comparable). The zero
// value is empty.
type Queue[T comparable] struct {
	items []T
	head  int
}

// Push appends v. A full slice whose front half has been popped is
// shifted down first, so that a queue a test pops and pushes back round
// and round (a rank polling two requests) holds its items, not its
// history.
func (q *Queue[T]) Push(v T) {
	if len(q.items) == cap(q.items) && q.head > 0 && 2*q.head >= len(q.items) {
		n := copy(q.items, q.items[q.head:])
		clear(q.items[n:])
		q.items, q.head = q.items[:n], 0
	}
	q.items = append(q.items, v)
}

// Empty reports whether the queue holds nothing.
func (q *Queue[T]) Empty() bool { return q.head >= len(q.items) }

// Len returns the number of items queued.
func (q *Queue[T]) Len() int { return len(q.items) - q.head }

// Front returns the oldest item (the queue must not be empty).
func (q *Queue[T]) Front() T { return q.items[q.head] }

// Items returns the queued items, oldest first, valid until the queue
// changes.
func (q *Queue[T]) Items() []T { return q.items[q.head:] }

// Pop removes and returns the oldest item (the queue must not be empty).
func (q *Queue[T]) Pop() T {
	v := q.items[q.head]
	var zero T
	q.items[q.head] = zero
	q.head++
	if q.head == len(q.items) {
		q.items, q.head = q.items[:0], 0
	}
	return v
}

// Remove takes the first item equal to v out of the queue, wherever it
// is, and reports whether it was there.
func (q *Queue[T]) Remove(v T) bool {
	for i := q.head; i < len(q.items); i++ {
		if q.items[i] == v {
			copy(q.items[i:], q.items[i+1:])
			var zero T
			q.items[len(q.items)-1] = zero
			q.items = q.items[:len(q.items)-1]
			return true
		}
	}
	return false
}

// Clear empties the queue, keeping its room.
func (q *Queue[T]) Clear() {
	clear(q.items)
	q.items, q.head = q.items[:0], 0
}

// QueueMap is a map of queues that forgets the keys whose queue is empty
// once the keys are many: a trace whose tags never repeat (a tag an
// iteration) would otherwise keep a key for every message ever sent, and
// a replay's memory would grow with the trace. The zero value is empty.
type QueueMap[K comparable, T comparable] struct {
	smallmap.Map[K, Queue[T]]
	limit int // the number of keys above which Slot prunes
	// spare are the rooms of the queues pruned, which the keys added
	// next take: a rank that posts to many keys in turn (HPCC's partners
	// and tags) would otherwise allocate a queue at nearly every request
	// (458,000 allocations in the analytic replay of HPCC on 16 ranks,
	// of 1.4 M events).
	spare [][]T
	// few makes Slot prune from fewFloor keys rather than from
	// smallmap.Linear (a Store's).
	few bool
}

// fewFloor is the number of keys from which a Store's map prunes. Its
// keys (sender, receiver, tag) are mostly a request's alone where a
// program's tags change (HPCC's), and a lookup searches them in a row:
// with the floor at smallmap.Linear, `check` of HPCC on 64 ranks took 3%
// more CPU time, searching keys of empty queues. The replay's queues of
// unmatched messages keep smallmap.Linear: the keys a loop posts to
// again (CG's) would be dropped and made again at each iteration (6%
// more time in the analytic replay of CG on 256 ranks).
const fewFloor = 4

// floor returns the number of keys from which Slot prunes.
func (m *QueueMap[K, T]) floor() int {
	if m.few {
		return fewFloor
	}
	return smallmap.Linear
}

// maxSpare bounds the rooms a QueueMap keeps, and maxSpareRoom their
// size: a queue that once held many requests gives its memory back.
const (
	maxSpare     = 64
	maxSpareRoom = 64
)

// Slot returns k's queue, adding an empty one if k is absent. Before
// adding a key beyond the limit, it drops the keys of empty queues and
// sets the limit to twice the keys left, so that pruning costs a constant
// time per key added.
func (m *QueueMap[K, T]) Slot(k K) *Queue[T] {
	if q := m.Ref(k); q != nil {
		return q
	}
	if m.Len() >= max(m.limit, m.floor()) {
		m.DeleteFunc(func(_ K, q *Queue[T]) bool {
			if !q.Empty() {
				return false
			}
			if c := cap(q.items); c > 0 && c <= maxSpareRoom && len(m.spare) < maxSpare {
				m.spare = append(m.spare, q.items[:0])
			}
			return true
		})
		m.limit = 2 * m.Len()
	}
	q := m.Insert(k)
	if n := len(m.spare); n > 0 {
		q.items, m.spare = m.spare[n-1], m.spare[:n-1]
	}
	return q
}

// Empty reports whether every queue is empty.
func (m *QueueMap[K, T]) Empty() bool {
	for _, q := range m.All() {
		if !q.Empty() {
			return false
		}
	}
	return true
}

// Store is one rank's request storage: a queue of requests per key (the
// zero T for a null request), the keys packed in 64 bits where they fit,
// the others apart. It counts the requests it holds, null ones included:
// SimGrid's replay aborts on a wait when its rank's storage is empty.
// The zero value is empty.
type Store[T comparable] struct {
	packed QueueMap[uint64, T]
	wide   QueueMap[Key, T]
	n      int
}

// queue returns k's queue, adding an empty one if k is absent.
func (s *Store[T]) queue(k Key) *Queue[T] {
	if p, ok := k.packed(); ok {
		s.packed.few = true // the zero Store is ready: set at its first key
		return s.packed.Slot(p)
	}
	return s.wide.Slot(k)
}

// ref returns k's queue, or nil if k is absent.
func (s *Store[T]) ref(k Key) *Queue[T] {
	if p, ok := k.packed(); ok {
		return s.packed.Ref(p)
	}
	return s.wide.Ref(k)
}

// Len returns the number of requests stored, null ones included.
func (s *Store[T]) Len() int { return s.n }

// Push stores v, the zero T for a null request, under k, after the
// others.
func (s *Store[T]) Push(k Key, v T) {
	s.queue(k).Push(v)
	s.n++
}

// Pop removes and returns the oldest request stored under k; ok is false
// if there is none (v, the zero T, is then no null request).
func (s *Store[T]) Pop(k Key) (v T, ok bool) {
	q := s.ref(k)
	if q == nil || q.Empty() {
		return v, false
	}
	s.n--
	return q.Pop(), true
}

// Front returns the oldest request stored under k, without removing it;
// ok is false if there is none.
func (s *Store[T]) Front(k Key) (v T, ok bool) {
	q := s.ref(k)
	if q == nil || q.Empty() {
		return v, false
	}
	return q.Front(), true
}

// Remove takes v out of k's queue, wherever it is, and reports whether it
// was there.
func (s *Store[T]) Remove(k Key, v T) bool {
	if q := s.ref(k); q != nil && q.Remove(v) {
		s.n--
		return true
	}
	return false
}

// Queues iterates over the non-empty queues, in no particular order but
// the same for the same operations; the loop must not change the store.
func (s *Store[T]) Queues() iter.Seq[*Queue[T]] {
	return func(yield func(*Queue[T]) bool) {
		for _, q := range s.packed.All() {
			if !q.Empty() && !yield(q) {
				return
			}
		}
		for _, q := range s.wide.All() {
			if !q.Empty() && !yield(q) {
				return
			}
		}
	}
}

// Drain removes every request, calling f with each (null ones included),
// key by key in the order of Queues, oldest first within a key.
func (s *Store[T]) Drain(f func(T)) {
	if s.n == 0 {
		return
	}
	for q := range s.Queues() {
		for !q.Empty() {
			s.n--
			f(q.Pop())
		}
	}
}

// Clear forgets every request.
func (s *Store[T]) Clear() {
	for q := range s.Queues() {
		q.Clear()
	}
	s.n = 0
}
