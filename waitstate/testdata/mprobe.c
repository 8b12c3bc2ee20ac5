/* Rank 0 receives from rank 1 by a matched probe (MPI_Mprobe, then
 * MPI_Mrecv: mpi4py's receives), then from rank 2 by a loop of
 * MPI_Improbe until one matches, five times; rank r works 30*r ms before
 * it sends, and every rank then enters a barrier. Rank 2 is the slowest:
 * the barriers wait for it, through rank 0. */
#include <mpi.h>
static void spin(double s) {
  double t = MPI_Wtime();
  volatile double x = 0;
  while (MPI_Wtime() - t < s) x += 1;
}
int main(int argc, char **argv) {
  int rank, x = 0, flag;
  MPI_Message m;
  MPI_Status st;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (int it = 0; it < 5; it++) {
    if (rank == 0) {
      MPI_Mprobe(1, it, MPI_COMM_WORLD, &m, &st);
      MPI_Mrecv(&x, 1, MPI_INT, &m, &st);
      do {
        MPI_Improbe(2, it, MPI_COMM_WORLD, &flag, &m, &st);
      } while (!flag);
      MPI_Mrecv(&x, 1, MPI_INT, &m, &st);
    } else if (rank <= 2) {
      spin(0.03 * rank);
      MPI_Send(&x, 1, MPI_INT, 0, it, MPI_COMM_WORLD);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
