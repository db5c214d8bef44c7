#!/usr/bin/python3
"""The engine with EVERYTHING on at scale (issue 27 items 6 and 7): the populated scale rig (bench-scale
--keep-running) with its GPU exporter scraped by a real Prometheus, the CRDs, the seed's starter example
(examples/kai-gpu-sharing.yaml, unedited), a GpuConsolidationPolicy per GPU node pool of the rig, a GlobalConfiguration
pointing at the Prometheus, and `kubex engine` with its webhooks served, registered and answering (early and late
passes, --kai-queues) and its DEFAULT intervals and log level. Measured in ONE run, side by side:

  * time to "caches synced" (--reps engines, median) against the real kubectl's paged LIST of all pods of the same
    rig (the baseline of engine_sync.py);
  * admission of real pods: a slice of the rig's GPU Deployments' pods is deleted and their ReplicaSets recreate
    them through the registered webhooks;
  * an idle window (--idle-seconds, placed between two runs of the rig's CronJobs and 10 minutes after the recreated
    pods started, the starter's minPodMetricsAge, so the reactive cycles query every GPU pod): engine RSS (median)
    and CPU,
    CPU during each reactive cycle (its `reactive cycle` line, default interval 1m), and the INFO log lines per
    minute by logger and msg (OBS-4: at most 10 per minute at peer scale when nothing changes);
  * admission p50/p99 at a fixed 1,000 reviews/s against the engine's own webhook port and full caches, with the
    webhook benchmark's load client (bench-webhook --client: every answer checked byte for byte);
  * the engine's peak RSS over all of it, and the sim's and Prometheus's memory.

--scale multiplies the rig's node pools AND its workloads (1.0: bench/scale/peer.yaml as it is, 1,000 nodes and
~33,000 pods), the workloads capped so that the rig holds at most --max-pods pods (default 150,000, Kubernetes'
envelope; a CronJob counts one pod): 5.0 gives 5,000 nodes and 150,000 pods. (bench-scale's own --scale multiplies only the workloads: peer.yaml
at bench-scale --scale 5 would be 125,000 long-running pods on the same 1,000 nodes, more than their 110,000 pod
slots, and 5,750 whole-GPU pods for 1,600 GPUs: it would never settle.)

--dry-run (the default) starts the engine with --dry-run: everything is decided and logged, nothing is written,
so no consolidation drains a node and no pod is evicted while the engine is measured; --no-dry-run runs it for real.

Usage: bench/scale/everything_on.py [--build build] [--scale 1.0] [--idle-seconds 300] [--reps 3]
"""
import argparse
import base64
import collections
import datetime
import http.client
import json
import math
import os
import pathlib
import shutil
import ssl
import statistics
import subprocess
import sys
import tempfile
import time

import yaml

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from benchlib import Engine, Prometheus, Rig, free_port, log, proc_stats, wait_for  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
API = "rightsizing.kubex.ai/v1alpha1"
STARTER = ROOT / "examples" / "kai-gpu-sharing.yaml"
LATE = "zzz-kubex-mutating-webhook-configuration"
LATE_PATH = "/mutate--v1-pod"
KUID = "5f0b1c2d-3e4f-4a5b-8c6d-000000000000"  # bench/webhook/scenario.h kUid: the load client rewrites it


def rig_config(path, scale, max_pods):
    """The rig's config at `scale` (node pools multiplied) and the workload scale for bench-scale, capped so that
    deployments + statefulSets + cronJobs (one pod each) + daemonSets x nodes <= max_pods."""
    doc = yaml.safe_load(open(path))
    for p in doc["nodePools"]:
        p["count"] = max(1, round(p.get("count", 1) * scale))
    nodes = sum(p["count"] for p in doc["nodePools"])
    w = doc.get("workloads", {})
    per_unit = w.get("deployments", 0) + w.get("statefulSets", 0) + w.get("cronJobs", 0)
    room = max_pods - w.get("daemonSets", 0) * nodes
    wscale = scale if per_unit == 0 else min(scale, room / per_unit)
    if wscale <= 0:
        raise SystemExit(f"--max-pods {max_pods} leaves no room for workloads beside the DaemonSets' pods")
    return doc, nodes, wscale


def consolidation_policies(doc):
    """One GpuConsolidationPolicy per GPU node pool, selecting the pool's own labels (else its GPU product)."""
    out = []
    for p in doc["nodePools"]:
        if not p.get("gpusPerNode"):
            continue
        labels = p.get("labels") or {"nvidia.com/gpu.product": p["gpuProduct"]}
        out.append({"apiVersion": API, "kind": "GpuConsolidationPolicy",
                    "metadata": {"name": f"consolidate-{p['name']}"},
                    "spec": {"experimental": {"gpuKaiContract": "v1alpha1-2026-07"},
                             "nodeSelector": {"matchLabels": labels}}})
    return out


def ts_of(line):
    return datetime.datetime.fromisoformat(line["ts"].replace("Z", "+00:00")).timestamp()


def idle_window_start(schedule, idle_s, margin_s, now):
    """When a window of idle_s seconds may start: at least margin_s after a run of a `*/N * * * *` schedule and
    ending before the next run. None when the schedule is another form or the window does not fit."""
    parts = (schedule or "").split()
    if len(parts) != 5 or not parts[0].startswith("*/") or any(p != "*" for p in parts[1:]):
        return None
    period = int(parts[0][2:]) * 60
    if margin_s + idle_s > period:
        return None
    last = math.floor(now / period) * period
    start = max(now, last + margin_s)
    if start + idle_s > last + period:
        start = last + period + margin_s
    return start


def https_post(port, ca_file, path, body):
    ctx = ssl.create_default_context(cafile=ca_file)
    conn = http.client.HTTPSConnection("127.0.0.1", port, context=ctx, timeout=30)
    conn.request("POST", path, body=body, headers={"Content-Type": "application/json"})
    r = conn.getresponse()
    data = r.read().decode()
    conn.close()
    if r.status != 200:
        raise SystemExit(f"the engine's webhook answered {r.status}: {data[:300]}")
    return data


def admission_review(pod):
    """What kube-apiserver sends the late pass for a CREATE of this pod (as its ReplicaSet makes it)."""
    md = pod["metadata"]
    obj = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {k: md[k] for k in ("name", "generateName", "namespace", "labels", "annotations",
                                           "ownerReferences") if k in md},
           "spec": {k: v for k, v in pod["spec"].items() if k != "nodeName"}}
    gvk = {"group": "", "version": "v1", "kind": "Pod"}
    gvr = {"group": "", "version": "v1", "resource": "pods"}
    return json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                       "request": {"uid": KUID, "kind": gvk, "resource": gvr, "requestKind": gvk,
                                   "requestResource": gvr, "name": md["name"], "namespace": md["namespace"],
                                   "operation": "CREATE",
                                   "userInfo": {"username": "system:serviceaccount:kube-system:replicaset-controller"},
                                   "object": obj, "oldObject": None, "dryRun": False,
                                   "options": {"apiVersion": "meta.k8s.io/v1", "kind": "CreateOptions"}}},
                      separators=(",", ":"))


def webhook_load(bin_dir, rig, engine, workdir, gpu_app, rate, seconds):
    """Admission at a fixed rate against the engine's registered late webhook: the review of a real pod of a managed
    GPU Deployment, the reference answer the engine's own (checked to be the same for two uids), bench-webhook's
    load client in its own process. Returns (the client's result, engine cores during the load, answer)."""
    cfg = json.loads(rig.kubectl("get", "mutatingwebhookconfiguration", LATE, "-o", "json").stdout)
    cc = cfg["webhooks"][0]["clientConfig"]
    port = int(cc["url"].split("://", 1)[1].split("/", 1)[0].rsplit(":", 1)[1])
    ca_file = os.path.join(workdir, "webhook-ca.crt")
    pathlib.Path(ca_file).write_bytes(base64.b64decode(cc["caBundle"]))
    pods = json.loads(rig.kubectl("get", "pods", "-A", "-l", f"app={gpu_app}", "-o", "json").stdout)["items"]
    if not pods:
        raise SystemExit(f"no pod of {gpu_app} to build the AdmissionReview from")
    body = admission_review(pods[0])
    answer = https_post(port, ca_file, LATE_PATH, body)
    uid2 = KUID[:-12] + "0123456789ab"
    again = https_post(port, ca_file, LATE_PATH, body.replace(KUID, uid2))
    if KUID not in answer or again.replace(uid2, KUID) != answer or not json.loads(answer)["response"]["allowed"]:
        raise SystemExit(f"the engine's answer is not allowed or not the same for every uid:\n{answer}\n{again}")
    files = {"body": body, "expected": answer}
    for k, v in files.items():
        pathlib.Path(workdir, f"review-{k}.json").write_text(v)
    _, _, cpu0 = engine.stats()
    t = time.monotonic()
    out = subprocess.run([os.path.join(bin_dir, "bench-webhook"), "--client", "--port", str(port), "--ca", ca_file,
                          "--body-file", os.path.join(workdir, "review-body.json"), "--expected-file",
                          os.path.join(workdir, "review-expected.json"), "--connections", "8", "--rate", str(rate),
                          "--warmup", "1", "--seconds", str(seconds)], capture_output=True, text=True)
    cores = (engine.stats()[2] - cpu0) / (time.monotonic() - t)
    try:
        return json.loads(out.stdout.strip().splitlines()[-1]), cores, answer
    except (ValueError, IndexError):
        raise SystemExit(f"the load client printed no result:\n{out.stdout}\n{out.stderr}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--config", default=str(ROOT / "bench" / "scale" / "peer.yaml"))
    ap.add_argument("--scale", type=float, default=1.0, help="nodes and workloads x this (1.0: the peer rig)")
    ap.add_argument("--max-pods", type=int, default=150000, help="cap of the rig's pods (Kubernetes' envelope)")
    ap.add_argument("--idle-seconds", type=int, default=300)
    ap.add_argument("--reps", type=int, default=3, help="kubectl LISTs and engine starts (medians)")
    ap.add_argument("--churn", type=int, default=100,
                    help="pods of GPU Deployments deleted and recreated (at most a tenth of them, at least one)")
    ap.add_argument("--settle-seconds", type=int, default=60, help="after the churn, before the idle window")
    ap.add_argument("--cron-margin", type=int, default=0,
                    help="seconds after a CronJob run before the idle window may start (default 90 x max(1, scale), "
                         "at most 600 - idle seconds)")
    ap.add_argument("--min-pod-age", type=int, default=600,
                    help="the starter's minPodMetricsAge (10m): the idle window starts this plus 90 s after the "
                         "recreated pods ran, so the reactive cycles in it query every GPU pod of the rig and none "
                         "of them is newly eligible")
    ap.add_argument("--rate", type=float, default=1000, help="reviews/s of the admission load (0: skip it)")
    ap.add_argument("--rate-seconds", type=float, default=10)
    ap.add_argument("--scrape-interval", type=int, default=15, help="Prometheus's scrape interval, seconds")
    ap.add_argument("--dry-run", action=argparse.BooleanOptionalAction, default=True,
                    help="the engine's --dry-run (default: on, so nothing is drained or evicted)")
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    a = ap.parse_args()
    bin_dir = os.path.join(a.build, "bin")
    workdir = tempfile.mkdtemp(prefix="kubex-everything-on-")
    started = datetime.datetime.now(datetime.timezone.utc)
    load_start = os.getloadavg()
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    doc, nodes, wscale = rig_config(a.config, a.scale, a.max_pods)
    cfg_path = os.path.join(workdir, "rig.yaml")
    with open(cfg_path, "w") as f:
        yaml.safe_dump(doc, f, sort_keys=False)
    schedule = doc.get("workloads", {}).get("cronSchedule", "*/10 * * * *")
    # After a run of the CronJobs their pods are created (through the webhooks) and finish: 90 s at peer scale, more
    # for more CronJobs, but leaving room for the window in the rig's 10-minute period.
    cron_margin = a.cron_margin or min(int(90 * max(1.0, a.scale)), max(60, 600 - a.idle_seconds))
    engine_args = ["--webhook-bind-address", "127.0.0.1:0", "--self-signed-webhook", "--register-webhooks",
                   "--early-webhook-enabled", "--kai-queues", *(["--dry-run"] if a.dry_run else [])]
    log(f"rig: {nodes} nodes, workloads x {wscale:g}; work dir {workdir}")

    rig = prom = engine = None
    r = {}
    try:
        rig = Rig(bin_dir, cfg_path, wscale, workdir, f"127.0.0.1:{free_port()}",
                  timeout=int(1800 * max(1.0, a.scale)))
        settled_at = time.time()
        log("rig settled")
        prom = Prometheus(rig.metrics, workdir, a.scrape_interval)
        rig.kubectl("apply", "-k", str(ROOT / "config" / "crd"))
        rig.kubectl("wait", "--for", "condition=established", "--timeout=60s", "crd", "-l",
                    "app.kubernetes.io/part-of=kubex")
        rig.kubectl("create", "namespace", "kubex")
        gc = {"apiVersion": API, "kind": "GlobalConfiguration", "metadata": {"name": "global-config"},
              "spec": {"prometheus": {"url": prom.url}}}
        policies = consolidation_policies(doc)
        wait_for(lambda: rig.kubectl("apply", "-f", "-", input=json.dumps(
            {"apiVersion": "v1", "kind": "List", "items": [gc, *policies]}), check=False).returncode == 0,
            60, "global-config and the consolidation policies applied")
        rig.kubectl("apply", "-f", str(STARTER))  # the seed's starter example, unedited

        # Baseline and time to synced, interleaved: kubectl LIST, engine, kubectl LIST, engine, ...
        r["kubectl"], r["sync"], r["peak_sync"] = [], [], []
        for rep in range(a.reps):
            s, r["kubectl_pods"] = rig.list_pods_paged()
            r["kubectl"].append(s)
            if engine:
                engine.stop()
            rep_dir = os.path.join(workdir, f"engine-{rep}")
            os.makedirs(rep_dir)
            engine = Engine(bin_dir, rig.kubeconfig, rep_dir, engine_args)
            wall, line = engine.wait_line("caches synced", timeout=int(900 * max(1.0, a.scale)))
            r["sync"].append(wall)
            r["objects"] = line.get("objects", {})
            r["peak_sync"].append(engine.stats()[1])
            log(f"rep {rep + 1}: kubectl LIST {s:.1f} s, engine synced in {wall:.1f} s")

        # The webhooks registered and healthy (WHH-3: three probes at the default 10 s).
        wait_for(lambda: LATE in rig.kubectl("get", "mutatingwebhookconfiguration", "-o", "name").stdout, 120,
                 "the webhooks registered")

        def healthy():
            gcs = json.loads(rig.kubectl("get", "globalconfigurations.rightsizing.kubex.ai", "global-config", "-o",
                                         "json").stdout)
            return any(c["type"] == "PodAdmissionWebhookHealthy" and c["status"] == "True"
                       for c in gcs.get("status", {}).get("conditions", []))
        wait_for(lambda: engine.alive() and healthy(), 180, "PodAdmissionWebhookHealthy=True", 2)
        log("webhooks registered and healthy")

        # Real reviews: delete the pods of `churn` GPU Deployments; their ReplicaSets recreate them.
        w = doc.get("workloads", {})
        every = w.get("gpuEvery", 0) or 1
        n_deploy = int(w.get("deployments", 0) * wscale + 0.5)
        gpu_apps = [f"deploy-{i}" for i in range(0, n_deploy, every)]
        gpu_apps = gpu_apps[:max(1, min(a.churn, len(gpu_apps) // 10))]
        before = len(engine.lines())
        t = time.time()
        for i in range(0, len(gpu_apps), 50):
            rig.kubectl("delete", "pods", "-A", "--wait=false", "-l", f"app in ({','.join(gpu_apps[i:i + 50])})")

        def recreated():
            items = json.loads(rig.kubectl("get", "pods", "-A", "-l", f"app in ({','.join(gpu_apps)})", "-o",
                                           "json").stdout)["items"] if gpu_apps else []
            fresh = [p for p in items if ts_of({"ts": p["metadata"]["creationTimestamp"]}) >= math.floor(t)
                     and p["status"].get("phase") == "Running"]
            return len(fresh) >= len(gpu_apps)
        wait_for(recreated, 600, f"{len(gpu_apps)} pods recreated and Running", 3)
        churn_lines = engine.lines()[before:]
        r["churn_reviews"] = collections.Counter(
            l.get("pass") for l in churn_lines if l.get("msg") == "rightsizing summary" and l.get("phase") == "admission"
            and str(l.get("pod", "")).startswith("deploy-"))
        churned_at = time.time()
        log(f"{len(gpu_apps)} pods recreated; reviews by pass: {dict(r['churn_reviews'])}")
        time.sleep(a.settle_seconds)

        # The idle window, between two runs of the rig's CronJobs when they allow it.
        # The first reactive cycle after the recreated pods turn eligible changes their workloads' summaries (news,
        # at info: 100 lines in the 5k run that started its window right at minPodMetricsAge), so the window starts
        # one default interval (1m) and a margin after that.
        earliest = max(time.time(), churned_at + a.min_pod_age + 90)
        start = idle_window_start(schedule, a.idle_seconds, cron_margin, earliest)
        if start is None:
            r["window_note"] = f"not placed between CronJob runs ({schedule!r}, margin {cron_margin} s)"
            start = earliest
        else:
            r["window_note"] = f"between runs of the CronJobs ({schedule!r}), ≥ {cron_margin} s after one"
        r["window_note"] += (f"; starts {start - settled_at:.0f} s after the rig settled, "
                             f"{start - churned_at:.0f} s after the recreated pods ran")
        if start > time.time():
            log(f"waiting {start - time.time():.0f} s for the idle window")
            time.sleep(max(0.0, start - time.time()))
        samples = []  # (wall time, RSS KiB, CPU s)
        t0 = time.time()
        while time.time() - t0 < a.idle_seconds:
            rss, _, cpu = engine.stats()
            samples.append((time.time(), rss, cpu))
            time.sleep(1)
        rss, _, cpu = engine.stats()
        samples.append((time.time(), rss, cpu))
        t1 = samples[-1][0]
        lines = [l for l in engine.lines() if t0 <= ts_of(l) < t1]
        r["window"] = (t0, t1)
        r["idle_rss"] = statistics.median(s[1] for s in samples)
        r["idle_cores"] = (samples[-1][2] - samples[0][2]) / (t1 - t0)
        r["info"] = collections.Counter((l.get("logger", ""), l.get("msg", "")) for l in lines
                                        if l.get("level") == "info")
        r["levels"] = collections.Counter(l.get("level") for l in lines)
        r["window_reviews"] = sum(1 for l in lines if l.get("msg") == "rightsizing summary"
                                  and l.get("phase") == "admission")

        # CPU during each reactive cycle: from a second before its start to a second after its line.
        def cpu_between(a_, b_):
            inside = [s for s in samples if a_ <= s[0] <= b_]
            return (inside[-1][2] - inside[0][2], inside[-1][0] - inside[0][0]) if len(inside) >= 2 else (0, 0)
        cycles = [l for l in lines if l.get("msg") == "reactive cycle"]
        r["cycles"], spans, in_cycles = [], [], (0.0, 0.0)
        for c in cycles:
            end = ts_of(c)
            begin = end - float(c.get("cycleSeconds", 0))
            cpu_s, span = cpu_between(begin - 1, end + 1)
            spans.append((begin - 1, end + 1))
            r["cycles"].append({**{k: c.get(k) for k in ("workloads", "eligiblePods", "queries", "ok",
                                                       "cycleSeconds")},
                                "cores": cpu_s / span if span else None, "cpu_s": cpu_s})
            in_cycles = (in_cycles[0] + cpu_s, in_cycles[1] + span)
        out_cpu = (samples[-1][2] - samples[0][2]) - in_cycles[0]
        out_span = (t1 - t0) - in_cycles[1]
        r["idle_cores_outside"] = out_cpu / out_span if out_span > 0 else None
        log(f"idle window done: {sum(r['info'].values())} info lines, {len(cycles)} reactive cycles")

        # Admission at a fixed rate against the full caches.
        if a.rate > 0 and gpu_apps:
            r["load"], r["load_cores"], r["answer"] = webhook_load(bin_dir, rig, engine, workdir, gpu_apps[0], a.rate,
                                                                   a.rate_seconds)
            log(f"admission load: {r['load']}")
        r["prom_up"] = prom.query("sum(up)")
        r["prom_series"] = prom.query('count({__name__=~"kubex_gpu_.*"})')
        _, r["peak"], _ = engine.stats()
        r["sim_rss"], r["sim_hwm"], _ = rig.stats()
        r["prom_rss"], r["prom_hwm"], _ = proc_stats(prom.proc.pid)
        r["pods_now"] = rig.list_pods_paged()[1]
    finally:
        for p in (engine, prom, rig):
            if p:
                p.stop()
        if not a.keep:
            shutil.rmtree(workdir, ignore_errors=True)

    load_end = os.getloadavg()
    med = statistics.median
    minutes = (r["window"][1] - r["window"][0]) / 60
    info_total = sum(r["info"].values())
    print(rig.table)
    print()
    print(f"## kubex engine with everything on, scale {a.scale:g} ({nodes} nodes, {r['kubectl_pods']} pods)\n")
    print(f"Run {started:%Y-%m-%d %H:%M} UTC at commit `{commit}`{' (with uncommitted changes)' if dirty else ''}; "
          f"load average {load_start[0]:.2f} / {load_start[1]:.2f} / {load_start[2]:.2f} at the start, "
          f"{load_end[0]:.2f} / {load_end[1]:.2f} / {load_end[2]:.2f} at the end. Engine: "
          f"`{' '.join(engine_args)}`, default intervals and log level; the starter example, "
          f"{len(policies)} GpuConsolidationPolicy ({', '.join(p['metadata']['name'] for p in policies)}), "
          f"Prometheus scraping the sim's GPU exporter every {a.scrape_interval} s.\n")
    print("| measure | result |\n|---|---|")
    print(f"| baseline: kubectl LIST of all {r['kubectl_pods']} pods, pages of 500 (median of {a.reps}) | "
          f"{med(r['kubectl']):.1f} s |")
    print(f"| engine: start to \"caches synced\" (median of {a.reps}) | {med(r['sync']):.1f} s → "
          f"**{med(r['sync']) / med(r['kubectl']):.2f}× the kubectl LIST** |")
    print(f"| cached objects | {sum(r['objects'].values())}: {json.dumps(r['objects'])} |")
    print(f"| admission of real pods: {len(gpu_apps)} GPU Deployments' pods deleted and recreated | reviews "
          f"by pass: {json.dumps(dict(r['churn_reviews']))} |")
    print(f"| idle window | {minutes * 60:.0f} s, {r['window_note']}; {r['window_reviews']} admission reviews "
          f"in it |")
    print(f"| engine RSS steady (median over the idle window) / peak (VmHWM, whole run incl. the load) | "
          f"**{r['idle_rss'] / 1024:.0f} MiB / {r['peak'] / 1024:.0f} MiB** (peak at sync, median: "
          f"{med(r['peak_sync']) / 1024:.0f} MiB) |")
    outside = r["idle_cores_outside"]
    print(f"| engine CPU over the idle window / outside the reactive cycles | {r['idle_cores']:.4f} / "
          f"{'n/a' if outside is None else f'{outside:.4f}'} cores |")
    if r["cycles"]:
        cores = [c["cores"] for c in r["cycles"] if c["cores"] is not None]
        durations = ", ".join(f"{c['cycleSeconds']:.3f}" for c in r["cycles"])
        print(f"| reactive cycles in the window (default interval) | {len(r['cycles'])}; "
              f"cycleSeconds {durations}; "
              f"workloads/eligible pods/queries {r['cycles'][0]['workloads']}/{r['cycles'][0]['eligiblePods']}/"
              f"{r['cycles'][0]['queries']} |")
        print(f"| engine CPU during a reactive cycle (1 s before its start to 1 s after its line; median) | "
              f"{med(cores) if cores else float('nan'):.3f} cores, "
              f"{med(c['cpu_s'] for c in r['cycles']):.3f} CPU-s per cycle |")
    else:
        print("| reactive cycles in the window | none |")
    print(f"| **INFO lines per minute while nothing changes** (OBS-4: ≤ 10 at peer scale) | "
          f"**{info_total / minutes:.1f}** ({info_total} in {minutes:.1f} min; all levels: "
          f"{json.dumps(dict(r['levels']))}) |")
    if "load" in r:
        ld = r["load"]
        print(f"| admission at {a.rate:.0f} reviews/s, 8 connections, {a.rate_seconds:g} s (engine's late webhook) | "
              f"achieved {ld['throughput']:.0f}/s; p50 {ld['p50']:.2f} ms, **p99 {ld['p99']:.2f} ms**, p99.9 "
              f"{ld['p999']:.2f} ms, max {ld['max']:.1f} ms; failed or wrong {ld['failed']}"
              f"{' — ' + ld['error'] if ld['error'] else ''}; engine {r['load_cores']:.2f} cores |")
        patched = '"patch"' in r["answer"]
        print(f"| the reviewed pod's answer | {'a JSONPatch' if patched else 'allowed, no patch'}"
              f"{' (--dry-run)' if a.dry_run and not patched else ''}, {len(r['answer'])} bytes |")
    else:
        print("| admission at 1,000 reviews/s | not measured (--rate 0) |")
    print(f"| kubex-sim RSS / peak; Prometheus RSS / peak (at the end) | {r['sim_rss'] / 1024:.0f} / "
          f"{r['sim_hwm'] / 1024:.0f} MiB; {r['prom_rss'] / 1024:.0f} / {r['prom_hwm'] / 1024:.0f} MiB |")
    print(f"| pods at the end | {r['pods_now']} |")
    val = lambda q: q[0]["value"][1] if q else "0"  # noqa: E731
    print(f"| Prometheus: targets up / kubex_gpu_* series at the end | {val(r['prom_up'])} / "
          f"{val(r['prom_series'])} |")
    print("\nINFO lines in the idle window by logger and msg:\n")
    print("| logger | msg | lines | per minute |\n|---|---|---|---|")
    for (lg, msg), n in r["info"].most_common():
        print(f"| {lg} | {msg} | {n} | {n / minutes:.1f} |")
    if not r["info"]:
        print("| — | — | 0 | 0 |")


if __name__ == "__main__":
    main()
