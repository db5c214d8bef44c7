"""ACT-9 end to end (issue 27 items 2 and 3): the ACT-5 "do not retry" record survives an engine restart. A PDB
refuses a resize under a strategy with `retryPodDisruptionBudget: false`; the refusal is kept on the owner in
`rightsizing.kubex.ai/actuation-state`; a new engine process (a restart, as a new leader would) reads it and does not
evict that pod again, over a window longer than its one-minute requeue and after its webhook turned healthy; the record
goes when its pod does. kubex-sim with its GPU model, a real Prometheus and the engine with its webhooks.

"Does not evict again" is a window over WATCH streams (the pod, EvictionBlocked and PolicyEvaluationEvictResize
events) and the eviction counter, from before the restart until more than one requeue has passed and the actuation
controller has finished a whole reconcile after it (OBS-5's counter), not a loop of sleeps; deadlines only bound a
hang."""
import json
import time

from conftest import wait_for, webhook_health
from test_actuation import SIM_CONFIG, core, events, start_evicting_engine, static_policy  # noqa: F401
from test_reactive import API, apply, kai_deployment, metric, running, start_engine
from watch_stream import EventWatch, PodAvailabilityWatch, hold_until

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
        pod = wait_for(lambda: (r := running(sim, NS)) and len(r) == 1 and r[0], timeout=120, what="the pod running")
        uid = pod["metadata"]["uid"]
        apply(sim, static_policy("act-restart", NS, "0.5", strategy="act-restart"))
        engine.wait_line("rightsizing summary", phase="actuation", namespace=NS, rightsizingResult="BLOCKED",
                         timeout=90)
        # ACT-9: the refusal is on the owner, keyed by the pod it refused.
        state = wait_for(lambda: (s := actuation_state(sim)) and uid in s.get("pdbBlocked", {}) and s, timeout=90,
                         interval=0.5, what=f"{STATE} with the refused pod")
        wait_for(lambda: refusals(sim) >= 1, timeout=90, what="the refusal's EvictionBlocked event")
        refused = refusals(sim)
        assert refused >= 1
        # From here to the end of the window: WATCH streams of the pod (it never leaves Ready) and of the namespace's
        # EvictionBlocked / PolicyEvaluationEvictResize events (none created or repeated: no new refusal, no eviction).
        pods = PodAvailabilityWatch(core(sim), NS, "app=infer", 1)
        evs = EventWatch(core(sim), NS, "EvictionBlocked", "PolicyEvaluationEvictResize")
        try:
            engine.stop()  # a restart: the new process has no memory but the owner's
            engine = start_engine(sim)
            wait_for(lambda: webhook_health(sim) == "True", timeout=120, interval=1,
                     what="PodAdmissionWebhookHealthy=True again")
            line = engine.wait_line("rightsizing summary", phase="actuation", namespace=NS,
                                    rightsizingResult="BLOCKED", timeout=120)
            assert "pdb-blocked" in line["failedChecks"], line  # it remembered, and says why
            # Over more than one requeue (1 minute) with the webhook healthy, and then a whole reconcile of the
            # actuation controller (OBS-5: two more counts): no eviction sent, no new refusal, the record unchanged.
            # Checked throughout, so a retry at any moment shows.
            new_engine, window_start, mark = engine, time.monotonic(), []

            def happened():
                sent, now = metric(new_engine, "kubex_evictions_total", reason="resize"), actuation_state(sim)
                return evs.seen + [f"pod not Ready or gone: {pods.count.worst} {sorted(pods.count.gone)}"] * \
                    bool(pods.count.max or pods.count.gone) + \
                    [f'kubex_evictions_total{{reason="resize"}} {sent:g}; {new_engine.output()}'] * (sent != 0) + \
                    [f"{STATE} changed: {now}"] * (now != state)

            def ended():
                if time.monotonic() - window_start < 70:
                    return False
                if not mark:
                    mark.append(new_engine.reconciles("actuation"))
                return new_engine.reconciles("actuation") >= mark[0] + 2
            hold_until(ended, happened, timeout=400, interval=2,
                       what="more than one requeue and a whole actuation reconcile after it")
        finally:
            pods.stop(), evs.stop()
        pods.result(), evs.result()
        assert not happened(), happened()
        assert refusals(sim) == refused
        assert actuation_state(sim) == state
        assert [p["metadata"]["uid"] for p in running(sim, NS)] == [uid]

        # The record goes when its pod does: the replacement is admitted at 0.5, and nothing is left to remember.
        sim.kubectl("delete", "pod", pod["metadata"]["name"], "-n", NS, "--wait=false")
        wait_for(lambda: [p for p in running(sim, NS)
                          if p["metadata"].get("annotations", {}).get("gpu-fraction") == "0.5"],
                 timeout=120, interval=0.5, what="the replacement at 0.5")
        wait_for(lambda: actuation_state(sim) is None, timeout=120, interval=1, what=f"{STATE} removed")
    finally:
        engine.stop()
        prom.stop()
