"""TEL-4 end to end: a reactive policy whose metric gives two pods sharing one GPU the same series refuses it.

kubex-sim (KAI fractions, one single-GPU node per workload), a real Prometheus and the real `kubex engine`. A
Prometheus recording rule plays DCGM's per-pod mode: under `dcgm_like_*` names it publishes, for every pod on a GPU,
the GPU's total (plus a term that moves with time, as a real device's activity does) instead of the pod's own use.
One policy reads those names for a two-replica Deployment whose pods share a GPU; another policy reads the
per-container metrics (kubex-sim's, per process) for a Deployment on another node."""
import json

import pytest
import yaml

from conftest import ROOT, EngineProcess, wait_for
from test_gpu_metrics import Prometheus, start_gpu_sim
from test_reactive import (API, CW, HANG, SIM_CONFIG, apply, condition, kai_deployment, owner_annotation, queue,
                           running, starter_docs, wait_recommendation)

COPIED = "tel-copied"  # two pods on one GPU, read through the DCGM-like metrics
OWN = "tel-own"        # one pod on another node, read through the per-container metrics
POLICY = "dcgm-like-reactive"

# The device's value copied onto each sharer: the sum (SM) or maximum (memory) over the GPU's containers, with
# `time() % 7` added to the SM so that the copied series moves, matched back onto every container series of that GPU.
RULES = {"groups": [{"name": "dcgm-like", "interval": "1s", "rules": [
    {"record": "dcgm_like_sm_percent",
     "expr": "(sum by (node, gpu_uuid) (kubex_gpu_container_sm_utilization_percent) + (time() % 7))"
             " * on (node, gpu_uuid) group_right () (0 * kubex_gpu_container_sm_utilization_percent + 1)"},
    {"record": "dcgm_like_memory_percent",
     "expr": "max by (node, gpu_uuid) (kubex_gpu_container_memory_footprint_percent)"
             " * on (node, gpu_uuid) group_right () (0 * kubex_gpu_container_memory_footprint_percent + 1)"},
]}]}


def _age(rfc3339):
    import datetime
    t = datetime.datetime.fromisoformat(rfc3339.replace("Z", "+00:00"))
    return (datetime.datetime.now(datetime.timezone.utc) - t).total_seconds()


def policies():
    """The starter's strategy and reactive policy twice: one per namespace, the first reading the copied series."""
    docs = starter_docs()
    strategy = next(d for d in docs if d["kind"] == "ClusterAutomationStrategy")
    base = next(d for d in docs if d["kind"] == "ClusterGpuReactivePolicy")
    copied = json.loads(json.dumps(base))
    copied["metadata"]["name"] = POLICY
    copied["spec"]["scope"]["namespaceSelector"]["values"] = [COPIED]
    copied["spec"]["metrics"]["compute"]["prometheus"]["metric"] = "dcgm_like_sm_percent"
    copied["spec"]["metrics"]["memory"]["prometheus"]["metric"] = "dcgm_like_memory_percent"
    own = json.loads(json.dumps(base))
    own["spec"]["scope"]["namespaceSelector"]["values"] = [OWN]
    return strategy, copied, own


@pytest.fixture(scope="module")
def env(sim_factory, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("tel4")
    sim, metrics = start_gpu_sim(sim_factory, tmp, SIM_CONFIG)
    rules = tmp / "rules.yaml"
    rules.write_text(yaml.safe_dump(RULES))
    prom = Prometheus(metrics, rules=rules)
    sim.kubectl("apply", "-k", str(ROOT / "config" / "crd"))
    sim.kubectl("create", "namespace", "kubex")
    apply(sim, queue("kubex-parent-queue"), queue("kubex-unlimited-gpu-queue", parent="kubex-parent-queue"))
    apply(sim, {"apiVersion": API, "kind": "GlobalConfiguration", "metadata": {"name": "global-config"},
                "spec": {"prometheus": {"url": prom.url, "requestTimeout": "5s"},
                         "kai": {"memoryIsolation": "HAMiCore"}}})
    strategy, _, own = policies()
    apply(sim, strategy, own)
    engine = EngineProcess(sim.kubeconfig, "kubex", leader_elect=False, extra_args=[
        "--webhook-bind-address", "127.0.0.1:0", "--self-signed-webhook", "--register-webhooks",
        "--early-webhook-enabled", "--reactive-check-interval", "5s"])
    engine.wait_ready(timeout=HANG)
    for i, (ns, replicas) in enumerate(((COPIED, 2), (OWN, 1))):
        sim.kubectl("create", "namespace", ns)
        apply(sim, kai_deployment("infer", ns, "0.25", "45", "1024", f"g-node-{i}", replicas=replicas))
    yield sim, prom, engine
    engine.stop()
    prom.stop()


def test_copied_series_on_one_gpu_set_metrics_not_per_pod_and_recommend_nothing(env):  # TEL-4, OBS-4
    sim, prom, engine = env
    pods = wait_for(lambda: (r := running(sim, COPIED)) and len(r) == 2 and r, timeout=HANG, what="two pods running")
    names = sorted(p["metadata"]["name"] for p in pods)
    groups = {(p["spec"]["nodeName"], p["metadata"]["labels"].get("runai-gpu-group")) for p in pods}
    assert len(groups) == 1 and None not in next(iter(groups)), groups  # KAI put both on one GPU
    # The policy comes once the upsize window (1m) holds only the two copies' common time: before that the younger
    # pod's copy is shorter and differs (docs/reactive.md; a real policy's minPodMetricsAge above the window does this).
    started = max(p["status"]["startTime"] for p in pods)
    wait_for(lambda: _age(started) > 66, timeout=HANG, interval=1, what="both pods' copies a window old")
    apply(sim, policies()[1])
    # The copies: each pod reads 90 % of a GPU (+ up to 6), four times its 0.25 share, and the same as the other.
    copied = prom.query(f'dcgm_like_sm_percent{{namespace="{COPIED}"}}')
    assert sorted(k[1] for k in copied) == names and len(set(copied.values())) == 1, copied

    ready = wait_for(lambda: (c := condition(sim, "clustergpureactivepolicy", POLICY, "Ready"))
                     and c["reason"] == "MetricsNotPerPod" and c, timeout=HANG, what="Ready=False/MetricsNotPerPod")
    assert ready["status"] == "False"
    assert ready["message"].startswith(
        f'metrics "dcgm_like_sm_percent" and "dcgm_like_memory_percent" give pods {COPIED}/{names[0]} and '
        f'{COPIED}/{names[1]} on one GPU the same series'), ready["message"]
    assert "use kubex gpu-exporter or another per-process source" in ready["message"]
    line = engine.wait_line("reactive cycle", timeout=HANG, policy=f"ClusterGpuReactivePolicy/{POLICY}",
                            podsNotPerPod=2)
    assert line["ok"] is True
    # A few more cycles: still refused, and nothing was ever written for the workload (an upsize to 0.5 otherwise).
    n = len(engine.find_all("reactive cycle", policy=f"ClusterGpuReactivePolicy/{POLICY}"))
    wait_for(lambda: len(engine.find_all("reactive cycle", policy=f"ClusterGpuReactivePolicy/{POLICY}")) >= n + 2,
             timeout=HANG, what="two more cycles")
    assert condition(sim, "clustergpureactivepolicy", POLICY, "Ready")["reason"] == "MetricsNotPerPod"
    assert owner_annotation(sim, COPIED, CW + "desired-resource-requests") is None
    assert all(l.get("podsNotPerPod") in (0, 2)
               for l in engine.find_all("reactive cycle", policy=f"ClusterGpuReactivePolicy/{POLICY}"))


def test_a_policy_reading_per_container_metrics_is_unaffected(env):  # TEL-4, REA-6
    sim, _, _ = env
    wait_for(lambda: running(sim, OWN), timeout=HANG, what="the pod running")
    # min(0.45 × 1.2, 0.25 × 200 %) = 0.5, as in test_reactive's X1.
    assert wait_recommendation(sim, OWN, "0.5", timeout=HANG) == {"app": {"gpu": "0.5"}}
    ready = condition(sim, "clustergpureactivepolicy", "kai-gpu-sharing-reactive", "Ready")
    assert (ready["status"], ready["reason"]) == ("True", "Reconciled")
