package main

import (
	"io"

	"github.com/spf13/cobra"

	"kairos/capture"
)

func init() { addVerb("tracer", newTracerCmd) }

func newTracerCmd() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "tracer [-o FILE]",
		Short: "Write the C source of Kairos' PMPI tracer, to record MPI programs",
		Long: `Tracer writes the C source of Kairos' PMPI tracer (default ` + capture.FileName + `).
Built with the cluster's own mpicc and preloaded, it records an MPI program's
calls (C, C++ or Fortran; tested on Open MPI and MPICH) as a SimGrid
time-independent trace, which every Kairos verb and SimGrid's smpirun -replay
read: the calls with their partners, tags and sizes (in bytes), and the
computation between them measured in time and written in flops.

  mpicc -O2 -shared -fPIC -o libkairos_trace.so kairos_trace.c
  mpirun -np 64 -x LD_PRELOAD=$PWD/libkairos_trace.so ./app     (Open MPI)
  mpiexec -np 64 -genv LD_PRELOAD $PWD/libkairos_trace.so ./app (MPICH)
  kairos simulate kairos-trace/index.txt --cluster 64x1Gf,10GBps,1us

Built with OTF2 (Debian: libotf2-trace-dev), it writes an OTF2 archive
instead, with the records Score-P writes for the same calls and every call's
start and end: the timed trace that kairos patterns, slow and classify need
to tell who waits for whom, which Vampir, Scalasca and Pipit read too, and
which kairos simulate replays with the measured computation.

  mpicc -O2 -shared -fPIC -DKAIROS_OTF2 -o libkairos_trace.so kairos_trace.c -lotf2
  mpirun -np 64 -x LD_PRELOAD=$PWD/libkairos_trace.so ./app
  kairos slow kairos-trace/traces.otf2

The archive has the call paths of the MPI calls too, as Score-P's compiler
instrumentation records them, when the program is compiled with
-finstrument-functions and linked with the tracer instead of preloading it
(functions are named from the dynamic symbols and the program's symbol
table, C++ names mangled; a stripped program's are module+offset, which
addr2line -f -e app names); every entry to and exit from an instrumented
function is a record, so leave small ones out with GCC's
-finstrument-functions-exclude-function-list:

  mpicc -O2 -finstrument-functions -o app app.c -L. -lkairos_trace -Wl,-rpath,$PWD
  mpirun -np 64 ./app
  kairos reduce kairos-trace/traces.otf2 -o reduced.ktr

Environment of the traced run: KAIROS_TRACE, the output directory
(kairos-trace: rank r writes rank-r.ti, rank 0 index.txt; the OTF2 archive is
traces.otf2 there); KAIROS_TRACE_FORMAT, ti, otf2 or ti,otf2 (otf2 when built
with OTF2, ti otherwise); KAIROS_TRACE_SPEED, the flop/s computation is
converted at in TI (1e9); KAIROS_TRACE_MIN, the shortest computation
recorded in TI, in seconds (1e-6, SimGrid's smpi/cpu-threshold);
KAIROS_TRACE_CLOCK=cpu, computation in TI as the thread's CPU time between
calls (for runs with more ranks than cores; wall by default);
KAIROS_TRACE_REDUCE=callpath, reference, acurdion or acurdion2 (KAIROS_TRACE_K
clusters, 9), the ranks clustered at MPI_Finalize over a radix tree and one
TI trace kept per cluster behaviour, with
reduced.txt, read by every verb as the whole run (KAIROS_TRACE_REDUCE_KEEP=1
keeps every rank's trace too, in DIR/full; docs/tracer.md).

Waitany, waitsome, testany, testsome and testall are written as a wait per
request they complete, persistent requests as the isend or irecv each
MPI_Start starts. A time-independent trace knows only MPI_COMM_WORLD's
collectives and has no one-sided or MPI-IO action: the tracer leaves out
collectives on other communicators, one-sided calls (windows, epochs, puts,
gets, accumulates, atomics) and MPI-IO calls, and says at MPI_Finalize how
many of each kind and how much time, which is not computation; the OTF2
archive has them all (Score-P's RMA and I/O records). A directory holding a
trace already is not written into: the run goes to DIR-2, DIR-3... Its TI output
is the same, call for call, as SimGrid 3.32's own tracer (smpirun -trace-ti)
on the same program, and the OTF2 archive of a run replays in the same
simulated time as its TI trace (tests).`,
		Example: `  kairos tracer
  kairos tracer -o - | less`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				out = capture.FileName
			}
			return writeOutput(cmd, out, func(w io.Writer) error {
				_, err := w.Write(capture.Source)
				return err
			})
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "file to write the source to (- for stdout; default "+capture.FileName+")")
	return cmd
}
