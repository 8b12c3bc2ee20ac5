package otf2

import (
	"strings"

	"kairos/format/scorep"
	"kairos/trace"
)

// callNames are, by kind, the MPI functions other than the kind's own
// (Kind.MPIName) whose calls the reader reads as an event of the kind:
// the writer names a call by the one that gives back the event's call
// site (a trace read from OTF2 keeps its calls' functions there).
var callNames = map[trace.Kind][]string{
	trace.Init:          {"MPI_Init_thread"},
	trace.Send:          {"MPI_Ssend", "MPI_Bsend", "MPI_Rsend"},
	trace.Isend:         {"MPI_Issend", "MPI_Ibsend", "MPI_Irsend", "MPI_Start", "MPI_Startall", "MPI_Sendrecv"},
	trace.Recv:          {"MPI_Mrecv"},
	trace.Irecv:         {"MPI_Imrecv", "MPI_Start", "MPI_Startall", "MPI_Sendrecv"},
	trace.Wait:          {"MPI_Waitany", "MPI_Waitsome", "MPI_Test", "MPI_Testany", "MPI_Testsome", "MPI_Testall", "MPI_Sendrecv"},
	trace.Waitall:       {"MPI_Testall"},
	trace.SendRecv:      {"MPI_Sendrecv_replace"},
	trace.ReduceScatter: {"MPI_Reduce_scatter_block"},
	trace.WinCreate:     {"MPI_Win_allocate", "MPI_Win_allocate_shared", "MPI_Win_create_dynamic"},
	trace.GetAccumulate: {"MPI_Fetch_and_op"},
	trace.WinWait:       {"MPI_Win_test"},
}

// completions are the calls a non-blocking collective, read as the
// blocking one where it completes, may have completed in.
var completions = []string{"MPI_Wait", "MPI_Waitall", "MPI_Waitany", "MPI_Waitsome", "MPI_Test", "MPI_Testall", "MPI_Testany", "MPI_Testsome"}

// Names of the calls whose event names no MPI function (Region 0 or a
// user function): a local call, a deferred one, an MPI-IO call.
const (
	localName    = "MPI local call"
	deferredName = "MPI deferred call"
	fileName     = "MPI_File call"
)

// callOf returns the model region node of e's caller (the user call
// path the call is made from) and the MPI function its call is written
// as. An event whose kind stands for several functions (local, deferred
// and I/O calls: Kind.NamedByRegion) names its function by its region,
// under its caller; the others are named by their kind, or, where the
// event has a call site, by the function that gives it back.
func (w *archiveWriter) callOf(e *trace.Event) (user uint32, name string) {
	regions := w.meta.Regions
	node := e.Region
	if int(node) >= len(regions) {
		node = 0
	}
	if e.Kind.NamedByRegion() {
		if node != 0 {
			r := regions[node]
			if strings.HasPrefix(r.Name, "MPI_") || e.Kind == trace.Deferred && r.Name == flushName {
				return r.Parent, r.Name
			}
		}
		switch {
		case e.Kind == trace.Local:
			return node, localName
		case e.Kind == trace.Deferred:
			return node, deferredName
		case e.Kind.MPIName() != "":
			return node, e.Kind.MPIName()
		}
		return node, fileName
	}
	candidates := callNames[e.Kind]
	name = rmaName(e, e.Kind.MPIName())
	if e.Kind.IsCollective() && e.Request != 0 {
		name, candidates = completions[0], completions[1:]
	}
	if e.CallSite == 0 || w.callSite(node, name) == e.CallSite {
		return node, name
	}
	for _, c := range candidates {
		if w.callSite(node, c) == e.CallSite {
			return node, c
		}
	}
	return node, name
}

// FNV-1a's 64-bit parameters (hash/fnv's), for the call-site hashes the
// reader makes (Source.callSite), computed here a name at a time.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// fnvAdd adds name and a NUL to hash h.
func fnvAdd(h uint64, name string) uint64 {
	for i := 0; i < len(name); i++ {
		h = (h ^ uint64(name[i])) * fnvPrime
	}
	return h * fnvPrime // ^ 0
}

// callSite returns the call site the reader gives a call of MPI function
// name from model region node user: the hash of the call path's names.
func (w *archiveWriter) callSite(user uint32, name string) uint64 {
	return fnvAdd(w.pathHash(user), name)
}

// pathHash returns the hash of the names of node's call path (with
// "main" where the writer wraps the ranks in it), cached.
func (w *archiveWriter) pathHash(node uint32) uint64 {
	if node == 0 {
		if w.wrapMain {
			return fnvAdd(fnvOffset, "main")
		}
		return fnvOffset
	}
	if h, ok := w.prefix[node]; ok {
		return h
	}
	h := uint64(fnvOffset)
	for _, n := range w.meta.CallPath(node) {
		h = fnvAdd(h, n)
	}
	w.prefix[node] = h
	return h
}

// counted returns the bytes Score-P counts for collective e at member me
// of n (root: e's rank is the root), from which the reader's
// scorep.Volumes gives back e's per-member volumes: at a rooted
// collective's root every member's block, at an allreduce's, all-to-all's
// or allgather's members all members' blocks, at a scan's the blocks
// sent onward and received; a v-collective's totals as they are (its
// count vectors, in attributes, settle the rest).
func counted(e *trace.Event, me, n int, root bool) (sent, recv int64) {
	s, r, N, m := e.SendBytes, e.RecvBytes, int64(n), int64(me)
	switch e.Kind {
	case trace.Barrier:
		return 0, 0
	case trace.Bcast, trace.Scatter:
		if root {
			return N * s, 0
		}
		return 0, r
	case trace.Gather, trace.Reduce:
		if root {
			return 0, N * r
		}
		return s, 0
	case trace.Allreduce, trace.Alltoall, trace.Allgather:
		return N * s, N * r
	case trace.Allgatherv:
		return N * s, r
	case trace.Scan:
		return (N - m) * s, (m + 1) * s
	case trace.Exscan:
		return (N - m - 1) * s, m * s
	case trace.ReduceScatter:
		// Score-P counts the member's own block received; where the
		// reader would take that block for an in-place call's, none.
		if me >= 0 && me < len(e.RecvCounts) {
			if _, inPlace := scorep.Split(e.RecvCounts[me], n, false); !inPlace {
				return r, e.RecvCounts[me]
			}
		}
		return r, 0
	}
	return s, r
}
