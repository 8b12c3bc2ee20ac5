/* ACURDION's in-situ clustering of given signatures, for the differential
 * test against the Go cluster package (capture's
 * TestTracerClusteringMatchesGo): the tracer's source included, every
 * rank reads the cases of FILE and runs the tracer's clustering (ka_run:
 * Algorithm 1's reductions, Algorithm 2's tree, acurdion2's split) on its
 * own signatures over MPI_COMM_WORLD; rank 0 prints each case's clusters,
 * by representative, as their members. Untraced: it calls PMPI_Init.
 *
 *   FILE: per case a line "case METHOD K", then a line per rank: its call
 *   path, loop and types (integers), its 8 averaged signatures and its 7
 *   parameter components
 *
 *   mpicc -O2 -I DIR-OF-kairos_trace.c -o clusteracurdion capture/testdata/clusteracurdion.c
 *   mpirun -np P ./clusteracurdion FILE
 */
#include "kairos_trace.c"
#include <inttypes.h>

int main(int argc, char **argv) {
  PMPI_Init(&argc, &argv);
  PMPI_Comm_rank(MPI_COMM_WORLD, &kt_rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &kt_size);
  FILE *f = argc > 1 ? fopen(argv[1], "r") : NULL;
  if (!f) PMPI_Abort(MPI_COMM_WORLD, 2);
  int P = kt_size, *group = malloc(P * sizeof *group), *head = malloc(P * sizeof *head);
  char method[32];
  for (int c = 0; fscanf(f, " case %31s %d", method, &kr_k) == 2; c++) {
    struct ka_sig me = {0};
    for (int r = 0; r < P; r++) {
      struct ka_sig s = {0};
      unsigned long long path, loop, types;
      if (fscanf(f, "%llu %llu %llu", &path, &loop, &types) != 3) PMPI_Abort(MPI_COMM_WORLD, 3);
      s.path[0] = path, s.loop = loop, s.types = types;
      for (int i = 0; i < 8; i++)
        if (fscanf(f, "%lf", &s.v[i]) != 1) PMPI_Abort(MPI_COMM_WORLD, 3);
      for (int i = 0; i < KA_KEY; i++)
        if (fscanf(f, "%" SCNd64, &s.key[i]) != 1) PMPI_Abort(MPI_COMM_WORLD, 3);
      if (r == kt_rank) me = s;
    }
    kr_method = strcmp(method, "acurdion2") == 0 ? KR_ACURDION2 : KR_ACURDION;
    struct kr_stat st = {0};
    int n = ka_run(MPI_COMM_WORLD, P, &me, group, head, &st, 0);
    if (kt_rank != 0) continue;
    printf("case %d:", c);
    for (int j = 0; j < n; j++) {
      printf(" %d [", head[j]);
      for (int r = 0, first = 1; r < P; r++)
        if (group[r] == j) printf(first ? "%d" : " %d", r), first = 0;
      printf("]");
    }
    printf(" format %d\n", ka_differs);
    fflush(stdout);
  }
  PMPI_Finalize();
  return 0;
}
