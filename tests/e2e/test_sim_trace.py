"""`kubex-sim serve --trace DIR` on the real Alibaba GPU cluster trace (SPEC SIM-6, SIM-5), read with the real kubectl.

The trace is `cluster-trace-gpu-v2023` from the Alibaba Cluster Trace Program (CC BY 4.0), kept next to the repository
in ../shared/data/alibaba-gpu-v2023; the tests skip when it is absent."""
import collections
import csv
import json
import shutil
import subprocess
import tempfile
import time

import pytest
from kubernetes.utils import parse_quantity

from conftest import BIN, ROOT, Sim, wait_for

TRACE = ROOT.parent / "shared" / "data" / "alibaba-gpu-v2023"
NODES_CSV = TRACE / "openb_node_list_gpu_node.csv"
PODS_CSV = TRACE / "openb_pod_list_default.csv"
# SIM-5: the memory of the trace's public models; G1-G3 are undisclosed and get no nvidia.com/gpu.memory label.
MODEL_MEMORY = {"T4": "15360", "P100": "16384", "V100M16": "16384", "V100M32": "32768", "A10": "23028"}
SETTLE_TIMEOUT = 900

requires_trace = pytest.mark.skipif(not (NODES_CSV.is_file() and PODS_CSV.is_file()),
                                    reason=f"the Alibaba trace is not at {TRACE} (these SIM-6 tests need its CSV files)")


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


@pytest.fixture(scope="module")
def trace_sim():
    """One kubex-sim built from the trace's GPU nodes and its Running pods (the defaults of --trace)."""
    wd = tempfile.mkdtemp(prefix="kubex-e2e-trace-")
    # Creating 5,193 Deployments happens before the ready line: allow more than the usual start time.
    sim = Sim(wd, extra_args=["--trace", str(TRACE)]).start(timeout=180)
    sim.started_at = time.monotonic()
    yield sim
    sim.stop()
    shutil.rmtree(wd, ignore_errors=True)


def pods_by_deployment(sim):
    """{deployment name: [pod, ...]} in namespace trace (a pod's Deployment is its app label)."""
    items = json.loads(sim.kubectl("get", "pods", "-n", "trace", "-o", "json", timeout=300).stdout)["items"]
    out = collections.defaultdict(list)
    for p in items:
        out[p["metadata"]["labels"]["app"]].append(p)
    return out


def unschedulable_reason(pod):
    for c in pod.get("status", {}).get("conditions", []):
        if c["type"] == "PodScheduled" and c["status"] == "False" and c.get("reason") == "Unschedulable":
            return c.get("message", "")
    return None


def settled(sim, expected):
    """(running, pending) when every Deployment has a Running pod or a Pending pod that says why; else None."""
    pods = pods_by_deployment(sim)
    if len(pods) < len(expected):
        return None
    running, pending = [], {}
    for name in expected:
        phases = [p["status"].get("phase") for p in pods[name]]
        if "Running" in phases:
            running.append(name)
            continue
        reasons = [unschedulable_reason(p) for p in pods[name] if p["status"].get("phase") == "Pending"]
        if not any(reasons):
            return None
        pending[name] = next(r for r in reasons if r)
    return running, pending


# SIM-6
@requires_trace
def test_trace_cluster_settles_with_every_pod_running_or_saying_why_it_is_pending(trace_sim):
    rows = [r for r in read_csv(PODS_CSV) if r["pod_phase"] == "Running"]
    expected = {r["name"] for r in rows}
    assert len(expected) == 5193
    deployments = json.loads(trace_sim.kubectl("get", "deployments", "-n", "trace", "-o", "json",
                                               timeout=300).stdout)["items"]
    assert sorted(d["metadata"]["name"] for d in deployments) == sorted(expected)
    running, pending = wait_for(lambda: settled(trace_sim, expected), timeout=SETTLE_TIMEOUT, interval=5,
                                what="every trace Deployment to have a Running pod or an Unschedulable reason")
    took = time.monotonic() - trace_sim.started_at
    print(f"\ntrace settled {took:.0f}s after the ready line: {len(running)} Running, {len(pending)} Pending")
    for name, why in sorted(pending.items())[:5]:
        print(f"  {name}: {why}")
    assert len(running) + len(pending) == len(expected)
    # Every pending pod says why in kube-scheduler's or KAI's words.
    for name, why in pending.items():
        assert "nodes are available" in why or "queue" in why or "GPU" in why, (name, why)
    # The trace's Running pods ran together on this cluster: nearly all of them fit here too.
    assert len(running) >= 0.95 * len(expected), (len(running), sorted(pending.items())[:10])


# SIM-6: the sharing pods are KAI fractions and share physical GPUs; the others hold whole GPUs.
@requires_trace
def test_trace_pods_become_kai_fractions_or_whole_gpus_as_their_row_says(trace_sim):
    rows = {r["name"]: r for r in read_csv(PODS_CSV) if r["pod_phase"] == "Running"}
    pods = wait_for(lambda: (lambda p: p if len(p) == len(rows) else None)(pods_by_deployment(trace_sim)),
                    timeout=SETTLE_TIMEOUT, interval=5, what="a pod for every trace Deployment")
    checked = collections.Counter()
    for name, row in rows.items():
        pod = pods[name][0]
        spec, meta = pod["spec"], pod["metadata"]
        res = spec["containers"][0]["resources"]
        num_gpu, gpu_milli = int(row["num_gpu"]), int(row["gpu_milli"])
        assert parse_quantity(res["requests"]["cpu"]) * 1000 == int(row["cpu_milli"]), name
        assert parse_quantity(res["requests"]["memory"]) == int(row["memory_mib"]) << 20, name
        if num_gpu == 1 and 0 < gpu_milli < 1000:
            assert spec["schedulerName"] == "kai-scheduler", name
            assert float(meta["annotations"]["gpu-fraction"]) == pytest.approx(gpu_milli / 1000), name
            assert meta["labels"]["kai.scheduler/queue"] == "trace", name
            assert "nvidia.com/gpu" not in res.get("limits", {}), name
            checked["fraction"] += 1
        elif num_gpu > 0:
            assert spec.get("schedulerName", "default-scheduler") == "default-scheduler", name
            assert res["limits"]["nvidia.com/gpu"] == str(num_gpu), name
            checked["whole"] += 1
        else:
            assert "nvidia.com/gpu" not in res.get("limits", {}), name
            checked["cpu"] += 1
    assert checked == {"fraction": 1412, "whole": 2737, "cpu": 1044}


# SIM-6, SIM-5, SIM-2: GFD labels and the pool label on every node, as the node list says.
@requires_trace
def test_trace_nodes_carry_their_model_memory_count_and_pool(trace_sim):
    rows = {r["sn"]: r for r in read_csv(NODES_CSV)}
    nodes = json.loads(trace_sim.kubectl("get", "nodes", "-o", "json", timeout=120).stdout)["items"]
    assert sorted(n["metadata"]["name"] for n in nodes) == sorted(rows)
    for n in nodes:
        row, labels = rows[n["metadata"]["name"]], n["metadata"]["labels"]
        name = n["metadata"]["name"]
        assert labels["nvidia.com/gpu.present"] == "true", name
        assert labels["nvidia.com/gpu.product"] == row["model"], name
        assert labels["nvidia.com/gpu.count"] == row["gpu"], name
        assert n["status"]["allocatable"]["nvidia.com/gpu"] == row["gpu"], name
        assert labels["sim.kubex.ai/node-pool"] == row["model"].lower(), name
        if row["model"] in MODEL_MEMORY:
            assert labels["nvidia.com/gpu.memory"] == MODEL_MEMORY[row["model"]], name
        else:
            assert row["model"] in ("G1", "G2", "G3"), name
            assert "nvidia.com/gpu.memory" not in labels, f"{name}: {row['model']}'s memory is not disclosed"
        assert parse_quantity(n["status"]["capacity"]["cpu"]) * 1000 == int(row["cpu_milli"]), name
        assert parse_quantity(n["status"]["capacity"]["memory"]) == int(row["memory_mib"]) << 20, name


# SIM-6: a label selector on the product finds exactly the trace's nodes of that model.
@requires_trace
def test_kubectl_selects_the_trace_t4_nodes_by_product_label(trace_sim):
    t4 = sum(1 for r in read_csv(NODES_CSV) if r["model"] == "T4")
    assert t4 == 404
    out = trace_sim.kubectl("get", "nodes", "-l", "nvidia.com/gpu.product=T4", "-o", "name").stdout.split()
    assert len(out) == t4
    pool = trace_sim.kubectl("get", "nodes", "-l", "sim.kubex.ai/node-pool=t4", "-o", "name").stdout.split()
    assert sorted(pool) == sorted(out)


# Issue 22 (e): `kubex plan consolidation` on one pool of the settled trace cluster prints a plan: the pool's nodes,
# each GPU's cap (CON-2a: the T4's 15360 MiB give 0.96), the candidates with their blockers and a drain sequence.
@requires_trace
def test_kubex_plan_consolidation_plans_a_trace_pool(trace_sim):
    expected = collections.Counter(r["model"] for r in read_csv(NODES_CSV))
    names = {r["name"] for r in read_csv(PODS_CSV) if r["pod_phase"] == "Running"}
    wait_for(lambda: settled(trace_sim, names), timeout=SETTLE_TIMEOUT, interval=5, what="the trace cluster settled")
    policy = {"apiVersion": "rightsizing.kubex.ai/v1alpha1", "kind": "GpuConsolidationPolicy",
              "metadata": {"name": "trace-t4"},
              "spec": {"experimental": {"gpuKaiContract": "v1alpha1-2026-07"},
                       "nodeSelector": {"matchLabels": {"nvidia.com/gpu.product": "T4"}}}}
    trace_sim.kubectl("apply", "-k", str(ROOT / "config" / "crd"))
    trace_sim.kubectl("apply", "-f", "-", input=json.dumps(policy))
    res = subprocess.run([str(BIN / "kubex"), "plan", "consolidation", "--policy", "trace-t4", "-o", "json",
                          "--kubeconfig", trace_sim.kubeconfig], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    (plan,) = json.loads(res.stdout)["policies"]
    pool = plan["pool"]
    assert pool["nodes"] == expected["T4"]
    assert [m["product"] for m in pool["gpuModels"]] == ["T4"]
    assert {n["gpuCap"] for n in pool["nodeUsage"]} == {"0.96"}
    assert plan["outcome"] in ("WouldDrain", "NoCandidate"), plan["outcome"]
    assert plan["message"], plan
    assert all(c["blocker"] for c in plan["candidates"] if c["candidate"])
    text = subprocess.run([str(BIN / "kubex"), "plan", "consolidation", "--policy", "trace-t4",
                           "--kubeconfig", trace_sim.kubeconfig], capture_output=True, text=True, timeout=300)
    assert text.returncode == 0 and "GpuConsolidationPolicy trace-t4" in text.stdout, text.stderr
    assert "Drain sequence" in text.stdout and "CAP" in text.stdout


# SIM-6: a bad trace file stops kubex-sim at once with one error naming the file, the line and the column.
def test_a_bad_trace_file_is_one_error_naming_file_line_and_column(tmp_path):
    (tmp_path / "openb_node_list_gpu_node.csv").write_text("sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,2,T4\n")
    bad = tmp_path / "pods.csv"
    bad.write_text("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time\n"
                   "p0,1000,1024,1,500,,LS,Running,3\n"
                   "p1,1000,1024,1,half,,LS,Running,4\n")
    res = subprocess.run([str(BIN / "kubex-sim"), "serve", "--kubeconfig", str(tmp_path / "kubeconfig"),
                          "--trace", str(tmp_path), "--trace-pods", "pods.csv"],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 2, res
    assert res.stderr.strip() == (f"kubex-sim: invalid --trace: {bad}:3:5: gpu_milli: \"half\" is not a whole "
                                  "number >= 0"), res.stderr
    assert "kubex-sim ready" not in res.stdout
