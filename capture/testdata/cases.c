/* The cases of real applications that the tracer and the readers once got
 * wrong, each alone, on 4 ranks (the name of the case is the argument):
 *
 *   cancel     a receive from MPI_ANY_SOURCE with MPI_ANY_TAG cancelled
 *              (HPCC's RandomAccess), then a ring of larger messages
 *              received from any source, which it must not take; and a
 *              cancel that comes too late (the receive has matched);
 *              then, left to MPI_Finalize, a receive from any source
 *              cancelled and never completed (ABySS), one a message
 *              matches and none waits for, and one nothing matches
 *   polls      rank 0 computes for 20 ms, then tests a receive from any
 *              source 100,000 times (MPI_Testany) before it completes
 *              (the computation makes the run long beside the message's
 *              round trip, which a replay waits for at the last test,
 *              a wait in the TI trace and in the archive); then polls
 *              two receives with MPI_Testall until both complete (ranks
 *              1 and 2 send 5 ms after its go), which a replay of the archive
 *              once tested, then waited for: a test completed them, and
 *              the wait found no request
 *   vcoll      irregular MPI_Alltoallv, on MPI_COMM_WORLD and on halves
 *              of it, and irregular allgatherv, gatherv, scatterv and
 *              reduce_scatter; a scatterv and a gatherv whose root has
 *              no block of its own
 *   wildwait   rank 0 receives from each other rank with MPI_Irecv of
 *              MPI_ANY_SOURCE and MPI_ANY_TAG and MPI_Wait, the senders
 *              computing for different times first; then all-reduces
 *   subcomm    most collectives on sub-communicators (Quantum ESPRESSO's
 *              pools and bands), some on MPI_COMM_WORLD
 *   tags       each rank exchanges with each other by MPI_Sendrecv whose
 *              send and receive tags differ, a tag for each ordered pair
 *              (FFTW's transposes, in MPB), then once with equal tags
 *   startall   persistent sends and receives to and from both neighbours
 *              of a ring, started three times by one MPI_Startall each
 *              and completed by MPI_Waitall (Tachyon's 600 receives)
 *
 * Each checks what MPI says it must and exits with status 1 if not. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile double sink;

static void work(int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += i * 0.5;
  sink = s;
}

static void fail(const char *what, int rank) {
  fprintf(stderr, "cases: rank %d: %s\n", rank, what);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

static void cancel(int r, int n) {
  long small, big[125] = {0}, in[125];
  MPI_Request q;
  MPI_Status st;
  int cancelled = 0;
  MPI_Irecv(&small, 1, MPI_LONG, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &q);
  work(100000);
  MPI_Cancel(&q);
  MPI_Wait(&q, &st);
  MPI_Test_cancelled(&st, &cancelled);
  if (!cancelled) fail("the receive was not cancelled", r);
  MPI_Barrier(MPI_COMM_WORLD); /* no message was sent before the cancel */
  /* A ring of 1000-byte messages, received from any source. */
  MPI_Irecv(in, 125, MPI_LONG, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &q);
  MPI_Send(big, 125, MPI_LONG, (r + 1) % n, 7, MPI_COMM_WORLD);
  MPI_Wait(&q, &st);
  if (st.MPI_SOURCE != (r + n - 1) % n) fail("the ring's message came from elsewhere", r);
  /* Too late: the message has matched when the cancel comes. */
  MPI_Irecv(in, 125, MPI_LONG, (r + n - 1) % n, 8, MPI_COMM_WORLD, &q);
  MPI_Send(big, 125, MPI_LONG, (r + 1) % n, 8, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  work(100000); /* time for the message to land */
  MPI_Cancel(&q);
  MPI_Wait(&q, &st);
  MPI_Test_cancelled(&st, &cancelled);
  if (cancelled) fail("a matched receive was cancelled", r);
  MPI_Allreduce(MPI_IN_PLACE, big, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  /* Left to MPI_Finalize, which the tracer settles them in. */
  static long left[3];
  MPI_Request l[3];
  MPI_Irecv(&left[0], 1, MPI_LONG, MPI_ANY_SOURCE, 9, MPI_COMM_WORLD, &l[0]);
  MPI_Cancel(&l[0]);
  MPI_Irecv(&left[1], 1, MPI_LONG, MPI_ANY_SOURCE, 10, MPI_COMM_WORLD, &l[1]);
  MPI_Irecv(&left[2], 1, MPI_LONG, (r + n - 1) % n, 11, MPI_COMM_WORLD, &l[2]);
  MPI_Send(big, 1, MPI_LONG, (r + 1) % n, 10, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
}

static void polls(int r) {
  char msg[64] = {0};
  if (r == 1) {
    char go;
    MPI_Recv(&go, 1, MPI_CHAR, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(msg, 64, MPI_CHAR, 0, 3, MPI_COMM_WORLD);
  }
  if (r == 1 || r == 2) { /* after rank 0's go, past its receive from any source */
    char go;
    MPI_Recv(&go, 1, MPI_CHAR, 0, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (double t0 = MPI_Wtime(); MPI_Wtime() - t0 < 0.005;) {
    }
    MPI_Send(msg, 8, MPI_CHAR, 0, 5, MPI_COMM_WORLD);
  } else if (r == 0) {
    MPI_Request q;
    int idx, flag = 0;
    long tests = 0;
    MPI_Status st;
    for (double t0 = MPI_Wtime(); MPI_Wtime() - t0 < 0.02;) {
    }
    MPI_Irecv(msg, 64, MPI_CHAR, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &q);
    for (; tests < 100000; tests++) { /* rank 1 waits for the go: nothing can arrive */
      MPI_Testany(1, &q, &idx, &flag, &st);
      if (flag) fail("a receive completed before its message was sent", r);
    }
    MPI_Send(msg, 1, MPI_CHAR, 1, 4, MPI_COMM_WORLD);
    while (!flag) MPI_Testany(1, &q, &idx, &flag, &st);
    if (st.MPI_SOURCE != 1 || st.MPI_TAG != 3) fail("the polled receive matched another message", r);
    MPI_Request two[2];
    char in[2][8];
    MPI_Irecv(in[0], 8, MPI_CHAR, 1, 5, MPI_COMM_WORLD, &two[0]);
    MPI_Irecv(in[1], 8, MPI_CHAR, 2, 5, MPI_COMM_WORLD, &two[1]);
    MPI_Send(msg, 1, MPI_CHAR, 1, 6, MPI_COMM_WORLD);
    MPI_Send(msg, 1, MPI_CHAR, 2, 6, MPI_COMM_WORLD);
    for (flag = 0; !flag;) MPI_Testall(2, two, &flag, MPI_STATUSES_IGNORE);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

/* vcounts fills the irregular counts of member i of n: to member j,
 * 1 + (i * 7 + j * 3) % 11 ints, and 0 to the next member. */
static void vcounts(int i, int n, int *send, int *recv, int *sdispl, int *rdispl) {
  int s = 0, t = 0;
  for (int j = 0; j < n; j++) {
    send[j] = j == (i + 1) % n ? 0 : 1 + (i * 7 + j * 3) % 11;
    recv[j] = i == (j + 1) % n ? 0 : 1 + (j * 7 + i * 3) % 11;
    sdispl[j] = s, rdispl[j] = t;
    s += send[j], t += recv[j];
  }
}

static void alltoallv(MPI_Comm comm) {
  int i, n, send[8], recv[8], sd[8], rd[8], a[128] = {0}, b[128];
  MPI_Comm_rank(comm, &i);
  MPI_Comm_size(comm, &n);
  vcounts(i, n, send, recv, sd, rd);
  MPI_Alltoallv(a, send, sd, MPI_INT, b, recv, rd, MPI_INT, comm);
}

static void vcoll(int r, int n) {
  MPI_Comm half;
  int a[128] = {0}, b[128], counts[8], displs[8];
  for (int it = 0; it < 3; it++) {
    work(50000 * (r + 1));
    alltoallv(MPI_COMM_WORLD);
  }
  MPI_Comm_split(MPI_COMM_WORLD, r % 2, r, &half);
  for (int it = 0; it < 2; it++) alltoallv(half);
  for (int j = 0, d = 0; j < n; j++) counts[j] = 2 + 3 * j, displs[j] = d, d += counts[j];
  MPI_Allgatherv(a, counts[r], MPI_INT, b, counts, displs, MPI_INT, MPI_COMM_WORLD);
  MPI_Gatherv(a, counts[r], MPI_INT, b, counts, displs, MPI_INT, 2, MPI_COMM_WORLD);
  MPI_Scatterv(a, counts, displs, MPI_INT, b, counts[r], MPI_INT, 1, MPI_COMM_WORLD);
  MPI_Reduce_scatter(a, b, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  /* A root that keeps no block of its own (DOLFINx's mesh distribution):
   * its totals read as an in-place call's. */
  for (int j = 0, d = 0; j < n; j++) counts[j] = j == 1 ? 0 : 1 + j, displs[j] = d, d += counts[j];
  MPI_Scatterv(a, counts, displs, MPI_INT, b, counts[r], MPI_INT, 1, MPI_COMM_WORLD);
  MPI_Gatherv(a, counts[r], MPI_INT, b, counts, displs, MPI_INT, 1, MPI_COMM_WORLD);
  MPI_Comm_free(&half);
}

static void wildwait(int r, int n) {
  double buf[256] = {0}, in[256];
  if (r == 0) {
    for (int k = 1; k < n; k++) {
      MPI_Request q;
      MPI_Status st;
      MPI_Irecv(in, 256, MPI_DOUBLE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &q);
      MPI_Wait(&q, &st);
      work(100000); /* what it does with the message, which the replay must not start before it arrives */
    }
  } else {
    work(400000 * (n - r)); /* rank 3 first, rank 1 last */
    MPI_Send(buf, 32 * r, MPI_DOUBLE, 0, 10 + r, MPI_COMM_WORLD);
  }
  MPI_Allreduce(MPI_IN_PLACE, buf, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}

static void subcomm(int r) {
  MPI_Comm pool, band;
  double a[64] = {0}, b[64];
  MPI_Comm_split(MPI_COMM_WORLD, r / 2, r, &pool);
  MPI_Comm_split(MPI_COMM_WORLD, r % 2, r, &band);
  for (int it = 0; it < 5; it++) {
    work(20000);
    MPI_Allreduce(a, b, 64, MPI_DOUBLE, MPI_SUM, pool);
    MPI_Bcast(a, 32, MPI_DOUBLE, 0, band);
    MPI_Alltoall(a, 8, MPI_DOUBLE, b, 8, MPI_DOUBLE, pool);
  }
  MPI_Allreduce(a, b, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Comm_free(&pool);
  MPI_Comm_free(&band);
}

static void tags(int r, int n) {
  double out[256] = {0}, in[256];
  for (int k = 1; k < n; k++) {
    int to = (r + k) % n, from = (r + n - k) % n;
    MPI_Sendrecv(out, 256, MPI_DOUBLE, to, n * r + to, in, 256, MPI_DOUBLE, from, n * from + r, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
  }
  MPI_Sendrecv(out, 8, MPI_DOUBLE, (r + 1) % n, 7, in, 8, MPI_DOUBLE, (r + n - 1) % n, 7, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
}

static void startall(int r, int n) {
  double out[2][512] = {{0}}, in[2][512];
  MPI_Request q[4];
  int left = (r + n - 1) % n, right = (r + 1) % n;
  MPI_Recv_init(in[0], 512, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, &q[0]);
  MPI_Recv_init(in[1], 512, MPI_DOUBLE, right, 2, MPI_COMM_WORLD, &q[1]);
  MPI_Send_init(out[0], 512, MPI_DOUBLE, right, 1, MPI_COMM_WORLD, &q[2]);
  MPI_Send_init(out[1], 512, MPI_DOUBLE, left, 2, MPI_COMM_WORLD, &q[3]);
  for (int i = 0; i < 3; i++) {
    work(200000);
    MPI_Startall(4, q);
    MPI_Waitall(4, q, MPI_STATUSES_IGNORE);
  }
  for (int i = 0; i < 4; i++) MPI_Request_free(&q[i]);
}

int main(int argc, char **argv) {
  int r, n;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  if (n != 4) fail("run me on 4 ranks", r);
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "cancel") == 0) cancel(r, n);
    else if (strcmp(argv[i], "polls") == 0) polls(r);
    else if (strcmp(argv[i], "vcoll") == 0) vcoll(r, n);
    else if (strcmp(argv[i], "wildwait") == 0) wildwait(r, n);
    else if (strcmp(argv[i], "subcomm") == 0) subcomm(r);
    else if (strcmp(argv[i], "tags") == 0) tags(r, n);
    else if (strcmp(argv[i], "startall") == 0) startall(r, n);
    else fail("unknown case", r);
  }
  MPI_Finalize();
  return 0;
}
