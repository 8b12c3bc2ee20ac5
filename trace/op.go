package trace

import "strconv"

// Op is the reduction operation of a reduction collective (reduce,
// allreduce, reduce_scatter, scan, exscan): MPI's predefined operations,
// numbered as DUMPI numbers them, and user-defined ones. Formats that do
// not record it (SimGrid's TI text, OTF2) leave it OpNone.
type Op uint8

// The operations.
const (
	OpNone Op = iota
	OpMax
	OpMin
	OpSum
	OpProd
	OpLand
	OpBand
	OpLor
	OpBor
	OpLxor
	OpBxor
	OpMinloc
	OpMaxloc
	OpReplace
	OpUser // any user-defined operation
	numOps
)

var opNames = [numOps]string{"", "max", "min", "sum", "prod", "land", "band", "lor", "bor", "lxor", "bxor", "minloc", "maxloc", "replace", "user"}

// String returns the operation's MPI name without MPI_, lower case.
func (o Op) String() string {
	if o < numOps {
		return opNames[o]
	}
	return "op(" + strconv.Itoa(int(o)) + ")"
}

// Valid reports whether o is OpNone or a defined operation.
func (o Op) Valid() bool { return o < numOps }
