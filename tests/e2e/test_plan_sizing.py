"""`kubex plan sizing` end to end (issue 36 item 3): kubex-sim, a REAL Prometheus holding an hour of gpu-process-exporter
samples backfilled with promtool (tests/e2e/gpu_history.py, as the PRO-2 history tests do it), and no engine: the
command only reads. It replays a reactive policy on the workloads it wins (SEL-7) through the engine's own decisions
(decide/sizing/replay.h) and prints what the policy would have held.

The cluster: namespace `sizing` with two Deployments written as `nvidia.com/gpu: 1` (labelled for the policies' scope):
`infer`, whose earlier pod `infer-5d8f7c9b6-k2x4q` left 60 one-minute samples in Prometheus, and `quiet`, which left
none. The file POLICY holds a ClusterAutomationStrategy `sizing-kai` (KAI, GPU requests may go up and down, ceiling 1),
a ClusterStaticPolicy `sizing-static` (requests.gpu "0.5") and a ClusterGpuReactivePolicy `sizing-reactive` (the
guide's starter rules: both signals upsize 100 %/2m/+20 %/max 200 %, scale back below 75 %/10m/+20 %; compute
fullGPU, memory currentAllocation) with minPodMetricsAge 1m.

infer's history, sample i = 0…59 one minute apart: compute (SM) 10 % throughout; memory 30 % of its allocation (1 GPU
now: 0.30 GPU) for i < 30, then 55 % (0.55 GPU) from i = 30 on. Hand derivation of the replay with the file:
  i = 0   held 1 (as written). The pod is 0 s old < minPodMetricsAge 1m: no eligible pod, no reactive value (REA-2).
          SEL-6: no reactive value, so the static 0.5 is desired; ADM-7 (ceiling 1) keeps it; ADM-9: 0.5 < 1 is a
          downsize, allowed; ADM-8: below 1, held as 0.5. Resize 1 (one eviction); the new pod starts its own series.
  i = 1…29  held 0.5, B = 0.5 (REA-5: no reactive entry, the baseline is the allocation). Memory 0.30 = 60 % of 0.5:
          no upsize (REA-6: 60 < 100); scale-back (REA-7: every pod below 75 %) gives max(0.30 × 1.2, B) = 0.5, not
          < 0.5: none. Compute 0.10 = 20 %: no upsize; scale-back max(0.12, 0.5) = 0.5: none. No sample is above
          0.5.
  i = 30  held 0.5, memory 0.55 = 110 % ≥ 100 (REA-6, the 2m window's max_over_time holds sample 30): candidate
          min(0.55 × 1.2, 0.5 × 200 %) = 0.66 > 0.5 (GPU-1: 66.000…01 rounds to 0.66). REA-8: the only candidate,
          driver memory. ADM-7/9/8: 0.66 ≤ ceiling 1, below as written (a downsize, allowed), held as 0.66.
          Sample 30 itself was taken under 0.5: 0.55 > 0.5 is the one sample above the allocation, one episode.
          Resize 2.
  i = 31…59  held 0.66. Memory 0.55 = 83 %: neither ≥ 100 (REA-6) nor < 75 (REA-7). Compute 0.10 = 15 % < 75 %:
          scale-back candidate max(0.12, B = 0.5) = 0.5 < 0.66, but it is lower than the recommendation and comes
          from compute while the stored driver (memory) gave no candidate: not accepted (REA-8). No sample above.
Tally (each sample covers its minute): held = 1 × 1 + 29 × 0.5 + 1 × 0.5 + 29 × 0.66 = 35.14 GPU-minutes = 0.585667 GPU-hours against 60 GPU-minutes = 1 GPU-hour as written: saved 41.4333 %; 1 of 60
samples above the allocation (1.6667 %), 1 episode; 2 resizes over 60 minutes = 1/24 container-day: 48 per day.

With `--policy sizing-reactive` (read from the cluster) only the reactive policy and its strategy are replayed (no
static value): held stays 1 throughout. Memory 30 % and 55 % of 1 never reach 100 % (REA-6); scale-back candidates are
max(H × 1.2, B = 1) = 1, never < 1 (REA-7): saved 0 %, no sample above 1, no resize."""
import json
import subprocess
import time

import pytest
import yaml

from conftest import BIN, ROOT, wait_for
from gpu_history import Series
from test_gpu_metrics import Prometheus, start_gpu_sim
from test_reactive import apply

KUBEX = str(BIN / "kubex")
API = "rightsizing.kubex.ai/v1alpha1"
NS = "sizing"
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
SCOPE = {"namespaceSelector": {"operator": "In", "values": [NS]},
         "labelSelector": {"matchLabels": {"nvidia.com/gpu.present": "true"}}, "workloadTypes": ["Deployment"]}
RULES = {"upsize": {"thresholdPercent": 100, "metricsWindow": "2m", "headroomPercent": 20, "maxPercent": 200},
         "scaleBack": {"thresholdPercent": 75, "metricsWindow": "10m", "headroomPercent": 20}}
LABELS = {"namespaceLabel": "namespace", "podLabel": "pod", "containerLabel": "container"}
POLICY_DOCS = [
    {"apiVersion": API, "kind": "ClusterAutomationStrategy", "metadata": {"name": "sizing-kai"},
     "spec": {"experimental": {"gpuKaiContract": "v1alpha1-2026-07"},
              "enablement": {"overrideScheduler": "kai",
                             "gpu": {"requests": {"downsize": True, "upsize": True, "ceiling": "1"}}}}},
    {"apiVersion": API, "kind": "ClusterStaticPolicy", "metadata": {"name": "sizing-static"},
     "spec": {"scope": SCOPE, "resources": {"containers": {"*": {"requests": {"gpu": "0.5"}}}},
              "automationStrategyRef": {"name": "sizing-kai"}}},
    {"apiVersion": API, "kind": "ClusterGpuReactivePolicy", "metadata": {"name": "sizing-reactive"},
     "spec": {"experimental": {"gpuKaiContract": "v1alpha1-2026-07"}, "scope": SCOPE, "minPodMetricsAge": "1m",
              "metrics": {"compute": {**RULES, "prometheus": {"metric": "kubex_gpu_container_sm_utilization_percent",
                                                              "interpretation": "fullGPU", **LABELS}},
                          "memory": {**RULES, "prometheus": {"metric": "kubex_gpu_container_memory_footprint_percent",
                                                             "interpretation": "currentAllocation", **LABELS}}},
              "automationStrategyRef": {"name": "sizing-kai"}}},
]
FIELDS = {"gpu_hours_as_written", "gpu_hours_held", "saved_percent", "over_allocation_percent",
          "over_allocation_episodes", "resizes_per_container_day"}


def deployment(name):
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": NS, "labels": {"app": name, "nvidia.com/gpu.present": "true"}},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "app", "image": "vllm/vllm-openai:v0.6",
                                                           "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}}}


def history(now):
    """infer's earlier pod: 60 samples a minute apart ending 90 s ago (module docstring)."""
    start = now - 90 - 59 * 60
    return [Series(NS, "infer-5d8f7c9b6-k2x4q", "app", sm=10.0, memory=lambda t: 30.0 if t < 30 * 60 - 1 else 55.0,
                   start=start, end=start + 59 * 60 + 1, allocation="whole")]


@pytest.fixture(scope="module")
def env(sim_factory, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("plan-sizing")
    sim, _ = start_gpu_sim(sim_factory, tmp, SIM_CONFIG)
    prom = Prometheus(None, history=history(time.time()), query_log=True)
    sim.kubectl("apply", "-k", str(ROOT / "config" / "crd"))
    apply(sim, {"apiVersion": API, "kind": "GlobalConfiguration", "metadata": {"name": "global-config"},
                "spec": {"prometheus": {"url": prom.url, "requestTimeout": "10s"}}})
    sim.kubectl("create", "namespace", NS)
    apply(sim, deployment("infer"), deployment("quiet"))
    wait_for(lambda: len([p for p in sim.kubectl_json("get", "pods", "-n", NS)["items"]
                          if p["status"].get("phase") == "Running"]) == 2, timeout=60, what="both pods running")
    policy = tmp / "policy.yaml"
    policy.write_text(yaml.safe_dump_all(POLICY_DOCS))
    yield sim, prom, policy
    prom.stop()


def kubex(sim, *args, input=None):
    return subprocess.run([KUBEX, "plan", "sizing", "--kubeconfig", sim.kubeconfig, *args], input=input,
                          capture_output=True, text=True, timeout=60)


def plan_json(sim, *args, input=None):
    res = kubex(sim, *args, "-o", "json", input=input)
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["apiVersion"] == "cli.kubex.ai/v1alpha1" and doc["kind"] == "SizingPlan" and doc["since"] == "2h"
    return doc


def rows(policy):
    return {w["name"]: w for w in policy["workloads"]}


def test_file_policy_replays_one_static_downsize_and_one_memory_upsize_exactly(env):
    # SEL-6, REA-2, REA-5…REA-8, ADM-7…ADM-9, GPU-1: the derivation of the module docstring, field by field.
    sim, prom, policy = env
    doc = plan_json(sim, "--policy", str(policy), "--since", "2h")
    (p,) = doc["policies"]
    assert p["name"] == "sizing-reactive" and p["policy"] == "ClusterGpuReactivePolicy/sizing-reactive"
    assert p["source"] == str(policy) and p["strategy"] == "ClusterAutomationStrategy/sizing-kai"
    got = rows(p)
    assert set(got) == {"infer", "quiet"}  # SEL-7: the reactive policy wins both Deployments
    infer = got["infer"]
    assert (infer["namespace"], infer["kind"], infer["container"], infer["gpus_as_written"], infer["history"]) == \
        (NS, "Deployment", "app", "1", True)
    assert FIELDS <= set(infer)
    assert infer["samples"] == 60
    assert infer["gpu_hours_as_written"] == pytest.approx(1.0, abs=1e-9)
    assert infer["gpu_hours_held"] == pytest.approx(35.14 / 60, abs=1e-9)
    assert infer["saved_percent"] == pytest.approx(100 * (1 - 35.14 / 60), abs=1e-9)
    assert infer["over_allocation_samples"] == 1 and infer["over_allocation_episodes"] == 1
    assert infer["over_allocation_percent"] == pytest.approx(100 / 60, abs=1e-9)
    assert infer["resizes"] == 2 and infer["resizes_per_container_day"] == pytest.approx(48, abs=1e-9)
    # The reference sizers on the same samples (decide/sizing/replay.h): demand = max(memory, compute), peak 0.55.
    # oracle_hourly (the one hour's peak × 1.2 = 0.66 from the first sample) and static_peak (the window's peak, the
    # same 0.66): 60 × 0.66 = 39.6 GPU-minutes, saved 34 %, never below the memory, one resize (1 → 0.66).
    # p95_history holds the value as written for its first hour, which is the whole history: saved 0, no resize.
    base = infer["baselines"]
    assert set(base) == {"oracle_hourly", "static_peak", "p95_history"}
    for name in ("oracle_hourly", "static_peak"):
        assert base[name]["saved_percent"] == pytest.approx(34.0, abs=1e-9), base
        assert (base[name]["over_allocation_samples"], base[name]["resizes"]) == (0, 1), base
    assert base["p95_history"]["saved_percent"] == pytest.approx(0, abs=1e-9) and base["p95_history"]["resizes"] == 0
    # quiet left no sample: it says so instead of a number.
    assert got["quiet"]["history"] is False and "saved_percent" not in got["quiet"]
    total = p["total"]
    assert FIELDS <= set(total)
    assert total["gpu_hours_held"] == pytest.approx(infer["gpu_hours_held"], abs=1e-9)
    assert total["over_allocation_episodes"] == 1 and total["resizes"] == 2
    # PRO-2 batching: one range query per signal covers both Deployments (pod-name alternation + the kind's suffix).
    sent = [q for q in prom.queries() if "max_over_time" in q and NS in q]
    assert len(sent) == 2, sent
    assert all('(infer|quiet)-[a-z0-9]+-[a-z0-9]+' in q for q in sent), sent


def test_table_names_each_workload_and_says_no_history_for_a_workload_without_samples(env):
    sim, _, policy = env
    res = kubex(sim, "--policy", "-", "--since", "2h", input=policy.read_text())  # `-`: the file on stdin
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[0].startswith("ClusterGpuReactivePolicy/sizing-reactive (<stdin>)"), res.stdout
    infer = next(l for l in lines if "sizing/Deployment/infer" in l).split()
    assert infer[1:] == ["app", "1", "0.59", "41.4%", "1", "(1.67%)", "1", "48.00"], res.stdout
    assert "no history" in next(l for l in lines if "sizing/Deployment/quiet" in l)
    assert any(l.split()[:1] == ["TOTAL"] for l in lines), res.stdout


def test_policy_name_replays_the_cluster_policy_with_its_strategy_only(env):
    # The objects applied: --policy NAME reads the policy and the strategy it references from the cluster; no static
    # value then, so held stays as written (REA-6, REA-7: module docstring).
    sim, _, policy = env
    sim.kubectl("apply", "-f", str(policy))
    doc = plan_json(sim, "--policy", "sizing-reactive", "--since", "2h")
    (p,) = doc["policies"]
    assert p["source"] == "cluster" and p["strategy"] == "ClusterAutomationStrategy/sizing-kai"
    infer = rows(p)["infer"]
    assert infer["gpu_hours_held"] == pytest.approx(1.0, abs=1e-9) and infer["saved_percent"] == pytest.approx(0)
    assert (infer["over_allocation_samples"], infer["resizes"]) == (0, 0)
    # Without --policy: every reactive policy of the cluster, one section each.
    assert [x["name"] for x in plan_json(sim, "--since", "2h")["policies"]] == ["sizing-reactive"]


def test_unknown_policy_or_unreachable_prometheus_exits_1_with_a_message(env):
    sim, _, policy = env
    res = kubex(sim, "--policy", "no-such-policy")
    assert res.returncode == 1 and res.stdout == ""
    assert 'kubex plan sizing: GpuReactivePolicy or ClusterGpuReactivePolicy "no-such-policy" not found' in res.stderr
    res = kubex(sim, "--policy", str(policy), "--prometheus-url", "http://127.0.0.1:1")
    assert res.returncode == 1 and "Prometheus range query to http://127.0.0.1:1/api/v1/query_range" in res.stderr, \
        res.stderr


def test_invalid_policy_file_exits_1_with_the_validators_message(env, tmp_path):
    # VAL-1: the file is validated as the webhook validates it; an invalid reactive policy is not replayed.
    sim, _, _ = env
    docs = json.loads(json.dumps(POLICY_DOCS))
    docs[2]["spec"]["minPodMetricsAge"] = "soon"
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump_all(docs))
    res = kubex(sim, "--policy", str(bad), "-o", "json")
    assert res.returncode == 1, res.stderr
    assert "ClusterGpuReactivePolicy/sizing-reactive" in res.stderr and "minPodMetricsAge" in res.stderr, res.stderr
    (p,) = json.loads(res.stdout)["policies"]
    assert p["workloads"] == [] and p["errors"], p


@pytest.mark.parametrize("args", [["--since", "soon"], ["-o", "yaml"], ["--no-such-flag"]])
def test_bad_usage_exits_2(env, args):
    sim, _, _ = env
    res = kubex(sim, *args)
    assert res.returncode == 2 and res.stdout == "", (res.returncode, res.stderr)
    assert "kubex plan sizing" in res.stderr


def test_help_lists_plan_sizing_and_describes_its_flags():
    top = subprocess.run([KUBEX, "--help"], capture_output=True, text=True, timeout=10)
    assert top.returncode == 0 and "sizing (a reactive policy replayed on your Prometheus history)" in top.stdout
    plan = subprocess.run([KUBEX, "plan", "--help"], capture_output=True, text=True, timeout=10)
    assert plan.returncode == 0 and "sizing" in plan.stdout and "consolidation" in plan.stdout
    res = subprocess.run([KUBEX, "plan", "sizing", "--help"], capture_output=True, text=True, timeout=10)
    assert res.returncode == 0
    for flag in ("--policy", "--since TEXT=7d", "-o,--output", "--kubeconfig", "--context", "--prometheus-url"):
        assert flag in res.stdout, (flag, res.stdout)
