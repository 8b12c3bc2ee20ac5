! statuserr.f90: a completion leaves a status's MPI_ERROR field alone.
!
! MPI sets MPI_ERROR only where a call that completes several requests
! returns MPI_ERR_IN_STATUS; a program may check that the other calls kept
! it (MPICH's f77/pt2pt/mprobef does). Rank 0 sends three messages; rank 1
! puts a mark in each status's MPI_ERROR and receives them by MPI_Mprobe
! and MPI_Mrecv, MPI_Recv, and MPI_Irecv and MPI_Wait, then counts the
! statuses whose mark changed; rank 0 prints "marks kept" if none did.
! (MPICH's MPI_Probe and MPI_Waitall, and Open MPI's MPI_Waitall, set the
! field themselves.)
program statuserr
  implicit none
  include 'mpif.h'
  integer, parameter :: mark = 12345
  integer :: rank, ierr, msg, bad, req, buf(4), i
  integer :: s1(MPI_STATUS_SIZE), s2(MPI_STATUS_SIZE)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  buf = 7
  bad = 0
  if (rank == 0) then
    do i = 1, 3
      call MPI_Send(buf, 4, MPI_INTEGER, 1, i, MPI_COMM_WORLD, ierr)
    end do
  else if (rank == 1) then
    s1(MPI_ERROR) = mark
    s2(MPI_ERROR) = mark
    call MPI_Mprobe(0, 1, MPI_COMM_WORLD, msg, s1, ierr)
    call MPI_Mrecv(buf, 4, MPI_INTEGER, msg, s2, ierr)
    if (s1(MPI_ERROR) /= mark) bad = bad + 1
    if (s2(MPI_ERROR) /= mark) bad = bad + 1
    s1(MPI_ERROR) = mark
    s2(MPI_ERROR) = mark
    call MPI_Recv(buf, 4, MPI_INTEGER, 0, 2, MPI_COMM_WORLD, s2, ierr)
    if (s2(MPI_ERROR) /= mark) bad = bad + 1
    call MPI_Irecv(buf, 4, MPI_INTEGER, 0, 3, MPI_COMM_WORLD, req, ierr)
    call MPI_Wait(req, s1, ierr)
    if (s1(MPI_ERROR) /= mark) bad = bad + 1
  end if
  if (rank == 0) then
    call MPI_Reduce(MPI_IN_PLACE, bad, 1, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  else
    call MPI_Reduce(bad, i, 1, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  end if
  if (rank == 0) then
    if (bad == 0) then
      print *, 'marks kept'
    else
      print *, bad, ' marks changed'
    end if
  end if
  call MPI_Finalize(ierr)
end program statuserr
