#!/usr/bin/python3
"""Cardinality of kubex_workload_gpus on the scale rig (issue 26 item 2, SPEC RPT-5): the populated peer-sized rig
(bench-scale --keep-running), the CRDs, the seed's ClusterAutomationStrategy and one ClusterStaticPolicy that manages
every Deployment and StatefulSet of the rig (23,000 at scale 1), and `kubex engine --dry-run` (actuation reconciles
every managed workload and sets the gauge; nothing is evicted). Reports, once the series count has held still for
30 s: managed workloads, GPU workloads, kubex_workload_gpus series, the size of one /metrics scrape and the engine's
RSS, against the same engine's scrape before any policy exists (the baseline, measured side by side).

Usage: bench/scale/workload_series.py [--build build] [--scale 1.0]
"""
import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from benchlib import proc_stats  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def scrape(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30) as r:
        return r.read().decode()


def series(text, name):
    return sum(1 for ln in text.splitlines() if ln.startswith(name + "{"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--config", default="bench/scale/peer.yaml")
    ap.add_argument("--scale", default="1.0")
    ap.add_argument("--timeout", type=int, default=900)
    a = ap.parse_args()
    bin_dir = os.path.join(a.build, "bin")
    workdir = tempfile.mkdtemp(prefix="kubex-series-bench-")
    rig_out = os.path.join(workdir, "bench-scale.out")
    print("populating the scale rig (bench-scale --keep-running) ...", file=sys.stderr)
    with open(rig_out, "w") as out:
        rc = subprocess.run([os.path.join(bin_dir, "bench-scale"), "--config", a.config, "--scale", a.scale,
                             "--keep-running", "--sim", os.path.join(bin_dir, "kubex-sim")],
                            stdout=out, stderr=sys.stderr).returncode
    rig_text = open(rig_out).read()
    m = re.search(r"kubex-sim keeps running \(pid (\d+)\); kubeconfig: (\S+)", rig_text)
    if rc != 0 or not m:
        raise SystemExit(f"bench-scale failed:\n{rig_text}")
    sim_pid, kubeconfig = int(m.group(1)), m.group(2)
    kubectl = ["kubectl", "--kubeconfig", kubeconfig]
    engine = None
    try:
        subprocess.run(kubectl + ["apply", "-k", os.path.join(ROOT, "config", "crd")], check=True,
                       capture_output=True)
        subprocess.run(kubectl + ["wait", "--for", "condition=established", "--timeout=60s", "crd", "-l",
                                  "app.kubernetes.io/part-of=kubex"], check=True, capture_output=True)
        subprocess.run(kubectl + ["create", "namespace", "kubex"], capture_output=True)
        port = free_port()
        log = open(os.path.join(workdir, "engine.log"), "w")
        engine = subprocess.Popen([os.path.join(bin_dir, "kubex"), "engine", "--kubeconfig", kubeconfig,
                                   "--leader-elect=false", "--dry-run", "--namespace", "kubex",
                                   "--metrics-bind-address", f"127.0.0.1:{port}",
                                   "--health-probe-bind-address", "127.0.0.1:0", "--webhook-bind-address=0"],
                                  stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + a.timeout
        while '"caches synced"' not in open(log.name).read():
            if engine.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"the engine did not sync; see {log.name}")
            time.sleep(0.5)
        time.sleep(10)
        before = scrape(port)
        rss_before, _, _ = proc_stats(engine.pid)
        docs = [d for d in yaml.safe_load_all(open(os.path.join(ROOT, "examples", "kai-gpu-sharing.yaml"))) if d]
        strategy = [d for d in docs if d["kind"] == "ClusterAutomationStrategy"][0]
        policy = {"apiVersion": "rightsizing.kubex.ai/v1alpha1", "kind": "ClusterStaticPolicy",
                  "metadata": {"name": "every-workload"},
                  "spec": {"scope": {"workloadTypes": ["Deployment", "StatefulSet"],
                                     "namespaceSelector": {"operator": "NotIn", "values": ["kube-*"]}},
                           "resources": {"containers": {"*": {"requests": {"gpu": "0.5"}}}},
                           "automationStrategyRef": {"name": strategy["metadata"]["name"]}}}
        applied = subprocess.run(kubectl + ["apply", "-f", "-"], input=json.dumps(
            {"apiVersion": "v1", "kind": "List", "items": [strategy, policy]}), text=True, capture_output=True)
        if applied.returncode != 0:
            raise SystemExit(f"kubectl apply failed: {applied.stderr}")
        t0 = time.monotonic()
        last, still_since = -1, time.monotonic()
        while time.monotonic() < deadline:
            n = series(scrape(port), "kubex_workload_gpus")
            if n != last:
                last, still_since = n, time.monotonic()
            elif n > 0 and time.monotonic() - still_since >= 30:
                break
            time.sleep(2)
        settled_s = still_since - t0
        after = scrape(port)
        rss_after, hwm, _ = proc_stats(engine.pid)
        managed = 0
        gpu = 0
        for kind in ("deployments", "statefulsets"):
            items = json.loads(subprocess.run(kubectl + ["get", kind, "-A", "-o", "json", "--chunk-size=500"],
                                              capture_output=True, text=True, check=True).stdout)["items"]
            managed += len(items)
            for w in items:
                for c in w["spec"]["template"]["spec"].get("containers", []):
                    r = c.get("resources", {})
                    if "nvidia.com/gpu" in r.get("limits", {}) or "nvidia.com/gpu" in r.get("requests", {}):
                        gpu += 1
                        break
    finally:
        if engine:
            engine.send_signal(signal.SIGTERM)
            try:
                engine.wait(timeout=30)
            except subprocess.TimeoutExpired:
                engine.kill()
        os.kill(sim_pid, signal.SIGTERM)

    n = series(after, "kubex_workload_gpus")
    print(f"## kubex_workload_gpus on the scale rig (scale {a.scale})\n")
    print("| measure | before any policy (baseline) | every Deployment and StatefulSet managed |\n|---|---|---|")
    print(f"| Deployments and StatefulSets of the rig / of them with a GPU | {managed} / {gpu} | {managed} / {gpu} |")
    print(f"| managed by a policy | none (no policy yet) | all {managed} |")
    print(f"| kubex_workload_gpus series | {series(before, 'kubex_workload_gpus')} | **{n}** "
          f"({n / max(gpu, 1):.2f} per GPU workload; settled {settled_s:.0f} s after the policy) |")
    print(f"| lines of one /metrics scrape | {len(before.splitlines())} | {len(after.splitlines())} |")
    print(f"| bytes of one /metrics scrape | {len(before)} | {len(after)} |")
    print(f"| engine RSS | {rss_before / 1024:.0f} MiB | {rss_after / 1024:.0f} MiB (peak {hwm / 1024:.0f} MiB) |")


if __name__ == "__main__":
    main()
