package ktr

import (
	"slices"

	"kairos/trace"
)

// template is a distinct event of a chunk in the templates form, as a
// reader holds it: the fields a distinct event sets, in one cache line
// rather than an Event's three. A replay holds every rank's current
// chunk's distinct events at once, and reads its ranks in turn: HPCC
// recorded on 64 ranks has about 800 distinct events a chunk, 9.4 MB of
// Events for the 64 ranks, 3.3 MB of templates (its replays' peak
// memory 77-80 MB to 63-64 MB, its analytic replay's CPU time 13%
// less).
type template struct {
	callSite             uint64
	sendBytes, recvBytes int64
	partner, source, tag int32
	comm, newComm        uint32
	handle, region       uint32
	kind                 trace.Kind
	sendType, recvType   trace.Datatype
	op                   trace.Op
	compute              uint8 // the Compute placeholder (computeInt, computeFloat), or 0
	flags                uint8
	vectors              uint16 // 1 + the index of its vectors in templateVectors, 0 without
}

// template flags.
const (
	tmplHasTime = 1 << iota
	tmplRequest // Request is set (its value is in the requests column)
)

// templateVectors are a distinct event's vectors: their lengths and
// whether each is nil matter; Requests' elements are read from the
// requests column.
type templateVectors struct {
	sendCounts, recvCounts []int64
	requests               []uint64
}

// setTemplate sets t to e, a decoded distinct event, whose vectors, if
// any, go to vecs; it reports false where e's Compute is no placeholder.
// Its times, if any, are not kept: an event's are the time column's.
func setTemplate(t *template, e *trace.Event, vecs *[]templateVectors) bool {
	if e.Compute != 0 && e.Compute != computeInt && e.Compute != computeFloat {
		return false
	}
	*t = template{
		callSite: e.CallSite, sendBytes: e.SendBytes, recvBytes: e.RecvBytes,
		partner: e.Partner, source: e.Source, tag: e.Tag,
		comm: e.Comm, newComm: e.NewComm, handle: e.Handle, region: e.Region,
		kind: e.Kind, sendType: e.SendType, recvType: e.RecvType, op: e.Op,
		compute: uint8(e.Compute),
	}
	if e.HasTime {
		t.flags |= tmplHasTime
	}
	if e.Request != 0 {
		t.flags |= tmplRequest
	}
	if e.SendCounts != nil || e.RecvCounts != nil || e.Requests != nil {
		// The codec's vectors are its state's buffers, which the next
		// event reuses.
		*vecs = append(*vecs, templateVectors{slices.Clone(e.SendCounts), slices.Clone(e.RecvCounts), slices.Clone(e.Requests)})
		t.vectors = uint16(len(*vecs))
	}
	return true
}

// copyTemplate sets e to t, a distinct event, as DecodeEvent would have
// decoded it: its vectors in the reader's buffers, valid until the next
// event, and the fields skimmed unset. Request is a placeholder (1) for
// the requests column's value, Requests' elements too.
func (r *payloadReader) copyTemplate(e *trace.Event, t *template) {
	// Field by field: a composite literal clears the whole Event first.
	e.Kind, e.SendType, e.RecvType, e.Op = t.kind, t.sendType, t.recvType, t.op
	e.Partner, e.Source, e.Tag = t.partner, t.source, t.tag
	e.Comm, e.NewComm, e.Handle, e.Region = t.comm, t.newComm, t.handle, t.region
	e.SendBytes, e.RecvBytes, e.CallSite = t.sendBytes, t.recvBytes, t.callSite
	e.Request = uint64(t.flags&tmplRequest) / tmplRequest
	e.Compute = float64(t.compute)
	e.HasTime, e.Enter, e.Exit = t.flags&tmplHasTime != 0, 0, 0
	e.SendCounts, e.RecvCounts, e.Requests = nil, nil, nil
	if t.vectors != 0 {
		v := &r.tmplVecs[t.vectors-1]
		if v.sendCounts != nil {
			e.SendCounts = copyInto(&r.counts[0], v.sendCounts)
		}
		if v.recvCounts != nil {
			e.RecvCounts = copyInto(&r.counts[1], v.recvCounts)
		}
		if v.requests != nil {
			e.Requests = copyInto(&r.reqs, v.requests)
		}
	}
	if r.skip&trace.SkipRequests != 0 {
		e.Request, e.Requests = 0, nil
	}
}
