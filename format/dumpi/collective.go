package dumpi

import (
	"slices"

	"kairos/trace"
)

// collectiveKinds maps the collective labels to kinds.
var collectiveKinds = map[int]trace.Kind{
	lBarrier: trace.Barrier, lBcast: trace.Bcast, lGather: trace.Gather, lGatherv: trace.Gatherv,
	lScatter: trace.Scatter, lScatterv: trace.Scatterv, lAllgather: trace.Allgather,
	lAllgatherv: trace.Allgatherv, lAlltoall: trace.Alltoall, lAlltoallv: trace.Alltoallv,
	lAlltoallw: trace.Alltoallv, lReduce: trace.Reduce, lAllreduce: trace.Allreduce,
	lReduceScatter: trace.ReduceScatter, lScan: trace.Scan, lExscan: trace.Exscan,
}

// collective maps a collective call. Sizes are per member, in bytes, as
// SimGrid's actions carry them: SendBytes what each member sends (to each
// member for all-to-all), RecvBytes what it receives from each; the
// v-collectives list per-member bytes in SendCounts/RecvCounts with the
// totals in SendBytes/RecvBytes. Fields DUMPI writes only at the root
// (Gather's receive count, Scatter's send count) default, elsewhere, to
// the other side's size, which MPI requires to match.
func (r *Reader) collective(c *call, k trace.Kind) error {
	p := &programs()[c.label]
	get := func(n fieldName) int64 { return c.v[p.idx[n]] }
	has := func(n fieldName) bool { return p.idx[n] >= 0 }
	id, self, err := r.comm(c, get(fComm))
	if err != nil {
		return known(err)
	}
	if self {
		id = r.self // a collective of the rank alone
	}
	e := &r.ev
	e.Kind, e.Comm = k, id
	if has(fOp) {
		e.Op = dumpiOp(get(fOp))
	}
	if has(fRoot) {
		if e.Partner, err = r.world(c, id, self, get(fRoot)); err != nil {
			return err
		}
	}
	switch {
	case has(fCount): // Bcast, Reduce, Allreduce, Scan, Exscan
		e.SendBytes, e.SendType = r.bytes(get(fCount), get(fDatatype))
	case c.label == lReduceScatter:
		e.RecvCounts, e.RecvBytes = r.vector(c, 1, fRecvcounts, get(fDatatype), nil)
		e.RecvType = simgridType(get(fDatatype), r.typeSize(get(fDatatype)))
	case c.label == lAlltoallv, c.label == lAlltoallw:
		r.alltoallv(c)
	default:
		r.rootedOrGathered(c, id, self)
	}
	return nil
}

// place returns the rank's place in communicator id (self: in
// MPI_COMM_SELF), -1 if it is not a member.
func (r *Reader) place(id uint32, self bool) int {
	switch {
	case self:
		return 0
	case id == trace.WorldComm:
		return r.rank
	}
	return slices.Index(r.t.comms.members[id-1], int32(r.rank))
}

// dumpiOp maps DUMPI's operation numbers (dumpi_native_ops: 1 max to 13
// replace, 14 MPI_OP_NULL, from 15 user-defined) to Kairos'.
func dumpiOp(v int64) trace.Op {
	switch {
	case v >= int64(trace.OpMax) && v <= int64(trace.OpReplace):
		return trace.Op(v)
	case v > int64(trace.OpReplace)+1:
		return trace.OpUser
	}
	return trace.OpNone
}

// rootedOrGathered sets the sizes of Gather(v), Scatter(v), Allgather(v)
// and Alltoall on communicator id (self: MPI_COMM_SELF's). DUMPI records
// no buffer, so MPI_IN_PLACE shows only as a side of no bytes where the
// other has some (MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, as programs write
// it), which MPI allows in place alone: that side then moves the member's
// own block, as in place it does (it was read as nothing: an in-place
// allgather replayed sending nothing, an in-place gather's root failed
// check).
func (r *Reader) rootedOrGathered(c *call, id uint32, self bool) {
	p := &programs()[c.label]
	get := func(n fieldName) int64 { return c.v[p.idx[n]] }
	e := &r.ev
	atRoot := p.root >= 0 && c.v[0] == c.v[p.root]
	switch c.label {
	case lGather, lAllgather, lAlltoall:
		e.SendBytes, e.SendType = r.bytes(get(fSendcount), get(fSendtype))
		e.RecvBytes, e.RecvType = e.SendBytes, e.SendType
		if c.label != lGather || atRoot {
			e.RecvBytes, e.RecvType = r.bytes(get(fRecvcount), get(fRecvtype))
			if e.SendBytes == 0 && e.RecvBytes > 0 {
				e.SendBytes, e.SendType = e.RecvBytes, e.RecvType
			}
		}
	case lScatter:
		e.RecvBytes, e.RecvType = r.bytes(get(fRecvcount), get(fRecvtype))
		e.SendBytes, e.SendType = e.RecvBytes, e.RecvType
		if atRoot {
			e.SendBytes, e.SendType = r.bytes(get(fSendcount), get(fSendtype))
			if e.RecvBytes == 0 && e.SendBytes > 0 {
				e.RecvBytes, e.RecvType = e.SendBytes, e.SendType
			}
		}
	case lGatherv, lAllgatherv:
		e.SendBytes, e.SendType = r.bytes(get(fSendcount), get(fSendtype))
		e.RecvType = simgridType(get(fRecvtype), r.typeSize(get(fRecvtype)))
		if c.label == lAllgatherv || atRoot {
			e.RecvCounts, e.RecvBytes = r.vector(c, 1, fRecvcounts, get(fRecvtype), nil)
			if me := r.place(id, self); e.SendBytes == 0 && me >= 0 && me < len(e.RecvCounts) && e.RecvCounts[me] > 0 {
				e.SendBytes, e.SendType = e.RecvCounts[me], e.RecvType
			}
		}
	case lScatterv:
		e.RecvBytes, e.RecvType = r.bytes(get(fRecvcount), get(fRecvtype))
		e.SendType = simgridType(get(fSendtype), r.typeSize(get(fSendtype)))
		if atRoot {
			e.SendCounts, e.SendBytes = r.vector(c, 0, fSendcounts, get(fSendtype), nil)
			if me := r.place(id, self); e.RecvBytes == 0 && me >= 0 && me < len(e.SendCounts) && e.SendCounts[me] > 0 {
				e.RecvBytes, e.RecvType = e.SendCounts[me], e.SendType
			}
		}
	}
}

// alltoallv sets the per-member sizes of Alltoallv and Alltoallw (whose
// datatypes are per member).
func (r *Reader) alltoallv(c *call) {
	p := &programs()[c.label]
	e := &r.ev
	if c.label == lAlltoallv {
		st, rt := c.v[p.idx[fSendtype]], c.v[p.idx[fRecvtype]]
		e.SendCounts, e.SendBytes = r.vector(c, 0, fSendcounts, st, nil)
		e.RecvCounts, e.RecvBytes = r.vector(c, 1, fRecvcounts, rt, nil)
		e.SendType = simgridType(st, r.typeSize(st))
		e.RecvType = simgridType(rt, r.typeSize(rt))
		return
	}
	e.SendCounts, e.SendBytes = r.vector(c, 0, fSendcounts, 0, c.arr[p.idx[fSendtypes]])
	e.RecvCounts, e.RecvBytes = r.vector(c, 1, fRecvcounts, 0, c.arr[p.idx[fRecvtypes]])
}

// vector converts the count array name of c to bytes into the reader's
// buffer slot, with datatype dt for all or types[i] per member; it returns
// the bytes and their total.
func (r *Reader) vector(c *call, slot int, name fieldName, dt int64, types []int32) ([]int64, int64) {
	counts := c.arr[programs()[c.label].idx[name]]
	out := r.counts[slot][:0]
	var total int64
	for i, n := range counts {
		t := dt
		if types != nil {
			t = -1
			if i < len(types) {
				t = int64(types[i])
			}
		}
		b := int64(n) * r.typeSize(t)
		out = append(out, b)
		total += b
	}
	if out == nil {
		out = []int64{}
	}
	r.counts[slot] = out
	return out, total
}
