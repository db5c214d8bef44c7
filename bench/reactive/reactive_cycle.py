#!/usr/bin/python3
"""Reactive recommender cycle benchmark (issue 14): one ClusterGpuReactivePolicy over W Deployments × P KAI
fraction pods, on kubex-sim with its GPU exporter scraped by a real Prometheus, in ONE run:

  * kubex-sim with enough single-GPU nodes for every pod at gpu-fraction 0.1, fast kubelet timings; the CRDs,
    the KAI queues, a GlobalConfiguration pointing at the Prometheus, the starter example's strategy and
    proactive baseline, and W Deployments of an existing KAI workload (gpu-fraction 0.1, varied SM demand so
    some upsize and some hold, small GPU memory), labelled nvidia.com/gpu.present=true;
  * `kubex engine` with NO reactive policy: caches synced, pods Running, RSS sampled over a steady period
    ("before");
  * the starter's ClusterGpuReactivePolicy applied (windows 1m, minPodMetricsAge 0s): N `reactive cycle` log
    lines collected, RSS sampled over the cycles ("after"); queries per cycle checked against
    1 policy × 2 signals × 2 directions × ⌈pods/500⌉;
  * baseline for the Prometheus time: the same queries (read back from Prometheus's query log) sent again by a
    plain keep-alive HTTP client, and Prometheus's own execution time from that log;
  * every Deployment scaled to P/2 replicas: the query count again, at the smaller size.
Prints a Markdown table for docs/performance.md.

Usage: bench/reactive/reactive_cycle.py --build build [--workloads 200] [--pods-per-workload 10] [--cycles 5]
       [--interval 15s]
"""
import argparse
import datetime
import http.client
import json
import math
import os
import re
import pathlib
import shutil
import statistics
import sys
import tempfile
import time
import urllib.parse
import urllib.request

import yaml

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from benchlib import (Engine, Prometheus, Sim, log, parse_duration, proc_stats, queue, sample,  # noqa: E402
                      wait_for)

ROOT = pathlib.Path(__file__).resolve().parents[2]
API = "rightsizing.kubex.ai/v1alpha1"
STARTER = ROOT / "examples" / "kai-gpu-sharing.yaml"
QUEUE = "kubex-unlimited-gpu-queue"
FRACTION = "0.1"
BENCH_LABEL = "kubex-bench"
PODS_PER_QUERY = 500  # REA-3
# Per-workload SM demand (percent of a whole GPU) on a 0.1 fraction, cycled over the workloads:
# 15 → 150 % of the allocation (upsize; 100 % even when ten share one GPU), 8 and 6 → 80 % and 60 % (hold:
# the scale-back floor is the baseline, the current 0.1), a wave between 4 and 14 (upsize at its peaks).
SM_DEMANDS = ["15", "8", "6", "wave(4, 14, 2m)"]
MEMORY_MIB = "256"  # 256 MiB of 0.1 × 16384 MiB: 16 % footprint, no memory upsize


def starter_docs():
    """The starter example; the reactive policy with 1m windows and minPodMetricsAge 0s (the only edits)."""
    docs = [d for d in yaml.safe_load_all(STARTER.read_text()) if d]
    for d in docs:
        if d["kind"] == "ClusterGpuReactivePolicy":
            d["spec"]["minPodMetricsAge"] = "0s"
            for sig in ("compute", "memory"):
                for direction in ("upsize", "scaleBack"):
                    d["spec"]["metrics"][sig][direction]["metricsWindow"] = "1m"
    return docs


def deployment(name, ns, replicas, sm):
    labels = {"app": name, BENCH_LABEL: "reactive"}
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": ns, "labels": {"app": name, "nvidia.com/gpu.present": "true"}},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {
                         "metadata": {"labels": {**labels, "kai.scheduler/queue": QUEUE},
                                      "annotations": {"gpu-fraction": FRACTION,
                                                      "sim.kubex.ai/gpu-sm-percent": sm,
                                                      "sim.kubex.ai/gpu-memory-mib": MEMORY_MIB}},
                         "spec": {"schedulerName": "kai-scheduler",
                                  "containers": [{"name": "app", "image": "vllm/vllm-openai:v0.6",
                                                  "resources": {"requests": {"cpu": "100m"}}}]}}}}


def running_pods(sim):
    out = sim.kubectl("get", "pods", "-A", "-l", f"{BENCH_LABEL}=reactive", "--field-selector",
                      "status.phase=Running", "-o", "name").stdout
    return out.count("\n")


def collect_cycles(engine, start_index, want, pred, timeout, rss_samples):
    """The next `want` reactive cycle lines after the first `start_index` ones that satisfy `pred`, sampling
    the engine's RSS once a second while waiting."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        cycles = engine.lines("reactive cycle")[start_index:]
        chosen = [c for c in cycles if pred(c)]
        if len(chosen) >= want:
            return chosen[:want], start_index + len(cycles)
        rss_samples.append(engine.stats()[0])
        time.sleep(1)
    raise SystemExit(f"only {len(chosen)} of {want} reactive cycles within {timeout}s; see {engine.log_path}")


def ts_of(entry):
    return datetime.datetime.fromisoformat(entry["ts"].replace("Z", "+00:00")).timestamp()


def write_spans(engine):
    """For each reactive cycle line: seconds from the cycle's first `rightsizing summary` line (the first
    workload decided) to the cycle line, i.e. the decisions plus the owner writes, which are serial."""
    spans, first = [], None
    for line in engine.lines():
        if line.get("msg") == "rightsizing summary" and line.get("phase") == "reactive" and first is None:
            first = ts_of(line)
        elif line.get("msg") == "reactive cycle":
            spans.append(ts_of(line) - first if first is not None else 0.0)
            first = None
    return spans


def bursts(entries, gap=2.0):
    """The query log's entries grouped into cycles: queries less than `gap` seconds apart."""
    out = []
    for e in entries:
        t = ts_of(e)
        if out and t - out[-1][-1][0] < gap:
            out[-1].append((t, e))
        else:
            out.append([(t, e)])
    return [[e for _, e in b] for b in out]


def replay(url, queries):
    """Wall time of the queries sent one after the other over one keep-alive connection, as POST forms."""
    host = urllib.parse.urlparse(url).netloc
    conn = http.client.HTTPConnection(host, timeout=60)
    t0 = time.monotonic()
    for q in queries:
        conn.request("POST", "/api/v1/query", body=urllib.parse.urlencode({"query": q}),
                     headers={"Content-Type": "application/x-www-form-urlencoded"})
        r = conn.getresponse()
        body = r.read()
        if r.status != 200:
            raise SystemExit(f"replayed query failed: {r.status} {body[:300]!r}")
    wall = time.monotonic() - t0
    conn.close()
    return wall


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--workloads", type=int, default=200)
    ap.add_argument("--pods-per-workload", type=int, default=10)
    ap.add_argument("--cycles", type=int, default=5)
    ap.add_argument("--interval", default="15s", help="--reactive-check-interval of the engine")
    ap.add_argument("--scrape-interval", type=int, default=5, help="Prometheus scrape interval, seconds")
    ap.add_argument("--sample-interval", default="1s", help="the sim's gpuSampleInterval")
    ap.add_argument("--steady-seconds", type=int, default=30, help="RSS sampling span without the policy")
    ap.add_argument("--small-cycles", type=int, default=3, help="cycles at the halved size")
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    a = ap.parse_args()
    bin_dir = os.path.join(a.build, "bin")
    interval_s = parse_duration(a.interval)
    W, P = a.workloads, a.pods_per_workload
    pods_total = W * P
    nodes = math.ceil(pods_total * float(FRACTION) * 1.25)  # one GPU each, 25 % spare
    namespaces = [f"bench-{i:02d}" for i in range(max(1, W // 20))]
    workdir = tempfile.mkdtemp(prefix="kubex-reactive-bench-")
    config = (f"kubelet:\n  startDelay: 200ms\n  readyDelay: 200ms\n  stopDelay: 200ms\n"
              f"  crashBackoffBase: 1s\n  crashBackoffMax: 2s\n"
              f"gpuSampleInterval: {a.sample_interval}\nmemoryIsolation: HAMiCore\n"
              f"nodePools:\n  - name: g\n    count: {nodes}\n    gpusPerNode: 1\n    gpuProduct: Tesla-T4\n"
              f"    gpuMemoryMiB: 16384\n    cpu: \"16\"\n    memory: 64Gi\n"
              f"  - name: cpu\n    count: 1\n    gpusPerNode: 0\n    cpu: \"16\"\n    memory: 64Gi\n")
    sim = prom = engine = None
    timings = {}
    try:
        t = time.monotonic()
        sim = Sim(bin_dir, workdir, config)
        log(f"kubex-sim up with {nodes + 1} nodes; work dir {workdir}")
        prom = Prometheus(sim.metrics, workdir, a.scrape_interval)
        sim.kubectl("apply", "-k", str(ROOT / "config" / "crd"))
        for ns in ["kubex", *namespaces]:
            sim.kubectl("create", "namespace", ns)
        sim.apply(queue("kubex-parent-queue"), queue(QUEUE, parent="kubex-parent-queue"))
        gc = {"apiVersion": API, "kind": "GlobalConfiguration", "metadata": {"name": "global-config"},
              "spec": {"prometheus": {"url": prom.url, "requestTimeout": "30s"},
                       "kai": {"memoryIsolation": "HAMiCore"}}}
        wait_for(lambda: sim.kubectl("apply", "-f", "-", input=json.dumps(gc), check=False).returncode == 0,
                 30, "the GlobalConfiguration applied (CRDs served)")
        docs = starter_docs()
        reactive = [d for d in docs if d["kind"] == "ClusterGpuReactivePolicy"][0]
        sim.apply(*[d for d in docs if d["kind"] != "ClusterGpuReactivePolicy"])

        t = time.monotonic()
        deps = [deployment(f"infer-{i:03d}", namespaces[i % len(namespaces)], P, SM_DEMANDS[i % len(SM_DEMANDS)])
                for i in range(W)]
        for i in range(0, W, 50):
            sim.apply(*deps[i:i + 50])
        timings["create"] = time.monotonic() - t
        log(f"{W} Deployments created in {timings['create']:.1f} s")

        # --log-level debug: the spans start at each cycle's first summary line, which OBS-4 writes at debug when it
        # repeats the workload's previous one.
        engine = Engine(bin_dir, sim.kubeconfig, workdir, ["--webhook-bind-address=0", "--log-level", "debug",
                                                          "--reactive-check-interval", a.interval])
        wait_for(lambda: engine.alive() and engine.lines("caches synced"), 300, "engine caches synced")
        wait_for(lambda: running_pods(sim) == pods_total, 900, f"{pods_total} pods Running", interval=3)
        timings["running"] = time.monotonic() - t
        log(f"{pods_total} pods Running {timings['running']:.1f} s after the first create")
        wait_for(lambda: len(prom.query(f'count(kubex_gpu_container_sm_utilization_percent'
                                        f'{{namespace=~"bench-.*"}})') or []) and
                 float(prom.query('count(kubex_gpu_container_sm_utilization_percent{namespace=~"bench-.*"})')[0]
                       ["value"][1]) == pods_total, 120, "every pod's series in Prometheus", interval=2)

        # Before: no reactive policy. Let the engine settle, then sample.
        time.sleep(10)
        sim_cpu0 = proc_stats(sim.proc.pid)[2]
        prom_cpu0 = proc_stats(prom.proc.pid)[2]
        t = time.monotonic()
        before_rss, before_hwm, before_cores = sample(engine, a.steady_seconds)
        span = time.monotonic() - t
        sim_cores = (proc_stats(sim.proc.pid)[2] - sim_cpu0) / span
        prom_cores = (proc_stats(prom.proc.pid)[2] - prom_cpu0) / span
        log(f"before: RSS median {statistics.median(before_rss) / 1024:.1f} MiB, engine {before_cores:.3f} cores, "
            f"sim {sim_cores:.2f} cores, prometheus {prom_cores:.2f} cores")

        # After: the reactive policy.
        queries_before = len(prom.logged_queries())
        n_before = len(engine.lines("reactive cycle"))
        sim.apply(reactive)
        after_rss = []
        _, _, cpu0 = engine.stats()
        sim_cpu0, prom_cpu0 = proc_stats(sim.proc.pid)[2], proc_stats(prom.proc.pid)[2]
        t = time.monotonic()
        full, idx = collect_cycles(engine, n_before, a.cycles,
                                   lambda c: c["workloads"] == W and c["eligiblePods"] == pods_total,
                                   a.cycles * interval_s * 3 + 120, after_rss)
        time.sleep(min(3.0, interval_s / 3))  # the last cycle's writes
        after_rss.append(engine.stats()[0])
        _, after_hwm, cpu1 = engine.stats()
        span = time.monotonic() - t
        after_cores = (cpu1 - cpu0) / span
        sim_cores_after = (proc_stats(sim.proc.pid)[2] - sim_cpu0) / span
        prom_cores_after = (proc_stats(prom.proc.pid)[2] - prom_cpu0) / span
        log(f"after: {len(full)} cycles, RSS median {statistics.median(after_rss) / 1024:.1f} MiB")

        # Prometheus's side of the same cycles, and the same queries sent again by a plain client.
        logged = [e for e in prom.logged_queries()[queries_before:]
                  if e.get("httpRequest", {}).get("path") == "/api/v1/query"]
        cycle_bursts = [b for b in bursts(logged) if len(b) == full[-1]["queries"]]
        exec_per_cycle = [sum(e["stats"]["timings"]["execTotalTime"] for e in b) for b in cycle_bursts]
        last = [e["params"]["query"] for e in cycle_bursts[-1]]
        replays = [replay(prom.url, last) for _ in range(3)]
        pods_in_queries = sum(len(re.search(r'pod=~"([^"]*)"', q).group(1).split("|")) for q in last) // 4

        # The smaller size: P/2 replicas each.
        P2 = max(1, P // 2)
        for ns in namespaces:
            sim.kubectl("scale", "deployment", "--all", "-n", ns, f"--replicas={P2}")
        small, _ = collect_cycles(engine, idx, a.small_cycles,
                                  lambda c: c["workloads"] == W and c["eligiblePods"] == W * P2,
                                  a.small_cycles * interval_s * 3 + 180, [])
        spans = write_spans(engine)
        spans_full = spans[n_before:n_before + len(full)]
    finally:
        for p in (engine, prom, sim):
            if p:
                p.stop()
        if not a.keep:
            shutil.rmtree(workdir, ignore_errors=True)

    med = statistics.median
    expected = 1 * 2 * 2 * math.ceil(pods_total / PODS_PER_QUERY)
    expected_small = 1 * 2 * 2 * math.ceil(W * P2 / PODS_PER_QUERY)
    q_full = sorted({c["queries"] for c in full})
    q_small = sorted({c["queries"] for c in small})
    prom_s = [c["prometheusSeconds"] for c in full]
    per_wl_us = [c["decideSeconds"] / c["workloads"] * 1e6 for c in full]
    b_rss, a_rss = med(before_rss) / 1024, med(after_rss) / 1024
    ok = all(c["ok"] for c in full + small)

    print(f"## Reactive recommender cycle: {W} Deployments × {P} pods = {pods_total} pods, "
          f"{a.cycles} cycles every {a.interval}\n")
    print("| step | result |\n|---|---|")
    print(f"| setup: {W} Deployments created / all {pods_total} pods Running | {timings['create']:.1f} s / "
          f"{timings['running']:.1f} s |")
    print(f"| queries per cycle (all {len(full)} cycles) | {', '.join(map(str, q_full))} — expected 1 × 2 × 2 × "
          f"⌈{pods_total}/500⌉ = {expected} |")
    print(f"| workloads / eligible pods per cycle | {', '.join(str(c['workloads']) for c in full)} / "
          f"{', '.join(str(c['eligiblePods']) for c in full)} |")
    print(f"| every cycle ok; owners written per cycle | {ok}; {', '.join(str(c['ownersWritten']) for c in full)} |")
    print(f"| Prometheus time per cycle, engine (median of {len(full)}) | {med(prom_s) * 1000:.0f} ms "
          f"(min {min(prom_s) * 1000:.0f}, max {max(prom_s) * 1000:.0f}) |")
    print(f"| baseline: the same {len(last)} queries from a plain keep-alive HTTP client (median of 3) | "
          f"{med(replays) * 1000:.0f} ms → **engine / client = {med(prom_s) / med(replays):.2f}×** |")
    print(f"| Prometheus's own execution time per cycle (query log, median of {len(exec_per_cycle)}) | "
          f"{med(exec_per_cycle) * 1000:.0f} ms |")
    print(f"| decision time per workload (decideSeconds / workloads, median of {len(full)}) | "
          f"{med(per_wl_us):.1f} µs (min {min(per_wl_us):.1f}, max {max(per_wl_us):.1f}) |")
    print(f"| engine RSS before (no reactive policy, median of {len(before_rss)} samples) / after "
          f"(median of {len(after_rss)} samples over the cycles) | {b_rss:.1f} MiB / {a_rss:.1f} MiB → "
          f"**{a_rss / b_rss:.2f}×** |")
    print(f"| engine peak RSS (VmHWM) before / after | {before_hwm / 1024:.1f} MiB / {after_hwm / 1024:.1f} MiB |")
    print(f"| engine CPU before / during the cycles | {before_cores:.3f} / {after_cores:.3f} cores |")
    print(f"| decisions + owner writes per cycle (first summary line to the cycle line; median, first cycle) | "
          f"{med(spans_full) * 1000:.0f} ms, {spans_full[0] * 1000:.0f} ms |")
    print(f"| kubex-sim / Prometheus CPU without the policy (exporter every {a.sample_interval}, scrape every "
          f"{a.scrape_interval}s) | {sim_cores:.3f} / {prom_cores:.3f} cores |")
    print(f"| kubex-sim / Prometheus CPU during the cycles | {sim_cores_after:.3f} / {prom_cores_after:.3f} cores |")
    print(f"| smaller size: {W} × {P2} = {W * P2} pods, queries per cycle ({len(small)} cycles) | "
          f"{', '.join(map(str, q_small))} — expected ⌈{W * P2}/500⌉ × 4 = {expected_small} |")
    print(f"| smaller size: Prometheus time / decision per workload (medians) | "
          f"{med(c['prometheusSeconds'] for c in small) * 1000:.0f} ms / "
          f"{med(c['decideSeconds'] / c['workloads'] * 1e6 for c in small):.1f} µs |")
    print()
    print("per cycle:", json.dumps([{k: c[k] for k in ("workloads", "eligiblePods", "queries", "ok", "ownersWritten",
                                                      "prometheusSeconds", "decideSeconds")} for c in full + small]))
    print(f"pods named in the last cycle's queries: {pods_in_queries}; query log bursts: "
          f"{[len(b) for b in bursts(logged)]}")
    if q_full != [expected] or q_small != [expected_small] or not ok:
        raise SystemExit(f"query count check FAILED: {q_full} (want {expected}), {q_small} (want {expected_small}),"
                         f" ok={ok}")
    print(f"query count check passed: {expected} at {pods_total} pods, {expected_small} at {W * P2} pods")


if __name__ == "__main__":
    main()
