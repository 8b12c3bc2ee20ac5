#!/bin/bash
# Sizes of the compressed trace format (.rsd) against the full .ktr and
# the SimGrid TI text (raw, gzip -9, zstd -19), for generated stencil, LU,
# CG and IS traces, against their iterations and their ranks; prints one
# Markdown table row per trace:
#
#   | kind | ranks | iterations | events | TI | TI gzip -9 | TI zstd -19 | .ktr | .rsd | TI/.rsd | 15 B a call/.rsd |
#
# The .rsd is `kairos convert` (one cluster of every rank, ScalaTrace's
# inter-node compression of all ranks); "15 B a call" is Casanova et al.'s
# estimate of a TI action, the figure ScalaTrace's published ratios divide.
# TI is written and compressed only up to TI_MAX events (default 12
# million): beyond, those columns are "-" and the .rsd is written straight
# from the generator.
#
# Usage: scripts/bench-rsd.sh [iterations|ranks|all]   (default all)
# Environment: KAIROS (binary; default: the README's release build), TI_MAX,
# KINDS (the kinds to measure, default "stencil2d lu cg is").
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
what=${1:-all}
timax=${TI_MAX:-12000000}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
kairos=${KAIROS:-}
if [ -z "$kairos" ]; then
  kairos=$work/kairos
  (cd "$here" && CGO_ENABLED=0 go build -pgo=cmd/kairos/kairos.pgo -o "$kairos" ./cmd/kairos)
fi

# row KIND RANKS ITERATIONS GEN-FLAGS...: generates the trace and prints
# its row.
row() {
  local kind=$1 n=$2 it=$3; shift 3
  case " ${KINDS:-stencil2d lu cg is} " in *" $kind "*) ;; *) return 0 ;; esac
  local base=$work/$kind-$n-$it
  "$kairos" gen "$kind" -n "$n" -i "$it" "$@" -o "$base.ktr"
  local events
  events=$("$kairos" stats --json "$base.ktr" | sed -n 's/^  "events": \([0-9]*\),*$/\1/p' | head -1)
  "$kairos" convert "$base.ktr" "$base.rsd"
  local ti=- gz=- zs=- ratio=-
  if [ "$events" -le "$timax" ]; then
    "$kairos" convert "$base.ktr" "$base.ti"
    ti=$(stat -c %s "$base.ti")
    gz=$(gzip -9 -c "$base.ti" | wc -c)
    zs=$(zstd -19 -T1 -q -c "$base.ti" | wc -c)
    ratio=$(awk -v a="$ti" -v b="$(stat -c %s "$base.rsd")" 'BEGIN { printf "%.0f×", a/b }')
    rm -f "$base.ti"
  fi
  local rsd ktr
  rsd=$(stat -c %s "$base.rsd"); ktr=$(stat -c %s "$base.ktr")
  local est
  est=$(awk -v e="$events" -v b="$rsd" 'BEGIN { printf "%.0f×", 15*e/b }')
  echo "| $kind | $n | $it | $events | $ti | $gz | $zs | $ktr | $rsd | $ratio | $est |"
  rm -f "$base.ktr" "$base.rsd"
}

echo "| kind | ranks | iterations | events | TI bytes | TI gzip -9 | TI zstd -19 | .ktr | .rsd | TI/.rsd | 15 B a call/.rsd |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
if [ "$what" = iterations ] || [ "$what" = all ]; then
  for it in 50 500 5000; do
    row stencil2d 16 "$it" --periodic=false
    row lu 16 "$it" --planes 8
    row cg 16 "$it" --inner 2
  done
  for it in 50 500 2000; do row is 16 "$it" -b 64K; done
fi
if [ "$what" = ranks ] || [ "$what" = all ]; then
  for n in 16 64 256 1024 4096 16384; do
    row stencil2d "$n" 50 --periodic=false
    row lu "$n" 50 --planes 8
    row cg "$n" 10 --inner 1
  done
  for n in 16 64 256 1024; do row is "$n" 10 -b 64K; done
fi
