/* Broadcasts on MPI_COMM_WORLD and on a split of it with the same members
 * in the same order (TestTracerCongruentCommunicators), called in one
 * order at the root and in the other on the other ranks, as murasaki
 * does: legal MPI, since a communicator's messages are its own. Then a
 * duplicate of the split, whose barrier every rank calls. */
#include <mpi.h>
int main(int argc, char **argv) {
  int rank;
  char a[4] = {0}, b[8] = {0};
  MPI_Comm c, d;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &c);
  if (rank == 0) {
    MPI_Bcast(a, 4, MPI_CHAR, 0, MPI_COMM_WORLD);
    MPI_Bcast(b, 8, MPI_CHAR, 0, c);
  } else {
    MPI_Bcast(b, 8, MPI_CHAR, 0, c);
    MPI_Bcast(a, 4, MPI_CHAR, 0, MPI_COMM_WORLD);
  }
  MPI_Comm_dup(c, &d);
  MPI_Barrier(d);
  MPI_Comm_free(&d);
  MPI_Comm_free(&c);
  MPI_Finalize();
  return 0;
}
