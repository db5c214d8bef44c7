"""Webhook health probe end to end (WHH-1..3, OBS-2, HLM-3) against kubex-sim and real kubectl: an engine with
--self-signed-webhook --register-webhooks --early-webhook-enabled takes PodAdmissionWebhookHealthy from
Unknown/Probing to True/ProbeSucceeded with its counters; when the API server can no longer reach the webhooks
(their URLs point at a closed port) the probe pods come back without markers, the condition turns
False/ProbeFailed with a PodAdmissionWebhookUnhealthy Warning, and pods are still admitted (failurePolicy Ignore);
restored, it is True again. A missing early configuration alone is a failure too (every enabled pass must mark)."""
import copy
import datetime
import json
import socket
import time

from conftest import wait_for
from engine_proc import (Engine, apply_global_config, condition, global_config, global_config_events,
                         install_crds)

LATE = "zzz-kubex-mutating-webhook-configuration"
EARLY = "000-kubex-mutating-webhook-configuration"
HEALTHY = "PodAdmissionWebhookHealthy"


def health(sim):
    gc = global_config(sim)
    return condition(gc, HEALTHY), gc.get("status", {}).get("webhookHealth", {})


def wait_condition(sim, eng, status, reason, timeout=30):
    def check():
        c, h = health(sim)
        return (c, h) if c and c["status"] == status and c["reason"] == reason else None
    return wait_for(check, timeout=timeout, interval=0.1,
                    what=f"{HEALTHY}={status}/{reason}; status: {health(sim)}; engine:\n{eng.output()}")


def closed_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def point_webhooks_at(sim, port_of):
    """Rewrites the URL of every engine pod webhook with `port_of(url)`; returns the previous URLs."""
    before = {}
    for name in (EARLY, LATE):
        cfg = sim.kubectl_json("get", "mutatingwebhookconfigurations", name)
        url = cfg["webhooks"][0]["clientConfig"]["url"]
        before[name] = url
        rest = url.split("//", 1)[1].split("/", 1)[1]
        new = f"https://127.0.0.1:{port_of(url)}/{rest}"
        patch = [{"op": "replace", "path": "/webhooks/0/clientConfig/url", "value": new}]
        sim.kubectl("patch", "mutatingwebhookconfigurations", name, "--type=json", "-p", json.dumps(patch))
    return before


def restore_urls(sim, urls):
    for name, url in urls.items():
        patch = [{"op": "replace", "path": "/webhooks/0/clientConfig/url", "value": url}]
        sim.kubectl("patch", "mutatingwebhookconfigurations", name, "--type=json", "-p", json.dumps(patch))


def test_probe_health_follows_the_webhooks(sim_factory):  # WHH-1, WHH-2, WHH-3, OBS-2, HLM-3
    sim = sim_factory()
    install_crds(sim)
    # A high failureThreshold while the engine registers its webhooks: no False before the first True.
    apply_global_config(sim, {"webhookHealth": {"transitionCheckInterval": "1s", "successThreshold": 2,
                                                "failureThreshold": 5}})
    eng = Engine(sim.kubeconfig, "--webhook-bind-address", "127.0.0.1:0", "--self-signed-webhook",
                 "--register-webhooks", "--early-webhook-enabled")
    try:
        # WHH-3: Unknown/Probing first, then True once two probes in a row succeeded.
        seen = []

        def healthy():
            c, h = health(sim)
            if c and (not seen or seen[-1] != c["status"]):
                seen.append(c["status"])
            return (c, h) if c and c["status"] == "True" else None
        c, h = wait_for(healthy, timeout=30, interval=0.05, what=f"{HEALTHY}=True; engine:\n{eng.output()}")
        assert seen[0] == "Unknown" and seen[-1] == "True" and "False" not in seen, seen
        assert c["reason"] == "ProbeSucceeded"
        assert h["lastProbeResult"] == "Success" and h["consecutiveFailures"] == 0
        assert h["consecutiveSuccesses"] >= 2
        probed = datetime.datetime.strptime(h["lastProbeTime"], "%Y-%m-%dT%H:%M:%SZ")
        assert abs((datetime.datetime.utcnow() - probed).total_seconds()) < 60
        # The counters keep going at the 1s interval.
        wait_for(lambda: health(sim)[1]["consecutiveSuccesses"] >= h["consecutiveSuccesses"] + 2,
                 what="more successful probes")
        assert eng.reconciles("globalconfiguration") >= 3
        # WHH-1: dry-run probes leave no pod behind.
        pods = sim.kubectl_json("get", "pods", "-n", "default")["items"]
        assert not [p for p in pods if p["metadata"]["name"].startswith("kubex-webhook-probe-")]

        # HLM-3: thresholds change at runtime. Then the API server loses the webhooks (closed port).
        apply_global_config(sim, {"webhookHealth": {"transitionCheckInterval": "1s", "successThreshold": 2,
                                                    "failureThreshold": 2}})
        dead = closed_port()
        urls = point_webhooks_at(sim, lambda url: dead)
        c, h = wait_condition(sim, eng, "False", "ProbeFailed")
        assert "automation-webhook.kubex.ai/probe-early" in c["message"], c
        assert "automation-webhook.kubex.ai/probe-late" in c["message"], c
        assert h["lastProbeResult"] == "Failure" and h["consecutiveFailures"] >= 2 and h["consecutiveSuccesses"] == 0
        warned = wait_for(lambda: global_config_events(sim, "PodAdmissionWebhookUnhealthy"),
                          what="a PodAdmissionWebhookUnhealthy event")
        assert len(warned) == 1 and warned[0]["type"] == "Warning"
        assert "probe-late" in warned[0]["message"]
        # Pods are still admitted while the webhook is unreachable (failurePolicy Ignore).
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "while-down", "namespace": "default"},
               "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
        sim.kubectl("create", "-f", "-", input=json.dumps(pod))
        assert sim.kubectl_json("get", "pod", "while-down", "-n", "default")["metadata"]["name"] == "while-down"
        sim.kubectl("delete", "pod", "while-down", "-n", "default", "--wait=false")
        # Still down: one transition, one event (aggregated repeats would raise `count`, not add events).
        wait_for(lambda: health(sim)[1]["consecutiveFailures"] >= h["consecutiveFailures"] + 2,
                 what="more failed probes")
        again = global_config_events(sim, "PodAdmissionWebhookUnhealthy")
        assert len(again) == 1 and again[0].get("count", 1) == 1, again

        # Restored: True again after successThreshold successes.
        restore_urls(sim, urls)
        c, h = wait_condition(sim, eng, "True", "ProbeSucceeded")
        assert h["lastProbeResult"] == "Success" and h["consecutiveFailures"] == 0

        # WHH-2: every enabled pass must mark. Without the early configuration the late marker is not enough.
        early = sim.kubectl_json("get", "mutatingwebhookconfigurations", EARLY)
        sim.kubectl("delete", "mutatingwebhookconfigurations", EARLY)
        c, _ = wait_condition(sim, eng, "False", "ProbeFailed")
        assert "automation-webhook.kubex.ai/probe-early" in c["message"], c
        assert "probe-late" not in c["message"], c
        wait_for(lambda: len(global_config_events(sim, "PodAdmissionWebhookUnhealthy")) == 2,
                 what="a second PodAdmissionWebhookUnhealthy event (a second transition)")
        restored = copy.deepcopy(early)
        for k in ("resourceVersion", "uid", "creationTimestamp", "generation", "managedFields"):
            restored["metadata"].pop(k, None)
        sim.kubectl("create", "-f", "-", input=json.dumps(restored))
        wait_condition(sim, eng, "True", "ProbeSucceeded")
        assert eng.proc.poll() is None
    finally:
        assert eng.stop() == 0, eng.output()


def test_engine_without_webhooks_does_not_probe_and_says_why(sim_factory):  # issue 27 item 7, WHH-1, ACT-2
    """--webhook-bind-address=0: no webhook server, so nothing to probe. The condition says so (Unknown/
    WebhooksDisabled), no probe pod is created and nothing warns every interval; evictions stay paused (ACT-2)."""
    sim = sim_factory()
    install_crds(sim)
    apply_global_config(sim, {"webhookHealth": {"transitionCheckInterval": "1s", "failureThreshold": 2}})
    eng = Engine(sim.kubeconfig)  # no certificate source: --webhook-bind-address=0, no webhook server
    try:
        c, h = wait_condition(sim, eng, "Unknown", "WebhooksDisabled")
        assert "--webhook-bind-address=0" in c["message"] and "evictions stay paused" in c["message"], c
        assert not h, h  # no probe result was ever written (WHH-3's counters stay absent)
        # Over a window of five probe intervals: no probe, no failure, no warning, no event.
        def counters():  # the health controller's reconciles and every POST the engine sent (a probe is one)
            posts = sum(float(l.split()[-1]) for l in eng.metrics().splitlines()
                        if l.startswith("rest_client_requests_total{") and 'method="POST"' in l)
            return eng.reconciles("globalconfiguration"), posts

        def settled():  # the engine's startup writes (singletons, their events) are over: 3 s without a change
            c = counters()
            time.sleep(3)
            return counters() == c
        wait_for(settled, timeout=60, interval=0, what="the engine's startup writes done")
        before = counters()
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            assert counters() == before, (before, counters())
            time.sleep(0.5)
        assert not eng.find("webhook probe failed"), eng.output()
        assert not global_config_events(sim, "PodAdmissionWebhookUnhealthy")
        assert health(sim)[0]["reason"] == "WebhooksDisabled"
    finally:
        assert eng.stop() == 0, eng.output()
