/* A small MPI program for the tracer's test: a ring, a halo exchange with
 * isend/irecv/waitall, a wait on one request, sendrecv, and the collectives
 * TI records, with computation between them; with "shift", a sendrecv with
 * MPI_PROC_NULL at the ends; with "more", waitany, waitsome, testall and
 * persistent requests; with "split", a barrier on a sub-communicator;
 * with "self", a message to itself and a receive from any source; with
 * "probe", probes (blocking, not, and matched) before receives; with
 * "inplace", the collectives with MPI_IN_PLACE (reduce_scatter_block
 * among them), their ignored arguments zero or NULL; with "modes", the ready, buffered and synchronous sends,
 * blocking, non-blocking and persistent, and sendrecv_replace; with "mixed", tagged sendrecvs meeting sends and
 * receives; with "icoll", the non-blocking collectives and
 * alltoallw (with "ipoll" too, some completed by polling tests); with
 * "comms", messages on other communicators than MPI_COMM_WORLD: on a
 * duplicate of it, one of a pair and tag that crosses world's, and on a
 * split half, partners named by their ranks in it; and broadcasts on
 * world and on a duplicate of it by MPI_Comm_idup, in a different order
 * on rank 0 (MPI orders collectives per communicator). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile double sink;

/* has reports whether the command line names option. */
static int has(int argc, char **argv, const char *option) {
  for (int i = 1; i < argc; i++)
    if (strcmp(argv[i], option) == 0) return 1;
  return 0;
}

static void work(int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += i * 0.5;
  sink = s;
}

int main(int argc, char **argv) {
  int r, n;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  int right = (r + 1) % n, left = (r + n - 1) % n;
  double buf[1024] = {0}, in[1024], in2[1024];
  for (int it = 0; it < 3; it++) {
    work(200000);
    if (r == 0) {
      MPI_Send(buf, 100, MPI_DOUBLE, right, 1, MPI_COMM_WORLD);
      MPI_Recv(in, 100, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(in, 100, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(buf, 100, MPI_DOUBLE, right, 1, MPI_COMM_WORLD);
    }
    MPI_Request q[4];
    MPI_Irecv(in, 1024, MPI_DOUBLE, left, 2, MPI_COMM_WORLD, &q[0]);
    MPI_Irecv(in2, 1024, MPI_DOUBLE, right, 3, MPI_COMM_WORLD, &q[1]);
    MPI_Isend(buf, 1024, MPI_DOUBLE, right, 2, MPI_COMM_WORLD, &q[2]);
    MPI_Isend(buf, 1024, MPI_DOUBLE, left, 3, MPI_COMM_WORLD, &q[3]);
    MPI_Waitall(4, q, MPI_STATUSES_IGNORE);
    MPI_Irecv(in, 10, MPI_INT, left, 4, MPI_COMM_WORLD, &q[0]);
    MPI_Send(buf, 10, MPI_INT, right, 4, MPI_COMM_WORLD);
    MPI_Wait(&q[0], MPI_STATUS_IGNORE);
    MPI_Sendrecv(buf, 8, MPI_CHAR, right, 0, in, 8, MPI_CHAR, left, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Allreduce(buf, in, 16, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }
  if (has(argc, argv, "mixed")) { /* tagged sendrecvs on even ranks meet plain receives and sends on odd ones */
    if (r % 2 == 0)
      MPI_Sendrecv(buf, 7, MPI_CHAR, right, 9, in, 5, MPI_CHAR, left, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    else {
      MPI_Recv(in, 7, MPI_CHAR, left, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(buf, 5, MPI_CHAR, right, 9, MPI_COMM_WORLD);
    }
  }
  if (has(argc, argv, "shift")) /* a non-periodic shift: the ends send to or receive from MPI_PROC_NULL */
    MPI_Sendrecv(buf, 6, MPI_CHAR, r + 1 < n ? r + 1 : MPI_PROC_NULL, 6, in, 6, MPI_CHAR, r > 0 ? r - 1 : MPI_PROC_NULL,
                 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  if (has(argc, argv, "more")) { /* the completions TI has no action for, persistent requests */
    MPI_Request q[2], p[2];
    int idx, outc, idxs[2], flag = 0, done = 0;
    MPI_Irecv(in, 4, MPI_DOUBLE, left, 7, MPI_COMM_WORLD, &q[0]);
    MPI_Isend(buf, 4, MPI_DOUBLE, right, 7, MPI_COMM_WORLD, &q[1]);
    for (int k = 0; k < 2; k++) MPI_Waitany(2, q, &idx, MPI_STATUS_IGNORE);
    MPI_Irecv(in, 4, MPI_DOUBLE, left, 8, MPI_COMM_WORLD, &q[0]);
    MPI_Isend(buf, 4, MPI_DOUBLE, right, 8, MPI_COMM_WORLD, &q[1]);
    while (done < 2) {
      MPI_Waitsome(2, q, &outc, idxs, MPI_STATUSES_IGNORE);
      done += outc;
    }
    MPI_Irecv(in, 4, MPI_DOUBLE, left, 9, MPI_COMM_WORLD, &q[0]);
    MPI_Isend(buf, 4, MPI_DOUBLE, right, 9, MPI_COMM_WORLD, &q[1]);
    while (!flag) MPI_Testall(2, q, &flag, MPI_STATUSES_IGNORE);
    MPI_Recv_init(in, 4, MPI_DOUBLE, left, 10, MPI_COMM_WORLD, &p[0]);
    MPI_Send_init(buf, 4, MPI_DOUBLE, right, 10, MPI_COMM_WORLD, &p[1]);
    for (int k = 0; k < 2; k++) {
      MPI_Startall(2, p);
      MPI_Waitall(2, p, MPI_STATUSES_IGNORE);
    }
    MPI_Request_free(&p[0]);
    MPI_Request_free(&p[1]);
  }
  if (has(argc, argv, "self")) {
    MPI_Request q[2];
    MPI_Irecv(in, 3, MPI_DOUBLE, r, 11, MPI_COMM_WORLD, &q[0]);
    MPI_Isend(buf, 3, MPI_DOUBLE, r, 11, MPI_COMM_WORLD, &q[1]);
    MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
    MPI_Irecv(in, 5, MPI_DOUBLE, MPI_ANY_SOURCE, 12, MPI_COMM_WORLD, &q[0]);
    MPI_Send(buf, 5, MPI_DOUBLE, right, 12, MPI_COMM_WORLD);
    MPI_Wait(&q[0], MPI_STATUS_IGNORE);
  }
  if (has(argc, argv, "probe")) { /* rank 1 probes for what the others send, rank 0 after a long computation */
    MPI_Status st;
    MPI_Message m;
    MPI_Request q;
    int count = 0, flag = 0;
    if (r == 1) {
      MPI_Probe(0, 30, MPI_COMM_WORLD, &st);
      MPI_Get_count(&st, MPI_DOUBLE, &count);
      MPI_Recv(in, count, MPI_DOUBLE, 0, 30, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      while (!flag) MPI_Iprobe(MPI_ANY_SOURCE, 31, MPI_COMM_WORLD, &flag, &st);
      MPI_Recv(in, 1024, MPI_DOUBLE, st.MPI_SOURCE, 31, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Mprobe(3, MPI_ANY_TAG, MPI_COMM_WORLD, &m, &st);
      MPI_Get_count(&st, MPI_INT, &count);
      MPI_Mrecv(in, count, MPI_INT, &m, MPI_STATUS_IGNORE);
      for (flag = 0; !flag;) MPI_Improbe(0, 33, MPI_COMM_WORLD, &flag, &m, MPI_STATUS_IGNORE);
      MPI_Imrecv(in, 9, MPI_DOUBLE, &m, &q);
      MPI_Wait(&q, MPI_STATUS_IGNORE);
    } else if (r == 0) {
      work(50000000);
      MPI_Send(buf, 7, MPI_DOUBLE, 1, 30, MPI_COMM_WORLD);
      MPI_Send(buf, 9, MPI_DOUBLE, 1, 33, MPI_COMM_WORLD);
    } else if (r == 2) {
      MPI_Send(buf, 11, MPI_DOUBLE, 1, 31, MPI_COMM_WORLD);
    } else if (r == 3) {
      MPI_Send(buf, 5, MPI_INT, 1, 32, MPI_COMM_WORLD);
    }
  }
  int counts[64], displs[64];
  for (int i = 0; i < n; i++) counts[i] = 2, displs[i] = 2 * i;
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Bcast(buf, 32, MPI_DOUBLE, 1, MPI_COMM_WORLD);
  MPI_Reduce(buf, in, 8, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  MPI_Alltoall(buf, 2, MPI_DOUBLE, in, 2, MPI_DOUBLE, MPI_COMM_WORLD);
  MPI_Allgather(buf, 3, MPI_INT, in, 3, MPI_INT, MPI_COMM_WORLD);
  MPI_Gather(buf, 4, MPI_DOUBLE, in, 4, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  MPI_Scatter(buf, 4, MPI_DOUBLE, in, 4, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  MPI_Alltoallv(buf, counts, displs, MPI_DOUBLE, in, counts, displs, MPI_DOUBLE, MPI_COMM_WORLD);
  MPI_Allgatherv(buf, 2, MPI_DOUBLE, in, counts, displs, MPI_DOUBLE, MPI_COMM_WORLD);
  MPI_Gatherv(buf, 2, MPI_DOUBLE, in, counts, displs, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  MPI_Scatterv(buf, counts, displs, MPI_DOUBLE, in, 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  MPI_Reduce_scatter(buf, in, counts, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Scan(buf, in, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  if (has(argc, argv, "inplace")) {
    double all[256] = {0};
    int c3[64], d3[64], root = r == 0;
    for (int i = 0; i < n; i++) c3[i] = 3, d3[i] = 3 * i;
    MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, 3, MPI_DOUBLE, MPI_COMM_WORLD);
    MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, c3, d3, MPI_DOUBLE, MPI_COMM_WORLD);
    MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, 3, MPI_DOUBLE, MPI_COMM_WORLD);
    MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, all, c3, d3, MPI_DOUBLE, MPI_COMM_WORLD);
    MPI_Gather(root ? MPI_IN_PLACE : all, root ? 0 : 3, root ? MPI_DATATYPE_NULL : MPI_DOUBLE, all, root ? 3 : 0,
               root ? MPI_DOUBLE : MPI_DATATYPE_NULL, 0, MPI_COMM_WORLD);
    MPI_Gatherv(root ? MPI_IN_PLACE : all, root ? 0 : 3, root ? MPI_DATATYPE_NULL : MPI_DOUBLE, all, root ? c3 : NULL,
                root ? d3 : NULL, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    MPI_Scatter(all, root ? 3 : 0, root ? MPI_DOUBLE : MPI_DATATYPE_NULL, root ? MPI_IN_PLACE : all, root ? 0 : 3,
                root ? MPI_DATATYPE_NULL : MPI_DOUBLE, 0, MPI_COMM_WORLD);
    MPI_Scatterv(all, root ? c3 : NULL, root ? d3 : NULL, MPI_DOUBLE, root ? MPI_IN_PLACE : all, root ? 0 : 3,
                 root ? MPI_DATATYPE_NULL : MPI_DOUBLE, 0, MPI_COMM_WORLD);
    MPI_Reduce_scatter_block(MPI_IN_PLACE, all, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, all, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }
  if (has(argc, argv, "modes")) { /* ready sends are started after a barrier that follows their receive */
    static char attached[8192];
    MPI_Request q[6];
    int size;
    void *old;
    MPI_Buffer_attach(attached, sizeof attached);
    MPI_Irecv(in, 8, MPI_DOUBLE, left, 13, MPI_COMM_WORLD, &q[0]);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Rsend(buf, 8, MPI_DOUBLE, right, 13, MPI_COMM_WORLD);
    MPI_Wait(&q[0], MPI_STATUS_IGNORE);
    MPI_Bsend(buf, 8, MPI_DOUBLE, right, 14, MPI_COMM_WORLD);
    MPI_Recv(in, 8, MPI_DOUBLE, left, 14, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int k = 0; k < 3; k++) MPI_Irecv(in + 8 * k, 8, MPI_DOUBLE, left, 15 + k, MPI_COMM_WORLD, &q[k]);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Issend(buf, 8, MPI_DOUBLE, right, 15, MPI_COMM_WORLD, &q[3]);
    MPI_Ibsend(buf, 8, MPI_DOUBLE, right, 16, MPI_COMM_WORLD, &q[4]);
    MPI_Irsend(buf, 8, MPI_DOUBLE, right, 17, MPI_COMM_WORLD, &q[5]);
    MPI_Waitall(6, q, MPI_STATUSES_IGNORE);
    MPI_Sendrecv_replace(buf, 8, MPI_DOUBLE, right, 18, left, 18, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int k = 0; k < 3; k++) MPI_Recv_init(in + 8 * k, 8, MPI_DOUBLE, left, 19 + k, MPI_COMM_WORLD, &q[k]);
    MPI_Ssend_init(buf, 8, MPI_DOUBLE, right, 19, MPI_COMM_WORLD, &q[3]);
    MPI_Bsend_init(buf, 8, MPI_DOUBLE, right, 20, MPI_COMM_WORLD, &q[4]);
    MPI_Rsend_init(buf, 8, MPI_DOUBLE, right, 21, MPI_COMM_WORLD, &q[5]);
    MPI_Startall(3, q);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Startall(3, q + 3);
    MPI_Waitall(6, q, MPI_STATUSES_IGNORE);
    for (int k = 0; k < 6; k++) MPI_Request_free(&q[k]);
    MPI_Buffer_detach(&old, &size);
  }
  if (has(argc, argv, "icoll")) { /* the non-blocking collectives, completed by every kind of call, in orders that differ between ranks */
    static double rb[4][1024];
    MPI_Request q[4];
    MPI_Datatype mine[64], theirs[64]; /* alltoallw: each rank sends its own type, receives the sender's */
    int idx, outc, idxs[4], flag = 0, done = 0, poll = has(argc, argv, "ipoll");
    int cw[64], cwin[64], dw[64]; /* alltoallw: 16 bytes a pair, displacements in bytes */
    for (int i = 0; i < n; i++) {
      mine[i] = r % 2 ? MPI_INT : MPI_DOUBLE, theirs[i] = i % 2 ? MPI_INT : MPI_DOUBLE;
      cw[i] = r % 2 ? 4 : 2, cwin[i] = i % 2 ? 4 : 2, dw[i] = 16 * i;
    }
    MPI_Iallreduce(buf, in, 16, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &q[0]);
    work(300000); /* overlapped */
    MPI_Wait(&q[0], MPI_STATUS_IGNORE);
    MPI_Ibarrier(MPI_COMM_WORLD, &q[0]);
    MPI_Ibcast(rb[0], 32, MPI_DOUBLE, 1, MPI_COMM_WORLD, &q[1]);
    MPI_Irecv(in2, 4, MPI_DOUBLE, left, 40, MPI_COMM_WORLD, &q[2]);
    MPI_Isend(buf, 4, MPI_DOUBLE, right, 40, MPI_COMM_WORLD, &q[3]);
    if (r % 2) { /* the bcast first: the barrier called before it is written before it */
      MPI_Wait(&q[1], MPI_STATUS_IGNORE);
      MPI_Wait(&q[0], MPI_STATUS_IGNORE);
      MPI_Waitall(2, q + 2, MPI_STATUSES_IGNORE);
    } else
      MPI_Waitall(4, q, MPI_STATUSES_IGNORE);
    MPI_Ireduce(buf, rb[0], 8, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD, &q[0]);
    MPI_Ialltoall(buf, 2, MPI_DOUBLE, rb[1], 2, MPI_DOUBLE, MPI_COMM_WORLD, &q[1]);
    MPI_Iallgather(buf, 3, MPI_INT, rb[2], 3, MPI_INT, MPI_COMM_WORLD, &q[2]);
    while (done < 3) {
      MPI_Waitsome(3, q, &outc, idxs, MPI_STATUSES_IGNORE);
      done += outc;
    }
    MPI_Igather(buf, 4, MPI_DOUBLE, rb[0], 4, MPI_DOUBLE, 0, MPI_COMM_WORLD, &q[0]);
    MPI_Iscatter(buf, 4, MPI_DOUBLE, rb[1], 4, MPI_DOUBLE, 0, MPI_COMM_WORLD, &q[1]);
    while (poll && !flag) MPI_Testall(2, q, &flag, MPI_STATUSES_IGNORE);
    if (!poll) MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
    MPI_Ialltoallv(buf, counts, displs, MPI_DOUBLE, rb[0], counts, displs, MPI_DOUBLE, MPI_COMM_WORLD, &q[0]);
    MPI_Iallgatherv(buf, 2, MPI_DOUBLE, rb[1], counts, displs, MPI_DOUBLE, MPI_COMM_WORLD, &q[1]);
    MPI_Igatherv(buf, 2, MPI_DOUBLE, rb[2], counts, displs, MPI_DOUBLE, 0, MPI_COMM_WORLD, &q[2]);
    MPI_Iscatterv(buf, counts, displs, MPI_DOUBLE, rb[3], 2, MPI_DOUBLE, 0, MPI_COMM_WORLD, &q[3]);
    for (int k = 0; k < 4; k++) MPI_Waitany(4, q, &idx, MPI_STATUS_IGNORE);
    MPI_Ireduce_scatter(buf, rb[0], counts, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &q[0]);
    MPI_Ireduce_scatter_block(buf, rb[1], 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &q[1]);
    MPI_Iscan(buf, rb[2], 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &q[2]);
    MPI_Iexscan(buf, rb[3], 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &q[3]);
    for (flag = 0; poll && !flag;) MPI_Test(&q[3], &flag, MPI_STATUS_IGNORE); /* the last called first */
    if (!poll) MPI_Wait(&q[3], MPI_STATUS_IGNORE);
    MPI_Waitall(3, q, MPI_STATUSES_IGNORE);
    MPI_Alltoallw(buf, cw, dw, mine, rb[0], cwin, dw, theirs, MPI_COMM_WORLD);
    MPI_Ialltoallw(buf, cw, dw, mine, rb[1], cwin, dw, theirs, MPI_COMM_WORLD, &q[0]);
    MPI_Barrier(MPI_COMM_WORLD); /* before the ialltoallw's wait: its line comes first */
    MPI_Wait(&q[0], MPI_STATUS_IGNORE);
  }
  if (has(argc, argv, "comms")) {
    MPI_Comm dup, half;
    double a[10] = {0}, b[20] = {0};
    int hr, hn;
    MPI_Request q[2];
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    if (r == 0) {
      MPI_Send(a, 5, MPI_DOUBLE, 1, 7, dup);
      MPI_Send(b, 10, MPI_DOUBLE, 1, 7, MPI_COMM_WORLD);
    } else if (r == 1) {
      MPI_Recv(b, 10, MPI_DOUBLE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Recv(a, 5, MPI_DOUBLE, 0, 7, dup, MPI_STATUS_IGNORE);
    }
    MPI_Comm_split(MPI_COMM_WORLD, r % 2, r, &half);
    MPI_Comm_rank(half, &hr);
    MPI_Comm_size(half, &hn);
    MPI_Irecv(b, 4, MPI_DOUBLE, (hr + hn - 1) % hn, 3, half, &q[0]);
    MPI_Isend(a, 4, MPI_DOUBLE, (hr + 1) % hn, 3, half, &q[1]);
    MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
    MPI_Sendrecv(a, 2, MPI_DOUBLE, (hr + 1) % hn, 4, b, 2, MPI_DOUBLE, MPI_ANY_SOURCE, 4, half, MPI_STATUS_IGNORE);
    MPI_Comm_free(&half);
    MPI_Comm_free(&dup);
    MPI_Comm idup;
    MPI_Request q1;
    MPI_Comm_idup(MPI_COMM_WORLD, &idup, &q1);
    MPI_Wait(&q1, MPI_STATUS_IGNORE);
    if (r == 0) {
      MPI_Bcast(a, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
      MPI_Bcast(b, 2, MPI_DOUBLE, 0, idup);
    } else {
      MPI_Bcast(b, 2, MPI_DOUBLE, 0, idup);
      MPI_Bcast(a, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    }
    MPI_Comm_free(&idup);
  }
  if (has(argc, argv, "split")) {
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, r % 2, r, &half);
    MPI_Barrier(half); /* not MPI_COMM_WORLD: TI cannot express it */
    MPI_Comm_free(&half);
  }
  work(100000);
  MPI_Finalize();
  return 0;
}
