/*
 * ga.c: a Global Arrays program (Debian's libglobalarrays-dev, whose
 * ARMCI is ARMCI-MPI: MPI-3 one-sided windows), for Kairos' tracer tests:
 * a 2-D array of doubles distributed over the ranks; each rank puts a
 * block into its neighbour's part, accumulates into it, reads it back,
 * increments a shared counter (NGA_Read_inc: fetch-and-add) and syncs,
 * for ITER iterations.
 *
 *   ga [ITER]
 */
#include <ga.h>
#include <macdecls.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { N = 256, B = 64 };

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  GA_Initialize();
  MA_init(C_DBL, 1 << 20, 1 << 20);
  int iter = argc > 1 ? atoi(argv[1]) : 20;
  int me = GA_Nodeid(), n = GA_Nnodes();
  int dims[2] = {N, N}, chunk[2] = {-1, N};
  int g = NGA_Create(C_DBL, 2, dims, "a", chunk);
  int one = 1, cdims[1] = {1}, c = NGA_Create(C_INT, 1, cdims, "counter", NULL);
  GA_Zero(g);
  GA_Zero(c);
  static double buf[B * B], back[B * B];
  for (int i = 0; i < B * B; i++) buf[i] = me + i;
  double alpha = 1.0;
  int rows = N / n, zero[1] = {0};
  for (int it = 0; it < iter; it++) {
    int r0 = ((me + 1) % n) * rows, lo[2] = {r0, (it * B) % N}, hi[2] = {r0 + B - 1, (it * B) % N + B - 1}, ld[1] = {B};
    NGA_Put(g, lo, hi, buf, ld);
    NGA_Acc(g, lo, hi, buf, ld, &alpha);
    NGA_Get(g, lo, hi, back, ld);
    NGA_Read_inc(c, zero, one);
    GA_Sync();
  }
  GA_Destroy(c);
  GA_Destroy(g);
  GA_Terminate();
  MPI_Finalize();
  return 0;
}
