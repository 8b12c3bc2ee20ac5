/*
 * mpi4.c: MPI-4 calls on 2 ranks (MPICH 4): a persistent neighborhood
 * collective (MPI_Neighbor_allgather_init on a ring, started three times),
 * which the tracer does not record: neither trace has its messages, and
 * the tracer's summary counts them, as it counts what TI leaves out; and
 * MPI_Isendrecv around a ring, recorded as its isend and irecv.
 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int r, n, x = 0, y[2] = {0, 0}, s = 0, periodic = 1;
  MPI_Request q;
  MPI_Comm ring;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  MPI_Cart_create(MPI_COMM_WORLD, 1, &n, &periodic, 0, &ring);
  MPI_Neighbor_allgather_init(&x, 1, MPI_INT, y, 1, MPI_INT, ring, MPI_INFO_NULL, &q);
  for (int i = 0; i < 3; i++) {
    x = r + i;
    MPI_Start(&q);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
  }
  MPI_Request_free(&q);
  MPI_Comm_free(&ring);
  MPI_Isendrecv(&r, 1, MPI_INT, (r + 1) % n, 3, &s, 1, MPI_INT, (r + n - 1) % n, 3, MPI_COMM_WORLD, &q);
  MPI_Wait(&q, MPI_STATUS_IGNORE);
  if (r == 0) printf("mpi4 %d %d\n", y[0], s);
  MPI_Finalize();
  return 0;
}
