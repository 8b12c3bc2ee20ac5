package prsd

// A group of ranks (a cluster's members, the ranks that execute a call)
// is written as a Ranklist, ScalaTrace's compact encoding of a set of MPI
// ranks.

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// rlMaxRanks bounds the rank count of one parsed section and of a whole
// parsed list, so that a short string cannot make ParseRanklist (which
// enumerates ranks to refuse overlaps) allocate without bound.
const rlMaxRanks = 1 << 24

// rlMaxDims bounds the dimension of a parsed section; real ranklists have one
// to three dimensions, and the bound keeps span arithmetic within int64.
const rlMaxDims = 32

// Dim is one dimension of a Section: Len ranks, Stride apart. Len is at least
// 1 and Stride is non-negative (0 only when Len is 1), as in ScalaTrace's
// single-rank form ⟨1 r 1 0⟩.
type Dim struct{ Len, Stride int32 }

// Section is one ranklist section: the ranks Start + Σ i_k·Dims[k].Stride,
// 0 <= i_k < Dims[k].Len. It is written ⟨len(Dims) Start Len1 Stride1 ...⟩
// as in the ScalaTrace papers, first dimension outermost (largest stride).
type Section struct {
	Start int32
	Dims  []Dim
}

// Ranklist is a set of ranks as a union of disjoint sections (ScalaTrace's
// ranklist, generalised to several sections so that any set can be written).
// The zero value is the empty set.
type Ranklist []Section

// NewRanklist returns a compact, deterministic encoding of the set of ranks
// (input may be unsorted and hold duplicates; it is not modified). Ranks are
// expected to be non-negative, as MPI ranks are, since ParseRanklist refuses
// negative ones.
//
// After sorting and removing duplicates it tries one section of as many
// dimensions as the set needs (a regular grid of any dimension, first
// dimension outermost: {5,6,9,10} is ⟨2 5 2 4 2 1⟩, a 2×2×2 block of an
// 8×8×8 grid ⟨3 0 2 64 2 8 2 1⟩). Otherwise it splits the set greedily,
// from the smallest rank up, into maximal arithmetic runs (a run of one
// rank is ⟨1 r 1 0⟩, a run of two uses their difference as stride), and
// merges consecutive sections of equal shape whose starts progress
// regularly into sections of one more dimension, as long as any do: the
// edges and corners of a grid of ranks take one section each.
func NewRanklist(ranks []int32) Ranklist {
	set := slices.Clone(ranks)
	slices.Sort(set)
	return rlOfSet(slices.Compact(set))
}

// RanklistOfSorted is NewRanklist of ranks in increasing order, which it
// neither copies nor keeps (a decoder's groups, hundreds of them).
func RanklistOfSorted(ranks []int32) Ranklist {
	for i := 1; i < len(ranks); i++ {
		if ranks[i] <= ranks[i-1] {
			return NewRanklist(ranks)
		}
	}
	return rlOfSet(ranks)
}

// rlOfSet is NewRanklist of the set, sorted, of distinct ranks.
func rlOfSet(set []int32) Ranklist {
	runs := rlRuns(set)
	if len(runs) <= 1 {
		return runs
	}
	if s, ok := rlGrid(set); ok {
		return Ranklist{s}
	}
	return rlMerge(runs)
}

// rlStep returns b-a as a stride when it fits in an int32.
func rlStep(a, b int32) (int32, bool) {
	d := int64(b) - int64(a)
	return int32(d), d >= 0 && d <= math.MaxInt32
}

// rlRun returns the length and stride of the maximal arithmetic run at the
// start of the non-empty sorted set; a lone rank has stride 0.
func rlRun(set []int32) (int, int32) {
	if len(set) == 1 {
		return 1, 0
	}
	d, ok := rlStep(set[0], set[1])
	if !ok {
		return 1, 0
	}
	n := 2
	for n < len(set) && int64(set[n])-int64(set[n-1]) == int64(d) {
		n++
	}
	return n, d
}

// rlRuns splits the sorted set greedily into maximal arithmetic runs, one
// 1-D section each; a rank that would pair with the first of a longer run
// stays alone.
func rlRuns(set []int32) Ranklist {
	var l Ranklist
	for len(set) > 0 {
		n, d := rlRun(set)
		if n == 2 && len(set) > 2 {
			if m, _ := rlRun(set[1:]); m > 2 {
				n, d = 1, 0
			}
		}
		l = append(l, Section{Start: set[0], Dims: []Dim{{Len: int32(n), Stride: d}}})
		set = set[n:]
	}
	return l
}

// rlGrid reports whether the sorted set of two or more ranks is exactly a
// regular grid {s + Σ i_k·d_k}, and returns it as one section. The
// innermost dimension is the leading arithmetic run; the set must then be
// consecutive blocks of that run, shifted, whose first ranks form a grid
// themselves.
func rlGrid(set []int32) (Section, bool) {
	n, d := rlRun(set)
	if n == len(set) {
		return Section{Start: set[0], Dims: []Dim{{Len: int32(n), Stride: d}}}, true
	}
	if n < 2 || len(set)%n != 0 {
		return Section{}, false
	}
	starts := make([]int32, 0, len(set)/n)
	for b := 0; b < len(set); b += n {
		for j := 1; j < n; j++ {
			if set[b+j]-set[b] != set[j]-set[0] {
				return Section{}, false
			}
		}
		starts = append(starts, set[b])
	}
	outer, ok := rlGrid(starts)
	if !ok {
		return Section{}, false
	}
	return Section{Start: set[0], Dims: append(outer.Dims, Dim{Len: int32(n), Stride: d})}, true
}

// rlMerge merges runs of consecutive sections that have the same
// dimensions and starts a constant stride apart, larger than their span
// (so that the result nests), into sections of one more dimension, until
// no more merge.
func rlMerge(l Ranklist) Ranklist {
	for {
		var out Ranklist
		merged := false
		for i := 0; i < len(l); {
			j, stride := rlChain(l, i)
			if j-i < 2 {
				out = append(out, l[i])
				i++
				continue
			}
			dims := append([]Dim{{Len: int32(j - i), Stride: stride}}, rlShape(l[i].Dims)...)
			out = append(out, Section{Start: l[i].Start, Dims: dims})
			merged = true
			i = j
		}
		l = out
		if !merged {
			return l
		}
	}
}

// rlChain returns the end (exclusive) of the longest chain of sections
// from l[i] with l[i]'s shape and starts stride apart.
func rlChain(l Ranklist, i int) (int, int32) {
	if i+1 >= len(l) || !slices.Equal(rlShape(l[i].Dims), rlShape(l[i+1].Dims)) {
		return i + 1, 0
	}
	stride, ok := rlStep(l[i].Start, l[i+1].Start)
	if !ok || int64(stride) <= rlSpan(l[i].Dims) {
		return i + 1, 0
	}
	j := i + 2
	for j < len(l) && slices.Equal(rlShape(l[j].Dims), rlShape(l[i].Dims)) && int64(l[j].Start)-int64(l[j-1].Start) == int64(stride) {
		j++
	}
	return j, stride
}

// rlShape drops the dimensions of length 1 (a lone rank's ⟨1 r 1 0⟩ has
// no extent), so that a chain of lone ranks becomes a 1-D section.
func rlShape(dims []Dim) []Dim {
	var out []Dim
	for _, d := range dims {
		if d.Len > 1 {
			out = append(out, d)
		}
	}
	return out
}

// Ranks returns the ranks of l, sorted ascending without duplicates, so that
// callers can iterate over a group's members.
func (l Ranklist) Ranks() []int32 {
	out := make([]int32, 0, max(l.Len(), 0))
	for _, s := range l {
		out = rlAppend(out, int64(s.Start), s.Dims)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// rlAppend appends base + Σ i_k·dims[k].Stride for every index vector, in
// index order.
func rlAppend(dst []int32, base int64, dims []Dim) []int32 {
	if len(dims) == 0 {
		return append(dst, int32(base))
	}
	stride := int64(dims[0].Stride)
	for i := range int64(dims[0].Len) {
		dst = rlAppend(dst, base+i*stride, dims[1:])
	}
	return dst
}

// numbers returns how many numbers writing l takes (rsd-format.md: a
// section's dimensions and start, and a length and a stride a
// dimension): the measure of its size.
func (l Ranklist) numbers() int {
	n := 0
	for _, s := range l {
		n += 2 + 2*len(s.Dims)
	}
	return n
}

// Len returns the number of ranks in l without enumerating them, for sizing
// groups cheaply. It assumes disjoint sections, as ParseRanklist and
// NewRanklist guarantee.
func (l Ranklist) Len() int {
	n := 0
	for _, s := range l {
		n += int(s.count())
	}
	return n
}

// count returns the number of index vectors of s.
func (s Section) count() int64 {
	n := int64(1)
	for _, d := range s.Dims {
		n *= int64(d.Len)
	}
	return n
}

// Contains reports whether rank r is in l, without enumerating its ranks.
func (l Ranklist) Contains(r int32) bool {
	for _, s := range l {
		if s.contains(r) {
			return true
		}
	}
	return false
}

// contains reports whether r is a rank of s.
func (s Section) contains(r int32) bool {
	return rlHasOffset(int64(r)-int64(s.Start), s.Dims)
}

// rlHasOffset reports whether off = Σ i_k·dims[k].Stride for some indices.
// It only tries the indices of the first dimension that leave an offset the
// remaining dimensions can reach, which is at most one when strides nest (as
// NewRanklist's do), and stays correct when they do not.
func rlHasOffset(off int64, dims []Dim) bool {
	if len(dims) == 0 || off < 0 {
		return off == 0
	}
	d, rest := dims[0], dims[1:]
	stride, n := int64(d.Stride), int64(d.Len)
	if n <= 0 || stride < 0 {
		return false
	}
	if stride == 0 {
		return rlHasOffset(off, rest)
	}
	lo, hi := int64(0), min(n-1, off/stride)
	if e := off - rlSpan(rest); e > 0 {
		lo = (e + stride - 1) / stride
	}
	for i := lo; i <= hi; i++ {
		if rlHasOffset(off-i*stride, rest) {
			return true
		}
	}
	return false
}

// Below returns how many ranks of l are less than r: r's position among
// them where l holds it. Without enumerating the ranks: at most one index
// of a dimension is cut where strides nest, as NewRanklist's do.
func (l Ranklist) Below(r int32) int {
	n := int64(0)
	for _, s := range l {
		n += rlBelow(int64(r)-int64(s.Start), s.Dims)
	}
	return int(n)
}

// rlBelow returns how many offsets Σ i_k·dims[k].Stride are less than off.
func rlBelow(off int64, dims []Dim) int64 {
	if len(dims) == 0 {
		return int64(min(max(off, 0), 1))
	}
	d, rest := dims[0], dims[1:]
	n, stride := int64(d.Len), int64(d.Stride)
	if n <= 0 {
		return 0
	}
	if stride <= 0 {
		return min(n, 1) * rlBelow(off, rest) // a repeated offset counts once, as Ranks has it
	}
	var all int64 // indices whose whole block lies below off
	if e := off - rlSpan(rest); e > 0 {
		all = min(n, (e-1)/stride+1)
	}
	below := all * Section{Dims: rest}.count()
	for i := all; i < n && i*stride < off; i++ {
		below += rlBelow(off-i*stride, rest)
	}
	return below
}

// rlSpan returns the largest offset dims reach: Σ (Len-1)·Stride.
func rlSpan(dims []Dim) int64 {
	var s int64
	for _, d := range dims {
		s += int64(d.Len-1) * int64(d.Stride)
	}
	return s
}

// String writes l in the papers' notation with ASCII brackets, sections
// separated by a space: "<1 0 5 1>" for {0..4}, "<1 0 3 1> <1 7 1 0>" for
// {0,1,2,7}. ParseRanklist reads it back.
func (l Ranklist) String() string {
	var b strings.Builder
	for i, s := range l {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteByte('<')
		b.WriteString(strconv.Itoa(len(s.Dims)))
		b.WriteByte(' ')
		b.WriteString(strconv.Itoa(int(s.Start)))
		for _, d := range s.Dims {
			fmt.Fprintf(&b, " %d %d", d.Len, d.Stride)
		}
		b.WriteByte('>')
	}
	return b.String()
}

// ParseRanklist reads the notation String writes, so that ranklists stored in
// reduced traces can be read back. It also accepts the papers' "⟨" and "⟩",
// any ASCII white space around numbers and sections, and the empty string
// (the empty set). Errors name the byte offset and what was expected. It
// refuses dimensions outside 1..32, negative starts or strides, lengths
// below 1, a zero stride with a length above 1, ranks beyond int32, sections
// or lists of more than 1<<24 ranks, and sections that overlap (with each
// other or themselves).
func ParseRanklist(s string) (Ranklist, error) {
	p := rlParser{s: s}
	var l Ranklist
	var at []int
	var total int64
	for p.skipSpace(); p.pos < len(s); p.skipSpace() {
		at = append(at, p.pos)
		sec, err := p.section()
		if err != nil {
			return nil, err
		}
		if total += sec.count(); total > rlMaxRanks {
			return nil, fmt.Errorf("ranklist: section at byte %d: list has more than %d ranks", at[len(at)-1], rlMaxRanks)
		}
		l = append(l, sec)
	}
	if err := rlDisjoint(l, at); err != nil {
		return nil, err
	}
	return l, nil
}

// rlDisjoint returns an error naming the sections (by byte offset at) that
// share a rank, if any do. It enumerates ranks only when the cheap test of
// rlPlainlyDisjoint is inconclusive.
func rlDisjoint(l Ranklist, at []int) error {
	if rlPlainlyDisjoint(l) {
		return nil
	}
	var all []int32
	for _, s := range l {
		all = rlAppend(all, int64(s.Start), s.Dims)
	}
	slices.Sort(all)
	for i := 1; i < len(all); i++ {
		if all[i] == all[i-1] {
			return rlOverlap(l, at, all[i])
		}
	}
	return nil
}

// rlPlainlyDisjoint reports, without enumerating ranks, that every section
// of l nests (so its ranks are distinct) and that the sections' ranges
// [Start, Start+span] do not intersect, as for NewRanklist's output.
func rlPlainlyDisjoint(l Ranklist) bool {
	type interval struct{ lo, hi int64 }
	spans := make([]interval, 0, len(l))
	for _, s := range l {
		if !rlNests(s.Dims) {
			return false
		}
		lo := int64(s.Start)
		spans = append(spans, interval{lo, lo + rlSpan(s.Dims)})
	}
	slices.SortFunc(spans, func(a, b interval) int { return cmp.Compare(a.lo, b.lo) })
	for i := 1; i < len(spans); i++ {
		if spans[i].lo <= spans[i-1].hi {
			return false
		}
	}
	return true
}

// rlNests reports whether each dimension of length above 1, taken by
// decreasing stride, has a stride larger than the span of the dimensions
// after it: a mixed-radix system, whose ranks are all distinct.
func rlNests(dims []Dim) bool {
	sorted := slices.Clone(dims)
	slices.SortFunc(sorted, func(a, b Dim) int { return cmp.Compare(b.Stride, a.Stride) })
	for k, d := range sorted {
		if d.Len > 1 && int64(d.Stride) <= rlSpan(sorted[k+1:]) {
			return false
		}
	}
	return true
}

// rlOverlap describes rank r occurring twice in l.
func rlOverlap(l Ranklist, at []int, r int32) error {
	var in []int
	for i, s := range l {
		if s.contains(r) {
			in = append(in, at[i])
		}
	}
	if len(in) == 1 {
		return fmt.Errorf("ranklist: section at byte %d: rank %d occurs twice in the section", in[0], r)
	}
	return fmt.Errorf("ranklist: sections at bytes %d and %d overlap at rank %d", in[0], in[1], r)
}

// rlParser is the cursor of ParseRanklist over its input.
type rlParser struct {
	s   string
	pos int
}

// section reads one ⟨dim start len stride ...⟩ and checks its limits.
func (p *rlParser) section() (Section, error) {
	at := p.pos
	if !p.bracket("<", "⟨") {
		return Section{}, p.expected("'<' or '⟨'")
	}
	dim, err := p.number("the dimension", 1, rlMaxDims)
	if err != nil {
		return Section{}, err
	}
	start, err := p.number("the start rank", 0, math.MaxInt32)
	if err != nil {
		return Section{}, err
	}
	sec := Section{Start: int32(start), Dims: make([]Dim, 0, dim)}
	for k := range dim {
		d, err := p.dim(k + 1)
		if err != nil {
			return Section{}, err
		}
		sec.Dims = append(sec.Dims, d)
		if sec.count() > rlMaxRanks {
			return Section{}, fmt.Errorf("ranklist: section at byte %d: more than %d ranks", at, rlMaxRanks)
		}
	}
	if start+rlSpan(sec.Dims) > math.MaxInt32 {
		return Section{}, fmt.Errorf("ranklist: section at byte %d: ranks overflow int32", at)
	}
	p.skipSpace()
	if !p.bracket(">", "⟩") {
		return Section{}, p.expected("'>' or '⟩'")
	}
	return sec, nil
}

// dim reads the length and stride of dimension k (counted from 1).
func (p *rlParser) dim(k int64) (Dim, error) {
	what := fmt.Sprintf("the length of dimension %d", k)
	n, err := p.number(what, 1, math.MaxInt32)
	if err != nil {
		return Dim{}, err
	}
	p.skipSpace()
	at := p.pos
	what = fmt.Sprintf("the stride of dimension %d", k)
	d, err := p.number(what, 0, math.MaxInt32)
	if err != nil {
		return Dim{}, err
	}
	if d == 0 && n > 1 {
		return Dim{}, fmt.Errorf("ranklist: at byte %d: %s is 0 but its length is %d, which repeats a rank", at, what, n)
	}
	return Dim{Len: int32(n), Stride: int32(d)}, nil
}

// number skips white space and reads a decimal integer in [lo, hi], which
// must be followed by white space or a closing bracket.
func (p *rlParser) number(what string, lo, hi int64) (int64, error) {
	p.skipSpace()
	at, end := p.pos, p.pos
	if end < len(p.s) && p.s[end] == '-' {
		end++
	}
	digits := end
	for end < len(p.s) && '0' <= p.s[end] && p.s[end] <= '9' {
		end++
	}
	if end == digits {
		return 0, p.expected(what)
	}
	p.pos = end
	if end < len(p.s) && !rlIsSpace(p.s[end]) && !p.peek(">", "⟩") {
		return 0, p.expected("white space or '>' after " + what)
	}
	v, err := strconv.ParseInt(p.s[at:end], 10, 64)
	if err != nil || v < lo || v > hi {
		return 0, fmt.Errorf("ranklist: at byte %d: %s must be in [%d, %d], got %s", at, what, lo, hi, rlShort(p.s[at:end]))
	}
	return v, nil
}

// rlShort truncates a long number for an error message.
func rlShort(tok string) string {
	if len(tok) > 24 {
		return tok[:24] + "..."
	}
	return tok
}

// bracket consumes ascii or unicode at the cursor, if either is there.
func (p *rlParser) bracket(ascii, unicode string) bool {
	for _, b := range []string{ascii, unicode} {
		if strings.HasPrefix(p.s[p.pos:], b) {
			p.pos += len(b)
			return true
		}
	}
	return false
}

// peek reports whether ascii or unicode is at the cursor.
func (p *rlParser) peek(ascii, unicode string) bool {
	rest := p.s[p.pos:]
	return strings.HasPrefix(rest, ascii) || strings.HasPrefix(rest, unicode)
}

// skipSpace moves the cursor past ASCII white space.
func (p *rlParser) skipSpace() {
	for p.pos < len(p.s) && rlIsSpace(p.s[p.pos]) {
		p.pos++
	}
}

// rlIsSpace reports whether c is ASCII white space.
func rlIsSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r'
}

// expected returns a syntax error at the cursor.
func (p *rlParser) expected(what string) error {
	return fmt.Errorf("ranklist: at byte %d: expected %s, found %s", p.pos, what, p.found())
}

// found describes what is at the cursor, for error messages.
func (p *rlParser) found() string {
	if p.pos >= len(p.s) {
		return "end of input"
	}
	r, size := utf8.DecodeRuneInString(p.s[p.pos:])
	if r == utf8.RuneError && size == 1 {
		return fmt.Sprintf("byte 0x%02x", p.s[p.pos])
	}
	return strconv.QuoteRune(r)
}

// Check reports whether s is a valid section of a trace of ranks ranks:
// one to 32 dimensions, lengths of at least 1, a zero stride only for a
// length of 1, every rank below ranks, and dimensions that nest (each
// stride beyond the span of the smaller ones), so that its ranks are
// distinct and Contains is quick.
func (s Section) Check(ranks int) error {
	if len(s.Dims) == 0 || len(s.Dims) > rlMaxDims {
		return fmt.Errorf("a section of %d dimensions, expected 1 to %d", len(s.Dims), rlMaxDims)
	}
	for _, d := range s.Dims {
		if d.Len < 1 || d.Stride < 0 || d.Stride == 0 && d.Len > 1 {
			return fmt.Errorf("a dimension of length %d and stride %d", d.Len, d.Stride)
		}
	}
	if s.Start < 0 || int64(s.Start)+rlSpan(s.Dims) >= int64(ranks) {
		return fmt.Errorf("section ⟨%s⟩ reaches past rank %d", strings.Trim(Ranklist{s}.String(), "<>"), ranks-1)
	}
	if !rlNests(s.Dims) {
		return fmt.Errorf("section %s has dimensions that interleave", Ranklist{s})
	}
	return nil
}
