#!/bin/bash
# Writes cmd/kairos/kairos.pgo, the CPU profile the release build applies
# to the kairos binary (CGO_ENABLED=0 go build -pgo=cmd/kairos/kairos.pgo
# ...: profile-guided optimization, the hot calls inlined and the hot
# loops aligned), from the runs the benchmarks time: the exact
# replays of the noisy skeletons on 64 ranks as bench-sim.sh makes them
# (TI text) and of a 4,096-rank stencil, their analytic replays (.ktr), a
# .rsd's replay, reduce and stats; an OTF2 archive read by stats and
# check; and, where ../shared holds it, the reduction of SMG2000's trace,
# whose calls fold into thousands of short loops (signing real programs). Run it again when the hot code has
# changed much: a stale profile still builds, and optimizes less. It is
# not named default.pgo, which "go run" and "go test" would apply too:
# on a fresh machine, "go test ./..." then compiled every dependency twice
# (346 s against 252).
#
# Usage: scripts/pgo.sh        (about ten seconds)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work" "$here/cmd/kairos/kairos.pgo.tmp"' EXIT # and a failed merge's output
k=$work/kairos
(cd "$here" && CGO_ENABLED=0 go build -pgo=off -o "$k" ./cmd/kairos)
cd "$work"
n=0
prof() { # prof KAIROS-ARGS...: one run, its CPU profile kept
  n=$((n + 1))
  KAIROS_CPUPROFILE=$work/p$n.prof "$k" "$@" >/dev/null
}
for spec in "st stencil2d --grid 8x8 --iterations 1000" "lu lu --ranks 64" "cg cg --ranks 64" \
  "sweep sweep --ranks 64" "bt bt --ranks 64" "mg mg --ranks 64"; do
  read -r name gen <<<"$spec"
  # shellcheck disable=SC2086
  "$k" gen $gen --noise 0.05 --imbalance 0.1 -o "$name" --to ti >/dev/null
  "$k" convert "$name" "$name.ktr" >/dev/null
  prof simulate "$name" --cluster 64x1Gf,125MBps,50us
  for _ in 1 2 3 4 5; do prof simulate "$name.ktr" --cluster 64x1Gf,125MBps,50us --analytic; done
done
prof reduce lu.ktr -o lu.rsd
for _ in 1 2 3 4 5 6 7 8 9 10; do prof simulate lu.rsd --cluster 64x1Gf,125MBps,50us --analytic; done
for _ in 1 2 3; do prof stats lu.ktr; done
"$k" simulate lu.ktr --cluster 64x1Gf,125MBps,50us --analytic --timed-trace run.otf2 >/dev/null
for _ in 1 2 3; do prof stats run.otf2; prof check run.otf2; done
smg=$here/../shared/traces/alawneh/smg2000-4p
if [ -d "$smg" ]; then
  "$k" convert "$smg" smg.ktr >/dev/null
  for _ in 1 2 3; do prof reduce smg.ktr -o smg.rsd; done
fi
"$k" gen stencil2d --grid 64x64 --iterations 25 --allreduce-every 0 --noise 0.05 --imbalance 0.1 -o st4096.ktr >/dev/null
prof simulate st4096.ktr --cluster 4096x1Gf,125MBps,50us
# Merged beside the profile it replaces, then renamed over it: a failed
# merge leaves the old one whole.
go tool pprof -proto "$work"/p*.prof >"$here/cmd/kairos/kairos.pgo.tmp"
mv "$here/cmd/kairos/kairos.pgo.tmp" "$here/cmd/kairos/kairos.pgo"
echo "wrote cmd/kairos/kairos.pgo from $n runs"
