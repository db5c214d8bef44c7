"""A fraction that would crash a workload (issue 34 items 1 and 2; SPEC KAI-2a, ACT-10, ACT-3b, REA-11): kubex-sim
as KAI v0.18 in `NvFractions` with its GPU model and default kubelet timings (crash-loop back-off from 10 s), a real
Prometheus scraping the sim's exporter, the real `kubex engine` at its default intervals, `global-config` with that
Prometheus, `spec.kai.gpuSharingMode: NvFractions` and a recommendations ConfigMap, and the guide's starter example
exactly as written (examples/kai-gpu-sharing.yaml).

A labelled two-replica Deployment uses 6000 MiB of a 15360 MiB GPU (whole GPUs) and the ConfigMap says 0.3 for it:
0.3 of the GPU is 4608 MiB, below what it uses.

- Under the starter's strategy (no `fractionLimit`: on by default under NvFractions, KAI-2a) each replica gets
  `gpu-fraction: "0.3"` with `gpu-fraction.limit: "1"`: a request, not a hard cap, so nothing is OOM-killed.
- Under a strategy that turns the limit off explicitly, 0.3 is a hard cap: the first replacement is OOM-killed. kubex
  finds the harm (ACT-10), stops evicting (the other replica is never evicted: ACT-3b and ACT-10 (1)), keeps 1 GPU as a
  `harm-guard` floor in actuation-state, emits ResizeHarmedWorkload, counts kubex_resize_harm_total and replaces the
  crash-looping pod, so the workload is 2/2 Ready again by itself; over the whole run it never drops below one Ready
  replica (a WATCH stream).

Deadlines only bound a hang; "never" is a WATCH window."""
import json
import pathlib

import pytest
import yaml
from kubernetes import client

from conftest import EngineProcess, ROOT, wait_for
from test_explain import explain
from test_gpu_metrics import HANG, Prometheus, free_port, http_get
from test_kai_modes import SIM_CONFIG as FOUR_T4_NODES
from test_reactive import API, apply, metric, queue
from watch_stream import EventWatch, PodAvailabilityWatch

USED_MIB = 6000  # of 15360: 0.39 of the GPU, above the 0.3 the ConfigMap gives
STARTER = ROOT / "examples" / "kai-gpu-sharing.yaml"

SIM_CONFIG = 'kaiVersion: "0.18"\ngpuSharingMode: NvFractions\n' + FOUR_T4_NODES


@pytest.fixture(scope="module")
def env(sim_factory, tmp_path_factory):
    cfg = pathlib.Path(tmp_path_factory.mktemp("harm")) / "cluster.yaml"
    cfg.write_text(SIM_CONFIG)  # the sim's default kubelet: a crash loop backs off 10 s, 20 s, … as a kubelet does
    metrics = f"127.0.0.1:{free_port()}"
    sim = sim_factory(extra_args=["--config", str(cfg), "--metrics-listen", metrics])
    wait_for(lambda: http_get(f"http://{metrics}/healthz")[2] == "ok\n", timeout=HANG, what="exporter healthz")
    prom = Prometheus(metrics)
    sim.kubectl("apply", "-k", str(ROOT / "config" / "crd"))
    sim.kubectl("create", "namespace", "kubex")
    apply(sim, queue("kubex-parent-queue"), queue("kubex-unlimited-gpu-queue", parent="kubex-parent-queue"))
    apply(sim, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "recs", "namespace": "kubex"},
                "data": {"recommendations.json": "[]"}})
    apply(sim, {"apiVersion": API, "kind": "GlobalConfiguration", "metadata": {"name": "global-config"},
                "spec": {"prometheus": {"url": prom.url},
                         "kai": {"gpuSharingMode": "NvFractions"},
                         "proactive": {"recommendationsConfigMap": {"namespace": "kubex", "name": "recs"}}}})
    sim.kubectl("apply", "-f", str(STARTER))  # as written
    engine = EngineProcess(sim.kubeconfig, "kubex", leader_elect=False, extra_args=[
        "--webhook-bind-address", "127.0.0.1:0", "--self-signed-webhook", "--register-webhooks",
        "--early-webhook-enabled"])
    engine.wait_ready(timeout=HANG)
    wait_for(lambda: sim.kubectl("get", "mutatingwebhookconfiguration", "000-kubex-mutating-webhook-configuration",
                                 check=False).returncode == 0, timeout=HANG, what="the early webhook registered")
    yield sim, engine
    engine.stop()
    prom.stop()


def deployment(name, ns, labelled=True):
    """Two whole-GPU replicas using USED_MIB of GPU memory, labelled as the starter's policies select (or not)."""
    c = {"name": "app", "image": "registry.example/infer:1", "resources": {"limits": {"nvidia.com/gpu": 1}}}
    labels = {"app": name, **({"nvidia.com/gpu.present": "true"} if labelled else {})}
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": ns, "labels": labels},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name},
                                               "annotations": {"sim.kubex.ai/gpu-memory-mib": str(USED_MIB),
                                                               "sim.kubex.ai/gpu-sm-percent": "20"}},
                                  "spec": {"containers": [c]}}}}


def recommend(sim, ns, name, gpu):
    cm = sim.kubectl_json("get", "configmap", "recs", "-n", "kubex")
    recs = [r for r in json.loads(cm["data"]["recommendations.json"]) if r["namespace"] != ns]
    recs.append({"namespace": ns, "kind": "Deployment", "name": name, "container": "app", "gpu": gpu})
    apply(sim, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "recs", "namespace": "kubex"},
                "data": {"recommendations.json": json.dumps(recs)}})


def pods(sim, ns, name):
    return [p for p in sim.kubectl_json("get", "pods", "-n", ns, "-l", f"app={name}")["items"]
            if not p["metadata"].get("deletionTimestamp")]


def ready(p):
    return any(c["type"] == "Ready" and c["status"] == "True" for c in p["status"].get("conditions", []))


def oom_killed(p):
    return any(cs.get("lastState", {}).get("terminated", {}).get("reason") == "OOMKilled"
               for cs in p["status"].get("containerStatuses", []))


def annotations(p):
    return p["metadata"].get("annotations", {})


def two_ready(sim, ns, name, check=lambda p: True):
    ps = pods(sim, ns, name)
    return ps if len(ps) == 2 and all(ready(p) and check(p) for p in ps) else None


def test_nv_fractions_fraction_keeps_the_original_gpu_as_its_limit(env):  # KAI-2a, KAI-2, ACT-1, ACT-3
    """The starter as written under NvFractions: the ConfigMap's 0.3 reaches both replicas with gpu-fraction.limit 1
    (the original GPU), so the 6000 MiB workload keeps running and is never OOM-killed; it never drops below one Ready
    replica while kubex replaces its pods."""
    sim, engine = env
    ns = "harm-limit"
    sim.kubectl("create", "namespace", ns)
    core = client.CoreV1Api(sim.client())
    availability = PodAvailabilityWatch(core, ns, "app=chat", 2, from_available=True)
    try:
        apply(sim, deployment("chat", ns))
        wait_for(lambda: two_ready(sim, ns, "chat"), timeout=HANG, what="two whole-GPU replicas Ready")
        recommend(sim, ns, "chat", "0.3")
        converted = wait_for(lambda: two_ready(sim, ns, "chat", lambda p: annotations(p).get("gpu-fraction") == "0.3"),
                             timeout=420, interval=1, what="both replicas replaced at the ConfigMap's 0.3")
        for p in converted:
            assert annotations(p).get("gpu-fraction.limit") == "1", annotations(p)
            assert not oom_killed(p), p["status"]
        assert availability.count.max <= 1, availability.count.worst  # ACT-3: never both at once
    finally:
        availability.stop()
    availability.result()


def test_a_harmful_resize_is_undone_and_the_workload_recovers_by_itself(env):  # ACT-10, ACT-3b, KAI-2a, REA-11
    """With the limit turned off (a hard cap under NvFractions, warned about), 0.3 OOM-kills the first replacement.
    kubex stops at once (the second replica is never evicted while its replacement crash-loops: ACT-3b), floors the
    container at 1 GPU (harm-guard, 24 h, on the owner), says so with ResizeHarmedWorkload and kubex_resize_harm_total,
    and replaces the crash-looping pod: both replicas are Ready again at 1 GPU without anyone touching them, and the
    Deployment never had fewer than one Ready replica (WATCH)."""
    sim, engine = env
    ns = "harm-cap"
    sim.kubectl("create", "namespace", ns)
    strategy = [d for d in yaml.safe_load_all(STARTER.read_text()) if d and d["kind"] == "ClusterAutomationStrategy"][0]
    strategy["metadata"] = {"name": "hard-cap"}
    strategy["spec"]["kai"]["fractionLimit"] = {"enabled": False}
    res = sim.kubectl("apply", "-f", "-", input=json.dumps(strategy))
    # KAI-2a: allowed, with VAL-2's warning from the validating webhook and a Warning event on the strategy.
    hard_cap = ("spec.kai.fractionLimit.enabled: false: under NvFractions every fraction kubex writes is a hard "
                "memory cap")
    assert hard_cap in res.stderr, res.stderr
    wait_for(lambda: [e for e in sim.kubectl_json("get", "events", "-A")["items"]
                      if e.get("reason") == "FractionLimitDisabled" and e["involvedObject"].get("name") == "hard-cap"
                      and e.get("type") == "Warning" and e.get("message") == hard_cap],
             timeout=HANG, interval=1, what="FractionLimitDisabled on the strategy")
    # The starter's policies select labelled Deployments; this unlabelled one is managed by hard-cap alone.
    apply(sim, {"apiVersion": API, "kind": "ClusterProactivePolicy", "metadata": {"name": "cap"},
                "spec": {"scope": {"namespaceSelector": {"operator": "In", "values": [ns]},
                                   "workloadTypes": ["Deployment"]},
                         "automationStrategyRef": {"name": "hard-cap"}}})
    core = client.CoreV1Api(sim.client())
    before = metric(engine, "kubex_resize_harm_total") or 0
    availability = PodAvailabilityWatch(core, ns, "app=svc", 2, from_available=True)
    harmed = EventWatch(core, ns, "ResizeHarmedWorkload")
    evicted = EventWatch(core, ns, "PolicyEvaluationEvictResize")
    try:
        apply(sim, deployment("svc", ns, labelled=False))
        originals = {p["metadata"]["name"] for p in wait_for(lambda: two_ready(sim, ns, "svc"), timeout=HANG,
                                                             what="two whole-GPU replicas Ready")}
        recommend(sim, ns, "svc", "0.3")
        wait_for(lambda: harmed.seen, timeout=420, interval=1, what="ResizeHarmedWorkload on the Deployment")
        state = json.loads(wait_for(
            lambda: sim.kubectl_json("get", "deployment", "svc", "-n", ns)["metadata"].get("annotations", {}).get(
                "rightsizing.kubex.ai/actuation-state"), timeout=60, interval=1, what="actuation-state"))
        assert state["harmGuard"]["app"]["floor"] == "1", state
        # Recovered by itself: two Ready replicas, neither of them a 0.3 hard cap.
        wait_for(lambda: two_ready(sim, ns, "svc", lambda p: "gpu-fraction" not in annotations(p)),
                 timeout=420, interval=1, what="both replicas Ready at 1 GPU again")
        assert metric(engine, "kubex_resize_harm_total", namespace=ns, kind="Deployment") >= before + 1
        # ACT-3b / ACT-10 (1): the second original replica was never evicted.
        evicted_pods = {e[1].split("/", 1)[1] for e in evicted.seen}
        assert len(evicted_pods & originals) == 1, (evicted.seen, originals)
        assert availability.count.max <= 1, availability.count.worst
    finally:
        availability.stop(), harmed.stop(), evicted.stop()
    availability.result()
    # ACT-10 (2): `kubex explain` shows the floor.
    out = explain(sim, "deployment", f"{ns}/svc")
    assert out.returncode == 0 and "harm guard:   app gets at least 1 GPU until " in out.stdout, out.stdout + out.stderr
