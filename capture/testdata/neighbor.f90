! The Fortran twin of neighbor.c, for the tracer's tests: the same calls
! through the Fortran bindings, whose trace must be the C program's.
!
!   neighbor_f            (any number of ranks)
program neighbor
  use mpi
  implicit none
  integer :: ierr, nranks, rank, grid, step, i, r
  integer :: dims(2) = 0, counts(4) = 1000, types(4)
  integer :: sc(4) = [1, 2, 3, 4], rc(4) = [2, 1, 4, 3], sd(4) = [0, 1, 3, 6]
  integer(kind=MPI_ADDRESS_KIND) :: displs(4)
  logical :: periods(2) = .true.
  double precision :: out(4000), in(4000), mine(1000), theirs(4000), x, total

  call MPI_Init(ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  call MPI_Dims_create(nranks, 2, dims, ierr)
  call MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, .false., grid, ierr)
  do i = 1, 4000
    out(i) = i - 1
  end do
  do i = 1, 1000
    mine(i) = i - 1
  end do
  total = 0
  do step = 1, 10
    call MPI_Neighbor_alltoall(out, 1000, MPI_DOUBLE_PRECISION, in, 1000, MPI_DOUBLE_PRECISION, grid, ierr)
    call MPI_Ineighbor_allgather(mine, 1000, MPI_DOUBLE_PRECISION, theirs, 1000, MPI_DOUBLE_PRECISION, grid, r, ierr)
    do i = 1, 1000
      mine(i) = mine(i) * 0.5d0 + out(i) ! overlapped
    end do
    call MPI_Wait(r, MPI_STATUS_IGNORE, ierr)
    x = in(1) + theirs(1)
    call MPI_Allreduce(x, total, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  end do
  do i = 1, 4
    displs(i) = (i - 1) * 8000
    types(i) = MPI_DOUBLE_PRECISION
  end do
  call MPI_Neighbor_alltoallw(out, counts, displs, types, in, counts, displs, types, grid, ierr)
  call MPI_Neighbor_alltoallv(out, sc, sd, MPI_DOUBLE_PRECISION, in, rc, sd, MPI_DOUBLE_PRECISION, grid, ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  if (rank == 0) print '(a, g0)', 'neighbor done ', total
  call MPI_Comm_free(grid, ierr)
  call MPI_Finalize(ierr)
end program neighbor
