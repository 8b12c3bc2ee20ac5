package otf2

import (
	"math"
	"strconv"
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
// The fields are otf2-print's for the records Kairos decodes (Enter,
// Leave, MPI, Metric, Parameter*, Program*, MeasurementOnOff,
// BufferFlush, Omp*, Thread*, Comm*, NonBlockingCollective*); the others
// (RMA, I/O, calling contexts) print "..." as their fields.
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
	typeAttribute = 12
	typeRegion    = 14
	typeMetric    = 16
	typeComm      = 17
	typeParameter = 18
	typeMember    = 200 // not an OTF2 type: a metric member reference
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
	case typeParameter:
		if p, ok := d.Parameters[uint32(id)]; ok {
			return str(p)
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

func (a *Archive) appendRoot(dst []byte, e *Event) []byte {
	switch e.Peer {
	case undefined32:
		return append(dst, "NONE"...)
	case undefined32 - 1:
		return append(dst, "SELF"...)
	case undefined32 - 2:
		return append(dst, "THIS_GROUP"...)
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
		case 1:
			return append(dst, "Mode: ON"...)
		case 2:
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
	return a.appendThreadFields(dst, e)
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
