! The tracer's test program in Fortran (the mpi module): app.c's calls,
! in the same order, for its default run and its "more", "inplace" and
! "icoll" options, so that the two programs' traces compare call for call.
! It checks what the tracer's Fortran bindings hand back (statuses,
! indices from 1, requests set to MPI_REQUEST_NULL) and aborts if wrong.
program app
  use mpi
  implicit none
  integer :: r, n, right, left, it, i, k, ierr, idx, outc, done, root
  integer :: q(4), p(2), idxs(4), st(MPI_STATUS_SIZE), counts(64), displs(64)
  integer :: c3(64), d3(64), cw(64), cwin(64), dw(64), mine(64), theirs(64)
  logical :: flag
  double precision :: buf(1024), in(1024), in2(1024), rb(1024, 4), big(256)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, r, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, n, ierr)
  right = mod(r + 1, n)
  left = mod(r + n - 1, n)
  buf = 0
  do it = 1, 3
    call work(200000)
    if (r == 0) then
      call MPI_Send(buf, 100, MPI_DOUBLE_PRECISION, right, 1, MPI_COMM_WORLD, ierr)
      call MPI_Recv(in, 100, MPI_DOUBLE_PRECISION, left, 1, MPI_COMM_WORLD, st, ierr)
    else
      call MPI_Recv(in, 100, MPI_DOUBLE_PRECISION, left, 1, MPI_COMM_WORLD, st, ierr)
      call MPI_Send(buf, 100, MPI_DOUBLE_PRECISION, right, 1, MPI_COMM_WORLD, ierr)
    end if
    call expect(st(MPI_SOURCE) == left .and. st(MPI_TAG) == 1, "recv status")
    call MPI_Irecv(in, 1024, MPI_DOUBLE_PRECISION, left, 2, MPI_COMM_WORLD, q(1), ierr)
    call MPI_Irecv(in2, 1024, MPI_DOUBLE_PRECISION, right, 3, MPI_COMM_WORLD, q(2), ierr)
    call MPI_Isend(buf, 1024, MPI_DOUBLE_PRECISION, right, 2, MPI_COMM_WORLD, q(3), ierr)
    call MPI_Isend(buf, 1024, MPI_DOUBLE_PRECISION, left, 3, MPI_COMM_WORLD, q(4), ierr)
    call MPI_Waitall(4, q, MPI_STATUSES_IGNORE, ierr)
    call expect(all_null(q, 4), "waitall's requests")
    call MPI_Irecv(in, 10, MPI_INTEGER, left, 4, MPI_COMM_WORLD, q(1), ierr)
    call MPI_Send(buf, 10, MPI_INTEGER, right, 4, MPI_COMM_WORLD, ierr)
    call MPI_Wait(q(1), st, ierr)
    call expect(st(MPI_SOURCE) == left .and. q(1) == MPI_REQUEST_NULL, "wait's status")
    call MPI_Sendrecv(buf, 8, MPI_CHARACTER, right, 0, in, 8, MPI_CHARACTER, left, 0, MPI_COMM_WORLD, &
                      MPI_STATUS_IGNORE, ierr)
    call MPI_Allreduce(buf, in, 16, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  end do
  if (has("more")) then
    call MPI_Irecv(in, 4, MPI_DOUBLE_PRECISION, left, 7, MPI_COMM_WORLD, q(1), ierr)
    call MPI_Isend(buf, 4, MPI_DOUBLE_PRECISION, right, 7, MPI_COMM_WORLD, q(2), ierr)
    do k = 1, 2
      call MPI_Waitany(2, q, idx, st, ierr)
      call expect(idx >= 1 .and. idx <= 2, "waitany's index")
      call expect(q(idx) == MPI_REQUEST_NULL, "waitany's request")
    end do
    call MPI_Irecv(in, 4, MPI_DOUBLE_PRECISION, left, 8, MPI_COMM_WORLD, q(1), ierr)
    call MPI_Isend(buf, 4, MPI_DOUBLE_PRECISION, right, 8, MPI_COMM_WORLD, q(2), ierr)
    done = 0
    do while (done < 2)
      call MPI_Waitsome(2, q, outc, idxs, MPI_STATUSES_IGNORE, ierr)
      do i = 1, outc
        call expect(idxs(i) >= 1 .and. idxs(i) <= 2, "waitsome's indices")
      end do
      done = done + outc
    end do
    call MPI_Irecv(in, 4, MPI_DOUBLE_PRECISION, left, 9, MPI_COMM_WORLD, q(1), ierr)
    call MPI_Isend(buf, 4, MPI_DOUBLE_PRECISION, right, 9, MPI_COMM_WORLD, q(2), ierr)
    flag = .false.
    do while (.not. flag)
      call MPI_Testall(2, q, flag, MPI_STATUSES_IGNORE, ierr)
    end do
    call MPI_Recv_init(in, 4, MPI_DOUBLE_PRECISION, left, 10, MPI_COMM_WORLD, p(1), ierr)
    call MPI_Send_init(buf, 4, MPI_DOUBLE_PRECISION, right, 10, MPI_COMM_WORLD, p(2), ierr)
    do k = 1, 2
      call MPI_Startall(2, p, ierr)
      call MPI_Waitall(2, p, MPI_STATUSES_IGNORE, ierr)
    end do
    call MPI_Request_free(p(1), ierr)
    call MPI_Request_free(p(2), ierr)
  end if
  do i = 1, n
    counts(i) = 2
    displs(i) = 2 * (i - 1)
  end do
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_Bcast(buf, 32, MPI_DOUBLE_PRECISION, 1, MPI_COMM_WORLD, ierr)
  call MPI_Reduce(buf, in, 8, MPI_DOUBLE_PRECISION, MPI_MAX, 0, MPI_COMM_WORLD, ierr)
  call MPI_Alltoall(buf, 2, MPI_DOUBLE_PRECISION, in, 2, MPI_DOUBLE_PRECISION, MPI_COMM_WORLD, ierr)
  call MPI_Allgather(buf, 3, MPI_INTEGER, in, 3, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  call MPI_Gather(buf, 4, MPI_DOUBLE_PRECISION, in, 4, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD, ierr)
  call MPI_Scatter(buf, 4, MPI_DOUBLE_PRECISION, in, 4, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD, ierr)
  call MPI_Alltoallv(buf, counts, displs, MPI_DOUBLE_PRECISION, in, counts, displs, MPI_DOUBLE_PRECISION, &
                     MPI_COMM_WORLD, ierr)
  call MPI_Allgatherv(buf, 2, MPI_DOUBLE_PRECISION, in, counts, displs, MPI_DOUBLE_PRECISION, MPI_COMM_WORLD, ierr)
  call MPI_Gatherv(buf, 2, MPI_DOUBLE_PRECISION, in, counts, displs, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD, ierr)
  call MPI_Scatterv(buf, counts, displs, MPI_DOUBLE_PRECISION, in, 2, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD, ierr)
  call MPI_Reduce_scatter(buf, in, counts, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  call MPI_Scan(buf, in, 4, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (has("inplace")) then ! the ignored arguments zero or MPI_DATATYPE_NULL
    big = r
    do i = 1, n
      c3(i) = 3
      d3(i) = 3 * (i - 1)
    end do
    call MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, big, 3, MPI_DOUBLE_PRECISION, MPI_COMM_WORLD, ierr)
    call expect(big(3 * right + 1) == right, "the in-place allgather's data")
    call MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, big, c3, d3, MPI_DOUBLE_PRECISION, MPI_COMM_WORLD, ierr)
    call MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, big, 3, MPI_DOUBLE_PRECISION, MPI_COMM_WORLD, ierr)
    call MPI_Alltoallv(MPI_IN_PLACE, c3, d3, MPI_DATATYPE_NULL, big, c3, d3, MPI_DOUBLE_PRECISION, MPI_COMM_WORLD, ierr)
    root = 0
    if (r == root) then
      call MPI_Gather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, big, 3, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD, ierr)
      call MPI_Gatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, big, c3, d3, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD, ierr)
      call MPI_Scatter(big, 3, MPI_DOUBLE_PRECISION, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, 0, MPI_COMM_WORLD, ierr)
      call MPI_Scatterv(big, c3, d3, MPI_DOUBLE_PRECISION, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, 0, MPI_COMM_WORLD, ierr)
    else
      call MPI_Gather(big, 3, MPI_DOUBLE_PRECISION, big, 0, MPI_DATATYPE_NULL, 0, MPI_COMM_WORLD, ierr)
      call MPI_Gatherv(big, 3, MPI_DOUBLE_PRECISION, big, c3, d3, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD, ierr)
      call MPI_Scatter(big, 0, MPI_DATATYPE_NULL, big, 3, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD, ierr)
      call MPI_Scatterv(big, c3, d3, MPI_DOUBLE_PRECISION, big, 3, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD, ierr)
    end if
    call MPI_Reduce_scatter_block(MPI_IN_PLACE, big, 3, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
    big(1:3) = 1
    call MPI_Allreduce(MPI_IN_PLACE, big, 3, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
    call expect(big(1) == n, "the in-place allreduce's sum")
  end if
  if (has("icoll")) then
    do i = 1, n
      mine(i) = merge(MPI_INTEGER, MPI_DOUBLE_PRECISION, mod(r, 2) == 1)
      theirs(i) = merge(MPI_INTEGER, MPI_DOUBLE_PRECISION, mod(i - 1, 2) == 1)
      cw(i) = merge(4, 2, mod(r, 2) == 1)
      cwin(i) = merge(4, 2, mod(i - 1, 2) == 1)
      dw(i) = 16 * (i - 1)
    end do
    call MPI_Iallreduce(buf, in, 16, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, q(1), ierr)
    call work(300000)
    call MPI_Wait(q(1), MPI_STATUS_IGNORE, ierr)
    call MPI_Ibarrier(MPI_COMM_WORLD, q(1), ierr)
    call MPI_Ibcast(rb(:, 1), 32, MPI_DOUBLE_PRECISION, 1, MPI_COMM_WORLD, q(2), ierr)
    call MPI_Irecv(in2, 4, MPI_DOUBLE_PRECISION, left, 40, MPI_COMM_WORLD, q(3), ierr)
    call MPI_Isend(buf, 4, MPI_DOUBLE_PRECISION, right, 40, MPI_COMM_WORLD, q(4), ierr)
    if (mod(r, 2) == 1) then
      call MPI_Wait(q(2), MPI_STATUS_IGNORE, ierr)
      call MPI_Wait(q(1), MPI_STATUS_IGNORE, ierr)
      call MPI_Waitall(2, q(3:4), MPI_STATUSES_IGNORE, ierr)
    else
      call MPI_Waitall(4, q, MPI_STATUSES_IGNORE, ierr)
    end if
    call MPI_Ireduce(buf, rb(:, 1), 8, MPI_DOUBLE_PRECISION, MPI_MAX, 0, MPI_COMM_WORLD, q(1), ierr)
    call MPI_Ialltoall(buf, 2, MPI_DOUBLE_PRECISION, rb(:, 2), 2, MPI_DOUBLE_PRECISION, MPI_COMM_WORLD, q(2), ierr)
    call MPI_Iallgather(buf, 3, MPI_INTEGER, rb(:, 3), 3, MPI_INTEGER, MPI_COMM_WORLD, q(3), ierr)
    done = 0
    do while (done < 3)
      call MPI_Waitsome(3, q, outc, idxs, MPI_STATUSES_IGNORE, ierr)
      done = done + outc
    end do
    call MPI_Igather(buf, 4, MPI_DOUBLE_PRECISION, rb(:, 1), 4, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD, q(1), ierr)
    call MPI_Iscatter(buf, 4, MPI_DOUBLE_PRECISION, rb(:, 2), 4, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD, q(2), ierr)
    call MPI_Waitall(2, q, MPI_STATUSES_IGNORE, ierr)
    call MPI_Ialltoallv(buf, counts, displs, MPI_DOUBLE_PRECISION, rb(:, 1), counts, displs, MPI_DOUBLE_PRECISION, &
                        MPI_COMM_WORLD, q(1), ierr)
    call MPI_Iallgatherv(buf, 2, MPI_DOUBLE_PRECISION, rb(:, 2), counts, displs, MPI_DOUBLE_PRECISION, &
                         MPI_COMM_WORLD, q(2), ierr)
    call MPI_Igatherv(buf, 2, MPI_DOUBLE_PRECISION, rb(:, 3), counts, displs, MPI_DOUBLE_PRECISION, 0, &
                      MPI_COMM_WORLD, q(3), ierr)
    call MPI_Iscatterv(buf, counts, displs, MPI_DOUBLE_PRECISION, rb(:, 4), 2, MPI_DOUBLE_PRECISION, 0, &
                       MPI_COMM_WORLD, q(4), ierr)
    do k = 1, 4
      call MPI_Waitany(4, q, idx, MPI_STATUS_IGNORE, ierr)
    end do
    call MPI_Ireduce_scatter(buf, rb(:, 1), counts, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, q(1), ierr)
    call MPI_Ireduce_scatter_block(buf, rb(:, 2), 2, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, q(2), ierr)
    call MPI_Iscan(buf, rb(:, 3), 4, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, q(3), ierr)
    call MPI_Iexscan(buf, rb(:, 4), 4, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, q(4), ierr)
    call MPI_Wait(q(4), MPI_STATUS_IGNORE, ierr)
    call MPI_Waitall(3, q, MPI_STATUSES_IGNORE, ierr)
    call MPI_Alltoallw(buf, cw, dw, mine, rb(:, 1), cwin, dw, theirs, MPI_COMM_WORLD, ierr)
    call MPI_Ialltoallw(buf, cw, dw, mine, rb(:, 2), cwin, dw, theirs, MPI_COMM_WORLD, q(1), ierr)
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    call MPI_Wait(q(1), MPI_STATUS_IGNORE, ierr)
  end if
  call work(100000)
  call MPI_Finalize(ierr)

contains

  logical function has(option)
    character(*), intent(in) :: option
    character(64) :: arg
    integer :: j
    has = .false.
    do j = 1, command_argument_count()
      call get_command_argument(j, arg)
      if (arg == option) has = .true.
    end do
  end function

  logical function all_null(reqs, m)
    integer, intent(in) :: reqs(*), m
    all_null = all(reqs(1:m) == MPI_REQUEST_NULL)
  end function

  subroutine expect(ok, what)
    logical, intent(in) :: ok
    character(*), intent(in) :: what
    integer :: e
    if (.not. ok) then
      write (0, *) "app.f90: rank", r, ": wrong ", what
      call MPI_Abort(MPI_COMM_WORLD, 3, e)
    end if
  end subroutine

  subroutine work(m)
    integer, intent(in) :: m
    double precision, save :: sink
    double precision :: s
    integer :: j
    s = 0
    do j = 0, m - 1
      s = s + j * 0.5d0
    end do
    sink = s
  end subroutine
end program
