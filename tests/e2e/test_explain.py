"""`kubex explain` end to end (SPEC §13a CLI-1 and its common rules): kubex-sim with its GPU model, a real
Prometheus scraping it, the real `kubex engine` with its webhooks running the seed's starter example (1m windows,
minPodMetricsAge 0s), and the command reading the same cluster. A PodDisruptionBudget keeps the explained pod
where it is, so what explain says about actuation can be checked against what the engine then does."""
import datetime
import json
import subprocess

import pytest

from conftest import BIN, wait_for
from test_actuation import events, start_evicting_engine, whole_gpu_deployment
from test_reactive import API, apply, kai_deployment, owner_annotation, running, wait_recommendation

KUBEX = str(BIN / "kubex")
NS = "explain"
REACTIVE = "ClusterGpuReactivePolicy/kai-gpu-sharing-reactive"
BASELINE = "ClusterProactivePolicy/kai-gpu-sharing-baseline"


def explain(sim, *args):
    return subprocess.run([KUBEX, "explain", *args, "--kubeconfig", sim.kubeconfig], capture_output=True, text=True,
                          timeout=120)


def explain_json(sim, *args):
    res = explain(sim, *args, "-o", "json")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["apiVersion"] == "cli.kubex.ai/v1alpha1" and doc["kind"] == "Explanation"
    return doc


@pytest.fixture(scope="module")
def env(sim_factory, tmp_path_factory):
    sim, prom, engine = start_evicting_engine(sim_factory, tmp_path_factory.mktemp("explain-sim"))
    sim.kubectl("create", "namespace", NS)
    # One replica at 0.25 demanding 45 % SM: the reactive policy recommends min(0.45 × 1.2, 0.25 × 2) = 0.5, and a
    # PDB that allows no disruption keeps the pod at 0.25 (every eviction gets 429).
    apply(sim, {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "keep", "namespace": NS},
                "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "infer"}}}})
    apply(sim, kai_deployment("infer", NS, "0.25", "45", "1024", "g-node-0"))
    wait_recommendation(sim, NS, "0.5", timeout=180)
    yield sim, engine
    engine.stop()
    prom.stop()


def the_pod(sim):
    (pod,) = running(sim, NS)
    return pod["metadata"]["name"]


def test_pod_policies_values_reactive_and_actuation(env):  # CLI-1, SEL-1, SEL-5…SEL-7, ADM-7…ADM-9, REA-6, ACT-1
    sim, engine = env
    pod = the_pod(sim)
    # The engine tries to evict it (every ACT-2 check passed) and the PDB refuses (ACT-5).
    wait_for(lambda: events(sim, NS, "EvictionBlocked"), timeout=90, interval=1, what="the engine's refused eviction")
    doc = explain_json(sim, "pod", f"{NS}/{pod}")
    assert doc["target"] == {"kind": "Pod", "namespace": NS, "name": pod}
    assert doc["managed"] is True and "notManaged" not in doc
    chain = doc["ownerChain"]
    assert chain[0] == f"Pod/{pod}" and chain[1].startswith("ReplicaSet/infer-") and chain[2] == "Deployment/infer"
    assert doc["workload"] == "Deployment/infer"
    # SEL-5 (reactive kinds before proactive by the default precedence) and SEL-6/SEL-7: the reactive policy wins
    # the GPU; the proactive baseline has no recommendation to give.
    policies = {p["policy"]: p for p in doc["policies"]}
    assert [p["policy"] for p in doc["policies"]] == [REACTIVE, BASELINE]
    assert policies[REACTIVE]["valid"] and policies[REACTIVE]["wins"] == ["app requests.gpu"]
    assert policies[BASELINE]["valid"] and policies[BASELINE]["wins"] == []
    assert policies[REACTIVE]["strategy"] == "ClusterAutomationStrategy/kai-gpu-sharing"
    assert (doc["strategy"], doc["mode"]) == ("ClusterAutomationStrategy/kai-gpu-sharing", "kai")
    # The pod is still at 0.25; a pod created now gets the recommendation, read from the owner annotation.
    (gpu,) = [r for r in doc["resources"] if r["resource"] == "requests.gpu"]
    assert gpu["container"] == "app" and gpu["current"] == "0.25"
    assert gpu["desired"] == "0.5" and gpu["applied"] == "0.5" and gpu["constraints"] == []
    assert gpu["source"] == REACTIVE
    assert gpu["annotation"] == "cwgpureactive.rightsizing.kubex.ai/desired-resource-requests"
    assert doc["admission"]["result"] == "MUTATED"
    # Reactive: the stored state, the policy's last cycle, and the samples Prometheus has now.
    r = doc["reactive"]
    assert r["policy"] == REACTIVE
    state = json.loads(owner_annotation(sim, NS, "cwgpureactive.rightsizing.kubex.ai/reactive-state"))
    assert r["state"]["present"] and r["state"]["baseline"] == state["baseline"] == {"app": "0.25"}
    assert r["state"]["driver"] == "compute" and r["state"]["updatedAt"] == state["updatedAt"]
    assert r["lastEvaluationTime"]
    # REA-1/REA-2 (issue 24 item 5): when the next cycle runs (gpuReactiveCheckInterval, 1m, after the last) and
    # from when each pod counts (its start + minPodMetricsAge).
    last = datetime.datetime.fromisoformat(r["lastEvaluationTime"].replace("Z", "+00:00"))
    assert r["nextCycle"] == (last + datetime.timedelta(minutes=1)).strftime("%Y-%m-%dT%H:%M:%SZ"), r
    (el,) = r["eligibility"]
    assert el["pod"] == pod and el["eligible"] is True and el["eligibleAt"], el
    assert r["minPodMetricsAge"], r
    assert r["prometheus"]["queried"] is True, r["prometheus"]
    (sample,) = r["samples"]
    assert sample["pod"] == pod and sample["container"] == "app" and sample["allocation"] == "0.25"
    assert 40 <= sample["computeUpsize"] <= 50, sample  # 45 % of a GPU as the GPU model reports it
    # REA-6 still offers 0.5 for the 0.25 pod; it is what is stored already, so nothing new would be written.
    assert {"rule": "REA-6", "signal": "compute", "direction": "upsize", "total": "0.5", "pod": pod,
            "won": True} in r["rules"]
    assert r["stored"] == {"app": "0.5"} and r["result"] == "UNCHANGED" and r["wouldWrite"] == {}
    # ACT-1…ACT-3: out of sync and nothing in ACT-2 blocks it, as the engine found (the PDB answers only when asked).
    a = doc["actuation"]
    assert a["webhookHealthy"] is True and a["desired"] == "app=0.5 (fraction)"
    (p,) = a["pods"]
    assert p == {"pod": pod, "inSync": False, "live": "app=0.25 (fraction)", "desired": "app=0.5 (fraction)",
                 "evictNow": True, "blockedBy": []}
    # RBK-1: the workload's rollback state as the engine recorded it.
    rb = doc["rollback"]
    assert rb["present"] and rb["phase"] == "Managed" and rb["strategy"] == "ClusterAutomationStrategy/kai-gpu-sharing"
    assert rb["original"] == {"gpu-fraction": "0.25"} and rb["lastApplied"] == {"app": "0.25"}


def test_table_tells_the_same_story(env):  # CLI-1: a table by default
    sim, _ = env
    pod = the_pod(sim)
    res = explain(sim, "pod", f"{NS}/{pod}")
    assert res.returncode == 0 and res.stderr == "", res.stderr
    out = res.stdout
    assert out.startswith(f"Pod {NS}/{pod}\n")
    assert "Deployment/infer (managed)" in out
    assert "Policies (SEL-5 order)" in out and REACTIVE in out and BASELINE in out
    row = next(line for line in out.splitlines() if line.split()[:2] == ["app", "requests.gpu"])
    assert row.split()[2:5] == ["0.25", "0.5", "0.5"], row  # current, desired, applied
    assert "would fire now:   REA-6 upsize on compute -> 0.5" in out
    assert "phase:            Managed" in out


def test_workload_lists_every_pod(env):  # CLI-1 for a workload
    sim, _ = env
    doc = explain_json(sim, "deployment", f"{NS}/infer")
    assert doc["target"] == {"kind": "Deployment", "namespace": NS, "name": "infer"}
    assert doc["ownerChain"] == ["Deployment/infer"] and doc["workload"] == "Deployment/infer"
    (gpu,) = [r for r in doc["resources"] if r["resource"] == "requests.gpu"]
    assert gpu["current"] == "0.25" and gpu["applied"] == "0.5"  # the template's value, and what a new pod gets
    assert [p["pod"] for p in doc["actuation"]["pods"]] == [the_pod(sim)]
    same = explain_json(sim, "deploy", "infer", "-n", NS)  # kubectl's short name and -n
    assert same["target"] == doc["target"]


def test_not_managed_names_the_near_miss(env):  # CLI-1, ADM-3 (7), SEL-3 (issue 34 item 8)
    # A Deployment a user forgot to label: the starter's policies select nvidia.com/gpu.present=true. Runs before any
    # other test of this module adds a policy, so the starter's two are the only ones.
    sim, _ = env
    name = "no-gpu-label"
    apply(sim, {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": NS,
                                                                          "labels": {"app": name}},
                "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
                         "template": {"metadata": {"labels": {"app": name}},
                                      "spec": {"containers": [{"name": "c", "image": "busybox:1.36"}]}}}})
    doc = explain_json(sim, "deployment", f"{NS}/{name}")
    assert doc["managed"] is False and doc["notManaged"]["reason"] == "not-managed", doc
    near = doc["notManaged"]["nearMiss"]
    # Both starter policies miss by the one label; ties go by name: the baseline, and 1 more (the reactive one).
    assert near["policy"] == BASELINE and near["more"] == 1, near
    assert [m["check"] for m in near["misses"]] == ["labelSelector"] and near["labels"] == ["nvidia.com/gpu.present"]
    assert near["invalidReason"] == ""
    res = explain(sim, "deployment", f"{NS}/{name}")
    assert res.returncode == 0, res.stderr
    (line,) = res.stdout.splitlines()  # still one line
    assert line.startswith(f"Deployment {NS}/{name} is not managed by kubex (not-managed): "), line
    assert (f"The closest policy is {BASELINE}: its labelSelector needs nvidia.com/gpu.present=true; the Deployment "
            "has no label nvidia.com/gpu.present (and 1 more policy that misses by as little).") in line, line


def test_pause_is_a_gate_with_its_reason(env):  # CLI-1, ADM-4, ACT-2 pause-active
    sim, _ = env
    ns = "explain-paused"
    sim.kubectl("create", "namespace", ns)
    sim.kubectl("annotate", "namespace", ns, "rightsizing.kubex.ai/pause-until=infinite")
    apply(sim, kai_deployment("infer", ns, "0.25", "45", "1024", "g-node-1"))
    pod = wait_for(lambda: running(sim, ns), timeout=60, what="the paused workload's pod")[0]["metadata"]["name"]
    wait_recommendation(sim, ns, "0.5", timeout=180)  # REA still recommends; nothing applies it
    doc = explain_json(sim, "pod", f"{ns}/{pod}")
    assert doc["managed"] is True
    assert doc["admission"]["result"] == "SKIPPED"
    assert [s["reason"] for s in doc["admission"]["stoppedBy"]] == ["pause-active"]
    assert "pause-until" in doc["admission"]["stoppedBy"][0]["message"]
    (p,) = doc["actuation"]["pods"]
    assert p["inSync"] is False and p["evictNow"] is False
    assert "pause-active" in [b["reason"] for b in p["blockedBy"]]
    # Where the pause comes from (issue 26): the annotation, its value and the object carrying it, in the document
    # and in the table. ADM-4's order: the pod, its owner, the owner's pod template, the namespace.
    by_namespace = f'paused by rightsizing.kubex.ai/pause-until="infinite" on Namespace/{ns} (no end)'
    assert doc["pause"] == {"source": "namespace", "object": f"Namespace/{ns}",
                            "annotation": "rightsizing.kubex.ai/pause-until", "value": "infinite", "meaning": "no end",
                            "checked": True, "message": by_namespace}, doc["pause"]
    assert p["pause"]["object"] == f"Namespace/{ns}"
    table = explain(sim, "pod", f"{ns}/{pod}").stdout
    # Said once (issue 34 item 8: the pause line, "Here: …" after pause-active and the pod's line repeated it).
    assert f"  pause:        {by_namespace}\n" in table and table.count(by_namespace) == 1, table
    # The pod's own annotation comes first.
    until = (datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    sim.kubectl("annotate", "pod", pod, "-n", ns, f"rightsizing.kubex.ai/pause-until={until}")
    doc = explain_json(sim, "pod", f"{ns}/{pod}")
    assert (doc["pause"]["source"], doc["pause"]["object"], doc["pause"]["meaning"]) == (
        "pod", f"Pod/{pod}", f"until {until}"), doc["pause"]
    # A workload's explanation: a pod created now is paused by the namespace; the running pod by its own annotation.
    doc = explain_json(sim, "deployment", f"{ns}/infer")
    assert doc["pause"]["object"] == f"Namespace/{ns}", doc["pause"]
    (p,) = doc["actuation"]["pods"]
    assert p["pause"]["object"] == f"Pod/{pod}", p


def test_clamps_and_gates_name_their_reason(env):  # CLI-1, ADM-7 ceiling, ADM-9 direction gate, SEL-8
    sim, _ = env
    ns = "explain-static"
    sim.kubectl("create", "namespace", ns)
    strategy = {"apiVersion": API, "kind": "ClusterAutomationStrategy", "metadata": {"name": "explain-capped"},
                "spec": {"experimental": {"gpuKaiContract": "v1alpha1-2026-07"},
                         "enablement": {"overrideScheduler": "kai",
                                        "gpu": {"requests": {"upsize": True, "downsize": True, "ceiling": "0.6"}},
                                        "cpu": {"requests": {"downsize": False}}},
                         "podEviction": {"enabled": False}}}
    policy = {"apiVersion": API, "kind": "ClusterStaticPolicy", "metadata": {"name": "explain-static"},
              "spec": {"scope": {"namespaceSelector": {"operator": "In", "values": [ns]},
                                 "workloadTypes": ["Deployment"]},
                       "resources": {"containers": {"*": {"requests": {"gpu": "0.9", "cpu": "50m"}}}},
                       "automationStrategyRef": {"name": "explain-capped"}}}
    apply(sim, strategy, policy)
    apply(sim, whole_gpu_deployment("train", ns, "g-node-2", replicas=1))
    pod = wait_for(lambda: running(sim, ns, "train"), timeout=60, what="the pod running")[0]
    assert pod["metadata"]["annotations"]["gpu-fraction"] == "0.6"  # what admission did
    doc = explain_json(sim, "pod", f"{ns}/{pod['metadata']['name']}")
    rows = {r["resource"]: r for r in doc["resources"]}
    gpu, cpu = rows["requests.gpu"], rows["requests.cpu"]
    assert (gpu["current"], gpu["desired"], gpu["applied"]) == ("0.6", "0.9", "0.6")
    assert [c["reason"] for c in gpu["constraints"]] == ["ceiling-clamped"]
    assert gpu["source"] == "ClusterStaticPolicy/explain-static" and gpu["annotation"] == ""
    assert (cpu["current"], cpu["desired"], cpu["applied"]) == ("100m", "50m", "100m")
    assert [c["reason"] for c in cpu["constraints"]] == ["automation-strategy-disabled"]
    assert doc["policies"][0]["wins"] == ["app requests.gpu", "app requests.cpu"]
    # In sync with what admission gives now, so nothing to evict (and the strategy could not anyway).
    (p,) = doc["actuation"]["pods"]
    assert p["inSync"] is True and p["evictNow"] is False
    assert "reactive" not in doc
    assert any("ceiling-clamped" in n for n in doc["notes"])  # the pod's own automation-constraints


@pytest.mark.parametrize("make,reason", [
    ("bare", "no-workload"),
    ("unlabelled", "not-managed"),
    ("protected", "protected-namespace"),
])
def test_unmanaged_pods_say_why_in_one_line(env, make, reason):  # CLI-1, ADM-3
    sim, _ = env
    ns = {"bare": NS, "unlabelled": NS, "protected": "kube-system"}[make]
    name = f"plain-{make}"
    container = {"name": "c", "image": "busybox:1.36"}
    if make == "unlabelled":
        apply(sim, {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": ns},
                    "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
                             "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [container]}}}})
        pod = wait_for(lambda: [p for p in sim.kubectl_json("get", "pods", "-n", ns, "-l", f"app={name}")["items"]],
                       what="the unlabelled Deployment's pod")[0]["metadata"]["name"]
    else:
        apply(sim, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns},
                    "spec": {"containers": [container]}})
        pod = name
    doc = explain_json(sim, "pod", f"{ns}/{pod}")
    assert doc["managed"] is False and doc["notManaged"]["reason"] == reason, doc
    assert doc["notManaged"]["message"]
    assert "policies" not in doc and "actuation" not in doc
    res = explain(sim, "pod", f"{ns}/{pod}")
    assert res.returncode == 0
    (line,) = res.stdout.splitlines()  # one line
    assert line.startswith(f"Pod {ns}/{pod} is not managed by kubex ({reason}): "), line


def test_not_found_exits_1(env):  # §13a: 1 when the object is not found
    sim, _ = env
    res = explain(sim, "pod", f"{NS}/no-such-pod")
    assert res.returncode == 1 and res.stdout == ""
    assert res.stderr == f"kubex explain: pod {NS}/no-such-pod not found\n"
    res = explain(sim, "statefulset", f"{NS}/nothing")
    assert res.returncode == 1 and res.stderr == f"kubex explain: StatefulSet {NS}/nothing not found\n"
