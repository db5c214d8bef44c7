"""`kubex-sim agent` (SPEC SIM-2) against an API server where KAI's `kai-resource-reservation` namespace can be absent:
kubex-sim serve --no-cluster (its API server only; the agent brings the nodes, kubelet and KAI-like scheduler)."""
import json
import pathlib
import subprocess

import pytest

from conftest import BIN, wait_for

AGENT = "e2e-agent"
POOLS = """
kubelet:
  startDelay: 100ms
  readyDelay: 100ms
nodePools:
  - name: frac
    count: 1
    gpusPerNode: 1
    gpuProduct: Tesla-T4
    gpuMemoryMiB: 16384
    cpu: "8"
    memory: 32Gi
"""


class Agent:
    def __init__(self, kubeconfig, workdir):
        pools = pathlib.Path(workdir) / "pools.yaml"
        pools.write_text(POOLS)
        self.log_path = pathlib.Path(workdir) / "agent.log"
        self.log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(
            [str(BIN / "kubex-sim"), "agent", "--kubeconfig", kubeconfig, "--config", str(pools), "--name", AGENT],
            stdout=subprocess.PIPE, stderr=self.log, text=True)
        ready = self.proc.stdout.readline()
        assert ready.startswith("kubex-sim agent ready"), f"{ready!r}\n{self.output()}"

    def output(self):
        if not self.log.closed:
            self.log.flush()
        return self.log_path.read_text(errors="replace")

    def lines(self, msg):
        out = []
        for line in self.output().splitlines():
            try:
                doc = json.loads(line)
            except ValueError:
                continue
            if doc.get("msg") == msg:
                out.append(doc)
        return out

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=30)
        if not self.log.closed:
            self.log.close()


@pytest.fixture
def bare(sim_factory, tmp_path):
    sim = sim_factory(extra_args=["--no-cluster"])
    crds = subprocess.run([str(BIN / "kubex-sim"), "crds"], capture_output=True, text=True, check=True).stdout
    sim.kubectl("apply", "-f", "-", input=crds)
    wait_for(lambda: "queues" in sim.kubectl("api-resources", "--api-group=scheduling.run.ai", check=False).stdout,
             what="the Queue API served")
    sim.kubectl("apply", "-f", "-", input=json.dumps({
        "apiVersion": "scheduling.run.ai/v2", "kind": "Queue", "metadata": {"name": "team"},
        "spec": {"resources": {r: {"quota": -1, "limit": -1, "overQuotaWeight": 1} for r in ("cpu", "gpu", "memory")}}}))
    agent = Agent(sim.kubeconfig, tmp_path)
    yield sim, agent
    agent.stop()


def scheduled_condition(sim, ns, name):
    pod = sim.kubectl_json("get", "pod", name, "-n", ns)
    return next((c for c in pod.get("status", {}).get("conditions", []) if c["type"] == "PodScheduled"), None)


def test_fraction_pod_says_why_when_its_reservation_pod_cannot_be_created_and_runs_once_it_can(bare):  # SIM-2, SIM-9
    # Issue 34 item 10: without kai-resource-reservation the fraction pod stayed Pending with no condition, event or
    # log line.
    sim, agent = bare
    assert sim.kubectl("get", "namespace", "kai-resource-reservation", check=False).returncode != 0
    sim.kubectl("create", "namespace", "frac")
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "half", "namespace": "frac", "labels": {"kai.scheduler/queue": "team"},
                        "annotations": {"gpu-fraction": "0.5"}},
           "spec": {"schedulerName": "kai-scheduler", "containers": [{"name": "app", "image": "x"}]}}
    sim.kubectl("apply", "-f", "-", input=json.dumps(pod))
    cond = wait_for(lambda: (c := scheduled_condition(sim, "frac", "half")) and c["status"] == "False" and c,
                    timeout=60, what="PodScheduled=False on the fraction pod")
    assert cond["reason"] == "SchedulerError", cond
    assert 'namespaces "kai-resource-reservation" not found' in cond["message"], cond
    assert "cannot create the GPU reservation pod kai-resource-reservation/" in cond["message"], cond
    events = sim.kubectl_json("get", "events", "-n", "frac", "--field-selector", "involvedObject.name=half")["items"]
    assert any(e["reason"] == "FailedScheduling" and "kai-resource-reservation" in e["message"] for e in events), events
    logged = agent.lines("cannot create the GPU reservation pod; the pod stays pending and is retried")
    assert logged and logged[0]["pod"] == "frac/half" and logged[0]["level"] == "warn", agent.output()[-2000:]

    # Once the namespace exists, a retry creates the reservation and the pod is scheduled and runs.
    sim.kubectl("create", "namespace", "kai-resource-reservation")
    wait_for(lambda: (c := scheduled_condition(sim, "frac", "half")) and c["status"] == "True", timeout=120,
             what="PodScheduled=True after the namespace was created")
    wait_for(lambda: sim.kubectl_json("get", "pod", "half", "-n", "frac")["status"].get("phase") == "Running",
             timeout=60, what="the fraction pod running")
