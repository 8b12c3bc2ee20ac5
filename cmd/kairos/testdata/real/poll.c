/* Polling: rank 0 posts a receive and polls it with MPI_Test, as HPCC's
 * RandomAccess does millions of times. The first 5,000 tests fail
 * whatever the machine's load: rank 1 sends only once rank 0 has told it
 * to go; rank 0 then polls on while rank 1 computes, until the message
 * arrives or for 50,000 tests in all, and then waits. */
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
  int rank, buf = 0, go = 1, done = 0;
  long tests = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    MPI_Request rq;
    MPI_Irecv(&buf, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, &rq);
    for (; tests < 5000; tests++) MPI_Test(&rq, &done, MPI_STATUS_IGNORE);
    MPI_Send(&go, 1, MPI_INT, 1, 6, MPI_COMM_WORLD);
    for (; !done && tests < 50000; tests++) MPI_Test(&rq, &done, MPI_STATUS_IGNORE);
    if (!done) MPI_Wait(&rq, MPI_STATUS_IGNORE);
    printf("tests %ld\n", tests);
  } else if (rank == 1) {
    MPI_Recv(&go, 1, MPI_INT, 0, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    buf = (int)work(2000000);
    MPI_Send(&buf, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
