/*
 * persist.c: MPI-4's persistent collectives and partitioned communication
 * on 3 ranks (MPICH 4; Open MPI 4.1 has neither as MPI_): an
 * MPI_Allreduce_init started three times, each completed by MPI_Wait;
 * an MPI_Bcast_init from rank 1 and an MPI_Gatherv_init to rank 2 started
 * together by MPI_Startall (by two MPI_Start in the other order on rank
 * 1), completed by MPI_Waitall, twice; an
 * MPI_Barrier_init on a duplicate of MPI_COMM_WORLD and an
 * MPI_Allreduce_init on ranks 0 and 1 alone, started once; and a
 * partitioned send from rank 0 to rank 2 of 4 partitions of 8 ints,
 * twice: rank 0 marks them ready one by one (MPI_Pready, MPI_Pready_range)
 * and waits, rank 2 polls MPI_Parrived then tests its request to
 * completion.
 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int r, x = 0, y = 0, b[4] = {0}, g[6] = {0}, counts[3] = {1, 2, 3}, displs[3] = {0, 1, 3}, part[32] = {0};
  MPI_Request q[2];
  MPI_Status st[2];
  MPI_Comm dup, pair;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Allreduce_init(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &q[0]);
  for (int i = 0; i < 3; i++) {
    x = r + i;
    MPI_Start(&q[0]);
    MPI_Wait(&q[0], MPI_STATUS_IGNORE);
  }
  MPI_Request_free(&q[0]);
  MPI_Bcast_init(b, 4, MPI_INT, 1, MPI_COMM_WORLD, MPI_INFO_NULL, &q[0]);
  MPI_Gatherv_init(b, r + 1, MPI_INT, g, counts, displs, MPI_INT, 2, MPI_COMM_WORLD, MPI_INFO_NULL, &q[1]);
  for (int i = 0; i < 2; i++) {
    if (r == 1) { /* out of their init calls' order, which MPI matches them in */
      MPI_Start(&q[1]);
      MPI_Start(&q[0]);
    } else {
      MPI_Startall(2, q);
    }
    MPI_Waitall(2, q, st);
  }
  MPI_Request_free(&q[0]);
  MPI_Request_free(&q[1]);
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  MPI_Comm_split(MPI_COMM_WORLD, r < 2, r, &pair);
  MPI_Barrier_init(dup, MPI_INFO_NULL, &q[0]);
  MPI_Start(&q[0]);
  MPI_Wait(&q[0], MPI_STATUS_IGNORE);
  MPI_Request_free(&q[0]);
  if (r < 2) {
    MPI_Allreduce_init(&x, &y, 1, MPI_INT, MPI_SUM, pair, MPI_INFO_NULL, &q[0]);
    MPI_Start(&q[0]);
    MPI_Wait(&q[0], MPI_STATUS_IGNORE);
    MPI_Request_free(&q[0]);
  }
  if (r == 0 || r == 2) {
    if (r == 0)
      MPI_Psend_init(part, 4, 8, MPI_INT, 2, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &q[0]);
    else
      MPI_Precv_init(part, 4, 8, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &q[0]);
    for (int i = 0; i < 2; i++) {
      MPI_Start(&q[0]);
      if (r == 0) {
        MPI_Pready(0, q[0]);
        MPI_Pready(1, q[0]);
        MPI_Pready_range(2, 3, q[0]);
        MPI_Wait(&q[0], MPI_STATUS_IGNORE);
      } else {
        int flag = 0;
        while (!flag) MPI_Parrived(q[0], 3, &flag);
        for (flag = 0; !flag;) MPI_Test(&q[0], &flag, MPI_STATUS_IGNORE);
      }
    }
    MPI_Request_free(&q[0]);
  }
  MPI_Comm_free(&pair);
  MPI_Comm_free(&dup);
  if (r == 0) printf("persist %d %d\n", y, b[0]);
  MPI_Finalize();
  return 0;
}
