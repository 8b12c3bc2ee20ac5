/* isendrecv.c: MPI-4's MPI_Isendrecv and MPI_Isendrecv_replace, whose one
 * request completes a send and a receive, met by plain calls.
 *
 * On three ranks: rank 0 exchanges 800 bytes with rank 1 by MPI_Isendrecv
 * (tags 1 and 2) and waits for it after some work, while rank 1 receives
 * by MPI_Recv and sends by MPI_Send; then each rank passes 80 bytes round
 * the ring by MPI_Isendrecv_replace (tag 3), completed by MPI_Waitall with
 * an irecv of its own; last, a shift with MPI_PROC_NULL at the ends (the
 * first rank only receives, the last only sends), by MPI_Isendrecv
 * completed by MPI_Test in a loop. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank, size;
  double a[100] = {0}, b[100], c[10] = {0}, d[10];
  MPI_Request r[2];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank == 0) {
    MPI_Isendrecv(a, 100, MPI_DOUBLE, 1, 1, b, 100, MPI_DOUBLE, 1, 2, MPI_COMM_WORLD, &r[0]);
    volatile double x = 0;
    for (int i = 0; i < 100000; i++) x += i;
    MPI_Wait(&r[0], MPI_STATUS_IGNORE);
  } else if (rank == 1) {
    MPI_Recv(b, 100, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(a, 100, MPI_DOUBLE, 0, 2, MPI_COMM_WORLD);
  }
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  MPI_Irecv(d, 10, MPI_DOUBLE, right, 4, MPI_COMM_WORLD, &r[1]);
  MPI_Isendrecv_replace(c, 10, MPI_DOUBLE, right, 3, left, 3, MPI_COMM_WORLD, &r[0]);
  MPI_Send(c, 10, MPI_DOUBLE, left, 4, MPI_COMM_WORLD);
  MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
  int up = rank + 1 < size ? rank + 1 : MPI_PROC_NULL, down = rank > 0 ? rank - 1 : MPI_PROC_NULL;
  MPI_Isendrecv(a, 5, MPI_DOUBLE, up, 5, b, 5, MPI_DOUBLE, down, 5, MPI_COMM_WORLD, &r[0]);
  for (int done = 0; !done;) MPI_Test(&r[0], &done, MPI_STATUS_IGNORE);
  if (rank == 0) printf("done\n");
  MPI_Finalize();
  return 0;
}
