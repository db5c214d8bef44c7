"""KAI v0.18 sharing modes and burst limits end to end (issue 25, SPEC §5a KAI-1…KAI-5, VLM-3, REA-11, REA-12,
SIM-4): kubex-sim as KAI v0.18 in `NvFractions` mode with its GPU model, a real Prometheus scraping the sim's
exporter, and the real `kubex engine` with its webhooks. The seed's starter example is applied with its strategy's
`kai.fractionLimit.enabled: true`, its reactive windows shortened to 1m and `minPodMetricsAge: 0s`; the engine
evaluates every 10 s (--reactive-check-interval). A second module-level cluster plays KAI v0.17 in its default
mode: there kubex writes no limit and behaves as before.

Nothing here depends on the machine's speed: deadlines only bound a hang, and "never evicts" is a window over WATCH
streams and counters that ends after engine reconciles (OBS-5), not an instant check."""
import json
import time

import pytest

from conftest import EngineProcess, ROOT, wait_for
from test_gpu_metrics import Prometheus, start_gpu_sim
from test_admission import engine_would_mutate
from test_explain import explain, explain_json
from test_reactive import API, CW, apply, install_starter, metric, owner_annotation, running, starter_docs, start_engine
from watch_stream import EventWatch, PodAvailabilityWatch, hold_until

T4_MIB = 15360  # SIM-5: Tesla-T4 memory
MIN_READY_S = 10.0  # safetyChecks.minReadyDuration: the default (SPEC §1); the starter strategy does not set it

SIM_CONFIG = """
nodePools:
  - name: g
    count: 4
    gpusPerNode: 1
    gpuProduct: Tesla-T4
    cpu: "16"
    memory: 64Gi
"""


def strategy_with_burst_limits():
    s = [d for d in starter_docs() if d["kind"] == "ClusterAutomationStrategy"][0]
    s["spec"]["kai"]["fractionLimit"] = {"enabled": True}  # headroom 50 %, ceiling 1 (the defaults)
    return s


def static_policy(name, ns, requests, limits=None):
    values = {"requests": {"gpu": requests}}
    if limits:
        values["limits"] = {"gpu": limits}
    return {"apiVersion": API, "kind": "ClusterStaticPolicy", "metadata": {"name": name},
            "spec": {"scope": {"namespaceSelector": {"operator": "In", "values": [ns]},
                               "workloadTypes": ["Deployment"]},
                     "resources": {"containers": {"*": values}},
                     "automationStrategyRef": {"name": "kai-gpu-sharing"}}}


def whole_gpu_deployment(name, ns, node, image="nvidia/cuda:12.4-base", args=None, annotations=None, replicas=0):
    c = {"name": "app", "image": image, "resources": {"limits": {"nvidia.com/gpu": 1}}}
    if args:
        c["args"] = args
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": ns, "labels": {"app": name}},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}, "annotations": annotations or {}},
                                  "spec": {"nodeSelector": {"kubernetes.io/hostname": node}, "containers": [c]}}}}


def kai_deployment(name, ns, node, fraction, memory_mib, limit=None):
    """A KAI workload already at `fraction` (and `limit`), whose container uses `memory_mib` MiB of GPU memory."""
    ann = {"gpu-fraction": fraction, "sim.kubex.ai/gpu-sm-percent": "10", "sim.kubex.ai/gpu-memory-mib": memory_mib}
    if limit:
        ann["gpu-fraction.limit"] = limit
    # nvidia.com/gpu.present: the starter's reactive policy selects GPU Deployments by that label.
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": ns, "labels": {"app": name, "nvidia.com/gpu.present": "true"}},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name,
                                                          "kai.scheduler/queue": "kubex-unlimited-gpu-queue"},
                                               "annotations": ann},
                                  "spec": {"schedulerName": "kai-scheduler",
                                           "nodeSelector": {"kubernetes.io/hostname": node},
                                           "containers": [{"name": "app", "image": "registry.example/infer:1"}]}}}}


def annotations(obj):
    return obj["metadata"].get("annotations", {})


def wait_static_known(sim, ns, name, requests):
    """The engine has written the static owner annotation of `name` (SEL-7): from then on new pods get the policy's
    values."""
    key = "cwstatic.rightsizing.kubex.ai/desired-resource-requests"
    wait_for(lambda: owner_annotation(sim, ns, key, name=name) == json.dumps({"app": {"gpu": requests}},
                                                                             separators=(",", ":")),
             timeout=90, interval=0.5, what=f"{key} on {ns}/{name}")


def start_when_static_is_known(sim, ns, name, requests):
    wait_static_known(sim, ns, name, requests)
    sim.kubectl("scale", "deployment", name, "-n", ns, "--replicas=1")


def one_running(sim, ns, name):
    return wait_for(lambda: (r := running(sim, ns, name)) and len(r) == 1 and r[0], timeout=90, interval=0.5,
                    what=f"one running pod of {ns}/{name}")


class NeverEvicted:
    """ "Never evicted", proven over a window: WATCH streams from now on of the pods of `app` in `ns` (none may leave
    Ready or be deleted once Ready) and of PolicyEvaluationEvictResize events, and kubex_evictions_total{reason="resize"}
    that must not move. Create it before the pod exists; `hold(...)` ends the window."""

    def __init__(self, sim, engine, ns, app):
        from kubernetes import client
        core = client.CoreV1Api(sim.client())
        self.engine, self.app = engine, app
        self.pods = PodAvailabilityWatch(core, ns, f"app={app}", 1, from_available=True)
        self.evictions = EventWatch(core, ns, "PolicyEvaluationEvictResize")
        self.before = metric(engine, "kubex_evictions_total", reason="resize")

    def happened(self):
        now = metric(self.engine, "kubex_evictions_total", reason="resize")
        return self.evictions.seen + [f"pods of {self.app} gone: {sorted(self.pods.count.gone)}"] * \
            bool(self.pods.count.gone) + [f"{self.app} not Ready: {self.pods.count.worst}"] * (self.pods.count.max > 0) \
            + [f'kubex_evictions_total{{reason="resize"}} {self.before:g} -> {now:g}'] * (now != self.before)

    def hold(self, ready_at):
        """Until the pod, Ready since `ready_at` (time.monotonic(), seen by the test, so no earlier than it was), has
        been Ready for minReadyDuration (until then ACT-2 would hold an eviction back anyway, and the engine requeues
        the workload for that moment), and then a whole actuation reconcile (OBS-5's counter: two more counts)."""
        mark = []

        def ended():
            if time.monotonic() < ready_at + MIN_READY_S:
                return False
            if not mark:
                mark.append(self.engine.reconciles("actuation"))
            return self.engine.reconciles("actuation") >= mark[0] + 2
        try:
            hold_until(ended, self.happened, timeout=300,
                       what="minReadyDuration after the pod turned Ready and a whole actuation reconcile")
        finally:
            self.stop()
        self.pods.result(), self.evictions.result()
        assert not self.happened(), self.happened()

    def stop(self):
        self.pods.stop(), self.evictions.stop()


def reactive_only_in(sim, namespaces):
    """The starter's reactive policy, scoped to `namespaces` so that it leaves the static scenarios alone."""
    r = [d for d in starter_docs() if d["kind"] == "ClusterGpuReactivePolicy"][0]
    r["spec"]["scope"]["namespaceSelector"]["values"] = list(namespaces)
    apply(sim, r)


@pytest.fixture(scope="module")
def v18(sim_factory, tmp_path_factory):
    # The sim plays KAI 0.18 in NvFractions (SIM-4).
    sim, metrics = start_gpu_sim(sim_factory, tmp_path_factory.mktemp("kai18"),
                                 'kaiVersion: "0.18"\ngpuSharingMode: NvFractions\n' + SIM_CONFIG)
    prom = Prometheus(metrics)
    install_starter(sim, prom, kai={"gpuSharingMode": "NvFractions"})
    apply(sim, strategy_with_burst_limits())
    reactive_only_in(sim, ["kai-loop"])
    engine = start_engine(sim)
    yield sim, prom, engine
    engine.stop()
    prom.stop()


def test_burst_limit_from_the_peak_and_vllm_from_the_request(v18):  # KAI-2, KAI-3, VLM-3, SEL-6, ADM-16, OBS-4
    """Under NvFractions a pod gets KAI-2's burst limit from the policy's peak and vLLM its share of the request;
    admission, `kubex explain` and the summary say so; and (KAI-3) the limit is not part of the allocation, so
    actuation never evicts the pod (a window over WATCH streams and counters, ended by engine reconciles)."""
    sim, _, engine = v18
    ns = "kai-static"
    sim.kubectl("create", "namespace", ns)
    apply(sim, static_policy("kai-static", ns, "0.3", "0.42"))
    apply(sim, whole_gpu_deployment("infer", ns, "g-node-0", image="vllm/vllm-openai:v0.6.3",
                                    args=["--model", "m", "--gpu-memory-utilization=0.9"]))
    never = NeverEvicted(sim, engine, ns, "infer")  # from before the pod exists (replicas 0 until the next line)
    try:
        start_when_static_is_known(sim, ns, "infer", "0.3")
        pod = one_running(sim, ns, "infer")
        wait_for(lambda: never.pods.count.armed, timeout=120, interval=0.5, what="the pod Ready on the WATCH")
        ready_at = time.monotonic()
        ann = annotations(pod)
        # KAI-2's example: f 0.3, peak 0.42, headroom 50 %, ceiling 1.
        assert ann["gpu-fraction"] == "0.3" and ann["gpu-fraction.limit"] == "0.63", ann
        assert "nvidia.com/gpu" not in json.dumps(pod["spec"]["containers"][0].get("resources", {}))
        # VLM-3: under NvFractions vLLM gets its share of the REQUEST (0.3 × 0.9), never the limit.
        assert "--gpu-memory-utilization=0.27" in pod["spec"]["containers"][0]["args"]
        info = json.loads(ann["automation-webhook.kubex.ai/pod-rightsizing-info"])
        assert info["containers"]["app"]["gpu-limit"] == {"from": "unspecified", "to": "0.63",
                                                          "source": "ClusterStaticPolicy/kai-static"}
        line = engine.wait_line("rightsizing summary", phase="admission", namespace=ns, rightsizingResult="MUTATED",
                                timeout=90)
        assert line["kaiMode"] == "NvFractions", line
        assert {"container": "app", "resource": "gpu-limit", "usage": "limit", "from": "unspecified",
                "to": "0.63"} in line["changes"], line
        # kubex explain says the mode, the limit and what it stands on.
        doc = explain_json(sim, "deployment", f"{ns}/infer")
        assert doc["kaiMode"] == "NvFractions", doc
        assert doc["kaiLimit"].startswith("gpu-fraction.limit 0.63 (request 0.3, peak 0.42 from ClusterStaticPolicy/"), \
            doc
        text = explain(sim, "deployment", f"{ns}/infer").stdout
        assert "KAI gpuSharingMode NvFractions" in text and "burst limit:  gpu-fraction.limit 0.63" in text, text
        # KAI-3: the limit is not part of the allocation, so actuation sees the pod in sync and never evicts it:
        # over a window from before the pod existed until it had been Ready for minReadyDuration and a whole
        # actuation reconcile after that (ACT-2, OBS-5), no eviction event, no pod leaving Ready, no eviction
        # counted, and no EVICTED summary.
        never.hold(ready_at)
    finally:
        never.stop()
    evictions = [l for l in engine.lines if l.get("msg") == "rightsizing summary" and l.get("phase") == "actuation"
                 and l.get("namespace") == ns and l.get("rightsizingResult") == "EVICTED"]
    assert evictions == []
    assert [p["metadata"]["uid"] for p in running(sim, ns, "infer")] == [pod["metadata"]["uid"]], "never evicted"


def test_a_burst_above_the_request_is_oom_killed_and_the_request_raised(v18):  # SIM-4, KAI-4, REA-11, REA-12
    sim, prom, engine = v18
    ns = "kai-loop"
    sim.kubectl("create", "namespace", ns)
    # One T4: requests 0.3 + 0.6 fit. The burst pod carries its own limit 0.45 (no peak known yet and 0.3 is its
    # original allocation, so kubex computes none and keeps the user's: KAI-2, KAI-2a) and later uses 0.44 of the
    # device: within its limit, above its request. With the steady pod's 0.56 (within
    # its request) the device, less its driver reserve, is over-committed: the pod above its request goes.
    steady_mib = str(int(0.56 * T4_MIB))
    burst_mib = f"steps({int(0.25 * T4_MIB)}, {int(0.44 * T4_MIB)}@40s)"
    apply(sim, kai_deployment("steady", ns, "g-node-1", "0.6", steady_mib))
    one_running(sim, ns, "steady")
    apply(sim, kai_deployment("burst", ns, "g-node-1", "0.3", burst_mib, limit="0.45"))
    first = one_running(sim, ns, "burst")
    assert annotations(first)["gpu-fraction.limit"] == "0.45", annotations(first)

    def oom_killed():
        pods = running(sim, ns, "burst") + [p for p in sim.kubectl_json("get", "pods", "-n", ns, "-l", "app=burst")
                                            ["items"]]
        for p in pods:
            for cs in p["status"].get("containerStatuses", []):
                term = cs.get("lastState", {}).get("terminated", {})
                if term.get("reason") == "OOMKilled":
                    return p
        return None
    wait_for(oom_killed, timeout=150, interval=1, what="the burst pod OOM-killed by the sim")
    steady = one_running(sim, ns, "steady")
    assert all(cs.get("restartCount", 0) == 0 for cs in steady["status"].get("containerStatuses", [])), \
        "the pod within its request is never the one killed"
    # REA-11 / KAI-4: the workload's request goes up (its memory is relative to the request under NvFractions).
    def raised():
        v = owner_annotation(sim, ns, CW + "desired-resource-requests", name="burst")
        return v and float(json.loads(v)["app"]["gpu"]) > 0.3 and json.loads(v)
    requests = wait_for(raised, timeout=150, interval=1, what="the burst workload's request raised")
    # REA-12: the peak is recorded for the burst limit, never below the new request.
    limits = json.loads(wait_for(lambda: owner_annotation(sim, ns, CW + "desired-resource-limits", name="burst"),
                                 timeout=60, interval=1, what="the recorded peak"))
    assert float(limits["app"]["gpu"]) >= float(requests["app"]["gpu"]), (limits, requests)


def test_disabled_mode_gives_whole_gpus_with_the_reason(v18):  # KAI-1 (runs last: it changes the cluster's mode)
    sim, _, engine = v18
    ns = "kai-disabled"
    sim.kubectl("create", "namespace", ns)
    apply(sim, static_policy("kai-disabled", ns, "0.3", "0.42"))
    apply(sim, whole_gpu_deployment("infer", ns, "g-node-2"))
    wait_static_known(sim, ns, "infer", "0.3")
    sim.kubectl("patch", "globalconfiguration", "global-config", "--type=merge",
                "-p", json.dumps({"spec": {"kai": {"gpuSharingMode": "Disabled"}}}))
    # The engine follows global-config without a restart (HLM-3): a server-side dry-run pod shows when.
    owner = sim.kubectl_json("get", "deployment", "infer", "-n", ns)
    wait_for(lambda: engine_would_mutate(sim, ns, owner, "app",
                                         lambda p: "gpu-fraction" not in annotations(p)
                                         and p["spec"]["containers"][0]["resources"]["limits"].get("nvidia.com/gpu")
                                         == "1"),
             timeout=90, interval=0.5, what="the engine admitting in Disabled mode")
    sim.kubectl("scale", "deployment", "infer", "-n", ns, "--replicas=1")

    def admitted_disabled():
        return engine.find("rightsizing summary", phase="admission", namespace=ns, kaiMode="Disabled",
                           dryRun=False)
    line = wait_for(admitted_disabled, timeout=90, interval=0.5, what="an admission in Disabled mode")
    assert "kai-gpu-sharing-disabled" in line["appliedFilters"], line
    pod = one_running(sim, ns, "infer")
    ann = annotations(pod)
    assert "gpu-fraction" not in ann and "gpu-fraction.limit" not in ann, ann
    res = pod["spec"]["containers"][0]["resources"]
    assert res["limits"]["nvidia.com/gpu"] == "1" and res["requests"]["nvidia.com/gpu"] == "1", res
    assert pod["spec"]["schedulerName"] == "kai-scheduler"  # queue and scheduler still apply
    assert "kai-gpu-sharing-disabled" in ann["rightsizing.kubex.ai/automation-constraints"]


@pytest.fixture(scope="module")
def v17(sim_factory, tmp_path_factory):
    """KAI v0.17 in its default mode, without Prometheus: admission only."""
    cfg = tmp_path_factory.mktemp("kai17") / "cluster.yaml"
    cfg.write_text(SIM_CONFIG)
    sim = sim_factory(extra_args=["--config", str(cfg), "--kai-version", "0.17"])
    sim.kubectl("apply", "-k", str(ROOT / "config" / "crd"))
    sim.kubectl("create", "namespace", "kubex")
    apply(sim, {"apiVersion": API, "kind": "GlobalConfiguration", "metadata": {"name": "global-config"},
                "spec": {"kai": {"gpuSharingMode": "NonMemoryEnforced"}}})
    apply(sim, *[d for d in starter_docs() if d["kind"] != "ClusterGpuReactivePolicy"])
    apply(sim, strategy_with_burst_limits())
    engine = EngineProcess(sim.kubeconfig, "kubex", leader_elect=False, extra_args=[
        "--webhook-bind-address", "127.0.0.1:0", "--self-signed-webhook", "--register-webhooks",
        "--early-webhook-enabled", "--kai-queues"])
    engine.wait_ready()
    wait_for(lambda: sim.kubectl("get", "mutatingwebhookconfiguration", "000-kubex-mutating-webhook-configuration",
                                 check=False).returncode == 0, timeout=90, what="the early webhook registered")
    yield sim, engine
    engine.stop()


def test_v017_default_mode_writes_no_limit_and_works_as_before(v17):  # KAI-5, KAI-2 (NvFractions only), VAL-2
    sim, engine = v17
    ns = "kai17"
    sim.kubectl("create", "namespace", ns)
    res = sim.kubectl("apply", "-f", "-", input=json.dumps(static_policy("kai17", ns, "0.3", "0.42")))
    # VAL-2: the limit has no effect in this mode, and the validating webhook says so.
    assert "has no effect unless spec.kai.gpuSharingMode is \"NvFractions\"" in res.stderr, res.stderr
    apply(sim, whole_gpu_deployment("infer", ns, "g-node-0", image="vllm/vllm-openai:v0.6.3",
                                    args=["--gpu-memory-utilization=0.9"]))
    start_when_static_is_known(sim, ns, "infer", "0.3")
    pod = one_running(sim, ns, "infer")
    ann = annotations(pod)
    assert ann["gpu-fraction"] == "0.3" and "gpu-fraction.limit" not in ann, ann
    assert pod["spec"]["schedulerName"] == "kai-scheduler"
    assert pod["metadata"]["labels"]["kai.scheduler/queue"] == "kubex-unlimited-gpu-queue"
    assert "--gpu-memory-utilization=0.27" in pod["spec"]["containers"][0]["args"]
    line = engine.wait_line("rightsizing summary", phase="admission", namespace=ns, rightsizingResult="MUTATED",
                            timeout=90)
    assert line["kaiMode"] == "NonMemoryEnforced"
    assert all(c["resource"] != "gpu-limit" for c in line["changes"]), line
