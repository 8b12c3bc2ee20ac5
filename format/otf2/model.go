package otf2

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"

	"kairos/trace"
)

// Source is an OTF2 archive read as a Kairos trace. Each MPI location is
// a rank, numbered by its position in the MPI COMM_LOCATIONS group (its
// rank in MPI_COMM_WORLD); a trace without MPI has one rank per CPU
// thread location (every location if none is one).
// Every MPI call (Enter..Leave of an MPI region) becomes one event, its
// kind taken from the MPI records inside it or from the region name;
// user regions build the call-path tree (Meta.Regions).
//
// MPI records give the kind: MpiSend/MpiIsend/MpiRecv become Send, Isend
// and Recv, MpiIrecvRequest an Irecv whose sender, tag and size come from
// the MpiIrecv that completes it (the rank's later events are held back
// until then, at most maxLookahead, then filled from Open's index of late
// completions), an MpiRequestCancelled the request's events made deferred
// calls, the completions inside MPI_Wait*/MPI_Test*
// a Wait, Waitall or Test with their requests, MpiSend+MpiRecv in one
// call a SendRecv (of different tags, an Isend, an Irecv and their Waits:
// trace.SendRecvEvents), MpiCollectiveEnd the collective of its operation with
// the world rank of its root (and a non-blocking collective the blocking
// one, where it completes). Calls without MPI records are Init, Finalize,
// Barrier by name, else Local. Communicator ranks resolve to world ranks
// through Comm -> group -> COMM_LOCATIONS; communicators other than
// MPI_COMM_WORLD become Meta.Comms (COMM_SELF one per rank).
//
// Open reads every location once to build the call-path tree and to count
// the archive's defects (Defects); OpenRank then streams one location.
type Source struct {
	arch      *Archive
	meta      trace.Meta
	ranks     []uint64         // location of each rank
	worldRank map[uint64]int32 // location -> rank
	comms     map[uint32]modelComm
	mpi       bool
	callsites map[uint32]uint64
	// sites and regionInfos cache, in slices, callsites and the mappers'
	// regionInfo of ids below the definitions' counts (model regions,
	// OTF2 regions): read at every call, where the maps' lookups were a
	// tenth of reading an archive.
	sites       []uint64
	sitesKnown  []bool
	regionInfos []regionInfo
	regionKnown []bool
	selfComms   map[[2]uint64]uint32 // (COMM_SELF communicator, rank) -> model id
	// groupComms are the model communicators of the groups of one-sided
	// post and start calls, by OTF2 group.
	groupComms map[uint32]uint32
	defects    []string
	// inPlaceAware: the archive's in-place collectives count no block to
	// or from the member itself (Score-P 8 on).
	inPlaceAware bool

	// What Open's scan learns for the later reads: each rank's index of
	// late completions and cancellations, the v-collectives' instances,
	// the kairos count attributes' ids.
	scanned            bool
	kept               [][]byte       // by rank, the events the scan kept (nil: read again)
	keptIDs            []*renumbering // by rank, how to renumber them
	idx                []*rankIndex
	vt                 vtable
	attrSend, attrRecv uint32
	// attrSent and attrRecvd are the attributes by which Kairos' writer
	// carries a collective's volumes where Score-P's counts do not give
	// them back (volumeAttrs).
	attrSent, attrRecvd uint32
	cancelled           int
	switchedOff         int // ranks whose measurement ends switched off
	flushes             int // the tracer's buffer flushes, of every rank
	flushed             trace.Time
	flushRank           int // the rank whose flushes took the longest
	flushMost           trace.Time
	uncompleted         int // Irecvs never completed, left out
	interColls          int // collectives on intercommunicators, read as deferred calls
	unresolved          int // communicator ranks not resolved to world ranks
	offs, offRanks      int // measurement switched off and on again, and on how many ranks
	hidden              trace.Time
}

// modelComm is how an OTF2 communicator appears in the model.
type modelComm struct {
	id   uint32 // trace.WorldComm or an id of Meta.Comms
	size int
	self bool // a COMM_SELF communicator: one model communicator per rank
}

// Open opens the OTF2 archive at path (anchor file or its directory) as a
// trace.Source.
func Open(path string) (*Source, error) { return open(path, true) }

// open is Open, reading the count vectors Kairos' tracer writes as
// attributes if counts is set (else deriving them, as for another
// writer's archive).
func open(path string, counts bool) (*Source, error) {
	a, err := OpenArchive(path)
	if err != nil {
		return nil, err
	}
	s := &Source{arch: a, meta: trace.NewMeta(), worldRank: map[uint64]int32{}, comms: map[uint32]modelComm{}, callsites: map[uint32]uint64{0: 0}, selfComms: map[[2]uint64]uint32{},
		groupComms:   map[uint32]uint32{},
		inPlaceAware: inPlaceAware(a.Anchor.Creator)}
	s.buildRanks()
	s.buildComms()
	s.describe()
	s.noEvents()
	s.attrSend, s.attrRecv, s.attrSent, s.attrRecvd = undefined32, undefined32, undefined32, undefined32
	if counts {
		s.countAttrs()
	}
	if err := s.scan(); err != nil {
		return nil, err
	}
	s.defects = append(s.defects, s.vt.build(s.members, s.inPlaceAware)...)
	if s.vt.n > 0 {
		s.meta.Attrs[AttrDerivedCounts] = fmt.Sprintf("the count vectors of %d v-collectives (alltoallv, gatherv...) are derived from "+
			"their members' totals, which is all an OTF2 archive records: every member sends and receives its totals, and checks compare totals only", s.vt.n)
	}
	if s.cancelled > 0 {
		s.meta.Attrs["otf2.cancelled"] = fmt.Sprintf("%d requests were cancelled (MPI_Cancel, or by Kairos' tracer at MPI_Finalize where "+
			"nothing had matched a receive the program left): read as never started", s.cancelled)
	}
	if s.uncompleted > 0 {
		s.meta.Attrs["otf2.uncompleted"] = fmt.Sprintf("%d receive requests (MPI_Irecv) were never completed: read as never started, "+
			"since the archive does not say what they would receive", s.uncompleted)
	}
	if s.flushes > 0 {
		s.meta.Attrs["otf2.flushes"] = fmt.Sprintf("the tracer flushed its buffers %s during the run (%.6f s in all, rank %d's the longest: %.6f s), "+
			"each between two calls read as a deferred call named %q, whose time a replay does not take as the program's computation (Score-P: a larger "+
			"SCOREP_TOTAL_MEMORY avoids them)",
			plural(nil, uint64(s.flushes), "time"), s.flushed.Seconds(), s.flushRank, s.flushMost.Seconds(), flushName)
	}
	if s.interColls > 0 {
		s.meta.Attrs[AttrInterCollectives] = fmt.Sprintf("%d calls of collectives on intercommunicators (over all ranks) are read as "+
			"deferred calls, their time MPI time: the model, as SimGrid's replay, has no intercommunicator (their point-to-point messages are read)", s.interColls)
	}
	if s.unresolved > 0 {
		s.meta.Attrs["otf2.unresolved"] = fmt.Sprintf("%d ranks of communicators named in records are not ranks of the archive's MPI "+
			"processes (kairos print --model lists them by rank): the messages and roots they name have no partner", s.unresolved)
	}
	if s.offs > 0 {
		s.meta.Attrs[AttrSwitchedOff] = fmt.Sprintf("the measurement was switched off and on again %s on %s (MEASUREMENT_ON_OFF: "+
			"SCOREP_RECORDING_OFF...), %.6f s in all: calls made meanwhile, if any, are not in the trace (a message sent or "+
			"received there has no partner), and the time reads as computation", plural(nil, uint64(s.offs), "time"), plural(nil, uint64(s.offRanks), "rank"),
			s.hidden.Seconds())
	}
	if s.switchedOff > 0 {
		s.meta.Attrs[trace.AttrNoFinalize] = fmt.Sprintf("the measurement of %d ranks was switched off before their end (MEASUREMENT_ON_OFF)", s.switchedOff)
	}
	if len(s.defects) > 0 {
		s.meta.Attrs["otf2.defects"] = strings.Join(s.defects, "; ")
	}
	s.restoreAttrs()
	return s, nil
}

// attrProperty prefixes the anchor properties by which Kairos' writer
// keeps the attributes of the trace it wrote (Meta.Attrs): where it came
// from, and how its own reader read it (a measurement switched off, count
// vectors derived), which the archive's records no longer show. The key
// follows, spelt in the characters OTF2 allows in a property's name
// (propertyKey).
const attrProperty = "KAIROS::ATTR_"

// restoreAttrs sets the attributes the writer kept in the anchor's
// properties, but those this reading set itself.
func (s *Source) restoreAttrs() {
	for _, p := range s.arch.Anchor.Properties {
		name, ok := strings.CutPrefix(p[0], attrProperty)
		if k, err := attrKey(name); ok && err == nil && k != "" && s.meta.Attrs[k] == "" {
			s.meta.Attrs[k] = p[1]
		}
	}
}

// propertyKey spells an attribute's key in the characters of an OTF2
// property's name, [A-Z0-9_]: a lower-case letter in upper case, a digit
// as it is, any other byte as '_' and its two hexadecimal digits.
func propertyKey(k string) string {
	var b strings.Builder
	for i := 0; i < len(k); i++ {
		switch c := k[i]; {
		case c >= 'a' && c <= 'z':
			b.WriteByte(c - 'a' + 'A')
		case c >= '0' && c <= '9':
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "_%02X", c)
		}
	}
	return b.String()
}

// attrKey is the inverse of propertyKey.
func attrKey(p string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c >= 'A' && c <= 'Z':
			b.WriteByte(c - 'A' + 'a')
		case c >= '0' && c <= '9':
			b.WriteByte(c)
		case c == '_' && i+2 < len(p):
			v, err := strconv.ParseUint(p[i+1:i+3], 16, 8)
			if err != nil {
				return "", err
			}
			b.WriteByte(byte(v))
			i += 2
		default:
			return "", fmt.Errorf("%q: not an attribute's key", p)
		}
	}
	return b.String(), nil
}

// countAttrs finds the attributes by which Kairos' tracer carries the
// count vectors of v-collectives, and its writer collectives' volumes,
// and keeps attribute lists if there are.
func (s *Source) countAttrs() {
	d := s.arch.Defs
	for id, a := range d.Attributes {
		switch d.Strings[a.Name] {
		case attrSendCounts:
			s.attrSend = id
		case attrRecvCounts:
			s.attrRecv = id
		case attrSentBytes:
			s.attrSent = id
		case attrRecvdBytes:
			s.attrRecvd = id
		}
	}
	if s.attrSend != undefined32 || s.attrRecv != undefined32 || s.attrSent != undefined32 || s.attrRecvd != undefined32 {
		s.arch.KeepAttrs = true
	}
}

// inPlaceAware reports whether an archive's creator counts the bytes of
// in-place collectives without the member's own block: Score-P from
// version 8 ("Score-P 8.1"). Kairos' own tracer counts every block.
func inPlaceAware(creator string) bool {
	v, ok := strings.CutPrefix(creator, "Score-P ")
	if !ok {
		return false
	}
	major, _, _ := strings.Cut(v, ".")
	n, err := strconv.Atoi(major)
	return err == nil && n >= 8
}

// OpenTrace is Open returning a trace.Source, for the format registry.
func OpenTrace(path string) (trace.Source, error) { return Open(path) }

// Archive returns the underlying archive.
func (s *Source) Archive() *Archive { return s.arch }

// Meta returns the trace's metadata.
func (s *Source) Meta() *trace.Meta { return &s.meta }

// NumRanks returns the number of ranks.
func (s *Source) NumRanks() int { return len(s.ranks) }

// RankLocation returns the OTF2 location of rank r.
func (s *Source) RankLocation(r int) uint64 { return s.ranks[r] }

// HasMPI reports whether the archive defines MPI locations.
func (s *Source) HasMPI() bool { return s.mpi }

// Defects lists what the archive does that MPI forbids or the mapping
// cannot express (unbalanced Enter/Leave, unresolved ranks, requests
// never completed), one entry per rank and kind.
func (s *Source) Defects() []string { return s.defects }

// threadMPI counts the CPU threads of the ranks' processes, other than
// the ranks' own locations, that hold MPI records (a message, a request,
// a collective), and how many threads it looked at of how many. Each is
// read up to its first such record, or threadScan events, and all of them
// threadBudget events in all: a hybrid program's OpenMP threads hold
// none, and 1,000 of them would otherwise double what Open reads.
func (s *Source) threadMPI() (found, looked, threads int, err error) {
	if !s.mpi {
		return 0, 0, 0, nil
	}
	d := s.arch.Defs
	procs := s.rankProcesses()
	budget := uint64(threadBudget)
	for _, l := range d.Locations {
		if _, rank := s.worldRank[l.ID]; rank || l.Type != locationCPUThread || !procs[l.Group] {
			continue
		}
		threads++
		if budget == 0 {
			continue
		}
		looked++
		rd, err := s.arch.OpenLocation(l.ID)
		if err != nil {
			return 0, 0, 0, err
		}
		for rd.Count() < min(threadScan, budget) && rd.Next() {
			if e := rd.Event(); e.Type >= EvMpiSend && e.Type <= EvMpiCollectiveEnd && (e.Type != EvMpiCollectiveEnd || e.Op < opCreateHandle) ||
				e.Type == EvNonBlockingCollectiveRequest || e.Type == EvNonBlockingCollectiveComplete {
				found++
				break
			}
		}
		budget -= rd.Count()
		err = rd.Err()
		rd.Close()
		if err != nil {
			return 0, 0, 0, err
		}
	}
	return found, looked, threads, nil
}

// threadScan and threadBudget bound what threadMPI reads: of each
// thread, of all of them.
const (
	threadScan   = 1 << 16
	threadBudget = 1 << 20
)

// locationCPUThread is OTF2_LOCATION_TYPE_CPU_THREAD: a thread of a
// process, as opposed to an accelerator stream or a metric location.
const locationCPUThread = 1

func (s *Source) buildRanks() {
	d := s.arch.Defs
	if g := d.commLocs[ParadigmMPI]; g != nil {
		s.mpi = true
		s.ranks = append(s.ranks, g.Members...)
	} else {
		for _, l := range d.Locations {
			if l.Type == locationCPUThread {
				s.ranks = append(s.ranks, l.ID)
			}
		}
		if len(s.ranks) == 0 { // no thread said so: take every location
			for _, l := range d.Locations {
				s.ranks = append(s.ranks, l.ID)
			}
		}
	}
	for i, loc := range s.ranks {
		s.worldRank[loc] = int32(i)
	}
}

// buildComms maps OTF2 communicators to the model: MPI_COMM_WORLD (the
// communicator over every rank in rank order) to trace.WorldComm, the
// others, in id order, to Meta.Comms with their members' world ranks.
func (s *Source) buildComms() {
	d := s.arch.Defs
	ids := make([]uint32, 0, len(d.Comms))
	for id := range d.Comms {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	world, found := uint32(0), false
	for _, id := range ids {
		if m := s.members(id); s.isWorld(m) && (!found || d.Strings[d.Comms[id].Name] == "MPI_COMM_WORLD") {
			world, found = id, true
		}
	}
	next := uint32(1)
	for _, id := range ids {
		m := s.members(id)
		if found && id == world {
			s.comms[id] = modelComm{id: trace.WorldComm, size: len(s.ranks)}
			continue
		}
		if g := d.Groups[d.Comms[id].Group]; g != nil && g.Type == GroupCommSelf {
			s.comms[id] = modelComm{self: true, size: 1}
			continue
		}
		s.comms[id] = modelComm{id: next, size: len(m)}
		s.meta.Comms = append(s.meta.Comms, trace.Comm{ID: next, Members: m})
		next++
	}
	// An intercommunicator's messages match on a communicator of both
	// its groups (the model has no intercommunicator: its collectives are
	// read as deferred calls, interCollective).
	ids = ids[:0]
	for id := range d.InterComms {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		ic := d.InterComms[id]
		a, b := s.groupMembers(ic.GroupA), s.groupMembers(ic.GroupB)
		if a == nil || b == nil {
			continue
		}
		m := append(a, b...)
		s.comms[id] = modelComm{id: next, size: len(m)}
		s.meta.Comms = append(s.meta.Comms, trace.Comm{ID: next, Members: m})
		next++
	}
}

func (s *Source) isWorld(m []int32) bool {
	if len(m) != len(s.ranks) || m == nil {
		return false
	}
	for i, r := range m {
		if r != int32(i) {
			return false
		}
	}
	return true
}

// members returns the world ranks of communicator id in rank order, nil
// if they cannot be resolved (COMM_SELF, non-MPI groups).
func (s *Source) members(id uint32) []int32 {
	return s.groupMembers(s.arch.Defs.Comms[id].Group)
}

// groupMembers returns the world ranks of COMM_GROUP group id, in order;
// nil if it is not one or a member is not a rank.
func (s *Source) groupMembers(id uint32) []int32 {
	d := s.arch.Defs
	g := d.Groups[id]
	if g == nil || g.Type != GroupCommGroup {
		return nil
	}
	m := make([]int32, len(g.Members))
	for i := range g.Members {
		loc, ok := d.groupLocation(g, uint32(i))
		r, ok2 := s.worldRank[loc]
		if !ok || !ok2 {
			return nil
		}
		m[i] = r
	}
	return m
}

func (s *Source) describe() {
	a, at := s.arch, s.meta.Attrs
	at["format"] = "otf2"
	at["otf2.version"] = a.Anchor.VersionString()
	at["generator"] = a.Anchor.Creator
	c := a.Defs.Clock
	at["clock.resolution"] = strconv.FormatUint(c.Resolution, 10)
	at["clock.offset"] = strconv.FormatUint(c.GlobalOffset, 10)
	if s.mpi {
		at["otf2.ranks"] = "one rank per MPI location (MPI_COMM_WORLD order)"
		if n := len(a.Defs.Locations) - len(s.ranks); n > 0 {
			at["otf2.ignored_locations"] = strconv.Itoa(n) + " non-MPI locations (threads, devices, metrics) are not ranks"
		}
		if n := s.devices(); n > 0 {
			at[AttrDevices] = fmt.Sprintf("%d accelerator streams (GPUs, coprocessors) of the ranks' processes are not read: "+
				"a rank's time waiting for its devices is its computation, or its MPI time inside a call that moves device "+
				"memory (CUDA-aware MPI), which a replay times as a network transfer alone", n)
		}
		return
	}
	at["otf2.ranks"] = "no MPI in this trace: one rank per CPU thread location, without MPI events"
	if n := len(a.Defs.Locations) - len(s.ranks); n > 0 {
		at["otf2.ignored_locations"] = strconv.Itoa(n) + " locations of devices and metrics are not ranks"
	}
	at[AttrNoMPI] = fmt.Sprintf("no MPI in this archive (no location group of MPI ranks): its %s read as ranks "+
		"without events; Kairos analyses a program's MPI calls", plural(nil, uint64(len(s.ranks)), "location"))
}

// rankProcesses returns the location groups (processes) of the ranks.
func (s *Source) rankProcesses() map[uint32]bool {
	d := s.arch.Defs
	procs := map[uint32]bool{}
	for _, loc := range s.ranks {
		if i, ok := d.LocationIndex(loc); ok {
			procs[d.Locations[i].Group] = true
		}
	}
	return procs
}

// locationAccelerator is OTF2_LOCATION_TYPE_ACCELERATOR_STREAM (GPU in
// OTF2 1.x): a stream of a device, a GPU or a coprocessor.
const locationAccelerator = 2

// devices counts the accelerator streams of the ranks' processes.
func (s *Source) devices() int {
	procs := s.rankProcesses()
	n := 0
	for _, l := range s.arch.Defs.Locations {
		if l.Type == locationAccelerator && procs[l.Group] {
			n++
		}
	}
	return n
}

// noEvents notes the MPI ranks whose location has no event file, which
// read as ranks without events: the trace is partial, as a DUMPI trace
// without a rank's .bin, so that check and the replays refuse it and the
// other verbs say so (otf2-print refuses it: "Create local event reader
// for location 1").
func (s *Source) noEvents() {
	if !s.mpi {
		return
	}
	missing, first := make([]bool, len(s.ranks)), ""
	for r, loc := range s.ranks {
		file := s.arch.locationFile(loc, ".evt")
		if _, err := os.Stat(file); errors.Is(err, os.ErrNotExist) {
			missing[r] = true
			first = cmp.Or(first, file)
		}
	}
	if first == "" {
		return
	}
	s.meta.Attrs["partial"] = fmt.Sprintf("ranks %s of MPI_COMM_WORLD's %d have no event file (%s missing): they have no events, "+
		"and the messages and collectives they take part in have no partner in the trace",
		trace.RankRanges(len(s.ranks), 8, func(r int) bool { return missing[r] }), len(s.ranks), first)
}

// otherThreadCalls notes the calls of other threads than the ones that
// initialized MPI that Kairos' tracer counted and did not record (its
// anchor's KAIROS::OTHER_THREAD_CALLS): messages with them have no
// partner in the trace.
func (s *Source) otherThreadCalls() {
	for _, p := range s.arch.Anchor.Properties {
		if n, err := strconv.ParseUint(p[1], 10, 64); p[0] == "KAIROS::OTHER_THREAD_CALLS" && err == nil && n > 0 {
			s.meta.Attrs[AttrThreadMPI] = trace.OtherThreadCalls(n)
		}
	}
}

// DropKept lets go of the events Open's scan kept: a rank read again is
// mapped from its records. A verb that copies the archive's events into
// memory calls it once they are copied, so that its later analyses do not
// hold them twice. No rank may be being read meanwhile.
func (s *Source) DropKept() {
	for r := range s.kept {
		s.kept[r], s.keptIDs[r] = nil, nil
		if s.idx[r] != nil {
			s.idx[r].fixes = nil
		}
	}
}

// OpenRank returns a reader of rank r's MPI calls.
func (s *Source) OpenRank(r int) (trace.Reader, error) {
	if r < 0 || r >= len(s.ranks) {
		return nil, fmt.Errorf("rank %d out of range [0,%d)", r, len(s.ranks))
	}
	if k := s.kept[r]; k != nil {
		if x := s.idx[r]; s.keptIDs[r] != nil || len(x.derived) > 0 || len(x.fixes) > 0 {
			return &keptReader{keptEvents: newKeptEvents(k), ids: s.keptIDs[r], src: s, r: r, fixes: x.fixes}, nil
		}
		return newKeptEvents(k), nil
	}
	return s.openRank(r)
}

func (s *Source) openRank(r int) (*rankReader, error) {
	lr, err := s.arch.OpenLocation(s.ranks[r])
	if err != nil {
		return nil, err
	}
	rd := &rankReader{lr: lr}
	rd.m = mapper{src: s, self: s.ranks[r], rank: int32(r),
		nodes: map[[2]uint32]uint32{}, regions: map[uint32]regionInfo{}, peers: map[uint64]int32{},
		vcache: map[uint64][]int64{}, idx: s.idx[r], scanning: !s.scanned}
	rd.m.out = &rd.q
	rd.m.side = newSideState()
	return rd, nil
}

// callSite returns the 64-bit FNV-1a hash of a region node's call path.
func (s *Source) callSite(node uint32) uint64 {
	if int(node) < len(s.sites) && s.sitesKnown[node] {
		return s.sites[node]
	}
	if h, ok := s.callsites[node]; ok {
		return h
	}
	h := pathSite(s.meta.CallPath(node))
	if n := len(s.meta.Regions); int(node) < n {
		if len(s.sites) < n {
			s.sites = append(s.sites, make([]uint64, n-len(s.sites))...)
			s.sitesKnown = append(s.sitesKnown, make([]bool, n-len(s.sitesKnown))...)
		}
		s.sites[node], s.sitesKnown[node] = h, true
	} else {
		s.callsites[node] = h
	}
	return h
}

// region returns the cached regionInfo of region id.
func (s *Source) region(id uint32) (regionInfo, bool) {
	if int(id) < len(s.regionInfos) && s.regionKnown[id] {
		return s.regionInfos[id], true
	}
	return regionInfo{}, false
}

// setRegion caches region id's regionInfo if id is below the number of
// regions the definitions give; it reports whether it did.
func (s *Source) setRegion(id uint32, ri regionInfo) bool {
	n := len(s.arch.Defs.Regions)
	if int(id) >= n {
		return false
	}
	if len(s.regionInfos) < n {
		s.regionInfos = make([]regionInfo, n)
		s.regionKnown = make([]bool, n)
	}
	s.regionInfos[id], s.regionKnown[id] = ri, true
	return true
}

// selfComm returns the model communicator of rank r's instance of the
// COMM_SELF communicator id, defining it on first use (while Open scans).
func (s *Source) selfComm(id uint32, r int32) modelComm {
	k := [2]uint64{uint64(id), uint64(r)}
	mid, ok := s.selfComms[k]
	if !ok {
		mid = uint32(len(s.meta.Comms) + 1)
		s.selfComms[k] = mid
		s.meta.Comms = append(s.meta.Comms, trace.Comm{ID: mid, Members: []int32{r}})
	}
	return modelComm{id: mid, size: 1}
}

// worldOf returns the world rank of rank r of OTF2 communicator comm.
func (s *Source) worldOf(comm, r uint32, self uint64) (int32, bool) {
	loc, ok := s.arch.Defs.CommRankLocation(comm, r, self)
	if !ok {
		return trace.NoRank, false
	}
	w, ok := s.worldRank[loc]
	if !ok {
		return trace.NoRank, false
	}
	return w, true
}
