#!/usr/bin/python3
"""Actuation benchmark (issue 15): W Deployments × R replicas whose desired GPU fraction changes at once, on
kubex-sim with the real `kubex engine` and its webhooks, at the engine's and the sim's DEFAULT timings
(minReadyDuration 10s, resizeRetryInterval 30s, kubelet start 1s + ready 1s):

  * the CRDs, the KAI queues, the starter example's strategy and a ClusterStaticPolicy giving every pod of the
    benchmark namespace 0.25 of a GPU; W Deployments of R replicas asking for one whole GPU (admitted at 0.25);
  * the engine's CPU and RSS while idle ("before");
  * the policy changed to 0.3: every workload's desired fraction changes at the same moment. A watch on the pods
    (official Python client) records, per workload, when all its pods run Ready at 0.3, and after every event the
    number of its unavailable pods (R − Ready pods that are not terminating);
  * reported: the time until every workload is in sync, per-workload medians against the lower bound
    R × (start + ready + minReadyDuration) (one pod at a time, ACT-3), the largest number of unavailable pods of
    any workload at any moment against its budget max(1, maxUnavailable 25 % of R rounded down) = 1, evictions,
    and the engine's CPU and RSS during the change.
Prints a Markdown table for docs/performance.md.

Usage: bench/actuation/actuation_sync.py --build build [--workloads 500] [--replicas 2]
"""
import argparse
import json
import math
import os
import pathlib
import shutil
import statistics
import sys
import tempfile
import threading
import time

import yaml

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from benchlib import Engine, Sim, log, proc_stats, queue, wait_for  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
API = "rightsizing.kubex.ai/v1alpha1"
STARTER = ROOT / "examples" / "kai-gpu-sharing.yaml"
NS = "bench-act"
BEFORE, AFTER = "0.25", "0.3"
START_S, READY_S, MIN_READY_S = 1.0, 1.0, 10.0  # kubex-sim's kubelet defaults; ACT-2 minReadyDuration default


def policy(gpu):
    return {"apiVersion": API, "kind": "ClusterStaticPolicy", "metadata": {"name": "bench-act"},
            "spec": {"scope": {"namespaceSelector": {"operator": "In", "values": [NS]},
                               "workloadTypes": ["Deployment"]},
                     "resources": {"containers": {"*": {"requests": {"gpu": gpu}}}},
                     "automationStrategyRef": {"name": "kai-gpu-sharing"}}}


def deployment(name, replicas):
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": NS, "labels": {"app": name}},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "app", "image": "trainer:1", "resources": {
                                      "requests": {"cpu": "50m", "nvidia.com/gpu": "1"},
                                      "limits": {"nvidia.com/gpu": "1"}}}]}}}}


class PodWatch:
    """Follows the benchmark namespace's pods with a watch; per workload: its pods (name -> (ready, terminating,
    fraction)), the largest number of unavailable pods seen, and when it was last seen fully at the target."""

    def __init__(self, kubeconfig, replicas):
        from kubernetes import client, config, watch
        self.api = client.CoreV1Api(config.new_client_from_config(kubeconfig))
        self.watch = watch.Watch()
        self.replicas = replicas
        self.pods = {}  # workload -> {pod: (ready, terminating, fraction)}
        self.worst = {}  # workload -> largest unavailable seen
        self.in_sync_at = {}  # workload -> monotonic time it became (and stayed) in sync with the target
        self.target = None
        self.lock = threading.Lock()
        self.events = 0
        self.stopped = False
        items = self.api.list_namespaced_pod(NS)
        for p in items.items:
            self._apply("ADDED", p)
        self.rv = items.metadata.resource_version
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _apply(self, kind, p):
        w = (p.metadata.labels or {}).get("app")
        if not w:
            return
        pods = self.pods.setdefault(w, {})
        if kind == "DELETED":
            pods.pop(p.metadata.name, None)
        else:
            ready = any(c.type == "Ready" and c.status == "True" for c in (p.status.conditions or []))
            fraction = (p.metadata.annotations or {}).get("gpu-fraction")
            pods[p.metadata.name] = (ready, p.metadata.deletion_timestamp is not None, fraction)
        available = sum(1 for r, t, _ in pods.values() if r and not t)
        self.worst[w] = max(self.worst.get(w, 0), self.replicas - available)
        if self.target:
            synced = available == self.replicas and all(f == self.target for r, t, f in pods.values() if not t) \
                and len([1 for _, t, _ in pods.values() if not t]) == self.replicas
            if synced and w not in self.in_sync_at:
                self.in_sync_at[w] = time.monotonic()
            elif not synced:
                self.in_sync_at.pop(w, None)

    def _run(self):
        while True:
            try:
                for ev in self.watch.stream(self.api.list_namespaced_pod, NS, resource_version=self.rv,
                                            timeout_seconds=300):
                    with self.lock:
                        self.events += 1
                        self._apply(ev["type"], ev["object"])
                        self.rv = ev["object"].metadata.resource_version
            except Exception as e:  # noqa: BLE001 - a dropped watch is restarted from the last version
                if self.stopped:
                    return
                log(f"watch restarted: {e}")
                time.sleep(0.5)

    def start_change(self, target):
        with self.lock:
            self.target = target
            self.worst = {}
            self.in_sync_at = {}

    def snapshot(self):
        with self.lock:
            return dict(self.worst), dict(self.in_sync_at)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--workloads", type=int, default=500)
    ap.add_argument("--replicas", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=900, help="seconds for every workload to reach the new size")
    a = ap.parse_args()
    bin_dir = os.path.join(a.build, "bin")
    pods = a.workloads * a.replicas
    nodes = math.ceil(pods * float(AFTER) / 8 * 1.25) + 1
    config = (f"nodePools:\n  - name: g\n    count: {nodes}\n    gpusPerNode: 8\n    gpuProduct: Tesla-T4\n"
              f"    cpu: \"256\"\n    memory: 1Ti\n    maxPods: {max(110, 8 * 10 * 2)}\n")
    workdir = tempfile.mkdtemp(prefix="kubex-bench-act-")
    sim = engine = None
    try:
        sim = Sim(bin_dir, workdir, config)
        log(f"kubex-sim up: {nodes} nodes × 8 GPUs")
        sim.kubectl("apply", "-k", str(ROOT / "config" / "crd"))
        sim.kubectl("create", "namespace", "kubex")
        sim.kubectl("create", "namespace", NS)
        strategy = [d for d in yaml.safe_load_all(STARTER.read_text()) if d and d["kind"] == "ClusterAutomationStrategy"]
        sim.apply(queue("kubex-parent-queue"), queue("kubex-unlimited-gpu-queue", parent="kubex-parent-queue"),
                  *strategy, policy(BEFORE))
        engine = Engine(bin_dir, sim.kubeconfig, workdir, [
            "--webhook-bind-address", "127.0.0.1:0", "--self-signed-webhook", "--register-webhooks",
            "--early-webhook-enabled"])

        def healthy():
            engine.alive()
            gc = json.loads(sim.kubectl("get", "globalconfiguration", "global-config", "-o", "json", check=False).stdout
                            or "{}")
            return any(c["type"] == "PodAdmissionWebhookHealthy" and c["status"] == "True"
                       for c in gc.get("status", {}).get("conditions", []))
        wait_for(healthy, 120, "PodAdmissionWebhookHealthy=True", 1)
        for i in range(0, a.workloads, 100):
            sim.apply(*[deployment(f"w{j:04d}", a.replicas) for j in range(i, min(a.workloads, i + 100))])
        watch = PodWatch(sim.kubeconfig, a.replicas)

        def all_at(fraction):
            engine.alive()
            with watch.lock:
                n = sum(1 for ps in watch.pods.values() for r, t, f in ps.values() if r and not t and f == fraction)
            return n >= pods
        wait_for(lambda: all_at(BEFORE), 600, f"{pods} pods Ready at {BEFORE}", 1)
        log(f"{pods} pods Ready at {BEFORE}; measuring the idle engine for 30 s")
        rss0, _, cpu0 = proc_stats(engine.proc.pid)
        time.sleep(30)
        rss_idle, _, cpu_idle = proc_stats(engine.proc.pid)
        idle_cores = (cpu_idle - cpu0) / 30

        watch.start_change(AFTER)
        t0 = time.monotonic()
        sim.apply(policy(AFTER))
        log(f"policy changed to {AFTER}: every workload's desired fraction changes now")
        rss_peak = rss_idle
        while True:
            engine.alive()
            rss_peak = max(rss_peak, proc_stats(engine.proc.pid)[0])
            _, synced = watch.snapshot()
            if len(synced) >= a.workloads:
                break
            if time.monotonic() - t0 > a.timeout:
                raise SystemExit(f"only {len(synced)} of {a.workloads} workloads in sync after {a.timeout} s")
            time.sleep(1)
        total = time.monotonic() - t0
        worst, synced = watch.snapshot()
        rss1, hwm, cpu1 = proc_stats(engine.proc.pid)
        per = sorted(t - t0 for t in synced.values())
        bound = a.replicas * (START_S + READY_S + MIN_READY_S)
        evictions = sum(1 for l in engine.lines("rightsizing summary")
                        if l.get("phase") == "actuation" and l.get("rightsizingResult") == "EVICTED")
        budget = max(1, math.floor(0.25 * a.replicas))
        med = statistics.median(per)
        p90 = per[int(0.9 * (len(per) - 1))]
        print(f"### Actuation: {a.workloads} Deployments × {a.replicas} replicas, desired fraction {BEFORE} → {AFTER} "
              "at once\n")
        print("| measure | value |")
        print("|---|---|")
        print(f"| pods | {pods} on {nodes} nodes × 8 GPUs |")
        print(f"| lower bound per workload: replicas × (start {START_S:.0f}s + ready {READY_S:.0f}s + "
              f"minReadyDuration {MIN_READY_S:.0f}s) | {bound:.0f} s |")
        print(f"| time until a workload is in sync: median / p90 / last | {med:.1f} s / {p90:.1f} s / {per[-1]:.1f} s "
              f"({med / bound:.2f}× / {p90 / bound:.2f}× / {per[-1] / bound:.2f}× the bound) |")
        print(f"| time until every workload is in sync | {total:.1f} s |")
        print(f"| largest number of unavailable pods of any workload at any moment | {max(worst.values())} "
              f"(budget {budget}) |")
        print(f"| workloads that ever had more than the budget unavailable | "
              f"{sum(1 for v in worst.values() if v > budget)} |")
        print(f"| evictions (EVICTED summary lines) | {evictions} |")
        print(f"| engine CPU: idle / during the change | {idle_cores:.3f} / {(cpu1 - cpu_idle) / total:.3f} cores |")
        print(f"| engine RSS: idle / peak during the change / after | {rss_idle / 1024:.1f} / {rss_peak / 1024:.1f} / "
              f"{rss1 / 1024:.1f} MiB (high-water {hwm / 1024:.1f} MiB; {rss0 / 1024:.1f} MiB before the idle span) |")
        print(f"| pod watch events seen | {watch.events} |")
        watch.stopped = True
    finally:
        if engine:
            engine.stop()
        if sim:
            sim.stop()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
