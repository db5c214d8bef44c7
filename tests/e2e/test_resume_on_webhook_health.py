"""Evictions held back at start-up go as soon as the webhook is healthy (issue 27 item 4, ACT-2, ENG-1): a freshly
started engine (a restart, or a new leader) does not evict while PodAdmissionWebhookHealthy is not True, since a
replacement created then might not be mutated. When it turns True, every workload is looked at again at once: the
held-back resize goes within seconds, not at the next periodic requeue (a minute later, about 30 s lost in the
trial): before the engine's next probe, in the order of its own log. kubex-sim, the engine at its default intervals
with its webhooks (at debug level, so that every probe and every workload reconcile writes its line, OBS-4)."""
import datetime

from conftest import EngineProcess, ROOT, wait_for
from test_kai_modes import static_policy, whole_gpu_deployment
from test_reactive import apply, queue, running, starter_docs

NS = "resume"
HANG = 90  # a deadline that only bounds a hang (issue 33 item 3)
PROBE_LINES = ("webhook probe succeeded", "webhook probe failed")


def rfc3339(s):
    return datetime.datetime.strptime(s, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.timezone.utc)


def healthy_since(sim):
    gc = sim.kubectl_json("get", "globalconfiguration", "global-config")
    for c in gc.get("status", {}).get("conditions", []):
        if c["type"] == "PodAdmissionWebhookHealthy" and c["status"] == "True":
            return rfc3339(c["lastTransitionTime"])
    return None


def log_time(line):
    """The engine's own timestamp of a log line (OBS-4 `ts`, milliseconds)."""
    return datetime.datetime.strptime(line["ts"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc)


def first_index(engine, start, match):
    """Index in the engine's log of the first line from `start` on that `match`es, else None."""
    with engine.lock:
        return next((i for i in range(start, len(engine.lines)) if match(engine.lines[i])), None)


def resize_events(sim):
    events = sim.kubectl_json("get", "events", "-n", NS)["items"]
    return sorted(rfc3339(e.get("lastTimestamp") or e["metadata"]["creationTimestamp"])
                  for e in events if e.get("reason") == "PolicyEvaluationEvictResize")


def test_held_back_resize_goes_when_the_webhook_turns_healthy(sim_factory):  # issue 27 item 4, ACT-2
    sim = sim_factory()
    sim.kubectl("apply", "-k", str(ROOT / "config" / "crd"))
    sim.kubectl("create", "namespace", "kubex")
    sim.kubectl("create", "namespace", NS)
    apply(sim, queue("kubex-parent-queue"), queue("kubex-unlimited-gpu-queue", parent="kubex-parent-queue"))
    apply(sim, *[d for d in starter_docs() if d["kind"] == "ClusterAutomationStrategy"])
    apply(sim, static_policy("resume", NS, "0.5"))
    # A whole-GPU pod that ran before the engine: once managed, ACT-1 wants it at 0.5.
    apply(sim, whole_gpu_deployment("infer", NS, "t4-node-0", replicas=1))
    wait_for(lambda: running(sim, NS, "infer"), timeout=60, what="infer running on a whole GPU")
    engine = EngineProcess(sim.kubeconfig, "kubex", leader_elect=False, extra_args=[
        "--webhook-bind-address", "127.0.0.1:0", "--self-signed-webhook", "--register-webhooks",
        "--early-webhook-enabled", "--log-level", "debug"])
    try:
        engine.wait_ready(timeout=HANG)
        # Before the webhook is healthy, the resize waits (ACT-2: a replacement might not be mutated).
        engine.wait_line("rightsizing summary", phase="actuation", namespace=NS, rightsizingResult="BLOCKED_RETRYING",
                         timeout=HANG)
        since = wait_for(lambda: healthy_since(sim), timeout=HANG, interval=0.5, what="PodAdmissionWebhookHealthy=True")
        evicted = wait_for(lambda: resize_events(sim), timeout=HANG, interval=0.5, what="the resize eviction")
        # It went on the turn to True, not before; event times have one-second resolution.
        assert since <= evicted[0] + datetime.timedelta(seconds=1), (since, evicted)
        # ... and at once, not at the next one-minute requeue. Proved in the engine's own log rather than by the
        # machine's speed: the turn to True is the probe that brings consecutiveSuccesses to successThreshold (WHH-3;
        # the workloads are requeued as it is published, just before that line); the EVICTED summary of the resize
        # (OBS-4) comes before the engine's next probe, one transitionCheckInterval (10 s) later on its own clock.
        threshold = (sim.kubectl_json("get", "globalconfiguration", "global-config")["spec"]
                     .get("webhookHealth", {}).get("successThreshold", 3))
        turned = wait_for(lambda: first_index(engine, 0, lambda l: l.get("msg") == "webhook probe succeeded"
                                              and l.get("consecutiveSuccesses") == threshold),
                          timeout=HANG, what=f"the probe that turned the webhook healthy; engine:\n{engine.output()}")
        next_probe = wait_for(lambda: first_index(engine, turned + 1, lambda l: l.get("msg") in PROBE_LINES),
                              timeout=HANG, what="the engine's next probe")
        resized = first_index(engine, 0, lambda l: l.get("msg") == "rightsizing summary" and l.get("phase") ==
                              "actuation" and l.get("namespace") == NS and l.get("rightsizingResult") == "EVICTED")
        with engine.lock:
            turn_line, probe_line = engine.lines[turned], engine.lines[next_probe]
            resize_line = engine.lines[resized] if resized is not None else None
        assert resized is not None and resized < next_probe, \
            ("the resize did not go before the next probe", turn_line, probe_line, resize_line)
        assert log_time(resize_line) >= log_time(turn_line) - datetime.timedelta(seconds=1), (turn_line, resize_line)
        wait_for(lambda: [p for p in running(sim, NS, "infer")
                          if p["metadata"].get("annotations", {}).get("gpu-fraction") == "0.5"],
                 timeout=HANG, interval=0.5, what="infer replaced at gpu-fraction 0.5")
    finally:
        engine.stop()
