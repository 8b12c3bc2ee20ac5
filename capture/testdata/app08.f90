! A small program of the mpi_f08 module for the tracer's test: a ring of
! non-blocking messages, a sendrecv from any source (its status checked),
! an allreduce, one in place, and a non-blocking one.
program app08
  use mpi_f08
  implicit none
  integer :: r, n
  double precision :: buf(100), in(100), x(3)
  type(MPI_Request) :: q(2)
  type(MPI_Status) :: st
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, r)
  call MPI_Comm_size(MPI_COMM_WORLD, n)
  buf = 1
  call MPI_Irecv(in, 100, MPI_DOUBLE_PRECISION, mod(r + n - 1, n), 1, MPI_COMM_WORLD, q(1))
  call MPI_Isend(buf, 100, MPI_DOUBLE_PRECISION, mod(r + 1, n), 1, MPI_COMM_WORLD, q(2))
  call MPI_Waitall(2, q, MPI_STATUSES_IGNORE)
  call MPI_Sendrecv(buf, 5, MPI_DOUBLE_PRECISION, mod(r + 1, n), 3, in, 5, MPI_DOUBLE_PRECISION, MPI_ANY_SOURCE, 3, &
                    MPI_COMM_WORLD, st)
  if (st%MPI_SOURCE /= mod(r + n - 1, n)) call MPI_Abort(MPI_COMM_WORLD, 3)
  call MPI_Allreduce(buf, in, 10, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
  x = 1
  call MPI_Allreduce(MPI_IN_PLACE, x, 3, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
  if (x(1) /= n) call MPI_Abort(MPI_COMM_WORLD, 3)
  call MPI_Iallreduce(buf, in, 4, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, q(1))
  call MPI_Wait(q(1), st)
  call MPI_Finalize()
end program
