"""The real KAI-Scheduler in the loop (issue 35; SPEC SIM-9, ADM-1, ADM-5, ADM-11, ADM-13, VLM-3, RBK-1, ACT-3, CON-6).

A control plane of its own, started the way users and the acceptance checks start it: `scripts/control-plane.sh up
DIR --kai` (kube-apiserver, etcd, kube-controller-manager, kube-scheduler, then KAI's scheduler, binder, podgrouper,
queue and podgroup controllers and admission webhook, built from the KAI-Scheduler source snapshot, GPU sharing on).
`kubex-sim agent --kai-scheduler external` plays the NVIDIA nodes: GPU capacity, GFD labels, and the reservation pods
KAI's binder creates (it reports each one's GPU UUID as KAI's resourcereservation binary does). A real Prometheus
scrapes the agent's GPU exporter; `kubex engine` runs as the chart's ServiceAccount with the chart's RBAC and both
webhook passes; the guide's starter example is applied as written.

Every outcome is read on KAI's own objects as well as on pods (tests/conformance/kai_objects.py): the PodGroup its
podgrouper made, the BindRequest its scheduler wrote, the reservation pod of a fraction, Queue status.

The snapshot is KAI between v0.13 and v0.14 (docs/gpu-sharing.md "Which KAI each test lane proves"): it has no
NvFractions mode and no `gpu-fraction.limit`, so this lane runs kubex's default mode (NonMemoryEnforced, no limit).
"""
import json

import pytest

import kai_objects as kai
from conftest import (BIN, ENGINE_NS, GROUP, HERE, ROOT, EngineProcess, control_plane_bin, down_plane, install_crds,
                      run, sa_kubeconfig, up_plane, wait_for)
from test_engine import Env, chart_rbac
from test_gpu_metrics import Prometheus
from test_reactive import API, apply
from test_seed_story import Agent, gpu_form, queue_obj, ready, ready_pods, static_policy

AGENT = "kai-agent"
STRATEGY_QUEUE = "kubex-unlimited-gpu-queue"
# The demo's layout (three T4 nodes with two GPUs each, the guide's consolidation selector) for the story, and a
# second pool for the admission table, cordoned before the story starts.
ADM_POOL = """
  - name: adm
    count: 3
    gpusPerNode: 2
    gpuProduct: Tesla-T4
    gpuMemoryMiB: 16384
    cpu: "16"
    memory: 64Gi
    labels: {pool: adm}
"""
POOLS = """
nodePools:
  - name: t4
    count: 3
    gpusPerNode: 2
    gpuProduct: Tesla-T4
    gpuMemoryMiB: 16384
    cpu: "16"
    memory: 64Gi
    labels: {cloud.google.com/gke-accelerator: nvidia-tesla-t4}""" + ADM_POOL + """  - name: cpu
    count: 1
    gpusPerNode: 0
    cpu: "8"
    memory: 32Gi
"""


def model_crd():
    """KubeAI's Model CRD (from `kubex-sim crds`); KAI's own Queue CRD is the one KAI installed."""
    docs = [d for d in run([str(BIN / "kubex-sim"), "crds"]).stdout.split("\n---") if "kind: Model" in d]
    assert docs, "kubex-sim crds prints KubeAI's Model CRD"
    return docs[0]


def start_engine(env, early=True):
    """The engine as in test_engine.Env, with the early pass on (the guide's additionalWebhook.enabled: true) or off
    (helm renders no early configuration and passes no --early-webhook-enabled)."""
    args = ["--webhook-bind-address", f"127.0.0.1:{env.port}", "--self-signed-webhook", "--register-webhooks",
            "--kai-queues", "--log-level", "debug"] + (["--early-webhook-enabled"] if early else [])
    env.engine = EngineProcess(env.kubeconfig, ENGINE_NS, extra_args=args)
    env.engine.wait_ready(timeout=60)
    # Its own self-signed certificate is in the webhook configurations (their caBundle) once it says so: a pod
    # created before that would meet the previous engine's CA, and kubex's fail-open webhooks would let it through.
    wait_for(lambda: env.engine.find_all("registered webhook configurations"), timeout=120,
             what="the engine's webhook configurations registered")


@pytest.fixture(scope="module")
def real_kai(tmp_path_factory):
    control_plane_bin()
    plane = up_plane("kubex-kai-", "--kai")
    tmp = tmp_path_factory.mktemp("kai")
    stack = []
    try:
        install_crds(plane)
        plane.kubectl("apply", "-f", "-", input=model_crd())
        plane.kubectl("apply", "-k", str(ROOT / "config" / "sim-agent"))
        pools = tmp / "pools.yaml"
        pools.write_text(POOLS)
        agent = Agent(sa_kubeconfig(plane, "kubex-sim", "kubex-sim-agent", tmp / "agent.kubeconfig"), pools, tmp,
                      name=AGENT, extra_args=["--kai-scheduler", "external"])
        stack.append(agent.stop)
        assert "kai-scheduler=external" in agent.ready, agent.ready
        prom = Prometheus(agent.metrics)
        stack.append(prom.stop)
        plane.kubectl("create", "namespace", ENGINE_NS)
        docs, sa = chart_rbac(plane, tmp)
        plane.kubectl("apply", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}))
        plane.kubectl("apply", "-f", str(HERE / "register-webhooks-rbac.yaml"))
        apply(plane, {"apiVersion": API, "kind": "GlobalConfiguration", "metadata": {"name": "global-config"},
                      "spec": {"prometheus": {"url": prom.url, "requestTimeout": "5s"}}})
        plane.kubectl("apply", "-f", str(ROOT / "examples" / "kai-gpu-sharing.yaml"))
        env = Env(plane, sa_kubeconfig(plane, ENGINE_NS, sa, tmp / "engine.kubeconfig"), sa)
        start_engine(env)
        stack.append(env.stop)
        wait_for(lambda: all(not n["spec"].get("taints") and ready(n) for n in agent_nodes(plane)), timeout=120,
                 what="the agent's nodes Ready and untainted")
        wait_for(lambda: any(c["type"] == "PodAdmissionWebhookHealthy" and c["status"] == "True"
                             for c in plane.kubectl_json("get", f"globalconfigurations.{GROUP}", "global-config")
                             .get("status", {}).get("conditions", [])),
                 timeout=180, interval=1, what="PodAdmissionWebhookHealthy=True")
        env.agent, env.prom, env.tmp = agent, prom, tmp
        yield env
    finally:
        for stop in reversed(stack):
            stop()
        down_plane(plane)


def agent_nodes(cp, pool=None):
    sel = f"sim.kubex.ai/agent={AGENT}" + (f",sim.kubex.ai/node-pool={pool}" if pool else "")
    return cp.kubectl_json("get", "nodes", "-l", sel)["items"]


def test_kai_components_run_as_their_chart_identities(real_kai):  # SIM-9
    """Each KAI component authenticates as the ServiceAccount user KAI's chart binds (least privilege, no admin)."""
    cp = real_kai.cp
    for name, sa in (("kai-binder", "binder"), ("kai-scheduler", "scheduler"), ("kai-podgrouper", "pod-grouper"),
                     ("kai-admission", "admission")):
        kc = str(cp.workdir / f"{name}.kubeconfig")
        who = json.loads(cp.kubectl("auth", "whoami", "-o", "json", kubeconfig=kc).stdout)
        assert who["status"]["userInfo"]["username"] == f"system:serviceaccount:kai-scheduler:{sa}", who
        assert cp.kubectl("auth", "can-i", "delete", "nodes", kubeconfig=kc, check=False).stdout.strip() == "no"
    # What the chart grants is what they get: the binder binds pods; none of them is a cluster admin.
    assert cp.kubectl("auth", "can-i", "create", "pods/binding", "-A",
                      kubeconfig=str(cp.workdir / "kai-binder.kubeconfig"), check=False).stdout.strip() == "yes"
    assert cp.kubectl("auth", "can-i", "*", "*", kubeconfig=str(cp.workdir / "kai-scheduler.kubeconfig"),
                      check=False).stdout.strip() == "no"
    # GPU sharing on, as the seed's global.gpuSharing: true, and KAI's webhook registered beside kubex's two passes.
    names = sorted(w["metadata"]["name"] for w in cp.kubectl_json("get", "mutatingwebhookconfigurations")["items"])
    assert names == ["000-kubex-mutating-webhook-configuration", "mutating-kai-admission",
                     "zzz-kubex-mutating-webhook-configuration"], names
    # The agent's nodes as KAI reads them: GPU capacity and GFD labels.
    n = agent_nodes(cp, "t4")[0]
    assert n["status"]["allocatable"]["nvidia.com/gpu"] == "2"
    labels = n["metadata"]["labels"]
    assert (labels["nvidia.com/gpu.present"], labels["nvidia.com/gpu.count"], labels["nvidia.com/gpu.product"],
            labels["nvidia.com/gpu.memory"]) == ("true", "2", "Tesla-T4", "16384")


# Item 5: every shape of pod SPEC §4-5a lets kubex produce, admitted through the engine's two passes and KAI's own
# webhook, then grouped and bound by KAI (or, where kubex leaves the pod to KAI's judgement, refused by KAI as
# docs/gpu-sharing.md says). (row, SPEC rule, template kwargs for test_seed_story.deployment, static GPU value or
# None for no policy, what kubex writes: (gpu-fraction, requests gpu, limits gpu, schedulerName), queue, placed by)
ADM_NS = "kai-adm"
ADM_ROWS = [
    ("fraction", "ADM-11 d<1, ADM-13 queue set", dict(gpus=1), "0.5",
     ("0.5", None, None, "kai-scheduler"), STRATEGY_QUEUE, "kai"),
    # The starter's strategy caps GPUs at its ceiling "1" (ADM-7): 1.5 becomes one whole GPU on kai-scheduler.
    ("whole-ceiling", "ADM-7 clamp to the ceiling, ADM-11 d>=1", dict(gpus=2), "1.5",
     (None, "1", "1", "kai-scheduler"), STRATEGY_QUEUE, "kai"),
    ("queue-kept", "ADM-11 existing fraction, ADM-13 queue kept", dict(fraction="0.25", queue="kai-team"), "0.3",
     ("0.3", None, None, "kai-scheduler"), "kai-team", "kai"),
    ("vllm", "VLM-3 --gpu-memory-utilization follows the fraction",
     dict(gpus=1, image="vllm/vllm-openai:v0.6.3", args=["--model", "m", "--gpu-memory-utilization", "0.9"]), "0.4",
     ("0.4", None, None, "kai-scheduler"), STRATEGY_QUEUE, "kai"),
    ("user-scheduler", "ADM-11 whole GPU without a recommendation: scheduler, queue, GPU untouched", dict(gpus=1),
     None, (None, "1", "1", "default-scheduler"), None, "default-scheduler"),
    ("rollback-shape", "RBK-1 a template's own whole GPU on KAI (what a rollback restores)",
     dict(gpus=1, queue="kai-team", scheduler="kai-scheduler"), None,
     (None, "1", "1", "kai-scheduler"), "kai-team", "kai"),
]


def adm_deployment(name, kwargs):
    from test_seed_story import deployment
    kw = dict(kwargs)
    scheduler = kw.pop("scheduler", None)
    d = deployment(name, ADM_NS, **kw)
    d["spec"]["template"]["spec"]["nodeSelector"] = {"sim.kubex.ai/node-pool": "adm"}
    if scheduler:
        d["spec"]["template"]["spec"]["schedulerName"] = scheduler
    return d


def adm_policy(name, gpu):
    p = static_policy(f"kai-adm-{name}", ADM_NS, gpu)
    p["spec"]["scope"]["labelSelector"] = {"matchLabels": {"app": name}}
    return p


def wait_policy_ready(cp, name):
    wait_for(lambda: any(c["type"] == "Ready" and c["status"] == "True" for c in
                         cp.kubectl_json("get", "clusterstaticpolicy", name).get("status", {}).get("conditions", [])),
             timeout=90, what=f"{name} Ready")


def test_every_admission_output_is_grouped_and_bound_by_real_kai(real_kai):  # ADM-11, ADM-13, VLM-3, RBK-1, SIM-9
    cp = real_kai.cp
    cp.kubectl("create", "namespace", ADM_NS)
    apply(cp, queue_obj("kai-team-parent"), queue_obj("kai-team", parent="kai-team-parent"))
    policies = [adm_policy(name, gpu) for name, _, _, gpu, *_ in ADM_ROWS if gpu]
    apply(cp, *policies)
    for p in policies:
        wait_policy_ready(cp, p["metadata"]["name"])
    apply(cp, *[adm_deployment(name, kw) for name, _, kw, *_ in ADM_ROWS])
    failures = []
    try:
        for name, rule, _, _, form, queue, placed_by in ADM_ROWS:
            try:
                (pod,) = wait_for(lambda: (r := ready_pods(cp, ADM_NS, name)) and r, timeout=180, interval=1,
                                  what=f"row {name} ({rule}): its pod Running and Ready")
            except AssertionError as e:
                failures.append(f"{name} ({rule}): {e}")
                continue
            if gpu_form(pod) != form:
                failures.append(f"{name} ({rule}): kubex wrote {gpu_form(pod)}, expected {form}")
            if pod["metadata"].get("labels", {}).get("kai.scheduler/queue") != queue:
                failures.append(f"{name} ({rule}): queue {pod['metadata'].get('labels', {}).get('kai.scheduler/queue')}")
            if placed_by == "kai":
                why = kai.bound_by_kai(cp, pod)
                if why:
                    failures.append(f"{name} ({rule}): {why}")
            elif kai.pod_group(cp, pod):
                failures.append(f"{name} ({rule}): a PodGroup for a pod KAI does not schedule")
        # VLM-3: 0.4 x (1 - 10/100) = 0.36 (the starter's vLLM headroom).
        (v,) = ready_pods(cp, ADM_NS, "vllm")
        assert v["spec"]["containers"][0]["args"][-1] == "0.36", v["spec"]["containers"][0]["args"]
        assert not failures, "\n".join(failures)
        # The queue kubex kept is the one KAI accounts the pod to (its queue controller's status).
        wait_for(lambda: kai.queue_status(cp, "kai-team").get("allocated", {}).get("nvidia.com/gpu") not in (None, 0, "0"),
                 timeout=60, what="Queue kai-team's status shows its pods' GPUs allocated")
    finally:
        cp.kubectl("delete", "clusterstaticpolicy", *[p["metadata"]["name"] for p in policies], "--wait=false")
        cp.kubectl("delete", "namespace", ADM_NS, "--wait=false")


# Where SPEC says kubex leaves the pod alone (ADM-5: unsupported-gpu-request), KAI's own admission and scheduler are
# the judges; docs/gpu-sharing.md says what each does. The pods are a Deployment's, in the scope of a policy that
# would give them 0.3: kubex leaves their GPU request as written. (row, rule, template annotations, container
# limits, KAI's refusal at admission or None where KAI accepts and binds the pod)
JUDGED_NS = "kai-judged"
JUDGED = [
    ("num-devices", "ADM-5 gpu-fraction-num-devices",
     {"gpu-fraction": "0.5", "gpu-fraction-num-devices": "2"}, {}, None),
    ("with-whole-gpu", "ADM-5 gpu-fraction together with nvidia.com/gpu", {"gpu-fraction": "0.5"},
     {"nvidia.com/gpu": "1"}, "cannot have both GPU fraction request and whole GPU resource request/limit"),
    ("out-of-range", "ADM-5 gpu-fraction outside (0,1)", {"gpu-fraction": "1.5"}, {},
     "gpu-fraction annotation value must be a positive number smaller than 1.0"),
]


def judged_deployment(name, annotations, limits):
    from test_seed_story import deployment
    d = deployment(name, JUDGED_NS, queue="kai-team", template_annotations=annotations)
    t = d["spec"]["template"]["spec"]
    t["schedulerName"] = "kai-scheduler"
    t["nodeSelector"] = {"sim.kubex.ai/node-pool": "adm"}
    if limits:
        t["containers"][0]["resources"]["limits"] = dict(limits)
        t["containers"][0]["resources"]["requests"].update(limits)
    return d


def test_kai_judges_the_gpu_requests_kubex_leaves_alone(real_kai):  # ADM-5, SIM-9
    cp = real_kai.cp
    cp.kubectl("create", "namespace", JUDGED_NS)
    apply(cp, queue_obj("kai-team-parent"), queue_obj("kai-team", parent="kai-team-parent"),
          static_policy("kai-judged", JUDGED_NS, "0.3"))
    wait_policy_ready(cp, "kai-judged")
    try:
        apply(cp, *[judged_deployment(name, ann, lim) for name, _, ann, lim, _ in JUDGED])
        for name, rule, ann, _, refusal in JUDGED:
            if refusal is None:
                # KAI supports it: grouped and bound, with kubex's hands off (the fraction is still the user's).
                pod = wait_for(lambda: (p := pods_of(cp, JUDGED_NS, name)) and p[0]["spec"].get("nodeName") and p[0],
                               timeout=180, what=f"{name} ({rule}) bound by KAI")
                assert pod["metadata"]["annotations"]["gpu-fraction"] == ann["gpu-fraction"], rule
                assert kai.pod_group(cp, pod), f"{name}: no PodGroup"
                continue
            # KAI's validating webhook refuses the pod: the ReplicaSet cannot create it, and says why.
            def failed_create():
                return [e for e in cp.kubectl_json("get", "events", "-n", JUDGED_NS)["items"]
                        if e.get("reason") == "FailedCreate" and e["involvedObject"]["name"].startswith(name + "-")]
            (ev, *_) = wait_for(failed_create, timeout=90, interval=1, what=f"{name} ({rule}) refused by KAI")
            assert 'admission webhook "admission.kai-scheduler.svc" denied the request' in ev["message"], ev["message"]
            assert refusal in ev["message"], ev["message"]
            assert pods_of(cp, JUDGED_NS, name) == [], f"{name}: no pod exists"
    finally:
        cp.kubectl("delete", "clusterstaticpolicy", "kai-judged", "--wait=false")
        cp.kubectl("delete", "namespace", JUDGED_NS, "--wait=false")


# Item 6: where kubex-sim's KAI and the real KAI differ, the real one is right. The same placement and refusal
# scenarios run on the real KAI (this module's plane, the `adm` pool) and on `kubex-sim serve`'s KAI-like scheduler
# (a pool of the same name and shape); both must give the real KAI's answer. docs/kubex-sim-and-real-kai.md keeps the
# table of what still differs, and why.
DIFF_NS = "kai-diff"
DIFF_POOL = "nodePools:" + ADM_POOL


def diff_pod(name, node=None, fraction=None, whole=None, queue="kai-team"):
    c = {"name": "app", "image": "registry.example/app:1", "resources": {"requests": {"cpu": "100m"}}}
    meta = {"name": name, "namespace": DIFF_NS, "labels": {"app": name}, "annotations": {}}
    if queue:
        meta["labels"]["kai.scheduler/queue"] = queue
    if fraction:
        meta["annotations"]["gpu-fraction"] = fraction
    if whole:
        c["resources"]["requests"]["nvidia.com/gpu"] = str(whole)
        c["resources"]["limits"] = {"nvidia.com/gpu": str(whole)}
    sel = {"kubernetes.io/hostname": node} if node else {"sim.kubex.ai/node-pool": "adm"}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": {"schedulerName": "kai-scheduler", "nodeSelector": sel, "containers": [c],
                     "terminationGracePeriodSeconds": 0}}


# (scenario, the real KAI's rule, pods placed first (pinned), the probe pod, where the real KAI puts it). adm-node-2
# is cordoned, so the probe chooses between adm-node-0 and adm-node-1.
PLACEMENTS = [
    ("fraction: a node with a fitting shared GPU, then fewer free GPUs",
     "gpusharingorder: +1000 for any fitting group; nodeplacement binpack; then node name",
     [diff_pod("a-half", "adm-node-0", fraction="0.5"), diff_pod("b-quarter", "adm-node-1", fraction="0.25"),
      diff_pod("b-whole", "adm-node-1", whole=1)],
     diff_pod("probe", fraction="0.5"), "adm-node-1"),
    ("whole GPU: fewer free GPUs, then node name",
     "nodeplacement binpack on free whole GPUs; equal scores by node name",
     [diff_pod("a-quarter", "adm-node-0", fraction="0.25"), diff_pod("b-whole", "adm-node-1", whole=1)],
     diff_pod("probe", whole=1), "adm-node-0"),
    ("no queue label: KAI's default queue",
     "podgrouper: the top owner's label, the pod's, else default-queue",
     [], diff_pod("probe", fraction="0.5", queue=None), "adm-node-0"),
]
REFUSALS = [
    ("gpu-fraction with nvidia.com/gpu", diff_pod("refused", fraction="0.5", whole=1),
     'admission webhook "admission.kai-scheduler.svc" denied the request: '
     "cannot have both GPU fraction request and whole GPU resource request/limit"),
    ("gpu-fraction outside (0, 1)", diff_pod("refused", fraction="1.5"),
     'admission webhook "admission.kai-scheduler.svc" denied the request: '
     "gpu-fraction annotation value must be a positive number smaller than 1.0"),
]


def placement_on(cluster, setup, probe):
    """Creates `setup` (each must be placed where it is pinned), then `probe`; returns the probe's node. Cleans up."""
    try:
        for pod in setup:
            cluster.kubectl("create", "-f", "-", input=json.dumps(pod))
            name = pod["metadata"]["name"]
            wait_for(lambda: cluster.kubectl_json("get", "pod", name, "-n", DIFF_NS)["spec"].get("nodeName"),
                     timeout=120, what=f"{name} bound")
        cluster.kubectl("create", "-f", "-", input=json.dumps(probe))
        return wait_for(lambda: cluster.kubectl_json("get", "pod", "probe", "-n", DIFF_NS)["spec"].get("nodeName"),
                        timeout=120, what="the probe pod bound")
    finally:
        cluster.kubectl("delete", "pods", "--all", "-n", DIFF_NS, "--grace-period=0", "--wait=false")
        wait_for(lambda: not cluster.kubectl_json("get", "pods", "-n", DIFF_NS)["items"], timeout=120,
                 what="the scenario's pods gone")
        # KAI's binder (and the sim's) deletes the reservation pods of emptied GPU groups.
        wait_for(lambda: not [p for p in cluster.kubectl_json("get", "pods", "-n", kai.RESERVATION_NS)["items"]
                              if p["spec"].get("nodeName", "").startswith("adm-")], timeout=120,
                 what="the scenario's reservation pods gone")


def refusal_on(cluster, pod):
    res = cluster.kubectl("create", "-f", "-", input=json.dumps(pod), check=False)
    if res.returncode == 0:
        cluster.kubectl("delete", "pod", pod["metadata"]["name"], "-n", DIFF_NS, "--grace-period=0")
    return res.returncode, res.stderr.strip()


@pytest.fixture
def sim_serve(tmp_path):
    from conftest import Sim
    (tmp_path / "pools.yaml").write_text(DIFF_POOL)
    sim = Sim(tmp_path, extra_args=["--config", str(tmp_path / "pools.yaml")]).start()
    yield sim
    sim.stop()


def test_kubex_sims_kai_places_and_refuses_as_the_real_kai(real_kai, sim_serve):  # SIM-9
    real = real_kai.cp
    # The earlier tests' pods (namespaces deleted without waiting) have left the adm nodes.
    wait_for(lambda: not [p for p in real.kubectl_json("get", "pods", "-A")["items"]
                          if p["spec"].get("nodeName", "").startswith("adm-")], timeout=180,
             what="no pod left on the adm nodes")
    for cluster in (real, sim_serve):
        cluster.kubectl("create", "namespace", DIFF_NS)
        apply(cluster, queue_obj("kai-team-parent"), queue_obj("kai-team", parent="kai-team-parent"))
        cluster.kubectl("cordon", "adm-node-2")
    # kubex-sim serve has KAI's default queues as KAI's chart creates them.
    apply(sim_serve, queue_obj("default-parent-queue"), queue_obj("default-queue", parent="default-parent-queue"))
    real.kubectl("uncordon", "adm-node-0", "adm-node-1")
    differences = []
    try:
        for scenario, rule, setup, probe, expected in PLACEMENTS:
            got = {name: placement_on(c, setup, probe) for name, c in (("real KAI", real), ("kubex-sim", sim_serve))}
            if got["real KAI"] != expected:
                differences.append(f"{scenario}: the real KAI chose {got['real KAI']}, the test expected {expected} "
                                   f"({rule}): fix the test's reading of KAI")
            if got["kubex-sim"] != got["real KAI"]:
                differences.append(f"{scenario}: kubex-sim chose {got['kubex-sim']}, the real KAI {got['real KAI']}")
        for scenario, pod, message in REFUSALS:
            got = {name: refusal_on(c, pod) for name, c in (("real KAI", real), ("kubex-sim", sim_serve))}
            for name, (rc, err) in got.items():
                if rc == 0 or message not in err:
                    differences.append(f"{scenario}: {name} answered rc={rc} {err!r}, the real KAI's answer is "
                                       f"{message!r}")
        assert not differences, "\n".join(differences)
    finally:
        real.kubectl("delete", "namespace", DIFF_NS, "--wait=false")



# Item 4: why the guide requires webhook.podMutation.additionalWebhook.enabled. Mutating webhooks run in configuration
# name order: 000-kubex (early pass) < mutating-kai-admission < zzz-kubex (late pass); KAI's webhook only acts on a
# pod that already names kai-scheduler (its matchCondition) and carries gpu-fraction, and adds the
# runai/shared-gpu-configmap annotation its binder needs. kubex's passes never ask to be reinvoked; KAI's asks
# IfNeeded, which Kubernetes grants only to a webhook that was called in the first round.
ORDER_NS = "kai-order"


def order_workload(name):
    from test_seed_story import deployment
    d = deployment(name, ORDER_NS, gpus=1)
    d["spec"]["template"]["spec"]["nodeSelector"] = {"sim.kubex.ai/node-pool": "adm"}
    return d


def order_pod(cp, name):
    return wait_for(lambda: (p := pods_of(cp, ORDER_NS, name)) and p[0], timeout=60, what=f"{name}'s pod created")


def test_kais_admission_between_kubex_passes_is_what_lets_kai_bind(real_kai):  # ADM-1, VAL-2, SIM-9
    cp, env = real_kai.cp, real_kai
    cp.kubectl("create", "namespace", ORDER_NS)
    policy = static_policy("kai-order", ORDER_NS, "0.5")
    apply(cp, policy)
    wait_policy_ready(cp, "kai-order")
    try:
        # On (the guide's setting): the early pass converts the whole GPU to a fraction on kai-scheduler, KAI's
        # admission then prepares it for its binder, the late pass finds nothing left to do; KAI binds it.
        apply(cp, order_workload("with-early"))
        pod = wait_for(lambda: (r := ready_pods(cp, ORDER_NS, "with-early")) and r[0], timeout=180,
                       what="with-early Running on a KAI-bound GPU")
        assert gpu_form(pod) == ("0.5", None, None, "kai-scheduler")
        assert pod["metadata"]["annotations"].get("runai/shared-gpu-configmap"), \
            "KAI's webhook ran after the early pass (it only acts on a kai-scheduler fraction pod)"
        info = json.loads(pod["metadata"]["annotations"]["automation-webhook.kubex.ai/pod-rightsizing-info"])
        assert info["containers"]["app"]["gpu"]["from"] == "1", info  # the late pass kept the early pass's `from`
        # KAI may still be listing the group's reservation pod when the pod is Ready: wait for that state.
        wait_for(lambda: kai.bound_by_kai(cp, pod) == "", timeout=60, interval=2, what="with-early reserved and bound by KAI")

        # Off: helm renders no early configuration and the engine runs without --early-webhook-enabled. The late
        # pass alone makes the same pod, after KAI's webhook had its turn: KAI's webhook never sees it, and KAI's
        # binder refuses to bind it. A user sees the pod Pending with KAI's BindingError event, and kubex's
        # warning on the strategy (VAL-2).
        # What `helm upgrade --set webhook.podMutation.additionalWebhook.enabled=false` does: the early configuration
        # is no longer rendered (helm deletes it) and the engine runs without --early-webhook-enabled.
        env.stop()
        cp.kubectl("delete", "mutatingwebhookconfiguration", "000-kubex-mutating-webhook-configuration")
        start_engine(env, early=False)
        apply(cp, order_workload("late-only"))
        pod = order_pod(cp, "late-only")
        assert gpu_form(pod) == ("0.5", None, None, "kai-scheduler"), gpu_form(pod)
        assert "runai/shared-gpu-configmap" not in pod["metadata"].get("annotations", {}), \
            "KAI's webhook did not run on the late pass's output (it was not called in the first round)"

        def binding_error():
            return [e for e in cp.kubectl_json("get", "events", "-n", ORDER_NS)["items"]
                    if e["involvedObject"]["name"] == pod["metadata"]["name"] and e.get("reason") == "BindingError"]
        (err, *_) = wait_for(binding_error, timeout=120, interval=1, what="KAI's binder refusing the pod")
        assert "no desired configmap name found" in err["message"], err["message"]
        now = cp.kubectl_json("get", "pod", pod["metadata"]["name"], "-n", ORDER_NS)
        assert not now["spec"].get("nodeName") or not ready(now), "the pod does not run"
        # VAL-2: the engine warns about a KAI strategy while its early pass is off (a dry-run create of the starter's
        # strategy under another name shows the warning a user's kubectl apply prints).
        import yaml
        strategy = next(d for d in yaml.safe_load_all((ROOT / "examples" / "kai-gpu-sharing.yaml").read_text())
                        if d and d["kind"] == "ClusterAutomationStrategy")
        strategy["metadata"] = {"name": "kai-order-check"}
        res = cp.kubectl("create", "--dry-run=server", "-f", "-", input=json.dumps(strategy))
        assert "Warning" in res.stderr and "early" in res.stderr, res.stderr
    finally:
        if env.engine is None or "--early-webhook-enabled" not in " ".join(map(str, env.engine.args)):
            env.stop()
            start_engine(env, early=True)
        cp.kubectl("delete", "clusterstaticpolicy", "kai-order", "--wait=false")
        cp.kubectl("delete", "namespace", ORDER_NS, "--wait=false")
        wait_for(lambda: cp.kubectl("get", "mutatingwebhookconfiguration", "000-kubex-mutating-webhook-configuration",
                                    check=False).returncode == 0, timeout=60, what="the early configuration back")


# Item 3: the seed's story as one chain with the real KAI. The workloads are `make demo`'s (examples/demo/), which are
# the guide's: a whole-GPU training Deployment, a two-replica vLLM Deployment, an existing KAI notebook with its own
# queue, a KubeAI Model. Engine intervals are the product's defaults; the policies are the demo's and the guide's as
# written (examples/demo/policies.yaml: 1-minute reactive windows; examples/gpu-consolidation.yaml: requeueAfter 1m).
DEMO = ROOT / "examples" / "demo"
STORY_APPS = {("ml-training", "trainer"), ("ml-inference", "chat-vllm"), ("research", "notebook")}


class ModelOperator:
    """KubeAI's part, as far as the story needs it (no KubeAI operator runs here): keeps one pod of Model
    ml-inference/llama, created the way KubeAI creates them (owned by the Model, container `server`, its
    resourceProfile's one GPU), so that a pod kubex evicts is recreated, as with KubeAI."""

    def __init__(self, cp):
        import threading
        self.cp, self.created, self.stop_ = cp, [], threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def pod(self):
        model = self.cp.kubectl_json("get", "model", "llama", "-n", "ml-inference")
        return {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"generateName": "model-llama-", "namespace": "ml-inference",
                             "labels": {"model": "llama", "app": "llama"},
                             "annotations": {"sim.kubex.ai/gpu-sm-percent": "20", "sim.kubex.ai/gpu-memory-mib": "3000"},
                             "ownerReferences": [{"apiVersion": "kubeai.org/v1", "kind": "Model", "name": "llama",
                                                  "uid": model["metadata"]["uid"], "controller": True}]},
                "spec": {"containers": [{
                    "name": "server", "image": "vllm/vllm-openai:v0.6.3",
                    "args": ["--model", "meta-llama/Llama-3.2-1B-Instruct", "--max-model-len=4096"],
                    "resources": {"requests": {"cpu": "100m", "nvidia.com/gpu": "1"},
                                  "limits": {"nvidia.com/gpu": "1"}}}]}}

    def _run(self):
        while not self.stop_.wait(1):
            res = self.cp.kubectl("get", "pods", "-n", "ml-inference", "-l", "model=llama", "-o", "json", check=False)
            if res.returncode != 0:
                continue
            live = [p for p in json.loads(res.stdout)["items"] if not p["metadata"].get("deletionTimestamp")]
            if not live:
                res = self.cp.kubectl("create", "-f", "-", "-o", "name", input=json.dumps(self.pod()), check=False)
                if res.returncode == 0:
                    self.created.append(res.stdout.strip())

    def stop(self):
        self.stop_.set()
        self.thread.join(timeout=10)


def story_pods(cp):
    out = []
    for ns in ("ml-training", "ml-inference", "research"):
        out += [p for p in cp.kubectl_json("get", "pods", "-n", ns)["items"] if not p["metadata"].get("deletionTimestamp")]
    return out


def unplaced(cp):
    return [f"{p['metadata']['namespace']}/{p['metadata']['name']}" for p in story_pods(cp)
            if not p["spec"].get("nodeName") or not ready(p)]


def not_by_kai(cp, pods):
    return [why for p in pods if p["spec"].get("schedulerName") == "kai-scheduler" and (why := kai.bound_by_kai(cp, p))]


def template_form(cp, ns, app):
    """(gpu-fraction, requests gpu, limits gpu, schedulerName) as the workload's template says."""
    d = cp.kubectl_json("get", "deployment", app, "-n", ns)
    t = d["spec"]["template"]
    for c in t["spec"]["containers"]:  # the API server's defaulting: an extended resource's request is its limit
        r = c.setdefault("resources", {})
        if "nvidia.com/gpu" in r.get("limits", {}):
            r.setdefault("requests", {}).setdefault("nvidia.com/gpu", r["limits"]["nvidia.com/gpu"])
    return gpu_form({"metadata": t["metadata"], "spec": {**t["spec"], "schedulerName":
                                                          t["spec"].get("schedulerName", "default-scheduler")}})


def kubex_plan(env, policy):
    res = run([str(BIN / "kubex"), "plan", "consolidation", "-f", "-", "-o", "json", "--kubeconfig", env.kubeconfig],
              input=json.dumps(policy), check=False)
    assert res.returncode == 0, res.stderr
    (plan,) = json.loads(res.stdout)["policies"]
    return plan


def kai_own_podgroup_race(line):
    """A reconcile of KAI's own PodGroup that its controller retries: two of KAI's components updating it at once
    ("the object has been modified"), or the PodGroup already gone with the pod it was for ("not found": a pod
    deleted, e.g. evicted, while the podgrouper was updating its group). The object is KAI's, not kubex's."""
    return "podgroups.scheduling.run.ai" in line and ("the object has been modified" in line or "not found" in line)


def story_errors(cp, namespaces):
    """KAI component log lines at error level that name one of the story's namespaces (a kubex write KAI could not
    carry out would show there: a refused bind, an invalid request), less KAI's own retried PodGroup races."""
    out = {}
    for c, lines in kai.component_errors(cp).items():
        mine = [l for l in lines if any(ns in l for ns in namespaces) and not kai_own_podgroup_race(l)]
        if mine:
            out[c] = mine
    return out


def test_the_guides_story_as_one_chain_with_real_kai(real_kai):  # SIM-9, ADM-13, REA-4, ACT-1, ACT-3, CON-6, RBK-1
    import yaml
    from kubernetes import client
    from test_availability import PodAvailabilityWatch
    from watch_stream import NodeTaintWatch

    cp, env = real_kai.cp, real_kai
    core = client.CoreV1Api(cp.client())
    cp.kubectl("cordon", "-l", "sim.kubex.ai/node-pool=adm")  # the admission table's pool: the story uses the T4s
    policies = [d for d in yaml.safe_load_all((DEMO / "policies.yaml").read_text()) if d]
    workloads = [d for d in yaml.safe_load_all((DEMO / "workloads.yaml").read_text()) if d]
    model_op = None
    taints = None
    try:
        # Act 1: admitted by kubex (both passes, KAI's webhook between them), grouped, reserved and bound by KAI.
        apply(cp, *policies)
        for p in policies:
            if p["kind"] == "ClusterStaticPolicy":
                wait_policy_ready(cp, p["metadata"]["name"])
        apply(cp, *workloads)
        model_op = ModelOperator(cp)
        wait_for(lambda: len([p for p in story_pods(cp) if ready(p)]) == 5 and not unplaced(cp), timeout=300,
                 interval=2, what="trainer, two chat-vllm, notebook and the Model's pod Running and Ready")
        pods = story_pods(cp)
        forms = sorted((p["metadata"]["namespace"], gpu_form(p)) for p in pods)
        assert forms == sorted([("ml-training", ("0.5", None, None, "kai-scheduler")),
                                ("ml-inference", ("0.4", None, None, "kai-scheduler")),
                                ("ml-inference", ("0.4", None, None, "kai-scheduler")),
                                ("ml-inference", ("0.3", None, None, "kai-scheduler")),
                                ("research", ("0.25", None, None, "kai-scheduler"))]), forms
        # KAI may still be writing a group's reservation pod when the workload pod reports Ready: wait for that state
        # (a CI run under load saw the Model's pod Ready a moment before its reservation pod was listed).
        wait_for(lambda: not_by_kai(cp, story_pods(cp)) == [], timeout=60, interval=2,
                 what="every story pod reserved and bound by KAI")
        nb = next(p for p in pods if p["metadata"]["namespace"] == "research")
        assert nb["metadata"]["labels"]["kai.scheduler/queue"] == "research-notebooks"  # ADM-13: the team's queue kept
        assert kai.pod_group(cp, nb)["spec"]["queue"] == "research-notebooks"
        wait_for(lambda: kai.queue_status(cp, STRATEGY_QUEUE).get("allocated", {}).get("nvidia.com/gpu")
                 not in (None, "0"), timeout=90, what=f"Queue {STRATEGY_QUEUE} accounting the fractions it holds")

        # Act 2: chat-vllm's demand steps up (its pattern); the reactive policy raises its fraction and kubex evicts
        # one pod at a time (ACT-3, on a WATCH stream); KAI re-places each replacement.
        first = {p["metadata"]["name"] for p in pods if p["metadata"]["labels"].get("app") == "chat-vllm"}
        watch = PodAvailabilityWatch(core, "ml-inference", "app=chat-vllm", 2)
        try:
            def recommended():
                v = cp.kubectl_json("get", "deployment", "chat-vllm", "-n", "ml-inference")["metadata"].get(
                    "annotations", {}).get("cwgpureactive.rightsizing.kubex.ai/desired-resource-requests")
                return v and json.loads(v)["vllm"]["gpu"]
            wait_for(lambda: (r := recommended()) and float(r) > 0.4, timeout=420, interval=2,
                     what="the reactive upsize of chat-vllm at the engine's default 1m check")
            wait_for(lambda: (r := recommended()) and sorted(gpu_form(p)[0] for p in ready_pods(cp, "ml-inference",
                                                                                             "chat-vllm")) == [r] * 2
                     and not unplaced(cp), timeout=600, interval=2,
                     what="both chat-vllm replicas replaced, Ready at the current recommendation, placed by KAI")
        finally:
            watch.stop()
        count = watch.result()
        assert count.max <= 1, f"{count.max} chat-vllm replicas unavailable at once: {count.worst}"
        replaced = ready_pods(cp, "ml-inference", "chat-vllm")
        assert not first & {p["metadata"]["name"] for p in replaced}, "both replicas are new pods"
        assert not_by_kai(cp, replaced) == [], not_by_kai(cp, replaced)

        # Act 3: traffic drops, chat-vllm scales in; the guide's consolidation policy, as written, drains a node whose
        # pods all fit elsewhere, and KAI places every moved pod on the node kubex planned (CON-6).
        cp.kubectl("scale", "deployment", "chat-vllm", "-n", "ml-inference", "--replicas", "1")
        # Until the removed replica is gone (not only terminating), its GPU is still held and its node not drainable.
        wait_for(lambda: len(cp.kubectl_json("get", "pods", "-n", "ml-inference", "-l", "app=chat-vllm")["items"]) == 1,
                 timeout=120, what="chat-vllm at one pod, the other gone")
        con = next(d for d in yaml.safe_load_all((ROOT / "examples" / "gpu-consolidation.yaml").read_text()) if d)
        plan = kubex_plan(env, con)
        assert plan["drainSequence"], f"kubex plans a drain of the T4 pool as KAI placed it: {json.dumps(plan)[:2000]}"
        drained = plan["drainSequence"][0]["node"]
        moves = {p["pod"]: p["to"] for p in plan["drainSequence"][0]["placements"]}
        owners = {name: owner_of(cp, name) for name in moves}
        taints = NodeTaintWatch(core, "rightsizing.kubex.ai/consolidating")
        apply(cp, con)
        wait_for(lambda: [e for e in cp.kubectl_json("get", "events", "-A")["items"]
                          if e.get("reason") == "DrainCompleted" and e["involvedObject"]["name"] == drained],
                 timeout=600, interval=2, what=f"DrainCompleted on {drained}")
        for pod, to in moves.items():
            ns, owner = owners[pod]
            (now,) = wait_for(lambda: [p for p in story_pods(cp) if p["metadata"]["namespace"] == ns and
                                       owner_of(cp, f"{ns}/{p['metadata']['name']}") == (ns, owner) and ready(p)]
                              or None, timeout=180, what=f"{owner}'s moved pod Ready")
            assert now["spec"]["nodeName"] == to, \
                f"{pod} ({owner}): kubex planned {to}, KAI placed its replacement on {now['spec']['nodeName']}"
            assert kai.bound_by_kai(cp, now) == "", kai.bound_by_kai(cp, now)
        cp.kubectl("delete", "gpuconsolidationpolicy", con["metadata"]["name"])
        wait_for(lambda: not any(t["key"] == "rightsizing.kubex.ai/consolidating" for n in agent_nodes(cp, "t4")
                                 for t in n["spec"].get("taints", [])), timeout=120, what="no consolidation taint")
        taints.stop()
        tcount = taints.result()
        assert tcount.max <= 1 and tcount.order and tcount.order[0][0] == drained, tcount.order

        # Act 4: the policies are deleted; rollback returns every workload to its template (RBK-1), and KAI places
        # the ones whose template names it.
        cp.kubectl("delete", "clusterstaticpolicy,clustergpureactivepolicy,clusterproactivepolicy", "--all")
        for ns, app in sorted(STORY_APPS):
            want = template_form(cp, ns, app)
            wait_for(lambda: (r := ready_pods(cp, ns, app)) and all(gpu_form(p) == want for p in r)
                     and len(r) == len(pods_of(cp, ns, app)), timeout=600, interval=2,
                     what=f"{ns}/{app} back at its template's {want}")
        wait_for(lambda: (r := [p for p in story_pods(cp) if p["metadata"].get("labels", {}).get("model") == "llama"])
                 and all(gpu_form(p) == (None, "1", "1", "default-scheduler") and ready(p) for p in r), timeout=600,
                 interval=2, what="the Model's pod back at its one whole GPU")
        pods = story_pods(cp)
        assert unplaced(cp) == [], f"a pod left Pending or unbound: {unplaced(cp)}"
        assert not_by_kai(cp, pods) == [], not_by_kai(cp, pods)
        assert [p for p in pods if p["spec"].get("schedulerName") == "kai-scheduler"], "the notebook stays on KAI"
        errors = story_errors(cp, ["ml-training", "ml-inference", "research"])
        assert errors == {}, "KAI logged errors about the story's pods:\n" + json.dumps(errors, indent=1)[:4000]
    finally:
        if taints:
            taints.stop()
        if model_op:
            model_op.stop()


def pods_of(cp, ns, app):
    return [p for p in cp.kubectl_json("get", "pods", "-n", ns, "-l", f"app={app}")["items"]
            if not p["metadata"].get("deletionTimestamp")]


def owner_of(cp, pod):
    """(namespace, "Kind/name") of the workload that owns pod "ns/name" (a ReplicaSet's Deployment)."""
    ns, name = pod.split("/", 1)
    p = cp.kubectl_json("get", "pod", name, "-n", ns, check=False)
    ref = next((r for r in p.get("metadata", {}).get("ownerReferences", []) if r.get("controller")), None)
    if not ref:
        return (ns, None)
    if ref["kind"] == "ReplicaSet":
        rs = cp.kubectl_json("get", "replicaset", ref["name"], "-n", ns, check=False)
        up = next((r for r in rs.get("metadata", {}).get("ownerReferences", []) if r.get("controller")), None)
        if up:
            return (ns, f"{up['kind']}/{up['name']}")
    return (ns, f"{ref['kind']}/{ref['name']}")
