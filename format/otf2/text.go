package otf2

import (
	"math"
	"strconv"
	"strings"
)

// Column layout of otf2-print's event lines: "%-32s %15d %20s  fields".
const (
	nameWidth  = 32
	locWidth   = 15
	timeWidth  = 20
	undefInt64 = math.MinInt64 // OTF2_UNDEFINED_INT64
)

func pad(dst []byte, s string, w int, left bool) []byte {
	if left {
		dst = append(dst, s...)
	}
	for i := len(s); i < w; i++ {
		dst = append(dst, ' ')
	}
	if !left {
		dst = append(dst, s...)
	}
	return dst
}

// AppendText appends e as `otf2-print -A` prints it: one event line with
// the record name, location, clock-corrected timestamp and the record's
// fields with definitions resolved to names, then, if the event has an
// attribute list (Archive.KeepAttrs), the ADDITIONAL ATTRIBUTES line.
// Every event record of OTF2 3.0 prints as otf2-print 3.0 prints it;
// newer records print as UNKNOWN with location and time, as there.
func (a *Archive) AppendText(dst []byte, e *Event) []byte {
	dst = pad(dst, RecordName(e.Type), nameWidth, true)
	dst = append(dst, ' ')
	dst = pad(dst, strconv.FormatUint(e.Location, 10), locWidth, false)
	dst = append(dst, ' ')
	dst = pad(dst, strconv.FormatUint(e.Time, 10), timeWidth, false)
	if RecordName(e.Type) != "UNKNOWN" {
		dst = append(dst, "  "...)
		dst = a.appendFields(dst, e)
	}
	dst = append(dst, '\n')
	if len(e.Attrs) > 0 {
		dst = pad(dst, "", nameWidth+38, true)
		dst = append(dst, " ADDITIONAL ATTRIBUTES: "...)
		for i, at := range e.Attrs {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = append(dst, '(')
			dst = a.appendRef(dst, typeAttribute, uint64(at.ID))
			dst = append(dst, "; "...)
			dst = append(dst, typeName(at.Type)...)
			dst = append(dst, "; "...)
			dst = a.appendValue(dst, at.Type, at.Value)
			dst = append(dst, ')')
		}
		dst = append(dst, '\n')
	}
	return dst
}

const (
	typeAttribute      = 12
	typeRegion         = 14
	typeMetric         = 16
	typeGroup          = 15
	typeComm           = 17
	typeParameter      = 18
	typeRmaWin         = 19
	typeCallingContext = 21
	typeInterruptGen   = 22
	typeIoFile         = 23
	typeIoHandle       = 24
	typeIoParadigm     = 201 // not an OTF2 type: an I/O paradigm reference
	typeMember         = 200 // not an OTF2 type: a metric member reference
)

// defName returns the name of definition id of the kind an OTF2 type
// names; named is false for definitions otf2-print shows by id only
// (metrics) and ok false for undefined ones.
func (a *Archive) defName(typ uint8, id uint64) (name string, named, ok bool) {
	d := a.Defs
	str := func(s uint32) (string, bool, bool) { v, ok := d.Strings[s]; return v, true, ok }
	switch typ {
	case typeString:
		return str(uint32(id))
	case typeAttribute:
		if at, ok := d.Attributes[uint32(id)]; ok {
			return str(at.Name)
		}
	case typeLocation:
		if i, ok := d.locIndex[id]; ok {
			return str(d.Locations[i].Name)
		}
	case typeRegion:
		if r, ok := d.Regions[uint32(id)]; ok {
			return str(r.Name)
		}
	case typeComm:
		if c, ok := d.Comms[uint32(id)]; ok {
			return str(c.Name)
		}
		if c, ok := d.InterComms[uint32(id)]; ok {
			return str(c.Name)
		}
	case typeParameter:
		if p, ok := d.Parameters[uint32(id)]; ok {
			return str(p)
		}
	case typeGroup:
		if g, ok := d.Groups[uint32(id)]; ok {
			return str(g.Name)
		}
	case typeCallingContext:
		return a.callingContextName(uint32(id))
	case typeInterruptGen:
		if s, ok := d.InterruptGens[uint32(id)]; ok {
			return str(s)
		}
	case typeIoFile:
		s, ok := d.IoFiles[uint32(id)]
		return s, true, ok
	case typeIoHandle:
		if h, ok := d.IoHandles[uint32(id)]; ok {
			return a.ioHandleName(h)
		}
	case typeIoParadigm:
		if s, ok := d.IoParadigms[uint8(id)]; ok {
			return str(s)
		}
	case typeRmaWin:
		if w, ok := d.RmaWins[uint32(id)]; ok {
			return str(w.Name)
		}
	case typeMember:
		if m, ok := d.MetricMembers[uint32(id)]; ok {
			return str(m)
		}
	case typeMetric:
		_, ok := d.Metrics[uint32(id)]
		return "", false, ok
	}
	return "", true, false
}

// appendRef appends a definition reference as otf2-print names it:
// "name" <id>, the bare id, UNDEFINED or INVALID <id>.
func (a *Archive) appendRef(dst []byte, typ uint8, id uint64) []byte {
	if id == undefined64 || (typ != typeLocation && id == undefined32) {
		return append(dst, "UNDEFINED"...)
	}
	name, named, ok := a.defName(typ, id)
	switch {
	case !ok:
		dst = append(dst, "INVALID <"...)
		return append(strconv.AppendUint(dst, id, 10), '>')
	case !named:
		return strconv.AppendUint(dst, id, 10)
	}
	dst = append(dst, '"')
	dst = append(dst, name...)
	dst = append(dst, "\" <"...)
	return append(strconv.AppendUint(dst, id, 10), '>')
}

// appendValue appends an attribute value of OTF2 type typ.
func (a *Archive) appendValue(dst []byte, typ uint8, v uint64) []byte {
	switch typ {
	case typeUint8, typeUint16, typeUint32, typeUint64:
		return strconv.AppendUint(dst, v, 10)
	case typeInt8, typeInt16, typeInt32, typeInt64:
		return strconv.AppendInt(dst, int64(v), 10)
	case typeFloat:
		return strconv.AppendFloat(dst, float64(math.Float32frombits(uint32(v))), 'g', -1, 32)
	case typeDouble:
		return strconv.AppendFloat(dst, math.Float64frombits(v), 'g', -1, 64)
	}
	return a.appendRef(dst, typ, v)
}

// appendRank appends a rank of a communicator with the location it
// resolves to, as otf2-print does: 1 ("Master thread" <1>).
func (a *Archive) appendRank(dst []byte, e *Event, rank uint32) []byte {
	if rank == undefined32 {
		return append(dst, "UNDEFINED"...)
	}
	dst = strconv.AppendUint(dst, uint64(rank), 10)
	dst = append(dst, " ("...)
	if loc, ok := a.Defs.CommRankLocation(e.Comm, rank, e.Location); ok {
		dst = a.appendRef(dst, typeLocation, loc)
	} else {
		dst = append(dst, "INVALID"...)
	}
	return append(dst, ')')
}

// rawRoot names the special collective roots, "" for a rank.
func rawRoot(r uint32) string {
	switch r {
	case undefined32:
		return "NONE"
	case undefined32 - 1:
		return "SELF"
	case undefined32 - 2:
		return "THIS_GROUP"
	}
	return ""
}

func (a *Archive) appendRoot(dst []byte, e *Event) []byte {
	if r := rawRoot(e.Peer); r != "" {
		return append(dst, r...)
	}
	return a.appendRank(dst, e, e.Peer)
}

func appendLabel(dst []byte, label string, v uint64) []byte {
	dst = append(dst, label...)
	return strconv.AppendUint(dst, v, 10)
}

// appendFields appends the fields of the records Kairos decodes.
func (a *Archive) appendFields(dst []byte, e *Event) []byte {
	switch e.Type {
	case EvEnter, EvLeave:
		dst = append(dst, "Region: "...)
		return a.appendRef(dst, typeRegion, uint64(e.Region))
	case EvMpiSend, EvMpiIsend, EvMpiRecv, EvMpiIrecv:
		if e.Type == EvMpiSend || e.Type == EvMpiIsend {
			dst = append(dst, "Receiver: "...)
		} else {
			dst = append(dst, "Sender: "...)
		}
		dst = a.appendRank(dst, e, e.Peer)
		dst = append(dst, ", Communicator: "...)
		dst = a.appendRef(dst, typeComm, uint64(e.Comm))
		dst = appendLabel(dst, ", Tag: ", uint64(e.Tag))
		dst = appendLabel(dst, ", Length: ", e.Bytes)
		if e.Type == EvMpiIsend || e.Type == EvMpiIrecv {
			dst = appendLabel(dst, ", Request: ", e.Request)
		}
		return dst
	case EvMpiIsendComplete, EvMpiIrecvRequest, EvMpiRequestTest, EvMpiRequestCancelled, EvNonBlockingCollectiveRequest:
		return appendLabel(dst, "Request: ", e.Request)
	case EvMpiCollectiveEnd, EvNonBlockingCollectiveComplete:
		dst = append(dst, "Operation: "...)
		dst = append(dst, CollectiveOpName(e.Op)...)
		dst = append(dst, ", Communicator: "...)
		dst = a.appendRef(dst, typeComm, uint64(e.Comm))
		dst = append(dst, ", Root: "...)
		dst = a.appendRoot(dst, e)
		dst = appendLabel(dst, ", Sent: ", e.Bytes)
		dst = appendLabel(dst, ", Received: ", e.Received)
		if e.Type == EvNonBlockingCollectiveComplete {
			dst = appendLabel(dst, ", Request: ", e.Request)
		}
		return dst
	case EvCommCreate, EvCommDestroy:
		dst = append(dst, "Communicator: "...)
		return a.appendRef(dst, typeComm, uint64(e.Comm))
	case EvMeasurementOnOff:
		switch e.Op {
		case MeasurementOn:
			return append(dst, "Mode: ON"...)
		case MeasurementOff:
			return append(dst, "Mode: OFF"...)
		}
		return append(appendLabel(dst, "Mode: INVALID <", uint64(e.Op)), '>')
	case EvBufferFlush:
		return appendLabel(dst, "Stop Time: ", e.Value)
	case EvProgramEnd:
		dst = append(dst, "Exit status: "...)
		if int64(e.Value) == undefInt64 {
			return append(dst, "UNDEFINED"...)
		}
		return strconv.AppendInt(dst, int64(e.Value), 10)
	case EvParameterString, EvParameterInt, EvParameterUnsignedInt:
		dst = append(dst, "Parameter: "...)
		dst = a.appendRef(dst, typeParameter, uint64(e.Ref))
		dst = append(dst, ", Value: "...)
		switch e.Type {
		case EvParameterString:
			return a.appendRef(dst, typeString, e.Value)
		case EvParameterInt:
			return strconv.AppendInt(dst, int64(e.Value), 10)
		}
		return strconv.AppendUint(dst, e.Value, 10)
	case EvProgramBegin:
		return a.appendProgramBegin(dst, e)
	case EvMetric:
		return a.appendMetric(dst, e)
	case EvMpiCollectiveBegin, EvOmpJoin:
		return dst
	}
	if e.Type >= EvRmaWinCreate && e.Type <= EvRmaOpCompleteRemote {
		return a.appendRmaFields(dst, e)
	}
	if e.Type >= evIoCreateHandle && e.Type <= evIoTryLock {
		return a.appendIoFields(dst, e)
	}
	if e.Type >= EvCallingContextEnter && e.Type <= EvCallingContextSample {
		return a.appendCallingContextFields(dst, e)
	}
	return a.appendThreadFields(dst, e)
}

// appendRmaFields appends the fields of the RMA records.
func (a *Archive) appendRmaFields(dst []byte, e *Event) []byte {
	win := func(dst []byte) []byte { return a.appendRef(append(dst, "Window: "...), typeRmaWin, uint64(e.Ref)) }
	remote := func(dst []byte) []byte { return a.appendWinRank(append(dst, ", Remote: "...), e, e.Peer) }
	switch e.Type {
	case EvRmaCollectiveBegin:
		return dst
	case EvRmaWinCreate, EvRmaWinDestroy, EvRmaWaitChange:
		return win(dst)
	case EvRmaCollectiveEnd:
		dst = append(append(dst, "Operation: "...), CollectiveOpName(e.Op)...)
		dst = win(append(dst, ", "...))
		dst = append(append(dst, ", Level of Synchronicity: "...), flagsName(rmaSyncLevels, e.Value2)...)
		dst = append(dst, ", Root: "...)
		if r := rawRoot(e.Peer); r != "" {
			dst = append(dst, r...)
		} else {
			dst = a.appendWinRank(dst, e, e.Peer)
		}
		dst = appendLabel(dst, ", Sent: ", e.Bytes)
		return appendLabel(dst, ", Received: ", e.Received)
	case EvRmaGroupSync:
		dst = append(append(dst, "Level of Synchronicity: "...), flagsName(rmaSyncLevels, e.Value2)...)
		dst = win(append(dst, ", "...))
		return a.appendRef(append(dst, ", Group: "...), typeGroup, e.Value)
	case EvRmaRequestLock, EvRmaAcquireLock, EvRmaTryLock, EvRmaReleaseLock:
		dst = appendLabel(remote(win(dst)), ", Lock: ", e.Value)
		if e.Type == EvRmaReleaseLock {
			return dst
		}
		return append(append(dst, ", Type: "...), enumName(lockTypes, uint64(e.Op))...)
	case EvRmaSync:
		return append(append(remote(win(dst)), ", Sync Type: "...), enumName(rmaSyncTypes, uint64(e.Op))...)
	case EvRmaPut, EvRmaGet:
		dst = appendLabel(remote(win(dst)), ", Bytes: ", e.Bytes)
		return appendLabel(dst, ", Matching: ", e.Value)
	case EvRmaAtomic:
		dst = append(append(remote(win(dst)), ", Type: "...), enumName(rmaAtomicTypes, uint64(e.Op))...)
		dst = appendLabel(dst, ", Sent: ", e.Bytes)
		dst = appendLabel(dst, ", Received: ", e.Received)
		return appendLabel(dst, ", Matching: ", e.Value)
	}
	return appendLabel(win(dst), ", Matching: ", e.Value)
}

// appendWinRank appends a rank of an RMA window's communicator.
func (a *Archive) appendWinRank(dst []byte, e *Event, rank uint32) []byte {
	w, ok := a.Defs.RmaWins[e.Ref]
	if !ok || rank == undefined32 {
		if rank == undefined32 {
			return append(dst, "UNDEFINED"...)
		}
		return append(strconv.AppendUint(dst, uint64(rank), 10), " (INVALID)"...)
	}
	c := *e
	c.Comm = w.Parent
	return a.appendRank(dst, &c, rank)
}

// appendThreadFields appends the fields of the OpenMP and thread records.
func (a *Archive) appendThreadFields(dst []byte, e *Event) []byte {
	switch e.Type {
	case EvOmpFork:
		return appendLabel(dst, "# Requested Threads: ", e.Value)
	case EvOmpAcquireLock, EvOmpReleaseLock:
		dst = appendLabel(dst, "Lock: ", e.Value)
		return appendLabel(dst, ", Acquisition Order: ", uint64(e.Value2))
	case EvOmpTaskCreate, EvOmpTaskSwitch, EvOmpTaskComplete:
		return appendLabel(dst, "Task: ", e.Value)
	case EvThreadFork:
		dst = a.appendParadigm(append(dst, "Model: "...), e.Op)
		return appendLabel(dst, ", # Requested Threads: ", e.Value)
	case EvThreadJoin:
		return a.appendParadigm(append(dst, "Model: "...), e.Op)
	case EvThreadTeamBegin, EvThreadTeamEnd:
		return a.appendRef(append(dst, "Thread Team: "...), typeComm, uint64(e.Comm))
	case EvThreadAcquireLock, EvThreadReleaseLock:
		dst = a.appendParadigm(append(dst, "Model: "...), e.Op)
		dst = appendLabel(dst, ", Lock: ", e.Value)
		return appendLabel(dst, ", Acquisition Order: ", uint64(e.Value2))
	case EvThreadTaskCreate, EvThreadTaskSwitch, EvThreadTaskComplete:
		dst = a.appendRef(append(dst, "Thread Team: "...), typeComm, uint64(e.Comm))
		dst = a.appendRank(append(dst, ", Creating Thread: "...), e, e.Peer)
		return appendLabel(dst, ", Generation Number: ", uint64(e.Value2))
	case EvThreadCreate, EvThreadBegin, EvThreadWait, EvThreadEnd:
		dst = a.appendRef(append(dst, "Thread Contingent: "...), typeComm, uint64(e.Comm))
		return appendLabel(dst, ", Sequence Count: ", e.Value)
	}
	return append(dst, "..."...)
}

// appendParadigm appends a paradigm as otf2-print names it: by its
// Paradigm definition if there is one, else by its enum name.
func (a *Archive) appendParadigm(dst []byte, p uint8) []byte {
	if s, ok := a.Defs.Paradigms[p]; ok {
		if name, ok := a.Defs.Strings[s]; ok {
			dst = append(append(append(dst, '"'), name...), "\" <"...)
			return append(strconv.AppendUint(dst, uint64(p), 10), '>')
		}
	}
	if int(p) < len(paradigmNames) {
		return append(dst, paradigmNames[p]...)
	}
	return append(strconv.AppendUint(append(dst, "INVALID <"...), uint64(p), 10), '>')
}

func plural(dst []byte, n uint64, word string) []byte {
	dst = strconv.AppendUint(dst, n, 10)
	dst = append(dst, ' ')
	dst = append(dst, word...)
	if n != 1 {
		dst = append(dst, 's')
	}
	return dst
}

func (a *Archive) appendProgramBegin(dst []byte, e *Event) []byte {
	p := e.payload
	p.u32() // name, already in e.Ref
	n := p.u32()
	dst = append(dst, "Name: "...)
	dst = a.appendRef(dst, typeString, uint64(e.Ref))
	dst = append(dst, ", "...)
	dst = plural(dst, uint64(n), "Argument")
	sep := ": "
	for i := uint32(0); i < n && !p.failed(); i++ {
		dst = append(dst, sep...)
		dst = a.appendRef(dst, typeString, uint64(e.mapped(MapString, p.u32())))
		sep = ", "
	}
	return dst
}

func (a *Archive) appendMetric(dst []byte, e *Event) []byte {
	p := e.payload
	p.u32() // metric, already in e.Ref
	n := p.u8()
	dst = append(dst, "Metric: "...)
	dst = a.appendRef(dst, typeMetric, uint64(e.Ref))
	dst = append(dst, ", "...)
	dst = plural(dst, uint64(n), "Value")
	members := a.Defs.Metrics[e.Ref]
	sep := ": "
	for i := 0; i < int(n) && !p.failed(); i++ {
		typ := p.u8()
		v := p.u64()
		dst = append(dst, sep...)
		dst = append(dst, '(')
		if i < len(members) {
			dst = a.appendRef(dst, typeMember, uint64(members[i]))
		} else {
			dst = append(dst, "INVALID"...)
		}
		switch typ {
		case typeInt64:
			dst = strconv.AppendInt(append(dst, "; INT64; "...), int64(v), 10)
		case typeUint64:
			dst = strconv.AppendUint(append(dst, "; UINT64; "...), v, 10)
		case typeDouble:
			dst = strconv.AppendFloat(append(dst, "; DOUBLE; "...), math.Float64frombits(v), 'g', 6, 64)
		default:
			dst = append(dst, "; INVALID <"...)
			dst = append(strconv.AppendUint(dst, uint64(typ), 10), ">; "...)
			dst = strconv.AppendUint(dst, v, 16)
		}
		dst = append(dst, ')')
		sep = ", "
	}
	return dst
}

// I/O record ids.
const (
	evIoCreateHandle      = 69
	evIoDestroyHandle     = 70
	evIoDuplicateHandle   = 71
	evIoSeek              = 72
	evIoChangeStatusFlags = 73
	evIoDeleteFile        = 74
	evIoOperationBegin    = 75
	evIoOperationComplete = 78
	evIoAcquireLock       = 80
	evIoTryLock           = 82
)

// appendIoFields appends the fields of the I/O records, decoded from the
// record's payload.
func (a *Archive) appendIoFields(dst []byte, e *Event) []byte {
	p := e.payload
	handle := func(dst []byte, label string) []byte {
		return a.appendRef(append(dst, label...), typeIoHandle, uint64(e.mapped(MapIoHandle, p.u32())))
	}
	flags := func(dst []byte, label string, names []string) []byte {
		return append(append(dst, label...), flagsName(names, p.u32())...)
	}
	switch e.Type {
	case evIoCreateHandle:
		dst = handle(dst, "Handle: ")
		dst = append(append(dst, ", Access Mode: "...), enumName(ioAccessModes, uint64(p.u8()))...)
		dst = flags(dst, ", Creation Flags: ", ioCreationFlags)
		return flags(dst, ", Status Flags: ", ioStatusFlags)
	case evIoDestroyHandle:
		return handle(dst, "Handle: ")
	case evIoDuplicateHandle:
		dst = handle(handle(dst, "Old Handle: "), ", New Handle: ")
		return flags(dst, ", Status Flags: ", ioStatusFlags)
	case evIoSeek:
		dst = handle(dst, "Handle: ")
		dst = strconv.AppendInt(append(dst, ", Offset Request: "...), int64(p.u64()), 10)
		dst = append(append(dst, ", Whence: "...), enumName(ioSeekOptions, uint64(p.u8()))...)
		return appendLabel(dst, ", Offset Result: ", p.u64())
	case evIoChangeStatusFlags:
		return flags(handle(dst, "Handle: "), ", Status Flags: ", ioStatusFlags)
	case evIoDeleteFile:
		dst = a.appendRef(append(dst, "I/O Paradigm: "...), typeIoParadigm, uint64(p.u8()))
		return a.appendRef(append(dst, ", File: "...), typeIoFile, uint64(e.mapped(MapIoFile, p.u32())))
	case evIoOperationBegin:
		dst = handle(dst, "Handle: ")
		dst = append(append(dst, ", Mode: "...), enumName(ioOperationModes, uint64(p.u8()))...)
		dst = flags(dst, ", Operation Flags: ", ioOperationFlags)
		dst = appendLabel(dst, ", Bytes Request: ", p.u64())
		return appendLabel(dst, ", Matching Id: ", p.u64())
	case evIoOperationComplete:
		dst = appendLabel(handle(dst, "Handle: "), ", Bytes Result: ", p.u64())
		return appendLabel(dst, ", Matching Id: ", p.u64())
	}
	dst = handle(dst, "Handle: ")
	if e.Type >= evIoAcquireLock {
		return append(append(dst, ", Type: "...), enumName(lockTypes, uint64(p.u8()))...)
	}
	return appendLabel(dst, ", Matching Id: ", p.u64())
}

// ioHandleName names an I/O handle as otf2-print does: its name, or, if
// that is empty and it is open on a file, "[paradigm]" and the file's
// name ("[POSIX I/O]file:///tmp/a.dat": Score-P names its handles so).
func (a *Archive) ioHandleName(h IoHandle) (string, bool, bool) {
	d := a.Defs
	name, ok := d.Strings[h.Name]
	if name != "" || !ok {
		return name, true, ok
	}
	file, ok := d.IoFiles[h.File]
	if !ok {
		return name, true, true
	}
	return "[" + d.Strings[d.IoParadigms[h.Paradigm]] + "]" + file, true, true
}

// callingContextName names a calling context as otf2-print does: its
// region's name, then "@file:line" (file without its directories) if it
// has a source code location.
func (a *Archive) callingContextName(id uint32) (string, bool, bool) {
	d := a.Defs
	cc, ok := d.CallingCtxs[id]
	if !ok {
		return "", true, false
	}
	name := "UNDEFINED"
	if r, ok := d.Regions[cc.Region]; ok {
		name = d.Strings[r.Name]
	}
	if scl, ok := d.SourceLocs[cc.SourceLoc]; ok {
		if file, ok := d.Strings[scl[0]]; ok {
			loc := file + ":" + strconv.Itoa(int(int32(scl[1])))
			if i := strings.LastIndexByte(loc, '/'); i >= 0 {
				loc = loc[i+1:]
			}
			name += "@" + loc
		}
	}
	return name, true, true
}

// appendCallingContextFields appends the fields of the calling-context
// records, decoded from the record's payload.
func (a *Archive) appendCallingContextFields(dst []byte, e *Event) []byte {
	p := e.payload
	dst = a.appendRef(append(dst, "Calling Context: "...), typeCallingContext, uint64(e.mapped(MapCallingContext, p.u32())))
	if e.Type == EvCallingContextLeave {
		return dst
	}
	dst = append(dst, ", Unwind Distance: "...)
	if u := p.u32(); u == undefined32 {
		dst = append(dst, "UNDEFINED"...)
	} else {
		dst = strconv.AppendUint(dst, uint64(u), 10)
	}
	if e.Type == EvCallingContextSample {
		dst = append(dst, ", Interrupt Generator: "...)
		dst = a.appendRef(dst, typeInterruptGen, uint64(e.mapped(MapInterruptGenerator, p.u32())))
	}
	return dst
}
