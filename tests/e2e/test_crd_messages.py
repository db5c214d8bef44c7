"""API-2, VAL-1, VAL-4 (issue 12, item 5): with no engine running (so no validating webhook), the FIRST
`kubectl apply` of a bad object already shows every error `kubex validate` reports for it, with the same path
and the same text. The CRD schema carries the VAL-4 messages as CEL rules (reason FieldValueForbidden, or
FieldValueRequired for "required"), so kube-apiserver prints `<path>: Forbidden: <message>` or
`<path>: Required value: required`. Errors below a container-name map are one line on the map whose text lists
them as `<path>: <message>` (CEL would print `containers[app]`). The OpenAPI wording, `Invalid value: "object":`
and the `<nil>: Invalid value: null: some validation rules were not checked` line never appear."""
import json
import re
import subprocess

import pytest

from conftest import BIN
from engine_proc import GROUP, install_crds

KUBEX = str(BIN / "kubex")

CLUSTER_STRATEGY = """apiVersion: rightsizing.kubex.ai/v1alpha1
kind: ClusterAutomationStrategy
metadata: {name: msg-strategy}
spec:
  experimental: {gpuKaiContract: none}
  enablement:
    overrideScheduler: kai
    gpu:
      requests:
        floor: "0.5"
        ceiling: "0.25"
        containers:
          app: {ceiling: "0"}
          sidecar: {floor: abc}
    memory: {limits: {floor: 2Gi, ceiling: 1Gi}}
  kai: {queue: Team_A, vllm: {gpuMemoryUtilizationBufferPercent: 101}}
  safetyChecks: {resizeRetryInterval: 10 minutes, minReadyDuration: -1s, minCpuChangePercent: -1}
  scheduling:
    inclusionWindows:
    - {start: "9:00", end: "17:00", weekdays: [Funday, Mon]}
    - {start: "10:00", end: "10:00"}
"""

REACTIVE = """apiVersion: rightsizing.kubex.ai/v1alpha1
kind: ClusterGpuReactivePolicy
metadata: {name: msg-reactive}
spec:
  experimental: {gpuKaiContract: v1alpha1-2026-04}
  automationStrategyRef: {name: ""}
  scope:
    namespaceSelector: {operator: Has, values: []}
    workloadTypes: [Deployment, Job, Deployment]
  weight: -1
  minPodMetricsAge: 30s
  metrics:
    compute:
      prometheus: {metric: 1bad, interpretation: halfGPU, namespaceLabel: my-ns, podLabel: pod}
      upsize: {thresholdPercent: 0, metricsWindow: 10 minutes, maxPercent: 0}
      scaleBack: {metricsWindow: 59s, headroomPercent: -5}
"""

STATIC = """apiVersion: rightsizing.kubex.ai/v1alpha1
kind: StaticPolicy
metadata: {name: msg-static, namespace: default}
spec:
  resources:
    containers:
      app:
        requests: {cpu: lots, gpu: "0", nvidia.com/gpu: 1}
        limits: {gpu: "0", memory: "-1"}
      "*":
        requests: {memory: 1Gi}
"""

CONSOLIDATION = """apiVersion: rightsizing.kubex.ai/v1alpha1
kind: GpuConsolidationPolicy
metadata: {name: msg-consolidation}
spec:
  nodeSelector:
    matchExpressions:
    - {key: pool, operator: In}
    - {key: "", operator: Exists, values: [a]}
  utilizationThresholdPercent: 0
  requeueAfter: 500ms
"""

SINGLETONS = """apiVersion: rightsizing.kubex.ai/v1alpha1
kind: PolicyEvaluation
metadata: {name: precedence}
spec:
  precedence:
  - {type: StaticPolicy, priority: 90}
  - {type: ProactivePolicy}
  - {type: StaticPolicy, priority: -1}
"""

GLOBAL = """apiVersion: rightsizing.kubex.ai/v1alpha1
kind: GlobalConfiguration
metadata: {name: global-config}
spec:
  prometheus: {url: "prometheus:9090", requestTimeout: 0s}
  kai: {memoryIsolation: HAMi, schedulerName: ""}
  proactive: {recommendationsConfigMap: {namespace: kubex}, headroomPercent: 101}
  gpuReactiveCheckInterval: 30s
  webhookOwnerResolutionRetryTimeout: 6s
  webhookHealth: {failureThreshold: 0}
"""

NOISE = "some validation rules were not checked"


@pytest.fixture(scope="module")
def crds(sim):
    install_crds(sim)
    return sim


def validator_errors(tmp_path, text):
    """`kubex validate -f FILE`: the (path, message) pairs of the one object in `text`, checked against the
    text lines it prints (`<file>:<n>: <Kind>/<name>: <path>: <message>`)."""
    f = tmp_path / "bad.yaml"
    f.write_text(text)
    res = subprocess.run([KUBEX, "validate", "-f", str(f), "-o", "json"], capture_output=True, text=True,
                         timeout=60)
    assert res.returncode == 1, res.stdout + res.stderr
    docs = json.loads(res.stdout)["documents"]
    assert len(docs) == 1, docs
    errors = [(e["path"], e["message"]) for e in docs[0]["errors"]]
    assert len(errors) >= 3, errors
    lines = subprocess.run([KUBEX, "validate", "-f", str(f)], capture_output=True, text=True, timeout=60).stderr
    label = f"{docs[0]['kind']}/{docs[0]['name']}: "
    for path, message in errors:
        assert f"{path}: {message}" in lines and label in lines, lines
    return errors


def apply_lines(sim, text):
    """The error lines of a first `kubectl apply` (one object), as (field, text after the field)."""
    res = sim.kubectl("apply", "-f", "-", input=text, check=False)
    assert res.returncode != 0, res.stdout
    out = res.stderr.strip()
    head, _, rest = out.partition(" is invalid: ")
    assert rest, out
    causes = [c[2:] for c in rest.splitlines() if c.startswith("* ")] if rest.startswith("\n") or \
        "\n* " in rest else [rest]
    lines = []
    for cause in causes:
        field, _, body = cause.partition(": ")
        lines.append((field, body))
    return out, lines


def unmatched(errors, lines):
    """What differs between the validator's errors and the apply lines (see the module docstring)."""
    expected = list(errors)
    problems = []
    for field, body in lines:
        detail = re.sub(r"^(Forbidden|Required value): ", "", body)
        if detail == body:
            problems.append(f"not a VAL-4 line: {field}: {body}")
            continue
        if (field, detail) in expected:
            expected.remove((field, detail))
            continue
        rest, used = detail, []
        for path, message in expected:
            item = f"{path}: {message}"
            if (path.startswith(field + ".") or path.startswith(field + "[")) and item in rest:
                rest = rest.replace(item, "", 1)
                used.append((path, message))
        if used and not rest.replace(";", "").strip():
            for u in used:
                expected.remove(u)
        else:
            problems.append(f"unexpected line: {field}: {body}")
    problems += [f"missing on the first apply: {p}: {m}" for p, m in expected]
    return problems


@pytest.mark.parametrize("text", [CLUSTER_STRATEGY, REACTIVE, STATIC, CONSOLIDATION, SINGLETONS, GLOBAL],
                         ids=["strategy", "reactive", "static", "consolidation", "singleton", "global-config"])
def test_first_apply_shows_every_validator_error_with_its_path_and_text(crds, tmp_path, text):  # API-2, VAL-4
    errors = validator_errors(tmp_path, text)
    out, lines = apply_lines(crds, text)
    assert NOISE not in out and "<nil>" not in out, out
    assert " in body " not in out and 'Invalid value: "object"' not in out, out
    assert unmatched(errors, lines) == [], out
    kind = re.search(r"^kind: (\w+)$", text, re.M).group(1)
    name = re.search(r"metadata: {name: ([\w-]+)", text).group(1)
    ns = ["-n", "default"] if "namespace: default" in text else []
    assert crds.kubectl("get", f"{kind.lower()}.{GROUP}", name, *ns, check=False).returncode != 0


def test_errors_below_container_maps_name_the_validators_path(crds, tmp_path):  # VAL-4 static GPU
    out, lines = apply_lines(crds, STATIC)
    assert "containers[app]" not in out, out
    assert ("spec.resources.containers", "Forbidden: spec.resources.containers.app.requests.cpu: must be a valid "
            "quantity; spec.resources.containers.app.requests.gpu: must be > 0; spec.resources.containers.app."
            "requests.nvidia.com/gpu: must be one of cpu, memory, gpu; spec.resources.containers.app.limits.gpu: "
            "must be > 0; spec.resources.containers.app.limits.memory: must be >= 0") in lines, out
    assert ("spec.automationStrategyRef.name", "Required value: required") in lines, out


def test_a_fixed_object_is_accepted(crds):  # API-2: the schema refuses only what the validator refuses
    fixed = STATIC.replace("cpu: lots, gpu: \"0\", nvidia.com/gpu: 1", "cpu: 250m, gpu: \"0.5\"") \
        .replace("limits: {gpu: \"0\", memory: \"-1\"}", "limits: {memory: 1Gi}") \
        .replace("spec:\n", "spec:\n  automationStrategyRef: {name: s}\n", 1)
    res = subprocess.run([KUBEX, "validate", "-f", "-"], input=fixed, capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    crds.kubectl("apply", "-f", "-", input=fixed)
    crds.kubectl("delete", f"staticpolicies.{GROUP}", "msg-static", "-n", "default")


def test_an_object_beyond_a_schema_bound_is_refused_by_both(crds, tmp_path):  # issue 16, gen-crds.py BOUNDS
    # Kubernetes' wording on the schema side (as kube-apiserver: tests/conformance/test_crds.py), the
    # validator's on the same path; docs/kubex-sim.md "Differences from kube-apiserver".
    kinds = ", ".join(["Deployment"] * 65)
    text = ("apiVersion: rightsizing.kubex.ai/v1alpha1\nkind: StaticPolicy\nmetadata: {name: bound, namespace: default}\n"
            f"spec:\n  automationStrategyRef: {{name: s}}\n  scope: {{workloadTypes: [{kinds}]}}\n")
    f = tmp_path / "bound.yaml"
    f.write_text(text)
    res = subprocess.run([KUBEX, "validate", "-f", str(f)], capture_output=True, text=True, timeout=60)
    assert res.returncode == 1 and "spec.scope.workloadTypes: must have at most 64 items" in res.stderr, res.stderr
    out, lines = apply_lines(crds, text)
    assert ("spec.scope.workloadTypes", "Too many: 65: must have at most 64 items") in lines, out


NINE_BAD_CONTAINERS = "".join(f"\n      c{i}: {{requests: {{cpu: lots}}}}" for i in range(9))
MANY_ERRORS = ("apiVersion: rightsizing.kubex.ai/v1alpha1\nkind: StaticPolicy\n"
               "metadata: {name: many, namespace: default}\n"
               "spec:\n  automationStrategyRef: {name: s}\n  resources:\n    containers:" + NINE_BAD_CONTAINERS + "\n")


def many_errors_line(lines):
    """The container-map line of MANY_ERRORS: the validator reports 9 errors, the schema's message names 8
    (gen-crds.py MESSAGE_TERMS; docs/kubex-sim.md "Differences from kube-apiserver")."""
    [body] = [b for f, b in lines if f == "spec.resources.containers"]
    items = body.removeprefix("Forbidden: ").split("; ")
    assert len(items) == 8, body
    assert all(re.fullmatch(r"spec\.resources\.containers\.c[0-8]\.requests\.cpu: must be a valid quantity", i)
               for i in items), body
    return items


def test_a_container_map_message_names_at_most_8_errors(crds, tmp_path):
    errors = [(p, m) for p, m in validator_errors(tmp_path, MANY_ERRORS) if p.startswith("spec.resources")]
    assert len(errors) == 9, errors
    out, lines = apply_lines(crds, MANY_ERRORS)
    assert many_errors_line(lines) == [f"{p}: {m}" for p, m in errors[:8]], out


UNQUOTED = """apiVersion: rightsizing.kubex.ai/v1alpha1
kind: StaticPolicy
metadata: {name: unquoted, namespace: default}
spec:
  automationStrategyRef: {name: s}
  resources:
    containers:
      app:
        requests: {gpu: 0.5, cpu: 1}
"""


def test_an_unquoted_decimal_is_refused_by_both_and_the_validator_says_to_quote_it(crds, tmp_path):  # GPU-3, VAL-4
    # GPU-3: quantities are int-or-string, so YAML's number 0.5 is refused: by the schema in Kubernetes' own words
    # (a type error, as kube-apiserver), by `kubex validate` with the fix (issue 26). A whole number is fine.
    f = tmp_path / "unquoted.yaml"
    f.write_text(UNQUOTED)
    res = subprocess.run([KUBEX, "validate", "-f", str(f)], capture_output=True, text=True, timeout=60)
    assert res.returncode == 1, res
    assert res.stderr.splitlines() == [
        f'{f}:1: StaticPolicy/unquoted: spec.resources.containers.app.requests.gpu: must be a quantity string, '
        'e.g. "0.5" (quote the number)'], res.stderr
    out, lines = apply_lines(crds, UNQUOTED)
    assert [f for f, _ in lines if f != "<nil>"] == ["spec.resources.containers.app.requests.gpu"], out
    assert 'must be of type integer,string: "number"' in out, out
    quoted = UNQUOTED.replace("gpu: 0.5", 'gpu: "0.5"')
    res = subprocess.run([KUBEX, "validate", "-f", "-"], input=quoted, capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    crds.kubectl("apply", "-f", "-", input=quoted)
    crds.kubectl("delete", f"staticpolicies.{GROUP}", "unquoted", "-n", "default")
