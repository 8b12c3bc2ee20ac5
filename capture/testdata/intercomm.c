/* Intercommunicators for the tracer's tests: the even and odd ranks of
 * MPI_COMM_WORLD joined by MPI_Intercomm_create exchange messages across
 * it (rank i of one half with rank i of the other: world ranks 2i and
 * 2i+1) and meet in collectives across it (a broadcast from the even
 * half's first rank, an allreduce, a barrier), then rank 0 spawns two
 * more processes of this program, which
 * form their own MPI_COMM_WORLD: it sends one of them a message over the
 * parent intercommunicator, receives the answer, and the children
 * exchange one message between themselves; then parents and children
 * merge the intercommunicator (MPI_Intercomm_merge), world rank 0 sends
 * the first child a message on the merged communicator, and all of them
 * meet in a barrier, an allreduce and a non-blocking allreduce there.
 *
 *   intercomm            (run with an even number of ranks)
 *   intercomm child      (as spawned)
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

/* together: collectives on a communicator of parents and children */
static void together(MPI_Comm all, int *buf) {
  MPI_Request r;
  MPI_Barrier(all);
  MPI_Allreduce(MPI_IN_PLACE, buf, 4, MPI_INT, MPI_SUM, all);
  MPI_Iallreduce(MPI_IN_PLACE, buf + 4, 4, MPI_INT, MPI_SUM, all, &r);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size, buf[256] = {0};
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm parent;
  MPI_Comm_get_parent(&parent);
  if (parent != MPI_COMM_NULL) { /* a spawned child */
    if (rank == 0) {
      MPI_Recv(buf, 256, MPI_INT, 0, 1, parent, MPI_STATUS_IGNORE);
      MPI_Send(buf, 16, MPI_INT, 0, 2, parent);
      MPI_Send(buf, 64, MPI_INT, 1, 3, MPI_COMM_WORLD);
    } else {
      MPI_Recv(buf, 256, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Comm all;
    MPI_Intercomm_merge(parent, 1, &all);
    int parents;
    MPI_Comm_remote_size(parent, &parents);
    if (rank == 0) MPI_Recv(buf, 256, MPI_INT, 0, 4, all, MPI_STATUS_IGNORE);
    together(all, buf);
    MPI_Comm_free(&all);
    MPI_Comm_disconnect(&parent);
    MPI_Finalize();
    return 0;
  }
  MPI_Comm half, inter;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
  /* the other half's leader is world rank 1 for the evens, 0 for the odds */
  MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 == 0 ? 1 : 0, 99, &inter);
  int me;
  MPI_Comm_rank(half, &me);
  for (int i = 0; i < 3; i++) {
    MPI_Request r[2];
    MPI_Irecv(buf, 128, MPI_INT, me, 5, inter, &r[0]);
    MPI_Isend(buf + 128, 100 + rank % 2, MPI_INT, me, 5, inter, &r[1]);
    MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
    MPI_Sendrecv(buf, 10, MPI_INT, me, 6, buf + 128, 10, MPI_INT, me, 6, inter, MPI_STATUS_IGNORE);
  }
  MPI_Bcast(buf, 4, MPI_INT, rank % 2 ? 0 : me == 0 ? MPI_ROOT : MPI_PROC_NULL, inter);
  MPI_Allreduce(buf, buf + 8, 4, MPI_INT, MPI_SUM, inter);
  MPI_Barrier(inter);
  MPI_Comm_free(&inter);
  MPI_Comm_free(&half);
  MPI_Comm child;
  char *args[] = {"child", NULL};
  MPI_Comm_spawn(argv[0], args, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &child, MPI_ERRCODES_IGNORE);
  if (rank == 0) {
    MPI_Send(buf, 32, MPI_INT, 0, 1, child);
    MPI_Recv(buf, 256, MPI_INT, 0, 2, child, MPI_STATUS_IGNORE);
  }
  MPI_Comm all;
  MPI_Intercomm_merge(child, 0, &all); /* the parents first: the first child is rank size */
  if (rank == 0) MPI_Send(buf, 8, MPI_INT, size, 4, all);
  together(all, buf);
  MPI_Comm_free(&all);
  MPI_Comm_disconnect(&child);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("intercomm done\n");
  MPI_Finalize();
  return 0;
}
