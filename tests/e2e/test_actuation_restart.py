"""ACT-9 end to end (issue 27 items 2 and 3): the ACT-5 "do not retry" record survives an engine restart. A PDB
refuses a resize under a strategy with `retryPodDisruptionBudget: false`; the refusal is kept on the owner in
`rightsizing.kubex.ai/actuation-state`; a new engine process (a restart, as a new leader would) reads it and does not
evict that pod again, over a window longer than its one-minute requeue and after its webhook turned healthy; the record
goes when its pod does. kubex-sim with its GPU model, a real Prometheus and the engine with its webhooks."""
import json
import time

from conftest import wait_for, webhook_health
from test_actuation import SIM_CONFIG, events, start_evicting_engine, static_policy  # noqa: F401 (SIM_CONFIG)
from test_reactive import API, apply, kai_deployment, metric, running, start_engine

NS = "act-restart"
STATE = "rightsizing.kubex.ai/actuation-state"


def actuation_state(sim):
    v = sim.kubectl_json("get", "deployment", "infer", "-n", NS)["metadata"].get("annotations", {}).get(STATE)
    return json.loads(v) if v else None


def refusals(sim):
    """EvictionBlocked events of the namespace, each counted as often as the API server aggregated it."""
    return sum(e.get("count", 1) for e in events(sim, NS, "EvictionBlocked"))


def test_pdb_refusal_is_not_retried_after_a_restart(sim_factory, tmp_path):  # ACT-9, ACT-5, ENG-1
    sim, prom, engine = start_evicting_engine(sim_factory, tmp_path)
    try:
        sim.kubectl("create", "namespace", NS)
        strategy = {"apiVersion": API, "kind": "ClusterAutomationStrategy", "metadata": {"name": "act-restart"},
                    "spec": {"experimental": {"gpuKaiContract": "v1alpha1-2026-07"},
                             "enablement": {"overrideScheduler": "kai",
                                            "gpu": {"requests": {"upsize": True, "downsize": True, "ceiling": "1"}}},
                             "podEviction": {"enabled": True, "retryPodDisruptionBudget": False}}}
        apply(sim, strategy, {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                              "metadata": {"name": "infer", "namespace": NS},
                              "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "infer"}}}})
        d = kai_deployment("infer", NS, "0.25", "5", "1024", "g-node-6")
        d["metadata"]["labels"].pop("nvidia.com/gpu.present")  # only the static policy below manages it
        apply(sim, d)
        pod = wait_for(lambda: (r := running(sim, NS)) and len(r) == 1 and r[0], timeout=60, what="the pod running")
        uid = pod["metadata"]["uid"]
        apply(sim, static_policy("act-restart", NS, "0.5", strategy="act-restart"))
        engine.wait_line("rightsizing summary", phase="actuation", namespace=NS, rightsizingResult="BLOCKED",
                         timeout=90)
        # ACT-9: the refusal is on the owner, keyed by the pod it refused.
        state = wait_for(lambda: (s := actuation_state(sim)) and uid in s.get("pdbBlocked", {}) and s, timeout=30,
                         interval=0.5, what=f"{STATE} with the refused pod")
        refused = refusals(sim)
        assert refused >= 1

        engine.stop()  # a restart: the new process has no memory but the owner's
        engine = start_engine(sim)
        wait_for(lambda: webhook_health(sim) == "True", timeout=90, interval=1,
                 what="PodAdmissionWebhookHealthy=True again")
        line = engine.wait_line("rightsizing summary", phase="actuation", namespace=NS, rightsizingResult="BLOCKED",
                                timeout=60)
        assert "pdb-blocked" in line["failedChecks"], line  # it remembered, and says why
        # Over more than one requeue (1 minute) with the webhook healthy: no eviction sent, no new refusal, the
        # record unchanged. Cumulative counters read throughout, so a retry at any moment shows.
        deadline = time.monotonic() + 70
        while time.monotonic() < deadline:
            assert metric(engine, "kubex_evictions_total", reason="resize") == 0, engine.output()
            assert refusals(sim) == refused
            time.sleep(2)
        assert actuation_state(sim) == state
        assert [p["metadata"]["uid"] for p in running(sim, NS)] == [uid]

        # The record goes when its pod does: the replacement is admitted at 0.5, and nothing is left to remember.
        sim.kubectl("delete", "pod", pod["metadata"]["name"], "-n", NS, "--wait=false")
        wait_for(lambda: [p for p in running(sim, NS)
                          if p["metadata"].get("annotations", {}).get("gpu-fraction") == "0.5"],
                 timeout=90, interval=0.5, what="the replacement at 0.5")
        wait_for(lambda: actuation_state(sim) is None, timeout=90, interval=1, what=f"{STATE} removed")
    finally:
        engine.stop()
        prom.stop()
