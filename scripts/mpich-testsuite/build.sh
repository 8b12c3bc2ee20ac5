#!/bin/bash
# build.sh MPI: see README.md (paths under /tmp/mpichB)
# build.sh MPI(mpich|ompi): the harness libraries for one MPI
set -e
M=$1; S=/tmp/mpichB/src/test/mpi; B=/tmp/mpichB/build/$M; mkdir -p $B/util
if [ $M = mpich ]; then CC=mpicc.mpich; FC=mpif90.mpich; else CC=mpicc; FC=mpifort; fi
CF="-O1 -w -I/tmp/mpichB/conf -I$S/include -I$S/dtpools/include"
cd $B/util
for f in mtest mtest_common mtest_single dtypes; do $CC $CF -c $S/util/$f.c -o $f.o; done
$CC $CF -DMTEST_USE_THREAD -c $S/util/mtest_thread.c -o mtest_thread.o
$CC $CF -DMTEST_USE_THREAD -c $S/util/mtest.c -o mtest_t.o
$CC $CF -DMTEST_USE_THREAD -c $S/util/mtest_common.c -o mtest_common_t.o
for f in $S/dtpools/src/*.c; do $CC $CF -I$S/dtpools/include -c $f -o dtp_$(basename $f .c).o || true; done
$CC $CF -c $S/util/run_mpitests.c -o run_mpitests.o  # main() of the tests that define run()
rm -f *.a
ar rcs libmtest_single.a mtest.o mtest_common.o mtest_single.o dtypes.o dtp_*.o
ar rcs libmtest_thread.a mtest_t.o mtest_common_t.o mtest_thread.o dtypes.o dtp_*.o
$FC -w -c $S/util/mtest_f77.f -o mtest_f77.o -std=legacy -fallow-argument-mismatch || $FC -w -c $S/util/mtest_f77.f -o mtest_f77.o
$FC -w -c $S/util/mtest_f90.f90 -o mtest_f90.o -fallow-argument-mismatch || $FC -w -c $S/util/mtest_f90.f90 -o mtest_f90.o
ls
