package trace

import (
	"strconv"
	"strings"
)

// Kind is what an event does. The names are SimGrid 3.32's time-independent
// action names where SimGrid has the action, so that a kind prints as the
// word a SimGrid user already knows.
type Kind uint8

// Event kinds. Every action SimGrid 3.32's replay accepts has a kind; the
// kinds after CommDup are what trace readers other than TI need.
const (
	KindInvalid Kind = iota
	Init
	Finalize
	Compute // local computation of Event.Compute flops
	Sleep   // idle time of Event.Compute seconds
	Send
	Isend
	Recv
	Irecv
	Test
	Wait
	Waitall
	SendRecv
	Barrier
	Bcast
	Reduce
	Allreduce
	Alltoall
	Alltoallv
	Gather
	Gatherv
	Scatter
	Scatterv
	Allgather
	Allgatherv
	ReduceScatter
	Scan
	Exscan
	CommSize
	CommSplit
	CommDup
	CommCreate // a communicator created from a group (DUMPI, OTF2)
	CommFree
	Location // SimGrid's "location file line": sets the source position, takes no time
	Probe    // blocking probe for a message from Partner with Tag
	Iprobe   // non-blocking probe; local
	Local    // any other MPI call that does not communicate (MPI_Comm_rank, MPI_Wtime...); Region names it
	// Deferred is an MPI call whose communication the trace has at another
	// event (OTF2): a probe, whose message is its receive's; the call of a
	// non-blocking collective, which is read as the blocking one where it
	// completes; a wait or test completing one placed earlier; a call
	// that creates a communicator, which a replay does not replay (nor
	// does SimGrid's). A replay spends no time in it, and its duration is
	// not computation.
	Deferred

	// One-sided communication (MPI-3 RMA). Handle is the window, Comm the
	// window's communicator, Partner the target (world rank).
	WinCreate        // collective creation of a window (any flavour); SendBytes: the local window's size, if known
	WinFree          // collective release of a window
	Put              // SendBytes from origin to Partner; Request != 0 for MPI_Rput
	Get              // RecvBytes from Partner to origin; Request for MPI_Rget
	Accumulate       // SendBytes combined into Partner's window; Request for MPI_Raccumulate
	GetAccumulate    // MPI_Get_accumulate, MPI_Fetch_and_op: SendBytes combined, RecvBytes fetched
	CompareAndSwap   // MPI_Compare_and_swap: RecvBytes fetched, SendBytes written if equal
	WinFence         // collective synchronisation closing and opening fence epochs
	WinLock          // passive-target access epoch to Partner; Tag: LockShared or LockExclusive
	WinUnlock        // ends the epoch to Partner, completing its operations
	WinLockAll       // shared access epoch to every member
	WinUnlockAll     // ends it, completing every operation
	WinFlush         // completes the operations to Partner, at origin and target
	WinFlushAll      // completes every operation, at origin and targets
	WinFlushLocal    // completes the operations to Partner at the origin
	WinFlushLocalAll // completes every operation at the origin
	WinPost          // starts an exposure epoch to the group NewComm (a Meta.Comms id)
	WinStart         // starts an access epoch to the group NewComm
	WinComplete      // ends the access epoch, completing its operations
	WinWait          // ends the exposure epoch, once every origin completed

	// MPI-IO. Handle is the file, Comm the communicator it was opened on;
	// Compute holds the call's duration in seconds once a timed trace is
	// untimed (I/O is replayed as it was measured).
	FileOpen  // collective open of the file
	FileClose // collective close
	FileRead  // RecvBytes read; Tag: IO flags (IOCollective, IONonBlocking); Request of a non-blocking read
	FileWrite // SendBytes written; Tag and Request as FileRead
	FileWait  // completion of non-blocking I/O (MPI_Wait on an I/O request, a split collective's end)
	File      // any other MPI-IO call: set_view, seek, sync, set_size, preallocate, delete...

	numKinds
)

// Lock types of a WinLock (Event.Tag).
const (
	LockShared    int32 = 1
	LockExclusive int32 = 2
)

// Flags of a FileRead or FileWrite (Event.Tag).
const (
	IOCollective  int32 = 1 // a collective call (MPI_File_read_all, _at_all, _ordered, split collectives)
	IONonBlocking int32 = 2 // the call starts the transfer; a FileWait completes it
)

var kindNames = [numKinds]string{
	KindInvalid:   "invalid",
	Init:          "init",
	Finalize:      "finalize",
	Compute:       "compute",
	Sleep:         "sleep",
	Send:          "send",
	Isend:         "isend",
	Recv:          "recv",
	Irecv:         "irecv",
	Test:          "test",
	Wait:          "wait",
	Waitall:       "waitall",
	SendRecv:      "sendRecv",
	Barrier:       "barrier",
	Bcast:         "bcast",
	Reduce:        "reduce",
	Allreduce:     "allreduce",
	Alltoall:      "alltoall",
	Alltoallv:     "alltoallv",
	Gather:        "gather",
	Gatherv:       "gatherv",
	Scatter:       "scatter",
	Scatterv:      "scatterv",
	Allgather:     "allgather",
	Allgatherv:    "allgatherv",
	ReduceScatter: "reducescatter",
	Scan:          "scan",
	Exscan:        "exscan",
	CommSize:      "comm_size",
	CommSplit:     "comm_split",
	CommDup:       "comm_dup",
	CommCreate:    "comm_create",
	CommFree:      "comm_free",
	Location:      "location",
	Probe:         "probe",
	Iprobe:        "iprobe",
	Local:         "local",
	Deferred:      "deferred",

	WinCreate:        "win_create",
	WinFree:          "win_free",
	Put:              "put",
	Get:              "get",
	Accumulate:       "accumulate",
	GetAccumulate:    "get_accumulate",
	CompareAndSwap:   "compare_and_swap",
	WinFence:         "win_fence",
	WinLock:          "win_lock",
	WinUnlock:        "win_unlock",
	WinLockAll:       "win_lock_all",
	WinUnlockAll:     "win_unlock_all",
	WinFlush:         "win_flush",
	WinFlushAll:      "win_flush_all",
	WinFlushLocal:    "win_flush_local",
	WinFlushLocalAll: "win_flush_local_all",
	WinPost:          "win_post",
	WinStart:         "win_start",
	WinComplete:      "win_complete",
	WinWait:          "win_wait",

	FileOpen:  "file_open",
	FileClose: "file_close",
	FileRead:  "file_read",
	FileWrite: "file_write",
	FileWait:  "file_wait",
	File:      "file",
}

// NumKinds is the number of kinds, KindInvalid included; kinds are dense
// from 0 so that per-kind counters can be arrays.
const NumKinds = int(numKinds)

// String returns the SimGrid action name of k.
func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// KindByName returns the kind whose String is name.
func KindByName(name string) (Kind, bool) {
	for k, n := range kindNames {
		if n == name && Kind(k) != KindInvalid {
			return Kind(k), true
		}
	}
	return KindInvalid, false
}

// Valid reports whether k is a defined kind other than KindInvalid.
func (k Kind) Valid() bool { return k > KindInvalid && k < numKinds }

// IsPointToPoint reports whether k sends or receives a message to or from
// one partner (blocking or not, SendRecv included).
func (k Kind) IsPointToPoint() bool {
	switch k {
	case Send, Isend, Recv, Irecv, SendRecv:
		return true
	}
	return false
}

// IsSend reports whether k posts an outgoing point-to-point message.
func (k Kind) IsSend() bool { return k == Send || k == Isend }

// IsRecv reports whether k posts an incoming point-to-point message.
func (k Kind) IsRecv() bool { return k == Recv || k == Irecv }

// IsNonBlocking reports whether k starts a request that a Wait, Waitall or
// Test completes later.
func (k Kind) IsNonBlocking() bool { return k == Isend || k == Irecv }

// IsCompletion reports whether k completes requests.
func (k Kind) IsCompletion() bool { return k == Wait || k == Waitall || k == Test }

// IsCollective reports whether every member of the event's communicator
// must take part in k, in the same order.
func (k Kind) IsCollective() bool {
	return k >= Barrier && k <= Exscan || k == CommSplit || k == CommDup || k == CommCreate
}

// IsRooted reports whether the collective k has a root (Event.Partner).
func (k Kind) IsRooted() bool {
	switch k {
	case Bcast, Reduce, Gather, Gatherv, Scatter, Scatterv:
		return true
	}
	return false
}

// HasReduction reports whether the collective k combines data, so that its
// Event.Compute flops are executed by every member after the transfer.
func (k Kind) HasReduction() bool {
	switch k {
	case Reduce, Allreduce, ReduceScatter, Scan, Exscan:
		return true
	}
	return false
}

// IsOneSided reports whether k moves data between windows: a put, get,
// accumulate or atomic operation.
func (k Kind) IsOneSided() bool { return k >= Put && k <= CompareAndSwap }

// IsWindow reports whether k is a one-sided call of any sort: window
// management, transfers and synchronisation.
func (k Kind) IsWindow() bool { return k >= WinCreate && k <= WinWait }

// IsIO reports whether k is an MPI-IO call.
func (k Kind) IsIO() bool { return k >= FileOpen && k <= File }

// NamedByRegion reports whether the MPI function of an event of kind k is
// the one its region names, where the trace has one (an "MPI_" region, as
// OTF2 and DUMPI traces have): local and deferred calls, and MPI-IO
// calls, whose kinds stand for several functions (MPI_File_write_at_all
// is a FileWrite, MPI_File_set_view a File).
func (k Kind) NamedByRegion() bool { return k == Local || k == Deferred || k.IsIO() }

// IsMPI reports whether k is an MPI call (as opposed to computation, sleep
// or a location marker).
func (k Kind) IsMPI() bool { return k.Valid() && k != Compute && k != Sleep && k != Location }

// MPIName is the MPI function a kind stands for ("MPI_Allreduce",
// "MPI_Win_fence"), or "" for a kind that is not one MPI function:
// computation, sleeps, locations, and the local, deferred, I/O completion
// and other I/O calls whose function a trace does not keep.
func (k Kind) MPIName() string {
	if k < numKinds {
		return mpiNames[k]
	}
	return ""
}

// mpiNames are the kinds' MPI names, made once: analyses name every wait
// state's call, millions on long traces.
var mpiNames = func() (names [numKinds]string) {
	for k := range numKinds {
		switch {
		case !k.IsMPI() || k == Local || k == Deferred || k == FileWait || k == File:
		case k == SendRecv:
			names[k] = "MPI_Sendrecv"
		case k == ReduceScatter:
			names[k] = "MPI_Reduce_scatter"
		default:
			s := k.String()
			names[k] = "MPI_" + strings.ToUpper(s[:1]) + s[1:]
		}
	}
	return names
}()
