#!/usr/bin/env bash
# make demo: kubex on a simulated GPU cluster (kubex-sim demo): the guide's starter example and a few GPU
# workloads, a live view, and a report. Extra arguments go to `kubex-sim demo` (e.g. --keep-running).
set -euo pipefail
build="${1:-build}"
shift || true
exec "$build/bin/kubex-sim" demo "$@"
