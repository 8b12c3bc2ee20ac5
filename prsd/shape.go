package prsd

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash"
	"hash/fnv"
	"strings"

	"kairos/trace"
)

// Shape folds a rank's calls into loops without their parameters: the
// structure over which Bahmani and Mueller's call-path signature is
// taken, where the iterations of a time-step loop count once (over the raw
// calls, the XOR of a body repeated an even number of times would cancel).
type Shape struct {
	c    compressor
	seq  []*rnode
	buf  []byte  // Signatures'
	vals []int64 // Signatures'
}

// NewShape returns an empty shape whose calls and loops in numbers (nil: a
// new interner; sharing one among a trace's ranks saves memory).
func NewShape(in *Interner) *Shape {
	if in == nil {
		in = NewInterner()
	}
	return &Shape{c: compressor{in: in}}
}

// Add appends a call: only its kind and call site count.
func (s *Shape) Add(e *trace.Event) { s.c.add(e) }

// AddRun appends n calls of e's kind and call site, as n Adds would.
func (s *Shape) AddRun(e *trace.Event, n int) { s.c.addRun(e, int64(n)) }

// Finish closes the shape; Add must not be called afterwards.
func (s *Shape) Finish() { s.seq = s.c.finish() }

// Reset empties the shape for another rank's calls, with the same
// interner. Its nodes and tables are kept for the next calls: signing a
// trace whose ranks all fold differently (HPCC's 64) otherwise allocates
// every rank's nodes again, and collects them.
func (s *Shape) Reset() {
	s.c.reset()
	s.seq = nil
}

// Key is the exact shape: the calls by kind and call site, and the loops
// with their iteration counts. Ranks of equal keys make the same calls in
// the same order, the same number of times; unlike a hash, keys do not
// collide.
func (s *Shape) Key() string { return string(appendKey(nil, s.seq)) }

func appendKey(b []byte, items []*rnode) []byte {
	for _, n := range items {
		if !n.isLoop() {
			b = append(b, 'c', byte(n.kind))
			b = binary.AppendUvarint(b, n.site)
			continue
		}
		b = append(b, 'l')
		counts := n.counts.finish()
		b = counts.AppendBinary(b)
		b = appendKey(b, n.body)
		b = append(b, 'e')
	}
	return b
}

// StackSignature is a call's 64-bit stack signature: its call site, or
// for a call without one a fixed odd value of its MPI function (FNV-1a of
// its name).
func StackSignature(k trace.Kind, site uint64) uint64 {
	if site != 0 {
		return site
	}
	return kindSites[k]
}

var kindSites = func() (s [trace.NumKinds]uint64) {
	for k := range s {
		h := fnv.New64a()
		h.Write([]byte(trace.Kind(k).String()))
		s[k] = h.Sum64() | 1
	}
	return s
}()

func mix(h, v uint64) uint64 {
	h ^= v
	h *= 0x100000001b3
	return h ^ h>>29
}

// CallPath is Bahmani and Mueller's 64-bit call-path signature of the
// shape: the XOR of each item's signature (a call's stack signature, a
// loop's marker with its iteration counts, then its body's) times its
// position mod 10, plus 1. Unlike Key it can collide.
func (s *Shape) CallPath() uint64 {
	callPath, _ := s.Signatures()
	return callPath
}

// LoopSignature is ACURDION's loop signature: the average iteration count
// of the loops of each height (1: the innermost, holding no loop), 16 bits
// each from the least significant, heights above 3 in the last 16 bits.
func (s *Shape) LoopSignature() uint64 {
	_, loop := s.Signatures()
	return loop
}

// Signatures returns CallPath and LoopSignature from one walk of the
// shape, each loop's counts made a series once: a signer wants both, and
// a rank that folds into thousands of short loops (SMG2000's) spent a
// sixth of its signing on the two walks.
func (s *Shape) Signatures() (callPath, loop uint64) {
	w := sigWalk{buf: s.buf[:0], vals: s.vals[:0]}
	w.walk(s.seq)
	s.buf, s.vals = w.buf, w.vals
	for k := range w.sum {
		if w.num[k] > 0 {
			loop |= uint64(min(w.sum[k]/w.num[k], 0xffff)) << (16 * k)
		}
	}
	return w.callPath, loop
}

// sigWalk is Signatures' walk: the call-path signature so far and the
// item's position, the loops' average counts summed by height, and
// buffers for the counts' encoding and values.
type sigWalk struct {
	callPath uint64
	pos      int
	sum, num [4]float64
	buf      []byte
	vals     []int64 // a loop's counts after the first, to sum
}

// walk adds items and returns the height of their highest loop (0:
// none).
func (w *sigWalk) walk(items []*rnode) int {
	h := 0
	for _, n := range items {
		if !n.isLoop() {
			w.add(StackSignature(n.kind, n.site))
			continue
		}
		b := n.counts
		var runs int
		w.buf, runs = b.appendFinished(w.buf[:0])
		w.add(mix(0x9e3779b97f4a7c15, fnv1a(w.buf)) | 1)
		total := 0.0
		if b.n > 0 {
			total = float64(b.first)
		}
		if runs > 0 {
			w.vals, _, _ = expandRuns(w.buf, runs, w.vals[:0], b.first)
			for _, v := range w.vals {
				total += float64(v)
			}
		} else {
			for range b.n - 1 {
				total += float64(b.first)
			}
		}
		lh := w.walk(n.body) + 1
		k := min(lh, 4) - 1
		w.sum[k] += total / float64(max(b.n, 1))
		w.num[k]++
		h = max(h, lh)
	}
	return h
}

// add adds the signature of the item at the next position.
func (w *sigWalk) add(v uint64) {
	w.callPath ^= v * uint64(w.pos%10+1)
	w.pos++
}

// fnv1a is the 64-bit FNV-1a hash of b.
func fnv1a(b []byte) uint64 {
	h := uint64(0xcbf29ce484222325)
	for _, c := range b {
		h ^= uint64(c)
		h *= 0x100000001b3
	}
	return h
}

// Len is the number of items of the shape, loops' bodies counted once.
func (s *Shape) Len() int { return length(s.seq) }

func length(items []*rnode) int {
	n := 0
	for _, it := range items {
		n += 1 + length(it.body)
	}
	return n
}

// Format writes the shape as "3×(recv1 2×(send1) barrier1) finalize1",
// each call named by label, a loop by its iteration count (the least and
// the most where its instances differ) times its body. The text stops
// after about max bytes, with "…", if max is positive.
func (s *Shape) Format(label func(k trace.Kind, site uint64) string, max int) string {
	var b strings.Builder
	writeShape(&b, s.seq, label, max)
	return b.String()
}

func writeShape(b *strings.Builder, items []*rnode, label func(trace.Kind, uint64) string, max int) bool {
	for i, n := range items {
		if max > 0 && b.Len() >= max {
			b.WriteString(" …")
			return false
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		if !n.isLoop() {
			b.WriteString(label(n.kind, n.site))
			continue
		}
		counts := n.counts.finish()
		lo, hi := seriesRange(&counts)
		if lo == hi {
			fmt.Fprintf(b, "%d×(", lo)
		} else {
			fmt.Fprintf(b, "%d–%d×(", lo, hi)
		}
		if !writeShape(b, n.body, label, max) {
			return false
		}
		b.WriteByte(')')
	}
	return true
}

// seriesRange returns the least and the greatest value of s.
func seriesRange(s *Series) (lo, hi int64) {
	var c cursor
	for i := range s.N {
		v := c.next(s)
		if i == 0 || v < lo {
			lo = v
		}
		if i == 0 || v > hi {
			hi = v
		}
	}
	return lo, hi
}

// RankKey returns the exact key of rank r's calls with every parameter:
// its compressed sequence, end-points relative to the rank (Rel),
// communicators by family, computations and times left out. Ranks of equal
// keys make the same calls with the same parameters, end-points moved by
// their rank: Bahmani and Mueller's reference signature, without
// collisions. A rank whose calls fold little (foldsLittle) is keyed by the
// SHA-256 digest of the same calls and parameters, one call after the
// other, rather than by a structure that would take a kilobyte a call;
// ranks of equal calls fold alike, so that their keys are of one kind.
func RankKey(rd trace.Reader, r, ranks int, fam *Families) (string, error) {
	ctx, err := newRankCtx(int32(r), int32(ranks), 0, nil, fam)
	if err != nil {
		return "", err
	}
	c := compressor{in: NewInterner(), ctx: ctx, bounded: true, key: &keyHash{h: sha256.New()}}
	for rd.Next() {
		c.add(rd.Event())
	}
	if err := rd.Err(); err != nil {
		return "", err
	}
	c.close()
	c.flush()
	if c.little || foldsLittle(nodes(c.seq), c.calls) {
		return "h" + string(c.key.h.Sum(nil)), nil
	}
	return string(appendRankKey(nil, c.finish())), nil
}

// keyHash hashes a rank's calls with their parameters as RankKey keys
// them.
type keyHash struct {
	h   hash.Hash
	buf []byte
}

func (k *keyHash) add(r *rawCall, ctx *rankCtx) {
	b := append(k.buf[:0], byte(r.e.Kind))
	b = binary.AppendUvarint(b, r.e.CallSite)
	for f := range NumFields {
		if !f.IsVector() {
			b = binary.AppendVarint(b, ctx.encode(ctx.modes[f][keyMode(f)], r.scalar(f)))
			continue
		}
		v := r.vector(f)
		if v == nil {
			b = binary.AppendVarint(b, -1)
			continue
		}
		b = binary.AppendVarint(b, int64(len(v)))
		for _, x := range v {
			b = binary.AppendVarint(b, x)
		}
	}
	k.h.Write(b)
	k.buf = b
}

// keyMode is the index of the mode RankKey keys field f in: end-points
// relative to the rank, communicators by family, the others absolute.
func keyMode(f Field) int {
	switch f {
	case Partner, Source, Comm, NewComm:
		return 1
	}
	return 0
}

func appendRankKey(b []byte, items []*rnode) []byte {
	for _, n := range items {
		if n.isLoop() {
			b = append(b, 'l')
			counts := n.counts.finish()
			b = counts.AppendBinary(b)
			b = appendRankKey(b, n.body)
			b = append(b, 'e')
			continue
		}
		b = append(b, 'c', byte(n.kind))
		b = binary.AppendUvarint(b, n.site)
		for f := range NumFields {
			fa := n.acc.fields[f]
			if fa == nil {
				b = append(b, 0)
				continue
			}
			b = append(b, 1)
			v := fieldValue(fa, slot{f: f, mi: keyMode(f)})
			b = appendValue(b, &v)
		}
	}
	return b
}
