// Package dumpi reads SST DUMPI traces (sst-dumpi's libdumpi, file
// versions 0.x to 8.1 and later): a <prefix>.meta text file and one binary
// <prefix>-NNNN.bin file per rank. Import it for its side effect of
// registering the "dumpi" format, which every Kairos command then accepts
// as a .meta file, a directory holding one (or holding only the .bin
// files), or a single .bin file (a one-rank trace).
//
// # File layout
//
// A .bin file is big-endian: the magic 0xFFAADD44554D5049, the body (CPU
// and wall time offsets in seconds, then call records, ended by label 293),
// the header (version, start time, host and user names, mesh), the footer
// (magic 0xF007FEE7, per-label call and ignored counts), the datatype-size
// table, optional PAPI and address label tables, and a 64-byte index of
// section offsets that older versions keep shorter. A call record has no
// length: a u16 function label, a u8 mask (stored statuses, CPU and wall
// times, thread id, PAPI counters), those, then the label's arguments.
// layouts holds every label's argument layout; a label outside it is a
// located error, never a guess.
//
// # Mapping into the model
//
// Every record becomes one trace.Event but Startall, which becomes one per
// request it starts (user-function enter/exit records, which
// -finstrument-functions builds write, are skipped):
//
//   - Send, Bsend, Ssend, Rsend and Isend, Ibsend, Issend, Irsend become
//     Send and Isend; Recv and Irecv stay; Sendrecv(_replace) becomes
//     SendRecv, or where its send and receive tags differ an Isend, an
//     Irecv and their Waits (trace.SendRecvEvents); Probe and Iprobe
//     stay. Sizes are count x
//     the datatype's size, in bytes: as the rank last made the type, from
//     its constructor (types.go; a freed type's id is reused), else from the
//     rank's datatype-size table; the datatype is kept only
//     where SimGrid has it with the same size. An MPI_ANY_SOURCE Recv takes
//     its source from its stored status, an Irecv from the status stored
//     by the call that completes it (found by decoding ahead), when there
//     is one, or is Deferred where that call's status says the receive
//     was cancelled (or, storing none, MPI_Cancel was called on it first),
//     and its completion completes nothing. A call on MPI_PROC_NULL is
//     Local, and completions leave its request out; a Sendrecv with one
//     side on MPI_PROC_NULL is the other side's Send or Recv alone.
//   - Each start of a request is a request of its own, numbered in
//     order: a request handle names the requests started under it in
//     turn, each naming in a completion the oldest (Open MPI gives sends
//     that complete at once one shared handle). A completion of a handle
//     that started nothing the trace follows (a non-blocking collective,
//     which sst-dumpi does not record) completes nothing, and
//     Trace.Warnings counts the calls that make one.
//   - Send_init (Bsend_init, Ssend_init, Rsend_init) and Recv_init are
//     Local and record a persistent request; each Start or Startall of it
//     becomes an Isend or Irecv (a Startall of n requests, n events at the
//     call's times); a completion makes it inactive, and completing an
//     inactive request completes nothing; Request_free forgets it.
//   - Waitall becomes a Waitall of its requests; Wait, Waitany, Waitsome
//     and the tests (with a true flag) a Wait of each request they
//     completed, sharing the call's time, as Kairos' tracer writes them;
//     Request_free of an active request retires it. MPI_REQUEST_NULL is
//     left out; a test that completes nothing is Deferred (MPI time,
//     polling), any other call that completes nothing Local.
//   - Collectives carry per-member bytes, the root as a world rank, and the
//     v-collectives' per-member bytes in SendCounts/RecvCounts (see
//     Reader.collective). Alltoallw is an Alltoallv with per-member types.
//   - Comm_dup, Comm_split, Comm_create, Cart_create and Graph_create become
//     CommDup, CommSplit and CommCreate with the new communicator's id (one
//     made from MPI_COMM_SELF is MPI_COMM_SELF); Comm_free becomes
//     CommFree. Init, Init_thread and Finalize stay.
//   - A collective on MPI_COMM_SELF, or on a communicator made from it, is
//     a collective of one member, on a communicator of the rank alone that
//     the communicator pass adds to Meta.Comms (one a rank, where it makes
//     such calls), as the OTF2 reader has them.
//   - MPI-IO calls are read as the OTF2 reader reads Score-P's records
//     of them (io.go): File_open and File_close are FileOpen and
//     FileClose on their communicator, the file's handle numbered by its
//     communicator and order of opening, the same on every member; reads
//     and writes are FileRead and FileWrite of their bytes, collective
//     (_all, _ordered) or non-blocking (iread..., a split collective's
//     begin) with a request that the wait completing it (the split's end)
//     makes a FileWait; the other calls on a file (views, seeks, sizes)
//     are File calls on it, those on a file the trace did not open File
//     calls of no handle.
//   - Every other call is Local, its Region naming the MPI function.
//
// Ranks are resolved to MPI_COMM_WORLD ranks through the communicators the
// trace creates. DUMPI numbers communicator handles per rank, so Open
// first runs a communicator pass: it decodes each rank once, keeps only
// its communicator and group calls (and counts the calls on other
// handles), and matches the k-th creating call on a parent communicator
// across the parent's members (Comm_split members ordered by key, then
// parent rank; Comm_create members in group order; Cart/Graph_create as
// if reorder were false), each distinct group kept once (groups.go). Its
// memory is proportional to those calls; reading then streams each
// rank's file through a buffer of 64 KiB, less past 1,024 ranks (all of
// them share 64 MiB, 4 KiB each at least), so memory is proportional to
// the number of ranks, never to the events.
//
// A call on a communicator no followed call created on its rank (made
// before tracing began, by a call Kairos does not follow, or by a
// Comm_split whose other members have no file) is a Deferred event (MPI
// time, not computation) whose region is "<function> (unknown
// communicator)": its partners' world ranks are unknown.
// Meta.Attrs["unknown-comms"] counts them.
//
// Files may be missing: a rank's .bin alone, or an archive without some
// (see Open). The trace's ranks are then MPI_COMM_WORLD's, those without
// a file have no events, and Meta.Attrs["partial"] names them.
//
// Times: every event has Enter and Exit from the record's wall-clock
// times, in picoseconds since the earliest wall time of any rank's first
// record, which Meta.Attrs["time.origin"] keeps (seconds, as dumpi2ascii
// prints them). sst-dumpi stamps MPI_Init once PMPI_Init returned: after
// a call made before it (MPI_Initialized), MPI_Init reads from that
// call's end.
//
// Not modelled: intercommunicator calls are Deferred; communicators created by
// Intercomm_create/merge, Comm_spawn, Comm_accept/connect are unknown
// communicators (Cart_sub's members follow from its parent's).
package dumpi
