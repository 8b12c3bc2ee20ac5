/* A library of C functions that share Fortran MPI bindings' plain names,
 * as R's Rmpi has (mpi_send, mpi_bcast, mpi_barrier...): a preloaded
 * tracer must leave them to the library. Built as a shared library, or
 * with -DMAIN as the program that calls them. */
#include <mpi.h>
#include <stdio.h>

#ifndef MAIN
int mpi_barrier(int comm) {
  printf("the library's mpi_barrier(%d)\n", comm);
  return comm;
}
#else
int mpi_barrier(int comm);
int main(int argc, char **argv) {
  int r;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  if (mpi_barrier(r) == r) MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
#endif
