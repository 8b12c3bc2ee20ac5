/* A run that ends in MPI_Abort, for the tracer's abandoned measurement:
 * every rank makes N allreduces, then rank 1 aborts with error code 3 while
 * the others wait in a barrier.
 *
 *   abort [N]     (default 20000: the other ranks' buffers fill 4 times)
 */
#include <mpi.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me, n = argc > 1 ? atoi(argv[1]) : 20000;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  double x = me, y;
  for (int i = 0; i < n; i++) MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  if (me == 1) MPI_Abort(MPI_COMM_WORLD, 3);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
