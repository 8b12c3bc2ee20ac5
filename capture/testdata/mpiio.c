/*
 * mpiio.c: collective and independent MPI-IO of every rank into one
 * file, for Kairos' tracer tests: MPI_File_open, set_view, write_all
 * (1 MiB a rank), write_at, iwrite and MPI_Wait, a split collective
 * read, read_at_all, sync, seek and close, around a barrier.
 *
 *   mpiio FILE
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { N = 1 << 17 }; /* doubles a rank: 1 MiB */

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  double *buf = malloc(N * sizeof *buf);
  for (int i = 0; i < N; i++) buf[i] = rank + i;
  MPI_File fh;
  MPI_File_open(MPI_COMM_WORLD, argc > 1 ? argv[1] : "mpiio.dat", MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
  MPI_File_set_view(fh, (MPI_Offset)rank * N * sizeof(double), MPI_DOUBLE, MPI_DOUBLE, "native", MPI_INFO_NULL);
  MPI_File_write_all(fh, buf, N, MPI_DOUBLE, MPI_STATUS_IGNORE);
  MPI_File_write_at(fh, 0, buf, 1024, MPI_DOUBLE, MPI_STATUS_IGNORE);
  MPI_Request req;
  MPI_File_iwrite(fh, buf, 4096, MPI_DOUBLE, &req);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_File_write_at_all_begin(fh, 0, buf, N / 2, MPI_DOUBLE);
  MPI_File_write_at_all_end(fh, buf, MPI_STATUS_IGNORE);
  MPI_File_read_at_all(fh, 0, buf, N / 4, MPI_DOUBLE, MPI_STATUS_IGNORE);
  MPI_File_seek(fh, 0, MPI_SEEK_SET);
  MPI_File_sync(fh);
  MPI_File_close(&fh);
  MPI_Barrier(MPI_COMM_WORLD);
  free(buf);
  MPI_Finalize();
  return 0;
}
