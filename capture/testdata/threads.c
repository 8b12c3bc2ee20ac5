/* A program of MPI_THREAD_MULTIPLE for the tracer's test: on every rank a
 * second thread exchanges messages of tag 100 around the ring while the
 * thread that initialized MPI exchanges its own, of tag 1, and reduces. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>

enum { ROUNDS = 50 };
static int r, n;

static void *helper(void *arg) {
  double out = r, in;
  (void)arg;
  for (int i = 0; i < ROUNDS; i++)
    MPI_Sendrecv(&out, 1, MPI_DOUBLE, (r + 1) % n, 100, &in, 1, MPI_DOUBLE, (r + n - 1) % n, 100, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
  return NULL;
}

int main(int argc, char **argv) {
  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  if (provided < MPI_THREAD_MULTIPLE) {
    if (r == 0) printf("no MPI_THREAD_MULTIPLE\n");
    MPI_Finalize();
    return 0;
  }
  pthread_t t;
  pthread_create(&t, NULL, helper, NULL);
  double out = r, in, sum;
  for (int i = 0; i < ROUNDS; i++) {
    MPI_Request q[2];
    MPI_Irecv(&in, 1, MPI_DOUBLE, (r + n - 1) % n, 1, MPI_COMM_WORLD, &q[0]);
    MPI_Isend(&out, 1, MPI_DOUBLE, (r + 1) % n, 1, MPI_COMM_WORLD, &q[1]);
    MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
  }
  pthread_join(t, NULL);
  MPI_Allreduce(&out, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
