/* Communicator creation, for capture's TestTracerCommCreation: rank 1
 * sleeps 0.2 s before MPI_Comm_split (the others wait for it there), rank
 * 0 sleeps 0.2 s before MPI_Comm_dup (the others wait there), then every
 * rank creates a periodic 1-D Cartesian communicator and a sub-communicator
 * of it, and all meet in a barrier. commcreate.f90 is its Fortran twin. */
#include <mpi.h>
#include <unistd.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm split, dup, cart, sub;
  if (rank == 1) usleep(200000);
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &split);
  if (rank == 0) usleep(200000);
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  int dims[1] = {size}, periods[1] = {1}, remain[1] = {1};
  MPI_Cart_create(dup, 1, dims, periods, 0, &cart);
  MPI_Cart_sub(cart, remain, &sub);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Comm_free(&sub);
  MPI_Comm_free(&cart);
  MPI_Comm_free(&dup);
  MPI_Comm_free(&split);
  MPI_Finalize();
  return 0;
}
