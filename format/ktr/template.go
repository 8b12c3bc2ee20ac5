package ktr

import (
	"slices"
	"sync"

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
	// relPartner and relSource are -1 where partner and source are
	// relative to the reader's rank (relativeTo), 0 where absolute: a
	// mask costs copyTemplate less than a flag.
	relPartner, relSource int16
}

// template flags.
const (
	tmplHasTime = 1 << iota
	tmplRequest // Request is set (its value is in the requests column)
)

// thinEvent is the id decode returns for an event read thin
// (trace.SkipUnreplayed): only its values that vary are set, the rest
// holds the event before's.
const thinEvent = -2

// unreplayed reports whether t's events are ones a replay does nothing
// for (trace.SkipUnreplayed).
func (t *template) unreplayed() bool {
	return trace.Unreplayed(t.kind, t.flags&tmplHasTime != 0)
}

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
	e.Partner = t.partner + int32(t.relPartner)&r.rank
	e.Source = t.source + int32(t.relSource)&r.rank
	e.Tag = t.tag
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

// relativeTo makes t's point-to-point partner and source relative to
// rank, the rank whose chunk holds it: the ranks of a program whose
// partners are neighbours (rank+1, rank-1...) then share their events.
// LAMMPS' melt on 64 ranks has 14,134 different distinct events, 2,280
// with relative partners; HPCC has 15,999 and 18,585 (a root stays as it
// is).
func (t *template) relativeTo(rank int32) {
	if !t.kind.IsPointToPoint() && t.kind != trace.Probe && t.kind != trace.Iprobe {
		return
	}
	if t.partner >= 0 {
		t.partner -= rank
		t.relPartner = -1
	}
	if t.kind == trace.SendRecv && t.source >= 0 {
		t.source -= rank
		t.relSource = -1
	}
}

// templatePool interns the distinct events of a file's chunks, so that
// the ranks' readers share one copy of each event their chunks have in
// common: a replay reads its ranks in turn, and their chunks' distinct
// events, private, left the cache between two of a rank's events. HPCC
// recorded on 64 ranks has 214,465 distinct events in its 193 chunks,
// 18,585 of them different (their partners relative, relativeTo), and
// spent a third of its analytic replay on the first load of a private
// one; shared, the replay takes 2% to 23% less CPU time (runs
// alternated with the binary before, the host noisy; 4% more
// instructions).
//
// The pool holds its events in generations, arrays that are never
// reallocated, so that a reader indexes its generation with 2 bytes an
// event (its chunk's table of indexes stays in the cache too). A chunk
// whose events do not fit what is left of the current generation starts
// the next, twice as large up to maxGeneration: the memory is bounded
// whatever a file holds, and the generations a reader still uses stay
// its own. Its readers may be of different goroutines.
type templatePool struct {
	mu  sync.Mutex
	m   map[uint64]uint16 // the pooled events' indexes in gen, by their hash
	gen []template        // the current generation, its length its capacity
	n   int               // its events

	scratch sync.Pool // *[]template: a chunk's events as decoded, before intern
}

// scratchOf returns a scratch slice of at least n events, for a chunk's
// events before they are interned (to be put back in p.scratch).
func (p *templatePool) scratchOf(n int) *[]template {
	sc, _ := p.scratch.Get().(*[]template)
	if sc == nil {
		sc = new([]template)
	}
	if cap(*sc) < n {
		*sc = make([]template, n)
	}
	return sc
}

// sharedReaders is how many of a file's readers may hold a chunk before
// they share their distinct events: few readers' (those of "stats", one
// a core, rank after rank) stay in the cache, and interning them costs
// their reads 5% more instructions.
const sharedReaders = 8

// The generations' sizes: 64 KB to 4 MB of events.
const (
	minGeneration = 1 << 10
	maxGeneration = 1 << 16
)

// intern sets idx[i] to the index of t[i], a chunk's distinct event, in
// the generation it returns, adding those not pooled yet. An event with
// vectors is added but not pooled: its vectors' index is its chunk's.
func (p *templatePool) intern(idx []uint16, t []template) []template {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.gen)-p.n < len(t) {
		c := max(minGeneration, 2*len(p.gen))
		for c < len(t) {
			c *= 2
		}
		p.gen, p.n, p.m = make([]template, min(c, maxGeneration)), 0, make(map[uint64]uint16)
	}
	for i := range t {
		x := &t[i]
		h := hashTemplate(x)
		j, ok := p.m[h]
		if ok && x.vectors == 0 && p.gen[j] == *x {
			idx[i] = j
			continue
		}
		j = uint16(p.n)
		p.gen[j] = *x
		p.n++
		if !ok && x.vectors == 0 {
			p.m[h] = j // (an event whose hash another has is not pooled)
		}
		idx[i] = j
	}
	return p.gen
}

// hashTemplate is template.hash, which a test replaces with one that
// collides.
var hashTemplate = (*template).hash

// hash mixes t's fields: the pool's map keys 8 bytes, not the 64 of a
// template, which took 14% of "stats" on HPCC in hashing and comparing.
func (t *template) hash() uint64 {
	w := [...]uint64{
		t.callSite, uint64(t.sendBytes), uint64(t.recvBytes),
		uint64(uint32(t.partner)) | uint64(uint32(t.source))<<32,
		uint64(uint32(t.tag)) | uint64(t.comm)<<32,
		uint64(t.newComm) | uint64(t.handle)<<32,
		uint64(t.region) | uint64(t.kind)<<32 | uint64(uint8(t.sendType))<<40 | uint64(uint8(t.recvType))<<48 | uint64(t.op)<<56,
		uint64(t.compute) | uint64(t.flags)<<8 | uint64(t.vectors)<<16 | uint64(uint16(t.relPartner))<<32 | uint64(uint16(t.relSource))<<48,
	}
	h := uint64(0x9e3779b97f4a7c15)
	for _, v := range w {
		h = (h ^ v) * 0xff51afd7ed558ccd
		h ^= h >> 32
	}
	return h
}
