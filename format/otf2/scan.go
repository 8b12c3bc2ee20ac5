package otf2

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"

	"kairos/trace"
)

// keepBudget bounds the bytes of the events the scan keeps, compressed,
// and so does an eighth of the memory limit in force (GOMEMLIMIT, or
// Kairos' default of half the machine's memory): HPCC's archive of 134 M
// events on 8 ranks (5.2 GB, a polling loop's millions of MPI_Testany)
// is kept in 548 MB.
var keepBudget = 1 << 30

// scanWorkers is how many ranks the scan reads at once (0: GOMAXPROCS).
var scanWorkers = 0

// scan reads every rank once, building the call-path tree and the
// defect list, so that Meta is complete before any rank is streamed.
//
// It keeps the events it read, in the compact event codec (about 10
// bytes an event) compressed by frames (keptBuf: 2.7 to 4.1 bytes),
// of each rank whose events a later read gives (mapper.scanFinal) once
// the fixes the scan found are made, within keepBudget in all: OpenRank
// decodes those rather than mapping the archive's records again, which
// took half the CPU time of reading HPCC's archive (BENCHMARKS.md). Past
// the budget ranks are read again.
//
// Ranks are read as many at once as there are processors, each adding
// what it defines (call-path nodes, communicators) to a view of its own
// (scanView), merged into the model rank after rank: the numbering, the
// ranks kept and the defects are those of reading the ranks one after
// the other.
func (s *Source) scan() error {
	n := len(s.ranks)
	s.idx = make([]*rankIndex, n)
	s.vt.notes = make([][]vnote, n)
	s.kept, s.keptIDs = make([][]byte, n), make([]*renumbering, n)
	for id := range uint32(len(s.arch.Defs.Regions)) {
		s.setRegion(id, s.regionInfo(id)) // read only while ranks are read at once
	}
	budget := int(min(int64(keepBudget), debug.SetMemoryLimit(-1)/8))
	w := scanWorkers
	if w <= 0 {
		w = runtime.GOMAXPROCS(0)
	}
	scans := make([]rankScan, min(w, n))
	for lo := 0; lo < n; lo += len(scans) {
		batch := scans[:min(len(scans), n-lo)]
		s.meta.RegionID("", 0) // its index built, for the views to read
		var wg sync.WaitGroup
		var used atomic.Int64 // the batch's encoded bytes, in steps
		for i := range batch {
			wg.Go(func() { batch[i] = s.scanRank(lo+i, i == 0, budget, &used, batch[i].kb) })
		}
		wg.Wait()
		for i := range batch {
			if err := s.merge(lo+i, &batch[i], &budget); err != nil {
				return err
			}
		}
	}
	if err := s.scanThreads(); err != nil {
		return err
	}
	s.scanned = true
	return nil
}

// rankScan is what reading a rank in the scan gave.
type rankScan struct {
	rd   *rankReader // closed
	view *scanView
	kb   *keptBuf // its events encoded (room reused by the next rank read)
	keep bool     // kb holds them all (within the budget)
	err  error
}

// keepStep is the bytes by which the ranks read at once take their
// encoded events' share of the budget.
const keepStep = 64 << 10

// scanRank reads rank r in the scan, its events encoded in kb (nil: a
// new one) while they fit in budget and, but for the first of the ranks
// read at once, while those have encoded less than budget (used, in steps
// of keepStep): they take twice the budget at most, however many they
// are.
// (Which ranks but the first are kept may then change with the ranks
// read at once, never what is read: OpenRank decodes or maps the same
// events.)
func (s *Source) scanRank(r int, first bool, budget int, used *atomic.Int64, kb *keptBuf) rankScan {
	s.idx[r] = &rankIndex{late: map[uint64]lateFill{}, cancelled: map[uint64]bool{}}
	if kb == nil {
		kb = &keptBuf{}
	}
	kb.reset()
	rd, err := s.openRank(r)
	if err != nil {
		return rankScan{kb: kb, err: err}
	}
	view := newScanView(&s.meta)
	rd.m.view = view
	keep, next := budget > 0, keepStep
	for rd.Next() {
		if keep {
			kb.add(rd.Event())
			if kb.size() >= next {
				keep, next = used.Add(keepStep) <= int64(budget) || first, next+keepStep
			}
			keep = keep && kb.size() <= budget
		}
	}
	if keep {
		kb.seal()
	}
	err = rd.Err()
	rd.Close()
	return rankScan{rd: rd, view: view, kb: kb, keep: keep, err: err}
}

// merge adds what the scan of rank r found to the model, in rank order:
// its nodes and communicators, numbered as the model's, its events if
// they are kept (within *budget), its defects and counts.
func (s *Source) merge(r int, sc *rankScan, budget *int) error {
	if sc.err != nil {
		return sc.err
	}
	ids := s.mergeView(r, sc.view)
	s.idx[r].renumber(ids)
	switch {
	case !sc.keep || sc.kb.size() > *budget:
		*budget = 0
	case sc.rd.m.scanFinal():
		slices.SortStableFunc(s.idx[r].fixes, func(a, b keptFix) int { return cmp.Compare(a.at, b.at) })
		s.kept[r] = append([]byte(nil), sc.kb.out...)
		s.keptIDs[r] = ids
		*budget -= sc.kb.size()
	}
	if s.kept[r] == nil {
		s.idx[r].fixes = nil // for the kept events alone
	}
	m := &sc.rd.m
	s.defects = append(s.defects, m.defects(r)...)
	s.cancelled += m.cancelled
	if m.off {
		s.switchedOff++
	}
	s.flushes += m.flushes
	s.flushed += m.flushed
	if m.flushed > s.flushMost {
		s.flushRank, s.flushMost = r, m.flushed
	}
	s.uncompleted += m.lateIrecv
	s.interColls += m.interColls
	s.unresolved += m.unresolved
	if m.offs > 0 {
		s.offs += m.offs
		s.offRanks++
		s.hidden += m.hidden
	}
	sc.rd, sc.view = nil, nil
	return nil
}

// scanThreads notes the MPI records of threads that are not ranks.
func (s *Source) scanThreads() error {
	found, looked, threads, err := s.threadMPI()
	if err != nil {
		return err
	}
	s.otherThreadCalls()
	if found > 0 {
		of := ""
		if looked < threads {
			of = fmt.Sprintf(" (of the first %d of their %d threads, which were looked at)", looked, threads)
		}
		s.meta.Attrs[AttrThreadMPI] = fmt.Sprintf("%s of the ranks' processes besides the ranks' own hold MPI records%s (an "+
			"MPI_THREAD_MULTIPLE program's calls on other threads), which are not read: the model is one stream of calls a rank, "+
			"as SimGrid's replay; their messages and collectives are missing, and a replay may not complete",
			plural(nil, uint64(found), "thread"), of)
	}
	return nil
}

// scanView is what the scan of one rank defines, apart from the model
// while ranks are read at once: the call-path nodes it adds to the tree
// (numbered from base, the tree's length when it started), and the
// communicators it defines (its COMM_SELF instances, the groups of its
// one-sided calls; numbered from localComm).
type scanView struct {
	tree  *trace.Meta // the model's, read only
	base  uint32
	nodes []trace.Region
	index map[trace.Region]uint32 // the view's nodes
	sites map[uint32]uint64       // call sites by node
	comms []viewComm              // in the order defined
}

// localComm is the first id a scanView gives a communicator: above any
// the model defines.
const localComm = 1 << 30

// viewComm is a communicator a rank's scan defined: a COMM_SELF instance
// or the group of a one-sided call, by its OTF2 id.
type viewComm struct {
	self bool
	id   uint32
}

func newScanView(tree *trace.Meta) *scanView {
	return &scanView{tree: tree, base: uint32(len(tree.Regions))}
}

// addRegion is Meta.AddRegion on the view.
func (v *scanView) addRegion(name string, parent uint32) uint32 {
	if parent < v.base {
		if id, ok := v.tree.RegionID(name, parent); ok {
			return id
		}
	}
	k := trace.Region{Name: name, Parent: parent}
	if id, ok := v.index[k]; ok {
		return id
	}
	if v.index == nil {
		v.index = map[trace.Region]uint32{}
	}
	id := v.base + uint32(len(v.nodes))
	v.nodes = append(v.nodes, k)
	v.index[k] = id
	return id
}

// region returns node id of the tree or the view.
func (v *scanView) region(id uint32) (trace.Region, bool) {
	if id < v.base {
		return v.tree.Regions[id], true
	}
	if i := int(id - v.base); i < len(v.nodes) {
		return v.nodes[i], true
	}
	return trace.Region{}, false
}

// callSite is Source.callSite on the view.
func (v *scanView) callSite(node uint32) uint64 {
	if h, ok := v.sites[node]; ok {
		return h
	}
	var path []string
	n := int(v.base) + len(v.nodes)
	for seen, id := 0, node; id != 0 && seen < n; seen++ {
		r, ok := v.region(id)
		if !ok {
			break
		}
		path = append(path, r.Name)
		id = r.Parent
	}
	slices.Reverse(path)
	h := pathSite(path)
	if v.sites == nil {
		v.sites = map[uint32]uint64{}
	}
	v.sites[node] = h
	return h
}

// comm returns the id the view gives a communicator it defines.
func (v *scanView) comm(c viewComm) uint32 {
	if id, ok := v.find(c); ok {
		return id
	}
	v.comms = append(v.comms, c)
	return localComm + uint32(len(v.comms)-1)
}

// find returns the id of a communicator the view defined, if it did (a
// one-sided group resolved once, at its first call).
func (v *scanView) find(c viewComm) (uint32, bool) {
	for i, d := range v.comms {
		if d == c {
			return localComm + uint32(i), true
		}
	}
	return 0, false
}

// renumbering renumbers what a rank's scan numbered in its view: its nodes
// from base, its communicators from localComm.
type renumbering struct {
	base  uint32
	nodes []uint32
	comms []uint32
}

// node returns the model's number of node id.
func (m *renumbering) node(id uint32) uint32 {
	if m == nil || id < m.base || int(id-m.base) >= len(m.nodes) {
		return id
	}
	return m.nodes[id-m.base]
}

// comm returns the model's id of communicator id.
func (m *renumbering) comm(id uint32) uint32 {
	if m == nil || id < localComm || int(id-localComm) >= len(m.comms) {
		return id
	}
	return m.comms[id-localComm]
}

// event renumbers e's node and communicators.
func (m *renumbering) event(e *trace.Event) {
	e.Region, e.Comm, e.NewComm = m.node(e.Region), m.comm(e.Comm), m.comm(e.NewComm)
}

// mergeView adds rank r's view to the model, node after node and
// communicator after communicator, and returns how it renumbers them
// (nil: as they are).
func (s *Source) mergeView(r int, v *scanView) *renumbering {
	if len(v.nodes) == 0 && len(v.comms) == 0 {
		return nil
	}
	m := &renumbering{base: v.base}
	for _, n := range v.nodes {
		m.nodes = append(m.nodes, s.meta.AddRegion(n.Name, m.node(n.Parent)))
	}
	for _, c := range v.comms {
		id := uint32(0)
		if c.self {
			id = s.selfComm(c.id, int32(r)).id
		} else {
			id = s.groupComm(c.id)
		}
		m.comms = append(m.comms, id)
	}
	return m
}

// renumber renumbers the late completions' communicators and
// collectives as m says.
func (x *rankIndex) renumber(m *renumbering) {
	if m == nil {
		return
	}
	for o, f := range x.late {
		f.comm = m.comm(f.comm)
		if f.coll != nil {
			m.event(f.coll)
		}
		x.late[o] = f
	}
}

// pathSite is the call site of a call path: FNV-1a, 64 bits, of its
// names each followed by a NUL.
func pathSite(path []string) uint64 {
	f := fnv.New64a()
	for _, n := range path {
		f.Write([]byte(n))
		f.Write([]byte{0})
	}
	return f.Sum64()
}
