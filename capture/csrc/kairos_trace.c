/*
 * kairos_trace.c: Kairos' PMPI tracer. It records an MPI program's calls as
 * a SimGrid 3.32 time-independent trace, the trace `kairos simulate` and
 * `smpirun -replay` replay, with the computation between calls measured in
 * time and written in flops.
 *
 * Build and use (any MPI; KAIROS_TRACE and the other variables optional):
 *
 *   mpicc -O2 -shared -fPIC -o libkairos_trace.so kairos_trace.c
 *   mpirun -np 4 -x LD_PRELOAD=$PWD/libkairos_trace.so ./app     (Open MPI)
 *   kairos check kairos-trace/index.txt
 *
 * or link it before the MPI library: mpicc app.c -L. -lkairos_trace.
 *
 * Environment:
 *   KAIROS_TRACE        output directory (default kairos-trace): rank r
 *                       writes DIR/rank-r.ti, rank 0 DIR/index.txt listing
 *                       them (SimGrid's description file)
 *   KAIROS_TRACE_SPEED  flop/s the measured computation is converted at
 *                       (default 1e9): flops = seconds x speed
 *   KAIROS_TRACE_MIN    shortest computation recorded, in seconds (default
 *                       1e-6, SimGrid's smpi/cpu-threshold)
 *
 * What is recorded: init, finalize, send, ssend, isend, recv, irecv, wait,
 * waitall, test (and the other completions, as waits), persistent requests,
 * sendrecv, barrier, bcast, reduce, allreduce, alltoall(v),
 * gather(v), scatter(v), allgather(v), reduce_scatter, scan, exscan, and
 * the time between them as compute. Counts are bytes (MPI_BYTE, the TI
 * default). Partners are translated to MPI_COMM_WORLD ranks. A TI trace
 * knows only MPI_COMM_WORLD's collectives: collectives on other
 * communicators are not recorded, and rank 0 counts them on stderr at
 * MPI_Finalize. Waitany, waitsome, testany, testsome and testall are
 * written as a wait on each request they complete; persistent requests as
 * the isend or irecv each MPI_Start starts. One-sided and I/O calls are
 * not wrapped: their time counts as computation. A sendrecv with
 * MPI_PROC_NULL on one side is written as its other half.
 */
#include <errno.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define KT_ANY_SOURCE (-555) /* MPI_ANY_SOURCE in TI */
#define KT_ANY_TAG (-444)

static FILE *kt_out;
static int kt_rank = -1, kt_size;
static double kt_speed = 1e9, kt_min = 1e-6, kt_last;
static long kt_skipped;

/* A pending isend or irecv: its TI key (src, dst, tag). */
struct kt_req {
  MPI_Request req;
  int src, dst, tag;
};
static struct kt_req *kt_reqs;
static int kt_nreq, kt_capreq;

static int kt_on(void) { return kt_out != NULL; }

/* Lines are formatted by hand into a buffer: fprintf would be most of the
 * tracer's cost per call. kt_line starts "<rank> <action>", kt_num adds
 * " <n>", kt_eol ends the line. */
static char kt_buf[1 << 16];
static size_t kt_len;

static void kt_flush(void) {
  if (kt_len > 0) fwrite(kt_buf, 1, kt_len, kt_out);
  kt_len = 0;
}

static void kt_room(size_t n) {
  if (kt_len + n > sizeof kt_buf) kt_flush();
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
  kt_room(1);
  kt_buf[kt_len++] = ' ';
  kt_digits(v);
}

static void kt_line(const char *action) {
  size_t n = strlen(action);
  kt_digits(kt_rank);
  kt_room(n + 1);
  kt_buf[kt_len++] = ' ';
  memcpy(kt_buf + kt_len, action, n);
  kt_len += n;
}

static void kt_eol(void) {
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

/* kt_coll writes a collective's action and its n arguments. */
static void kt_coll(const char *action, int n, const long *args) {
  kt_line(action);
  for (int i = 0; i < n; i++) kt_num(args[i]);
  kt_eol();
}


/* kt_enter writes the computation since the last call returned. */
static void kt_enter(void) {
  if (!kt_on()) return;
  double gap = PMPI_Wtime() - kt_last;
  if (gap >= kt_min && gap > 0) {
    kt_line("compute");
    kt_room(32);
    kt_len += (size_t)snprintf(kt_buf + kt_len, 32, " %.17g", gap * kt_speed);
    kt_eol();
  }
}

static void kt_leave(void) {
  if (kt_on()) kt_last = PMPI_Wtime();
}

static long kt_bytes(int count, MPI_Datatype t) {
  int size = 0;
  if (t != MPI_DATATYPE_NULL) PMPI_Type_size(t, &size);
  return (long)count * size;
}

/* kt_world returns comm's rank r as a rank of MPI_COMM_WORLD. */
static int kt_world(MPI_Comm comm, int r) {
  if (r == MPI_ANY_SOURCE) return KT_ANY_SOURCE;
  if (r == MPI_PROC_NULL || comm == MPI_COMM_WORLD) return r;
  MPI_Group g, w;
  int out = r;
  PMPI_Comm_group(comm, &g);
  PMPI_Comm_group(MPI_COMM_WORLD, &w);
  PMPI_Group_translate_ranks(g, 1, &r, w, &out);
  PMPI_Group_free(&g);
  PMPI_Group_free(&w);
  return out;
}

static int kt_tag(int tag) { return tag == MPI_ANY_TAG ? KT_ANY_TAG : tag; }

/* kt_world_coll reports whether a collective on comm can be recorded. */
static int kt_world_coll(MPI_Comm comm) {
  int same = MPI_UNEQUAL;
  if (comm == MPI_COMM_WORLD) return 1;
  PMPI_Comm_compare(comm, MPI_COMM_WORLD, &same);
  if (same == MPI_IDENT || same == MPI_CONGRUENT) return 1;
  kt_skipped++;
  return 0;
}

static void kt_push(MPI_Request req, int src, int dst, int tag) {
  if (kt_nreq == kt_capreq) {
    kt_capreq = kt_capreq ? 2 * kt_capreq : 64;
    kt_reqs = realloc(kt_reqs, kt_capreq * sizeof *kt_reqs);
    if (!kt_reqs) abort();
  }
  kt_reqs[kt_nreq++] = (struct kt_req){req, src, dst, tag};
}

/* kt_find returns the index of req among the pending requests, or -1. */
static int kt_find(MPI_Request req) {
  for (int i = 0; i < kt_nreq; i++)
    if (kt_reqs[i].req == req) return i;
  return -1;
}

static void kt_drop(int i) {
  memmove(kt_reqs + i, kt_reqs + i + 1, (kt_nreq - i - 1) * sizeof *kt_reqs);
  kt_nreq--;
}

/* kt_wait writes "wait src dst tag" for a pending request and forgets it. */
static void kt_wait(MPI_Request req, const char *action, int done) {
  int i = kt_find(req);
  if (i < 0) return; /* not an isend or irecv of ours */
  kt_line(action);
  kt_num(kt_reqs[i].src);
  kt_num(kt_reqs[i].dst);
  kt_num(kt_reqs[i].tag);
  kt_eol();
  if (done) kt_drop(i);
}

static void kt_open(void) {
  const char *dir = getenv("KAIROS_TRACE");
  const char *s;
  char path[4096];
  if (!dir || !*dir) dir = "kairos-trace";
  if ((s = getenv("KAIROS_TRACE_SPEED")) && atof(s) > 0) kt_speed = atof(s);
  if ((s = getenv("KAIROS_TRACE_MIN"))) kt_min = atof(s);
  PMPI_Comm_rank(MPI_COMM_WORLD, &kt_rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &kt_size);
  if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
    fprintf(stderr, "kairos_trace: rank %d: cannot create %s: %s\n", kt_rank, dir, strerror(errno));
    return;
  }
  snprintf(path, sizeof path, "%s/rank-%d.ti", dir, kt_rank);
  if (!(kt_out = fopen(path, "w"))) {
    fprintf(stderr, "kairos_trace: rank %d: cannot write %s: %s\n", kt_rank, path, strerror(errno));
    return;
  }
  if (kt_rank == 0) {
    snprintf(path, sizeof path, "%s/index.txt", dir);
    FILE *idx = fopen(path, "w");
    if (idx) {
      for (int r = 0; r < kt_size; r++) fprintf(idx, "rank-%d.ti\n", r);
      fclose(idx);
    }
  }
  kt_line("init");
  kt_eol();
  kt_last = PMPI_Wtime();
}

int MPI_Init(int *argc, char ***argv) {
  int err = PMPI_Init(argc, argv);
  kt_open();
  return err;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
  int err = PMPI_Init_thread(argc, argv, required, provided);
  kt_open();
  return err;
}

int MPI_Finalize(void) {
  if (kt_on()) {
    kt_enter();
    kt_line("finalize");
    kt_eol();
    long skipped = 0;
    PMPI_Reduce(&kt_skipped, &skipped, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (kt_rank == 0 && skipped > 0)
      fprintf(stderr, "kairos_trace: %ld calls, over all ranks, that TI cannot express were not recorded\n", skipped);
    kt_flush();
    fclose(kt_out);
    kt_out = NULL;
  }
  return PMPI_Finalize();
}

static int kt_send(const char *action, const void *buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm,
                   int (*send)(const void *, int, MPI_Datatype, int, int, MPI_Comm)) {
  kt_enter();
  int err = send(buf, count, t, dest, tag, comm);
  if (kt_on() && dest != MPI_PROC_NULL)
    kt_p2p(action, kt_world(comm, dest), tag, kt_bytes(count, t));
  kt_leave();
  return err;
}

int MPI_Send(const void *buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm) {
  return kt_send("send", buf, count, t, dest, tag, comm, PMPI_Send);
}

int MPI_Ssend(const void *buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm) {
  return kt_send("send", buf, count, t, dest, tag, comm, PMPI_Ssend);
}

int MPI_Isend(const void *buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm, MPI_Request *req) {
  kt_enter();
  int err = PMPI_Isend(buf, count, t, dest, tag, comm, req);
  if (kt_on() && dest != MPI_PROC_NULL) {
    int d = kt_world(comm, dest);
    kt_p2p("isend", d, tag, kt_bytes(count, t));
    kt_push(*req, kt_rank, d, tag);
  }
  kt_leave();
  return err;
}

int MPI_Recv(void *buf, int count, MPI_Datatype t, int src, int tag, MPI_Comm comm, MPI_Status *status) {
  MPI_Status st;
  if (status == MPI_STATUS_IGNORE) status = &st;
  kt_enter();
  int err = PMPI_Recv(buf, count, t, src, tag, comm, status);
  if (kt_on() && src != MPI_PROC_NULL) {
    int n = 0;
    PMPI_Get_count(status, t, &n);
    /* The matched source and tag, so that the replay matches the same message. */
    kt_p2p("recv", kt_world(comm, status->MPI_SOURCE), status->MPI_TAG, kt_bytes(n, t));
  }
  kt_leave();
  return err;
}

int MPI_Irecv(void *buf, int count, MPI_Datatype t, int src, int tag, MPI_Comm comm, MPI_Request *req) {
  kt_enter();
  int err = PMPI_Irecv(buf, count, t, src, tag, comm, req);
  if (kt_on() && src != MPI_PROC_NULL) {
    int s = kt_world(comm, src);
    kt_p2p("irecv", s, kt_tag(tag), kt_bytes(count, t));
    kt_push(*req, s, kt_rank, kt_tag(tag));
  }
  kt_leave();
  return err;
}

int MPI_Wait(MPI_Request *req, MPI_Status *status) {
  MPI_Request r = *req;
  kt_enter();
  int err = PMPI_Wait(req, status);
  if (kt_on()) kt_wait(r, "wait", 1);
  kt_leave();
  return err;
}

int MPI_Waitall(int count, MPI_Request reqs[], MPI_Status statuses[]) {
  MPI_Request *saved = malloc((count > 0 ? count : 1) * sizeof *saved);
  if (!saved) abort();
  memcpy(saved, reqs, count * sizeof *saved);
  kt_enter();
  int err = PMPI_Waitall(count, reqs, statuses);
  if (kt_on()) {
    int ours = 0;
    for (int i = 0; i < count; i++) ours += kt_find(saved[i]) >= 0;
    if (ours > 0 && ours == kt_nreq) { /* TI's waitall: every outstanding request */
      kt_line("waitall");
      kt_eol();
      kt_nreq = 0;
    } else {
      for (int i = 0; i < count; i++) kt_wait(saved[i], "wait", 1);
    }
  }
  free(saved);
  kt_leave();
  return err;
}

int MPI_Test(MPI_Request *req, int *flag, MPI_Status *status) {
  MPI_Request r = *req;
  kt_enter();
  int err = PMPI_Test(req, flag, status);
  if (kt_on()) kt_wait(r, "test", *flag);
  kt_leave();
  return err;
}

/* A sendrecv with MPI_PROC_NULL on one side is the other side alone, with
 * tag 0: TI's sendRecv has no tags and its replay matches with tag 0, so
 * that the lone half matches the peer's sendRecv (SimGrid's own tracer
 * writes nothing there, and its replay then deadlocks). The matched source
 * is written for MPI_ANY_SOURCE, as for a receive. */
int MPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype st, int dest, int stag, void *rbuf, int rcount,
                 MPI_Datatype rt, int src, int rtag, MPI_Comm comm, MPI_Status *status) {
  MPI_Status stat;
  if (status == MPI_STATUS_IGNORE) status = &stat;
  kt_enter();
  int err = PMPI_Sendrecv(sbuf, scount, st, dest, stag, rbuf, rcount, rt, src, rtag, comm, status);
  if (kt_on()) {
    int n = 0, from = src == MPI_PROC_NULL ? MPI_PROC_NULL : kt_world(comm, status->MPI_SOURCE);
    if (src != MPI_PROC_NULL) PMPI_Get_count(status, rt, &n);
    if (dest == MPI_PROC_NULL && src != MPI_PROC_NULL) {
      kt_p2p("recv", from, 0, kt_bytes(n, rt));
    } else if (src == MPI_PROC_NULL && dest != MPI_PROC_NULL) {
      kt_p2p("send", kt_world(comm, dest), 0, kt_bytes(scount, st));
    } else if (dest != MPI_PROC_NULL) {
      /* TI: "sendRecv <sendcount> <dst> <recvcount> <src> <sendtype> <recvtype>"; MPI_BYTE is 6 */
      kt_line("sendRecv");
      kt_num(kt_bytes(scount, st));
      kt_num(kt_world(comm, dest));
      kt_num(kt_bytes(n, rt));
      kt_num(from);
      kt_num(6);
      kt_num(6);
      kt_eol();
    }
  }
  kt_leave();
  return err;
}

int MPI_Barrier(MPI_Comm comm) {
  kt_enter();
  int err = PMPI_Barrier(comm);
  if (kt_on() && kt_world_coll(comm)) kt_coll("barrier", 0, NULL);
  kt_leave();
  return err;
}

int MPI_Bcast(void *buf, int count, MPI_Datatype t, int root, MPI_Comm comm) {
  kt_enter();
  int err = PMPI_Bcast(buf, count, t, root, comm);
  if (kt_on() && kt_world_coll(comm)) kt_coll("bcast", 2, (long[]){kt_bytes(count, t), root});
  kt_leave();
  return err;
}

int MPI_Reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype t, MPI_Op op, int root, MPI_Comm comm) {
  kt_enter();
  int err = PMPI_Reduce(sbuf, rbuf, count, t, op, root, comm);
  if (kt_on() && kt_world_coll(comm)) kt_coll("reduce", 3, (long[]){kt_bytes(count, t), 0, root});
  kt_leave();
  return err;
}

int MPI_Allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype t, MPI_Op op, MPI_Comm comm) {
  kt_enter();
  int err = PMPI_Allreduce(sbuf, rbuf, count, t, op, comm);
  if (kt_on() && kt_world_coll(comm)) kt_coll("allreduce", 2, (long[]){kt_bytes(count, t), 0});
  kt_leave();
  return err;
}

static int kt_scan(const char *action, const void *sbuf, void *rbuf, int count, MPI_Datatype t, MPI_Op op,
                   MPI_Comm comm, int (*scan)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm)) {
  kt_enter();
  int err = scan(sbuf, rbuf, count, t, op, comm);
  if (kt_on() && kt_world_coll(comm)) kt_coll(action, 2, (long[]){kt_bytes(count, t), 0});
  kt_leave();
  return err;
}

int MPI_Scan(const void *sbuf, void *rbuf, int count, MPI_Datatype t, MPI_Op op, MPI_Comm comm) {
  return kt_scan("scan", sbuf, rbuf, count, t, op, comm, PMPI_Scan);
}

int MPI_Exscan(const void *sbuf, void *rbuf, int count, MPI_Datatype t, MPI_Op op, MPI_Comm comm) {
  return kt_scan("exscan", sbuf, rbuf, count, t, op, comm, PMPI_Exscan);
}

/* The all-to-all shapes: "<action> <sendbytes> <recvbytes> [root]". */
int MPI_Alltoall(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount, MPI_Datatype rt, MPI_Comm comm) {
  kt_enter();
  int err = PMPI_Alltoall(sbuf, scount, st, rbuf, rcount, rt, comm);
  if (kt_on() && kt_world_coll(comm))
    kt_coll("alltoall", 2, (long[]){kt_bytes(scount, st), kt_bytes(rcount, rt)});
  kt_leave();
  return err;
}

int MPI_Allgather(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount, MPI_Datatype rt,
                  MPI_Comm comm) {
  kt_enter();
  int err = PMPI_Allgather(sbuf, scount, st, rbuf, rcount, rt, comm);
  if (kt_on() && kt_world_coll(comm))
    kt_coll("allgather", 2, (long[]){kt_bytes(scount, st), kt_bytes(rcount, rt)});
  kt_leave();
  return err;
}

int MPI_Gather(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount, MPI_Datatype rt, int root,
               MPI_Comm comm) {
  kt_enter();
  int err = PMPI_Gather(sbuf, scount, st, rbuf, rcount, rt, root, comm);
  if (kt_on() && kt_world_coll(comm)) /* rcount matters at the root only; SimGrid takes every rank's */
    kt_coll("gather", 3, (long[]){kt_bytes(scount, st), kt_bytes(scount, st), root});
  kt_leave();
  return err;
}

int MPI_Scatter(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount, MPI_Datatype rt, int root,
                MPI_Comm comm) {
  kt_enter();
  int err = PMPI_Scatter(sbuf, scount, st, rbuf, rcount, rt, root, comm);
  if (kt_on() && kt_world_coll(comm))
    kt_coll("scatter", 3, (long[]){kt_bytes(rcount, rt), kt_bytes(rcount, rt), root});
  kt_leave();
  return err;
}

/* kt_counts writes n per-rank counts as bytes. */
static void kt_counts(const int *counts, MPI_Datatype t, int n) {
  for (int i = 0; i < n; i++) kt_num(counts ? kt_bytes(counts[i], t) : 0L);
}

int MPI_Alltoallv(const void *sbuf, const int *scounts, const int *sdispls, MPI_Datatype st, void *rbuf,
                  const int *rcounts, const int *rdispls, MPI_Datatype rt, MPI_Comm comm) {
  kt_enter();
  int err = PMPI_Alltoallv(sbuf, scounts, sdispls, st, rbuf, rcounts, rdispls, rt, comm);
  if (kt_on() && kt_world_coll(comm)) {
    long sb = 0, rb = 0;
    for (int i = 0; i < kt_size; i++) sb += kt_bytes(scounts[i], st), rb += kt_bytes(rcounts[i], rt);
    kt_line("alltoallv");
    kt_num(sb);
    kt_counts(scounts, st, kt_size);
    kt_num(rb);
    kt_counts(rcounts, rt, kt_size);
    kt_eol();
  }
  kt_leave();
  return err;
}

int MPI_Allgatherv(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, const int *rcounts, const int *displs,
                   MPI_Datatype rt, MPI_Comm comm) {
  kt_enter();
  int err = PMPI_Allgatherv(sbuf, scount, st, rbuf, rcounts, displs, rt, comm);
  if (kt_on() && kt_world_coll(comm)) {
    kt_line("allgatherv");
    kt_num(kt_bytes(scount, st));
    kt_counts(rcounts, rt, kt_size);
    kt_eol();
  }
  kt_leave();
  return err;
}

/* Receive counts of gatherv and send counts of scatterv are significant at
 * the root only: other ranks write zeros, as SimGrid's tracer does. */
int MPI_Gatherv(const void *sbuf, int scount, MPI_Datatype st, void *rbuf, const int *rcounts, const int *displs,
                MPI_Datatype rt, int root, MPI_Comm comm) {
  kt_enter();
  int err = PMPI_Gatherv(sbuf, scount, st, rbuf, rcounts, displs, rt, root, comm);
  if (kt_on() && kt_world_coll(comm)) {
    kt_line("gatherv");
    kt_num(kt_bytes(scount, st));
    kt_counts(kt_rank == root ? rcounts : NULL, rt, kt_size);
    kt_num(root);
    kt_eol();
  }
  kt_leave();
  return err;
}

int MPI_Scatterv(const void *sbuf, const int *scounts, const int *displs, MPI_Datatype st, void *rbuf, int rcount,
                 MPI_Datatype rt, int root, MPI_Comm comm) {
  kt_enter();
  int err = PMPI_Scatterv(sbuf, scounts, displs, st, rbuf, rcount, rt, root, comm);
  if (kt_on() && kt_world_coll(comm)) {
    kt_line("scatterv");
    kt_counts(kt_rank == root ? scounts : NULL, st, kt_size);
    kt_num(kt_bytes(rcount, rt));
    kt_num(root);
    kt_eol();
  }
  kt_leave();
  return err;
}

int MPI_Reduce_scatter(const void *sbuf, void *rbuf, const int *rcounts, MPI_Datatype t, MPI_Op op, MPI_Comm comm) {
  kt_enter();
  int err = PMPI_Reduce_scatter(sbuf, rbuf, rcounts, t, op, comm);
  if (kt_on() && kt_world_coll(comm)) {
    kt_line("reducescatter");
    kt_counts(rcounts, t, kt_size);
    kt_num(0);
    kt_eol();
  }
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

/* The completions TI has no action for are written as a wait on each
 * request they complete. */
int MPI_Waitany(int n, MPI_Request reqs[], int *index, MPI_Status *status) {
  MPI_Request *saved = kt_saved(n, reqs);
  kt_enter();
  int err = PMPI_Waitany(n, reqs, index, status);
  if (kt_on() && *index != MPI_UNDEFINED) kt_wait(saved[*index], "wait", 1);
  free(saved);
  kt_leave();
  return err;
}

int MPI_Waitsome(int n, MPI_Request reqs[], int *outcount, int idx[], MPI_Status st[]) {
  MPI_Request *saved = kt_saved(n, reqs);
  kt_enter();
  int err = PMPI_Waitsome(n, reqs, outcount, idx, st);
  if (kt_on() && *outcount != MPI_UNDEFINED)
    for (int i = 0; i < *outcount; i++) kt_wait(saved[idx[i]], "wait", 1);
  free(saved);
  kt_leave();
  return err;
}

int MPI_Testany(int n, MPI_Request reqs[], int *index, int *flag, MPI_Status *status) {
  MPI_Request *saved = kt_saved(n, reqs);
  kt_enter();
  int err = PMPI_Testany(n, reqs, index, flag, status);
  if (kt_on() && *flag && *index != MPI_UNDEFINED) kt_wait(saved[*index], "wait", 1);
  free(saved);
  kt_leave();
  return err;
}

int MPI_Testsome(int n, MPI_Request reqs[], int *outcount, int idx[], MPI_Status st[]) {
  MPI_Request *saved = kt_saved(n, reqs);
  kt_enter();
  int err = PMPI_Testsome(n, reqs, outcount, idx, st);
  if (kt_on() && *outcount != MPI_UNDEFINED)
    for (int i = 0; i < *outcount; i++) kt_wait(saved[idx[i]], "wait", 1);
  free(saved);
  kt_leave();
  return err;
}

int MPI_Testall(int n, MPI_Request reqs[], int *flag, MPI_Status st[]) {
  MPI_Request *saved = kt_saved(n, reqs);
  kt_enter();
  int err = PMPI_Testall(n, reqs, flag, st);
  if (kt_on() && *flag)
    for (int i = 0; i < n; i++) kt_wait(saved[i], "wait", 1);
  free(saved);
  kt_leave();
  return err;
}

/* Persistent requests: each MPI_Start is the isend or irecv it starts. */
struct kt_persist {
  MPI_Request req;
  int send, peer, tag; /* peer: a world rank (or KT_ANY_SOURCE) */
  long bytes;
};
static struct kt_persist *kt_pers;
static int kt_npers, kt_cappers;

static int kt_init(int send, int count, MPI_Datatype t, int peer, int tag, MPI_Comm comm, MPI_Request *req, int err) {
  if (err != MPI_SUCCESS || !kt_on() || peer == MPI_PROC_NULL) return err;
  if (kt_npers == kt_cappers) {
    kt_cappers = kt_cappers ? 2 * kt_cappers : 16;
    kt_pers = realloc(kt_pers, kt_cappers * sizeof *kt_pers);
    if (!kt_pers) abort();
  }
  kt_pers[kt_npers++] = (struct kt_persist){*req, send, kt_world(comm, peer), send ? tag : kt_tag(tag), kt_bytes(count, t)};
  return err;
}

int MPI_Send_init(const void *buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm, MPI_Request *req) {
  return kt_init(1, count, t, dest, tag, comm, req, PMPI_Send_init(buf, count, t, dest, tag, comm, req));
}

int MPI_Recv_init(void *buf, int count, MPI_Datatype t, int src, int tag, MPI_Comm comm, MPI_Request *req) {
  return kt_init(0, count, t, src, tag, comm, req, PMPI_Recv_init(buf, count, t, src, tag, comm, req));
}

/* kt_start writes the isend or irecv a persistent request starts. */
static void kt_start(MPI_Request req) {
  for (int i = 0; i < kt_npers; i++) {
    struct kt_persist *p = &kt_pers[i];
    if (p->req != req) continue;
    if (p->send) {
      kt_p2p("isend", p->peer, p->tag, p->bytes);
      kt_push(req, kt_rank, p->peer, p->tag);
    } else {
      kt_p2p("irecv", p->peer, p->tag, p->bytes);
      kt_push(req, p->peer, kt_rank, p->tag);
    }
    return;
  }
}

int MPI_Start(MPI_Request *req) {
  kt_enter();
  int err = PMPI_Start(req);
  if (kt_on()) kt_start(*req);
  kt_leave();
  return err;
}

int MPI_Startall(int n, MPI_Request reqs[]) {
  kt_enter();
  int err = PMPI_Startall(n, reqs);
  if (kt_on())
    for (int i = 0; i < n; i++) kt_start(reqs[i]);
  kt_leave();
  return err;
}

/* A freed request is neither started nor waited for again. */
int MPI_Request_free(MPI_Request *req) {
  MPI_Request r = *req;
  int err = PMPI_Request_free(req);
  for (int i = 0; i < kt_npers; i++)
    if (kt_pers[i].req == r) {
      kt_pers[i] = kt_pers[--kt_npers];
      break;
    }
  int i = kt_find(r);
  if (i >= 0) kt_drop(i);
  return err;
}
