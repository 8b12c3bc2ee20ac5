package prsd

import (
	"fmt"
	"slices"

	"kairos/trace"
)

// Options set how a trace is compressed.
type Options struct {
	// TimeError is the relative error within which ranks share a timing
	// statistic (see Trace.TimeError): 0 keeps every rank's own means.
	TimeError float64
	// Plugins name plug-ins (PluginNames) that end-points may be encoded
	// relative to.
	Plugins []string
	// Histograms keeps a rank's instances of a call's computation (and
	// times) as their distribution rather than one by one, where that
	// takes fewer bytes (see Header.Histograms).
	Histograms bool
	// Settle, where set, chooses for each cluster Build compresses, as
	// its last member is merged, between its structure and its events:
	// it returns the events' encoding to keep them (the structure is let
	// go at once), or nil to keep the structure. format/rsd sets it to
	// the rule it writes clusters by, so that a real program's clusters,
	// which it keeps as their events, do not all hold their structures
	// until the file is written.
	Settle func(*Settling) ([]byte, error)
	// ExactEvents keeps the times and amounts of a cluster kept as its
	// events exact, where format/rsd rounds them within TimeError: the
	// reduction then replays as the trace does, and an accuracy replay of
	// it is not needed (kairos report's).
	ExactEvents bool
	// LoopsPay, where set (with Settle), is how many times fewer bytes
	// than its events a cluster's structure must take to be kept, the
	// rule Settle applies: a rank whose series, as they are built,
	// outgrow its cluster's events' bytes in the trace's file
	// (trace.Sizer) by a margin, or will at its end at their pace,
	// gives the folding up early, and the cluster keeps its events, as
	// one that folds little (payCheck).
	LoopsPay int
}

// Settling is a cluster whose last member has just been merged, as
// Options.Settle sees it.
type Settling struct {
	Meta    *trace.Meta
	Ranks   int          // the trace's ranks
	Members []int32      // the cluster's ranks, in order
	Sites   []uint64     // the sites CompSite numbers so far (Header.Sites)
	Items   []*Node      // its structure
	Origin  trace.Source // the trace compressed
	// TimeError is Options.TimeError, 0 with Options.ExactEvents: the
	// events' times and amounts may be rounded within it (trace.Rounded).
	TimeError float64
	// Outgrown says that the folding was given up (Options.LoopsPay):
	// Items is nil, Members are every rank of the cluster, and the
	// events are kept.
	Outgrown bool
	// Exact is set by Settle where the events it returns are exact:
	// they read back as the trace's, times included (Cluster.Exact).
	Exact bool
}

// DefaultOptions share timing statistics within 1%.
func DefaultOptions() Options { return Options{TimeError: 0.01} }

// Builder compresses the ranks of a trace one at a time into the merged
// structures of their clusters.
type Builder struct {
	sites    siteTable // the numbering of call sites, shared by the ranks
	meta     trace.Meta
	ranks    int
	opt      Options
	in       *Interner
	fam      *Families
	m        *merger
	clusters []*mcluster
	of       []int32
	added    []bool
	// origin, where set (by Build), holds the ranks' events, which a
	// cluster whose calls fold little keeps in place of its structure.
	origin trace.Source
	// ahead numbers foldsLittleAhead's calls and loops.
	ahead *Interner
	// comp compresses each rank in turn, and pool holds the accumulators
	// of the calls it is done with: a rank's memory serves the next.
	comp compressor
	pool pool
}

// mcluster is a cluster being merged: its ranks added so far, their
// merged structure, and, once its last member is added, its finished
// nodes in place of the structure (which takes several times their
// memory: a cluster of a rank whose calls do not fold held about 100
// bytes a call).
type mcluster struct {
	ranks  []int32
	left   int // members not added yet
	items  []*mnode
	cache  map[int32][]*mnode
	nodes  []*Node
	events bool // kept as the origin's events: a member folds little, or Settle chose them
	// settled: Settle chose; columns are the events' encoding it made.
	settled bool
	columns []byte
	exact   bool // the columns are exact (Settling.Exact)
	// bytes are its ranks' events' bytes in the origin (trace.RankBytes,
	// -1: unknown), once sized.
	bytes int64
	sized bool
	// folded: a member was folded to its end; the next are not folded
	// ahead (foldsLittleAhead), a cluster's members folding alike.
	folded bool
}

// NewBuilder returns a builder of a trace of ranks ranks with metadata
// meta, whose clusters are groups (nil: one cluster of every rank).
func NewBuilder(meta *trace.Meta, ranks int, groups [][]int32, opt Options) (*Builder, error) {
	if !(opt.TimeError >= 0 && opt.TimeError < 1) {
		return nil, fmt.Errorf("prsd: the time error must be in [0, 1), got %g", opt.TimeError)
	}
	for _, p := range opt.Plugins {
		if !IsPlugin(p) {
			return nil, fmt.Errorf("prsd: unknown plug-in %q (known: %v)", p, PluginNames())
		}
	}
	b := &Builder{meta: meta.Clone(), ranks: ranks, opt: opt, in: NewInterner(),
		of: make([]int32, ranks), added: make([]bool, ranks)}
	b.fam = NewFamilies(&b.meta, ranks)
	b.sites.numbers = map[uint64]int64{}
	b.m = &merger{in: b.in, slots: slotsFor(len(opt.Plugins)), eps: opt.TimeError, hist: opt.Histograms}
	if groups == nil {
		all := make([]int32, ranks)
		for i := range all {
			all[i] = int32(i)
		}
		groups = [][]int32{all}
	}
	for i := range b.of {
		b.of[i] = -1
	}
	for c, g := range groups {
		for _, r := range g {
			if r < 0 || int(r) >= ranks {
				return nil, fmt.Errorf("prsd: group %d has rank %d, outside 0-%d", c, r, ranks-1)
			}
			if b.of[r] >= 0 {
				return nil, fmt.Errorf("prsd: rank %d is in groups %d and %d", r, b.of[r], c)
			}
			b.of[r] = int32(c)
		}
		b.clusters = append(b.clusters, &mcluster{cache: map[int32][]*mnode{}})
	}
	for r, c := range b.of {
		if c < 0 {
			return nil, fmt.Errorf("prsd: rank %d is in no group", r)
		}
		b.clusters[c].left++
	}
	return b, nil
}

// Add compresses rank r's events and merges them into its cluster.
func (b *Builder) Add(r int, rd trace.Reader) error {
	if r < 0 || r >= b.ranks || b.added[r] {
		return fmt.Errorf("prsd: rank %d added twice or out of range", r)
	}
	eps := b.opt.TimeError
	if b.opt.Histograms {
		eps = 0 // the instances exactly, for their histograms (merger.addTiming levels the others)
	}
	ctx, err := newRankCtx(int32(r), int32(b.ranks), eps, b.opt.Plugins, b.fam)
	if err != nil {
		return err
	}
	ctx.sites = &b.sites
	cl := b.clusters[b.of[r]]
	cl.ranks = append(cl.ranks, int32(r))
	b.added[r] = true
	cl.left--
	if cl.events {
		return nil
	}
	if ahead && b.origin != nil && !cl.folded && b.foldsLittleAhead(r) {
		cl.events, cl.items, cl.cache = true, nil, nil
		return nil
	}
	ctx.pool = &b.pool
	c := &b.comp
	c.reset()
	c.in, c.ctx, c.np, c.bounded = b.in, ctx, len(b.opt.Plugins), b.origin != nil
	if c.bounded && b.opt.Settle != nil && b.opt.LoopsPay > 0 {
		c.pay = newPayCheck(b.clusterBytes(cl, b.of[r]), trace.RankEvents(b.origin, r), &b.opt)
	}
	for !c.little && rd.Next() {
		c.add(rd.Event())
	}
	if err := rd.Err(); err != nil {
		return fmt.Errorf("rank %d: %w", r, err)
	}
	c.close()
	c.flush()
	if c.little || c.bounded && foldsLittle(nodes(c.seq), c.calls) {
		// Its structure would take more memory than the merge can afford
		// and more bytes than the events: the cluster keeps its events.
		// (Its items are let go, not kept for the next ranks.)
		c.seq = nil
		cl.events, cl.items, cl.cache = true, nil, nil
		if c.outgrown {
			return b.settleOutgrown(cl, b.of[r])
		}
		return nil
	}
	b.m.mergeSeq(&cl.items, cl.cache, c.finish(), int32(r))
	c.reset() // the merge has read the items: their memory serves the next rank
	cl.folded = true
	if cl.left == 0 {
		slices.Sort(cl.ranks)
		cl.nodes = b.m.finish(cl.items, cl.ranks)
		cl.items, cl.cache = nil, nil
		return b.settle(cl)
	}
	return nil
}

// clusterBytes returns the bytes of the events of cl, cluster c, in the
// origin (trace.RankBytes), -1 if unknown.
func (b *Builder) clusterBytes(cl *mcluster, c int32) int64 {
	if !cl.sized {
		cl.sized = true
		for r, of := range b.of {
			if of != c {
				continue
			}
			n := trace.RankBytes(b.origin, r)
			if n < 0 {
				cl.bytes = -1
				break
			}
			cl.bytes += n
		}
	}
	return cl.bytes
}

// eventsError is the error within which a cluster kept as its events
// may be rounded.
func (b *Builder) eventsError() float64 {
	if b.opt.ExactEvents {
		return 0
	}
	return b.opt.TimeError
}

// settle hands a finished cluster to Options.Settle.
func (b *Builder) settle(cl *mcluster) error {
	if b.opt.Settle == nil || b.origin == nil {
		return nil
	}
	s := &Settling{Meta: &b.meta, Ranks: b.ranks, Members: cl.ranks, Sites: b.sites.sites, Items: cl.nodes, Origin: b.origin, TimeError: b.eventsError()}
	cols, err := b.opt.Settle(s)
	if err != nil {
		return err
	}
	cl.settled = true
	if cols != nil {
		cl.events, cl.nodes, cl.columns, cl.exact = true, nil, cols, s.Exact
	}
	return nil
}

// settleOutgrown hands Options.Settle cluster c, whose folding was
// given up on its series' bytes (payCheck), with every rank of it, so
// that its events are encoded as those of a cluster Settle keeps as its
// events are, the smaller of their exact and rounded forms.
func (b *Builder) settleOutgrown(cl *mcluster, c int32) error {
	var members []int32
	for r, of := range b.of {
		if of == c {
			members = append(members, int32(r))
		}
	}
	s := &Settling{Meta: &b.meta, Ranks: b.ranks, Members: members, Sites: b.sites.sites, Origin: b.origin, TimeError: b.eventsError(), Outgrown: true}
	cols, err := b.opt.Settle(s)
	if err != nil {
		return err
	}
	cl.settled, cl.columns, cl.exact = true, cols, s.Exact
	return nil
}

// order returns the ranks cluster by cluster, each cluster's in rank
// order, so that one cluster at a time is merged: a merge under way takes
// several times the memory of the finished nodes, and a cluster Settle
// keeps as its events lets even those go once its last member is in.
func (b *Builder) order() []int32 {
	start := make([]int, len(b.clusters)+1)
	for _, c := range b.of {
		start[c+1]++
	}
	for c := range b.clusters {
		start[c+1] += start[c]
	}
	out := make([]int32, b.ranks)
	for r, c := range b.of {
		out[start[c]] = int32(r)
		start[c]++
	}
	return out
}

// Trace returns the compressed trace, once every rank has been added.
func (b *Builder) Trace() (*Trace, error) {
	for r, ok := range b.added {
		if !ok {
			return nil, fmt.Errorf("prsd: rank %d was not added", r)
		}
	}
	var clusters []Cluster
	for _, cl := range b.clusters {
		if len(cl.ranks) == 0 {
			continue
		}
		slices.Sort(cl.ranks)
		if cl.events {
			clusters = append(clusters, Cluster{Ranks: NewRanklist(cl.ranks), Events: b.origin, Settled: cl.settled, Columns: cl.columns, Exact: cl.exact})
			continue
		}
		clusters = append(clusters, Cluster{Ranks: NewRanklist(cl.ranks), Items: cl.nodes, Settled: cl.settled})
	}
	return New(b.meta.Clone(), b.ranks, clusters, Header{TimeError: b.opt.TimeError, Histograms: b.opt.Histograms, Plugins: slices.Clone(b.opt.Plugins), Sites: slices.Clone(b.sites.sites)})
}

// Build compresses every rank of src into clusters groups (nil: one of
// every rank). A cluster a rank of which folds little (foldsLittle), or,
// with Options.LoopsPay, whose series outgrow its events' bytes
// (payCheck), keeps src's events in place of a structure.
func Build(src trace.Source, groups [][]int32, opt Options) (*Trace, error) {
	b, err := NewBuilder(src.Meta(), src.NumRanks(), groups, opt)
	if err != nil {
		return nil, err
	}
	b.origin = src
	for _, r := range b.order() {
		rd, err := src.OpenRank(int(r))
		if err != nil {
			return nil, err
		}
		err = b.Add(int(r), rd)
		rd.Close()
		if err != nil {
			return nil, err
		}
	}
	t, err := b.Trace()
	if t != nil {
		t.origin = src
	}
	return t, err
}
