"""API-1, API-2, VAL-4 on a real kube-apiserver: the CRDs of charts/kubex-crds as shipped, the seed's examples, and
the invalid objects of tests/e2e/test_crd_messages.py (reused, not copied).

Issue 16: kube-apiserver v1.37 used to refuse the shipped CRDs (root `metadata` description, member `.sign()`,
an undeclared `.metadata.name` fieldPath, CEL cost over budget); scripts/gen-crds.py now writes CRDs it accepts
(BOUNDS and first_terms there), so the engine tests install them as shipped, CEL rules included, and with no
webhook registered the schema alone refuses the invalid objects with the validator's paths and texts."""
import pytest

import test_crd_messages as msgs
from conftest import GROUP, ROOT, crd_manifests

INVALID = [msgs.CLUSTER_STRATEGY, msgs.REACTIVE, msgs.STATIC, msgs.CONSOLIDATION, msgs.SINGLETONS, msgs.GLOBAL]
IDS = ["strategy", "reactive", "static", "consolidation", "singleton", "global-config"]


def test_shipped_crds_are_accepted_by_kube_apiserver(cp):  # API-1, API-2
    res = cp.kubectl("apply", "--server-side", "--dry-run=server", "-f", "-", input=crd_manifests(), check=False,
                     timeout=300)
    refused = [l[:300] for l in res.stderr.splitlines() if l.startswith("Error from server")]
    assert res.returncode == 0 and not refused, "\n".join(refused)


def test_crds_are_established_and_served(crds):  # API-1
    resources = crds.kubectl("api-resources", f"--api-group={GROUP}", "-o", "name").stdout.split()
    assert len(resources) == 11, resources
    crd = crds.kubectl_json("get", "crd", f"clustergpureactivepolicies.{GROUP}")
    assert [v["name"] for v in crd["spec"]["versions"]] == ["v1alpha1"]
    assert "status" in crd["spec"]["versions"][0]["subresources"]


def test_seed_examples_are_accepted(crds):  # API-2: the schema refuses only what the validator refuses
    for f in ("kai-gpu-sharing.yaml", "gpu-consolidation.yaml"):
        res = crds.kubectl("apply", "--dry-run=server", "-f", str(ROOT / "examples" / f))
        assert "created" in res.stdout or "configured" in res.stdout or "unchanged" in res.stdout, res.stdout


def dry_run_apply_lines(cp, text):
    """msgs.apply_lines with --dry-run=server: nothing invalid is stored when the schema lets it through."""
    class DryRun:
        def kubectl(self, *args, **kw):
            return cp.kubectl(*args, "--dry-run=server", **kw)
    return msgs.apply_lines(DryRun(), text)


@pytest.mark.parametrize("text", INVALID, ids=IDS)
def test_real_apiserver_refuses_invalid_objects_without_the_webhook(crds, tmp_path, text):  # API-2, VAL-4
    # Runs before test_engine.py registers any webhook: only the CRD schema answers.
    assert crds.kubectl("get", "validatingwebhookconfigurations", "-o", "name").stdout.strip() == ""
    errors = msgs.validator_errors(tmp_path, text)
    out, lines = dry_run_apply_lines(crds, text)
    assert msgs.NOISE not in out and "<nil>" not in out, out
    assert msgs.unmatched(errors, lines) == [], out


def test_real_apiserver_refuses_objects_beyond_a_bound(crds, tmp_path):  # issue 16, gen-crds.py BOUNDS
    # The maxItems kube-apiserver's CEL cost estimate needs: Kubernetes' own wording on the schema side, the
    # validator's "must have at most 64 items" on the same path (docs/kubex-sim.md "Differences from
    # kube-apiserver").
    kinds = ", ".join(["Deployment"] * 65)
    text = ("apiVersion: rightsizing.kubex.ai/v1alpha1\nkind: StaticPolicy\nmetadata: {name: bound, namespace: default}\n"
            f"spec:\n  automationStrategyRef: {{name: s}}\n  scope: {{workloadTypes: [{kinds}]}}\n")
    f = tmp_path / "bound.yaml"
    f.write_text(text)
    res = msgs.subprocess.run([msgs.KUBEX, "validate", "-f", str(f)], capture_output=True, text=True, timeout=60)
    assert res.returncode == 1 and "spec.scope.workloadTypes: must have at most 64 items" in res.stderr, res.stderr
    out, lines = dry_run_apply_lines(crds, text)
    assert ("spec.scope.workloadTypes", "Too many: 65: must have at most 64 items") in lines, out


def test_real_apiserver_container_map_message_names_8_errors(crds, tmp_path):  # gen-crds.py MESSAGE_TERMS
    errors = [(p, m) for p, m in msgs.validator_errors(tmp_path, msgs.MANY_ERRORS) if p.startswith("spec.resources")]
    assert len(errors) == 9, errors
    out, lines = dry_run_apply_lines(crds, msgs.MANY_ERRORS)
    assert set(msgs.many_errors_line(lines)) <= {f"{p}: {m}" for p, m in errors}, out  # any 8: map order


def test_real_apiserver_refuses_an_unquoted_decimal_as_kubex_sim_does(crds, tmp_path):  # GPU-3, VAL-4
    # int-or-string quantities: kube-apiserver refuses YAML's number 0.5 with its type error on the validator's path
    # (kubex-sim: test_crd_messages.py), and `kubex validate` says to quote it.
    out, lines = dry_run_apply_lines(crds, msgs.UNQUOTED)
    assert [f for f, _ in lines if f != "<nil>"] == ["spec.resources.containers.app.requests.gpu"], out
    assert 'must be of type integer,string: "number"' in out, out
    res = msgs.subprocess.run([msgs.KUBEX, "validate", "-f", "-"], input=msgs.UNQUOTED, capture_output=True,
                              text=True, timeout=60)
    assert res.returncode == 1 and 'must be a quantity string, e.g. "0.5" (quote the number)' in res.stderr, res
