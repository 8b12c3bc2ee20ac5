/*
 * skew.c: a test shim, preloaded before the tracer, that makes each rank's
 * CLOCK_REALTIME wrong as unsynchronized nodes' clocks are: rank r (Open
 * MPI's OMPI_COMM_WORLD_RANK) reads t + r*SKEW + r*DRIFT*(t - EPOCH), SKEW
 * and EPOCH nanoseconds and DRIFT from KAIROS_TEST_SKEW, KAIROS_TEST_EPOCH
 * and KAIROS_TEST_DRIFT; and puts each rank on a node of its own.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <mpi.h>
#include <time.h>

int clock_gettime(clockid_t id, struct timespec *ts) {
  static int (*real)(clockid_t, struct timespec *);
  static int rank = -1;
  static double skew, drift;
  static int64_t epoch;
  if (!real) {
    real = (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT, "clock_gettime");
    const char *r = getenv("OMPI_COMM_WORLD_RANK"), *s = getenv("KAIROS_TEST_SKEW"),
               *d = getenv("KAIROS_TEST_DRIFT"),
               *e = getenv("KAIROS_TEST_EPOCH");
    rank = r ? atoi(r) : 0;
    skew = s ? atof(s) : 0;
    drift = d ? atof(d) : 0;
    epoch = e ? atoll(e) : 0;
  }
  int err = real(id, ts);
  if (err != 0 || id != CLOCK_REALTIME || rank <= 0) return err;
  int64_t t = (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec;
  t += (int64_t)(rank * skew + rank * drift * (double)(t - epoch));
  ts->tv_sec = t / 1000000000;
  ts->tv_nsec = t % 1000000000;
  return 0;
}

/* Each rank is a node of its own, as ranks whose clocks differ are: the
 * tracer's MPI_COMM_TYPE_SHARED split, by which the ranks on rank 0's node
 * take its clock unmeasured, finds each rank alone. */
int PMPI_Comm_split_type(MPI_Comm comm, int type, int key, MPI_Info info, MPI_Comm *newcomm) {
  int r;
  (void)type, (void)info;
  PMPI_Comm_rank(comm, &r);
  return PMPI_Comm_split(comm, r, key, newcomm);
}
