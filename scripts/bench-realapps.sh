#!/bin/bash
# Measures what tracing costs real applications (BENCHMARKS.md, "Real
# applications recorded by the tracer"): each application runs untraced,
# traced in TI and traced in OTF2, the three interleaved R times, under
# Open MPI on 4 ranks (melt8: 8); it prints wall and CPU time (user+sys of
# mpirun and its ranks) per run, and the trace sizes.
#
# Usage: scripts/bench-realapps.sh [APP...]
#   APP: melt4 melt8 peptide4 qe4 hpcc4 (default: melt4 melt8 peptide4 qe4)
# Environment: R (rounds, default 2), KAIROS (binary, default: the README's
# release build), KEEP=1 keeps the work directory.
# Needs mpicc, mpirun, libotf2-trace-dev and the Debian packages lammps,
# lammps-examples, quantum-espresso, quantum-espresso-data, hpcc.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
apps=("$@"); [ ${#apps[@]} -gt 0 ] || apps=(melt4 melt8 peptide4 qe4)
rounds=${R:-2}
work=$(mktemp -d); [ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$work"' EXIT
kairos=${KAIROS:-}
if [ -z "$kairos" ]; then
  kairos=$work/kairos
  (cd "$here" && CGO_ENABLED=0 go build -pgo=cmd/kairos/kairos.pgo -o "$kairos" ./cmd/kairos)
fi
"$kairos" tracer -o "$work/kt.c"
mpicc -O2 -shared -fPIC -DKAIROS_OTF2 -o "$work/libkt.so" "$work/kt.c" -lotf2
ex=/usr/share/lammps/examples

# setup APP DIR: writes APP's input into DIR and prints "NP PROGRAM ARGS...".
setup() {
  case $1 in
  melt4|melt8)
    cp "$ex/melt/in.melt" "$2/"
    echo "${1#melt} lmp -in in.melt -log none -screen none" ;;
  peptide4)
    cp "$ex/peptide/in.peptide" "$ex/peptide/data.peptide" "$2/"
    echo "4 lmp -in in.peptide -log none -screen none" ;;
  qe4)
    cp "$here/capture/testdata/si.scf.in" "$2/"
    echo "4 pw.x -nk 2 -in si.scf.in" ;;
  hpcc4)
    cp /usr/share/doc/hpcc/examples/_hpccinf.txt "$2/hpccinf.txt"
    echo "4 hpcc" ;;
  *) echo "unknown application $1" >&2; exit 2 ;;
  esac
}

printf '%-9s %-6s %5s %10s %10s %10s\n' app mode round wall_s cpu_s trace_MB
for app in "${apps[@]}"; do
  for round in $(seq "$rounds"); do
    for mode in plain ti otf2; do
      d=$work/$app-$mode-$round
      mkdir -p "$d"
      read -r np cmd < <(setup "$app" "$d")
      env=()
      [ "$mode" = plain ] || env=(-x KAIROS_TRACE="$d/trace" -x KAIROS_TRACE_FORMAT=$mode -x LD_PRELOAD="$work/libkt.so")
      # shellcheck disable=SC2086
      (cd "$d" && /usr/bin/time -f '%e %U %S' -o "$d/time" \
        mpirun --allow-run-as-root --oversubscribe -np "$np" "${env[@]}" $cmd >"$d/out" 2>&1) ||
        { echo "$app $mode: failed, see $d/out" >&2; exit 1; }
      read -r wall user sys <"$d/time"
      size=-
      [ "$mode" = plain ] || size=$(du -sk "$d/trace" | awk '{printf "%.2f", $1/1024}')
      printf '%-9s %-6s %5s %10s %10.1f %10s\n' "$app" "$mode" "$round" "$wall" "$(echo "$user + $sys" | bc)" "$size"
    done
  done
done
