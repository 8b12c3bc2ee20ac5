/* bigcount.c: sizes an int cannot hold, on one rank.
 *
 * A broadcast of one element of a type of 2 GiB and 8 bytes, on a world of
 * one rank (MPI moves nothing, and the buffer is never touched, so that the
 * memory is not used), whose size MPI_Type_size cannot give (MPI_UNDEFINED);
 * and receives of a message that is not a whole number of their elements
 * (6 bytes into MPI_INTs: MPI_Get_count gives MPI_UNDEFINED), from a
 * sendrecv and from a send and a receive to and from the rank itself.
 * A trace must have 2147483656 bytes for the broadcast and 6 for the
 * receives. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Datatype big;
  MPI_Type_contiguous((1 << 28) + 1, MPI_DOUBLE, &big);
  MPI_Type_commit(&big);
  char *huge = malloc(((size_t)1 << 31) + 8);
  if (!huge) MPI_Abort(MPI_COMM_WORLD, 1);
  MPI_Bcast(huge, 1, big, 0, MPI_COMM_WORLD);
  free(huge);
  MPI_Type_free(&big);

  char out[6] = "hello";
  int in[2];
  MPI_Status st;
  MPI_Sendrecv(out, 6, MPI_BYTE, 0, 1, in, 2, MPI_INT, 0, 1, MPI_COMM_WORLD, &st);
  MPI_Request r;
  MPI_Irecv(in, 2, MPI_INT, 0, 2, MPI_COMM_WORLD, &r);
  MPI_Send(out, 6, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
  MPI_Wait(&r, &st);
  MPI_Isend(out, 6, MPI_BYTE, 0, 3, MPI_COMM_WORLD, &r);
  MPI_Recv(in, 2, MPI_INT, 0, 3, MPI_COMM_WORLD, &st);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  MPI_Finalize();
  return 0;
}
