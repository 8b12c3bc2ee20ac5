/*
 * kairos_trace.c: Kairos' PMPI tracer. It records an MPI program's calls as
 * a SimGrid 3.32 time-independent trace, the trace `kairos simulate` and
 * `smpirun -replay` replay, with the computation between calls measured in
 * time and written in flops; built with OTF2, also (or instead) as an OTF2
 * archive with every call's start and end, the timed trace Score-P writes,
 * for the analyses of who waits for whom (`kairos patterns`, `slow`).
 *
 * Build and use (any MPI; KAIROS_TRACE and the other variables optional):
 *
 *   mpicc -O2 -shared -fPIC -o libkairos_trace.so kairos_trace.c
 *   mpirun -np 4 -x LD_PRELOAD=$PWD/libkairos_trace.so ./app     (Open MPI)
 *   kairos check kairos-trace/index.txt
 *
 * or link it before the MPI library: mpicc app.c -L. -lkairos_trace. Fortran
 * programs (mpif.h, the mpi module; with Open MPI also mpi_f08) are traced
 * alike: mpif90 app.f90 -L. -lkairos_trace. With OTF2 (Debian:
 * libotf2-trace-dev):
 *
 *   mpicc -O2 -shared -fPIC -DKAIROS_OTF2 -o libkairos_trace.so kairos_trace.c -lotf2
 *   kairos slow kairos-trace/traces.otf2
 *
 * A program compiled with -finstrument-functions and linked with the
 * tracer has its functions in the archive, so that its MPI calls have call
 * paths:
 *
 *   mpicc -finstrument-functions -o app app.c -L. -lkairos_trace
 *
 * Environment:
 *   KAIROS_TRACE        output directory (default kairos-trace): rank r
 *                       writes DIR/rank-r.ti, rank 0 DIR/index.txt listing
 *                       them (SimGrid's description file); the OTF2
 *                       archive is DIR/traces.otf2 (a directory holding a
 *                       trace already is left alone: the run writes to
 *                       DIR-2, DIR-3...)
 *   KAIROS_TRACE_FORMAT ti, otf2 or ti,otf2 (default: otf2 when built with
 *                       OTF2, ti otherwise)
 *   KAIROS_TRACE_SPEED  flop/s the measured computation is converted at
 *                       (default 1e9): flops = seconds x speed
 *   KAIROS_TRACE_MIN    shortest computation recorded, in seconds (default
 *                       1e-6, SimGrid's smpi/cpu-threshold)
 *   KAIROS_TRACE_CLOCK  wall (default) or cpu: the TI trace's computations
 *                       are the calling thread's CPU time between calls,
 *                       for runs with more ranks than cores
 *   KAIROS_TRACE_REDUCE callpath, reference, acurdion or acurdion2: cluster
 *                       the ranks at MPI_Finalize and keep one TI trace per
 *                       cluster behaviour, with DIR/reduced.txt
 *                       (docs/tracer.md); KAIROS_TRACE_K, ACURDION's K (9);
 *                       KAIROS_TRACE_REDUCE_KEEP=1 keeps every rank's too,
 *                       in DIR/full/index.txt
 *
 * What is recorded: init, finalize, send (and bsend, rsend, ssend), isend
 * (and ibsend, irsend, issend) as send and isend, recv, irecv, wait,
 * waitall, test (and the other completions, as waits), persistent requests,
 * sendrecv (and sendrecv_replace), barrier, bcast, reduce, allreduce, alltoall(v),
 * gather(v), scatter(v), allgather(v), reduce_scatter (and
 * reduce_scatter_block), scan, exscan, alltoallw (as the alltoallv of its
 * bytes), their non-blocking forms (ibarrier, ibcast... as the blocking
 * collective where they complete, or earlier, before a collective called
 * after them), matched probes (mprobe, improbe) as the irecv of their
 * message, completed (a wait) where mrecv, or imrecv's request, receives
 * it, and the time between them as compute. Probes (probe, iprobe; the
 * matched ones but for that irecv) and the calls that create communicators
 * (comm_dup, comm_split, cart_create...) have no TI action: they write
 * nothing, but their time is not counted as computation. Counts are bytes (MPI_BYTE,
 * the TI default). Partners are translated to MPI_COMM_WORLD ranks. A TI trace
 * knows only MPI_COMM_WORLD's collectives: collectives on other
 * communicators are not recorded, and rank 0 sums them on stderr at
 * MPI_Finalize, by call, with their time and its share of the run, and
 * says where every call is (the OTF2 archive, for kairos convert). A
 * receive from any source or with any tag is written with the source and
 * tag it matched; a cancelled request (MPI_Cancel) is no action. Waitany, waitsome, test, testany, testsome and
 * testall are written as a wait on each request they complete (a test
 * that completes nothing is no action: see MPI_Test); persistent requests as
 * the isend or irecv each MPI_Start starts, MPI-4's partitioned ones
 * (psend_init, precv_init) as those of their whole buffers, and MPI-4's
 * persistent collectives (allreduce_init...) as the non-blocking
 * collective each MPI_Start starts. The neighborhood collectives
 * (and their non-blocking forms) are written as their messages, isends
 * and irecvs of tag KN_TAG completed where the collective completes, in
 * both traces. One-sided and MPI-IO calls write no TI line (it has no
 * action for them), and their time is not computation; MPI_Finalize
 * counts them by kind (see the section at the end). Only the calls of
 * the thread that initialized MPI are recorded, or of any thread under
 * MPI_THREAD_SERIALIZED; the others are counted at MPI_Finalize, and
 * their number ends rank 0's TI file as a comment line (kt_note_threads). A
 * sendrecv with MPI_PROC_NULL on one side is written as its other half,
 * one of tags other than 0 as its isend, irecv and waits (TI's sendRecv
 * has no tags).
 *
 * The OTF2 archive has the records Score-P writes for the same calls
 * (an Enter and a Leave of the call's region around MpiSend, MpiIsend,
 * MpiIsendComplete, MpiIrecvRequest, MpiIrecv, MpiRecv, MpiRequestTest,
 * MpiCollectiveBegin and MpiCollectiveEnd, NonBlockingCollectiveRequest and
 * NonBlockingCollectiveComplete, with Score-P's byte counts),
 * partners as MPI_COMM_WORLD ranks, and, unlike TI, the collectives of
 * every communicator. Timestamps are each rank's CLOCK_REALTIME
 * nanoseconds; at MPI_Init and MPI_Finalize every rank measures its clock's
 * offset to rank 0's by ping-pong (the shortest of 10 round trips, as
 * Score-P), written as the location's two ClockOffset definitions, from
 * which readers (Kairos, otf2-print, Scalasca) put its events on rank 0's
 * clock, correcting a constant offset and a constant drift (a drift within
 * the measures' error is written as none).
 */
#define _GNU_SOURCE /* dladdr */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <mpi.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h> /* pwrite */

#define KT_ANY_SOURCE (-555) /* MPI_ANY_SOURCE in TI */
#define KT_ANY_TAG (-444)
#define KT_ELSEWHERE (-666) /* a process of another MPI world (kt_world) */

static FILE *kt_out; /* the TI trace's file, NULL if not written (or not yet: KAIROS_TRACE_REDUCE's) */
static int kt_ti;     /* a TI trace is recorded */
static int kt_active; /* between MPI_Init and MPI_Finalize, with an output */
static int kt_rank = -1, kt_size;
static double kt_speed = 1e9, kt_min = 1e-6;

/* Timestamps: nanoseconds of CLOCK_REALTIME. kt_t0 is the current call's
 * start, kt_t1 its end (taken at the first record after it returns, 0
 * before), kt_last the previous call's end. */
static uint64_t kt_t0, kt_t1, kt_last;

static uint64_t kt_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* With KAIROS_TRACE_CLOCK=cpu, a computation is the calling thread's CPU
 * time since its previous call's end (kt_cpu_last, the thread's own under
 * MPI_THREAD_SERIALIZED, kt_on), not the time on the wall: on a machine
 * with more ranks than cores, the wall counts the waits for a core as
 * computation. */
static int kt_cpuclock;
static __thread uint64_t kt_cpu_last;
static uint64_t kt_cpu_began; /* the main thread's CPU time at the end of MPI_Init */

static uint64_t kt_cpu(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t kt_end(void) {
  if (kt_t1 == 0) kt_t1 = kt_now();
  return kt_t1;
}

/* The calls that create communicators, as X(REGION, name, 0): collective
 * calls, where a rank waits for the others, that have no TI action
 * (SimGrid's replay creates no communicator): their time is not
 * computation, and the OTF2 archive has their Enter and Leave. */
#define KC_REGIONS(X)                                                                                                  \
  X(COMM_DUP, "MPI_Comm_dup", 0) X(COMM_DUP_WITH_INFO, "MPI_Comm_dup_with_info", 0) X(COMM_IDUP, "MPI_Comm_idup", 0) \
  X(COMM_SPLIT, "MPI_Comm_split", 0) X(COMM_SPLIT_TYPE, "MPI_Comm_split_type", 0)                                      \
  X(COMM_CREATE, "MPI_Comm_create", 0) X(COMM_CREATE_GROUP, "MPI_Comm_create_group", 0)                                \
  X(CART_CREATE, "MPI_Cart_create", 0) X(CART_SUB, "MPI_Cart_sub", 0) X(GRAPH_CREATE, "MPI_Graph_create", 0)           \
  X(DIST_GRAPH_CREATE, "MPI_Dist_graph_create", 0) X(DIST_GRAPH_CREATE_ADJACENT, "MPI_Dist_graph_create_adjacent", 0)  \
  X(INTERCOMM_CREATE, "MPI_Intercomm_create", 0) X(INTERCOMM_MERGE, "MPI_Intercomm_merge", 0)                        \
  X(COMM_FREE, "MPI_Comm_free", 0)

/* MPI-4's persistent collectives' and partitioned calls' init calls (in
 * the same form, kind 0). */
#define KP_REGIONS(X)                                                                                                  \
  X(BARRIER_INIT, "MPI_Barrier_init", 0) X(BCAST_INIT, "MPI_Bcast_init", 0) X(REDUCE_INIT, "MPI_Reduce_init", 0)     \
  X(ALLREDUCE_INIT, "MPI_Allreduce_init", 0) X(SCAN_INIT, "MPI_Scan_init", 0) X(EXSCAN_INIT, "MPI_Exscan_init", 0)   \
  X(ALLTOALL_INIT, "MPI_Alltoall_init", 0) X(ALLTOALLV_INIT, "MPI_Alltoallv_init", 0)                                \
  X(ALLTOALLW_INIT, "MPI_Alltoallw_init", 0) X(ALLGATHER_INIT, "MPI_Allgather_init", 0)                              \
  X(ALLGATHERV_INIT, "MPI_Allgatherv_init", 0) X(GATHER_INIT, "MPI_Gather_init", 0)                                  \
  X(GATHERV_INIT, "MPI_Gatherv_init", 0) X(SCATTER_INIT, "MPI_Scatter_init", 0)                                      \
  X(SCATTERV_INIT, "MPI_Scatterv_init", 0) X(REDUCE_SCATTER_INIT, "MPI_Reduce_scatter_init", 0)                      \
  X(REDUCE_SCATTER_BLOCK_INIT, "MPI_Reduce_scatter_block_init", 0) X(PSEND_INIT, "MPI_Psend_init", 0)               \
  X(PRECV_INIT, "MPI_Precv_init", 0)

/* The one-sided and MPI-IO calls (see the section at the end), as
 * X(REGION, name, kind): kind 1 one-sided, 2 MPI-IO. */
#define KS_REGIONS(X)                                                                                                  \
  X(WIN_CREATE, "MPI_Win_create", 1) X(WIN_ALLOCATE, "MPI_Win_allocate", 1)                                            \
  X(WIN_ALLOCATE_SHARED, "MPI_Win_allocate_shared", 1) X(WIN_CREATE_DYNAMIC, "MPI_Win_create_dynamic", 1)              \
  X(WIN_FREE, "MPI_Win_free", 1) X(WIN_FENCE, "MPI_Win_fence", 1) X(WIN_LOCK, "MPI_Win_lock", 1)                       \
  X(WIN_UNLOCK, "MPI_Win_unlock", 1) X(WIN_LOCK_ALL, "MPI_Win_lock_all", 1) X(WIN_UNLOCK_ALL, "MPI_Win_unlock_all", 1)  \
  X(WIN_FLUSH, "MPI_Win_flush", 1) X(WIN_FLUSH_ALL, "MPI_Win_flush_all", 1)                                            \
  X(WIN_FLUSH_LOCAL, "MPI_Win_flush_local", 1) X(WIN_FLUSH_LOCAL_ALL, "MPI_Win_flush_local_all", 1)                    \
  X(WIN_SYNC, "MPI_Win_sync", 1) X(WIN_POST, "MPI_Win_post", 1) X(WIN_START, "MPI_Win_start", 1)                       \
  X(WIN_COMPLETE, "MPI_Win_complete", 1) X(WIN_WAIT, "MPI_Win_wait", 1) X(WIN_TEST, "MPI_Win_test", 1)                 \
  X(WIN_ATTACH, "MPI_Win_attach", 1) X(WIN_DETACH, "MPI_Win_detach", 1) X(PUT, "MPI_Put", 1) X(GET, "MPI_Get", 1)     \
  X(ACCUMULATE, "MPI_Accumulate", 1) X(GET_ACCUMULATE, "MPI_Get_accumulate", 1)                                        \
  X(FETCH_AND_OP, "MPI_Fetch_and_op", 1) X(COMPARE_AND_SWAP, "MPI_Compare_and_swap", 1) X(RPUT, "MPI_Rput", 1)        \
  X(RGET, "MPI_Rget", 1) X(RACCUMULATE, "MPI_Raccumulate", 1) X(RGET_ACCUMULATE, "MPI_Rget_accumulate", 1)            \
  X(FILE_OPEN, "MPI_File_open", 2) X(FILE_CLOSE, "MPI_File_close", 2) X(FILE_DELETE, "MPI_File_delete", 2)             \
  X(FILE_SET_VIEW, "MPI_File_set_view", 2) X(FILE_SEEK, "MPI_File_seek", 2)                                            \
  X(FILE_SEEK_SHARED, "MPI_File_seek_shared", 2) X(FILE_SYNC, "MPI_File_sync", 2)                                      \
  X(FILE_SET_SIZE, "MPI_File_set_size", 2) X(FILE_PREALLOCATE, "MPI_File_preallocate", 2)                              \
  X(FILE_READ, "MPI_File_read", 2) X(FILE_READ_AT, "MPI_File_read_at", 2) X(FILE_READ_ALL, "MPI_File_read_all", 2)     \
  X(FILE_READ_AT_ALL, "MPI_File_read_at_all", 2) X(FILE_READ_SHARED, "MPI_File_read_shared", 2)                        \
  X(FILE_READ_ORDERED, "MPI_File_read_ordered", 2) X(FILE_WRITE, "MPI_File_write", 2)                                  \
  X(FILE_WRITE_AT, "MPI_File_write_at", 2) X(FILE_WRITE_ALL, "MPI_File_write_all", 2)                                  \
  X(FILE_WRITE_AT_ALL, "MPI_File_write_at_all", 2) X(FILE_WRITE_SHARED, "MPI_File_write_shared", 2)                    \
  X(FILE_WRITE_ORDERED, "MPI_File_write_ordered", 2) X(FILE_IREAD, "MPI_File_iread", 2)                                \
  X(FILE_IREAD_AT, "MPI_File_iread_at", 2) X(FILE_IREAD_ALL, "MPI_File_iread_all", 2)                                  \
  X(FILE_IREAD_AT_ALL, "MPI_File_iread_at_all", 2) X(FILE_IREAD_SHARED, "MPI_File_iread_shared", 2)                    \
  X(FILE_IWRITE, "MPI_File_iwrite", 2) X(FILE_IWRITE_AT, "MPI_File_iwrite_at", 2)                                      \
  X(FILE_IWRITE_ALL, "MPI_File_iwrite_all", 2) X(FILE_IWRITE_AT_ALL, "MPI_File_iwrite_at_all", 2)                      \
  X(FILE_IWRITE_SHARED, "MPI_File_iwrite_shared", 2) X(FILE_READ_ALL_BEGIN, "MPI_File_read_all_begin", 2)              \
  X(FILE_READ_ALL_END, "MPI_File_read_all_end", 2) X(FILE_READ_AT_ALL_BEGIN, "MPI_File_read_at_all_begin", 2)          \
  X(FILE_READ_AT_ALL_END, "MPI_File_read_at_all_end", 2)                                                               \
  X(FILE_READ_ORDERED_BEGIN, "MPI_File_read_ordered_begin", 2)                                                         \
  X(FILE_READ_ORDERED_END, "MPI_File_read_ordered_end", 2) X(FILE_WRITE_ALL_BEGIN, "MPI_File_write_all_begin", 2)      \
  X(FILE_WRITE_ALL_END, "MPI_File_write_all_end", 2) X(FILE_WRITE_AT_ALL_BEGIN, "MPI_File_write_at_all_begin", 2)      \
  X(FILE_WRITE_AT_ALL_END, "MPI_File_write_at_all_end", 2)                                                             \
  X(FILE_WRITE_ORDERED_BEGIN, "MPI_File_write_ordered_begin", 2)                                                       \
  X(FILE_WRITE_ORDERED_END, "MPI_File_write_ordered_end", 2)
#define KS_ENUM(r, name, kind) R_##r,
#define KS_NAME(r, name, kind) name,
#define KS_KIND(r, name, kind) kind,

/* The wrapped calls, which are the regions of the OTF2 archive. */
enum {
  R_INIT, R_INIT_THREAD, R_FINALIZE, R_SEND, R_SSEND, R_ISEND, R_RECV, R_IRECV, R_WAIT, R_WAITALL, R_WAITANY,
  R_WAITSOME, R_TEST, R_TESTANY, R_TESTSOME, R_TESTALL, R_SENDRECV, R_BARRIER, R_BCAST, R_REDUCE, R_ALLREDUCE,
  R_SCAN, R_EXSCAN, R_ALLTOALL, R_ALLTOALLV, R_ALLGATHER, R_ALLGATHERV, R_GATHER, R_GATHERV, R_SCATTER,
  R_SCATTERV, R_REDUCE_SCATTER, R_START, R_STARTALL, R_BSEND, R_RSEND, R_ISSEND, R_IBSEND, R_IRSEND,
  R_SENDRECV_REPLACE, R_REDUCE_SCATTER_BLOCK, R_PROBE, R_IPROBE, R_MPROBE, R_IMPROBE, R_MRECV, R_IMRECV,
  R_ALLTOALLW, R_IBARRIER, R_IBCAST, R_IREDUCE, R_IALLREDUCE, R_ISCAN, R_IEXSCAN, R_IALLTOALL, R_IALLTOALLV,
  R_IALLTOALLW, R_IALLGATHER, R_IALLGATHERV, R_IGATHER, R_IGATHERV, R_ISCATTER, R_ISCATTERV, R_IREDUCE_SCATTER,
  R_IREDUCE_SCATTER_BLOCK, R_CANCEL, R_NEIGHBOR_ALLGATHER, R_NEIGHBOR_ALLGATHERV, R_NEIGHBOR_ALLTOALL,
  R_NEIGHBOR_ALLTOALLV, R_NEIGHBOR_ALLTOALLW, R_INEIGHBOR_ALLGATHER, R_INEIGHBOR_ALLGATHERV, R_INEIGHBOR_ALLTOALL,
  R_INEIGHBOR_ALLTOALLV, R_INEIGHBOR_ALLTOALLW, R_ISENDRECV, R_ISENDRECV_REPLACE, R_BUFFER_DETACH, KP_REGIONS(KS_ENUM)
      KC_REGIONS(KS_ENUM) KS_REGIONS(KS_ENUM) R_NREGIONS
};
static int kt_region;

/* The wrapped calls' names. */
static const char *const kt_names[R_NREGIONS] = {
  "MPI_Init", "MPI_Init_thread", "MPI_Finalize", "MPI_Send", "MPI_Ssend", "MPI_Isend", "MPI_Recv", "MPI_Irecv",
  "MPI_Wait", "MPI_Waitall", "MPI_Waitany", "MPI_Waitsome", "MPI_Test", "MPI_Testany", "MPI_Testsome",
  "MPI_Testall", "MPI_Sendrecv", "MPI_Barrier", "MPI_Bcast", "MPI_Reduce", "MPI_Allreduce", "MPI_Scan",
  "MPI_Exscan", "MPI_Alltoall", "MPI_Alltoallv", "MPI_Allgather", "MPI_Allgatherv", "MPI_Gather", "MPI_Gatherv",
  "MPI_Scatter", "MPI_Scatterv", "MPI_Reduce_scatter", "MPI_Start", "MPI_Startall", "MPI_Bsend", "MPI_Rsend",
  "MPI_Issend", "MPI_Ibsend", "MPI_Irsend", "MPI_Sendrecv_replace", "MPI_Reduce_scatter_block", "MPI_Probe",
  "MPI_Iprobe", "MPI_Mprobe", "MPI_Improbe", "MPI_Mrecv", "MPI_Imrecv", "MPI_Alltoallw", "MPI_Ibarrier",
  "MPI_Ibcast", "MPI_Ireduce", "MPI_Iallreduce", "MPI_Iscan", "MPI_Iexscan", "MPI_Ialltoall", "MPI_Ialltoallv",
  "MPI_Ialltoallw", "MPI_Iallgather", "MPI_Iallgatherv", "MPI_Igather", "MPI_Igatherv", "MPI_Iscatter",
  "MPI_Iscatterv", "MPI_Ireduce_scatter", "MPI_Ireduce_scatter_block", "MPI_Cancel", "MPI_Neighbor_allgather",
  "MPI_Neighbor_allgatherv", "MPI_Neighbor_alltoall", "MPI_Neighbor_alltoallv", "MPI_Neighbor_alltoallw",
  "MPI_Ineighbor_allgather", "MPI_Ineighbor_allgatherv", "MPI_Ineighbor_alltoall", "MPI_Ineighbor_alltoallv",
  "MPI_Ineighbor_alltoallw", "MPI_Isendrecv", "MPI_Isendrecv_replace", "MPI_Buffer_detach", KP_REGIONS(KS_NAME)
      KC_REGIONS(KS_NAME) KS_REGIONS(KS_NAME)};

/* A pending isend or irecv: its TI key (src, dst, tag), the request id of
 * its OTF2 records, and, for a receive from any source, the communicator
 * its status's source is a rank of. Its TI line (the isend or irecv; len
 * 0 where no TI trace is written) is where kt_patch can rewrite it: that
 * of a receive from MPI_ANY_SOURCE or with MPI_ANY_TAG gets the source and
 * tag it matched, that of a cancelled request is blanked. */
struct kt_tline {
  uint64_t off; /* in the rank's TI file */
  uint32_t len; /* with its newline */
};
struct kt_req {
  MPI_Request req;
  int send; /* an isend (else an irecv) */
  int src, dst, tag;
  int lsrc; /* an irecv's source as a rank of comm (or KT_ANY_SOURCE), for the OTF2 archive */
  uint64_t id;
  MPI_Comm comm;
  long bytes;
  int wild;          /* an irecv of MPI_ANY_SOURCE or MPI_ANY_TAG */
  int cancel;        /* MPI_Cancel was called on it */
  int twin;          /* an MPI_Isendrecv's send: the next entry of its request is its receive */
  struct kt_tline line; /* its TI line */
  /* Set where the program freed comm before the request completed
   * (MPI allows it; the handle is then invalid): comm is MPI_COMM_NULL,
   * ocomm is the archive's number of it (ko_pin), wtab is its world
   * ranks (nw of them) for a receive from MPI_ANY_SOURCE. */
  int gone, nw;
  uint32_t ocomm;
  int *wtab;
  int bsend; /* an MPI_Bsend's: completed at MPI_Buffer_detach (kt_bsent) */
  int freed; /* a receive the program freed (MPI_Request_free): completed at MPI_Finalize */
  int probed; /* a matched probe's receive (kt_probed), not yet received: completed at MPI_Finalize */
  int posted; /* completed as posted, its status not read (kt_persist) */
};
static struct kt_req *kt_reqs;
static int kt_nreq, kt_capreq;
static uint64_t kt_nextid;

/* A rank's trace is one sequence of calls, and the tracer's state is not
 * shared between threads: only the calls of the thread that initialized
 * MPI are recorded, unless MPI_THREAD_SERIALIZED was provided (any thread
 * may call, never two at once). The others are counted, and rank 0 says
 * how many at MPI_Finalize. Calls of other threads happen under
 * MPI_THREAD_MULTIPLE, and under MPI_THREAD_FUNNELED too in programs that
 * break its promise: PT-Scotch's threads call MPI_Allgather while the
 * main thread is inside another call, and recording both raced on the
 * TI buffer (one line written into the middle of another). */
static pthread_t kt_thread; /* the thread that initialized MPI */
static int kt_anythread;    /* MPI_THREAD_SERIALIZED was provided */
static long kt_others;      /* calls of other threads, not recorded (atomic) */
static long kt_others_all;  /* at rank 0, at MPI_Finalize: all the ranks' */

static int kt_on(void) { return kt_active && (kt_anythread || pthread_equal(pthread_self(), kt_thread)); }

/* Lines are formatted by hand into a buffer: fprintf would be most of the
 * tracer's cost per call. kt_line starts "<rank> <action>", kt_num adds
 * " <n>", kt_eol ends the line; they write nothing without a TI trace. */
static char kt_file[1 << 16]; /* the TI file's buffer */
static char *kt_buf = kt_file;  /* where lines go: kt_file, or a non-blocking collective's own (kt_ibegin) */
static size_t kt_len, kt_cap = sizeof kt_file;

static void kr_write(const char *s, size_t n);

/* kt_pend is the computation since the last TI line, in nanoseconds:
 * the time between two calls, where at least KAIROS_TRACE_MIN (SMPI drops
 * shorter bursts, smpi/cpu-threshold), summed over the calls that write
 * no line (a probe, a communicator's creation, a one-sided or I/O call),
 * so that a program polling with MPI_Iprobe between its messages writes
 * one computation line between two messages, not one between two probes
 * (millions of lines), for the same replay. */
static uint64_t kt_pend;

static void kt_text(const char *action);

static void kt_comp(void);

static uint64_t kt_written; /* bytes of the TI file written from kt_file */

static void kt_flush(void) {
  if (kt_len > 0 && kt_ti) kr_write(kt_file, kt_len);
  kt_written += kt_len;
  kt_len = 0;
}

/* kt_room makes room for n more bytes: it flushes the file's buffer, or
 * grows a non-blocking collective's. */
static void kt_room(size_t n) {
  if (kt_len + n <= kt_cap) return;
  if (kt_buf == kt_file) {
    kt_flush();
    return;
  }
  kt_cap = 2 * (kt_len + n);
  if (!(kt_buf = realloc(kt_buf, kt_cap))) abort();
}

/* kt_put writes n bytes of lines kept aside into the file's buffer. */
static void kt_put(const char *s, size_t n) {
  if (kt_pend) kt_comp();
  if (kt_len + n > kt_cap) kt_flush();
  if (n > kt_cap) {
    if (kt_ti) kr_write(s, n);
    kt_written += n;
    return;
  }
  memcpy(kt_buf + kt_len, s, n);
  kt_len += n;
}

/* kt_digits writes v in decimal. */
static void kt_digits(long v) {
  char tmp[24];
  int i = 0;
  unsigned long u = v < 0 ? -(unsigned long)v : (unsigned long)v;
  do tmp[i++] = (char)('0' + u % 10);
  while ((u /= 10) != 0);
  kt_room(i + 1);
  if (v < 0) kt_buf[kt_len++] = '-';
  while (i > 0) kt_buf[kt_len++] = tmp[--i];
}

static void kt_num(long v) {
  if (!kt_ti) return;
  kt_room(1);
  kt_buf[kt_len++] = ' ';
  kt_digits(v);
}

/* kt_line starts the line of an action, after the pending computation
 * where it goes to the file (not to a non-blocking collective's buffer,
 * whose line is put in the file later, kt_put). */
static void kt_line(const char *action) {
  if (!kt_ti) return;
  if (kt_pend && kt_buf == kt_file) kt_comp();
  kt_text(action);
}

static void kt_text(const char *action) {
  size_t n = strlen(action);
  kt_digits(kt_rank);
  kt_room(n + 1);
  kt_buf[kt_len++] = ' ';
  memcpy(kt_buf + kt_len, action, n);
  kt_len += n;
}

static void kt_eol(void) {
  if (!kt_ti) return;
  kt_room(1);
  kt_buf[kt_len++] = '\n';
}

/* kt_p2p writes "<action> <peer> <tag> <bytes>". */
static void kt_p2p(const char *action, int peer, int tag, long bytes) {
  kt_line(action);
  kt_num(peer);
  kt_num(tag);
  kt_num(bytes);
  kt_eol();
}

/* kt_keyed writes "<action> <src> <dst> <tag>", the wait or test of the
 * request of that key. */
static void kt_keyed(const char *action, int src, int dst, int tag) {
  kt_line(action);
  kt_num(src);
  kt_num(dst);
  kt_num(tag);
  kt_eol();
}

/* kt_coll writes a collective's action and its n arguments. */
static void kt_coll(const char *action, int n, const long *args) {
  kt_line(action);
  for (int i = 0; i < n; i++) kt_num(args[i]);
  kt_eol();
}

/* kt_pos returns the offset in the rank's TI file of the next byte of the
 * file's buffer. */
static uint64_t kt_pos(void) {
  if (kt_pend && kt_buf == kt_file) kt_comp(); /* a line is written here next */
  return kt_written + kt_len;
}

/* kt_pad writes n spaces, room for a line to be rewritten longer. */
static void kt_pad(int n) {
  if (!kt_ti) return;
  kt_room(n);
  memset(kt_buf + kt_len, ' ', n);
  kt_len += n;
}

static long kt_unpatched; /* lines that could not be rewritten */
static long kn_written;   /* neighborhood collectives written as their messages (kn_messages) */

/* kr_resign is set when a line already written (and signed) is
 * rewritten: the in-situ reduction then signs the rank's file again,
 * as written, at MPI_Finalize (kr_resign_file). */
static int kr_resign;

/* kt_patch overwrites n bytes at offset off of the TI file: in the file's
 * buffer or, where they were written already, in the file (unbuffered). */
static int kt_repatch(uint64_t off, const char *s, size_t n);

static void kt_patch(uint64_t off, const char *s, size_t n) {
  if (!kt_ti) return;
  if (off < kt_written) {
    size_t m = off + n <= kt_written ? n : (size_t)(kt_written - off);
    if (!kt_repatch(off, s, m)) kt_unpatched++;
    off += m, s += m, n -= m;
  }
  if (n > 0) memcpy(kt_file + (off - kt_written), s, n);
}

/* The OTF2 records, written by the functions of the OTF2 section below,
 * which do nothing in a tracer built without OTF2. */
static void ko_enter(int region, uint64_t t);
static void ko_leave(int region, uint64_t t);

/* kt_shortest writes v into s (room bytes, 32 or more) as the shorter of
 * %.15g and %.17g that reads back as v: 0.3, not 0.29999999999999999. It
 * returns the length written. */
static int kt_shortest(char *s, size_t room, double v) {
  int n = snprintf(s, room, "%.15g", v);
  if (strtod(s, NULL) != v) n = snprintf(s, room, "%.17g", v);
  return n;
}

/* kt_flops writes into s (room bytes, 40 or more) the flops of ns
 * nanoseconds at speed flop/s, ns x speed / 1e9, as the exact decimal
 * where the speed is a whole number (every realistic one: 1e9, 2.5e9,
 * 1.7e9), so that no line reads 3235.0000000000005 (seconds x speed) or
 * 5.0999999999999996 (%.17g of ns x 1.7); otherwise as kt_shortest
 * writes it. It returns the length written. */
static int kt_flops(char *s, size_t room, uint64_t ns, double speed) {
#ifdef __SIZEOF_INT128__
  if (speed >= 1 && speed < 1.8e19 && speed == (double)(uint64_t)speed) {
    unsigned __int128 f = (unsigned __int128)ns * (uint64_t)speed, whole = f / 1000000000u;
    unsigned frac = (unsigned)(f % 1000000000u);
    if (whole <= UINT64_MAX) {
      int n = snprintf(s, room, "%llu", (unsigned long long)whole);
      if (frac) {
        n += snprintf(s + n, room - (size_t)n, ".%09u", frac);
        while (s[n - 1] == '0') s[--n] = 0;
      }
      return n;
    }
  }
#endif
  return kt_shortest(s, room, (double)ns * speed / 1e9);
}

/* kt_comp writes the pending computation before the next line of the TI
 * file. */
static void kt_comp(void) {
  uint64_t ns = kt_pend;
  kt_pend = 0;
  if (!kt_ti || ns == 0) return;
  kt_text("compute");
  kt_room(48);
  kt_buf[kt_len++] = ' ';
  kt_len += (size_t)kt_flops(kt_buf + kt_len, 47, ns, kt_speed);
  kt_eol();
}

/* kt_enter starts a call of region: it adds the computation since the
 * last call returned to the pending one (kt_pend), and writes the OTF2
 * Enter. */
static void kt_enter(int region) {
  if (!kt_on()) {
    if (kt_active) __atomic_fetch_add(&kt_others, 1, __ATOMIC_RELAXED);
    return;
  }
  kt_t0 = kt_now();
  kt_t1 = 0;
  kt_region = region;
  uint64_t ns = kt_cpuclock ? kt_cpu() - kt_cpu_last : kt_t0 - kt_last;
  if ((double)ns * 1e-9 >= kt_min) kt_pend += ns;
  ko_enter(region, kt_t0);
}

/* What the TI trace cannot express is counted by call (kt_lose), with the
 * time inside those calls, which its replay has as neither communication
 * nor computation; MPI_Finalize's summary (kt_summary) adds them up over
 * the ranks, by kind (kt_lost_kind). The collectives on a communicator
 * with processes of another MPI world (merged from an intercommunicator
 * to the processes MPI_Comm_spawn started) are counted apart
 * (kt_lost_far_n): no trace of this world has their messages. */
static long kt_lost_n[R_NREGIONS], kt_lost_far_n[R_NREGIONS];
static double kt_lost_s[R_NREGIONS], kt_lost_far_s[R_NREGIONS];
static int kt_losing;     /* the current call is one of them: 1, or 2 for one with another world */
/* kt_probe_n and kt_probe_s count the probes and the time in them, which
 * the summary gives too: TI has no probe, and a replay has that time as
 * neither communication nor computation (HyPhy's master, polling with
 * MPI_Iprobe, spent 4.7 s of its 7.4 there). */
static long kt_probe_n;
static double kt_probe_s;
static uint64_t kt_began; /* the end of MPI_Init */

/* kt_lose_as counts the current call as one the TI trace leaves out, one
 * with processes of another MPI world if far. */
static void kt_lose_as(int far) {
  if (!kt_ti || kt_losing) return;
  if (far)
    kt_lost_far_n[kt_region]++;
  else
    kt_lost_n[kt_region]++;
  kt_losing = far ? 2 : 1;
}

/* kt_lose counts the current call as one the TI trace leaves out. */
static void kt_lose(void) { kt_lose_as(0); }

static void kt_leave(void) {
  if (!kt_on()) return;
  kt_last = kt_end();
  if (kt_cpuclock) kt_cpu_last = kt_cpu();
  ko_leave(kt_region, kt_last);
  if (kt_losing == 2)
    kt_lost_far_s[kt_region] += (double)(kt_last - kt_t0) * 1e-9;
  else if (kt_losing)
    kt_lost_s[kt_region] += (double)(kt_last - kt_t0) * 1e-9;
  kt_losing = 0;
}

/* kt_bytes is the size of count elements of t. MPI_Type_size_x, since a
 * type of 2 GiB or more has no int size: MPI_Type_size gives
 * MPI_UNDEFINED (-32766) for it, which was recorded as the bytes (MPICH's
 * io/bigtype writes one such element). */
static long kt_bytes(int count, MPI_Datatype t) {
  MPI_Count size = 0;
  if (t != MPI_DATATYPE_NULL && PMPI_Type_size_x(t, &size) != MPI_SUCCESS) size = 0;
  if (size < 0) size = 0; /* MPI_UNDEFINED: past MPI_Count */
  return (long)count * (long)size;
}

/* kt_got is the bytes a completed receive of elements of t received, from
 * its status: MPI_Get_count gives MPI_UNDEFINED where their number does
 * not fit an int or is not whole, and the status's bytes are then taken. */
static long kt_got(const MPI_Status *st, MPI_Datatype t) {
  int n = 0;
  if (t != MPI_DATATYPE_NULL && PMPI_Get_count(st, t, &n) == MPI_SUCCESS && n != MPI_UNDEFINED) return kt_bytes(n, t);
  MPI_Count b = 0;
  if (PMPI_Get_elements_x(st, MPI_BYTE, &b) != MPI_SUCCESS || b < 0) b = 0;
  return (long)b;
}

/* kt_cinfo is what the tracer asks MPI once of a communicator other than
 * MPI_COMM_WORLD, cached on the communicator as an attribute (kt_info):
 * whether it is congruent with MPI_COMM_WORLD (its collectives are TI's),
 * whether it is an intercommunicator, and the world rank of each of the
 * n processes its point-to-point calls name (its remote group's on an
 * intercommunicator; KT_ELSEWHERE for one of another MPI world). Asked at
 * every call, as before, it cost five group calls a message on a
 * duplicated communicator (PETSc's, PT-Scotch's), which retain and
 * release objects that MPI does not lock below MPI_THREAD_MULTIPLE, where
 * a program's own threads may be inside MPI too. An attribute, unlike a
 * table of handles, dies with its communicator, whose handle may name
 * another later. */
struct kt_cinfo {
  int congruent, inter, n;
  int far; /* some process is of another MPI world */
  int world[];
};
static int kt_keyval = MPI_KEYVAL_INVALID;

static int kt_cinfo_free(MPI_Comm comm, int keyval, void *info, void *extra) {
  (void)comm, (void)keyval, (void)extra;
  free(info);
  return MPI_SUCCESS;
}

static const struct kt_cinfo *kt_info(MPI_Comm comm) {
  void *v = NULL;
  int flag = 0, same = MPI_UNEQUAL, n = 0;
  static const struct kt_cinfo none; /* of a handle MPI refuses: no process */
  if (kt_keyval == MPI_KEYVAL_INVALID) PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, kt_cinfo_free, &kt_keyval, NULL);
  if (comm == MPI_COMM_NULL || PMPI_Comm_get_attr(comm, kt_keyval, &v, &flag) != MPI_SUCCESS) return &none;
  if (flag) return v;
  MPI_Group g, w;
  int inter = 0;
  PMPI_Comm_test_inter(comm, &inter);
  if (inter)
    PMPI_Comm_remote_group(comm, &g);
  else
    PMPI_Comm_group(comm, &g);
  PMPI_Group_size(g, &n);
  struct kt_cinfo *c = malloc(sizeof *c + sizeof c->world[0] * ((size_t)n + 1));
  int *ranks = malloc(sizeof *ranks * ((size_t)n + 1));
  if (!c || !ranks) abort();
  for (int i = 0; i < n; i++) ranks[i] = i;
  PMPI_Comm_group(MPI_COMM_WORLD, &w);
  PMPI_Group_translate_ranks(g, n, ranks, w, c->world);
  PMPI_Group_free(&g);
  PMPI_Group_free(&w);
  free(ranks);
  c->far = 0;
  for (int i = 0; i < n; i++)
    if (c->world[i] == MPI_UNDEFINED) c->world[i] = KT_ELSEWHERE, c->far = 1;
  PMPI_Comm_compare(comm, MPI_COMM_WORLD, &same);
  c->congruent = same == MPI_IDENT || same == MPI_CONGRUENT;
  c->inter = inter, c->n = n;
  PMPI_Comm_set_attr(comm, kt_keyval, c);
  return c;
}

/* kt_world returns comm's rank r (of its remote group on an
 * intercommunicator) as a rank of MPI_COMM_WORLD, or KT_ELSEWHERE for a
 * process of another MPI world (one MPI_Comm_spawn started or
 * MPI_Comm_connect joined, reached by an intercommunicator or a
 * communicator merged from one), whose rank TI cannot name: a call with
 * it is left out, and counted (kt_lose), as collectives on
 * sub-communicators are. */
static int kt_world(MPI_Comm comm, int r) {
  if (r == MPI_ANY_SOURCE) return KT_ANY_SOURCE;
  if (r == MPI_PROC_NULL || comm == MPI_COMM_WORLD) return r;
  const struct kt_cinfo *c = kt_info(comm);
  return r >= 0 && r < c->n ? c->world[r] : KT_ELSEWHERE;
}

/* kt_elsewhere reports whether comm is an intercommunicator whose remote
 * group is another MPI world's (kt_world): a receive from any source on
 * it is from another world. */
static int kt_elsewhere(MPI_Comm comm) {
  if (comm == MPI_COMM_WORLD) return 0;
  const struct kt_cinfo *c = kt_info(comm);
  return c->inter && (c->n == 0 || c->world[0] == KT_ELSEWHERE);
}

static int kt_tag(int tag) { return tag == MPI_ANY_TAG ? KT_ANY_TAG : tag; }

/* Non-blocking collectives (MPI_Ibcast, MPI_Iallreduce...) are recorded as
 * the blocking ones: TI has no non-blocking collective, nor has SimGrid's
 * replay. A call's TI line is kept aside and written where the collective
 * completes (its wait, or the test that finds it done), after the
 * computation it overlapped; or before, where a collective called after
 * it completes, so that every rank's trace has the collectives in the
 * order MPI makes all ranks call them, whatever order each rank completes
 * them in. The OTF2 archive has Score-P's records: a
 * NonBlockingCollectiveRequest in the call, a NonBlockingCollectiveComplete
 * where it completes. */
/* KN_TAG is the tag of a neighborhood collective's messages in both
 * traces: the largest every MPI allows (MPI_TAG_UB is at least 32767),
 * which a program's own messages seldom use. */
enum { KN_TAG = 32767 };

/* kn_msg is a message of a neighborhood collective (kn_messages): an
 * isend (send) or irecv of request id with world rank peer, in the OTF2
 * archive as Score-P records a program's own, completed where the
 * collective completes. */
struct kn_msg {
  uint64_t id;
  int send, peer;
  long bytes;
};
static void ko_kn(const struct kn_msg *m, int done);

struct kt_icoll {
  MPI_Request req;
  uint64_t id;
  int done;             /* completed (or freed): its request may name another */
  struct kn_msg *msgs;  /* a neighborhood collective's messages, whose completions */
  int nmsgs;            /* are its OTF2 records (no collective's) */
  char *ti;    /* its TI line, until written; NULL if none */
  size_t len;  /* of ti */
  int op;      /* the OTF2 completion's operation, root, communicator, bytes, count vectors */
  uint32_t root, comm, sv, rv;
  uint64_t sent, recv;
  int persist; /* a persistent collective's records, kept for its starts (kt_pcbegin) */
  uint32_t seq; /* a persistent collective's: its init call's place among them (kt_pstart) */
  int unreq;    /* a persistent collective's start whose OTF2 request is not written yet (kt_ireqs) */
};
static struct kt_icoll *kt_icolls; /* in the order of their calls */
static int kt_nicoll, kt_capicoll;
static struct kt_icoll *kt_icur; /* the one whose call is being recorded */
static size_t kt_filelen;        /* the file buffer's length meanwhile */

/* kt_inew adds a pending non-blocking collective of request req. */
static struct kt_icoll *kt_inew(MPI_Request req) {
  if (kt_nicoll == kt_capicoll) {
    kt_capicoll = kt_capicoll ? 2 * kt_capicoll : 16;
    kt_icolls = realloc(kt_icolls, kt_capicoll * sizeof *kt_icolls);
    if (!kt_icolls) abort();
  }
  struct kt_icoll *c = &kt_icolls[kt_nicoll++];
  *c = (struct kt_icoll){.req = req, .id = ++kt_nextid};
  return c;
}

/* kt_ibegin starts recording the non-blocking collective of request req,
 * whose call returned err; it reports whether to record it. Until kt_iend,
 * its TI line goes to a buffer of its own. */
static int kt_ibegin(int err, MPI_Request req) {
  if (!kt_on() || err != MPI_SUCCESS) return 0;
  kt_icur = kt_inew(req);
  kt_filelen = kt_len;
  kt_buf = NULL, kt_len = 0, kt_cap = 0;
  return 1;
}

/* kt_iend ends the recording kt_ibegin started. */
static void kt_iend(void) {
  kt_icur->ti = kt_buf, kt_icur->len = kt_len;
  if (kt_len == 0) free(kt_buf), kt_icur->ti = NULL; /* not MPI_COMM_WORLD's, or no TI trace */
  kt_buf = kt_file, kt_len = kt_filelen, kt_cap = sizeof kt_file;
  kt_icur = NULL;
}

/* kt_iwrite writes the TI lines of the first n non-blocking collectives
 * called and forgets those that are done. */
static void kt_iwrite(int n) {
  int k = 0;
  for (int i = 0; i < kt_nicoll; i++) {
    struct kt_icoll *c = &kt_icolls[i];
    if (i < n && c->ti) {
      kt_put(c->ti, c->len);
      free(c->ti);
      c->ti = NULL;
    }
    if (!c->done || c->ti) kt_icolls[k++] = *c;
  }
  kt_nicoll = k;
}

static void ko_icomplete(const struct kt_icoll *c);
static void ko_irequest(const struct kt_icoll *c);
static void ko_tested(uint64_t id);

/* kt_icomplete records the completion (done) or a test that found it not
 * done of req if it is a pending non-blocking collective; it reports
 * whether it was. */
static int ks_complete(MPI_Request req, int done);

static void ko_idone(MPI_Request req);

/* kt_ireqs writes the OTF2 requests of the persistent collectives started
 * and not yet requested (kt_pstart), in the order they are kept in. */
static void kt_ireqs(void) {
  for (int i = 0; i < kt_nicoll; i++)
    if (kt_icolls[i].unreq) {
      ko_irequest(&kt_icolls[i]);
      kt_icolls[i].unreq = 0;
    }
}

static int kt_icomplete(MPI_Request req, int done) {
  kt_ireqs();
  if (done) ko_idone(req);
  if (ks_complete(req, done)) return 1; /* a request-based one-sided call's, or non-blocking I/O's */
  for (int i = 0; i < kt_nicoll; i++) {
    struct kt_icoll *c = &kt_icolls[i];
    if (c->done || c->req != req) continue;
    if (!done) {
      if (!c->msgs) ko_tested(c->id);
      return 1;
    }
    c->done = 1;
    if (c->msgs) {
      for (int k = 0; k < c->nmsgs; k++) ko_kn(&c->msgs[k], 1);
      free(c->msgs);
      c->msgs = NULL;
    } else {
      ko_icomplete(c);
    }
    kt_iwrite(i + 1);
    return 1;
  }
  return 0;
}

/* kt_world_coll reports whether a collective on comm, about to be
 * recorded, is one of MPI_COMM_WORLD, the only collectives TI can express
 * (the others are counted when a TI trace is written). A blocking one on
 * any communicator first writes the lines of the non-blocking ones called
 * before it (Kairos' OTF2 reader places them alike: it cannot know their
 * communicators before they complete). */
static int kt_world_coll(MPI_Comm comm) {
  kt_ireqs();
  if (!kt_icur) kt_iwrite(kt_nicoll);
  if (comm == MPI_COMM_WORLD || kt_info(comm)->congruent) return 1;
  kt_lose_as(kt_info(comm)->far);
  return 0;
}

/* KT_ROOM is the room a line of a receive from MPI_ANY_SOURCE or with
 * MPI_ANY_TAG is written with: that of the matched source and tag in
 * place of -555 and -444. SimGrid's replay and Kairos' reader ignore
 * spaces at the end of a line. */
enum { KT_ROOM = 14 };

/* kt_post writes the isend or irecv line of a request just started (to or
 * from world rank peer) and records the request; it returns the request
 * id of its OTF2 records. */
static uint64_t kt_post(MPI_Request req, int send, int peer, int lpeer, int tag, long bytes, MPI_Comm comm) {
  if (kt_nreq == kt_capreq) {
    kt_capreq = kt_capreq ? 2 * kt_capreq : 64;
    kt_reqs = realloc(kt_reqs, kt_capreq * sizeof *kt_reqs);
    if (!kt_reqs) abort();
  }
  struct kt_req *r = &kt_reqs[kt_nreq++];
  *r = (struct kt_req){.req = req, .send = send, .src = send ? kt_rank : peer, .dst = send ? peer : kt_rank,
                       .lsrc = lpeer, .tag = tag, .id = ++kt_nextid, .comm = comm, .bytes = bytes,
                       .wild = !send && (peer == KT_ANY_SOURCE || tag == KT_ANY_TAG)};
  uint64_t at = kt_pos();
  kt_line(send ? "isend" : "irecv");
  kt_num(peer);
  kt_num(tag);
  kt_num(bytes);
  if (r->wild) kt_pad(KT_ROOM);
  kt_eol();
  if (kt_ti) r->line = (struct kt_tline){at, (uint32_t)(kt_pos() - at)};
  return r->id;
}

/* kt_relines rewrites request r's line in place: with its key (the
 * source and tag a wildcard receive matched), or, if blank, as a blank
 * line (a cancelled request is no TI action). The line keeps its length,
 * so that the lines written since stay where they are. */
static void kt_relines(const struct kt_req *r, int blank) {
  char text[160];
  size_t len = r->line.len;
  int n = 0;
  if (len == 0) return;
  if (!blank)
    n = snprintf(text, sizeof text, "%d %s %d %d %ld", kt_rank, r->send ? "isend" : "irecv", r->send ? r->dst : r->src,
                 r->tag, r->bytes);
  if (n < 0 || (size_t)n >= len || len > sizeof text) {
    kt_unpatched++;
    return;
  }
  memset(text + n, ' ', len - 1 - n);
  text[len - 1] = '\n';
  kt_patch(r->line.off, text, len);
}

/* kt_find returns the index of req among the pending requests, or -1. */
static int kt_find(MPI_Request req) {
  for (int i = 0; i < kt_nreq; i++)
    if (kt_reqs[i].req == req) return i;
  return -1;
}

static void kt_drop(int i) {
  free(kt_reqs[i].wtab);
  memmove(kt_reqs + i, kt_reqs + i + 1, (kt_nreq - i - 1) * sizeof *kt_reqs);
  kt_nreq--;
}

static void ko_complete(const struct kt_req *r, const MPI_Status *st);
static void ko_cancelled(uint64_t id);
static void ko_pin(struct kt_req *r);

/* kt_req_world returns the world rank of rank lr of request r's
 * communicator, from the table kept where the program freed it. */
static int kt_req_world(const struct kt_req *r, int lr) {
  if (!r->gone) return kt_world(r->comm, lr);
  if (lr == MPI_ANY_SOURCE) return KT_ANY_SOURCE;
  if (lr == MPI_PROC_NULL) return lr;
  return r->wtab && lr >= 0 && lr < r->nw ? r->wtab[lr] : KT_ELSEWHERE;
}

/* kt_freeing prepares the pending requests on comm, which the program is
 * freeing, to complete without it: what their completions need of it
 * (the archive's name of it, its world ranks for a receive from any
 * source) is kept with them, as MPI keeps the communicator itself until
 * they complete. Asking MPI about the freed handle at the completion
 * crashed Open MPI (MPICH's comm/cmfree2). */
static void kt_freeing(MPI_Comm comm) {
  for (int i = 0; i < kt_nreq; i++) {
    struct kt_req *r = &kt_reqs[i];
    if (r->gone || r->comm != comm || comm == MPI_COMM_WORLD) continue;
    if (r->src == KT_ANY_SOURCE) {
      const struct kt_cinfo *c = kt_info(comm);
      r->wtab = malloc((c->n > 0 ? c->n : 1) * sizeof *r->wtab);
      if (!r->wtab) abort();
      if (c->n > 0) memcpy(r->wtab, c->world, c->n * sizeof *r->wtab);
      r->nw = c->n;
    }
    ko_pin(r);
    r->gone = 1;
    r->comm = MPI_COMM_NULL;
  }
}

/* Calls that change what is recorded, counted for the summary at
 * MPI_Finalize: requests cancelled (left out of both traces, as if never
 * started) and active requests freed (their completions are not seen). */
static long kt_ncancelled, kt_nfreed;

/* kt_settle settles pending request i, completed with status st. A
 * cancelled one (MPI_Test_cancelled, where MPI_Cancel was called) is
 * forgotten, its lines blanked and its OTF2 MpiRequestCancelled written,
 * as Score-P does: kt_settle reports it. Otherwise a receive from
 * MPI_ANY_SOURCE or with MPI_ANY_TAG takes the source and tag it
 * matched, in its lines too, so that the replay receives the message the
 * program did and its wait finds it (SimGrid's replay keys requests by
 * source and tag). */
static int kt_settle(int i, const MPI_Status *st) {
  struct kt_req *r = &kt_reqs[i];
  int cancelled = 0;
  if (r->cancel && st) PMPI_Test_cancelled(st, &cancelled);
  if (cancelled) {
    kt_relines(r, 1);
    ko_cancelled(r->id);
    kt_ncancelled++;
    kt_drop(i);
    return 1;
  }
  if (r->wild && st) {
    if (r->src == KT_ANY_SOURCE) r->src = kt_req_world(r, st->MPI_SOURCE);
    if (r->tag == KT_ANY_TAG) r->tag = st->MPI_TAG;
    r->wild = 0;
    kt_relines(r, 0);
  }
  return 0;
}

/* Receives still pending at MPI_Finalize, counted for the summary: those
 * a message had matched, completed there, and those none had, left out. */
static long kt_nlatewait, kt_nleftout;

/* kt_unfinished settles, at MPI_Finalize, the receives the program never
 * completed, and the requests it cancelled without completing them
 * (ABySS cancels its last receive from any source and finalizes; MPI
 * requires the completion). A replay waits at a rank's end for the
 * requests it left, and a receive nothing matched, or one from
 * MPI_ANY_SOURCE whose source no completion told, would never end
 * there. The tracer completes each: a cancelled one is blanked as any
 * cancelled request; a receive a message had matched is written as a
 * wait in MPI_Finalize (the message is in the trace); one none had is
 * cancelled, and in neither trace. Isends the program left are kept:
 * their receives are in the trace, and a replay waits for them. */
static void kt_unfinished(void) {
  for (int i = kt_nreq - 1; i >= 0; i--) {
    struct kt_req *r = &kt_reqs[i];
    if (r->send && !r->cancel) continue;
    MPI_Request q = r->req; /* the program's handle is not used after MPI_Finalize */
    MPI_Status st;
    int done = 0, ours = 0;
    PMPI_Test(&q, &done, &st);
    if (!done && !r->send) {
      PMPI_Cancel(&q);
      PMPI_Wait(&q, &st);
      done = 1, ours = !r->cancel, r->cancel = 1;
    }
    if (!done) continue;
    if (kt_settle(i, &st)) {
      if (ours) kt_ncancelled--, kt_nleftout++;
      continue;
    }
    kt_keyed("wait", r->src, r->dst, r->tag);
    ko_complete(r, &st);
    kt_drop(i);
    kt_nlatewait++;
  }
}

/* kt_done writes the wait of pending request i, completed with status st,
 * and its OTF2 completion, and forgets it. */
static void kt_done(int i, const MPI_Status *st) {
  struct kt_req *r = &kt_reqs[i];
  if (kt_settle(i, st)) return;
  kt_keyed("wait", r->src, r->dst, r->tag);
  ko_complete(r, st);
  kt_drop(i);
}

/* kt_wait writes "wait src dst tag" for a pending request that a call
 * completed, and its OTF2 completion with status st, and forgets it. A
 * non-blocking collective's completion is kt_icomplete's. */
static void kt_wait(MPI_Request req, const MPI_Status *st) {
  if (kt_icomplete(req, 1)) return;
  int i = kt_find(req);
  if (i < 0) return; /* not an isend or irecv of ours */
  int twin = kt_reqs[i].twin;
  kt_done(i, st);
  /* An MPI_Isendrecv's receive, after its send: as posted, unless it is a
   * wildcard's, since MPICH 4.0 leaves the request's status empty (source
   * and tag 0, no bytes). */
  if (twin && (i = kt_find(req)) >= 0) kt_done(i, kt_reqs[i].wild ? st : NULL);
}

static int ko_open(const char *dir);
static void ko_start(void);
static void ko_close(void);

/* kt_all reports whether ok holds on every rank. */
static int kt_all(int ok) {
  int all = 0;
  PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all;
}

/* kt_formats sets which traces are written, from KAIROS_TRACE_FORMAT. */
static void kt_formats(int *ti, int *otf2) {
  const char *f = getenv("KAIROS_TRACE_FORMAT");
#ifdef KAIROS_OTF2
  if (!f || !*f) f = "otf2";
#else
  if (!f || !*f) f = "ti";
#endif
  *ti = strstr(f, "ti") != NULL;
  *otf2 = strstr(f, "otf2") != NULL;
  if (!*ti && !*otf2) {
    if (kt_rank == 0) fprintf(stderr, "kairos_trace: KAIROS_TRACE_FORMAT=%s: want ti, otf2 or ti,otf2; writing ti\n", f);
    *ti = 1;
  }
#ifndef KAIROS_OTF2
  if (*otf2) {
    if (kt_rank == 0)
      fprintf(stderr, "kairos_trace: KAIROS_TRACE_FORMAT=%s: this tracer was built without OTF2 (-DKAIROS_OTF2 ... -lotf2)%s\n", f,
              *ti ? "" : "; writing ti");
    *otf2 = 0;
    *ti = 1;
  }
#endif
}

/* In-situ reduction (KAIROS_TRACE_REDUCE=callpath): ScalaTrace's and seed
 * 001's order. Every rank signs its calls while it records them (from the
 * TI lines it writes, which are what `kairos reduce` reads back, so that
 * the signatures are those of the Go cluster package: the exact call path
 * as a 128-bit hash of the sequence of MPI actions, Table 1's parameter
 * components as exact sums, and a reference hash of every parameter with
 * end-points relative); at MPI_Finalize the ranks merge their
 * (signature, ranklist) sets up a binary radix tree (rank r's children
 * 2r+1 and 2r+2) on a duplicate of MPI_COMM_WORLD, rank 0 clusters them as
 * `kairos reduce --method callpath` does and broadcasts the writers, and
 * only one trace per cluster (per distinct reference signature within it,
 * so that every member replays its own calls) is kept: each rank keeps its
 * trace folded in memory (kp_*, below) and only the representatives write
 * theirs, into DIR.partial at MPI_Finalize; the directory is renamed into
 * place only once complete. */

enum { KR_OFF, KR_CALLPATH, KR_REFERENCE, KR_ACURDION, KR_ACURDION2 };
static int kr_method; /* KAIROS_TRACE_REDUCE's */
static int kr_k = 9;   /* KAIROS_TRACE_K: ACURDION's K, and callpath's K (no filtering at or under K sub-clusters) */
static const char *const kr_names[] = {"off", "callpath", "reference", "acurdion", "acurdion2"};
static char kr_dir[4096], kr_tmp[4096 + 16]; /* the trace's directory and the one written during the run */
static int kr_werr;                           /* a write of this rank's trace failed */
static double kr_comp;                        /* the rank's computation, in flops */

/* kr_sig is one rank's signatures; its fields are 8 bytes each, so that
 * two signatures compare with memcmp. */
struct kr_sig {
  uint64_t path[2]; /* the exact call path: a hash of the sequence of MPI actions */
  uint64_t ref[2];  /* the reference signature: every parameter, end-points relative */
  int64_t count_sum, count_n, dest_sum, dest_n, src_sum, src_n;
  uint64_t types; /* Table 1's type and communicator bits */
};
#define KR_WORDS (sizeof(struct kr_sig) / 8)
static struct kr_sig kr_me = {.path = {0xcbf29ce484222325u, 0x84222325cbf29ce4u},
                             .ref = {0xcbf29ce484222325u, 0x9e3779b97f4a7c15u}};

static void kr_hash(uint64_t h[2], const char *s, size_t n) {
  for (size_t i = 0; i < n; i++) {
    h[0] = (h[0] ^ (unsigned char)s[i]) * 0x100000001b3u;
    h[1] = (h[1] + (unsigned char)s[i] + 1) * 0x9e3779b97f4a7c15u;
    h[1] ^= h[1] >> 29;
  }
  h[0] = (h[0] ^ 0xff) * 0x100000001b3u; /* the end of a token */
  h[1] = (h[1] + 0x100) * 0x9e3779b97f4a7c15u;
  h[1] ^= h[1] >> 29;
}

static void kr_hash_num(uint64_t h[2], long v) {
  char tmp[sizeof v];
  memcpy(tmp, &v, sizeof v);
  kr_hash(h, tmp, sizeof v);
}

/* The rank's calls folded into loops, as prsd.Shape folds them for
 * cluster.Sign (ScalaTrace's intra-node compression without parameters):
 * each call (its TI action) is appended to the sequence, and the end of
 * the sequence is folded whenever it repeats, within a window of
 * KC_WINDOW items: a body that repeats the loop just before it adds an
 * iteration (an RSD), a body seen twice in a row becomes a loop of two,
 * loops of loops are power-RSDs; a call that repeats the next one of the
 * last loop's body is held until its iteration is complete. A loop keeps
 * its closed instances' iteration counts as their number, sum and last
 * (what ACURDION's loop signature and the folding read), so that the
 * state is constant in the number of iterations. This is the same
 * algorithm as prsd's compressor, step for step, so that the loop
 * signature matches (the differential test holds them to it). */
#define KC_WINDOW 64

/* With KAIROS_TRACE_REDUCE, a second folder keeps the rank's trace itself
 * (kp_*, below): its items are whole TI lines (the call with its
 * parameters, end-points as the rank's own: equal lines of one rank are
 * equal relatively too), each with the statistics of the computation after
 * it, and its loops keep every instance's iteration count (as runs of equal
 * counts), so that it expands back into the rank's calls in order. */
struct kc_bin {
  int32_t level;  /* (1+KC_EPS)^level <= v < (1+KC_EPS)^(level+1); INT32_MIN: 0 */
  int64_t n;
  double sum;
};
struct kc_stat {
  int64_t n;             /* instances */
  double sum, min, max;  /* the flops computed after the call, before the next */
  struct kc_bin *bins;   /* their histogram, by level (a single instance's: none) */
  int nbins, capbins;
  struct kc_bin *seq;    /* their levels in order, as runs, while at most KC_RUNS */
  int nseq, capseq, unordered;
};
#define KC_RUNS 32
#define KC_EPS 0.02
struct kc_run {
  int64_t v, reps; /* reps instances of v iterations */
};

struct kc_node {
  int32_t id;             /* the call's action, or the loop's body's ids (interned) */
  int nbody;              /* a loop: its body's length (0: a call) */
  struct kc_node **body;  /* a loop's body */
  int64_t cur;            /* the iterations of a top-level loop's open instance */
  int64_t n, sum, last;   /* the closed instances' iteration counts */
  struct kc_stat comp;    /* a call's computations (the trace's folder) */
  struct kc_run *runs;    /* a loop's closed instances' counts, in order (the trace's folder) */
  int nruns, capruns;
  int64_t at, left;       /* the expansion's cursor in runs */
  int64_t k, step, off;   /* the expansion's instances of a call, and their order (kp_comp) */
};

#define KC_GROW(p, n, cap)                                  \
  do {                                                      \
    if ((n) == (cap)) {                                     \
      (cap) = 2 * (cap) + 16;                               \
      if (!((p) = realloc((p), (cap) * sizeof *(p)))) abort(); \
    }                                                       \
  } while (0)

/* The identities of calls and loops: byte strings numbered as met. */
struct kc_ient {
  char *key;
  size_t len;
  int32_t id;
};
static struct kc_ient *kc_tab;
static size_t kc_tcap, kc_tused, kc_tbytes;
static int32_t kc_next;

static size_t kc_hashkey(const char *k, size_t n) {
  uint64_t h = 0xcbf29ce484222325u;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)k[i]) * 0x100000001b3u;
  return (size_t)(h ^ h >> 29);
}

/* kc_keys[id] is id's key (ids are numbered from 0 as met). */
static struct kc_ient *kc_keys;
static int32_t kc_ckeys;

static int32_t kc_intern(const char *key, size_t len) {
  if (2 * (kc_tused + 1) > kc_tcap) {
    size_t cap = kc_tcap ? 2 * kc_tcap : 256;
    struct kc_ient *t = calloc(cap, sizeof *t);
    if (!t) abort();
    for (size_t i = 0; i < kc_tcap; i++)
      if (kc_tab[i].key) {
        size_t j = kc_hashkey(kc_tab[i].key, kc_tab[i].len) & (cap - 1);
        while (t[j].key) j = (j + 1) & (cap - 1);
        t[j] = kc_tab[i];
      }
    free(kc_tab);
    kc_tab = t, kc_tcap = cap;
  }
  size_t j = kc_hashkey(key, len) & (kc_tcap - 1);
  for (; kc_tab[j].key; j = (j + 1) & (kc_tcap - 1))
    if (kc_tab[j].len == len && memcmp(kc_tab[j].key, key, len) == 0) return kc_tab[j].id;
  if (!(kc_tab[j].key = malloc(len ? len : 1))) abort();
  memcpy(kc_tab[j].key, key, len);
  kc_tab[j].len = len, kc_tab[j].id = kc_next++;
  kc_tused++, kc_tbytes += len;
  KC_GROW(kc_keys, kc_tab[j].id, kc_ckeys);
  kc_keys[kc_tab[j].id] = kc_tab[j];
  return kc_tab[j].id;
}

/* A folder's state: the sequence, and the calls held by prediction (the
 * body's calls they repeat and their computations, the walk of the body,
 * the inner loops' instances it completed). */
struct kc_frame {
  struct kc_node *loop;
  int pos;
  int64_t iter, want;
};
struct kc_done {
  struct kc_node *loop;
  int64_t count;
};
struct kc {
  int trace; /* the trace's folder: statistics and counts kept */
  struct kc_node **seq;
  int n, cap;
  struct kc_frame *path;
  int npath, cpath;
  struct kc_node **targets;
  struct kc_stat *tstats;
  int ntargets, ctargets, cstats;
  struct kc_done *dones;
  int ndone, cdone;
  int32_t *ids;
  int cids;
  size_t bytes, peak; /* the bytes of the nodes alive and their most, for the memory figure */
};
static struct kc kc_sig;            /* the loop signature's: calls by action */
static struct kc kc_trc = {.trace = 1}; /* the trace's: calls by line */

static void kc_mem(struct kc *c, ptrdiff_t d) {
  c->bytes += (size_t)d;
  if (c->bytes > c->peak) c->peak = c->bytes;
}

static void kc_stat_add(struct kc *c, struct kc_stat *a, const struct kc_stat *b);

static struct kc_node *kc_new(struct kc *c, int32_t id, const struct kc_stat *st) {
  struct kc_node *n = calloc(1, sizeof *n);
  if (!n) abort();
  n->id = id;
  if (st) kc_stat_add(c, &n->comp, st);
  kc_mem(c, sizeof *n);
  return n;
}

static void kc_free(struct kc *c, struct kc_node *n) {
  for (int i = 0; i < n->nbody; i++) kc_free(c, n->body[i]);
  kc_mem(c, -(ptrdiff_t)(sizeof *n + (size_t)n->nbody * sizeof *n->body + (size_t)n->capruns * sizeof *n->runs +
                         (size_t)(n->comp.capbins + n->comp.capseq) * sizeof *n->comp.bins));
  free(n->body), free(n->runs), free(n->comp.bins), free(n->comp.seq), free(n);
}

/* kc_series appends reps instances of v iterations to loop n's counts. */
static void kc_series(struct kc *c, struct kc_node *n, int64_t v, int64_t reps) {
  if (!c->trace || reps == 0) return;
  if (n->nruns > 0 && n->runs[n->nruns - 1].v == v) {
    n->runs[n->nruns - 1].reps += reps;
    return;
  }
  if (n->nruns == n->capruns) {
    int cap = 2 * n->capruns + 1;
    if (!(n->runs = realloc(n->runs, cap * sizeof *n->runs))) abort();
    kc_mem(c, (ptrdiff_t)(cap - n->capruns) * (ptrdiff_t)sizeof *n->runs);
    n->capruns = cap;
  }
  n->runs[n->nruns++] = (struct kc_run){v, reps};
}

static void kc_count(struct kc *c, struct kc_node *n, int64_t v) {
  n->n++, n->sum += v, n->last = v;
  kc_series(c, n, v, 1);
}

/* kc_level is v's level in the histograms: values of one level are within
 * KC_EPS of each other, relatively. */
static int32_t kc_level(double v) {
  if (!(v > 0)) return INT32_MIN;
  double l = floor(log(v) / log1p(KC_EPS));
  return l < -1e9 ? -1000000000 : l > 1e9 ? 1000000000 : (int32_t)l;
}

/* kc_bin adds n instances of sum sum at level to a's histogram, which
 * stays sorted by level. */
static void kc_bin(struct kc *c, struct kc_stat *a, int32_t level, int64_t n, double sum) {
  int i = a->nbins;
  while (i > 0 && a->bins[i - 1].level > level) i--;
  if (i > 0 && a->bins[i - 1].level == level) {
    a->bins[i - 1].n += n, a->bins[i - 1].sum += sum;
    return;
  }
  if (a->nbins == a->capbins) {
    int cap = 2 * a->capbins + 2;
    if (!(a->bins = realloc(a->bins, cap * sizeof *a->bins))) abort();
    kc_mem(c, (ptrdiff_t)(cap - a->capbins) * (ptrdiff_t)sizeof *a->bins);
    a->capbins = cap;
  }
  memmove(a->bins + i + 1, a->bins + i, (a->nbins - i) * sizeof *a->bins);
  a->bins[i] = (struct kc_bin){level, n, sum};
  a->nbins++;
}

/* kc_stat_add adds the instances of b to a: ScalaTrace's statistics of the
 * computations between calls, here their histogram, KC_EPS wide, which keeps
 * their sum exact, each instance within KC_EPS and the spread of the
 * instances (whose largest the replay's critical path follows). */
/* kc_unorder lets a's order go: its histogram stands for it. */
static void kc_unorder(struct kc *c, struct kc_stat *a) {
  kc_mem(c, -(ptrdiff_t)((size_t)a->capseq * sizeof *a->seq));
  free(a->seq);
  a->seq = NULL, a->nseq = a->capseq = 0, a->unordered = 1;
}

/* kc_seq appends n instances of sum sum at level to a's runs of levels in
 * order; past KC_RUNS runs, the order is let go. */
static void kc_seq(struct kc *c, struct kc_stat *a, int32_t level, int64_t n, double sum) {
  if (a->unordered) return;
  if (a->nseq > 0 && a->seq[a->nseq - 1].level == level) {
    a->seq[a->nseq - 1].n += n, a->seq[a->nseq - 1].sum += sum;
    return;
  }
  if (a->nseq == KC_RUNS) {
    kc_unorder(c, a);
    return;
  }
  if (a->nseq == a->capseq) {
    int cap = a->capseq ? 2 * a->capseq : 2;
    if (!(a->seq = realloc(a->seq, cap * sizeof *a->seq))) abort();
    kc_mem(c, (ptrdiff_t)(cap - a->capseq) * (ptrdiff_t)sizeof *a->seq);
    a->capseq = cap;
  }
  a->seq[a->nseq++] = (struct kc_bin){level, n, sum};
}

static void kc_stat_add(struct kc *c, struct kc_stat *a, const struct kc_stat *b) {
  if (b->n == 0 || !c->trace) return;
  if (a->n == 0 && b->nbins == 0) { /* a call's first instance: no histogram yet */
    a->n = b->n, a->sum = b->sum, a->min = b->min, a->max = b->max;
    return;
  }
  if (a->n > 0 && a->nbins == 0) { /* its second: the first into the histogram and the runs */
    int32_t l = kc_level(a->sum);
    kc_bin(c, a, l, a->n, a->sum);
    kc_seq(c, a, l, a->n, a->sum);
  }
  if (a->n == 0 || b->min < a->min) a->min = b->min;
  if (a->n == 0 || b->max > a->max) a->max = b->max;
  a->n += b->n, a->sum += b->sum;
  if (b->nbins == 0) { /* one instance */
    int32_t l = kc_level(b->sum);
    kc_bin(c, a, l, b->n, b->sum);
    kc_seq(c, a, l, b->n, b->sum);
    return;
  }
  for (int i = 0; i < b->nbins; i++) kc_bin(c, a, b->bins[i].level, b->bins[i].n, b->bins[i].sum);
  if (b->unordered && !a->unordered) kc_unorder(c, a);
  for (int i = 0; i < b->nseq; i++) kc_seq(c, a, b->seq[i].level, b->seq[i].n, b->seq[i].sum);
}

static int kc_same(struct kc_node **a, struct kc_node **b, int l) {
  for (int i = 0; i < l; i++)
    if (a[i]->id != b[i]->id) return 0;
  return 1;
}

/* kc_closable: a loop at the end of the sequence may still gain
 * iterations, so it folds only onto a loop instance of as many. */
static int kc_closable(const struct kc_node *b, const struct kc_node *t) {
  if (!t->nbody || t->cur == 0) return 1;
  return (b->cur ? b->cur : b->last) == t->cur;
}

/* kc_tobody makes a top-level item a loop body's: a loop's open instance
 * closes. */
static void kc_tobody(struct kc *c, struct kc_node *n) {
  if (n->nbody) kc_count(c, n, n->cur), n->cur = 0;
}

/* kc_merge adds the instances of src, an item of the same identity, to
 * dst, an item of a loop body. */
static void kc_merge(struct kc *c, struct kc_node *dst, const struct kc_node *src) {
  if (!dst->nbody) {
    kc_stat_add(c, &dst->comp, &src->comp);
    return;
  }
  if (src->cur > 0)
    kc_count(c, dst, src->cur);
  else if (src->n > 0) {
    dst->n += src->n, dst->sum += src->sum, dst->last = src->last;
    for (int i = 0; i < src->nruns; i++) kc_series(c, dst, src->runs[i].v, src->runs[i].reps);
  }
  for (int i = 0; i < dst->nbody; i++) kc_merge(c, dst->body[i], src->body[i]);
}

/* kc_fold folds the end of the sequence once and reports whether it did. */
static int kc_fold(struct kc *c) {
  struct kc_node **s = c->seq;
  for (int l = 1; l <= KC_WINDOW && l < c->n; l++) {
    struct kc_node **tail = s + c->n - l, *prev = s[c->n - l - 1];
    if (prev->nbody == l && kc_same(prev->body, tail, l) && kc_closable(prev->body[l - 1], tail[l - 1])) {
      prev->cur++;
      for (int i = 0; i < l; i++) kc_merge(c, prev->body[i], tail[i]), kc_free(c, tail[i]);
      c->n -= l;
      return 1;
    }
    if (2 * l > c->n) continue;
    struct kc_node **first = s + c->n - 2 * l;
    if (!kc_same(first, tail, l) || !kc_closable(first[l - 1], tail[l - 1])) continue;
    struct kc_node *loop = kc_new(c, 0, NULL);
    if (!(loop->body = malloc(l * sizeof *loop->body))) abort();
    kc_mem(c, l * (ptrdiff_t)sizeof *loop->body);
    char *key = malloc(1 + 4 * (size_t)l);
    if (!key) abort();
    key[0] = 1;
    for (int i = 0; i < l; i++) {
      loop->body[i] = first[i];
      kc_tobody(c, first[i]);
      memcpy(key + 1 + 4 * i, &first[i]->id, 4);
    }
    for (int i = 0; i < l; i++) kc_merge(c, loop->body[i], tail[i]), kc_free(c, tail[i]);
    loop->id = kc_intern(key, 1 + 4 * (size_t)l);
    free(key);
    loop->nbody = l, loop->cur = 2;
    c->n -= 2 * l;
    c->seq[c->n++] = loop;
    return 1;
  }
  return 0;
}

static void kc_append(struct kc *c, struct kc_node *n) {
  KC_GROW(c->seq, c->n, c->cap);
  c->seq[c->n++] = n;
  while (kc_fold(c)) {
  }
}

/* kc_predict takes a call that repeats the next call of the body of the
 * loop ending the sequence (walking inner loops, each expected to repeat
 * as often as its last instance did), with its computation st; it
 * reports whether it took it. */
static int kc_predict(struct kc *c, int32_t id, const struct kc_stat *st) {
  if (c->n == 0 || !c->seq[c->n - 1]->nbody) return 0;
  if (c->npath == 0) {
    KC_GROW(c->path, c->npath, c->cpath);
    c->path[c->npath++] = (struct kc_frame){c->seq[c->n - 1], 0, 0, 0};
  }
  struct kc_node *call = NULL;
  while (!call) {
    struct kc_frame *f = &c->path[c->npath - 1];
    if (f->pos == f->loop->nbody) f->iter++, f->pos = 0; /* an inner loop's next iteration */
    struct kc_node *item = f->loop->body[f->pos];
    if (item->nbody) {
      KC_GROW(c->path, c->npath, c->cpath);
      c->path[c->npath++] = (struct kc_frame){item, 0, 0, item->last};
      continue;
    }
    if (item->id != id) return 0;
    call = item;
    f->pos++;
  }
  if (c->ntargets == c->cstats) {
    c->cstats = 2 * c->cstats + 16;
    if (!(c->tstats = realloc(c->tstats, c->cstats * sizeof *c->tstats))) abort();
  }
  c->tstats[c->ntargets] = st ? *st : (struct kc_stat){0};
  KC_GROW(c->targets, c->ntargets, c->ctargets);
  c->targets[c->ntargets++] = call;
  for (;;) {
    struct kc_frame *f = &c->path[c->npath - 1];
    if (f->pos < f->loop->nbody) return 1;
    if (c->npath == 1) break;
    if (f->iter + 1 < f->want) return 1;
    KC_GROW(c->dones, c->ndone, c->cdone);
    c->dones[c->ndone++] = (struct kc_done){f->loop, f->iter + 1};
    c->npath--;
    c->path[c->npath - 1].pos++;
  }
  c->path[0].loop->cur++; /* the iteration is complete */
  for (int i = 0; i < c->ndone; i++) kc_count(c, c->dones[i].loop, c->dones[i].count);
  for (int i = 0; i < c->ntargets; i++) kc_stat_add(c, &c->targets[i]->comp, &c->tstats[i]);
  c->ntargets = c->npath = c->ndone = 0;
  while (kc_fold(c)) {
  }
  return 1;
}

/* kc_flush makes the calls held by prediction items of the sequence.
 * Their identities are read first: appending may fold the loop whose
 * body they repeat into another, and free it. */
static void kc_flush(struct kc *c) {
  if (c->npath == 0) return;
  int n = c->ntargets;
  c->ntargets = c->npath = c->ndone = 0;
  if (n > c->cids) {
    c->cids = n;
    if (!(c->ids = realloc(c->ids, n * sizeof *c->ids))) abort();
  }
  for (int i = 0; i < n; i++) c->ids[i] = c->targets[i]->id;
  for (int i = 0; i < n; i++) kc_append(c, kc_new(c, c->ids[i], &c->tstats[i]));
}

/* kc_add appends a call of identity key, with its computation st. */
static void kc_add(struct kc *c, const char *key, size_t len, const struct kc_stat *st) {
  int32_t id = kc_intern(key, len);
  if (kc_predict(c, id, st)) return;
  kc_flush(c);
  kc_append(c, kc_new(c, id, st));
}

/* kc_push appends a call to the loop signature's folder, by its TI
 * action. */
static void kc_push(const char *action, size_t len) {
  char key[64];
  if (len > sizeof key - 1) len = sizeof key - 1;
  key[0] = 'c';
  memcpy(key + 1, action, len);
  kc_add(&kc_sig, key, len + 1, NULL);
}

/* kc_finish closes the sequence, as if it were the body of a loop of one
 * iteration. */
static void kc_finish(struct kc *c) {
  kc_flush(c);
  for (int i = 0; i < c->n; i++) kc_tobody(c, c->seq[i]);
}

/* kc_height adds the loops of items to ACURDION's loop signature's sums
 * (prsd.Shape.LoopSignature) and returns their greatest height. */
static int kc_height(struct kc_node **items, int n, double sum[4], double num[4]) {
  int h = 0;
  for (int i = 0; i < n; i++) {
    struct kc_node *it = items[i];
    if (!it->nbody) continue;
    int lh = kc_height(it->body, it->nbody, sum, num) + 1, k = (lh < 4 ? lh : 4) - 1;
    sum[k] += (double)it->sum / (double)(it->n > 1 ? it->n : 1);
    num[k]++;
    if (lh > h) h = lh;
  }
  return h;
}

/* kc_loop is ACURDION's loop signature of the finished sequence: the
 * average iteration count of the loops of each height, 16 bits each. */
static uint64_t kc_loop(void) {
  double sum[4] = {0}, num[4] = {0};
  uint64_t sig = 0;
  kc_height(kc_sig.seq, kc_sig.n, sum, num);
  for (int k = 0; k < 4; k++)
    if (num[k] > 0) {
      double v = sum[k] / num[k];
      sig |= (uint64_t)(v < 65535 ? v : 65535) << (16 * k);
    }
  return sig;
}

/* kc_reset empties the sequence (the rank's file is signed again). */
static void kc_reset(struct kc *c) {
  for (int i = 0; i < c->n; i++) kc_free(c, c->seq[i]);
  c->n = c->ntargets = c->npath = c->ndone = 0;
}

/* kc_size is the folder's memory: its nodes at their most, its sequence
 * and the intern table (shared by both folders) with its keys. */
static double kc_size(const struct kc *c) {
  return (double)(c->peak + (size_t)c->cap * sizeof *c->seq + kc_tcap * sizeof *kc_tab + kc_tbytes +
                  (size_t)kc_ckeys * sizeof *kc_keys);
}

/* ACURDION's averaged signatures that the clustering of equal
 * signatures leaves out (sums, in the order of the calls, as
 * cluster.Sign adds them). */
static struct {
  double tag, ntag, color, key, nsplit;
} kr_more;

/* The tokens of the line being signed. */
static const char **kr_tok;
static size_t *kr_toklen;
static int kr_ntok, kr_captok;

static long kr_num(int i) { return i < kr_ntok ? strtol(kr_tok[i], NULL, 10) : 0; }

static long kr_sum(int from, int n) {
  long s = 0;
  for (int i = from; i < from + n && i < kr_ntok; i++) s += kr_num(i);
  return s;
}

static int kr_is(const char *a, const char *b) { return strcmp(a, b) == 0; }

/* kr_sign adds one TI line (without its newline) to the rank's
 * signatures, as cluster.Sign adds the event format/ti reads from it. */
static void kr_sign(char *s, size_t n) {
  kr_ntok = 0;
  for (size_t i = 0; i < n;) {
    while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r')) s[i++] = 0;
    if (i >= n) break;
    if (kr_ntok == kr_captok) {
      kr_captok = 2 * kr_captok + 16;
      kr_tok = realloc(kr_tok, kr_captok * sizeof *kr_tok);
      kr_toklen = realloc(kr_toklen, kr_captok * sizeof *kr_toklen);
      if (!kr_tok || !kr_toklen) abort();
    }
    kr_tok[kr_ntok] = s + i;
    while (i < n && s[i] != ' ' && s[i] != '\t' && s[i] != '\r') i++;
    kr_toklen[kr_ntok] = (size_t)(s + i - kr_tok[kr_ntok]);
    kr_ntok++;
  }
  for (size_t i = 0; i < n; i++)
    if (s[i] == ' ' || s[i] == '\t' || s[i] == '\r') s[i] = 0;
  if (kr_ntok < 2) return;
  const char *a = kr_tok[1];
  if (kr_is(a, "compute") && kr_ntok > 2) kr_comp += strtod(kr_tok[2], NULL);
  if (kr_is(a, "compute") || kr_is(a, "sleep") || kr_is(a, "location")) return;
  if (kr_method >= KR_ACURDION) kc_push(a, kr_toklen[1]); /* the loop signature's structure */
  struct kr_sig *g = &kr_me;
  kr_hash(g->path, a, kr_toklen[1]);
  long sb = 0, rb = 0, dest = -1, src = -1;
  int p2p = 0, coll = 0, svec = 0, rvec = 0, rel1 = 0, rel2 = 0, P = kt_size;
  if (kr_is(a, "send") || kr_is(a, "isend")) {
    p2p = 1, dest = kr_num(2), sb = kr_num(4), rel1 = 2;
  } else if (kr_is(a, "recv") || kr_is(a, "irecv")) {
    p2p = 1, src = kr_num(2), rb = kr_num(4), rel1 = 2;
  } else if (kr_is(a, "wait") || kr_is(a, "test")) {
    rel1 = 2, rel2 = 3;
  } else if (kr_is(a, "sendRecv")) {
    p2p = 1, sb = kr_num(2), dest = kr_num(3), rb = kr_num(4), src = kr_num(5), rel1 = 3, rel2 = 5;
  } else if (kr_is(a, "bcast") || kr_is(a, "reduce") || kr_is(a, "allreduce") || kr_is(a, "scan") ||
             kr_is(a, "exscan")) {
    coll = 1, sb = kr_num(2);
  } else if (kr_is(a, "alltoall") || kr_is(a, "allgather") || kr_is(a, "gather") || kr_is(a, "scatter")) {
    coll = 1, sb = kr_num(2), rb = kr_num(3);
  } else if (kr_is(a, "alltoallv")) {
    coll = 1, sb = kr_num(2), rb = kr_num(3 + P), svec = rvec = 1;
  } else if (kr_is(a, "gatherv") || kr_is(a, "allgatherv")) {
    coll = 1, sb = kr_num(2), rb = kr_sum(3, P), rvec = 1;
  } else if (kr_is(a, "scatterv")) {
    coll = 1, sb = kr_sum(2, P), rb = kr_num(2 + P), svec = 1;
  } else if (kr_is(a, "reducescatter")) {
    coll = 1, rb = kr_sum(2, P), rvec = 1;
  } else if (kr_is(a, "barrier") || kr_is(a, "comm_split") || kr_is(a, "comm_dup")) {
    coll = 1;
  }
  if (src == KT_ANY_SOURCE || src == -333) src = -1;
  /* ACURDION's averaged tag (a wildcard's is none) and communicator
   * splits (TI's comm_split and comm_dup make no communicator: the
   * rank's key is its place in MPI_COMM_WORLD, the colour 0) */
  if (kr_is(a, "send") || kr_is(a, "isend") || kr_is(a, "recv") || kr_is(a, "irecv")) {
    long tag = kr_num(3);
    if (tag >= 0) kr_more.tag += (double)tag, kr_more.ntag++;
  } else if (kr_is(a, "sendRecv")) {
    kr_more.ntag++; /* TI's sendRecv has no tag: 0 */
  } else if (kr_is(a, "comm_split") || kr_is(a, "comm_dup")) {
    kr_more.key += (double)kt_rank, kr_more.nsplit++;
  }
  /* the reference: the action and its arguments, end-points relative
   * (modulo the ranks, as a member replays its representative's) */
  kr_hash(g->ref, a, kr_toklen[1]);
  for (int i = 2; i < kr_ntok; i++) {
    long v = kr_num(i);
    if ((i == rel1 || i == rel2) && v >= 0)
      kr_hash_num(g->ref, ((v - kt_rank) % P + P) % P);
    else
      kr_hash(g->ref, kr_tok[i], kr_toklen[i]);
  }
  /* Table 1's components, exact (counts are bytes: MPI_BYTE, TI's default) */
  if (sb > 0 || rb > 0) {
    g->count_sum += (sb > 0 ? sb : 0) + (rb > 0 ? rb : 0);
    g->count_n++;
  }
  if (dest >= 0) g->dest_sum += dest - kt_rank, g->dest_n++;
  if (src >= 0) g->src_sum += src - kt_rank, g->src_n++;
  if (p2p || coll) {
    if (sb > 0 || svec || rb != 0 || rvec) g->types |= (uint64_t)1 << 52; /* MPI_BYTE */
    g->types |= (uint64_t)1 << 62;                                       /* MPI_COMM_WORLD */
  }
}

/* kr_feed signs the bytes written to the TI file, line by line (a line
 * may span two writes). */
static char *kr_carry;
static size_t kr_clen, kr_ccap;

static void kr_feed(const char *s, size_t n) {
  if (!kr_method) return;
  while (n > 0) {
    const char *nl = memchr(s, '\n', n);
    size_t k = nl ? (size_t)(nl - s) : n;
    if (kr_clen + k + 1 > kr_ccap) {
      kr_ccap = 2 * (kr_clen + k + 1);
      if (!(kr_carry = realloc(kr_carry, kr_ccap))) abort();
    }
    memcpy(kr_carry + kr_clen, s, k);
    kr_clen += k;
    if (!nl) return;
    kr_carry[kr_clen] = 0;
    kr_sign(kr_carry, kr_clen);
    kr_clen = 0;
    s += k + 1, n -= k + 1;
  }
}

/* With KAIROS_TRACE_REDUCE, no rank writes its trace during the run: its
 * lines are folded into kc_trc (kp_fold) and only the representatives
 * expand theirs into files at MPI_Finalize (kp_expand). A line leaves the
 * file's buffer for the hold (kp_hold) first, where it stays while it may
 * still be rewritten (kt_patch: the lines of a pending request, a wildcard
 * receive's source and tag, a cancelled request's blanking); it is then
 * signed and folded. A rank whose folded trace and hold outgrow the budget
 * (KAIROS_TRACE_REDUCE_BUDGET bytes, 64 MiB by default: an irregular
 * program, whose lines rarely repeat) spills: it writes what it folded to
 * its file and its lines from then on, as without the reduction, and rank
 * 0 says so. With KAIROS_TRACE_REDUCE_KEEP, every rank also writes its
 * lines as recorded, to compare with. */
static char *kp_hold;
static size_t kp_hlen, kp_hcap;
static uint64_t kp_base;             /* the offset in the rank's trace of kp_hold[0] */
static size_t kp_budget = 64u << 20; /* KAIROS_TRACE_REDUCE_BUDGET */
static int kp_keep;                  /* KAIROS_TRACE_REDUCE_KEEP: kt_out is the rank's trace as recorded */
static int kp_spilled;               /* the rank's trace is written to kt_out */
static int64_t kp_delta;             /* spilled: the file's offset minus the trace's, for kt_patch */
static uint64_t kp_run, kp_end;      /* bytes this rank wrote to the reduction's files during the run, at the end */
static uint64_t kp_kept;             /* bytes of the rank's trace as recorded (KAIROS_TRACE_REDUCE_KEEP) */
static char *kp_pend;                /* the last call's line (without the rank), its computation after it */
static size_t kp_plen, kp_pcap;
static int kp_haspend;
static double kp_acc;

/* kp_push folds the pending call with its computation. */
static void kp_push(void) {
  if (!kp_haspend) return;
  struct kc_stat st = {.n = 1, .sum = kp_acc, .min = kp_acc, .max = kp_acc};
  kc_add(&kc_trc, kp_pend, kp_plen, &st);
  kp_haspend = 0, kp_acc = 0;
}

/* kp_fold folds one line (without its newline) into the trace's folder:
 * a computation adds to the pending call's, a call pushes it and becomes
 * the pending one. Blank lines (a cancelled request's) are no action. */
static void kp_fold(const char *s, size_t n) {
  size_t i = 0;
  while (i < n && s[i] != ' ') i++; /* the rank */
  while (i < n && s[i] == ' ') i++;
  if (i >= n) return;
  if (n - i > 8 && memcmp(s + i, "compute ", 8) == 0) {
    kp_acc += strtod(s + i + 8, NULL);
    return;
  }
  kp_push();
  if (n - i + 1 > kp_pcap) {
    kp_pcap = 2 * (n - i + 1);
    if (!(kp_pend = realloc(kp_pend, kp_pcap))) abort();
  }
  kp_pend[0] = 'l';
  memcpy(kp_pend + 1, s + i, n - i);
  kp_plen = n - i + 1, kp_haspend = 1;
}

/* kp_put writes n bytes of the rank's trace to kt_out, counting them. */
static void kp_put(const char *s, size_t n) {
  if (!kt_out) return;
  if (fwrite(s, 1, n, kt_out) != n) kr_werr = 1;
  if (kp_keep)
    kp_kept += n;
  else
    kp_run += n;
}

/* kp_next returns the iteration count of loop n's next instance. */
static int64_t kp_next(struct kc_node *n) {
  while (n->at < n->nruns && n->left == n->runs[n->at].reps) n->at++, n->left = 0;
  if (n->at == n->nruns) return 0;
  n->left++;
  return n->runs[n->at].v;
}

static int64_t kp_gcd(int64_t a, int64_t b) { return b ? kp_gcd(b, a % b) : a; }

/* kp_rewind readies n's expansion. A call whose computations' levels were
 * let go of their order (past KC_RUNS runs) takes its histogram's values
 * in an order of its own (a step coprime with their number, from an
 * offset of the rank's), so that a rank's rare long computations fall
 * where another's do not, as the halo exchange's noise does in the run
 * (the same order on every rank replayed it 6.7% short). */
static void kp_rewind(struct kc_node *n) {
  n->at = n->left = n->k = 0;
  int64_t m = n->comp.n;
  if (m > 1) {
    n->step = (int64_t)((double)m * 0.6180339887498949) | 1;
    while (kp_gcd(n->step, m) != 1) n->step++;
    n->off = (int64_t)(((uint64_t)kt_rank * 0x9e3779b97f4a7c15u + (uint64_t)n->id) % (uint64_t)m);
  }
  for (int i = 0; i < n->nbody; i++) kp_rewind(n->body[i]);
}

/* kp_comp returns the computation after call n's next instance: the mean
 * of its level, from the runs in order, or from the histogram at its place
 * in kp_rewind's order. */
static double kp_comp(struct kc_node *n) {
  const struct kc_stat *st = &n->comp;
  if (st->n == 0) return 0;
  if (st->nbins == 0 || st->n == 1) return st->sum / (double)st->n;
  if (!st->unordered) { /* in order: the level's run at instance k */
    int64_t p = n->k++;
    for (int i = 0; i < st->nseq; i++) {
      if (p < st->seq[i].n) return st->seq[i].sum / (double)st->seq[i].n;
      p -= st->seq[i].n;
    }
    return 0;
  }
  int64_t p = (int64_t)(((__int128)n->k * n->step + n->off) % st->n);
  n->k++;
  for (int i = 0; i < st->nbins; i++) {
    if (p < st->bins[i].n) return st->bins[i].sum / (double)st->bins[i].n;
    p -= st->bins[i].n;
  }
  return 0;
}

/* kp_item writes item n's lines to f: a call and the computation after
 * it (kp_comp), a loop's body as often as each instance iterates. */
static void kp_item(FILE *f, struct kc_node *n) {
  if (!n->nbody) {
    const struct kc_ient *k = &kc_keys[n->id];
    fprintf(f, "%d %.*s\n", kt_rank, (int)k->len - 1, k->key + 1);
    double v = kp_comp(n); /* within KC_EPS: 6 digits are plenty, the sum within 10^-5 */
    if (v >= 1e6)
      fprintf(f, "%d compute %.0f\n", kt_rank, v);
    else if (v > 0)
      fprintf(f, "%d compute %.6g\n", kt_rank, v);
    return;
  }
  for (int64_t c = kp_next(n); c > 0; c--)
    for (int i = 0; i < n->nbody; i++) kp_item(f, n->body[i]);
}

/* kp_expand writes the rank's folded trace to f and returns its bytes
 * (-1 on a failed write). */
static long long kp_expand(FILE *f) {
  long start = ftell(f);
  for (int i = 0; i < kc_trc.n; i++) kp_rewind(kc_trc.seq[i]);
  for (int i = 0; i < kc_trc.n; i++) {
    struct kc_node *n = kc_trc.seq[i];
    if (n->nbody && n->nruns == 0) { /* an open top-level loop: its one instance */
      for (int64_t c = n->cur; c > 0; c--)
        for (int j = 0; j < n->nbody; j++) kp_item(f, n->body[j]);
    } else {
      kp_item(f, n);
    }
  }
  if (fflush(f) != 0 || ferror(f)) return -1;
  return (long long)(ftell(f) - start);
}

/* kp_spill writes what the rank folded to its file, which its lines go
 * to from then on (KAIROS_TRACE_REDUCE_KEEP: the file has them already). */
static void kp_spill(void) {
  kp_spilled = 1;
  if (!kp_keep) {
    char path[4200];
    snprintf(path, sizeof path, "%s/rank-%d.ti", kr_tmp, kt_rank);
    if (!(kt_out = fopen(path, "w"))) {
      fprintf(stderr, "kairos_trace: rank %d: cannot write %s: %s\n", kt_rank, path, strerror(errno));
      kr_werr = 1;
    } else {
      kp_push();
      kc_finish(&kc_trc);
      long long e = kp_expand(kt_out);
      if (e < 0) kr_werr = 1;
      kp_run += e > 0 ? (uint64_t)e : 0;
      kp_delta = (e > 0 ? e : 0) - (int64_t)kp_base;
    }
  }
  kc_reset(&kc_trc);
}

/* kp_take signs and folds the complete lines of buf (len bytes from
 * offset base of the rank's trace) before the first line of a pending
 * request (all: every complete line), writes them where the rank's trace
 * is written during the run, and returns their bytes. */
static size_t kp_take(const char *buf, size_t len, uint64_t base, int all) {
  uint64_t h = base + len;
  for (int i = 0; !all && i < kt_nreq; i++)
    if (kt_reqs[i].line.len > 0 && kt_reqs[i].line.off < h) h = kt_reqs[i].line.off;
  size_t n = h > base ? (size_t)(h - base) : 0;
  while (n > 0 && buf[n - 1] != '\n') n--;
  for (size_t i = 0; i < n && !kp_spilled;) {
    const char *nl = memchr(buf + i, '\n', n - i);
    size_t k = (size_t)(nl - (buf + i));
    kp_fold(buf + i, k);
    i += k + 1;
  }
  kp_put(buf, n);
  kr_feed(buf, n);
  return n;
}

/* kp_budgeted spills the rank's trace if it outgrew the budget. */
static void kp_budgeted(void);

/* kp_release takes what it can of the hold (all: every complete line). */
static void kp_release(int all) {
  size_t n = kp_take(kp_hold, kp_hlen, kp_base, all);
  memmove(kp_hold, kp_hold + n, kp_hlen - n);
  kp_hlen -= n, kp_base += n;
  kp_budgeted();
}

static void kp_budgeted(void) {
  if (kp_spilled || kc_size(&kc_trc) + (double)kp_hcap <= (double)kp_budget) return;
  kp_spill();
  kp_release(1);
}

static void kp_hold_add(const char *s, size_t n) {
  if (kp_hlen + n > kp_hcap) {
    kp_hcap = 2 * (kp_hlen + n);
    if (!(kp_hold = realloc(kp_hold, kp_hcap))) abort();
  }
  memcpy(kp_hold + kp_hlen, s, n);
  kp_hlen += n;
}

/* kr_write writes n bytes of the rank's trace: to its TI file, signing
 * them; with the reduction, through the hold, where only the lines that
 * may still be rewritten stay. */
static void kr_write(const char *s, size_t n) {
  if (!kr_method) {
    if (kt_out && fwrite(s, 1, n, kt_out) != n) kr_werr = 1;
    return;
  }
  if (kp_hlen > 0) { /* the hold's last line ends in s */
    const char *nl = memchr(s, '\n', n);
    size_t k = nl ? (size_t)(nl - s) + 1 : n;
    kp_hold_add(s, k);
    s += k, n -= k;
    kp_release(0);
  }
  if (kp_hlen == 0) {
    size_t k = kp_take(s, n, kp_base, 0);
    s += k, n -= k, kp_base += k;
  }
  kp_hold_add(s, n);
  kp_budgeted();
}

/* kt_repatch rewrites n bytes at offset off of the rank's trace, already
 * written from the file's buffer: in the hold, or in the file (where a
 * line is rewritten after it was signed, the rank's file is signed again at
 * MPI_Finalize, kr_resign_file). It reports whether it could. */
static int kt_repatch(uint64_t off, const char *s, size_t n) {
  if (kr_method && off >= kp_base) {
    memcpy(kp_hold + (off - kp_base), s, n);
    return 1;
  }
  if (!kt_out || (kr_method && !kp_spilled)) return 0;
  if (kr_method) kr_resign = 1;
  fflush(kt_out);
  return pwrite(fileno(kt_out), s, n, (off_t)((int64_t)off + (kp_keep ? 0 : kp_delta))) == (ssize_t)n;
}

/* kp_write writes the rank's folded trace to path, and reports whether
 * it could. */
static int kp_write(const char *path) {
  static char buf[1 << 16];
  FILE *f = fopen(path, "w");
  if (!f) {
    fprintf(stderr, "kairos_trace: rank %d: cannot write %s: %s\n", kt_rank, path, strerror(errno));
    return 0;
  }
  setvbuf(f, buf, _IOFBF, sizeof buf);
  long long n = kp_expand(f);
  int ok = n >= 0;
  if (fclose(f) != 0) ok = 0;
  if (n > 0) kp_end += (uint64_t)n;
  if (!ok) fprintf(stderr, "kairos_trace: rank %d: cannot write %s\n", kt_rank, path);
  return ok;
}

/* kp_finish releases the whole hold and closes the folding, at
 * MPI_Finalize. */
static void kp_finish(void) {
  kp_release(1);
  if (kp_spilled) return;
  kp_push();
  kc_finish(&kc_trc);
}

/* kr_resign_file signs the rank's TI file again from its first byte, as
 * written: lines rewritten after they were signed (the source and tag a
 * wildcard receive matched, a cancelled request blanked) are signed as
 * kairos reduce will read them. A file that cannot be read is a write
 * failure: no reduction rests on a signature of other lines. */
static void kr_resign_file(void) {
  char path[4200], buf[1 << 16];
  snprintf(path, sizeof path, "%s/rank-%d.ti", kr_tmp, kt_rank);
  FILE *f = fopen(path, "r");
  if (!f) {
    kr_werr = 1;
    return;
  }
  kr_me = (struct kr_sig){.path = {0xcbf29ce484222325u, 0x84222325cbf29ce4u},
                          .ref = {0xcbf29ce484222325u, 0x9e3779b97f4a7c15u}};
  kr_comp = 0;
  kr_clen = 0;
  memset(&kr_more, 0, sizeof kr_more);
  kc_reset(&kc_sig);
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) kr_feed(buf, n);
  if (ferror(f)) kr_werr = 1;
  fclose(f);
}

/* A set of (signature, ranklist) pairs: each distinct signature with the
 * ranks that have it, as intervals [first, first+len). */
struct kr_ent {
  struct kr_sig sig;
  double comp; /* the ranks' computation, in flops */
  int64_t *iv; /* pairs: first, len */
  int niv, cap;
};
struct kr_set {
  struct kr_ent *e;
  int n, cap;
};

static int kr_add(struct kr_set *s, const struct kr_sig *sig, double comp, const int64_t *iv, int niv) {
  int i = 0;
  while (i < s->n && memcmp(&s->e[i].sig, sig, sizeof *sig) != 0) i++;
  if (i == s->n) {
    if (s->n == s->cap) {
      s->cap = 2 * s->cap + 4;
      struct kr_ent *e = realloc(s->e, s->cap * sizeof *e);
      if (!e) return 0;
      s->e = e;
    }
    s->e[s->n++] = (struct kr_ent){*sig, 0, NULL, 0, 0};
  }
  struct kr_ent *e = &s->e[i];
  e->comp += comp;
  for (int j = 0; j < niv; j++) {
    int64_t first = iv[2 * j], len = iv[2 * j + 1];
    if (e->niv > 0 && e->iv[2 * e->niv - 2] + e->iv[2 * e->niv - 1] == first) {
      e->iv[2 * e->niv - 1] += len; /* ranks arrive in ascending runs: join them */
      continue;
    }
    if (e->niv == e->cap) {
      e->cap = 2 * e->cap + 4;
      int64_t *p = realloc(e->iv, 2 * e->cap * sizeof *p);
      if (!p) return 0;
      e->iv = p;
    }
    e->iv[2 * e->niv] = first, e->iv[2 * e->niv + 1] = len;
    e->niv++;
  }
  return 1;
}

static int kr_cmp64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

/* kr_sort puts each entry's intervals in order and joins adjacent ones. */
static void kr_sort(struct kr_set *s) {
  for (int i = 0; i < s->n; i++) {
    struct kr_ent *e = &s->e[i];
    qsort(e->iv, e->niv, 2 * sizeof(int64_t), kr_cmp64);
    int k = 0;
    for (int j = 0; j < e->niv; j++) {
      if (k > 0 && e->iv[2 * k - 2] + e->iv[2 * k - 1] == e->iv[2 * j]) {
        e->iv[2 * k - 1] += e->iv[2 * j + 1];
        continue;
      }
      e->iv[2 * k] = e->iv[2 * j], e->iv[2 * k + 1] = e->iv[2 * j + 1];
      k++;
    }
    e->niv = k;
  }
}

/* kr_pack serializes a set as 64-bit words: the number of entries, then
 * each entry's signature, its number of intervals and the intervals. */
static int64_t *kr_pack(const struct kr_set *s, size_t *words) {
  size_t n = 1;
  for (int i = 0; i < s->n; i++) n += KR_WORDS + 2 + 2 * (size_t)s->e[i].niv;
  int64_t *w = malloc(n * sizeof *w);
  if (!w) return NULL;
  size_t k = 0;
  w[k++] = s->n;
  for (int i = 0; i < s->n; i++) {
    memcpy(w + k, &s->e[i].sig, sizeof(struct kr_sig));
    k += KR_WORDS;
    memcpy(w + k++, &s->e[i].comp, sizeof(double));
    w[k++] = s->e[i].niv;
    memcpy(w + k, s->e[i].iv, 2 * s->e[i].niv * sizeof *w);
    k += 2 * (size_t)s->e[i].niv;
  }
  *words = n;
  return w;
}

/* kr_unpack adds a serialized set to s; 0 if the words are not one. */
static int kr_unpack(struct kr_set *s, const int64_t *w, size_t n) {
  size_t k = 1;
  if (n < 1 || w[0] < 0) return 0;
  for (int64_t i = 0; i < w[0]; i++) {
    if (k + KR_WORDS + 2 > n) return 0;
    struct kr_sig sig;
    double comp;
    memcpy(&sig, w + k, sizeof sig);
    k += KR_WORDS;
    memcpy(&comp, w + k++, sizeof comp);
    int64_t niv = w[k++];
    if (niv < 0 || k + 2 * (size_t)niv > n || !kr_add(s, &sig, comp, w + k, (int)niv)) return 0;
    k += 2 * (size_t)niv;
  }
  return k == n;
}

/* Measures of the finalize reduction, for BENCHMARKS.md: this rank's
 * depth in the tree, the seconds from the start of the reduction to its
 * send to its parent (rank 0: to the end of the clustering), and the
 * bytes it sent. */
struct kr_stat {
  double depth, seconds, bytes, entries;
  double memory;          /* the most bytes of the rank's loop structure and identities (constant in iterations) */
  double folded;          /* the bytes of the rank's folded trace and hold */
  double run, end, kept;  /* bytes the rank wrote: the reduction's during the run, at the end; the full trace's */
  double spilled;         /* 1 if the rank's trace outgrew the budget */
};
#define KR_NSTAT (sizeof(struct kr_stat) / sizeof(double))

/* kr_gather merges the ranks' sets up the radix tree; rank 0 returns the
 * whole run's. 0 on a failure (of MPI or memory). */
static int kr_gather(MPI_Comm comm, struct kr_set *s, struct kr_stat *st, double t0) {
  int64_t me[2] = {kt_rank, 1};
  if (!kr_add(s, &kr_me, kr_comp, me, 1)) return 0;
  for (int c = 2 * kt_rank + 1; c <= 2 * kt_rank + 2 && c < kt_size; c++) {
    MPI_Status status;
    int bytes = 0;
    if (PMPI_Probe(c, 0, comm, &status) != MPI_SUCCESS || PMPI_Get_count(&status, MPI_BYTE, &bytes) != MPI_SUCCESS)
      return 0;
    int64_t *w = malloc(bytes > 0 ? (size_t)bytes : 1);
    if (!w) return 0;
    int ok = PMPI_Recv(w, bytes, MPI_BYTE, c, 0, comm, MPI_STATUS_IGNORE) == MPI_SUCCESS &&
             bytes % 8 == 0 && kr_unpack(s, w, (size_t)bytes / 8);
    free(w);
    if (!ok) return 0;
  }
  kr_sort(s);
  st->entries = s->n;
  if (kt_rank == 0) return 1;
  size_t words;
  int64_t *w = kr_pack(s, &words);
  if (!w) return 0;
  st->seconds = PMPI_Wtime() - t0;
  st->bytes = (double)words * 8;
  int ok = PMPI_Send(w, (int)(words * 8), MPI_BYTE, (kt_rank - 1) / 2, 0, comm) == MPI_SUCCESS;
  free(w);
  return ok;
}

/* The clustering, at rank 0, of `kairos reduce --method callpath` with
 * its defaults (cluster.Cluster: main clusters of equal call paths in the
 * order of their first rank; sub-clusters of equal Table 1 components but
 * the count, counts within 5% of the sub-cluster's running average, taken
 * by increasing count; past P/2 and K sub-clusters, KAIROS_TRACE_K or 9 as
 * `--k`, the main clusters kept whole). */
#define KR_TOLERANCE 0.05

static const struct kr_set *kr_all;
static int *kr_of; /* the entry of each rank */

static double kr_count(int r) {
  const struct kr_sig *g = &kr_all->e[kr_of[r]].sig;
  return g->count_n == 0 ? 0 : (double)g->count_sum / (double)g->count_n;
}

static int kr_bycount(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  double cx = kr_count(x), cy = kr_count(y);
  if (cx != cy) return cx < cy ? -1 : 1;
  return (x > y) - (x < y);
}

static int kr_same_rest(const struct kr_sig *a, const struct kr_sig *b) {
  return a->dest_sum == b->dest_sum && a->dest_n == b->dest_n && a->src_sum == b->src_sum && a->src_n == b->src_n &&
         a->types == b->types;
}

/* kr_reference labels each rank with its class of equal reference
 * signatures (`kairos reduce --method reference`), numbered by first rank,
 * and returns their number, or -1 without memory. */
static int kr_reference(const struct kr_set *s, int P, int *group) {
  int *of = malloc(s->n * sizeof *of), n = 0;
  if (!of) return -1;
  for (int e = 0; e < s->n; e++) of[e] = -1;
  for (int r = 0; r < P; r++) {
    int e = kr_of[r];
    for (int f = 0; f < s->n && of[e] < 0; f++)
      if (of[f] >= 0 && memcmp(s->e[f].sig.ref, s->e[e].sig.ref, sizeof s->e[e].sig.ref) == 0) of[e] = of[f];
    if (of[e] < 0) of[e] = n++;
    group[r] = of[e];
  }
  free(of);
  return n;
}

/* kr_cluster labels each rank with its cluster (group[r]), clusters
 * numbered by their head (their least rank), and returns their number, or
 * -1 without memory. */
static int kr_cluster(const struct kr_set *s, int P, int *group) {
  int *main = malloc(s->n * sizeof *main), *rest = malloc(s->n * sizeof *rest), *order = malloc(P * sizeof *order);
  int *sub = malloc(P * sizeof *sub), *subs = calloc(s->n, sizeof *subs), *head = malloc((P + s->n + 1) * sizeof *head);
  int nmain = 0, nclass = 0, nsub = 0, n = 0;
  if (!main || !rest || !order || !sub || !subs || !head) {
    n = -1;
    goto out;
  }
  kr_all = s;
  /* main[e]: the main cluster of entry e; rest[e]: its class of equal
   * components but the count (within its main cluster); both numbered in
   * the order of their first rank */
  for (int e = 0; e < s->n; e++) main[e] = rest[e] = -1;
  for (int r = 0; r < P; r++) {
    int e = kr_of[r];
    if (main[e] >= 0) continue;
    for (int f = 0; f < s->n && main[e] < 0; f++)
      if (main[f] >= 0 && memcmp(s->e[f].sig.path, s->e[e].sig.path, sizeof s->e[e].sig.path) == 0) main[e] = main[f];
    if (main[e] < 0) main[e] = nmain++;
    for (int f = 0; f < s->n && rest[e] < 0; f++)
      if (rest[f] >= 0 && main[f] == main[e] && kr_same_rest(&s->e[f].sig, &s->e[e].sig)) rest[e] = rest[f];
    if (rest[e] < 0) rest[e] = nclass++;
  }
  /* each class's ranks by increasing count (then rank), cut where a count
   * is beyond the tolerance of the running sub-cluster's average */
  int *at = head; /* reused: where each class's ranks start in order */
  for (int c = 0; c <= nclass; c++) at[c] = 0;
  for (int r = 0; r < P; r++) at[rest[kr_of[r]] + 1]++;
  for (int c = 0; c < nclass; c++) at[c + 1] += at[c];
  for (int r = 0; r < P; r++) order[at[rest[kr_of[r]]]++] = r;
  for (int c = 0, k = 0; c < nclass; c++) {
    int start = k, len = 0;
    double sum = 0;
    k = at[c];
    qsort(order + start, k - start, sizeof *order, kr_bycount);
    for (int i = start; i < k; i++) {
      double x = kr_count(order[i]);
      if (len > 0) {
        double mean = sum / len;
        if (fabs(x - mean) > KR_TOLERANCE * (x > mean ? x : mean)) sum = 0, len = 0;
      }
      if (len == 0) nsub++, subs[main[kr_of[order[i]]]]++;
      sub[order[i]] = nsub - 1;
      sum += x, len++;
    }
  }
  /* the filtering function: past P/2 and K sub-clusters, every main
   * cluster of several is kept whole */
  int filter = 2 * nsub > P && nsub > kr_k;
  for (int i = 0; i < nsub + nmain; i++) head[i] = -1;
  for (int r = 0; r < P; r++) {
    int m = main[kr_of[r]], key = filter && subs[m] > 1 ? nsub + m : sub[r];
    if (head[key] < 0) head[key] = n++;
    group[r] = head[key];
  }
out:
  free(main), free(rest), free(order), free(sub), free(subs), free(head);
  return n;
}

/* ACURDION in situ (KAIROS_TRACE_REDUCE=acurdion or acurdion2): the
 * clustering of `kairos reduce --method acurdion[2]` (cluster.Cluster),
 * step for step, over the ranks themselves. Algorithm 1 (adaptive
 * signature building): the ranks' averaged signatures' least and greatest
 * values are reduced to every rank (the normalisation of the distance),
 * and rank 0's call path, loop and types signatures broadcast, so that
 * the signatures on which some ranks differ (the format) are OR-reduced.
 * Algorithm 2: each node of the binary radix tree (rank i's children
 * 2i+1 and 2i+2) merges its own cluster with its children's K-farthest
 * lists, keeps the K farthest apart and gives every other cluster to the
 * nearest kept one, and sends its list to its parent. acurdion2 runs it
 * over the call paths, shares the K clusters among the call-path
 * clusters by their number of distinct parameter signatures (carried up
 * the tree with each cluster), then again within each call-path cluster,
 * over a communicator split from the duplicate, on the other signatures. */

/* ka_sig is a rank's signatures as the distance reads them, all 8-byte
 * fields: the averaged ones (count, src, dest, key, color, tag, comp,
 * comm: cluster's numeric order), the exact call path, the loop and the
 * types, and Table 1's exact components (cluster.ParamKey). */
struct ka_sig {
  double v[8];
  uint64_t path[2], loop, types;
  int64_t key[7];
};
#define KA_WORDS (sizeof(struct ka_sig) / 8)
#define KA_KEY 7
static const int ka_group[8] = {2, 1, 1, 1, 1, 1, 2, 2}; /* the distance's sum of each: 3 minus ACURDION's group */
static const char *const ka_names[11] = {"callpath", "count", "src", "dest", "key", "color",
                                         "tag", "comp", "comm", "loop", "types"};
static double ka_scale[8]; /* 1/range of each averaged signature over the ranks, 0 where equal */
static int ka_part;        /* the signatures compared: 0 all, 1 the call path, 2 all but the call path */

/* ka_cluster is a cluster of the tree's lists: its representative and
 * its signatures, its members, and (acurdion2's first step) the distinct
 * parameter signatures of its members. */
struct ka_cluster {
  int64_t rep;
  struct ka_sig sig;
  int64_t *mem;
  int nmem, cmem;
  int64_t *keys; /* KA_KEY words each */
  int nkeys, ckeys;
};

static void ka_dist(const struct ka_sig *a, const struct ka_sig *b, double d[3]) {
  d[0] = d[1] = d[2] = 0;
  if (ka_part != 1) {
    if (a->types != b->types) d[0] = 1;
    if (a->loop != b->loop) d[1] = 1; /* loops are in group 2 */
    for (int i = 0; i < 8; i++) d[ka_group[i]] += fabs(a->v[i] * ka_scale[i] - b->v[i] * ka_scale[i]);
  }
  if (ka_part != 2) d[0] += memcmp(a->path, b->path, sizeof a->path) != 0;
}

static int ka_less(const double d[3], const double e[3]) {
  for (int i = 0; i < 3; i++)
    if (d[i] != e[i]) return d[i] < e[i];
  return 0;
}

static void ka_addkeys(struct ka_cluster *c, const int64_t *keys, int n) {
  for (int j = 0; j < n; j++) {
    int i = 0;
    while (i < c->nkeys && memcmp(c->keys + KA_KEY * i, keys + KA_KEY * j, KA_KEY * 8) != 0) i++;
    if (i < c->nkeys) continue;
    if (c->nkeys == c->ckeys) {
      c->ckeys = 2 * c->ckeys + 4;
      if (!(c->keys = realloc(c->keys, (size_t)c->ckeys * KA_KEY * 8))) abort();
    }
    memcpy(c->keys + KA_KEY * c->nkeys++, keys + KA_KEY * j, KA_KEY * 8);
  }
}

static void ka_join(struct ka_cluster *dst, struct ka_cluster *src) {
  if (dst->nmem + src->nmem > dst->cmem) {
    dst->cmem = 2 * (dst->nmem + src->nmem);
    if (!(dst->mem = realloc(dst->mem, dst->cmem * sizeof *dst->mem))) abort();
  }
  memcpy(dst->mem + dst->nmem, src->mem, src->nmem * sizeof *src->mem);
  dst->nmem += src->nmem;
  ka_addkeys(dst, src->keys, src->nkeys);
  free(src->mem), free(src->keys);
}

/* ka_farthest keeps at most k clusters of list (in place, returning how
 * many): the first, then repeatedly the one farthest from those kept
 * (ties to the earlier) while any is at a positive distance; every other
 * cluster joins the nearest kept one (cluster's farthest). */
static int ka_farthest(struct ka_cluster *list, int n, int k) {
  double (*near)[3] = malloc((size_t)n * sizeof *near), d[3];
  int *kept = malloc((size_t)n * sizeof *kept), *is = calloc((size_t)n, sizeof *is), nk = 1;
  if (!near || !kept || !is) abort();
  kept[0] = 0, is[0] = 1;
  for (int j = 0; j < n; j++) ka_dist(&list[j].sig, &list[0].sig, near[j]);
  while (nk < k) {
    int far = -1;
    for (int j = 0; j < n; j++)
      if (!is[j] && (near[j][0] != 0 || near[j][1] != 0 || near[j][2] != 0) && (far < 0 || ka_less(near[far], near[j])))
        far = j;
    if (far < 0) break;
    kept[nk++] = far, is[far] = 1;
    for (int j = 0; j < n; j++) {
      ka_dist(&list[j].sig, &list[far].sig, d);
      if (ka_less(d, near[j])) memcpy(near[j], d, sizeof d);
    }
  }
  struct ka_cluster *out = malloc((size_t)nk * sizeof *out);
  if (!out) abort();
  for (int i = 0; i < nk; i++) out[i] = list[kept[i]];
  for (int j = 0; j < n; j++) {
    if (is[j]) continue;
    int best = 0;
    double bd[3];
    ka_dist(&list[j].sig, &out[0].sig, bd);
    for (int i = 1; i < nk; i++) {
      ka_dist(&list[j].sig, &out[i].sig, d);
      if (ka_less(d, bd)) best = i, memcpy(bd, d, sizeof d);
    }
    ka_join(&out[best], &list[j]);
  }
  memcpy(list, out, (size_t)nk * sizeof *out);
  free(out), free(near), free(kept), free(is);
  return nk;
}

static int ka_bymem(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* ka_runs sorts a cluster's members and returns the number of runs of
 * consecutive ranks they make. */
static size_t ka_runs(struct ka_cluster *c) {
  size_t runs = 0;
  qsort(c->mem, c->nmem, sizeof *c->mem, ka_bymem);
  for (int j = 0; j < c->nmem; j++) runs += j == 0 || c->mem[j] != c->mem[j - 1] + 1;
  return runs;
}

/* ka_pack serializes clusters as 64-bit words: their number, then each
 * cluster's representative, signatures, members as runs of consecutive
 * ranks (their number, then first and length each: ScalaTrace's
 * ranklists, so that a grid's classes cost a few runs a row, not a word a
 * rank) and parameter signatures. Members are sorted. */
static int64_t *ka_pack(struct ka_cluster *c, int n, size_t *words) {
  size_t w = 1;
  for (int i = 0; i < n; i++) w += 3 + KA_WORDS + 2 * ka_runs(&c[i]) + KA_KEY * (size_t)c[i].nkeys;
  int64_t *p = malloc(w * 8), *q = p;
  if (!p) abort();
  *q++ = n;
  for (int i = 0; i < n; i++) {
    *q++ = c[i].rep;
    memcpy(q, &c[i].sig, sizeof c[i].sig), q += KA_WORDS;
    int64_t *runs = q++;
    *runs = 0;
    for (int j = 0; j < c[i].nmem; j++) {
      if (j > 0 && c[i].mem[j] == c[i].mem[j - 1] + 1) {
        q[-1]++;
        continue;
      }
      *q++ = c[i].mem[j], *q++ = 1;
      ++*runs;
    }
    *q++ = c[i].nkeys;
    memcpy(q, c[i].keys, (size_t)c[i].nkeys * KA_KEY * 8), q += (size_t)c[i].nkeys * KA_KEY;
  }
  *words = w;
  return p;
}

/* ka_unpack appends the clusters of w (nw words) to *list, of P ranks;
 * 0 if the words are not clusters. */
static int ka_unpack(struct ka_cluster **list, int *n, const int64_t *w, size_t nw, int P) {
  size_t k = 1;
  if (nw < 1 || w[0] < 0) return 0;
  for (int64_t i = 0; i < w[0]; i++) {
    if (k + 2 + KA_WORDS > nw) return 0;
    struct ka_cluster c = {.rep = w[k]};
    memcpy(&c.sig, w + k + 1, sizeof c.sig);
    k += 1 + KA_WORDS;
    int64_t runs = w[k++], nm = 0;
    if (runs < 1 || k + 2 * (size_t)runs + 1 > nw) return 0;
    for (int64_t j = 0; j < runs; j++) {
      int64_t first = w[k + 2 * j], len = w[k + 2 * j + 1];
      if (first < 0 || len < 1 || first + len > P) return 0;
      nm += len;
    }
    if (nm > P) return 0;
    c.nmem = c.cmem = (int)nm;
    if (!(c.mem = malloc(nm * 8))) abort();
    for (int64_t j = 0, at = 0; j < runs; j++)
      for (int64_t r = 0; r < w[k + 2 * j + 1]; r++) c.mem[at++] = w[k + 2 * j] + r;
    k += 2 * (size_t)runs;
    int64_t nkeys = w[k++];
    if (nkeys < 0 || k + (size_t)nkeys * KA_KEY > nw) return free(c.mem), 0;
    ka_addkeys(&c, w + k, (int)nkeys), k += (size_t)nkeys * KA_KEY;
    if (!(*list = realloc(*list, (*n + 1) * sizeof **list))) abort();
    (*list)[(*n)++] = c;
  }
  return k == nw;
}

/* ka_tree runs Algorithm 2 over comm's radix tree with the rank's own
 * cluster me: the tree's root returns the clusters in *out (others: 0
 * clusters); -1 on a failure. st gets this rank's depth, time and bytes. */
static int ka_tree(MPI_Comm comm, const struct ka_cluster *me, int k, struct ka_cluster **out, struct kr_stat *st,
                   double t0) {
  int i, n, cnt = 1;
  PMPI_Comm_rank(comm, &i);
  PMPI_Comm_size(comm, &n);
  struct ka_cluster *list = malloc(sizeof *list);
  if (!list) abort();
  list[0] = *me;
  if (!(list[0].mem = malloc(8))) abort();
  list[0].mem[0] = me->rep, list[0].nmem = list[0].cmem = 1;
  list[0].keys = NULL, list[0].nkeys = list[0].ckeys = 0;
  ka_addkeys(&list[0], me->keys, me->nkeys);
  int ok = 1;
  for (int c = 2 * i + 1; ok && c <= 2 * i + 2 && c < n; c++) {
    MPI_Status status;
    int bytes = 0;
    ok = PMPI_Probe(c, 2, comm, &status) == MPI_SUCCESS && PMPI_Get_count(&status, MPI_BYTE, &bytes) == MPI_SUCCESS &&
         bytes > 0 && bytes % 8 == 0;
    int64_t *w = ok ? malloc(bytes) : NULL;
    ok = ok && w && PMPI_Recv(w, bytes, MPI_BYTE, c, 2, comm, MPI_STATUS_IGNORE) == MPI_SUCCESS &&
         ka_unpack(&list, &cnt, w, (size_t)bytes / 8, kt_size);
    free(w);
  }
  cnt = ka_farthest(list, cnt, k);
  if (st && st->entries < cnt) st->entries = cnt;
  if (i > 0) {
    size_t words;
    int64_t *w = ka_pack(list, cnt, &words);
    if (st) st->seconds = PMPI_Wtime() - t0, st->bytes += (double)words * 8;
    ok = PMPI_Send(w, (int)(words * 8), MPI_BYTE, (i - 1) / 2, 2, comm) == MPI_SUCCESS && ok;
    free(w);
    for (int j = 0; j < cnt; j++) free(list[j].mem), free(list[j].keys);
    cnt = 0;
  }
  *out = list;
  return ok ? cnt : -1;
}

/* ka_share gives each call-path cluster one of the k clusters, then the
 * rest one at a time to the cluster with the most distinct parameter
 * signatures beyond its share (the larger on a tie), while any has
 * (cluster's shareK). */
static void ka_share(const struct ka_cluster *mains, int nm, int k, int *shares) {
  for (int m = 0; m < nm; m++) shares[m] = 1;
  for (int left = k - nm; left > 0; left--) {
    int best = -1;
    for (int m = 0; m < nm; m++) {
      int more = mains[m].nkeys - shares[m];
      if (more > 0 && (best < 0 || more > mains[best].nkeys - shares[best] ||
                       (more == mains[best].nkeys - shares[best] && mains[m].nmem > mains[best].nmem)))
        best = m;
    }
    if (best < 0) break;
    shares[best]++;
  }
}

static int ka_byrep(const void *a, const void *b) {
  const struct ka_cluster *x = a, *y = b;
  return (x->rep > y->rep) - (x->rep < y->rep);
}

/* ka_format writes the signatures on which some ranks differ (no line
 * where they are all alike). */
static void ka_format(FILE *f, int differs) {
  if (!differs) return;
  fprintf(f, "reduced.format");
  for (int i = 0; i < 11; i++)
    if (differs & 1 << i) fprintf(f, " %s", ka_names[i]);
  fputc('\n', f);
}

/* ka_averages sets v to the rank's averaged signatures, in cluster's
 * numeric order (a comm time of 0: TI has none). */
static void ka_averages(double v[8]) {
  const struct kr_sig *g = &kr_me;
  double ns = kr_more.nsplit;
  v[0] = g->count_n ? (double)g->count_sum / (double)g->count_n : 0;
  v[1] = g->src_n ? (double)g->src_sum / (double)g->src_n : 0;
  v[2] = g->dest_n ? (double)g->dest_sum / (double)g->dest_n : 0;
  v[3] = ns ? kr_more.key / ns : 0;
  v[4] = ns ? kr_more.color / ns : 0;
  v[5] = kr_more.ntag ? kr_more.tag / kr_more.ntag : 0;
  v[6] = kr_comp;
  v[7] = 0;
}

static int ka_differs; /* the format, at every rank */

/* ka_mine returns the rank's signatures, its calls' folding closed. */
static struct ka_sig ka_mine(void) {
  const struct kr_sig *g = &kr_me;
  kc_finish(&kc_sig);
  struct ka_sig sig = {{0},
                       {g->path[0], g->path[1]},
                       kc_loop(),
                       g->types,
                       {g->count_sum, g->count_n, g->dest_sum, g->dest_n, g->src_sum, g->src_n, (int64_t)g->types}};
  ka_averages(sig.v);
  return sig;
}

/* ka_run clusters the ranks of signatures sig (collective over comm);
 * rank 0 gets each rank's cluster in group (clusters numbered by
 * representative) and their representatives in head, and returns their
 * number (others: 0); -1 on a failure. */
static int ka_run(MPI_Comm comm, int P, const struct ka_sig *sig, int *group, int *head, struct kr_stat *st, double t0) {
  struct ka_cluster me = {.rep = kt_rank, .sig = *sig};
  /* Algorithm 1 */
  double lo[8], hi[8];
  uint64_t zero[4];
  if (PMPI_Allreduce(me.sig.v, lo, 8, MPI_DOUBLE, MPI_MIN, comm) != MPI_SUCCESS ||
      PMPI_Allreduce(me.sig.v, hi, 8, MPI_DOUBLE, MPI_MAX, comm) != MPI_SUCCESS)
    return -1;
  memcpy(zero, me.sig.path, 4 * 8); /* path, loop, types */
  if (PMPI_Bcast(zero, 4, MPI_UINT64_T, 0, comm) != MPI_SUCCESS) return -1;
  int differs = 0;
  for (int i = 0; i < 8; i++) {
    ka_scale[i] = hi[i] > lo[i] ? 1 / (hi[i] - lo[i]) : 0;
    if (ka_scale[i] > 0) differs |= 1 << (i + 1);
  }
  if (memcmp(zero, me.sig.path, 16) != 0) differs |= 1;
  if (zero[2] != me.sig.loop) differs |= 1 << 9;
  if (zero[3] != me.sig.types) differs |= 1 << 10;
  if (PMPI_Allreduce(&differs, &ka_differs, 1, MPI_INT, MPI_BOR, comm) != MPI_SUCCESS) return -1;
  /* Algorithm 2 */
  struct ka_cluster *all = NULL;
  int n, nall = 0;
  if (kr_method == KR_ACURDION) {
    ka_part = 0;
    n = ka_tree(comm, &me, kr_k, &all, st, t0);
    if (n < 0) return -1;
    nall = n;
  } else {
    ka_part = 1; /* the first step: the call paths, with the parameter signatures' keys */
    me.keys = me.sig.key, me.nkeys = 1;
    struct ka_cluster *mains = NULL;
    int nm = ka_tree(comm, &me, kr_k, &mains, st, t0), ok = nm >= 0, m = 0;
    me.keys = NULL, me.nkeys = 0;
    int *of = kt_rank == 0 ? malloc(P * sizeof *of) : NULL;
    int *share = malloc((kr_k + 1) * sizeof *share);
    if (!share || (kt_rank == 0 && !of)) abort();
    if (kt_rank == 0 && ok) {
      ka_share(mains, nm, kr_k, share);
      for (int j = 0; j < nm; j++)
        for (int x = 0; x < mains[j].nmem; x++) of[mains[j].mem[x]] = j;
    }
    int lows[2] = {ok, nm};
    if (PMPI_Bcast(lows, 2, MPI_INT, 0, comm) != MPI_SUCCESS || !lows[0]) return -1;
    nm = lows[1];
    if (PMPI_Bcast(share, nm, MPI_INT, 0, comm) != MPI_SUCCESS ||
        PMPI_Scatter(of, 1, MPI_INT, &m, 1, MPI_INT, 0, comm) != MPI_SUCCESS)
      return -1;
    /* the second step, within each call-path cluster: its members ascending */
    MPI_Comm sub;
    if (PMPI_Comm_split(comm, m, kt_rank, &sub) != MPI_SUCCESS) return -1;
    ka_part = 2;
    struct ka_cluster *mine = NULL;
    n = ka_tree(sub, &me, share[m], &mine, NULL, t0);
    int subrank;
    PMPI_Comm_rank(sub, &subrank);
    PMPI_Comm_free(&sub);
    ok = n >= 0;
    if (subrank == 0 && kt_rank != 0) { /* to rank 0 */
      size_t words;
      int64_t *w = ka_pack(mine, n, &words);
      ok = PMPI_Send(w, (int)(words * 8), MPI_BYTE, 0, 3, comm) == MPI_SUCCESS && ok;
      free(w);
      for (int j = 0; j < n; j++) free(mine[j].mem), free(mine[j].keys);
      n = 0;
    }
    if (kt_rank == 0) {
      all = mine, nall = n;
      for (int j = 0; j < nm; j++) {
        int low = P;
        for (int x = 0; x < mains[j].nmem; x++)
          if (mains[j].mem[x] < low) low = (int)mains[j].mem[x];
        if (low == 0) continue;
        MPI_Status status;
        int bytes = 0;
        int got = PMPI_Probe(low, 3, comm, &status) == MPI_SUCCESS &&
                  PMPI_Get_count(&status, MPI_BYTE, &bytes) == MPI_SUCCESS && bytes > 0 && bytes % 8 == 0;
        int64_t *w = got ? malloc(bytes) : NULL;
        got = got && w && PMPI_Recv(w, bytes, MPI_BYTE, low, 3, comm, MPI_STATUS_IGNORE) == MPI_SUCCESS &&
              ka_unpack(&all, &nall, w, (size_t)bytes / 8, P);
        free(w);
        ok = ok && got;
      }
    } else {
      free(mine);
    }
    for (int j = 0; j < (kt_rank == 0 ? nm : 0); j++) free(mains[j].mem), free(mains[j].keys);
    free(mains), free(of), free(share);
    if (!ok) return -1;
  }
  if (kt_rank != 0) {
    free(all);
    return 0;
  }
  qsort(all, nall, sizeof *all, ka_byrep);
  for (int j = 0; j < nall; j++) {
    qsort(all[j].mem, all[j].nmem, 8, ka_bymem);
    head[j] = (int)all[j].rep;
    for (int x = 0; x < all[j].nmem; x++) group[all[j].mem[x]] = j;
    free(all[j].mem), free(all[j].keys);
  }
  free(all);
  return nall;
}

/* kr_ranklist writes ranks (ascending) as ScalaTrace ranklist sections of
 * one dimension, <1 first length 1>, one per run of consecutive ranks. */
static void kr_ranklist(FILE *f, const int *ranks, int n) {
  for (int i = 0; i < n;) {
    int j = i + 1;
    while (j < n && ranks[j] == ranks[j - 1] + 1) j++;
    fprintf(f, " <1 %d %d 1>", ranks[i], j - i);
    i = j;
  }
}

/* kr_lines writes one attribute line per class of label (0 to n-1): its
 * head (head[i], or its least rank where head is NULL) and ranklist. */
static void kr_lines(FILE *f, const char *key, const int *label, int n, int P, const int *head) {
  int *start = calloc(n + 1, sizeof *start), *ranks = malloc(P * sizeof *ranks);
  if (!start || !ranks) abort();
  for (int r = 0; r < P; r++) start[label[r] + 1]++;
  for (int i = 0; i < n; i++) start[i + 1] += start[i];
  int *at = malloc(n * sizeof *at);
  if (!at) abort();
  memcpy(at, start, n * sizeof *at);
  for (int r = 0; r < P; r++) ranks[at[label[r]]++] = r;
  for (int i = 0; i < n; i++) {
    fprintf(f, "%s%d %d", key, i, head ? head[i] : ranks[start[i]]);
    kr_ranklist(f, ranks + start[i], start[i + 1] - start[i]);
    fputc('\n', f);
  }
  free(start), free(ranks), free(at);
}

/* kr_scale rewrites the rank's TI file with its computations times f, in
 * place, or, keeping every rank's trace, as rep-R.ti. It returns 0 where
 * it cannot (the file then stays as it is). */
static int kr_scale(double f, int keep) {
  char in[4200], out[4300];
  snprintf(in, sizeof in, "%s/rank-%d.ti", kr_tmp, kt_rank);
  if (keep)
    snprintf(out, sizeof out, "%s/rep-%d.ti", kr_tmp, kt_rank);
  else
    snprintf(out, sizeof out, "%s.scaled", in);
  FILE *r = fopen(in, "r"), *w = r ? fopen(out, "w") : NULL;
  char *line = NULL, *tok;
  size_t cap = 0;
  ssize_t n;
  while (w && (n = getline(&line, &cap, r)) > 0) {
    if ((tok = strstr(line, " compute ")) && tok == strchr(line, ' ')) {
      char v[40];
      kt_shortest(v, sizeof v, strtod(tok + 9, NULL) * f);
      fprintf(w, "%.*s compute %s\n", (int)(tok - line), line, v);
    } else
      fwrite(line, 1, (size_t)n, w);
  }
  free(line);
  int ok = w && !ferror(r) && !ferror(w);
  if (r) fclose(r);
  if (w && fclose(w) != 0) ok = 0;
  if (ok && (keep || rename(out, in) == 0)) return 1;
  unlink(out);
  fprintf(stderr, "kairos_trace: rank %d: cannot rewrite %s with its cluster's mean computation: kept as it is\n", kt_rank, in);
  return 0;
}

/* kr_clear removes a trace's files from dir (a trace written before), and
 * dir itself if nothing else is left. */
static void kr_clear(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *e;
  char path[8400];
  while ((e = readdir(d))) {
    const char *n = e->d_name;
    size_t len = strlen(n);
    if (strcmp(n, "index.txt") == 0 || strcmp(n, "reduced.txt") == 0 ||
        ((strncmp(n, "rank-", 5) == 0 || strncmp(n, "rep-", 4) == 0) && len > 3 && strcmp(n + len - 3, ".ti") == 0)) {
      snprintf(path, sizeof path, "%s/%s", dir, n);
      unlink(path);
    }
  }
  closedir(d);
  snprintf(path, sizeof path, "%s/full/index.txt", dir); /* KAIROS_TRACE_REDUCE_KEEP's */
  unlink(path);
  snprintf(path, sizeof path, "%s/full", dir);
  rmdir(path);
  rmdir(dir);
}

/* kr_publish renames the complete trace into place (rank 0). */
static void kr_publish(void) {
  if (rename(kr_tmp, kr_dir) == 0) return;
  kr_clear(kr_dir);
  if (rename(kr_tmp, kr_dir) != 0)
    fprintf(stderr, "kairos_trace: cannot rename %s to %s (%s): the trace is in %s\n", kr_tmp, kr_dir, strerror(errno),
            kr_tmp);
}

/* kr_files labels each rank with the trace it replays, numbered by first
 * rank; writer[i] is trace i's representative. A trace is one per distinct
 * signature (entry), which lies in one cluster: equal signatures have equal
 * counts, which no cut separates. ACURDION's clusters may split equal
 * signatures (their computations differ): with group, a trace is one per
 * distinct signature within each of the ngroups clusters. Returns the
 * number of traces. */
static int kr_files(const struct kr_set *s, int P, const int *group, int ngroups, int *file, int *writer) {
  int m = group ? ngroups : 1, n = 0, *of = malloc((size_t)s->n * m * sizeof *of);
  if (!of) return -1;
  for (int e = 0; e < s->n * m; e++) of[e] = -1;
  for (int r = 0; r < P; r++) {
    int e = kr_of[r] * m + (group ? group[r] : 0);
    if (of[e] < 0) writer[of[e] = n++] = r;
    file[r] = of[e];
  }
  free(of);
  return n;
}

/* kr_start reads KAIROS_TRACE_REDUCE (method) and returns the directory
 * the ranks write into during the run, DIR.partial: the trace's directory
 * is only renamed into place complete. */
static const char *kr_start(const char *method, const char *dir, int *ti, int *otf2) {
  for (int m = KR_CALLPATH; m <= KR_ACURDION2; m++)
    if (strcmp(method, kr_names[m]) == 0) kr_method = m;
  if (!kr_method) {
    if (kt_rank == 0)
      fprintf(stderr, "kairos_trace: KAIROS_TRACE_REDUCE=%s: expected callpath, reference, acurdion or acurdion2; writing"
              " every rank's trace\n", method);
    return dir;
  }
  const char *k = getenv("KAIROS_TRACE_K");
  if (k && *k) {
    char *end;
    long v = strtol(k, &end, 10);
    if (*end || v < 1 || v > 1 << 20) {
      if (kt_rank == 0) fprintf(stderr, "kairos_trace: KAIROS_TRACE_K=%s: expected a number of clusters from 1; K is 9\n", k);
    } else {
      kr_k = (int)v;
    }
  }
  const char *keep = getenv("KAIROS_TRACE_REDUCE_KEEP"), *b = getenv("KAIROS_TRACE_REDUCE_BUDGET");
  kp_keep = keep && *keep;
  if (b && *b) {
    char *end;
    double v = strtod(b, &end);
    if (*end || v < 0) {
      if (kt_rank == 0)
        fprintf(stderr, "kairos_trace: KAIROS_TRACE_REDUCE_BUDGET=%s: expected a number of bytes; the budget is %zu\n", b,
                kp_budget);
    } else {
      kp_budget = (size_t)v;
    }
  }
  if (*otf2 && kt_rank == 0)
    fprintf(stderr, "kairos_trace: KAIROS_TRACE_REDUCE: the reduction writes TI; no OTF2 archive\n");
  *ti = 1, *otf2 = 0;
  snprintf(kr_dir, sizeof kr_dir, "%s", dir);
  snprintf(kr_tmp, sizeof kr_tmp, "%s.partial", dir);
  if (kt_rank == 0) kr_clear(kr_tmp); /* a killed run's */
  PMPI_Barrier(MPI_COMM_WORLD);
  return kr_tmp;
}

/* kt_index writes dir/index.txt, every rank's file (rank 0). */
static void kt_index(const char *dir) {
  char path[4200];
  snprintf(path, sizeof path, "%s/index.txt", dir);
  FILE *idx = fopen(path, "w");
  if (idx) {
    for (int r = 0; r < kt_size; r++) fprintf(idx, "rank-%d.ti\n", r);
    fclose(idx);
  }
}

/* kr_fallback keeps every rank's trace: those not in a file yet are
 * written from their folded calls; rank 0 says why and publishes them. */
static void kr_fallback(const char *why) {
  char path[4200];
  snprintf(path, sizeof path, "%s/rank-%d.ti", kr_tmp, kt_rank);
  if (!kp_keep && !kp_spilled && !kp_write(path)) kr_werr = 1;
  if (!kt_all(!kr_werr)) {
    unlink(path);
    PMPI_Barrier(MPI_COMM_WORLD);
    if (kt_rank == 0) {
      kr_clear(kr_tmp);
      fprintf(stderr, "kairos_trace: the in-situ reduction failed (%s), and a rank could not write its trace in %s: "
              "no trace written\n", why, kr_tmp);
    }
    return;
  }
  if (kt_rank != 0) return;
  kt_index(kr_tmp);
  fprintf(stderr, "kairos_trace: the in-situ reduction failed (%s): every rank's trace is written\n", why);
  kr_publish();
}

/* kr_finalize reduces the trace at MPI_Finalize, after every rank has
 * closed its TI file. */
static void kr_finalize(void) {
  char own[4200];
  snprintf(own, sizeof own, "%s/rank-%d.ti", kr_tmp, kt_rank);
  if (!kt_all(!kr_werr)) { /* a trace is incomplete: none is published */
    unlink(own);
    PMPI_Barrier(MPI_COMM_WORLD);
    if (kt_rank == 0) {
      kr_clear(kr_tmp);
      fprintf(stderr, "kairos_trace: a rank could not write its trace in %s: no trace written\n", kr_tmp);
    }
    return;
  }
  MPI_Comm comm;
  PMPI_Comm_dup(MPI_COMM_WORLD, &comm);
  PMPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  int P = kt_size, ok, nfiles = 0, nclusters = 0;
  int *group = NULL, *file = NULL, *writer = NULL, *head = NULL;
  struct kr_set set = {0};
  struct kr_stat st = {0};
  for (int r = kt_rank + 1; r > 1; r /= 2) st.depth++;
  PMPI_Barrier(comm);
  double t0 = PMPI_Wtime();
  ok = kr_gather(comm, &set, &st, t0);
  const char *fail = getenv("KAIROS_TRACE_REDUCE_FAIL"); /* the tests' way to the fallback */
  if (fail && *fail && kt_rank == 0) ok = 0;
  if (kt_rank == 0) {
    group = malloc(P * sizeof *group), head = malloc(P * sizeof *head);
    if (!group || !head) ok = 0;
  }
  if (kr_method >= KR_ACURDION) { /* ACURDION's clusters, over the tree too */
    int all0 = 0;
    if (PMPI_Allreduce(&ok, &all0, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS) all0 = 0;
    struct ka_sig mine = ka_mine();
    ok = all0 && (nclusters = ka_run(comm, P, &mine, group, head, &st, t0)) >= 0;
  }
  if (kt_rank == 0 && ok) {
    file = malloc(P * sizeof *file), writer = malloc(P * sizeof *writer);
    kr_of = malloc(P * sizeof *kr_of);
    ok = group && file && writer && kr_of;
    for (int e = 0; ok && e < set.n; e++)
      for (int j = 0; j < set.e[e].niv; j++)
        for (int64_t r = set.e[e].iv[2 * j]; r < set.e[e].iv[2 * j] + set.e[e].iv[2 * j + 1]; r++) kr_of[r] = e;
    if (ok && kr_method < KR_ACURDION)
      nclusters = kr_method == KR_REFERENCE ? kr_reference(&set, P, group) : kr_cluster(&set, P, group);
    ok = ok && nclusters > 0 &&
         (nfiles = kr_files(&set, P, kr_method >= KR_ACURDION ? group : NULL, nclusters, file, writer)) > 0;
  }
  int all = 0;
  if (PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS) all = 0;
  if (all && PMPI_Bcast(&nfiles, 1, MPI_INT, 0, comm) != MPI_SUCCESS) all = 0;
  if (all && kt_rank != 0 && !(writer = malloc(nfiles * sizeof *writer))) all = 0;
  if (all && PMPI_Bcast(writer, nfiles, MPI_INT, 0, comm) != MPI_SUCCESS) all = 0;
  double treduce = PMPI_Wtime() - t0;
  if (kt_rank == 0) st.seconds = treduce;
  if (!all) {
    kr_fallback("the merge of the signatures over the ranks");
    goto out;
  }
  /* only the representatives write their traces, expanded from their
   * folded calls (or, spilled, the file they wrote) */
  int rep = 0;
  for (int i = 0; i < nfiles; i++) rep |= writer[i] == kt_rank;
  if (rep) {
    char path[4200];
    snprintf(path, sizeof path, "%s/%s-%d.ti", kr_tmp, kp_keep ? "rep" : "rank", kt_rank);
    if (kp_spilled && kp_keep) {
      if (!kr_scale(1, 1)) kr_werr = 1;
    } else if (!kp_spilled && !kp_write(path)) {
      kr_werr = 1;
    }
  } else if (kp_spilled && !kp_keep) {
    unlink(own);
  }
  if (!kt_all(!kr_werr)) { /* a representative's trace is incomplete: none is published */
    if (rep || !kp_keep) unlink(own);
    PMPI_Barrier(MPI_COMM_WORLD);
    if (kt_rank == 0) {
      kr_clear(kr_tmp);
      fprintf(stderr, "kairos_trace: a rank could not write its trace in %s: no trace written\n", kr_tmp);
    }
    goto out;
  }
  struct kr_stat *stats = kt_rank == 0 ? malloc(P * sizeof *stats) : NULL;
  st.memory = kc_size(&kc_sig);
  st.folded = kc_size(&kc_trc) + (double)kp_hcap;
  st.run = (double)kp_run, st.end = (double)kp_end, st.kept = (double)kp_kept, st.spilled = kp_spilled;
  PMPI_Gather(&st, KR_NSTAT, MPI_DOUBLE, stats, KR_NSTAT, MPI_DOUBLE, 0, comm);
  PMPI_Barrier(comm);
  if (kt_rank == 0) {
    char path[4200];
    snprintf(path, sizeof path, "%s/index.txt", kr_tmp);
    FILE *idx = fopen(path, "w");
    snprintf(path, sizeof path, "%s/reduced.txt", kr_tmp);
    FILE *red = fopen(path, "w");
    if (kp_keep) {
      snprintf(path, sizeof path, "%s/full", kr_tmp);
      mkdir(path, 0777);
      snprintf(path, sizeof path, "%s/full/index.txt", kr_tmp);
      FILE *all = fopen(path, "w");
      if (all) {
        for (int r = 0; r < P; r++) fprintf(all, "../rank-%d.ti\n", r);
        fclose(all);
      }
    }
    snprintf(path, sizeof path, "%s/reduced.txt", kr_tmp);
    double reps = 0, others = 0, run = 0, kept = 0, folded = 0;
    int spilled = 0;
    for (int r = 0; r < P; r++) {
      int w = 0;
      for (int i = 0; i < nfiles; i++) w |= writer[i] == r;
      *(w ? &reps : &others) += stats[r].run + stats[r].end;
      run += stats[r].run, kept += stats[r].kept, spilled += stats[r].spilled > 0;
      if (stats[r].folded > folded) folded = stats[r].folded;
    }
    if (idx && red) {
      for (int i = 0; i < nfiles; i++) fprintf(idx, "%s-%d.ti\n", kp_keep ? "rep" : "rank", writer[i]);
      fprintf(red,
              "# kairos_trace's in-situ reduction: %d ranks in %d clusters (%s), %d traces (one per behaviour\n"
              "# of a cluster: each member replays its representative's trace, end-points moved by its offset)\n",
              P, nclusters, kr_names[kr_method], nfiles);
      fprintf(red, "reduced.ranks %d\nreduced.method %s\n", P, kr_names[kr_method]);
      kr_lines(red, "reduced.group.", file, nfiles, P, NULL);
      kr_lines(red, "reduced.cluster.", group, nclusters, P, kr_method >= KR_ACURDION ? head : NULL);
      if (kr_method >= KR_ACURDION) {
        fprintf(red, "reduced.k %d\n", kr_k);
        ka_format(red, ka_differs);
      }
      int depth = 0;
      for (int r = 0; r < P; r++)
        if ((int)stats[r].depth > depth) depth = (int)stats[r].depth;
      fprintf(red, "# the reduction: %.6f s at rank 0 (merge up the tree, clustering, broadcast)\n", treduce);
      fprintf(red,
              "# bytes written: %.0f by the %d representatives, %.0f by the other ranks, %.0f of them during the run\n",
              reps, nfiles, others, run);
      fprintf(red, "# the ranks' traces folded online (calls with their parameters): at most %.0f bytes a rank\n",
              folded);
      if (spilled > 0)
        fprintf(red, "# %d ranks spilled (their folded trace outgrew KAIROS_TRACE_REDUCE_BUDGET, %zu bytes): written during"
                " the run\n", spilled, kp_budget);
      if (kp_keep) fprintf(red, "# the full trace (KAIROS_TRACE_REDUCE_KEEP): %.0f bytes in full/\n", kept);
      double most = 0;
      for (int r = 0; r < P; r++)
        if (stats[r].memory > most) most = stats[r].memory;
      if (kr_method >= KR_ACURDION)
        fprintf(red, "# the ranks' loop structures (the calls folded online): at most %.0f bytes\n", most);
      for (int d = depth; d >= 0; d--) {
        double tmax = 0, bytes = 0, most = 0;
        int n = 0;
        for (int r = 0; r < P; r++)
          if ((int)stats[r].depth == d) {
            n++, bytes += stats[r].bytes;
            if (stats[r].seconds > tmax) tmax = stats[r].seconds;
            if (stats[r].entries > most) most = stats[r].entries;
          }
        fprintf(red, "# level %d: %d ranks, done at %.6f s, %.0f bytes sent up, at most %.0f signatures\n", d, n, tmax,
                bytes, most);
      }
    }
    if (spilled > 0)
      fprintf(stderr,
              "kairos_trace: %d ranks' folded traces outgrew KAIROS_TRACE_REDUCE_BUDGET (%zu bytes): they wrote their "
              "traces during the run\n",
              spilled, kp_budget);
    int wrote = idx && red;
    if (idx && fclose(idx) != 0) wrote = 0;
    if (red && fclose(red) != 0) wrote = 0;
    if (!wrote) {
      fprintf(stderr, "kairos_trace: cannot write %s: no trace written\n", path);
      kr_clear(kr_tmp);
    } else {
      kr_publish();
      fprintf(stderr, "kairos_trace: %d ranks reduced in situ to %d cluster%s, %d trace%s in %s (%.3f ms)\n", P,
              nclusters, nclusters == 1 ? "" : "s", nfiles, nfiles == 1 ? "" : "s", kr_dir, 1e3 * treduce);
    }
  }
  free(stats);
out:
  for (int e = 0; e < set.n; e++) free(set.e[e].iv);
  free(set.e), free(group), free(file), free(writer), free(kr_of), free(head);
  kr_of = NULL;
  PMPI_Comm_free(&comm);
}

static int kt_open_ti(const char *dir) {
  char path[4096];
  snprintf(path, sizeof path, "%s/rank-%d.ti", dir, kt_rank);
  kt_ti = 1;
  if (kr_method && !kp_keep) { /* the reduction's: no file during the run */
    kt_line("init");
    kt_eol();
    return 1;
  }
  if (!(kt_out = fopen(path, "w"))) {
    fprintf(stderr, "kairos_trace: rank %d: cannot write %s: %s\n", kt_rank, path, strerror(errno));
    return 0;
  }
  setvbuf(kt_out, NULL, _IONBF, 0); /* kt_file is the buffer; kt_patch writes at offsets */
  if (kt_rank == 0 && !kr_method) kt_index(dir);
  kt_line("init");
  kt_eol();
  return 1;
}

static void kf_start(void);

static char kt_dir[3968]; /* the traces' directory (room left for the files' names) */

/* kt_used reports whether directory dir holds a trace already: a TI
 * trace's index or files, or an OTF2 archive. */
static int kt_used(const char *dir) {
  static const char *const names[] = {"index.txt", "rank-0.ti", "traces.otf2", "traces"};
  char path[4200];
  struct stat st;
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    if (stat(path, &st) == 0) return 1;
  }
  return 0;
}

/* kt_fresh sets kt_dir to dir or, where dir holds a trace already, to
 * the first of dir-2, dir-3... that holds none, so that two runs never
 * mix their traces (the TI files of one beside the archive of another):
 * rank 0 chooses and tells. */
static void kt_fresh(const char *dir) {
  snprintf(kt_dir, sizeof kt_dir, "%s", dir);
  if (kt_rank == 0 && kt_used(dir)) {
    for (int k = 2; k < 100000; k++) {
      snprintf(kt_dir, sizeof kt_dir, "%s-%d", dir, k);
      if (!kt_used(kt_dir)) break;
    }
    fprintf(stderr, "kairos_trace: %s holds a trace already: this run's is written to %s\n", dir, kt_dir);
  }
  PMPI_Bcast(kt_dir, sizeof kt_dir, MPI_CHAR, 0, MPI_COMM_WORLD);
}

/* kt_mkdirs creates dir and the directories above it that do not exist
 * (mkdir -p); 0, or -1 with errno set. */
static int kt_mkdirs(const char *dir) {
  char p[sizeof kt_dir];
  snprintf(p, sizeof p, "%s", dir);
  for (char *s = p + 1; *s; s++) {
    if (*s != '/') continue;
    *s = 0;
    int bad = mkdir(p, 0777) != 0 && errno != EEXIST;
    *s = '/';
    if (bad) return -1;
  }
  return mkdir(p, 0777) == 0 || errno == EEXIST ? 0 : -1;
}

/* kt_open starts tracing after MPI_Init (or MPI_Init_thread, region),
 * which began at t, once: MPICH's Fortran MPI_Init calls the C one. */
static void kt_open(int region, uint64_t t) {
  static int opened;
  const char *dir = getenv("KAIROS_TRACE");
  const char *s;
  int ti, otf2;
  if (opened++) return;
  if (!dir || !*dir) dir = "kairos-trace";
  snprintf(kt_dir, sizeof kt_dir, "%s", dir);
  if ((s = getenv("KAIROS_TRACE_SPEED")) && atof(s) > 0) kt_speed = atof(s);
  if ((s = getenv("KAIROS_TRACE_MIN"))) kt_min = atof(s);
  PMPI_Comm_rank(MPI_COMM_WORLD, &kt_rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &kt_size);
  if ((s = getenv("KAIROS_TRACE_CLOCK")) && *s) {
    kt_cpuclock = strcmp(s, "cpu") == 0;
    if (!kt_cpuclock && strcmp(s, "wall") != 0 && kt_rank == 0)
      fprintf(stderr, "kairos_trace: KAIROS_TRACE_CLOCK=%s: expected wall or cpu; measuring the wall\n", s);
  }
  int level = MPI_THREAD_SINGLE;
  PMPI_Query_thread(&level);
  kt_thread = pthread_self(), kt_anythread = level == MPI_THREAD_SERIALIZED;
  kf_start();
  kt_formats(&ti, &otf2);
  kt_fresh(dir);
  dir = kt_dir;
  if ((s = getenv("KAIROS_TRACE_REDUCE")) && *s) dir = kr_start(s, dir, &ti, &otf2);
  int ok = kt_mkdirs(dir) == 0;
  if (!ok) fprintf(stderr, "kairos_trace: rank %d: cannot create %s: %s\n", kt_rank, dir, strerror(errno));
  if (ok && ti) ok = kt_open_ti(dir);
  if (!kt_all(ok)) { /* every rank traces, or none */
    if (kt_out) fclose(kt_out);
    kt_out = NULL, kt_ti = 0;
    if (kt_rank == 0) fprintf(stderr, "kairos_trace: not tracing: a rank cannot write its trace in %s\n", dir);
    return;
  }
  if (otf2 && !ko_open(dir) && !kt_ti) return;
  ko_start();
  kt_active = 1;
  ko_enter(region, t);
  kt_last = kt_began = kt_now();
  kt_cpu_last = kt_cpu_began = kt_cpu();
  ko_leave(region, kt_last);
}

int MPI_Init(int *argc, char ***argv) {
  uint64_t t = kt_now();
  int err = PMPI_Init(argc, argv);
  kt_open(R_INIT, t);
  ko_start();
  return err;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
  uint64_t t = kt_now();
  int err = PMPI_Init_thread(argc, argv, required, provided);
  kt_open(R_INIT_THREAD, t);
  ko_start();
  return err;
}

/* kt_bare reports whether the OTF2 archive lacks the messages of the
 * calls of region r that the TI trace leaves out too: neighborhood
 * collectives, and point-to-point calls (lost only to other worlds). */
static int kt_bare(int r) {
  if (r >= R_NEIGHBOR_ALLGATHER && r <= R_ISENDRECV_REPLACE) return 1;
  switch (r) {
  case R_START: case R_STARTALL:
  case R_SEND: case R_SSEND: case R_BSEND: case R_RSEND: case R_ISEND: case R_ISSEND: case R_IBSEND: case R_IRSEND:
  case R_RECV: case R_IRECV: case R_SENDRECV: case R_SENDRECV_REPLACE: case R_MRECV: case R_IMRECV:
    return 1;
  }
  return 0;
}

/* kt_lost_kind says why the TI trace leaves out calls of region r. */
static const char *kt_lost_kind(int r) {
  static const int kinds[] = {KS_REGIONS(KS_KIND)};
  if (r >= R_WIN_CREATE && r < R_WIN_CREATE + (int)(sizeof kinds / sizeof *kinds))
    return kinds[r - R_WIN_CREATE] == 1 ? "(one-sided)" : "(MPI-IO)";
  if (r >= R_NEIGHBOR_ALLGATHER && r <= R_INEIGHBOR_ALLTOALLW) return "(neighborhood collectives)";
  if (r == R_START || r == R_STARTALL)
    return "of persistent requests not recorded (MPI-4's persistent neighborhood collectives), in neither trace";
  if (kt_bare(r)) return "with other MPI worlds (spawned or connected processes)"; /* point-to-point: KT_ELSEWHERE */
  return "on sub-communicators"; /* else only collectives: TI has MPI_COMM_WORLD's alone */
}

static int ko_writing(void);
#ifdef KAIROS_OTF2
static const int kt_built_otf2 = 1; /* this tracer can write an OTF2 archive */
#else
static const int kt_built_otf2 = 0;
#endif

/* kt_summary tells, at rank 0, what the traces leave out or changed,
 * summed over the ranks: the calls the TI trace cannot express, by kind,
 * with their time and its share of the ranks' time, and where the complete
 * trace is; requests cancelled, freed while active, or never completed;
 * the calls of other threads. dir is the traces' directory. */
static void kt_summary(const char *dir) {
  enum { NL = R_NREGIONS + 7 };
  long n[NL] = {0}, alln[NL] = {0};
  double sec[R_NREGIONS + 2] = {0}, allsec[R_NREGIONS + 2] = {0}; /* + the ranks' time on the wall, on the CPU */
  memcpy(n, kt_lost_n, sizeof kt_lost_n);
  memcpy(sec, kt_lost_s, sizeof kt_lost_s);
  n[R_NREGIONS] = __atomic_load_n(&kt_others, __ATOMIC_RELAXED);
  n[R_NREGIONS + 1] = kt_ncancelled, n[R_NREGIONS + 2] = kt_nfreed, n[R_NREGIONS + 3] = kt_unpatched;
  n[R_NREGIONS + 4] = kn_written, n[R_NREGIONS + 5] = kt_nlatewait, n[R_NREGIONS + 6] = kt_nleftout;
  sec[R_NREGIONS] = (double)(kt_last - kt_began) * 1e-9;
  sec[R_NREGIONS + 1] = (double)(kt_cpu() - kt_cpu_began) * 1e-9;
  long farn[R_NREGIONS] = {0};
  double fars[R_NREGIONS] = {0};
  PMPI_Reduce(n, alln, NL, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  PMPI_Reduce(sec, allsec, R_NREGIONS + 2, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  PMPI_Reduce(kt_lost_far_n, farn, R_NREGIONS, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  PMPI_Reduce(kt_lost_far_s, fars, R_NREGIONS, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  double probe[2] = {(double)kt_probe_n, kt_probe_s}, probes[2] = {0};
  PMPI_Reduce(probe, probes, 2, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  if (kt_rank != 0) return;
  kt_others_all = alln[R_NREGIONS];
  long lost = 0, bare = 0; /* bare: of them, those whose messages the archive lacks too */
  double lost_s = 0, total = allsec[R_NREGIONS] > 0 ? allsec[R_NREGIONS] : 1;
  for (int r = 0; r < R_NREGIONS; r++) {
    lost += alln[r] + farn[r], lost_s += allsec[r] + fars[r];
    bare += (kt_bare(r) ? alln[r] : 0) + farn[r];
  }
  if (lost > 0) {
    fprintf(stderr,
            "kairos_trace: the TI trace leaves out %ld calls (all ranks) that SimGrid's time-independent format cannot "
            "express: %.3f s, %.1f%% of the ranks' time, which its replay has as neither communication nor "
            "computation:\n",
            lost, lost_s, 100 * lost_s / total);
    fprintf(stderr, "kairos_trace: %12s %12s %7s  call\n", "calls", "seconds", "share");
    int done[2 * R_NREGIONS] = {0};
    for (;;) { /* by time, longest first; k >= R_NREGIONS: region k - R_NREGIONS, with other worlds */
      int best = -1;
      for (int k = 0; k < 2 * R_NREGIONS; k++) {
        long kn = k < R_NREGIONS ? alln[k] : farn[k - R_NREGIONS];
        double ks = k < R_NREGIONS ? allsec[k] : fars[k - R_NREGIONS];
        double bs = best < 0 ? 0 : best < R_NREGIONS ? allsec[best] : fars[best - R_NREGIONS];
        if (kn > 0 && !done[k] && (best < 0 || ks > bs)) best = k;
      }
      if (best < 0) break;
      done[best] = 1;
      int r = best % R_NREGIONS;
      if (best < R_NREGIONS)
        fprintf(stderr, "kairos_trace: %12ld %12.3f %6.1f%%  %s %s\n", alln[r], allsec[r], 100 * allsec[r] / total,
                kt_names[r], kt_lost_kind(r));
      else
        fprintf(stderr, "kairos_trace: %12ld %12.3f %6.1f%%  %s %s\n", farn[r], fars[r], 100 * fars[r] / total,
                kt_names[r], "with other MPI worlds (spawned or connected processes)");
    }
    char speed[64];
    snprintf(speed, sizeof speed, "%g", kt_speed);
    if (bare > 0)
      fprintf(stderr,
              "kairos_trace: of the neighborhood collectives, the calls with other MPI worlds and those in neither "
              "trace, the OTF2 archive has the calls' regions alone: no trace has their messages\n");
    if (bare < lost && ko_writing()) /* else nothing more is in the archive */
      fprintf(stderr,
              "kairos_trace: the OTF2 archive %s/traces.otf2 has every call; a time-independent trace of them all "
              "(for kairos simulate): kairos convert --speed %s %s/traces.otf2 %s/trace.ktr\n",
              dir, speed, dir, dir);
    else if (bare < lost)
      fprintf(stderr,
              "kairos_trace: this run wrote no OTF2 archive, so no trace has every call; to have one, run again "
              "with %sKAIROS_TRACE_FORMAT=ti,otf2%s, and convert the archive that run writes to a time-independent "
              "trace of them all: kairos convert --speed %s %s/traces.otf2 %s/trace.ktr\n",
              kt_built_otf2 ? "" : "a tracer built with -DKAIROS_OTF2 ... -lotf2 and ",
              kr_method != KR_OFF ? " and without KAIROS_TRACE_REDUCE (whose reduction writes TI alone)" : "", speed,
              dir, dir);
  }
  if (kt_cpuclock && kt_ti && ko_writing())
    fprintf(stderr,
            "kairos_trace: KAIROS_TRACE_CLOCK=cpu: the TI trace's computations are the ranks' CPU time, the OTF2 "
            "archive's times the wall's (the ranks ran %.3f s on the wall, %.3f s on a CPU, all ranks): where the "
            "ranks waited for a core, the archive replays longer\n",
            allsec[R_NREGIONS], allsec[R_NREGIONS + 1]);
  if (probes[0] > 0 && kt_ti)
    fprintf(stderr,
            "kairos_trace: %.0f probes (MPI_Probe, MPI_Iprobe...; all ranks) took %.3f s, %.1f%% of the ranks' time, "
            "which a replay of the TI trace has as neither communication nor computation (TI has no probe)\n",
            probes[0], probes[1], 100 * probes[1] / (allsec[R_NREGIONS] > 0 ? allsec[R_NREGIONS] : 1));
  if (alln[R_NREGIONS] > 0)
    fprintf(stderr,
            "kairos_trace: %ld calls, over all ranks, of threads other than the one that initialized MPI were not "
            "recorded (a rank's trace is one thread's calls, any thread's under MPI_THREAD_SERIALIZED alone)\n",
            alln[R_NREGIONS]);
  if (alln[R_NREGIONS + 1] > 0)
    fprintf(stderr,
            "kairos_trace: %ld requests (all ranks) were cancelled (MPI_Cancel): they are in neither trace, as if never "
            "started (the OTF2 archive marks each with an MpiRequestCancelled record)\n",
            alln[R_NREGIONS + 1]);
  if (alln[R_NREGIONS + 5] + alln[R_NREGIONS + 6] > 0)
    fprintf(stderr,
            "kairos_trace: %ld receives (all ranks) were never completed by the program: the %ld a message had matched "
            "are completed at MPI_Finalize (a wait there), the %ld none had are cancelled there, and in neither trace\n",
            alln[R_NREGIONS + 5] + alln[R_NREGIONS + 6], alln[R_NREGIONS + 5], alln[R_NREGIONS + 6]);
  if (alln[R_NREGIONS + 2] > 0)
    fprintf(stderr,
            "kairos_trace: %ld active requests (all ranks) were freed (MPI_Request_free) before they completed: their "
            "completions are in neither trace (the TI replay waits for them at the rank's end)\n",
            alln[R_NREGIONS + 2]);
  if (alln[R_NREGIONS + 3] > 0)
    fprintf(stderr,
            "kairos_trace: %ld lines of the TI trace could not be rewritten (the matched source and tag of a wildcard "
            "receive, or the blanking of a cancelled request): the TI trace may not replay as the program ran\n",
            alln[R_NREGIONS + 3]);
  if (alln[R_NREGIONS + 4] > 0)
    fprintf(stderr,
            "kairos_trace: %ld neighborhood collectives (all ranks) are written as their messages: an isend to each "
            "out-neighbour and an irecv from each in-neighbour, tag %d, completed where the collective completes\n",
            alln[R_NREGIONS + 4], KN_TAG);
}

static void kt_bsent(int finalize);

/* kt_note_threads ends rank 0's TI trace with a comment line saying how
 * many calls of other threads (all ranks') were not recorded, which
 * Kairos' TI reader finds there and every verb says (ti.AttrThreadMPI),
 * as the OTF2 archive's KAIROS::OTHER_THREAD_CALLS: the TI trace's
 * unmatched messages came without a word of why. SimGrid's replay skips
 * lines starting with '#'; the index file, whose every line SimGrid
 * takes for a file's name, cannot carry it. A reduced trace
 * (KAIROS_TRACE_REDUCE) has no such line. */
static void kt_note_threads(void) {
  char s[96];
  int n = snprintf(s, sizeof s, "# kairos_trace: other-thread-calls %ld\n", kt_others_all);
  if (n > 0 && (size_t)n < sizeof s) kt_put(s, (size_t)n);
}

int MPI_Finalize(void) {
  if (kt_on()) {
    kt_enter(R_FINALIZE);
    kt_ireqs();
    kt_iwrite(kt_nicoll); /* those never completed (an erroneous program's) */
    kt_bsent(1);
    kt_unfinished();
    kt_line("finalize");
    kt_eol();
    kt_leave();
    kt_active = 0;
    kt_summary(kt_dir);
    if (kt_ti && !kr_method && kt_rank == 0 && kt_others_all > 0) kt_note_threads();
    if (kt_ti) {
      kt_flush();
      if (kr_method) kp_finish();
      if (kt_out && fclose(kt_out) != 0) kr_werr = 1;
      kt_out = NULL;
      if (kr_method && kr_resign) kr_resign_file();
      if (kr_method) kr_finalize();
    }
    ko_close();
  }
  return PMPI_Finalize();
}

/* MPI_Abort ends the run without MPI_Finalize, whose collectives write
 * the traces' ends, the OTF2 archive and a reduction: like Score-P, the
 * tracer abandons its measurement, and says so. The calling rank's TI
 * lines are written first, so that its trace ends at its MPI_Abort; the
 * others' files end where each last wrote its buffer (every 64 KiB, the
 * last line cut short): a record of how far the run went, not one that
 * replays. */
int MPI_Abort(MPI_Comm comm, int errorcode) {
  if (kt_on()) {
    kt_active = 0;
    int whole = kt_ti && !kr_method && kt_buf == kt_file;
    if (whole) {
      kt_flush();
      if (kt_out) fclose(kt_out);
      kt_out = NULL;
    }
    fprintf(stderr, "kairos_trace: rank %d called MPI_Abort (error code %d): the measurement is abandoned", kt_rank,
            errorcode);
    if (whole)
      fprintf(stderr, "; in %s, this rank's TI trace ends at its MPI_Abort, the others' where each last wrote its buffer",
              kt_dir);
    if (kr_method) fprintf(stderr, "; the reduction, written at MPI_Finalize, is not");
    if (ko_writing()) fprintf(stderr, "; the OTF2 archive, written at MPI_Finalize, is not");
    fprintf(stderr, "\n");
  }
  return PMPI_Abort(comm, errorcode);
}

/* The OTF2 records of point-to-point calls and completions. */
static void ko_send(int isend, MPI_Comm comm, int lpeer, int peer, int tag, long bytes, uint64_t id);
static void ko_irecv_request(uint64_t id);
static void ko_recv(MPI_Comm comm, int lpeer, int peer, int tag, long bytes);

static int kt_send(int region, const void *buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm,
                   int (*send)(const void *, int, MPI_Datatype, int, int, MPI_Comm)) {
  kt_enter(region);
  int err = send(buf, count, t, dest, tag, comm);
  int d = kt_on() && dest != MPI_PROC_NULL ? kt_world(comm, dest) : MPI_PROC_NULL;
  if (d == KT_ELSEWHERE) {
    kt_lose();
  } else if (d != MPI_PROC_NULL) {
    kt_p2p("send", d, tag, kt_bytes(count, t));
    ko_send(0, comm, dest, d, tag, kt_bytes(count, t), 0);
  }
  kt_leave();
  return err;
}

int MPI_Send(const void *buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm) {
  return kt_send(R_SEND, buf, count, t, dest, tag, comm, PMPI_Send);
}

int MPI_Ssend(const void *buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm) {
  return kt_send(R_SSEND, buf, count, t, dest, tag, comm, PMPI_Ssend);
}

/* The ready and synchronous modes are sends like the others: TI and
 * Score-P's records have no mode. A buffered send returns once its
 * message is copied into the attached buffer, whoever receives it when:
 * programs send first and receive after, both ways, which is what the
 * mode is for. A send of TI (and Score-P's MpiSend) waits, in a replay,
 * for its receive above SimGrid's detached-send threshold (64 KiB): such
 * traces deadlocked (MPICH's pt2pt/bsendfrag). So MPI_Bsend is written
 * as an isend, whose wait follows where MPI guarantees the message left
 * the buffer: at MPI_Buffer_detach (which blocks until then), else at
 * MPI_Finalize (kt_bsent). kt_synth numbers them: their requests are
 * handles no MPI gives (1, 2, ...: Open MPI's are pointers, MPICH's have
 * their top bits set). */
static long kt_synth;

int MPI_Bsend(const void *buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm) {
  kt_enter(R_BSEND);
  int err = PMPI_Bsend(buf, count, t, dest, tag, comm);
  int d = kt_on() && dest != MPI_PROC_NULL ? kt_world(comm, dest) : MPI_PROC_NULL;
  if (d == KT_ELSEWHERE) {
    kt_lose();
  } else if (d != MPI_PROC_NULL && err == MPI_SUCCESS) {
    MPI_Request q = (MPI_Request)(intptr_t)++kt_synth;
    ko_send(1, comm, dest, d, tag, kt_bytes(count, t), kt_post(q, 1, d, dest, tag, kt_bytes(count, t), comm));
    kt_reqs[kt_nreq - 1].bsend = 1;
  }
  kt_leave();
  return err;
}

/* kt_bsent writes the waits of the buffered sends not yet completed, in
 * the order of their calls, and, at MPI_Finalize (finalize set), of the
 * receives the program freed (MPI_Request_free), which MPI completes by
 * then, and of the matched probes' messages it never received (their
 * senders' messages are in the trace, and a replay waits for them). */
static void kt_bsent(int finalize) {
  for (int i = 0; i < kt_nreq;) {
    struct kt_req *r = &kt_reqs[i];
    if (!r->bsend && !(finalize && (r->freed || r->probed))) {
      i++;
      continue;
    }
    kt_keyed("wait", r->src, r->dst, r->tag);
    ko_complete(r, NULL);
    kt_drop(i);
  }
}

int MPI_Buffer_detach(void *addr, int *size) {
  kt_enter(R_BUFFER_DETACH);
  int err = PMPI_Buffer_detach(addr, size);
  if (kt_on()) kt_bsent(0);
  kt_leave();
  return err;
}

int MPI_Rsend(const void *buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm) {
  return kt_send(R_RSEND, buf, count, t, dest, tag, comm, PMPI_Rsend);
}

static int kt_isend(int region, const void *buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm,
                    MPI_Request *req, int (*isend)(const void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *)) {
  kt_enter(region);
  int err = isend(buf, count, t, dest, tag, comm, req);
  int d = kt_on() && dest != MPI_PROC_NULL ? kt_world(comm, dest) : MPI_PROC_NULL;
  if (d == KT_ELSEWHERE) {
    kt_lose();
  } else if (d != MPI_PROC_NULL) {
    ko_send(1, comm, dest, d, tag, kt_bytes(count, t), kt_post(*req, 1, d, dest, tag, kt_bytes(count, t), comm));
  }
  kt_leave();
  return err;
}

int MPI_Isend(const void *buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm, MPI_Request *req) {
  return kt_isend(R_ISEND, buf, count, t, dest, tag, comm, req, PMPI_Isend);
}

int MPI_Issend(const void *buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm, MPI_Request *req) {
  return kt_isend(R_ISSEND, buf, count, t, dest, tag, comm, req, PMPI_Issend);
}

int MPI_Ibsend(const void *buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm, MPI_Request *req) {
  return kt_isend(R_IBSEND, buf, count, t, dest, tag, comm, req, PMPI_Ibsend);
}

int MPI_Irsend(const void *buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm, MPI_Request *req) {
  return kt_isend(R_IRSEND, buf, count, t, dest, tag, comm, req, PMPI_Irsend);
}

int MPI_Recv(void *buf, int count, MPI_Datatype t, int src, int tag, MPI_Comm comm, MPI_Status *status) {
  MPI_Status st;
  if (status == MPI_STATUS_IGNORE) status = &st;
  kt_enter(R_RECV);
  int err = PMPI_Recv(buf, count, t, src, tag, comm, status);
  int from = kt_on() && src != MPI_PROC_NULL ? kt_world(comm, status->MPI_SOURCE) : MPI_PROC_NULL;
  if (from == KT_ELSEWHERE) {
    kt_lose();
  } else if (from != MPI_PROC_NULL) {
    long n = kt_got(status, t);
    /* The matched source and tag, so that the replay matches the same message. */
    kt_p2p("recv", from, status->MPI_TAG, n);
    ko_recv(comm, status->MPI_SOURCE, from, status->MPI_TAG, n);
  }
  kt_leave();
  return err;
}

int MPI_Irecv(void *buf, int count, MPI_Datatype t, int src, int tag, MPI_Comm comm, MPI_Request *req) {
  kt_enter(R_IRECV);
  int err = PMPI_Irecv(buf, count, t, src, tag, comm, req);
  int from = kt_on() && src != MPI_PROC_NULL ? kt_world(comm, src) : MPI_PROC_NULL;
  if (from == KT_ELSEWHERE || (from == KT_ANY_SOURCE && kt_elsewhere(comm))) {
    kt_lose();
  } else if (from != MPI_PROC_NULL) {
    ko_irecv_request(kt_post(*req, 0, from, src == MPI_ANY_SOURCE ? KT_ANY_SOURCE : src, kt_tag(tag), kt_bytes(count, t), comm));
  }
  kt_leave();
  return err;
}

int MPI_Wait(MPI_Request *req, MPI_Status *status) {
  MPI_Request r = *req;
  MPI_Status st;
  if (status == MPI_STATUS_IGNORE) status = &st;
  kt_enter(R_WAIT);
  int err = PMPI_Wait(req, status);
  if (kt_on()) kt_wait(r, status);
  kt_leave();
  return err;
}

/* kt_saved copies n requests before a call that may free them. */
static MPI_Request *kt_saved(int n, const MPI_Request reqs[]) {
  MPI_Request *saved = malloc((n > 0 ? n : 1) * sizeof *saved);
  if (!saved) abort();
  if (n > 0) memcpy(saved, reqs, n * sizeof *saved);
  return saved;
}

/* kt_statuses returns st, or n statuses of the tracer's own where the
 * program ignores them (the OTF2 completions need their sources); *own
 * is what to free. */
static MPI_Status *kt_statuses(int n, MPI_Status *st, MPI_Status **own) {
  *own = NULL;
  if (st != MPI_STATUSES_IGNORE) return st;
  *own = malloc((n > 0 ? n : 1) * sizeof **own);
  if (!*own) abort();
  return *own;
}

int MPI_Waitall(int count, MPI_Request reqs[], MPI_Status statuses[]) {
  MPI_Request *saved = kt_saved(count, reqs);
  MPI_Status *own, *sts = kt_statuses(count, statuses, &own);
  kt_enter(R_WAITALL);
  int err = PMPI_Waitall(count, reqs, sts);
  if (kt_on()) {
    int ours = 0;
    for (int i = 0; i < count; i++) kt_icomplete(saved[i], 1);
    for (int i = 0; i < count; i++) ours += kt_find(saved[i]) >= 0;
    if (ours > 0 && ours == kt_nreq) { /* TI's waitall: every outstanding request (but those cancelled) */
      for (int i = 0; i < count; i++) {
        int j = kt_find(saved[i]);
        if (j >= 0) kt_settle(j, &sts[i]);
      }
      if (kt_nreq > 0) {
        kt_line("waitall");
        kt_eol();
      }
      for (int i = 0; i < count; i++) {
        int j = kt_find(saved[i]);
        if (j < 0) continue;
        ko_complete(&kt_reqs[j], &sts[i]);
        kt_drop(j);
      }
    } else {
      for (int i = 0; i < count; i++) kt_wait(saved[i], &sts[i]);
    }
  }
  free(saved);
  free(own);
  kt_leave();
  return err;
}

static void kt_tested(int n, const MPI_Request reqs[]);

/* A test that completes its request is written as a wait, one that does
 * not as nothing (its time is MPI time, not computation), as testany's,
 * testsome's and testall's: in SimGrid's replay, a test of a request the
 * replay has completed earlier than the run leaves a null request that
 * the next test of its key takes away, so that the program's wait then
 * finds none and the replay aborts (a polling loop whose message comes
 * sooner in the replay: rheolef's trace). The OTF2 archive has every
 * test. */
int MPI_Test(MPI_Request *req, int *flag, MPI_Status *status) {
  MPI_Request r = *req;
  MPI_Status st;
  if (status == MPI_STATUS_IGNORE) status = &st;
  kt_enter(R_TEST);
  int err = PMPI_Test(req, flag, status);
  if (kt_on() && *flag) kt_wait(r, status);
  else if (kt_on()) kt_tested(1, &r);
  kt_leave();
  return err;
}

/* TI's sendRecv has no tags: SimGrid's replay sends and receives it with
 * tag 0. A sendrecv of tags 0 is written so (as SimGrid's own tracer
 * writes every sendrecv); one of other tags as its isend and irecv and
 * their waits, with those tags, so that it still matches a send or
 * receive of its tag (a sendRecv line would deadlock the replay there);
 * one with MPI_PROC_NULL on one side as its other half alone, send or
 * recv (SimGrid's own tracer writes nothing there, and its replay then
 * deadlocks). Receives are written with the matched source and tag, as
 * MPI_Recv's. The OTF2 records are Score-P's: an MpiSend and an MpiRecv,
 * with their tags. */
static void kt_sendrecv(int scount, MPI_Datatype st, int dest, int stag, MPI_Datatype rt, int src, MPI_Comm comm,
                        const MPI_Status *status);

int MPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype st, int dest, int stag, void *rbuf, int rcount,
                 MPI_Datatype rt, int src, int rtag, MPI_Comm comm, MPI_Status *status) {
  MPI_Status stat;
  if (status == MPI_STATUS_IGNORE) status = &stat;
  kt_enter(R_SENDRECV);
  int err = PMPI_Sendrecv(sbuf, scount, st, dest, stag, rbuf, rcount, rt, src, rtag, comm, status);
  kt_sendrecv(scount, st, dest, stag, rt, src, comm, status);
  kt_leave();
  return err;
}

/* A sendrecv_replace is a sendrecv of count elements of t both ways. */
int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype t, int dest, int stag, int src, int rtag, MPI_Comm comm,
                         MPI_Status *status) {
  MPI_Status stat;
  if (status == MPI_STATUS_IGNORE) status = &stat;
  kt_enter(R_SENDRECV_REPLACE);
  int err = PMPI_Sendrecv_replace(buf, count, t, dest, stag, src, rtag, comm, status);
  kt_sendrecv(count, t, dest, stag, t, src, comm, status);
  kt_leave();
  return err;
}

/* kt_sendrecv records a sendrecv that has completed with status. */
static void kt_sendrecv(int scount, MPI_Datatype st, int dest, int stag, MPI_Datatype rt, int src, MPI_Comm comm,
                        const MPI_Status *status) {
  if (!kt_on()) return;
  long n = 0;
  int from = src == MPI_PROC_NULL ? MPI_PROC_NULL : kt_world(comm, status->MPI_SOURCE);
  int to = dest == MPI_PROC_NULL ? MPI_PROC_NULL : kt_world(comm, dest);
  if (from == KT_ELSEWHERE || to == KT_ELSEWHERE) {
    kt_lose();
  } else {
    if (src != MPI_PROC_NULL) n = kt_got(status, rt);
    int rtag = from == MPI_PROC_NULL ? 0 : status->MPI_TAG;
    if (to == MPI_PROC_NULL && from != MPI_PROC_NULL) {
      kt_p2p("recv", from, rtag, n);
    } else if (from == MPI_PROC_NULL && to != MPI_PROC_NULL) {
      kt_p2p("send", to, stag, kt_bytes(scount, st));
    } else if (to != MPI_PROC_NULL && (stag != 0 || rtag != 0)) {
      kt_p2p("isend", to, stag, kt_bytes(scount, st));
      kt_p2p("irecv", from, rtag, n);
      kt_keyed("wait", kt_rank, to, stag);
      kt_keyed("wait", from, kt_rank, rtag);
    } else if (to != MPI_PROC_NULL) {
      /* TI: "sendRecv <sendcount> <dst> <recvcount> <src> <sendtype> <recvtype>"; MPI_BYTE is 6 */
      kt_line("sendRecv");
      kt_num(kt_bytes(scount, st));
      kt_num(to);
      kt_num(n);
      kt_num(from);
      kt_num(6);
      kt_num(6);
      kt_eol();
    }
    if (to != MPI_PROC_NULL) ko_send(0, comm, dest, to, stag, kt_bytes(scount, st), 0);
    if (from != MPI_PROC_NULL) ko_recv(comm, status->MPI_SOURCE, from, rtag, n);
  }
}
/* Collectives. Their OTF2 operations (OTF2_CollectiveOp's values). */
enum {
  OP_BARRIER = 0, OP_BCAST, OP_GATHER, OP_GATHERV, OP_SCATTER, OP_SCATTERV, OP_ALLGATHER, OP_ALLGATHERV,
  OP_ALLTOALL, OP_ALLTOALLV, OP_ALLTOALLW, OP_ALLREDUCE, OP_REDUCE, OP_REDUCE_SCATTER, OP_SCAN, OP_EXSCAN,
  OP_REDUCE_SCATTER_BLOCK
};

static void ko_coll(MPI_Comm comm, int op, int root, uint64_t sent, uint64_t recv, uint32_t sv, uint32_t rv);

/* KO_NOV: no count vector. ko_vec returns the OTF2 string of n counts
 * (elements of t, or of ts[i]) as bytes: OTF2 has only a v-collective's
 * totals, and the archive carries its vectors as attributes other
 * readers ignore (kairos:sendcounts, kairos:recvcounts), which Kairos
 * reads. */
enum { KO_NOV = 0xffffffffu };
static uint32_t ko_vec(const int *counts, MPI_Datatype t, const MPI_Datatype *ts, int n);

static int kt_csize(MPI_Comm comm) {
  int n = 1;
  PMPI_Comm_size(comm, &n);
  return n;
}

static int kt_crank(MPI_Comm comm) {
  int r = 0;
  PMPI_Comm_rank(comm, &r);
  return r;
}

/* kt_collective records a collective on comm: TI's action with its n
 * arguments where comm is MPI_COMM_WORLD's, and the OTF2 records of op
 * with the bytes Score-P counts (at the root of a rooted collective, the
 * bytes of every member). */
static void kt_collective(MPI_Comm comm, const char *action, int n, const long *args, int op, int root,
                          uint64_t sent, uint64_t recv) {
  if (kt_world_coll(comm)) kt_coll(action, n, args);
  ko_coll(comm, op, root, sent, recv, KO_NOV, KO_NOV);
}

/* kt_rooted sets what Score-P counts at a member of a rooted collective
 * that sends a block of b bytes from the root to each member (or, toroot,
 * from each member to the root): at the root, every member's block. */
static void kt_rooted(MPI_Comm comm, int root, int toroot, uint64_t b, uint64_t *sent, uint64_t *recv) {
  uint64_t all = kt_crank(comm) == root ? (uint64_t)kt_csize(comm) * b : 0;
  *sent = toroot ? b : all;
  *recv = toroot ? all : b;
}

/* The records of each collective, which its blocking call writes on its
 * return and its non-blocking call (MPI_Ibcast...) keeps for its
 * completion (kt_ibegin). */

static void kt_r_barrier(MPI_Comm comm) { kt_collective(comm, "barrier", 0, NULL, OP_BARRIER, -1, 0, 0); }

static void kt_r_bcast(int count, MPI_Datatype t, int root, MPI_Comm comm) {
  uint64_t sent, recv;
  kt_rooted(comm, root, 0, kt_bytes(count, t), &sent, &recv);
  kt_collective(comm, "bcast", 2, (long[]){kt_bytes(count, t), root}, OP_BCAST, root, sent, recv);
}

static void kt_r_reduce(int count, MPI_Datatype t, int root, MPI_Comm comm) {
  uint64_t sent, recv;
  kt_rooted(comm, root, 1, kt_bytes(count, t), &sent, &recv);
  kt_collective(comm, "reduce", 3, (long[]){kt_bytes(count, t), 0, root}, OP_REDUCE, root, sent, recv);
}

static void kt_r_allreduce(int count, MPI_Datatype t, MPI_Comm comm) {
  uint64_t all = (uint64_t)kt_csize(comm) * kt_bytes(count, t);
  kt_collective(comm, "allreduce", 2, (long[]){kt_bytes(count, t), 0}, OP_ALLREDUCE, -1, all, all);
}

/* Score-P counts (n-me) blocks sent and me+1 received at member me of a
 * scan, one fewer of each for an exscan. */
static void kt_r_scan(int ex, int count, MPI_Datatype t, MPI_Comm comm) {
  uint64_t b = kt_bytes(count, t), n = kt_csize(comm), me = kt_crank(comm);
  kt_collective(comm, ex ? "exscan" : "scan", 2, (long[]){b, 0}, ex ? OP_EXSCAN : OP_SCAN, -1, (n - me - ex) * b,
                (me + 1 - ex) * b);
}

/* The all-to-all shapes: "<action> <sendbytes> <recvbytes> [root]". */
/* With MPI_IN_PLACE, the send (or, in scatters, receive) arguments are
 * ignored, and programs pass anything there (0, MPI_DATATYPE_NULL, NULL
 * counts): the tracer records the block the call really moves instead, as
 * SimGrid's tracer does. */

/* kt_r_all records an alltoall or an allgather (op). */
static void kt_r_all(const char *action, int op, const void *sbuf, int scount, MPI_Datatype st, int rcount,
                     MPI_Datatype rt, MPI_Comm comm) {
  if (sbuf == MPI_IN_PLACE) scount = rcount, st = rt;
  uint64_t n = kt_csize(comm);
  kt_collective(comm, action, 2, (long[]){kt_bytes(scount, st), kt_bytes(rcount, rt)}, op, -1,
                n * kt_bytes(scount, st), n * kt_bytes(rcount, rt));
}

/* rcount matters at the root only; SimGrid takes every rank's. */
static void kt_r_gather(const void *sbuf, int scount, MPI_Datatype st, int rcount, MPI_Datatype rt, int root,
                        MPI_Comm comm) {
  if (sbuf == MPI_IN_PLACE) scount = rcount, st = rt; /* at the root only */
  uint64_t sent, recv;
  kt_rooted(comm, root, 1, kt_bytes(scount, st), &sent, &recv);
  kt_collective(comm, "gather", 3, (long[]){kt_bytes(scount, st), kt_bytes(scount, st), root}, OP_GATHER, root, sent,
                recv);
}

static void kt_r_scatter(int scount, MPI_Datatype st, const void *rbuf, int rcount, MPI_Datatype rt, int root,
                         MPI_Comm comm) {
  if (rbuf == MPI_IN_PLACE) rcount = scount, rt = st; /* at the root only */
  uint64_t sent, recv;
  kt_rooted(comm, root, 0, kt_bytes(rcount, rt), &sent, &recv);
  kt_collective(comm, "scatter", 3, (long[]){kt_bytes(rcount, rt), kt_bytes(rcount, rt), root}, OP_SCATTER, root,
                sent, recv);
}

/* kt_intercoll reports whether comm is an intercommunicator, whose
 * collectives neither trace has (they are counted as left out, and a
 * non-blocking one's completion writes nothing). Their count vectors are
 * of the remote group's size and their root argument is MPI_ROOT,
 * MPI_PROC_NULL or a remote rank: read as an intracommunicator's (local
 * size, root compared with the local rank), they crashed the tracer
 * (MPICH's coll/icgatherv, icscatterv) or had MPI reject a datatype read
 * past the end of an array (icalltoallw). */
static int kt_intercoll(MPI_Comm comm, int op) {
  if (comm == MPI_COMM_WORLD || !kt_info(comm)->inter) return 0;
  kt_world_coll(comm);
  ko_coll(comm, op, -1, 0, 0, KO_NOV, KO_NOV);
  return 1;
}

/* kt_count returns the bytes of counts[i] elements of ts[i] (of t where
 * ts is NULL: alltoallw has a datatype per member). */
static long kt_count(const int *counts, MPI_Datatype t, const MPI_Datatype *ts, int i) {
  return kt_bytes(counts[i], ts ? ts[i] : t);
}

/* kt_counts writes n per-rank counts as bytes (zeros if counts is NULL). */
static void kt_counts(const int *counts, MPI_Datatype t, const MPI_Datatype *ts, int n) {
  for (int i = 0; i < n; i++) kt_num(counts ? kt_count(counts, t, ts, i) : 0L);
}

/* kt_sum returns the bytes of n counts. */
static uint64_t kt_sum(const int *counts, MPI_Datatype t, const MPI_Datatype *ts, int n) {
  uint64_t s = 0;
  for (int i = 0; i < n; i++) s += kt_count(counts, t, ts, i);
  return s;
}

/* kt_r_alltoallv records an alltoallv, or, with datatypes per member (sts
 * and rts), an alltoallw, which TI writes as the alltoallv of the same
 * bytes. */
static void kt_r_alltoallv(const void *sbuf, const int *scounts, MPI_Datatype st, const MPI_Datatype *sts,
                           const int *rcounts, MPI_Datatype rt, const MPI_Datatype *rts, MPI_Comm comm) {
  if (kt_intercoll(comm, sts ? OP_ALLTOALLW : OP_ALLTOALLV)) return;
  if (sbuf == MPI_IN_PLACE) scounts = rcounts, st = rt, sts = rts;
  int n = kt_csize(comm);
  uint64_t sb = kt_sum(scounts, st, sts, n), rb = kt_sum(rcounts, rt, rts, n);
  if (kt_world_coll(comm)) {
    kt_line("alltoallv");
    kt_num(sb);
    kt_counts(scounts, st, sts, n);
    kt_num(rb);
    kt_counts(rcounts, rt, rts, n);
    kt_eol();
  }
  ko_coll(comm, sts ? OP_ALLTOALLW : OP_ALLTOALLV, -1, sb, rb, ko_vec(scounts, st, sts, n), ko_vec(rcounts, rt, rts, n));
}

static void kt_r_allgatherv(const void *sbuf, int scount, MPI_Datatype st, const int *rcounts, MPI_Datatype rt,
                            MPI_Comm comm) {
  if (kt_intercoll(comm, OP_ALLGATHERV)) return;
  if (sbuf == MPI_IN_PLACE) scount = rcounts[kt_crank(comm)], st = rt;
  int n = kt_csize(comm);
  if (kt_world_coll(comm)) {
    kt_line("allgatherv");
    kt_num(kt_bytes(scount, st));
    kt_counts(rcounts, rt, NULL, n);
    kt_eol();
  }
  ko_coll(comm, OP_ALLGATHERV, -1, (uint64_t)n * kt_bytes(scount, st), kt_sum(rcounts, rt, NULL, n), KO_NOV,
          ko_vec(rcounts, rt, NULL, n));
}

/* Receive counts of gatherv and send counts of scatterv are significant at
 * the root only: other ranks write zeros, as SimGrid's tracer does. */
static void kt_r_gatherv(const void *sbuf, int scount, MPI_Datatype st, const int *rcounts, MPI_Datatype rt, int root,
                         MPI_Comm comm) {
  if (kt_intercoll(comm, OP_GATHERV)) return;
  if (sbuf == MPI_IN_PLACE) scount = rcounts[root], st = rt; /* at the root only */
  int n = kt_csize(comm), atroot = kt_crank(comm) == root;
  if (kt_world_coll(comm)) {
    kt_line("gatherv");
    kt_num(kt_bytes(scount, st));
    kt_counts(atroot ? rcounts : NULL, rt, NULL, n);
    kt_num(root);
    kt_eol();
  }
  ko_coll(comm, OP_GATHERV, root, kt_bytes(scount, st), atroot ? kt_sum(rcounts, rt, NULL, n) : 0, KO_NOV,
          atroot ? ko_vec(rcounts, rt, NULL, n) : KO_NOV);
}

static void kt_r_scatterv(const int *scounts, MPI_Datatype st, const void *rbuf, int rcount, MPI_Datatype rt, int root,
                          MPI_Comm comm) {
  if (kt_intercoll(comm, OP_SCATTERV)) return;
  if (rbuf == MPI_IN_PLACE) rcount = scounts[root], rt = st; /* at the root only */
  int n = kt_csize(comm), atroot = kt_crank(comm) == root;
  if (kt_world_coll(comm)) {
    kt_line("scatterv");
    kt_counts(atroot ? scounts : NULL, st, NULL, n);
    kt_num(kt_bytes(rcount, rt));
    kt_num(root);
    kt_eol();
  }
  ko_coll(comm, OP_SCATTERV, root, atroot ? kt_sum(scounts, st, NULL, n) : 0, kt_bytes(rcount, rt),
          atroot ? ko_vec(scounts, st, NULL, n) : KO_NOV, KO_NOV);
}

/* kt_reduce_scatter records a reduce_scatter (op) of rcounts elements of t
 * to each member of comm. */
static void kt_reduce_scatter(MPI_Comm comm, int op, const int *rcounts, MPI_Datatype t) {
  if (kt_intercoll(comm, op)) return;
  int n = kt_csize(comm);
  if (kt_world_coll(comm)) {
    kt_line("reducescatter");
    kt_counts(rcounts, t, NULL, n);
    kt_num(0);
    kt_eol();
  }
  ko_coll(comm, op, -1, kt_sum(rcounts, t, NULL, n), (uint64_t)n * kt_bytes(rcounts[kt_crank(comm)], t), KO_NOV,
          op == OP_REDUCE_SCATTER ? ko_vec(rcounts, t, NULL, n) : KO_NOV);
}

/* A reduce_scatter_block is the reduce_scatter of equal counts, which is
 * how TI writes it. */
static void kt_r_reduce_scatter_block(int rcount, MPI_Datatype t, MPI_Comm comm) {
  int n = kt_csize(comm);
  int *counts = malloc(n * sizeof *counts);
  if (!counts) abort();
  for (int i = 0; i < n; i++) counts[i] = rcount;
  kt_reduce_scatter(comm, OP_REDUCE_SCATTER_BLOCK, counts, t);
  free(counts);
}

/* The blocking collectives: each writes its records on its return. */

int MPI_Barrier(MPI_Comm comm) {
  kt_enter(R_BARRIER);
  int err = PMPI_Barrier(comm);
  if (kt_on()) kt_r_barrier(comm);
  kt_leave();
  return err;
}

int MPI_Bcast(void *buf, int count, MPI_Datatype t, int root, MPI_Comm comm) {
  kt_enter(R_BCAST);
  int err = PMPI_Bcast(buf, count, t, root, comm);
  if (kt_on()) kt_r_bcast(count, t, root, comm);
  kt_leave();
  return err;
}

int MPI_Reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype t, MPI_Op op, int root, MPI_Comm comm) {
  kt_enter(R_REDUCE);
  int err = PMPI_Reduce(sbuf, rbuf, count, t, op, root, comm);
  if (kt_on()) kt_r_reduce(count, t, root, comm);
  kt_leave();
  return err;
}

int MPI_Allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype t, MPI_Op op, MPI_Comm comm) {
  kt_enter(R_ALLREDUCE);
  int err = PMPI_Allreduce(sbuf, rbuf, count, t, op, comm);
  if (kt_on()) kt_r_allreduce(count, t, comm);
  kt_leave();
  return err;
}

int MPI_Scan(const void *sbuf, void *rbuf, int count, MPI_Datatype t, MPI_Op op, MPI_Comm comm) {
  kt_enter(R_SCAN);
  int err = PMPI_Scan(sbuf, rbuf, count, t, op, comm);
  if (kt_on()) kt_r_scan(0, count, t, comm);
  kt_leave();
  return err;
}

int MPI_Exscan(const void *sbuf, void *rbuf, int count, MPI_Datatype t, MPI_Op op, MPI_Comm comm) {
  kt_enter(R_EXSCAN);
  int err = PMPI_Exscan(sbuf, rbuf, count, t, op, comm);
  if (kt_on()) kt_r_scan(1, count, t, comm);
  kt_leave();
  return err;
}

int MPI_Alltoall(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount, MPI_Datatype rt, MPI_Comm comm) {
  kt_enter(R_ALLTOALL);
  int err = PMPI_Alltoall(sbuf, scount, st, rbuf, rcount, rt, comm);
  if (kt_on()) kt_r_all("alltoall", OP_ALLTOALL, sbuf, scount, st, rcount, rt, comm);
  kt_leave();
  return err;
}

int MPI_Allgather(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount, MPI_Datatype rt,
                  MPI_Comm comm) {
  kt_enter(R_ALLGATHER);
  int err = PMPI_Allgather(sbuf, scount, st, rbuf, rcount, rt, comm);
  if (kt_on()) kt_r_all("allgather", OP_ALLGATHER, sbuf, scount, st, rcount, rt, comm);
  kt_leave();
  return err;
}

int MPI_Gather(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount, MPI_Datatype rt, int root,
               MPI_Comm comm) {
  kt_enter(R_GATHER);
  int err = PMPI_Gather(sbuf, scount, st, rbuf, rcount, rt, root, comm);
  if (kt_on()) kt_r_gather(sbuf, scount, st, rcount, rt, root, comm);
  kt_leave();
  return err;
}

int MPI_Scatter(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount, MPI_Datatype rt, int root,
                MPI_Comm comm) {
  kt_enter(R_SCATTER);
  int err = PMPI_Scatter(sbuf, scount, st, rbuf, rcount, rt, root, comm);
  if (kt_on()) kt_r_scatter(scount, st, rbuf, rcount, rt, root, comm);
  kt_leave();
  return err;
}

int MPI_Alltoallv(const void *sbuf, const int *scounts, const int *sdispls, MPI_Datatype st, void *rbuf,
                  const int *rcounts, const int *rdispls, MPI_Datatype rt, MPI_Comm comm) {
  kt_enter(R_ALLTOALLV);
  int err = PMPI_Alltoallv(sbuf, scounts, sdispls, st, rbuf, rcounts, rdispls, rt, comm);
  if (kt_on()) kt_r_alltoallv(sbuf, scounts, st, NULL, rcounts, rt, NULL, comm);
  kt_leave();
  return err;
}

int MPI_Alltoallw(const void *sbuf, const int scounts[], const int sdispls[], const MPI_Datatype sts[], void *rbuf,
                  const int rcounts[], const int rdispls[], const MPI_Datatype rts[], MPI_Comm comm) {
  kt_enter(R_ALLTOALLW);
  int err = PMPI_Alltoallw(sbuf, scounts, sdispls, sts, rbuf, rcounts, rdispls, rts, comm);
  if (kt_on()) kt_r_alltoallv(sbuf, scounts, MPI_DATATYPE_NULL, sts, rcounts, MPI_DATATYPE_NULL, rts, comm);
  kt_leave();
  return err;
}

int MPI_Allgatherv(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, const int *rcounts, const int *displs,
                   MPI_Datatype rt, MPI_Comm comm) {
  kt_enter(R_ALLGATHERV);
  int err = PMPI_Allgatherv(sbuf, scount, st, rbuf, rcounts, displs, rt, comm);
  if (kt_on()) kt_r_allgatherv(sbuf, scount, st, rcounts, rt, comm);
  kt_leave();
  return err;
}

int MPI_Gatherv(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, const int *rcounts, const int *displs,
                MPI_Datatype rt, int root, MPI_Comm comm) {
  kt_enter(R_GATHERV);
  int err = PMPI_Gatherv(sbuf, scount, st, rbuf, rcounts, displs, rt, root, comm);
  if (kt_on()) kt_r_gatherv(sbuf, scount, st, rcounts, rt, root, comm);
  kt_leave();
  return err;
}

int MPI_Scatterv(const void *sbuf, const int *scounts, const int *displs, MPI_Datatype st, void *rbuf, int rcount,
                 MPI_Datatype rt, int root, MPI_Comm comm) {
  kt_enter(R_SCATTERV);
  int err = PMPI_Scatterv(sbuf, scounts, displs, st, rbuf, rcount, rt, root, comm);
  if (kt_on()) kt_r_scatterv(scounts, st, rbuf, rcount, rt, root, comm);
  kt_leave();
  return err;
}

int MPI_Reduce_scatter(const void *sbuf, void *rbuf, const int *rcounts, MPI_Datatype t, MPI_Op op, MPI_Comm comm) {
  kt_enter(R_REDUCE_SCATTER);
  int err = PMPI_Reduce_scatter(sbuf, rbuf, rcounts, t, op, comm);
  if (kt_on()) kt_reduce_scatter(comm, OP_REDUCE_SCATTER, rcounts, t);
  kt_leave();
  return err;
}

int MPI_Reduce_scatter_block(const void *sbuf, void *rbuf, int rcount, MPI_Datatype t, MPI_Op op, MPI_Comm comm) {
  kt_enter(R_REDUCE_SCATTER_BLOCK);
  int err = PMPI_Reduce_scatter_block(sbuf, rbuf, rcount, t, op, comm);
  if (kt_on()) kt_r_reduce_scatter_block(rcount, t, comm);
  kt_leave();
  return err;
}

/* The non-blocking collectives: each keeps its records for its completion
 * (kt_ibegin, kt_iend). */

int MPI_Ibarrier(MPI_Comm comm, MPI_Request *req) {
  kt_enter(R_IBARRIER);
  int err = PMPI_Ibarrier(comm, req);
  if (kt_ibegin(err, *req)) {
    kt_r_barrier(comm);
    kt_iend();
  }
  kt_leave();
  return err;
}

int MPI_Ibcast(void *buf, int count, MPI_Datatype t, int root, MPI_Comm comm, MPI_Request *req) {
  kt_enter(R_IBCAST);
  int err = PMPI_Ibcast(buf, count, t, root, comm, req);
  if (kt_ibegin(err, *req)) {
    kt_r_bcast(count, t, root, comm);
    kt_iend();
  }
  kt_leave();
  return err;
}

int MPI_Ireduce(const void *sbuf, void *rbuf, int count, MPI_Datatype t, MPI_Op op, int root, MPI_Comm comm,
                MPI_Request *req) {
  kt_enter(R_IREDUCE);
  int err = PMPI_Ireduce(sbuf, rbuf, count, t, op, root, comm, req);
  if (kt_ibegin(err, *req)) {
    kt_r_reduce(count, t, root, comm);
    kt_iend();
  }
  kt_leave();
  return err;
}

int MPI_Iallreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype t, MPI_Op op, MPI_Comm comm,
                   MPI_Request *req) {
  kt_enter(R_IALLREDUCE);
  int err = PMPI_Iallreduce(sbuf, rbuf, count, t, op, comm, req);
  if (kt_ibegin(err, *req)) {
    kt_r_allreduce(count, t, comm);
    kt_iend();
  }
  kt_leave();
  return err;
}

int MPI_Iscan(const void *sbuf, void *rbuf, int count, MPI_Datatype t, MPI_Op op, MPI_Comm comm, MPI_Request *req) {
  kt_enter(R_ISCAN);
  int err = PMPI_Iscan(sbuf, rbuf, count, t, op, comm, req);
  if (kt_ibegin(err, *req)) {
    kt_r_scan(0, count, t, comm);
    kt_iend();
  }
  kt_leave();
  return err;
}

int MPI_Iexscan(const void *sbuf, void *rbuf, int count, MPI_Datatype t, MPI_Op op, MPI_Comm comm, MPI_Request *req) {
  kt_enter(R_IEXSCAN);
  int err = PMPI_Iexscan(sbuf, rbuf, count, t, op, comm, req);
  if (kt_ibegin(err, *req)) {
    kt_r_scan(1, count, t, comm);
    kt_iend();
  }
  kt_leave();
  return err;
}

int MPI_Ialltoall(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount, MPI_Datatype rt,
                  MPI_Comm comm, MPI_Request *req) {
  kt_enter(R_IALLTOALL);
  int err = PMPI_Ialltoall(sbuf, scount, st, rbuf, rcount, rt, comm, req);
  if (kt_ibegin(err, *req)) {
    kt_r_all("alltoall", OP_ALLTOALL, sbuf, scount, st, rcount, rt, comm);
    kt_iend();
  }
  kt_leave();
  return err;
}

int MPI_Iallgather(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount, MPI_Datatype rt,
                   MPI_Comm comm, MPI_Request *req) {
  kt_enter(R_IALLGATHER);
  int err = PMPI_Iallgather(sbuf, scount, st, rbuf, rcount, rt, comm, req);
  if (kt_ibegin(err, *req)) {
    kt_r_all("allgather", OP_ALLGATHER, sbuf, scount, st, rcount, rt, comm);
    kt_iend();
  }
  kt_leave();
  return err;
}

int MPI_Igather(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount, MPI_Datatype rt, int root,
                MPI_Comm comm, MPI_Request *req) {
  kt_enter(R_IGATHER);
  int err = PMPI_Igather(sbuf, scount, st, rbuf, rcount, rt, root, comm, req);
  if (kt_ibegin(err, *req)) {
    kt_r_gather(sbuf, scount, st, rcount, rt, root, comm);
    kt_iend();
  }
  kt_leave();
  return err;
}

int MPI_Iscatter(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount, MPI_Datatype rt, int root,
                 MPI_Comm comm, MPI_Request *req) {
  kt_enter(R_ISCATTER);
  int err = PMPI_Iscatter(sbuf, scount, st, rbuf, rcount, rt, root, comm, req);
  if (kt_ibegin(err, *req)) {
    kt_r_scatter(scount, st, rbuf, rcount, rt, root, comm);
    kt_iend();
  }
  kt_leave();
  return err;
}

int MPI_Ialltoallv(const void *sbuf, const int scounts[], const int sdispls[], MPI_Datatype st, void *rbuf,
                   const int rcounts[], const int rdispls[], MPI_Datatype rt, MPI_Comm comm, MPI_Request *req) {
  kt_enter(R_IALLTOALLV);
  int err = PMPI_Ialltoallv(sbuf, scounts, sdispls, st, rbuf, rcounts, rdispls, rt, comm, req);
  if (kt_ibegin(err, *req)) {
    kt_r_alltoallv(sbuf, scounts, st, NULL, rcounts, rt, NULL, comm);
    kt_iend();
  }
  kt_leave();
  return err;
}

int MPI_Ialltoallw(const void *sbuf, const int scounts[], const int sdispls[], const MPI_Datatype sts[], void *rbuf,
                   const int rcounts[], const int rdispls[], const MPI_Datatype rts[], MPI_Comm comm,
                   MPI_Request *req) {
  kt_enter(R_IALLTOALLW);
  int err = PMPI_Ialltoallw(sbuf, scounts, sdispls, sts, rbuf, rcounts, rdispls, rts, comm, req);
  if (kt_ibegin(err, *req)) {
    kt_r_alltoallv(sbuf, scounts, MPI_DATATYPE_NULL, sts, rcounts, MPI_DATATYPE_NULL, rts, comm);
    kt_iend();
  }
  kt_leave();
  return err;
}

int MPI_Iallgatherv(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, const int rcounts[],
                    const int displs[], MPI_Datatype rt, MPI_Comm comm, MPI_Request *req) {
  kt_enter(R_IALLGATHERV);
  int err = PMPI_Iallgatherv(sbuf, scount, st, rbuf, rcounts, displs, rt, comm, req);
  if (kt_ibegin(err, *req)) {
    kt_r_allgatherv(sbuf, scount, st, rcounts, rt, comm);
    kt_iend();
  }
  kt_leave();
  return err;
}

int MPI_Igatherv(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, const int rcounts[], const int displs[],
                 MPI_Datatype rt, int root, MPI_Comm comm, MPI_Request *req) {
  kt_enter(R_IGATHERV);
  int err = PMPI_Igatherv(sbuf, scount, st, rbuf, rcounts, displs, rt, root, comm, req);
  if (kt_ibegin(err, *req)) {
    kt_r_gatherv(sbuf, scount, st, rcounts, rt, root, comm);
    kt_iend();
  }
  kt_leave();
  return err;
}

int MPI_Iscatterv(const void *sbuf, const int scounts[], const int displs[], MPI_Datatype st, void *rbuf, int rcount,
                  MPI_Datatype rt, int root, MPI_Comm comm, MPI_Request *req) {
  kt_enter(R_ISCATTERV);
  int err = PMPI_Iscatterv(sbuf, scounts, displs, st, rbuf, rcount, rt, root, comm, req);
  if (kt_ibegin(err, *req)) {
    kt_r_scatterv(scounts, st, rbuf, rcount, rt, root, comm);
    kt_iend();
  }
  kt_leave();
  return err;
}

int MPI_Ireduce_scatter(const void *sbuf, void *rbuf, const int rcounts[], MPI_Datatype t, MPI_Op op, MPI_Comm comm,
                        MPI_Request *req) {
  kt_enter(R_IREDUCE_SCATTER);
  int err = PMPI_Ireduce_scatter(sbuf, rbuf, rcounts, t, op, comm, req);
  if (kt_ibegin(err, *req)) {
    kt_reduce_scatter(comm, OP_REDUCE_SCATTER, rcounts, t);
    kt_iend();
  }
  kt_leave();
  return err;
}

int MPI_Ireduce_scatter_block(const void *sbuf, void *rbuf, int rcount, MPI_Datatype t, MPI_Op op, MPI_Comm comm,
                              MPI_Request *req) {
  kt_enter(R_IREDUCE_SCATTER_BLOCK);
  int err = PMPI_Ireduce_scatter_block(sbuf, rbuf, rcount, t, op, comm, req);
  if (kt_ibegin(err, *req)) {
    kt_r_reduce_scatter_block(rcount, t, comm);
    kt_iend();
  }
  kt_leave();
  return err;
}

/* kt_tested writes the OTF2 MpiRequestTest of each of the n requests a
 * testany, testsome or testall completed none of, as Score-P does (TI has
 * no record of them). */
static void kt_tested(int n, const MPI_Request reqs[]) {
  for (int i = 0; i < n; i++) {
    int j = kt_find(reqs[i]);
    if (j >= 0) ko_tested(kt_reqs[j].id);
    else kt_icomplete(reqs[i], 0);
  }
}

/* The completions TI has no action for are written as a wait on each
 * request they complete. */
int MPI_Waitany(int n, MPI_Request reqs[], int *index, MPI_Status *status) {
  MPI_Request *saved = kt_saved(n, reqs);
  MPI_Status st;
  if (status == MPI_STATUS_IGNORE) status = &st;
  kt_enter(R_WAITANY);
  int err = PMPI_Waitany(n, reqs, index, status);
  if (kt_on() && *index != MPI_UNDEFINED) kt_wait(saved[*index], status);
  free(saved);
  kt_leave();
  return err;
}

int MPI_Waitsome(int n, MPI_Request reqs[], int *outcount, int idx[], MPI_Status st[]) {
  MPI_Request *saved = kt_saved(n, reqs);
  MPI_Status *own, *sts = kt_statuses(n, st, &own);
  kt_enter(R_WAITSOME);
  int err = PMPI_Waitsome(n, reqs, outcount, idx, sts);
  if (kt_on() && *outcount != MPI_UNDEFINED)
    for (int i = 0; i < *outcount; i++) kt_wait(saved[idx[i]], &sts[i]);
  free(saved);
  free(own);
  kt_leave();
  return err;
}

int MPI_Testany(int n, MPI_Request reqs[], int *index, int *flag, MPI_Status *status) {
  MPI_Request *saved = kt_saved(n, reqs);
  MPI_Status st;
  if (status == MPI_STATUS_IGNORE) status = &st;
  kt_enter(R_TESTANY);
  int err = PMPI_Testany(n, reqs, index, flag, status);
  if (kt_on() && *flag && *index != MPI_UNDEFINED) kt_wait(saved[*index], status);
  if (kt_on() && !*flag) kt_tested(n, saved);
  free(saved);
  kt_leave();
  return err;
}

int MPI_Testsome(int n, MPI_Request reqs[], int *outcount, int idx[], MPI_Status st[]) {
  MPI_Request *saved = kt_saved(n, reqs);
  MPI_Status *own, *sts = kt_statuses(n, st, &own);
  kt_enter(R_TESTSOME);
  int err = PMPI_Testsome(n, reqs, outcount, idx, sts);
  if (kt_on() && *outcount != MPI_UNDEFINED)
    for (int i = 0; i < *outcount; i++) kt_wait(saved[idx[i]], &sts[i]);
  if (kt_on() && *outcount == 0) kt_tested(n, saved);
  free(saved);
  free(own);
  kt_leave();
  return err;
}

int MPI_Testall(int n, MPI_Request reqs[], int *flag, MPI_Status st[]) {
  MPI_Request *saved = kt_saved(n, reqs);
  MPI_Status *own, *sts = kt_statuses(n, st, &own);
  kt_enter(R_TESTALL);
  int err = PMPI_Testall(n, reqs, flag, sts);
  if (kt_on() && *flag)
    for (int i = 0; i < n; i++) kt_wait(saved[i], &sts[i]);
  if (kt_on() && !*flag) kt_tested(n, saved);
  free(saved);
  free(own);
  kt_leave();
  return err;
}

/* Persistent requests: each MPI_Start is the isend or irecv it starts. */
/* KP_TAG_BIT is flipped in a partitioned message's tag, in both traces:
 * MPI matches partitioned calls apart from the other point-to-point
 * calls, and a replay matches messages of a tag of their own so (a
 * partitioned send and a plain send of one pair and tag, MPICH's
 * part/nonblocking_pready, met each other's receives there: a
 * truncation). Program tags below 2^30 stay apart. */
enum { KP_TAG_BIT = 1 << 30 };
struct kt_persist {
  MPI_Request req;
  int skip;            /* no message to record: MPI_PROC_NULL's, or another world's (far) */
  int send, peer, tag; /* peer: a world rank (or KT_ANY_SOURCE) */
  int lpeer;           /* the same as a rank of comm */
  long bytes;
  MPI_Comm comm;
  int part;   /* a partitioned call's (MPI_Psend_init, MPI_Precv_init) */
};
static struct kt_persist *kt_pers;
static int kt_npers, kt_cappers;

static int kt_init(int send, long bytes, int peer, int tag, MPI_Comm comm, MPI_Request *req, int part, int err) {
  if (err != MPI_SUCCESS || !kt_on()) return err;
  int p = peer == MPI_PROC_NULL ? MPI_PROC_NULL : kt_world(comm, peer);
  int skip = p == MPI_PROC_NULL ? 1 : p == KT_ELSEWHERE || (p == KT_ANY_SOURCE && kt_elsewhere(comm)) ? 2 : 0;
  if (kt_npers == kt_cappers) {
    kt_cappers = kt_cappers ? 2 * kt_cappers : 16;
    kt_pers = realloc(kt_pers, kt_cappers * sizeof *kt_pers);
    if (!kt_pers) abort();
  }
  kt_pers[kt_npers++] = (struct kt_persist){.req = *req, .skip = skip, .send = send, .peer = p,
                                            .tag = part ? tag ^ KP_TAG_BIT : send ? tag : kt_tag(tag),
                                            .lpeer = peer == MPI_ANY_SOURCE ? KT_ANY_SOURCE : peer,
                                            .bytes = bytes, .comm = comm, .part = part};
  return err;
}

int MPI_Send_init(const void *buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm, MPI_Request *req) {
  return kt_init(1, kt_bytes(count, t), dest, tag, comm, req, 0, PMPI_Send_init(buf, count, t, dest, tag, comm, req));
}

int MPI_Ssend_init(const void *buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm, MPI_Request *req) {
  return kt_init(1, kt_bytes(count, t), dest, tag, comm, req, 0, PMPI_Ssend_init(buf, count, t, dest, tag, comm, req));
}

int MPI_Bsend_init(const void *buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm, MPI_Request *req) {
  return kt_init(1, kt_bytes(count, t), dest, tag, comm, req, 0, PMPI_Bsend_init(buf, count, t, dest, tag, comm, req));
}

int MPI_Rsend_init(const void *buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm, MPI_Request *req) {
  return kt_init(1, kt_bytes(count, t), dest, tag, comm, req, 0, PMPI_Rsend_init(buf, count, t, dest, tag, comm, req));
}

int MPI_Recv_init(void *buf, int count, MPI_Datatype t, int src, int tag, MPI_Comm comm, MPI_Request *req) {
  return kt_init(0, kt_bytes(count, t), src, tag, comm, req, 0, PMPI_Recv_init(buf, count, t, src, tag, comm, req));
}

/* Persistent collectives (MPI-4's MPI_Bcast_init...): the init call
 * records its collective as a non-blocking one's (kt_ibegin), but keeps
 * the records (kt_pcbegin, kt_pcend): each MPI_Start of its request writes
 * them as the non-blocking collective it starts, its TI line where the
 * request completes (kt_icomplete), the OTF2 NonBlockingCollectiveRequest
 * in the start and the NonBlockingCollectiveComplete at the completion.
 * One on a communicator TI cannot express is counted at its init call. */
struct kt_pcoll {
  MPI_Request req;
  struct kt_icoll c; /* its records, c.ti its TI line (NULL if none) */
};
static struct kt_pcoll *kt_pcolls;
static int kt_npcoll;

/* kt_pstart starts persistent collective request req, if it is one, and
 * reports whether it was. MPI matches persistent collectives in the
 * order of their init calls, whatever order each rank starts them in
 * (MPICH's coll/p_order): a start is kept before the pending starts of
 * those initialized after it, so that its TI line is written before
 * theirs (kt_iwrite), and its OTF2 request is written later, in that
 * order (kt_ireqs: at the next completion or collective call), since
 * Kairos' reader orders a rank's non-blocking collectives by their
 * requests. */
static int kt_pstart(MPI_Request req) {
  for (int i = 0; i < kt_npcoll; i++) {
    if (kt_pcolls[i].req != req) continue;
    struct kt_icoll *c = kt_inew(req);
    uint64_t id = c->id;
    *c = kt_pcolls[i].c;
    c->id = id, c->persist = 0, c->unreq = 1;
    if (c->ti) {
      c->ti = malloc(c->len);
      if (!c->ti) abort();
      memcpy(c->ti, kt_pcolls[i].c.ti, c->len);
    }
    for (int k = kt_nicoll - 1; k > 0 && kt_icolls[k - 1].unreq && kt_icolls[k - 1].seq > kt_icolls[k].seq; k--) {
      struct kt_icoll t = kt_icolls[k - 1];
      kt_icolls[k - 1] = kt_icolls[k], kt_icolls[k] = t;
    }
    return 1;
  }
  return 0;
}

/* kt_pfree forgets persistent collective request req, freed. */
static void kt_pfree(MPI_Request req) {
  for (int i = 0; i < kt_npcoll; i++)
    if (kt_pcolls[i].req == req) {
      free(kt_pcolls[i].c.ti);
      kt_pcolls[i] = kt_pcolls[--kt_npcoll];
      return;
    }
}

/* kt_start writes the isend or irecv a persistent request starts, or the
 * persistent collective it starts (kt_pstart); one that no call the
 * tracer records made (MPI-4's persistent neighborhood collectives) is
 * counted as left out. */
static void kt_start(MPI_Request req) {
  if (req == MPI_REQUEST_NULL || kt_pstart(req)) return;
  for (int i = 0; i < kt_npers; i++) {
    struct kt_persist *p = &kt_pers[i];
    if (p->req != req) continue;
    if (p->skip) {
      if (p->skip == 2) kt_lose_as(1);
      return;
    }
    uint64_t id = kt_post(req, p->send, p->peer, p->lpeer, p->tag, p->bytes, p->comm);
    kt_reqs[kt_nreq - 1].posted = p->part;
    if (p->send)
      ko_send(1, p->comm, p->lpeer, p->peer, p->tag, p->bytes, id);
    else
      ko_irecv_request(id);
    return;
  }
  kt_lose();
}

int MPI_Start(MPI_Request *req) {
  kt_enter(R_START);
  int err = PMPI_Start(req);
  if (kt_on()) kt_start(*req);
  kt_leave();
  return err;
}

int MPI_Startall(int n, MPI_Request reqs[]) {
  kt_enter(R_STARTALL);
  int err = PMPI_Startall(n, reqs);
  if (kt_on())
    for (int i = 0; i < n; i++) kt_start(reqs[i]);
  kt_leave();
  return err;
}

#if MPI_VERSION >= 4
/* MPI-4's MPI_Isendrecv and MPI_Isendrecv_replace: one request stands for
 * two messages, recorded as Score-P records them: the isend and the irecv
 * it starts (each left out where its partner is MPI_PROC_NULL), both
 * completed where the request completes (kt_wait), the send first. */
static void kt_isendrecv(long sbytes, int dest, int stag, long rbytes, int src, int rtag, MPI_Comm comm, MPI_Request req) {
  if (!kt_on()) return;
  int to = dest == MPI_PROC_NULL ? MPI_PROC_NULL : kt_world(comm, dest);
  int from = src == MPI_PROC_NULL ? MPI_PROC_NULL : kt_world(comm, src);
  if (to == KT_ELSEWHERE || from == KT_ELSEWHERE || (from == KT_ANY_SOURCE && kt_elsewhere(comm))) {
    kt_lose();
    return;
  }
  if (to != MPI_PROC_NULL) {
    ko_send(1, comm, dest, to, stag, sbytes, kt_post(req, 1, to, dest, stag, sbytes, comm));
    kt_reqs[kt_nreq - 1].twin = from != MPI_PROC_NULL;
  }
  if (from != MPI_PROC_NULL)
    ko_irecv_request(kt_post(req, 0, from, src == MPI_ANY_SOURCE ? KT_ANY_SOURCE : src, kt_tag(rtag), rbytes, comm));
}

int MPI_Isendrecv(const void *sb, int sc, MPI_Datatype st, int dest, int stag, void *rb, int rc, MPI_Datatype rt,
                  int src, int rtag, MPI_Comm comm, MPI_Request *req) {
  kt_enter(R_ISENDRECV);
  int err = PMPI_Isendrecv(sb, sc, st, dest, stag, rb, rc, rt, src, rtag, comm, req);
  if (err == MPI_SUCCESS) kt_isendrecv(kt_bytes(sc, st), dest, stag, kt_bytes(rc, rt), src, rtag, comm, *req);
  kt_leave();
  return err;
}
int MPI_Isendrecv_replace(void *b, int n, MPI_Datatype t, int dest, int stag, int src, int rtag, MPI_Comm comm,
                          MPI_Request *req) {
  kt_enter(R_ISENDRECV_REPLACE);
  int err = PMPI_Isendrecv_replace(b, n, t, dest, stag, src, rtag, comm, req);
  if (err == MPI_SUCCESS) kt_isendrecv(kt_bytes(n, t), dest, stag, kt_bytes(n, t), src, rtag, comm, *req);
  kt_leave();
  return err;
}

/* kt_pcbegin starts recording the persistent collective of request req,
 * whose init call returned err; it reports whether to record it. */
static int kt_pcbegin(int err, MPI_Request req) {
  if (!kt_ibegin(err, req)) return 0;
  kt_icur->persist = 1;
  return 1;
}

static int kt_cappcoll;   /* kt_pcolls' room */
static uint32_t kt_pcseq; /* init calls of persistent collectives */

/* kt_pcend ends the recording kt_pcbegin started, keeping its records for
 * the starts. */
static void kt_pcend(void) {
  kt_iend();
  if (kt_npcoll == kt_cappcoll) {
    kt_cappcoll = kt_cappcoll ? 2 * kt_cappcoll : 8;
    kt_pcolls = realloc(kt_pcolls, kt_cappcoll * sizeof *kt_pcolls);
    if (!kt_pcolls) abort();
  }
  struct kt_icoll *c = &kt_icolls[--kt_nicoll]; /* the last, kt_ibegin's */
  c->seq = ++kt_pcseq;
  kt_pcolls[kt_npcoll++] = (struct kt_pcoll){c->req, *c};
}

/* The persistent collectives' init calls (kt_pcbegin): KP_INIT is the body
 * of one of region r, whose MPI call is call and whose collective record
 * writes. */
#define KP_INIT(r, call, record)                                                                                       \
  kt_enter(r);                                                                                                         \
  int err = call;                                                                                                      \
  if (kt_pcbegin(err, *req)) {                                                                                         \
    record;                                                                                                            \
    kt_pcend();                                                                                                        \
  }                                                                                                                    \
  kt_leave();                                                                                                          \
  return err;

int MPI_Barrier_init(MPI_Comm comm, MPI_Info info, MPI_Request *req) {
  KP_INIT(R_BARRIER_INIT, PMPI_Barrier_init(comm, info, req), kt_r_barrier(comm))
}
int MPI_Bcast_init(void *buf, int count, MPI_Datatype t, int root, MPI_Comm comm, MPI_Info info, MPI_Request *req) {
  KP_INIT(R_BCAST_INIT, PMPI_Bcast_init(buf, count, t, root, comm, info, req), kt_r_bcast(count, t, root, comm))
}
int MPI_Reduce_init(const void *sbuf, void *rbuf, int count, MPI_Datatype t, MPI_Op op, int root, MPI_Comm comm,
                    MPI_Info info, MPI_Request *req) {
  KP_INIT(R_REDUCE_INIT, PMPI_Reduce_init(sbuf, rbuf, count, t, op, root, comm, info, req),
          kt_r_reduce(count, t, root, comm))
}
int MPI_Allreduce_init(const void *sbuf, void *rbuf, int count, MPI_Datatype t, MPI_Op op, MPI_Comm comm,
                       MPI_Info info, MPI_Request *req) {
  KP_INIT(R_ALLREDUCE_INIT, PMPI_Allreduce_init(sbuf, rbuf, count, t, op, comm, info, req),
          kt_r_allreduce(count, t, comm))
}
int MPI_Scan_init(const void *sbuf, void *rbuf, int count, MPI_Datatype t, MPI_Op op, MPI_Comm comm, MPI_Info info,
                  MPI_Request *req) {
  KP_INIT(R_SCAN_INIT, PMPI_Scan_init(sbuf, rbuf, count, t, op, comm, info, req), kt_r_scan(0, count, t, comm))
}
int MPI_Exscan_init(const void *sbuf, void *rbuf, int count, MPI_Datatype t, MPI_Op op, MPI_Comm comm, MPI_Info info,
                    MPI_Request *req) {
  KP_INIT(R_EXSCAN_INIT, PMPI_Exscan_init(sbuf, rbuf, count, t, op, comm, info, req), kt_r_scan(1, count, t, comm))
}
int MPI_Alltoall_init(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount, MPI_Datatype rt,
                      MPI_Comm comm, MPI_Info info, MPI_Request *req) {
  KP_INIT(R_ALLTOALL_INIT, PMPI_Alltoall_init(sbuf, scount, st, rbuf, rcount, rt, comm, info, req),
          kt_r_all("alltoall", OP_ALLTOALL, sbuf, scount, st, rcount, rt, comm))
}
int MPI_Allgather_init(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount, MPI_Datatype rt,
                       MPI_Comm comm, MPI_Info info, MPI_Request *req) {
  KP_INIT(R_ALLGATHER_INIT, PMPI_Allgather_init(sbuf, scount, st, rbuf, rcount, rt, comm, info, req),
          kt_r_all("allgather", OP_ALLGATHER, sbuf, scount, st, rcount, rt, comm))
}
int MPI_Gather_init(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount, MPI_Datatype rt, int root,
                    MPI_Comm comm, MPI_Info info, MPI_Request *req) {
  KP_INIT(R_GATHER_INIT, PMPI_Gather_init(sbuf, scount, st, rbuf, rcount, rt, root, comm, info, req),
          kt_r_gather(sbuf, scount, st, rcount, rt, root, comm))
}
int MPI_Scatter_init(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount, MPI_Datatype rt, int root,
                     MPI_Comm comm, MPI_Info info, MPI_Request *req) {
  KP_INIT(R_SCATTER_INIT, PMPI_Scatter_init(sbuf, scount, st, rbuf, rcount, rt, root, comm, info, req),
          kt_r_scatter(scount, st, rbuf, rcount, rt, root, comm))
}
int MPI_Alltoallv_init(const void *sbuf, const int scounts[], const int sdispls[], MPI_Datatype st, void *rbuf,
                       const int rcounts[], const int rdispls[], MPI_Datatype rt, MPI_Comm comm, MPI_Info info,
                       MPI_Request *req) {
  KP_INIT(R_ALLTOALLV_INIT,
          PMPI_Alltoallv_init(sbuf, scounts, sdispls, st, rbuf, rcounts, rdispls, rt, comm, info, req),
          kt_r_alltoallv(sbuf, scounts, st, NULL, rcounts, rt, NULL, comm))
}
int MPI_Alltoallw_init(const void *sbuf, const int scounts[], const int sdispls[], const MPI_Datatype sts[],
                       void *rbuf, const int rcounts[], const int rdispls[], const MPI_Datatype rts[], MPI_Comm comm,
                       MPI_Info info, MPI_Request *req) {
  KP_INIT(R_ALLTOALLW_INIT,
          PMPI_Alltoallw_init(sbuf, scounts, sdispls, sts, rbuf, rcounts, rdispls, rts, comm, info, req),
          kt_r_alltoallv(sbuf, scounts, MPI_DATATYPE_NULL, sts, rcounts, MPI_DATATYPE_NULL, rts, comm))
}
int MPI_Allgatherv_init(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, const int rcounts[],
                        const int displs[], MPI_Datatype rt, MPI_Comm comm, MPI_Info info, MPI_Request *req) {
  KP_INIT(R_ALLGATHERV_INIT, PMPI_Allgatherv_init(sbuf, scount, st, rbuf, rcounts, displs, rt, comm, info, req),
          kt_r_allgatherv(sbuf, scount, st, rcounts, rt, comm))
}
int MPI_Gatherv_init(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, const int rcounts[],
                     const int displs[], MPI_Datatype rt, int root, MPI_Comm comm, MPI_Info info, MPI_Request *req) {
  KP_INIT(R_GATHERV_INIT, PMPI_Gatherv_init(sbuf, scount, st, rbuf, rcounts, displs, rt, root, comm, info, req),
          kt_r_gatherv(sbuf, scount, st, rcounts, rt, root, comm))
}
int MPI_Scatterv_init(const void *sbuf, const int scounts[], const int displs[], MPI_Datatype st, void *rbuf,
                      int rcount, MPI_Datatype rt, int root, MPI_Comm comm, MPI_Info info, MPI_Request *req) {
  KP_INIT(R_SCATTERV_INIT, PMPI_Scatterv_init(sbuf, scounts, displs, st, rbuf, rcount, rt, root, comm, info, req),
          kt_r_scatterv(scounts, st, rbuf, rcount, rt, root, comm))
}
int MPI_Reduce_scatter_init(const void *sbuf, void *rbuf, const int rcounts[], MPI_Datatype t, MPI_Op op,
                            MPI_Comm comm, MPI_Info info, MPI_Request *req) {
  KP_INIT(R_REDUCE_SCATTER_INIT, PMPI_Reduce_scatter_init(sbuf, rbuf, rcounts, t, op, comm, info, req),
          kt_reduce_scatter(comm, OP_REDUCE_SCATTER, rcounts, t))
}
int MPI_Reduce_scatter_block_init(const void *sbuf, void *rbuf, int rcount, MPI_Datatype t, MPI_Op op, MPI_Comm comm,
                                  MPI_Info info, MPI_Request *req) {
  KP_INIT(R_REDUCE_SCATTER_BLOCK_INIT, PMPI_Reduce_scatter_block_init(sbuf, rbuf, rcount, t, op, comm, info, req),
          kt_r_reduce_scatter_block(rcount, t, comm))
}

/* Partitioned communication (MPI-4): a partitioned send or receive is
 * recorded as a persistent send or receive of its whole buffer
 * (partitions x count elements), which each MPI_Start starts (an isend or
 * irecv) and the wait or test that completes its request completes:
 * TI and Score-P's records have no partitions, and MPI_Pready and
 * MPI_Parrived write nothing (their time is computation). Its tag is the
 * program's with KP_TAG_BIT flipped; its status at the completion is not
 * read: the receive is written as posted. */
int MPI_Psend_init(const void *buf, int partitions, MPI_Count count, MPI_Datatype t, int dest, int tag,
                   MPI_Comm comm, MPI_Info info, MPI_Request *req) {
  kt_enter(R_PSEND_INIT);
  int err = kt_init(1, (long)partitions * (long)count * kt_bytes(1, t), dest, tag, comm, req, 1,
                    PMPI_Psend_init(buf, partitions, count, t, dest, tag, comm, info, req));
  kt_leave();
  return err;
}
int MPI_Precv_init(void *buf, int partitions, MPI_Count count, MPI_Datatype t, int src, int tag, MPI_Comm comm,
                   MPI_Info info, MPI_Request *req) {
  kt_enter(R_PRECV_INIT);
  int err = kt_init(0, (long)partitions * (long)count * kt_bytes(1, t), src, tag, comm, req, 1,
                    PMPI_Precv_init(buf, partitions, count, t, src, tag, comm, info, req));
  kt_leave();
  return err;
}
#endif

/* A freed request is neither started nor waited for again. */
/* kt_keepfreed keeps a receive from a given source with a given tag that
 * the program frees before it completes, and reports whether it did: MPI
 * completes it by MPI_Finalize, where both traces have its completion
 * (kt_bsent), of its posted size. Left out, the archive had its request
 * alone, which Kairos reads as a receive never started, and its message
 * was never received there (MPICH's pt2pt/rqfree). What it needs of its
 * communicator is kept now (the program may free that too), and its
 * handle, which MPI may give again, becomes one of the tracer's own. A
 * receive from MPI_ANY_SOURCE or with MPI_ANY_TAG, whose message no
 * status will tell, and a send are forgotten, as before. */
static int kt_keepfreed(struct kt_req *r) {
  if (r->send || r->wild || r->cancel) return 0;
  if (!r->gone) {
    ko_pin(r);
    r->gone = 1;
    r->comm = MPI_COMM_NULL;
  }
  r->req = (MPI_Request)(intptr_t)++kt_synth;
  r->freed = 1;
  return 1;
}

int MPI_Request_free(MPI_Request *req) {
  MPI_Request r = *req;
  int err = PMPI_Request_free(req);
  if (!kt_on()) return err;
  for (int i = 0; i < kt_npers; i++)
    if (kt_pers[i].req == r) {
      kt_pers[i] = kt_pers[--kt_npers];
      break;
    }
  kt_pfree(r);
  int i = kt_find(r);
  if (i >= 0 && kt_keepfreed(&kt_reqs[i])) {
    kt_nlatewait++;
  } else if (i >= 0) {
    int twin = kt_reqs[i].twin;
    kt_nfreed++;
    kt_drop(i);
    if (twin && (i = kt_find(r)) >= 0) kt_drop(i); /* an MPI_Isendrecv's receive */
  }
  for (i = 0; i < kt_nicoll; i++) /* erroneous for a non-blocking collective: its line stays in its place */
    if (!kt_icolls[i].done && kt_icolls[i].req == r) kt_icolls[i].done = 1;
  return err;
}

/* MPI_Cancel marks a pending request: its completion says whether it was
 * cancelled (kt_settle). TI has no cancel: a cancelled request's lines
 * are blanked; the OTF2 archive has the call's region and, where it
 * completes, Score-P's MpiRequestCancelled. */
int MPI_Cancel(MPI_Request *req) {
  MPI_Request r = *req;
  kt_enter(R_CANCEL);
  int err = PMPI_Cancel(req);
  if (kt_on() && err == MPI_SUCCESS) {
    for (int i = 0; i < kt_nreq; i++) /* both messages of an MPI_Isendrecv */
      if (kt_reqs[i].req == r) kt_reqs[i].cancel = 1;
  }
  kt_leave();
  return err;
}

/* Probes. TI has no probe action: a probe writes no line, but its time is
 * not the program's computation (a blocking MPI_Probe may wait long for
 * its message), so the computation written before the next call counts
 * from the probe's end. The OTF2 archive has the probe's region, without
 * MPI records, as Score-P writes it. A matched probe (MPI_Mprobe, or
 * MPI_Improbe that found a message) takes its message out of MPI's
 * matching: a receive posted after it, even of the same source and tag,
 * gets the next message. So the matched probe is written as the receive
 * it makes certain, in both traces: an irecv of the message's source, tag
 * and size (a pending request of the tracer's own handle, kt_synth),
 * completed where MPI_Mrecv returns, or where MPI_Imrecv's request
 * completes (the request becomes the program's). Written at MPI_Mrecv, a
 * receive posted between the probe and it took the probed message in a
 * replay (MPICH's pt2pt/mprobe: a truncation). MPI_MESSAGE_NO_PROC (a
 * probe of MPI_PROC_NULL) and an MPI_Improbe that found nothing write
 * nothing. */
struct kt_msg {
  MPI_Message msg;
  MPI_Request req; /* its pending irecv's handle (kt_post) */
};
static struct kt_msg *kt_msgs;
static int kt_nmsg, kt_capmsg;

/* kt_probed writes the irecv of message msg, probed on comm with status
 * st, and keeps msg with its request. */
static void kt_probed(MPI_Message msg, MPI_Comm comm, const MPI_Status *st) {
  if (msg == MPI_MESSAGE_NULL || msg == MPI_MESSAGE_NO_PROC) return;
  int from = kt_world(comm, st->MPI_SOURCE);
  if (from == KT_ELSEWHERE) {
    kt_lose();
    return;
  }
  if (kt_nmsg == kt_capmsg) {
    kt_capmsg = kt_capmsg ? 2 * kt_capmsg : 16;
    kt_msgs = realloc(kt_msgs, kt_capmsg * sizeof *kt_msgs);
    if (!kt_msgs) abort();
  }
  MPI_Request q = (MPI_Request)(intptr_t)++kt_synth;
  ko_irecv_request(kt_post(q, 0, from, st->MPI_SOURCE, st->MPI_TAG, kt_got(st, MPI_BYTE), comm));
  kt_reqs[kt_nreq - 1].probed = 1;
  kt_msgs[kt_nmsg++] = (struct kt_msg){msg, q};
}

/* kt_take forgets message msg and returns the index of its pending
 * irecv, or -1 if it was not kept. */
static int kt_take(MPI_Message msg) {
  for (int i = 0; i < kt_nmsg; i++)
    if (kt_msgs[i].msg == msg) {
      MPI_Request q = kt_msgs[i].req;
      kt_msgs[i] = kt_msgs[--kt_nmsg];
      return kt_find(q);
    }
  return -1;
}

/* kt_leave_probe is kt_leave for a probe, which it counts. */
static void kt_leave_probe(void) {
  if (!kt_on()) return;
  kt_leave();
  kt_probe_n++, kt_probe_s += (double)(kt_last - kt_t0) * 1e-9;
}

int MPI_Probe(int src, int tag, MPI_Comm comm, MPI_Status *status) {
  kt_enter(R_PROBE);
  int err = PMPI_Probe(src, tag, comm, status);
  kt_leave_probe();
  return err;
}

int MPI_Iprobe(int src, int tag, MPI_Comm comm, int *flag, MPI_Status *status) {
  kt_enter(R_IPROBE);
  int err = PMPI_Iprobe(src, tag, comm, flag, status);
  kt_leave_probe();
  return err;
}

int MPI_Mprobe(int src, int tag, MPI_Comm comm, MPI_Message *msg, MPI_Status *status) {
  MPI_Status st;
  if (status == MPI_STATUS_IGNORE) status = &st;
  kt_enter(R_MPROBE);
  int err = PMPI_Mprobe(src, tag, comm, msg, status);
  if (kt_on() && err == MPI_SUCCESS) kt_probed(*msg, comm, status);
  kt_leave_probe();
  return err;
}

int MPI_Improbe(int src, int tag, MPI_Comm comm, int *flag, MPI_Message *msg, MPI_Status *status) {
  MPI_Status st;
  if (status == MPI_STATUS_IGNORE) status = &st;
  kt_enter(R_IMPROBE);
  int err = PMPI_Improbe(src, tag, comm, flag, msg, status);
  if (kt_on() && err == MPI_SUCCESS && *flag) kt_probed(*msg, comm, status);
  kt_leave_probe();
  return err;
}

int MPI_Mrecv(void *buf, int count, MPI_Datatype t, MPI_Message *msg, MPI_Status *status) {
  MPI_Message m = *msg;
  MPI_Status st;
  if (status == MPI_STATUS_IGNORE) status = &st;
  kt_enter(R_MRECV);
  int err = PMPI_Mrecv(buf, count, t, msg, status);
  int i = kt_on() ? kt_take(m) : -1;
  if (i >= 0) kt_done(i, status);
  kt_leave();
  return err;
}

int MPI_Imrecv(void *buf, int count, MPI_Datatype t, MPI_Message *msg, MPI_Request *req) {
  MPI_Message m = *msg;
  kt_enter(R_IMRECV);
  int err = PMPI_Imrecv(buf, count, t, msg, req);
  int i = kt_on() && err == MPI_SUCCESS ? kt_take(m) : -1;
  if (i >= 0) kt_reqs[i].req = *req, kt_reqs[i].probed = 0; /* completed where the program's request completes */
  kt_leave();
  return err;
}

/* Neighborhood collectives (on a communicator with a topology). TI has
 * no action for them, nor has SimGrid's replay, but one is a message to
 * each out-neighbour and from each in-neighbour (MPI_PROC_NULL left out),
 * which both traces have as they: their isends and irecvs, with tag
 * KN_TAG, the neighbours in the topology's order, but for a Cartesian
 * topology's isends, the + neighbour's of each dimension before the -
 * one's: a neighbour met twice (on a periodic dimension of one or two
 * ranks) gets two messages, matched in order, and the block sent to the +
 * neighbour is the one it receives from its - neighbour, first; then
 * their completions: at once for a blocking call; for a
 * non-blocking one, where it completes, after the computation it
 * overlapped (in TI as a non-blocking collective's line, kt_ibegin). The
 * OTF2 archive has them on MPI_COMM_WORLD, as Score-P's records of a
 * program's own isends and irecvs: no blocking send there can deadlock a
 * replay. */

/* kn_neighbors returns comm's in- and out-neighbours (malloc'ed, one
 * block: out follows in), their numbers in *nin and *nout, and whether the
 * topology is Cartesian; NULL if comm has no topology. */
static int *kn_neighbors(MPI_Comm comm, int *nin, int *nout, int *cart) {
  int topo = MPI_UNDEFINED, n = 0, *v = NULL;
  PMPI_Topo_test(comm, &topo);
  *cart = topo == MPI_CART;
  if (topo == MPI_CART) {
    PMPI_Cartdim_get(comm, &n);
    if (!(v = malloc(sizeof *v * (4 * (size_t)n + 1)))) return NULL;
    for (int d = 0; d < n; d++) PMPI_Cart_shift(comm, d, 1, &v[2 * d], &v[2 * d + 1]);
    memcpy(v + 2 * n, v, sizeof *v * 2 * (size_t)n);
    *nin = *nout = 2 * n;
  } else if (topo == MPI_GRAPH) {
    PMPI_Graph_neighbors_count(comm, kt_crank(comm), &n);
    if (!(v = malloc(sizeof *v * (2 * (size_t)n + 1)))) return NULL;
    PMPI_Graph_neighbors(comm, kt_crank(comm), n, v);
    memcpy(v + n, v, sizeof *v * (size_t)n);
    *nin = *nout = n;
  } else if (topo == MPI_DIST_GRAPH) {
    int in = 0, out = 0, weighted = 0;
    PMPI_Dist_graph_neighbors_count(comm, &in, &out, &weighted);
    int *w = malloc(sizeof *w * ((size_t)in + (size_t)out + 1));
    if (!w || !(v = malloc(sizeof *v * ((size_t)in + (size_t)out + 1)))) {
      free(w);
      return NULL;
    }
    PMPI_Dist_graph_neighbors(comm, in, v, weighted ? w : MPI_UNWEIGHTED, out, v + in, weighted ? w + in : MPI_UNWEIGHTED);
    free(w);
    *nin = in, *nout = out;
  }
  return v;
}

/* kn_bytes is the bytes of block i: counts[i] (or count) elements of
 * types[i] (or t). */
static long kn_bytes(int i, int count, const int *counts, MPI_Datatype t, const MPI_Datatype *types) {
  return kt_bytes(counts ? counts[i] : count, types ? types[i] : t);
}

/* kn_messages records a neighborhood collective on comm as its messages:
 * a blocking one's (req NULL), or that of request *req, completed where
 * it completes; or as left out where comm has no topology or a neighbour
 * is of another world. */
static void kn_messages(MPI_Comm comm, const MPI_Request *req, int sc, const int *scs, MPI_Datatype st,
                        const MPI_Datatype *sts, int rc, const int *rcs, MPI_Datatype rt, const MPI_Datatype *rts) {
  if (!kt_on()) return;
  int nin = 0, nout = 0, cart = 0, *nb = kn_neighbors(comm, &nin, &nout, &cart), ok = nb != NULL;
  for (int i = 0; ok && i < nin + nout; i++) {
    if (nb[i] != MPI_PROC_NULL && (nb[i] = kt_world(comm, nb[i])) == KT_ELSEWHERE) ok = 0;
  }
  if (!ok) {
    kt_lose();
    free(nb);
    return;
  }
  const int *in = nb, *out = nb + nin;
  struct kn_msg *m = malloc(sizeof *m * ((size_t)nin + (size_t)nout + 1));
  if (!m) abort();
  int n = 0;
  for (int j = 0; j < nout; j++) {
    int i = cart ? j ^ 1 : j; /* a dimension's + neighbour first */
    if (out[i] != MPI_PROC_NULL) {
      m[n] = (struct kn_msg){++kt_nextid, 1, out[i], kn_bytes(i, sc, scs, st, sts)};
      kt_p2p("isend", out[i], KN_TAG, m[n++].bytes);
    }
  }
  for (int i = 0; i < nin; i++)
    if (in[i] != MPI_PROC_NULL) {
      m[n] = (struct kn_msg){++kt_nextid, 0, in[i], kn_bytes(i, rc, rcs, rt, rts)};
      kt_p2p("irecv", in[i], KN_TAG, m[n++].bytes);
    }
  for (int k = 0; k < n; k++) ko_kn(&m[k], 0);
  int aside = req && kt_ibegin(MPI_SUCCESS, *req);
  for (int k = 0; k < n; k++)
    kt_keyed("wait", m[k].send ? kt_rank : m[k].peer, m[k].send ? m[k].peer : kt_rank, KN_TAG);
  if (aside) {
    kt_icur->msgs = m, kt_icur->nmsgs = n;
    kt_iend();
  } else {
    for (int k = 0; k < n; k++) ko_kn(&m[k], 1);
    free(m);
  }
  kn_written++;
  free(nb);
}

/* KN_BLOCKING calls a blocking neighborhood collective and records its
 * messages; KN_NONBLOCKING a non-blocking one, of request req. */
#define KN_BLOCKING(r, call, ...)                                                                                      \
  kt_enter(r);                                                                                                         \
  int err = call;                                                                                                      \
  kn_messages(comm, NULL, __VA_ARGS__);                                                                                \
  kt_leave();                                                                                                          \
  return err;
#define KN_NONBLOCKING(r, call, ...)                                                                                   \
  kt_enter(r);                                                                                                         \
  int err = call;                                                                                                      \
  if (err == MPI_SUCCESS) kn_messages(comm, req, __VA_ARGS__);                                                         \
  kt_leave();                                                                                                          \
  return err;

int MPI_Neighbor_allgather(const void *sb, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt, MPI_Comm comm) {
  KN_BLOCKING(R_NEIGHBOR_ALLGATHER, PMPI_Neighbor_allgather(sb, sc, st, rb, rc, rt, comm), sc, NULL, st, NULL, rc,
              NULL, rt, NULL)
}
int MPI_Neighbor_allgatherv(const void *sb, int sc, MPI_Datatype st, void *rb, const int rc[], const int rd[],
                            MPI_Datatype rt, MPI_Comm comm) {
  KN_BLOCKING(R_NEIGHBOR_ALLGATHERV, PMPI_Neighbor_allgatherv(sb, sc, st, rb, rc, rd, rt, comm), sc, NULL, st, NULL,
              0, rc, rt, NULL)
}
int MPI_Neighbor_alltoall(const void *sb, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt, MPI_Comm comm) {
  KN_BLOCKING(R_NEIGHBOR_ALLTOALL, PMPI_Neighbor_alltoall(sb, sc, st, rb, rc, rt, comm), sc, NULL, st, NULL, rc, NULL,
              rt, NULL)
}
int MPI_Neighbor_alltoallv(const void *sb, const int sc[], const int sd[], MPI_Datatype st, void *rb, const int rc[],
                           const int rd[], MPI_Datatype rt, MPI_Comm comm) {
  KN_BLOCKING(R_NEIGHBOR_ALLTOALLV, PMPI_Neighbor_alltoallv(sb, sc, sd, st, rb, rc, rd, rt, comm), 0, sc, st, NULL, 0,
              rc, rt, NULL)
}
int MPI_Neighbor_alltoallw(const void *sb, const int sc[], const MPI_Aint sd[], const MPI_Datatype st[], void *rb,
                           const int rc[], const MPI_Aint rd[], const MPI_Datatype rt[], MPI_Comm comm) {
  KN_BLOCKING(R_NEIGHBOR_ALLTOALLW, PMPI_Neighbor_alltoallw(sb, sc, sd, st, rb, rc, rd, rt, comm), 0, sc,
              MPI_DATATYPE_NULL, st, 0, rc, MPI_DATATYPE_NULL, rt)
}
int MPI_Ineighbor_allgather(const void *sb, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt, MPI_Comm comm,
                            MPI_Request *req) {
  KN_NONBLOCKING(R_INEIGHBOR_ALLGATHER, PMPI_Ineighbor_allgather(sb, sc, st, rb, rc, rt, comm, req), sc, NULL, st, NULL,
                 rc, NULL, rt, NULL)
}
int MPI_Ineighbor_allgatherv(const void *sb, int sc, MPI_Datatype st, void *rb, const int rc[], const int rd[],
                             MPI_Datatype rt, MPI_Comm comm, MPI_Request *req) {
  KN_NONBLOCKING(R_INEIGHBOR_ALLGATHERV, PMPI_Ineighbor_allgatherv(sb, sc, st, rb, rc, rd, rt, comm, req), sc, NULL, st,
                 NULL, 0, rc, rt, NULL)
}
int MPI_Ineighbor_alltoall(const void *sb, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt, MPI_Comm comm,
                           MPI_Request *req) {
  KN_NONBLOCKING(R_INEIGHBOR_ALLTOALL, PMPI_Ineighbor_alltoall(sb, sc, st, rb, rc, rt, comm, req), sc, NULL, st, NULL,
                 rc, NULL, rt, NULL)
}
int MPI_Ineighbor_alltoallv(const void *sb, const int sc[], const int sd[], MPI_Datatype st, void *rb, const int rc[],
                            const int rd[], MPI_Datatype rt, MPI_Comm comm, MPI_Request *req) {
  KN_NONBLOCKING(R_INEIGHBOR_ALLTOALLV, PMPI_Ineighbor_alltoallv(sb, sc, sd, st, rb, rc, rd, rt, comm, req), 0, sc, st,
                 NULL, 0, rc, rt, NULL)
}
int MPI_Ineighbor_alltoallw(const void *sb, const int sc[], const MPI_Aint sd[], const MPI_Datatype st[], void *rb,
                            const int rc[], const MPI_Aint rd[], const MPI_Datatype rt[], MPI_Comm comm,
                            MPI_Request *req) {
  KN_NONBLOCKING(R_INEIGHBOR_ALLTOALLW, PMPI_Ineighbor_alltoallw(sb, sc, sd, st, rb, rc, rd, rt, comm, req), 0, sc,
                 MPI_DATATYPE_NULL, st, 0, rc, MPI_DATATYPE_NULL, rt)
}

/* Communicator creation (KC_REGIONS): the call's time is MPI time, in
 * neither the TI trace (no line, no computation) nor its summary, as for
 * the probes; the OTF2 archive has its region. */
#define KC_CALL(r, call)                                                                                               \
  kt_enter(r);                                                                                                         \
  int err = call;                                                                                                      \
  kt_leave();                                                                                                          \
  return err;

static void ko_made(MPI_Comm parent, MPI_Comm newcomm);
static void ko_intermade(MPI_Comm newcomm);

/* KC_MADE is KC_CALL for a call every member of comm makes that makes
 * *newcomm (ko_made). */
#define KC_MADE(r, call)                                                                                               \
  kt_enter(r);                                                                                                         \
  int err = call;                                                                                                      \
  if (err == MPI_SUCCESS && kt_on()) ko_made(comm, *newcomm);                                                          \
  kt_leave();                                                                                                          \
  return err;

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm) { KC_MADE(R_COMM_DUP, PMPI_Comm_dup(comm, newcomm)) }
int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm) {
  KC_MADE(R_COMM_DUP_WITH_INFO, PMPI_Comm_dup_with_info(comm, info, newcomm))
}
static void ko_idup(MPI_Comm parent, MPI_Comm *newcomm, MPI_Request req);
static void ko_freed(MPI_Comm comm);

/* MPI_Comm_free's time is MPI time, as a creation's (Score-P and
 * sst-dumpi record it; it read as computation). */
int MPI_Comm_free(MPI_Comm *comm) {
  kt_enter(R_COMM_FREE);
  if (kt_on()) {
    kt_freeing(*comm);
    ko_freed(*comm);
  }
  int err = PMPI_Comm_free(comm);
  kt_leave();
  return err;
}

/* MPI_Comm_idup's communicator, whose handle is valid once its request
 * completes, is registered there (ko_idup). */
int MPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *req) {
  kt_enter(R_COMM_IDUP);
  int err = PMPI_Comm_idup(comm, newcomm, req);
  if (err == MPI_SUCCESS && kt_on()) ko_idup(comm, newcomm, *req);
  kt_leave();
  return err;
}
int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm) {
  KC_MADE(R_COMM_SPLIT, PMPI_Comm_split(comm, color, key, newcomm))
}
int MPI_Comm_split_type(MPI_Comm comm, int type, int key, MPI_Info info, MPI_Comm *newcomm) {
  KC_MADE(R_COMM_SPLIT_TYPE, PMPI_Comm_split_type(comm, type, key, info, newcomm))
}
int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm) {
  KC_MADE(R_COMM_CREATE, PMPI_Comm_create(comm, group, newcomm))
}
int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm) {
  KC_CALL(R_COMM_CREATE_GROUP, PMPI_Comm_create_group(comm, group, tag, newcomm))
}
int MPI_Cart_create(MPI_Comm comm, int ndims, const int dims[], const int periods[], int reorder, MPI_Comm *newcomm) {
  KC_MADE(R_CART_CREATE, PMPI_Cart_create(comm, ndims, dims, periods, reorder, newcomm))
}
int MPI_Cart_sub(MPI_Comm comm, const int remain[], MPI_Comm *newcomm) {
  KC_MADE(R_CART_SUB, PMPI_Cart_sub(comm, remain, newcomm))
}
int MPI_Graph_create(MPI_Comm comm, int nnodes, const int index[], const int edges[], int reorder, MPI_Comm *newcomm) {
  KC_MADE(R_GRAPH_CREATE, PMPI_Graph_create(comm, nnodes, index, edges, reorder, newcomm))
}
int MPI_Dist_graph_create(MPI_Comm comm, int n, const int sources[], const int degrees[], const int destinations[],
                          const int weights[], MPI_Info info, int reorder, MPI_Comm *newcomm) {
  KC_MADE(R_DIST_GRAPH_CREATE,
          PMPI_Dist_graph_create(comm, n, sources, degrees, destinations, weights, info, reorder, newcomm))
}
int MPI_Dist_graph_create_adjacent(MPI_Comm comm, int indegree, const int sources[], const int sourceweights[],
                                   int outdegree, const int destinations[], const int destweights[], MPI_Info info,
                                   int reorder, MPI_Comm *newcomm) {
  KC_MADE(R_DIST_GRAPH_CREATE_ADJACENT, PMPI_Dist_graph_create_adjacent(comm, indegree, sources, sourceweights, outdegree,
                                                                         destinations, destweights, info, reorder,
                                                                         newcomm))
}
int MPI_Intercomm_create(MPI_Comm local, int local_leader, MPI_Comm peer, int remote_leader, int tag,
                         MPI_Comm *newcomm) {
  kt_enter(R_INTERCOMM_CREATE);
  int err = PMPI_Intercomm_create(local, local_leader, peer, remote_leader, tag, newcomm);
  if (err == MPI_SUCCESS && kt_on()) ko_intermade(*newcomm);
  kt_leave();
  return err;
}
int MPI_Intercomm_merge(MPI_Comm comm, int high, MPI_Comm *newcomm) {
  KC_CALL(R_INTERCOMM_MERGE, PMPI_Intercomm_merge(comm, high, newcomm))
}

/* Fortran bindings: the wrappers of mpif.h's and the mpi module's
 * calls (mpi_send_...; with Open MPI, also the mpi_f08 module's, which
 * call its ompi_send_f...) convert their arguments and call the C
 * wrappers above, so that a Fortran program's trace is the C program's.
 * MPI_Fint is the C int (the default Fortran INTEGER). Fortran's
 * MPI_IN_PLACE and MPI_BOTTOM are addresses the MPI library names (Open
 * MPI's common blocks, MPICH's MPIR_F_MPI_IN_PLACE), found at MPI_Init;
 * Fortran's MPI_STATUS_IGNORE and MPI_STATUSES_IGNORE are MPI-3's
 * MPI_F_STATUS_IGNORE and MPI_F_STATUSES_IGNORE. Logical results are
 * gfortran's (1 for .true.), indices are from 1. */
#include <dlfcn.h>

_Static_assert(sizeof(MPI_Fint) == sizeof(int), "the tracer's Fortran bindings need a 4-byte default INTEGER");

/* MPICH's MPI_STATUSES_IGNORE is (MPI_Status *)1, which GCC takes for an
 * empty array when it reaches a wrapper's statuses[]. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif

typedef MPI_Fint F;

static void *kf_in_place, *kf_bottom; /* Fortran's MPI_IN_PLACE and MPI_BOTTOM */
static size_t kf_status_size;         /* Fortran's MPI_STATUS_SIZE */

/* kf_start finds the addresses of Fortran's MPI_IN_PLACE and MPI_BOTTOM. */
static void kf_start(void) {
  void **p;
  kf_status_size = sizeof(MPI_Status) / sizeof(F);
  if ((kf_in_place = dlsym(RTLD_DEFAULT, "mpi_fortran_in_place_"))) { /* Open MPI */
    kf_bottom = dlsym(RTLD_DEFAULT, "mpi_fortran_bottom_");
    return;
  }
  if ((p = dlsym(RTLD_DEFAULT, "MPIR_F_MPI_IN_PLACE"))) kf_in_place = *p; /* MPICH */
  if ((p = dlsym(RTLD_DEFAULT, "MPIR_F_MPI_BOTTOM"))) kf_bottom = *p;
}

/* kf_buf returns the C buffer of Fortran buffer b. */
static void *kf_buf(void *b) {
  if (b && b == kf_in_place) return MPI_IN_PLACE;
  if (b && b == kf_bottom) return MPI_BOTTOM;
  return b;
}

#define KF_TYPE(t) PMPI_Type_f2c(*(t))
#define KF_COMM(c) PMPI_Comm_f2c(*(c))
#define KF_OP(o) PMPI_Op_f2c(*(o))

/* kf_status returns where the C call puts its status: c, or
 * MPI_STATUS_IGNORE where the Fortran status f is ignored;
 * kf_status_out copies it to f. c starts as f, since a call that
 * completes one request leaves the MPI_ERROR field as it was, which a
 * program may check (MPICH's f77/pt2pt/mprobef found it overwritten). */
static MPI_Status *kf_status(F *f, MPI_Status *c) {
  if (f == MPI_F_STATUS_IGNORE) return MPI_STATUS_IGNORE;
  PMPI_Status_f2c(f, c);
  return c;
}
static void kf_status_out(const MPI_Status *c, F *f) {
  if (f != MPI_F_STATUS_IGNORE) PMPI_Status_c2f(c, f);
}

/* kf_reqs converts n Fortran requests to C (freed with kf_reqs_out,
 * which converts them back). */
static MPI_Request *kf_reqs(int n, const F *f) {
  MPI_Request *c = malloc((n > 0 ? n : 1) * sizeof *c);
  if (!c) abort();
  for (int i = 0; i < n; i++) c[i] = PMPI_Request_f2c(f[i]);
  return c;
}

static void kf_reqs_out(int n, MPI_Request *c, F *f) {
  for (int i = 0; i < n; i++) f[i] = PMPI_Request_c2f(c[i]);
  free(c);
}

/* kf_statuses returns where the C call puts n statuses (MPI_STATUSES_IGNORE
 * where Fortran's are ignored); kf_statuses_out copies the first n to f
 * and frees them. */
static MPI_Status *kf_statuses(int n, F *f) {
  if (f == MPI_F_STATUSES_IGNORE) return MPI_STATUSES_IGNORE;
  MPI_Status *c = malloc((n > 0 ? n : 1) * sizeof *c);
  if (!c) abort();
  for (int i = 0; i < n; i++) PMPI_Status_f2c(f + i * kf_status_size, &c[i]); /* their MPI_ERROR kept, as kf_status's */
  return c;
}

static void kf_statuses_out(int n, MPI_Status *c, F *f) {
  if (c == MPI_STATUSES_IGNORE) return;
  for (int i = 0; i < n; i++) PMPI_Status_c2f(&c[i], f + i * kf_status_size);
  free(c);
}

/* kf_index returns Fortran's index of C index i. */
static F kf_index(int i) { return i == MPI_UNDEFINED ? i : i + 1; }

/* kf_types converts n Fortran datatypes to C (NULL for NULL). */
static MPI_Datatype *kf_types(int n, const F *f) {
  if (!f) return NULL;
  MPI_Datatype *c = malloc((n > 0 ? n : 1) * sizeof *c);
  if (!c) abort();
  for (int i = 0; i < n; i++) c[i] = PMPI_Type_f2c(f[i]);
  return c;
}

/* KF_NAMES gives the wrapper mpi_x_ the other names Fortran compilers and
 * Open MPI's mpi_f08 call it by. The plain lowercase name (mpi_send: IBM
 * XL Fortran, gfortran -fno-underscoring) only with
 * -DKAIROS_FORTRAN_PLAIN_NAMES: preloaded, the tracer's symbol would
 * replace a C library's own function of that name (Rmpi defines mpi_send,
 * mpi_bcast... and crashed in the Fortran wrapper). */
#define KF_ALIAS(f, name) extern __typeof(f) name __attribute__((alias(#f)));
#ifdef KAIROS_FORTRAN_PLAIN_NAMES
#define KF_PLAIN(x) KF_ALIAS(mpi_##x##_, mpi_##x)
#else
#define KF_PLAIN(x)
#endif
#define KF_NAMES(x, X)                                                                                                 \
  KF_PLAIN(x) KF_ALIAS(mpi_##x##_, mpi_##x##__) KF_ALIAS(mpi_##x##_, MPI_##X) KF_ALIAS(mpi_##x##_, ompi_##x##_f)

/* kf_init calls the MPI library's own Fortran MPI_Init (or, with
 * required set, MPI_Init_thread), name, which sets its Fortran side up,
 * and starts tracing. */
static void kf_init(const char *name, F *required, F *provided, F *ierr) {
  uint64_t t = kt_now();
  void *f = dlsym(RTLD_NEXT, name);
  if (!required) {
    if (f) ((void (*)(F *))f)(ierr);
    else *ierr = PMPI_Init(NULL, NULL);
  } else {
    if (f) ((void (*)(F *, F *, F *))f)(required, provided, ierr);
    else *ierr = PMPI_Init_thread(NULL, NULL, *required, provided);
  }
  kt_open(required ? R_INIT_THREAD : R_INIT, t);
  ko_start();
}

void mpi_init_(F *ierr) { kf_init("pmpi_init_", NULL, NULL, ierr); }
KF_NAMES(init, INIT)
void mpi_init_thread_(F *required, F *provided, F *ierr) { kf_init("pmpi_init_thread_", required, provided, ierr); }
KF_NAMES(init_thread, INIT_THREAD)
void mpi_finalize_(F *ierr) { *ierr = MPI_Finalize(); }
KF_NAMES(finalize, FINALIZE)
void mpi_abort_(F *comm, F *errorcode, F *ierr) { *ierr = MPI_Abort(KF_COMM(comm), (int)*errorcode); }
KF_NAMES(abort, ABORT)

/* Point-to-point calls. */

void mpi_send_(void *buf, F *count, F *t, F *dest, F *tag, F *comm, F *ierr) {
  *ierr = MPI_Send(kf_buf(buf), *count, KF_TYPE(t), *dest, *tag, KF_COMM(comm));
}
KF_NAMES(send, SEND)
void mpi_ssend_(void *buf, F *count, F *t, F *dest, F *tag, F *comm, F *ierr) {
  *ierr = MPI_Ssend(kf_buf(buf), *count, KF_TYPE(t), *dest, *tag, KF_COMM(comm));
}
KF_NAMES(ssend, SSEND)
void mpi_bsend_(void *buf, F *count, F *t, F *dest, F *tag, F *comm, F *ierr) {
  *ierr = MPI_Bsend(kf_buf(buf), *count, KF_TYPE(t), *dest, *tag, KF_COMM(comm));
}
KF_NAMES(bsend, BSEND)
void mpi_rsend_(void *buf, F *count, F *t, F *dest, F *tag, F *comm, F *ierr) {
  *ierr = MPI_Rsend(kf_buf(buf), *count, KF_TYPE(t), *dest, *tag, KF_COMM(comm));
}
KF_NAMES(rsend, RSEND)

/* KF_START_P2P defines the wrapper of a call that starts a request (isend,
 * the persistent inits): the C call c with the converted arguments. */
#define KF_START_P2P(x, X, c)                                                                                          \
  void mpi_##x##_(void *buf, F *count, F *t, F *peer, F *tag, F *comm, F *req, F *ierr) {                              \
    MPI_Request r;                                                                                                     \
    *ierr = c(kf_buf(buf), *count, KF_TYPE(t), *peer, *tag, KF_COMM(comm), &r);                                        \
    if (*ierr == MPI_SUCCESS) *req = PMPI_Request_c2f(r);                                                              \
  }                                                                                                                    \
  KF_NAMES(x, X)
KF_START_P2P(isend, ISEND, MPI_Isend)
KF_START_P2P(issend, ISSEND, MPI_Issend)
KF_START_P2P(ibsend, IBSEND, MPI_Ibsend)
KF_START_P2P(irsend, IRSEND, MPI_Irsend)
KF_START_P2P(irecv, IRECV, MPI_Irecv)
KF_START_P2P(send_init, SEND_INIT, MPI_Send_init)
KF_START_P2P(ssend_init, SSEND_INIT, MPI_Ssend_init)
KF_START_P2P(bsend_init, BSEND_INIT, MPI_Bsend_init)
KF_START_P2P(rsend_init, RSEND_INIT, MPI_Rsend_init)
KF_START_P2P(recv_init, RECV_INIT, MPI_Recv_init)

void mpi_recv_(void *buf, F *count, F *t, F *src, F *tag, F *comm, F *status, F *ierr) {
  MPI_Status s;
  *ierr = MPI_Recv(kf_buf(buf), *count, KF_TYPE(t), *src, *tag, KF_COMM(comm), kf_status(status, &s));
  kf_status_out(&s, status);
}
KF_NAMES(recv, RECV)

void mpi_sendrecv_(void *sbuf, F *scount, F *st, F *dest, F *stag, void *rbuf, F *rcount, F *rt, F *src, F *rtag,
                   F *comm, F *status, F *ierr) {
  MPI_Status s;
  *ierr = MPI_Sendrecv(kf_buf(sbuf), *scount, KF_TYPE(st), *dest, *stag, kf_buf(rbuf), *rcount, KF_TYPE(rt), *src,
                       *rtag, KF_COMM(comm), kf_status(status, &s));
  kf_status_out(&s, status);
}
KF_NAMES(sendrecv, SENDRECV)

void mpi_sendrecv_replace_(void *buf, F *count, F *t, F *dest, F *stag, F *src, F *rtag, F *comm, F *status,
                           F *ierr) {
  MPI_Status s;
  *ierr = MPI_Sendrecv_replace(kf_buf(buf), *count, KF_TYPE(t), *dest, *stag, *src, *rtag, KF_COMM(comm),
                               kf_status(status, &s));
  kf_status_out(&s, status);
}
KF_NAMES(sendrecv_replace, SENDRECV_REPLACE)

/* Completions. */

void mpi_wait_(F *req, F *status, F *ierr) {
  MPI_Request r = PMPI_Request_f2c(*req);
  MPI_Status s;
  *ierr = MPI_Wait(&r, kf_status(status, &s));
  *req = PMPI_Request_c2f(r);
  kf_status_out(&s, status);
}
KF_NAMES(wait, WAIT)

void mpi_test_(F *req, F *flag, F *status, F *ierr) {
  MPI_Request r = PMPI_Request_f2c(*req);
  MPI_Status s;
  int done = 0;
  *ierr = MPI_Test(&r, &done, kf_status(status, &s));
  *req = PMPI_Request_c2f(r), *flag = done != 0;
  if (done) kf_status_out(&s, status);
}
KF_NAMES(test, TEST)

void mpi_waitall_(F *n, F *reqs, F *statuses, F *ierr) {
  MPI_Request *r = kf_reqs(*n, reqs);
  MPI_Status *s = kf_statuses(*n, statuses);
  *ierr = MPI_Waitall(*n, r, s);
  kf_reqs_out(*n, r, reqs);
  kf_statuses_out(*n, s, statuses);
}
KF_NAMES(waitall, WAITALL)

void mpi_testall_(F *n, F *reqs, F *flag, F *statuses, F *ierr) {
  MPI_Request *r = kf_reqs(*n, reqs);
  MPI_Status *s = kf_statuses(*n, statuses);
  int done = 0;
  *ierr = MPI_Testall(*n, r, &done, s);
  *flag = done != 0;
  kf_reqs_out(*n, r, reqs);
  kf_statuses_out(done ? *n : 0, s, statuses);
}
KF_NAMES(testall, TESTALL)

void mpi_waitany_(F *n, F *reqs, F *index, F *status, F *ierr) {
  MPI_Request *r = kf_reqs(*n, reqs);
  MPI_Status s;
  int i = MPI_UNDEFINED;
  *ierr = MPI_Waitany(*n, r, &i, kf_status(status, &s));
  kf_reqs_out(*n, r, reqs);
  *index = kf_index(i);
  if (i != MPI_UNDEFINED) kf_status_out(&s, status);
}
KF_NAMES(waitany, WAITANY)

void mpi_testany_(F *n, F *reqs, F *index, F *flag, F *status, F *ierr) {
  MPI_Request *r = kf_reqs(*n, reqs);
  MPI_Status s;
  int i = MPI_UNDEFINED, done = 0;
  *ierr = MPI_Testany(*n, r, &i, &done, kf_status(status, &s));
  kf_reqs_out(*n, r, reqs);
  *index = kf_index(i), *flag = done != 0;
  if (done && i != MPI_UNDEFINED) kf_status_out(&s, status);
}
KF_NAMES(testany, TESTANY)

/* kf_some is waitsome and testsome: some is MPI_Waitsome or MPI_Testsome. */
static void kf_some(int (*some)(int, MPI_Request[], int *, int[], MPI_Status[]), F *n, F *reqs, F *outcount,
                    F *indices, F *statuses, F *ierr) {
  MPI_Request *r = kf_reqs(*n, reqs);
  MPI_Status *s = kf_statuses(*n, statuses);
  int out = MPI_UNDEFINED;
  *ierr = some(*n, r, &out, indices, s);
  kf_reqs_out(*n, r, reqs);
  *outcount = out;
  for (int i = 0; i < out && out != MPI_UNDEFINED; i++) indices[i]++;
  kf_statuses_out(out == MPI_UNDEFINED ? 0 : out, s, statuses);
}

void mpi_waitsome_(F *n, F *reqs, F *outcount, F *indices, F *statuses, F *ierr) {
  kf_some(MPI_Waitsome, n, reqs, outcount, indices, statuses, ierr);
}
KF_NAMES(waitsome, WAITSOME)
void mpi_testsome_(F *n, F *reqs, F *outcount, F *indices, F *statuses, F *ierr) {
  kf_some(MPI_Testsome, n, reqs, outcount, indices, statuses, ierr);
}
KF_NAMES(testsome, TESTSOME)

void mpi_start_(F *req, F *ierr) {
  MPI_Request r = PMPI_Request_f2c(*req);
  *ierr = MPI_Start(&r);
}
KF_NAMES(start, START)

void mpi_startall_(F *n, F *reqs, F *ierr) {
  MPI_Request *r = kf_reqs(*n, reqs);
  *ierr = MPI_Startall(*n, r);
  kf_reqs_out(*n, r, reqs);
}
KF_NAMES(startall, STARTALL)

void mpi_cancel_(F *req, F *ierr) {
  MPI_Request r = PMPI_Request_f2c(*req);
  *ierr = MPI_Cancel(&r);
}
KF_NAMES(cancel, CANCEL)

void mpi_request_free_(F *req, F *ierr) {
  MPI_Request r = PMPI_Request_f2c(*req);
  *ierr = MPI_Request_free(&r);
  *req = PMPI_Request_c2f(r);
}
KF_NAMES(request_free, REQUEST_FREE)

/* Probes and matched receives. */

void mpi_probe_(F *src, F *tag, F *comm, F *status, F *ierr) {
  MPI_Status s;
  *ierr = MPI_Probe(*src, *tag, KF_COMM(comm), kf_status(status, &s));
  kf_status_out(&s, status);
}
KF_NAMES(probe, PROBE)

void mpi_iprobe_(F *src, F *tag, F *comm, F *flag, F *status, F *ierr) {
  MPI_Status s;
  int found = 0;
  *ierr = MPI_Iprobe(*src, *tag, KF_COMM(comm), &found, kf_status(status, &s));
  *flag = found != 0;
  if (found) kf_status_out(&s, status);
}
KF_NAMES(iprobe, IPROBE)

void mpi_mprobe_(F *src, F *tag, F *comm, F *msg, F *status, F *ierr) {
  MPI_Status s;
  MPI_Message m;
  *ierr = MPI_Mprobe(*src, *tag, KF_COMM(comm), &m, kf_status(status, &s));
  *msg = PMPI_Message_c2f(m);
  kf_status_out(&s, status);
}
KF_NAMES(mprobe, MPROBE)

void mpi_improbe_(F *src, F *tag, F *comm, F *flag, F *msg, F *status, F *ierr) {
  MPI_Status s;
  MPI_Message m = MPI_MESSAGE_NULL;
  int found = 0;
  *ierr = MPI_Improbe(*src, *tag, KF_COMM(comm), &found, &m, kf_status(status, &s));
  *flag = found != 0;
  if (found) {
    *msg = PMPI_Message_c2f(m);
    kf_status_out(&s, status);
  }
}
KF_NAMES(improbe, IMPROBE)

void mpi_mrecv_(void *buf, F *count, F *t, F *msg, F *status, F *ierr) {
  MPI_Message m = PMPI_Message_f2c(*msg);
  MPI_Status s;
  *ierr = MPI_Mrecv(kf_buf(buf), *count, KF_TYPE(t), &m, kf_status(status, &s));
  *msg = PMPI_Message_c2f(m);
  kf_status_out(&s, status);
}
KF_NAMES(mrecv, MRECV)

void mpi_imrecv_(void *buf, F *count, F *t, F *msg, F *req, F *ierr) {
  MPI_Message m = PMPI_Message_f2c(*msg);
  MPI_Request r;
  *ierr = MPI_Imrecv(kf_buf(buf), *count, KF_TYPE(t), &m, &r);
  *msg = PMPI_Message_c2f(m);
  if (*ierr == MPI_SUCCESS) *req = PMPI_Request_c2f(r);
}
KF_NAMES(imrecv, IMRECV)

/* Collectives: KF_COLL defines the wrappers of C calls c and ic, a
 * collective and its non-blocking form, with Fortran parameters params
 * and C arguments args (the non-blocking one also has its request). */
#define KF_UNPAREN(...) __VA_ARGS__
#define KF_COLL(x, X, c, ic, params, args)                                                                             \
  void mpi_##x##_(KF_UNPAREN params, F *ierr) { *ierr = c(KF_UNPAREN args); }                                          \
  KF_NAMES(x, X)                                                                                                       \
  void mpi_i##x##_(KF_UNPAREN params, F *req, F *ierr) {                                                               \
    MPI_Request r;                                                                                                     \
    *ierr = ic(KF_UNPAREN args, &r);                                                                                   \
    if (*ierr == MPI_SUCCESS) *req = PMPI_Request_c2f(r);                                                              \
  }                                                                                                                    \
  KF_NAMES(i##x, I##X)

KF_COLL(barrier, BARRIER, MPI_Barrier, MPI_Ibarrier, (F * comm), (KF_COMM(comm)))
KF_COLL(bcast, BCAST, MPI_Bcast, MPI_Ibcast, (void *buf, F *count, F *t, F *root, F *comm),
        (kf_buf(buf), *count, KF_TYPE(t), *root, KF_COMM(comm)))
KF_COLL(reduce, REDUCE, MPI_Reduce, MPI_Ireduce, (void *sbuf, void *rbuf, F *count, F *t, F *op, F *root, F *comm),
        (kf_buf(sbuf), kf_buf(rbuf), *count, KF_TYPE(t), KF_OP(op), *root, KF_COMM(comm)))
KF_COLL(allreduce, ALLREDUCE, MPI_Allreduce, MPI_Iallreduce, (void *sbuf, void *rbuf, F *count, F *t, F *op, F *comm),
        (kf_buf(sbuf), kf_buf(rbuf), *count, KF_TYPE(t), KF_OP(op), KF_COMM(comm)))
KF_COLL(scan, SCAN, MPI_Scan, MPI_Iscan, (void *sbuf, void *rbuf, F *count, F *t, F *op, F *comm),
        (kf_buf(sbuf), kf_buf(rbuf), *count, KF_TYPE(t), KF_OP(op), KF_COMM(comm)))
KF_COLL(exscan, EXSCAN, MPI_Exscan, MPI_Iexscan, (void *sbuf, void *rbuf, F *count, F *t, F *op, F *comm),
        (kf_buf(sbuf), kf_buf(rbuf), *count, KF_TYPE(t), KF_OP(op), KF_COMM(comm)))
KF_COLL(alltoall, ALLTOALL, MPI_Alltoall, MPI_Ialltoall,
        (void *sbuf, F *scount, F *st, void *rbuf, F *rcount, F *rt, F *comm),
        (kf_buf(sbuf), *scount, KF_TYPE(st), kf_buf(rbuf), *rcount, KF_TYPE(rt), KF_COMM(comm)))
KF_COLL(allgather, ALLGATHER, MPI_Allgather, MPI_Iallgather,
        (void *sbuf, F *scount, F *st, void *rbuf, F *rcount, F *rt, F *comm),
        (kf_buf(sbuf), *scount, KF_TYPE(st), kf_buf(rbuf), *rcount, KF_TYPE(rt), KF_COMM(comm)))
KF_COLL(gather, GATHER, MPI_Gather, MPI_Igather,
        (void *sbuf, F *scount, F *st, void *rbuf, F *rcount, F *rt, F *root, F *comm),
        (kf_buf(sbuf), *scount, KF_TYPE(st), kf_buf(rbuf), *rcount, KF_TYPE(rt), *root, KF_COMM(comm)))
KF_COLL(scatter, SCATTER, MPI_Scatter, MPI_Iscatter,
        (void *sbuf, F *scount, F *st, void *rbuf, F *rcount, F *rt, F *root, F *comm),
        (kf_buf(sbuf), *scount, KF_TYPE(st), kf_buf(rbuf), *rcount, KF_TYPE(rt), *root, KF_COMM(comm)))
KF_COLL(alltoallv, ALLTOALLV, MPI_Alltoallv, MPI_Ialltoallv,
        (void *sbuf, F *scounts, F *sdispls, F *st, void *rbuf, F *rcounts, F *rdispls, F *rt, F *comm),
        (kf_buf(sbuf), scounts, sdispls, KF_TYPE(st), kf_buf(rbuf), rcounts, rdispls, KF_TYPE(rt), KF_COMM(comm)))
KF_COLL(allgatherv, ALLGATHERV, MPI_Allgatherv, MPI_Iallgatherv,
        (void *sbuf, F *scount, F *st, void *rbuf, F *rcounts, F *displs, F *rt, F *comm),
        (kf_buf(sbuf), *scount, KF_TYPE(st), kf_buf(rbuf), rcounts, displs, KF_TYPE(rt), KF_COMM(comm)))
KF_COLL(gatherv, GATHERV, MPI_Gatherv, MPI_Igatherv,
        (void *sbuf, F *scount, F *st, void *rbuf, F *rcounts, F *displs, F *rt, F *root, F *comm),
        (kf_buf(sbuf), *scount, KF_TYPE(st), kf_buf(rbuf), rcounts, displs, KF_TYPE(rt), *root, KF_COMM(comm)))
KF_COLL(scatterv, SCATTERV, MPI_Scatterv, MPI_Iscatterv,
        (void *sbuf, F *scounts, F *displs, F *st, void *rbuf, F *rcount, F *rt, F *root, F *comm),
        (kf_buf(sbuf), scounts, displs, KF_TYPE(st), kf_buf(rbuf), *rcount, KF_TYPE(rt), *root, KF_COMM(comm)))
KF_COLL(reduce_scatter, REDUCE_SCATTER, MPI_Reduce_scatter, MPI_Ireduce_scatter,
        (void *sbuf, void *rbuf, F *rcounts, F *t, F *op, F *comm),
        (kf_buf(sbuf), kf_buf(rbuf), rcounts, KF_TYPE(t), KF_OP(op), KF_COMM(comm)))
KF_COLL(reduce_scatter_block, REDUCE_SCATTER_BLOCK, MPI_Reduce_scatter_block, MPI_Ireduce_scatter_block,
        (void *sbuf, void *rbuf, F *rcount, F *t, F *op, F *comm),
        (kf_buf(sbuf), kf_buf(rbuf), *rcount, KF_TYPE(t), KF_OP(op), KF_COMM(comm)))

/* The neighborhood collectives; alltoallw's below. */
KF_COLL(neighbor_allgather, NEIGHBOR_ALLGATHER, MPI_Neighbor_allgather, MPI_Ineighbor_allgather,
        (void *sbuf, F *scount, F *st, void *rbuf, F *rcount, F *rt, F *comm),
        (kf_buf(sbuf), *scount, KF_TYPE(st), kf_buf(rbuf), *rcount, KF_TYPE(rt), KF_COMM(comm)))
KF_COLL(neighbor_allgatherv, NEIGHBOR_ALLGATHERV, MPI_Neighbor_allgatherv, MPI_Ineighbor_allgatherv,
        (void *sbuf, F *scount, F *st, void *rbuf, F *rcounts, F *displs, F *rt, F *comm),
        (kf_buf(sbuf), *scount, KF_TYPE(st), kf_buf(rbuf), rcounts, displs, KF_TYPE(rt), KF_COMM(comm)))
KF_COLL(neighbor_alltoall, NEIGHBOR_ALLTOALL, MPI_Neighbor_alltoall, MPI_Ineighbor_alltoall,
        (void *sbuf, F *scount, F *st, void *rbuf, F *rcount, F *rt, F *comm),
        (kf_buf(sbuf), *scount, KF_TYPE(st), kf_buf(rbuf), *rcount, KF_TYPE(rt), KF_COMM(comm)))
KF_COLL(neighbor_alltoallv, NEIGHBOR_ALLTOALLV, MPI_Neighbor_alltoallv, MPI_Ineighbor_alltoallv,
        (void *sbuf, F *scounts, F *sdispls, F *st, void *rbuf, F *rcounts, F *rdispls, F *rt, F *comm),
        (kf_buf(sbuf), scounts, sdispls, KF_TYPE(st), kf_buf(rbuf), rcounts, rdispls, KF_TYPE(rt), KF_COMM(comm)))

/* kf_neighbor_alltoallw is neighbor_alltoallw (req NULL) and its
 * non-blocking form: a datatype for each in- and out-neighbour, and
 * displacements of INTEGER(KIND=MPI_ADDRESS_KIND), MPI_Aint's. */
static void kf_neighbor_alltoallw(void *sbuf, F *scounts, MPI_Aint *sdispls, F *sts, void *rbuf, F *rcounts,
                                  MPI_Aint *rdispls, F *rts, F *comm, F *req, F *ierr) {
  MPI_Comm c = KF_COMM(comm);
  int nin = 0, nout = 0, cart = 0, *nb = kn_neighbors(c, &nin, &nout, &cart);
  free(nb);
  MPI_Datatype *st = kf_types(nout, sts), *rt = kf_types(nin, rts);
  MPI_Request r;
  if (req) {
    *ierr = MPI_Ineighbor_alltoallw(kf_buf(sbuf), scounts, sdispls, st, kf_buf(rbuf), rcounts, rdispls, rt, c, &r);
    if (*ierr == MPI_SUCCESS) *req = PMPI_Request_c2f(r);
  } else
    *ierr = MPI_Neighbor_alltoallw(kf_buf(sbuf), scounts, sdispls, st, kf_buf(rbuf), rcounts, rdispls, rt, c);
  free(st);
  free(rt);
}

void mpi_neighbor_alltoallw_(void *sbuf, F *scounts, MPI_Aint *sdispls, F *sts, void *rbuf, F *rcounts,
                             MPI_Aint *rdispls, F *rts, F *comm, F *ierr) {
  kf_neighbor_alltoallw(sbuf, scounts, sdispls, sts, rbuf, rcounts, rdispls, rts, comm, NULL, ierr);
}
KF_NAMES(neighbor_alltoallw, NEIGHBOR_ALLTOALLW)
void mpi_ineighbor_alltoallw_(void *sbuf, F *scounts, MPI_Aint *sdispls, F *sts, void *rbuf, F *rcounts,
                              MPI_Aint *rdispls, F *rts, F *comm, F *req, F *ierr) {
  kf_neighbor_alltoallw(sbuf, scounts, sdispls, sts, rbuf, rcounts, rdispls, rts, comm, req, ierr);
}
KF_NAMES(ineighbor_alltoallw, INEIGHBOR_ALLTOALLW)

/* kf_alltoallw is alltoallw (req NULL) and ialltoallw, their datatypes
 * converted (the send ones only where they are not ignored). */
static void kf_alltoallw(void *sbuf, F *scounts, F *sdispls, F *sts, void *rbuf, F *rcounts, F *rdispls, F *rts,
                         F *comm, F *req, F *ierr) {
  MPI_Comm c = KF_COMM(comm);
  int n = kt_csize(c);
  void *sb = kf_buf(sbuf);
  MPI_Datatype *st = sb == MPI_IN_PLACE ? NULL : kf_types(n, sts), *rt = kf_types(n, rts);
  MPI_Request r;
  if (req) {
    *ierr = MPI_Ialltoallw(sb, scounts, sdispls, st, kf_buf(rbuf), rcounts, rdispls, rt, c, &r);
    if (*ierr == MPI_SUCCESS) *req = PMPI_Request_c2f(r);
  } else
    *ierr = MPI_Alltoallw(sb, scounts, sdispls, st, kf_buf(rbuf), rcounts, rdispls, rt, c);
  free(st);
  free(rt);
}

void mpi_alltoallw_(void *sbuf, F *scounts, F *sdispls, F *sts, void *rbuf, F *rcounts, F *rdispls, F *rts, F *comm,
                    F *ierr) {
  kf_alltoallw(sbuf, scounts, sdispls, sts, rbuf, rcounts, rdispls, rts, comm, NULL, ierr);
}
KF_NAMES(alltoallw, ALLTOALLW)
void mpi_ialltoallw_(void *sbuf, F *scounts, F *sdispls, F *sts, void *rbuf, F *rcounts, F *rdispls, F *rts,
                     F *comm, F *req, F *ierr) {
  kf_alltoallw(sbuf, scounts, sdispls, sts, rbuf, rcounts, rdispls, rts, comm, req, ierr);
}
KF_NAMES(ialltoallw, IALLTOALLW)

/* Communicator creation; Fortran's logicals are gfortran's 0 and 1, as C's. */
void mpi_comm_dup_(F *comm, F *newcomm, F *ierr) {
  MPI_Comm c;
  *ierr = MPI_Comm_dup(KF_COMM(comm), &c);
  *newcomm = PMPI_Comm_c2f(c);
}
KF_NAMES(comm_dup, COMM_DUP)
void mpi_comm_dup_with_info_(F *comm, F *info, F *newcomm, F *ierr) {
  MPI_Comm c;
  *ierr = MPI_Comm_dup_with_info(KF_COMM(comm), PMPI_Info_f2c(*info), &c);
  *newcomm = PMPI_Comm_c2f(c);
}
KF_NAMES(comm_dup_with_info, COMM_DUP_WITH_INFO)
void mpi_comm_split_(F *comm, F *color, F *key, F *newcomm, F *ierr) {
  MPI_Comm c;
  *ierr = MPI_Comm_split(KF_COMM(comm), *color, *key, &c);
  *newcomm = PMPI_Comm_c2f(c);
}
KF_NAMES(comm_split, COMM_SPLIT)
void mpi_comm_split_type_(F *comm, F *type, F *key, F *info, F *newcomm, F *ierr) {
  MPI_Comm c;
  *ierr = MPI_Comm_split_type(KF_COMM(comm), *type, *key, PMPI_Info_f2c(*info), &c);
  *newcomm = PMPI_Comm_c2f(c);
}
KF_NAMES(comm_split_type, COMM_SPLIT_TYPE)
void mpi_comm_create_(F *comm, F *group, F *newcomm, F *ierr) {
  MPI_Comm c;
  *ierr = MPI_Comm_create(KF_COMM(comm), PMPI_Group_f2c(*group), &c);
  *newcomm = PMPI_Comm_c2f(c);
}
KF_NAMES(comm_create, COMM_CREATE)
void mpi_comm_create_group_(F *comm, F *group, F *tag, F *newcomm, F *ierr) {
  MPI_Comm c;
  *ierr = MPI_Comm_create_group(KF_COMM(comm), PMPI_Group_f2c(*group), *tag, &c);
  *newcomm = PMPI_Comm_c2f(c);
}
KF_NAMES(comm_create_group, COMM_CREATE_GROUP)
void mpi_cart_create_(F *comm, F *ndims, F *dims, F *periods, F *reorder, F *newcomm, F *ierr) {
  MPI_Comm c;
  *ierr = MPI_Cart_create(KF_COMM(comm), *ndims, dims, periods, *reorder, &c);
  *newcomm = PMPI_Comm_c2f(c);
}
KF_NAMES(cart_create, CART_CREATE)
void mpi_cart_sub_(F *comm, F *remain, F *newcomm, F *ierr) {
  MPI_Comm c;
  *ierr = MPI_Cart_sub(KF_COMM(comm), remain, &c);
  *newcomm = PMPI_Comm_c2f(c);
}
KF_NAMES(cart_sub, CART_SUB)
void mpi_graph_create_(F *comm, F *nnodes, F *index, F *edges, F *reorder, F *newcomm, F *ierr) {
  MPI_Comm c;
  *ierr = MPI_Graph_create(KF_COMM(comm), *nnodes, index, edges, *reorder, &c);
  *newcomm = PMPI_Comm_c2f(c);
}
KF_NAMES(graph_create, GRAPH_CREATE)
void mpi_intercomm_create_(F *local, F *local_leader, F *peer, F *remote_leader, F *tag, F *newcomm, F *ierr) {
  MPI_Comm c;
  *ierr = MPI_Intercomm_create(KF_COMM(local), *local_leader, KF_COMM(peer), *remote_leader, *tag, &c);
  *newcomm = PMPI_Comm_c2f(c);
}
KF_NAMES(intercomm_create, INTERCOMM_CREATE)
void mpi_intercomm_merge_(F *comm, F *high, F *newcomm, F *ierr) {
  MPI_Comm c;
  *ierr = MPI_Intercomm_merge(KF_COMM(comm), *high, &c);
  *newcomm = PMPI_Comm_c2f(c);
}
KF_NAMES(intercomm_merge, INTERCOMM_MERGE)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#ifdef KAIROS_OTF2
void mpi_comm_free_(F *comm, F *ierr) {
  MPI_Comm c = KF_COMM(comm);
  *ierr = MPI_Comm_free(&c);
  *comm = PMPI_Comm_c2f(c);
}
KF_NAMES(comm_free, COMM_FREE)
#endif

#ifdef KAIROS_OTF2
/* The OTF2 archive: every rank writes its events (location r is rank r);
 * at MPI_Finalize rank 0 writes the definitions. */
#define OTF2_MPI_USE_PMPI
#include <dlfcn.h>
#include <elf.h>
#include <otf2/OTF2_MPI_Collectives.h>
#include <otf2/otf2.h>


static OTF2_Archive *ko_archive;
static OTF2_EvtWriter *ko_evt;
static OTF2_AttributeList *ko_attrs; /* of the next record */
enum { KO_ATTR_SEND, KO_ATTR_RECV }; /* the attributes kairos:sendcounts, kairos:recvcounts */
static uint64_t ko_first; /* the first timestamp, MPI_Init's start */

/* Sub-communicators: each rank numbers the ones it makes or its
 * collectives use from 1 (0 is MPI_COMM_WORLD) and keeps their members as
 * world ranks and their identity by creation (key, ko_made; 0 where it is
 * not known: the communicator is then one with any other of its members),
 * and made counts those made from it so far; rank 0 unifies them at
 * MPI_Finalize into the archive's communicators, and the ranks' numbers
 * are mapped to them by mapping tables. */
struct ko_comm {
  MPI_Comm handle; /* MPI_COMM_NULL once freed */
  int n;
  int *members;
  uint64_t key;
  uint32_t made;
  int inter; /* an intercommunicator: members are both groups' (ko_add) */
};
static struct ko_comm *ko_comms;
static int ko_ncomms;
static uint32_t ko_world_made; /* communicators made from MPI_COMM_WORLD */

/* Clock synchronization, as Score-P's: at MPI_Init and at MPI_Finalize
 * every rank measures its clock's offset to rank 0's by ping-pong, keeping
 * the exchange with the shortest round trip (Cristian's method); the two
 * measures are the location's ClockOffset definitions, from which readers
 * correct its timestamps by linear interpolation (offset and drift). The
 * ranks on rank 0's node read its clock (CLOCK_REALTIME is the node's):
 * their offset is 0, exactly, unmeasured (measured, it was the noise of
 * an oversubscribed node's round trips, up to milliseconds, and readers
 * saw a root leave a reduce before a member entered it). */
enum { KO_PINGS = 10, KO_SYNC_TAG = 1 };
struct ko_offset {
  uint64_t at;   /* local time of the measure */
  int64_t off;   /* rank 0's time minus the local time there */
  double stddev; /* half the shortest round trip */
};
static struct ko_offset ko_sync_at[2];
static int ko_nsync;
static MPI_Comm ko_sync_comm = MPI_COMM_NULL;
static pthread_t ko_thread; /* the thread that initialized MPI */
static int ko_away;         /* the rank is on another node than rank 0's */
static int *ko_away_of;     /* on rank 0: each rank's ko_away */

/* ko_find_away sets ko_away, and ko_away_of on rank 0 (collective over
 * ko_sync_comm). */
static void ko_find_away(void) {
  MPI_Comm node;
  int lowest = kt_rank;
  if (PMPI_Comm_split_type(ko_sync_comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
    PMPI_Allreduce(&kt_rank, &lowest, 1, MPI_INT, MPI_MIN, node);
    PMPI_Comm_free(&node);
  }
  ko_away = lowest != 0;
  if (kt_rank == 0 && !(ko_away_of = malloc((size_t)kt_size * sizeof *ko_away_of))) abort();
  PMPI_Gather(&ko_away, 1, MPI_INT, ko_away_of, 1, MPI_INT, 0, ko_sync_comm);
}

/* ko_measure measures, on a rank of another node than rank 0's, its
 * offset to rank 0's clock. */
static struct ko_offset ko_measure(void) {
  struct ko_offset o = {kt_now(), 0, 0};
  uint64_t best = UINT64_MAX;
  for (int k = 0; k < KO_PINGS; k++) {
    uint64_t t0 = kt_now(), tm;
    PMPI_Send(NULL, 0, MPI_BYTE, 0, KO_SYNC_TAG, ko_sync_comm);
    PMPI_Recv(&tm, 1, MPI_UINT64_T, 0, KO_SYNC_TAG, ko_sync_comm, MPI_STATUS_IGNORE);
    uint64_t t1 = kt_now();
    if (t1 - t0 < best) {
      best = t1 - t0;
      o.at = t0 + best / 2;
      o.off = (int64_t)(tm - o.at);
      o.stddev = (double)best / 2;
    }
  }
  return o;
}

static void ko_sync(void) {
  struct ko_offset o = {0, 0, 0};
  if (ko_nsync == 0) ko_find_away();
  if (kt_rank == 0) {
    for (int r = 1; r < kt_size; r++)
      for (int k = 0; ko_away_of[r] && k < KO_PINGS; k++) {
        uint64_t t;
        PMPI_Recv(NULL, 0, MPI_BYTE, r, KO_SYNC_TAG, ko_sync_comm, MPI_STATUS_IGNORE);
        t = kt_now();
        PMPI_Send(&t, 1, MPI_UINT64_T, r, KO_SYNC_TAG, ko_sync_comm);
      }
    o.at = kt_now();
  } else if (ko_away) {
    o = ko_measure();
  } else {
    o.at = kt_now();
  }
  /* A change of offset within the two measures' errors (each at most
   * half its round trip) is no drift: over a short run, correcting it
   * would stretch every duration by the noise over the run's length.
   * Both measures then take the offset of the more precise one (a rank
   * that waited for the core at MPI_Init measured it a millisecond or
   * two off, its MPI_Finalize's within microseconds). */
  if (ko_nsync == 1 && llabs(o.off - ko_sync_at[0].off) <= o.stddev + ko_sync_at[0].stddev) {
    if (o.stddev < ko_sync_at[0].stddev) ko_sync_at[0].off = o.off;
    else o.off = ko_sync_at[0].off;
  }
  if (ko_nsync < 2) ko_sync_at[ko_nsync++] = o;
  if (ko_nsync == 2) {
    free(ko_away_of);
    ko_away_of = NULL;
  }
}

/* ko_global is local time t on rank 0's clock, by the offset of measure
 * which (0 at MPI_Init, 1 at MPI_Finalize; the ClockProperties' bounds
 * need no interpolation). */
static uint64_t ko_global(uint64_t t, int which) { return t + (uint64_t)ko_sync_at[which].off; }

static OTF2_FlushType ko_pre_flush(void *u, OTF2_FileType ft, OTF2_LocationRef l, void *c, bool final) {
  (void)u, (void)ft, (void)l, (void)c, (void)final;
  return OTF2_FLUSH;
}

static OTF2_TimeStamp ko_post_flush(void *u, OTF2_FileType ft, OTF2_LocationRef l) {
  (void)u, (void)ft, (void)l;
  return kt_now();
}

static OTF2_FlushCallbacks ko_flush = {ko_pre_flush, ko_post_flush};

/* ko_open starts the archive DIR/traces.otf2 on every rank, or on none:
 * an archive there already is left alone (rank 0 says so). */
static int ko_open(const char *dir) {
  char path[4096];
  struct stat st;
  int exists = 0;
  if (kt_rank == 0) {
    snprintf(path, sizeof path, "%s/traces.otf2", dir);
    exists = stat(path, &st) == 0;
    snprintf(path, sizeof path, "%s/traces", dir);
    exists = exists || stat(path, &st) == 0;
  }
  PMPI_Bcast(&exists, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (exists) {
    if (kt_rank == 0)
      fprintf(stderr,
              "kairos_trace: %s holds an OTF2 archive already (traces.otf2, traces/): remove it or set KAIROS_TRACE "
              "to another directory; no OTF2 archive written\n",
              dir);
    return 0;
  }
  ko_archive = OTF2_Archive_Open(dir, "traces", OTF2_FILEMODE_WRITE, 1 << 20, 4 << 20, OTF2_SUBSTRATE_POSIX,
                                 OTF2_COMPRESSION_NONE);
  if (!kt_all(ko_archive != NULL)) {
    if (kt_rank == 0) fprintf(stderr, "kairos_trace: cannot create the OTF2 archive %s/traces.otf2\n", dir);
    ko_archive = NULL; /* left open where it was: closing is collective */
    return 0;
  }
  OTF2_Archive_SetFlushCallbacks(ko_archive, &ko_flush, NULL);
  OTF2_MPI_Archive_SetCollectiveCallbacks(ko_archive, MPI_COMM_WORLD, MPI_COMM_NULL);
  OTF2_Archive_SetCreator(ko_archive, "Kairos tracer");
  if (!(ko_attrs = OTF2_AttributeList_New())) abort();
  int ok = OTF2_Archive_OpenEvtFiles(ko_archive) == OTF2_SUCCESS;
  ok = ok && (ko_evt = OTF2_Archive_GetEvtWriter(ko_archive, (OTF2_LocationRef)kt_rank)) != NULL;
  if (!kt_all(ok)) {
    if (kt_rank == 0) fprintf(stderr, "kairos_trace: cannot write the OTF2 events in %s\n", dir);
    ko_evt = NULL;
    OTF2_Archive_Close(ko_archive);
    ko_archive = NULL;
    return 0;
  }
  PMPI_Comm_dup(MPI_COMM_WORLD, &ko_sync_comm);
  ko_sync();
  return 1;
}

/* ko_writing reports whether this run writes an OTF2 archive. */
static int ko_writing(void) { return ko_evt != NULL; }

static int ko_in_call; /* between an MPI call's Enter and Leave */

static void ko_enter(int region, uint64_t t) {
  if (!ko_evt) return;
  if (!ko_first) ko_first = t;
  ko_in_call = 1;
  OTF2_EvtWriter_Enter(ko_evt, NULL, t, (OTF2_RegionRef)region);
}

static void ko_leave(int region, uint64_t t) {
  ko_in_call = 0;
  if (ko_evt) OTF2_EvtWriter_Leave(ko_evt, NULL, t, (OTF2_RegionRef)region);
}

/* User functions. A program compiled with -finstrument-functions calls
 * the two hooks below at every entry to and exit from its functions; on
 * the thread that initialized MPI, between MPI_Init and MPI_Finalize and
 * outside MPI calls, they are the Enter and Leave records of the function's
 * region, so that the archive has the call paths of Score-P's compiler
 * instrumentation. Each rank numbers the functions it enters from
 * R_NREGIONS; at MPI_Finalize it names them (dladdr's symbol, else the
 * module's symbol table's, else module+offset), rank 0 unifies the names into
 * the archive's regions and a mapping table translates each rank's
 * numbers. */
struct ko_fn {
  void *addr;
  uint32_t id; /* 0: an empty slot */
};
struct ko_frame {
  void *addr;
  uint32_t id;
  uint64_t t; /* entered at, if before MPI_Init */
};
static struct ko_fn *ko_fns; /* open addressing by address */
static size_t ko_fncap;
static void **ko_fnaddr; /* by number - R_NREGIONS */
static uint32_t ko_nfn;
static struct ko_frame *ko_frames; /* the functions entered and not left */
static int ko_depth, ko_framecap;
static int ko_started; /* MPI_Init was called */
#define KO_NOINSTR __attribute__((no_instrument_function))

KO_NOINSTR static size_t ko_slot(void *fn, size_t cap) {
  size_t h = ((uintptr_t)fn >> 4) * 0x9E3779B97F4A7C15u;
  for (h &= cap - 1; ko_fns[h].id != 0 && ko_fns[h].addr != fn; h = (h + 1) & (cap - 1)) {
  }
  return h;
}

/* ko_fn_id returns the region number of function fn, numbering it on its
 * first entry. */
KO_NOINSTR static uint32_t ko_fn_id(void *fn) {
  if (2 * (ko_nfn + 1) > ko_fncap) {
    struct ko_fn *old = ko_fns;
    size_t oldcap = ko_fncap;
    ko_fncap = oldcap ? 2 * oldcap : 256;
    ko_fns = calloc(ko_fncap, sizeof *ko_fns);
    ko_fnaddr = realloc(ko_fnaddr, ko_fncap * sizeof *ko_fnaddr);
    if (!ko_fns || !ko_fnaddr) abort();
    for (size_t i = 0; i < oldcap; i++)
      if (old[i].id != 0) ko_fns[ko_slot(old[i].addr, ko_fncap)] = old[i];
    free(old);
  }
  size_t h = ko_slot(fn, ko_fncap);
  if (ko_fns[h].id == 0) {
    ko_fns[h].addr = fn;
    ko_fns[h].id = R_NREGIONS + ko_nfn;
    ko_fnaddr[ko_nfn++] = fn;
  }
  return ko_fns[h].id;
}

/* ko_user reports whether the hooks record: before MPI_Init (the
 * functions entered then, main among them, are written when the archive
 * opens), and then while it is open, outside MPI calls, on its thread. */
KO_NOINSTR static int ko_user(void) {
  return !ko_started || (ko_evt && !ko_in_call && pthread_equal(pthread_self(), ko_thread));
}

KO_NOINSTR void __cyg_profile_func_enter(void *fn, void *site) {
  (void)site;
  if (!ko_user()) return;
  if (ko_depth == ko_framecap) {
    ko_framecap = ko_framecap ? 2 * ko_framecap : 64;
    ko_frames = realloc(ko_frames, ko_framecap * sizeof *ko_frames);
    if (!ko_frames) abort();
  }
  struct ko_frame f = {fn, ko_fn_id(fn), kt_now()};
  ko_frames[ko_depth++] = f;
  if (ko_evt) OTF2_EvtWriter_Enter(ko_evt, NULL, f.t, f.id);
}

/* Only the innermost function entered is left: an exit from a function
 * entered where the hooks do not record has no Enter to match. */
KO_NOINSTR void __cyg_profile_func_exit(void *fn, void *site) {
  (void)site;
  if (!ko_user() || ko_depth == 0 || ko_frames[ko_depth - 1].addr != fn) return;
  ko_depth--;
  if (ko_evt) OTF2_EvtWriter_Leave(ko_evt, NULL, kt_now(), ko_frames[ko_depth].id);
}

/* ko_start is called in MPI_Init once the archive is open (or is not to
 * be): the functions entered before are entered in it. */
static void ko_start(void) {
  if (ko_started) return;
  ko_started = 1;
  ko_thread = pthread_self();
  if (!ko_evt) ko_depth = 0;
  for (int i = 0; i < ko_depth; i++) {
    if (!ko_first) ko_first = ko_frames[i].t;
    OTF2_EvtWriter_Enter(ko_evt, NULL, ko_frames[i].t, ko_frames[i].id);
  }
}

/* ko_syms is the symbol table of the last ELF file ko_elf_name read
 * (most instrumented functions are in one: the program). */
static struct {
  char *path;
  Elf64_Sym *syms;
  size_t nsyms, nstr;
  char *str;
  int exec; /* symbol values are addresses (else offsets from the base) */
} ko_syms;

/* ko_load_syms reads the symbol table of the ELF file path into ko_syms,
 * and reports whether it has one. */
static int ko_load_syms(const char *path) {
  if (ko_syms.path && strcmp(ko_syms.path, path) == 0) return ko_syms.syms != NULL;
  free(ko_syms.path), free(ko_syms.syms), free(ko_syms.str);
  memset(&ko_syms, 0, sizeof ko_syms);
  ko_syms.path = strdup(path);
  FILE *f = fopen(path, "rb");
  if (!f) return 0;
  Elf64_Ehdr eh;
  Elf64_Shdr *sh = NULL;
  if (fread(&eh, sizeof eh, 1, f) != 1 || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
      eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shentsize != sizeof *sh || eh.e_shnum == 0)
    goto done;
  sh = malloc(eh.e_shnum * sizeof *sh);
  if (!sh || fseek(f, (long)eh.e_shoff, SEEK_SET) != 0 || fread(sh, sizeof *sh, eh.e_shnum, f) != eh.e_shnum) goto done;
  for (int i = 0; i < eh.e_shnum; i++) {
    if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh.e_shnum || sh[i].sh_entsize != sizeof(Elf64_Sym)) continue;
    const Elf64_Shdr *st = &sh[sh[i].sh_link];
    size_t n = sh[i].sh_size / sizeof(Elf64_Sym);
    ko_syms.syms = malloc(n * sizeof *ko_syms.syms + 1);
    ko_syms.str = malloc(st->sh_size + 1);
    if (!ko_syms.syms || !ko_syms.str || fseek(f, (long)sh[i].sh_offset, SEEK_SET) != 0 ||
        fread(ko_syms.syms, sizeof *ko_syms.syms, n, f) != n || fseek(f, (long)st->sh_offset, SEEK_SET) != 0 ||
        fread(ko_syms.str, 1, st->sh_size, f) != st->sh_size) {
      free(ko_syms.syms), free(ko_syms.str);
      ko_syms.syms = NULL, ko_syms.str = NULL;
      break;
    }
    ko_syms.str[st->sh_size] = 0;
    ko_syms.nsyms = n;
    ko_syms.nstr = st->sh_size;
    ko_syms.exec = eh.e_type == ET_EXEC;
    break;
  }
done:
  free(sh);
  fclose(f);
  return ko_syms.syms != NULL;
}

/* ko_elf_name looks up, in the symbol table of the ELF file path (loaded
 * at base), the function that holds address addr, for the functions
 * dladdr cannot name (static ones, or all of a program linked without
 * -rdynamic); it reports whether it found one, named in name. */
static int ko_elf_name(const char *path, void *base, void *addr, char *name, size_t size) {
  if (!ko_load_syms(path)) return 0;
  uint64_t want = ko_syms.exec ? (uint64_t)(uintptr_t)addr : (uint64_t)((char *)addr - (char *)base);
  for (size_t k = 0; k < ko_syms.nsyms; k++) {
    const Elf64_Sym *sym = &ko_syms.syms[k];
    if (ELF64_ST_TYPE(sym->st_info) == STT_FUNC && want >= sym->st_value && want < sym->st_value + sym->st_size &&
        sym->st_name < ko_syms.nstr && ko_syms.str[sym->st_name] != 0) {
      snprintf(name, size, "%s", ko_syms.str + sym->st_name);
      return 1;
    }
  }
  return 0;
}

/* ko_fn_names returns the names of this rank's functions, in order of
 * number, each ended by a NUL, and their length in *len. */
static char *ko_fn_names(int *len) {
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap), name[512];
  if (!buf) abort();
  for (uint32_t i = 0; i < ko_nfn; i++) {
    Dl_info info = {0};
    if (!dladdr(ko_fnaddr[i], &info)) {
      snprintf(name, sizeof name, "%p", ko_fnaddr[i]);
    } else if (info.dli_sname) {
      snprintf(name, sizeof name, "%s", info.dli_sname);
    } else if (!ko_elf_name(info.dli_fname, info.dli_fbase, ko_fnaddr[i], name, sizeof name)) {
      const char *base = strrchr(info.dli_fname, '/');
      snprintf(name, sizeof name, "%s+0x%lx", base ? base + 1 : info.dli_fname,
               (unsigned long)((char *)ko_fnaddr[i] - (char *)info.dli_fbase));
    }
    size_t l = strlen(name) + 1;
    if (n + l > cap) {
      while (n + l > cap) cap *= 2;
      buf = realloc(buf, cap);
      if (!buf) abort();
    }
    memcpy(buf + n, name, l);
    n += l;
  }
  *len = (int)n;
  return buf;
}

/* ko_unify_names gathers every rank's names (flat: mine of them, each
 * ended by a NUL, len bytes; freed here) at rank 0, which keeps the
 * distinct ones in *names (NUL-ended, *nnames of them, *nameslen bytes),
 * numbered from first; it returns this rank's mapping, local number i to
 * global number map[i]. The function names, the count vectors, windows and files are
 * unified so. */
static uint32_t *ko_unify_names(char *flat, int len, int mine, uint32_t first, char **names, int *nnames,
                                int *nameslen) {
  int *lens = NULL, *displs = NULL, *counts = NULL, *cdispls = NULL, total = 0, ntotal = 0;
  char *all = NULL;
  int *nums = NULL;
  *names = NULL, *nnames = 0, *nameslen = 0;
  if (kt_rank == 0) {
    lens = calloc(kt_size, sizeof *lens), displs = calloc(kt_size, sizeof *displs);
    counts = calloc(kt_size, sizeof *counts), cdispls = calloc(kt_size, sizeof *cdispls);
    if (!lens || !displs || !counts || !cdispls) abort();
  }
  PMPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, MPI_COMM_WORLD);
  PMPI_Gather(&mine, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (kt_rank == 0) {
    for (int r = 0; r < kt_size; r++) {
      displs[r] = total, total += lens[r];
      cdispls[r] = ntotal, ntotal += counts[r];
    }
    all = malloc(total > 0 ? total : 1);
    nums = malloc((ntotal > 0 ? ntotal : 1) * sizeof *nums);
    *names = malloc(total > 0 ? total : 1);
    if (!all || !nums || !*names) abort();
  }
  PMPI_Gatherv(flat, len, MPI_CHAR, all, lens, displs, MPI_CHAR, 0, MPI_COMM_WORLD);
  if (kt_rank == 0) {
    /* The distinct names, by a hash table of their offsets in *names. */
    size_t cap = 64;
    while (cap < 2 * (size_t)ntotal) cap *= 2;
    int *table = malloc(cap * sizeof *table), *ids = malloc(cap * sizeof *ids);
    if (!table || !ids) abort();
    for (size_t i = 0; i < cap; i++) table[i] = -1;
    for (int k = 0, off = 0; k < ntotal; k++) {
      const char *nm = all + off;
      size_t l = strlen(nm) + 1, h = 1469598103934665603u;
      for (size_t i = 0; i + 1 < l; i++) h = (h ^ (unsigned char)nm[i]) * 1099511628211u;
      for (h &= cap - 1; table[h] >= 0 && strcmp(*names + table[h], nm) != 0; h = (h + 1) & (cap - 1)) {
      }
      if (table[h] < 0) {
        table[h] = *nameslen;
        ids[h] = (int)first + (*nnames)++;
        memcpy(*names + *nameslen, nm, l);
        *nameslen += (int)l;
      }
      nums[k] = ids[h];
      off += (int)l;
    }
    free(table), free(ids);
  }
  int *got = malloc((mine > 0 ? mine : 1) * sizeof *got);
  uint32_t *map = malloc((mine > 0 ? mine : 1) * sizeof *map);
  if (!got || !map) abort();
  PMPI_Scatterv(nums, counts, cdispls, MPI_INT, got, mine, MPI_INT, 0, MPI_COMM_WORLD);
  for (int i = 0; i < mine; i++) map[i] = (uint32_t)got[i];
  free(got), free(nums), free(all), free(flat), free(lens), free(displs), free(counts), free(cdispls);
  return map;
}

static uint32_t ko_peer(MPI_Comm comm, int lpeer, int wpeer, uint32_t *peer);
static uint32_t ko_name(uint32_t c, int lpeer, int wpeer);

static void ko_send(int isend, MPI_Comm comm, int lpeer, int wpeer, int tag, long bytes, uint64_t id) {
  if (!ko_evt) return;
  uint32_t peer, c = ko_peer(comm, lpeer, wpeer, &peer);
  if (isend)
    OTF2_EvtWriter_MpiIsend(ko_evt, NULL, kt_t0, peer, c, (uint32_t)tag, (uint64_t)bytes, id);
  else
    OTF2_EvtWriter_MpiSend(ko_evt, NULL, kt_t0, peer, c, (uint32_t)tag, (uint64_t)bytes);
}

static void ko_irecv_request(uint64_t id) {
  if (ko_evt) OTF2_EvtWriter_MpiIrecvRequest(ko_evt, NULL, kt_t0, id);
}

static void ko_recv(MPI_Comm comm, int lpeer, int wpeer, int tag, long bytes) {
  if (!ko_evt) return;
  uint32_t peer, c = ko_peer(comm, lpeer, wpeer, &peer);
  OTF2_EvtWriter_MpiRecv(ko_evt, NULL, kt_end(), peer, c, (uint32_t)tag, (uint64_t)bytes);
}

/* ko_complete writes the completion of a pending isend or irecv, the
 * irecv's sender, tag and size taken from its status. */
static void ko_complete(const struct kt_req *r, const MPI_Status *st) {
  if (!ko_evt) return;
  if (r->send) {
    OTF2_EvtWriter_MpiIsendComplete(ko_evt, NULL, kt_end(), r->id);
    return;
  }
  long n = r->bytes; /* without a status, as posted */
  int from = r->src, lfrom = r->lsrc, tag = r->tag;
  if (st && !r->posted) {
    n = kt_got(st, MPI_BYTE);
    tag = st->MPI_TAG;
    lfrom = st->MPI_SOURCE;
    if (from == KT_ANY_SOURCE) from = kt_req_world(r, st->MPI_SOURCE);
  }
  uint32_t peer = ko_name(r->ocomm, lfrom, from), c = r->ocomm;
  if (!r->gone) c = ko_peer(r->comm, lfrom, from, &peer);
  OTF2_EvtWriter_MpiIrecv(ko_evt, NULL, kt_end(), peer, c, (uint32_t)tag, (uint64_t)n, r->id);
}

static void ko_tested(uint64_t id) {
  if (ko_evt) OTF2_EvtWriter_MpiRequestTest(ko_evt, NULL, kt_end(), id);
}

/* ko_kn writes neighborhood collective message m: posted (done 0), at the
 * call's start, its MpiIsend or MpiIrecvRequest; done, where the
 * collective completes, its MpiIsendComplete or MpiIrecv. */
static void ko_kn(const struct kn_msg *m, int done) {
  if (!ko_evt) return;
  if (!done && m->send)
    ko_send(1, MPI_COMM_WORLD, m->peer, m->peer, KN_TAG, m->bytes, m->id);
  else if (!done)
    ko_irecv_request(m->id);
  else if (m->send)
    OTF2_EvtWriter_MpiIsendComplete(ko_evt, NULL, kt_end(), m->id);
  else
    OTF2_EvtWriter_MpiIrecv(ko_evt, NULL, kt_end(), (uint32_t)m->peer, 0, KN_TAG, (uint64_t)m->bytes, m->id);
}

static void ko_cancelled(uint64_t id) {
  if (ko_evt) OTF2_EvtWriter_MpiRequestCancelled(ko_evt, NULL, kt_end(), id);
}

/* KO_ELSEWHERE is ko_commref's number of a communicator with processes of
 * another MPI world (merged from an intercommunicator to spawned or
 * connected processes): the archive's groups hold this world's ranks
 * alone, so that its collectives are not recorded, only their calls'
 * regions. */
enum { KO_ELSEWHERE = 0xfffffffeu };

/* ko_mix mixes v into hash h (SplitMix64's finalizer), never 0. */
static uint64_t ko_mix(uint64_t h, uint64_t v) {
  uint64_t z = h ^ (v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2));
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return z ? z : 1;
}

/* ko_byint orders ints. */
static int ko_byint(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

/* An intercommunicator is, in the archive, a communicator of both its
 * groups' processes, in world rank order, its records naming a peer by
 * its place there (ko_name): OTF2 before 3.0 has no intercommunicator
 * definition, and Kairos' tracer wrote an intercommunicator's messages on
 * MPI_COMM_WORLD, so that two of the same pair (an intercommunicator and
 * its MPI_Comm_dup) carrying messages of one tag at once were one
 * communicator there, whose replay matched one's receive with the
 * other's message and deadlocked (MPICH's comm/dupic). Its identity is
 * its processes' and its place among the intercommunicators of those
 * processes that MPI_Intercomm_create made (each member counts them, in
 * the order of its calls, the same on every member: ko_inters); one made
 * from another (MPI_Comm_dup, MPI_Comm_split) is ko_made's, as any. */
struct ko_inter {
  uint64_t members; /* a hash of its processes */
  uint32_t n;       /* intercommunicators of them so far */
};
static struct ko_inter *ko_inters;
static int ko_ninters;

/* ko_interkey returns the identity of a new intercommunicator of the n
 * world ranks members (ko_inters). */
static uint64_t ko_interkey(const int *members, int n) {
  uint64_t h = 3;
  for (int i = 0; i < n; i++) h = ko_mix(h, (uint32_t)members[i]);
  int i = 0;
  while (i < ko_ninters && ko_inters[i].members != h) i++;
  if (i == ko_ninters) {
    ko_inters = realloc(ko_inters, (ko_ninters + 1) * sizeof *ko_inters);
    if (!ko_inters) abort();
    ko_inters[ko_ninters++] = (struct ko_inter){h, 0};
  }
  return ko_mix(h, ++ko_inters[i].n);
}

/* ko_members puts the world ranks of group g's n processes at w; it
 * reports whether all are of this world. */
static int ko_members(MPI_Group g, int n, int *w) {
  MPI_Group world;
  int *ranks = malloc((n > 0 ? n : 1) * sizeof *ranks), ok = 1;
  if (!ranks) abort();
  for (int i = 0; i < n; i++) ranks[i] = i;
  PMPI_Comm_group(MPI_COMM_WORLD, &world);
  PMPI_Group_translate_ranks(g, n, ranks, world, w);
  PMPI_Group_free(&world);
  free(ranks);
  for (int i = 0; i < n; i++) ok &= w[i] != MPI_UNDEFINED;
  return ok;
}

/* ko_add registers communicator comm of identity key (0: unknown) and
 * returns its local number, KO_ELSEWHERE for one with processes of
 * another world. An intercommunicator's members are both its groups'
 * (sorted), and its identity, if unknown, a new one (ko_interkey). */
static uint32_t ko_add(MPI_Comm comm, uint64_t key) {
  ko_comms = realloc(ko_comms, (ko_ncomms + 1) * sizeof *ko_comms);
  if (!ko_comms) abort();
  struct ko_comm *c = &ko_comms[ko_ncomms++];
  MPI_Group g, rg;
  int inter = 0, n = 0, rn = 0;
  PMPI_Comm_test_inter(comm, &inter);
  PMPI_Comm_size(comm, &n);
  if (inter) PMPI_Comm_remote_size(comm, &rn);
  c->handle = comm, c->key = key, c->made = 0, c->inter = inter, c->n = n + rn;
  c->members = malloc((c->n > 0 ? c->n : 1) * sizeof *c->members);
  if (!c->members) abort();
  PMPI_Comm_group(comm, &g);
  int ok = ko_members(g, n, c->members);
  PMPI_Group_free(&g);
  if (inter) {
    PMPI_Comm_remote_group(comm, &rg);
    ok &= ko_members(rg, rn, c->members + n);
    PMPI_Group_free(&rg);
  }
  if (!ok) {
    free(c->members);
    ko_ncomms--;
    return KO_ELSEWHERE;
  }
  if (inter) {
    qsort(c->members, c->n, sizeof *c->members, ko_byint);
    if (key == 0) c->key = ko_interkey(c->members, c->n);
  }
  return (uint32_t)ko_ncomms;
}

/* ko_intermade registers intercommunicator newcomm, which
 * MPI_Intercomm_create made. */
static void ko_intermade(MPI_Comm newcomm) {
  if (ko_evt && newcomm != MPI_COMM_NULL) ko_add(newcomm, 0);
}

/* ko_commref returns the local number of communicator comm; one not made
 * by a call ko_made follows is known by its members alone, and one of
 * MPI_COMM_WORLD's members in its order is MPI_COMM_WORLD. */
static uint32_t ko_commref(MPI_Comm comm) {
  int same = MPI_UNEQUAL;
  if (comm == MPI_COMM_WORLD) return 0;
  for (int i = 0; i < ko_ncomms; i++)
    if (ko_comms[i].handle == comm) return (uint32_t)i + 1;
  PMPI_Comm_compare(comm, MPI_COMM_WORLD, &same);
  if (same == MPI_IDENT || same == MPI_CONGRUENT) return 0;
  return ko_add(comm, 0);
}

/* ko_peer returns the archive's number of comm, with *peer the rank lpeer
 * of comm (world rank wpeer) as its records name it (ko_name). */
static uint32_t ko_peer(MPI_Comm comm, int lpeer, int wpeer, uint32_t *peer) {
  uint32_t c = ko_commref(comm);
  if (c == KO_ELSEWHERE) c = 0;
  *peer = ko_name(c, lpeer, wpeer);
  return c;
}

/* ko_name returns how the records on the archive's communicator c name
 * the rank lpeer of it, world rank wpeer: by its world rank on
 * MPI_COMM_WORLD (0; also where the communicator has processes of
 * another world, ko_add), by its place among both groups' on an
 * intercommunicator, else by lpeer, its rank in its members' order where
 * no call ko_made follows made it. */
static uint32_t ko_name(uint32_t c, int lpeer, int wpeer) {
  if (c == 0) return (uint32_t)wpeer;
  const struct ko_comm *k = &ko_comms[c - 1];
  if (!k->inter) return (uint32_t)lpeer;
  const int *at = bsearch(&wpeer, k->members, k->n, sizeof *k->members, ko_byint);
  return at ? (uint32_t)(at - k->members) : (uint32_t)wpeer;
}

/* ko_pin keeps with request r the archive's number of its communicator,
 * before the program frees it (kt_freeing). */
static void ko_pin(struct kt_req *r) {
  if (!ko_evt) return;
  uint32_t peer;
  r->ocomm = ko_peer(r->comm, 0, 0, &peer);
}

/* ko_madekey returns the identity of a communicator made from parent by a
 * call every member of parent makes, in the same order as the others on
 * parent (MPI's rule for collective calls), 0 if it will be known by its
 * members; ko_made registers newcomm, so made. Its identity is parent's
 * and the call's number among those made from parent, the same on every
 * member, so that two
 * communicators of the same members (a duplicate of MPI_COMM_WORLD beside
 * it, whose collectives the ranks may interleave with world's in
 * different orders) stay two in the archive, as in Score-P's. A parent
 * known by its members alone gives its children an identity from its
 * members. */
static uint64_t ko_madekey(MPI_Comm parent) {
  uint64_t key;
  uint32_t nth;
  if (parent == MPI_COMM_WORLD) {
    key = 1, nth = ++ko_world_made;
  } else {
    uint32_t p = ko_commref(parent);
    if (p == 0 || p == KO_ELSEWHERE) return 0; /* known by its members, at its first use */
    struct ko_comm *c = &ko_comms[p - 1];
    key = c->key;
    if (key == 0) {
      key = 2;
      for (int i = 0; i < c->n; i++) key = ko_mix(key, (uint32_t)c->members[i]);
    }
    nth = ++c->made;
  }
  return ko_mix(key, nth);
}

static void ko_made(MPI_Comm parent, MPI_Comm newcomm) {
  if (!ko_evt) return;
  uint64_t key = ko_madekey(parent);
  if (key && newcomm != MPI_COMM_NULL) ko_add(newcomm, key);
}

/* The communicators MPI_Comm_idup is making: the request, where the
 * handle is written, and the identity of the call (ko_madekey), taken
 * in the order of the calls, as MPI orders them on every member. */
struct ko_idup {
  MPI_Request req;
  MPI_Comm *newcomm;
  uint64_t key;
};
static struct ko_idup *ko_idups;
static int ko_nidup, ko_capidup;

static void ko_idup(MPI_Comm parent, MPI_Comm *newcomm, MPI_Request req) {
  if (!ko_evt) return;
  uint64_t key = ko_madekey(parent);
  if (!key) return;
  if (ko_nidup == ko_capidup) {
    ko_capidup = ko_capidup ? 2 * ko_capidup : 4;
    if (!(ko_idups = realloc(ko_idups, ko_capidup * sizeof *ko_idups))) abort();
  }
  ko_idups[ko_nidup++] = (struct ko_idup){req, newcomm, key};
}

/* ko_idone registers the communicator of req, a completed request, if an
 * MPI_Comm_idup made it. */
static void ko_idone(MPI_Request req) {
  for (int i = 0; i < ko_nidup; i++) {
    if (ko_idups[i].req != req) continue;
    if (*ko_idups[i].newcomm != MPI_COMM_NULL) ko_add(*ko_idups[i].newcomm, ko_idups[i].key);
    ko_idups[i] = ko_idups[--ko_nidup];
    return;
  }
}

/* ko_freed forgets comm: a freed communicator's handle may name another
 * one later. */
static void ko_freed(MPI_Comm comm) {
  for (int i = 0; i < ko_ncomms; i++)
    if (ko_comms[i].handle == comm) ko_comms[i].handle = MPI_COMM_NULL;
}

/* ko_vattrs puts the count vectors sv and rv (KO_NOV: none) in the
 * attribute list of the next record. */
static void ko_vattrs(uint32_t sv, uint32_t rv) {
  if (sv != KO_NOV) OTF2_AttributeList_AddStringRef(ko_attrs, KO_ATTR_SEND, sv);
  if (rv != KO_NOV) OTF2_AttributeList_AddStringRef(ko_attrs, KO_ATTR_RECV, rv);
}

/* ko_coll writes a blocking collective's records; a non-blocking one's
 * request, keeping the rest for its completion. */
static void ko_coll(MPI_Comm comm, int op, int root, uint64_t sent, uint64_t recv, uint32_t sv, uint32_t rv) {
  if (!ko_evt) return;
  int inter = 0;
  if (comm != MPI_COMM_WORLD) PMPI_Comm_test_inter(comm, &inter);
  /* an intercommunicator's: no record, as for a communicator with another
   * world's processes (the archive's groups do not hold its remote group) */
  uint32_t c = inter ? KO_ELSEWHERE : ko_commref(comm), r = root < 0 ? OTF2_UNDEFINED_UINT32 : (uint32_t)root;
  if (kt_icur) {
    kt_icur->op = op, kt_icur->root = r, kt_icur->comm = c, kt_icur->sent = sent, kt_icur->recv = recv;
    kt_icur->sv = sv, kt_icur->rv = rv;
    if (!kt_icur->persist) ko_irequest(kt_icur);
    return;
  }
  if (c == KO_ELSEWHERE) return;
  OTF2_EvtWriter_MpiCollectiveBegin(ko_evt, NULL, kt_t0);
  ko_vattrs(sv, rv);
  OTF2_EvtWriter_MpiCollectiveEnd(ko_evt, ko_attrs, kt_end(), (OTF2_CollectiveOp)op, c, r, sent, recv);
}

/* ko_irequest writes the request of non-blocking collective c, in the
 * call that starts it. */
static void ko_irequest(const struct kt_icoll *c) {
  if (ko_evt && c->comm != KO_ELSEWHERE) OTF2_EvtWriter_NonBlockingCollectiveRequest(ko_evt, NULL, kt_t0, c->id);
}

static void ko_icomplete(const struct kt_icoll *c) {
  if (!ko_evt || c->comm == KO_ELSEWHERE) return;
  ko_vattrs(c->sv, c->rv);
  OTF2_EvtWriter_NonBlockingCollectiveComplete(ko_evt, ko_attrs, kt_end(), (OTF2_CollectiveOp)c->op, c->comm, c->root,
                                               c->sent, c->recv, c->id);
}

/* The count vectors: each rank numbers its distinct strings (local string
 * ids, with a mapping table to the global ones rank 0 defines at
 * MPI_Finalize, as the function names). */
static char *ko_vflat;            /* the strings, each ended by a NUL */
static size_t ko_vlen, ko_vcap;   /* of ko_vflat */
static uint32_t *ko_vtab;         /* hash table: offset+1 in ko_vflat, 0 empty */
static uint32_t *ko_vids;         /* the string id of each slot */
static size_t ko_vtabcap;
static uint32_t ko_nv;            /* strings */
static char *ko_vbuf;             /* the vector being formatted */
static size_t ko_vbufcap;

static size_t ko_vslot(const char *v, size_t cap) {
  size_t h = 1469598103934665603u;
  for (const char *p = v; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211u;
  for (h &= cap - 1; ko_vtab[h] != 0 && strcmp(ko_vflat + ko_vtab[h] - 1, v) != 0; h = (h + 1) & (cap - 1)) {
  }
  return h;
}

static uint32_t ko_vec(const int *counts, MPI_Datatype t, const MPI_Datatype *ts, int n) {
  if (!ko_evt || !counts) return KO_NOV;
  size_t need = (size_t)n * 21 + 1, len = 0;
  if (need > ko_vbufcap) {
    ko_vbufcap = 2 * need;
    if (!(ko_vbuf = realloc(ko_vbuf, ko_vbufcap))) abort();
  }
  for (int i = 0; i < n; i++) len += (size_t)sprintf(ko_vbuf + len, i ? " %ld" : "%ld", kt_count(counts, t, ts, i));
  ko_vbuf[len] = 0;
  if (2 * (ko_nv + 1) > ko_vtabcap) { /* grow the table */
    uint32_t *old = ko_vtab, *oldids = ko_vids;
    size_t oldcap = ko_vtabcap;
    ko_vtabcap = oldcap ? 2 * oldcap : 64;
    ko_vtab = calloc(ko_vtabcap, sizeof *ko_vtab), ko_vids = calloc(ko_vtabcap, sizeof *ko_vids);
    if (!ko_vtab || !ko_vids) abort();
    for (size_t i = 0; i < oldcap; i++)
      if (old[i] != 0) {
        size_t h = ko_vslot(ko_vflat + old[i] - 1, ko_vtabcap);
        ko_vtab[h] = old[i], ko_vids[h] = oldids[i];
      }
    free(old), free(oldids);
  }
  size_t h = ko_vslot(ko_vbuf, ko_vtabcap);
  if (ko_vtab[h] == 0) {
    if (ko_vlen + len + 1 > ko_vcap) {
      ko_vcap = 2 * (ko_vlen + len + 1);
      if (!(ko_vflat = realloc(ko_vflat, ko_vcap))) abort();
    }
    memcpy(ko_vflat + ko_vlen, ko_vbuf, len + 1);
    ko_vtab[h] = (uint32_t)ko_vlen + 1, ko_vids[h] = ko_nv++;
    ko_vlen += len + 1;
  }
  return ko_vids[h];
}

/* KO_HEAD is the ints of a communicator's record before its members in
 * ko_unify: its size and its identity (ko_made) in two halves. */
enum { KO_HEAD = 3 };

/* ko_unify gathers every rank's sub-communicators at rank 0, which numbers
 * the distinct ones (identity and members) from 1 (into *gcomms,
 * *ngcomms: a flat list of "n, members..." records); it returns this
 * rank's mapping, local number i+1 to global number map[i]. */
static uint32_t *ko_unify(int **gcomms, int *ngcomms, int *glen) {
  int len = 0, *flat, *lens = NULL, *displs = NULL, *all = NULL, total = 0;
  for (int i = 0; i < ko_ncomms; i++) len += KO_HEAD + ko_comms[i].n;
  flat = malloc((len > 0 ? len : 1) * sizeof *flat);
  if (!flat) abort();
  for (int i = 0, k = 0; i < ko_ncomms; i++) {
    flat[k++] = ko_comms[i].n;
    flat[k++] = (int)(uint32_t)(ko_comms[i].key >> 32);
    flat[k++] = (int)(uint32_t)ko_comms[i].key;
    memcpy(flat + k, ko_comms[i].members, ko_comms[i].n * sizeof *flat);
    k += ko_comms[i].n;
  }
  if (kt_rank == 0) {
    lens = calloc(kt_size, sizeof *lens);
    displs = calloc(kt_size, sizeof *displs);
    if (!lens || !displs) abort();
  }
  PMPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (kt_rank == 0) {
    for (int r = 0; r < kt_size; r++) displs[r] = total, total += lens[r];
    all = malloc((total > 0 ? total : 1) * sizeof *all);
    if (!all) abort();
  }
  PMPI_Gatherv(flat, len, MPI_INT, all, lens, displs, MPI_INT, 0, MPI_COMM_WORLD);
  /* Rank 0 numbers the distinct records, keeping them with their heads
   * in keys (and in *gcomms without their identities). */
  int *nums = NULL, nnums = 0, *keys = NULL, klen = 0;
  *gcomms = NULL, *ngcomms = 0, *glen = 0;
  if (kt_rank == 0) {
    *gcomms = malloc((total > 0 ? total : 1) * sizeof **gcomms);
    keys = malloc((total > 0 ? total : 1) * sizeof *keys);
    nums = malloc((total > 0 ? total : 1) * sizeof *nums);
    if (!*gcomms || !keys || !nums) abort();
    for (int k = 0; k < total; k += KO_HEAD + all[k]) {
      int n = all[k], id = 0;
      for (int g = 0, j = 0; g < *ngcomms; g++, j += KO_HEAD + keys[j])
        if (keys[j] == n && memcmp(keys + j + 1, all + k + 1, (KO_HEAD - 1 + n) * sizeof *all) == 0) {
          id = g + 1;
          break;
        }
      if (id == 0) {
        memcpy(keys + klen, all + k, (KO_HEAD + n) * sizeof *all);
        klen += KO_HEAD + n;
        (*gcomms)[(*glen)++] = n;
        memcpy(*gcomms + *glen, all + k + KO_HEAD, n * sizeof *all);
        *glen += n;
        id = ++*ngcomms;
      }
      nums[nnums++] = id;
    }
    /* Per rank, the numbers of its records, in the order it sent them. */
    for (int r = 0, k = 0, c = 0; r < kt_size; r++) {
      int cnt = 0;
      for (int end = displs[r] + lens[r]; k < end; k += KO_HEAD + all[k]) cnt++;
      displs[r] = c, lens[r] = cnt, c += cnt;
    }
  }
  uint32_t *map = malloc((ko_ncomms > 0 ? ko_ncomms : 1) * sizeof *map);
  int *mine = malloc((ko_ncomms > 0 ? ko_ncomms : 1) * sizeof *mine);
  if (!map || !mine) abort();
  PMPI_Scatterv(nums, lens, displs, MPI_INT, mine, ko_ncomms, MPI_INT, 0, MPI_COMM_WORLD);
  for (int i = 0; i < ko_ncomms; i++) map[i] = (uint32_t)mine[i];
  free(mine), free(nums), free(keys), free(all), free(displs), free(lens), free(flat);
  return map;
}

/* ko_role is the OTF2 region role of each wrapped call. */
static OTF2_RegionRole ko_role(int r) {
  if (r >= R_COMM_DUP && r <= R_COMM_FREE) return OTF2_REGION_ROLE_COLL_OTHER;
  if (r >= R_NEIGHBOR_ALLGATHER && r <= R_INEIGHBOR_ALLTOALLW) return OTF2_REGION_ROLE_COLL_OTHER;
  if (r >= R_BARRIER_INIT && r <= R_REDUCE_SCATTER_BLOCK_INIT) return OTF2_REGION_ROLE_COLL_OTHER;
  if (r >= R_WIN_CREATE && r <= R_RGET_ACCUMULATE) return OTF2_REGION_ROLE_RMA;
  if (r >= R_FILE_OPEN && r <= R_FILE_PREALLOCATE) return OTF2_REGION_ROLE_FILE_IO_METADATA;
  if (r > R_FILE_PREALLOCATE && r < R_NREGIONS) return OTF2_REGION_ROLE_FILE_IO;
  switch (r) {
  case R_INIT: case R_INIT_THREAD: case R_FINALIZE: return OTF2_REGION_ROLE_FUNCTION;
  case R_BARRIER: case R_IBARRIER: return OTF2_REGION_ROLE_BARRIER;
  case R_BCAST: case R_SCATTER: case R_SCATTERV: case R_IBCAST: case R_ISCATTER: case R_ISCATTERV:
    return OTF2_REGION_ROLE_COLL_ONE2ALL;
  case R_REDUCE: case R_GATHER: case R_GATHERV: case R_IREDUCE: case R_IGATHER: case R_IGATHERV:
    return OTF2_REGION_ROLE_COLL_ALL2ONE;
  case R_SCAN: case R_EXSCAN: case R_ISCAN: case R_IEXSCAN: return OTF2_REGION_ROLE_COLL_OTHER;
  case R_ALLREDUCE: case R_ALLTOALL: case R_ALLTOALLV: case R_ALLTOALLW: case R_ALLGATHER: case R_ALLGATHERV:
  case R_REDUCE_SCATTER: case R_REDUCE_SCATTER_BLOCK: case R_IALLREDUCE: case R_IALLTOALL: case R_IALLTOALLV:
  case R_IALLTOALLW: case R_IALLGATHER: case R_IALLGATHERV: case R_IREDUCE_SCATTER: case R_IREDUCE_SCATTER_BLOCK:
    return OTF2_REGION_ROLE_COLL_ALL2ALL;
  }
  return OTF2_REGION_ROLE_POINT2POINT;
}

/* ko_s_vecs is the global string id of the first count vector: after
 * "", the regions' names, 4 strings, the ranks' names and the count
 * attributes' names and descriptions (ko_defs). */
static uint32_t ko_s_vecs(void) { return 1 + R_NREGIONS + 4 + (uint32_t)kt_size + 4; }

/* ko_defs writes the global definitions: strings, the MPI paradigm, one
 * system tree node, a process and a thread per rank with its event count,
 * the regions, the count vectors' attributes, MPI_COMM_WORLD and the
 * unified sub-communicators; vnames are the count vectors' strings, fnames
 * the user functions' names. */
static void ks_unify(const uint32_t *map);
static void ks_maps(OTF2_DefWriter *dw, const uint32_t *map);
static void ks_defs(OTF2_GlobalDefWriter *g, uint32_t s);

static void ko_defs(const uint64_t *events, uint64_t first, uint64_t last, const int *gcomms, int ngcomms,
                    const char *vnames, int nvnames, const char *fnames, int nfnames) {
  OTF2_GlobalDefWriter *g = OTF2_Archive_GetGlobalDefWriter(ko_archive);
  char name[64];
  uint32_t str = 0;
  OTF2_GlobalDefWriter_WriteClockProperties(g, 1000000000u, first, last - first, OTF2_UNDEFINED_TIMESTAMP);
  OTF2_GlobalDefWriter_WriteString(g, str++, "");
  for (int r = 0; r < R_NREGIONS; r++) OTF2_GlobalDefWriter_WriteString(g, str++, kt_names[r]);
  const uint32_t s_mpi = str, s_machine = str + 1, s_thread = str + 2, s_world = str + 3, s_ranks = str + 4;
  OTF2_GlobalDefWriter_WriteString(g, s_mpi, "MPI");
  OTF2_GlobalDefWriter_WriteString(g, s_machine, "machine");
  OTF2_GlobalDefWriter_WriteString(g, s_thread, "Master thread");
  OTF2_GlobalDefWriter_WriteString(g, s_world, "MPI_COMM_WORLD");
  for (int r = 0; r < kt_size; r++) {
    snprintf(name, sizeof name, "MPI Rank %d", r);
    OTF2_GlobalDefWriter_WriteString(g, s_ranks + r, name);
  }
  OTF2_GlobalDefWriter_WriteParadigm(g, OTF2_PARADIGM_MPI, s_mpi, OTF2_PARADIGM_CLASS_PROCESS);
  OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, s_machine, s_machine, OTF2_UNDEFINED_SYSTEM_TREE_NODE);
  for (int r = 0; r < kt_size; r++)
    OTF2_GlobalDefWriter_WriteLocationGroup(g, r, s_ranks + r, OTF2_LOCATION_GROUP_TYPE_PROCESS, 0,
                                            OTF2_UNDEFINED_LOCATION_GROUP);
  for (int r = 0; r < kt_size; r++)
    OTF2_GlobalDefWriter_WriteLocation(g, r, s_thread, OTF2_LOCATION_TYPE_CPU_THREAD, events[r], r);
  for (int r = 0; r < R_NREGIONS; r++)
    OTF2_GlobalDefWriter_WriteRegion(g, r, 1 + r, 1 + r, 0, ko_role(r), OTF2_PARADIGM_MPI, OTF2_REGION_FLAG_NONE,
                                     s_mpi, 0, 0);
  const uint32_t s_attrs = s_ranks + kt_size;
  OTF2_GlobalDefWriter_WriteString(g, s_attrs, "kairos:sendcounts");
  OTF2_GlobalDefWriter_WriteString(g, s_attrs + 1, "kairos:recvcounts");
  OTF2_GlobalDefWriter_WriteString(g, s_attrs + 2,
                                   "bytes a v-collective sends to each member of its communicator, in rank order");
  OTF2_GlobalDefWriter_WriteString(g, s_attrs + 3,
                                   "bytes a v-collective receives from each member of its communicator, in rank order");
  OTF2_GlobalDefWriter_WriteAttribute(g, KO_ATTR_SEND, s_attrs, s_attrs + 2, OTF2_TYPE_STRING);
  OTF2_GlobalDefWriter_WriteAttribute(g, KO_ATTR_RECV, s_attrs + 1, s_attrs + 3, OTF2_TYPE_STRING);
  for (int v = 0; v < nvnames; v++, vnames += strlen(vnames) + 1)
    OTF2_GlobalDefWriter_WriteString(g, ko_s_vecs() + v, vnames);
  /* The user functions, named by strings after the count vectors. */
  for (int f = 0; f < nfnames; f++, fnames += strlen(fnames) + 1) {
    uint32_t sf = ko_s_vecs() + nvnames + f;
    OTF2_GlobalDefWriter_WriteString(g, sf, fnames);
    OTF2_GlobalDefWriter_WriteRegion(g, R_NREGIONS + f, sf, sf, 0, OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_COMPILER,
                                     OTF2_REGION_FLAG_NONE, 0, 0, 0);
  }
  /* Group 0: the locations of the ranks; group 1: MPI_COMM_WORLD's ranks in
   * it; then a group per sub-communicator. */
  int most = kt_size; /* the largest group (a window's group is any ranks' list) */
  for (int c = 0, k = 0; c < ngcomms; c++, k += 1 + gcomms[k]) most = gcomms[k] > most ? gcomms[k] : most;
  uint64_t *members = malloc(most * sizeof *members);
  if (!members) abort();
  for (int r = 0; r < kt_size; r++) members[r] = r;
  OTF2_GlobalDefWriter_WriteGroup(g, 0, 0, OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE,
                                  kt_size, members);
  OTF2_GlobalDefWriter_WriteGroup(g, 1, 0, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE,
                                  kt_size, members);
  OTF2_GlobalDefWriter_WriteComm(g, 0, s_world, 1, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE);
  for (int c = 0, k = 0; c < ngcomms; c++, k += 1 + gcomms[k]) {
    for (int i = 0; i < gcomms[k]; i++) members[i] = (uint64_t)gcomms[k + 1 + i];
    OTF2_GlobalDefWriter_WriteGroup(g, 2 + c, 0, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE,
                                    gcomms[k], members);
    OTF2_GlobalDefWriter_WriteComm(g, 1 + c, 0, 2 + c, 0, OTF2_COMM_FLAG_NONE);
  }
  free(members);
  ks_defs(g, ko_s_vecs() + (uint32_t)nvnames + (uint32_t)nfnames);
}

/* ko_close ends the archive: events, each rank's mapping of its
 * communicator numbers, and rank 0's global definitions. */
static void ko_close(void) {
  if (!ko_archive) return;
  uint64_t n = 0, first = 0, last = 0, *events = NULL;
  while (ko_depth > 0) /* functions that MPI_Finalize is in */
    OTF2_EvtWriter_Leave(ko_evt, NULL, kt_last, ko_frames[--ko_depth].id);
  OTF2_EvtWriter_GetNumberOfEvents(ko_evt, &n);
  OTF2_Archive_CloseEvtWriter(ko_archive, ko_evt);
  ko_evt = NULL;
  OTF2_Archive_CloseEvtFiles(ko_archive);
  ko_sync();
  PMPI_Comm_free(&ko_sync_comm);
  int *gcomms, ngcomms, glen;
  uint32_t *map = ko_unify(&gcomms, &ngcomms, &glen);
  char *fnames, *vnames;
  int nfnames, fnameslen, nvnames, vnameslen, fnlen;
  char *flat = ko_fn_names(&fnlen);
  uint32_t *fnmap = ko_unify_names(flat, fnlen, (int)ko_nfn, R_NREGIONS, &fnames, &nfnames, &fnameslen);
  uint32_t *vmap = ko_unify_names(ko_vflat, (int)ko_vlen, (int)ko_nv, ko_s_vecs(), &vnames, &nvnames, &vnameslen);
  ko_vflat = NULL;
  ks_unify(map);
  OTF2_Archive_OpenDefFiles(ko_archive);
  OTF2_DefWriter *dw = OTF2_Archive_GetDefWriter(ko_archive, (OTF2_LocationRef)kt_rank);
  if (ko_ncomms > 0) {
    OTF2_IdMap *m = OTF2_IdMap_Create(OTF2_ID_MAP_SPARSE, ko_ncomms + 1);
    OTF2_IdMap_AddIdPair(m, 0, 0);
    for (int i = 0; i < ko_ncomms; i++) OTF2_IdMap_AddIdPair(m, i + 1, map[i]);
    OTF2_DefWriter_WriteMappingTable(dw, OTF2_MAPPING_COMM, m);
    OTF2_IdMap_Free(m);
  }
  if (ko_nfn > 0) {
    OTF2_IdMap *m = OTF2_IdMap_Create(OTF2_ID_MAP_DENSE, R_NREGIONS + ko_nfn);
    for (uint32_t i = 0; i < R_NREGIONS + ko_nfn; i++) OTF2_IdMap_AddIdPair(m, i, i < R_NREGIONS ? i : fnmap[i - R_NREGIONS]);
    OTF2_DefWriter_WriteMappingTable(dw, OTF2_MAPPING_REGION, m);
    OTF2_IdMap_Free(m);
  }
  if (ko_nv > 0) {
    OTF2_IdMap *m = OTF2_IdMap_Create(OTF2_ID_MAP_DENSE, ko_nv);
    for (uint32_t i = 0; i < ko_nv; i++) OTF2_IdMap_AddIdPair(m, i, vmap[i]);
    OTF2_DefWriter_WriteMappingTable(dw, OTF2_MAPPING_STRING, m);
    OTF2_IdMap_Free(m);
  }
  ks_maps(dw, map);
  for (int i = 0; i < ko_nsync; i++)
    OTF2_DefWriter_WriteClockOffset(dw, ko_sync_at[i].at, ko_sync_at[i].off, ko_sync_at[i].stddev);
  OTF2_Archive_CloseDefWriter(ko_archive, dw);
  OTF2_Archive_CloseDefFiles(ko_archive);
  if (kt_rank == 0) {
    events = malloc(kt_size * sizeof *events);
    if (!events) abort();
  }
  PMPI_Gather(&n, 1, MPI_UINT64_T, events, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  uint64_t gfirst = ko_global(ko_first, 0), glast = ko_global(kt_last, ko_nsync - 1);
  PMPI_Reduce(&gfirst, &first, 1, MPI_UINT64_T, MPI_MIN, 0, MPI_COMM_WORLD);
  PMPI_Reduce(&glast, &last, 1, MPI_UINT64_T, MPI_MAX, 0, MPI_COMM_WORLD);
  if (kt_rank == 0) ko_defs(events, first, last, gcomms, ngcomms, vnames, nvnames, fnames, nfnames);
  if (kt_rank == 0 && kt_others_all > 0) { /* for the readers: messages with those threads have no partner */
    char v[32];
    snprintf(v, sizeof v, "%ld", kt_others_all);
    OTF2_Archive_SetProperty(ko_archive, "KAIROS::OTHER_THREAD_CALLS", v, true);
  }
  OTF2_Archive_Close(ko_archive);
  ko_archive = NULL;
  free(events), free(map), free(gcomms), free(fnmap), free(fnames), free(vmap), free(vnames);
}

#else /* without OTF2: no records */
static int ko_open(const char *dir) { return (void)dir, 0; }
static int ko_writing(void) { return 0; }
static void ko_start(void) {}
/* A program compiled with -finstrument-functions links with either build. */
__attribute__((no_instrument_function)) void __cyg_profile_func_enter(void *fn, void *site) { (void)fn, (void)site; }
__attribute__((no_instrument_function)) void __cyg_profile_func_exit(void *fn, void *site) { (void)fn, (void)site; }
static void ko_close(void) {}
static void ko_made(MPI_Comm parent, MPI_Comm newcomm) { (void)parent, (void)newcomm; }
static void ko_intermade(MPI_Comm newcomm) { (void)newcomm; }
static void ko_idup(MPI_Comm parent, MPI_Comm *newcomm, MPI_Request req) { (void)parent, (void)newcomm, (void)req; }
static void ko_idone(MPI_Request req) { (void)req; }
static void ko_freed(MPI_Comm comm) { (void)comm; }
static void ko_enter(int region, uint64_t t) { (void)region, (void)t; }
static void ko_leave(int region, uint64_t t) { (void)region, (void)t; }
static void ko_send(int isend, MPI_Comm comm, int lpeer, int peer, int tag, long bytes, uint64_t id) {
  (void)isend, (void)comm, (void)lpeer, (void)peer, (void)tag, (void)bytes, (void)id;
}
static void ko_irecv_request(uint64_t id) { (void)id; }
static void ko_recv(MPI_Comm comm, int lpeer, int peer, int tag, long bytes) {
  (void)comm, (void)lpeer, (void)peer, (void)tag, (void)bytes;
}
static void ko_complete(const struct kt_req *r, const MPI_Status *st) { (void)r, (void)st; }
static void ko_pin(struct kt_req *r) { (void)r; }
static void ko_tested(uint64_t id) { (void)id; }
static void ko_cancelled(uint64_t id) { (void)id; }
static void ko_coll(MPI_Comm comm, int op, int root, uint64_t sent, uint64_t recv, uint32_t sv, uint32_t rv) {
  (void)comm, (void)op, (void)root, (void)sent, (void)recv, (void)sv, (void)rv;
}
static uint32_t ko_vec(const int *counts, MPI_Datatype t, const MPI_Datatype *ts, int n) {
  (void)counts, (void)t, (void)ts, (void)n;
  return KO_NOV;
}
static void ko_icomplete(const struct kt_icoll *c) { (void)c; }
static void ko_irequest(const struct kt_icoll *c) { (void)c; }
static void ko_kn(const struct kn_msg *m, int done) { (void)m, (void)done; }
#endif

/* One-sided communication and MPI-IO. SimGrid's time-independent format
 * has no action for them: the TI trace writes none of their lines, and
 * the summary at MPI_Finalize counts them with their time (kt_lose), which
 * is neither communication nor computation there. The OTF2 archive has
 * the records Score-P writes for them (its SCOREP_Mpi_Rma.c and
 * SCOREP_Mpi_Io.c): RmaWinCreate and RmaWinDestroy between
 * RmaCollectiveBegin and RmaCollectiveEnd for the window's creation and
 * release; RmaPut, RmaGet and RmaAtomic with the target's rank in the
 * window's communicator and a matching id per (window, target) until the
 * synchronisation that completes them writes RmaOpCompleteNonBlocking
 * (and RmaOpCompleteRemote for flushes and unlocks; a request-based
 * call's own id is completed where its MPI_Wait or MPI_Test finds it
 * done); RmaRequestLock and RmaReleaseLock (remote all ones for lock_all
 * and unlock_all); RmaGroupSync for post, start, complete, wait and
 * test; RmaCollectiveBegin and RmaCollectiveEnd around a fence. Files:
 * IoCreateHandle in MPI_File_open and IoDestroyHandle in MPI_File_close,
 * IoOperationBegin (read, write or flush; collective, non-blocking) and
 * IoOperationComplete (in the call; in the MPI_Wait of a non-blocking
 * one, the end of a split collective), IoSeek. Windows and files are
 * numbered by each rank and unified at MPI_Finalize by their
 * communicator and their order of creation on it, as the communicators
 * are; the groups of post and start are unified as communicators'
 * members. */

/* OTF2's values of the enumerations the records take (OTF2 3.0). */
enum {
  KS_ACC = 0, KS_CAS = 3, KS_FETCH_ACC = 7,               /* OTF2_RmaAtomicType */
  KS_SYNC_NONE = 0, KS_SYNC_PROCESS = 1, KS_SYNC_MEMORY = 2, /* OTF2_RmaSyncLevel */
  KS_READ = 0, KS_WRITE = 1, KS_FLUSH = 2,                 /* OTF2_IoOperationMode */
  KS_BLOCKING = 0, KS_NB = 1, KS_COLL = 2,                 /* OTF2_IoOperationFlag */
};

#ifdef KAIROS_OTF2
#define KS_O(...)                                                                                                      \
  do {                                                                                                                 \
    if (ko_evt) {                                                                                                      \
      __VA_ARGS__;                                                                                                     \
    }                                                                                                                  \
  } while (0)
static uint32_t ko_commref(MPI_Comm comm);
static uint32_t ks_groupref(MPI_Group group);
#else
#define KS_O(...)                                                                                                      \
  do {                                                                                                                 \
  } while (0)
#define ks_groupref(g) 0u
#endif

/* A window: its handle (MPI_WIN_NULL once freed), its local number, the
 * open matching id of the operations to each target (0: none), the groups
 * of its open start and post epochs; its communicator's local number and
 * its order among that communicator's windows, to unify it; the
 * operations a flush_local completed at the origin (target, matching id),
 * whose remote completion the next flush or unlock writes, as Score-P
 * does. */
struct ks_pend {
  int t;
  uint64_t id;
};
struct ks_win {
  MPI_Win win;
  uint32_t id, comm, nth, access, exposure;
  int n, alloc;
  uint64_t *open;
  struct ks_pend *pend;
  uint32_t npend, cappend;
};
static struct ks_win *ks_wins;
static uint32_t ks_nwin, ks_capwin;

/* A file: its handle (MPI_FILE_NULL once closed), its name, its
 * communicator and order among its opens; the matching id and bytes of
 * its split collective begun and not ended. */
struct ks_file {
  MPI_File fh;
  uint32_t comm, nth;
  char *name;
  uint64_t split;
  int64_t splitbytes;
};
static struct ks_file *ks_files;
static uint32_t ks_nfile, ks_capfile;

/* A pending request-based one-sided operation or non-blocking I/O: its
 * request, matching id, window or file, and the bytes it moves. */
struct ks_req {
  MPI_Request req;
  uint64_t id;
  uint32_t obj;
  int io;
  int64_t bytes;
};
static struct ks_req *ks_reqs;
static int ks_nreq, ks_capreq;

#define KS_GROW(p, n, cap)                                                                                             \
  do {                                                                                                                 \
    if ((n) == (cap)) {                                                                                                \
      (cap) = (cap) ? 2 * (cap) : 16;                                                                                  \
      if (!((p) = realloc((p), (cap) * sizeof *(p)))) abort();                                                         \
    }                                                                                                                  \
  } while (0)

/* ks_enter starts a one-sided or I/O call of region: a call the TI trace
 * leaves out, and an OTF2 RmaCollectiveBegin for the collective ones. */
static void ks_enter(int region, int coll) {
  kt_enter(region);
  if (!kt_on()) return;
  kt_lose();
  if (coll) KS_O(OTF2_EvtWriter_RmaCollectiveBegin(ko_evt, NULL, kt_t0));
}

static struct ks_win *ks_win(MPI_Win win) {
  for (uint32_t i = ks_nwin; i-- > 0;)
    if (ks_wins[i].win == win) return &ks_wins[i];
  return NULL;
}

static struct ks_file *ks_file(MPI_File fh) {
  for (uint32_t i = ks_nfile; i-- > 0;)
    if (ks_files[i].fh == fh) return &ks_files[i];
  return NULL;
}

/* ks_count returns how many of the windows (else files) recorded are on
 * communicator comm (its local number). */
static uint32_t ks_count(uint32_t comm, int windows) {
  uint32_t k = 0;
  if (windows)
    for (uint32_t i = 0; i < ks_nwin; i++) k += ks_wins[i].comm == comm;
  else
    for (uint32_t i = 0; i < ks_nfile; i++) k += ks_files[i].comm == comm;
  return k;
}

/* ks_created records window win, just created on comm (allocated memory
 * with it: alloc), and writes its creation's records. */
static void ks_created(MPI_Win win, MPI_Comm comm, int alloc) {
  KS_GROW(ks_wins, ks_nwin, ks_capwin);
  struct ks_win *w = &ks_wins[ks_nwin];
  *w = (struct ks_win){.win = win, .id = ks_nwin, .alloc = alloc};
#ifdef KAIROS_OTF2
  if (ko_evt) w->comm = ko_commref(comm);
#endif
  w->nth = ks_count(w->comm, 1);
  PMPI_Comm_size(comm, &w->n);
  if (!(w->open = calloc(w->n > 0 ? w->n : 1, sizeof *w->open))) abort();
  ks_nwin++;
  KS_O(OTF2_EvtWriter_RmaWinCreate(ko_evt, NULL, kt_end(), w->id);
       OTF2_EvtWriter_RmaCollectiveEnd(ko_evt, NULL, kt_end(),
                                       alloc ? OTF2_COLLECTIVE_OP_CREATE_HANDLE_AND_ALLOCATE : OTF2_COLLECTIVE_OP_CREATE_HANDLE,
                                       OTF2_RMA_SYNC_LEVEL_PROCESS, w->id, OTF2_UNDEFINED_UINT32, 0, 0));
}

/* How a synchronisation completes a window's operations (ks_done): at
 * the origin only, the remote completion to come (flush_local); at both
 * ends (flush, unlock); or by an epoch's end (fence, complete), which
 * Kairos writes as the origin's completion. */
enum { KS_AT_ORIGIN, KS_AT_TARGET, KS_BY_EPOCH };

/* KS_MAXPEND bounds a window's operations awaiting their remote
 * completion (16 MiB): an epoch of more flush_locals than that, with no
 * flush, writes the remote completion of the first ones only. */
#define KS_MAXPEND (1u << 20)

/* ks_done writes the completion of the operations to target t of window
 * w (every target if t < 0), as how (KS_AT_ORIGIN...) says. */
static void ks_done(struct ks_win *w, int t, int how) {
  for (int i = t < 0 ? 0 : t; w && i < (t < 0 ? w->n : t + 1) && i < w->n; i++) {
    uint64_t id = w->open[i];
    if (!id) continue;
    w->open[i] = 0;
    KS_O(OTF2_EvtWriter_RmaOpCompleteNonBlocking(ko_evt, NULL, kt_end(), w->id, id));
    if (how == KS_AT_TARGET) {
      KS_O(OTF2_EvtWriter_RmaOpCompleteRemote(ko_evt, NULL, kt_end(), w->id, id));
    } else if (how == KS_AT_ORIGIN && w->npend < KS_MAXPEND) {
      KS_O(KS_GROW(w->pend, w->npend, w->cappend); w->pend[w->npend++] = (struct ks_pend){i, id});
    }
  }
  if (!w || how == KS_AT_ORIGIN) return;
  uint32_t kept = 0;
  for (uint32_t j = 0; j < w->npend; j++) {
    struct ks_pend p = w->pend[j];
    if (t >= 0 && p.t != t)
      w->pend[kept++] = p;
    else if (how == KS_AT_TARGET)
      KS_O(OTF2_EvtWriter_RmaOpCompleteRemote(ko_evt, NULL, kt_end(), w->id, p.id));
  }
  w->npend = kept;
}

/* ks_op writes a transfer to target t of window win: a put (kind 0), a get
 * (1) or an atomic of OTF2 type atype (2), moving sent and received
 * bytes; with req, a request-based call's. */
static void ks_op(int kind, MPI_Win win, int t, uint64_t sent, uint64_t recv, int atype, MPI_Request *req) {
  struct ks_win *w = ks_win(win);
  if (!kt_on() || !w || t == MPI_PROC_NULL || t < 0 || t >= w->n) return;
  uint64_t id;
  if (req) {
    id = ++kt_nextid;
    KS_GROW(ks_reqs, ks_nreq, ks_capreq);
    ks_reqs[ks_nreq++] = (struct ks_req){*req, id, w->id, 0, 0};
  } else if (!(id = w->open[t]))
    id = w->open[t] = ++kt_nextid;
  (void)atype, (void)sent, (void)recv, (void)kind;
  KS_O(if (kind == 0) OTF2_EvtWriter_RmaPut(ko_evt, NULL, kt_t0, w->id, (uint32_t)t, sent, id);
       else if (kind == 1) OTF2_EvtWriter_RmaGet(ko_evt, NULL, kt_t0, w->id, (uint32_t)t, recv, id);
       else OTF2_EvtWriter_RmaAtomic(ko_evt, NULL, kt_t0, w->id, (uint32_t)t, (OTF2_RmaAtomicType)atype, sent, recv, id));
}

/* ks_complete writes the completion of req (or a test that found it not
 * done) if it is a request-based one-sided operation or non-blocking I/O
 * of ours; it reports whether it was. */
static int ks_complete(MPI_Request req, int done) {
  for (int i = 0; i < ks_nreq; i++) {
    struct ks_req *q = &ks_reqs[i];
    if (q->req != req) continue;
    if (!done) {
      KS_O(if (q->io) OTF2_EvtWriter_IoOperationTest(ko_evt, NULL, kt_end(), q->obj, q->id);
           else OTF2_EvtWriter_RmaOpTest(ko_evt, NULL, kt_end(), q->obj, q->id));
      return 1;
    }
    KS_O(if (q->io) OTF2_EvtWriter_IoOperationComplete(ko_evt, NULL, kt_end(), q->obj, (uint64_t)q->bytes, q->id);
         else {
           OTF2_EvtWriter_RmaOpCompleteNonBlocking(ko_evt, NULL, kt_end(), q->obj, q->id);
           OTF2_EvtWriter_RmaOpCompleteRemote(ko_evt, NULL, kt_end(), q->obj, q->id);
         });
    ks_reqs[i] = ks_reqs[--ks_nreq];
    return 1;
  }
  return 0;
}

static uint64_t ks_bytes(int count, MPI_Datatype t) { return count > 0 ? (uint64_t)kt_bytes(count, t) : 0; }

int MPI_Win_create(void *base, MPI_Aint size, int disp, MPI_Info info, MPI_Comm comm, MPI_Win *win) {
  ks_enter(R_WIN_CREATE, 1);
  int err = PMPI_Win_create(base, size, disp, info, comm, win);
  if (kt_on() && err == MPI_SUCCESS) ks_created(*win, comm, 0);
  kt_leave();
  return err;
}

int MPI_Win_allocate(MPI_Aint size, int disp, MPI_Info info, MPI_Comm comm, void *base, MPI_Win *win) {
  ks_enter(R_WIN_ALLOCATE, 1);
  int err = PMPI_Win_allocate(size, disp, info, comm, base, win);
  if (kt_on() && err == MPI_SUCCESS) ks_created(*win, comm, 1);
  kt_leave();
  return err;
}

int MPI_Win_allocate_shared(MPI_Aint size, int disp, MPI_Info info, MPI_Comm comm, void *base, MPI_Win *win) {
  ks_enter(R_WIN_ALLOCATE_SHARED, 1);
  int err = PMPI_Win_allocate_shared(size, disp, info, comm, base, win);
  if (kt_on() && err == MPI_SUCCESS) ks_created(*win, comm, 1);
  kt_leave();
  return err;
}

int MPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win) {
  ks_enter(R_WIN_CREATE_DYNAMIC, 1);
  int err = PMPI_Win_create_dynamic(info, comm, win);
  if (kt_on() && err == MPI_SUCCESS) ks_created(*win, comm, 0);
  kt_leave();
  return err;
}

int MPI_Win_free(MPI_Win *win) {
  struct ks_win *w = kt_on() ? ks_win(*win) : NULL;
  ks_enter(R_WIN_FREE, 1);
  int err = PMPI_Win_free(win);
  if (kt_on() && w) {
    KS_O(OTF2_EvtWriter_RmaWinDestroy(ko_evt, NULL, kt_end(), w->id);
         OTF2_EvtWriter_RmaCollectiveEnd(ko_evt, NULL, kt_end(),
                                         w->alloc ? OTF2_COLLECTIVE_OP_DESTROY_HANDLE_AND_DEALLOCATE : OTF2_COLLECTIVE_OP_DESTROY_HANDLE,
                                         OTF2_RMA_SYNC_LEVEL_PROCESS, w->id, OTF2_UNDEFINED_UINT32, 0, 0));
    w->win = MPI_WIN_NULL;
    free(w->open);
    free(w->pend);
    w->open = NULL, w->n = 0;
    w->pend = NULL, w->npend = w->cappend = 0;
  }
  kt_leave();
  return err;
}

int MPI_Win_fence(int assert, MPI_Win win) {
  ks_enter(R_WIN_FENCE, 1);
  int err = PMPI_Win_fence(assert, win);
  struct ks_win *w;
  if (kt_on() && (w = ks_win(win))) {
    ks_done(w, -1, KS_BY_EPOCH);
    KS_O(OTF2_EvtWriter_RmaCollectiveEnd(ko_evt, NULL, kt_end(), OTF2_COLLECTIVE_OP_BARRIER,
                                         OTF2_RMA_SYNC_LEVEL_PROCESS | OTF2_RMA_SYNC_LEVEL_MEMORY, w->id,
                                         OTF2_UNDEFINED_UINT32, 0, 0));
  }
  kt_leave();
  return err;
}

/* ks_lock writes a lock of target t of win (t < 0: lock_all), or, with
 * release, its release, after completing the operations to it. */
static void ks_lock(MPI_Win win, int t, int type, int release) {
  struct ks_win *w = kt_on() ? ks_win(win) : NULL;
  if (!w) return;
  uint32_t remote = t < 0 ? UINT32_MAX : (uint32_t)t; /* OTF2_UNDEFINED_UINT32: every target */
  (void)type, (void)remote;
  if (release) {
    ks_done(w, t, KS_AT_TARGET);
    KS_O(OTF2_EvtWriter_RmaReleaseLock(ko_evt, NULL, kt_end(), w->id, remote, 0));
    return;
  }
  KS_O(OTF2_EvtWriter_RmaRequestLock(ko_evt, NULL, kt_t0, w->id, remote, 0,
                                     type == MPI_LOCK_EXCLUSIVE ? OTF2_LOCK_EXCLUSIVE : OTF2_LOCK_SHARED));
}

int MPI_Win_lock(int type, int rank, int assert, MPI_Win win) {
  ks_enter(R_WIN_LOCK, 0);
  int err = PMPI_Win_lock(type, rank, assert, win);
  ks_lock(win, rank, type, 0);
  kt_leave();
  return err;
}

int MPI_Win_unlock(int rank, MPI_Win win) {
  ks_enter(R_WIN_UNLOCK, 0);
  int err = PMPI_Win_unlock(rank, win);
  ks_lock(win, rank, 0, 1);
  kt_leave();
  return err;
}

int MPI_Win_lock_all(int assert, MPI_Win win) {
  ks_enter(R_WIN_LOCK_ALL, 0);
  int err = PMPI_Win_lock_all(assert, win);
  ks_lock(win, -1, MPI_LOCK_SHARED, 0);
  kt_leave();
  return err;
}

int MPI_Win_unlock_all(MPI_Win win) {
  ks_enter(R_WIN_UNLOCK_ALL, 0);
  int err = PMPI_Win_unlock_all(win);
  ks_lock(win, -1, 0, 1);
  kt_leave();
  return err;
}

/* ks_flush is a flush of region: of target t (all if t < 0), remote or
 * local. */
static int ks_flush(int region, int (*flush)(int, MPI_Win), int (*all)(MPI_Win), int t, MPI_Win win, int remote) {
  ks_enter(region, 0);
  int err = all ? all(win) : flush(t, win);
  if (kt_on()) ks_done(ks_win(win), all ? -1 : t, remote ? KS_AT_TARGET : KS_AT_ORIGIN);
  kt_leave();
  return err;
}

int MPI_Win_flush(int rank, MPI_Win win) { return ks_flush(R_WIN_FLUSH, PMPI_Win_flush, NULL, rank, win, 1); }
int MPI_Win_flush_local(int rank, MPI_Win win) {
  return ks_flush(R_WIN_FLUSH_LOCAL, PMPI_Win_flush_local, NULL, rank, win, 0);
}
int MPI_Win_flush_all(MPI_Win win) { return ks_flush(R_WIN_FLUSH_ALL, NULL, PMPI_Win_flush_all, -1, win, 1); }
int MPI_Win_flush_local_all(MPI_Win win) {
  return ks_flush(R_WIN_FLUSH_LOCAL_ALL, NULL, PMPI_Win_flush_local_all, -1, win, 0);
}

int MPI_Win_sync(MPI_Win win) {
  ks_enter(R_WIN_SYNC, 0);
  int err = PMPI_Win_sync(win);
  kt_leave();
  return err;
}

int MPI_Win_attach(MPI_Win win, void *base, MPI_Aint size) {
  ks_enter(R_WIN_ATTACH, 0);
  int err = PMPI_Win_attach(win, base, size);
  kt_leave();
  return err;
}

int MPI_Win_detach(MPI_Win win, const void *base) {
  ks_enter(R_WIN_DETACH, 0);
  int err = PMPI_Win_detach(win, base);
  kt_leave();
  return err;
}

/* ks_epoch writes the RmaGroupSync of a post or start (open, group the
 * epoch's) or of the complete, wait or successful test ending one
 * (exposure: a post's), after completing the operations. */
static void ks_epoch(MPI_Win win, MPI_Group group, int open, int exposure, int level) {
  struct ks_win *w = kt_on() ? ks_win(win) : NULL;
  if (!w) return;
  uint32_t *g = exposure ? &w->exposure : &w->access;
  (void)group;
  if (open) *g = ks_groupref(group);
  else if (level != KS_SYNC_NONE)
    ks_done(w, -1, KS_BY_EPOCH);
  KS_O(OTF2_EvtWriter_RmaGroupSync(ko_evt, NULL, kt_end(), (OTF2_RmaSyncLevel)level, w->id, *g));
}

int MPI_Win_post(MPI_Group group, int assert, MPI_Win win) {
  ks_enter(R_WIN_POST, 0);
  int err = PMPI_Win_post(group, assert, win);
  ks_epoch(win, group, 1, 1, KS_SYNC_PROCESS);
  kt_leave();
  return err;
}

int MPI_Win_start(MPI_Group group, int assert, MPI_Win win) {
  ks_enter(R_WIN_START, 0);
  int err = PMPI_Win_start(group, assert, win);
  ks_epoch(win, group, 1, 0, KS_SYNC_PROCESS);
  kt_leave();
  return err;
}

int MPI_Win_complete(MPI_Win win) {
  ks_enter(R_WIN_COMPLETE, 0);
  int err = PMPI_Win_complete(win);
  ks_epoch(win, MPI_GROUP_NULL, 0, 0, KS_SYNC_PROCESS | KS_SYNC_MEMORY);
  kt_leave();
  return err;
}

int MPI_Win_wait(MPI_Win win) {
  ks_enter(R_WIN_WAIT, 0);
  int err = PMPI_Win_wait(win);
  ks_epoch(win, MPI_GROUP_NULL, 0, 1, KS_SYNC_PROCESS | KS_SYNC_MEMORY);
  kt_leave();
  return err;
}

int MPI_Win_test(MPI_Win win, int *flag) {
  ks_enter(R_WIN_TEST, 0);
  int err = PMPI_Win_test(win, flag);
  ks_epoch(win, MPI_GROUP_NULL, 0, 1,
           *flag ? KS_SYNC_PROCESS | KS_SYNC_MEMORY : KS_SYNC_NONE);
  kt_leave();
  return err;
}

int MPI_Put(const void *obuf, int ocount, MPI_Datatype ot, int t, MPI_Aint disp, int tcount, MPI_Datatype tt,
            MPI_Win win) {
  ks_enter(R_PUT, 0);
  int err = PMPI_Put(obuf, ocount, ot, t, disp, tcount, tt, win);
  ks_op(0, win, t, ks_bytes(ocount, ot), 0, 0, NULL);
  kt_leave();
  return err;
}

int MPI_Get(void *obuf, int ocount, MPI_Datatype ot, int t, MPI_Aint disp, int tcount, MPI_Datatype tt,
            MPI_Win win) {
  ks_enter(R_GET, 0);
  int err = PMPI_Get(obuf, ocount, ot, t, disp, tcount, tt, win);
  ks_op(1, win, t, 0, ks_bytes(ocount, ot), 0, NULL);
  kt_leave();
  return err;
}

int MPI_Accumulate(const void *obuf, int ocount, MPI_Datatype ot, int t, MPI_Aint disp, int tcount,
                   MPI_Datatype tt, MPI_Op op, MPI_Win win) {
  ks_enter(R_ACCUMULATE, 0);
  int err = PMPI_Accumulate(obuf, ocount, ot, t, disp, tcount, tt, op, win);
  ks_op(2, win, t, ks_bytes(ocount, ot), 0, KS_ACC, NULL);
  kt_leave();
  return err;
}

int MPI_Get_accumulate(const void *obuf, int ocount, MPI_Datatype ot, void *rbuf, int rcount, MPI_Datatype rt,
                       int t, MPI_Aint disp, int tcount, MPI_Datatype tt, MPI_Op op, MPI_Win win) {
  ks_enter(R_GET_ACCUMULATE, 0);
  int err = PMPI_Get_accumulate(obuf, ocount, ot, rbuf, rcount, rt, t, disp, tcount, tt, op, win);
  ks_op(2, win, t, ks_bytes(ocount, ot), ks_bytes(rcount, rt), KS_FETCH_ACC, NULL);
  kt_leave();
  return err;
}

int MPI_Fetch_and_op(const void *obuf, void *rbuf, MPI_Datatype t, int target, MPI_Aint disp, MPI_Op op,
                     MPI_Win win) {
  ks_enter(R_FETCH_AND_OP, 0);
  int err = PMPI_Fetch_and_op(obuf, rbuf, t, target, disp, op, win);
  ks_op(2, win, target, ks_bytes(1, t), ks_bytes(1, t), KS_FETCH_ACC, NULL);
  kt_leave();
  return err;
}

int MPI_Compare_and_swap(const void *obuf, const void *cbuf, void *rbuf, MPI_Datatype t, int target,
                         MPI_Aint disp, MPI_Win win) {
  ks_enter(R_COMPARE_AND_SWAP, 0);
  int err = PMPI_Compare_and_swap(obuf, cbuf, rbuf, t, target, disp, win);
  ks_op(2, win, target, ks_bytes(1, t), ks_bytes(1, t), KS_CAS, NULL);
  kt_leave();
  return err;
}

int MPI_Rput(const void *obuf, int ocount, MPI_Datatype ot, int t, MPI_Aint disp, int tcount, MPI_Datatype tt,
             MPI_Win win, MPI_Request *req) {
  ks_enter(R_RPUT, 0);
  int err = PMPI_Rput(obuf, ocount, ot, t, disp, tcount, tt, win, req);
  if (err == MPI_SUCCESS) ks_op(0, win, t, ks_bytes(ocount, ot), 0, 0, req);
  kt_leave();
  return err;
}

int MPI_Rget(void *obuf, int ocount, MPI_Datatype ot, int t, MPI_Aint disp, int tcount, MPI_Datatype tt,
             MPI_Win win, MPI_Request *req) {
  ks_enter(R_RGET, 0);
  int err = PMPI_Rget(obuf, ocount, ot, t, disp, tcount, tt, win, req);
  if (err == MPI_SUCCESS) ks_op(1, win, t, 0, ks_bytes(ocount, ot), 0, req);
  kt_leave();
  return err;
}

int MPI_Raccumulate(const void *obuf, int ocount, MPI_Datatype ot, int t, MPI_Aint disp, int tcount,
                    MPI_Datatype tt, MPI_Op op, MPI_Win win, MPI_Request *req) {
  ks_enter(R_RACCUMULATE, 0);
  int err = PMPI_Raccumulate(obuf, ocount, ot, t, disp, tcount, tt, op, win, req);
  if (err == MPI_SUCCESS) ks_op(2, win, t, ks_bytes(ocount, ot), 0, KS_ACC, req);
  kt_leave();
  return err;
}

int MPI_Rget_accumulate(const void *obuf, int ocount, MPI_Datatype ot, void *rbuf, int rcount, MPI_Datatype rt,
                        int t, MPI_Aint disp, int tcount, MPI_Datatype tt, MPI_Op op, MPI_Win win,
                        MPI_Request *req) {
  ks_enter(R_RGET_ACCUMULATE, 0);
  int err = PMPI_Rget_accumulate(obuf, ocount, ot, rbuf, rcount, rt, t, disp, tcount, tt, op, win, req);
  if (err == MPI_SUCCESS)
    ks_op(2, win, t, ks_bytes(ocount, ot), ks_bytes(rcount, rt), KS_FETCH_ACC, req);
  kt_leave();
  return err;
}

/* MPI-IO. */

int MPI_File_open(MPI_Comm comm, const char *name, int amode, MPI_Info info, MPI_File *fh) {
  ks_enter(R_FILE_OPEN, 0);
  int err = PMPI_File_open(comm, name, amode, info, fh);
  if (kt_on() && err == MPI_SUCCESS) {
    KS_GROW(ks_files, ks_nfile, ks_capfile);
    struct ks_file *f = &ks_files[ks_nfile];
    *f = (struct ks_file){.fh = *fh, .name = strdup(name ? name : "")};
#ifdef KAIROS_OTF2
    if (ko_evt) f->comm = ko_commref(comm);
#endif
    f->nth = ks_count(f->comm, 0);
    uint32_t id = ks_nfile++;
    (void)id;
    KS_O(OTF2_IoAccessMode mode = amode & MPI_MODE_RDONLY   ? OTF2_IO_ACCESS_MODE_READ_ONLY
                                  : amode & MPI_MODE_WRONLY ? OTF2_IO_ACCESS_MODE_WRITE_ONLY
                                                            : OTF2_IO_ACCESS_MODE_READ_WRITE;
         OTF2_IoCreationFlag cf = (amode & MPI_MODE_CREATE ? OTF2_IO_CREATION_FLAG_CREATE : 0) |
                                  (amode & MPI_MODE_EXCL ? OTF2_IO_CREATION_FLAG_EXCLUSIVE : 0);
         OTF2_IoStatusFlag sf = (amode & MPI_MODE_APPEND ? OTF2_IO_STATUS_FLAG_APPEND : 0) |
                                (amode & MPI_MODE_DELETE_ON_CLOSE ? OTF2_IO_STATUS_FLAG_DELETE_ON_CLOSE : 0);
         OTF2_EvtWriter_IoCreateHandle(ko_evt, NULL, kt_end(), id, mode, cf, sf));
  }
  kt_leave();
  return err;
}

int MPI_File_close(MPI_File *fh) {
  struct ks_file *f = kt_on() ? ks_file(*fh) : NULL;
  ks_enter(R_FILE_CLOSE, 0);
  int err = PMPI_File_close(fh);
  if (kt_on() && f) {
    KS_O(OTF2_EvtWriter_IoDestroyHandle(ko_evt, NULL, kt_end(), (uint32_t)(f - ks_files)));
    f->fh = MPI_FILE_NULL;
  }
  kt_leave();
  return err;
}

int MPI_File_delete(const char *name, MPI_Info info) {
  ks_enter(R_FILE_DELETE, 0);
  int err = PMPI_File_delete(name, info);
  kt_leave();
  return err;
}

int MPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype et, MPI_Datatype ft, const char *rep,
                      MPI_Info info) {
  ks_enter(R_FILE_SET_VIEW, 0);
  int err = PMPI_File_set_view(fh, disp, et, ft, rep, info);
  kt_leave();
  return err;
}

int MPI_File_set_size(MPI_File fh, MPI_Offset size) {
  ks_enter(R_FILE_SET_SIZE, 0);
  int err = PMPI_File_set_size(fh, size);
  kt_leave();
  return err;
}

int MPI_File_preallocate(MPI_File fh, MPI_Offset size) {
  ks_enter(R_FILE_PREALLOCATE, 0);
  int err = PMPI_File_preallocate(fh, size);
  kt_leave();
  return err;
}

/* ks_seek writes an IoSeek of fh. */
static void ks_seek(MPI_File fh, MPI_Offset off, int whence) {
  struct ks_file *f = kt_on() ? ks_file(fh) : NULL;
  (void)off, (void)whence;
  if (f)
    KS_O(OTF2_EvtWriter_IoSeek(ko_evt, NULL, kt_end(), (uint32_t)(f - ks_files), (int64_t)off,
                               whence == MPI_SEEK_SET   ? OTF2_IO_SEEK_FROM_START
                               : whence == MPI_SEEK_CUR ? OTF2_IO_SEEK_FROM_CURRENT
                                                        : OTF2_IO_SEEK_FROM_END,
                               (uint64_t)off));
}

int MPI_File_seek(MPI_File fh, MPI_Offset off, int whence) {
  ks_enter(R_FILE_SEEK, 0);
  int err = PMPI_File_seek(fh, off, whence);
  ks_seek(fh, off, whence);
  kt_leave();
  return err;
}

int MPI_File_seek_shared(MPI_File fh, MPI_Offset off, int whence) {
  ks_enter(R_FILE_SEEK_SHARED, 0);
  int err = PMPI_File_seek_shared(fh, off, whence);
  ks_seek(fh, off, whence);
  kt_leave();
  return err;
}

/* ks_io writes an I/O operation on fh of mode (OTF2's), flags and bytes:
 * IoOperationBegin, and, for a blocking one, IoOperationComplete with the
 * bytes st counts (of type t); a non-blocking one's req completes it, a
 * split collective's end (split). */
static void ks_io(MPI_File fh, int mode, int flags, int64_t bytes, const MPI_Status *st, MPI_Datatype t,
                  MPI_Request *req, int split) {
  (void)flags;
  struct ks_file *f = kt_on() ? ks_file(fh) : NULL;
  if (!f) return;
  uint32_t h = (uint32_t)(f - ks_files);
  uint64_t id = ++kt_nextid;
  (void)mode, (void)h, (void)st, (void)t;
  KS_O(OTF2_EvtWriter_IoOperationBegin(ko_evt, NULL, kt_t0, h, (OTF2_IoOperationMode)mode,
                                       (OTF2_IoOperationFlag)flags, (uint64_t)bytes, id));
  if (req || split) {
    KS_O(OTF2_EvtWriter_IoOperationIssued(ko_evt, NULL, kt_end(), h, id));
    if (split) {
      f->split = id;
      f->splitbytes = bytes;
    } else {
      KS_GROW(ks_reqs, ks_nreq, ks_capreq);
      ks_reqs[ks_nreq++] = (struct ks_req){*req, id, h, 1, bytes};
    }
    return;
  }
  if (st && st != MPI_STATUS_IGNORE && t != MPI_DATATYPE_NULL) bytes = kt_got(st, t);
  KS_O(OTF2_EvtWriter_IoOperationComplete(ko_evt, NULL, kt_end(), h, (uint64_t)bytes, id));
}

/* ks_split_end writes the end of fh's split collective. */
static void ks_split_end(MPI_File fh) {
  struct ks_file *f = kt_on() ? ks_file(fh) : NULL;
  if (!f || !f->split) return;
  KS_O(OTF2_EvtWriter_IoOperationComplete(ko_evt, NULL, kt_end(), (uint32_t)(f - ks_files), (uint64_t)f->splitbytes,
                                          f->split));
  f->split = 0;
}

int MPI_File_sync(MPI_File fh) {
  ks_enter(R_FILE_SYNC, 0);
  int err = PMPI_File_sync(fh);
  ks_io(fh, KS_FLUSH, KS_BLOCKING, 0, NULL, MPI_DATATYPE_NULL, NULL, 0);
  kt_leave();
  return err;
}

#define KS_UNPAREN(...) __VA_ARGS__

/* The blocking reads and writes: KS_RW(x, X, buffer type, mode, flags,
 * (offset parameter), (offset argument)). */
#define KS_RW(x, X, B, mode, flags, op, oa)                                                                            \
  int MPI_File_##x(MPI_File fh, KS_UNPAREN op B buf, int count, MPI_Datatype t, MPI_Status *st) {                     \
    MPI_Status own;                                                                                                    \
    if (st == MPI_STATUS_IGNORE) st = &own;                                                                            \
    ks_enter(R_FILE_##X, 0);                                                                                           \
    int err = PMPI_File_##x(fh, KS_UNPAREN oa buf, count, t, st);                                                     \
    ks_io(fh, mode, flags, (int64_t)ks_bytes(count, t), st, t, NULL, 0);                                             \
    kt_leave();                                                                                                        \
    return err;                                                                                                        \
  }
#define KS_RW_ALL(x, X, B, mode, flags)                                                                                \
  KS_RW(x, X, B, mode, flags, (), ()) KS_RW(x##_at, X##_AT, B, mode, flags, (MPI_Offset off, ), (off, ))
KS_RW_ALL(read, READ, void *, KS_READ, KS_BLOCKING)
KS_RW(read_all, READ_ALL, void *, KS_READ, KS_COLL, (), ())
KS_RW(read_at_all, READ_AT_ALL, void *, KS_READ, KS_COLL, (MPI_Offset off, ), (off, ))
KS_RW(read_shared, READ_SHARED, void *, KS_READ, KS_BLOCKING, (), ())
KS_RW(read_ordered, READ_ORDERED, void *, KS_READ, KS_COLL, (), ())
KS_RW_ALL(write, WRITE, const void *, KS_WRITE, KS_BLOCKING)
KS_RW(write_all, WRITE_ALL, const void *, KS_WRITE, KS_COLL, (), ())
KS_RW(write_at_all, WRITE_AT_ALL, const void *, KS_WRITE, KS_COLL, (MPI_Offset off, ), (off, ))
KS_RW(write_shared, WRITE_SHARED, const void *, KS_WRITE, KS_BLOCKING, (), ())
KS_RW(write_ordered, WRITE_ORDERED, const void *, KS_WRITE, KS_COLL, (), ())

/* The non-blocking reads and writes. */
#define KS_IRW(x, X, B, mode, flags, op, oa)                                                                           \
  int MPI_File_##x(MPI_File fh, KS_UNPAREN op B buf, int count, MPI_Datatype t, MPI_Request *req) {                   \
    ks_enter(R_FILE_##X, 0);                                                                                           \
    int err = PMPI_File_##x(fh, KS_UNPAREN oa buf, count, t, req);                                                    \
    if (err == MPI_SUCCESS) ks_io(fh, mode, (flags) | KS_NB, (int64_t)ks_bytes(count, t), NULL, t, req, 0);          \
    kt_leave();                                                                                                        \
    return err;                                                                                                        \
  }
KS_IRW(iread, IREAD, void *, KS_READ, 0, (), ())
KS_IRW(iread_at, IREAD_AT, void *, KS_READ, 0, (MPI_Offset off, ), (off, ))
KS_IRW(iread_all, IREAD_ALL, void *, KS_READ, KS_COLL, (), ())
KS_IRW(iread_at_all, IREAD_AT_ALL, void *, KS_READ, KS_COLL, (MPI_Offset off, ), (off, ))
KS_IRW(iread_shared, IREAD_SHARED, void *, KS_READ, 0, (), ())
KS_IRW(iwrite, IWRITE, const void *, KS_WRITE, 0, (), ())
KS_IRW(iwrite_at, IWRITE_AT, const void *, KS_WRITE, 0, (MPI_Offset off, ), (off, ))
KS_IRW(iwrite_all, IWRITE_ALL, const void *, KS_WRITE, KS_COLL, (), ())
KS_IRW(iwrite_at_all, IWRITE_AT_ALL, const void *, KS_WRITE, KS_COLL, (MPI_Offset off, ), (off, ))
KS_IRW(iwrite_shared, IWRITE_SHARED, const void *, KS_WRITE, 0, (), ())

/* The split collectives. */
#define KS_SPLIT(x, X, B, mode, op, oa)                                                                                \
  int MPI_File_##x##_begin(MPI_File fh, KS_UNPAREN op B buf, int count, MPI_Datatype t) {                             \
    ks_enter(R_FILE_##X##_BEGIN, 0);                                                                                   \
    int err = PMPI_File_##x##_begin(fh, KS_UNPAREN oa buf, count, t);                                                 \
    if (err == MPI_SUCCESS) ks_io(fh, mode, KS_COLL | KS_NB, (int64_t)ks_bytes(count, t), NULL, t, NULL, 1);         \
    kt_leave();                                                                                                        \
    return err;                                                                                                        \
  }                                                                                                                    \
  int MPI_File_##x##_end(MPI_File fh, B buf, MPI_Status *st) {                                                         \
    ks_enter(R_FILE_##X##_END, 0);                                                                                     \
    int err = PMPI_File_##x##_end(fh, buf, st);                                                                        \
    ks_split_end(fh);                                                                                                  \
    kt_leave();                                                                                                        \
    return err;                                                                                                        \
  }
KS_SPLIT(read_all, READ_ALL, void *, KS_READ, (), ())
KS_SPLIT(read_at_all, READ_AT_ALL, void *, KS_READ, (MPI_Offset off, ), (off, ))
KS_SPLIT(read_ordered, READ_ORDERED, void *, KS_READ, (), ())
KS_SPLIT(write_all, WRITE_ALL, const void *, KS_WRITE, (), ())
KS_SPLIT(write_at_all, WRITE_AT_ALL, const void *, KS_WRITE, (MPI_Offset off, ), (off, ))
KS_SPLIT(write_ordered, WRITE_ORDERED, const void *, KS_WRITE, (), ())

#ifdef KAIROS_OTF2
/* ks_groupref returns the local OTF2 group of group's members (world
 * ranks): the group of a communicator record of those members, one more
 * than its local number (ko_defs writes communicator c's group as c + 1). */
static uint32_t ks_groupref(MPI_Group group) {
  int n = 0;
  if (group == MPI_GROUP_NULL || group == MPI_GROUP_EMPTY) return 1 + 0;
  PMPI_Group_size(group, &n);
  int *ranks = malloc((n > 0 ? n : 1) * sizeof *ranks), *world = malloc((n > 0 ? n : 1) * sizeof *world);
  if (!ranks || !world) abort();
  MPI_Group w;
  for (int i = 0; i < n; i++) ranks[i] = i;
  PMPI_Comm_group(MPI_COMM_WORLD, &w);
  PMPI_Group_translate_ranks(group, n, ranks, w, world);
  PMPI_Group_free(&w);
  free(ranks);
  for (int i = 0; i < ko_ncomms; i++)
    if (ko_comms[i].n == n && memcmp(ko_comms[i].members, world, n * sizeof *world) == 0) {
      free(world);
      return (uint32_t)i + 2;
    }
  ko_comms = realloc(ko_comms, (ko_ncomms + 1) * sizeof *ko_comms);
  if (!ko_comms) abort();
  ko_comms[ko_ncomms++] = (struct ko_comm){.handle = MPI_COMM_NULL, .n = n, .members = world, .key = 0};
  return (uint32_t)ko_ncomms + 1;
}

/* The windows and files unified at MPI_Finalize: each rank's mapping of
 * its numbers, and rank 0's keys "COMM NTH" (windows) and "COMM NTH NAME"
 * (files), in the order of their global numbers. */
static uint32_t *ks_wmap, *ks_fmap;
static char *ks_wkeys, *ks_fkeys;
static int ks_nwkeys, ks_nfkeys;

/* ks_keys returns the flat keys of this rank's windows (else files),
 * their communicators' local numbers mapped by map, in *len bytes. */
static char *ks_keys(int windows, const uint32_t *map, int *len) {
  size_t n = 0, cap = 64;
  char *buf = malloc(cap);
  if (!buf) abort();
  for (uint32_t i = 0; i < (windows ? ks_nwin : ks_nfile); i++) {
    uint32_t c = windows ? ks_wins[i].comm : ks_files[i].comm, k = windows ? ks_wins[i].nth : ks_files[i].nth;
    const char *name = windows ? "" : ks_files[i].name;
    size_t need = strlen(name) + 32;
    while (n + need > cap) {
      cap *= 2;
      if (!(buf = realloc(buf, cap))) abort();
    }
    n += (size_t)snprintf(buf + n, need, windows ? "%u %u" : "%u %u %s", c ? map[c - 1] : 0, k, name) + 1;
  }
  *len = (int)n;
  return buf;
}

/* ks_unify unifies the windows and files over the ranks (collective),
 * with map the communicators' mapping. */
static void ks_unify(const uint32_t *map) {
  int len, l;
  char *flat = ks_keys(1, map, &len);
  ks_wmap = ko_unify_names(flat, len, (int)ks_nwin, 0, &ks_wkeys, &ks_nwkeys, &l);
  flat = ks_keys(0, map, &len);
  ks_fmap = ko_unify_names(flat, len, (int)ks_nfile, 0, &ks_fkeys, &ks_nfkeys, &l);
}

/* ks_table writes a mapping table of type mt: local number i to map[i]
 * for n numbers, and, for groups, the world's 0 and 1 and the
 * communicators' groups. */
static void ks_maps(OTF2_DefWriter *dw, const uint32_t *map) {
  if (ks_nwin > 0) {
    OTF2_IdMap *m = OTF2_IdMap_Create(OTF2_ID_MAP_DENSE, ks_nwin);
    for (uint32_t i = 0; i < ks_nwin; i++) OTF2_IdMap_AddIdPair(m, i, ks_wmap[i]);
    OTF2_DefWriter_WriteMappingTable(dw, OTF2_MAPPING_RMA_WIN, m);
    OTF2_IdMap_Free(m);
  }
  if (ks_nfile > 0) {
    OTF2_IdMap *m = OTF2_IdMap_Create(OTF2_ID_MAP_DENSE, ks_nfile);
    for (uint32_t i = 0; i < ks_nfile; i++) OTF2_IdMap_AddIdPair(m, i, ks_fmap[i]);
    OTF2_DefWriter_WriteMappingTable(dw, OTF2_MAPPING_IO_HANDLE, m);
    OTF2_IdMap_Free(m);
  }
  if (ko_ncomms > 0) {
    OTF2_IdMap *m = OTF2_IdMap_Create(OTF2_ID_MAP_SPARSE, ko_ncomms + 2);
    OTF2_IdMap_AddIdPair(m, 0, 0);
    OTF2_IdMap_AddIdPair(m, 1, 1);
    for (int i = 0; i < ko_ncomms; i++) OTF2_IdMap_AddIdPair(m, i + 2, map[i] + 1);
    OTF2_DefWriter_WriteMappingTable(dw, OTF2_MAPPING_GROUP, m);
    OTF2_IdMap_Free(m);
  }
  free(ks_wmap), free(ks_fmap);
  ks_wmap = ks_fmap = NULL;
}

/* ks_defs writes, at rank 0, the windows, the MPI-IO paradigm, the files
 * and the I/O handles, their strings numbered from s. */
static void ks_defs(OTF2_GlobalDefWriter *g, uint32_t s) {
  const uint32_t s_win = s, s_io = s + 1, s_ioname = s + 2;
  OTF2_GlobalDefWriter_WriteString(g, s_win, "MPI window");
  OTF2_GlobalDefWriter_WriteString(g, s_io, "MPI-IO");
  OTF2_GlobalDefWriter_WriteString(g, s_ioname, "MPI I/O");
  const char *k = ks_wkeys;
  for (int i = 0; i < ks_nwkeys; i++, k += strlen(k) + 1)
    OTF2_GlobalDefWriter_WriteRmaWin(g, (uint32_t)i, s_win, (uint32_t)strtoul(k, NULL, 10), OTF2_RMA_WIN_FLAG_NONE);
  if (ks_nfkeys > 0)
    OTF2_GlobalDefWriter_WriteIoParadigm(g, 0, s_io, s_ioname, OTF2_IO_PARADIGM_CLASS_PARALLEL,
                                         OTF2_IO_PARADIGM_FLAG_NONE, 0, NULL, NULL, NULL);
  /* Files by name, in the order the handles name them: a file's string and
   * id follow the previous ones. */
  const char **names = malloc((ks_nfkeys > 0 ? ks_nfkeys : 1) * sizeof *names);
  int nnames = 0;
  if (!names) abort();
  k = ks_fkeys;
  for (int i = 0; i < ks_nfkeys; i++, k += strlen(k) + 1) {
    char *end;
    uint32_t comm = (uint32_t)strtoul(k, &end, 10);
    strtoul(end, &end, 10);
    const char *name = *end ? end + 1 : end;
    int f = 0;
    while (f < nnames && strcmp(names[f], name) != 0) f++;
    if (f == nnames) {
      names[nnames++] = name;
      OTF2_GlobalDefWriter_WriteString(g, s + 3 + (uint32_t)f, name);
      OTF2_GlobalDefWriter_WriteIoRegularFile(g, (uint32_t)f, s + 3 + (uint32_t)f, 0);
    }
    OTF2_GlobalDefWriter_WriteIoHandle(g, (uint32_t)i, s + 3 + (uint32_t)f, (uint32_t)f, 0, OTF2_IO_HANDLE_FLAG_NONE, comm,
                                       OTF2_UNDEFINED_IO_HANDLE);
  }
  free(names), free(ks_wkeys), free(ks_fkeys);
  ks_wkeys = ks_fkeys = NULL;
}
#endif

/* The Fortran bindings of the one-sided and MPI-IO calls, as those of the
 * others: they convert their arguments and call the C wrappers. Windows,
 * groups, files and infos are converted with their f2c functions,
 * addresses and offsets are INTEGER(KIND=MPI_ADDRESS_KIND) and
 * INTEGER(KIND=MPI_OFFSET_KIND), a window's base pointer is where the C
 * call stores it, a file name a blank-padded Fortran string (its length
 * passed after the other arguments). */
#define KF_WIN(w) PMPI_Win_f2c(*(w))
#define KF_FILE(f) PMPI_File_f2c(*(f))
#define KF_INFO(i) PMPI_Info_f2c(*(i))
#define KF_GROUP(g) PMPI_Group_f2c(*(g))

/* kf_string returns Fortran string s of n characters as a C string (to
 * free), trailing blanks removed. */
static char *kf_string(const char *s, size_t n) {
  while (n > 0 && s[n - 1] == ' ') n--;
  char *c = malloc(n + 1);
  if (!c) abort();
  memcpy(c, s, n);
  c[n] = 0;
  return c;
}

#define KF_WIN_NEW(x, X, params, call)                                                                                  \
  void mpi_##x##_(KF_UNPAREN params, F *win, F *ierr) {                                                                \
    MPI_Win w;                                                                                                         \
    *ierr = KF_UNPAREN call;                                                                                           \
    if (*ierr == MPI_SUCCESS) *win = PMPI_Win_c2f(w);                                                                  \
  }                                                                                                                    \
  KF_NAMES(x, X)
KF_WIN_NEW(win_create, WIN_CREATE, (void *base, MPI_Aint *size, F *disp, F *info, F *comm),
           (MPI_Win_create(base, *size, *disp, KF_INFO(info), KF_COMM(comm), &w)))
KF_WIN_NEW(win_allocate, WIN_ALLOCATE, (MPI_Aint * size, F *disp, F *info, F *comm, void *baseptr),
           (MPI_Win_allocate(*size, *disp, KF_INFO(info), KF_COMM(comm), baseptr, &w)))
KF_WIN_NEW(win_allocate_shared, WIN_ALLOCATE_SHARED, (MPI_Aint * size, F *disp, F *info, F *comm, void *baseptr),
           (MPI_Win_allocate_shared(*size, *disp, KF_INFO(info), KF_COMM(comm), baseptr, &w)))
KF_WIN_NEW(win_create_dynamic, WIN_CREATE_DYNAMIC, (F * info, F *comm),
           (MPI_Win_create_dynamic(KF_INFO(info), KF_COMM(comm), &w)))

void mpi_win_free_(F *win, F *ierr) {
  MPI_Win w = KF_WIN(win);
  *ierr = MPI_Win_free(&w);
  if (*ierr == MPI_SUCCESS) *win = PMPI_Win_c2f(w);
}
KF_NAMES(win_free, WIN_FREE)

/* KF_WIN_CALL defines the wrapper of a call that takes Fortran arguments
 * params and calls the C wrapper c with args. */
#define KF_CALL(x, X, params, c, args)                                                                                 \
  void mpi_##x##_(KF_UNPAREN params, F *ierr) { *ierr = c(KF_UNPAREN args); }                                          \
  KF_NAMES(x, X)
KF_CALL(win_fence, WIN_FENCE, (F * assert, F *win), MPI_Win_fence, (*assert, KF_WIN(win)))
KF_CALL(win_lock, WIN_LOCK, (F * type, F *rank, F *assert, F *win), MPI_Win_lock, (*type, *rank, *assert, KF_WIN(win)))
KF_CALL(win_unlock, WIN_UNLOCK, (F * rank, F *win), MPI_Win_unlock, (*rank, KF_WIN(win)))
KF_CALL(win_lock_all, WIN_LOCK_ALL, (F * assert, F *win), MPI_Win_lock_all, (*assert, KF_WIN(win)))
KF_CALL(win_unlock_all, WIN_UNLOCK_ALL, (F * win), MPI_Win_unlock_all, (KF_WIN(win)))
KF_CALL(win_flush, WIN_FLUSH, (F * rank, F *win), MPI_Win_flush, (*rank, KF_WIN(win)))
KF_CALL(win_flush_local, WIN_FLUSH_LOCAL, (F * rank, F *win), MPI_Win_flush_local, (*rank, KF_WIN(win)))
KF_CALL(win_flush_all, WIN_FLUSH_ALL, (F * win), MPI_Win_flush_all, (KF_WIN(win)))
KF_CALL(win_flush_local_all, WIN_FLUSH_LOCAL_ALL, (F * win), MPI_Win_flush_local_all, (KF_WIN(win)))
KF_CALL(win_sync, WIN_SYNC, (F * win), MPI_Win_sync, (KF_WIN(win)))
KF_CALL(win_attach, WIN_ATTACH, (F * win, void *base, MPI_Aint *size), MPI_Win_attach, (KF_WIN(win), base, *size))
KF_CALL(win_detach, WIN_DETACH, (F * win, void *base), MPI_Win_detach, (KF_WIN(win), base))
KF_CALL(win_post, WIN_POST, (F * group, F *assert, F *win), MPI_Win_post, (KF_GROUP(group), *assert, KF_WIN(win)))
KF_CALL(win_start, WIN_START, (F * group, F *assert, F *win), MPI_Win_start, (KF_GROUP(group), *assert, KF_WIN(win)))
KF_CALL(win_complete, WIN_COMPLETE, (F * win), MPI_Win_complete, (KF_WIN(win)))
KF_CALL(win_wait, WIN_WAIT, (F * win), MPI_Win_wait, (KF_WIN(win)))

void mpi_win_test_(F *win, F *flag, F *ierr) {
  int f = 0;
  *ierr = MPI_Win_test(KF_WIN(win), &f);
  *flag = f != 0;
}
KF_NAMES(win_test, WIN_TEST)

#define KF_RMA(x, X, c) /* MPI_Put, MPI_Get: origin, target, window */                                                \
  KF_CALL(x, X, (void *obuf, F *ocount, F *ot, F *t, MPI_Aint *disp, F *tcount, F *tt, F *win), c,                     \
          (kf_buf(obuf), *ocount, KF_TYPE(ot), *t, *disp, *tcount, KF_TYPE(tt), KF_WIN(win)))
KF_RMA(put, PUT, MPI_Put)
KF_RMA(get, GET, MPI_Get)
KF_CALL(accumulate, ACCUMULATE, (void *obuf, F *ocount, F *ot, F *t, MPI_Aint *disp, F *tcount, F *tt, F *op, F *win),
        MPI_Accumulate, (kf_buf(obuf), *ocount, KF_TYPE(ot), *t, *disp, *tcount, KF_TYPE(tt), KF_OP(op), KF_WIN(win)))
KF_CALL(get_accumulate, GET_ACCUMULATE,
        (void *obuf, F *ocount, F *ot, void *rbuf, F *rcount, F *rt, F *t, MPI_Aint *disp, F *tcount, F *tt, F *op,
         F *win),
        MPI_Get_accumulate,
        (kf_buf(obuf), *ocount, KF_TYPE(ot), kf_buf(rbuf), *rcount, KF_TYPE(rt), *t, *disp, *tcount, KF_TYPE(tt),
         KF_OP(op), KF_WIN(win)))
KF_CALL(fetch_and_op, FETCH_AND_OP, (void *obuf, void *rbuf, F *t, F *target, MPI_Aint *disp, F *op, F *win),
        MPI_Fetch_and_op, (kf_buf(obuf), rbuf, KF_TYPE(t), *target, *disp, KF_OP(op), KF_WIN(win)))
KF_CALL(compare_and_swap, COMPARE_AND_SWAP,
        (void *obuf, void *cbuf, void *rbuf, F *t, F *target, MPI_Aint *disp, F *win), MPI_Compare_and_swap,
        (obuf, cbuf, rbuf, KF_TYPE(t), *target, *disp, KF_WIN(win)))

/* KF_REQ defines the wrapper of a call that starts a request. */
#define KF_REQ(x, X, params, c, args)                                                                                  \
  void mpi_##x##_(KF_UNPAREN params, F *req, F *ierr) {                                                                \
    MPI_Request r;                                                                                                     \
    *ierr = c(KF_UNPAREN args, &r);                                                                                    \
    if (*ierr == MPI_SUCCESS) *req = PMPI_Request_c2f(r);                                                              \
  }                                                                                                                    \
  KF_NAMES(x, X)
KF_REQ(rput, RPUT, (void *obuf, F *ocount, F *ot, F *t, MPI_Aint *disp, F *tcount, F *tt, F *win), MPI_Rput,
       (kf_buf(obuf), *ocount, KF_TYPE(ot), *t, *disp, *tcount, KF_TYPE(tt), KF_WIN(win)))
KF_REQ(rget, RGET, (void *obuf, F *ocount, F *ot, F *t, MPI_Aint *disp, F *tcount, F *tt, F *win), MPI_Rget,
       (kf_buf(obuf), *ocount, KF_TYPE(ot), *t, *disp, *tcount, KF_TYPE(tt), KF_WIN(win)))
KF_REQ(raccumulate, RACCUMULATE,
       (void *obuf, F *ocount, F *ot, F *t, MPI_Aint *disp, F *tcount, F *tt, F *op, F *win), MPI_Raccumulate,
       (kf_buf(obuf), *ocount, KF_TYPE(ot), *t, *disp, *tcount, KF_TYPE(tt), KF_OP(op), KF_WIN(win)))
KF_REQ(rget_accumulate, RGET_ACCUMULATE,
       (void *obuf, F *ocount, F *ot, void *rbuf, F *rcount, F *rt, F *t, MPI_Aint *disp, F *tcount, F *tt, F *op,
        F *win),
       MPI_Rget_accumulate,
       (kf_buf(obuf), *ocount, KF_TYPE(ot), kf_buf(rbuf), *rcount, KF_TYPE(rt), *t, *disp, *tcount, KF_TYPE(tt),
        KF_OP(op), KF_WIN(win)))

/* MPI-IO. */
void mpi_file_open_(F *comm, const char *name, F *amode, F *info, F *fh, F *ierr, size_t len) {
  char *c = kf_string(name, len);
  MPI_File f;
  *ierr = MPI_File_open(KF_COMM(comm), c, *amode, KF_INFO(info), &f);
  if (*ierr == MPI_SUCCESS) *fh = PMPI_File_c2f(f);
  free(c);
}
KF_NAMES(file_open, FILE_OPEN)

void mpi_file_close_(F *fh, F *ierr) {
  MPI_File f = KF_FILE(fh);
  *ierr = MPI_File_close(&f);
  if (*ierr == MPI_SUCCESS) *fh = PMPI_File_c2f(f);
}
KF_NAMES(file_close, FILE_CLOSE)

void mpi_file_delete_(const char *name, F *info, F *ierr, size_t len) {
  char *c = kf_string(name, len);
  *ierr = MPI_File_delete(c, KF_INFO(info));
  free(c);
}
KF_NAMES(file_delete, FILE_DELETE)

void mpi_file_set_view_(F *fh, MPI_Offset *disp, F *et, F *ft, const char *rep, F *info, F *ierr, size_t len) {
  char *c = kf_string(rep, len);
  *ierr = MPI_File_set_view(KF_FILE(fh), *disp, KF_TYPE(et), KF_TYPE(ft), c, KF_INFO(info));
  free(c);
}
KF_NAMES(file_set_view, FILE_SET_VIEW)

KF_CALL(file_seek, FILE_SEEK, (F * fh, MPI_Offset *off, F *whence), MPI_File_seek, (KF_FILE(fh), *off, *whence))
KF_CALL(file_seek_shared, FILE_SEEK_SHARED, (F * fh, MPI_Offset *off, F *whence), MPI_File_seek_shared,
        (KF_FILE(fh), *off, *whence))
KF_CALL(file_sync, FILE_SYNC, (F * fh), MPI_File_sync, (KF_FILE(fh)))
KF_CALL(file_set_size, FILE_SET_SIZE, (F * fh, MPI_Offset *size), MPI_File_set_size, (KF_FILE(fh), *size))
KF_CALL(file_preallocate, FILE_PREALLOCATE, (F * fh, MPI_Offset *size), MPI_File_preallocate, (KF_FILE(fh), *size))

/* Reads and writes: KF_RW (blocking, with a status), KF_IRW
 * (non-blocking), KF_SPLIT (a split collective's begin and end), with
 * (offset parameter) and (offset argument). */
#define KF_RW(x, X, op, oa)                                                                                            \
  void mpi_file_##x##_(F *fh, KF_UNPAREN op void *buf, F *count, F *t, F *status, F *ierr) {                           \
    MPI_Status s;                                                                                                      \
    *ierr = MPI_File_##x(KF_FILE(fh), KF_UNPAREN oa kf_buf(buf), *count, KF_TYPE(t), kf_status(status, &s));          \
    kf_status_out(&s, status);                                                                                         \
  }                                                                                                                    \
  KF_NAMES(file_##x, FILE_##X)
#define KF_IRW(x, X, op, oa)                                                                                           \
  KF_REQ(file_##x, FILE_##X, (F * fh, KF_UNPAREN op void *buf, F *count, F *t), MPI_File_##x,                          \
         (KF_FILE(fh), KF_UNPAREN oa kf_buf(buf), *count, KF_TYPE(t)))
#define KF_SPLIT(x, X, op, oa)                                                                                         \
  KF_CALL(file_##x##_begin, FILE_##X##_BEGIN, (F * fh, KF_UNPAREN op void *buf, F *count, F *t),                       \
          MPI_File_##x##_begin, (KF_FILE(fh), KF_UNPAREN oa kf_buf(buf), *count, KF_TYPE(t)))                          \
  void mpi_file_##x##_end_(F *fh, void *buf, F *status, F *ierr) {                                                     \
    MPI_Status s;                                                                                                      \
    *ierr = MPI_File_##x##_end(KF_FILE(fh), kf_buf(buf), kf_status(status, &s));                                     \
    kf_status_out(&s, status);                                                                                         \
  }                                                                                                                    \
  KF_NAMES(file_##x##_end, FILE_##X##_END)
#define KF_AT (MPI_Offset * off, ), (*off, )
#define KF_NOAT (), ()
#define KF_APPLY(m, ...) m(__VA_ARGS__)
KF_APPLY(KF_RW, read, READ, KF_NOAT)
KF_APPLY(KF_RW, read_at, READ_AT, KF_AT)
KF_APPLY(KF_RW, read_all, READ_ALL, KF_NOAT)
KF_APPLY(KF_RW, read_at_all, READ_AT_ALL, KF_AT)
KF_APPLY(KF_RW, read_shared, READ_SHARED, KF_NOAT)
KF_APPLY(KF_RW, read_ordered, READ_ORDERED, KF_NOAT)
KF_APPLY(KF_RW, write, WRITE, KF_NOAT)
KF_APPLY(KF_RW, write_at, WRITE_AT, KF_AT)
KF_APPLY(KF_RW, write_all, WRITE_ALL, KF_NOAT)
KF_APPLY(KF_RW, write_at_all, WRITE_AT_ALL, KF_AT)
KF_APPLY(KF_RW, write_shared, WRITE_SHARED, KF_NOAT)
KF_APPLY(KF_RW, write_ordered, WRITE_ORDERED, KF_NOAT)
KF_APPLY(KF_IRW, iread, IREAD, KF_NOAT)
KF_APPLY(KF_IRW, iread_at, IREAD_AT, KF_AT)
KF_APPLY(KF_IRW, iread_all, IREAD_ALL, KF_NOAT)
KF_APPLY(KF_IRW, iread_at_all, IREAD_AT_ALL, KF_AT)
KF_APPLY(KF_IRW, iread_shared, IREAD_SHARED, KF_NOAT)
KF_APPLY(KF_IRW, iwrite, IWRITE, KF_NOAT)
KF_APPLY(KF_IRW, iwrite_at, IWRITE_AT, KF_AT)
KF_APPLY(KF_IRW, iwrite_all, IWRITE_ALL, KF_NOAT)
KF_APPLY(KF_IRW, iwrite_at_all, IWRITE_AT_ALL, KF_AT)
KF_APPLY(KF_IRW, iwrite_shared, IWRITE_SHARED, KF_NOAT)
KF_APPLY(KF_SPLIT, read_all, READ_ALL, KF_NOAT)
KF_APPLY(KF_SPLIT, read_at_all, READ_AT_ALL, KF_AT)
KF_APPLY(KF_SPLIT, read_ordered, READ_ORDERED, KF_NOAT)
KF_APPLY(KF_SPLIT, write_all, WRITE_ALL, KF_NOAT)
KF_APPLY(KF_SPLIT, write_at_all, WRITE_AT_ALL, KF_AT)
KF_APPLY(KF_SPLIT, write_ordered, WRITE_ORDERED, KF_NOAT)
