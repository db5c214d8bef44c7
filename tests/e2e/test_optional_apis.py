"""The engine and optional APIs that are not installed (Argo Rollouts, Strimzi, KubeAI, KAI): issue 34 item 9 counted
about 18 `404 GET`/min, each absent resource listed again every 10 s by its informer. They are found through API
discovery instead: one shared look at it per interval, and no LIST of an absent resource after the first. Counted with
kubex-sim's request log (--log-level debug: one `request` line per request)."""
import json

from conftest import EngineProcess, ROOT, wait_for

ABSENT = ["/apis/argoproj.io/v1alpha1/rollouts", "/apis/argoproj.io/v1alpha1/analysisruns",
          "/apis/core.strimzi.io/v1beta2/strimzipodsets"]
ROLLOUTS_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "rollouts.argoproj.io"},
    "spec": {"group": "argoproj.io", "scope": "Namespaced",
             "names": {"plural": "rollouts", "singular": "rollout", "kind": "Rollout", "listKind": "RolloutList"},
             "versions": [{"name": "v1alpha1", "served": True, "storage": True,
                           "schema": {"openAPIV3Schema": {"type": "object",
                                                          "x-kubernetes-preserve-unknown-fields": True}}}]}}


def requests(sim):
    out = []
    for line in sim.log_path.read_text(errors="replace").splitlines():
        try:
            doc = json.loads(line)
        except ValueError:
            continue
        if doc.get("msg") == "request":
            out.append((doc["verb"], doc["path"], doc["code"]))
    return out


def lists_of(reqs, path):
    return [r for r in reqs if r[0] == "GET" and r[1] == path]


def test_absent_optional_apis_are_not_polled_per_informer(sim_factory):  # issue 34 item 9; SEL-1 optional owners
    sim = sim_factory(extra_args=["--no-cluster", "--log-level", "debug"])
    sim.kubectl("apply", "-k", str(ROOT / "config" / "crd"))
    sim.kubectl("create", "namespace", "kubex")
    engine = EngineProcess(sim.kubeconfig, "kubex", leader_elect=False)
    try:
        engine.wait_ready(timeout=120)
        for path in ABSENT:
            engine.wait_line("resource not served; waiting for it to appear", timeout=60, path=path)
        # The window: three more looks at discovery by the engine after every absent informer had its first 404.
        start = len(lists_of(requests(sim), "/apis"))
        wait_for(lambda: len(lists_of(requests(sim), "/apis")) >= start + 3, timeout=240, interval=2,
                 what="three looks at API discovery")
        reqs = requests(sim)
        for path in ABSENT:
            listed = lists_of(reqs, path)
            assert len(listed) == 1 and listed[0][2] == 404, (path, listed)
        # Installed later, an optional API is found at the next look at discovery and listed.
        sim.kubectl("apply", "-f", "-", input=json.dumps(ROLLOUTS_CRD))
        engine.wait_line("resource served again", timeout=120, path=ABSENT[0])
    finally:
        engine.stop()
