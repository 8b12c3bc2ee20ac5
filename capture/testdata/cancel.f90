! The Fortran bindings of MPI_Cancel: each rank cancels a receive from
! any source with any tag, which MPI_Test_cancelled must confirm.
program cancel
  use mpi
  implicit none
  integer :: ierr, req, st(MPI_STATUS_SIZE)
  integer(8) :: buf
  logical :: flag
  call MPI_Init(ierr)
  call MPI_Irecv(buf, 1, MPI_INTEGER8, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, req, ierr)
  call MPI_Cancel(req, ierr)
  call MPI_Wait(req, st, ierr)
  call MPI_Test_cancelled(st, flag, ierr)
  if (.not. flag) stop 1
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_Finalize(ierr)
end program
