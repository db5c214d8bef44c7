"""Safe actuation end to end (issue 15, SPEC §8 ACT-1…ACT-8): kubex-sim with its GPU model, a real Prometheus
scraping it every second, and the real `kubex engine` with its webhooks. The reactive recommender (the seed's
starter example with 1m windows and minPodMetricsAge 0s, evaluating every 10 s) writes new GPU sizes; the
actuation controller brings running pods to them by eviction, one at a time, honouring PDBs and pauses.

Nothing here depends on the machine's speed: deadlines only bound a hang; "never" and "not yet" are windows over
WATCH streams, events and counters that end with engine events or reconciles (OBS-5), not after a sleep; the times the
SPEC states (resizeRetryInterval and the ACT-7 back-off) are measured on the engine's own timestamps (OBS-4 `ts`)
with a 25 % tolerance."""
import datetime
import json
import time

import pytest

from conftest import log_time, wait_for, webhook_health
from test_gpu_metrics import start_gpu_sim
from test_reactive import (API, RestartablePrometheus, apply, condition, install_starter, kai_deployment, metric,
                           running, start_engine, wait_recommendation)
from watch_stream import EventWatch, PodAvailabilityWatch, hold_until

SIM_CONFIG = """
nodePools:
  - name: g
    count: 8
    gpusPerNode: 2
    gpuProduct: Tesla-T4
    gpuMemoryMiB: 16384
    cpu: "32"
    memory: 128Gi
# The whole `kubelet` key (the last one in the file wins, so this replaces start_gpu_sim's fast kubelet): the
# default 1 s start and ready delays, under which a replacement takes as long to turn Ready as the engine's budgets
# assume, and Jobs that outlive the test.
kubelet:
  startDelay: 1s
  readyDelay: 1s
  crashBackoffBase: 10s
  crashBackoffMax: 5m
  jobRunTime: 30m
"""


def fractions(sim, ns, name="infer"):
    return sorted(p["metadata"].get("annotations", {}).get("gpu-fraction", "whole") for p in running(sim, ns, name))


def ready_count(sim, ns, name="infer"):
    return sum(1 for p in running(sim, ns, name)
               if any(c["type"] == "Ready" and c["status"] == "True" for c in p["status"].get("conditions", [])))


RETRY_S = 30.0  # resizeRetryInterval: the default (SPEC §1 safetyChecks); the starter strategy does not set it


def events(sim, ns, reason):
    return [e for e in sim.kubectl_json("get", "events", "-n", ns)["items"] if e.get("reason") == reason]


def core(sim):
    from kubernetes import client
    return client.CoreV1Api(sim.client())


def availability(sim, ns, replicas, name="infer", from_available=False):
    """ACT-3 on a WATCH stream of the workload's pods from now on (watch_stream.Unavailable): create it before the
    engine may act."""
    return PodAvailabilityWatch(core(sim), ns, f"app={name}", replicas, from_available=from_available)


def nothing_evicted(sim, engine, ns, name, window, *reasons, past=None):
    """"Not evicted" over a window rather than after a sleep: WATCH streams from now on see no event with one of
    `reasons` in the namespace and no pod of `name` leaving Ready (terminating, deleted or not Ready), and
    kubex_evictions_total{reason="resize"} does not move. The window lasts at least `window` seconds (with `past`, also
    until the clock has passed that epoch time, e.g. a back-off's end the engine wrote), and then until the actuation
    controller has finished a whole reconcile begun after that (OBS-5's reconcile counter), however long a loaded
    machine takes. Fails as soon as something happens."""
    pods = availability(sim, ns, ready_count(sim, ns, name), name)
    evs = EventWatch(core(sim), ns, *reasons)
    before, reconciles = metric(engine, "kubex_evictions_total", reason="resize"), engine.reconciles("actuation")
    start, mark = time.monotonic(), []

    def happened():
        now = metric(engine, "kubex_evictions_total", reason="resize")
        return evs.seen + [f"{pods.count.max} pod(s) of {name} not Ready: {pods.count.worst}"] * (pods.count.max > 0) \
            + [f'kubex_evictions_total{{reason="resize"}} {before:g} -> {now:g}'] * (now != before)

    def ended():
        if time.monotonic() - start < window or (past is not None and time.time() < past):
            return False
        if not mark:  # the reconcile that logged may not be counted yet: two more counts (wait_whole_reconcile)
            mark.append(engine.reconciles("actuation"))
        return engine.reconciles("actuation") >= mark[0] + 2
    try:
        hold_until(ended, happened, timeout=window + 300, what=f"{window:g} s and a whole actuation reconcile")
    finally:
        pods.stop(), evs.stop()
    pods.result(), evs.result()
    assert not happened(), happened()
    assert engine.reconciles("actuation") > reconciles, "the actuation controller ran within the window"


def start_evicting_engine(sim_factory, workdir):
    """kubex-sim (SIM_CONFIG) with its GPU model, a real Prometheus, the starter example and an engine whose
    webhook health is True (ACT-2: evictions wait for PodAdmissionWebhookHealthy=True)."""
    sim, metrics = start_gpu_sim(sim_factory, workdir, SIM_CONFIG)
    prom = RestartablePrometheus(metrics)
    install_starter(sim, prom)
    engine = start_engine(sim)
    wait_for(lambda: webhook_health(sim) == "True", timeout=90, interval=1, what="PodAdmissionWebhookHealthy=True")
    return sim, prom, engine


@pytest.fixture(scope="module")
def env(sim_factory, tmp_path_factory):
    sim, prom, engine = start_evicting_engine(sim_factory, tmp_path_factory.mktemp("actuation-sim"))
    yield sim, prom, engine
    engine.stop()
    prom.stop()


# Three replicas share a GPU (KAI packs fractions), so each demands 30 % of a GPU: 90 % together, no SM
# contention in the GPU model. At 0.25 that is 120 % of the allocation: min(0.3 × 1.2, 0.25 × 2) = 0.36.
def test_resize_replaces_pods_one_at_a_time_and_back(env):  # ACT-1, ACT-3, ACT-4, OBS-4, OBS-5
    sim, prom, engine = env
    ns = "act-resize"
    sim.kubectl("create", "namespace", ns)
    # One WATCH stream from before the pods exist to the end of the scale-back (ACT-3 counted from the moment all
    # three are Ready; the rollout in between has maxUnavailable 25% of 3 = 0): no event is missed.
    watch = availability(sim, ns, 3, from_available=True)
    try:
        apply(sim, kai_deployment("infer", ns, "0.25", "30", "1024", "g-node-0", replicas=3))
        wait_for(lambda: ready_count(sim, ns) == 3, timeout=120, what="three pods Ready")
        wait_recommendation(sim, ns, "0.36")
        # Every pod is replaced through admission and gets the new fraction.
        wait_for(lambda: fractions(sim, ns) == ["0.36", "0.36", "0.36"], timeout=240, interval=1,
                 what="all three pods at 0.36")
        assert watch.count.max <= 1, f"{watch.count.max} pods unavailable at once: {watch.count.worst}"
        assert len(events(sim, ns, "PolicyEvaluationEvictResize")) >= 3
        assert metric(engine, "kubex_evictions_total", reason="resize", result="success") >= 3
        line = engine.wait_line("rightsizing summary", phase="actuation", namespace=ns, rightsizingResult="EVICTED",
                                timeout=90)
        assert line["owner"] == "Deployment/infer"
        assert {"container": "app", "resource": "gpu", "usage": "request", "from": "0.25", "to": "0.36"} in \
            line["changes"]
        engine.wait_line("rightsizing summary", phase="actuation", namespace=ns, rightsizingResult="IN_SYNC",
                         timeout=90)

        # Demand drops (a new template rolls the pods out, still at the recommendation 0.36): after the 1m
        # scale-back window the recommendation returns to the baseline and the pods follow, one at a time.
        sim.kubectl("patch", "deployment", "infer", "-n", ns, "--type=merge", "-p", json.dumps(
            {"spec": {"template": {"metadata": {"annotations": {"sim.kubex.ai/gpu-sm-percent": "5"}}}}}))
        wait_for(lambda: (r := running(sim, ns)) and len(r) == 3 and all(
            p["metadata"]["annotations"].get("sim.kubex.ai/gpu-sm-percent") == "5" for p in r)
            and ready_count(sim, ns) == 3, timeout=120, interval=1, what="the rollout to 5 % demand")
        wait_recommendation(sim, ns, "0.25", timeout=180)
        wait_for(lambda: fractions(sim, ns) == ["0.25", "0.25", "0.25"], timeout=240, interval=1,
                 what="all three pods back at 0.25")
    finally:
        watch.stop()
    count = watch.result()
    assert len(count.gone) >= 6, count.gone  # the stream saw both replacements
    assert count.max <= 1, \
        f"{count.max} pods unavailable at once (budget max(1, maxUnavailable 25% of 3) = 1): {count.worst}"


def test_pdb_refusal_retries_and_proceeds_when_relaxed(env):  # ACT-5, ACT-4, OBS-2, OBS-5
    """A PDB that allows no disruption refuses the resize eviction: the engine says BLOCKED_RETRYING, emits
    EvictionBlocked and retries after resizeRetryInterval (measured between its own log lines); from before the first
    attempt to the retry's refusal nothing else happens (WATCH streams: no pod leaves Ready, no eviction event, no
    eviction counted). Once the PDB allows one disruption, every pod is replaced at the new size."""
    sim, prom, engine = env
    ns = "act-pdb"
    sim.kubectl("create", "namespace", ns)
    apply(sim, {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "infer", "namespace": ns},
                "spec": {"minAvailable": 3, "selector": {"matchLabels": {"app": "infer"}}}},
          kai_deployment("infer", ns, "0.25", "30", "1024", "g-node-1", replicas=3))
    wait_for(lambda: len(running(sim, ns)) == 3, timeout=120, what="three pods running")
    # From here (the PDB never allows a disruption at minAvailable 3 of 3, so no eviction can have succeeded yet) to
    # the retried refusal: WATCH streams of the pods and of eviction events, and the eviction counter.
    pods = availability(sim, ns, 3, from_available=True)
    evicted = EventWatch(core(sim), ns, "PolicyEvaluationEvictResize")
    succeeded = metric(engine, "kubex_evictions_total", reason="resize", result="success")

    def refusals():
        return [l for l in engine.find_all("eviction refused by a PodDisruptionBudget") if l.get("namespace") == ns]

    def happened():
        now = metric(engine, "kubex_evictions_total", reason="resize", result="success")
        return evicted.seen + [f"pods of infer not Ready or gone: {pods.count.worst}"] * (pods.count.max > 0) \
            + [f"pods evicted: {sorted(pods.count.gone)}"] * bool(pods.count.gone) \
            + [f'kubex_evictions_total{{reason="resize",result="success"}} {succeeded:g} -> {now:g}'] * (now != succeeded)
    try:
        wait_recommendation(sim, ns, "0.36")
        engine.wait_line("rightsizing summary", phase="actuation", namespace=ns, rightsizingResult="BLOCKED_RETRYING",
                         timeout=120)
        wait_for(lambda: events(sim, ns, "EvictionBlocked"), timeout=90, what="an EvictionBlocked event")
        # "Nothing else happens while the PDB refuses", over a window that ends with the engine's own retry (ACT-5),
        # not after a sleep.
        hold_until(lambda: len(refusals()) >= 2, happened, timeout=240, what="the retried eviction refused again")
    finally:
        pods.stop(), evicted.stop()
    pods.result(), evicted.result()
    assert not happened(), happened()
    assert fractions(sim, ns) == ["0.25", "0.25", "0.25"], "nothing else happens while the PDB refuses"
    assert metric(engine, "kubex_evictions_total", reason="resize", result="pdb_blocked") >= 2
    # ACT-5: the retry comes resizeRetryInterval after the refusal, on the engine's own timestamps (25 % tolerance).
    first, second = refusals()[:2]
    retry = log_time(second) - log_time(first)
    assert 0.75 * RETRY_S <= retry <= 1.25 * RETRY_S, (retry, first, second)
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
    wait_for(lambda: len(running(sim, ns)) == 1, timeout=120, what="the pod running")
    wait_recommendation(sim, ns, "0.5")
    line = engine.wait_line("rightsizing summary", phase="actuation", namespace=ns, timeout=90,
                            rightsizingResult="BLOCKED")
    assert "pause-active" in line["failedChecks"]
    pod = running(sim, ns)[0]
    reasons = [c["reason"] for c in json.loads(pod["metadata"]["annotations"]["rightsizing.kubex.ai/automation-constraints"])]
    assert "pause-active" in reasons
    nothing_evicted(sim, engine, ns, "infer", 20, "PolicyEvaluationEvictResize", "EvictionBlocked")
    assert [p["metadata"]["name"] for p in running(sim, ns)] == [pod["metadata"]["name"]], "not evicted"


def test_job_pods_are_never_evicted(env):  # ACT-2 job-pod-not-evicted
    sim, prom, engine = env
    ns = "act-job"
    sim.kubectl("create", "namespace", ns)
    tmpl = kai_deployment("batch", ns, "0.25", "45", "1024", "g-node-3")["spec"]["template"]
    tmpl["spec"]["restartPolicy"] = "Never"
    apply(sim, {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "batch", "namespace": ns},
                "spec": {"template": tmpl}})
    wait_for(lambda: running(sim, ns, "batch"), timeout=120, what="the job's pod running")
    pod = running(sim, ns, "batch")[0]["metadata"]["name"]
    # A static policy now gives Job pods 0.5: the running pod differs, but a Job pod is never evicted.
    apply(sim, {"apiVersion": API, "kind": "ClusterStaticPolicy", "metadata": {"name": "act-job"},
                "spec": {"scope": {"namespaceSelector": {"operator": "In", "values": [ns]}, "workloadTypes": ["Job"]},
                         "resources": {"containers": {"*": {"requests": {"gpu": "0.5"}}}},
                         "automationStrategyRef": {"name": "kai-gpu-sharing"}}})
    line = engine.wait_line("rightsizing summary", phase="actuation", namespace=ns, owner="Job/batch",
                            rightsizingResult="BLOCKED", timeout=90)
    assert "job-pod-not-evicted" in line["failedChecks"]
    nothing_evicted(sim, engine, ns, "batch", 15, "PolicyEvaluationEvictResize", "EvictionBlocked")
    assert [p["metadata"]["name"] for p in running(sim, ns, "batch")] == [pod]
    assert fractions(sim, ns, "batch") == ["0.25"]


def static_policy(name, ns, gpu, strategy="kai-gpu-sharing", kinds=("Deployment",)):
    return {"apiVersion": API, "kind": "ClusterStaticPolicy", "metadata": {"name": name},
            "spec": {"scope": {"namespaceSelector": {"operator": "In", "values": [ns]}, "workloadTypes": list(kinds)},
                     "resources": {"containers": {"*": {"requests": {"gpu": gpu}}}},
                     "automationStrategyRef": {"name": strategy}}}


def whole_gpu_deployment(name, ns, node, replicas=2):
    """A Deployment as users write it before kubex: one whole nvidia.com/gpu, the default scheduler. No
    nvidia.com/gpu.present label, so the starter's reactive and proactive policies leave it alone."""
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": ns, "labels": {"app": name}},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"nodeSelector": {"kubernetes.io/hostname": node},
                                           "containers": [{"name": "app", "image": "trainer:1", "resources": {
                                               "requests": {"cpu": "100m", "nvidia.com/gpu": "1"},
                                               "limits": {"nvidia.com/gpu": "1"}}}]}}}}


def gpu_form(pod):
    """(gpu-fraction annotation, requests nvidia.com/gpu, limits nvidia.com/gpu, schedulerName) of a pod."""
    c = pod["spec"]["containers"][0]["resources"]
    return (pod["metadata"].get("annotations", {}).get("gpu-fraction"), c.get("requests", {}).get("nvidia.com/gpu"),
            c.get("limits", {}).get("nvidia.com/gpu"), pod["spec"].get("schedulerName"))


def rollback_state(sim, ns, name, kind="deployment"):
    v = sim.kubectl_json("get", kind, name, "-n", ns)["metadata"].get("annotations", {}).get(
        "rightsizing.kubex.ai/rollback-state")
    return json.loads(v) if v else None


def owner_events(sim, ns, reason, name):
    return [e for e in events(sim, ns, reason) if e["involvedObject"]["name"] == name]


def test_leaving_management_rolls_back_and_returning_is_managed(env):  # RBK-1, RBK-2, RBK-3, ACT-5, OBS-5
    sim, prom, engine = env
    ns = "act-rollback"
    sim.kubectl("create", "namespace", ns)
    apply(sim, static_policy("act-rollback", ns, "0.5"),
          {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "train", "namespace": ns},
           "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "train"}}}})
    wait_for(lambda: condition(sim, "clusterstaticpolicy", "act-rollback", "Ready")["status"] == "True",
             timeout=90, what="the static policy Ready")
    apply(sim, whole_gpu_deployment("train", ns, "g-node-4"))
    wait_for(lambda: (r := running(sim, ns, "train")) and len(r) == 2 and
             all(gpu_form(p) == ("0.5", None, None, "kai-scheduler") for p in r), timeout=120,
             what="two pods admitted at 0.5")
    # RBK-1: the state records the template's form and what kubex applied.
    state = wait_for(lambda: (s := rollback_state(sim, ns, "train")) and s["history"] and s, timeout=60,
                     what="rollback-state with a history entry")
    assert state["phase"] == "Managed"
    assert state["strategy"] == "ClusterAutomationStrategy/kai-gpu-sharing"
    assert state["original"] == {"schedulerName": "default-scheduler", "queue": None, "gpuFraction": None,
                                 "containers": {"app": {"requests": {"nvidia.com/gpu": "1"},
                                                        "limits": {"nvidia.com/gpu": "1"}}}}
    assert state["lastApplied"] == {"app": "0.5"}
    assert state["history"][0] | {"at": ""} == {"at": "", "container": "app", "from": "1", "to": "0.5", "mode": "kai",
                                                "source": "ClusterStaticPolicy/act-rollback"}

    # RBK-2 (1): deleting the policy starts the rollback; the PDB (2 of 2) holds the evictions back.
    sim.kubectl("delete", "clusterstaticpolicy", "act-rollback")
    wait_for(lambda: rollback_state(sim, ns, "train")["phase"] == "RollingBack", timeout=60, what="RollingBack")
    annotations = sim.kubectl_json("get", "deployment", "train", "-n", ns)["metadata"].get("annotations", {})
    assert not [k for k in annotations if "desired-resource" in k or "reactive-state" in k], annotations
    wait_for(lambda: owner_events(sim, ns, "RollbackStarted", "train"), timeout=90, what="RollbackStarted")
    wait_for(lambda: events(sim, ns, "EvictionBlocked"), timeout=90, what="the PDB refusing a rollback eviction")
    # RBK-3: matched again during the rollback, the workload is Managed again.
    apply(sim, static_policy("act-rollback", ns, "0.5"))
    wait_for(lambda: rollback_state(sim, ns, "train")["phase"] == "Managed", timeout=90, what="Managed again")

    # RBK-2 (2)(3): without the PDB, every resized pod is replaced by its original form, then the state goes.
    sim.kubectl("delete", "pdb", "train", "-n", ns)
    sim.kubectl("delete", "clusterstaticpolicy", "act-rollback")
    wait_for(lambda: (r := running(sim, ns, "train")) and len(r) == 2 and
             all(gpu_form(p) == (None, "1", "1", "default-scheduler") for p in r), timeout=240, interval=1,
             what="both pods back at nvidia.com/gpu: 1 on the default scheduler")
    wait_for(lambda: rollback_state(sim, ns, "train") is None, timeout=90, what="rollback-state removed")
    assert owner_events(sim, ns, "RollbackCompleted", "train")
    for p in running(sim, ns, "train"):
        assert "automation-webhook.kubex.ai/pod-rightsizing-info" not in p["metadata"].get("annotations", {})
    assert metric(engine, "kubex_evictions_total", reason="rollback", result="success") >= 2
    assert metric(engine, "kubex_evictions_total", reason="rollback", result="pdb_blocked") >= 1
    engine.wait_line("rightsizing summary", phase="rollback", namespace=ns, rightsizingResult="ROLLED_BACK", timeout=90)


def test_rollback_clears_the_constraints_kubex_left_on_untouched_pods(env):  # RBK-2, OBS-3, ADM-11
    # issue 26: a whole-GPU pod that no policy gives a GPU value keeps its GPU (ADM-11) and gets only the
    # no-gpu-recommendation constraint, no pod-rightsizing-info; when its workload left management, that stale
    # constraint stayed. The rollback now removes it.
    sim, _, _ = env
    ns = "act-stale"
    sim.kubectl("create", "namespace", ns)
    cpu_only = static_policy("act-stale", ns, "0.5")
    cpu_only["spec"]["resources"] = {"containers": {"*": {"requests": {"cpu": "100m"}}}}  # as written: no change
    apply(sim, cpu_only)
    wait_for(lambda: condition(sim, "clusterstaticpolicy", "act-stale", "Ready")["status"] == "True",
             timeout=90, what="the cpu-only policy Ready")
    apply(sim, whole_gpu_deployment("side", ns, "g-node-3", replicas=1))

    def constraints():
        pods = sim.kubectl_json("get", "pods", "-n", ns, "-l", "app=side")["items"]
        return pods and [p["metadata"].get("annotations", {}).get("rightsizing.kubex.ai/automation-constraints")
                         for p in pods]
    (before,) = wait_for(constraints, timeout=120, what="the side pod")
    assert [c["reason"] for c in json.loads(before)] == ["no-gpu-recommendation"], before
    wait_for(lambda: rollback_state(sim, ns, "side"), timeout=90, what="rollback-state (the workload is managed)")
    sim.kubectl("delete", "clusterstaticpolicy", "act-stale")
    wait_for(lambda: owner_events(sim, ns, "RollbackCompleted", "side"), timeout=120, what="RollbackCompleted")
    wait_for(lambda: constraints() == [None], timeout=90, what="the stale constraint removed")
    assert rollback_state(sim, ns, "side") is None


def test_pdb_refusal_without_retry_records_pdb_blocked(env):  # ACT-5 retryPodDisruptionBudget: false, OBS-3
    sim, prom, engine = env
    ns = "act-noretry"
    sim.kubectl("create", "namespace", ns)
    strategy = {"apiVersion": API, "kind": "ClusterAutomationStrategy", "metadata": {"name": "act-noretry"},
                "spec": {"experimental": {"gpuKaiContract": "v1alpha1-2026-07"},
                         "enablement": {"overrideScheduler": "kai",
                                        "gpu": {"requests": {"upsize": True, "downsize": True, "ceiling": "1"}}},
                         "podEviction": {"enabled": True, "retryPodDisruptionBudget": False}}}
    apply(sim, strategy, {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                          "metadata": {"name": "infer", "namespace": ns},
                          "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "infer"}}}})
    d = kai_deployment("infer", ns, "0.25", "5", "1024", "g-node-5")
    d["metadata"]["labels"].pop("nvidia.com/gpu.present")  # only the static policy below manages it
    apply(sim, d)
    wait_for(lambda: len(running(sim, ns)) == 1, timeout=120, what="the pod running")
    apply(sim, static_policy("act-noretry", ns, "0.5", strategy="act-noretry"))
    line = engine.wait_line("rightsizing summary", phase="actuation", namespace=ns, rightsizingResult="BLOCKED",
                            timeout=90)
    assert "pdb-blocked" in line["failedChecks"]
    pod = running(sim, ns)[0]
    reasons = [c["reason"] for c in json.loads(pod["metadata"]["annotations"]["rightsizing.kubex.ai/automation-constraints"])]
    assert "pdb-blocked" in reasons
    refused = len(events(sim, ns, "EvictionBlocked"))
    assert refused >= 1
    # Not retried: for longer than resizeRetryInterval (30s), the interval a retrying strategy would wait, no
    # EvictionBlocked event is created or repeated and no eviction is sent.
    nothing_evicted(sim, engine, ns, "infer", 40, "EvictionBlocked", "PolicyEvaluationEvictResize")
    assert fractions(sim, ns) == ["0.25"]
    # A new desired value is a new attempt (ACT-5: until the desired value or the pod changes).
    apply(sim, static_policy("act-noretry", ns, "0.6", strategy="act-noretry"))
    wait_for(lambda: sum(e.get("count", 1) for e in events(sim, ns, "EvictionBlocked")) > refused, timeout=90,
             what="a new eviction attempt for the new value")


def test_configmap_recommendation_loaded_late_replaces_running_pods(env):  # PRO-6, ACT-1, ACT-4
    """Pods admitted before the ConfigMap recommendation existed are replaced once it loads."""
    sim, prom, engine = env
    ns = "act-cm"
    sim.kubectl("create", "namespace", ns)
    apply(sim, {"apiVersion": API, "kind": "ClusterProactivePolicy", "metadata": {"name": "act-cm"},
                "spec": {"scope": {"namespaceSelector": {"operator": "In", "values": [ns]},
                                   "workloadTypes": ["Deployment"]},
                         "automationStrategyRef": {"name": "kai-gpu-sharing"}}})
    d = kai_deployment("infer", ns, "0.25", "5", "1024", "g-node-6", replicas=2)
    d["metadata"]["labels"].pop("nvidia.com/gpu.present")
    apply(sim, d)
    wait_for(lambda: fractions(sim, ns) == ["0.25", "0.25"], timeout=120, what="two pods at 0.25")
    recs = [{"namespace": ns, "kind": "Deployment", "name": "infer", "container": "app", "gpu": "0.4"}]
    apply(sim, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "act-recommendations", "namespace": "kubex"},
                "data": {"recommendations.json": json.dumps(recs)}})
    sim.kubectl("patch", "globalconfiguration", "global-config", "--type=merge", "-p", json.dumps(
        {"spec": {"proactive": {"recommendationsConfigMap": {"namespace": "kubex", "name": "act-recommendations"}}}}))
    wait_for(lambda: fractions(sim, ns) == ["0.4", "0.4"], timeout=180, interval=1,
             what="both running pods replaced at the ConfigMap's 0.4")
    assert len(events(sim, ns, "PolicyEvaluationEvictResize")) >= 2


def model_pods(sim, ns, name="llama"):
    return [p for p in sim.kubectl_json("get", "pods", "-n", ns, "-l", f"model={name}")["items"]
            if p["status"].get("phase") == "Running" and not p["metadata"].get("deletionTimestamp")]


def test_model_owner_gets_its_state_and_its_pods_are_replaced(env):  # SEL-1 Model, ACT-1 live pod, RBK-1
    sim, prom, engine = env
    ns = "act-model"
    sim.kubectl("create", "namespace", ns)
    apply(sim, {"apiVersion": "kubeai.org/v1", "kind": "Model", "metadata": {"name": "llama", "namespace": ns},
                "spec": {"features": ["TextGeneration"], "url": "hf://meta-llama/Llama-3.2-1B-Instruct",
                         "engine": "VLLM", "resourceProfile": "nvidia-gpu-t4:1", "minReplicas": 1,
                         "args": ["--gpu-memory-utilization=0.95"]}})
    (first,) = wait_for(lambda: model_pods(sim, ns), timeout=120, what="the Model's pod running")
    assert first["metadata"].get("annotations", {}).get("gpu-fraction") is None  # whole GPU before the policy
    apply(sim, static_policy("act-model", ns, "0.5", kinds=("Model",)))

    def replaced():
        ps = model_pods(sim, ns)
        return ps if ps and all(p["metadata"].get("annotations", {}).get("gpu-fraction") == "0.5" for p in ps) else None

    (pod,) = wait_for(replaced, timeout=120, interval=1, what="the Model's pod replaced at 0.5")
    assert pod["metadata"]["name"] != first["metadata"]["name"]
    model = sim.kubectl_json("get", "model", "llama", "-n", ns)["metadata"]["annotations"]
    assert json.loads(model["cwstatic.rightsizing.kubex.ai/desired-resource-requests"]) == {"server": {"gpu": "0.5"}}
    state = wait_for(lambda: rollback_state(sim, ns, "llama", kind="model"), timeout=90, what="rollback-state on the Model")
    assert state["phase"] == "Managed"
    assert state["original"]["containers"] == {"server": {"requests": {"nvidia.com/gpu": "1"},
                                                          "limits": {"nvidia.com/gpu": "1"}}}
    assert state["lastApplied"] == {"server": "0.5"}


MUTATING = ("000-kubex-mutating-webhook-configuration", "zzz-kubex-mutating-webhook-configuration")


def loop_guard(sim, ns, name):
    """The ACT-7 back-off kept on the owner (ACT-9 actuation-state `loopGuard`), None without one."""
    v = sim.kubectl_json("get", "deployment", name, "-n", ns)["metadata"].get("annotations", {}).get(
        "rightsizing.kubex.ai/actuation-state")
    return json.loads(v).get("loopGuard") if v else None


# Last in this module: it takes the engine's pod webhooks away and puts them back.
def test_unmutated_replacement_backs_off_and_unhealthy_webhook_pauses(env):  # ACT-7, ACT-9, ACT-2, WHH-3, OBS-5
    """A replacement that comes back without the new size (the webhook skipped it) makes the engine back off: the
    next eviction comes resizeRetryInterval × 2^0 after it saw the unmutated replacement, not at once, and the next
    back-off doubles (both on the engine's own timestamps). With the pod webhooks gone, PodAdmissionWebhookHealthy
    turns False and nothing is evicted over a window past that back-off's end and a whole reconcile."""
    sim, prom, engine = env
    ns = "act-webhook"
    sim.kubectl("create", "namespace", ns)
    d = kai_deployment("wh", ns, "0.25", "5", "1024", "g-node-7")
    d["metadata"]["labels"].pop("nvidia.com/gpu.present")
    apply(sim, d)
    wait_for(lambda: len(running(sim, ns, "wh")) == 1, timeout=120, what="the pod running")
    saved = [sim.kubectl_json("get", "mutatingwebhookconfiguration", n) for n in MUTATING]
    for cfg in saved:
        for m in ("resourceVersion", "uid", "creationTimestamp", "generation", "managedFields"):
            cfg["metadata"].pop(m, None)
    try:
        # The webhooks skip this workload's pods (the probe pods still pass, so health stays True): the
        # replacement of an evicted pod comes back unmutated, as when the webhook fails open.
        for name in MUTATING:
            n = len(sim.kubectl_json("get", "mutatingwebhookconfiguration", name)["webhooks"])
            sim.kubectl("patch", "mutatingwebhookconfiguration", name, "--type=json", "-p", json.dumps(
                [{"op": "add", "path": f"/webhooks/{i}/objectSelector",
                  "value": {"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["wh"]}]}}
                 for i in range(n)]))
        apply(sim, static_policy("act-webhook", ns, "0.5"))
        wait_for(lambda: owner_events(sim, ns, "ReplacementNotMutated", "wh"), timeout=120, interval=1,
                 what="ReplacementNotMutated on the Deployment")
        def not_mutated():
            return [l for l in engine.find_all("rightsizing summary", phase="actuation", namespace=ns)
                    if "replacement-not-mutated" in l.get("failedChecks", [])]
        detected = wait_for(not_mutated, timeout=120, interval=1, what="a summary with replacement-not-mutated")[0]
        wait_for(lambda: fractions(sim, ns, "wh") == ["0.25"], timeout=120, what="the unmutated replacement running")

        # ACT-7: the loop guard backs off instead of evicting the replacement at once. On the engine's own log (every
        # eviction writes `evicted pod`): the first eviction came before the unmutated replacement was seen, and the
        # next one only once the back-off (resizeRetryInterval 30s × 2^0) had passed since then, within 25 %.
        def evictions():
            return [l for l in engine.find_all("evicted pod") if l.get("namespace") == ns]
        first, second = wait_for(lambda: (e := evictions()) and len(e) >= 2 and e[:2], timeout=240, interval=1,
                                 what="the eviction after the back-off")
        assert log_time(first) < log_time(detected), (first, detected)
        waited = log_time(second) - log_time(detected)
        assert 0.75 * RETRY_S <= waited <= 1.25 * RETRY_S, \
            f"the loop guard backs off instead of evicting the replacement at once: {waited:.1f} s, {first}, {second}"
        # The events agree (ACT-4: one PolicyEvaluationEvictResize on each evicted pod).
        wait_for(lambda: {e["involvedObject"]["name"] for e in events(sim, ns, "PolicyEvaluationEvictResize")}
                 >= {first["pod"], second["pod"]}, timeout=90, what="the two evictions' events")
        # Its replacement is unmutated too: the back-off doubles (k = 2: 30s × 2^1), kept on the owner (ACT-9).
        guard = wait_for(lambda: (g := loop_guard(sim, ns, "wh")) and g.get("k") == 2 and g, timeout=120,
                         what="the second back-off on the owner")
        again = wait_for(lambda: [l for l in not_mutated() if log_time(l) > log_time(second)], timeout=120,
                         what="a summary with replacement-not-mutated after the second eviction")[0]
        until = datetime.datetime.fromisoformat(guard["until"].replace("Z", "+00:00")).timestamp()  # whole seconds, up
        assert 0.75 * 2 * RETRY_S <= until - log_time(again) <= 1.25 * 2 * RETRY_S, (guard, again)
        wait_for(lambda: (r := running(sim, ns, "wh")) and [p["metadata"]["name"] for p in r] != [second["pod"]]
                 and fractions(sim, ns, "wh") == ["0.25"], timeout=120, what="the second unmutated replacement running")

        # ACT-2: with the pod webhooks gone the probe fails, PodAdmissionWebhookHealthy turns False and
        # evictions pause with webhook-unhealthy.
        for name in MUTATING:
            sim.kubectl("delete", "mutatingwebhookconfiguration", name)
        wait_for(lambda: webhook_health(sim) == "False", timeout=90, interval=1,
                 what="PodAdmissionWebhookHealthy=False")
        wait_for(lambda: [l for l in engine.find_all("rightsizing summary", phase="actuation", namespace=ns)
                          if "webhook-unhealthy" in l.get("failedChecks", [])],
                 timeout=120, interval=1, what="a summary with webhook-unhealthy")
        pod = running(sim, ns, "wh")[0]
        reasons = [c["reason"] for c in json.loads(
            pod["metadata"]["annotations"].get("rightsizing.kubex.ai/automation-constraints", "[]"))]
        assert "webhook-unhealthy" in reasons
        # For longer than one resync (1m, so the actuation controller reconciles this workload within the window even
        # when this test runs alone), past the end of the back-off the engine wrote, and a whole reconcile after that:
        # only the unhealthy webhook holds the eviction now.
        nothing_evicted(sim, engine, ns, "wh", 65, "PolicyEvaluationEvictResize", "EvictionBlocked", past=until)
        assert [p["metadata"]["name"] for p in running(sim, ns, "wh")] == [pod["metadata"]["name"]]
    finally:
        for cfg in saved:
            sim.kubectl("delete", "mutatingwebhookconfiguration", cfg["metadata"]["name"], "--ignore-not-found")
            apply(sim, cfg)
    wait_for(lambda: webhook_health(sim) == "True", timeout=120, interval=1, what="PodAdmissionWebhookHealthy=True again")
