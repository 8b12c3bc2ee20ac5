#!/bin/bash
# Makes cmd/kairos/default.pgo, the CPU profile "go build" optimises the
# kairos binary with (profile-guided optimisation: the hot calls inlined).
# The profile is of the analytic replays of issue 42's benchmark, the
# runs of a few milliseconds where every instruction counts: the noisy
# skeletons of scripts/bench-sim.sh at 64 ranks and the 2-D stencil at 256
# and 1,024, read from .ktr (kairos simulate --analytic, as bench-sim.sh
# times them), each run RUNS times, the profiles merged.
#
# Usage: scripts/pgo.sh        (from the repository's root; RUNS=20)
# Make it again when the replay's code changes much: a stale profile only
# optimises less (go build matches it to the functions it still names).
set -euo pipefail
runs=${RUNS:-20}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
CGO_ENABLED=0 go build -pgo=off -o "$work/kairos" ./cmd/kairos
k=$work/kairos
gen() { # name ranks generator arguments...
  local name=$1 n=$2
  shift 2
  "$k" gen "$@" --noise 0.05 --imbalance 0.1 -o "$work/$name.ktr" >/dev/null
  echo "$name $n"
}
{
  gen mg64 64 mg --ranks 64
  gen bt64 64 bt --ranks 64
  gen st3d64 64 stencil3d --grid 4x4x4
  gen sweep64 64 sweep --ranks 64
  gen lu64 64 lu --ranks 64
  gen cg64 64 cg --ranks 64
  gen st64 64 stencil2d --grid 8x8 --iterations 1000
  gen st256 256 stencil2d --grid 16x16 --iterations 100
  gen st1024 1024 stencil2d --grid 32x32 --iterations 25
} >"$work/list"
i=0
while read -r name n; do
  for _ in $(seq "$runs"); do
    i=$((i + 1))
    KAIROS_CPUPROFILE=$work/$i.pprof "$k" simulate "$work/$name.ktr" --cluster "${n}x1Gf,125MBps,50us" --analytic >/dev/null
  done
done <"$work/list"
# -symbolize=none: the profiles name their functions already, with the
# start lines go build needs, which symbolizing them again from the binary
# would drop.
go tool pprof -proto -symbolize=none "$work"/*.pprof >cmd/kairos/default.pgo
echo "cmd/kairos/default.pgo: $(wc -c <cmd/kairos/default.pgo) bytes, $i runs"
