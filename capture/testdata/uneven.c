/* A program whose ranks differ more than a stencil's, for the tracer's
 * in-situ ACURDION test: each iteration rank r computes (1 + r%4) units,
 * sends 1 + r%3 messages of 8(1 + r%4) doubles, tag r%5, to its right
 * neighbour on a ring (receiving its left neighbour's), pairs of ranks
 * 4a and 4a+2 exchange on even iterations, ranks r%3 == 2 make an extra
 * inner loop of iterations/2 small sends to their left neighbour, and
 * every 5th iteration all reduce; more than nine kinds of ranks, so that
 * the K-farthest lists merge clusters that differ.
 *
 *   uneven [iterations]     (default 20)
 */
#include <mpi.h>
#include <stdlib.h>

static double work(int units) {
  double s = 0;
  for (int i = 0; i < 20000 * units; i++) s += 1.0 / (i + 1);
  return s;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int iters = argc > 1 ? atoi(argv[1]) : 20, r, P;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  int right = (r + 1) % P, left = (r + P - 1) % P;
  int kr = 1 + r % 3, kl = 1 + left % 3, nr = 8 * (1 + r % 4), nl = 8 * (1 + left % 4);
  double out[32] = {0}, in[3][32], x = 0, y;
  MPI_Request q[6];
  for (int it = 0; it < iters; it++) {
    x += work(1 + r % 4);
    int n = 0;
    for (int j = 0; j < kl; j++) MPI_Irecv(in[j], nl, MPI_DOUBLE, left, left % 5, MPI_COMM_WORLD, &q[n++]);
    for (int j = 0; j < kr; j++) MPI_Isend(out, nr, MPI_DOUBLE, right, r % 5, MPI_COMM_WORLD, &q[n++]);
    MPI_Waitall(n, q, MPI_STATUSES_IGNORE);
    int pair = r % 4 == 0 ? r + 2 : r % 4 == 2 ? r - 2 : -1;
    if (it % 2 == 0 && pair >= 0 && pair < P)
      MPI_Sendrecv(out, 4, MPI_DOUBLE, pair, 7, in[0], 4, MPI_DOUBLE, pair, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    /* ranks r%3 == 2 send to their left neighbour, which receives from its right where (r+1)%3 == 2 */
    for (int j = 0; j < iters / 2; j++) {
      if (r % 3 == 2 && left != r) MPI_Send(out, 1, MPI_DOUBLE, left, 9, MPI_COMM_WORLD);
      if (right % 3 == 2 && right != r) MPI_Recv(in[1], 1, MPI_DOUBLE, right, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    if (it % 5 == 4) MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return x < 0;
}
