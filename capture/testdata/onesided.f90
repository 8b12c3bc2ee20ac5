! onesided.f90: the Fortran twin of sim/testdata/onesided.c's repro mode
! (rank 1 sleeps 0.2 s, both allocate a window, each puts 8 KiB to the
! other and flushes, 200 times, in a lock_all epoch, then frees it), and
! a collective write of 8 KiB a rank with MPI-IO, for Kairos' tracer tests.
program onesided
  use mpi
  implicit none
  integer :: ierr, rank, peer, win, fh, i
  integer(kind=MPI_ADDRESS_KIND) :: size, base, disp
  double precision :: buf(1024)
  integer :: status(MPI_STATUS_SIZE)
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  peer = 1 - rank
  buf = rank
  if (rank == 1) call sleep_seconds(0.2d0)
  size = 8192
  call MPI_Win_allocate(size, 1, MPI_INFO_NULL, MPI_COMM_WORLD, base, win, ierr)
  call MPI_Win_lock_all(0, win, ierr)
  disp = 0
  do i = 1, 200
    call MPI_Put(buf, 1024, MPI_DOUBLE_PRECISION, peer, disp, 1024, MPI_DOUBLE_PRECISION, win, ierr)
    call MPI_Win_flush(peer, win, ierr)
  end do
  call MPI_Win_unlock_all(win, ierr)
  call MPI_Win_free(win, ierr)
  call MPI_File_open(MPI_COMM_WORLD, 'onesided-f.dat', MPI_MODE_CREATE + MPI_MODE_WRONLY, MPI_INFO_NULL, fh, ierr)
  disp = rank * 8192
  call MPI_File_write_at_all(fh, disp, buf, 1024, MPI_DOUBLE_PRECISION, status, ierr)
  call MPI_File_close(fh, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_Finalize(ierr)
contains
  subroutine sleep_seconds(s)
    double precision, intent(in) :: s
    double precision :: t0
    t0 = MPI_Wtime()
    do while (MPI_Wtime() - t0 < s)
    end do
  end subroutine
end program
