package ti

import (
	"fmt"
	"math"
	"strconv"

	"kairos/trace"
)

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

// reqKey is SimGrid's request key: (sender, receiver, tag), world ranks
// as written in the trace.
type reqKey struct{ src, dst, tag int32 }

// fifo is the queue of request ids stored under one key, oldest first.
type fifo struct {
	ids  []uint64
	head int
}

func (f *fifo) empty() bool { return f.head == len(f.ids) }

func (f *fifo) pop() uint64 {
	id := f.ids[f.head]
	f.head++
	if f.head == len(f.ids) {
		f.ids, f.head = f.ids[:0], 0
	}
	return id
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
	ev   trace.Event

	nextReq   uint64
	store     map[reqKey]*fifo
	liveKeys  int // keys with at least one request (SimGrid's store.size())
	counts    [2][]int64
	warnEmpty bool // a wait met an empty store (SimGrid aborts there)
	initArg   int  // -1 no init seen yet, 0 init without argument, 1 with

	// regions maps the file names of location lines to region ids; it is
	// built when the trace is opened and only read here. addRegion, if
	// set, registers a name regions does not know (standalone readers).
	regions   map[string]uint32
	addRegion func(string) uint32
	meta      *trace.Meta
}

func newParser(file string, rank int32, nranks int, deftyp trace.Datatype) *parser {
	return &parser{file: file, rank: rank, nranks: nranks, deftyp: deftyp,
		store: make(map[reqKey]*fifo), initArg: -1, toks: make([][]byte, 0, 16)}
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

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' }

func trimRight(b []byte) []byte {
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

// split trims line as boost::trim does and splits it on runs of spaces
// and tabs. It reports false for the lines SimGrid skips: empty after
// trimming, or starting with '#'.
func (p *parser) split(line []byte) bool {
	p.line = line
	p.toks = p.toks[:0]
	i, n := 0, len(line)
	for i < n && isSpace(line[i]) {
		i++
	}
	for n > i && isSpace(line[n-1]) {
		n--
	}
	if i == n || line[i] == '#' {
		return false
	}
	for i < n {
		j := i
		for j < n && line[j] != ' ' && line[j] != '\t' {
			j++
		}
		p.toks = append(p.toks, line[i:j])
		for j < n && (line[j] == ' ' || line[j] == '\t') {
			j++
		}
		i = j
	}
	return true
}

// need checks CHECK_ACTION_PARAMS: at least n arguments after the rank
// and the action name.
func (p *parser) need(lineNo, n int, what string) error {
	if len(p.toks) < n+2 {
		return p.errAt(lineNo, len(p.toks), what)
	}
	return nil
}

func (p *parser) stoi(lineNo, i int, what string) (int32, error) {
	if i >= len(p.toks) {
		return 0, p.errAt(lineNo, i, what)
	}
	v, ok := parseStoi(p.toks[i])
	if !ok {
		return 0, p.errAt(lineNo, i, what)
	}
	return v, nil
}

// optStoi is SimGrid's parse_root: token i if present, else def.
func (p *parser) optStoi(lineNo, i int, def int32, what string) (int32, error) {
	if i >= len(p.toks) {
		return def, nil
	}
	return p.stoi(lineNo, i, what)
}

func (p *parser) real(lineNo, i int, what string) (float64, error) {
	if i >= len(p.toks) {
		return 0, p.errAt(lineNo, i, what)
	}
	v, ok := parseReal(p.toks[i])
	if !ok || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, p.errAt(lineNo, i, what)
	}
	return v, nil
}

// count parses a parse_integer count; negative counts are rejected unless
// allowNeg (recv and irecv, where a negative count means "probe first").
func (p *parser) count(lineNo, i int, r countRange, allowNeg bool) (int64, error) {
	if i >= len(p.toks) {
		return 0, p.errAt(lineNo, i, "a count")
	}
	v, ok := parseCount(p.toks[i], r)
	if !ok {
		return 0, p.errAt(lineNo, i, "a count (a number of elements)")
	}
	if v < 0 && !allowNeg {
		return 0, p.errAt(lineNo, i, "a non-negative count")
	}
	return v, nil
}

// vcount parses a per-member count of a v-collective (std::stoi in SimGrid).
func (p *parser) vcount(lineNo, i int) (int64, error) {
	if i >= len(p.toks) {
		return 0, p.errAt(lineNo, i, "a per-rank count")
	}
	v, ok := parseStoi(p.toks[i])
	if !ok || v < 0 {
		return 0, p.errAt(lineNo, i, "a non-negative integer per-rank count")
	}
	return int64(v), nil
}

// dtype is SimGrid's parse_datatype: token i if present, else the
// default datatype.
func (p *parser) dtype(lineNo, i int) (trace.Datatype, error) {
	if i >= len(p.toks) {
		return trace.DefaultType, nil
	}
	d, ok := parseDatatype(p.toks[i])
	if !ok {
		return 0, p.errAt(lineNo, i, "a datatype id (-1 to 59)")
	}
	return trace.Datatype(d), nil
}

// bytes converts a count of datatype d into bytes.
func (p *parser) bytes(lineNo, i int, count int64, d trace.Datatype) (int64, error) {
	sz := d.Size(p.deftyp)
	if count < 0 {
		return -1, nil
	}
	if sz != 0 && count > math.MaxInt64/sz {
		return 0, p.errAt(lineNo, i, "a count whose size in bytes fits in 63 bits")
	}
	return count * sz, nil
}

// countBytes parses token i as a count of datatype d and returns bytes.
func (p *parser) countBytes(lineNo, i int, r countRange, d trace.Datatype) (int64, error) {
	c, err := p.count(lineNo, i, r, false)
	if err != nil {
		return 0, err
	}
	return p.bytes(lineNo, i, c, d)
}

// vector parses n per-member counts from token i of datatype d, in bytes,
// into buffer k of the parser, and returns them with their total.
func (p *parser) vector(lineNo, i, n, k int, d trace.Datatype) ([]int64, int64, error) {
	v := p.counts[k][:0]
	var sum int64
	for j := 0; j < n; j++ {
		c, err := p.vcount(lineNo, i+j)
		if err != nil {
			return nil, 0, err
		}
		b, err := p.bytes(lineNo, i+j, c, d)
		if err != nil {
			return nil, 0, err
		}
		if sum > math.MaxInt64-b {
			return nil, 0, p.errAt(lineNo, i+j, "counts whose total fits in 63 bits")
		}
		sum += b
		v = append(v, b)
	}
	p.counts[k] = v
	return v, sum, nil
}

// peer maps SimGrid's spellings of MPI_ANY_SOURCE to trace.AnySource.
func peer(v int32) int32 {
	if v == simgridUndefined || v == simgridAnySource {
		return trace.AnySource
	}
	return v
}

// push stores request id under k.
func (p *parser) push(k reqKey, id uint64) {
	f := p.store[k]
	if f == nil {
		f = &fifo{}
		p.store[k] = f
	}
	if f.empty() {
		p.liveKeys++
	}
	f.ids = append(f.ids, id)
}

// pop removes and returns the oldest request stored under k, 0 if none.
func (p *parser) pop(k reqKey) uint64 {
	f := p.store[k]
	if f == nil || f.empty() {
		return 0
	}
	id := f.pop()
	if f.empty() {
		p.liveKeys--
	}
	return id
}

// clearStore forgets every request (waitall), dropping the keys that
// stayed unused since the previous clear so that the map does not grow
// without bound.
func (p *parser) clearStore() {
	for k, f := range p.store {
		if f.empty() {
			delete(p.store, k)
			continue
		}
		f.ids, f.head = f.ids[:0], 0
	}
	p.liveKeys = 0
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
