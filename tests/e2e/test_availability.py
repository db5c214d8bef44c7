"""Never hurt availability (issue 22, SPEC ACT-2a, ACT-3) end to end, at the product's default intervals: kubex-sim
with its KAI-like scheduler and GPU model, a real Prometheus, the seed's starter strategy and the real `kubex engine`
with its webhooks.

* ACT-3: a resize that was held back and is released at once (a pause removed, an engine restart, a leader
  failover: each new engine starts with PodAdmissionWebhookHealthy=Unknown and releases everything when it turns
  True) never has more than one pod of a 4-replica Deployment unavailable, proven on a WATCH stream (every event,
  not samples), and never evicts a pod twice.
* ACT-2a: an upsize whose replacement has no room evicts nothing; the pods keep running and say why
  (`replacement-does-not-fit`, `kubex explain`); once a second node is schedulable they are replaced one at a time.
"""
import json
import subprocess

import pytest

from conftest import BIN, EngineProcess, wait_for, webhook_health
from test_actuation import static_policy
from test_gpu_metrics import start_gpu_sim
from test_reactive import RestartablePrometheus, apply, install_starter, metric
from watch_stream import PodAvailabilityWatch

QUEUE = "kubex-unlimited-gpu-queue"


def engine_args():
    return ["--webhook-bind-address", "127.0.0.1:0", "--self-signed-webhook", "--register-webhooks",
            "--early-webhook-enabled"]


def start_default_engine(sim, leader_elect=False):
    """`kubex engine` at its default intervals (no hidden faster flag), webhooks registered; returns once
    PodAdmissionWebhookHealthy is True (evictions wait for it, ACT-2)."""
    engine = EngineProcess(sim.kubeconfig, "kubex", leader_elect=leader_elect, extra_args=engine_args())
    engine.wait_ready(timeout=60)
    return engine


def svc_deployment(ns, fraction, replicas=4, paused=False, node=None):
    """The issue's reproduction: a KAI Deployment `svc` at `fraction`."""
    meta = {"name": "svc", "namespace": ns, "labels": {"app": "svc"}}
    if paused:
        meta["annotations"] = {"rightsizing.kubex.ai/pause-until": "infinite"}
    spec = {"schedulerName": "kai-scheduler",
            "containers": [{"name": "app", "image": "registry.example/svc:1",
                            "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}]}
    if node:
        spec["nodeSelector"] = {"kubernetes.io/hostname": node}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta,
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "svc"}},
                     "template": {"metadata": {"labels": {"app": "svc", "kai.scheduler/queue": QUEUE},
                                               "annotations": {"gpu-fraction": fraction}},
                                  "spec": spec}}}


def live_pods(sim, ns):
    return [p for p in sim.kubectl_json("get", "pods", "-n", ns, "-l", "app=svc")["items"]
            if not p["metadata"].get("deletionTimestamp")]


def ready(p):
    return any(c["type"] == "Ready" and c["status"] == "True" for c in p["status"].get("conditions", []))


def fractions(sim, ns):
    return sorted(p["metadata"].get("annotations", {}).get("gpu-fraction", "?") for p in live_pods(sim, ns)
                  if ready(p))


def pod_watch(sim, ns, replicas):
    """ACT-3 on a WATCH stream of the namespace's `svc` pods from now on (watch_stream.Unavailable: after every
    event, replicas minus the pods Ready and not terminating), not on samples."""
    from kubernetes import client
    return PodAvailabilityWatch(client.CoreV1Api(sim.client()), ns, "app=svc", replicas)


def evicted_lines(engines, ns):
    return [(l.get("ts"), l.get("pod"), l.get("reason"), l.get("logger")) for e in engines
            for l in e.find_all("evicted pod") if l.get("namespace") == ns]


def evicted_pods(engines, ns):
    """pod name -> number of `evicted pod` lines over the given engines."""
    out = {}
    for e in engines:
        for line in e.find_all("evicted pod"):
            if line.get("namespace") == ns:
                out[line.get("pod")] = out.get(line.get("pod"), 0) + 1
    return out


def sim_with_starter(sim_factory, workdir, pool, count, gpus):
    """kubex-sim with one pool of T4 nodes, its GPU model, a real Prometheus and the seed's starter example."""
    sim, metrics = start_gpu_sim(sim_factory, workdir, f"""
nodePools:
  - name: {pool}
    count: {count}
    gpusPerNode: {gpus}
    gpuProduct: T4
    cpu: "32"
    memory: 128Gi
""")
    prom = RestartablePrometheus(metrics)
    install_starter(sim, prom)
    return sim, prom


@pytest.fixture(scope="module")
def race_env(sim_factory, tmp_path_factory):
    sim, prom = sim_with_starter(sim_factory, tmp_path_factory.mktemp("race-sim"), "g", 2, 2)
    yield sim, prom
    prom.stop()


def released(sim, ns, engines, target, release):
    """Runs `release` (which returns the engine that carries the work out) under a WATCH stream and waits until
    every replica is Ready at `target`; returns (max unavailable, the watch's Unavailable)."""
    watch = pod_watch(sim, ns, 4)
    try:
        engine = release()
        engines.append(engine)
        wait_for(lambda: fractions(sim, ns) == [target] * 4, timeout=420, interval=1,
                 what=f"all four replicas Ready at {target}")
    finally:
        watch.stop()
    count = watch.result()  # the stream saw every event (no 410 gap)
    return count.max, count


def test_released_resize_never_exceeds_the_budget(race_env):  # ACT-3
    sim, prom = race_env
    ns = "race"
    sim.kubectl("create", "namespace", ns)
    engines = [start_default_engine(sim)]
    try:
        wait_for(lambda: webhook_health(sim) == "True", timeout=120, interval=1, what="PodAdmissionWebhookHealthy=True")
        apply(sim, static_policy("race", ns, "0.15"))
        apply(sim, svc_deployment(ns, "0.1", paused=True))
        wait_for(lambda: len([p for p in live_pods(sim, ns) if ready(p)]) == 4, timeout=120, what="four pods Ready")
        # Held back by the pause: the engine says so (pause-active) while the resize waits.
        engines[0].wait_line("rightsizing summary", phase="actuation", namespace=ns, rightsizingResult="BLOCKED",
                             timeout=120)

        # 1. The pause is removed: every pod event re-runs the reconcile while the first eviction is in flight.
        def remove_pause():
            sim.kubectl("annotate", "deployment", "svc", "-n", ns, "rightsizing.kubex.ai/pause-until-")
            return engines[0]
        worst, watch = released(sim, ns, [], "0.15", remove_pause)
        assert watch.events > 10, "the watch saw the replacements"
        assert worst <= 1, f"{worst} replicas unavailable at once after the pause was removed: {watch.worst}; {evicted_lines(engines, ns)}"

        # 2. An engine restart: the new engine releases the pending resize when its webhook turns healthy.
        engines[0].stop()
        apply(sim, static_policy("race", ns, "0.2"))
        worst, watch = released(sim, ns, engines, "0.2", lambda: start_default_engine(sim, leader_elect=True))
        assert worst <= 1, f"{worst} replicas unavailable at once after an engine restart: {watch.worst}; {evicted_lines(engines, ns)}"

        # 3. A leader failover: the leader dies (SIGKILL, its Lease is not released); the next replica takes the
        # Lease once it expires and releases the pending resize when its webhook turns healthy.
        engines[-1].kill()
        apply(sim, static_policy("race", ns, "0.25"))
        worst, watch = released(sim, ns, engines, "0.25", lambda: start_default_engine(sim, leader_elect=True))
        assert worst <= 1, f"{worst} replicas unavailable at once after a leader failover: {watch.worst}; {evicted_lines(engines, ns)}"
        # ENG-1: the work above was the new leader's, so it holds the Lease (already logged: the deadline only bounds a
        # hang, it is no speed claim).
        engines[-1].wait_line("successfully acquired lease", timeout=120)

        # No pod was ever sent two evictions, and the events agree.
        twice = {pod: n for pod, n in evicted_pods(engines, ns).items() if n > 1}
        assert not twice, f"pods evicted more than once: {twice}"
        events = [e for e in sim.kubectl_json("get", "events", "-n", ns)["items"]
                  if e.get("reason") == "PolicyEvaluationEvictResize"]
        assert len(events) >= 12, "three releases of four replicas each"
        assert all(e.get("count", 1) == 1 for e in events), [(e["involvedObject"]["name"], e["count"]) for e in events]
    finally:
        for e in engines:
            e.stop()


@pytest.fixture(scope="module")
def room_env(sim_factory, tmp_path_factory):
    """One schedulable node with one T4; a second one cordoned until the test adds it to the cluster's room."""
    sim, prom = sim_with_starter(sim_factory, tmp_path_factory.mktemp("room-sim"), "r", 2, 1)
    sim.kubectl("cordon", "r-node-1")
    engine = start_default_engine(sim)
    wait_for(lambda: webhook_health(sim) == "True", timeout=120, interval=1, what="PodAdmissionWebhookHealthy=True")
    yield sim, prom, engine
    engine.stop()
    prom.stop()


def explain(sim, target):
    r = subprocess.run([str(BIN / "kubex"), "explain", "pod", target, "--kubeconfig", sim.kubeconfig],
                       capture_output=True, text=True, timeout=120)
    return r.stdout + r.stderr


def test_upsize_waits_for_room(room_env):  # ACT-2a, ACT-3, OBS-3
    sim, prom, engine = room_env
    ns = "room"
    sim.kubectl("create", "namespace", ns)
    apply(sim, svc_deployment(ns, "0.4", replicas=2))
    wait_for(lambda: len([p for p in live_pods(sim, ns) if ready(p)]) == 2, timeout=120, what="two pods Ready")
    before = sorted(p["metadata"]["name"] for p in live_pods(sim, ns))
    apply(sim, static_policy("room", ns, "0.7"))

    # 0.4 + 0.7 > 0.96 (the T4's cap): no GPU has room for a replacement. Two reconciles at the default 1m resync
    # both say so, and nothing is evicted in between.
    def waiting_for_room():
        return [l for l in engine.find_all("rightsizing summary", phase="actuation", namespace=ns)
                if "replacement-does-not-fit" in l.get("failedChecks", [])]
    first = wait_for(waiting_for_room, timeout=180, interval=1, what="the summary naming replacement-does-not-fit")[0]
    assert first["rightsizingResult"] == "BLOCKED_RETRYING", first
    assert first["summary"].startswith("Waiting for room: pod room/svc-") and "does not fit" in first["summary"], first
    # The next reconcile (the 1m resync at the latest; controller_runtime_reconcile_total, OBS-5) still waits, and
    # says so at debug (OBS-4: its summary repeats the first one's result, changes, pod and failed checks).
    engine.wait_whole_reconcile("actuation", timeout=150, interval=2, what="a whole reconcile after the first summary")
    assert len(waiting_for_room()) == 1, waiting_for_room()
    assert sorted(p["metadata"]["name"] for p in live_pods(sim, ns)) == before, "both pods keep running"
    assert fractions(sim, ns) == ["0.4", "0.4"]
    assert not [e for e in sim.kubectl_json("get", "events", "-n", ns)["items"]
                if e.get("reason") == "PolicyEvaluationEvictResize"]
    assert metric(engine, "kubex_evictions_total", reason="resize", result="success") in (None, 0, 0.0)
    pod = live_pods(sim, ns)[0]
    reasons = [c["reason"] for c in json.loads(
        pod["metadata"]["annotations"]["rightsizing.kubex.ai/automation-constraints"])]
    assert "replacement-does-not-fit" in reasons
    text = explain(sim, f"{ns}/{pod['metadata']['name']}")
    # kubex explain reads the same pool as the engine: the closest node's reason names the new size.
    assert "replacement-does-not-fit" in text and "Best try: pod room/svc-" in text and "(0.7) does not fit" in text, text

    # A second node joins the schedulable room: the pods are replaced one at a time (WATCH stream).
    watch = pod_watch(sim, ns, 2)
    try:
        sim.kubectl("uncordon", "r-node-1")
        wait_for(lambda: fractions(sim, ns) == ["0.7", "0.7"], timeout=300, interval=1,
                 what="both replicas Ready at 0.7")
    finally:
        watch.stop()
    count = watch.result()
    assert count.max <= 1, f"{count.max} replicas unavailable at once: {count.worst}"
    assert sorted(p["spec"]["nodeName"] for p in live_pods(sim, ns)) == ["r-node-0", "r-node-1"]
    pod = live_pods(sim, ns)[0]
    assert "replacement-does-not-fit" not in pod["metadata"].get("annotations", {}).get(
        "rightsizing.kubex.ai/automation-constraints", "")
