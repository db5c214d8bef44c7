"""The rightsizing.kubex.ai/v1alpha1 API end to end (issue 5): the CRDs from `kubectl kustomize config/crd` in
kubex-sim, the seed examples, schema defaults and validation seen through real kubectl and the official Python
client, and `kubex validate`."""
import json
import subprocess

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from conftest import BIN, ROOT, wait_for

GROUP = "rightsizing.kubex.ai"
KINDS = ["automationstrategies", "clusterautomationstrategies", "proactivepolicies", "clusterproactivepolicies",
         "staticpolicies", "clusterstaticpolicies", "gpureactivepolicies", "clustergpureactivepolicies",
         "gpuconsolidationpolicies", "globalconfigurations", "policyevaluations"]
EXAMPLES = ROOT / "examples"
KUBEX = str(BIN / "kubex")


def kustomized_crds():
    res = subprocess.run(["kubectl", "kustomize", str(ROOT / "config" / "crd")], capture_output=True, text=True,
                         timeout=60)
    assert res.returncode == 0, res.stderr
    return res.stdout


@pytest.fixture(scope="module")
def api(sim):
    """kubex-sim with the CRDs installed the way a user installs them without Helm."""
    sim.kubectl("apply", "-f", "-", input=kustomized_crds())
    for plural in KINDS:
        wait_for(lambda p=plural: sim.kubectl("get", "crd", f"{p}.{GROUP}", "-o",
                                              "jsonpath={.status.conditions[?(@.type=='Established')].status}",
                                              check=False).stdout == "True", what=f"{plural} established")
    # Discovery must list the kinds before kubectl can map them.
    wait_for(lambda: "clustergpureactivepolicies" in sim.kubectl("api-resources", f"--api-group={GROUP}",
                                                                 check=False).stdout, what="discovery")
    return sim


def validate(*args, input=None):
    return subprocess.run([KUBEX, "validate", *args], input=input, capture_output=True, text=True, timeout=60)


def test_crd_files_are_what_the_generator_writes(tmp_path):  # API-2: one source of truth
    res = subprocess.run(["/usr/bin/python3", str(ROOT / "scripts" / "gen-crds.py"), str(tmp_path)],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    committed = sorted((ROOT / "charts" / "kubex-crds" / "templates").glob("*.yaml"))
    generated = sorted(tmp_path.glob("*.yaml"))
    assert [p.name for p in committed] == [p.name for p in generated]
    for c, g in zip(committed, generated):
        assert c.read_text() == g.read_text(), f"{c.name} differs from scripts/gen-crds.py output: regenerate it"


def test_kustomize_prints_every_crd():
    docs = [d for d in kustomized_crds().split("\n---\n") if d.strip()]
    names = sorted(line.split(":", 1)[1].strip() for d in docs for line in d.splitlines()
                   if line.startswith("  name: "))
    assert names == sorted(f"{p}.{GROUP}" for p in KINDS)
    assert all("kind: CustomResourceDefinition" in d for d in docs)


def test_crds_apply_cleanly_and_are_served(api):  # API-1
    again = api.kubectl("apply", "-f", "-", input=kustomized_crds())
    assert again.stdout.count("unchanged") == len(KINDS), again.stdout
    resources = api.kubectl("api-resources", f"--api-group={GROUP}", "-o", "wide").stdout
    for plural in KINDS:
        assert plural in resources
    crd = api.kubectl_json("get", "crd", f"clustergpureactivepolicies.{GROUP}")
    assert crd["spec"]["scope"] == "Cluster"
    assert [v["name"] for v in crd["spec"]["versions"]] == ["v1alpha1"]
    assert "status" in crd["spec"]["versions"][0]["subresources"]


def test_examples_apply_and_defaults_appear(api):  # §1 defaults, API-2
    for f in ("kai-gpu-sharing.yaml", "gpu-consolidation.yaml"):
        res = api.kubectl("apply", "-f", str(EXAMPLES / f))
        assert "created" in res.stdout or "configured" in res.stdout or "unchanged" in res.stdout, res.stdout
        assert "unchanged" in api.kubectl("apply", "-f", str(EXAMPLES / f)).stdout

    strategy = api.kubectl_json("get", "clusterautomationstrategy", "kai-gpu-sharing")["spec"]
    assert strategy["kai"]["queue"] == "kubex-unlimited-gpu-queue"
    assert strategy["kai"]["setQueueWhenSpecified"] is False
    assert strategy["kai"]["vllm"]["gpuMemoryUtilizationBufferPercent"] == 10
    assert strategy["enablement"]["gpu"]["requests"]["ceiling"] == "1"
    assert strategy["enablement"]["cpu"]["limits"] == {"upsize": True, "downsize": True, "setFromUnspecified": False}
    assert strategy["safetyChecks"]["minReadyDuration"] == "10s"
    assert strategy["safetyChecks"]["resizeRetryInterval"] == "30s"
    assert strategy["podEviction"]["retryPodDisruptionBudget"] is True
    assert strategy["inPlaceResize"] == {"enabled": False, "containerRestart": False}

    # The same through `kubectl get -o yaml`, as a user reads it.
    text = api.kubectl("get", "clustergpureactivepolicy", "kai-gpu-sharing-reactive", "-o", "yaml").stdout
    assert "weight: 0" in text
    reactive = api.kubectl_json("get", "clustergpureactivepolicy", "kai-gpu-sharing-reactive")["spec"]
    assert reactive["minPodMetricsAge"] == "10m"
    assert reactive["metrics"]["compute"]["prometheus"]["interpretation"] == "fullGPU"

    baseline = api.kubectl_json("get", "clusterproactivepolicy", "kai-gpu-sharing-baseline")["spec"]
    assert baseline["safetyChecks"] == {"maxAnalysisAgeDays": 5}
    assert baseline["weight"] == 0
    consolidation = api.kubectl_json("get", "gpuconsolidationpolicy", "gpu-consolidation-pool-a")["spec"]
    assert consolidation["utilizationThresholdPercent"] == 75 and consolidation["requeueAfter"] == "1m"

    # Printer columns.
    table = api.kubectl("get", "clusterautomationstrategies").stdout
    assert table.split("\n")[0].split()[:3] == ["NAME", "MODE", "CONTRACT"], table
    assert "kai-gpu-sharing" in table and "kai" in table.split("\n")[1]
    assert "STRATEGY" in api.kubectl("get", "cpp").stdout  # short name


def test_singletons_get_their_defaults(api):  # §1.6, §1.7, API-4
    api.kubectl("apply", "-f", "-", input=json.dumps({"apiVersion": f"{GROUP}/v1alpha1", "kind": "GlobalConfiguration",
                                                      "metadata": {"name": "global-config"}}))
    spec = api.kubectl_json("get", "globalconfiguration", "global-config")["spec"]
    assert spec["prometheus"] == {"url": "http://kubex-prometheus-server.kubex.svc", "requestTimeout": "30s"}
    assert spec["protectedNamespacePatterns"] == ["kube-*", "openshift-*", "gmp-*"]
    assert spec["kai"]["memoryIsolation"] == "None"
    api.kubectl("apply", "-f", "-", input=json.dumps({"apiVersion": f"{GROUP}/v1alpha1", "kind": "PolicyEvaluation",
                                                      "metadata": {"name": "policy-evaluation"}}))
    precedence = api.kubectl_json("get", "policyevaluation", "policy-evaluation")["spec"]["precedence"]
    assert precedence[0] == {"type": "GpuReactivePolicy", "priority": 120} and len(precedence) == 6
    bad = api.kubectl("apply", "-f", "-", check=False, input=json.dumps(
        {"apiVersion": f"{GROUP}/v1alpha1", "kind": "GlobalConfiguration", "metadata": {"name": "other"}}))
    assert bad.returncode != 0
    assert 'metadata.name' in bad.stderr and 'must be "global-config"' in bad.stderr


def test_explain_teaches_from_the_schema(api):
    out = api.kubectl("explain", "clustergpureactivepolicy.spec.metrics.compute.upsize").stdout
    for field in ("thresholdPercent", "metricsWindow", "headroomPercent", "maxPercent"):
        assert field in out, out
    assert "CURRENT allocation" in out
    leaf = api.kubectl("explain", "clustergpureactivepolicy.spec.metrics.compute.upsize.thresholdPercent").stdout
    assert "Default: `120`" in leaf and "integer" in leaf, leaf
    out = api.kubectl("explain", "automationstrategy.spec.enablement.gpu.requests.ceiling").stdout
    assert "quoted" in out


def strategy(name, requests=None, contract="v1alpha1-2026-07"):
    spec = {"enablement": {"overrideScheduler": "kai", "gpu": {"requests": requests or {"ceiling": "1"}}}}
    if contract is not None:
        spec["experimental"] = {"gpuKaiContract": contract}
    return {"apiVersion": f"{GROUP}/v1alpha1", "kind": "ClusterAutomationStrategy", "metadata": {"name": name},
            "spec": spec}


def reactive(name, **spec_patch):
    doc = json.loads(json.dumps(
        [d for d in load_yaml_docs(EXAMPLES / "kai-gpu-sharing.yaml") if d["kind"] == "ClusterGpuReactivePolicy"][0]))
    doc["metadata"]["name"] = name
    doc["spec"].update(spec_patch)
    return doc


def load_yaml_docs(path):
    import yaml
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


@pytest.mark.parametrize("obj, path, text", [
    (strategy("bad-contract", contract="v1alpha1-2026-04"), "spec.experimental.gpuKaiContract", "v1alpha1-2026-07"),
    (strategy("no-contract", contract=None), "spec.experimental.gpuKaiContract",
     'must be "v1alpha1-2026-07" when spec.enablement.overrideScheduler is "kai" or spec.kai is set'),
    (strategy("bad-ceiling", {"ceiling": "abc"}), "spec.enablement.gpu.requests.ceiling", "must be a valid quantity"),
    (strategy("floor-above", {"floor": "0.5", "ceiling": "0.25"}), "spec.enablement.gpu.requests",
     "floor must be less than or equal to ceiling"),
    (reactive("half", metrics={"compute": {"prometheus": {"metric": "m", "interpretation": "halfGPU",
                                                          "namespaceLabel": "namespace", "podLabel": "pod",
                                                          "containerLabel": "container"}},
                               "memory": {"prometheus": {"metric": "m", "namespaceLabel": "namespace",
                                                         "podLabel": "pod", "containerLabel": "container"}}}),
     "spec.metrics.compute.prometheus.interpretation", 'Forbidden: unsupported value "halfGPU"'),
    (reactive("empty-ns", scope={"namespaceSelector": {"operator": "In", "values": []}}),
     "spec.scope.namespaceSelector.values", "at least 1 item"),
    (reactive("young", minPodMetricsAge="30s"), "spec.minPodMetricsAge", "must be zero or at least 1m"),
])
def test_invalid_objects_are_rejected_by_the_schema_with_the_field_path(api, obj, path, text):  # API-2, VAL-4
    res = api.kubectl("apply", "-f", "-", input=json.dumps(obj), check=False)
    assert res.returncode != 0, res.stdout
    assert path in res.stderr and text in res.stderr, res.stderr
    assert api.kubectl("get", obj["kind"].lower(), obj["metadata"]["name"], check=False).returncode != 0


def test_missing_strategy_ref_is_rejected(api):  # VAL-4 required
    doc = reactive("no-ref")
    del doc["spec"]["automationStrategyRef"]
    res = api.kubectl("create", "-f", "-", input=json.dumps(doc), check=False)
    assert res.returncode != 0
    assert "spec.automationStrategyRef.name: Required value: required" in res.stderr, res.stderr


def test_python_client_sees_defaults_and_422_field_errors(api):  # API-2 with the official client
    co = client.CustomObjectsApi(api.client())
    body = {"apiVersion": f"{GROUP}/v1alpha1", "kind": "StaticPolicy", "metadata": {"name": "fixed"},
            "spec": {"automationStrategyRef": {"name": "s"},
                     "resources": {"containers": {"*": {"requests": {"cpu": "250m", "gpu": "0.5"}}}}}}
    api.kubectl("create", "namespace", "api-py", check=False)
    created = co.create_namespaced_custom_object(GROUP, "v1alpha1", "api-py", "staticpolicies", body)
    assert created["spec"]["weight"] == 0
    assert created["spec"]["resources"]["containers"]["*"]["requests"]["gpu"] == "0.5"
    bad = json.loads(json.dumps(body))
    bad["metadata"]["name"] = "gpu-limit"
    # KAI-2: a burst limit is a GPU amount > 0 (that it lies above the request is the validating webhook's check).
    bad["spec"]["resources"]["containers"]["app"] = {"limits": {"gpu": "0"}}
    with pytest.raises(ApiException) as err:
        co.create_namespaced_custom_object(GROUP, "v1alpha1", "api-py", "staticpolicies", bad)
    assert err.value.status == 422
    assert "spec.resources.containers.app.limits.gpu: must be > 0" in err.value.body
    # Status is a subresource: a spec write does not change it, a status write does (API-1).
    status = {"status": {"conditions": [{"type": "Ready", "status": "True", "reason": "Reconciled", "message": "",
                                         "lastTransitionTime": "2026-11-29T22:24:48Z"}],
                         "observedGeneration": 1, "matchedWorkloads": 2}}
    co.patch_namespaced_custom_object_status(GROUP, "v1alpha1", "api-py", "staticpolicies", "fixed", status)
    got = co.get_namespaced_custom_object(GROUP, "v1alpha1", "api-py", "staticpolicies", "fixed")
    assert got["status"]["matchedWorkloads"] == 2
    assert got["status"]["conditions"][0]["reason"] == "Reconciled"


# ------------------------------------------------------------------------------------------------ kubex validate

def test_kubex_validate_accepts_the_examples():
    res = validate("-f", str(EXAMPLES))
    assert res.returncode == 0, res.stderr
    assert res.stderr == "" and res.stdout == "7 objects valid\n"  # CLI-3: success says so (issue 26; 3 of them the safe-sizing preset)
    res = validate("-f", str(EXAMPLES / "kai-gpu-sharing.yaml"), "-o", "json")
    assert res.returncode == 0
    report = json.loads(res.stdout)
    assert report["valid"] is True
    assert [d["kind"] for d in report["documents"]] == ["ClusterAutomationStrategy", "ClusterProactivePolicy",
                                                       "ClusterGpuReactivePolicy"]


BAD = """apiVersion: v1
kind: ConfigMap
metadata: {name: cm}
---
apiVersion: rightsizing.kubex.ai/v1alpha1
kind: ClusterAutomationStrategy
metadata: {name: s}
spec:
  experimental: {gpuKaiContract: v1alpha1-2026-04}
  enablement:
    overrideScheduler: kai
    gpu: {requests: {floor: "0.5", ceiling: "0.25"}}
---
apiVersion: v1
kind: List
items:
- apiVersion: rightsizing.kubex.ai/v1alpha1
  kind: ClusterGpuReactivePolicy
  metadata: {name: r}
  spec:
    experimental: {gpuKaiContract: v1alpha1-2026-07}
    automationStrategyRef: {name: s}
    scope: {namespaceSelector: {operator: In, values: []}}
    metrics:
      compute:
        prometheus: {metric: m, interpretation: halfGPU, namespaceLabel: namespace, podLabel: pod,
                     containerLabel: container}
- apiVersion: rightsizing.kubex.ai/v1alpha1
  kind: ClusterAutomationStrategy
  metadata: {name: warn}
  spec:
    experimental: {gpuKaiContract: v1alpha1-2026-07}
    enablement: {overrideScheduler: kai}
"""


def test_kubex_validate_rejects_bad_files_with_exact_lines(tmp_path):  # VAL-1, VAL-3, VAL-4, VAL-2, CLI-3 lines
    f = tmp_path / "bad.yaml"
    f.write_text(BAD)
    res = validate("-f", str(f))
    assert res.returncode == 1
    assert res.stdout == ""
    assert res.stderr.splitlines() == [
        f"{f}:1: ConfigMap/cm: skipped: not a rightsizing.kubex.ai object",
        f'{f}:5: ClusterAutomationStrategy/s: spec.experimental.gpuKaiContract: unsupported value "v1alpha1-2026-04": '
        'the only accepted GPU/KAI contract is "v1alpha1-2026-07"',
        f"{f}:5: ClusterAutomationStrategy/s: spec.enablement.gpu.requests: floor must be less than or equal to ceiling",
        f"{f}:17: ClusterGpuReactivePolicy/r: spec.scope.namespaceSelector.values: must contain at least 1 item",
        f'{f}:17: ClusterGpuReactivePolicy/r: spec.metrics.compute.prometheus.interpretation: unsupported value '
        '"halfGPU": supported values: "fullGPU", "currentAllocation"',
        f"{f}:17: ClusterGpuReactivePolicy/r: spec.metrics.memory: required",
        f'{f}:28: ClusterAutomationStrategy/warn: warning: spec.enablement.gpu.requests.ceiling: "1" is recommended '
        'when overrideScheduler is "kai"',
    ]
    # The same from standard input, and as a JSON report.
    res = validate("-f", "-", "-o", "json", input=BAD)
    assert res.returncode == 1 and res.stderr == ""
    report = json.loads(res.stdout)
    assert report["valid"] is False
    assert [s["kind"] for s in report["skipped"]] == ["ConfigMap"]
    docs = {d["document"]: d for d in report["documents"]}
    assert docs["2"]["reason"] == "InvalidContract"
    assert docs["3.1"]["reason"] == "InvalidSpec"
    assert docs["3.1"]["errors"][2] == {"path": "spec.metrics.memory", "message": "required"}
    assert docs["3.2"]["valid"] is True and len(docs["3.2"]["warnings"]) == 1


def test_kubex_validate_exit_codes(tmp_path):
    good = tmp_path / "dir"
    good.mkdir()
    (good / "b.yml").write_text((EXAMPLES / "gpu-consolidation.yaml").read_text())
    (good / "a.json").write_text(json.dumps({"apiVersion": f"{GROUP}/v1alpha1", "kind": "PolicyEvaluation",
                                             "metadata": {"name": "policy-evaluation"}}))
    (good / "notes.txt").write_text("not yaml: [")
    res = validate("-f", str(good))
    assert res.returncode == 0, res.stderr
    res = validate("-f", str(good), "-o", "json")
    assert [d["file"] for d in json.loads(res.stdout)["documents"]] == [str(good / "a.json"), str(good / "b.yml")]
    # Several -f, one of them invalid.
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: rightsizing.kubex.ai/v1alpha1\nkind: GlobalConfiguration\nmetadata: {name: gc}\n")
    res = validate("-f", str(good), "-f", str(bad))
    assert res.returncode == 1
    assert res.stderr.splitlines() == [f'{bad}:1: GlobalConfiguration/gc: metadata.name: must be "global-config"']
    # A document that does not parse is invalid input (1); a missing file or a bad flag is a usage/IO error (2).
    broken = tmp_path / "broken.yaml"
    broken.write_text("a: [")
    assert validate("-f", str(broken)).returncode == 1
    missing = validate("-f", str(tmp_path / "missing.yaml"))
    assert missing.returncode == 2
    assert missing.stderr.splitlines() == [f"cannot open {tmp_path / 'missing.yaml'}: No such file or directory"]
    assert validate().returncode == 2
    assert validate("-f", str(good), "-o", "yaml").returncode == 2
