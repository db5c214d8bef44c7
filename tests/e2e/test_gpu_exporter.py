"""`kubex gpu-exporter` end to end (issue 37, SPEC §12b TEL-1…TEL-3): the exporter loads a fake NVML shared library
(tests/fake_nvml, built with the project and loaded through the same dlopen a real driver would be) driven by a
scenario file, reads a fake /proc whose cgroup files name the containers of REAL kubex-sim pods, watches the pods of its
node with the engine's client, and serves /metrics; a real Prometheus scrapes ONLY the exporter (not kubex-sim's own
exporter), and the real `kubex engine` with the guide's starter example (windows 1m, minPodMetricsAge 0s, as
test_reactive.py) upsizes the workload and evicts its pod from the exporter's numbers alone."""
import os
import pathlib
import subprocess

import pytest

import json

from conftest import BIN, wait_for
from test_actuation import events
from test_gpu_metrics import Prometheus, free_port, http_get, start_gpu_sim
from test_reactive import HANG, SIM_CONFIG, install_starter, kai_deployment, reactive_requests, running, \
    start_engine, wait_recommendation

FAKE_NVML = BIN / "libfake-nvml.so"
GIB = 1024 ** 3
DEVICE_BYTES = 16 * GIB  # the sim's Tesla-T4 pool: 16384 MiB


def container_id(pod, name="app"):
    status = next(s for s in pod["status"]["containerStatuses"] if s["name"] == name)
    return status["containerID"].split("://", 1)[1]


def write_cgroup(proc_root, pid, pod_uid, cid, layout):
    """/proc/<pid>/cgroup as the kubelet's cgroup driver writes it (TEL-2)."""
    d = pathlib.Path(proc_root) / str(pid)
    d.mkdir(parents=True, exist_ok=True)
    if layout == "systemd":
        text = ("0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod"
                f"{pod_uid.replace('-', '_')}.slice/cri-containerd-{cid}.scope\n")
    else:  # cgroupfs, cgroup v1
        text = "".join(f"{i}:{c}:/kubepods/besteffort/pod{pod_uid}/{cid}\n"
                       for i, c in enumerate(("cpu,cpuacct", "memory", "pids"), start=2))
    (d / "cgroup").write_text(text)


class Exporter:
    """`kubex gpu-exporter` with the fake NVML, as the acceptance checks run it."""

    def __init__(self, tmp, sim, node):
        self.scenario = pathlib.Path(tmp) / "scenario.txt"
        self.scenario.write_text("driver 550.54.15\n")
        self.proc_root = pathlib.Path(tmp) / "proc"
        self.proc_root.mkdir()
        self.port = free_port()
        self.log = open(pathlib.Path(tmp) / "exporter.log", "wb")
        env = dict(os.environ, FAKE_NVML_SCENARIO=str(self.scenario))
        self.proc = subprocess.Popen(
            [str(BIN / "kubex"), "gpu-exporter", "--nvml-library", str(FAKE_NVML), "--proc-root", str(self.proc_root),
             "--node-name", node, "--kubeconfig", sim.kubeconfig, "--listen", f"127.0.0.1:{self.port}"],
            stdout=self.log, stderr=subprocess.STDOUT, env=env)
        wait_for(lambda: self.proc.poll() is None and http_get(self.url)[0] == 200, timeout=HANG, interval=0.2,
                 what="the exporter's /metrics")

    def set_scenario(self, text):
        """A new scenario, renamed over the old one: the fake NVML re-reads it at its next call."""
        tmp = self.scenario.with_suffix(".new")
        tmp.write_text(text)
        tmp.replace(self.scenario)

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}/metrics"

    def metrics(self):
        return http_get(self.url)[2]

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=15)


def scenario(uuid, processes):
    """One T4-sized device and its processes: [(pid, used bytes, SM %)]."""
    lines = ["driver 550.54.15", f'device 0 {uuid} "Tesla T4" total={DEVICE_BYTES}']
    for pid, used, sm in processes:
        lines.append(f"process 0 pid={pid} used={used}")
        lines.append(f"util 0 pid={pid} sm={sm}")
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def env(sim_factory, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("gpu-exporter")
    sim, _sim_metrics = start_gpu_sim(sim_factory, tmp, SIM_CONFIG)
    node = "g-node-0"
    exporter = Exporter(tmp, sim, node)
    prom = Prometheus(f"127.0.0.1:{exporter.port}")  # the exporter only: kubex-sim's own exporter is not scraped
    install_starter(sim, prom, kai={"memoryIsolation": "HAMiCore"})
    engine = start_engine(sim)
    yield sim, exporter, prom, engine, node
    engine.stop()
    exporter.stop()
    prom.stop()


def test_the_exporters_numbers_alone_upsize_and_evict(env):  # TEL-1, TEL-2, TEL-3, REA-6, ACT-1
    sim, exporter, prom, engine, node = env
    ns = "tel-compute"
    sim.kubectl("create", "namespace", ns)
    # The sim's own demand annotations say nearly nothing (5 % SM); only the exporter's 45 % can drive an upsize.
    sim.kubectl("apply", "-f", "-", input=json.dumps(kai_deployment("infer", ns, "0.25", "5", "256", node)))
    pod = wait_for(lambda: (r := running(sim, ns)) and r[0], timeout=HANG, what="the pod running on " + node)
    uid, cid = pod["metadata"]["uid"], container_id(pod)
    write_cgroup(exporter.proc_root, 4242, uid, cid, "systemd")
    write_cgroup(exporter.proc_root, 4243, "9f0e7a3c-1111-2222-3333-444455556666", "f" * 64, "cgroupfs")  # a pod this node does not run
    exporter.set_scenario(scenario("GPU-tel-0", [(4242, 1 * GIB, 45), (4243, GIB // 2, 10)]))

    # TEL-3: 1 GiB of a 0.25 × 16 GiB share is 25 %; 45 % of the whole GPU; the labels of kubex-sim's exporter.
    labels = (f'namespace="{ns}",pod="{pod["metadata"]["name"]}",container="app",node="{node}",gpu_uuid="GPU-tel-0",'
              'gpu_model="Tesla T4",gpu_allocation_type="fraction"')
    wait_for(lambda: f"kubex_gpu_container_memory_footprint_percent{{{labels}}} 25\n" in exporter.metrics(),
             timeout=HANG, interval=0.5, what="the footprint series of the pod")
    text = exporter.metrics()
    assert f"kubex_gpu_container_sm_utilization_percent{{{labels}}} 45\n" in text, text
    assert f"kubex_gpu_container_memory_total_bytes{{{labels}}} {DEVICE_BYTES // 4}\n" in text, text
    # TEL-2: the process of a pod this node does not run is counted, never attributed.
    assert f'kubex_gpu_exporter_unmapped_processes{{node="{node}",reason="unknown-pod"}} 1\n' in text, text

    # REA-6 from the exporter's data: min(0.45 × 1.2, 0.25 × 200 %) = 0.5, as kubex-sim's exporter gives (X1).
    assert wait_recommendation(sim, ns, "0.5", timeout=HANG) == {"app": {"gpu": "0.5"}}
    # ACT-1, ACT-4: the running pod at 0.25 is evicted (its event) and its replacement admitted at 0.5.
    new = wait_for(lambda: (r := running(sim, ns)) and r[0]["metadata"]["uid"] != uid and r[0], timeout=HANG,
                   what="the pod replaced by actuation")
    assert new["metadata"]["annotations"]["gpu-fraction"] == "0.5"
    evicted = {e["involvedObject"]["name"] for e in events(sim, ns, "PolicyEvaluationEvictResize")}
    assert pod["metadata"]["name"] in evicted, evicted
    # TEL-2: the old container's process now names a pod the node no longer runs: counted, not attributed.
    wait_for(lambda: f'kubex_gpu_exporter_unmapped_processes{{node="{node}",reason="unknown-pod"}} 2\n'
             in exporter.metrics(), timeout=HANG, interval=0.5, what="the old pod's process unmapped")
    assert f'pod="{pod["metadata"]["name"]}"' not in exporter.metrics()
    assert reactive_requests(sim, ns) == {"app": {"gpu": "0.5"}}


def test_without_nvml_it_exits_with_one_line(tmp_path):  # TEL-1
    r = subprocess.run([str(BIN / "kubex"), "gpu-exporter", "--nvml-library", str(tmp_path / "libnvidia-ml.so.1"),
                        "--node-name", "n", "--listen", "127.0.0.1:0"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 1, r
    assert r.stderr.count("\n") == 1 and "cannot load NVML from" in r.stderr, r.stderr
