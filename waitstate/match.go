package waitstate

import (
	"kairos/trace"
)

// chanKey is a point-to-point channel: MPI matches a receive with the
// first send on its channel with a suitable tag (non-overtaking order).
type chanKey struct {
	src, dst int32
	comm     uint32
}

// message is a matched send and receive.
type message struct {
	src, dst   int32
	send, recv int32 // indexes in the sender's sends and the receiver's recvs
}

// matchMessages pairs every receive with its send. Receives from
// MPI_ANY_SOURCE (that the trace did not resolve) and sends or receives
// with no partner are left unmatched and counted.
func matchMessages(ranks []rankData) (msgs []message, unmatched int) {
	queues := map[chanKey]*trace.SendQueue{}
	sends := 0
	for r := range ranks {
		for i, s := range ranks[r].sends {
			if s.peer < 0 || int(s.peer) >= len(ranks) {
				unmatched++
				continue
			}
			k := chanKey{int32(r), s.peer, s.comm}
			q := queues[k]
			if q == nil {
				q = &trace.SendQueue{}
				queues[k] = q
			}
			q.Push(int32(i), s.tag)
			sends++
		}
	}
	recvs := 0
	for r := range ranks {
		recvs += len(ranks[r].recvs)
	}
	msgs = make([]message, 0, recvs)
	for r := range ranks {
		for i, v := range ranks[r].recvs {
			q := queues[chanKey{v.peer, int32(r), v.comm}]
			j := int32(-1)
			if q != nil && v.peer >= 0 {
				j = q.Take(v.tag)
			}
			if j < 0 {
				unmatched++
				continue
			}
			msgs = append(msgs, message{src: v.peer, dst: int32(r), send: j, recv: int32(i)})
		}
	}
	return msgs, unmatched + sends - len(msgs)
}

// collective is one instance of a collective: the k-th call on its
// communicator of every member.
type collective struct {
	kind    trace.Kind
	members []int32 // world ranks, in communicator order
	calls   []int32 // each member's call (span index), -1 if it has none
	comm    uint32
	root    int32
	data    []dataFlags // each member's
}

// matchCollectives groups the collective calls into instances. Instances
// that miss a member, or whose members disagree on the kind, are left out
// and counted.
func matchCollectives(ranks []rankData, meta *trace.Meta) (out []collective, incomplete int) {
	seqs := map[uint32]*commSeq{}
	if len(ranks) > 0 {
		out = make([]collective, 0, len(ranks[0].colls)) // all of them where every call is on the world
	}
	var calls slab[int32]
	var data slab[dataFlags]
	for r := range ranks {
		var seq *commSeq
		for _, c := range ranks[r].colls {
			comm := c.comm
			if c.kind == trace.Init || c.kind == trace.Finalize {
				comm = initComm(c.kind)
			}
			if seq == nil || seq.comm != comm { // consecutive calls are mostly on one communicator
				if seq = seqs[comm]; seq == nil {
					seq = newCommSeq(comm, meta.Members(c.comm, len(ranks)))
					seqs[comm] = seq
				}
			}
			p := seq.position(int32(r))
			if p < 0 {
				incomplete++
				continue
			}
			k := seq.count[p]
			seq.count[p]++
			if int(k) == len(seq.insts) {
				ms := seq.members
				inst := collective{kind: c.kind, members: ms, comm: c.comm, root: c.root,
					calls: calls.take(len(ms)), data: data.take(len(ms))}
				for j := range inst.calls {
					inst.calls[j] = -1
				}
				seq.insts = append(seq.insts, int32(len(out)))
				out = append(out, inst)
			}
			inst := &out[seq.insts[k]]
			if inst.kind != c.kind {
				inst.kind = trace.KindInvalid
			}
			inst.calls[p], inst.data[p] = c.call, c.data
		}
	}
	kept := out[:0]
	for _, c := range out {
		ok := c.kind != trace.KindInvalid
		for _, call := range c.calls {
			ok = ok && call >= 0
		}
		if ok {
			kept = append(kept, c)
		} else {
			incomplete++
		}
	}
	return kept, incomplete
}

// slab hands out small arrays from large blocks: millions of collective
// instances, each with arrays of its members, take a few allocations, not
// three each.
type slab[T any] struct{ buf []T }

func (s *slab[T]) take(n int) []T {
	if len(s.buf) < n {
		s.buf = make([]T, max(n, 1<<14))
	}
	v := s.buf[:n:n]
	s.buf = s.buf[n:]
	return v
}

// commSeq is the sequence of a communicator's collective instances, as
// matchCollectives builds it.
type commSeq struct {
	comm    uint32
	members []int32         // world ranks, in communicator order
	pos     map[int32]int32 // world rank -> position
	count   []int32         // calls seen, per position
	insts   []int32         // the k-th instance's index in the output
	rank    int32           // the rank whose position is cached (-1: none)
	at      int32           // its position, -1 if it is no member
}

func newCommSeq(comm uint32, members []int32) *commSeq {
	s := &commSeq{comm: comm, members: members, pos: make(map[int32]int32, len(members)), count: make([]int32, len(members)), rank: -1}
	for i, m := range members {
		s.pos[m] = int32(i)
	}
	return s
}

// position returns world rank r's position in the communicator, -1 if it
// is no member.
func (s *commSeq) position(r int32) int32 {
	if s.rank != r {
		s.rank, s.at = r, -1
		if p, ok := s.pos[r]; ok {
			s.at = p
		}
	}
	return s.at
}

// initComm gives MPI_Init and MPI_Finalize sequences of their own, apart
// from the world's collectives.
func initComm(k trace.Kind) uint32 {
	if k == trace.Init {
		return 1<<32 - 1
	}
	return 1<<32 - 2
}
