#!/bin/bash
# Benchmarks "kairos simulate" against SimGrid 3.32's smpirun -replay on the
# periodic 2-D stencil (1000 iterations of compute + 4 irecv + 4 isend +
# waitall, an allreduce every 10), in the same run: wall time, peak memory,
# the simulated times (which must be identical) and the speed ratio; then
# Kairos with SimGrid's own max-min re-solves (kairos/incremental:no), in
# its contention-free analytic mode, and LogGOPSim if LOGGOPSIM is set.
#
# Usage: scripts/bench-sim.sh [RANKS...]        (default: 64 256 1024 4096)
# Environment: KAIROS (binary, default: go build ./cmd/kairos), ITER (1000),
# LOGGOPSIM (see below: also runs LogGOPSim on the trace),
# RUNS (runs of each command, the median time is shown; default 3),
# SIMGRID_MAX (largest rank count SimGrid is run at, default 256: SimGrid
# takes minutes beyond), KEEP=1 keeps the work directory.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
ranks=("$@"); [ ${#ranks[@]} -gt 0 ] || ranks=(64 256 1024 4096)
iter=${ITER:-1000}
sgmax=${SIMGRID_MAX:-256}
runs=${RUNS:-3}
work=$(mktemp -d); [ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$work"' EXIT
kairos=${KAIROS:-}
if [ -z "$kairos" ]; then
  kairos=$work/kairos
  (cd "$here" && CGO_ENABLED=0 go build -o "$kairos" ./cmd/kairos) # the static binary of the README
fi
# LOGGOPSIM: a directory holding LogGOPSim's txt2bin and LogGOPSim
# binaries, to run it too (built from github.com/spcl/LogGOPSim, src/LogGOPSim:
# apt-get install gengetopt re2c libgraphviz-dev; gengetopt -F
# loggopsim_cmdline -i loggopsim_cmdline.ggo; gengetopt -F txt2bin_cmdline
# -i txt2bin_cmdline.ggo; re2c -o txt2bin.cpp txt2bin.re; g++ -O3
# LogGOPSim.cpp loggopsim_cmdline.c -o LogGOPSim -lcgraph; g++ -O3
# txt2bin.cpp txt2bin_cmdline.c -o txt2bin).
lgs=${LOGGOPSIM:-}
command -v smpirun >/dev/null || { echo "smpirun not found (apt-get install libsimgrid-dev): Kairos figures only" >&2; sgmax=0; }

# measure OUT CMD...: runs CMD $RUNS times, leaves "wall_s peak_MB" (the
# median wall time, to the millisecond, and the largest peak resident
# memory) in OUT.tm and the last run's output in OUT.out.
measure() {
  local out=$1; shift
  rm -f "$out.runs"
  for ((k=0; k<runs; k++)); do
    local t0 t1
    t0=$(date +%s%N)
    /usr/bin/time -f '%M' -o "$out.time" "$@" >"$out.out" 2>&1
    t1=$(date +%s%N)
    echo "$(( (t1-t0)/1000000 )) $(cat "$out.time")" >>"$out.runs"
  done
  sort -n "$out.runs" | awk '{w[NR]=$1; if ($2>m) m=$2} END{printf "%.3f %.1f\n", w[int((NR+1)/2)]/1000, m/1024}' >"$out.tm"
}

printf '%-6s %-10s %-10s | %-22s %9s %9s | %9s %9s | %8s\n' ranks grid actions "simulated time (s)" "Kairos s" "Kairos MB" "SimGrid s" "SimGrid MB" "speed-up"
for n in "${ranks[@]}"; do
  side=$(awk -v n="$n" 'BEGIN{s=int(sqrt(n)+0.5); print s}')
  [ $((side*side)) -eq "$n" ] || { echo "ranks must be a square: $n" >&2; exit 2; }
  d=$work/$n; mkdir -p "$d"
  cat >"$d/platform.xml" <<XML
<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <cluster id="c" prefix="node-" radical="0-$((n-1))" suffix="" speed="1Gf" bw="125MBps" lat="50us"/>
</platform>
XML
  for ((i=0; i<n; i++)); do echo "node-$i"; done >"$d/hostfile"
  "$kairos" gen stencil2d --grid "${side}x${side}" --iterations "$iter" --allreduce-every 10 --periodic -o "$d/stencil" --to ti >/dev/null
  actions=$(cat "$d"/stencil_files/*.ti | wc -l)
  sync # the trace written, so that no write-back runs during the timings
  measure "$d/kairos" "$kairos" simulate "$d/stencil" --platform "$d/platform.xml" --hostfile "$d/hostfile"
  kt=$(sed -n 's/^Simulation time [0-9.]* (\([0-9.]*\) s.*/\1/p' "$d/kairos.out")
  read -r kw km <"$d/kairos.tm"
  sw=-; sm=-; st=-; ratio=-
  if [ "$n" -le "$sgmax" ]; then
    (cd "$d" && measure "$d/simgrid" smpirun -np "$n" -platform platform.xml -hostfile hostfile -replay stencil \
      --log=xbt_cfg.thresh:critical --log=smpi_config.thresh:critical '--log=root.fmt:[%.9r]%e%m%n')
    st=$(sed -n 's/^\[\([0-9.]*\)\] Simulation time.*/\1/p' "$d/simgrid.out" | tail -1)
    read -r sw sm <"$d/simgrid.tm"
    ratio=$(awk -v a="$sw" -v b="$kw" 'BEGIN{printf "%.1fx", a/b}')
  fi
  printf '%-6s %-10s %-10s | %-10s %-11s %9s %9s | %9s %9s | %8s\n' "$n" "${side}x${side}" "$actions" "$kt" "${st:+sg=$st}" "$kw" "$km" "$sw" "$sm" "$ratio"
  # SimGrid's own max-min re-solves (--cfg kairos/incremental:no) on the same trace.
  measure "$d/sgsolver" "$kairos" simulate "$d/stencil" --platform "$d/platform.xml" --hostfile "$d/hostfile" --cfg kairos/incremental:no
  read -r gw gm <"$d/sgsolver.tm"
  gt=$(sed -n 's/^Simulation time [0-9.]* (\([0-9.]*\) s.*/\1/p' "$d/sgsolver.out")
  gratio=-
  [ "$sw" = - ] || gratio=$(awk -v a="$sw" -v b="$gw" 'BEGIN{printf "%.1fx", a/b}')
  printf '%-6s %-10s %-10s | %-22s %9s %9s | %19s | %8s (SimGrid'"'"'s solver)\n' "$n" "" "" "$gt" "$gw" "$gm" "" "$gratio"
  # The contention-free analytic mode on the same trace.
  measure "$d/analytic" "$kairos" simulate "$d/stencil" --platform "$d/platform.xml" --hostfile "$d/hostfile" --analytic
  read -r aw am <"$d/analytic.tm"
  at=$(sed -n 's/^Simulation time [0-9.]* (\([0-9.]*\) s.*/\1/p' "$d/analytic.out")
  printf '%-6s %-10s %-10s | %-22s %9s %9s | (analytic mode)\n' "$n" "" "" "$at" "$aw" "$am"
  # LogGOPSim on the same trace, converted to a GOAL schedule and then to
  # its binary form (not timed, as the issue's figures).
  if [ -n "$lgs" ]; then
    "$kairos" convert "$d/stencil" "$d/stencil.goal"
    "$lgs/txt2bin" -i "$d/stencil.goal" -o "$d/stencil.bin" >/dev/null
    rm -f "$d/stencil.goal"
    measure "$d/lgs" "$lgs/LogGOPSim" -f "$d/stencil.bin"
    read -r lw lm <"$d/lgs.tm"
    lt=$(sed -n 's/^Maximum finishing time at host [0-9]*: [0-9]* (\([0-9.]*\) s)/\1/p' "$d/lgs.out")
    lratio=$(awk -v a="$lw" -v b="$aw" 'BEGIN{printf "%.2fx", a/b}')
    printf '%-6s %-10s %-10s | %-22s %9s %9s | %19s | %8s (LogGOPSim; analytic mode %s faster)\n' "$n" "" "" "lgs=$lt" "$lw" "$lm" "" "" "$lratio"
  fi
  rm -f "$d/stencil.bin"
done
