package otf2

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"

	"kairos/trace"
)

// The writer's chunk sizes: Score-P's default for events, libotf2's for
// definitions (raised for a record that needs more, up to OTF2's most).
const (
	defChunkSize    = 1 << 22
	maxDefChunkSize = 1 << 24
)

// eventChunkSize is the size of the event files' chunks; tests make it
// smaller, to write many chunks of few events.
var eventChunkSize = 1 << 20

// Definition values the writer uses (OTF2's enums).
const (
	locationGroupProcess = 1
	paradigmUser         = 1
	paradigmClassProcess = 0
	roleFunction         = 1
	roleBarrier          = 15
	roleOne2All          = 23
	roleAll2One          = 24
	roleAll2All          = 25
	roleCollOther        = 26
	roleFileIO           = 27
	rolePoint2Point      = 28
	roleRMA              = 29
	defSystemTreeNode    = 12
)

// writerVersion is the OTF2 version whose records the writer writes.
var writerVersion = [3]uint8{3, 0, 0}

// writerCreator is the anchor's creator: not "Score-P", whose in-place
// collectives the reader counts otherwise (inPlaceAware).
const writerCreator = "Kairos"

// archiveWriter is what the writing of an archive keeps across ranks:
// the definitions the events refer to, made as they are met.
type archiveWriter struct {
	src  trace.Source
	meta *trace.Meta
	n    int

	strings  map[string]uint32
	strs     []string
	regions  map[regionKey]uint32
	regDefs  []regionDef
	userRegs []uint32 // OTF2 region of each model region node, +1 (0: not made yet)
	// prefix caches each model region node's call-path hash (the reader's
	// callSite, before the MPI function's name).
	prefix   map[uint32]uint64
	comms    map[uint32]uint32           // model communicator -> OTF2 communicator
	used     map[uint32]bool             // model communicators calls are made on
	groups   map[uint32]bool             // model communicators that are groups of posts and starts
	wins     handles                     // the windows
	files    handles                     // the I/O handles
	ranksIn  map[uint32]map[int32]uint32 // model communicator -> world rank -> its rank there
	sizes    map[uint32]int
	attrs    map[string]uint32 // attributes, by name
	attrDefs []attrDef
	events   []uint64 // each rank's records
	end      uint64   // the latest timestamp
	wrapMain bool     // the trace has no regions: each rank is wrapped in "main"
	defSize  uint64   // the definitions' chunk size
	chunk    []byte   // the event chunk's buffer, one for every rank
}

// regionKey names an OTF2 region: its name and whether it is an MPI
// function's.
type regionKey struct {
	name string
	mpi  bool
}

// regionDef is what a region's definition needs: its name's string, its
// role, and whether it is an MPI function's.
type regionDef struct {
	name uint32
	role uint8
	mpi  bool
}

// newArchiveWriter returns the writer of src's archive, its
// communicators numbered (MPI_COMM_WORLD 0, then Meta.Comms in id order).
func newArchiveWriter(src trace.Source) *archiveWriter {
	m := src.Meta()
	w := &archiveWriter{src: src, meta: m, n: src.NumRanks(), strings: map[string]uint32{}, regions: map[regionKey]uint32{},
		userRegs: make([]uint32, len(m.Regions)), prefix: map[uint32]uint64{}, comms: map[uint32]uint32{trace.WorldComm: 0},
		ranksIn: map[uint32]map[int32]uint32{}, sizes: map[uint32]int{trace.WorldComm: src.NumRanks()},
		attrs: map[string]uint32{}, used: map[uint32]bool{}, groups: map[uint32]bool{}, events: make([]uint64, src.NumRanks()), wrapMain: len(m.Regions) <= 1}
	for i, c := range w.sortedComms() {
		w.comms[c.ID] = uint32(i + 1)
		w.sizes[c.ID] = len(c.Members)
	}
	return w
}

// sortedComms returns Meta.Comms in id order, the order the reader
// numbers OTF2's communicators in.
func (w *archiveWriter) sortedComms() []trace.Comm {
	cs := slices.Clone(w.meta.Comms)
	slices.SortFunc(cs, func(a, b trace.Comm) int { return cmp.Compare(a.ID, b.ID) })
	return cs
}

// str returns the id of string s, defining it on first use.
func (w *archiveWriter) str(s string) uint32 {
	if id, ok := w.strings[s]; ok {
		return id
	}
	id := uint32(len(w.strs))
	w.strings[s] = id
	w.strs = append(w.strs, s)
	return id
}

// region returns the id of the region of MPI function (if mpi) or user
// function name, defining it on first use.
func (w *archiveWriter) region(name string, mpi bool) uint32 {
	k := regionKey{name, mpi}
	if id, ok := w.regions[k]; ok {
		return id
	}
	id := uint32(len(w.regDefs))
	role := uint8(roleFunction)
	if mpi {
		role = mpiRole(name)
	}
	w.regions[k] = id
	w.regDefs = append(w.regDefs, regionDef{name: w.str(name), role: role, mpi: mpi})
	return id
}

// userRegion returns the OTF2 region of model region node.
func (w *archiveWriter) userRegion(node uint32) uint32 {
	if n := len(w.meta.Regions); len(w.userRegs) < n { // a reader that adds regions as it reads
		w.userRegs = append(w.userRegs, make([]uint32, n-len(w.userRegs))...)
	}
	if r := w.userRegs[node]; r != 0 {
		return r - 1
	}
	r := w.region(w.meta.Regions[node].Name, false)
	w.userRegs[node] = r + 1
	return r
}

// mpiRoles are the roles of the MPI functions Score-P gives one other
// than point-to-point, by kind.
var mpiRoles = map[trace.Kind]uint8{
	trace.Barrier: roleBarrier, trace.Bcast: roleOne2All, trace.Scatter: roleOne2All, trace.Scatterv: roleOne2All,
	trace.Gather: roleAll2One, trace.Gatherv: roleAll2One, trace.Reduce: roleAll2One,
	trace.Allreduce: roleAll2All, trace.Allgather: roleAll2All, trace.Allgatherv: roleAll2All, trace.Alltoall: roleAll2All,
	trace.Alltoallv: roleAll2All, trace.ReduceScatter: roleAll2All, trace.Scan: roleCollOther, trace.Exscan: roleCollOther,
}

// mpiRole returns the region role of MPI function name, as Score-P sets
// it: collectives by their shape (non-blocking ones too), point-to-point
// calls and their completions, one-sided and I/O calls, and the
// others' a function's.
func mpiRole(name string) uint8 {
	f, _ := strings.CutPrefix(name, "MPI_")
	if len(f) > 1 && f[0] == 'I' && f[1] >= 'a' && f[1] <= 'z' {
		f = strings.ToUpper(f[1:2]) + f[2:] // MPI_Iallreduce: MPI_Allreduce's
	}
	for k, role := range mpiRoles {
		if k.MPIName() == "MPI_"+f || k == trace.ReduceScatter && f == "Reduce_scatter_block" {
			return role
		}
	}
	switch {
	case strings.HasPrefix(f, "File_"):
		return roleFileIO
	case strings.HasPrefix(f, "Win_") || f == "Put" || f == "Get" || f == "Rput" || f == "Rget" || strings.Contains(f, "ccumulate") ||
		f == "Compare_and_swap" || f == "Fetch_and_op":
		return roleRMA
	case communicates(name) || strings.HasPrefix(f, "Wait") || strings.HasPrefix(f, "Test") || strings.Contains(f, "robe") ||
		f == "Cancel" || f == "Request_free":
		return rolePoint2Point
	}
	return roleFunction
}

// commRank returns world rank r's rank in model communicator comm,
// undefined32 if it is not a member (or r is no rank).
func (w *archiveWriter) commRank(comm uint32, r int32) uint32 {
	if r < 0 {
		return undefined32
	}
	if comm == trace.WorldComm {
		return uint32(r)
	}
	m, ok := w.ranksIn[comm]
	if !ok {
		m = map[int32]uint32{}
		for i, member := range w.meta.Members(comm, w.n) {
			m[member] = uint32(i)
		}
		w.ranksIn[comm] = m
	}
	if i, ok := m[r]; ok {
		return i
	}
	return undefined32
}

// attrDef is an attribute's definition: its name and value type.
type attrDef struct {
	name string
	typ  uint8
}

// attr returns the attribute called name, of values of type typ,
// defining it on first use.
func (w *archiveWriter) attr(name string, typ uint8) uint32 {
	if id, ok := w.attrs[name]; ok {
		return id
	}
	id := uint32(len(w.attrDefs))
	w.attrs[name] = id
	w.attrDefs = append(w.attrDefs, attrDef{name, typ})
	w.str(name)
	return id
}

// writeDefs writes the global definitions file and returns the number of
// definitions.
func (w *archiveWriter) writeDefs(path string) (uint64, error) {
	recs := w.defRecords()
	size := defChunkSize
	for _, r := range recs {
		for len(r)+chunkHeaderSize+2 > size && size < maxDefChunkSize {
			size *= 2
		}
		if len(r)+chunkHeaderSize+2 > size {
			return 0, fmt.Errorf("a definition of %d bytes (a communicator of too many ranks) exceeds OTF2's largest chunk (%d bytes)", len(r), size)
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	bw := bufio.NewWriterSize(f, 1<<16)
	c := newChunkWriter(bw, size, false, nil)
	for _, r := range recs {
		if err := c.record(0, r); err != nil {
			return 0, err
		}
	}
	if err := c.close(); err != nil {
		return 0, err
	}
	w.defSize = uint64(size)
	if err := bw.Flush(); err != nil {
		return 0, err
	}
	return uint64(len(recs)), f.Close()
}

// defRecords encodes the global definitions in the order Score-P writes
// them: the clock, the strings, the MPI paradigm, the attributes, the
// system tree, a process and a thread per rank, the regions, the groups
// (MPI's locations, then each communicator's members) and the
// communicators.
func (w *archiveWriter) defRecords() [][]byte {
	// Every name first, so that the strings are complete.
	empty, machine, class, mpi, thread := w.str(""), w.str("Kairos"), w.str("machine"), w.str("MPI"), w.str("Master thread")
	ranks := make([]uint32, w.n)
	for r := range ranks {
		ranks[r] = w.str("MPI Rank " + strconv.Itoa(r))
	}
	comms := w.sortedComms()
	commNames := make([]uint32, len(comms)+1)
	commNames[0] = w.str("MPI_COMM_WORLD")
	for i, c := range comms {
		commNames[i+1] = w.str("MPI communicator " + strconv.FormatUint(uint64(c.ID), 10))
	}
	ioParadigm, fileNames := w.ioNames()
	winNames := map[uint32]uint32{}
	for _, win := range w.wins.order {
		winNames[win] = w.str("MPI window " + strconv.FormatUint(uint64(win), 10))
	}
	var recs [][]byte
	add := func(typ uint8, fill func(e *enc)) {
		var e enc
		start := e.begin(typ)
		fill(&e)
		e.end(start)
		recs = append(recs, e.b)
	}
	add(defClockProperties, func(e *enc) { e.u64(1e12); e.u64(0); e.u64(w.end); e.u64(undefined64) })
	for id, s := range w.strs {
		add(defString, func(e *enc) { e.u32(uint32(id)); e.str(s) })
	}
	add(defParadigm, func(e *enc) { e.u8(ParadigmMPI); e.u32(mpi); e.u8(paradigmClassProcess) })
	if len(w.files.order) > 0 {
		add(defIoParadigm, func(e *enc) {
			e.u8(ioParadigmMPI)
			e.u32(ioParadigm) // identification
			e.u32(ioParadigm) // name
			e.u8(ioParadigmParallel)
			e.u32(ioFlagNone)
			e.u8(0) // properties
		})
	}
	for id, a := range w.attrDefs {
		add(defAttribute, func(e *enc) { e.u32(uint32(id)); e.u32(w.strings[a.name]); e.u8(a.typ); e.u32(empty) })
	}
	add(defSystemTreeNode, func(e *enc) { e.u32(0); e.u32(machine); e.u32(class); e.u32(undefined32) })
	for _, h := range w.files.order {
		add(defIoRegularFile, func(e *enc) { e.u32(h); e.u32(fileNames[h]); e.u32(0) })
	}
	for r := range w.n {
		add(defLocationGroup, func(e *enc) {
			e.u32(uint32(r))
			e.u32(ranks[r])
			e.u8(locationGroupProcess)
			e.u32(0)
			e.u32(undefined32)
		})
	}
	for r := range w.n {
		add(defLocation, func(e *enc) {
			e.u64(uint64(r))
			e.u32(thread)
			e.u8(locationCPUThread)
			e.u64(w.events[r])
			e.u32(uint32(r))
		})
	}
	for id, d := range w.regDefs {
		paradigm := uint8(paradigmUser)
		if d.mpi {
			paradigm = ParadigmMPI
		}
		add(defRegion, func(e *enc) {
			e.u32(uint32(id))
			e.u32(d.name)
			e.u32(empty)       // description
			e.u8(0)            // region type (attic)
			e.u32(undefined32) // source file
			e.u32(0)
			e.u32(0)
			e.u32(d.name) // canonical name
			e.u8(d.role)
			e.u8(paradigm)
			e.u32(0) // flags
		})
	}
	world := make([]int32, w.n)
	for r := range world {
		world[r] = int32(r)
	}
	group := func(id uint32, typ uint8, members []int32) {
		add(defGroup, func(e *enc) {
			e.u32(id)
			e.u32(empty)
			e.u8(0) // group type before OTF2 1.2 (attic)
			e.u32(uint32(len(members)))
			for _, m := range members {
				e.u64(uint64(m))
			}
			e.u8(typ)
			e.u8(ParadigmMPI)
			e.u32(0) // flags: members listed
		})
	}
	group(0, GroupCommLocations, world) // location r is rank r
	group(1, GroupCommGroup, world)
	for i, c := range comms {
		group(uint32(i+2), GroupCommGroup, c.Members)
	}
	for i := range commNames {
		parent := uint32(0)
		if i == 0 {
			parent = undefined32
		} else if c := comms[i-1].ID; w.groups[c] && !w.used[c] {
			continue // a group of posts and starts only
		}
		add(defComm, func(e *enc) { e.u32(uint32(i)); e.u32(commNames[i]); e.u32(uint32(i + 1)); e.u32(parent); e.u32(0) })
	}
	for _, win := range w.wins.order {
		add(defRmaWin, func(e *enc) { e.u32(win); e.u32(winNames[win]); e.u32(w.wins.comm[win]); e.u32(0) })
	}
	for _, h := range w.files.order {
		add(defIoHandle, func(e *enc) {
			e.u32(h)
			e.u32(fileNames[h])
			e.u32(h) // its regular file
			e.u8(ioParadigmMPI)
			e.u32(ioFlagNone)
			e.u32(w.files.comm[h])
			e.u32(undefined32) // parent
		})
	}
	return recs
}

// writeAnchor writes the anchor file: versions, chunk sizes, the numbers
// of locations and of global definitions, the creator, the trace's
// attributes as properties, and a trace id made from those (the same
// trace writes the same archive).
func (w *archiveWriter) writeAnchor(path string, ndefs uint64) error {
	var e enc
	e.b = append(e.b, anchorMagic(littleEndian)...)
	e.u8(3) // anchor format
	e.u8(2) // trace format
	e.b = append(e.b, writerVersion[:]...)
	e.u64full(uint64(eventChunkSize))
	e.u64full(w.defSize)
	e.u8(substratePOSIX)
	e.u8(compressionNone)
	e.u64full(uint64(w.n))
	e.u64full(ndefs)
	e.str("")            // machine
	e.str(writerCreator) // creator
	e.str("")            // description
	w.properties(&e)
	h := fnv.New64a()
	h.Write(e.b)
	for _, n := range w.events {
		h.Write(binary.LittleEndian.AppendUint64(nil, n))
	}
	e.u64full(h.Sum64()) // trace id
	e.u32full(0)         // snapshots
	e.u32full(0)         // thumbnails
	e.b = append(e.b, endOfFile, endOfBuffer, 0)
	return os.WriteFile(path, e.b, 0o644)
}

// properties appends the anchor's properties: the trace's attributes
// (Meta.Attrs), in key order, each as KAIROS::ATTR_ and its key
// (propertyKey), which the reader restores (Source.restoreAttrs).
func (w *archiveWriter) properties(e *enc) {
	keys := slices.Sorted(maps.Keys(w.meta.Attrs))
	e.u32full(uint32(len(keys)))
	for _, k := range keys {
		e.str(attrProperty + propertyKey(k))
		e.str(w.meta.Attrs[k])
	}
}
