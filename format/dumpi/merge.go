package dumpi

import (
	"container/heap"
	"errors"

	"kairos/trace"
)

// mergedBuf is the read buffer of each rank in a merged stream, smaller
// than a lone reader's so that thousands of ranks stay cheap.
const mergedBuf = 32 << 10

// Merged streams the events of all ranks as one sequence ordered by wall
// enter time, ties broken by the lower rank, each rank's events in program
// order. It holds one reader (and one event) per rank.
type Merged struct {
	rs      []*Reader // by file (ranks without a file have no reader)
	h       rankHeap  // files with a pending event, by (Enter, rank)
	cur     int
	started bool
	err     error
}

// Merged opens every rank and returns their merged stream.
func (t *Trace) Merged() (*Merged, error) {
	m := &Merged{cur: -1}
	for i, f := range t.files {
		rd, err := t.OpenRank(f.rank)
		if err != nil {
			m.Close()
			return nil, err
		}
		x := rd.(*Reader)
		x.d.buf = make([]byte, min(len(x.d.buf), mergedBuf))
		m.rs = append(m.rs, x)
		if x.Next() {
			m.h.ranks = append(m.h.ranks, i)
		} else if err := x.Err(); err != nil {
			m.Close()
			return nil, err
		}
	}
	m.h.rs = m.rs
	heap.Init(&m.h)
	return m, nil
}

// rankHeap orders files by their pending event (container/heap); files
// are in rank order.
type rankHeap struct {
	rs    []*Reader
	ranks []int // indexes in rs
}

func (h *rankHeap) Len() int { return len(h.ranks) }

func (h *rankHeap) Less(i, j int) bool {
	a, b := h.ranks[i], h.ranks[j]
	ea, eb := &h.rs[a].ev, &h.rs[b].ev
	return ea.Enter < eb.Enter || ea.Enter == eb.Enter && a < b
}

func (h *rankHeap) Swap(i, j int) { h.ranks[i], h.ranks[j] = h.ranks[j], h.ranks[i] }
func (h *rankHeap) Push(x any)    { h.ranks = append(h.ranks, x.(int)) }

func (h *rankHeap) Pop() any {
	x := h.ranks[len(h.ranks)-1]
	h.ranks = h.ranks[:len(h.ranks)-1]
	return x
}

// Next advances to the earliest pending event of any rank.
func (m *Merged) Next() bool {
	if m.err != nil {
		return false
	}
	if m.started && m.h.Len() > 0 {
		if m.rs[m.h.ranks[0]].Next() {
			heap.Fix(&m.h, 0)
		} else if err := m.rs[m.h.ranks[0]].Err(); err != nil {
			m.err = err
			return false
		} else {
			heap.Pop(&m.h)
		}
	}
	m.started = true
	if m.h.Len() == 0 {
		return false
	}
	m.cur = m.h.ranks[0]
	return true
}

// Rank returns the rank of the current event.
func (m *Merged) Rank() int {
	if m.cur < 0 {
		return -1
	}
	return m.rs[m.cur].rank
}

// Event returns the current event, valid until Next.
func (m *Merged) Event() *trace.Event { return &m.rs[m.cur].ev }

// Position returns "file:offset" of the current event.
func (m *Merged) Position() string { return m.rs[m.cur].Position() }

// Err returns the first error of any rank.
func (m *Merged) Err() error { return m.err }

// Close closes every rank's file.
func (m *Merged) Close() error {
	var errs []error
	for _, r := range m.rs {
		if r != nil {
			errs = append(errs, r.Close())
		}
	}
	m.rs, m.h = nil, rankHeap{}
	return errors.Join(errs...)
}
