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
  echo
  # The scale rig at a tenth of its size, with the engine cache benchmark on top of it.
  /usr/bin/python3 bench/scale/engine_sync.py --build "$build" --scale 0.1 --idle-seconds 30 --reps 1
  echo
  # The admission webhook over TLS vs nginx (issue 6), one short repetition, and its stages without TLS.
  "$bin/bench-webhook" --reps 1 --seconds 2 --rate-seconds 3 && "$bin/bench-webhook-micro" --benchmark_min_time=0.2
  echo
  # The consolidation planner (issue 17) at a tenth of its size.
  "$bin/bench-packing" --nodes 100 --pods 2000 --reps 3
  echo
  # The same planner on the Alibaba production trace (issue 22; ../shared/data/alibaba-gpu-v2023, CC BY 4.0).
  "$bin/bench-packing" --trace --reps 3
  echo
  # One proactive history reload (issue 24) at a tenth of its size.
  /usr/bin/python3 bench/proactive/history_reload.py --build "$build" --workloads 500 --transitions 5
  echo
  # Sizing replayed on the GenAI serving trace (issue 36; ../shared/data/alibaba-gentd26): about 20 seconds.
  /usr/bin/python3 bench/sizing/rule_costs.py --build "$build"
  echo
  # `kubex gpu-exporter` at 8 GPUs × 64 processes (fake NVML) vs a plain /proc loop (issue 37): one short repetition.
  /usr/bin/python3 bench/telemetry/exporter_cost.py --build "$build" --seconds 15 --reps 1
else
  "$bin/bench-apiserver"
  echo
  # The peer-sized scale rig (issue 3) and `kubex engine` syncing it (issue 4): about 10 minutes.
  /usr/bin/python3 bench/scale/engine_sync.py --build "$build"
  echo
  # The admission webhook over TLS vs nginx at 1/8/64 clients and 1,000 reviews/s (issue 6): about 3 minutes.
  "$bin/bench-webhook" && "$bin/bench-webhook-micro" --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
  echo
  # 500 workloads × 2 replicas resized at once by eviction (issue 15): about 3 minutes.
  /usr/bin/python3 bench/actuation/actuation_sync.py --build "$build"
  echo
  # The consolidation planner on 1,000 nodes × 8 GPUs × 20,000 fractional pods vs a node-level planner (issue 17): ~2 minutes.
  "$bin/bench-packing"
  echo
  # The same planner on the Alibaba production trace and at 4x it (issue 22; ../shared/data/alibaba-gpu-v2023,
  # "Alibaba Cluster Trace Program, cluster-trace-gpu-v2023", CC BY 4.0): about 40 seconds.
  "$bin/bench-packing" --trace && "$bin/bench-packing" --trace --replicate 4
  echo
  # One proactive history reload over 5,000 workloads and 25,000 pods of history, batched vs per workload
  # (issue 24): about 10 minutes.
  /usr/bin/python3 bench/proactive/history_reload.py --build "$build"
  echo
  # One reactive cycle over 200 workloads × 10 KAI fraction pods with a real Prometheus (issue 14): about 4 minutes.
  /usr/bin/python3 bench/reactive/reactive_cycle.py --build "$build"
  echo
  # Sizing replayed on the GenAI serving trace (issue 36; ../shared/data/alibaba-gentd26, "Alibaba Cluster Trace
  # Program, cluster-trace-v2026-GenAI"): the starter, the safe-sizing preset, three references, rule costs; ~20 s.
  /usr/bin/python3 bench/sizing/rule_costs.py --build "$build"
  echo
  # `kubex gpu-exporter` at 8 GPUs × 64 processes sampled every second (fake NVML), scraped and not, vs a plain C++
  # loop reading the same 512 /proc/<pid>/cgroup files (issue 37): about 7 minutes.
  /usr/bin/python3 bench/telemetry/exporter_cost.py --build "$build"
  echo
  # The engine with everything on (CRDs, the starter example, consolidation, webhooks, Prometheus) on the peer
  # rig (issue 27): about 25 minutes; `--scale 5` for Kubernetes' envelope is not part of this run.
  /usr/bin/python3 bench/scale/everything_on.py --build "$build" --reps 2
fi
