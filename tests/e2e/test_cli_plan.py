"""`kubex plan consolidation` end to end (issue 17; SPEC §13a CLI-2 and its common rules, CON-1…CON-6a, CON-10,
CON-11, VAL-1): kubex-sim with the consolidation pools of test_consolidation.py and pods put on chosen nodes by its
KAI-like scheduler; no engine runs, the command only reads.

Pool `a` (4 nodes × 2 T4 GPUs): a-node-0 holds 0.7 and 0.45 (one GPU each, 57.5 %), a-node-1 holds 0.25 (12.5 %),
a-node-2 holds 0.5 (25 %), a-node-3 is empty. The plan drains a-node-1 onto a-node-0's fuller GPU (CON-6, KAI's order),
then a-node-2 onto its other GPU, and stops with no node below 75 %. Pool `d` (2 nodes × 1 GPU, 16 CPUs): two 0.25
pods whose CPU requests do not fit each other's node (CON-6a `cpu`)."""
import json
import subprocess

import pytest

from conftest import BIN
from test_consolidation import NS, apply, consolidation_taints, deployment, place, policy, pods, \
    start_consolidation_sim

KUBEX = str(BIN / "kubex")


@pytest.fixture(scope="module")
def cluster(sim_factory, tmp_path_factory):
    sim = start_consolidation_sim(sim_factory, tmp_path_factory.mktemp("plan"))
    place(sim, "a-node-0", deployment("big", "0.7"))
    place(sim, "a-node-0", deployment("mid", "0.45"))
    place(sim, "a-node-1", deployment("small", "0.25"))
    place(sim, "a-node-2", deployment("half", "0.5"))
    place(sim, "d-node-0", deployment("light", "0.25", cpu="4"))
    place(sim, "d-node-1", deployment("heavy", "0.25", cpu="14"))
    apply(sim, policy("plan-a", {"matchLabels": {"pool": "a"}}))
    sim.kubectl("uncordon", "-l", "pool in (a,d)")  # place() leaves them cordoned: no destination then (CON-5)
    return sim


def kubex(sim, *args, input=None):
    return subprocess.run([KUBEX, "plan", "consolidation", "--kubeconfig", sim.kubeconfig, *args], input=input,
                          capture_output=True, text=True, timeout=60)


def pod_name(sim, app):
    (p,) = pods(sim, app)
    return f"{NS}/{p['metadata']['name']}"


def plan_json(sim, *args, input=None):
    res = kubex(sim, *args, "-o", "json", input=input)
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["apiVersion"] == "cli.kubex.ai/v1alpha1" and doc["kind"] == "ConsolidationPlan"
    return doc


def test_json_pool_candidates_sequence_and_bound(cluster):  # CLI-2, CON-2…CON-6, CON-11
    doc = plan_json(cluster, "--policy", "plan-a")
    (p,) = doc["policies"]
    assert p["name"] == "plan-a" and p["source"] == "cluster" and p["valid"] and p["thresholdPercent"] == 75
    pool = p["pool"]
    assert (pool["nodes"], pool["gpuCapacity"], pool["gpuAllocated"], pool["estimatedReclaimableGPUs"]) == \
        (4, 8, "1.90", 6)
    usage = {n["name"]: n for n in pool["nodeUsage"]}
    assert sorted(usage["a-node-0"]["gpus"]) == ["0.45", "0.7"]  # CON-3: one GPU each
    assert usage["a-node-0"]["utilizationPercent"] == "57.5%"
    # CON-2a: the sim's T4s carry nvidia.com/gpu.memory 16384: a 3 % / 256 MiB reserve leaves a cap of 0.96
    assert usage["a-node-0"]["gpuCap"] == "0.96" and usage["a-node-0"]["gpuProduct"] == "Tesla-T4"
    assert usage["a-node-1"]["utilizationPercent"] == "12.5%" and usage["a-node-2"]["utilizationPercent"] == "25%"
    assert usage["a-node-3"]["destination"] is False and usage["a-node-3"]["notDestination"] == "empty"  # CON-5
    assert usage["a-node-0"]["destination"] is True
    cands = p["candidates"]
    assert [c["node"] for c in cands if c["candidate"]] == ["a-node-1", "a-node-2", "a-node-0"]  # CON-4 order
    first = cands[0]
    assert first["feasible"] and first["reason"] == ""
    gpu_07 = usage["a-node-0"]["gpus"].index("0.7")
    assert first["placements"] == [{"pod": pod_name(cluster, "small"), "size": "0.25", "to": "a-node-0",
                                    "gpus": [gpu_07]}]  # CON-6: no free GPU, fullest group: 0.7, 0.01 below its cap
    assert {c["node"]: c["reason"] for c in cands if not c["candidate"]} == {"a-node-3": "no GPU pods"}
    assert p["outcome"] == "WouldDrain" and p["message"] == "would drain a-node-1 (12.5%)"
    assert [s["node"] for s in p["drainSequence"]] == ["a-node-1", "a-node-2"]
    assert p["drainSequence"][1]["placements"][0]["to"] == "a-node-0"
    assert p["afterSequence"]["message"] == \
        "pool: 4 nodes, 8 GPUs, 1.90 allocated; no node below 75% with movable GPU pods"
    assert p["reclaimable"] == {"gpuCapacity": 8, "lowerBoundGPUs": 2, "gpusFreed": 4, "gpusInUseAfter": 2,
                                "estimatedReclaimableGPUs": 6}


def test_table_shows_the_same_plan(cluster):  # CLI-2: a table by default, the same content
    res = kubex(cluster, "--policy", "plan-a")
    assert res.returncode == 0, res.stderr
    out = res.stdout
    assert out.startswith("GpuConsolidationPolicy plan-a (cluster, threshold 75%)\n"), out
    assert "Pool: 4 nodes, 8 GPUs, 1.90 allocated, estimatedReclaimableGPUs 6" in out
    lines = out.splitlines()
    node0 = next(line.split() for line in lines if line.strip().startswith("a-node-0") and "yes" in line)
    assert node0[:4] == ["a-node-0", "2", "1.15", "57.5%"], node0
    assert node0[-3:-1] == ["0.96", "Tesla-T4"], node0  # CAP and MODEL (CON-2a, CON-5a)
    assert any(line.split()[:3] == ["1", "a-node-1", "12.5%"] and
               f"feasible: {pod_name(cluster, 'small')} (0.25) -> a-node-0" in line for line in lines), out
    assert any(line.split()[:2] == ["-", "a-node-3"] and "not a candidate: no GPU pods" in line for line in lines)
    assert any(line.strip().startswith("1. a-node-1 (12.5%):") for line in lines), out
    assert any(line.strip().startswith("2. a-node-2 (25%):") for line in lines), out
    assert "then: NoCandidate: pool: 4 nodes, 8 GPUs, 1.90 allocated; no node below 75% with movable GPU pods" in out
    assert "2 in use after the sequence (4 freed); lower bound ⌈Σ allocations⌉ = 2" in out


def test_file_plans_a_policy_not_applied_and_names_the_constraint(cluster, tmp_path):  # CLI-2 -f, CON-6a, CON-10
    f = tmp_path / "d.yaml"
    f.write_text(json.dumps(policy("plan-d", {"matchLabels": {"pool": "d"}})))
    doc = plan_json(cluster, "-f", str(f))
    (p,) = doc["policies"]
    assert p["source"] == f"{f}:1" and p["outcome"] == "NoCandidate"
    assert p["message"] == ("pool: 2 nodes, 2 GPUs, 0.50 allocated; best candidate d-node-0 (25%): "
                            f"pod {pod_name(cluster, 'light')} (0.25) does not fit: cpu; "
                            "2 below 75%: 2 cpu")  # CON-10: both nodes, each held by CPU
    assert p["drainSequence"] == []
    assert cluster.kubectl("get", "gpuconsolidationpolicy", "plan-d", check=False).returncode != 0  # not applied
    # Every policy of the cluster when neither --policy nor -f is given.
    assert [q["name"] for q in plan_json(cluster)["policies"]] == ["plan-a"]


def test_empty_pool(cluster, tmp_path):  # CON-1
    f = tmp_path / "none.yaml"
    f.write_text(json.dumps(policy("plan-none", {"matchLabels": {"pool": "nowhere"}})))
    (p,) = plan_json(cluster, "-f", str(f))["policies"]
    assert p["outcome"] == "NoMatchingNodeSelector"
    assert "NoMatchingNodeSelector" in kubex(cluster, "-f", str(f)).stdout


def test_invalid_file_prints_the_validator_errors(cluster, tmp_path):  # VAL-1, CLI exit 1
    bad = policy("plan-bad", {"matchLabels": {"pool": "a"}})
    bad["spec"]["utilizationThresholdPercent"] = 0
    f = tmp_path / "bad.yaml"
    f.write_text(json.dumps(bad))
    res = kubex(cluster, "-f", str(f))
    assert res.returncode == 1
    assert f"{f}:1: GpuConsolidationPolicy/plan-bad: spec.utilizationThresholdPercent: must be between 1 and 100" \
        in res.stderr.splitlines()
    empty = tmp_path / "empty.yaml"
    empty.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    res = kubex(cluster, "-f", str(empty))
    assert res.returncode == 1 and "holds no GpuConsolidationPolicy" in res.stderr


def test_policy_not_found(cluster):  # CLI exit 1
    res = kubex(cluster, "--policy", "nope", "-o", "json")
    assert res.returncode == 1 and res.stdout == ""
    assert res.stderr.strip() == 'kubex plan consolidation: GpuConsolidationPolicy "nope" not found'


@pytest.mark.parametrize("args", [["--policy", "plan-a", "-f", "x.yaml"], ["-o", "yaml"], ["--bogus"]])
def test_bad_usage(cluster, args):  # CLI exit 2
    res = kubex(cluster, *args)
    assert res.returncode == 2, res
    assert res.stdout == ""
    res = subprocess.run([KUBEX, "plan"], capture_output=True, text=True, timeout=30)
    assert res.returncode == 2


def test_read_only(cluster):  # CLI-2 "without tainting or evicting"
    def placement():
        return sorted((p["metadata"]["name"], p["spec"].get("nodeName"), p["metadata"].get("deletionTimestamp"))
                      for p in pods(cluster))
    before = placement()
    assert kubex(cluster).returncode == 0
    assert kubex(cluster, "-o", "json").returncode == 0
    assert consolidation_taints(cluster) == {}
    assert placement() == before
    assert not cluster.kubectl_json("get", "gpuconsolidationpolicy", "plan-a").get("status", {}).get("drainingNode")
