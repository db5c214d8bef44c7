"""The kubex-automation-engine Helm chart (SPEC HLM-1…3, ADM-1, ENG-3; issue 16 items 2 and 4) with the real helm
binary that scripts/control-plane.sh builds from helm.sh/helm/v4: lint, templates with the default values and the
user guide's values, the HLM-1 prefix rule, schema errors, certificates (chart-generated and cert-manager), the
webhook configurations against the ones the engine itself registers on kubex-sim, the Deployment's flags against
`kubex engine --help`, the singletons against the engine's validator, a server-side dry run on kubex-sim, and the
kustomize bases generated from the chart (scripts/gen-kustomize.py --check)."""
import base64
import json
import os
import re
import subprocess
import sys

import pytest
import yaml

from conftest import BIN, ROOT, EngineProcess, wait_for

CHART = ROOT / "charts" / "kubex-automation-engine"
SEED = CHART / "ci" / "seed-values.yaml"
CERT_MANAGER = CHART / "ci" / "cert-manager-values.yaml"
RELEASE, NS = "kubex-automation-engine", "kubex"
LATE = "zzz-kubex-mutating-webhook-configuration"
EARLY = "000-kubex-mutating-webhook-configuration"
VALIDATING = "kubex-validating-webhook-configuration"
SERVICE = "kubex-automation-engine-webhook-service"
# The GPU exporter (TEL-5): enabled, and its driver from a host root instead of the NVIDIA runtime class.
ON = ["--set", "gpuExporter.enabled=true"]
HOST_DRIVER = ["--set", "gpuExporter.driver.runtimeClassName="]  # way 2 needs way 1 switched off


def find_helm():
    """The helm binary of the control-plane cache (or $KUBEX_HELM). Missing helm is a failure, not a skip."""
    if os.environ.get("KUBEX_HELM"):
        helm = os.environ["KUBEX_HELM"]
        if not os.access(helm, os.X_OK):
            pytest.fail(f"KUBEX_HELM={helm} is not an executable")
        return helm
    res = subprocess.run([str(ROOT / "scripts" / "control-plane.sh"), "bin"], capture_output=True, text=True,
                         timeout=60)
    helm = os.path.join(res.stdout.strip(), "helm") if res.returncode == 0 else ""
    if not helm or not os.access(helm, os.X_OK):
        pytest.fail("no helm binary: run `scripts/control-plane.sh build` (it builds helm from helm.sh/helm/v4 into "
                    f"its cache), or set KUBEX_HELM. control-plane.sh bin said: {res.stderr.strip()}")
    return helm


@pytest.fixture(scope="module")
def helm():
    return find_helm()


def run_helm(helm, *args):
    return subprocess.run([helm, *args], capture_output=True, text=True, timeout=120)


def template(helm, *args):
    res = run_helm(helm, "template", RELEASE, str(CHART), "--namespace", NS, *args)
    assert res.returncode == 0, res.stderr
    return [d for d in yaml.safe_load_all(res.stdout) if d]


def template_error(helm, *args):
    res = run_helm(helm, "template", RELEASE, str(CHART), "--namespace", NS, *args)
    assert res.returncode != 0, f"helm template {' '.join(args)} should fail; it rendered:\n{res.stdout[:2000]}"
    return res.stderr


def by_kind(objs, kind):
    return {o["metadata"]["name"]: o for o in objs if o["kind"] == kind}


def one(objs, kind, name=None):
    found = by_kind(objs, kind)
    if name is None:
        assert len(found) == 1, (kind, list(found))
        return next(iter(found.values()))
    assert name in found, (kind, name, list(found))
    return found[name]


def args_of(objs):
    return one(objs, "Deployment")["spec"]["template"]["spec"]["containers"][0]["args"]


@pytest.fixture(scope="module")
def default(helm):
    return template(helm)


@pytest.fixture(scope="module")
def seed(helm):
    return template(helm, "-f", str(SEED))


# --- lint and the objects ------------------------------------------------------------------------------------

@pytest.mark.parametrize("values", [None, SEED, CERT_MANAGER], ids=["default", "seed", "cert-manager"])
def test_lint(helm, values):
    args = ["lint", "--strict", str(CHART), "--namespace", NS] + (["-f", str(values)] if values else [])
    res = run_helm(helm, *args)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "0 chart(s) failed" in res.stdout


def test_default_values_render_the_engine_without_the_early_pass(default):
    kinds = sorted((o["kind"], o["metadata"]["name"]) for o in default)
    assert kinds == sorted([
        ("ServiceAccount", RELEASE), ("Secret", f"{RELEASE}-webhook-server-cert"),
        ("ClusterRole", f"{RELEASE}-manager"), ("ClusterRoleBinding", f"{RELEASE}-manager"),
        ("Role", f"{RELEASE}-manager"), ("RoleBinding", f"{RELEASE}-manager"),
        ("Service", SERVICE), ("Service", f"{RELEASE}-metrics-service"), ("Deployment", RELEASE),
        ("MutatingWebhookConfiguration", LATE), ("ValidatingWebhookConfiguration", VALIDATING),
        ("GlobalConfiguration", "global-config"), ("PolicyEvaluation", "policy-evaluation")]), kinds
    args = args_of(default)
    assert "--early-webhook-enabled" not in args and "--kai-queues" not in args and "--dry-run" not in args
    for flag in ("--leader-elect=true", "--metrics-bind-address=:8080", "--health-probe-bind-address=:8081",
                 "--webhook-port=9443", f"--namespace={NS}", "--global-config-name=global-config",
                 "--policy-evaluation-name=policy-evaluation"):
        assert flag in args, (flag, args)


def test_seed_values_render_the_early_webhook_and_its_flags(seed):
    early = one(seed, "MutatingWebhookConfiguration", EARLY)
    (hook,) = early["webhooks"]
    assert hook["name"] == "000-mpod-rightsizing-recommendations.kubex.ai"
    assert hook["clientConfig"]["service"] == {"name": SERVICE, "namespace": NS, "path": "/mutate--v1-pod-early",
                                               "port": 443}
    assert hook["failurePolicy"] == "Ignore" and hook["sideEffects"] == "NoneOnDryRun"
    late = one(seed, "MutatingWebhookConfiguration", LATE)["webhooks"][0]
    assert late["clientConfig"]["service"]["path"] == "/mutate--v1-pod"
    args = args_of(seed)
    assert "--early-webhook-enabled" in args and "--kai-queues" in args
    assert not by_kind(seed, "Queue"), "QUE-1: the engine creates the queues, the chart renders none"


def test_equal_prefixes_fail_with_a_clear_message(helm):
    for extra in ([], ["-f", str(SEED)]):
        err = template_error(helm, *extra, "--set", "webhook.podMutation.additionalWebhook.namePrefix=zzz-")
        assert 'webhook.podMutation.additionalWebhook.namePrefix ("zzz-") must differ from ' \
               'webhook.podMutation.namePrefix ("zzz-")' in err, err
    err = template_error(helm, "--set", "webhook.podMutation.namePrefix=000-")
    assert "must differ" in err, err
    # Other distinct prefixes render, with the names following them.
    objs = template(helm, "-f", str(SEED), "--set", "webhook.podMutation.namePrefix=zz-",
                    "--set", "webhook.podMutation.additionalWebhook.namePrefix=00-")
    assert set(by_kind(objs, "MutatingWebhookConfiguration")) == {"zz-kubex-mutating-webhook-configuration",
                                                                  "00-kubex-mutating-webhook-configuration"}


@pytest.mark.parametrize("setting, path", [
    (["--set-string", "webhook.timeoutSeconds=ten"], "timeoutSeconds"),
    (["--set", "webhook.podMutation.additionalWebhook.enabled=yes"], "enabled"),
    (["--set", "webhook.failurePolicy=Never"], "failurePolicy"),
    (["--set", "webhook.podMutation.additionalWebhooks.enabled=true"], "additionalWebhooks"),
    (["--set", "replicaCount=two"], "replicaCount"),
    (["--set-string", "kai.hamiCore.enabled=true"], "enabled"),
    (["--set", "globalConfiguration.prometheus.url=prometheus:9090"], "url"),
    (["--set", "globalConfiguration.gpuReactiveCheckInterval=1 minute"], "gpuReactiveCheckInterval"),
    (["--set", "webhook.podMutation.namePrefix=ZZZ_"], "namePrefix"),
], ids=["string-for-int", "string-for-bool", "enum", "misspelt-key", "replicas", "quoted-bool", "url",
        "duration", "prefix-chars"])
def test_a_wrong_value_fails_on_the_schema(helm, sim, setting, path):
    err = template_error(helm, *setting)
    assert "schema" in err and path in err, err
    # helm install (against kubex-sim: helm wants a reachable cluster first) stops on the same schema error.
    res = run_helm(helm, "install", RELEASE, str(CHART), "--kubeconfig", sim.kubeconfig, "--namespace", NS,
                   "--create-namespace", *setting)
    assert res.returncode != 0 and "schema" in res.stderr and path in res.stderr, res.stderr
    assert "not found" in run_helm(helm, "status", RELEASE, "--kubeconfig", sim.kubeconfig, "-n", NS).stderr


# --- the Deployment ------------------------------------------------------------------------------------------

def engine_flags():
    res = subprocess.run([str(BIN / "kubex"), "engine", "--help"], capture_output=True, text=True, timeout=30)
    assert res.returncode == 0, res.stderr
    return set(re.findall(r"(--[a-z][a-z0-9-]+)", res.stdout))


@pytest.mark.parametrize("settings", [
    [], ["-f", str(SEED)], ["--set", "webhook.enabled=false,dryRun=true,leaderElection.enabled=false"],
    ["-f", str(CERT_MANAGER), "--set", "logLevel=debug"]], ids=["default", "seed", "no-webhook", "cert-manager"])
def test_every_flag_the_chart_passes_exists_in_the_engine(helm, settings):
    known = engine_flags()
    for arg in args_of(template(helm, *settings)):
        flag = arg.split("=", 1)[0]
        assert flag in known, f"the chart passes {flag}, which `kubex engine --help` does not list"


def test_deployment_is_non_root_read_only_and_probed_on_8081(helm):
    objs = template(helm, "--set", "replicaCount=3,leaderElection.enabled=false,webhook.port=10443")
    dep = one(objs, "Deployment")
    assert dep["spec"]["replicas"] == 3
    pod = dep["spec"]["template"]["spec"]
    (c,) = pod["containers"]
    assert c["name"] == "manager"
    assert pod["securityContext"]["runAsNonRoot"] is True and pod["securityContext"]["runAsUser"] != 0
    sc = c["securityContext"]
    assert sc["readOnlyRootFilesystem"] is True and sc["allowPrivilegeEscalation"] is False
    assert sc["capabilities"]["drop"] == ["ALL"]
    assert c["resources"]["requests"] and c["resources"]["limits"]
    ports = {p["name"]: p["containerPort"] for p in c["ports"]}
    assert ports == {"webhook-server": 10443, "metrics": 8080, "health": 8081}
    assert c["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "health"}
    assert c["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "health"}
    assert "--leader-elect=false" in c["args"] and "--webhook-port=10443" in c["args"]  # HLM-1
    cert_dir = next(a.split("=", 1)[1] for a in c["args"] if a.startswith("--cert-dir="))
    mount = next(m for m in c["volumeMounts"] if m["mountPath"] == cert_dir)
    vol = next(v for v in pod["volumes"] if v["name"] == mount["name"])
    assert vol["secret"]["secretName"] == f"{RELEASE}-webhook-server-cert" and mount["readOnly"] is True
    env = {e["name"]: e for e in c["env"]}
    assert env["POD_NAMESPACE"]["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.namespace"
    svc = one(objs, "Service", SERVICE)
    assert svc["spec"]["ports"] == [{"name": "https", "port": 443, "targetPort": "webhook-server", "protocol": "TCP"}]
    assert svc["spec"]["selector"].items() <= dep["spec"]["template"]["metadata"]["labels"].items()


def test_webhook_disabled_renders_no_webhook_objects(helm):
    objs = template(helm, "--set", "webhook.enabled=false")
    kinds = {o["kind"] for o in objs}
    assert not kinds & {"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration", "Secret"}, kinds
    assert SERVICE not in by_kind(objs, "Service")
    args = args_of(objs)
    assert "--webhook-bind-address=0" in args and not any(a.startswith("--cert-dir") for a in args)


def test_optional_pdb_and_service_monitor(helm, default):
    assert not by_kind(default, "PodDisruptionBudget") and not by_kind(default, "ServiceMonitor")
    objs = template(helm, "-f", str(CERT_MANAGER))
    pdb = one(objs, "PodDisruptionBudget")
    assert pdb["spec"]["minAvailable"] == 1
    assert pdb["spec"]["selector"]["matchLabels"].items() <= \
        one(objs, "Deployment")["spec"]["template"]["metadata"]["labels"].items()
    sm = one(objs, "ServiceMonitor")
    assert sm["spec"]["endpoints"][0]["port"] == "http-metrics"
    # RPT-5: kubex_workload_gpus's `namespace` is the workload's; without honorLabels Prometheus would rename it.
    assert sm["spec"]["endpoints"][0]["honorLabels"] is True
    metrics = one(objs, "Service", f"{RELEASE}-metrics-service")
    assert sm["spec"]["selector"]["matchLabels"].items() <= metrics["metadata"]["labels"].items()
    err = template_error(helm, "--set", "podDisruptionBudget.enabled=true,podDisruptionBudget.maxUnavailable=1")
    assert "only one of minAvailable and maxUnavailable" in err
    pdb = one(template(helm, "--set", "podDisruptionBudget.enabled=true,podDisruptionBudget.maxUnavailable=1",
                       "--set", "podDisruptionBudget.minAvailable=null"), "PodDisruptionBudget")
    assert pdb["spec"] == {"maxUnavailable": 1, "selector": pdb["spec"]["selector"]}


# --- RBAC (HLM-2) ----------------------------------------------------------------------------------------------

def allowed(rules, group, resource, verb, name=None):
    return any(group in r.get("apiGroups", []) and resource in r.get("resources", []) and
               (verb in r.get("verbs", []) or "*" in r.get("verbs", [])) and
               (not r.get("resourceNames") or name in r["resourceNames"]) for r in rules)


def test_rbac_is_hlm2_and_least_privilege(default):
    cluster = one(default, "ClusterRole")["rules"]
    ns_rules = one(default, "Role")["rules"]
    for group, resource, verbs in [
        ("", "pods/eviction", ["create"]), ("", "pods", ["get", "list", "watch", "patch"]),
        ("", "nodes", ["get", "list", "watch", "patch"]), ("", "namespaces", ["get", "list", "watch"]),
        ("apps", "deployments", ["get", "list", "watch", "patch"]), ("apps", "statefulsets", ["patch"]),
        ("apps", "daemonsets", ["patch"]), ("apps", "replicasets", ["get", "list", "watch"]),
        ("batch", "jobs", ["patch"]), ("batch", "cronjobs", ["patch"]),
        ("kubeai.org", "models", ["get", "list", "watch", "patch"]),
        ("argoproj.io", "rollouts", ["patch"]), ("argoproj.io", "analysisruns", ["patch"]),
        ("scheduling.run.ai", "queues", ["get", "list", "create"]), ("", "events", ["create"]),
        ("", "configmaps", ["get", "watch"]), ("policy", "poddisruptionbudgets", ["list", "watch"]),
        ("rightsizing.kubex.ai", "gpuconsolidationpolicies/finalizers", ["update"]),
        ("rightsizing.kubex.ai", "globalconfigurations/status", ["update"]),
        ("rightsizing.kubex.ai", "policyevaluations", ["create", "watch"]),
    ]:
        for verb in verbs:
            assert allowed(cluster, group, resource, verb), (group, resource, verb)
    for group, resource, verb in [("", "pods", "delete"), ("", "secrets", "get"), ("", "configmaps", "list"),
                                  ("", "nodes", "delete"), ("scheduling.run.ai", "queues", "delete"),
                                  ("apps", "replicasets", "patch"), ("rightsizing.kubex.ai", "automationstrategies",
                                                                      "delete")]:
        assert not allowed(cluster, group, resource, verb), (group, resource, verb)
    assert not any("*" in r.get("verbs", []) or "*" in r.get("resources", []) for r in cluster + ns_rules)
    # Namespace-scoped: the leader Lease and the probe's dry-run pod create, nothing cluster-wide.
    assert allowed(ns_rules, "coordination.k8s.io", "leases", "update", "kubex-automation-engine-leader")
    assert not allowed(ns_rules, "coordination.k8s.io", "leases", "update", "someone-elses-lease")
    assert allowed(ns_rules, "", "pods", "create") and not allowed(cluster, "", "pods", "create")
    binding = one(default, "ClusterRoleBinding")
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": RELEASE, "namespace": NS}]


# --- webhook configurations: the same as the engine's own registration ------------------------------------------

def normalized(hook):
    """What ADM-1 / HLM-2 fix about a webhook, with the endpoint reduced to its path."""
    cc = hook["clientConfig"]
    path = cc["service"]["path"] if "service" in cc else re.sub(r"^https://[^/]+", "", cc["url"])
    return {
        "name": hook["name"], "path": path, "rules": [{k: r[k] for k in ("apiGroups", "apiVersions", "operations",
                                                                         "resources")} for r in hook["rules"]],
        "failurePolicy": hook["failurePolicy"], "sideEffects": hook["sideEffects"],
        "admissionReviewVersions": hook["admissionReviewVersions"], "timeoutSeconds": hook["timeoutSeconds"],
        "namespaceSelector": hook.get("namespaceSelector") or {}, "objectSelector": hook.get("objectSelector") or {},
        "reinvocationPolicy": hook.get("reinvocationPolicy", "Never"),
    }


@pytest.fixture(scope="module")
def registered(sim):
    """The configurations `kubex engine --register-webhooks --early-webhook-enabled` creates on kubex-sim."""
    engine = EngineProcess(sim.kubeconfig, "default", ["--webhook-bind-address", "127.0.0.1:0",
                                                       "--self-signed-webhook", "--register-webhooks",
                                                       "--early-webhook-enabled"], leader_elect=False)
    try:
        def read():
            got = {}
            for kind in ("mutatingwebhookconfigurations", "validatingwebhookconfigurations"):
                for c in sim.kubectl_json("get", kind)["items"]:
                    got[c["metadata"]["name"]] = c
            return got if {LATE, EARLY, VALIDATING} <= set(got) else None
        return wait_for(read, timeout=30, what=f"the engine's webhook configurations; output:\n{engine.output()}")
    finally:
        engine.stop()


def test_webhook_configurations_match_the_engines_registration(seed, registered):
    rendered = {**by_kind(seed, "MutatingWebhookConfiguration"), **by_kind(seed, "ValidatingWebhookConfiguration")}
    assert set(rendered) == {LATE, EARLY, VALIDATING}
    for name, cfg in rendered.items():
        want = [normalized(h) for h in registered[name]["webhooks"]]
        got = [normalized(h) for h in cfg["webhooks"]]
        assert got == want, name
        for h in cfg["webhooks"]:
            assert h["clientConfig"]["service"]["name"] == SERVICE and h["clientConfig"]["service"]["port"] == 443
    assert len(rendered[VALIDATING]["webhooks"]) == 11


def test_timeout_and_failure_policy_values(helm):
    objs = template(helm, "-f", str(SEED), "--set", "webhook.timeoutSeconds=5,webhook.failurePolicy=Fail")
    for cfg in by_kind(objs, "MutatingWebhookConfiguration").values():
        assert all(h["timeoutSeconds"] == 5 and h["failurePolicy"] == "Ignore" for h in cfg["webhooks"])
    v = one(objs, "ValidatingWebhookConfiguration")
    assert all(h["timeoutSeconds"] == 5 and h["failurePolicy"] == "Fail" for h in v["webhooks"])


# --- certificates -------------------------------------------------------------------------------------------------

def openssl(*args, input=None):
    res = subprocess.run(["openssl", *args], capture_output=True, text=True, input=input, timeout=30)
    assert res.returncode == 0, res.stderr
    return res.stdout


def test_chart_generated_certificate_is_trusted_through_the_ca_bundle(default, tmp_path):
    secret = one(default, "Secret")
    assert secret["type"] == "kubernetes.io/tls"
    data = {k: base64.b64decode(v).decode() for k, v in secret["data"].items()}
    (tmp_path / "ca.crt").write_text(data["ca.crt"])
    (tmp_path / "tls.crt").write_text(data["tls.crt"])
    assert "OK" in openssl("verify", "-CAfile", str(tmp_path / "ca.crt"), str(tmp_path / "tls.crt"))
    text = openssl("x509", "-in", str(tmp_path / "tls.crt"), "-noout", "-text")
    for dns in (SERVICE, f"{SERVICE}.{NS}", f"{SERVICE}.{NS}.svc", f"{SERVICE}.{NS}.svc.cluster.local"):
        assert f"DNS:{dns}" in text, (dns, text)
    # 3650 days (HLM-1): notAfter is about ten years away.
    end = openssl("x509", "-in", str(tmp_path / "tls.crt"), "-noout", "-enddate").strip()
    openssl("x509", "-in", str(tmp_path / "tls.crt"), "-noout", "-checkend", str(3640 * 86400))  # still valid
    res = subprocess.run(["openssl", "x509", "-in", str(tmp_path / "tls.crt"), "-noout", "-checkend",
                          str(3660 * 86400)], capture_output=True, text=True)
    assert res.returncode == 1, end
    # The key matches the certificate, and every webhook carries the CA.
    (tmp_path / "tls.key").write_text(data["tls.key"])
    assert openssl("pkey", "-in", str(tmp_path / "tls.key"), "-pubout") == \
        openssl("x509", "-in", str(tmp_path / "tls.crt"), "-noout", "-pubkey")
    for kind in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"):
        for cfg in by_kind(default, kind).values():
            assert "annotations" not in cfg["metadata"]
            for h in cfg["webhooks"]:
                assert base64.b64decode(h["clientConfig"]["caBundle"]).decode() == data["ca.crt"]


def test_cert_manager_certificate_and_ca_injection(helm):
    objs = template(helm, "-f", str(CERT_MANAGER))
    assert not by_kind(objs, "Secret")
    issuer = one(objs, "Issuer")
    cert = one(objs, "Certificate")
    assert cert["spec"]["secretName"] == f"{RELEASE}-webhook-server-cert"
    assert cert["spec"]["issuerRef"] == {"name": issuer["metadata"]["name"], "kind": "Issuer",
                                         "group": "cert-manager.io"}
    assert f"{SERVICE}.{NS}.svc" in cert["spec"]["dnsNames"]
    for kind in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"):
        for cfg in by_kind(objs, kind).values():
            assert cfg["metadata"]["annotations"]["cert-manager.io/inject-ca-from"] == \
                f"{NS}/{cert['metadata']['name']}"
            assert all("caBundle" not in h["clientConfig"] for h in cfg["webhooks"])
    objs = template(helm, "-f", str(CERT_MANAGER), "--set", "webhook.certManager.issuerRef.name=corp-ca",
                    "--set", "webhook.certManager.issuerRef.kind=ClusterIssuer")
    assert not by_kind(objs, "Issuer")
    assert one(objs, "Certificate")["spec"]["issuerRef"] == {"name": "corp-ca", "kind": "ClusterIssuer",
                                                             "group": "cert-manager.io"}


# --- singletons (HLM-1, HLM-3) ---------------------------------------------------------------------------------

def test_singletons_follow_the_values_and_pass_the_engines_validator(helm, tmp_path):
    objs = template(helm, "-f", str(SEED), "--set", "kai.hamiCore.enabled=true",
                    "--set", "globalConfiguration.prometheus.url=https://prom.monitoring.svc:9090",
                    "--set", "globalConfiguration.proactive.recommendationsConfigMap.namespace=kubex",
                    "--set", "globalConfiguration.proactive.recommendationsConfigMap.name=recs",
                    "--set", "image.repository=registry.example.com/kubex,image.tag=1.2.3",
                    "--set", "globalConfiguration.report.idle.smPercent=3",
                    "--set-json", 'globalConfiguration.cost.gpuHourPrices=[{"nodeSelector": {"matchLabels": '
                                  '{"nvidia.com/gpu.product": "Tesla-T4"}}, "price": "0.55", "currency": "EUR"}]')
    gc = one(objs, "GlobalConfiguration", "global-config")["spec"]
    # RPT-2, RPT-3: the report's idle rule and prices (the validator below accepts them).
    assert gc["report"] == {"idle": {"smPercent": 3, "memoryPercent": 10, "minimumGpus": "0.25"}}
    assert gc["cost"] == {"gpuHourPrices": [{"nodeSelector": {"matchLabels": {"nvidia.com/gpu.product": "Tesla-T4"}},
                                             "price": "0.55", "currency": "EUR"}]}
    assert "cost" not in one(template(helm), "GlobalConfiguration")["spec"]  # no prices by default
    assert "price" in template_error(helm, "--set-json", 'globalConfiguration.cost.gpuHourPrices=[{"price": "1,5"}]')
    assert gc["kai"] == {"schedulerName": "kai-scheduler", "memoryIsolation": "HAMiCore",
                         "reservationNamespace": "kai-resource-reservation"}
    # KAI-1, HLM-1: kai.gpuSharingMode renders spec.kai.gpuSharingMode; a mode KAI does not have is refused.
    nv = template(helm, "-f", str(SEED), "--set", "kai.gpuSharingMode=NvFractions")
    assert one(nv, "GlobalConfiguration", "global-config")["spec"]["kai"]["gpuSharingMode"] == "NvFractions"
    assert "gpuSharingMode" in template_error(helm, "-f", str(SEED), "--set", "kai.gpuSharingMode=Fractions")
    assert gc["prometheus"] == {"url": "https://prom.monitoring.svc:9090", "requestTimeout": "30s"}
    assert gc["proactive"] == {"recommendationsConfigMap": {"namespace": "kubex", "name": "recs"},
                               "headroomPercent": 20}
    assert gc["webhookProbe"]["image"] == "registry.example.com/kubex:1.2.3"
    assert one(objs, "Deployment")["spec"]["template"]["spec"]["containers"][0]["image"] == \
        "registry.example.com/kubex:1.2.3"
    assert gc["protectedNamespacePatterns"] == ["kube-*", "openshift-*", "gmp-*"]
    assert (gc["automationEnabled"], gc["gpuReactiveCheckInterval"], gc["recommendationReloadInterval"],
            gc["webhookOwnerResolutionRetryTimeout"]) == (True, "1m", "1h", "1s")
    assert gc["webhookHealth"] == {"failureThreshold": 2, "successThreshold": 3, "transitionCheckInterval": "10s"}
    pe = one(objs, "PolicyEvaluation", "policy-evaluation")["spec"]["precedence"]
    assert pe[0] == {"type": "GpuReactivePolicy", "priority": 120} and len(pe) == 6
    singletons = [o for o in objs if o["kind"] in ("GlobalConfiguration", "PolicyEvaluation")]
    path = tmp_path / "singletons.yaml"
    path.write_text(yaml.safe_dump_all(singletons))
    res = subprocess.run([str(BIN / "kubex"), "validate", "-f", str(path)], capture_output=True, text=True,
                         timeout=30)
    assert res.returncode == 0, res.stdout + res.stderr
    err = template_error(helm, "--set", "globalConfiguration.proactive.recommendationsConfigMap.name=recs")
    assert "both namespace and name are required" in err
    objs = template(helm, "--set", "globalConfiguration.enabled=false,policyEvaluation.enabled=false")
    assert not by_kind(objs, "GlobalConfiguration") and not by_kind(objs, "PolicyEvaluation")
    assert one(template(helm), "GlobalConfiguration")["spec"]["kai"]["memoryIsolation"] == "None"


# --- the rendered objects on an API server ---------------------------------------------------------------------

def test_server_side_dry_run_on_kubex_sim(helm, sim_factory):
    """Every object of the default, the seed and the GPU exporter (TEL-5) renderings whose kind kubex-sim serves is
    accepted by its API server (server-side dry run on a fresh sim with the CRDs). kubex-sim serves no
    rbac.authorization.k8s.io, so the RBAC objects are left to tests/conformance, which dry-runs everything on a real
    kube-apiserver."""
    sim = sim_factory()
    crds = subprocess.run(["kubectl", "kustomize", str(ROOT / "config" / "crd")], capture_output=True, text=True,
                          check=True, timeout=60).stdout
    sim.kubectl("apply", "-f", "-", input=crds)
    wait_for(lambda: sim.kubectl("get", "crd", "globalconfigurations.rightsizing.kubex.ai", "-o",
                                 "jsonpath={.status.conditions[?(@.type=='Established')].status}").stdout == "True",
             what="the CRDs to be established")
    sim.kubectl("create", "namespace", NS)
    served = set(_api_resources(sim))
    for extra in ([], ["-f", str(SEED)], ON,  # TEL-5: the exporter's DaemonSet, Service and ServiceAccount too
                  [*ON, *HOST_DRIVER, "--set", "gpuExporter.driver.hostDriverRoot=/run/nvidia/driver"]):
        objs = template(helm, *extra)
        kept = [o for o in objs if (o["apiVersion"], o["kind"]) in served]
        skipped = {o["kind"] for o in objs} - {o["kind"] for o in kept}
        assert skipped <= {"ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"}, skipped
        out = sim.kubectl("apply", "--dry-run=server", "-f", "-", input=yaml.safe_dump_all(kept), check=False)
        assert out.returncode == 0, out.stdout + out.stderr
        assert out.stdout.count("(server dry run)") == len(kept), out.stdout


def _api_resources(sim):
    """(apiVersion, kind) of every resource the API server lists in discovery."""
    pairs = []
    for gv_path in ["/api/v1"] + [f"/apis/{v['groupVersion']}" for g in
                                   json.loads(sim.kubectl("get", "--raw", "/apis").stdout)["groups"]
                                   for v in g["versions"]]:
        doc = json.loads(sim.kubectl("get", "--raw", gv_path).stdout)
        pairs += [(doc["groupVersion"], r["kind"]) for r in doc["resources"] if "/" not in r["name"]]
    return pairs


# --- kustomize (config/) ---------------------------------------------------------------------------------------

def test_kustomize_bases_are_generated_from_the_chart(helm):
    res = subprocess.run([sys.executable, str(ROOT / "scripts" / "gen-kustomize.py"), "--check", "--helm", helm],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    for base in ("crd", "rbac", "webhook", "manager", "default", "kai"):
        out = subprocess.run(["kubectl", "kustomize", str(ROOT / "config" / base)], capture_output=True, text=True,
                             timeout=60)
        assert out.returncode == 0, (base, out.stderr)


# --- helm install on kubex-sim -----------------------------------------------------------------------------------

def test_helm_install_and_an_upgrade_keep_the_chart_generated_certificate(helm, sim_factory):
    """`helm install` of both charts on kubex-sim (rbac.create=false: the sim serves no RBAC API; tests/conformance
    installs the RBAC on a real kube-apiserver), then `helm upgrade --dry-run=server`: the upgrade renders the
    Secret and caBundles of the installed release (lookup), not a new CA, so an upgrade never breaks TLS."""
    sim = sim_factory()
    # helm 4 applies server-side by default (kubex-sim serves server-side apply since issue 34 item 5).
    kube = ["--kubeconfig", sim.kubeconfig]
    res = run_helm(helm, "install", "kubex-crds", str(ROOT / "charts" / "kubex-crds"), *kube, "--wait",
                   "--timeout", "60s")
    assert res.returncode == 0, res.stderr
    values = ["-f", str(SEED), "--set", "rbac.create=false"]
    res = run_helm(helm, "install", RELEASE, str(CHART), *kube, "-n", NS, "--create-namespace", *values)
    assert res.returncode == 0, res.stderr
    assert "early pod mutation  000-kubex-mutating-webhook-configuration" in res.stdout  # NOTES
    assert "WARNING: the rightsizing.kubex.ai/v1alpha1 CRDs were not found" not in res.stdout
    secret = sim.kubectl_json("get", "secret", "-n", NS, f"{RELEASE}-webhook-server-cert")
    early = sim.kubectl_json("get", "mutatingwebhookconfiguration", EARLY)
    assert early["webhooks"][0]["clientConfig"]["caBundle"] == secret["data"]["ca.crt"]
    gc = sim.kubectl_json("get", "globalconfigurations.rightsizing.kubex.ai", "global-config")
    assert gc["spec"]["webhookProbe"]["image"] == "kubex-automation-engine:0.1.0"
    assert sim.kubectl_json("get", "deployment", "-n", NS, RELEASE)["spec"]["template"]["spec"][
        "containers"][0]["args"][:2] == [f"--namespace={NS}", "--leader-elect=true"]
    res = run_helm(helm, "upgrade", RELEASE, str(CHART), *kube, "-n", NS, *values, "--dry-run=server")
    assert res.returncode == 0, res.stderr
    manifest = res.stdout.split("MANIFEST:", 1)[1].split("NOTES:", 1)[0]
    rendered = [d for d in yaml.safe_load_all(manifest) if d]
    assert one(rendered, "Secret")["data"] == secret["data"]
    for cfg in by_kind(rendered, "MutatingWebhookConfiguration").values():
        assert cfg["webhooks"][0]["clientConfig"]["caBundle"] == secret["data"]["ca.crt"]
    # A real upgrade applies the webhook configurations (server-side apply, webhooks merged by name).
    res = run_helm(helm, "upgrade", RELEASE, str(CHART), *kube, "-n", NS, *values, "--set", "webhook.timeoutSeconds=5")
    assert res.returncode == 0, res.stderr
    early = sim.kubectl_json("get", "mutatingwebhookconfiguration", EARLY)
    assert [w["timeoutSeconds"] for w in early["webhooks"]] == [5] * len(early["webhooks"]), early
    assert early["webhooks"][0]["clientConfig"]["caBundle"] == secret["data"]["ca.crt"]
    # helm uninstall removes the release's objects and says so without an error (kubex-sim once refused the
    # DeleteOptions body helm sends).
    res = run_helm(helm, "uninstall", RELEASE, *kube[:2], "-n", NS, "--wait", "--timeout", "60s")
    assert res.returncode == 0 and not res.stderr.strip(), res.stderr
    assert f'release "{RELEASE}" uninstalled' in res.stdout, res.stdout
    gone = sim.kubectl("get", "mutatingwebhookconfiguration", EARLY, check=False)
    assert gone.returncode != 0 and "NotFound" in gone.stderr, gone.stdout
    assert sim.kubectl("get", "deployment", "-n", NS, RELEASE, check=False).returncode != 0


def install_md_sim_commands():
    """The helm and `kubectl get` commands of docs/install.md's "Try it on kubex-sim first" block, as written."""
    text = (ROOT / "docs" / "install.md").read_text()
    block = text.split("## Try it on kubex-sim first", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    cmds, cur = [], ""
    for line in block.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        cur += line.removesuffix("\\").strip() + " "
        if not line.endswith("\\"):
            cmds.append(cur.strip())
            cur = ""
    return [c for c in cmds if c.startswith("helm ") or c.startswith("kubectl get ")]


def test_install_md_helm_commands_on_kubex_sim(helm, sim_factory):
    """docs/install.md's "Try it on kubex-sim first" helm commands, exactly as written, with the project's helm 4
    and its default server-side apply (issue 34 item 5: they once failed with `server-side apply not available on
    the server`), then again (an upgrade of an unchanged release); the charts' objects exist afterwards."""
    import shlex

    sim = sim_factory()
    cmds = install_md_sim_commands()
    assert [c.split()[:3] for c in cmds[:2]] == [["helm", "upgrade", "--install"]] * 2, cmds
    env = {**os.environ, "KUBECONFIG": sim.kubeconfig}
    for attempt in range(2):
        for cmd in cmds:
            argv = shlex.split(cmd, comments=True)
            argv[0] = helm if argv[0] == "helm" else argv[0]
            res = subprocess.run(argv, capture_output=True, text=True, timeout=180, cwd=ROOT, env=env)
            assert res.returncode == 0, f"{cmd} (run {attempt + 1}):\n{res.stdout}\n{res.stderr}"
            assert "server-side apply" not in res.stderr, res.stderr
    assert sim.kubectl_json("get", "crd", "globalconfigurations.rightsizing.kubex.ai")["status"]["conditions"]
    assert len(sim.kubectl_json("get", "crd", "-l", "app.kubernetes.io/part-of=kubex")["items"]) >= 11
    assert sim.kubectl_json("get", "globalconfigurations.rightsizing.kubex.ai", "global-config")["metadata"]["name"]
    assert sim.kubectl_json("get", "mutatingwebhookconfiguration", EARLY)["webhooks"]
    assert sim.kubectl_json("get", "validatingwebhookconfiguration", VALIDATING)["webhooks"]
    dep = sim.kubectl_json("get", "deployment", "-n", NS, RELEASE, "--show-managed-fields")
    assert ("helm", "Apply") in {(e["manager"], e["operation"]) for e in dep["metadata"]["managedFields"]}
