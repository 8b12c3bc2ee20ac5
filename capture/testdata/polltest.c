/* Tests of receives on 4 ranks (TestTracerTestsAsWaits). Rank 1 tests a
 * receive twice before its message comes, then waits for it: rank 0 sends
 * it after a barrier with ranks 2 and 3 on a sub-communicator, which rank
 * 2 enters after 100 ms, and a TI trace has no record of that barrier, so
 * that the message comes sooner in a replay. Then rank 1 polls a receive
 * from rank 3 with MPI_Test until it completes. */
#include <mpi.h>
static void spin(double s) {
  double t = MPI_Wtime();
  volatile double x = 0;
  while (MPI_Wtime() - t < s) x += 1;
}
int main(int argc, char **argv) {
  int rank, flag = 0, x = 0;
  MPI_Comm sub;
  MPI_Request r;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_split(MPI_COMM_WORLD, rank != 1, rank, &sub); /* {0, 2, 3} and {1} */
  switch (rank) {
  case 0:
    MPI_Barrier(sub);
    MPI_Send(&x, 1, MPI_INT, 1, 7, MPI_COMM_WORLD);
    break;
  case 1:
    MPI_Irecv(&x, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, &r);
    spin(0.03);
    MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
    if (!flag) spin(0.01), MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
    if (!flag) MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Irecv(&x, 1, MPI_INT, 3, 8, MPI_COMM_WORLD, &r);
    for (flag = 0; !flag;) spin(0.001), MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
    break;
  case 2:
    spin(0.1);
    MPI_Barrier(sub);
    break;
  case 3:
    MPI_Barrier(sub);
    spin(0.02);
    MPI_Send(&x, 1, MPI_INT, 1, 8, MPI_COMM_WORLD);
    break;
  }
  MPI_Comm_free(&sub);
  MPI_Finalize();
  return 0;
}
