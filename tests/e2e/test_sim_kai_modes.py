"""SIM-4 end to end: kubex-sim's KAI follows --kai-version and --gpu-sharing-mode. Under 0.18 NvFractions a
fraction may burst to its gpu-fraction.limit and a contended GPU OOM-kills the pod above its request; an invalid
limit is refused; 0.17 ignores the limit; Disabled refuses fractions; compute modes never share a GPU. Real kubectl
against `kubex-sim serve`, no engine (docs/gpu-model.md, "KAI versions and sharing modes")."""
import json
import pathlib
import subprocess

import pytest

from conftest import BIN, wait_for
from test_gpu_metrics import FAST_KUBELET

QUEUE = "kai-modes"


def start(sim_factory, tmp_path, *flags):
    cfg = pathlib.Path(tmp_path) / "cluster.yaml"
    cfg.write_text(FAST_KUBELET)
    sim = sim_factory(extra_args=["--config", str(cfg), "--metrics-listen", "", *flags])
    for name, parent in ((QUEUE + "-parent", None), (QUEUE, QUEUE + "-parent")):
        spec = {"resources": {"gpu": {"quota": -1, "limit": -1, "overQuotaWeight": 1}}}
        if parent:
            spec["parentQueue"] = parent
        sim.kubectl("apply", "-f", "-", input=json.dumps(
            {"apiVersion": "scheduling.run.ai/v2", "kind": "Queue", "metadata": {"name": name}, "spec": spec}))
    return sim


def create_fraction_pod(sim, ns, name, annotations):
    sim.kubectl("create", "namespace", ns, check=False)
    sim.kubectl("create", "-f", "-", input=json.dumps({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": ns, "labels": {"kai.scheduler/queue": QUEUE},
                     "annotations": annotations},
        "spec": {"schedulerName": "kai-scheduler",
                 "containers": [{"name": "app", "image": "registry.example/infer:1",
                                 "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}]},
    }))


def pod(sim, ns, name):
    return sim.kubectl_json("get", "pod", name, "-n", ns)


def status(p):
    return (p["status"].get("containerStatuses") or [{}])[0]


def running(sim, ns, name):
    p = pod(sim, ns, name)
    return p["status"].get("phase") == "Running" and status(p).get("ready") and p


def unschedulable(sim, ns, name):
    """The PodScheduled=False message of a Pending pod, with its Warning events."""
    p = pod(sim, ns, name)
    for c in p["status"].get("conditions", []):
        if c.get("type") == "PodScheduled" and c.get("status") == "False" and c.get("reason") == "Unschedulable":
            assert p["status"].get("phase") == "Pending" and not p["spec"].get("nodeName")
            events = [e for e in sim.kubectl_json("get", "events", "-n", ns)["items"]
                      if e["involvedObject"].get("name") == name and e.get("type") == "Warning"]
            return c["message"], [e["message"] for e in events]
    return None


def oom_killed(sim, ns, name):
    p = pod(sim, ns, name)
    cs = status(p)
    last = cs.get("lastState", {}).get("terminated", {})
    if cs.get("restartCount", 0) >= 1 and last.get("reason") == "OOMKilled":
        return p
    return None


@pytest.fixture(scope="module")
def nv_sim(sim_factory, tmp_path_factory):
    return start(sim_factory, tmp_path_factory.mktemp("kai-nv"), "--kai-version", "0.18",
                 "--gpu-sharing-mode", "NvFractions")


def test_contended_gpu_oom_kills_the_pod_above_its_request(nv_sim):
    sim, ns = nv_sim, "t-kai-burst"
    # Requests 0.3 + 0.5 fit one 16384 MiB T4; bursts 9000 + 7500 MiB exceed its 15892 usable MiB. `burst` is
    # within its 0.63 limit (10321.9 MiB) but 4084.8 MiB above its request: it is the one reclaimed.
    create_fraction_pod(sim, ns, "burst", {"gpu-fraction": "0.3", "gpu-fraction.limit": "0.63",
                                           "sim.kubex.ai/gpu-memory-mib": "9000"})
    wait_for(lambda: running(sim, ns, "burst"), timeout=30, interval=0.2, what="burst Running")
    create_fraction_pod(sim, ns, "steady", {"gpu-fraction": "0.5", "sim.kubex.ai/gpu-memory-mib": "7500"})
    steady = wait_for(lambda: running(sim, ns, "steady"), timeout=30, interval=0.2, what="steady Running")
    burst = pod(sim, ns, "burst")
    assert steady["metadata"]["labels"]["runai-gpu-group"] == burst["metadata"]["labels"]["runai-gpu-group"]
    assert steady["spec"]["nodeName"] == burst["spec"]["nodeName"]

    burst = wait_for(lambda: oom_killed(sim, ns, "burst"), timeout=60, interval=0.3, what="burst OOMKilled")
    last = status(burst)["lastState"]["terminated"]
    assert last["exitCode"] == 137 and last.get("finishedAt"), last
    assert "4084.8 MiB above its request of 4915.2 MiB" in last.get("message", ""), last
    events = [e["message"] for e in sim.kubectl_json("get", "events", "-n", ns)["items"]
              if e["involvedObject"].get("name") == "burst" and e.get("reason") == "OOMKilling"]
    assert any("reclaimed first under NvFractions" in m for m in events), events
    # The pod within its request keeps running.
    steady = pod(sim, ns, "steady")
    assert steady["status"]["phase"] == "Running"
    assert status(steady).get("restartCount", 0) == 0
    assert not status(steady).get("lastState", {}).get("terminated")


def test_a_burst_above_the_limit_is_a_cuda_oom(nv_sim):
    sim, ns = nv_sim, "t-kai-cap"
    create_fraction_pod(sim, ns, "capped", {"gpu-fraction": "0.2", "gpu-fraction.limit": "0.4",
                                            "sim.kubex.ai/gpu-memory-mib": "7000"})
    p = wait_for(lambda: oom_killed(sim, ns, "capped"), timeout=60, interval=0.3, what="capped OOMKilled")
    msg = status(p)["lastState"]["terminated"].get("message", "")
    assert "7000 MiB working set exceeds the 6553.6 MiB limit (gpu-fraction.limit 0.4" in msg, msg


def test_invalid_limits_are_refused_on_0_18(nv_sim):
    sim, ns = nv_sim, "t-kai-invalid"
    create_fraction_pod(sim, ns, "low", {"gpu-fraction": "0.5", "gpu-fraction.limit": "0.4"})
    create_fraction_pod(sim, ns, "orphan", {"gpu-fraction.limit": "0.5"})
    message, events = wait_for(lambda: unschedulable(sim, ns, "low"), timeout=30, interval=0.2, what="low refused")
    want = 'gpu-fraction.limit annotation value "0.4" must be a number greater than the gpu-fraction (0.5)'
    assert want in message, message
    assert any(want in e for e in events), events
    message, _ = wait_for(lambda: unschedulable(sim, ns, "orphan"), timeout=30, interval=0.2, what="orphan refused")
    assert "requires the gpu-fraction annotation" in message, message


def test_compute_modes_never_share_a_gpu(nv_sim):
    sim, ns = nv_sim, "t-kai-modes"
    create_fraction_pod(sim, ns, "sm", {"gpu-fraction": "0.2", "kai.scheduler/gpu-compute-sharing-mode": "sm-sharing"})
    create_fraction_pod(sim, ns, "ts", {"gpu-fraction": "0.2"})
    create_fraction_pod(sim, ns, "sm2", {"gpu-fraction": "0.2",
                                         "nvidia.com/container.app.gpu-compute.mode": "sm-sharing"})
    pods = {n: wait_for(lambda n=n: running(sim, ns, n), timeout=30, interval=0.2, what=n) for n in ("sm", "ts", "sm2")}
    group = {n: p["metadata"]["labels"]["runai-gpu-group"] for n, p in pods.items()}
    assert group["sm"] == group["sm2"], group
    assert group["ts"] != group["sm"], group


def test_0_17_ignores_the_limit(sim_factory, tmp_path):
    sim, ns = start(sim_factory, tmp_path, "--kai-version", "0.17", "--gpu-sharing-mode", "HamiCore"), "t-kai-017"
    # An invalid limit (below the request) does not stop the pod; it is not a burst allowance either: HAMi-core
    # holds the pod to its request (0.3 of 16384 MiB), so 6000 MiB is a CUDA out-of-memory crash.
    create_fraction_pod(sim, ns, "ignored", {"gpu-fraction": "0.5", "gpu-fraction.limit": "0.1"})
    wait_for(lambda: running(sim, ns, "ignored"), timeout=30, interval=0.2, what="ignored Running")
    create_fraction_pod(sim, ns, "capped", {"gpu-fraction": "0.3", "gpu-fraction.limit": "0.63",
                                            "sim.kubex.ai/gpu-memory-mib": "6000"})
    p = wait_for(lambda: oom_killed(sim, ns, "capped"), timeout=60, interval=0.3, what="capped OOMKilled")
    msg = status(p)["lastState"]["terminated"].get("message", "")
    assert "6000 MiB working set exceeds the 4915.2 MiB allocation (gpu-fraction 0.3" in msg, msg
    res = sim.kubectl("get", "pods", "-n", "kai-resource-reservation", "-o", "jsonpath={.items[*].spec.containers[0].image}")
    assert "resource-reservation:v0.17.0" in res.stdout, res.stdout


def test_disabled_refuses_fractions(sim_factory, tmp_path):
    sim, ns = start(sim_factory, tmp_path, "--gpu-sharing-mode", "Disabled"), "t-kai-disabled"
    create_fraction_pod(sim, ns, "frac", {"gpu-fraction": "0.5"})
    message, events = wait_for(lambda: unschedulable(sim, ns, "frac"), timeout=30, interval=0.2, what="frac refused")
    assert "GPU sharing is disabled" in message and "KAI refuses gpu-fraction pods" in message, message
    assert any("GPU sharing is disabled" in e for e in events), events


@pytest.mark.parametrize("flags,error", [
    (["--kai-version", "0.16"], 'invalid --kai-version "0.16": supported values: "0.17", "0.18"'),
    (["--gpu-sharing-mode", "HAMiCore"], 'invalid --gpu-sharing-mode "HAMiCore"'),
    (["--kai-version", "0.17", "--gpu-sharing-mode", "NvFractions"], "NvFractions needs KAI 0.18"),
])
def test_bad_flags_are_named(flags, error, tmp_path):
    for cmd in ("serve", "agent"):
        args = [str(BIN / "kubex-sim"), cmd, "--kubeconfig", str(tmp_path / "none"), *flags]
        res = subprocess.run(args, capture_output=True, text=True, timeout=30)
        assert res.returncode == 2, (cmd, res.returncode, res.stderr)
        assert error in res.stderr, (cmd, res.stderr)
