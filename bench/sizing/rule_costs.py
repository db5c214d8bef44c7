#!/usr/bin/python3
"""Sizing on a production trace (issue 36): runs bench-sizing on ../shared/data/alibaba-gentd26 (Alibaba Cluster
Trace Program, cluster-trace-v2026-GenAI) and prints the Markdown tables of docs/performance.md:

1. the guide's starter example and the safe-sizing preset at 24, 48 and 80 GiB devices, with the four references;
2. what each rule costs: the starter with ONE setting changed at a time, at 48 GiB.

Usage: bench/sizing/rule_costs.py [--build build] [--data DIR]
"""
import argparse
import copy
import json
import pathlib
import subprocess
import sys
import tempfile

import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
STARTER = ROOT / "examples" / "kai-gpu-sharing.yaml"
PRESET = ROOT / "examples" / "kai-gpu-sharing-safe-sizing.yaml"


def bench(build, data, policy, device_mib):
    r = subprocess.run([str(build / "bin" / "bench-sizing"), "--memory", str(data / "pod_gpu_memory_used_bytes_anon.csv"),
                        "--duty", str(data / "pod_gpu_duty_cycle_anon.csv"), "--device-mib", str(device_mib),
                        "--policy", str(policy), "-o", "json"], capture_output=True, text=True, check=False)
    if r.returncode:
        sys.exit(f"bench-sizing failed: {r.stderr}")
    return json.loads(r.stdout)


def reactive(docs):
    return next(d for d in docs if d["kind"] == "ClusterGpuReactivePolicy")["spec"]


def signals(docs, which):
    spec = reactive(docs)
    return [spec["metrics"][s] for s in (("compute", "memory") if which == "both" else (which,))]


def setting(which, block, field, value):
    def change(docs):
        for s in signals(docs, which):
            s[block][field] = value
    return change


def no_proactive(docs):
    docs[:] = [d for d in docs if d["kind"] != "ClusterProactivePolicy"]


def proactive_headroom(value):
    def change(docs):
        docs.append({"apiVersion": "rightsizing.kubex.ai/v1alpha1", "kind": "GlobalConfiguration",
                     "metadata": {"name": "global-config"}, "spec": {"proactive": {"headroomPercent": value}}})
    return change


def min_age(value):
    def change(docs):
        reactive(docs)["minPodMetricsAge"] = value
    return change


# One change at a time from the starter: what it is, the rule, and the change.
VARIANTS = [
    ("without the baseline ClusterProactivePolicy", "REA-5", no_proactive),
    ("minPodMetricsAge 1m (starter 10m)", "REA-2", min_age("1m")),
    ("compute upsize threshold 150 % (starter 100)", "REA-6", setting("compute", "upsize", "thresholdPercent", 150)),
    ("memory upsize threshold 90 % (starter 100)", "REA-6", setting("memory", "upsize", "thresholdPercent", 90)),
    ("memory upsize headroom 50 % (starter 20)", "REA-6", setting("memory", "upsize", "headroomPercent", 50)),
    ("scale-back threshold 60 % (starter 75)", "REA-7", setting("both", "scaleBack", "thresholdPercent", 60)),
    ("scale-back window 4h (starter 10m)", "REA-7", setting("both", "scaleBack", "metricsWindow", "4h")),
    ("scale-back headroom 50 % (starter 20)", "REA-7", setting("both", "scaleBack", "headroomPercent", 50)),
    ("proactive headroom 50 % (GlobalConfiguration, default 20)", "PRO-3", proactive_headroom(50)),
]


def row(name, k, oracle):
    ratio = k["saved_percent"] / oracle["saved_percent"] if oracle["saved_percent"] else 0
    return (f"| {name} | {k['saved_percent']:.1f} | {ratio:.2f} | {k['over_allocation_percent']:.3f} | "
            f"{k['over_allocation_episodes']} | {k['resizes_per_container_day']:.2f} |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=str(ROOT / "build"))
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "alibaba-gentd26"))
    args = ap.parse_args()
    build, data = pathlib.Path(args.build), pathlib.Path(args.data)
    if not data.is_dir():
        print(f"sizing: {data} not found, skipped")
        return

    print("Sizing on a production trace (bench-sizing; Alibaba Cluster Trace Program, cluster-trace-v2026-GenAI)")
    print()
    print("| device | sizer | saved % | of the oracle's | memory above allocation, % of samples | episodes | "
          "resizes per container-day |")
    print("|---|---|---|---|---|---|---|")
    for device in (24576, 49152, 81920):
        starter = bench(build, data, STARTER, device)
        preset = bench(build, data, PRESET, device)
        oracle = starter["oracle_hourly"]
        for name, k in (("kubex, the guide's starter", starter["kubex"]), ("kubex, safe-sizing preset", preset["kubex"]),
                        ("oracle (hourly peak × 1.2)", oracle), ("static peak × 1.2", starter["static_peak"]),
                        ("p95 of history × 1.2", starter["p95_history"]),
                        ("oracle, ≤ 4 resizes per container-day", starter["oracle_4_resizes_per_day"])):
            print(f"| {device // 1024} GiB " + row(name, k, oracle))
    print()
    print("What each rule costs (48 GiB; the starter with one setting changed):")
    print()
    print("| change | rule | saved % | of the oracle's | memory above allocation, % | episodes | resizes/day |")
    print("|---|---|---|---|---|---|---|")
    base = list(yaml.safe_load_all(STARTER.read_text()))
    starter = bench(build, data, STARTER, 49152)
    oracle = starter["oracle_hourly"]
    print(row("the guide's starter, as written", starter["kubex"], oracle).replace(" |", " | — |", 1))
    with tempfile.TemporaryDirectory() as tmp:
        for i, (name, rule, change) in enumerate(VARIANTS):
            docs = copy.deepcopy(base)
            change(docs)
            path = pathlib.Path(tmp) / f"variant-{i}.yaml"
            path.write_text(yaml.safe_dump_all(docs))
            print(row(name, bench(build, data, path, 49152)["kubex"], oracle).replace(" |", f" | {rule} |", 1))


if __name__ == "__main__":
    main()
