package otf2

import (
	"errors"
)

// Global definition record ids (otf2.defs, wire ids).
const (
	defClockProperties = 5
	defParadigm        = 6
	defIoParadigm      = 8
	defString          = 10
	defAttribute       = 11
	defLocationGroup   = 13
	defLocation        = 14
	defRegion          = 15
	defGroup           = 18
	defMetricMember    = 19
	defMetricClass     = 20
	defMetricInstance  = 21
	defComm            = 22
	defParameter       = 23
	defRmaWin          = 24
	defSourceCodeLoc   = 33
	defCallingContext  = 34
	defInterruptGen    = 36
	defIoRegularFile   = 38
	defIoDirectory     = 39
	defIoHandle        = 40
	defInterComm       = 43

	// Local definition record ids.
	defMappingTable = 5
	defClockOffset  = 6
)

// Group types and flags Kairos resolves ranks with.
const (
	GroupCommLocations = 4
	GroupCommGroup     = 5
	GroupCommSelf      = 6
	groupGlobalMembers = 1
	ParadigmMPI        = 4
)

// ClockProperties is the archive's timer: ticks per second and the tick
// count of the measurement's start.
type ClockProperties struct {
	Resolution   uint64 // ticks per second
	GlobalOffset uint64 // tick of time zero
	TraceLength  uint64
	Realtime     uint64 // undefined (all ones) if absent
}

// Location is a stream of events: a thread of a process or a device
// stream. ID is the id its event file is named by.
type Location struct {
	ID        uint64
	Name      uint32 // string id
	Type      uint8
	NumEvents uint64
	Group     uint32 // location group id
}

// Region is a code region Enter and Leave name.
type Region struct {
	Name, Canonical uint32 // string ids
	Role, Paradigm  uint8
}

// Group is a set of locations (COMM_LOCATIONS) or of indexes into the
// paradigm's COMM_LOCATIONS group (COMM_GROUP).
type Group struct {
	Name     uint32
	Type     uint8
	Paradigm uint8
	Flags    uint32
	Members  []uint64
}

// Comm is a communicator: its name and group.
type Comm struct {
	Name, Group, Parent uint32
}

// InterComm is an intercommunicator (OTF2 3.0): its two groups, both
// COMM_GROUP groups, and the communicator they were joined over. A rank
// of it, in a record of a member of one group, is one of the other's.
type InterComm struct {
	Name, GroupA, GroupB, Common uint32
}

// IoHandle is a file handle of an I/O paradigm: its name, the file it
// is open on and the communicator of an MPI-IO one (undefined if none).
type IoHandle struct {
	Name, File uint32
	Paradigm   uint8
	Comm       uint32
}

// CallingContext is a frame of an unwound call stack (Score-P with
// SCOREP_ENABLE_UNWINDING): its region, where in it, and the frame that
// called it (undefined at the root).
type CallingContext struct {
	Region, SourceLoc, Parent uint32
}

// Attribute names the values of attribute lists.
type Attribute struct {
	Name uint32
	Type uint8
}

// Defs holds the global definitions Kairos uses; the others are skipped by
// their length.
type Defs struct {
	Clock          ClockProperties
	HasClock       bool
	Strings        map[uint32]string
	Attributes     map[uint32]Attribute
	Regions        map[uint32]Region
	Locations      []Location // in definition order
	LocationGroups map[uint32]Location
	Groups         map[uint32]*Group
	Comms          map[uint32]Comm
	InterComms     map[uint32]InterComm      // intercommunicator -> its groups
	MetricMembers  map[uint32]uint32         // member id -> name string
	Metrics        map[uint32][]uint32       // class or instance id -> member ids
	Parameters     map[uint32]uint32         // parameter id -> name string
	Paradigms      map[uint8]uint32          // paradigm -> name string
	RmaWins        map[uint32]Comm           // window -> name string and communicator (Group unused)
	IoParadigms    map[uint8]uint32          // I/O paradigm -> name string
	IoFiles        map[uint32]string         // regular file or directory -> "file://name" or "directory://name"
	IoHandles      map[uint32]IoHandle       // I/O handle -> its name, file, paradigm and communicator
	SourceLocs     map[uint32][2]uint32      // source code location -> file string, line
	CallingCtxs    map[uint32]CallingContext // calling context -> its frame
	InterruptGens  map[uint32]uint32         // interrupt generator -> name string
	NumRecords     uint64

	locIndex map[uint64]int
	commLocs map[uint8]*Group
	// inA holds, for each intercommunicator, the locations of its group A.
	inA map[uint32]map[uint64]bool
}

func newDefs() *Defs {
	return &Defs{
		Strings:        map[uint32]string{},
		Attributes:     map[uint32]Attribute{},
		Regions:        map[uint32]Region{},
		LocationGroups: map[uint32]Location{},
		Groups:         map[uint32]*Group{},
		Comms:          map[uint32]Comm{},
		InterComms:     map[uint32]InterComm{},
		MetricMembers:  map[uint32]uint32{},
		Metrics:        map[uint32][]uint32{},
		Parameters:     map[uint32]uint32{},
		Paradigms:      map[uint8]uint32{},
		RmaWins:        map[uint32]Comm{},
		IoParadigms:    map[uint8]uint32{},
		IoFiles:        map[uint32]string{},
		IoHandles:      map[uint32]IoHandle{},
		SourceLocs:     map[uint32][2]uint32{},
		CallingCtxs:    map[uint32]CallingContext{},
		InterruptGens:  map[uint32]uint32{},
		locIndex:       map[uint64]int{},
	}
}

var errShortDef = errors.New("record ends early")

// add decodes one global definition record. Fields a newer OTF2 appended
// are left in the payload; fields an older one lacks keep their defaults.
func (d *Defs) add(typ uint8, p *rbuf) error {
	d.NumRecords++
	switch typ {
	case defClockProperties:
		d.Clock = ClockProperties{Resolution: p.u64(), GlobalOffset: p.u64(), TraceLength: p.u64(), Realtime: undefined64}
		if p.left() > 0 {
			d.Clock.Realtime = p.u64()
		}
		d.HasClock = true
	case defParadigm:
		id := p.u8()
		d.Paradigms[id] = p.u32()
	case defString:
		id := p.u32()
		d.Strings[id] = p.str()
	case defAttribute:
		id := p.u32()
		d.Attributes[id] = Attribute{Name: p.u32(), Type: p.u8()}
	case defLocationGroup:
		id := p.u32()
		d.LocationGroups[id] = Location{Name: p.u32(), Type: p.u8()}
	case defLocation:
		l := Location{ID: p.u64(), Name: p.u32(), Type: p.u8(), NumEvents: p.u64(), Group: p.u32()}
		if _, dup := d.locIndex[l.ID]; !dup && !p.failed() {
			d.locIndex[l.ID] = len(d.Locations)
			d.Locations = append(d.Locations, l)
		}
	case defRegion:
		d.addRegion(p)
	case defGroup:
		d.addGroup(p)
	case defComm:
		id := p.u32()
		d.Comms[id] = Comm{Name: p.u32(), Group: p.u32(), Parent: p.u32()}
	case defInterComm:
		id := p.u32()
		d.InterComms[id] = InterComm{Name: p.u32(), GroupA: p.u32(), GroupB: p.u32(), Common: p.u32()}
	case defMetricMember:
		id := p.u32()
		d.MetricMembers[id] = p.u32()
	case defMetricClass:
		id := p.u32()
		n := int(p.u8())
		m := make([]uint32, 0, min(n, p.left()))
		for i := 0; i < n && !p.failed(); i++ {
			m = append(m, p.u32())
		}
		d.Metrics[id] = m
	case defMetricInstance:
		id := p.u32()
		d.Metrics[id] = d.Metrics[p.u32()]
	case defParameter:
		id := p.u32()
		d.Parameters[id] = p.u32()
	case defRmaWin:
		id := p.u32()
		d.RmaWins[id] = Comm{Name: p.u32(), Parent: p.u32()}
	case defIoParadigm:
		id := p.u8()
		p.u32() // identification
		d.IoParadigms[id] = p.u32()
	case defIoRegularFile, defIoDirectory:
		id, name := p.u32(), p.u32()
		scheme := "file://"
		if typ == defIoDirectory {
			scheme = "directory://"
		}
		if s, ok := d.Strings[name]; ok {
			d.IoFiles[id] = scheme + s
		}
	case defIoHandle:
		id := p.u32()
		h := IoHandle{Name: p.u32(), File: p.u32(), Paradigm: p.u8()}
		p.u32() // flags
		h.Comm = p.u32()
		d.IoHandles[id] = h
	case defSourceCodeLoc:
		id := p.u32()
		d.SourceLocs[id] = [2]uint32{p.u32(), p.u32()}
	case defCallingContext:
		id := p.u32()
		d.CallingCtxs[id] = CallingContext{Region: p.u32(), SourceLoc: p.u32(), Parent: p.u32()}
	case defInterruptGen:
		id := p.u32()
		d.InterruptGens[id] = p.u32()
	}
	if p.failed() {
		return errShortDef
	}
	return nil
}

func (d *Defs) addRegion(p *rbuf) {
	id := p.u32()
	r := Region{Name: p.u32()}
	p.u32() // description
	p.u8()  // regionType (attic since 1.1)
	p.u32() // source file
	p.u32() // begin line
	p.u32() // end line
	r.Canonical = r.Name
	if p.left() > 0 { // since 1.1
		r.Canonical = p.u32()
		r.Role = p.u8()
		r.Paradigm = p.u8()
	}
	d.Regions[id] = r
}

func (d *Defs) addGroup(p *rbuf) {
	id := p.u32()
	g := &Group{Name: p.u32()}
	p.u8() // groupTypePre12 (attic since 1.2, still on the wire)
	n := p.u32()
	if uint64(n) > uint64(p.left()) { // every member takes at least a byte
		p.short = true
		return
	}
	g.Members = make([]uint64, n)
	for i := range g.Members {
		g.Members[i] = p.u64()
	}
	if p.left() > 0 { // since 1.2
		g.Type = p.u8()
		g.Paradigm = p.u8()
		g.Flags = p.u32()
	}
	d.Groups[id] = g
}

// LocationIndex returns the position of location id in Locations.
func (d *Defs) LocationIndex(id uint64) (int, bool) {
	i, ok := d.locIndex[id]
	return i, ok
}

// String returns string id, and whether it is defined.
func (d *Defs) String(id uint32) (string, bool) {
	s, ok := d.Strings[id]
	return s, ok
}

// RegionName returns the name of region id ("" if unknown).
func (d *Defs) RegionName(id uint32) string {
	r, ok := d.Regions[id]
	if !ok {
		return ""
	}
	return d.Strings[r.Name]
}

// CommRankLocation returns the location of rank in communicator comm, as
// otf2-print resolves it: Comm -> COMM_GROUP group -> index into the
// paradigm's COMM_LOCATIONS group -> location id.
func (d *Defs) CommRankLocation(comm, rank uint32, self uint64) (uint64, bool) {
	c, ok := d.Comms[comm]
	if !ok {
		return d.interRankLocation(comm, rank, self)
	}
	g := d.Groups[c.Group]
	if g == nil {
		return 0, false
	}
	switch g.Type {
	case GroupCommSelf:
		return self, rank == 0
	case GroupCommGroup:
		return d.groupLocation(g, rank)
	}
	return 0, false
}

// groupLocation returns the location of rank in COMM_GROUP group g.
func (d *Defs) groupLocation(g *Group, rank uint32) (uint64, bool) {
	locs := d.commLocs[g.Paradigm]
	if locs == nil {
		return 0, false
	}
	idx := uint64(rank)
	if g.Flags&groupGlobalMembers == 0 {
		if int(rank) >= len(g.Members) {
			return 0, false
		}
		idx = g.Members[rank]
	}
	if idx >= uint64(len(locs.Members)) {
		return 0, false
	}
	return locs.Members[idx], true
}

// interRankLocation returns the location of rank in intercommunicator
// comm, as the location self names it: a rank of the group self is not
// in.
func (d *Defs) interRankLocation(comm, rank uint32, self uint64) (uint64, bool) {
	ic, ok := d.InterComms[comm]
	if !ok {
		return 0, false
	}
	a, b := d.Groups[ic.GroupA], d.Groups[ic.GroupB]
	if a == nil || b == nil || a.Type != GroupCommGroup || b.Type != GroupCommGroup {
		return 0, false
	}
	if d.inA[comm][self] {
		a = b
	}
	return d.groupLocation(a, rank)
}

// finish indexes what event decoding looks up: each paradigm's
// COMM_LOCATIONS group (the lowest id if there are several), and which
// group of each intercommunicator each location is in.
func (d *Defs) finish() {
	defer d.indexInterComms()
	d.commLocs = map[uint8]*Group{}
	best := map[uint8]uint32{}
	for id, g := range d.Groups {
		if g.Type != GroupCommLocations {
			continue
		}
		if b, ok := best[g.Paradigm]; !ok || id < b {
			best[g.Paradigm] = id
			d.commLocs[g.Paradigm] = g
		}
	}
}

func (d *Defs) indexInterComms() {
	d.inA = map[uint32]map[uint64]bool{}
	for id, ic := range d.InterComms {
		a := d.Groups[ic.GroupA]
		if a == nil || a.Type != GroupCommGroup {
			continue
		}
		in := map[uint64]bool{}
		for i := range a.Members {
			if l, ok := d.groupLocation(a, uint32(i)); ok {
				in[l] = true
			}
		}
		d.inA[id] = in
	}
}
