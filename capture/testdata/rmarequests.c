/*
 * rmarequests.c: the one-sided calls the epoch programs do not make, on 2
 * ranks: a window of MPI_Win_create and a dynamic one (attach, detach);
 * in a lock_all epoch the request-based MPI_Rput, MPI_Rget,
 * MPI_Raccumulate and MPI_Rget_accumulate completed by MPI_Waitall, an
 * MPI_Compare_and_swap, MPI_Win_flush_local, MPI_Win_sync; then a
 * post/start/complete epoch ended by polling MPI_Win_test.
 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int peer = 1 - rank;
  static double mem[4096], buf[1024], res[1024];
  MPI_Win win, dyn;
  MPI_Win_create(mem, sizeof mem, sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &dyn);
  static double attached[64];
  MPI_Win_attach(dyn, attached, sizeof attached);

  MPI_Win_lock_all(0, win);
  MPI_Request rq[4];
  MPI_Rput(buf, 1024, MPI_DOUBLE, peer, 0, 1024, MPI_DOUBLE, win, &rq[0]);
  MPI_Rget(res, 512, MPI_DOUBLE, peer, 1024, 512, MPI_DOUBLE, win, &rq[1]);
  MPI_Raccumulate(buf, 256, MPI_DOUBLE, peer, 2048, 256, MPI_DOUBLE, MPI_SUM, win, &rq[2]);
  MPI_Rget_accumulate(buf, 128, MPI_DOUBLE, res + 512, 128, MPI_DOUBLE, peer, 3072, 128, MPI_DOUBLE, MPI_SUM, win, &rq[3]);
  MPI_Waitall(4, rq, MPI_STATUSES_IGNORE);
  long cmp = 0, swap = rank + 1, old;
  MPI_Compare_and_swap(&swap, &cmp, &old, MPI_LONG, peer, 4000, win);
  MPI_Win_flush_local(peer, win);
  MPI_Win_sync(win);
  MPI_Win_unlock_all(win);

  MPI_Group world, other;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  MPI_Group_incl(world, 1, &peer, &other);
  MPI_Win_post(other, 0, win);
  MPI_Win_start(other, 0, win);
  MPI_Put(buf, 64, MPI_DOUBLE, peer, 0, 64, MPI_DOUBLE, win);
  MPI_Win_complete(win);
  int done = 0;
  while (!done)
    MPI_Win_test(win, &done);
  MPI_Group_free(&other);
  MPI_Group_free(&world);

  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_detach(dyn, attached);
  MPI_Win_free(&dyn);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
