#!/usr/bin/env bash
# Runs kubex's benchmarks and prints Markdown result tables (copy them into docs/performance.md).
# Usage: scripts/run-benchmarks.sh [BUILD_DIR] [--quick]
set -euo pipefail
build="${1:-build}"
quick="${2:-}"
bin="$build/bin"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(free -g | awk '/Mem/{print $2}') GiB RAM, $(uname -sr)"
echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"
echo
if [[ "$quick" == "--quick" ]]; then
  "$bin/bench-apiserver" --pods 3000 --updates 200 --reps 3
else
  "$bin/bench-apiserver"
fi
