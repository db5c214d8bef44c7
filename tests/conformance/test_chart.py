"""HLM-1, HLM-2, ADM-1 on a real kube-apiserver: everything the engine chart renders with the seed's values, and
everything `kubectl kustomize config/default` renders, passes a server-side dry run (real admission, defaulting,
webhook-configuration and RBAC validation), and both render the same set of objects."""
import json

import pytest
import yaml

from conftest import ENGINE_NS, ROOT, EngineProcess, free_port, run, wait_for

CHART = ROOT / "charts" / "kubex-automation-engine"
SEED = CHART / "ci" / "seed-values.yaml"
RELEASE = "kubex-automation-engine"


def objects(text):
    return [d for d in yaml.safe_load_all(text) if d]


def dry_run(cp, docs):
    # The engine namespace is needed by a dry run of namespaced objects; create it if the engine tests have not.
    if cp.kubectl("get", "namespace", ENGINE_NS, check=False).returncode != 0:
        cp.kubectl("create", "namespace", ENGINE_NS)
    res = cp.kubectl("apply", "--server-side", "--dry-run=server", "--field-manager=conformance", "-f", "-",
                     input=json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}), check=False)
    assert res.returncode == 0, res.stdout + res.stderr
    return res.stdout


def test_seed_values_render_objects_the_real_api_server_accepts(crds):  # HLM-1, ADM-1
    cp = crds
    docs = objects(cp.helm("template", RELEASE, str(CHART), "--namespace", ENGINE_NS, "-f", str(SEED)).stdout)
    kinds = {d["kind"] for d in docs}
    assert {"Deployment", "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration", "ClusterRole",
            "GlobalConfiguration", "PolicyEvaluation"} <= kinds, kinds
    names = {d["metadata"]["name"] for d in docs if d["kind"] == "MutatingWebhookConfiguration"}
    assert names == {"000-kubex-mutating-webhook-configuration", "zzz-kubex-mutating-webhook-configuration"}
    out = dry_run(cp, docs)
    assert out.count("(server dry run)") == len(docs), out


@pytest.mark.parametrize("driver", [[], ["--set", "gpuExporter.driver.runtimeClassName=",
                                          "--set", "gpuExporter.driver.hostDriverRoot=/run/nvidia/driver"]],
                         ids=["runtime-class", "host-driver-root"])
def test_gpu_exporter_renders_objects_the_real_api_server_accepts(crds, driver):  # TEL-5
    # The DaemonSet's pod template is validated as a pod's: hostPID, hostPath volumes, privileged without
    # allowPrivilegeEscalation (the host-driver-root way), the RBAC objects.
    cp = crds
    docs = objects(cp.helm("template", RELEASE, str(CHART), "--namespace", ENGINE_NS,
                           "--set", "gpuExporter.enabled=true", *driver,
                           "--show-only", "templates/gpu-exporter.yaml").stdout)
    assert sorted(d["kind"] for d in docs) == ["ClusterRole", "ClusterRoleBinding", "DaemonSet", "Service",
                                               "ServiceAccount"]
    out = dry_run(cp, docs)
    assert out.count("(server dry run)") == len(docs), out


def test_kustomize_default_is_accepted(crds):  # HLM-1 (issue 16 item 3)
    # config/default uses a cert-manager Certificate/Issuer; cert-manager's CRDs are not installed here, so those
    # two kinds are left out (tests/e2e/test_helm_chart.py checks the bases are generated from the chart).
    cp = crds
    kustomized = objects(run(["kubectl", "kustomize", str(ROOT / "config" / "default")]).stdout)
    skip = {"CustomResourceDefinition", "Namespace", "Certificate", "Issuer"}
    docs = [d for d in kustomized if d["kind"] not in skip]
    assert {"Deployment", "ClusterRole", "MutatingWebhookConfiguration"} <= {d["kind"] for d in docs}
    out = dry_run(cp, docs)
    assert out.count("(server dry run)") == len(docs), out


def test_helm_uninstall_removes_the_webhook_configurations_the_engine_registered_into(crds):  # HLM-2, ENG-3
    # Issue 34 item 9: after `kubex engine --register-webhooks` updated the configurations the chart rendered, it
    # had rewritten app.kubernetes.io/managed-by, and `helm uninstall` left them behind.
    cp = crds
    configs = [(d["kind"].lower() + "s", d["metadata"]["name"])
               for d in objects(cp.helm("template", RELEASE, str(CHART), "--namespace", ENGINE_NS).stdout)
               if d["kind"] in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration")]
    assert configs, "the chart renders no webhook configuration"
    cp.helm("install", RELEASE, str(CHART), "--namespace", ENGINE_NS, "--create-namespace", "--kubeconfig", cp.kubeconfig)
    try:
        engine = EngineProcess(cp.kubeconfig, ENGINE_NS, leader_elect=False, extra_args=[
            "--webhook-bind-address", f"127.0.0.1:{free_port()}", "--self-signed-webhook", "--register-webhooks"])
        try:
            done = engine.wait_line("registered webhook configurations", timeout=60)
            assert sorted(done["updated"]) == sorted(name for _, name in configs), done
            for plural, name in configs:
                meta = cp.kubectl_json("get", plural, name)["metadata"]
                assert meta["labels"].get("app.kubernetes.io/managed-by") == "Helm", meta
                assert meta["annotations"].get("meta.helm.sh/release-name") == RELEASE, meta
                assert meta["annotations"].get("meta.helm.sh/release-namespace") == ENGINE_NS, meta
        finally:
            engine.stop()
    finally:
        cp.helm("uninstall", RELEASE, "--namespace", ENGINE_NS, "--kubeconfig", cp.kubeconfig, check=False)
    for plural, name in configs:
        res = cp.kubectl("get", plural, name, "--ignore-not-found", "-o", "name")
        assert res.stdout.strip() == "", f"{plural}/{name} left behind by helm uninstall"
