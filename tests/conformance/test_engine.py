"""`kubex engine` against a real kube-apiserver (DESIGN §1): authenticated as the Helm chart's ServiceAccount with a
TokenRequest token, so the real RBAC authorizer enforces the chart's roles (HLM-2); its URL webhooks registered
with --register-webhooks (ENG-3) and called by the real admission chain (ADM-1); leader election on the real Lease
(ENG-1); the WHH probe's server-side dry run (WHH-1); status conditions and events (OBS-1, OBS-2). No nodes run here:
kubex's own evictions, refusals by a PodDisruptionBudget (ACT-4), taints and rollback run in test_seed_story.py, where
`kubex-sim agent` provides the nodes."""
import json
import pathlib

import pytest
import yaml

import test_admission as adm
from conftest import (BIN, ENGINE_NS, ENGINE_SA, GROUP, HERE, ROOT, EngineProcess, forbidden_lines, free_port,
                      run, sa_kubeconfig, wait_for)

CHART = ROOT / "charts" / "kubex-automation-engine"
RELEASE = "kubex-automation-engine"
# The seed's Helm values (GPU-Sharing-with-KAI: "Required Kubex webhook values"), as the chart ships them.
SEED = CHART / "ci" / "seed-values.yaml"
RBAC_KINDS = {"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"}


def chart_rbac(cp, tmp):
    """The ServiceAccount and RBAC objects of `helm template` of the engine chart with the seed's values."""
    out = cp.helm("template", RELEASE, str(CHART), "--namespace", ENGINE_NS, "-f", str(SEED)).stdout
    docs = [d for d in yaml.safe_load_all(out) if d and d.get("kind") in RBAC_KINDS]
    kinds = {d["kind"] for d in docs}
    assert {"ServiceAccount", "ClusterRole", "ClusterRoleBinding"} <= kinds, kinds
    sa = next(d for d in docs if d["kind"] == "ServiceAccount")["metadata"]["name"]
    return docs, sa


class Env:
    def __init__(self, cp, kubeconfig, sa):
        self.cp, self.kubeconfig, self.sa = cp, kubeconfig, sa
        self.port = free_port()
        self.engine = None
        self.stopped = []

    def start(self):
        # ENG-3 development flags: self-signed serving certificate, URL webhooks at 127.0.0.1, both pod passes.
        # Leader election stays on (ENG-1); --kai-queues creates the built-in queues (QUE-1).
        self.engine = EngineProcess(self.kubeconfig, ENGINE_NS, extra_args=[
            "--webhook-bind-address", f"127.0.0.1:{self.port}", "--self-signed-webhook", "--register-webhooks",
            "--early-webhook-enabled", "--kai-queues", "--log-level", "debug"])
        self.engine.wait_ready(timeout=60)
        return self.engine

    def stop(self):
        if self.engine:
            self.engine.stop()
            self.stopped.append(self.engine)
            self.engine = None

    def forbidden(self):
        return [l for e in self.stopped + ([self.engine] if self.engine else []) for l in forbidden_lines(e)]


QUEUE_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "queues.scheduling.run.ai"},
    "spec": {"group": "scheduling.run.ai", "scope": "Cluster",
             "names": {"plural": "queues", "singular": "queue", "kind": "Queue", "listKind": "QueueList"},
             "versions": [{"name": "v2", "served": True, "storage": True, "subresources": {"status": {}},
                           "schema": {"openAPIV3Schema": {"type": "object",
                                                          "x-kubernetes-preserve-unknown-fields": True}}}]}}


@pytest.fixture(scope="module")
def env(crds, tmp_path_factory):
    cp = crds
    tmp = tmp_path_factory.mktemp("engine")
    # KAI's Queue API as KAI installs it (a stand-in CRD with an open schema; the KAI scheduler itself is not run).
    cp.kubectl("apply", "-f", "-", input=json.dumps(QUEUE_CRD))
    wait_for(lambda: "queues" in cp.kubectl("api-resources", "--api-group=scheduling.run.ai", check=False).stdout,
             what="the Queue API served")
    if cp.kubectl("get", "namespace", ENGINE_NS, check=False).returncode != 0:
        cp.kubectl("create", "namespace", ENGINE_NS)
    docs, sa = chart_rbac(cp, tmp)
    cp.kubectl("apply", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}))
    # --register-webhooks is a development flag (ENG-3): in clusters the chart renders the webhook configurations,
    # so the chart grants no write on them. This test grants exactly that, separately (tests/conformance).
    cp.kubectl("apply", "-f", str(HERE / "register-webhooks-rbac.yaml"))
    kubeconfig = sa_kubeconfig(cp, ENGINE_NS, sa, tmp / "engine.kubeconfig")
    e = Env(cp, kubeconfig, sa)
    e.start()
    wait_for(lambda: cp.kubectl("get", "mutatingwebhookconfiguration", "000-kubex-mutating-webhook-configuration",
                                check=False).returncode == 0, timeout=30, what="the early webhook registered")
    cp.kubectl("apply", "-f", str(ROOT / "examples" / "kai-gpu-sharing.yaml"))
    yield e
    e.stop()


def test_engine_runs_as_the_charts_service_account(env):  # HLM-2, ENG-3
    assert env.sa == ENGINE_SA or env.sa.startswith(RELEASE), env.sa
    who = env.cp.kubectl("auth", "whoami", "-o", "json", kubeconfig=env.kubeconfig, check=False)
    if who.returncode == 0:
        assert json.loads(who.stdout)["status"]["userInfo"]["username"] == \
            f"system:serviceaccount:{ENGINE_NS}:{env.sa}"
    # The chart grants no write on webhook configurations or secrets (least privilege).
    can = env.cp.kubectl("auth", "can-i", "delete", "secrets", "-A", kubeconfig=env.kubeconfig, check=False)
    assert can.stdout.strip() == "no", can.stdout


def test_leader_election_holds_the_lease(env):  # ENG-1
    cp = env.cp

    def lease():
        l = cp.kubectl_json("get", "lease", "kubex-automation-engine-leader", "-n", ENGINE_NS, check=False)
        return l if l.get("spec", {}).get("holderIdentity") else None

    first = wait_for(lease, timeout=30, what="the Lease held")
    assert first["spec"]["leaseDurationSeconds"] == 15
    # Renewed (2s retry, 10s renew deadline): renewTime moves on.
    wait_for(lambda: lease()["spec"]["renewTime"] != first["spec"]["renewTime"], timeout=20,
             what="the Lease renewed")
    # The holder is this engine's identity (one replica runs).
    assert first["spec"]["holderIdentity"], first


def test_webhook_probe_reports_healthy(env):  # WHH-1..3
    cp = env.cp

    def healthy():
        gc = cp.kubectl_json("get", f"globalconfigurations.{GROUP}", "global-config", check=False)
        c = next((c for c in gc.get("status", {}).get("conditions", [])
                  if c["type"] == "PodAdmissionWebhookHealthy"), None)
        return c if c and c["status"] == "True" else None

    # global-config comes from the engine (API-4); a short interval keeps the test quick.
    wait_for(lambda: cp.kubectl("get", f"globalconfigurations.{GROUP}", "global-config", check=False)
             .returncode == 0, timeout=30, what="global-config created by the engine")
    cp.kubectl("patch", f"globalconfigurations.{GROUP}", "global-config", "--type=merge", "-p",
               json.dumps({"spec": {"webhookHealth": {"transitionCheckInterval": "1s", "successThreshold": 2}}}))
    c = wait_for(healthy, timeout=60, what="PodAdmissionWebhookHealthy=True")
    assert c["reason"] == "ProbeSucceeded", c
    h = cp.kubectl_json("get", f"globalconfigurations.{GROUP}", "global-config")["status"]["webhookHealth"]
    # WHH-2: the real API server ran both passes on the dry-run probe pod and returned both markers.
    assert h["lastProbeResult"] == "Success" and h["consecutiveSuccesses"] >= 2, h


def test_starter_example_conditions_and_policy_events(env):  # OBS-1, OBS-2, API-1
    cp = env.cp

    def cond(plural, name, type_, ns=None):
        args = ["get", f"{plural}.{GROUP}", name] + (["-n", ns] if ns else [])
        obj = cp.kubectl_json(*args, check=False)
        return next((c for c in obj.get("status", {}).get("conditions", []) if c["type"] == type_), None), obj

    for plural, name, type_, reason in [
            ("clusterautomationstrategies", "kai-gpu-sharing", "Valid", "Valid"),
            ("clusterproactivepolicies", "kai-gpu-sharing-baseline", "Ready", "Reconciled"),
            ("clustergpureactivepolicies", "kai-gpu-sharing-reactive", "AutomationStrategyResolved", "Resolved")]:
        c = wait_for(lambda: (x := cond(plural, name, type_)[0]) and x["status"] == "True" and x, timeout=30,
                     what=f"{plural}/{name} {type_}=True")
        assert c["reason"] == reason, c
        obj = cond(plural, name, type_)[1]
        assert obj["status"]["observedGeneration"] == obj["metadata"]["generation"]

    # A namespaced policy whose strategy is missing: False/StrategyNotFound and a Warning event, then resolved.
    ns = "conf-events"
    cp.kubectl("create", "namespace", ns)
    policy = {"apiVersion": f"{GROUP}/v1alpha1", "kind": "ProactivePolicy", "metadata": {"name": "p", "namespace": ns},
              "spec": {"scope": {"workloadTypes": ["Deployment"]}, "automationStrategyRef": {"name": "later"}}}
    cp.kubectl("apply", "-f", "-", input=json.dumps(policy))
    c = wait_for(lambda: (x := cond("proactivepolicies", "p", "AutomationStrategyResolved", ns)[0])
                 and x["status"] == "False" and x, timeout=30, what="StrategyNotFound")
    assert c["reason"] == "StrategyNotFound", c

    def events():
        items = cp.kubectl_json("get", "events", "-n", ns)["items"]
        return [(e["type"], e["reason"]) for e in items if e["involvedObject"]["name"] == "p"]

    wait_for(lambda: ("Warning", "StrategyNotFound") in events(), timeout=30, what="the StrategyNotFound event")
    strategy = {"apiVersion": f"{GROUP}/v1alpha1", "kind": "AutomationStrategy",
                "metadata": {"name": "later", "namespace": ns},
                "spec": {"enablement": {"gpu": {"requests": {"upsize": True, "downsize": True}}}}}
    cp.kubectl("apply", "-f", "-", input=json.dumps(strategy))
    wait_for(lambda: ("Normal", "StrategyResolved") in events(), timeout=30, what="the StrategyResolved event")


def pods_of(cp, ns, selector):
    return [p for p in cp.kubectl_json("get", "pods", "-n", ns, "-l", selector)["items"]
            if not p["metadata"].get("deletionTimestamp")]


def test_admission_converts_whole_gpus_to_fractions(env):  # ADM-1, ADM-11, ADM-13, ADM-16, E2
    cp = env.cp
    ns = "conf-share"
    cp.kubectl("create", "namespace", ns)
    adm.apply(cp, adm.static_policy("conf-share", ns, "0.5"),
              adm.gpu_deployment("train", ns, labels={"nvidia.com/gpu.present": "true"}))
    adm.wait_static_annotation(cp, "deployment", ns, "train", '{"app":{"gpu":"0.5"}}')
    # kube-controller-manager's ReplicaSet controller creates the pods; the real admission chain calls both passes.
    adm.scale(cp, ns, "train", 2)
    pods = wait_for(lambda: (p := pods_of(cp, ns, "app=train")) and len(p) == 2 and p, timeout=60,
                    what="two pods created by the ReplicaSet")
    for p in pods:
        a = adm.annotations(p)
        assert a.get("gpu-fraction") == "0.5", a
        assert adm.container_gpu(p) == (None, None), "nvidia.com/gpu removed from requests and limits"
        assert p["spec"]["schedulerName"] == "kai-scheduler"
        assert p["metadata"]["labels"]["kai.scheduler/queue"] == "kubex-unlimited-gpu-queue"
        info = json.loads(a["automation-webhook.kubex.ai/pod-rightsizing-info"])
        assert info == {"mode": "kai", "strategy": "ClusterAutomationStrategy/kai-gpu-sharing",
                        "containers": {"app": {"gpu": {"from": "1", "to": "0.5",
                                                       "source": "ClusterStaticPolicy/conf-share"}}},
                        "kai": {"scheduler": {"from": "default-scheduler", "to": "kai-scheduler"},
                                "queue": {"from": None, "to": "kubex-unlimited-gpu-queue"}}}


def test_explain_reads_the_real_api_server_with_the_charts_role(env):  # CLI-1, HLM-2
    """`kubex explain` on the real API server, authenticated as the chart's ServiceAccount: the role the engine
    runs with is enough to explain, and what it says matches what the real admission chain did."""
    cp = env.cp
    ns = "conf-explain"
    cp.kubectl("create", "namespace", ns)
    adm.apply(cp, adm.static_policy("conf-explain", ns, "0.4"),
              adm.gpu_deployment("serve", ns, labels={"nvidia.com/gpu.present": "true"}))
    adm.wait_static_annotation(cp, "deployment", ns, "serve", '{"app":{"gpu":"0.4"}}')
    adm.scale(cp, ns, "serve", 1)
    (pod,) = wait_for(lambda: (p := pods_of(cp, ns, "app=serve")) and len(p) == 1 and p, timeout=60,
                      what="the ReplicaSet's pod")
    assert adm.annotations(pod).get("gpu-fraction") == "0.4"
    name = pod["metadata"]["name"]
    res = run([str(BIN / "kubex"), "explain", "pod", f"{ns}/{name}", "-o", "json", "--kubeconfig", env.kubeconfig],
              check=False)
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["managed"] is True and doc["workload"] == "Deployment/serve"
    assert doc["ownerChain"][2] == "Deployment/serve"
    (gpu,) = [r for r in doc["resources"] if r["resource"] == "requests.gpu"]
    assert (gpu["current"], gpu["desired"], gpu["applied"], gpu["source"]) == \
        ("0.4", "0.4", "0.4", "ClusterStaticPolicy/conf-explain")
    (p,) = doc["actuation"]["pods"]
    assert p["pod"] == name and p["inSync"] is True  # no kubelet here: Pending, but already what admission gives
    missing = run([str(BIN / "kubex"), "explain", "deployment", f"{ns}/nothing", "--kubeconfig", env.kubeconfig],
                  check=False)
    assert missing.returncode == 1 and missing.stderr == f"kubex explain: Deployment {ns}/nothing not found\n"


def test_existing_kai_pod_keeps_its_queue_and_vllm_gets_its_flag(env):  # E1, VLM-2..4
    cp = env.cp
    ns = "conf-kai"
    cp.kubectl("create", "namespace", ns)
    existing = {"annotations": {"gpu-fraction": "0.25"}, "labels": {"kai.scheduler/queue": "team-queue"}}
    adm.apply(cp, adm.static_policy("conf-keep", ns, "0.7", containers="server"),
              adm.gpu_deployment("serve", ns, container="server", image="vllm/vllm-openai:v0.6.3",
                                 args=["--model", "m", "--gpu-memory-utilization", "0.95"], template_meta=existing,
                                 scheduler="kai-scheduler", gpus=None))
    adm.wait_static_annotation(cp, "deployment", ns, "serve", '{"server":{"gpu":"0.7"}}')
    adm.scale(cp, ns, "serve", 1)
    (pod,) = wait_for(lambda: pods_of(cp, ns, "app=serve"), timeout=60, what="the vLLM pod")
    assert adm.annotations(pod)["gpu-fraction"] == "0.7"  # E1: 0.25 -> 0.7
    assert pod["metadata"]["labels"]["kai.scheduler/queue"] == "team-queue"  # kept (ADM-13)
    # VLM-3: 0.7 x (1 - 10/100) = 0.63 (memoryIsolation None); VLM-4: the split form's value is replaced.
    assert pod["spec"]["containers"][0]["args"] == ["--model", "m", "--gpu-memory-utilization", "0.63"]


def test_validating_webhook_denies_with_the_val4_message(env):  # VAL-1, VAL-4 (what the schema cannot check)
    cp = env.cp
    wait_for(lambda: cp.kubectl("get", "validatingwebhookconfigurations", "-o", "name").stdout.strip(), timeout=30,
             what="the validating webhook registered")
    bad = {"apiVersion": f"{GROUP}/v1alpha1", "kind": "ClusterStaticPolicy", "metadata": {"name": "conf-bad"},
           "spec": {"scope": {"namespaceSelector": {"operator": "In", "values": ["x"]},
                              "labelSelector": {"matchLabels": {"bad key!": "v"}}},
                    "resources": {"containers": {"*": {"requests": {"gpu": "0.5"}}}},
                    "automationStrategyRef": {"name": "kai-gpu-sharing"}}}
    res = cp.kubectl("apply", "-f", "-", input=json.dumps(bad), check=False)
    assert res.returncode != 0, res.stdout
    assert "denied the request" in res.stderr and "spec.scope.labelSelector.matchLabels" in res.stderr, res.stderr


STARTER = ROOT / "examples" / "kai-gpu-sharing.yaml"
REFERENCED = "rightsizing.kubex.ai/referenced"


def test_kubectl_delete_of_the_starter_example_completes_and_a_referenced_strategy_is_held(env):  # VAL-4 strategy DELETE
    cp = env.cp
    strategy = f"clusterautomationstrategies.{GROUP}"

    def finalizers():
        return cp.kubectl_json("get", strategy, "kai-gpu-sharing").get("metadata", {}).get("finalizers", [])

    # The engine holds the referenced strategy (as the chart's ServiceAccount, through the real RBAC).
    wait_for(lambda: REFERENCED in finalizers(), timeout=60, what="the strategy's finalizer added")
    # The tests above left policies of their own on the starter's strategy: only the file's policies stay.
    for p in cp.kubectl_json("get", f"clusterstaticpolicies.{GROUP}")["items"]:
        if p["spec"].get("automationStrategyRef", {}).get("name") == "kai-gpu-sharing":
            cp.kubectl("delete", f"clusterstaticpolicies.{GROUP}", p["metadata"]["name"])
    # Deleted alone, it stays while its policies exist, and its status says why.
    cp.kubectl("delete", strategy, "kai-gpu-sharing", "--wait=false")

    def terminating():
        obj = cp.kubectl_json("get", strategy, "kai-gpu-sharing")
        c = next((c for c in obj.get("status", {}).get("conditions", []) if c["type"] == "Terminating"), None)
        return obj["metadata"].get("deletionTimestamp") and c

    c = wait_for(terminating, timeout=60, what="the held strategy's Terminating condition")
    assert (c["status"], c["reason"]) == ("True", "StillReferenced"), c
    assert c["message"] == ("still referenced by ClusterGpuReactivePolicy/kai-gpu-sharing-reactive, "
                            "ClusterProactivePolicy/kai-gpu-sharing-baseline"), c
    # The documented clean-up: exits 0 and every object of the file is gone.
    res = cp.kubectl("delete", "-f", str(STARTER), "--timeout=120s", check=False, timeout=180)
    assert res.returncode == 0, res.stderr
    left = cp.kubectl("get", "-f", str(STARTER), "--ignore-not-found", "-o", "name", check=False)
    assert left.stdout.strip() == "", left.stdout
    # The same file again, then its documented clean-up in one go (the strategy listed first).
    cp.kubectl("apply", "-f", str(STARTER))
    wait_for(lambda: REFERENCED in finalizers(), timeout=60, what="the strategy's finalizer added again")
    res = cp.kubectl("delete", "-f", str(STARTER), "--timeout=120s", check=False, timeout=180)
    assert res.returncode == 0, res.stderr
    assert cp.kubectl("get", "-f", str(STARTER), "--ignore-not-found", "-o", "name").stdout.strip() == ""
    cp.kubectl("apply", "-f", str(STARTER))  # what the tests below rely on


def test_pod_creation_is_never_blocked_while_the_engine_is_down(env):  # ADM-2 fail-open
    cp = env.cp
    ns = "conf-down"
    cp.kubectl("create", "namespace", ns)
    adm.apply(cp, adm.static_policy("conf-down", ns, "0.5"), adm.gpu_deployment("down", ns))
    adm.wait_static_annotation(cp, "deployment", ns, "down", '{"app":{"gpu":"0.5"}}')
    env.stop()
    try:
        adm.scale(cp, ns, "down", 1)
        (pod,) = wait_for(lambda: pods_of(cp, ns, "app=down"), timeout=60, what="a pod admitted without the webhook")
        assert "gpu-fraction" not in adm.annotations(pod)
        assert adm.container_gpu(pod)[1] == "1"
    finally:
        env.start()


def test_no_forbidden_request_in_the_engine_log(env):  # HLM-2: the chart's RBAC covers every controller
    # Last in this module: every controller above has run with the chart's ServiceAccount.
    lines = env.forbidden()
    assert lines == [], "the engine hit RBAC denials:\n" + "\n".join(lines[:20])
