"""The conformance lane's own control plane (scripts/control-plane.sh): what a user of it sees first."""
import json
import re

from conftest import ROOT


def pinned_kubernetes_version():
    m = re.search(r"^\s*k8s\.io/kubernetes (v\d+\.\d+\.\d+)\s*$", (ROOT / "tools" / "go.mod").read_text(), re.M)
    assert m, "tools/go.mod pins no k8s.io/kubernetes version"
    return m.group(1)


def test_kubectl_version_succeeds_and_reports_the_pinned_kube_apiserver(cp):  # issue 34 item 9: version ldflags
    # Built without the version ldflags, kube-apiserver reports v0.0.0-master+$Format:%H$ and `kubectl version`
    # exits 1 (it cannot parse that version).
    res = cp.kubectl("version", check=False)
    assert res.returncode == 0, res.stderr
    server = json.loads(cp.kubectl("version", "-o", "json").stdout)["serverVersion"]
    want = pinned_kubernetes_version()
    assert server["gitVersion"] == want, server
    assert (server["major"], server["minor"]) == tuple(want[1:].split(".")[:2]), server
