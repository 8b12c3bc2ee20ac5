/* A program that communicates as NAS CG does, for the tracer's in-situ
 * reduction tests: P = 2^k ranks on an nprows x npcols grid (npcols =
 * nprows, or twice it where k is odd), each outer iteration 25 inner ones
 * of a matrix-vector product whose row sums are reduced by recursive
 * doubling across the rank's grid row (MPI_Irecv + MPI_Send + MPI_Wait
 * with partner me XOR 2^i), then the vector's transpose exchange with the
 * rank of the transposed block (itself on the diagonal of a square grid),
 * then two dot products reduced the same way with one double; each outer
 * iteration ends in an MPI_Allreduce of the residual. The ranks on the
 * diagonal of a square grid keep their block (a call path of their own);
 * the others share one call path and differ by their exchanges' partners
 * relative to their own rank.
 *
 *   cglike [outer iterations [vector length]]     (defaults 4 and 2048)
 */
#include <mpi.h>
#include <stdlib.h>

static int nprows, npcols, me, row, col;

/* rowsum reduces n doubles across the rank's grid row by recursive
 * doubling, as CG's conj_grad does after each product. */
static void rowsum(double *x, double *tmp, int n, int tag) {
  for (int d = 1; d < npcols; d <<= 1) {
    int partner = row * npcols + (col ^ d);
    MPI_Request q;
    MPI_Irecv(tmp, n, MPI_DOUBLE, partner, tag, MPI_COMM_WORLD, &q);
    MPI_Send(x, n, MPI_DOUBLE, partner, tag, MPI_COMM_WORLD);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    for (int i = 0; i < n; i++) x[i] += tmp[i];
  }
}

/* transpose returns the rank that holds the transposed block of the
 * rank's (CG's exch_proc, NPB's formula for square and 1:2 grids). */
static int transpose(void) {
  if (nprows == npcols) return (me % nprows) * nprows + me / nprows;
  return 2 * ((me / 2) % nprows * nprows + me / 2 / nprows) + me % 2;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int outer = argc > 1 ? atoi(argv[1]) : 4, n = argc > 2 ? atoi(argv[2]) : 2048, P;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  int k = 0;
  while ((1 << k) < P) k++;
  if ((1 << k) != P) MPI_Abort(MPI_COMM_WORLD, 2);
  nprows = 1 << (k / 2), npcols = P / nprows;
  row = me / npcols, col = me % npcols;
  int exch = transpose();
  double *p = malloc((size_t)n * sizeof *p), *q = malloc((size_t)n * sizeof *q), *w = malloc((size_t)n * sizeof *w);
  if (!p || !q || !w) MPI_Abort(MPI_COMM_WORLD, 1);
  for (int i = 0; i < n; i++) p[i] = 1.0 / (1 + i + me);
  double rho = 0;
  for (int it = 0; it < outer; it++) {
    for (int cg = 0; cg < 25; cg++) {
      for (int i = 0; i < n; i++) q[i] = 0.5 * p[i] + 0.25 * p[(i + 1) % n];
      rowsum(q, w, n, 1);
      if (exch != me) {
        MPI_Request r;
        MPI_Irecv(w, n, MPI_DOUBLE, exch, 2, MPI_COMM_WORLD, &r);
        MPI_Send(q, n, MPI_DOUBLE, exch, 2, MPI_COMM_WORLD);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
      } else {
        for (int i = 0; i < n; i++) w[i] = q[i];
      }
      double d[1] = {0}, t[1];
      for (int i = 0; i < n; i++) d[0] += p[i] * w[i];
      rowsum(d, t, 1, 3);
      double e[1] = {0};
      for (int i = 0; i < n; i++) e[0] += w[i] * w[i];
      rowsum(e, t, 1, 4);
      for (int i = 0; i < n; i++) p[i] = w[i] / (1 + d[0] * d[0] + e[0]);
    }
    double local = 0;
    for (int i = 0; i < n; i++) local += p[i] * p[i];
    MPI_Allreduce(&local, &rho, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }
  free(p), free(q), free(w);
  MPI_Finalize();
  return rho < 0;
}
