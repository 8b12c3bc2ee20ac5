/* Polling: rank 0 posts a receive and polls it with MPI_Test while rank 1
 * computes before sending: thousands of failed tests, as HPCC's
 * RandomAccess makes millions; after 20,000 it waits. */
#include <mpi.h>
#include <stdio.h>

/* work computes n iterations (a fixed amount of work, whatever the
 * machine's load: a wall-clock spin would never end on an overloaded
 * machine shared by more ranks than cores). */
static double work(long n) {
  volatile double x = 0;
  for (long i = 0; i < n; i++) x += 1e-9 * (double)i;
  return x;
}

int main(int argc, char **argv) {
  int rank, buf = 0, done = 0;
  long tests = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    MPI_Request rq;
    MPI_Irecv(&buf, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, &rq);
    while (!done && tests < 20000) {
      MPI_Test(&rq, &done, MPI_STATUS_IGNORE);
      tests++;
    }
    if (!done) MPI_Wait(&rq, MPI_STATUS_IGNORE);
    printf("tests %ld\n", tests);
  } else if (rank == 1) {
    buf = (int)work(20000000);
    MPI_Send(&buf, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
