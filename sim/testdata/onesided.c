/*
 * onesided.c: MPI-3 one-sided programs of two ranks, compiled with
 * SimGrid's smpicc so that SMPI runs them on-line, for Kairos' replay of
 * the same calls to be compared with (sim/onesided_test.go). Each prints
 * rank 0's MPI_Wtime after a final barrier.
 *
 *   onesided MODE... runs each mode in turn, on a window of its own:
 *
 *   onesided repro   rank 1 sleeps 0.2 s; both MPI_Win_allocate; each 200
 *                    x (MPI_Put of 8 KiB to the other, MPI_Win_flush) in
 *                    a lock_all epoch; MPI_Win_free; MPI_Barrier
 *   onesided fence   fences around a put of 1 MB, a get of 1 MB and an
 *                    accumulate of 64 KiB, rank 1 0.1 s late
 *   onesided pscw    rank 0 starts, puts 1 MB and completes; rank 1 sleeps
 *                    0.1 s, posts and waits
 *   onesided lock    both lock rank 1's window exclusively, accumulate
 *                    256 KiB and unlock, rank 1 holding it 0.1 s first;
 *                    then get_accumulate and fetch_and_op in lock_all
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void run(const char *mode, int rank, int peer, char *buf, char *res);

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, peer;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  peer = 1 - rank;
  static char buf[1 << 20], res[1 << 20];
  for (int a = 1; a < argc; a++) /* each mode on a window of its own */
    run(argv[a], rank, peer, buf, res);
  MPI_Barrier(MPI_COMM_WORLD);
  printf("wtime %.9f\n", MPI_Wtime());
  MPI_Finalize();
  return 0;
}

static void run(const char *mode, int rank, int peer, char *buf, char *res) {
  char *base;
  MPI_Win win;
  if (!strcmp(mode, "repro") && rank == 1) usleep(200000);
  MPI_Win_allocate(1 << 20, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
  if (!strcmp(mode, "repro")) {
    MPI_Win_lock_all(0, win);
    for (int i = 0; i < 200; i++) {
      MPI_Put(buf, 8192, MPI_BYTE, peer, 0, 8192, MPI_BYTE, win);
      MPI_Win_flush(peer, win);
    }
    MPI_Win_unlock_all(win);
  } else if (!strcmp(mode, "fence")) {
    MPI_Win_fence(0, win);
    if (rank == 1) usleep(100000);
    MPI_Put(buf, 1000000, MPI_BYTE, peer, 0, 1000000, MPI_BYTE, win);
    MPI_Win_fence(0, win);
    MPI_Get(res, 1000000, MPI_BYTE, peer, 0, 1000000, MPI_BYTE, win);
    MPI_Accumulate(buf, 8192, MPI_DOUBLE, peer, 0, 8192, MPI_DOUBLE, MPI_SUM, win);
    MPI_Win_fence(0, win);
  } else if (!strcmp(mode, "pscw")) {
    MPI_Group world, other;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &peer, &other);
    if (rank == 0) {
      MPI_Win_start(other, 0, win);
      MPI_Put(buf, 1000000, MPI_BYTE, 1, 0, 1000000, MPI_BYTE, win);
      MPI_Win_complete(win);
    } else {
      usleep(100000);
      MPI_Win_post(other, 0, win);
      MPI_Win_wait(win);
    }
    MPI_Group_free(&other);
    MPI_Group_free(&world);
  } else if (!strcmp(mode, "lock")) {
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
    if (rank == 1) usleep(100000);
    MPI_Accumulate(buf, 32768, MPI_DOUBLE, 1, 0, 32768, MPI_DOUBLE, MPI_SUM, win);
    MPI_Win_unlock(1, win);
    MPI_Win_lock_all(0, win);
    MPI_Get_accumulate(buf, 1024, MPI_DOUBLE, res, 1024, MPI_DOUBLE, peer, 0, 1024, MPI_DOUBLE, MPI_SUM, win);
    long one = 1, old;
    MPI_Fetch_and_op(&one, &old, MPI_LONG, peer, 0, MPI_SUM, win);
    MPI_Win_flush_all(win);
    MPI_Win_unlock_all(win);
  }
  MPI_Win_free(&win);
}
