package dumpi

// Derived datatypes. A DUMPI file's size table has one size per datatype
// id, but a program that frees a type and creates another reuses its id
// (BLACS and ScaLAPACK create and free types around every call: Quantum
// ESPRESSO's broadcasts of 96 and 144 bytes had one size). The reader
// follows the constructors the rank calls, so that an id has the size of
// the type it names at each call; a constructor it does not follow
// (MPI_Type_create_darray) leaves the table's size.

// Labels of the datatype constructors followed (sst-dumpi funclabels.h).
const (
	lTypeContiguous, lTypeVector, lTypeHvector, lTypeIndexed = 35, 36, 37, 38
	lTypeHindexed, lTypeStruct, lTypeDup                     = 39, 40, 178
	lTypeCreateHindexed, lTypeCreateHvector                  = 218, 219
	lTypeCreateIndexedBlock, lTypeCreateResized              = 220, 221
	lTypeCreateStruct, lTypeCreateSubarray                   = 222, 223
)

// maxTypeSize bounds a followed type's size: a larger product of a
// file's counts is left to the size table (a damaged file must not
// overflow).
const maxTypeSize = 1 << 40

// typeSize returns the size in bytes of DUMPI datatype dt as the rank
// last made it, else as the file's table says.
func (r *Reader) typeSize(dt int64) int64 {
	if s, ok := r.types[dt]; ok {
		return s
	}
	return r.d.info.typeSize(dt)
}

// newType records the size of the datatype a constructor call c makes;
// false if c is no constructor the reader follows.
func (r *Reader) newType(c *call) bool {
	get := func(name string) int64 { return c.v[field(c.label, name)] }
	arr := func(name string) []int32 { return c.arr[field(c.label, name)] }
	var size int64
	switch c.label {
	case lTypeContiguous:
		size = mul(get("count"), r.typeSize(get("oldtype")))
	case lTypeVector, lTypeHvector, lTypeCreateHvector:
		size = mul(mul(get("count"), get("blocklength")), r.typeSize(get("oldtype")))
	case lTypeCreateIndexedBlock:
		size = mul(mul(get("count"), get("blocklength")), r.typeSize(get("oldtype")))
	case lTypeIndexed, lTypeHindexed:
		size = mul(sum(arr("lengths")), r.typeSize(get("oldtype")))
	case lTypeCreateHindexed:
		size = mul(sum(arr("blocklengths")), r.typeSize(get("oldtype")))
	case lTypeStruct, lTypeCreateStruct:
		name := "lengths"
		if c.label == lTypeCreateStruct {
			name = "blocklengths"
		}
		lengths, types := arr(name), arr("oldtypes")
		for i := range min(len(lengths), len(types)) {
			size += mul(int64(lengths[i]), r.typeSize(int64(types[i])))
			size = min(size, maxTypeSize+1)
		}
	case lTypeDup, lTypeCreateResized:
		size = r.typeSize(get("oldtype"))
	case lTypeCreateSubarray:
		size = r.typeSize(get("oldtype"))
		for _, s := range arr("subsizes") {
			size = mul(size, int64(s))
		}
	default:
		return false
	}
	if size < 0 || size > maxTypeSize {
		return true
	}
	if r.types == nil {
		r.types = map[int64]int64{}
	}
	r.types[get("newtype")] = size
	return true
}

// mul is a*b, or maxTypeSize+1 where it would exceed it; -1 if either
// is negative.
func mul(a, b int64) int64 {
	if a < 0 || b < 0 {
		return -1
	}
	if b != 0 && a > maxTypeSize/b {
		return maxTypeSize + 1
	}
	return a * b
}

// sum adds the lengths, -1 if one is negative.
func sum(v []int32) int64 {
	var s int64
	for _, x := range v {
		if x < 0 {
			return -1
		}
		s = min(s+int64(x), maxTypeSize+1)
	}
	return s
}
