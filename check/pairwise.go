package check

import (
	"fmt"

	"kairos/trace"
)

// Pairwise checks of the v-collectives: what one member sends another
// must be what that member expects from it (MPI requires the type
// signatures to match; SimGrid aborts with MPI_ERR_TRUNCATE where they do
// not). No member can tell alone, so the members' sizes are kept until the
// collective is complete.

// maxPairwise bounds the communicator size for which alltoallv's n×n
// counts are kept (16 MB at most an instance); larger alltoallvs are
// checked for the length of their vectors only.
const maxPairwise = 1024

// pairwise is what the members of one v-collective gave, by communicator
// rank.
type pairwise struct {
	index      []int     // each member's event index
	send, recv []int64   // each member's send and receive sizes
	sendCounts [][]int64 // each member's send counts (scatterv: the root's)
	recvCounts [][]int64 // each member's receive counts (gatherv: the root's)
}

// needsPairwise reports whether collective k on a communicator of n
// members is checked pairwise.
func needsPairwise(k trace.Kind, n int) bool {
	switch k {
	case trace.Gatherv, trace.Scatterv, trace.Allgatherv:
		return true
	case trace.Alltoallv:
		return n <= maxPairwise
	}
	return false
}

func newPairwise(n int) *pairwise {
	return &pairwise{index: make([]int, n), send: make([]int64, n), recv: make([]int64, n),
		sendCounts: make([][]int64, n), recvCounts: make([][]int64, n)}
}

// note keeps what member cr gave in its event ev of index index.
func (p *pairwise) note(cr int32, index int, ev *trace.Event) {
	p.index[cr] = index
	p.send[cr], p.recv[cr] = ev.SendBytes, ev.RecvBytes
	p.sendCounts[cr] = append([]int64(nil), ev.SendCounts...)
	p.recvCounts[cr] = append([]int64(nil), ev.RecvCounts...)
}

// checkPairwise reports, once per member, the members of the complete
// instance in whose sizes disagree with a peer's counts.
func (e *engine) checkPairwise(in *instance) {
	p, c := in.pairs, in.comm
	root := int(c.rankOf(in.root))
	if root < 0 && in.kind.IsRooted() {
		return // a root outside the communicator is reported (collectiveArgs)
	}
	for j := 0; j < c.size; j++ {
		switch in.kind {
		case trace.Gatherv:
			if v := p.recvCounts[root]; len(v) == c.size && p.send[j] != v[j] {
				e.pairProblem(in, j, root, "sends %d bytes, but the root, rank %d, expects %d", p.send[j], c.member(root), v[j])
			}
		case trace.Scatterv:
			if v := p.sendCounts[root]; len(v) == c.size && p.recv[j] != v[j] {
				e.pairProblem(in, j, root, "receives %d bytes, but the root, rank %d, sends it %d", p.recv[j], c.member(root), v[j])
			}
		case trace.Allgatherv:
			// The receive counts are alike on every member (compare).
			if v := p.recvCounts[j]; len(v) == c.size && p.send[j] != v[j] {
				e.pairProblem(in, j, j, "sends %d bytes, but the receive counts expect %d from it", p.send[j], v[j])
			}
		case trace.Alltoallv:
			recv := p.recvCounts[j]
			for i := 0; len(recv) == c.size && i < c.size; i++ {
				if send := p.sendCounts[i]; len(send) == c.size && recv[i] != send[j] {
					e.pairProblem(in, j, i, "expects %d bytes from rank %d, which sends it %d", recv[i], c.member(i), send[j])
					break
				}
			}
		}
	}
}

// pairProblem reports member j of in, whose sizes disagree with member
// from's counts. A negative size is reported already (engine.volumes).
func (e *engine) pairProblem(in *instance, j, from int, format string, a ...any) {
	for _, x := range a {
		if v, ok := x.(int64); ok && v < 0 {
			return
		}
	}
	c := in.comm
	msg := fmt.Sprintf(format, a...)
	if from != j {
		msg += fmt.Sprintf(" (its event %d)", in.pairs.index[from])
	}
	e.problem(int(c.member(j)), in.pairs.index[j], "%s (collective #%d on communicator %d) %s", in.kind, in.num, c.id, msg)
}
