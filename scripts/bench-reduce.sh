#!/bin/bash
# Reduction accuracy: for generated codes whose ranks differ (CG, MG,
# master-worker, 2-D and 3-D stencils, with 20% imbalance and 5% noise) at
# 64 and 256 ranks, for the reference traces of ../shared (IS-32, TraceR's
# 4-D stencils) and for the traces given in RECORDED (LAMMPS, HPCC...
# recorded with kairos tracer), reduces with each method (K = 9) and prints
# one Markdown row per reduction: clusters, compressed bytes, the replay's
# ACC, and ACURDION's Table II for the reduction and for the cluster heads
# alone (the papers' reduction: each member replaying its head's calls).
#
# Usage: scripts/bench-reduce.sh [RANKS...]     (default: 64 256)
# Environment: KAIROS (binary; default: the README's release build), SHARED
# (default ../shared), METHODS (default "callpath acurdion acurdion2"),
# RECORDED (space-separated trace paths).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
ranks=("$@"); [ ${#ranks[@]} -gt 0 ] || ranks=(64 256)
shared=${SHARED:-$here/../shared}
methods=${METHODS:-"callpath acurdion acurdion2"}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
kairos=${KAIROS:-}
if [ -z "$kairos" ]; then
  kairos=$work/kairos
  (cd "$here" && CGO_ENABLED=0 go build -pgo=cmd/kairos/kairos.pgo -o "$kairos" ./cmd/kairos)
fi

# row NAME TRACE: one row per method.
row() {
  local name=$1 trace=$2 m
  for m in $methods; do
    "$kairos" reduce --method "$m" --accuracy --json -o "$work/r.rsd" "$trace" > "$work/r.json" || { echo "| $name | $m | failed: $(tail -1 "$work/r.json") |"; continue; }
    python3 - "$name" "$m" "$work/r.json" <<'EOF'
import json, sys
name, m, path = sys.argv[1:]
r = json.load(open(path))
a = r["accuracy"]
def t2(x):
    return " / ".join("%.2f" % x[k] for k in ("count", "loop", "events", "src", "dest", "tag")) if x else "-"
print("| %s | %s | %d | %d | %.4f | %s | %s |" % (name, m, r["clusters"], r["compressed"]["bytes"], a["acc"],
      t2(a["matching_percent"]), t2(a.get("heads_matching_percent")) if a.get("heads_matching_percent") else a.get("heads_failure", "-")))
EOF
  done
}

echo "| trace | method | clusters | .rsd bytes | ACC | Table II, reduction (count / loop / events / src / dest / tag, %) | Table II, heads alone |"
echo "|---|---|---|---|---|---|---|"
for n in "${ranks[@]}"; do
  for kind in cg mg masterworker stencil2d stencil3d; do
    case $kind in
      cg) extra=(-i 2 --inner 3) ;;
      masterworker) extra=(--tasks $((n * 6))) ;;
      *) extra=(-i 3) ;;
    esac
    "$kairos" gen "$kind" -n "$n" --imbalance 0.2 --noise 0.05 "${extra[@]}" -o "$work/$kind.ktr"
    row "$kind $n" "$work/$kind.ktr"
  done
done
for t in ti/simgrid-replay-multiple-32/is32-flat.txt otf2/tracer-stencil4d-32/traces.otf2 otf2/tracer-stencil4d-64/traces.otf2; do
  [ -e "$shared/traces/$t" ] && row "$(basename "$(dirname "$t")")" "$shared/traces/$t"
done
for t in ${RECORDED:-}; do row "$t" "$t"; done
