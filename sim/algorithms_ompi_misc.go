package sim

import (
	"cmp"
	"fmt"

	"kairos/trace"
)

// SimGrid's non-blocking logical-ring allgather (allgather-NTSLR-NB.cpp),
// one of the algorithms Open MPI's rules (smpi/coll-selector:ompi) may
// name for allgather, and the allgathers SimGrid aborts on with it.

func init() {
	allgatherAlgos["NTSLR_NB"] = []algorithm{allgatherNTSLRNB}
}

// Names of the carried requests of allgatherNTSLRNB.
const (
	ntslrRecv int32 = iota // the receives posted at the start
	ntslrSend              // the send of the current step
)

// allgatherNTSLRNB (allgather__NTSLR_NB) passes the blocks round the ring
// of neighbours: a member first posts its n-1 receives from its left
// neighbour, then at each of the n-1 steps posts the send of one block to
// its right neighbour and waits (Request::wait) for that step's receive,
// then for the send. Its own block is copied locally, which costs no
// time. When the send and receive sizes differ (in bytes), SimGrid falls
// back to allgather__default, which is allgatherLinear.
func allgatherNTSLRNB(c *collCall, p int, ops []collOp) ([]collOp, bool) {
	if c.e.SendBytes != c.e.RecvBytes {
		return allgatherLinear(c, p, ops)
	}
	n, me := c.n, c.me
	steps := int(n - 1)
	switch {
	case steps == 0 || p > 2*steps:
		return ops, false
	case p == 0:
		from := (me + n - 1) % n
		for range steps {
			ops = append(ops, collOp{peer: from, bytes: c.e.RecvBytes, carry: true, ref: ntslrRecv})
		}
		return ops, true
	case p%2 == 1:
		send := collOp{send: true, peer: (me + 1) % n, bytes: c.e.SendBytes, carry: true, ref: ntslrSend}
		return append(ops, send, collOp{wait: waitOne, ref: ntslrRecv}), true
	}
	return append(ops, collOp{wait: waitOne, ref: ntslrSend}), true
}

// allgatherTruncates refuses an allgather whose blocks are larger (in
// bytes) to send than to receive on more than one member, with
// allgather__default (algo "" or "default") or NTSLR_NB and rhv, which
// fall back to it then: every receive of another member's block truncates, and
// SimGrid 3.32 aborts (MPI_ERR_TRUNCATE).
func allgatherTruncates(k trace.Kind, algo string, c *collCall) error {
	if algo != "" && algo != "default" && algo != "NTSLR_NB" && algo != "rhv" {
		return nil
	}
	if c.n > 1 && c.e.SendBytes > c.e.RecvBytes {
		return fmt.Errorf("%s: blocks of %d bytes sent into receives of %d bytes are refused with %s: SimGrid 3.32 aborts (MPI_ERR_TRUNCATE)",
			k, c.e.SendBytes, c.e.RecvBytes, cmp.Or(algo, "default"))
	}
	return nil
}

// growTmpBuffers follows SimGrid 3.32's replay, whose collective actions
// take their buffers from one process-wide temporary send buffer and one
// receive buffer (smpi_get_tmp_sendbuffer, smpi_get_tmp_recvbuffer),
// grown to the action's sizes and never shrunk: until first grown, such
// a buffer is a null pointer, on which some algorithms give up at once
// (reduce_scatter ompi_ring of 0 elements; gather and scatter
// ompi_binomial, whose members asking 0 bytes of one give up). It records
// the buffers c's action grows for its member and sets c.tmpSendNull and
// c.tmpRecvNull where each is still null, c.tmpNull if either is (always
// false without Config.Compat). Barriers take no buffer; the
// algorithms' own temporary buffers are not counted.
func (s *simulation) growTmpBuffers(c *collCall) {
	s.markTmpGrown(tmpGrows(c))
	c.tmpSendNull = s.cfg.Compat && !s.tmpGrown[0]
	c.tmpRecvNull = s.cfg.Compat && !s.tmpGrown[1]
	c.tmpNull = c.tmpSendNull || c.tmpRecvNull
}

// markTmpGrown records that an action grew SimGrid's temporary send
// buffer (send) or receive buffer (recv).
func (s *simulation) markTmpGrown(send, recv bool) {
	s.tmpGrown[0] = s.tmpGrown[0] || send
	s.tmpGrown[1] = s.tmpGrown[1] || recv
}

// tmpGrows reports whether c's action grows SimGrid's temporary send and
// receive buffers for its member.
func tmpGrows(c *collCall) (send, recv bool) {
	e, atRoot := c.e, c.me == c.root
	switch e.Kind {
	case trace.Bcast:
		send = e.SendBytes > 0
	case trace.Reduce, trace.Allreduce, trace.Scan, trace.Exscan:
		send, recv = e.SendBytes > 0, e.SendBytes > 0
	case trace.Alltoall, trace.Allgather, trace.Allgatherv, trace.Alltoallv:
		send, recv = e.SendBytes > 0, e.RecvBytes > 0
	case trace.Gather, trace.Gatherv, trace.Scatter:
		send, recv = e.SendBytes > 0, atRoot && e.RecvBytes > 0
	case trace.Scatterv:
		send, recv = atRoot && e.SendBytes > 0, e.RecvBytes > 0
	case trace.ReduceScatter:
		send, recv = e.RecvBytes > 0, e.RecvBytes > 0
	}
	return send, recv
}
