/* nulltype.c: empty messages of MPI_DATATYPE_NULL, on two ranks.
 *
 * MPICH takes a count of 0 of MPI_DATATYPE_NULL in a send or a receive
 * (MPICH's part/nonblocking_pready synchronises so), but not in
 * MPI_Get_count: rank 1 receives one by MPI_Recv, one by MPI_Irecv and
 * MPI_Wait, and one by MPI_Sendrecv; each is a message of 0 bytes. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    MPI_Send(NULL, 0, MPI_DATATYPE_NULL, 1, 5, MPI_COMM_WORLD);
    MPI_Send(NULL, 0, MPI_DATATYPE_NULL, 1, 6, MPI_COMM_WORLD);
    MPI_Sendrecv(NULL, 0, MPI_DATATYPE_NULL, 1, 7, NULL, 0, MPI_DATATYPE_NULL, 1, 7, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
  } else if (rank == 1) {
    MPI_Request r;
    MPI_Recv(NULL, 0, MPI_DATATYPE_NULL, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Irecv(NULL, 0, MPI_DATATYPE_NULL, 0, 6, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Sendrecv(NULL, 0, MPI_DATATYPE_NULL, 0, 7, NULL, 0, MPI_DATATYPE_NULL, 0, 7, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
  }
  if (rank == 0) printf("done\n");
  MPI_Finalize();
  return 0;
}
