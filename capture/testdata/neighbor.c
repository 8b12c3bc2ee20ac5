/* Neighborhood collectives for the tracer's tests: a periodic 2-D process
 * grid (MPI_Cart_create) whose ranks exchange a block with their four
 * neighbours by MPI_Neighbor_alltoall, then gather theirs by
 * MPI_Ineighbor_allgather, compute, and wait for it, ten times, an
 * allreduce after each step; then an MPI_Neighbor_alltoallw of the same
 * blocks, and an MPI_Neighbor_alltoallv of blocks of 1, 2, 3 and 4
 * doubles to the -, + neighbours of the first dimension, then the
 * second's (a rank receives 2 from its - neighbour, what that one sent
 * to its +: on a periodic dimension of two ranks, the same rank). TI has
 * no action for them: the trace writes each as its messages, the
 * non-blocking one's waits where it completes.
 * capture/testdata/neighbor.f90 is its Fortran twin.
 *
 *   neighbor            (any number of ranks)
 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int size, dims[2] = {0, 0}, periods[2] = {1, 1};
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Dims_create(size, 2, dims);
  MPI_Comm grid;
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &grid);
  double out[4 * 1000], in[4 * 1000], mine[1000], theirs[4 * 1000], sum = 0;
  for (int i = 0; i < 4000; i++) out[i] = i;
  for (int i = 0; i < 1000; i++) mine[i] = i;
  for (int step = 0; step < 10; step++) {
    MPI_Neighbor_alltoall(out, 1000, MPI_DOUBLE, in, 1000, MPI_DOUBLE, grid);
    MPI_Request r;
    MPI_Ineighbor_allgather(mine, 1000, MPI_DOUBLE, theirs, 1000, MPI_DOUBLE, grid, &r);
    for (int i = 0; i < 1000; i++) mine[i] = mine[i] * 0.5 + out[i]; /* overlapped */
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    double x = in[0] + theirs[0];
    MPI_Allreduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }
  int counts[4] = {1000, 1000, 1000, 1000};
  MPI_Aint displs[4] = {0, 8000, 16000, 24000};
  MPI_Datatype types[4] = {MPI_DOUBLE, MPI_DOUBLE, MPI_DOUBLE, MPI_DOUBLE};
  MPI_Neighbor_alltoallw(out, counts, displs, types, in, counts, displs, types, grid);
  int sc[4] = {1, 2, 3, 4}, rc[4] = {2, 1, 4, 3}, sd[4] = {0, 1, 3, 6};
  MPI_Neighbor_alltoallv(out, sc, sd, MPI_DOUBLE, in, rc, sd, MPI_DOUBLE, grid);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) printf("neighbor done %g\n", sum);
  MPI_Comm_free(&grid);
  MPI_Finalize();
  return 0;
}
