! The Fortran twin of commcreate.c: rank 1 sleeps 0.2 s before
! MPI_Comm_split, rank 0 before MPI_Comm_dup, then a periodic 1-D
! Cartesian communicator, a sub-communicator of it, and a barrier.
program commcreate
  use mpi
  use iso_c_binding
  implicit none
  interface
    subroutine usleep(us) bind(C, name="usleep")
      import :: c_int
      integer(c_int), value :: us
    end subroutine
  end interface
  integer :: ierr, rank, nranks, split, dup, cart, sub
  integer :: dims(1)
  logical :: periods(1), remain(1)
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  if (rank == 1) call usleep(200000)
  call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), rank, split, ierr)
  if (rank == 0) call usleep(200000)
  call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
  dims(1) = nranks
  periods(1) = .true.
  remain(1) = .true.
  call MPI_Cart_create(dup, 1, dims, periods, .false., cart, ierr)
  call MPI_Cart_sub(cart, remain, sub, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_Comm_free(sub, ierr)
  call MPI_Comm_free(cart, ierr)
  call MPI_Comm_free(dup, ierr)
  call MPI_Comm_free(split, ierr)
  call MPI_Finalize(ierr)
end program
