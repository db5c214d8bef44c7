#!/usr/bin/python3
"""Proactive history reload benchmark (issue 24, SPEC §7 PRO-2): one history evaluation of a ClusterProactivePolicy
over W whole-GPU Deployments whose earlier pods left days of GPU samples in a real Prometheus, in ONE run:

  * the history: P pods per workload, one after another over D days (names as their ReplicaSets would give them),
    SM and memory every 5 minutes, written as OpenMetrics and backfilled with promtool (tests/e2e/gpu_history.py,
    the generator the e2e tests use); T workloads carry an RBK-1 rollback-state with an allocation transition a day
    ago, so their memory lookback is cut short and they get their own memory queries;
  * kubex-sim with the W Deployments (replicas 0: only their templates and annotations matter here), the CRDs, a
    GlobalConfiguration pointing at the Prometheus and the starter example's strategy;
  * `kubex engine` running with no proactive policy: RSS sampled ("before");
  * the starter's ClusterProactivePolicy applied: the engine's `proactive history evaluation` line (queries sent,
    Prometheus seconds, decision seconds), the owners written, the queries in Prometheus's query log with its own
    execution times, and RSS sampled again ("after"); queries checked against PRO-2's count
    4 × ⌈W/100⌉ + 2 × T (compute, memory and their two span queries per batch of 100; memory and its span for each
    workload with a transition);
  * baseline, side by side: the same reload done per workload (the naive way): the same four queries with a batch of
    one workload, sent by a plain keep-alive HTTP client two at a time (the engine's limit), timed the same way.
Prints a Markdown table for docs/performance.md.

Usage: bench/proactive/history_reload.py --build build [--workloads 5000] [--pods-per-workload 5] [--days 2]
       [--transitions 50]
"""
import argparse
import datetime
import http.client
import json
import math
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

import yaml

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tests" / "e2e"))
from benchlib import Engine, Prometheus, Sim, log, queue, sample, wait_for  # noqa: E402
from gpu_history import Series  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
API = "rightsizing.kubex.ai/v1alpha1"
STARTER = ROOT / "examples" / "kai-gpu-sharing.yaml"
STEP = 300
PER_QUERY = 100  # PRO-2
SM = "kubex_gpu_container_sm_utilization_percent"
MEMORY = "kubex_gpu_container_memory_footprint_percent"

SIM_CONFIG = """
nodePools:
  - name: g
    count: 2
    gpusPerNode: 1
    gpuProduct: Tesla-T4
    gpuMemoryMiB: 16384
    cpu: "16"
    memory: 64Gi
"""


def alnum(i, n):
    chars = "bcdfghjklmnpqrstvwxz2456789"
    out = ""
    for _ in range(n):
        out += chars[i % len(chars)]
        i //= len(chars)
    return out


def history(workloads, pods, days, now):
    """P pods per workload, one after the other over `days`; SM p95 and memory vary by workload (a fixed spread, not
    fitted to anything)."""
    end = now - 60
    start = end - days * 86400
    life = (end - start) / pods
    out = []
    for i, (ns, name) in enumerate(workloads):
        sm = 5.0 + (i * 7) % 60
        mem = 10.0 + (i * 13) % 70
        for p in range(pods):
            pod = f"{name}-{alnum(i * 31 + p, 9)}-{alnum(i * 17 + p * 3, 5)}"
            s0 = start + p * life
            out.append(Series(ns, pod, "app", sm=lambda t, sm=sm: sm + (t // STEP) % 3, memory=mem,
                              start=s0, end=s0 + life - STEP, step=STEP, allocation="whole"))
    return out


def deployment(ns, name, annotations):
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": ns, "annotations": annotations,
                         "labels": {"app": name, "nvidia.com/gpu.present": "true"}},
            "spec": {"replicas": 0, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "app", "image": "vllm/vllm-openai:v0.6",
                                                           "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}}}


def rollback_state(at):
    return json.dumps({"phase": "Managed", "strategy": "ClusterAutomationStrategy/kai-gpu-sharing",
                       "original": {"containers": {"app": {"limits": {"nvidia.com/gpu": "1"}, "requests": {}}},
                                    "gpuFraction": None, "queue": None, "schedulerName": "default-scheduler"},
                       "lastApplied": {"app": "1"},
                       "history": [{"at": at, "container": "app", "from": "0.5", "to": "1", "mode": "none",
                                    "source": "none"}]}, sort_keys=True)


def naive_queries(ns, name, lookback, memory_lookback):
    """PRO-2's four queries for ONE workload (what a per-workload reload would send)."""
    sel = f'namespace=~"{ns}",pod=~"({name})-[a-z0-9]+-[a-z0-9]+"'
    by = " by (namespace,pod,container) "
    return [f"sum{by}(quantile_over_time(0.95, {SM}{{{sel}}}[{lookback}s]))",
            f"min{by}(min_over_time(timestamp({SM}{{{sel}}})[{lookback}s:5m]))",
            f"sum{by}(max_over_time({MEMORY}{{{sel}}}[{memory_lookback}s]))",
            f"min{by}(min_over_time(timestamp({MEMORY}{{{sel}}})[{memory_lookback}s:5m]))"]


def send_all(url, queries, in_flight=2):
    """Sends `queries` over `in_flight` keep-alive connections; returns the wall seconds."""
    host = urllib.parse.urlparse(url).netloc
    todo = list(queries)
    lock = threading.Lock()
    errors = []

    def worker():
        conn = http.client.HTTPConnection(host, timeout=120)
        while True:
            with lock:
                if not todo:
                    return
                q = todo.pop()
            conn.request("GET", "/api/v1/query?" + urllib.parse.urlencode({"query": q}))
            r = conn.getresponse()
            body = r.read()
            if r.status != 200:
                errors.append(body[:200])

    t0 = time.monotonic()
    threads = [threading.Thread(target=worker) for _ in range(in_flight)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise SystemExit(f"naive queries failed: {errors[:3]}")
    return time.monotonic() - t0


def prometheus_seconds(entries):
    """Prometheus's own execution time (execTotalTime) summed over query-log entries."""
    return sum(e.get("stats", {}).get("timings", {}).get("execTotalTime", 0.0) for e in entries)


def rss_mib(samples):
    return statistics.median(samples) / 1024


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--workloads", type=int, default=5000)
    ap.add_argument("--pods-per-workload", type=int, default=5)
    ap.add_argument("--days", type=float, default=2)
    ap.add_argument("--transitions", type=int, default=50)
    a = ap.parse_args()
    W, P, T = a.workloads, a.pods_per_workload, a.transitions
    bin_dir = str(pathlib.Path(a.build).resolve() / "bin")
    workdir = tempfile.mkdtemp(prefix="kubex-bench-proactive-")
    namespaces = [f"hist-{i:02d}" for i in range(max(1, W // 100))]
    workloads = [(namespaces[i % len(namespaces)], f"infer-{i:04d}") for i in range(W)]
    now = time.time()
    transition_at = now - 86400
    sim = prom = engine = None
    try:
        t0 = time.monotonic()
        series = history(workloads, P, a.days, now)
        prom = Prometheus(None, workdir, 15, history=series)
        samples = sum(1 for s in series for _ in s.samples(s.memory)) * 2
        log(f"backfilled {len(series)} pod series ({samples} samples) in {time.monotonic() - t0:.0f}s")

        sim = Sim(bin_dir, workdir, SIM_CONFIG)
        sim.kubectl("apply", "-k", str(ROOT / "config" / "crd"))
        for ns in ["kubex", *namespaces]:
            sim.kubectl("create", "namespace", ns)
        sim.apply(queue("kubex-parent-queue"), queue("kubex-unlimited-gpu-queue", parent="kubex-parent-queue"))
        sim.apply({"apiVersion": API, "kind": "GlobalConfiguration", "metadata": {"name": "global-config"},
                   "spec": {"prometheus": {"url": prom.url, "requestTimeout": "120s"}}})
        docs = [d for d in yaml.safe_load_all(STARTER.read_text()) if d]
        sim.apply(*[d for d in docs if d["kind"] == "ClusterAutomationStrategy"])
        deps = [deployment(ns, name, {}) for ns, name in workloads]
        for i in range(0, len(deps), 500):
            sim.apply(*deps[i:i + 500])
        log(f"{W} Deployments created")

        # "before": the engine with every Deployment cached and no proactive policy.
        engine = Engine(bin_dir, sim.kubeconfig, workdir)
        wait_for(lambda: engine.alive() and engine.lines("caches synced"), 300, "engine caches synced")
        before, _, _ = sample(engine, 10)
        engine.stop()
        # The policy, and T workloads that moved to a whole GPU a day ago (RBK-1 history). Set while no engine runs:
        # a managed workload keeps its rollback-state, an unmanaged one would be rolled back (RBK-2).
        sim.apply(*[d for d in docs if d["kind"] == "ClusterProactivePolicy"])
        at = datetime.datetime.fromtimestamp(transition_at, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        for ns, name in workloads[:T]:
            sim.kubectl("annotate", "deployment", name, "-n", ns,
                        f"rightsizing.kubex.ai/rollback-state={rollback_state(at)}")
        log_start = len(prom.logged_queries())
        engine = Engine(bin_dir, sim.kubeconfig, workdir)
        line = wait_for(lambda: engine.alive() and next((x for x in engine.lines("proactive history evaluation")
                                                          if x.get("full") and x.get("workloads") == W), None),
                        900, "the policy's history evaluation over every workload", 1.0)
        written = wait_for(lambda: (n := sim.kubectl("get", "deployments", "-A", "-o", "json").stdout.count(
            "cwproactive.rightsizing.kubex.ai/desired-resource-requests")) >= W and n, 600,
            "every owner written", 5.0)
        after, hwm, _ = sample(engine, 10)
        logged = prom.logged_queries()[log_start:]
        expected = 4 * math.ceil(W / PER_QUERY) + 2 * T

        # The same reload, per workload.
        lookback = 5 * 86400  # the starter's policy: maxAnalysisAgeDays 5
        memory_lookback = int(now - transition_at)
        naive = []
        for i, (ns, name) in enumerate(workloads):
            naive += naive_queries(ns, name, lookback, memory_lookback + 60 if i < T else lookback)
        mark = len(prom.logged_queries())
        naive_wall = send_all(prom.url, naive)
        naive_logged = prom.logged_queries()[mark:]

        load = os.getloadavg()
        commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True).stdout.strip()
        print(f"### Proactive history reload: {W} workloads, {len(series)} pods of history over {a.days:g} days "
              f"({datetime.date.today()}, commit {commit}, load {load[0]:.2f} {load[1]:.2f} {load[2]:.2f})\n")
        print(f"{samples:,} samples backfilled; {T} workloads with an allocation transition a day ago.\n")
        print("| | batched (kubex engine) | per workload (baseline) | ratio |")
        print("|---|---|---|---|")
        print(f"| queries sent | {line['queries']} (PRO-2: 4 × ⌈{W}/100⌉ + 2 × {T} = {expected}; "
              f"Prometheus logged {len(logged)}) | {len(naive)} | {len(naive) / max(1, line['queries']):.0f}× fewer |")
        pb, pn = prometheus_seconds(logged), prometheus_seconds(naive_logged)
        print(f"| Prometheus execution time (its query log) | {pb:.2f} s | {pn:.2f} s | {pn / max(pb, 1e-9):.1f}× |")
        print(f"| wall time of the reads, 2 in flight | {line['prometheusSeconds']:.2f} s | {naive_wall:.2f} s | "
              f"{naive_wall / max(line['prometheusSeconds'], 1e-9):.1f}× |")
        print(f"| decision time per workload (match + owner values) | "
              f"{line['decideSeconds'] / W * 1e6:.1f} µs | | |")
        print(f"| whole evaluation | {line['evaluationSeconds']:.2f} s | | |")
        print(f"| owners written | {written} | | |")
        print(f"| engine RSS before / after (median of 10 s) | {rss_mib(before):.0f} / {rss_mib(after):.0f} MiB "
              f"(peak {hwm / 1024:.0f} MiB) | | |")
        def by_kind(entries):
            out = {}
            for e in entries:
                q = e.get("params", {}).get("query", "")
                k = ("span " if "timestamp(" in q else "") + ("compute" if SM in q else "memory")
                out.setdefault(k, []).append(e.get("stats", {}).get("timings", {}).get("execTotalTime", 0.0))
            return out
        b, n = by_kind(logged), by_kind(naive_logged)
        for k in sorted(b):
            print(f"| Prometheus time, {k} queries | {len(b[k])} × median {statistics.median(b[k]) * 1000:.0f} ms "
                  f"= {sum(b[k]):.2f} s | {len(n.get(k, []))} × median {statistics.median(n.get(k, [0])) * 1000:.1f} ms "
                  f"= {sum(n.get(k, [])):.2f} s | |")
        if line["queries"] != expected:
            raise SystemExit(f"queries sent {line['queries']} != PRO-2's {expected}")
    finally:
        for p in (engine, sim, prom):
            if p:
                p.stop()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
