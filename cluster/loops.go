package cluster

// Loop compression, as ScalaTrace's intra-node compression folds a rank's
// calls into regular section descriptors (RSDs, a loop of a body of calls)
// and power-RSDs (loops of loops) before its signatures are taken: the
// call-path signature is meant over that constant-size form, where every
// iteration of a time-step loop does not count again (over the raw calls,
// the XOR of a body repeated an even number of times would cancel).

// maxBody is the longest loop body, in items (calls or loops), that the
// compressor looks for: ScalaTrace's window.
const maxBody = 64

// node is an item of a compressed sequence: a call (its stack signature)
// or a loop of count iterations of body.
type node struct {
	site  uint64
	body  []node
	count int
	hash  uint64 // identifies the call, or the loop with its body and count
}

func (n *node) isLoop() bool { return n.body != nil }

func mix(h, v uint64) uint64 {
	h ^= v
	h *= 0x100000001b3
	return h ^ h>>29
}

// rehash sets a loop's hash from its body and count.
func (n *node) rehash() {
	h := uint64(0xcbf29ce484222325)
	for i := range n.body {
		h = mix(h, n.body[i].hash)
	}
	n.hash = mix(mix(h, uint64(len(n.body))), uint64(n.count))
}

// compressor folds a stream of calls into loops, online.
type compressor struct {
	seq []node
}

// add appends a call and folds the repeats it completes.
func (c *compressor) add(site uint64) {
	c.seq = append(c.seq, node{site: site, hash: site})
	for c.fold() {
	}
}

// fold folds the end of the sequence once: a body that repeats the loop
// just before it adds an iteration to that loop, and a body repeated
// twice in a row becomes a loop of two. It reports whether it folded.
func (c *compressor) fold() bool {
	s := c.seq
	for l := 1; l <= maxBody && l < len(s); l++ {
		tail := s[len(s)-l:]
		if prev := &s[len(s)-l-1]; prev.isLoop() && sameNodes(prev.body, tail) {
			prev.count++
			prev.rehash()
			c.seq = s[:len(s)-l]
			return true
		}
		if 2*l <= len(s) && sameNodes(s[len(s)-2*l:len(s)-l], tail) {
			loop := node{body: append([]node(nil), tail...), count: 2}
			loop.rehash()
			c.seq = append(s[:len(s)-2*l], loop)
			return true
		}
	}
	return false
}

func sameNodes(a, b []node) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].hash != b[i].hash {
			return false
		}
	}
	return true
}

// loopMarker stands for the start of a loop of count iterations in the
// call-path signature.
func loopMarker(count int) uint64 { return mix(0x9e3779b97f4a7c15, uint64(count)) | 1 }

// callPath is the call-path signature of the compressed sequence: the
// XOR of each item's signature (a call's stack signature, a loop's marker
// with its count, then its body's) times its position mod 10, plus 1.
func callPath(seq []node) uint64 {
	var sig uint64
	pos := 0
	var walk func([]node)
	walk = func(items []node) {
		for i := range items {
			n := &items[i]
			v := n.site
			if n.isLoop() {
				v = loopMarker(n.count)
			}
			sig ^= v * uint64(pos%10+1)
			pos++
			if n.isLoop() {
				walk(n.body)
			}
		}
	}
	walk(seq)
	return sig
}

// loopSignature is ACURDION's loop signature: the average iteration count
// of the loops of each height (1: the innermost, holding no loop), 16 bits
// each from the least significant, heights above 3 in the last 16 bits.
func loopSignature(seq []node) uint64 {
	var sum, num [4]float64
	var height func([]node) int
	height = func(items []node) int {
		h := 0
		for i := range items {
			if n := &items[i]; n.isLoop() {
				lh := height(n.body) + 1
				k := min(lh, 4) - 1
				sum[k] += float64(n.count)
				num[k]++
				h = max(h, lh)
			}
		}
		return h
	}
	height(seq)
	var sig uint64
	for k := range sum {
		if num[k] > 0 {
			sig |= uint64(min(sum[k]/num[k], 0xffff)) << (16 * k)
		}
	}
	return sig
}

// length is the number of items of the compressed sequence, loops'
// bodies included once.
func length(seq []node) int {
	n := 0
	for i := range seq {
		n++
		n += length(seq[i].body)
	}
	return n
}
