/* Rank 0 polls its receives from ranks 1 to 3 with MPI_Testsome until
 * all have come, five times; rank r works 20*r ms before it sends, and
 * every rank then enters a barrier. Rank 3 is the slowest: the barriers
 * wait for it, through rank 0. */
#include <mpi.h>
static void spin(double s) {
  double t = MPI_Wtime();
  volatile double x = 0;
  while (MPI_Wtime() - t < s) x += 1;
}
int main(int argc, char **argv) {
  int rank, size, x[4] = {0}, idx[4], n, left;
  MPI_Request r[3];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int it = 0; it < 5; it++) {
    if (rank == 0) {
      for (int p = 1; p < size; p++) MPI_Irecv(&x[p], 1, MPI_INT, p, it, MPI_COMM_WORLD, &r[p - 1]);
      for (left = size - 1; left > 0; left -= n) {
        MPI_Testsome(size - 1, r, &n, idx, MPI_STATUSES_IGNORE);
        if (n == MPI_UNDEFINED) n = 0;
      }
    } else {
      spin(0.02 * rank);
      MPI_Send(&x[0], 1, MPI_INT, 0, it, MPI_COMM_WORLD);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
