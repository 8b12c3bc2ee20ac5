// Package trace is Kairos' model of an MPI execution trace: a set of ranks,
// each an ordered stream of events, with the metadata the events refer to
// (regions, communicators). Time-independent and timed traces are the same
// model: a timed trace is one whose events carry timestamps.
//
// Every reader in Kairos produces a Source, every analysis consumes one.
// A Source streams one rank at a time, so that a trace need never be held
// whole; Trace is the in-memory Source, holding each rank in the compact
// event codec (see AppendEvent).
package trace

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// MaxRanks bounds the ranks of a trace Kairos reads or simulates (16.8
// million, twice the cores of the largest machines of 2025), so that one
// corrupt number, a rank of a text line or -np, cannot make it allocate
// without limit.
const MaxRanks = 1 << 24

// Meta is what a trace's events refer to, shared by all ranks.
type Meta struct {
	// DefaultType is the datatype of counts where an event names none.
	// SimGrid's rule: MPI_BYTE, unless "init" has an argument, then
	// MPI_DOUBLE.
	DefaultType Datatype
	// Regions are the nodes of the call-path tree: Regions[0] is the
	// unknown region, every other region names a function and its caller.
	Regions []Region
	// Comms are the communicators other than MPI_COMM_WORLD.
	Comms []Comm
	// Attrs records where the trace came from: "format", "generator",
	// parameters, clock properties. Free form, for humans, but for
	// AttrNoReplay.
	Attrs map[string]string

	regionIndex map[regionKey]uint32
}

// AttrNoReplay is the attribute a reader sets to why its format cannot be
// replayed (a simulation, a deadlock check, a classification), so that
// every verb that replays says so, the same way, before it starts.
const AttrNoReplay = "no-replay"

// AttrClaimedRanks is the attribute a reader sets where the trace names
// far more ranks than it holds the events of (a text line naming rank
// 10,000,000): what it claims. Reading it costs little a rank without
// events (check, stats); a verb that keeps state for every rank
// (simulate, reduce, classify) refuses it, so that its memory follows what
// the file holds.
const AttrClaimedRanks = "claimed-ranks"

// MostRanks is the most ranks a trace of which withEvents ranks have
// events may name without claiming the others (AttrClaimedRanks): 4,096,
// or 64 for each rank with events.
func MostRanks(withEvents int) int { return max(4096, 64*withEvents) }

// AttrNoFinalize is the attribute a reader sets to why the trace's ranks
// may end before MPI_Finalize though the run did not (its writer stopped
// measuring first), so that a check does not take them for a run cut
// short.
const AttrNoFinalize = "no-finalize"

// OtherThreadCalls is the note of a trace whose tracer, Kairos', did not
// record n MPI calls of threads other than the one that initialized MPI
// (MPI_THREAD_MULTIPLE), which its OTF2 reader (from the archive's
// anchor) and its TI reader (from rank 0's file's last comment line) give
// alike.
func OtherThreadCalls(n uint64) string {
	calls := "MPI calls"
	if n == 1 {
		calls = "MPI call"
	}
	return fmt.Sprintf("the tracer did not record %d %s of threads other than the one that initialized MPI "+
		"(MPI_THREAD_MULTIPLE): their messages and collectives are missing, their partners' read as never matched, "+
		"and a replay may not complete", n, calls)
}

// Region is a node of the call-path tree: a function entered from Parent.
type Region struct {
	Name   string
	Parent uint32
}

type regionKey struct {
	name   string
	parent uint32
}

// Comm is a communicator: its members' world ranks, in communicator rank
// order.
type Comm struct {
	ID      uint32
	Members []int32
}

// NewMeta returns metadata with MPI_BYTE as default datatype and only the
// unknown region.
func NewMeta() Meta {
	return Meta{DefaultType: TypeByte, Regions: []Region{{}}, Attrs: map[string]string{}}
}

// AddRegion returns the id of the region name entered from parent, adding
// it if it is new.
func (m *Meta) AddRegion(name string, parent uint32) uint32 {
	if len(m.Regions) == 0 {
		m.Regions = []Region{{}}
	}
	m.indexRegions()
	k := regionKey{name, parent}
	if id, ok := m.regionIndex[k]; ok {
		return id
	}
	id := uint32(len(m.Regions))
	m.Regions = append(m.Regions, Region{Name: name, Parent: parent})
	m.regionIndex[k] = id
	return id
}

// RegionID returns the id of region name entered from parent, if m has
// it. It builds the index AddRegion keeps where there is none yet: call
// it once before goroutines that only read m share it.
func (m *Meta) RegionID(name string, parent uint32) (uint32, bool) {
	m.indexRegions()
	id, ok := m.regionIndex[regionKey{name, parent}]
	return id, ok
}

// indexRegions builds the index of the regions by name and parent, if
// there is none.
func (m *Meta) indexRegions() {
	if m.regionIndex == nil {
		m.regionIndex = make(map[regionKey]uint32, len(m.Regions))
		for i, r := range m.Regions {
			m.regionIndex[regionKey{r.Name, r.Parent}] = uint32(i)
		}
	}
}

// RegionName returns the name of region id, or "" if it is unknown.
func (m *Meta) RegionName(id uint32) string {
	if int(id) < len(m.Regions) {
		return m.Regions[id].Name
	}
	return ""
}

// MPIFunction returns the MPI function of an event whose kind stands for
// several (Kind.NamedByRegion): a local or deferred call (one that
// communicates nothing itself: MPI_Comm_rank, an MPI_Iprobe whose message
// another call receives, an MPI_Waitall of no request) or an MPI-IO call
// (MPI_File_set_view is a File event, MPI_File_write_at_all a FileWrite).
// It is the event's region's name where that names an MPI function, ""
// for other events or where the reader kept no name. Users know such
// calls by that name rather than by the model's kind.
func (m *Meta) MPIFunction(e *Event) string {
	if !e.Kind.NamedByRegion() {
		return ""
	}
	if name := m.RegionName(e.Region); strings.HasPrefix(name, "MPI_") {
		return name
	}
	return ""
}

// CallPath returns the names of the regions from the outermost to id.
func (m *Meta) CallPath(id uint32) []string {
	var path []string
	for seen := 0; id != 0 && int(id) < len(m.Regions) && seen < len(m.Regions); seen++ {
		path = append(path, m.Regions[id].Name)
		id = m.Regions[id].Parent
	}
	for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
		path[i], path[j] = path[j], path[i]
	}
	return path
}

// Members returns the world ranks of communicator id, in communicator rank
// order, for a trace of n ranks; nil if the communicator is not defined.
// The slice is shared: callers must not modify it.
func (m *Meta) Members(id uint32, n int) []int32 {
	if id == WorldComm {
		return worldRanks(n)
	}
	if i := commIndex(m.Comms, id); i >= 0 {
		return m.Comms[i].Members
	}
	return nil
}

// commIndex returns the index of the first communicator id of comms, -1
// if there is none. A trace of many communicators (each rank's own, as
// PETSc's duplicates of MPI_COMM_SELF) is looked up at every collective:
// past a few, the lists are indexed by id, the indexes of the last lists
// kept (readers and analyses share one list at a time, seldom more).
func commIndex(comms []Comm, id uint32) int {
	if len(comms) < 16 {
		return scanComms(comms, id)
	}
	ix := commIndexes.of(comms)
	if i, ok := ix.pos[id]; ok && comms[i].ID == id {
		return int(i)
	}
	return scanComms(comms, id) // undefined, or the list changed in place
}

func scanComms(comms []Comm, id uint32) int {
	for i := range comms {
		if comms[i].ID == id {
			return i
		}
	}
	return -1
}

// idIndex is a list of communicators' index by id: the list is the one
// whose first element is at first and whose length is n.
type idIndex struct {
	first *Comm
	n     int
	pos   map[uint32]int32
}

// idIndexes are the indexes of the last lists looked up.
type idIndexes struct {
	mu   sync.Mutex
	last [4]*idIndex
	next int
}

var commIndexes idIndexes

// of returns the index of comms, made if it is not among the last ones.
func (x *idIndexes) of(comms []Comm) *idIndex {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, ix := range x.last {
		if ix != nil && ix.first == &comms[0] && ix.n == len(comms) {
			return ix
		}
	}
	ix := &idIndex{first: &comms[0], n: len(comms), pos: make(map[uint32]int32, len(comms))}
	for i := range comms {
		if _, ok := ix.pos[comms[i].ID]; !ok {
			ix.pos[comms[i].ID] = int32(i)
		}
	}
	x.last[x.next] = ix
	x.next = (x.next + 1) % len(x.last)
	return ix
}

// identity holds 0, 1, 2...: the world communicator's members for any
// number of ranks up to its length, shared by every caller (analyses ask
// for them at each collective, and a copy each time made their cost grow
// with the square of the ranks).
var identity atomic.Pointer[[]int32]

// worldRanks returns 0..n-1, a slice of identity (grown once, for all,
// where n is beyond it; the capacity is n, so that an append copies).
func worldRanks(n int) []int32 {
	if n <= 0 {
		return []int32{}
	}
	p := identity.Load()
	if p == nil || len(*p) < n {
		w := make([]int32, max(n, min(2*lenOf(p), MaxRanks)))
		for i := range w {
			w[i] = int32(i)
		}
		identity.Store(&w)
		p = &w
	}
	return (*p)[:n:n]
}

func lenOf(p *[]int32) int {
	if p == nil {
		return 0
	}
	return len(*p)
}

// Reader streams the events of one rank in program order.
type Reader interface {
	// Next advances to the next event and reports whether there is one.
	Next() bool
	// Event returns the current event; it is valid until Next is called
	// again.
	Event() *Event
	// Err returns the first error met, nil at a clean end.
	Err() error
	// Close releases the reader's resources.
	Close() error
}

// Concurrent is implemented by Sources whose readers of distinct ranks may
// be used from several goroutines at once when ConcurrentRanks reports
// true, so that a pass over every rank may read several at a time.
type Concurrent interface {
	ConcurrentRanks() bool
}

// ConcurrentRanks reports whether src is Concurrent and its readers may
// be used at once.
func ConcurrentRanks(src Source) bool {
	c, ok := src.(Concurrent)
	return ok && c.ConcurrentRanks()
}

// Skip names fields of an event that a pass does not read.
type Skip uint8

// SkipRequests leaves Request 0 and Requests nil: a pass that reads no
// requests (signing ranks, say) then spends nothing decoding them.
const SkipRequests Skip = 1

// SkipUnreplayed sets of an event that a replay does nothing for
// (Unreplayed) only its Kind, Compute, HasTime, Enter and Exit (and
// Request, unless skimmed); its other fields are left as they were. An
// untimed replay that drops such events (UntimedSource.DropUnreplayed)
// then spends nothing building the rest: a polling program's OTF2 trace
// is mostly polls.
const SkipUnreplayed Skip = 2

// A Skimmer is a Reader that can leave unset the fields its consumer does
// not read (Skip), which costs less than decoding them. Skim is called
// before the first Next; a reader that is no Skimmer decodes everything.
type Skimmer interface {
	Skim(Skip)
}

// Skim tells rd, if it is a Skimmer, to leave the fields of s unset.
func Skim(rd Reader, s Skip) {
	if sk, ok := rd.(Skimmer); ok {
		sk.Skim(s)
	}
}

// A DistinctReader is a Reader whose events copy a few distinct ones (a
// .ktr chunk's in the templates form): NextDistinct advances as Next
// does, but builds only the values that vary from one copy to the next and
// names the distinct event the rest is copied from, so that a pass does
// its work on the rest once a distinct event, not once an event (signing
// a rank, say, at more than the rate of reading its events whole).
type DistinctReader interface {
	Reader
	// NextDistinct advances to the next event, as Next, and reports
	// whether there is one. Where the event copies a distinct event, id
	// numbers it among the distinct events of the current group, from 0,
	// and Event sets only the event's Kind, Compute, HasTime, Enter and
	// Exit (and Request, unless skimmed): the rest is Distinct(id)'s.
	// Where it copies none, id is -1 and Event holds the whole event.
	// group changes where the distinct events do; an id means the same
	// distinct event until then.
	NextDistinct() (id int, group int, ok bool)
	// Distinct returns distinct event id of the current group, whole but
	// for the values that vary (Compute, Enter, Exit, Request and
	// Requests' elements: zero); valid until the next call.
	Distinct(id int) *Event
}

// Positioner is implemented by readers of text formats: Position names the
// current event's place in its input, as "file:line".
type Positioner interface {
	Position() string
}

// Source is a trace that can be read a rank at a time. A Source that
// wraps another one (Prefetch) has an Unwrap() Source method, so that
// callers can reach the wrapped source's own methods (format/ti's
// Warnings, say).
type Source interface {
	Meta() *Meta
	NumRanks() int
	// OpenRank returns a reader of rank r's events.
	OpenRank(r int) (Reader, error)
}

// Counter is implemented by sources that know how many events a rank has
// without reading it, from an index: RankEvents returns the number, or -1
// where the source does not know.
type Counter interface {
	RankEvents(r int) int64
}

// RankEvents returns the number of events of rank r if src, or the
// source it wraps (Unwrap), knows it without reading the rank; -1
// otherwise.
func RankEvents(src Source, r int) int64 {
	if c := counterOf(src); c != nil {
		return c.RankEvents(r)
	}
	return -1
}

// counterOf returns src's Counter or that of the source it wraps
// (Unwrap), nil if none.
func counterOf(src Source) Counter { return unwrapTo[Counter](src) }

// unwrapTo returns src as a T, or the first source it wraps (Unwrap)
// that is one; the zero T if none is.
func unwrapTo[T any](src Source) T {
	for {
		if c, ok := src.(T); ok {
			return c
		}
		u, ok := src.(interface{ Unwrap() Source })
		if !ok {
			var none T
			return none
		}
		src = u.Unwrap()
	}
}

// Sizer is implemented by sources that know how many bytes a rank's
// events take in their file, from an index (a ktr file's compressed
// chunks): RankBytes returns the number, or -1 where the source does not
// know. prsd weighs a rank's folded calls against it, to give up a
// folding that will not pay.
type Sizer interface {
	RankBytes(r int) int64
}

// RankBytes returns the bytes of rank r's events in src, or in the
// source it wraps (Unwrap), where it knows them without reading the
// rank (Sizer); -1 otherwise.
func RankBytes(src Source, r int) int64 {
	if s := unwrapTo[Sizer](src); s != nil {
		return s.RankBytes(r)
	}
	return -1
}

// EmptyRanks returns which ranks of src are known to have no events (nil
// if none is known) and how many, from src's Counter or that of the
// source it wraps (Unwrap), so that an analysis of a trace whose file
// claims a million ranks, and holds events for a few, neither opens nor
// keeps the others.
func EmptyRanks(src Source) (empty []bool, n int) {
	c := counterOf(src)
	if c == nil {
		return nil, 0
	}
	for r := range src.NumRanks() {
		if c.RankEvents(r) == 0 {
			if empty == nil {
				empty = make([]bool, src.NumRanks())
			}
			empty[r] = true
			n++
		}
	}
	return empty, n
}

// RankRanges names the ranks r < n for which in(r) holds as ranges,
// "0-3, 7, 9-12", at most max of them (then "... (N ranges)"), for
// messages about many ranks.
func RankRanges(n, max int, in func(r int) bool) string {
	var b []byte
	ranges := 0
	for r := 0; r < n; r++ {
		if !in(r) {
			continue
		}
		first := r
		for r+1 < n && in(r+1) {
			r++
		}
		ranges++
		if ranges > max {
			continue
		}
		if len(b) > 0 {
			b = append(b, ", "...)
		}
		b = strconv.AppendInt(b, int64(first), 10)
		if r > first {
			b = append(b, '-')
			b = strconv.AppendInt(b, int64(r), 10)
		}
	}
	if ranges > max {
		b = fmt.Appendf(b, ", ... (%d ranges)", ranges)
	}
	return string(b)
}

// Trace is a whole trace in memory, in the compact event codec.
type Trace struct {
	meta  Meta
	Ranks []Rank
}

// New returns an empty trace of n ranks with meta as its metadata.
func New(n int, meta Meta) *Trace {
	if len(meta.Regions) == 0 {
		meta.Regions = []Region{{}}
	}
	if meta.Attrs == nil {
		meta.Attrs = map[string]string{}
	}
	return &Trace{meta: meta, Ranks: make([]Rank, n)}
}

// Meta returns the trace's metadata, which the caller may extend.
func (t *Trace) Meta() *Meta { return &t.meta }

// NumRanks returns the number of ranks.
func (t *Trace) NumRanks() int { return len(t.Ranks) }

// OpenRank returns a reader of rank r's events.
func (t *Trace) OpenRank(r int) (Reader, error) {
	if r < 0 || r >= len(t.Ranks) {
		return nil, fmt.Errorf("rank %d out of range [0,%d)", r, len(t.Ranks))
	}
	return t.Ranks[r].Reader(), nil
}

// ConcurrentRanks reports true: the readers of an in-memory trace share
// nothing they change.
func (t *Trace) ConcurrentRanks() bool { return true }

// RankEvents returns the number of events of rank r.
func (t *Trace) RankEvents(r int) int64 { return int64(t.Ranks[r].Len()) }

// NumEvents returns the number of events of all ranks.
func (t *Trace) NumEvents() int {
	n := 0
	for i := range t.Ranks {
		n += t.Ranks[i].Len()
	}
	return n
}

// EncodedBytes returns the memory the ranks' events take.
func (t *Trace) EncodedBytes() int {
	n := 0
	for i := range t.Ranks {
		n += len(t.Ranks[i].data)
	}
	return n
}

// Rank is one rank's events held in memory in the compact event codec.
type Rank struct {
	data []byte
	n    int
	st   CodecState
}

// Append adds e at the end of the rank.
func (r *Rank) Append(e *Event) {
	r.data = AppendEvent(r.data, e, &r.st)
	r.n++
}

// Len returns the number of events.
func (r *Rank) Len() int { return r.n }

// Reader returns a reader of the rank's events from the first.
func (r *Rank) Reader() *RankReader { return &RankReader{data: r.data} }

// RankReader decodes a Rank's events. It implements Reader.
type RankReader struct {
	data []byte
	off  int
	st   CodecState
	ev   Event
	err  error
}

// NewRankReader returns a reader of the events encoded in data (a stream
// written with AppendEvent from a zero CodecState).
func NewRankReader(data []byte) *RankReader { return &RankReader{data: data} }

// Next decodes the next event.
func (r *RankReader) Next() bool {
	if r.err != nil || r.off >= len(r.data) {
		return false
	}
	n, err := DecodeEvent(r.data[r.off:], &r.ev, &r.st)
	if err != nil {
		r.err = fmt.Errorf("byte %d: %w", r.off, err)
		return false
	}
	r.off += n
	return true
}

// Continue goes on with the events encoded in data, which continue the
// stream read so far (a stream cut into pieces between two events,
// decoded one piece at a time).
func (r *RankReader) Continue(data []byte) { r.data, r.off = data, 0 }

// Event returns the current event.
func (r *RankReader) Event() *Event { return &r.ev }

// Skim leaves the fields of s unset in the events that follow.
func (r *RankReader) Skim(s Skip) { r.st.Skim(s) }

// Err returns the decoding error, if any.
func (r *RankReader) Err() error { return r.err }

// Close does nothing; it makes RankReader a Reader.
func (r *RankReader) Close() error { return nil }

// Load reads every rank of src into memory.
func Load(src Source) (*Trace, error) {
	t := New(src.NumRanks(), cloneMeta(src.Meta()))
	for r := range t.Ranks {
		rd, err := src.OpenRank(r)
		if err != nil {
			return nil, err
		}
		for rd.Next() {
			t.Ranks[r].Append(rd.Event())
		}
		err = rd.Err()
		if cerr := rd.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, fmt.Errorf("rank %d: %w", r, err)
		}
	}
	return t, nil
}

// Clone returns a copy of m that shares no memory with it, for a Source
// that wraps another and changes its metadata.
func (m *Meta) Clone() Meta { return cloneMeta(m) }

func cloneMeta(m *Meta) Meta {
	c := *m
	c.regionIndex = nil
	c.Regions = append([]Region{}, m.Regions...)
	c.Comms = append([]Comm{}, m.Comms...)
	c.Attrs = make(map[string]string, len(m.Attrs))
	for k, v := range m.Attrs {
		c.Attrs[k] = v
	}
	return c
}

// ForEach calls fn for every event of every rank of src, rank by rank,
// stopping at the first error.
func ForEach(src Source, fn func(rank, index int, e *Event) error) error {
	for r := 0; r < src.NumRanks(); r++ {
		if err := forRank(src, r, fn); err != nil {
			return err
		}
	}
	return nil
}

func forRank(src Source, r int, fn func(rank, index int, e *Event) error) (err error) {
	rd, err := src.OpenRank(r)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := rd.Close(); err == nil {
			err = cerr
		}
	}()
	for i := 0; rd.Next(); i++ {
		if err := fn(r, i, rd.Event()); err != nil {
			return err
		}
	}
	if err := rd.Err(); err != nil {
		return fmt.Errorf("rank %d: %w", r, err)
	}
	return nil
}
