"""The seed's story on a real control plane (issue 23; SPEC SIM-2, SIM-3, SIM-7, ADM, REA, ACT, RBK, CON): kube-apiserver
+ etcd + kube-controller-manager + kube-scheduler built from tools/, `kubex-sim agent` for the GPU nodes (authenticated
with the least-privilege RBAC of config/sim-agent: a ServiceAccount token), a real Prometheus scraping the agent's GPU
exporter, the helm-installed CRDs (session fixture), and `kubex engine` authenticated as the chart's ServiceAccount with
the chart's RBAC, both webhook passes registered, and the seed's starter example.

Everything runs at the product's default intervals (reactive check 1m, actuation resync, webhook probe), with two
named exceptions: the starter's reactive windows are 1m with minPodMetricsAge 0s (the same edit as tests/e2e, so that
an upsize is due after one window instead of the starter's hours), and the consolidation policy requeues every 30s
instead of its default 1m (SPEC §1.5 `spec.requeueAfter`; one drain per requeue, so the lane waits half as long for
each drain to start).

Nothing here depends on the machine's speed: deadlines only bound a hang, and states that last only a moment (a
drain's taint, "nothing evicted yet") are read from WATCH streams (watch_stream), not caught by polling.
"""
import json
import pathlib
import re
import subprocess

import pytest

import test_admission as adm
from conftest import BIN, ENGINE_NS, GROUP, HERE, ROOT, free_port, run, sa_kubeconfig, wait_for
from test_availability import pod_watch
from test_engine import Env, chart_rbac
from test_gpu_metrics import Prometheus
from test_reactive import API, apply, starter_docs
from watch_stream import EventWatch, NodeTaintWatch

AGENT = "conformance"
AGENT_NS = "kubex-sim"
QUEUE = "kubex-unlimited-gpu-queue"
TAINT = "rightsizing.kubex.ai/consolidating"
POOLS = """
kubelet:
  startDelay: 200ms
  readyDelay: 200ms
gpuSampleInterval: 1s
nodePools:
  - name: story
    count: 4
    gpusPerNode: 2
    gpuProduct: Tesla-T4
    gpuMemoryMiB: 16384
    cpu: "16"
    memory: 64Gi
    labels: {pool: story}
  - name: con
    count: 2
    gpusPerNode: 1
    gpuProduct: Tesla-T4
    gpuMemoryMiB: 16384
    cpu: "16"
    memory: 64Gi
    labels: {pool: con}
"""


class Agent:
    """`kubex-sim agent` as a user runs it: its own process, a kubeconfig, a pool file; SIGTERM stops it."""

    def __init__(self, kubeconfig, pools, workdir, name=AGENT, extra_args=()):
        self.metrics = f"127.0.0.1:{free_port()}"
        self.log_path = pathlib.Path(workdir) / "agent.log"
        self.log = open(self.log_path, "wb")
        config = ["--config", str(pools)] if pools else []
        self.proc = subprocess.Popen(
            [str(BIN / "kubex-sim"), "agent", "--kubeconfig", kubeconfig, *config, "--name", name,
             "--metrics-listen", self.metrics, *extra_args], stdout=subprocess.PIPE, stderr=self.log, text=True)
        self.ready = self.proc.stdout.readline()
        assert self.ready.startswith("kubex-sim agent ready"), f"{self.ready!r}\n{self.output()}"

    def output(self):
        if not self.log.closed:
            self.log.flush()
        return self.log_path.read_text(errors="replace")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=30)
        if not self.log.closed:
            self.log.close()
        return self.proc.returncode


def agent_nodes(cp, pool=None):
    sel = f"sim.kubex.ai/agent={AGENT}" + (f",pool={pool}" if pool else "")
    return cp.kubectl_json("get", "nodes", "-l", sel)["items"]


def pods(cp, ns, app):
    return [p for p in cp.kubectl_json("get", "pods", "-n", ns, "-l", f"app={app}")["items"]
            if not p["metadata"].get("deletionTimestamp")]


def ready(p):
    return any(c["type"] == "Ready" and c["status"] == "True" for c in p["status"].get("conditions", []))


def ready_pods(cp, ns, app):
    return [p for p in pods(cp, ns, app) if ready(p)]


def gpu_form(pod):
    """(gpu-fraction annotation, requests nvidia.com/gpu, limits nvidia.com/gpu, schedulerName) of a pod."""
    c = pod["spec"]["containers"][0].get("resources", {})
    return (pod["metadata"].get("annotations", {}).get("gpu-fraction"), c.get("requests", {}).get("nvidia.com/gpu"),
            c.get("limits", {}).get("nvidia.com/gpu"), pod["spec"].get("schedulerName"))


def events(cp, ns, reason):
    return [e for e in cp.kubectl_json("get", "events", "-n", ns)["items"] if e.get("reason") == reason]


def static_policy(name, ns, gpu):
    return {"apiVersion": API, "kind": "ClusterStaticPolicy", "metadata": {"name": name},
            "spec": {"scope": {"namespaceSelector": {"operator": "In", "values": [ns]}, "workloadTypes": ["Deployment"]},
                     "resources": {"containers": {"*": {"requests": {"gpu": gpu}}}},
                     "automationStrategyRef": {"name": "kai-gpu-sharing"}}}


def deployment(name, ns, replicas=1, gpus=None, fraction=None, queue=None, labels=None, template_annotations=None,
               node=None, pool="story", image="registry.example/app:1", args=None):
    """A Deployment the way the seed's users write them: whole GPUs (`gpus`), an existing KAI fraction, or none."""
    c = {"name": "app", "image": image, "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}
    if gpus is not None:
        c["resources"]["requests"]["nvidia.com/gpu"] = str(gpus)
        c["resources"]["limits"] = {"nvidia.com/gpu": str(gpus)}
    if args:
        c["args"] = args
    meta = {"labels": {"app": name}, "annotations": dict(template_annotations or {})}
    spec = {"containers": [c], "nodeSelector": {"pool": pool}}
    if node:
        spec["nodeSelector"] = {"kubernetes.io/hostname": node}
    if fraction is not None:
        meta["annotations"]["gpu-fraction"] = fraction
        spec["schedulerName"] = "kai-scheduler"
    if queue:
        meta["labels"]["kai.scheduler/queue"] = queue
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": ns, "labels": {"app": name, **(labels or {})}},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": meta, "spec": spec}}}


def queue_obj(name, parent=None):
    spec = {"resources": {r: {"quota": -1, "limit": -1, "overQuotaWeight": 1} for r in ("cpu", "gpu", "memory")}}
    if parent:
        spec["parentQueue"] = parent
    return {"apiVersion": "scheduling.run.ai/v2", "kind": "Queue", "metadata": {"name": name}, "spec": spec}


@pytest.fixture(scope="module")
def story(crds, tmp_path_factory):
    cp = crds
    tmp = tmp_path_factory.mktemp("story")
    # test_engine.py's namespaces hold Pending pods (it ran with no nodes): they would land on the agent's nodes.
    for ns in cp.kubectl("get", "namespaces", "-o", "name").stdout.split():
        if ns.startswith("namespace/conf-"):
            cp.kubectl("delete", ns, "--wait=false")
    # KAI's CRDs as a cluster without KAI gets them (`kubex-sim crds`), and the agent's RBAC as shipped.
    cp.kubectl("apply", "-f", "-", input=run([str(BIN / "kubex-sim"), "crds"]).stdout)
    cp.kubectl("apply", "-k", str(ROOT / "config" / "sim-agent"))
    agent_kubeconfig = sa_kubeconfig(cp, AGENT_NS, "kubex-sim-agent", tmp / "agent.kubeconfig")
    pools = tmp / "pools.yaml"
    pools.write_text(POOLS)
    agent = Agent(agent_kubeconfig, pools, tmp)
    prom = Prometheus(agent.metrics)
    # The engine as the chart installs it: the chart's ServiceAccount and RBAC (seed values), URL webhooks.
    if cp.kubectl("get", "namespace", ENGINE_NS, check=False).returncode != 0:
        cp.kubectl("create", "namespace", ENGINE_NS)
    docs, sa = chart_rbac(cp, tmp)
    cp.kubectl("apply", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}))
    cp.kubectl("apply", "-f", str(HERE / "register-webhooks-rbac.yaml"))
    apply(cp, queue_obj("kubex-parent-queue"), queue_obj(QUEUE, parent="kubex-parent-queue"))
    apply(cp, {"apiVersion": API, "kind": "GlobalConfiguration", "metadata": {"name": "global-config"},
               "spec": {"prometheus": {"url": prom.url, "requestTimeout": "5s"}}})
    apply(cp, *starter_docs())
    env = Env(cp, sa_kubeconfig(cp, ENGINE_NS, sa, tmp / "engine.kubeconfig"), sa)
    env.start()
    wait_for(lambda: any(c["type"] == "PodAdmissionWebhookHealthy" and c["status"] == "True"
                         for c in cp.kubectl_json("get", f"globalconfigurations.{GROUP}", "global-config")
                         .get("status", {}).get("conditions", [])),
             timeout=180, interval=1, what="PodAdmissionWebhookHealthy=True (evictions wait for it, ACT-2)")
    env.agent, env.prom = agent, prom
    yield env
    env.stop()
    prom.stop()
    agent.stop()


def test_agent_nodes_join_the_real_cluster_ready(story):  # SIM-2, SIM-7
    cp = story.cp
    nodes = agent_nodes(cp)
    assert sorted(n["metadata"]["name"] for n in nodes) == \
        ["con-node-0", "con-node-1", "story-node-0", "story-node-1", "story-node-2", "story-node-3"]
    # kube-controller-manager's node lifecycle controller judges them by their Leases: Ready, and the not-ready taint
    # the TaintNodesByCondition admission put on them at registration is lifted.
    wait_for(lambda: all(not n["spec"].get("taints") and
                         any(c["type"] == "Ready" and c["status"] == "True" for c in n["status"]["conditions"])
                         for n in agent_nodes(cp)), timeout=120, what="the agent's nodes Ready and untainted")
    n = agent_nodes(cp, "story")[0]
    assert n["status"]["allocatable"]["nvidia.com/gpu"] == "2"
    assert n["metadata"]["labels"]["nvidia.com/gpu.product"] == "Tesla-T4"
    assert n["metadata"]["labels"]["nvidia.com/gpu.memory"] == "16384"
    lease = cp.kubectl_json("get", "lease", n["metadata"]["name"], "-n", "kube-node-lease")
    assert lease["spec"]["holderIdentity"] == n["metadata"]["name"]
    # SIM-7: the agent runs as config/sim-agent's ServiceAccount, which may not create pods outside the reservations.
    can = cp.kubectl("auth", "can-i", "create", "pods", "-n", "default",
                     "--as", f"system:serviceaccount:{AGENT_NS}:kubex-sim-agent", check=False)
    assert can.stdout.strip() == "no", can.stdout


def test_admission_both_passes_on_deployment_pods_that_run(story):  # ADM-1, ADM-11, ADM-13, E1-E4, VLM-3, SIM-2
    cp = story.cp
    ns, bare = "story-adm", "story-nopolicy"
    cp.kubectl("create", "namespace", ns)
    cp.kubectl("create", "namespace", bare)
    apply(cp, queue_obj("my-queue", parent="kubex-parent-queue"), static_policy("story-adm", ns, "0.7"))
    apply(cp,
          # E1: an existing KAI workload keeps its queue; vLLM's flag follows the new fraction (VLM-3).
          deployment("e1", ns, fraction="0.25", queue="my-queue", image="vllm/vllm-openai:v0.6.3",
                     args=["--model", "m", "--gpu-memory-utilization", "0.95"]),
          deployment("e2", ns, gpus=2),  # E2: whole GPUs become a fraction on kai-scheduler
          deployment("e3", ns),          # E3: no GPU: unchanged
          deployment("e4", bare, gpus=1))  # E4: no policy provides a GPU: unchanged, on the cluster's scheduler
    try:
        e1 = wait_for(lambda: (p := ready_pods(cp, ns, "e1")) and p[0], timeout=90, what="e1 Ready")
        assert gpu_form(e1) == ("0.7", None, None, "kai-scheduler")
        assert e1["metadata"]["labels"]["kai.scheduler/queue"] == "my-queue"
        assert e1["spec"]["containers"][0]["args"] == ["--model", "m", "--gpu-memory-utilization", "0.63"]
        e2 = wait_for(lambda: (p := ready_pods(cp, ns, "e2")) and p[0], timeout=90, what="e2 Ready")
        assert gpu_form(e2) == ("0.7", None, None, "kai-scheduler")
        assert e2["metadata"]["labels"]["kai.scheduler/queue"] == QUEUE
        info = json.loads(e2["metadata"]["annotations"]["automation-webhook.kubex.ai/pod-rightsizing-info"])
        assert info["containers"]["app"]["gpu"] == {"from": "2", "to": "0.7", "source": "ClusterStaticPolicy/story-adm"}
        e3 = wait_for(lambda: (p := ready_pods(cp, ns, "e3")) and p[0], timeout=90, what="e3 Ready")
        assert gpu_form(e3) == (None, None, None, "default-scheduler")
        e4 = wait_for(lambda: (p := ready_pods(cp, bare, "e4")) and p[0], timeout=90, what="e4 Ready")
        assert gpu_form(e4) == (None, "1", "1", "default-scheduler")
        # Who placed them: the agent's KAI-like scheduler for the fractions (a runai-gpu-group, its event), the real
        # kube-scheduler for the whole GPU; all on the agent's nodes.
        for p in (e1, e2):
            assert p["metadata"]["labels"].get("runai-gpu-group")
        nodes = {n["metadata"]["name"] for n in agent_nodes(cp)}
        assert {p["spec"]["nodeName"] for p in (e1, e2, e3, e4)} <= nodes
        sched = {e["involvedObject"]["name"]: e["source"].get("component") or e.get("reportingComponent")
                 for e in events(cp, bare, "Scheduled")}
        assert sched.get(e4["metadata"]["name"]) == "default-scheduler", sched
    finally:
        cp.kubectl("delete", "clusterstaticpolicy", "story-adm", "--wait=false")
        cp.kubectl("delete", "namespace", ns, bare, "--wait=false")


def test_model_owned_vllm_pod_is_admitted_and_runs(story):  # ADM-11, VLM-1..4, SEL-1 (KubeAI Model owner)
    """`kubex-sim crds` installed KubeAI's Model kind, so a KubeAI-style owner is part of the story. No KubeAI
    operator runs here: the pod is created the way it creates them (owned by the Model, container `server`)."""
    cp = story.cp
    ns = "story-model"
    cp.kubectl("create", "namespace", ns)
    policy = static_policy("story-model", ns, "0.3")
    policy["spec"]["scope"]["workloadTypes"] = ["Model"]
    apply(cp, policy, {"apiVersion": "kubeai.org/v1", "kind": "Model", "metadata": {"name": "llama", "namespace": ns},
                       "spec": {"features": ["TextGeneration"], "url": "hf://meta-llama/Llama-3.2-1B-Instruct",
                                "engine": "VLLM", "resourceProfile": "nvidia-gpu-t4:1", "minReplicas": 1}})
    model = cp.kubectl_json("get", "model", "llama", "-n", ns)
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"generateName": "model-llama-", "namespace": ns, "labels": {"model": "llama"},
                        "ownerReferences": [{"apiVersion": "kubeai.org/v1", "kind": "Model", "name": "llama",
                                             "uid": model["metadata"]["uid"], "controller": True}]},
           "spec": {"nodeSelector": {"pool": "story"}, "containers": [{
               "name": "server", "image": "vllm/vllm-openai:v0.6.3",
               "args": ["--model", "meta-llama/Llama-3.2-1B-Instruct", "--gpu-memory-utilization=0.95"],
               "resources": {"requests": {"cpu": "100m", "nvidia.com/gpu": "1"}, "limits": {"nvidia.com/gpu": "1"}}}]}}
    try:
        # The engine has the policy once a server-side dry-run pod of the Model gets the fraction.
        wait_for(lambda: adm.engine_would_mutate(cp, ns, model, "server",
                                                 lambda x: adm.annotations(x).get("gpu-fraction") == "0.3"),
                 timeout=60, what="the engine sizing the Model's pods")
        cp.kubectl("create", "-f", "-", input=json.dumps(pod))
        (p,) = wait_for(lambda: [x for x in cp.kubectl_json("get", "pods", "-n", ns, "-l", "model=llama")["items"]
                                 if ready(x)], timeout=90, what="the Model's pod Ready on the agent's nodes")
        assert gpu_form(p) == ("0.3", None, None, "kai-scheduler")
        # VLM-3: 0.3 x (1 - 10/100) = 0.27; VLM-4: the existing flag is rewritten, not duplicated.
        assert [a for a in p["spec"]["containers"][0]["args"] if a.startswith("--gpu-memory-utilization")] == \
            ["--gpu-memory-utilization=0.27"]
    finally:
        cp.kubectl("delete", "clusterstaticpolicy", "story-model", "--wait=false")
        cp.kubectl("delete", "namespace", ns, "--wait=false")


def test_reactive_upsize_evicts_one_pod_at_a_time_past_a_pdb(story):  # REA-4, ACT-1, ACT-3, ACT-4, ACT-5, OBS-2
    cp, engine = story.cp, story.engine
    ns = "story-rea"
    cp.kubectl("create", "namespace", ns)
    # Three replicas at 0.25 that use 45 % SM: the starter's reactive policy raises them (X1). A PDB the disruption
    # controller keeps current allows no disruption, so kubex's own eviction is refused with 429 first.
    apply(cp, {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "svc", "namespace": ns},
               "spec": {"minAvailable": 3, "selector": {"matchLabels": {"app": "svc"}}}},
          deployment("svc", ns, replicas=3, fraction="0.25", queue=QUEUE, labels={"nvidia.com/gpu.present": "true"},
                     template_annotations={"sim.kubex.ai/gpu-sm-percent": "45",
                                           "sim.kubex.ai/gpu-memory-mib": "1024"}))
    wait_for(lambda: len(ready_pods(cp, ns, "svc")) == 3, timeout=120, what="three pods Ready")
    watch = pod_watch(cp, ns, 3)  # the app is named svc, as pod_watch watches (a WATCH stream, from now on)
    from kubernetes import client
    evicted = EventWatch(client.CoreV1Api(cp.client()), ns, "PolicyEvaluationEvictResize")  # from now on too
    try:
        def recommended():
            v = cp.kubectl_json("get", "deployment", "svc", "-n", ns)["metadata"].get("annotations", {}).get(
                "cwgpureactive.rightsizing.kubex.ai/desired-resource-requests")
            return v and json.loads(v)["app"]["gpu"]
        rec = wait_for(recommended, timeout=300, interval=2, what="the reactive upsize at the default 1m interval")
        assert float(rec) > 0.25, rec
        wait_for(lambda: events(cp, ns, "EvictionBlocked"), timeout=180, interval=2,
                 what="kubex's eviction refused by the PDB (EvictionBlocked)")
        # Nothing evicted yet, on the WATCH streams from before the recommendation to the refusal (every event, so a
        # pod evicted and replaced in between shows), and in the pods now.
        watch.stream.catch_up(), evicted.stream.catch_up()
        assert not watch.count.gone and watch.count.max == 0, \
            f"nothing evicted yet: {sorted(watch.count.gone)} {watch.count.worst}"
        assert evicted.seen == [], f"nothing evicted yet: {evicted.seen}"
        assert sorted(gpu_form(p)[0] for p in ready_pods(cp, ns, "svc")) == ["0.25"] * 3, "nothing evicted yet"
        cp.kubectl("patch", "pdb", "svc", "-n", ns, "--type=merge", "-p", '{"spec":{"minAvailable":2}}')
        # The demand keeps being measured while pods are replaced, so the value may move on (0.5, then 0.54): done
        # when every replica is Ready at the recommendation of the moment.
        wait_for(lambda: (r := recommended()) and sorted(gpu_form(p)[0] for p in ready_pods(cp, ns, "svc")) == [r] * 3,
                 timeout=420, interval=2, what="all three replicas Ready at the current recommendation")
    finally:
        watch.stop(), evicted.stop()
    count = watch.result()  # the stream saw every event (no 410 gap)
    evicted.result()
    assert count.events > 6, "the watch saw the replacements"
    assert count.max <= 1, f"{count.max} replicas unavailable at once: {count.worst}"
    evicted = [l.get("pod") for l in engine.find_all("evicted pod") if l.get("namespace") == ns]
    assert len(evicted) >= 3 and len(set(evicted)) == len(evicted), evicted  # kubex's own evictions, once per pod
    assert any(e.get("reason") == "PolicyEvaluationEvictResize" for e in
               cp.kubectl_json("get", "events", "-n", ns)["items"])


def test_rollback_on_policy_deletion_restores_whole_gpus(story):  # RBK-1, RBK-2
    cp = story.cp
    ns = "story-rbk"
    cp.kubectl("create", "namespace", ns)
    apply(cp, static_policy("story-rbk", ns, "0.5"))
    wait_for(lambda: (c := next((c for c in cp.kubectl_json("get", "clusterstaticpolicy", "story-rbk")
                                 .get("status", {}).get("conditions", []) if c["type"] == "Ready"), None))
             and c["status"] == "True", timeout=90, what="the static policy Ready")
    apply(cp, deployment("train", ns, replicas=2, gpus=1))
    wait_for(lambda: (r := ready_pods(cp, ns, "train")) and len(r) == 2 and
             all(gpu_form(p) == ("0.5", None, None, "kai-scheduler") for p in r), timeout=90,
             what="two pods admitted at 0.5 and running")
    wait_for(lambda: "rightsizing.kubex.ai/rollback-state" in
             cp.kubectl_json("get", "deployment", "train", "-n", ns)["metadata"].get("annotations", {}),
             timeout=60, what="rollback-state recorded")
    cp.kubectl("delete", "clusterstaticpolicy", "story-rbk")
    wait_for(lambda: (r := ready_pods(cp, ns, "train")) and len(r) == 2 and
             all(gpu_form(p) == (None, "1", "1", "default-scheduler") for p in r), timeout=300, interval=2,
             what="both pods back at nvidia.com/gpu: 1, placed by kube-scheduler on the agent's nodes")
    def kubex_owner_annotations():
        a = cp.kubectl_json("get", "deployment", "train", "-n", ns)["metadata"].get("annotations", {})
        return [k for k in a if any(w in k for w in ("desired-resource", "reactive-state", "rollback-state"))]
    wait_for(lambda: not kubex_owner_annotations(), timeout=120, what="kubex's owner annotations gone")
    assert events(cp, ns, "RollbackCompleted")
    cp.kubectl("delete", "namespace", ns, "--wait=false")


def con_place(cp, ns, node, obj, count=1):
    """Creates `obj` while `node` is the only schedulable node of pool `con`."""
    cp.kubectl("cordon", "-l", "pool=con")
    cp.kubectl("uncordon", node)
    try:
        apply(cp, obj)
        app = obj["metadata"]["name"]
        wait_for(lambda: [p["spec"].get("nodeName") for p in ready_pods(cp, ns, app)] == [node] * count,
                 timeout=90, interval=0.5, what=f"{app} running on {node}")
    finally:
        cp.kubectl("cordon", node)


def consolidation_taints(cp):
    return {n["metadata"]["name"]: t.get("value", "") for n in agent_nodes(cp, "con")
            for t in n["spec"].get("taints", []) if t["key"] == TAINT}


def con_policy(name):
    # requeueAfter 30s instead of the default 1m: one drain per requeue (module docstring).
    return {"apiVersion": API, "kind": "GpuConsolidationPolicy", "metadata": {"name": name},
            "spec": {"experimental": {"gpuKaiContract": "v1alpha1-2026-07"}, "nodeSelector": {"matchLabels": {"pool": "con"}},
                     "utilizationThresholdPercent": 75, "requeueAfter": "30s"}}


def test_consolidation_drains_a_node_and_its_finalizer_cleans_up(story):  # CON-3..CON-9, CLI-3, CLI-1
    cp, env = story.cp, story
    ns = "story-con"
    cp.kubectl("create", "namespace", ns)
    keep = deployment("keep", ns, fraction="0.5", queue=QUEUE, pool="con")
    move = deployment("move", ns, fraction="0.25", queue=QUEUE, pool="con")
    con_place(cp, ns, "con-node-0", keep)
    con_place(cp, ns, "con-node-1", move)
    moved_from = pods(cp, ns, "move")[0]["metadata"]["name"]
    cp.kubectl("uncordon", "-l", "pool=con")
    # The plan, as the chart's ServiceAccount: con-node-1 (25 %) drains, its pod fits on con-node-0's GPU.
    plan = run([str(BIN / "kubex"), "plan", "consolidation", "-f", "-", "-o", "json", "--kubeconfig", env.kubeconfig],
               input=json.dumps(con_policy("story-con")), check=False)
    assert plan.returncode == 0, plan.stderr
    assert "con-node-1" in plan.stdout, plan.stdout
    # Every consolidation taint from now on, on a WATCH stream of the nodes (a drain's taint lasts only until the
    # drain's next reconcile: polling could miss it).
    from kubernetes import client
    taints = NodeTaintWatch(client.CoreV1Api(cp.client()), TAINT)
    try:
        apply(cp, con_policy("story-con"))
        try:
            # Evicted by kubex, recreated by kube-controller-manager's ReplicaSet controller, placed by the agent's KAI.
            wait_for(lambda: (r := ready_pods(cp, ns, "move")) and r[0]["metadata"]["name"] != moved_from and
                     r[0]["spec"]["nodeName"] == "con-node-0", timeout=180, interval=0.5,
                     what="the moved pod running on con-node-0")
            wait_for(lambda: [e for e in cp.kubectl_json("get", "events", "-A")["items"]
                              if e.get("reason") == "DrainCompleted" and e["involvedObject"]["name"] == "con-node-1"],
                     timeout=180, interval=1, what="DrainCompleted on con-node-1")
            wait_for(lambda: not consolidation_taints(cp), timeout=120, interval=1, what="the taint removed after the drain")
            taints.stream.catch_up()
            assert taints.count.order == [("con-node-1", "story-con")], \
                f"con-node-1 (and no other node) tainted by the drain: {taints.count.order}"
            assert [e for e in cp.kubectl_json("get", "events", "-A")["items"]
                    if e.get("reason") == "DrainCompleted" and e["involvedObject"]["name"] == "con-node-1"]
            (mine,) = ready_pods(cp, ns, "move")
            res = run([str(BIN / "kubex"), "explain", "pod", f"{ns}/{mine['metadata']['name']}", "-o", "json",
                       "--kubeconfig", env.kubeconfig], check=False)
            assert res.returncode == 0, res.stderr
            doc = json.loads(res.stdout)
            assert doc["workload"] == "Deployment/move" and doc["ownerChain"][-1] == "Deployment/move", doc
        finally:
            cp.kubectl("delete", "gpuconsolidationpolicy", "story-con", "--ignore-not-found")
        # Mid-drain deletion: a PDB lets one of two pods go, and the other's replacement can never be placed, so the
        # drain of con-node-1 never ends; deleting the policy removes its taint (the finalizer) and the policy goes.
        apply(cp, {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "stuck", "namespace": ns},
                   "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "stuck"}}}})
        stuck = deployment("stuck", ns, replicas=2, fraction="0.1", queue=QUEUE, pool="con")
        stuck["kind"] = "ReplicaSet"
        con_place(cp, ns, "con-node-1", stuck, count=2)
        cp.kubectl("patch", "replicaset", "stuck", "-n", ns, "--type=merge", "-p",
                   json.dumps({"spec": {"template": {"spec": {"nodeSelector": {"nowhere": "true"}}}}}))
        wait_for(lambda: cp.kubectl_json("get", "pdb", "stuck", "-n", ns)["status"].get("disruptionsAllowed") == 1,
                 timeout=90, what="the PDB allowing one disruption")
        cp.kubectl("uncordon", "-l", "pool=con")
        apply(cp, con_policy("story-con-2"))
        # The drain never ends (CON-8's 10 minutes are far off), so its taint stays until the policy goes.
        wait_for(lambda: consolidation_taints(cp) == {"con-node-1": "story-con-2"}, timeout=120, interval=0.5,
                 what="the second drain started")
        assert "rightsizing.kubex.ai/consolidation-cleanup" in \
            cp.kubectl_json("get", "gpuconsolidationpolicy", "story-con-2")["metadata"]["finalizers"]
        cp.kubectl("delete", "gpuconsolidationpolicy", "story-con-2", "--wait=false")
        wait_for(lambda: not consolidation_taints(cp), timeout=90, what="the taint removed by the finalizer")
        wait_for(lambda: cp.kubectl("get", "gpuconsolidationpolicy", "story-con-2", check=False).returncode != 0,
                 timeout=90, what="the policy gone")
    finally:
        taints.stop()
    count = taints.result()  # every taint from the first drain on (no 410 gap)
    assert count.order == [("con-node-1", "story-con"), ("con-node-1", "story-con-2")], count.order
    assert count.max <= 1, f"two drains at once: {count.worst}"
    cp.kubectl("delete", "namespace", ns, "--wait=false")


def test_no_forbidden_request_and_no_reconciler_error(story):  # HLM-2, SIM-7
    # Last in this module: every path above (evictions, taints, /finalizers, rollback, status) ran.
    lines = story.forbidden()
    assert lines == [], "the engine hit RBAC denials:\n" + "\n".join(lines[:20])
    errors = [l for e in story.stopped + [story.engine] for l in e.raw if "Reconciler error" in l]
    assert errors == [], "\n".join(errors[:20])
    agent_log = story.agent.output()
    denied = [l for l in agent_log.splitlines() if re.search(r'"status":403|forbidden', l)]
    assert denied == [], "the agent hit RBAC denials with config/sim-agent:\n" + "\n".join(denied[:20])


def test_a_stopped_agent_leaves_its_nodes_to_the_node_lifecycle_controller(story):  # SIM-2
    """After the rest of the story: SIGTERM ends the agent's heartbeats, and kube-controller-manager marks its nodes
    NotReady (Unknown) and taints them unreachable, as it would a real node that went away."""
    cp = story.cp
    assert story.agent.stop() == 0
    wait_for(lambda: all(any(c["type"] == "Ready" and c["status"] == "Unknown" for c in n["status"]["conditions"]) and
                         any(t["key"] == "node.kubernetes.io/unreachable" for t in n["spec"].get("taints", []))
                         for n in agent_nodes(cp)), timeout=120, interval=2,
             what="the agent's nodes NotReady and tainted unreachable after their Leases expired")
    assert sorted(n["metadata"]["name"] for n in agent_nodes(cp))[0] == "con-node-0", "the nodes stay (no --delete-nodes-on-exit)"
    for n in agent_nodes(cp):
        cp.kubectl("delete", "node", n["metadata"]["name"], "--wait=false")
