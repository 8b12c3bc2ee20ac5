package trace

import "fmt"

// Datatype is an MPI datatype by SimGrid 3.32's numeric id (the id a
// time-independent trace names after a count). Kairos keeps it so that a
// trace read from TI text is written back with the same counts and ids.
type Datatype int8

// Well-known datatype ids, as SimGrid numbers them.
const (
	// DefaultType means "the trace's default datatype" (Meta.DefaultType):
	// the event named none.
	DefaultType  Datatype = -128
	TypeNull     Datatype = -1
	TypeDouble   Datatype = 0
	TypeInt      Datatype = 1
	TypeChar     Datatype = 2
	TypeByte     Datatype = 6
	TypePacked   Datatype = 57
	MaxDatatype  Datatype = 59
	typeTableLen          = int(MaxDatatype) + 2
)

// datatypeSizes holds the size in bytes of each SimGrid datatype id + 1
// (smpi_datatype.cpp, 3.32, on x86_64).
var datatypeSizes = [typeTableLen]int8{
	0,  // -1 MPI_DATATYPE_NULL
	8,  // 0 DOUBLE
	4,  // 1 INT
	1,  // 2 CHAR
	2,  // 3 SHORT
	8,  // 4 LONG
	4,  // 5 FLOAT
	1,  // 6 BYTE
	8,  // 7 LONG_LONG
	1,  // 8 SIGNED_CHAR
	1,  // 9 UNSIGNED_CHAR
	2,  // 10 UNSIGNED_SHORT
	4,  // 11 UNSIGNED
	8,  // 12 UNSIGNED_LONG
	8,  // 13 UNSIGNED_LONG_LONG
	16, // 14 LONG_DOUBLE
	4,  // 15 WCHAR
	1,  // 16 C_BOOL
	1,  // 17 INT8_T
	2,  // 18 INT16_T
	4,  // 19 INT32_T
	8,  // 20 INT64_T
	1,  // 21 UINT8_T
	2,  // 22 UINT16_T
	4,  // 23 UINT32_T
	8,  // 24 UINT64_T
	8,  // 25 C_FLOAT_COMPLEX
	16, // 26 C_DOUBLE_COMPLEX
	32, // 27 C_LONG_DOUBLE_COMPLEX
	8,  // 28 AINT
	8,  // 29 OFFSET
	8,  // 30 FLOAT_INT
	16, // 31 LONG_INT
	16, // 32 DOUBLE_INT
	8,  // 33 SHORT_INT
	8,  // 34 2INT
	8,  // 35 2FLOAT
	16, // 36 2DOUBLE
	16, // 37 2LONG
	4,  // 38 REAL
	4,  // 39 REAL4
	8,  // 40 REAL8
	16, // 41 REAL16
	8,  // 42 COMPLEX8
	16, // 43 COMPLEX16
	16, // 44 COMPLEX32 (SimGrid declares it double_double)
	4,  // 45 INTEGER1 (SimGrid declares it int)
	2,  // 46 INTEGER2
	4,  // 47 INTEGER4
	8,  // 48 INTEGER8
	16, // 49 INTEGER16
	32, // 50 LONG_DOUBLE_INT
	1,  // 51 CXX_BOOL
	8,  // 52 CXX_FLOAT_COMPLEX
	16, // 53 CXX_DOUBLE_COMPLEX
	32, // 54 CXX_LONG_DOUBLE_COMPLEX
	0,  // 55 UB
	0,  // 56 LB
	1,  // 57 PACKED
	8,  // 58 PTR
	8,  // 59 COUNT
}

// Known reports whether d is DefaultType or an id SimGrid defines.
func (d Datatype) Known() bool {
	return d == DefaultType || d >= TypeNull && d <= MaxDatatype
}

// Size returns the size in bytes of d; def is used for DefaultType. An
// unknown id has size 0.
func (d Datatype) Size(def Datatype) int64 {
	if d == DefaultType {
		d = def
	}
	if d < TypeNull || d > MaxDatatype {
		return 0
	}
	return int64(datatypeSizes[int(d)+1])
}

// datatypeNames holds the MPI name of each SimGrid datatype id + 1.
var datatypeNames = [typeTableLen]string{
	"MPI_DATATYPE_NULL",
	"MPI_DOUBLE",
	"MPI_INT",
	"MPI_CHAR",
	"MPI_SHORT",
	"MPI_LONG",
	"MPI_FLOAT",
	"MPI_BYTE",
	"MPI_LONG_LONG",
	"MPI_SIGNED_CHAR",
	"MPI_UNSIGNED_CHAR",
	"MPI_UNSIGNED_SHORT",
	"MPI_UNSIGNED",
	"MPI_UNSIGNED_LONG",
	"MPI_UNSIGNED_LONG_LONG",
	"MPI_LONG_DOUBLE",
	"MPI_WCHAR",
	"MPI_C_BOOL",
	"MPI_INT8_T",
	"MPI_INT16_T",
	"MPI_INT32_T",
	"MPI_INT64_T",
	"MPI_UINT8_T",
	"MPI_UINT16_T",
	"MPI_UINT32_T",
	"MPI_UINT64_T",
	"MPI_C_FLOAT_COMPLEX",
	"MPI_C_DOUBLE_COMPLEX",
	"MPI_C_LONG_DOUBLE_COMPLEX",
	"MPI_AINT",
	"MPI_OFFSET",
	"MPI_FLOAT_INT",
	"MPI_LONG_INT",
	"MPI_DOUBLE_INT",
	"MPI_SHORT_INT",
	"MPI_2INT",
	"MPI_2FLOAT",
	"MPI_2DOUBLE",
	"MPI_2LONG",
	"MPI_REAL",
	"MPI_REAL4",
	"MPI_REAL8",
	"MPI_REAL16",
	"MPI_COMPLEX8",
	"MPI_COMPLEX16",
	"MPI_COMPLEX32",
	"MPI_INTEGER1",
	"MPI_INTEGER2",
	"MPI_INTEGER4",
	"MPI_INTEGER8",
	"MPI_INTEGER16",
	"MPI_LONG_DOUBLE_INT",
	"MPI_CXX_BOOL",
	"MPI_CXX_FLOAT_COMPLEX",
	"MPI_CXX_DOUBLE_COMPLEX",
	"MPI_CXX_LONG_DOUBLE_COMPLEX",
	"MPI_UB",
	"MPI_LB",
	"MPI_PACKED",
	"MPI_PTR",
	"MPI_COUNT",
}

// Name returns d's MPI name ("MPI_DOUBLE"), "the default datatype" for
// DefaultType, or "datatype N" for an id SimGrid does not define.
func (d Datatype) Name() string {
	switch {
	case d == DefaultType:
		return "the default datatype"
	case d < TypeNull || d > MaxDatatype:
		return fmt.Sprintf("datatype %d", d)
	}
	return datatypeNames[int(d)+1]
}
