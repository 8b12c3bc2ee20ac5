package cluster

import (
	"math"
	"math/bits"
	"sync"

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
//
// Several signers may share one paths, each with its own pathReader,
// which folds with an interner of its own: identities never leave a
// shape, and signers that fold at once (a trace whose ranks all differ,
// HPCC's) do not wait for each other.
type paths struct {
	mu     sync.Mutex // guards the rest
	in     *prsd.Interner
	known  map[pathKey]int32
	shapes []shapeSigs
}

// pathReader is one signer's rank being signed: its calls not folded yet,
// its hash, and its shape once it has more runs of calls than
// maxBuffered.
//
// The calls are kept as runs of one call (a polling loop's thousands of
// MPI_Testany are one), in blocks of blockCalls runs, reused from rank to
// rank: a buffer that doubled was cleared and copied at each doubling, a
// quarter of the CPU time of signing HPCC's 4 ranks.
type pathReader struct {
	p     *paths
	in    *prsd.Interner // the signer's
	calls []callRun      // the block being filled
	full  [][]callRun    // the rank's blocks before it, full
	spare [][]callRun    // blocks for the next ones
	held  int            // the runs in full
	// The run of the last calls, not in calls yet (openN 0: none).
	openKind trace.Kind
	openSite uint64
	openN    uint64
	h        pathKey
	// shape folds the rank's calls, where they are folded (folded); it
	// is reset and reused from one rank to the next.
	shape  *prsd.Shape
	folded bool
	ev     trace.Event

	// The signer's table of its distinct events' sums (addDistinct),
	// kept from one rank to the next with the stamp of their group.
	distinct []distinctSums
	stamp    int
	used     []int32
}

// callRun is n calls in a row of one kind and call site.
type callRun struct {
	kind trace.Kind
	n    uint32
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

// maxBuffered is the number of a rank's runs of calls kept before they
// are folded as they come: a bound on the memory of a long rank.
var maxBuffered = 1 << 20

// blockCalls is the size of a block of runs (128 KiB).
const blockCalls = 1 << 13

// newPaths returns paths whose readers fold with in, or each with an
// interner of its own where in is nil.
func newPaths(in *prsd.Interner) *paths {
	return &paths{in: in, known: map[pathKey]int32{}}
}

// reader returns a new signer's reader of paths.
func (p *paths) reader() *pathReader {
	in := p.in
	if in == nil {
		in = prsd.NewInterner()
	}
	return &pathReader{p: p, in: in}
}

// start begins a rank.
func (p *pathReader) start() {
	p.empty()
	p.openN = 0
	p.h = pathKey{h1: 0xcbf29ce484222325, h2: 0x9e3779b97f4a7c15}
	p.folded = false
}

// empty drops the calls buffered, keeping their blocks.
func (p *pathReader) empty() {
	p.spare = append(p.spare, p.full...)
	clear(p.full)
	p.full, p.held, p.calls = p.full[:0], 0, p.calls[:0]
}

// add appends a call of the rank: a call more in the open run where it
// repeats its call. It is small enough to be inlined into the signing
// loop: the slow path (push) is a call of its own, and the runs are hashed
// together (hash) before they are folded or the rank ends.
func (p *pathReader) add(k trace.Kind, site uint64) {
	if p.openSite == site && p.openKind == k {
		p.openN++
		return
	}
	p.push(k, site)
}

// push buffers the open run and opens one of a call (not inlined: add
// is, into the signing loop).
//
//go:noinline
func (p *pathReader) push(k trace.Kind, site uint64) {
	if n := p.openN; n-1 < math.MaxUint32 && len(p.calls) < cap(p.calls) { // a run, and room
		p.calls = append(p.calls, callRun{p.openKind, uint32(n), p.openSite})
	} else {
		p.seal()
	}
	p.openKind, p.openSite, p.openN = k, site, 1
}

// seal buffers the open run, if any, in runs of at most 2^32-1 calls: the
// runs, so the hash, are a function of the calls alone.
func (p *pathReader) seal() {
	for p.openN > 0 {
		n := min(p.openN, math.MaxUint32)
		if len(p.calls) == cap(p.calls) {
			p.grow()
		}
		p.calls = append(p.calls, callRun{p.openKind, uint32(n), p.openSite})
		p.openN -= n
	}
}

// grow makes room for a call: another block, or at maxBuffered calls the
// buffered ones hashed and folded into the shape.
func (p *pathReader) grow() {
	if len(p.calls) > 0 {
		if p.held+len(p.calls) >= maxBuffered {
			p.hash()
			p.fold()
			return
		}
		p.full, p.held = append(p.full, p.calls), p.held+len(p.calls)
	}
	room := min(blockCalls, maxBuffered-p.held)
	if k := len(p.spare); k > 0 {
		b := p.spare[k-1]
		p.spare[k-1], p.spare = nil, p.spare[:k-1]
		p.calls = b[:0:min(cap(b), room)]
		return
	}
	p.calls = make([]callRun, 0, room)
}

// hash adds the buffered calls to the rank's hash.
func (p *pathReader) hash() {
	for _, b := range p.full {
		p.hashBlock(b)
	}
	p.hashBlock(p.calls)
}

// hashBlock adds the runs of a block to the rank's hash.
func (p *pathReader) hashBlock(calls []callRun) {
	h1, h2, n := p.h.h1, p.h.h2, p.h.n
	// One multiplication a run in each chain: the run's words are mixed
	// off the chains (the multiplications by constants), so that a run
	// costs the latency of one multiplication and a rotation.
	for _, c := range calls {
		k := (uint64(c.kind) | uint64(c.n)<<8) * 0x9e3779b97f4a7c15
		h1 = bits.RotateLeft64((h1^(c.site^k))*0xff51afd7ed558ccd, 27)
		h2 = bits.RotateLeft64((h2^(c.site+k))*0xbf58476d1ce4e5b9, 31)
		n += int64(c.n)
	}
	p.h = pathKey{h1, h2, n}
}

// fold adds the buffered calls to the rank's shape.
func (p *pathReader) fold() {
	if p.shape == nil {
		p.shape = prsd.NewShape(p.in)
	}
	if !p.folded {
		p.shape.Reset()
		p.folded = true
	}
	for _, b := range p.full {
		p.foldBlock(b)
	}
	p.foldBlock(p.calls)
	p.empty()
}

// foldBlock adds the runs of a block to the rank's shape.
func (p *pathReader) foldBlock(calls []callRun) {
	for _, c := range calls {
		p.ev.Kind, p.ev.CallSite = c.kind, c.site
		p.shape.AddRun(&p.ev, int(c.n))
	}
}

// finish ends the rank and returns its path's number and signatures. A
// path no rank had is folded outside the lock: two signers may fold the
// same one at once, to the same shape, and the first to be done numbers
// it.
func (p *pathReader) finish() (int32, shapeSigs) {
	p.seal()
	p.hash()
	if id, sigs, ok := p.p.lookup(p.h); ok {
		return id, sigs
	}
	p.fold()
	p.shape.Finish()
	callPath, loop := p.shape.Signatures()
	sigs := shapeSigs{callPath, loop, p.shape.Len()}
	t := p.p
	t.mu.Lock()
	defer t.mu.Unlock()
	if id, ok := t.known[p.h]; ok {
		return id, t.shapes[id]
	}
	id := int32(len(t.shapes))
	t.known[p.h] = id
	t.shapes = append(t.shapes, sigs)
	return id, sigs
}

// lookup returns the number and signatures of path h, if known.
func (t *paths) lookup(h pathKey) (int32, shapeSigs, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	id, ok := t.known[h]
	if !ok {
		return 0, shapeSigs{}, false
	}
	return id, t.shapes[id], true
}
