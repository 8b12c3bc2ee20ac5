#!/bin/sh
# The in-situ reduction's cost at 2 to 64 ranks (Open MPI, oversubscribed):
# capture/testdata/halo.c, 20 iterations of 32x32 blocks, traced reduced,
# traced in full, and not traced; the reduction's per-level figures are the
# comments of reduced.txt. With METHOD (acurdion, acurdion2, reference), the
# reduced runs only, with that method; NPS chooses the numbers of ranks.
#   scripts/bench-insitu.sh LIB HALO [METHOD]   (libkairos_trace.so and halo, built with mpicc)
set -e
LIB=$(realpath "$1") HALO=$(realpath "$2") METHOD=${3:-callpath}
mkdir -p /tmp/kairos-bench-insitu && cd /tmp/kairos-bench-insitu
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for np in ${NPS:-2 4 8 16 32 64}; do
  rm -rf r$np f$np
  /usr/bin/time -f "np=$np reduce wall %e s user %U sys %S" mpirun --oversubscribe -np $np -x LD_PRELOAD=$LIB -x KAIROS_TRACE=r$np -x KAIROS_TRACE_REDUCE=$METHOD $HALO 20 32 >/dev/null
  if [ "$METHOD" != callpath ]; then
    grep '^#' r$np/reduced.txt | tail -n +3
    continue
  fi
  /usr/bin/time -f "np=$np full   wall %e s user %U sys %S" mpirun --oversubscribe -np $np -x LD_PRELOAD=$LIB -x KAIROS_TRACE=f$np $HALO 20 32 >/dev/null
  /usr/bin/time -f "np=$np none   wall %e s user %U sys %S" mpirun --oversubscribe -np $np $HALO 20 32 >/dev/null
  grep '^#' r$np/reduced.txt | tail -n +3
  du -sb r$np f$np
done
