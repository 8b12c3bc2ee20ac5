package otf2

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// Event record ids (otf2.events, wire ids) that Kairos decodes.
const (
	EvBufferFlush                   = 10
	EvMeasurementOnOff              = 11
	EvEnter                         = 12
	EvLeave                         = 13
	EvMpiSend                       = 14
	EvMpiIsend                      = 15
	EvMpiIsendComplete              = 16
	EvMpiIrecvRequest               = 17
	EvMpiRecv                       = 18
	EvMpiIrecv                      = 19
	EvMpiRequestTest                = 20
	EvMpiRequestCancelled           = 21
	EvMpiCollectiveBegin            = 22
	EvMpiCollectiveEnd              = 23
	EvOmpFork                       = 24
	EvOmpJoin                       = 25
	EvOmpAcquireLock                = 26
	EvOmpReleaseLock                = 27
	EvOmpTaskCreate                 = 28
	EvOmpTaskSwitch                 = 29
	EvOmpTaskComplete               = 30
	EvMetric                        = 31
	EvParameterString               = 32
	EvParameterInt                  = 33
	EvParameterUnsignedInt          = 34
	EvRmaWinCreate                  = 35
	EvRmaWinDestroy                 = 36
	EvRmaCollectiveBegin            = 37
	EvRmaCollectiveEnd              = 38
	EvRmaGroupSync                  = 39
	EvRmaRequestLock                = 40
	EvRmaAcquireLock                = 41
	EvRmaTryLock                    = 42
	EvRmaReleaseLock                = 43
	EvRmaSync                       = 44
	EvRmaWaitChange                 = 45
	EvRmaPut                        = 46
	EvRmaGet                        = 47
	EvRmaAtomic                     = 48
	EvRmaOpCompleteBlocking         = 49
	EvRmaOpCompleteNonBlocking      = 50
	EvRmaOpTest                     = 51
	EvRmaOpCompleteRemote           = 52
	EvThreadFork                    = 53
	EvThreadJoin                    = 54
	EvThreadTeamBegin               = 55
	EvThreadTeamEnd                 = 56
	EvThreadAcquireLock             = 57
	EvThreadReleaseLock             = 58
	EvThreadTaskCreate              = 59
	EvThreadTaskSwitch              = 60
	EvThreadTaskComplete            = 61
	EvThreadCreate                  = 62
	EvThreadBegin                   = 63
	EvThreadWait                    = 64
	EvThreadEnd                     = 65
	EvCallingContextEnter           = 66
	EvCallingContextLeave           = 67
	EvCallingContextSample          = 68
	EvProgramBegin                  = 83
	EvProgramEnd                    = 84
	EvNonBlockingCollectiveRequest  = 85
	EvNonBlockingCollectiveComplete = 86
	EvCommCreate                    = 87
	EvCommDestroy                   = 88
)

// A MEASUREMENT_ON_OFF record's mode (Event.Op).
const (
	MeasurementOn  = 1
	MeasurementOff = 2
)

// singleton reports whether records of type t are written without a
// length: the records OTF2 1.1 defined with a single compressed field.
func singleton(t uint8) bool {
	switch t {
	case EvEnter, EvLeave, EvMpiIsendComplete, EvMpiIrecvRequest, EvMpiRequestTest,
		EvMpiRequestCancelled, EvOmpFork, EvOmpTaskCreate, EvOmpTaskSwitch, EvOmpTaskComplete:
		return true
	}
	return false
}

// AttrValue is one entry of an event's attribute list. Value holds the
// value's bits (integers zero- or sign-extended, floats as IEEE bits,
// references mapped to global ids).
type AttrValue struct {
	ID    uint32
	Type  uint8
	Value uint64
}

// Event is one raw OTF2 event record of one location, with the fields of
// the records Kairos interprets decoded and definition references mapped
// to global ids. Other records keep only their payload.
type Event struct {
	Type     uint8  // record id (EvEnter, ...)
	Location uint64 // location id
	Time     uint64 // clock-corrected timestamp in ticks
	RawTime  uint64 // timestamp as written

	Region   uint32 // Enter, Leave
	Peer     uint32 // receiver or sender (rank in Comm); collective root; RMA remote rank or root
	Comm     uint32 // communicator
	Tag      uint32
	Bytes    uint64 // message length; bytes sent by a collective
	Received uint64 // bytes received by a collective
	Request  uint64
	Op       uint8  // collective operation; measurement mode; Thread* model (paradigm); RMA lock, sync or atomic type
	Ref      uint32 // Metric: metric; Parameter*: parameter; ProgramBegin: program name; Rma*: window; CallingContext*: calling context
	// Value is the value of Parameter*, the exit status of ProgramEnd, the
	// stop time of BufferFlush, the requested threads of OmpFork and
	// ThreadFork, the task of OmpTask*, the lock of *AcquireLock and
	// *ReleaseLock, the sequence count of ThreadCreate/Begin/Wait/End, the
	// lock or matching id of Rma*, the group of RmaGroupSync.
	Value uint64
	// Value2 is the acquisition order of *AcquireLock and *ReleaseLock,
	// the generation number of ThreadTask*, the synchronisation level of
	// RmaCollectiveEnd and RmaGroupSync.
	Value2 uint32

	// Attrs is the record's attribute list, if the archive keeps them.
	Attrs []AttrValue

	payload rbuf                 // the record's fields (empty for singletons)
	maps    *[numMapTypes]*idMap // the location's mapping tables
}

// mapped maps a local id of mapping type mt to its global id.
func (e *Event) mapped(mt int, v uint32) uint32 {
	if m := e.maps[mt]; m != nil && v != undefined32 {
		return uint32(m.global(uint64(v)))
	}
	return v
}

// Name returns the record's name as otf2-print prints it.
func (e *Event) Name() string { return RecordName(e.Type) }

// LocationReader streams the events of one location in file order. Memory
// is one chunk of the event file.
type LocationReader struct {
	arch    *Archive
	loc     uint64
	cf      *chunkFile
	r       rbuf
	inChunk bool
	partial bool // r holds less than the rest of its chunk (whole)
	time    uint64
	clk     clock
	maps    *[numMapTypes]*idMap
	ev      Event
	err     error
	done    bool
	n       uint64
}

// OpenLocation returns a reader of location loc's events, clock-corrected
// and with mapping tables applied. A location without an event file has
// no events.
func (a *Archive) OpenLocation(loc uint64) (*LocationReader, error) {
	ld, err := a.local(loc)
	if err != nil {
		return nil, err
	}
	rd := &LocationReader{arch: a, loc: loc, maps: &ld.maps, clk: clock{iv: ld.intervals}}
	rd.ev.maps = &ld.maps
	rd.cf, err = openChunkFile(a.locationFile(loc, ".evt"), a.Anchor.EventChunkSize)
	if rd.cf != nil {
		rd.cf.window = a.eventWindow()
	}
	if errors.Is(err, os.ErrNotExist) {
		rd.done = true
		return rd, nil
	}
	if err != nil {
		return nil, err
	}
	return rd, nil
}

// Location returns the id of the location read.
func (rd *LocationReader) Location() uint64 { return rd.loc }

// Event returns the current event, valid until the next call to Next.
func (rd *LocationReader) Event() *Event { return &rd.ev }

// Err returns the first error met.
func (rd *LocationReader) Err() error { return rd.err }

// Count returns the number of events read so far.
func (rd *LocationReader) Count() uint64 { return rd.n }

// Close closes the event file.
func (rd *LocationReader) Close() error {
	if rd.cf == nil {
		return nil
	}
	err := rd.cf.Close()
	rd.cf = nil
	rd.done = true
	return err
}

func (rd *LocationReader) fail(pos int, format string, a ...any) bool {
	rd.err = rd.cf.errAt(rd.cf.off+int64(pos), "location %d, event %d: %s", rd.loc, rd.n+1, fmt.Sprintf(format, a...))
	rd.done = true
	return false
}

// Next decodes the next event.
func (rd *LocationReader) Next() bool {
	if rd.done {
		return false
	}
	rd.ev.Attrs = rd.ev.Attrs[:0]
	for {
		if !rd.inChunk {
			r, err := rd.cf.nextChunk()
			if err == io.EOF {
				return rd.fail(int(rd.cf.size-rd.cf.off), "event file ends without an end-of-file mark")
			}
			if err != nil {
				rd.err, rd.done = err, true
				return false
			}
			rd.r, rd.inChunk = r, true
			rd.partial = rd.cf.windowed(&rd.r)
		}
		r := &rd.r
		if rd.partial {
			if err := rd.whole(r); err != nil {
				rd.err, rd.done = err, true
				return false
			}
		}
		start := r.pos
		t := r.u8()
		if r.short {
			return rd.fail(start, "chunk ends without an end-of-chunk or end-of-file mark")
		}
		switch t {
		case endOfChunk:
			rd.inChunk = false
			continue
		case endOfFile:
			rd.done = true
			return false
		case timestampRec:
			rd.time = r.u64full()
			if r.short {
				return rd.fail(start, "timestamp overruns its chunk")
			}
			continue
		case attrListRec:
			p, ok := r.record()
			if !ok {
				return rd.fail(start, "attribute list overruns its chunk")
			}
			if rd.arch.KeepAttrs && !rd.readAttrs(&p) {
				return rd.fail(start, "malformed attribute list")
			}
			continue
		}
		if !rd.decode(t) {
			return rd.fail(start, "record %s (type %d) is truncated or malformed", RecordName(t), t)
		}
		rd.n++
		return true
	}
}

// Every location of an archive may be open at once (a replay reads them
// in turn): their windows share windowBudget, each of minWindow at least.
// (Variables for the tests, which slide windows of a few bytes.)
var (
	windowBudget int64 = 64 << 20
	minWindow    int64 = 4 << 10
)

// eventWindow returns the window of an event file's chunks (chunkFile):
// the whole chunk where the archive's locations share windowBudget with
// room for it (Score-P's megabyte: up to 64 locations).
func (a *Archive) eventWindow() int64 {
	n := int64(1)
	if a.Defs != nil {
		n = max(n, int64(len(a.Defs.Locations)))
	}
	return max(windowBudget/n, minWindow)
}

// recordHead is the most bytes a record's type and length (or a
// singleton's compressed integer) take.
const recordHead = 10

// whole makes the record at r's position wholly readable in r (where the
// chunk holds it): its head, then as much as its length says. It is
// called only while the window holds less than the rest of its chunk
// (partial): a whole chunk costs the reading nothing more.
func (rd *LocationReader) whole(r *rbuf) error {
	defer func() { rd.partial = rd.cf.windowed(r) }()
	if err := rd.cf.more(r, recordHead); err != nil {
		return err
	}
	b := r.b[r.pos:]
	if len(b) < 2 {
		return nil
	}
	switch t := b[0]; {
	case t == endOfChunk || t == endOfFile || t == timestampRec || singleton(t):
		return nil // within the head
	case b[1] != 0xFF:
		return rd.cf.more(r, 2+int(b[1]))
	case len(b) >= recordHead:
		n := binary.LittleEndian.Uint64(b[2:])
		if r.big {
			n = binary.BigEndian.Uint64(b[2:])
		}
		if n <= uint64(rd.cf.chunkSize) { // longer: record() reports it
			return rd.cf.more(r, recordHead+int(n))
		}
	}
	return nil
}

func (rd *LocationReader) mapID(mt int, v uint64) uint64 {
	if m := rd.maps[mt]; m != nil {
		return m.global(v)
	}
	return v
}

func (rd *LocationReader) map32(mt int, v uint32) uint32 {
	if m := rd.maps[mt]; m != nil && v != undefined32 {
		return uint32(m.global(uint64(v)))
	}
	return v
}

func u32of(v uint64) uint32 {
	if v == undefined64 {
		return undefined32
	}
	return uint32(v)
}

// decode reads the record of type t at the reader's position.
func (rd *LocationReader) decode(t uint8) bool {
	e := &rd.ev
	e.Type, e.Location, e.RawTime = t, rd.loc, rd.time
	e.Time = rd.time
	if len(rd.clk.iv) > 0 {
		e.Time = rd.clk.correct(rd.time)
	}
	if singleton(t) {
		v := rd.r.u64()
		if rd.r.failed() {
			return false
		}
		e.payload = rbuf{}
		switch t {
		case EvEnter, EvLeave:
			e.Region = rd.map32(MapRegion, u32of(v))
		case EvOmpFork, EvOmpTaskCreate, EvOmpTaskSwitch, EvOmpTaskComplete:
			e.Value = v
		default:
			e.Request = v
		}
		return true
	}
	p, ok := rd.r.record()
	if !ok {
		return false
	}
	e.payload = p
	switch t {
	case EvBufferFlush:
		e.Value = p.u64full()
	case EvMeasurementOnOff:
		e.Op = p.u8()
	case EvMpiSend, EvMpiIsend, EvMpiRecv, EvMpiIrecv:
		e.Peer = p.u32()
		e.Comm = rd.map32(MapComm, p.u32())
		e.Tag = p.u32()
		e.Bytes = p.u64()
		if t == EvMpiIsend || t == EvMpiIrecv {
			e.Request = p.u64()
		}
	case EvMpiCollectiveEnd, EvNonBlockingCollectiveComplete:
		e.Op = p.u8()
		e.Comm = rd.map32(MapComm, p.u32())
		e.Peer = p.u32()
		e.Bytes = p.u64()
		e.Received = p.u64()
		if t == EvNonBlockingCollectiveComplete {
			e.Request = p.u64()
		}
	case EvNonBlockingCollectiveRequest:
		e.Request = p.u64()
	case EvCommCreate, EvCommDestroy, EvThreadTeamBegin, EvThreadTeamEnd:
		e.Comm = rd.map32(MapComm, p.u32())
	case EvRmaWinCreate, EvRmaWinDestroy, EvRmaCollectiveEnd, EvRmaGroupSync, EvRmaRequestLock,
		EvRmaAcquireLock, EvRmaTryLock, EvRmaReleaseLock, EvRmaSync, EvRmaWaitChange, EvRmaPut, EvRmaGet,
		EvRmaAtomic, EvRmaOpCompleteBlocking, EvRmaOpCompleteNonBlocking, EvRmaOpTest, EvRmaOpCompleteRemote:
		rd.decodeRma(t, &p)
	case EvOmpAcquireLock, EvOmpReleaseLock:
		e.Value, e.Value2 = uint64(p.u32()), p.u32()
	case EvThreadFork:
		e.Op, e.Value = p.u8(), uint64(p.u32())
	case EvThreadJoin:
		e.Op = p.u8()
	case EvThreadAcquireLock, EvThreadReleaseLock:
		e.Op, e.Value = p.u8(), uint64(p.u32())
		e.Value2 = p.u32()
	case EvThreadTaskCreate, EvThreadTaskSwitch, EvThreadTaskComplete:
		e.Comm = rd.map32(MapComm, p.u32())
		e.Peer, e.Value2 = p.u32(), p.u32()
	case EvThreadCreate, EvThreadBegin, EvThreadWait, EvThreadEnd:
		e.Comm = rd.map32(MapComm, p.u32())
		e.Value = p.u64()
	case EvMetric:
		e.Ref = rd.map32(MapMetric, p.u32())
	case EvParameterString:
		e.Ref = rd.map32(MapParameter, p.u32())
		e.Value = uint64(rd.map32(MapString, p.u32()))
	case EvParameterInt, EvParameterUnsignedInt:
		e.Ref = rd.map32(MapParameter, p.u32())
		e.Value = p.u64()
	case EvCallingContextEnter, EvCallingContextLeave:
		e.Ref = rd.map32(MapCallingContext, p.u32())
	case EvProgramBegin:
		e.Ref = rd.map32(MapString, p.u32())
	case EvProgramEnd:
		e.Value = p.u64()
	}
	return !p.failed()
}

// decodeRma decodes the fields of the RMA records (but RmaCollectiveBegin,
// which has none).
func (rd *LocationReader) decodeRma(t uint8, p *rbuf) {
	e := &rd.ev
	switch t {
	case EvRmaCollectiveEnd:
		e.Op = p.u8()
		e.Value2 = p.u32()
		e.Ref = rd.map32(MapRmaWin, p.u32())
		e.Peer, e.Bytes, e.Received = p.u32(), p.u64(), p.u64()
		return
	case EvRmaGroupSync:
		e.Value2 = p.u32()
		e.Ref = rd.map32(MapRmaWin, p.u32())
		e.Value = uint64(rd.map32(MapGroup, p.u32()))
		return
	}
	e.Ref = rd.map32(MapRmaWin, p.u32())
	switch t {
	case EvRmaRequestLock, EvRmaAcquireLock, EvRmaTryLock:
		e.Peer, e.Value, e.Op = p.u32(), p.u64(), p.u8()
	case EvRmaReleaseLock:
		e.Peer, e.Value = p.u32(), p.u64()
	case EvRmaSync:
		e.Peer, e.Op = p.u32(), p.u8()
	case EvRmaPut, EvRmaGet:
		e.Peer, e.Bytes, e.Value = p.u32(), p.u64(), p.u64()
	case EvRmaAtomic:
		e.Peer, e.Op = p.u32(), p.u8()
		e.Bytes, e.Received, e.Value = p.u64(), p.u64(), p.u64()
	case EvRmaOpCompleteBlocking, EvRmaOpCompleteNonBlocking, EvRmaOpTest, EvRmaOpCompleteRemote:
		e.Value = p.u64()
	}
}

// readAttrs decodes an attribute list: a compressed count, then per entry
// a compressed attribute id, a type byte and the value.
func (rd *LocationReader) readAttrs(p *rbuf) bool {
	n := p.u32()
	if uint64(n) > uint64(p.left()) {
		return false
	}
	for i := uint32(0); i < n; i++ {
		a := AttrValue{ID: rd.map32(MapAttribute, p.u32()), Type: p.u8()}
		a.Value = readValue(p, a.Type)
		if mt := int(a.Type) - typeString; a.Type >= typeString && mt < numMapTypes {
			a.Value = rd.mapID(mt, a.Value)
		}
		if p.failed() {
			return false
		}
		rd.ev.Attrs = append(rd.ev.Attrs, a)
	}
	return true
}

// OTF2_Type values.
const (
	typeUint8    = 1
	typeUint16   = 2
	typeUint32   = 3
	typeUint64   = 4
	typeInt8     = 5
	typeInt16    = 6
	typeInt32    = 7
	typeInt64    = 8
	typeFloat    = 9
	typeDouble   = 10
	typeString   = 11
	typeLocation = 13
)

// readValue reads an attribute value of OTF2 type typ.
func readValue(p *rbuf, typ uint8) uint64 {
	switch typ {
	case typeUint8:
		return uint64(p.u8())
	case typeInt8:
		return uint64(int64(int8(p.u8())))
	case typeUint16:
		return uint64(p.u16())
	case typeInt16:
		return uint64(int64(int16(p.u16())))
	case typeUint32:
		return uint64(p.u32())
	case typeInt32:
		return uint64(int64(int32(p.u32())))
	case typeUint64, typeInt64, typeLocation:
		return p.u64()
	case typeFloat:
		return uint64(p.u32full())
	case typeDouble:
		return p.u64full()
	}
	if typ > typeString && typ <= typeString+numMapTypes-1 || typ == typeString {
		return uint64(p.u32())
	}
	p.bad = true
	return 0
}
