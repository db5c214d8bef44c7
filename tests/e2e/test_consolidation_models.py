"""Consolidation that counts GPU memory, models and a moving cluster (issue 22; SPEC CON-2a, CON-5a, CON-7a, CON-12),
end to end on kubex-sim with its KAI-like scheduler and the real `kubex engine`, policies at their default
requeueAfter (1m). The sim's GPU nodes carry GPU Feature Discovery labels (`nvidia.com/gpu.product`,
`nvidia.com/gpu.memory`); its kubelet reports pods Ready 20 s after they run, so that a drain stays under way long
enough for the cluster to move under it.

* (b) a pool of T4 and L4 nodes: a drain never puts a T4 pod on an L4 node, and `status.gpuModels` lists both.
  KAI (and kubex-sim's KAI-like scheduler, SIM-9) does not know GPU models: among nodes with a shared GPU the pod
  fits on and as many free GPUs, it takes the first by name. The L4 pool (`xl`) sorts after the T4s here, so KAI's
  choice is a T4, as the plan's; where KAI would take the L4 the drain is not planned at all (unit test
  PackingModels.ADrainKaiWouldTakeToAnotherGpuModelIsNotPlanned, CON-6);
* (c) a T4 GPU at 0.92 takes no 0.05 pod (0.97 passes 1.00, not the T4's cap 0.96);
* (d) a destination filled by a new pod while a drain waits on a PodDisruptionBudget aborts the drain with
  DrainAborted before the next eviction; no pod is stranded.
"""
import pytest

from conftest import EngineProcess, wait_for
from engine_proc import condition
from test_consolidation import NS, QUEUE, consolidation_taints, deployment, get_policy, place, pods, running_on
from test_gpu_metrics import start_gpu_sim
from test_reactive import API, apply, metric, queue

SIM_CONFIG = """
nodePools:
  - name: mt
    count: 2
    gpusPerNode: 1
    gpuProduct: T4
    cpu: "16"
    memory: 64Gi
    labels: {pool: mixed}
  - name: xl
    count: 1
    gpusPerNode: 1
    gpuProduct: L4
    cpu: "16"
    memory: 64Gi
    labels: {pool: mixed}
  - name: cap
    count: 2
    gpusPerNode: 1
    gpuProduct: T4
    cpu: "16"
    memory: 64Gi
    labels: {pool: cap}
  - name: ab
    count: 2
    gpusPerNode: 1
    gpuProduct: T4
    cpu: "16"
    memory: 64Gi
    labels: {pool: ab}
kubelet:
  readyDelay: 20s
  jobRunTime: 30m
"""


def policy(name, pool):
    """A GpuConsolidationPolicy as users write it: the defaults (threshold 75 %, requeueAfter 1m)."""
    return {"apiVersion": API, "kind": "GpuConsolidationPolicy", "metadata": {"name": name},
            "spec": {"experimental": {"gpuKaiContract": "v1alpha1-2026-07"},
                     "nodeSelector": {"matchLabels": {"pool": pool}}}}


def available(sim, name):
    return condition(get_policy(sim, name), "Available")


def wait_reason(sim, name, reason, timeout=90):
    return wait_for(lambda: (c := available(sim, name)) and c["reason"] == reason and c, timeout=timeout,
                    interval=0.3, what=f"{name} Available reason {reason}")


@pytest.fixture(scope="module")
def env(sim_factory, tmp_path_factory):
    sim, _ = start_gpu_sim(sim_factory, tmp_path_factory.mktemp("models-sim"), SIM_CONFIG)
    sim.kubectl("apply", "-k", str(__import__("conftest").ROOT / "config" / "crd"))
    sim.kubectl("create", "namespace", "kubex")
    sim.kubectl("create", "namespace", NS)
    apply(sim, queue(QUEUE + "-parent"), queue(QUEUE, parent=QUEUE + "-parent"))
    sim.kubectl("cordon", "-l", "pool")
    engine = EngineProcess(sim.kubeconfig, "kubex", leader_elect=False).wait_ready()
    yield sim, engine
    engine.stop()


def ready_on(sim, app):
    return sorted(p["spec"].get("nodeName", "") for p in pods(sim, app)
                  if not p["metadata"].get("deletionTimestamp") and
                  any(c["type"] == "Ready" and c["status"] == "True" for c in p["status"].get("conditions", [])))


def test_a_drain_stays_within_one_gpu_model(env):  # CON-5a, CON-11
    sim, engine = env
    place(sim, "mt-node-0", deployment("m-t4-small", "0.2"))
    place(sim, "mt-node-1", deployment("m-t4-big", "0.75"))
    place(sim, "xl-node-0", deployment("m-l4", "0.1"))
    sim.kubectl("uncordon", "-l", "pool=mixed")
    apply(sim, policy("con-mixed", "mixed"))
    # The emptiest node, the L4 (10 %), has no other L4 to go to; the T4 pod (20 %) joins the other T4 at 0.95,
    # although the L4 has more room.
    wait_for(lambda: get_policy(sim, "con-mixed").get("status", {}).get("lastDrainedNode") == "mt-node-0",
             timeout=120, interval=1, what="mt-node-0 drained")
    assert running_on(sim, "m-t4-small") == ["mt-node-1"]
    assert running_on(sim, "m-l4") == ["xl-node-0"], "the L4 pod never moves to a T4"
    st = get_policy(sim, "con-mixed")["status"]
    assert sorted((m["product"], m["nodes"]) for m in st["gpuModels"]) == [("L4", 1), ("T4", 2)]
    c = wait_reason(sim, "con-mixed", "NoCandidate", timeout=90)
    assert c["message"].endswith("mixed GPU models: L4 (1 nodes), T4 (2 nodes); drains stay within one model"), \
        c["message"]
    assert "pod con/m-l4-" in c["message"] and "does not fit: gpu model" in c["message"], c["message"]
    sim.kubectl("delete", "gpuconsolidationpolicy", "con-mixed")


def test_a_t4_at_its_cap_takes_no_more(env):  # CON-2a, CON-10, CON-12
    sim, engine = env
    place(sim, "cap-node-0", deployment("cap-full", "0.92"))
    place(sim, "cap-node-1", deployment("cap-tiny", "0.05"))
    sim.kubectl("uncordon", "-l", "pool=cap")
    apply(sim, policy("con-cap", "cap"))
    c = wait_reason(sim, "con-cap", "NoCandidate")
    assert c["message"].startswith("pool: 2 nodes, 2 GPUs, 0.97 allocated; best candidate cap-node-1 (5%): pod "
                                   "con/cap-tiny-"), c["message"]
    assert c["message"].endswith("(0.05) does not fit: reserve"), c["message"]
    assert metric(engine, "kubex_consolidation_candidates", policy="con-cap", result="infeasible",
                  blocker="reserve") == 1
    assert not consolidation_taints(sim)
    sim.kubectl("delete", "gpuconsolidationpolicy", "con-cap")


def test_a_destination_filled_during_the_drain_aborts_it(env):  # CON-7a, CON-8
    sim, engine = env
    place(sim, "ab-node-0", deployment("ab-dest", "0.5"))
    # Two replicas on the node to drain, under a PDB that allows one disruption: the first eviction goes, the
    # second is refused (429) until the first replacement is Ready (20 s), so the drain is under way meanwhile.
    apply(sim, {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "ab-pair", "namespace": NS},
                "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": "ab-pair"}}}})
    # The pair and its replacements stay in pool `ab` (other pools of this sim may be schedulable).
    place(sim, "ab-node-1", deployment("ab-pair", "0.2", replicas=2, spec={"nodeSelector": {"pool": "ab"}}), count=2)
    wait_for(lambda: ready_on(sim, "ab-pair") == ["ab-node-1", "ab-node-1"], timeout=60, what="the pair Ready")
    wait_for(lambda: sim.kubectl_json("get", "pdb", "ab-pair", "-n", NS)["status"].get("disruptionsAllowed") == 1,
             timeout=30, what="the PDB allowing one disruption")
    sim.kubectl("uncordon", "-l", "pool=ab")
    apply(sim, policy("con-ab", "ab"))
    try:
        wait_for(lambda: consolidation_taints(sim).get("ab-node-1") == "con-ab", timeout=60, interval=0.2,
                 what="ab-node-1 tainted")
        # The PDB refuses the second eviction (the first one spent its one disruption): the drain waits, it does
        # not stop (CON-7 (3)).
        wait_for(lambda: "refused by a PodDisruptionBudget" in available(sim, "con-ab")["message"], timeout=30,
                 interval=0.3, what="the second eviction refused and retried")
    except AssertionError as e:
        raise AssertionError(f"{e}; policy status: {get_policy(sim, 'con-ab').get('status')}; "
                             f"{[l for l in engine.lines if l.get('policy') == 'con-ab'][:6]}") from None
    # A new pod takes the room the second replica was planned into: ab-node-0 holds 0.5, the first replacement
    # 0.2 and the newcomer 0.3, and the second replica's 0.2 no longer fits under the cap (0.96).
    filler = deployment("ab-filler", "0.3")
    filler["spec"]["template"]["spec"]["nodeSelector"] = {"kubernetes.io/hostname": "ab-node-0"}
    apply(sim, filler)
    c = wait_reason(sim, "con-ab", "DrainAborted", timeout=60)
    assert "drain of node ab-node-1 aborted: pod con/ab-pair-" in c["message"], c["message"]
    assert "does not fit" in c["message"] and c["message"].endswith("; its taint was removed"), c["message"]
    assert "ab-node-1" not in consolidation_taints(sim)
    assert "drainingNode" not in get_policy(sim, "con-ab")["status"]
    aborted = [e for e in sim.kubectl_json("get", "events", "-A")["items"] if e.get("reason") == "DrainAborted"]
    assert {e["involvedObject"]["kind"] for e in aborted} == {"GpuConsolidationPolicy", "Node"}
    assert all(e["type"] == "Warning" for e in aborted)
    # No pod stranded: every pod of the pair and the filler runs (the second replica stayed where it was).
    wait_for(lambda: len(ready_on(sim, "ab-pair")) == 2 and len(ready_on(sim, "ab-filler")) == 1, timeout=60,
             what="every pod Ready")
    assert not [p for p in pods(sim) if p["status"].get("phase") == "Pending"], "a pod was stranded"
    sim.kubectl("delete", "gpuconsolidationpolicy", "con-ab")
