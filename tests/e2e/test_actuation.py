"""Safe actuation end to end (issue 15, SPEC §8 ACT-1…ACT-8): kubex-sim with its GPU model, a real Prometheus
scraping it every second, and the real `kubex engine` with its webhooks. The reactive recommender (the seed's
starter example with 1m windows and minPodMetricsAge 0s, evaluating every 10 s) writes new GPU sizes; the
actuation controller brings running pods to them by eviction, one at a time, honouring PDBs and pauses."""
import json
import threading
import time

import pytest

from conftest import wait_for
from test_gpu_metrics import start_gpu_sim
from test_reactive import (API, RestartablePrometheus, apply, install_starter, kai_deployment, metric,
                           running, start_engine, wait_recommendation)

SIM_CONFIG = """
nodePools:
  - name: g
    count: 8
    gpusPerNode: 2
    gpuProduct: Tesla-T4
    gpuMemoryMiB: 16384
    cpu: "32"
    memory: 128Gi
kubelet:
  jobRunTime: 30m
"""


def fractions(sim, ns, name="infer"):
    return sorted(p["metadata"].get("annotations", {}).get("gpu-fraction", "whole") for p in running(sim, ns, name))


def ready_count(sim, ns, name="infer"):
    return sum(1 for p in running(sim, ns, name)
               if any(c["type"] == "Ready" and c["status"] == "True" for c in p["status"].get("conditions", [])))


def events(sim, ns, reason):
    return [e for e in sim.kubectl_json("get", "events", "-n", ns)["items"] if e.get("reason") == reason]


class Watcher:
    """Samples a Deployment's pods every 0.2 s through the official Python client and records the largest number
    of unavailable replicas (spec.replicas minus pods that are Ready and not terminating) it ever saw."""

    def __init__(self, sim, ns, name, replicas):
        self.api = sim.client()
        self.ns, self.name, self.replicas = ns, name, replicas
        self.max_unavailable = 0
        self.worst = []
        self.samples = 0
        self.stop_ = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        from kubernetes import client
        core = client.CoreV1Api(self.api)
        while not self.stop_.is_set():
            items = core.list_namespaced_pod(self.ns, label_selector=f"app={self.name}").items
            ready = 0
            for p in items:
                if p.metadata.deletion_timestamp:
                    continue
                conds = p.status.conditions or []
                if any(c.type == "Ready" and c.status == "True" for c in conds):
                    ready += 1
            if self.replicas - ready > self.max_unavailable:
                self.max_unavailable = self.replicas - ready
                self.worst = [(p.metadata.name, p.status.phase, bool(p.metadata.deletion_timestamp)) for p in items]
            self.samples += 1
            time.sleep(0.2)

    def stop(self):
        self.stop_.set()
        self.thread.join(timeout=10)
        return self.max_unavailable


@pytest.fixture(scope="module")
def env(sim_factory, tmp_path_factory):
    sim, metrics = start_gpu_sim(sim_factory, tmp_path_factory.mktemp("actuation-sim"), SIM_CONFIG)
    prom = RestartablePrometheus(metrics)
    install_starter(sim, prom)
    engine = start_engine(sim)
    # ACT-2: evictions wait for PodAdmissionWebhookHealthy=True.
    wait_for(lambda: any(c["type"] == "PodAdmissionWebhookHealthy" and c["status"] == "True"
                         for c in sim.kubectl_json("get", "globalconfiguration", "global-config")
                         .get("status", {}).get("conditions", [])),
             timeout=90, interval=1, what="PodAdmissionWebhookHealthy=True")
    yield sim, prom, engine
    engine.stop()
    prom.stop()


# Three replicas share a GPU (KAI packs fractions), so each demands 30 % of a GPU: 90 % together, no SM
# contention in the GPU model. At 0.25 that is 120 % of the allocation: min(0.3 × 1.2, 0.25 × 2) = 0.36.
def test_resize_replaces_pods_one_at_a_time_and_back(env):  # ACT-1, ACT-3, ACT-4, OBS-4, OBS-5
    sim, prom, engine = env
    ns = "act-resize"
    sim.kubectl("create", "namespace", ns)
    apply(sim, kai_deployment("infer", ns, "0.25", "30", "1024", "g-node-0", replicas=3))
    wait_for(lambda: ready_count(sim, ns) == 3, timeout=60, what="three pods Ready")
    watcher = Watcher(sim, ns, "infer", 3)
    try:
        wait_recommendation(sim, ns, "0.36")
        # Every pod is replaced through admission and gets the new fraction.
        wait_for(lambda: fractions(sim, ns) == ["0.36", "0.36", "0.36"], timeout=240, interval=1,
                 what="all three pods at 0.36")
    finally:
        worst = watcher.stop()
    assert watcher.samples > 20  # the watcher saw the whole replacement
    assert worst <= 1, f"{worst} pods unavailable at once (budget max(1, maxUnavailable 25% of 3) = 1): {watcher.worst}"
    assert len(events(sim, ns, "PolicyEvaluationEvictResize")) >= 3
    assert metric(engine, "kubex_evictions_total", reason="resize", result="success") >= 3
    line = engine.wait_line("rightsizing summary", phase="actuation", namespace=ns, rightsizingResult="EVICTED")
    assert line["owner"] == "Deployment/infer"
    assert {"container": "app", "resource": "gpu", "usage": "request", "from": "0.25", "to": "0.36"} in line["changes"]
    engine.wait_line("rightsizing summary", phase="actuation", namespace=ns, rightsizingResult="IN_SYNC",
                     timeout=90)

    # Demand drops (a new template rolls the pods out, still at the recommendation 0.36): after the 1m
    # scale-back window the recommendation returns to the baseline and the pods follow, one at a time.
    sim.kubectl("patch", "deployment", "infer", "-n", ns, "--type=merge", "-p", json.dumps(
        {"spec": {"template": {"metadata": {"annotations": {"sim.kubex.ai/gpu-sm-percent": "5"}}}}}))
    wait_for(lambda: (r := running(sim, ns)) and len(r) == 3 and all(
        p["metadata"]["annotations"].get("sim.kubex.ai/gpu-sm-percent") == "5" for p in r)
        and ready_count(sim, ns) == 3, timeout=120, interval=1, what="the rollout to 5 % demand")
    watcher = Watcher(sim, ns, "infer", 3)
    try:
        wait_recommendation(sim, ns, "0.25", timeout=180)
        wait_for(lambda: fractions(sim, ns) == ["0.25", "0.25", "0.25"], timeout=240, interval=1,
                 what="all three pods back at 0.25")
    finally:
        worst = watcher.stop()
    assert worst <= 1, f"{worst} pods unavailable at once: {watcher.worst}"


def test_pdb_refusal_retries_and_proceeds_when_relaxed(env):  # ACT-5, OBS-2
    sim, prom, engine = env
    ns = "act-pdb"
    sim.kubectl("create", "namespace", ns)
    apply(sim, {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "infer", "namespace": ns},
                "spec": {"minAvailable": 3, "selector": {"matchLabels": {"app": "infer"}}}},
          kai_deployment("infer", ns, "0.25", "30", "1024", "g-node-1", replicas=3))
    wait_for(lambda: len(running(sim, ns)) == 3, timeout=60, what="three pods running")
    wait_recommendation(sim, ns, "0.36")
    engine.wait_line("rightsizing summary", phase="actuation", namespace=ns, rightsizingResult="BLOCKED_RETRYING",
                     timeout=120)
    wait_for(lambda: events(sim, ns, "EvictionBlocked"), timeout=60, what="an EvictionBlocked event")
    assert fractions(sim, ns) == ["0.25", "0.25", "0.25"], "nothing else happens while the PDB refuses"
    assert metric(engine, "kubex_evictions_total", reason="resize", result="pdb_blocked") >= 1
    sim.kubectl("patch", "pdb", "infer", "-n", ns, "--type=merge", "-p", '{"spec":{"minAvailable":2}}')
    wait_for(lambda: fractions(sim, ns) == ["0.36", "0.36", "0.36"], timeout=300, interval=1,
             what="all pods at 0.36 once the PDB allows one disruption")


def test_paused_owner_is_not_evicted(env):  # ACT-2 pause-active, OBS-3
    sim, prom, engine = env
    ns = "act-pause"
    sim.kubectl("create", "namespace", ns)
    d = kai_deployment("infer", ns, "0.25", "45", "1024", "g-node-2", replicas=1)
    d["metadata"]["annotations"] = {"rightsizing.kubex.ai/pause-until": "infinite"}
    apply(sim, d)
    wait_for(lambda: len(running(sim, ns)) == 1, timeout=60, what="the pod running")
    wait_recommendation(sim, ns, "0.5")
    line = engine.wait_line("rightsizing summary", phase="actuation", namespace=ns, timeout=90,
                            rightsizingResult="BLOCKED")
    assert "pause-active" in line["failedChecks"]
    pod = running(sim, ns)[0]
    reasons = [c["reason"] for c in json.loads(pod["metadata"]["annotations"]["rightsizing.kubex.ai/automation-constraints"])]
    assert "pause-active" in reasons
    time.sleep(20)
    assert [p["metadata"]["name"] for p in running(sim, ns)] == [pod["metadata"]["name"]], "not evicted"


def test_job_pods_are_never_evicted(env):  # ACT-2 job-pod-not-evicted
    sim, prom, engine = env
    ns = "act-job"
    sim.kubectl("create", "namespace", ns)
    tmpl = kai_deployment("batch", ns, "0.25", "45", "1024", "g-node-3")["spec"]["template"]
    tmpl["spec"]["restartPolicy"] = "Never"
    apply(sim, {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "batch", "namespace": ns},
                "spec": {"template": tmpl}})
    wait_for(lambda: running(sim, ns, "batch"), timeout=60, what="the job's pod running")
    pod = running(sim, ns, "batch")[0]["metadata"]["name"]
    # A static policy now gives Job pods 0.5: the running pod differs, but a Job pod is never evicted.
    apply(sim, {"apiVersion": API, "kind": "ClusterStaticPolicy", "metadata": {"name": "act-job"},
                "spec": {"scope": {"namespaceSelector": {"operator": "In", "values": [ns]}, "workloadTypes": ["Job"]},
                         "resources": {"containers": {"*": {"requests": {"gpu": "0.5"}}}},
                         "automationStrategyRef": {"name": "kai-gpu-sharing"}}})
    line = engine.wait_line("rightsizing summary", phase="actuation", namespace=ns, owner="Job/batch",
                            rightsizingResult="BLOCKED", timeout=90)
    assert "job-pod-not-evicted" in line["failedChecks"]
    time.sleep(15)
    assert [p["metadata"]["name"] for p in running(sim, ns, "batch")] == [pod]
    assert fractions(sim, ns, "batch") == ["0.25"]
