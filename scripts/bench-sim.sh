#!/bin/bash
# Benchmarks "kairos simulate" against SimGrid 3.32's smpirun -replay, side
# by side in one run, on the same TI trace, flat cluster (1 Gf, 125 MBps,
# 50 us) and hostfile: CPU time (user+sys) and wall time, peak memory and
# both tools' simulated times (printed to the 9 digits of SimGrid's log),
# each command run RUNS times, interleaved (Kairos, SimGrid, Kairos,
# SimGrid...), the medians shown; then Kairos' contention-free analytic
# mode, interleaved with LogGOPSim if LOGGOPSIM is set, and its error
# against the exact mode. Each tool's analytic run reads the trace in its
# own binary form, converted beforehand and not timed (Kairos' .ktr,
# LogGOPSim's schedule from txt2bin), as the exact runs both read TI.
# Beside Kairos' time per action, its engine's datings of actions per
# action (simulate --json's engine_work), work that does not depend on the
# computer: flat where only memory latency grows the time.
#
# Two sets of traces:
#   noisy     (the default) workloads that do not repeat: the generators'
#             skeletons with 5% noise and 10% imbalance (kairos gen ...
#             --noise 0.05 --imbalance 0.1), named below; the headline;
#   periodic  the perfectly periodic 2-D stencil of the earlier benchmarks
#             (1000 iterations of compute + 4 irecv + 4 isend + waitall,
#             an allreduce every 10), where repeated periods are skipped.
#
# Usage: scripts/bench-sim.sh [noisy] [NAME...]     (default: every name)
#        scripts/bench-sim.sh periodic [RANKS...]    (default: 64 256)
# Names: st64 lu64 cg64 ft64 mg64 sweep64 mw64 bt64 st3d64 st256 st1024
# st4096, and real:PATH for a trace of a real program in any format Kairos
# reads (e.g. real:/work/shared/traces/otf2/tracer-stencil4d-64), which
# the script converts to TI (kairos convert --to ti; a timed trace's
# computations at 1 Gf) and replays on the flat cluster of its ranks.
# Environment: KAIROS (binary, default: the README's release build), RUNS
# (runs of each command, default 3), SIMGRID_MAX (largest rank count
# SimGrid runs at, default 1024: it takes many minutes beyond), ITER
# (periodic: iterations, default 1000), LOGGOPSIM (a directory holding
# LogGOPSim's txt2bin and LogGOPSim binaries, built from a fetched copy of
# github.com/spcl/LogGOPSim, src/LogGOPSim: apt-get install gengetopt re2c
# libgraphviz-dev; gengetopt -F loggopsim_cmdline -i loggopsim_cmdline.ggo;
# gengetopt -F txt2bin_cmdline -i txt2bin_cmdline.ggo; re2c -o txt2bin.cpp
# txt2bin.re; g++ -O3 LogGOPSim.cpp loggopsim_cmdline.c -o LogGOPSim
# -lcgraph; g++ -O3 txt2bin.cpp txt2bin_cmdline.c -o txt2bin), KEEP=1
# keeps the work directory.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
set_=noisy
case "${1:-}" in noisy|periodic) set_=$1; shift ;; esac
runs=${RUNS:-3}
sgmax=${SIMGRID_MAX:-1024}
iter=${ITER:-1000}
lgs=${LOGGOPSIM:-}
work=$(mktemp -d); [ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$work"' EXIT
kairos=${KAIROS:-}
if [ -z "$kairos" ]; then
  kairos=$work/kairos
  (cd "$here" && CGO_ENABLED=0 go build -pgo=cmd/kairos/kairos.pgo -o "$kairos" ./cmd/kairos) # the static binary of the README
fi
command -v smpirun >/dev/null || { echo "smpirun not found (apt-get install libsimgrid-dev): Kairos figures only" >&2; sgmax=0; }

# The noisy set: name, ranks, kairos gen arguments.
noisy() {
  case $1 in
    st64) echo 64 stencil2d --grid 8x8 --iterations 1000 ;;
    lu64) echo 64 lu --ranks 64 ;;
    cg64) echo 64 cg --ranks 64 ;;
    ft64) echo 64 ft --ranks 64 ;;
    mg64) echo 64 mg --ranks 64 ;;
    sweep64) echo 64 sweep --ranks 64 ;;
    mw64) echo 64 masterworker --ranks 64 ;;
    bt64) echo 64 bt --ranks 64 ;;
    st3d64) echo 64 stencil3d --grid 4x4x4 ;;
    st256) echo 256 stencil2d --grid 16x16 --iterations 1000 ;;
    st1024) echo 1024 stencil2d --grid 32x32 --iterations 25 ;;
    st4096) echo 4096 stencil2d --grid 64x64 --iterations 25 ;;
    *) return 1 ;;
  esac
}
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
  if [ "$set_" = periodic ]; then names=(64 256); else names=(st64 lu64 cg64 ft64 mg64 sweep64 mw64 bt64 st3d64 st256 st1024 st4096); fi
fi

# platform DIR N: a flat cluster of N hosts and its hostfile in DIR.
platform() {
  cat >"$1/platform.xml" <<XML
<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <cluster id="c" prefix="node-" radical="0-$(($2-1))" suffix="" speed="1Gf" bw="125MBps" lat="50us"/>
</platform>
XML
  for ((i=0; i<$2; i++)); do echo "node-$i"; done >"$1/hostfile"
}

# run OUT CMD...: runs CMD once, appends "cpu_s wall_s peak_MB" to
# OUT.runs, leaves its output in OUT.out.
# Times are the child's rusage, to the microsecond (GNU time's %U and %S
# print hundredths: a 20 ms analytic replay read 0.02 or 0.03).
run() {
  local out=$1; shift
  python3 -c '
import resource, subprocess, sys, time
r0, t = resource.getrusage(resource.RUSAGE_CHILDREN), time.monotonic()
with open(sys.argv[1], "w") as out:
    rc = subprocess.call(sys.argv[2:], stdout=out, stderr=subprocess.STDOUT)
wall, r = time.monotonic() - t, resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = r.ru_utime + r.ru_stime - r0.ru_utime - r0.ru_stime  # only this child (a python3 shim runs others first)
print("%.4f %.4f %.1f" % (cpu, wall, r.ru_maxrss / 1024))
sys.exit(rc)' "$out.out" "$@" >>"$out.runs" || { echo "failed: $*" >&2; cat "$out.out" >&2; exit 1; }
}

# med OUT: "cpu wall MB", the median CPU and wall times and the largest
# peak memory of OUT's runs.
med() {
  local c w m
  c=$(cut -d' ' -f1 "$1.runs" | sort -n | awk '{v[NR]=$1} END{print v[int((NR+1)/2)]}')
  w=$(cut -d' ' -f2 "$1.runs" | sort -n | awk '{v[NR]=$1} END{print v[int((NR+1)/2)]}')
  m=$(cut -d' ' -f3 "$1.runs" | sort -n | tail -1)
  echo "$c $w $m"
}

kairos_time() { sed -n 's/^Simulation time [0-9.]* (\([0-9.]*\) s.*/\1/p' "$1"; }
sg_time() { sed -n 's/^\[\([0-9.]*\)\] Simulation time.*/\1/p' "$1" | tail -1; }

printf '| trace | ranks | actions | Kairos CPU s | wall s | MB | SimGrid CPU s | wall s | MB | CPU speed-up | µs/action | datings/action | simulated time (Kairos) | (SimGrid) | solver | analytic CPU s | LogGOPSim CPU s | analytic speed-up | analytic error |\n'
printf '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n'
for name in "${names[@]}"; do
  d=$work/$(echo "$name" | tr -c 'A-Za-z0-9\n' '_'); mkdir -p "$d"
  if [ "$set_" = periodic ]; then
    n=$name
    side=$(awk -v n="$n" 'BEGIN{print int(sqrt(n)+0.5)}')
    [ $((side*side)) -eq "$n" ] || { echo "ranks must be a square: $n" >&2; exit 2; }
    platform "$d" "$n"
    "$kairos" gen stencil2d --grid "${side}x${side}" --iterations "$iter" --allreduce-every 10 --periodic -o "$d/trace" --to ti >/dev/null
    desc=$d/trace plat=$d/platform.xml hf=$d/hostfile label="stencil ${side}x${side}, $iter it"
  elif [[ $name == real:* ]]; then
    src=${name#real:}
    "$kairos" convert --speed 1Gf "$src" "$d/trace" --to ti >/dev/null 2>"$d/convert.err" || { cat "$d/convert.err" >&2; exit 1; }
    n=$(wc -l <"$d/trace")
    platform "$d" "$n"
    label=$(basename "$src")
    case $label in index.txt|*.def|*.otf2|*.ti|trace) label=$(basename "$(dirname "$src")")/$label ;; esac
    desc=$d/trace plat=$d/platform.xml hf=$d/hostfile
  else
    read -r n gen <<<"$(noisy "$name")" || { echo "unknown trace $name" >&2; exit 2; }
    platform "$d" "$n"
    # shellcheck disable=SC2086
    "$kairos" gen $gen --noise 0.05 --imbalance 0.1 -o "$d/trace" --to ti >/dev/null
    desc=$d/trace plat=$d/platform.xml hf=$d/hostfile label=$name
  fi
  actions=$(sed "s|^|$(dirname "$desc")/|" "$desc" | xargs cat | wc -l)
  sg=0; [ "$n" -le "$sgmax" ] && sg=1
  "$kairos" convert "$desc" "$d/trace.ktr" >/dev/null
  if [ -n "$lgs" ]; then
    "$kairos" convert "$desc" "$d/trace.goal" >/dev/null
    "$lgs/txt2bin" -i "$d/trace.goal" -o "$d/trace.bin" >/dev/null
    rm -f "$d/trace.goal"
  fi
  sync # the traces written, so that no write-back runs during the timings
  for ((k=0; k<runs; k++)); do
    run "$d/kairos" "$kairos" simulate "$desc" --platform "$plat" --hostfile "$hf" --json
    [ $sg = 0 ] || (cd "$(dirname "$desc")" && run "$d/simgrid" smpirun -np "$n" -platform "$plat" -hostfile "$hf" -replay "$desc" \
      --log=xbt_cfg.thresh:critical --log=smpi_config.thresh:critical '--log=root.fmt:[%.9r]%e%m%n')
    run "$d/analytic" "$kairos" simulate "$d/trace.ktr" --platform "$plat" --hostfile "$hf" --analytic
    [ -z "$lgs" ] || run "$d/lgs" "$lgs/LogGOPSim" -f "$d/trace.bin"
  done
  read -r kc kw km <<<"$(med "$d/kairos")"
  kt=$(sed -n 's/.*"simulated_time": \([0-9.e+-]*\),*/\1/p' "$d/kairos.out" | head -1)
  kt=$(awk -v t="$kt" 'BEGIN{printf "%.9f", t}')
  solver=$(sed -n 's/.*"solver": "\([a-z]*\)".*/\1/p' "$d/kairos.out" | head -1)
  skipped=$(sed -n 's/.*"skipped_periods": \([0-9]*\).*/\1/p' "$d/kairos.out" | head -1)
  [ "${skipped:-0}" = 0 ] || solver="$solver, $skipped periods skipped"
  per=$(awk -v c="$kc" -v a="$actions" 'BEGIN{printf "%.2f", c/a*1e6}')
  dated=$(sed -n 's/.*"datings": \([0-9]*\).*/\1/p' "$d/kairos.out" | head -1)
  dated=$(awk -v d="${dated:-0}" -v a="$actions" 'BEGIN{printf "%.2f", d/a}') # the engine's work an action (engine_work)
  sc=- sw=- sm=- st=- ratio=-
  if [ $sg = 1 ]; then
    read -r sc sw sm <<<"$(med "$d/simgrid")"
    st=$(sg_time "$d/simgrid.out")
    ratio=$(awk -v a="$sc" -v b="$kc" 'BEGIN{printf "%.1f×", a/b}')
  fi
  read -r ac _ _ <<<"$(med "$d/analytic")"
  at=$(kairos_time "$d/analytic.out")
  aerr=$(awk -v a="$at" -v e="$kt" 'BEGIN{printf "%+.2f%%", (a-e)/e*100}')
  lc=- lratio=-
  if [ -n "$lgs" ]; then
    read -r lc _ _ <<<"$(med "$d/lgs")"
    lratio=$(awk -v a="$lc" -v b="$ac" 'BEGIN{printf "%.1f×", a/b}')
  fi
  printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' \
    "$label" "$n" "$actions" "$kc" "$kw" "$km" "$sc" "$sw" "$sm" "$ratio" "$per" "$dated" "$kt" "$st" "$solver" "$ac" "$lc" "$lratio" "$aerr"
  rm -f "$d/trace.bin"
done
