// Package scorep holds Score-P's conventions for what its MPI records
// count, which every trace derived from Score-P's OTF2 archives inherits
// (Kairos' OTF2 reader; the text traces of Alawneh et al., written from
// such archives): the bytes of a collective (scorep_mpi_coll_bytes_*: at a
// root, the bytes of every member; for an allreduce, all-to-all or
// allgather, the blocks of all members at every member; for a scan, the
// blocks sent onward and received; since Score-P 8, in place without the
// member's own block), from which the model's per-member volumes come
// back (Volumes); and the totals-only v-collectives, whose count vectors
// derive from every member's totals (Instance.Derive).
package scorep

import (
	"math/bits"
	"slices"
	"sync"

	"kairos/trace"
)

// Counted is what a collective's record says of its bytes.
type Counted struct {
	Sent, Recv int64 // the bytes Score-P counts
	Me, N      int   // the member (-1 if unknown) of N
	Root       bool  // the member is the root
	Block      bool  // a ReduceScatter is a reduce_scatter_block
	// InPlaceAware: in place, the bytes leave the member's own block out
	// (Score-P 8 on).
	InPlaceAware bool
}

// Volumes returns the model's send and receive bytes of a collective of
// kind k from what its record counted. Score-P counts a rooted
// collective's bytes at the root for every member, an all-to-all's,
// allreduce's or allgather's over all members at every member, and, since
// Score-P 8, leaves out in place the member's own block
// (scorep_mpi_coll_bytes_*), which the record does not flag: Split tells
// the two apart where the sizes can.
func Volumes(k trace.Kind, c Counted) (int64, int64) {
	sent, recv, n := c.Sent, c.Recv, c.N
	blockOf := func(total int64) (int64, bool) { return Split(total, n, c.InPlaceAware) }
	root := c.Root
	switch k {
	case trace.Bcast, trace.Scatter: // the root sends n blocks (n-1 in place, keeping its own)
		if root && recv == 0 {
			b := rootBlock(sent, n, c.InPlaceAware && k == trace.Scatter)
			return b, b
		}
		return recv, recv
	case trace.Gather, trace.Reduce: // the root receives n blocks (n-1 in place, sending none)
		if root && sent == 0 {
			b := rootBlock(recv, n, c.InPlaceAware)
			return b, b
		}
		return sent, sent
	case trace.Gatherv: // at the root in place, its own block is the others' mean
		if root && sent == 0 && n > 1 {
			return recv / int64(n-1), recv + recv/int64(n-1)
		}
	case trace.Scatterv:
		if root && recv == 0 && n > 1 {
			return sent + sent/int64(n-1), sent / int64(n-1)
		}
	case trace.Allreduce, trace.Alltoall, trace.Allgather:
		b, _ := blockOf(sent)
		return b, b
	case trace.Allgatherv: // the received bytes stay the whole vector's
		own, inPlace := blockOf(sent)
		if inPlace {
			recv += own
		}
		return own, recv
	case trace.Scan, trace.Exscan:
		b := scanBlock(k, sent, recv, c.Me, n)
		return b, b
	case trace.ReduceScatter: // the whole vector, as the model keeps it
		if c.Block {
			b, _ := blockOf(sent)
			return 0, b * int64(n)
		}
		if own, inPlace := blockOf(recv); inPlace {
			sent += own
		}
		return 0, sent
	}
	return sent, recv
}

// rootBlock returns the block of a rooted collective whose root counted
// total bytes for the n members and none the other way: a scatter's or
// gather's (or reduce's) root in place, which Score-P 8 on (aware) counts
// without its own block, unless the sizes say otherwise (MPI_IN_PLACE is
// the only way its root counts none: a reduce of 8 doubles over 8
// members is 448 bytes at the root, 64 a member, not 56); a
// broadcast's root, which has no in place (older Score-P).
func rootBlock(total int64, n int, inPlace bool) int64 {
	if inPlace && n > 1 && total%int64(n-1) == 0 {
		return total / int64(n-1)
	}
	b, _ := Split(total, n, false)
	return b
}

// Split divides total, bytes Score-P counts over the n members of a
// collective, into one member's block: total is n blocks, or n-1 in place
// (reported as inPlace) where only n-1 divides it (a 2-member total is 2
// blocks). For an archive whose in-place counts leave the member's own
// block out (aware), where n and n-1 both divide total, the block of more
// trailing zero bits, up to 3, wins (data are whole elements of 1 to 8
// bytes, and the other split is off by the factor n/(n-1)), n blocks on a
// tie: an in-place allreduce of 1 to 3 doubles over 4 members is read as
// such, but an allgather of 3 ints is read as an in-place one of 4, and
// some totals remain both (an in-place allreduce of 8 doubles over 4
// members is another's of 6), read as n blocks.
func Split(total int64, n int, aware bool) (block int64, inPlace bool) {
	if n <= 1 {
		return total, false
	}
	byN := total%int64(n) == 0
	byN1 := n > 2 && total%int64(n-1) == 0
	switch {
	case byN1 && !byN:
		return total / int64(n-1), true
	case byN1 && aware && roundness(total/int64(n-1)) > roundness(total/int64(n)):
		return total / int64(n-1), true
	}
	return total / int64(n), false
}

// roundness returns how many of 2, 4 and 8 divide v.
func roundness(v int64) int {
	if v == 0 {
		return 3
	}
	return min(bits.TrailingZeros64(uint64(v)), 3)
}

// SpreadCounts gives a v-collective the per-member counts the model needs
// and OTF2 does not record (only totals): the totals spread evenly over
// the n members, so that the collective can be replayed (zeros where
// Score-P counts nothing, as at a gatherv's other members).
func SpreadCounts(ev *trace.Event, n int) {
	switch ev.Kind {
	case trace.Alltoallv:
		ev.SendCounts, ev.RecvCounts = Spread(ev.SendBytes, n), Spread(ev.RecvBytes, n)
	case trace.Allgatherv, trace.ReduceScatter, trace.Gatherv:
		ev.RecvCounts = Spread(ev.RecvBytes, n)
	case trace.Scatterv:
		ev.SendCounts = Spread(ev.SendBytes, n)
	}
}

// Spread divides total into n counts that differ by at most one byte.
func Spread(total int64, n int) []int64 {
	if n <= 0 {
		return nil
	}
	c := make([]int64, n)
	for i := range c {
		c[i] = total / int64(n)
		if int64(i) < total%int64(n) {
			c[i]++
		}
	}
	return c
}

// scanBlock returns the block of a scan or exscan from the volumes Score-P
// records at member me of n: (n-me)*b sent and (me+1)*b received for a
// scan, (n-me-1)*b and me*b for an exscan and (since Score-P 8) for a
// scan in place, which the block then divides.
func scanBlock(k trace.Kind, sent, recv int64, me, n int) int64 {
	switch {
	case me < 0:
		return sent
	case k == trace.Scan && recv%int64(me+1) == 0 && sent == int64(n-me)*(recv/int64(me+1)):
		return recv / int64(me+1)
	case me > 0:
		return recv / int64(me)
	case n > 1:
		return sent / int64(n-1)
	}
	return 0
}

// Instance is one v-collective's members' totals, from which each
// member's count vectors derive: a gatherv's root receives from each
// member what it sends, an allgatherv's and a reduce_scatter's members
// each member's block, a scatterv's members what the root sends them; an
// alltoallv's matrix, of which the totals are the rows and columns only,
// is the one proportional to them (member i sends member j S_i·R_j/T
// bytes, rounded down, the bytes left over given along the rows and
// columns in rank order), so that every member sends and receives its
// totals and the run replays.
type Instance struct {
	Kind trace.Kind
	// A and B are each member's totals, as Totals returns them.
	A, B []int64
	Root int // member index of the root, -1 if none or unknown

	once       sync.Once
	total      int64   // of the rows, and of the columns where they agree
	rowPre     []int64 // prefix sums of the rows' leftovers
	colPre     []int64
	consistent bool
}

// NewInstance returns an instance of kind k with n members' totals zero.
func NewInstance(k trace.Kind, n int) *Instance {
	return &Instance{Kind: k, A: make([]int64, n), B: make([]int64, n), Root: -1}
}

// IsV reports whether kind k's count vectors are the members' own
// (alltoallv, allgatherv, gatherv, scatterv, reduce_scatter) and so
// derive from an Instance.
func IsV(k trace.Kind) bool {
	switch k {
	case trace.Alltoallv, trace.Allgatherv, trace.Gatherv, trace.Scatterv, trace.ReduceScatter:
		return true
	}
	return false
}

// Totals returns what a member's v-collective ev (its volumes already
// Volumes', from the record's sent and received bytes) adds to its
// Instance, of n members: alltoallv, what it sends and receives;
// allgatherv, its block; reduce_scatter, its block of received;
// gatherv, what it sends and, b, what it received as counted (at the
// root, every member's block); scatterv, what it sent as counted (at the
// root, every member's) and, b, what it receives.
func Totals(ev *trace.Event, sent, received int64, n int, inPlaceAware bool) (a, b int64) {
	a, b = ev.SendBytes, ev.RecvBytes
	switch ev.Kind {
	case trace.Allgatherv:
		b = 0
	case trace.Gatherv:
		b = received
	case trace.ReduceScatter:
		a, _ = Split(received, n, inPlaceAware)
		b = 0
	case trace.Scatterv:
		a = sent
	}
	return a, b
}

// Derive sets the count vectors of member me's event ev of the instance.
// It reports false where ev is not of the instance's kind or me not a
// member.
func (in *Instance) Derive(ev *trace.Event, me int) bool {
	if ev.Kind != in.Kind || me < 0 || me >= len(in.A) {
		return false
	}
	n := len(in.A)
	switch ev.Kind {
	case trace.Alltoallv:
		ev.SendCounts, ev.RecvCounts = in.row(me), in.col(me)
	case trace.Allgatherv:
		ev.RecvCounts = slices.Clone(in.A)
		ev.SendBytes, ev.RecvBytes = in.A[me], Sum(in.A)
	case trace.ReduceScatter:
		ev.RecvCounts = slices.Clone(in.A)
		ev.RecvBytes = Sum(in.A)
	case trace.Gatherv:
		ev.RecvCounts = make([]int64, n)
		if me == in.Root {
			copy(ev.RecvCounts, in.A)
			ev.RecvCounts[me] = in.own(in.B[me], in.A)
			ev.SendBytes, ev.RecvBytes = ev.RecvCounts[me], Sum(ev.RecvCounts)
		}
	case trace.Scatterv:
		ev.SendCounts = make([]int64, n)
		if me == in.Root {
			copy(ev.SendCounts, in.B)
			ev.SendCounts[me] = in.own(in.A[me], in.B)
			ev.SendBytes, ev.RecvBytes = Sum(ev.SendCounts), ev.SendCounts[me]
		}
	}
	return true
}

// ResolveInPlace settles, from every member's record, whether an
// allgatherv or a reduce_scatter of an archive whose in-place counts leave
// the member's own block out (Score-P 8 on) was in place: at every member
// or at none, as MPI requires. Member i counted, of its block b_i, a
// multiple (an allgatherv's sent bytes, a reduce_scatter's received) of n
// blocks, or n-1 in place, and the vector's sum (the other way), less its
// own block in place. Where Split cannot tell one member's record (n and
// n-1 both divide its multiple), the others' usually can: exactly one
// reading makes every member's vector sum agree. ResolveInPlace then sets
// the blocks (A) and reports true; it leaves them where both readings
// hold (blocks all equal) or neither does.
func (in *Instance) ResolveInPlace(sent, recv []int64) bool {
	n := len(in.A)
	if n <= 2 || len(sent) != n || len(recv) != n {
		return false
	}
	multiple, vector := sent, recv
	switch in.Kind {
	case trace.Allgatherv:
	case trace.ReduceScatter:
		multiple, vector = recv, sent
	default:
		return false
	}
	var found []int64
	for _, inPlace := range []bool{false, true} {
		if b, ok := blocksIf(multiple, vector, inPlace); ok {
			if found != nil {
				return false // both: the sizes cannot tell
			}
			found = b
		}
	}
	if found == nil {
		return false
	}
	copy(in.A, found)
	return true
}

// blocksIf returns the members' blocks where every member's multiple
// divides into n blocks (n-1 in place) and its vector sum is the blocks'
// sum (less its own in place).
func blocksIf(multiple, vector []int64, inPlace bool) ([]int64, bool) {
	k := int64(len(multiple))
	if inPlace {
		k--
	}
	b := make([]int64, len(multiple))
	for i, m := range multiple {
		if m%k != 0 {
			return nil, false
		}
		b[i] = m / k
	}
	sum := Sum(b)
	for i, v := range vector {
		want := sum
		if inPlace {
			want -= b[i]
		}
		if v != want {
			return nil, false
		}
	}
	return b, true
}

// Sum returns the sum of counts v.
func Sum(v []int64) (t int64) {
	for _, x := range v {
		t += x
	}
	return t
}

// share returns s·r/t rounded down (s, r ≤ t < 2^63).
func share(s, r, t int64) int64 {
	hi, lo := bits.Mul64(uint64(s), uint64(r))
	q, _ := bits.Div64(hi, lo, uint64(t))
	return int64(q)
}

// own returns the root's block of a gatherv or scatterv from what the
// root's record counted (total, every member's block) less the others'
// blocks (blocks): Volumes guesses it from the root's totals alone, and a
// root that keeps no block reads as one in place. Where total is short
// of the others' (a record that counts nothing), the guess stays.
func (in *Instance) own(total int64, blocks []int64) int64 {
	others := Sum(blocks) - blocks[in.Root]
	if total < others {
		return blocks[in.Root]
	}
	return total - others
}

// matrix computes, once, the leftovers of the alltoallv's proportional
// matrix: row i's S_i − Σ_j ⌊S_i·R_j/T⌋ and column j's likewise, as prefix
// sums; cell (i, j) gets the overlap of row i's and column j's spans of
// leftovers, so that every row and column adds up to its total.
func (in *Instance) matrix() {
	in.once.Do(func() {
		n := len(in.A)
		st, rt := Sum(in.A), Sum(in.B)
		in.consistent, in.total = st == rt, st
		if !in.consistent || st == 0 {
			return
		}
		rows, cols := make([]int64, n), make([]int64, n)
		for i := range n {
			for j := range n {
				f := share(in.A[i], in.B[j], st)
				rows[i] += f
				cols[j] += f
			}
		}
		in.rowPre, in.colPre = make([]int64, n+1), make([]int64, n+1)
		for i := range n {
			in.rowPre[i+1] = in.rowPre[i] + in.A[i] - rows[i]
			in.colPre[i+1] = in.colPre[i] + in.B[i] - cols[i]
		}
	})
}

// cell returns the derived bytes member i sends member j.
func (in *Instance) cell(i, j int) int64 {
	f := share(in.A[i], in.B[j], in.total)
	lo, hi := max(in.rowPre[i], in.colPre[j]), min(in.rowPre[i+1], in.colPre[j+1])
	return f + max(0, hi-lo)
}

// row returns what member i sends each member; col what it receives from
// each. Where the totals disagree (the senders' sum is not the
// receivers'), each side spreads its own total in proportion to the
// other side's, and check reports the mismatch.
func (in *Instance) row(i int) []int64 {
	return in.line(in.A[i], in.B, func(j int) int64 { return in.cell(i, j) })
}

func (in *Instance) col(i int) []int64 {
	return in.line(in.B[i], in.A, func(j int) int64 { return in.cell(j, i) })
}

// line returns a row or column of the matrix: cell(j) for each member j,
// or total spread in proportion to the other side's totals, weights.
func (in *Instance) line(total int64, weights []int64, cell func(j int) int64) []int64 {
	in.matrix()
	if !in.consistent {
		return proportional(total, weights)
	}
	v := make([]int64, len(weights))
	if in.total > 0 {
		for j := range v {
			v[j] = cell(j)
		}
	}
	return v
}

// proportional spreads total over the members in proportion to weights
// (evenly if they are all zero), the bytes left over one each to the
// first members.
func proportional(total int64, weights []int64) []int64 {
	w := Sum(weights)
	if w == 0 {
		return Spread(total, len(weights))
	}
	v := make([]int64, len(weights))
	left := total
	for j, x := range weights {
		v[j] = share(total, x, w)
		left -= v[j]
	}
	for j := 0; left > 0; j = (j + 1) % len(v) {
		v[j]++
		left--
	}
	return v
}
