/* A suite of kernels run one after another, as HPCC runs its benchmarks:
 * two long random-exchange kernels (each rank sends to random ranks and
 * receives from any source, every message linked to the others: one
 * pattern instance each, long), a short ring loop between them and
 * an all-to-all loop after them. */
#include <mpi.h>
#include <stdlib.h>

/* work computes n iterations (a fixed amount of work, whatever the
 * machine's load: a wall-clock spin would never end on an overloaded
 * machine shared by more ranks than cores). */
static double work(long n) {
  volatile double x = 0;
  for (long i = 0; i < n; i++) x += 1e-9 * (double)i;
  return x;
}

/* random sends msgs messages to random other ranks with tag and
 * receives as many from any source, then synchronises. */
static void random_kernel(int rank, int size, int msgs, int tag, unsigned seed) {
  int counts[64] = {0}, incoming = 0, v = 0;
  srand(seed + rank);
  int *dest = malloc(msgs * sizeof *dest);
  for (int i = 0; i < msgs; i++) {
    dest[i] = (rank + 1 + rand() % (size - 1)) % size;
    counts[dest[i]]++;
  }
  MPI_Reduce_scatter_block(counts, &incoming, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  for (int i = 0; i < msgs; i++) {
    MPI_Request rq;
    MPI_Isend(&v, 1, MPI_INT, dest[i], tag, MPI_COMM_WORLD, &rq);
    work(500000);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
  }
  for (int i = 0; i < incoming; i++) MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  free(dest);
  MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv) {
  int rank, size, v = 0, w;
  double a[4] = {0}, b[4];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  random_kernel(rank, size, 40, 1, 7);
  for (int i = 0; i < 150; i++)
    MPI_Sendrecv(&v, 1, MPI_INT, (rank + 1) % size, 2, &w, 1, MPI_INT, (rank + size - 1) % size, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  random_kernel(rank, size, 40, 3, 11);
  for (int i = 0; i < 150; i++) MPI_Alltoall(a, 1, MPI_DOUBLE, b, 1, MPI_DOUBLE, MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
