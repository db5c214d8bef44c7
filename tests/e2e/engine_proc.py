"""Helpers for e2e tests that run `kubex engine` against kubex-sim: the engine process with its JSON log lines,
the rightsizing.kubex.ai CRDs from config/crd, global-config, its conditions and its events."""
import json
import subprocess

from conftest import ROOT, EngineProcess, wait_for

GROUP = "rightsizing.kubex.ai"


class Engine(EngineProcess):
    """A `kubex engine` process without leader election (namespace `default` unless told otherwise)."""

    def __init__(self, kubeconfig, *extra, namespace="default"):
        super().__init__(kubeconfig, namespace, extra, leader_elect=False)


def install_crds(sim):
    res = subprocess.run(["kubectl", "kustomize", str(ROOT / "config" / "crd")], capture_output=True, text=True,
                         check=True, timeout=60)
    sim.kubectl("apply", "-f", "-", input=res.stdout)
    wait_for(lambda: sim.kubectl("get", "crd", f"globalconfigurations.{GROUP}", "-o",
                                 "jsonpath={.status.conditions[?(@.type=='Established')].status}").stdout == "True",
             what="the GlobalConfiguration CRD to be established")


def apply_global_config(sim, spec):
    obj = {"apiVersion": f"{GROUP}/v1alpha1", "kind": "GlobalConfiguration", "metadata": {"name": "global-config"},
           "spec": spec}
    sim.kubectl("apply", "-f", "-", input=json.dumps(obj))


def global_config(sim):
    return sim.kubectl_json("get", f"globalconfigurations.{GROUP}", "global-config")


def condition(obj, ctype):
    return next((c for c in obj.get("status", {}).get("conditions", []) if c.get("type") == ctype), None)


def condition_is(sim, ctype, status, reason):
    """The condition when it has `status`/`reason` (for wait_for), else None."""
    c = condition(global_config(sim), ctype)
    return c if c and c["status"] == status and c["reason"] == reason else None


def global_config_events(sim, reason):
    items = sim.kubectl_json("get", "events", "-n", "default", "--field-selector",
                             "involvedObject.name=global-config")["items"]
    return [e for e in items if e.get("reason") == reason and e["involvedObject"].get("kind") == "GlobalConfiguration"]
