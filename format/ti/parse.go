package ti

import (
	"fmt"
	"math"
	"strconv"

	"kairos/internal/reqstore"
	"kairos/trace"
)

// reqKey is SimGrid's request key: (sender, receiver, tag), world ranks
// as written in the trace (MPI_ANY_SOURCE normalised).
type reqKey = reqstore.Key

// SimGrid's spelling of the wildcards it writes into traces (smpi.h).
const (
	simgridUndefined = -333 // what -trace-ti writes for MPI_ANY_SOURCE (a SimGrid bug)
	simgridAnySource = -555 // MPI_ANY_SOURCE
	simgridAnyTag    = -444 // MPI_ANY_TAG
)

// ParseError is a malformed line: File:Line:Col (1-based, Col in bytes)
// says where, Expected what was expected there and Got what was found.
type ParseError struct {
	File     string
	Line     int
	Col      int
	Expected string
	Got      string // the offending token, or "" at the end of the line
}

func (e *ParseError) Error() string {
	got := "end of line"
	if e.Got != "" {
		got = strconv.Quote(e.Got)
	}
	return fmt.Sprintf("%s:%d:%d: expected %s, got %s", e.File, e.Line, e.Col, e.Expected, got)
}

// parser turns the lines of one rank into events. It holds the state
// SimGrid's replay keeps per rank: the request store and the request
// counter.
type parser struct {
	file   string
	rank   int32
	nranks int
	deftyp trace.Datatype // the trace's default datatype (Meta.DefaultType)

	line []byte   // current line, untrimmed, for column numbers
	toks [][]byte // its tokens, subslices of line
	ln   int      // its line number
	err  error    // the first problem found on it
	ev   trace.Event

	nextReq   uint64
	store     requests
	counts    [2][]int64
	warnEmpty bool // a wait met an empty store (SimGrid aborts there)
	// warnDispls: an allgatherv gave non-zero displacements, which
	// Events do not keep.
	warnDispls bool

	// regions maps the file names of location lines to region ids; it is
	// built when the trace is opened and only read here. addRegion, if
	// set, registers a name regions does not know (standalone readers).
	regions   map[string]uint32
	addRegion func(string) uint32
	meta      *trace.Meta
}

// requests is a rank's request store, SimGrid's, with the requests of
// isends and irecvs logged in order rather than filed under their keys
// until a wait or a test reads the store: a waitall empties it, and most
// ranks post their requests and complete them all with a waitall (a
// stencil's halo exchange), so that the filing, a map of queues per rank,
// was most of the reading's cost past the parsing (BENCHMARKS.md). The
// store a wait reads is the same.
type requests struct {
	st      reqstore.Store[uint64]
	pending []pendingReq // pushed after those filed in st
}

type pendingReq struct {
	key reqKey
	id  uint64
}

// push stores request id under key, after the others. A log of
// maxPending requests is filed first, so that a rank that posts requests
// and never completes them takes the store's memory, not the log's three
// times as much.
func (r *requests) push(key reqKey, id uint64) {
	if len(r.pending) == maxPending {
		r.filed()
	}
	r.pending = append(r.pending, pendingReq{key, id})
}

// maxPending is the longest log of requests not filed: more than the
// requests a rank posts before its waitall in the codes that have one.
const maxPending = 1024

// filed returns the store with every request pushed filed.
func (r *requests) filed() *reqstore.Store[uint64] {
	for _, q := range r.pending {
		r.st.Push(q.key, q.id)
	}
	r.pending = r.pending[:0]
	return &r.st
}

// clear forgets every request.
func (r *requests) clear() {
	r.pending = r.pending[:0]
	if r.st.Len() > 0 {
		r.st.Clear()
	}
}

// len returns the number of requests stored, null ones included.
func (r *requests) len() int { return r.st.Len() + len(r.pending) }

func newParser(file string, rank int32, nranks int, deftyp trace.Datatype) *parser {
	// No tokens slice yet: the fast path needs none (a replay makes a
	// parser a rank).
	return &parser{file: file, rank: rank, nranks: nranks, deftyp: deftyp}
}

// errAt returns a ParseError at token i (or just past the last token if i
// is out of range).
func (p *parser) errAt(lineNo, i int, expected string) error {
	e := &ParseError{File: p.file, Line: lineNo, Expected: expected}
	if i < len(p.toks) {
		e.Got = string(p.toks[i])
		e.Col = p.col(p.toks[i])
	} else {
		e.Col = len(trimRight(p.line)) + 1
	}
	return e
}

// col returns the 1-based column of tok inside p.line.
func (p *parser) col(tok []byte) int { return cap(p.line) - cap(tok) + 1 }

func trimRight(b []byte) []byte {
	for len(b) > 0 && charClass[b[len(b)-1]]&space != 0 {
		b = b[:len(b)-1]
	}
	return b
}

// charClass tells the bytes apart for split: sep separates tokens
// (boost::is_any_of(" \t")), space is trimmed (boost::trim, isspace).
var charClass = [256]uint8{' ': sep | space, '\t': sep | space, '\n': space, '\r': space, '\v': space, '\f': space}

const (
	sep   = 1
	space = 2
)

// split trims line as boost::trim does and splits it on runs of spaces
// and tabs. It reports false for the lines SimGrid skips: empty after
// trimming, or starting with '#'.
func (p *parser) split(line []byte) bool {
	p.line = line
	toks := p.toks[:0]
	i, n := 0, len(line)
	for i < n && charClass[line[i]]&space != 0 {
		i++
	}
	for n > i && charClass[line[n-1]]&space != 0 {
		n--
	}
	if i == n || line[i] == '#' {
		p.toks = toks
		return false
	}
	line = line[:n]
	for i < len(line) {
		j := i + 1
		for j < len(line) && charClass[line[j]]&sep == 0 {
			j++
		}
		toks = append(toks, line[i:j])
		for j < len(line) && charClass[line[j]]&sep != 0 {
			j++
		}
		i = j
	}
	p.toks = toks
	return true
}

// The argument helpers below read token i of the current line. The first
// problem is kept in p.err and makes every later helper return zero, so
// that an action's parser reads as a list of fields and checks p.err
// once.

// fail records that token i is not what was expected.
func (p *parser) fail(i int, expected string) {
	if p.err == nil {
		p.err = p.errAt(p.ln, i, expected)
	}
}

// need checks CHECK_ACTION_PARAMS: at least n arguments after the rank
// and the action name.
func (p *parser) need(n int, what string) bool {
	if len(p.toks) < n+2 {
		p.fail(len(p.toks), what)
		return false
	}
	return true
}

// stoi parses a plain integer (std::stoi).
func (p *parser) stoi(i int, what string) int32 {
	if i < len(p.toks) && p.err == nil {
		if t := p.toks[i]; len(t) == 1 && t[0]-'0' <= 9 { // the common case, inlined
			return int32(t[0] - '0')
		}
	}
	return p.stoiSlow(i, what)
}

func (p *parser) stoiSlow(i int, what string) int32 {
	if p.err != nil {
		return 0
	}
	if i < len(p.toks) {
		if v, ok := parseStoi(p.toks[i]); ok {
			return v
		}
	}
	p.fail(i, what+stoiRange)
	return 0
}

// stoiRange says what parseStoi reads, for the error about a token it
// does not.
var stoiRange = fmt.Sprintf(" (an integer from %d to %d)", math.MinInt32, math.MaxInt32)

// optStoi is SimGrid's parse_root: token i if present, else def.
func (p *parser) optStoi(i int, def int32, what string) int32 {
	if i >= len(p.toks) {
		return def
	}
	return p.stoi(i, what)
}

// real parses a finite real (strtod).
func (p *parser) real(i int, what string) float64 {
	if p.err != nil {
		return 0
	}
	if i < len(p.toks) {
		if v, ok := parseReal(p.toks[i]); ok && !math.IsInf(v, 0) && !math.IsNaN(v) {
			return v
		}
	}
	p.fail(i, what)
	return 0
}

// count parses a parse_integer count; negative counts are rejected unless
// allowNeg (recv and irecv, where a negative count means "probe first").
func (p *parser) count(i int, r countRange, allowNeg bool) int64 {
	if p.err != nil {
		return 0
	}
	if i >= len(p.toks) {
		p.fail(i, "a count")
		return 0
	}
	v, ok := parseCount(p.toks[i], r)
	switch {
	case !ok:
		p.fail(i, "a count (a number of elements"+r.bound()+")")
	case v < 0 && !allowNeg:
		p.fail(i, "a non-negative count")
	}
	return v
}

// smallUint parses 1 to 9 decimal digits; it is small enough to inline.
func smallUint(t []byte) (int64, bool) {
	if len(t) == 0 || len(t) > 9 {
		return 0, false
	}
	var v int64
	for _, c := range t {
		if c-'0' > 9 {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	return v, true
}

// dtype is SimGrid's parse_datatype: token i if present, else the
// default datatype.
func (p *parser) dtype(i int) trace.Datatype {
	if i >= len(p.toks) {
		return trace.DefaultType
	}
	if d, ok := parseDatatype(p.toks[i]); ok {
		return trace.Datatype(d)
	}
	p.fail(i, "a datatype id (-1 to 59)")
	return trace.DefaultType
}

// bytes converts count elements of datatype d (token i) into bytes; a
// negative count stays -1.
func (p *parser) bytes(i int, count int64, d trace.Datatype) int64 {
	sz := d.Size(p.deftyp)
	if count < 0 {
		return -1
	}
	// Sizes are at most 32 bytes, so only huge counts can overflow.
	if count >= 1<<58 && sz != 0 && count > math.MaxInt64/sz {
		p.fail(i, "a count whose size in bytes fits in 63 bits")
		return 0
	}
	return count * sz
}

// countBytes parses token i as a count of datatype d and returns bytes.
func (p *parser) countBytes(i int, r countRange, d trace.Datatype) int64 {
	return p.bytes(i, p.count(i, r, false), d)
}

// vector parses n per-member counts (std::stoi) from token i, of datatype
// d, in bytes, into buffer k of the parser, and returns them with their
// total.
func (p *parser) vector(i, n, k int, d trace.Datatype) ([]int64, int64) {
	v := p.counts[k][:0]
	var sum int64
	for j := 0; j < n && p.err == nil; j++ {
		c := p.stoi(i+j, "a per-rank count")
		if c < 0 {
			p.fail(i+j, "a non-negative per-rank count")
		}
		b := p.bytes(i+j, int64(c), d)
		if sum > math.MaxInt64-b {
			p.fail(i+j, "counts whose total fits in 63 bits")
		}
		sum += b
		v = append(v, b)
	}
	p.counts[k] = v
	return v, sum
}

// peer maps SimGrid's spellings of MPI_ANY_SOURCE to trace.AnySource.
func peer(v int32) int32 {
	if v == simgridUndefined || v == simgridAnySource {
		return trace.AnySource
	}
	return v
}

// region returns the region id of a location line's file name.
func (p *parser) region(name []byte) uint32 {
	if id, ok := p.regions[string(name)]; ok {
		return id
	}
	if p.addRegion == nil {
		return 0
	}
	id := p.addRegion(string(name))
	if p.regions == nil {
		p.regions = make(map[string]uint32)
	}
	p.regions[string(name)] = id
	return id
}
