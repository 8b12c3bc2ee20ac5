/* A 2-D non-periodic halo exchange for the tracer's in-situ reduction
 * test: a PX x PY process grid (MPI_Cart_create, MPI_Cart_shift), each
 * iteration a relaxation sweep of the rank's block, then its edges sent to
 * its 2 to 4 neighbours (non-blocking, MPI_PROC_NULL at the grid's edges),
 * and every 10th iteration an allreduce of the residual. Corners, edges and
 * the interior make 9 kinds of ranks.
 *
 *   halo [iterations [block side]]     (defaults 40 and 64)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int iters = argc > 1 ? atoi(argv[1]) : 40, n = argc > 2 ? atoi(argv[2]) : 64;
  int size, dims[2] = {0, 0}, periods[2] = {0, 0}, me;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Dims_create(size, 2, dims);
  MPI_Comm grid;
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 1, &grid);
  MPI_Comm_rank(grid, &me);
  int nb[4]; /* up, down, left, right */
  MPI_Cart_shift(grid, 0, 1, &nb[0], &nb[1]);
  MPI_Cart_shift(grid, 1, 1, &nb[2], &nb[3]);
  double *u = calloc((size_t)(n + 2) * (n + 2), sizeof *u), *v = calloc((size_t)(n + 2) * (n + 2), sizeof *v);
  double *out = malloc(4 * (size_t)n * sizeof *out), *in = malloc(4 * (size_t)n * sizeof *in);
  if (!u || !v || !out || !in) MPI_Abort(MPI_COMM_WORLD, 1);
  for (int i = 0; i < (n + 2) * (n + 2); i++) u[i] = (double)((i * 7 + me) % 13);
#define U(a, i, j) a[(i) * (n + 2) + (j)]
  for (int it = 0; it < iters; it++) {
    double res = 0;
    for (int i = 1; i <= n; i++)
      for (int j = 1; j <= n; j++) {
        U(v, i, j) = 0.25 * (U(u, i - 1, j) + U(u, i + 1, j) + U(u, i, j - 1) + U(u, i, j + 1));
        res += (U(v, i, j) - U(u, i, j)) * (U(v, i, j) - U(u, i, j));
      }
    double *t = u;
    u = v, v = t;
    for (int j = 0; j < n; j++) {
      out[j] = U(u, 1, j + 1), out[n + j] = U(u, n, j + 1);
      out[2 * n + j] = U(u, j + 1, 1), out[3 * n + j] = U(u, j + 1, n);
    }
    MPI_Request req[8];
    int k = 0;
    for (int d = 0; d < 4; d++)
      if (nb[d] != MPI_PROC_NULL) MPI_Irecv(in + d * n, n, MPI_DOUBLE, nb[d], 0, grid, &req[k++]);
    for (int d = 0; d < 4; d++)
      if (nb[d] != MPI_PROC_NULL) MPI_Isend(out + d * n, n, MPI_DOUBLE, nb[d], 0, grid, &req[k++]);
    MPI_Waitall(k, req, MPI_STATUSES_IGNORE);
    for (int j = 0; j < n; j++) {
      if (nb[0] != MPI_PROC_NULL) U(u, 0, j + 1) = in[j];
      if (nb[1] != MPI_PROC_NULL) U(u, n + 1, j + 1) = in[n + j];
      if (nb[2] != MPI_PROC_NULL) U(u, j + 1, 0) = in[2 * n + j];
      if (nb[3] != MPI_PROC_NULL) U(u, j + 1, n + 1) = in[3 * n + j];
    }
    if (it % 10 == 9) {
      double all;
      MPI_Allreduce(&res, &all, 1, MPI_DOUBLE, MPI_SUM, grid);
      if (me == 0 && it == iters - 1) printf("residual %g\n", all);
    }
  }
  free(u), free(v), free(out), free(in);
  MPI_Comm_free(&grid);
  MPI_Finalize();
  return 0;
}
