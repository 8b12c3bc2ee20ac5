/* Tracer overhead of one-sided calls: 2 ranks each put 8 bytes to the
 * other and flush, N times, in a lock_all epoch; rank 0 prints the
 * seconds per put and flush, with or without the tracer. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  int r, n = argc > 1 ? atoi(argv[1]) : 100000;
  char b[8] = {0}, *base;
  MPI_Win win;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Win_allocate(8, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
  MPI_Win_lock_all(0, win);
  MPI_Barrier(MPI_COMM_WORLD);
  double t = MPI_Wtime();
  for (int i = 0; i < n; i++) {
    MPI_Put(b, 8, MPI_CHAR, 1 - r, 0, 8, MPI_CHAR, win);
    MPI_Win_flush(1 - r, win);
  }
  t = MPI_Wtime() - t;
  MPI_Win_unlock_all(win);
  MPI_Win_free(&win);
  if (r == 0) printf("%.9f\n", t / n);
  MPI_Finalize();
  return 0;
}
