#!/usr/bin/python3
"""Engine cache benchmark (issue 4): `kubex engine` syncing the peer-sized scale rig.

Starts the populated scale rig (bench-scale --keep-running: kubex-sim with 1,000 nodes and ~33,000 pods), then
in the same run:
  * baseline: the real kubectl LISTing every pod (paged by 500, as our informers do) - the cost of just moving
    the data through a Go client on this machine;
  * `kubex engine` (caches for pods, nodes, ReplicaSets, Deployments, StatefulSets; no controllers yet):
    initial sync time (its own "caches synced" line), peak and steady RSS, RSS growth per cached object
    against the same engine on an empty cluster, and CPU over N idle minutes.
Each timed step is repeated and reported as a median. Prints a Markdown table for docs/performance.md.

Usage: bench/scale/engine_sync.py [--build build] [--scale 1.0] [--idle-seconds 300] [--reps 3]
"""
import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from benchlib import Rig, proc_stats  # noqa: E402


class Engine:
    def __init__(self, bin_dir, kubeconfig, workdir):
        self.log_path = os.path.join(workdir, f"engine-{time.monotonic_ns()}.log")
        self.log = open(self.log_path, "w")
        self.t0 = time.monotonic()
        self.proc = subprocess.Popen(
            [os.path.join(bin_dir, "kubex"), "engine", "--kubeconfig", kubeconfig, "--leader-elect=false",
             "--metrics-bind-address", "127.0.0.1:0", "--health-probe-bind-address", "127.0.0.1:0",
             "--namespace", "kubex", "--webhook-bind-address=0"],
            stdout=self.log, stderr=subprocess.STDOUT)

    def wait_synced(self, timeout=900):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise SystemExit(f"kubex engine exited ({self.proc.returncode}); see {self.log_path}")
            with open(self.log_path) as f:
                for line in f:
                    if '"caches synced"' in line:
                        return time.monotonic() - self.t0, json.loads(line)
            time.sleep(0.05)
        raise SystemExit(f"kubex engine did not sync within {timeout}s; see {self.log_path}")

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


def start_sim_empty(bin_dir, workdir):
    kubeconfig = os.path.join(workdir, "empty-kubeconfig")
    proc = subprocess.Popen([os.path.join(bin_dir, "kubex-sim"), "serve", "--kubeconfig", kubeconfig,
                             "--metrics-listen", ""], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    while True:
        line = proc.stdout.readline().decode()
        if not line:
            raise SystemExit("kubex-sim (empty) did not start")
        if line.startswith("kubex-sim ready"):
            return proc, kubeconfig


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--config", default="bench/scale/peer.yaml")
    ap.add_argument("--scale", default="1.0")
    ap.add_argument("--idle-seconds", type=int, default=300)
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args()
    bin_dir = os.path.join(a.build, "bin")
    workdir = tempfile.mkdtemp(prefix="kubex-engine-bench-")

    # The same engine against an empty cluster: its fixed cost, subtracted to get bytes per cached object.
    empty_sim, empty_kc = start_sim_empty(bin_dir, workdir)
    e = Engine(bin_dir, empty_kc, workdir)
    e.wait_synced()
    time.sleep(2)
    empty_rss, _, _ = proc_stats(e.proc.pid)
    e.stop()
    empty_sim.terminate()
    empty_sim.wait()

    print("populating the scale rig (bench-scale --keep-running) ...", file=sys.stderr)
    rig = Rig(bin_dir, a.config, a.scale, workdir)
    kubeconfig, rig_table = rig.kubeconfig, rig.table
    try:
        # Baseline: kubectl LISTs all pods, paged by 500 like our reflector.
        kubectl_s = []
        for _ in range(a.reps):
            t = time.monotonic()
            out = subprocess.run(["kubectl", "--kubeconfig", kubeconfig, "--cache-dir",
                                  os.path.join(workdir, "kcache"), "get", "pods", "-A", "--chunk-size=500",
                                  "-o", "name"], capture_output=True, text=True, check=True).stdout
            kubectl_s.append(time.monotonic() - t)
            kubectl_pods = out.count("\n")

        sync_s, log_ms, peaks, steady = [], [], [], []
        objects = {}
        for rep in range(a.reps):
            e = Engine(bin_dir, kubeconfig, workdir)
            wall, line = e.wait_synced()
            sync_s.append(wall)
            log_ms.append(line.get("duration_ms", 0) / 1000.0)
            objects = line.get("objects", {})
            time.sleep(5)
            rss, hwm, cpu0 = proc_stats(e.proc.pid)
            peaks.append(hwm)
            steady.append(rss)
            if rep < a.reps - 1:
                e.stop()
        # The last engine stays for the idle measurement.
        t = time.monotonic()
        _, _, cpu_a = proc_stats(e.proc.pid)
        time.sleep(a.idle_seconds)
        rss_end, hwm_end, cpu_b = proc_stats(e.proc.pid)
        idle_cores = (cpu_b - cpu_a) / (time.monotonic() - t)
        e.stop()
    finally:
        rig.stop()

    total_objects = sum(objects.values())
    pods = objects.get("pods", 0)
    med = statistics.median
    per_obj = (med(steady) - empty_rss) * 1024 / max(total_objects, 1)
    print(rig_table)
    print()
    print(f"## kubex engine caches on the scale rig ({pods} pods, {total_objects} cached objects)\n")
    print("| step | result |\n|---|---|")
    print(f"| baseline: kubectl LIST of all {kubectl_pods} pods, pages of 500 (median of {a.reps}) | "
          f"{med(kubectl_s):.1f} s |")
    print(f"| engine: start to \"caches synced\" (median of {a.reps}) | {med(sync_s):.1f} s "
          f"(informers alone: {med(log_ms):.1f} s) → **{med(sync_s) / med(kubectl_s):.2f}× the kubectl LIST** |")
    print(f"| cached objects | {json.dumps(objects)} |")
    print(f"| engine peak RSS during sync (median) | {med(peaks) / 1024:.0f} MiB |")
    print(f"| engine steady RSS after sync (median) / same engine on an empty cluster | "
          f"{med(steady) / 1024:.0f} MiB / {empty_rss / 1024:.0f} MiB |")
    print(f"| RSS growth per cached object ((steady − empty) / objects) | {per_obj:.0f} bytes |")
    print(f"| engine CPU over {a.idle_seconds} idle seconds after sync | {idle_cores:.4f} cores "
          f"(RSS at the end {rss_end / 1024:.0f} MiB) |")


if __name__ == "__main__":
    main()
