package otf2

import "strconv"

// recordNames are the event record names otf2-print prints, by record id.
var recordNames = [...]string{
	10: "BUFFER_FLUSH",
	11: "MEASUREMENT_ON_OFF",
	12: "ENTER",
	13: "LEAVE",
	14: "MPI_SEND",
	15: "MPI_ISEND",
	16: "MPI_ISEND_COMPLETE",
	17: "MPI_IRECV_REQUEST",
	18: "MPI_RECV",
	19: "MPI_IRECV",
	20: "MPI_REQUEST_TEST",
	21: "MPI_REQUEST_CANCELLED",
	22: "MPI_COLLECTIVE_BEGIN",
	23: "MPI_COLLECTIVE_END",
	24: "OMP_FORK",
	25: "OMP_JOIN",
	26: "OMP_ACQUIRE_LOCK",
	27: "OMP_RELEASE_LOCK",
	28: "OMP_TASK_CREATE",
	29: "OMP_TASK_SWITCH",
	30: "OMP_TASK_COMPLETE",
	31: "METRIC",
	32: "PARAMETER_STRING",
	33: "PARAMETER_INT64",
	34: "PARAMETER_UINT64",
	35: "RMA_WIN_CREATE",
	36: "RMA_WIN_DESTROY",
	37: "RMA_COLLECTIVE_BEGIN",
	38: "RMA_COLLECTIVE_END",
	39: "RMA_GROUP_SYNC",
	40: "RMA_REQUEST_LOCK",
	41: "RMA_ACQUIRE_LOCK",
	42: "RMA_TRY_LOCK",
	43: "RMA_RELEASE_LOCK",
	44: "RMA_SYNC",
	45: "RMA_WAIT_CHANGE",
	46: "RMA_PUT",
	47: "RMA_GET",
	48: "RMA_ATOMIC",
	49: "RMA_OP_COMPLETE_BLOCKING",
	50: "RMA_OP_COMPLETE_NON_BLOCKING",
	51: "RMA_OP_TEST",
	52: "RMA_OP_COMPLETE_REMOTE",
	53: "THREAD_FORK",
	54: "THREAD_JOIN",
	55: "THREAD_TEAM_BEGIN",
	56: "THREAD_TEAM_END",
	57: "THREAD_ACQUIRE_LOCK",
	58: "THREAD_RELEASE_LOCK",
	59: "THREAD_TASK_CREATE",
	60: "THREAD_TASK_SWITCH",
	61: "THREAD_TASK_COMPLETE",
	62: "THREAD_CREATE",
	63: "THREAD_BEGIN",
	64: "THREAD_WAIT",
	65: "THREAD_END",
	66: "CALLING_CONTEXT_ENTER",
	67: "CALLING_CONTEXT_LEAVE",
	68: "CALLING_CONTEXT_SAMPLE",
	69: "IO_CREATE_HANDLE",
	70: "IO_DESTROY_HANDLE",
	71: "IO_DUPLICATE_HANDLE",
	72: "IO_SEEK",
	73: "IO_CHANGE_FLAGS",
	74: "IO_DELETE_FILE",
	75: "IO_OPERATION_BEGIN",
	76: "IO_OPERATION_TEST",
	77: "IO_OPERATION_ISSUED",
	78: "IO_OPERATION_COMPLETE",
	79: "IO_OPERATION_CANCELLED",
	80: "IO_ACQUIRE_LOCK",
	81: "IO_RELEASE_LOCK",
	82: "IO_TRY_LOCK",
	83: "PROGRAM_BEGIN",
	84: "PROGRAM_END",
	85: "NON_BLOCKING_COLLECTIVE_REQUEST",
	86: "NON_BLOCKING_COLLECTIVE_COMPLETE",
	87: "COMM_CREATE",
	88: "COMM_DESTROY",
}

// RecordName returns the name otf2-print gives event record type t
// ("UNKNOWN" for records newer than OTF2 3.0).
func RecordName(t uint8) string {
	if int(t) < len(recordNames) && recordNames[t] != "" {
		return recordNames[t]
	}
	return "UNKNOWN"
}

// collectiveOps are the CollectiveOp enum names.
var collectiveOps = [...]string{"BARRIER", "BCAST", "GATHER", "GATHERV", "SCATTER", "SCATTERV",
	"ALLGATHER", "ALLGATHERV", "ALLTOALL", "ALLTOALLV", "ALLTOALLW", "ALLREDUCE", "REDUCE",
	"REDUCE_SCATTER", "SCAN", "EXSCAN", "REDUCE_SCATTER_BLOCK", "CREATE_HANDLE", "DESTROY_HANDLE",
	"ALLOCATE", "DEALLOCATE", "CREATE_HANDLE_AND_ALLOCATE", "DESTROY_HANDLE_AND_DEALLOCATE"}

// CollectiveOpName returns the name of a CollectiveOp value.
func CollectiveOpName(op uint8) string {
	if int(op) < len(collectiveOps) {
		return collectiveOps[op]
	}
	return "INVALID <" + strconv.Itoa(int(op)) + ">"
}

// typeNames are the OTF2_Type enum names.
var typeNames = [...]string{"NONE", "UINT8", "UINT16", "UINT32", "UINT64", "INT8", "INT16", "INT32",
	"INT64", "FLOAT", "DOUBLE", "STRING", "ATTRIBUTE", "LOCATION", "REGION", "GROUP", "METRIC", "COMM",
	"PARAMETER", "RMA_WIN", "SOURCE_CODE_LOCATION", "CALLING_CONTEXT", "INTERRUPT_GENERATOR",
	"IO_FILE", "IO_HANDLE", "LOCATION_GROUP"}

func typeName(t uint8) string {
	if int(t) < len(typeNames) {
		return typeNames[t]
	}
	return "INVALID <" + strconv.Itoa(int(t)) + ">"
}

// paradigmNames are the Paradigm enum names.
var paradigmNames = [...]string{"UNKNOWN", "USER", "COMPILER", "OPENMP", "MPI", "CUDA",
	"MEASUREMENT_SYSTEM", "PTHREAD", "HMPP", "OMPSS", "HARDWARE", "GASPI", "UPC", "SHMEM",
	"WINTHREAD", "QTTHREAD", "ACETHREAD", "TBBTHREAD", "OPENACC", "OPENCL", "MTAPI", "SAMPLING",
	"NONE", "HIP", "KOKKOS"}

// Enum names of the RMA records.
var (
	lockTypes      = []string{"EXCLUSIVE", "SHARED"}
	rmaSyncTypes   = []string{"MEMORY", "NOTIFY_IN", "NOTIFY_OUT"}
	rmaAtomicTypes = []string{"ACCUMULATE", "INCREMENT", "TEST_AND_SET", "COMPARE_AND_SWAP", "SWAP", "FETCH_AND_ADD", "FETCH_AND_INCREMENT", "FETCH_AND_ACCUMULATE"}
	rmaSyncLevels  = []string{"PROCESS", "MEMORY"} // flags, bit i
)

// Enum and flag names of the I/O records.
var (
	ioAccessModes    = []string{"READ_ONLY", "WRITE_ONLY", "READ_WRITE", "EXECUTE_ONLY", "SEARCH_ONLY"}
	ioSeekOptions    = []string{"FROM_START", "FROM_CURRENT", "FROM_END", "DATA", "HOLE"}
	ioOperationModes = []string{"READ", "WRITE", "FLUSH"}
	ioCreationFlags  = []string{"CREATE", "TRUNCATE", "DIRECTORY", "EXCLUSIVE", "NO_CONTROLLING_TERMINAL",
		"NO_FOLLOW", "PATH", "TEMPORARY_FILE", "LARGEFILE", "NO_SEEK", "UNIQUE"}
	ioStatusFlags = []string{"CLOSE_ON_EXEC", "APPEND", "NON_BLOCKING", "ASYNC", "SYNC", "DATA_SYNC",
		"AVOID_CACHING", "NO_ACCESS_TIME", "DELETE_ON_CLOSE"}
	ioOperationFlags = []string{"NON_BLOCKING", "COLLECTIVE"}
)

// enumName returns names[v], or INVALID <v>.
func enumName(names []string, v uint64) string {
	if v < uint64(len(names)) {
		return names[v]
	}
	return "INVALID <" + strconv.FormatUint(v, 10) + ">"
}

// flagsName formats a flag set as otf2-print does: NONE, or {A, B} with
// unknown bits as INVALID <0x..>.
func flagsName(names []string, v uint32) string {
	if v == 0 {
		return "NONE"
	}
	s, sep := "{", ""
	for i, n := range names {
		if v&(1<<i) != 0 {
			s += sep + n
			sep = ", "
			v &^= 1 << i
		}
	}
	if v != 0 {
		s += sep + "INVALID <0x" + strconv.FormatUint(uint64(v), 16) + ">"
	}
	return s + "}"
}
