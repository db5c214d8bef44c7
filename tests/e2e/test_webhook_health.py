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
import threading
import time

from kubernetes import client

from conftest import EngineProcess, wait_for
from engine_proc import (GROUP, Engine, apply_global_config, condition, global_config, global_config_events,
                         install_crds)
from watch_stream import WatchStream, list_raw

LATE = "zzz-kubex-mutating-webhook-configuration"
EARLY = "000-kubex-mutating-webhook-configuration"
HEALTHY = "PodAdmissionWebhookHealthy"
HANG = 90  # a deadline that only bounds a hang (issue 33 item 3)
LEASE = "kubex-automation-engine-leader"


class HealthWatch:
    """Every write to global-config from now on (a WATCH, official Python client): `turns` is the sequence of
    PodAdmissionWebhookHealthy (status, reason) values, one entry per change, so no transition can slip between two
    polls (WHH-3)."""

    def __init__(self, sim):
        self.turns, self.lock = [], threading.Lock()
        api = client.CustomObjectsApi(sim.client())
        args = (GROUP, "v1alpha1", "globalconfigurations")
        items, rv = list_raw(api.list_cluster_custom_object, *args)
        for i in items:
            self._event("ADDED", i)
        self.stream = WatchStream(api.list_cluster_custom_object, rv, self._event, *args, raw=True, items=items)

    def _event(self, type_, obj):
        if type_ == "DELETED" or obj["metadata"]["name"] != "global-config":
            return
        c = condition(obj, HEALTHY)
        if c is None:
            return
        with self.lock:
            if not self.turns or self.turns[-1] != (c["status"], c["reason"]):
                self.turns.append((c["status"], c["reason"]))

    def statuses(self):
        with self.lock:
            return [t[0] for t in self.turns]

    def stop(self):
        self.stream.stop()
        assert not self.stream.problems(), f"the WATCH missed events, no proof: {self.stream.problems()}"
        return self.turns


def health(sim):
    gc = global_config(sim)
    return condition(gc, HEALTHY), gc.get("status", {}).get("webhookHealth", {})


def wait_condition(sim, eng, status, reason, timeout=HANG):
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
    watch = HealthWatch(sim)  # before the engine: every condition it writes is seen, in order
    eng = Engine(sim.kubeconfig, "--webhook-bind-address", "127.0.0.1:0", "--self-signed-webhook",
                 "--register-webhooks", "--early-webhook-enabled")
    try:
        # WHH-3: Unknown/Probing first, then True once two probes in a row succeeded; every write seen on the WATCH
        # (a poll could miss a short-lived Unknown on a fast or a slow machine).
        c, h = wait_condition(sim, eng, "True", "ProbeSucceeded")
        wait_for(lambda: "True" in watch.statuses(), timeout=HANG, what=f"the WATCH delivering True: {watch.turns}")
        seen = watch.statuses()
        assert seen[0] == "Unknown" and seen[-1] == "True" and "False" not in seen, watch.turns
        assert watch.turns[0] == ("Unknown", "Probing"), watch.turns
        assert c["reason"] == "ProbeSucceeded"
        assert h["lastProbeResult"] == "Success" and h["consecutiveFailures"] == 0
        assert h["consecutiveSuccesses"] >= 2
        probed = datetime.datetime.strptime(h["lastProbeTime"], "%Y-%m-%dT%H:%M:%SZ")
        assert abs((datetime.datetime.utcnow() - probed).total_seconds()) < 60
        # The counters keep going at the 1s interval.
        wait_for(lambda: health(sim)[1]["consecutiveSuccesses"] >= h["consecutiveSuccesses"] + 2, timeout=HANG,
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
        warned = wait_for(lambda: global_config_events(sim, "PodAdmissionWebhookUnhealthy"), timeout=HANG,
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
        wait_for(lambda: health(sim)[1]["consecutiveFailures"] >= h["consecutiveFailures"] + 2, timeout=HANG,
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
        wait_for(lambda: len(global_config_events(sim, "PodAdmissionWebhookUnhealthy")) == 2, timeout=HANG,
                 what="a second PodAdmissionWebhookUnhealthy event (a second transition)")
        restored = copy.deepcopy(early)
        for k in ("resourceVersion", "uid", "creationTimestamp", "generation", "managedFields"):
            restored["metadata"].pop(k, None)
        sim.kubectl("create", "-f", "-", input=json.dumps(restored))
        wait_condition(sim, eng, "True", "ProbeSucceeded")
        assert eng.proc.poll() is None
    finally:
        code = eng.stop()
        turns = watch.stop()
        assert code == 0, eng.output()
    # Every write, in order (WHH-3): Unknown/Probing, then True and False in turn, nothing in between.
    assert turns == [("Unknown", "Probing"), ("True", "ProbeSucceeded"), ("False", "ProbeFailed"),
                     ("True", "ProbeSucceeded"), ("False", "ProbeFailed"), ("True", "ProbeSucceeded")], turns
    # The event recorder is asynchronous (OBS-2); a clean stop writes what it queued. So only now is "one event per
    # transition to False, no repeats" proved for the whole run, not just up to a poll.
    events = global_config_events(sim, "PodAdmissionWebhookUnhealthy")
    assert len(events) == 2 and all(e.get("count", 1) == 1 for e in events), events


def test_engine_without_webhooks_does_not_probe_and_says_why(sim_factory):  # issue 27 item 7, WHH-1, ACT-2
    """--webhook-bind-address=0: no webhook server, so nothing to probe. The condition says so (Unknown/
    WebhooksDisabled), no probe pod is created and nothing warns every interval; evictions stay paused (ACT-2)."""
    sim = sim_factory()
    install_crds(sim)
    apply_global_config(sim, {"webhookHealth": {"transitionCheckInterval": "1s", "failureThreshold": 2}})
    # With leader election (ENG-1, the default): the Lease's renewTime, written by the engine every 2 s, is the
    # engine's own clock, which the window below is measured on (a probe would come once every 1 s of it).
    eng = EngineProcess(sim.kubeconfig, "default", leader_elect=True)  # no certificate source: no webhook server
    try:
        c, h = wait_condition(sim, eng, "Unknown", "WebhooksDisabled")
        assert "--webhook-bind-address=0" in c["message"] and "evictions stay paused" in c["message"], c
        assert not h, h  # no probe result was ever written (WHH-3's counters stay absent)
        coordination = client.CoordinationV1Api(sim.client())

        def renewed():  # the engine's own time of its last Lease renewal (ENG-1)
            return coordination.read_namespaced_lease(LEASE, "default").spec.renew_time

        def counters():  # the health controller's reconciles and every POST the engine sent (a probe is one)
            posts = sum(float(l.split()[-1]) for l in eng.metrics().splitlines()
                        if l.startswith("rest_client_requests_total{") and 'method="POST"' in l)
            return eng.reconciles("globalconfiguration"), posts

        # The engine's start-up writes are over: it leads and logged both singletons (their POSTs), its Lease event
        # is in, and then the counters stood still across two renewals of its Lease (not a span of the test's clock).
        eng.wait_line("successfully acquired lease", timeout=HANG)
        eng.wait_line("singleton exists; left as it is", timeout=HANG)
        eng.wait_line("created singleton with its defaults", timeout=HANG)
        wait_for(lambda: [e for e in sim.kubectl_json("get", "events", "-n", "default")["items"]
                          if e.get("reason") == "LeaderElection"], timeout=HANG, what="the LeaderElection event")

        def settled():
            c, t = counters(), renewed()
            wait_for(lambda: renewed() > t, timeout=HANG, interval=0.2, what="a Lease renewal")
            t = renewed()
            wait_for(lambda: renewed() > t, timeout=HANG, interval=0.2, what="a Lease renewal")
            return counters() == c
        wait_for(settled, timeout=4 * HANG, interval=0, what="the engine's startup writes done")

        # Over a window of at least five probe intervals by the engine's own clock (from one Lease renewal to one
        # at least 5 s later, ENG-1's renewals every 2 s): no probe, no failure, no warning, no event.
        before, start = counters(), renewed()
        window = datetime.timedelta(seconds=5)

        deadline = time.monotonic() + HANG  # only bounds a hang: the window's end is the engine's renewal
        while True:
            assert counters() == before, (before, counters())
            if renewed() - start >= window:
                break
            assert time.monotonic() < deadline, f"no Lease renewal 5 s after {start}: {renewed()}"
            time.sleep(0.5)
        assert counters() == before, (before, counters())
        assert not eng.find("webhook probe failed"), eng.output()
        assert not global_config_events(sim, "PodAdmissionWebhookUnhealthy")
        assert health(sim)[0]["reason"] == "WebhooksDisabled"
    finally:
        assert eng.stop() == 0, eng.output()
    # The event recorder is asynchronous (OBS-2); a clean stop wrote what it had queued: still no warning.
    assert not global_config_events(sim, "PodAdmissionWebhookUnhealthy")
