#!/bin/bash
# Streams generated traces of 10^7 to 10^9 events (a noisy, imbalanced
# 8x8 periodic stencil, 640 events an iteration, in .ktr) through
# "kairos stats" and "kairos simulate --analytic", and prints for each the
# wall time, the CPU time (user + system) and the peak resident memory:
# memory must not grow with the trace's length (issue 43).
#
# Usage: scripts/bench-stream.sh [EVENTS...]   (default: 1e7 1e8 1e9)
# Environment: KAIROS (binary, default: the README's release build), KEEP=1
# keeps the work directory (the 10^9-event trace takes about 290 MB).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
sizes=("$@"); [ ${#sizes[@]} -gt 0 ] || sizes=(1e7 1e8 1e9)
work=$(mktemp -d); [ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$work"' EXIT
kairos=${KAIROS:-}
if [ -z "$kairos" ]; then
  kairos=$work/kairos
  (cd "$here" && CGO_ENABLED=0 go build -pgo=cmd/kairos/kairos.pgo -o "$kairos" ./cmd/kairos)
fi

# measure NAME CMD...: one run; prints "wall_s cpu_s peak_MB".
measure() {
  local name=$1; shift
  /usr/bin/time -f '%e %U %S %M' -o "$work/$name.time" "$@" >"$work/$name.out" 2>"$work/$name.err" || {
    cat "$work/$name.err" >&2; exit 1; }
  awk '{printf "%8.1f %8.1f %8.0f", $1, $2+$3, $4/1024}' "$work/$name.time"
}

printf '%-6s %12s %9s | %-26s | %-26s\n' events "events read" "ktr MB" "stats: wall s, CPU s, MB" "simulate --analytic: same"
for n in "${sizes[@]}"; do
  iters=$(awk -v n="$n" 'BEGIN{printf "%d", n/640}')
  trace=$work/st-$n.ktr
  "$kairos" gen stencil2d --grid 8x8 --iterations "$iters" --noise 0.05 --imbalance 0.1 -o "$trace" >/dev/null
  mb=$(du -m "$trace" | cut -f1)
  st=$(measure "stats-$n" "$kairos" stats "$trace")
  events=$(awk '$1=="events" && NF==2 {print $2}' "$work/stats-$n.out")
  sm=$(measure "sim-$n" "$kairos" simulate --analytic "$trace" --cluster 64x1Gf,1GBps,1us)
  printf '%-6s %12s %9s | %s | %s\n' "$n" "$events" "$mb" "$st" "$sm"
  rm -f "$trace"
done
