package trace

import "strconv"

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
	// completes; a wait or test completing one placed earlier. A replay
	// spends no time in it, and its duration is not computation.
	Deferred

	numKinds
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

// IsMPI reports whether k is an MPI call (as opposed to computation, sleep
// or a location marker).
func (k Kind) IsMPI() bool { return k.Valid() && k != Compute && k != Sleep && k != Location }
