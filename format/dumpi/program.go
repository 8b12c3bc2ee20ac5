package dumpi

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
)

// Function labels with special meaning in the stream or in the mapping.
const (
	labelAllFunctions = 290 // footer slot of the total count; never a record
	labelEndOfStream  = 293 // written before the header: ends the body
	numCounted        = labelAllFunctions + 1
)

// opCode is how one field is laid out on the wire.
type opCode uint8

const (
	opI32 opCode = iota
	opU16
	opU8
	opI64
	opI32s    // i32[]
	opU16s    // u16[]
	opU8s     // u8[]
	opI32ss   // i32[][]
	opStr     // str
	opStrs    // str[]
	opStrss   // str[][]
	opArgv    // str* (count from the previous field)
	opArgc    // i32 (+ a copy before 0.6.2)
	opStatus  // statuses
	opI32sOld // i32[] since a version, a single i32 before
)

var opNames = map[string]opCode{
	"i32": opI32, "u16": opU16, "u8": opU8, "i64": opI64,
	"i32[]": opI32s, "u16[]": opU16s, "u8[]": opU8s, "i32[][]": opI32ss,
	"str": opStr, "str[]": opStrs, "str[][]": opStrss, "str*": opArgv,
	"argc": opArgc, "status": opStatus,
}

// fixedSize is the wire size of the fixed-size field types.
var fixedSize = map[opCode]int{opI32: 4, opU16: 2, opU8: 1, opI64: 8}

// op is one field of a call layout. Field i's value goes to call.v[i] (or
// call.arr[i] for integer arrays).
type op struct {
	code     opCode
	rootOnly bool    // present only if v[0] == v[root]
	since    [3]byte // opI32sOld: the version that wrote an array
}

// Field names the mapping reads, so that it indexes programs()[l].idx
// instead of looking names up per record.
type fieldName uint8

const (
	fCount fieldName = iota
	fDatatype
	fDest
	fSource
	fTag
	fComm
	fRequest
	fRequests
	fIndex
	fFlag
	fIndices
	fSendtag
	fRecvtag
	fSendcount
	fSendtype
	fRecvcount
	fRecvtype
	fSendcounts
	fRecvcounts
	fSendtypes
	fRecvtypes
	fOldcomm
	fNewcomm
	fRoot
	fOp
	numFieldNames
)

var fieldNames = [numFieldNames]string{"count", "datatype", "dest", "source", "tag", "comm", "request", "requests", "index", "flag", "indices", "sendtag", "recvtag", "sendcount", "sendtype", "recvcount", "recvtype", "sendcounts", "recvcounts", "sendtypes", "recvtypes", "oldcomm", "newcomm", "root", "op"}

// program is the compiled layout of one label.
type program struct {
	name   string
	ops    []op
	fields map[string]int      // field name -> index
	idx    [numFieldNames]int8 // fieldName -> index, -1 if absent
	root   int                 // index of the root field, for rootOnly ops
	known  bool                // false for sentinels that are never written
	fixed  int                 // bytes of the leading fixed-size fields
	nfixed int                 // number of those fields
}

// maxFields bounds the fields of any layout (Comm_spawn_multiple has 11).
const maxFields = 12

// programs returns the compiled layouts, by label. They are compiled on
// first use, not at init: compiling them took 1.7 ms, which every run of
// the kairos binary paid, DUMPI traces read or not. The decoder asks for
// them several times a record, so the common case is one load, inlined
// (through sync.OnceValue's function alone, the reading took 15% longer).
func programs() *[len(layouts)]program {
	if ps := compiledPrograms.Load(); ps != nil {
		return ps
	}
	return compilePrograms()
}

var compiledPrograms atomic.Pointer[[len(layouts)]program]

var compilePrograms = sync.OnceValue(func() *[len(layouts)]program {
	ps := new([len(layouts)]program)
	for i, l := range layouts {
		p, err := compile(l.name, l.fields)
		if err != nil {
			panic(fmt.Sprintf("dumpi layout of label %d: %v", i, err))
		}
		ps[i] = p
	}
	compiledPrograms.Store(ps)
	return ps
})

// compile parses a layout string (see layouts).
func compile(name, fields string) (program, error) {
	p := program{name: name, fields: map[string]int{}, root: -1}
	if fields == "-" {
		return p, nil
	}
	p.known = true
	for i, f := range strings.Fields(fields) {
		fname, typ, ok := strings.Cut(f, ":")
		if !ok {
			return p, fmt.Errorf("field %q has no type", f)
		}
		var o op
		if t, ok := strings.CutSuffix(typ, "!root"); ok {
			typ, o.rootOnly = t, true
		}
		if t, v, ok := strings.Cut(typ, "@"); ok {
			if t != "i32[]" || len(v) != 3 {
				return p, fmt.Errorf("field %q: bad version suffix", f)
			}
			typ, o.code = t, opI32sOld
			o.since = [3]byte{v[0] - '0', v[1] - '0', v[2] - '0'}
		} else {
			c, ok := opNames[typ]
			if !ok {
				return p, fmt.Errorf("field %q: unknown type %q", f, typ)
			}
			o.code = c
		}
		if (o.code == opArgv) && i == 0 {
			return p, fmt.Errorf("field %q needs a preceding count", f)
		}
		if _, dup := p.fields[fname]; dup {
			return p, fmt.Errorf("duplicate field %q", fname)
		}
		p.fields[fname] = i
		p.ops = append(p.ops, o)
	}
	if len(p.ops) > maxFields {
		return p, fmt.Errorf("%d fields, more than %d", len(p.ops), maxFields)
	}
	for n, name := range fieldNames {
		p.idx[n] = -1
		if i, ok := p.fields[name]; ok {
			p.idx[n] = int8(i)
		}
	}
	for _, o := range p.ops {
		w, ok := fixedSize[o.code]
		if !ok || o.rootOnly {
			break
		}
		p.fixed += w
		p.nfixed++
	}
	if r, ok := p.fields["root"]; ok {
		p.root = r
	}
	for _, o := range p.ops {
		if o.rootOnly && p.root < 0 {
			return p, fmt.Errorf("root-only field without a root field")
		}
	}
	return p, nil
}

// field returns the index of field name of label, panicking if the layout
// has none: the mapping tables are checked at init.
func field(label int, name string) int {
	i, ok := programs()[label].fields[name]
	if !ok {
		panic(fmt.Sprintf("dumpi: %s has no field %q", programs()[label].name, name))
	}
	return i
}

// LabelName returns the MPI function name of a DUMPI call label, as
// dumpi2ascii prints it, or "" for a label out of range.
func LabelName(label int) string {
	if label < 0 || label >= len(layouts) {
		return ""
	}
	return layouts[label].name
}
