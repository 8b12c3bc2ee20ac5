/* A time-step loop without user functions, as LAMMPS traced without
 * -finstrument-functions: each of 100 steps shifts data both ways around
 * a ring (MPI_Irecv, MPI_Send, MPI_Wait, no MPI_Waitall), computes, and
 * shifts back; every 10th step rebuilds with sendrecvs instead of
 * its first exchange, every 50th ends with reductions. */
#include <mpi.h>

/* work computes n iterations (a fixed amount of work, whatever the
 * machine's load: a wall-clock spin would never end on an overloaded
 * machine shared by more ranks than cores). */
static double work(long n) {
  volatile double x = 0;
  for (long i = 0; i < n; i++) x += 1e-9 * (double)i;
  return x;
}

/* shift sends to one neighbour and receives from the other, the
 * receive posted first, as LAMMPS's forward and reverse exchanges. */
static void shift(int to, int from, double *out, double *in, int n) {
  MPI_Request rq;
  MPI_Irecv(in, n, MPI_DOUBLE, from, 0, MPI_COMM_WORLD, &rq);
  MPI_Send(out, n, MPI_DOUBLE, to, 0, MPI_COMM_WORLD);
  MPI_Wait(&rq, MPI_STATUS_IGNORE);
}

int main(int argc, char **argv) {
  int rank, size;
  double out[512] = {0}, in[512], x = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int left = (rank + size - 1) % size, right = (rank + 1) % size;
  for (int step = 0; step < 100; step++) {
    if (step % 10 == 9) {
      int n = 0, m;
      MPI_Sendrecv(&n, 1, MPI_INT, right, 1, &m, 1, MPI_INT, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Sendrecv(&n, 1, MPI_INT, left, 1, &m, 1, MPI_INT, right, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      shift(right, left, out, in, 512);
      shift(left, right, out, in, 512);
    }
    x += work(200000);
    shift(left, right, out, in, 512);
    shift(right, left, out, in, 512);
    if (step % 50 == 49)
      for (int k = 0; k < 3; k++) MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return x < 0;
}
