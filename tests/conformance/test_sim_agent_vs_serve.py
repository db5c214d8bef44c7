"""One simulation, two front doors (SIM-3, issue 23 item 4): the same scripted pod lifecycle through `kubex-sim serve`
and through `kubex-sim agent` on the real kube-apiserver + kube-controller-manager + kube-scheduler. A KAI fraction
pod (placed by the sim's KAI-like scheduler on both sides) and a whole-GPU pod (the sim's default scheduler on one side,
the real kube-scheduler on the other) are created, become Ready, and are deleted with a grace period. Both sides must
go through the same phases and conditions, record the same event reasons, and honour the configured delays (never
Ready before startDelay + readyDelay, never gone before stopDelay). A difference is fixed in serve or listed in KNOWN with why (and in
docs/kubex-sim.md, "Differences between serve and a real API server")."""
import json
import subprocess
import time

import pytest

from conftest import BIN, Sim, run, wait_for
from watch_stream import WatchStream

NS = "lifecycle"
START, READY, STOP = 1.0, 1.0, 0.5  # the kubelet delays of CONFIG, seconds
HANG = 30.0  # seconds past a delay that only a hang explains (not a speed claim)
CONFIG = """
kubelet:
  startDelay: 1s
  readyDelay: 1s
  stopDelay: 500ms
nodePools:
  - name: lc
    count: 1
    gpusPerNode: 2
    gpuProduct: Tesla-T4
    gpuMemoryMiB: 16384
    cpu: "16"
    memory: 64Gi
    labels: {pool: lc}
"""
# event reason -> why only one side records it.
KNOWN = {}


def pods():
    base = {"apiVersion": "v1", "kind": "Pod"}
    res = {"requests": {"cpu": "100m", "memory": "64Mi"}}
    frac = {**base, "metadata": {"name": "frac", "namespace": NS, "labels": {"kai.scheduler/queue": "lc-queue"},
                                 "annotations": {"gpu-fraction": "0.5"}},
            "spec": {"schedulerName": "kai-scheduler", "nodeSelector": {"pool": "lc"},
                     "containers": [{"name": "app", "image": "registry.example/app:1", "resources": res}]}}
    whole = {**base, "metadata": {"name": "whole", "namespace": NS},
             "spec": {"nodeSelector": {"pool": "lc"},
                      "containers": [{"name": "app", "image": "registry.example/app:1",
                                      "resources": {"requests": {**res["requests"], "nvidia.com/gpu": "1"},
                                                    "limits": {"nvidia.com/gpu": "1"}}}]}}
    return [frac, whole]


class Timeline:
    """A WATCH on the namespace's pods: each pod's distinct states in order, with when each was first seen."""

    def __init__(self, api_client):
        from kubernetes import client
        self.core = client.CoreV1Api(api_client)
        self.states = {}  # pod -> [(t, state)]
        rv = self.core.list_namespaced_pod(NS).metadata.resource_version
        self.stream = WatchStream(self.core.list_namespaced_pod, rv, self._event, NS, timeout_seconds=30)

    @staticmethod
    def state(ev_type, p):
        if ev_type == "DELETED":
            return ("Deleted",)
        conds = {c.type: c.status for c in (p.status.conditions or [])}
        cs = (p.status.container_statuses or [None])[0]
        container = "none" if cs is None else \
            "running" if cs.state.running else "terminated" if cs.state.terminated else \
            f"waiting:{cs.state.waiting.reason}" if cs.state.waiting else "?"
        return (p.status.phase, bool(p.spec.node_name), bool(p.metadata.deletion_timestamp),
                *(conds.get(t, "-") for t in ("PodScheduled", "Initialized", "ContainersReady", "Ready")), container)

    def _event(self, type_, p):
        seq = self.states.setdefault(p.metadata.name, [])
        s = self.state(type_, p)
        if not seq or seq[-1][1] != s:
            seq.append((time.monotonic(), s))

    def stop(self):
        self.stream.stop()


def run_script(kubectl, api_client):
    """Creates both pods, waits for Ready, deletes them with a 5 s grace period, waits until they are gone.
    Returns (timeline, {pod: (seconds to Ready, seconds from delete to gone)}, {pod: event reasons})."""
    tl = Timeline(api_client)
    t0 = time.monotonic()
    kubectl("apply", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List", "items": pods()}))
    ready = {}

    def all_ready():
        for name in ("frac", "whole"):
            seq = tl.states.get(name, [])
            hit = next((t for t, s in seq if len(s) > 6 and s[6] == "True"), None)
            if hit is None:
                return False
            ready[name] = hit - t0
        return True
    wait_for(all_ready, timeout=60, interval=0.1, what="both pods Ready")
    t1 = time.monotonic()
    kubectl("delete", "pod", "frac", "whole", "-n", NS, "--grace-period=5", "--wait=false")
    gone = {}

    def all_gone():
        for name in ("frac", "whole"):
            seq = tl.states.get(name, [])
            if not seq or seq[-1][1] != ("Deleted",):
                return False
            gone[name] = seq[-1][0] - t1
        return True
    wait_for(all_gone, timeout=60, interval=0.1, what="both pods gone")
    tl.stop()
    reasons = {}
    for e in json.loads(kubectl("get", "events", "-n", NS, "-o", "json").stdout)["items"]:
        reasons.setdefault(e["involvedObject"]["name"], set()).add(e["reason"])
    return {k: [s for _, s in v] for k, v in tl.states.items()}, {k: (ready[k], gone[k]) for k in ready}, reasons


@pytest.fixture(scope="module")
def config_file(tmp_path_factory):
    p = tmp_path_factory.mktemp("lifecycle") / "pools.yaml"
    p.write_text(CONFIG)
    return p


def queue(kubectl):
    kubectl("create", "namespace", NS)
    kubectl("apply", "-f", "-", input=json.dumps({
        "apiVersion": "scheduling.run.ai/v2", "kind": "Queue", "metadata": {"name": "lc-queue"},
        "spec": {"resources": {r: {"quota": -1, "limit": -1, "overQuotaWeight": 1} for r in ("cpu", "gpu", "memory")}}}))


def test_a_pod_lifecycle_is_the_same_through_serve_and_agent(cp, config_file, tmp_path):  # SIM-3
    sim = Sim(tmp_path / "serve", extra_args=["--config", str(config_file), "--metrics-listen", ""])
    (tmp_path / "serve").mkdir()
    sim.start()
    try:
        queue(sim.kubectl)
        serve = run_script(sim.kubectl, sim.client())
    finally:
        sim.stop()

    cp.kubectl("apply", "-f", "-", input=run([str(BIN / "kubex-sim"), "crds"]).stdout)
    cp.kubectl("create", "namespace", "kai-resource-reservation", check=False)
    log = open(tmp_path / "agent.log", "wb")
    agent = subprocess.Popen([str(BIN / "kubex-sim"), "agent", "--kubeconfig", cp.kubeconfig, "--config",
                              str(config_file), "--name", "lifecycle", "--metrics-listen", "",
                              "--delete-nodes-on-exit"], stdout=subprocess.PIPE, stderr=log, text=True)
    try:
        assert agent.stdout.readline().startswith("kubex-sim agent ready")
        wait_for(lambda: not cp.kubectl_json("get", "node", "lc-node-0")["spec"].get("taints"), timeout=60,
                 what="lc-node-0 Ready and untainted")
        queue(cp.kubectl)
        real = run_script(cp.kubectl, cp.client())
    finally:
        agent.terminate()
        agent.wait(timeout=30)
        log.close()
        cp.kubectl("delete", "namespace", NS, "--wait=false", check=False)
    assert agent.returncode == 0
    assert cp.kubectl("get", "node", "lc-node-0", check=False).returncode != 0, "--delete-nodes-on-exit"

    table = ["pod    side   to Ready  delete->gone  states"]
    for side, (states, times, _) in (("serve", serve), ("agent", real)):
        for pod in ("frac", "whole"):
            table.append(f"{pod:6} {side:6} {times[pod][0]:8.2f}s {times[pod][1]:12.2f}s  {len(states[pod])}")
    print("\n" + "\n".join(table))
    for pod in ("frac", "whole"):
        # The same phases and conditions, in the same order.
        assert serve[0][pod] == real[0][pod], f"{pod}:\nserve {serve[0][pod]}\nagent {real[0][pod]}"
        # The configured delays on both sides: never Ready before startDelay + readyDelay, never gone before
        # stopDelay. Load can only make a step later, never earlier, so the lower bounds are exact; the upper bound
        # only catches a hang (a delay applied twice over, a step that never comes): under CI load on 2 cores a
        # WATCH event can arrive seconds late, and when it arrives says nothing about the simulation.
        for side, (_, times, _) in (("serve", serve), ("agent", real)):
            to_ready, to_gone = times[pod]
            assert START + READY - 0.1 <= to_ready <= START + READY + HANG, (side, pod, times)
            assert STOP - 0.1 <= to_gone <= STOP + HANG, (side, pod, times)
        only_serve = serve[2].get(pod, set()) - real[2].get(pod, set()) - set(KNOWN)
        only_agent = real[2].get(pod, set()) - serve[2].get(pod, set()) - set(KNOWN)
        assert not only_serve and not only_agent, (pod, only_serve, only_agent)
