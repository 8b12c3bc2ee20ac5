#!/bin/sh
# The in-situ reduction's memory against iterations (Open MPI, 16 ranks,
# oversubscribed): capture/testdata/halo.c, 16x16 blocks, 100 and 10,000
# iterations, not traced, traced in full, and traced with
# KAIROS_TRACE_REDUCE=callpath and acurdion: each rank's maximum resident
# set (the largest over the ranks, /usr/bin/time's %M), the largest folded
# trace and loop structure the ranks kept and the bytes they wrote (the
# comments of reduced.txt), and the bytes of the trace's directory.
#   scripts/bench-insitu-memory.sh LIB HALO    (libkairos_trace.so and halo, built with mpicc)
set -e
LIB=$(realpath "$1") HALO=$(realpath "$2")
mkdir -p /tmp/kairos-bench-insitu-mem && cd /tmp/kairos-bench-insitu-mem
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for it in 100 10000; do
  for mode in none full callpath acurdion; do
    rm -rf t
    pre="" red=$mode
    [ $mode = none ] || pre="-x LD_PRELOAD=$LIB"
    [ $mode != full ] || red=""
    rss=$(mpirun --oversubscribe -np 16 $pre -x KAIROS_TRACE=t -x KAIROS_TRACE_REDUCE=$red \
      /usr/bin/time -f "RSS %M" $HALO $it 16 2>&1 | awk '/^RSS/ {print $2}' | sort -n | tail -1)
    bytes=0
    [ ! -d t ] || bytes=$(du -sb t | cut -f1)
    echo "iterations=$it $mode: max RSS ${rss} KiB, trace directory $bytes bytes"
    [ ! -f t/reduced.txt ] || grep -e 'folded' -e 'bytes written' -e 'loop structures' t/reduced.txt
  done
done
