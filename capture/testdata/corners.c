/* Corners of MPI that programs reach and the tracer must record as they
 * happened: each argument names one case, run on 2 ranks.
 *
 *   partial  receives whose datatype is bigger than what was sent, so
 *            that the message ends inside an element (MPI_Get_count is
 *            MPI_UNDEFINED): a plain receive, a sendrecv and a matched
 *            probe's receive, each of 4 bytes into a double.
 *   freecomm receives pending on communicators the program frees before
 *            they complete (MPI keeps a communicator until then): one
 *            from a given source, one from MPI_ANY_SOURCE on a
 *            communicator whose ranks are the world's reversed.
 *   bsend    both ranks send each other 100,000 bytes in buffered mode,
 *            then receive: the buffer is detached; then again, and the
 *            buffer is left attached to MPI_Finalize.
 *   intercoll  (3 ranks) v-collectives on an intercommunicator between
 *            rank 0 and ranks 1 and 2: gatherv and igatherv to rank 0,
 *            scatterv from it, an alltoallw; then a barrier on the world.
 *   freerecv rank 1 frees its receive (on a duplicate of the world, which
 *            it frees too) before rank 0 sends: MPI completes it by
 *            MPI_Finalize.
 *   mprobe   rank 0 sends rank 1 four messages of one tag, of 8, 16, 24
 *            and 32 bytes; rank 1 takes the first with MPI_Mprobe, then
 *            receives the second with MPI_Recv before it MPI_Mrecvs the
 *            first; the same with MPI_Improbe (polled), MPI_Irecv and
 *            MPI_Imrecv; and probes MPI_PROC_NULL (MPI_MESSAGE_NO_PROC).
 *   dupic    (4 ranks) an intercommunicator between the even and odd
 *            ranks and its duplicate: each even rank posts a receive on
 *            the duplicate, then one on the first, from its odd partner,
 *            of one tag, and waits for the second; the partner sends on
 *            the first, then, after a handshake, on the duplicate.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank;

/* partial: rank 0 sends one int three times; rank 1 receives each into
 * a double, by MPI_Recv, MPI_Sendrecv and MPI_Mprobe with MPI_Mrecv. */
static void partial(void) {
  int v = 7;
  double d = 0;
  MPI_Status st;
  if (rank == 0) {
    for (int i = 0; i < 3; i++) MPI_Send(&v, 1, MPI_INT, 1, 5, MPI_COMM_WORLD);
  } else if (rank == 1) {
    MPI_Recv(&d, 1, MPI_DOUBLE, 0, 5, MPI_COMM_WORLD, &st);
    MPI_Sendrecv(NULL, 0, MPI_BYTE, MPI_PROC_NULL, 0, &d, 1, MPI_DOUBLE, 0, 5, MPI_COMM_WORLD, &st);
    MPI_Message m;
    MPI_Mprobe(0, 5, MPI_COMM_WORLD, &m, &st);
    MPI_Mrecv(&d, 1, MPI_DOUBLE, &m, &st);
  }
}

/* freecomm: rank 1 posts its receives, frees both communicators and
 * only then lets rank 0 send. */
static void freecomm(void) {
  MPI_Comm dup, rev;
  MPI_Request q[2];
  int a = 1, b = 2, size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &rev);
  if (rank == 1) {
    MPI_Irecv(&a, 1, MPI_INT, 0, 3, dup, &q[0]);
    MPI_Irecv(&b, 1, MPI_INT, MPI_ANY_SOURCE, 4, rev, &q[1]);
    MPI_Comm_free(&dup);
    MPI_Comm_free(&rev);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
  } else {
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
      MPI_Send(&a, 1, MPI_INT, 1, 3, dup);
      MPI_Send(&b, 1, MPI_INT, size - 2, 4, rev); /* world rank 1 */
    }
    MPI_Comm_free(&dup);
    MPI_Comm_free(&rev);
  }
}

/* bsend: a head-to-head exchange that only buffered sends make safe. */
static void bsend(void) {
  enum { N = 25000 }; /* ints: 100,000 bytes, above SimGrid's 64 KiB */
  static int out[N], in[N];
  int other = 1 - rank, size = 0;
  void *old;
  for (int round = 0; round < 2; round++) {
    int bytes = N * (int)sizeof(int) + MPI_BSEND_OVERHEAD;
    MPI_Buffer_attach(malloc(bytes), bytes);
    MPI_Bsend(out, N, MPI_INT, other, 7 + round, MPI_COMM_WORLD);
    MPI_Recv(in, N, MPI_INT, other, 7 + round, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (round == 0) {
      MPI_Buffer_detach(&old, &size);
      free(old);
    }
  }
}

/* intercoll: on an intercommunicator, a root's group passes MPI_ROOT (or
 * MPI_PROC_NULL) and vectors of the remote group's size; the other group
 * passes the root's remote rank, which may be its own local rank. */
static void intercoll(void) {
  MPI_Comm half, inter;
  MPI_Request q;
  int left = rank == 0, v[4] = {1, 2, 3, 4}, in[4], counts[2] = {1, 1}, displs[2] = {0, 1};
  MPI_Datatype types[2] = {MPI_INT, MPI_INT};
  MPI_Comm_split(MPI_COMM_WORLD, left, rank, &half);
  MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, left ? 1 : 0, 9, &inter);
  if (left) {
    MPI_Gatherv(NULL, 0, MPI_INT, in, counts, displs, MPI_INT, MPI_ROOT, inter);
    MPI_Igatherv(NULL, 0, MPI_INT, in, counts, displs, MPI_INT, MPI_ROOT, inter, &q);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    MPI_Scatterv(v, counts, displs, MPI_INT, NULL, 0, MPI_INT, MPI_ROOT, inter);
  } else {
    MPI_Gatherv(v, 1, MPI_INT, NULL, NULL, NULL, MPI_INT, 0, inter);
    MPI_Igatherv(v, 1, MPI_INT, NULL, NULL, NULL, MPI_INT, 0, inter, &q);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    MPI_Scatterv(NULL, NULL, NULL, MPI_INT, in, 1, MPI_INT, 0, inter);
  }
  /* counts, displacements and types of the remote group's size */
  MPI_Alltoallw(v, counts, displs, types, in, counts, displs, types, inter);
  MPI_Comm_free(&inter);
  MPI_Comm_free(&half);
  MPI_Barrier(MPI_COMM_WORLD);
}

/* freerecv: MPI_Request_free of an active receive. */
static void freerecv(void) {
  static int v = 5; /* the receive may complete as late as MPI_Finalize */
  MPI_Comm dup;
  MPI_Request q;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  if (rank == 1) {
    MPI_Irecv(&v, 1, MPI_INT, 0, 11, dup, &q);
    MPI_Request_free(&q);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) MPI_Send(&v, 1, MPI_INT, 1, 11, dup);
  MPI_Comm_free(&dup);
}

/* mprobe: a receive posted between a matched probe and its receive gets
 * the next message, the probed one being out of MPI's matching. */
static void mprobe(void) {
  enum { TAG = 12 };
  static char out[32], in[32];
  MPI_Message m;
  MPI_Request q;
  MPI_Status st;
  int flag = 0;
  if (rank == 0) {
    for (int i = 1; i <= 4; i++) MPI_Send(out, 8 * i, MPI_CHAR, 1, TAG, MPI_COMM_WORLD);
  } else if (rank == 1) {
    MPI_Mprobe(0, TAG, MPI_COMM_WORLD, &m, &st);
    MPI_Recv(in, 32, MPI_CHAR, 0, TAG, MPI_COMM_WORLD, &st);
    MPI_Mrecv(in, 32, MPI_CHAR, &m, &st);
    while (!flag) MPI_Improbe(0, TAG, MPI_COMM_WORLD, &flag, &m, &st);
    MPI_Irecv(in, 32, MPI_CHAR, 0, TAG, MPI_COMM_WORLD, &q);
    MPI_Wait(&q, &st);
    MPI_Imrecv(in, 32, MPI_CHAR, &m, &q);
    MPI_Wait(&q, &st);
    MPI_Mprobe(MPI_PROC_NULL, TAG, MPI_COMM_WORLD, &m, &st);
    MPI_Mrecv(in, 32, MPI_CHAR, &m, &st);
  }
}

/* dupic: two intercommunicators of the same groups carry messages of the
 * same pair and tag at once; each is matched on its own (MPICH's
 * comm/dupic). The even rank waits for the receive it posted second,
 * which the first message meets; its partner sends the second only after
 * a handshake that follows that wait. */
static void dupic(void) {
  MPI_Comm half, inter, dup, dup2;
  MPI_Request q[2];
  int even = rank % 2 == 0, a = 0, b = 0, partner;
  MPI_Comm_split(MPI_COMM_WORLD, even, rank, &half);
  MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, even ? 1 : 0, 21, &inter);
  MPI_Comm_dup(inter, &dup);
  MPI_Comm_rank(half, &partner); /* the same local rank in the remote group */
  if (even) {
    MPI_Irecv(&b, 1, MPI_INT, partner, 3, dup, &q[0]);
    MPI_Irecv(&a, 1, MPI_INT, partner, 3, inter, &q[1]);
    MPI_Wait(&q[1], MPI_STATUS_IGNORE);
    MPI_Sendrecv(NULL, 0, MPI_BYTE, partner, 37, NULL, 0, MPI_BYTE, partner, 37, inter, MPI_STATUS_IGNORE);
    MPI_Wait(&q[0], MPI_STATUS_IGNORE);
  } else {
    MPI_Send(&a, 1, MPI_INT, partner, 3, inter);
    MPI_Sendrecv(NULL, 0, MPI_BYTE, partner, 37, NULL, 0, MPI_BYTE, partner, 37, inter, MPI_STATUS_IGNORE);
    MPI_Send(&b, 1, MPI_INT, partner, 3, dup);
  }
  MPI_Comm_dup(dup, &dup2); /* a duplicate's duplicate */
  MPI_Comm_free(&dup2);
  MPI_Comm_free(&dup);
  MPI_Comm_free(&inter);
  MPI_Comm_free(&half);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "partial") == 0) partial();
    else if (strcmp(argv[i], "freecomm") == 0) freecomm();
    else if (strcmp(argv[i], "bsend") == 0) bsend();
    else if (strcmp(argv[i], "intercoll") == 0) intercoll();
    else if (strcmp(argv[i], "freerecv") == 0) freerecv();
    else if (strcmp(argv[i], "mprobe") == 0) mprobe();
    else if (strcmp(argv[i], "dupic") == 0) dupic();
    else if (rank == 0) fprintf(stderr, "corners: unknown case %s\n", argv[i]);
  }
  MPI_Finalize();
  return 0;
}
