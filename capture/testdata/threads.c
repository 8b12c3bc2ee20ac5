/* A program calling MPI from two threads, for the tracer's test. On every
 * rank a second thread exchanges messages of tag 100 around the ring, and
 * the thread that initialized MPI exchanges its own, of tag 1, and
 * reduces. The thread level is the first argument:
 * - multiple (the default): both threads at once;
 * - serialized: the second thread while the first waits for it;
 * - funneled: the same, which breaks FUNNELED's promise as PT-Scotch's
 *   threads do (the first thread is in no call meanwhile, so the run is
 *   safe whatever MPI does). */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

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
  int want = MPI_THREAD_MULTIPLE, provided;
  if (argc > 1 && strcmp(argv[1], "serialized") == 0) want = MPI_THREAD_SERIALIZED;
  if (argc > 1 && strcmp(argv[1], "funneled") == 0) want = MPI_THREAD_FUNNELED;
  MPI_Init_thread(&argc, &argv, want, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  if (provided != want) {
    if (r == 0) printf("thread level %d asked, %d provided\n", want, provided);
    MPI_Finalize();
    return 0;
  }
  pthread_t t;
  if (want == MPI_THREAD_MULTIPLE) pthread_create(&t, NULL, helper, NULL);
  double out = r, in, sum;
  for (int i = 0; i < ROUNDS; i++) {
    MPI_Request q[2];
    MPI_Irecv(&in, 1, MPI_DOUBLE, (r + n - 1) % n, 1, MPI_COMM_WORLD, &q[0]);
    MPI_Isend(&out, 1, MPI_DOUBLE, (r + 1) % n, 1, MPI_COMM_WORLD, &q[1]);
    MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
  }
  if (want != MPI_THREAD_MULTIPLE) pthread_create(&t, NULL, helper, NULL);
  pthread_join(t, NULL);
  MPI_Allreduce(&out, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
