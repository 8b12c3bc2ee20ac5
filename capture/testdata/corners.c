/* Corners of MPI that programs reach and the tracer must record as they
 * happened: each argument names one case, run on 2 ranks.
 *
 *   partial  receives whose datatype is bigger than what was sent, so
 *            that the message ends inside an element (MPI_Get_count is
 *            MPI_UNDEFINED): a plain receive, a sendrecv and a matched
 *            probe's receive, each of 4 bytes into a double.
 *   freecomm receives pending on communicators the program frees before
 *            they complete (MPI keeps a communicator until then): one
 *            from a given source, one from MPI_ANY_SOURCE on a
 *            communicator whose ranks are the world's reversed.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static int rank;

/* partial: rank 0 sends one int three times; rank 1 receives each into
 * a double, by MPI_Recv, MPI_Sendrecv and MPI_Mprobe with MPI_Mrecv. */
static void partial(void) {
  int v = 7;
  double d = 0;
  MPI_Status st;
  if (rank == 0) {
    for (int i = 0; i < 3; i++) MPI_Send(&v, 1, MPI_INT, 1, 5, MPI_COMM_WORLD);
  } else if (rank == 1) {
    MPI_Recv(&d, 1, MPI_DOUBLE, 0, 5, MPI_COMM_WORLD, &st);
    MPI_Sendrecv(NULL, 0, MPI_BYTE, MPI_PROC_NULL, 0, &d, 1, MPI_DOUBLE, 0, 5, MPI_COMM_WORLD, &st);
    MPI_Message m;
    MPI_Mprobe(0, 5, MPI_COMM_WORLD, &m, &st);
    MPI_Mrecv(&d, 1, MPI_DOUBLE, &m, &st);
  }
}

/* freecomm: rank 1 posts its receives, frees both communicators and
 * only then lets rank 0 send. */
static void freecomm(void) {
  MPI_Comm dup, rev;
  MPI_Request q[2];
  int a = 1, b = 2, size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &rev);
  if (rank == 1) {
    MPI_Irecv(&a, 1, MPI_INT, 0, 3, dup, &q[0]);
    MPI_Irecv(&b, 1, MPI_INT, MPI_ANY_SOURCE, 4, rev, &q[1]);
    MPI_Comm_free(&dup);
    MPI_Comm_free(&rev);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
  } else {
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
      MPI_Send(&a, 1, MPI_INT, 1, 3, dup);
      MPI_Send(&b, 1, MPI_INT, size - 2, 4, rev); /* world rank 1 */
    }
    MPI_Comm_free(&dup);
    MPI_Comm_free(&rev);
  }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "partial") == 0) partial();
    else if (strcmp(argv[i], "freecomm") == 0) freecomm();
    else if (rank == 0) fprintf(stderr, "corners: unknown case %s\n", argv[i]);
  }
  MPI_Finalize();
  return 0;
}
