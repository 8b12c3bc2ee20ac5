package prsd

import (
	"fmt"
	"math"
	"slices"
	"sync"

	"kairos/trace"
)

// Field is a parameter of a call that a compressed trace keeps exactly,
// as one Series per group of ranks (a vector field as a series of lengths
// and one series per element).
type Field uint8

// The fields, in the order of a variant's presence mask (bit i: Field i).
const (
	Partner    Field = iota // trace.Event.Partner (destination, source, root), a world rank
	Source                  // a SendRecv's source, a world rank
	Tag                     // the tag
	Comm                    // the communicator the call is made on
	NewComm                 // the communicator a split, dup or create makes
	SendBytes               // bytes sent
	RecvBytes               // bytes received
	SendType                // the send datatype (trace.Datatype)
	RecvType                // the receive datatype
	Request                 // the request an Isend/Irecv starts or a wait completes, relative
	Requests                // vector: the requests a Waitall completes, relative
	SendCounts              // vector: a v-collective's per-member send bytes
	RecvCounts              // vector: its receive bytes
	ComputeArg              // an MPI call's reduction flops (IEEE-754 bits)
	Region                  // the enclosing region
	Timed                   // 1 if the instance has timestamps
	CompSite                // the call site of the computation after the call (StatComp)
	CompRegion              // its region
	Op                      // a reduction's operation (trace.Op)
	Handle                  // a one-sided call's window, an I/O call's file (trace.Event.Handle)
	NumFields
)

var fieldNames = [NumFields]string{"partner", "source", "tag", "comm", "newcomm", "sendbytes", "recvbytes",
	"sendtype", "recvtype", "request", "requests", "sendcounts", "recvcounts", "compute", "region", "timed",
	"compsite", "compregion", "op", "handle"}

func (f Field) String() string {
	if f < NumFields {
		return fieldNames[f]
	}
	return fmt.Sprintf("field(%d)", uint8(f))
}

// IsVector reports whether f holds a vector per instance.
func (f Field) IsVector() bool { return f == Requests || f == SendCounts || f == RecvCounts }

// Mode says how a series encodes a field's values for the rank that
// reads it, so that ranks doing alike share one series: ScalaTrace's
// relative end-points, communicators found by family, and the
// plug-ins' rank functions.
type Mode uint8

// The modes.
const (
	// Abs: the value itself.
	Abs Mode = iota
	// Rel: a world rank relative to the reading rank r, (v - r) mod P;
	// negative values (no rank, MPI_ANY_SOURCE) as they are.
	Rel
	// Family: a communicator as the index of its family (see
	// Trace.Families): the family's communicator that holds the reading
	// rank. A negative value -(id+1) is communicator id itself.
	Family
	// Plugin is the first plug-in mode: Plugin+i is a world rank relative
	// to plug-in i's rank function b(r) (Trace.Plugins[i]), (v - b(r)) mod P.
	Plugin
)

// Xor: a world rank as the bits in which it differs from the reading rank
// r, v XOR r; negative values as they are. The partners of recursive
// doubling and halving (NAS CG's row exchanges, butterfly allreduces,
// hypercube algorithms) are r XOR 2^k, the same series on every rank,
// where relative offsets are +2^k or -2^k by the bits of r. A number of
// its own above the plug-ins' (.rsd version 3).
const Xor Mode = 0x80

// requestNone encodes a Request of 0 (no request), which a relative
// encoding would confuse with the latest request.
const requestNone = math.MinInt64

// defaultValue is the encoding of an absent field: what trace.Event.Reset
// leaves.
func defaultValue(f Field) int64 {
	switch f {
	case Partner, Source:
		return int64(trace.NoRank)
	case SendType, RecvType:
		return int64(trace.DefaultType)
	case Request:
		return requestNone
	}
	return 0
}

// modesOf returns the modes a field may be encoded in, given np plug-ins.
func modesOf(f Field, np int) []Mode {
	switch f {
	case Partner, Source:
		m := []Mode{Abs, Rel}
		for i := range np {
			m = append(m, Plugin+Mode(i))
		}
		return append(m, Xor)
	case Comm, NewComm:
		return commModes
	}
	return absMode
}

// The modes of the fields other than the end-points, shared.
var (
	commModes = []Mode{Abs, Family}
	absMode   = []Mode{Abs}
)

// rankCtx is what encoding a field needs of the rank: what decoding
// needs (fieldCtx), each field's modes and the communicators met.
type rankCtx struct {
	fieldCtx
	modes [NumFields][]Mode // each field's modes (modesOf)
	// ahead is, while encoding, how far the rank's clock read back is
	// ahead of its own by the levels of the times that will read them
	// (statAcc.addTime).
	ahead  float64
	member map[uint32]bool // communicators known to hold the rank (encoding)
	pool   *pool           // the accumulators to reuse
}

// fieldCtx is what decoding a field needs of the rank: its number, the
// number of ranks, the plug-ins' bases and the communicator families. A
// reader keeps one for its rank (of 64 bytes, where a rankCtx's modes
// take 480 and a map: a trace of 1,024 ranks has as many readers).
type fieldCtx struct {
	rank, ranks int32
	eps         float64 // the timing's error bound
	ln1p        float64 // math.Log1p(eps), for the levels' values
	bases       []int32 // each plug-in's b(rank)
	fam         *Families
	// sites number the call sites of the CompSite field (nil: a site
	// is its own value).
	sites *siteTable
}

// siteTable numbers call sites from 1 (0: no site).
type siteTable struct {
	sites   []uint64
	numbers map[uint64]int64 // nil: reading only
}

// number returns the number of call site s, numbering it if new.
func (t *siteTable) number(s uint64) int64 {
	if t == nil || s == 0 {
		return int64(s)
	}
	n, ok := t.numbers[s]
	if !ok {
		t.sites = append(t.sites, s)
		n = int64(len(t.sites))
		t.numbers[s] = n
	}
	return n
}

// site returns the call site of number n.
func (t *siteTable) site(n int64) uint64 {
	if t == nil {
		return uint64(n)
	}
	if n <= 0 || n > int64(len(t.sites)) {
		return 0
	}
	return t.sites[n-1]
}

func newRankCtx(rank, ranks int32, eps float64, plugins []string, fam *Families) (*rankCtx, error) {
	c := &rankCtx{member: map[uint32]bool{}, pool: &pool{}}
	if err := c.set(rank, ranks, eps, plugins, fam); err != nil {
		return nil, err
	}
	for f := range NumFields {
		c.modes[f] = modesOf(f, len(plugins))
	}
	return c, nil
}

// set sets c for rank of ranks, a timing error bound eps, plug-ins and
// communicator families.
func (c *fieldCtx) set(rank, ranks int32, eps float64, plugins []string, fam *Families) error {
	c.rank, c.ranks, c.eps, c.ln1p, c.fam = rank, ranks, eps, math.Log1p(eps), fam
	for _, name := range plugins {
		f, ok := pluginFuncs[name]
		if !ok {
			return fmt.Errorf("unknown plug-in %q (known: %v)", name, PluginNames())
		}
		c.bases = append(c.bases, f(rank, ranks))
	}
	return nil
}

// encode returns value v of a scalar field in mode m.
func (c *rankCtx) encode(m Mode, v int64) int64 {
	switch {
	case m == Abs:
		return v
	case m == Rel:
		return c.offset(v, c.rank)
	case m == Family:
		return c.family(v)
	case m == Xor:
		if v < 0 {
			return v
		}
		return v ^ int64(c.rank)
	default:
		return c.offset(v, c.bases[m-Plugin])
	}
}

// offset is (v - base) mod P for a rank v, v itself if negative.
func (c *rankCtx) offset(v int64, base int32) int64 {
	if v < 0 {
		return v
	}
	p := int64(c.ranks)
	return ((v-int64(base))%p + p) % p
}

// family encodes communicator id as its family's index if the family's
// member holding the rank is id, else as -(id+1).
func (c *rankCtx) family(id int64) int64 {
	if id < 0 || id > math.MaxUint32 {
		return -(id + 1)
	}
	f, ok := c.fam.of[uint32(id)]
	if !ok {
		return -(id + 1)
	}
	in, seen := c.member[uint32(id)]
	if !seen {
		in = c.fam.contains(uint32(id), c.rank)
		c.member[uint32(id)] = in
	}
	if !in {
		return -(id + 1)
	}
	return int64(f)
}

// level returns the value of level l, FromLevel(l, c.eps).
func (c *fieldCtx) level(l int64) float64 {
	if c.eps == 0 {
		return FromLevel(l, 0)
	}
	return levelValue(l, c.ln1p)
}

// decode returns the value a series' value v in mode m stands for.
func (c *fieldCtx) decode(m Mode, v int64) (int64, error) {
	switch {
	case m == Abs:
		return v, nil
	case m == Rel:
		return c.unoffset(v, c.rank), nil
	case m == Family:
		if v < 0 {
			return -v - 1, nil
		}
		id, ok := c.fam.memberOf(int(v), c.rank)
		if !ok {
			return 0, fmt.Errorf("%w: rank %d is in no communicator of family %d", ErrCorrupt, c.rank, v)
		}
		return int64(id), nil
	case m == Xor:
		if v < 0 {
			return v, nil
		}
		if w := v ^ int64(c.rank); w < int64(c.ranks) {
			return w, nil
		}
		return 0, fmt.Errorf("%w: rank %d XOR %d is past the %d ranks", ErrCorrupt, c.rank, v, c.ranks)
	case m < Xor && int(m-Plugin) < len(c.bases):
		return c.unoffset(v, c.bases[m-Plugin]), nil
	}
	return 0, fmt.Errorf("%w: mode %d names no plug-in", ErrCorrupt, m)
}

func (c *fieldCtx) unoffset(v int64, base int32) int64 {
	p := int64(c.ranks)
	switch {
	case v < 0:
		return v
	case v < p && base >= 0: // as every offset a writer makes: no division
		w := int64(base) + v
		if w >= p {
			w -= p
		}
		return w
	}
	return ((int64(base)+v)%p + p) % p
}

// Families groups a trace's communicators into families of disjoint
// ones (the rows of a process grid, its columns...), the world alone
// first: ranks that call on "their row" share a series in Family mode
// whichever row that is. The grouping is a function of the metadata
// alone, so that readers find the writer's: communicators by ascending
// id, each into the first family none of whose communicators shares a
// rank with it.
type Families struct {
	of    map[uint32]int32 // communicator id -> family
	comms [][]uint32       // family -> its communicators
	meta  *trace.Meta
	ranks int
	once  []sync.Once
	rank  [][]int32 // family -> the index of its communicator holding each rank (-1: none), built on first use
	sets  map[uint32]map[int32]bool
	mu    sync.Mutex
}

// NewFamilies groups meta's communicators for a trace of ranks ranks.
func NewFamilies(meta *trace.Meta, ranks int) *Families {
	f := &Families{of: map[uint32]int32{trace.WorldComm: 0}, comms: [][]uint32{{trace.WorldComm}}, meta: meta, ranks: ranks}
	comms := slices.Clone(meta.Comms)
	slices.SortFunc(comms, func(a, b trace.Comm) int { return int(int64(a.ID) - int64(b.ID)) })
	var used []map[int32]bool // ranks of each family but the world's
	for _, c := range comms {
		if _, dup := f.of[c.ID]; dup {
			continue
		}
		k := -1
		for i, u := range used {
			if !slices.ContainsFunc(c.Members, func(r int32) bool { return u[r] }) {
				k = i
				break
			}
		}
		if k < 0 {
			k = len(used)
			used = append(used, map[int32]bool{})
			f.comms = append(f.comms, nil)
		}
		for _, r := range c.Members {
			used[k][r] = true
		}
		f.of[c.ID] = int32(k + 1)
		f.comms[k+1] = append(f.comms[k+1], c.ID)
	}
	f.once = make([]sync.Once, len(f.comms))
	f.rank = make([][]int32, len(f.comms))
	return f
}

// contains reports whether communicator id holds rank r.
func (f *Families) contains(id uint32, r int32) bool {
	if id == trace.WorldComm {
		return r >= 0 && int(r) < f.ranks
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.sets == nil {
		f.sets = map[uint32]map[int32]bool{}
	}
	s, ok := f.sets[id]
	if !ok {
		s = map[int32]bool{}
		for _, m := range f.meta.Members(id, f.ranks) {
			s[m] = true
		}
		f.sets[id] = s
	}
	return s[r]
}

// memberOf returns family k's communicator that holds rank r.
func (f *Families) memberOf(k int, r int32) (uint32, bool) {
	if k < 0 || k >= len(f.comms) || r < 0 || int(r) >= f.ranks {
		return 0, false
	}
	f.once[k].Do(func() {
		t := make([]int32, f.ranks)
		for i := range t {
			t[i] = -1
		}
		for j, id := range f.comms[k] {
			for _, m := range f.meta.Members(id, f.ranks) {
				if m >= 0 && int(m) < f.ranks {
					t[m] = int32(j)
				}
			}
		}
		f.rank[k] = t
	})
	j := f.rank[k][r]
	if j < 0 {
		return 0, false
	}
	return f.comms[k][j], true
}

// ValidMode reports whether field f may be encoded in mode m.
func ValidMode(f Field, m Mode) bool {
	switch f {
	case Partner, Source:
		return m != Family
	case Comm, NewComm:
		return m == Abs || m == Family
	}
	return m == Abs
}
