// Package ti reads and writes SimGrid 3.32 time-independent (TI) traces,
// the text format of `smpirun -trace-ti` and `smpirun -replay` (seed 003,
// Table I and Figure 1, in SimGrid 3.32's current syntax), exactly as
// SimGrid 3.32 reads them.
//
// # Layouts
//
// A TI trace is one action per line, "<rank> <action> <arguments>". It is
// stored in one of two layouts, both read by Open:
//
//   - Shared: one file holding the lines of every rank. A rank's lines
//     may be interleaved with other ranks' lines. The number of ranks is
//     the highest rank plus one (ReaderOptions.NumRanks overrides it,
//     like smpirun's -np).
//   - PerRank: a description file whose line i names rank i's file
//     (smpirun -replay DESC). A description of exactly one line names a
//     shared file, as in SimGrid. A single per-rank file opened directly
//     is read as a shared file: ranks below its own are empty. A shared
//     file naming more ranks than trace.MostRanks of those with lines
//     (4,096, or 64 for each) claims them (trace.AttrClaimedRanks),
//     unless ReaderOptions.NumRanks sets the ranks.
//
// SimGrid resolves the description's paths against smpirun's working
// directory. Kairos tries the description's own directory first, so that
// a trace can be read from anywhere, then the working directory.
//
// Open scans the trace once: a shared file to index each rank's lines and
// to count the ranks, per-rank files to find location lines and
// unterminated last lines. OpenRank then streams one rank. For a shared
// file it reads from the rank's first line to its last and skips the
// other ranks' lines: one pass over the file in all for a file written
// rank after rank (as Kairos writes it), up to one pass per rank for a
// file interleaving the ranks line by line; a compressed shared file is
// decompressed from its start for every rank. ".gz" and ".zst" files are
// read transparently.
//
// # Model
//
// Sizes in TI are counts of a datatype; Kairos keeps bytes (count ×
// datatype size) in Event.SendBytes and RecvBytes and the datatype id
// named on the line in SendType and RecvType (trace.DefaultType when the
// line names none). Meta.DefaultType is trace.TypeDouble when the lowest
// rank that starts with "init" (its first action) gives it an argument,
// trace.TypeByte otherwise. Per action:
//
//	init [x]                          Init
//	finalize                          Finalize
//	compute <flops>                   Compute, Compute = flops
//	sleep <seconds>                   Sleep, Compute = seconds
//	location <file> <line>            Location, Region = region named file, Tag = line
//	send|isend <dst> <tag> <n> [dt]   Send|Isend, Partner, Tag, SendBytes, SendType
//	recv|irecv <src> <tag> <n> [dt]   Recv|Irecv, Partner, Tag, RecvBytes (-1 if n < 0), RecvType
//	wait|test <src> <dst> <tag>       Wait|Test, Source = src, Partner = dst, Tag, Request
//	waitall [n]                       Waitall, Requests = nil (every outstanding request)
//	sendRecv <sn> <dst> <rn> <src> <sdt> <rdt>
//	                                  SendRecv, Partner = dst, Source = src, both sizes and types
//	barrier                           Barrier
//	bcast <n> [root] [dt]             Bcast, Partner = root, SendBytes, SendType
//	reduce <n> <flops> [root] [dt]    Reduce, Partner = root, SendBytes, SendType, Compute
//	allreduce|scan|exscan <n> <flops> [dt]
//	                                  SendBytes, SendType, Compute
//	alltoall|allgather <sn> <rn> [sdt] [rdt]
//	                                  SendBytes, RecvBytes (per peer), SendType, RecvType
//	gather|scatter <sn> <rn> [root] [sdt] [rdt]
//	                                  the same and Partner = root
//	alltoallv <sbuf> <sn×N> <rbuf> <rn×N> [sdt] [rdt]
//	                                  SendBytes, RecvBytes = buffer sizes; SendCounts, RecvCounts
//	gatherv <sn> <rn×N> [root] [sdt] [rdt]
//	                                  SendBytes, RecvCounts, RecvBytes = their total, Partner
//	allgatherv <sn> <rn×N> ...        SendBytes, RecvCounts, RecvBytes = their total
//	scatterv <sn×N> <rn> [root] [sdt] [rdt]
//	                                  SendCounts, SendBytes = their total, RecvBytes, Partner
//	reducescatter <rn×N> <flops> [dt] RecvCounts, RecvBytes = their total, RecvType, Compute
//	comm_size|comm_split|comm_dup     CommSize|CommSplit|CommDup (SimGrid ignores them)
//
// Requests: every isend and irecv of a rank gets the next request id (1,
// 2, 3...). Like SimGrid, the reader stores them under the key (src, dst,
// tag) — (me, dst, tag) for isend, (src, me, tag) for irecv — and a wait
// or test gets the id of the oldest request under its key.
//
// # SimGrid quirks reproduced
//
//   - Lines are trimmed (boost::trim); empty lines and lines starting with
//     '#' are skipped; tokens are separated by runs of spaces and tabs;
//     tokens after the ones an action reads are ignored (CHECK_ACTION_PARAMS
//     only checks a minimum).
//   - A last line with no terminating newline is dropped, in both layouts,
//     so that event counts and simulations match SimGrid's. Trace.Warnings
//     reports it; ReaderOptions.KeepLastLine keeps the line.
//   - Partners, tags, roots, wait/test keys, location line numbers and the
//     per-rank counts of v-collectives are std::stoi integers; other counts
//     are strtod reals truncated towards zero and range-checked against the
//     C++ type SimGrid stores them in (ssize_t for send/recv, unsigned for
//     reduce/allreduce, size_t for bcast/scan/exscan, int elsewhere); flops
//     and seconds are strtod reals ("1e6", "1e+06", "0x1p3" all read).
//   - A datatype id is looked up by its exact spelling, -1 to 59
//     (Datatype::decode): "06" is not 6.
//   - allgatherv's optional tokens are told apart by counting them (with T
//     tokens in all: T > 2N+3 means two datatypes then N displacements;
//     else T > N+5 means N displacements; else up to two datatypes).
//     Displacements are checked but not kept; a non-zero one is reported
//     by Trace.Warnings, as the time of allgatherv GB depends on them.
//   - "init <anything>" makes MPI_DOUBLE the default datatype, "init"
//     MPI_BYTE. SimGrid keeps one default for the whole process; if ranks
//     disagree Kairos takes the lowest rank's and warns.
//   - A test takes the oldest request of its key and puts it back at the
//     end of the key's queue (SimGrid re-stores it, or a null request when
//     the test succeeds). A wait or test on a key with no request completes
//     nothing (Request 0); a wait when the rank has no request at all,
//     which makes SimGrid abort, is reported by Trace.Warnings.
//   - MPI_ANY_SOURCE: SimGrid's tracer writes it as -333 (MPI_UNDEFINED, a
//     bug: the replay then deadlocks); -555 is the real MPI_ANY_SOURCE.
//     Both read as trace.AnySource. SimGrid 3.32 files a receive from
//     MPI_ANY_SOURCE under the sender -556 (its actor id less one), so a
//     wait or test that names -555 or -333 does not find it and does
//     nothing, and one that names -556 does; Kairos files it so too.
//     MPI_ANY_TAG (-444) on a receive reads as trace.AnyTag.
//   - A recv or irecv count below zero means "probe for the size": it reads
//     as RecvBytes = -1.
//
// # Where Kairos is stricter than SimGrid
//
// SimGrid meets these with undefined behaviour, a crash or a silent
// misreading; Kairos reports "file:line:col: expected <what>, got <token>"
// (a ParseError):
//
//   - unknown action names and missing mandatory arguments (SimGrid also
//     fails on these);
//   - integers that std::stoi would read only in part ("1e3" is 1 to it);
//   - non-finite flops and seconds, out-of-range counts;
//   - negative counts, except the receive counts above;
//   - unknown datatype ids;
//   - in a per-rank file, a line of another rank (SimGrid skips it with a
//     warning), and a rank token that is not a plain non-negative integer;
//   - allgatherv lines whose displacements are cut short (SimGrid asserts).
//
// # Writing
//
// WriteFile writes any trace.Source as SimGrid 3.32 reads it: a single
// shared file when the output name ends in ".ti" (before any .gz or .zst),
// otherwise a description NAME listing NAME_files/rank-<r>.ti, relative
// to NAME's directory (run smpirun from there). Counts are bytes divided
// by the datatype size, with the datatype id written when it is not the
// default (MPI_BYTE is used when bytes are not a whole number of
// elements); "init 1" when the default is MPI_DOUBLE; every line ends with
// a newline, so that SimGrid drops nothing; flops and seconds are written
// in the shortest form that reads back to the same float64 (SimGrid's own
// tracer keeps 6 significant digits, which changes the simulated time);
// wait and test keys are regenerated from the request ids; sendRecv always
// carries both datatypes (SimGrid 3.32 requires six arguments), and a
// sendrecv with a tag other than 0 (which SimGrid's sendRecv would match
// with tag 0) becomes the isend, irecv and waits SimGrid's sendRecv does;
// MPI_ANY_SOURCE is written -555, which SimGrid's replay honours, a wait
// or test of such a receive names -556, where SimGrid files it (with -555
// SimGrid's replay skipped the wait), and MPI_ANY_TAG is -444. A waitall on only some of the outstanding requests
// becomes one wait per request. What TI cannot express is left out and
// counted in WriteStats: CommCreate, CommFree, Probe, Iprobe and Local
// events, one-sided and MPI-IO calls (SimGrid's replay has no action for
// them), collectives on communicators other than MPI_COMM_WORLD, rooted
// collectives without a root, v-collectives whose count vectors do not
// have one entry per rank, waits on requests no call of the trace started
// (a TI wait on a key with no request is written back as read), location
// markers without a one-token file name.
package ti
