// Package capture holds Kairos' PMPI tracer: a C library that records an
// MPI program's calls, on any MPI, as a SimGrid 3.32 time-independent trace
// (the acquisition of Casanova et al.'s off-line simulation: the calls and
// their parameters, and the computation between them measured in time and
// written in flops) and, built with OTF2, as the timed OTF2 archive Score-P
// would write (every call's start and end), which the analyses of late
// senders and slow instances need. The Go binary carries its source so
// that a user needs nothing else: `kairos tracer -o kairos_trace.c`, then
// build it with the cluster's mpicc (the source's comment says how).
package capture

import _ "embed"

// Source is the tracer's C source.
//
//go:embed csrc/kairos_trace.c
var Source []byte

// FileName is the name the source is written under by default.
const FileName = "kairos_trace.c"
