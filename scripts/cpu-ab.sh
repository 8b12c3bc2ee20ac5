#!/bin/bash
# Compares the CPU time of two commands, interleaved: BLOCKS blocks, each
# running A five times then B five times under perf stat (mean
# task-clock, which counts every thread of the process); prints both
# means over the blocks and their ratio. For before/after figures on a
# shared, noisy host, where runs far apart in time are not comparable.
#
# Usage: scripts/cpu-ab.sh BLOCKS CMD_A... -- CMD_B...
# Needs perf (apt-get install linux-perf).
set -euo pipefail
blocks=$1; shift
a=(); b=(); side=a
for x in "$@"; do
  if [ "$x" = "--" ]; then side=b; continue; fi
  if [ $side = a ]; then a+=("$x"); else b+=("$x"); fi
done
[ ${#a[@]} -gt 0 ] && [ ${#b[@]} -gt 0 ] || { echo "usage: $0 BLOCKS CMD_A... -- CMD_B..." >&2; exit 2; }
clock() { perf stat -x, -r 5 -e task-clock "$@" 2>&1 >/dev/null | awk -F, '/task-clock/ {print $1}'; }
ta=0 tb=0
for ((i = 0; i < blocks; i++)); do
  ta=$(awk -v s="$ta" -v v="$(clock "${a[@]}")" 'BEGIN{print s+v}')
  tb=$(awk -v s="$tb" -v v="$(clock "${b[@]}")" 'BEGIN{print s+v}')
done
awk -v a="$ta" -v b="$tb" -v n="$blocks" 'BEGIN{printf "A %.2f ms  B %.2f ms  B/A %.3f\n", a/n, b/n, b/a}'
