// Package otf2 reads OTF2 archives, the trace format of Score-P, in pure
// Go: the anchor file, global and local definitions, and the chunked event
// files of each location, in either byte order, as written by OTF2 2.0 to
// 3.1.
//
// It has two layers.
//
// The low level reads raw event records. Archive.OpenLocation streams one
// location's records (LocationReader) with clock offsets interpolated and
// mapping tables applied; Archive.Merged streams all locations in the
// global order otf2-print uses (clock-corrected timestamp, ties to the
// lower location id). Records Kairos does not interpret, and fields that
// newer OTF2 versions append, are skipped by their length; attribute
// lists are skipped or, with Archive.KeepAttrs, decoded. AppendText
// formats any record exactly as `otf2-print -A` prints its event line
// (names of definitions resolved, enums and flags spelled as otf2-print
// spells them), which is what the tests compare with otf2-print and what
// `kairos print` shows.
//
// The model layer (Open, Source) maps the records to Kairos' trace model:
// one rank per MPI location, each MPI call (the Enter and Leave of an MPI
// region with the MPI records inside) one event with its enter and exit
// time, user regions as the call-path tree. A trace without MPI has one
// rank per location and no events; Meta.Attrs says so. Collective volumes
// are read as Score-P counts them (scorep_mpi_coll_bytes_*: at a root, the
// bytes of every member; for an allreduce, all-to-all or allgather, the
// blocks of all members at every member; for a scan, the blocks sent
// onward and received) and kept as the model's per-member volumes, the
// sizes SimGrid's actions carry. OTF2 has the totals of a v-collective
// only: the count vectors are read from Kairos' tracer's attributes, or
// derived from every member's totals (vcounts.go). Receives are completed
// at any distance and cancelled requests dropped, by an index Open builds
// (mapper.go).
//
// Write writes a timed trace as an archive the reader, otf2-print and
// Vampir read: Score-P's definitions and records of each MPI call, the
// call-path tree as user regions, a timer of one tick a picosecond, a
// collective's bytes as Score-P counts them (with Kairos' attributes
// where they do not give the model's volumes back, and a v-collective's
// count vectors), one-sided and MPI-IO calls' RMA and I/O records, the
// trace's attributes as anchor properties. It streams
// each rank's events a chunk at a time into a temporary directory, then
// moves the archive into place (write.go; docs/formats.md lists what the
// format does not hold).
//
// Memory is a window of the current event chunk per open location (the
// locations share windowBudget; the whole chunk where they are few), a
// bounded look-ahead of events, plus the definitions
// and Open's index (late completions, cancellations, the v-collectives'
// totals); never proportional to the other events.
// Every decoding error names the file and the byte offset.
package otf2
