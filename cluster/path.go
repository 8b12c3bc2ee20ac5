package cluster

import (
	"math/bits"

	"kairos/prsd"
	"kairos/trace"
)

// paths numbers the exact call paths of the ranks SignAll signs, and folds
// each distinct one into loops (prsd.Shape) once, for the papers' call-path
// and loop signatures.
//
// Folding every rank's calls as they are read would cost more than reading
// them; a rank's calls (a call is its kind and call site) are rather kept
// and hashed as they come, and folded only if no rank before had them.
// Ranks whose sequences of calls hash alike (two 64-bit hashes and the
// length) share a path: the folding is a function of the sequence, so
// equal sequences have equal shapes, and two different sequences collide
// only as two random 128-bit values do (the hashes are not cryptographic:
// sequences crafted to collide could).
type paths struct {
	in     *prsd.Interner
	known  map[pathKey]int32
	shapes []shapeSigs

	// The rank being signed: its calls not folded yet, its hash, and its
	// shape once it has more calls than maxBuffered.
	calls []callKey
	h     pathKey
	shape *prsd.Shape
	ev    trace.Event
}

type callKey struct {
	kind trace.Kind
	site uint64
}

// pathKey identifies a sequence of calls: two hashes and its length.
type pathKey struct {
	h1, h2 uint64
	n      int64
}

// shapeSigs are what a path's folded shape gives the signatures.
type shapeSigs struct {
	callPath, loop uint64
	folded         int
}

// maxBuffered is the number of a rank's calls kept before they are folded
// as they come: a bound on the memory of a long rank.
var maxBuffered = 1 << 20

func newPaths(in *prsd.Interner) *paths {
	if in == nil {
		in = prsd.NewInterner()
	}
	return &paths{in: in, known: map[pathKey]int32{}}
}

// start begins a rank.
func (p *paths) start() {
	p.calls, p.h, p.shape = p.calls[:0], pathKey{h1: 0xcbf29ce484222325, h2: 0x9e3779b97f4a7c15}, nil
}

// add appends a call of the rank.
func (p *paths) add(k trace.Kind, site uint64) {
	p.h.h1 = ((p.h.h1^site)*0x100000001b3 ^ uint64(k)) * 0x100000001b3
	p.h.h2 = bits.RotateLeft64((p.h.h2^(site+uint64(k)*0x9e3779b97f4a7c15))*0xbf58476d1ce4e5b9, 31)
	p.h.n++
	p.calls = append(p.calls, callKey{k, site})
	if len(p.calls) == maxBuffered {
		p.fold()
	}
}

// fold adds the buffered calls to the rank's shape.
func (p *paths) fold() {
	if p.shape == nil {
		p.shape = prsd.NewShape(p.in)
	}
	for _, c := range p.calls {
		p.ev.Kind, p.ev.CallSite = c.kind, c.site
		p.shape.Add(&p.ev)
	}
	p.calls = p.calls[:0]
}

// finish ends the rank and returns its path's number and signatures.
func (p *paths) finish() (int32, shapeSigs) {
	if id, ok := p.known[p.h]; ok {
		return id, p.shapes[id]
	}
	p.fold()
	p.shape.Finish()
	sigs := shapeSigs{p.shape.CallPath(), p.shape.LoopSignature(), p.shape.Len()}
	id := int32(len(p.shapes))
	p.known[p.h] = id
	p.shapes = append(p.shapes, sigs)
	p.shape = nil
	return id, sigs
}
