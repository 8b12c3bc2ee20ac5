/* A wildcard receive matched after the rank's trace has outgrown the
 * tracer's 64 KiB buffer, for the in-situ reduction's re-signing: ranks
 * 1..P-1 post MPI_Irecv(MPI_ANY_SOURCE, tag 5), then every rank
 * makes n sendrecvs with itself (about 30 bytes of trace each), then rank
 * 0 sends each of them a message of tag 5, which its MPI_Wait matches:
 * its irecv line, in the file by then, is rewritten with the source, and its signatures must be those of the line rewritten.
 *
 *   latewild [n]     (default 3000)
 */
#include <mpi.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int n = argc > 1 ? atoi(argv[1]) : 3000, r, P, a = 1, b = 0, v = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  MPI_Request q = MPI_REQUEST_NULL;
  if (r > 0) MPI_Irecv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &q);
  for (int i = 0; i < n; i++) MPI_Sendrecv(&a, 1, MPI_INT, r, 0, &b, 1, MPI_INT, r, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Barrier(MPI_COMM_WORLD);
  if (r == 0)
    for (int d = 1; d < P; d++) MPI_Send(&a, 1, MPI_INT, d, 5, MPI_COMM_WORLD);
  else
    MPI_Wait(&q, MPI_STATUS_IGNORE);
  MPI_Finalize();
  return 0;
}
