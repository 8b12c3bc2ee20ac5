#!/bin/bash
# Regenerates cmd/kairos/default.pgo, the CPU profile "go build" uses for
# profile-guided optimization of the kairos binary: the replay engine's
# stencil benchmarks (64 and 256 ranks), which exercise the max-min solver,
# the MPI layer and the trace decoder. Run it after large changes to sim/.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cd "$here"
go test ./sim -run '^$' -bench 'Stencil(64|256)$' -benchtime 5x -cpuprofile "$work/sim.prof" -o "$work/sim.test" >/dev/null
go tool pprof -proto "$work/sim.prof" >cmd/kairos/default.pgo
echo "wrote cmd/kairos/default.pgo ($(wc -c <cmd/kairos/default.pgo) bytes)"
