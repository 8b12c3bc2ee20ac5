/* Tracer overhead: 2 ranks exchange N small messages (send/recv pairs) and
 * rank 0 prints the seconds per call pair, with or without the tracer. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  int r, n = argc > 1 ? atoi(argv[1]) : 100000;
  char b[8] = {0};
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Barrier(MPI_COMM_WORLD);
  double t = MPI_Wtime();
  for (int i = 0; i < n; i++) {
    if (r == 0) {
      MPI_Send(b, 8, MPI_CHAR, 1, 0, MPI_COMM_WORLD);
      MPI_Recv(b, 8, MPI_CHAR, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (r == 1) {
      MPI_Recv(b, 8, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(b, 8, MPI_CHAR, 0, 0, MPI_COMM_WORLD);
    }
  }
  t = MPI_Wtime() - t;
  if (r == 0) printf("%.9f\n", t / n);
  MPI_Finalize();
  return 0;
}
