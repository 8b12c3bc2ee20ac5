/* A ring exchange whose rank 2 works 200 times longer in two iterations:
 * the program whose recorded trace TestRecordedDelay analyzes. Each
 * iteration a rank works (sleeps) 2 ms, posts a receive from its left
 * neighbour, sends to its right one and waits; every fifth iteration ends
 * with an allreduce. The delays (0.4 s) stand well above the scheduling
 * noise of a loaded machine running 4 ranks on 2 cores. */
#include <mpi.h>
#include <unistd.h>

int main(int argc, char **argv) {
  int rank, size, in, out, sum;
  MPI_Request rq;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int it = 0; it < 20; it++) {
    usleep(rank == 2 && (it == 6 || it == 13) ? 400000 : 2000);
    out = it;
    MPI_Irecv(&in, 1, MPI_INT, (rank + size - 1) % size, 0, MPI_COMM_WORLD, &rq);
    MPI_Send(&out, 1, MPI_INT, (rank + 1) % size, 0, MPI_COMM_WORLD);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    if (it % 5 == 4)
      MPI_Allreduce(&out, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
