"""First fractions from a workload's own GPU history (issue 24, SPEC §7 PRO-1…PRO-9) end to end: kubex-sim, a real
Prometheus holding four days of gpu-process-exporter samples backfilled with promtool (tests/e2e/gpu_history.py), the
seed's starter example exactly as written (examples/kai-gpu-sharing.yaml) and the real `kubex engine` at its default
intervals, with its webhooks.

Each scenario is one whole-GPU Deployment `infer` (`nvidia.com/gpu: 1`) in its own namespace, created before the engine
starts, like workloads that ran for days before kubex was installed:
  pro-history  4 days at SM p95 22 %, memory max 30 % of the device -> 0.36 (PRO-9), and its running pod replaced
  pro-young    40 minutes of the same -> nothing written (NO_DATA)
  pro-cm       the same 4 days, and a ConfigMap entry 0.5 that wins until it is removed (PRO-6, PRO-7)
  pro-moved    memory 80 % until an allocation transition 6 hours ago, 30 % since: the memory lookback starts at the
               transition (PRO-2, from the RBK-1 history), so the value is 0.36, not 0.96
Then Prometheus is stopped (PRO-8: every value kept, Ready=False/PrometheusQueryFailed, recovery without a restart),
and the engine is restarted and fails over while a WATCH on the owners proves no value is removed and re-added
(issue 24 item 4)."""
import datetime
import json
import re
import signal
import time

import pytest
import yaml

from conftest import ROOT, EngineProcess, wait_for
from gpu_history import Series, days_ago
from test_gpu_metrics import start_gpu_sim
from test_reactive import RestartablePrometheus, apply, metric, queue
from watch_stream import WatchStream

API = "rightsizing.kubex.ai/v1alpha1"
STARTER = ROOT / "examples" / "kai-gpu-sharing.yaml"
CW = "cwproactive.rightsizing.kubex.ai/"
REQUESTS, LIMITS, STATE = CW + "desired-resource-requests", CW + "desired-resource-limits", CW + "proactive-state"
POLICY = "kai-gpu-sharing-baseline"
SCENARIOS = ("pro-history", "pro-young", "pro-cm", "pro-moved")
TRANSITION_AGO = 6 * 3600

SIM_CONFIG = """
nodePools:
  - name: g
    count: 6
    gpusPerNode: 1
    gpuProduct: Tesla-T4
    gpuMemoryMiB: 16384
    cpu: "16"
    memory: 64Gi
"""


def whole_gpu_deployment(ns, annotations=None):
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "infer", "namespace": ns, "annotations": annotations or {},
                         "labels": {"app": "infer", "nvidia.com/gpu.present": "true"}},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "infer"}},
                     "template": {"metadata": {"labels": {"app": "infer"}},
                                  "spec": {"containers": [{"name": "app", "image": "vllm/vllm-openai:v0.6",
                                                           "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}}}


def rfc3339(t):
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def history(now):
    """The backfilled samples: earlier pods of each Deployment (names its ReplicaSets would give them)."""
    start, end = days_ago(4, now)
    start -= 600  # a little over four days, so that the span reads 96h whatever the 5m subquery alignment
    sm = lambda t: 10.0 if int(t // 60) % 20 == 0 else 22.0  # noqa: E731  p95 stays 22
    memory = lambda t: 30.0 if abs(t - 86400) < 30 else 25.0  # noqa: E731  one 30 % peak
    transition = now - TRANSITION_AGO
    def moved_memory(t):  # 80 % until the transition, then 25 % with one 30 % peak an hour after it
        at = start + t
        return 80.0 if at < transition else (30.0 if abs(at - transition - 3600) < 30 else 25.0)
    return [
        Series("pro-history", "infer-7d9f8c6b5-x2z4k", "app", sm=sm, memory=memory, start=start, end=end,
               allocation="whole"),
        Series("pro-young", "infer-5c6b7d8f9-abcde", "app", sm=22.0, memory=30.0, start=end - 2400, end=end,
               allocation="whole"),
        Series("pro-cm", "infer-66b8c9d7f-q8w2e", "app", sm=sm, memory=memory, start=start, end=end,
               allocation="whole"),
        Series("pro-moved", "infer-7c9d5b6f8-m4n7p", "app", sm=sm, memory=moved_memory, start=start, end=end,
               allocation="whole"),
        # pro-cross's Deployment is created by its test, with an allocation transition just under an hour before.
        Series("pro-cross", "infer-5d7c9b8f6-c4r7s", "app", sm=sm, memory=30.0, start=start, end=end,
               allocation="whole"),  # 30 % since its transition too: 0.36
    ]


def rollback_state(transition):
    """An RBK-1 state whose last allocation transition was at `transition` (the workload moved to a whole GPU then)."""
    return json.dumps({
        "phase": "Managed", "strategy": "ClusterAutomationStrategy/kai-gpu-sharing",
        "original": {"containers": {"app": {"limits": {"nvidia.com/gpu": "1"}, "requests": {}}},
                     "gpuFraction": None, "queue": None, "schedulerName": "default-scheduler"},
        "lastApplied": {"app": "1"},
        "history": [{"at": rfc3339(transition), "container": "app", "from": "0.5", "to": "1", "mode": "none",
                     "source": "none"}]}, sort_keys=True)


def recommendations(entries):
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "recs", "namespace": "kubex"},
            "data": {"recommendations.json": json.dumps(entries)}}


CM_ENTRY = {"namespace": "pro-cm", "kind": "Deployment", "name": "infer", "container": "app", "gpu": "0.5"}


def start_engine(sim, **kw):
    engine = EngineProcess(sim.kubeconfig, "kubex", extra_args=[
        "--webhook-bind-address", "127.0.0.1:0", "--self-signed-webhook", "--register-webhooks",
        "--early-webhook-enabled"], **kw)
    engine.wait_ready()
    engine.wait_line("registered webhook configurations", timeout=30)  # new pods reach this engine's webhook
    return engine


def annotations(sim, ns):
    return sim.kubectl_json("get", "deployment", "infer", "-n", ns)["metadata"].get("annotations", {})


def owner_json(sim, ns, key):
    v = annotations(sim, ns).get(key)
    return json.loads(v) if v else None


def policy_condition(sim, type_):
    for c in sim.kubectl_json("get", "clusterproactivepolicy", POLICY).get("status", {}).get("conditions", []):
        if c["type"] == type_:
            return c
    return None


def running_pods(sim, ns):
    return [p for p in sim.kubectl_json("get", "pods", "-n", ns, "-l", "app=infer")["items"]
            if p["status"].get("phase") == "Running" and not p["metadata"].get("deletionTimestamp")]


@pytest.fixture(scope="module")
def env(sim_factory, tmp_path_factory):
    sim, _ = start_gpu_sim(sim_factory, tmp_path_factory.mktemp("proactive-sim"), SIM_CONFIG)
    now = time.time()
    prom = RestartablePrometheus(None, history=history(now), query_log=True)
    sim.kubectl("apply", "-k", str(ROOT / "config" / "crd"))
    sim.kubectl("create", "namespace", "kubex")
    apply(sim, queue("kubex-parent-queue"), queue("kubex-unlimited-gpu-queue", parent="kubex-parent-queue"))
    apply(sim, recommendations([CM_ENTRY]))
    apply(sim, {"apiVersion": API, "kind": "GlobalConfiguration", "metadata": {"name": "global-config"},
                "spec": {"prometheus": {"url": prom.url, "requestTimeout": "10s"},
                         "proactive": {"recommendationsConfigMap": {"namespace": "kubex", "name": "recs"}}}})
    apply(sim, *[d for d in yaml.safe_load_all(STARTER.read_text()) if d])  # the starter, unchanged
    for ns in SCENARIOS:
        sim.kubectl("create", "namespace", ns)
        moved = ns == "pro-moved"
        extra = {"rightsizing.kubex.ai/rollback-state": rollback_state(now - TRANSITION_AGO)} if moved else {}
        apply(sim, whole_gpu_deployment(ns, extra))
    for ns in SCENARIOS:
        wait_for(lambda: running_pods(sim, ns), timeout=60, what=f"{ns}/infer running on a whole GPU")
    state = {"engine": start_engine(sim, leader_elect=False)}
    yield sim, prom, state
    if state["engine"]:
        state["engine"].stop()
    prom.stop()


def test_whole_gpu_deployment_gets_its_first_fraction_from_four_days_of_history(env):  # PRO-2…PRO-5, PRO-7, PRO-9
    sim, prom, state = env
    engine = state["engine"]
    ns = "pro-history"
    wait_for(lambda: owner_json(sim, ns, REQUESTS) == {"app": {"gpu": "0.36"}}, timeout=120, interval=1,
             what=f"{REQUESTS} of {ns}/infer = 0.36")
    st = owner_json(sim, ns, STATE)
    assert st["source"] == {"app": "history"} and st["historySpan"] == {"app": "96h"} and st["peak"] == {"app": "0.3"}
    assert owner_json(sim, ns, LIMITS) == {"app": {"gpu": "0.3"}}  # the peak, for KAI-2's burst limit
    line = engine.wait_line("rightsizing summary", phase="proactive", namespace=ns, rightsizingResult="RECOMMENDED")
    assert line["source"] == {"app": "history"}
    assert {"container": "app", "resource": "gpu", "usage": "request", "from": "unspecified", "to": "0.36"} \
        in line["changes"]
    # PRO-8: the policy says it evaluated, and how many workloads hold a value.
    # The status controller writes Ready after the owner value the test saw: waited for, not read at once (a race
    # the final clean-clone CI run lost at -n 4).
    ready = wait_for(lambda: policy_condition(sim, "Ready"), timeout=120, what="the policy's Ready condition")
    assert ready["status"] == "True" and ready["reason"] == "Reconciled", ready

    def evaluated():
        status = sim.kubectl_json("get", "clusterproactivepolicy", POLICY)["status"]
        return status.get("lastEvaluationTime") and status.get("recommendedWorkloads", 0) >= 3 and status
    evaluations = [x for x in engine.lines
                   if x.get("logger") == "controller.proactivepolicy" and x.get("msg") != "rightsizing summary"]
    wait_for(evaluated, timeout=30, what=f"lastEvaluationTime and recommendedWorkloads >= 3; evaluations: {evaluations}")
    assert metric(engine, "kubex_prometheus_queries_total", phase="proactive", result="success") >= 4
    # PRO-2 batching: one query per signal for all four Deployments (one kind, one lookback), plus pro-moved's own
    # memory queries: never one per workload.
    sent = [q for q in prom.queries() if "quantile_over_time" in q]
    assert sent and all("pro-history" in q and "pro-cm" in q for q in sent[:1]), sent[:2]
    # ACT: the strategy allows eviction, so the running whole-GPU pod is replaced, and its replacement is admitted at
    # the history value.
    new = wait_for(lambda: [p for p in running_pods(sim, ns)
                            if p["metadata"].get("annotations", {}).get("gpu-fraction") == "0.36"],
                   timeout=240, interval=2, what=f"{ns}/infer replaced by a pod at gpu-fraction 0.36")
    assert new[0]["spec"]["schedulerName"] == "kai-scheduler"
    assert "nvidia.com/gpu" not in new[0]["spec"]["containers"][0]["resources"].get("limits", {})


def test_forty_minutes_of_history_writes_nothing(env):  # PRO-2 span rule, PRO-9
    sim, _, state = env
    engine = state["engine"]
    # The evaluation ran (its summary says NO_DATA) and left the owner without a proactive value.
    engine.wait_line("rightsizing summary", timeout=120, phase="proactive", namespace="pro-young",
                     rightsizingResult="NO_DATA")
    assert not any(k.startswith(CW) for k in annotations(sim, "pro-young"))
    assert all("nvidia.com/gpu" in p["spec"]["containers"][0]["resources"].get("limits", {})
               for p in running_pods(sim, "pro-young"))


def engine_time(line):
    """The unix time of an engine log line (its own clock, `ts`)."""
    return datetime.datetime.strptime(line["ts"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(
        tzinfo=datetime.timezone.utc).timestamp()


def parse_rfc3339(text):
    return datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.timezone.utc).timestamp()


def test_history_that_crosses_the_span_gets_its_value_without_waiting_for_the_reload(env):  # PRO-1, PRO-2; #34 item 11
    sim, prom, state = env
    engine = state["engine"]
    ns, key = "pro-cross", "Deployment/pro-cross/infer"
    # PRO-2: memory is read from the last allocation transition (Lm), so the memory history of a Deployment whose
    # transition was 58 minutes ago covers just under the 1h span (the 5m subquery steps move its oldest sample by up
    # to 5 minutes): it crosses the span within minutes, while the regular reload (1h, the default) is an hour away.
    transition = time.time() - 3600 + 90
    sim.kubectl("create", "namespace", ns)
    apply(sim, whole_gpu_deployment(ns, {"rightsizing.kubex.ai/rollback-state": rollback_state(transition)}))
    wait_for(lambda: running_pods(sim, ns), timeout=60, what=f"{ns}/infer running on a whole GPU")
    # PRO-1: its first match is read at once: too little memory history, nothing written.
    engine.wait_line("rightsizing summary", timeout=120, phase="proactive", namespace=ns, rightsizingResult="NO_DATA")
    scheduled = wait_for(lambda: next((l for l in engine.find_all("proactive history read scheduled")
                                       if key in l.get("workloads", [])), None),
                         timeout=60, what=f"a history read scheduled for {key}")
    at = parse_rfc3339(scheduled["at"])
    # Derived from the engine's own read: when the memory history covers 1h, not a reload interval later.
    assert transition + 3600 - 120 <= at <= transition + 3600 + 360, (scheduled, transition)
    assert at - engine_time(scheduled) < 600, scheduled  # minutes away, well below the 1h reload interval
    assert not any(k.startswith(CW) for k in annotations(sim, ns))
    # `kubex explain` says when kubex reads it again.
    from test_explain import explain_json
    if at - time.time() > 15:
        doc = explain_json(sim, "deployment", "infer", "-n", ns, "--prometheus-url", prom.url)
        p = doc["proactive"]
        assert "of 1h needed; kubex reads it again at" in p["historyWait"], p
        assert abs(parse_rfc3339(p["nextHistoryRead"]) - at) <= 60, (p["nextHistoryRead"], scheduled)
    # The value lands at the scheduled read, without a policy edit or restart (deadline: a hang bound only).
    got = wait_for(lambda: owner_json(sim, ns, REQUESTS), timeout=max(0, at - time.time()) + 180, interval=1,
                   what=f"{REQUESTS} of {ns}/infer after the read at {scheduled['at']}; engine:\n{engine.output()}")
    assert got == {"app": {"gpu": "0.36"}}, got
    st = owner_json(sim, ns, STATE)
    assert st["source"] == {"app": "history"}, st
    # Written by the catch-up read itself (engine timestamps): at or just after `at`, never at the hourly reload.
    assert at - 1 <= parse_rfc3339(st["updatedAt"]) <= at + 120, (st, scheduled)
    read = [l for l in engine.find_all("proactive history evaluation", full=False) if engine_time(l) >= at - 1]
    assert read and read[0]["queries"] <= 4, read  # one batched read (PRO-2): compute, memory and their spans


def test_configmap_entry_overrides_history_and_its_removal_returns_to_history(env):  # PRO-6, PRO-7
    sim, _, _ = env
    ns = "pro-cm"
    wait_for(lambda: owner_json(sim, ns, REQUESTS) == {"app": {"gpu": "0.5"}}, timeout=120, interval=1,
             what="the ConfigMap value 0.5")
    assert owner_json(sim, ns, STATE)["source"] == {"app": "configmap"}
    # The entry sets the request; the workload's own history still gives the memory peak (KAI-2's p).
    wait_for(lambda: owner_json(sim, ns, LIMITS) == {"app": {"gpu": "0.3"}}, timeout=60, interval=1,
             what="the history's peak beside the ConfigMap value")
    apply(sim, recommendations([]))
    wait_for(lambda: owner_json(sim, ns, REQUESTS) == {"app": {"gpu": "0.36"}}, timeout=60, interval=1,
             what="the history value once the entry is gone")
    st = owner_json(sim, ns, STATE)
    assert st["source"] == {"app": "history"} and st["peak"] == {"app": "0.3"}


def test_memory_lookback_starts_at_the_last_allocation_transition(env):  # PRO-2 Lm, RBK-1
    sim, prom, _ = env
    ns = "pro-moved"
    # Memory was 80 % of the device before the transition: over the whole lookback the value would be 0.96.
    wait_for(lambda: owner_json(sim, ns, REQUESTS) == {"app": {"gpu": "0.36"}}, timeout=120, interval=1,
             what=f"{ns}/infer = 0.36 from the memory since the transition")
    assert owner_json(sim, ns, STATE)["peak"] == {"app": "0.3"}
    # Its own memory query, over the ~6h since the transition (not 5 days), in the query Prometheus ran.
    own = [q for q in prom.queries() if "kubex_gpu_container_memory_footprint_percent" in q and "pro-moved" in q
           and "pro-history" not in q]
    assert own, prom.queries()[:6]
    ranges = {int(r) for q in own for r in re.findall(r"\[(\d+)s[]:]", q)}
    assert ranges
    assert all(TRANSITION_AGO <= r <= TRANSITION_AGO + 900 for r in ranges), ranges


def test_explain_shows_the_history_behind_the_value(env):  # CLI-1, PRO-2, PRO-7
    sim, prom, _ = env
    from test_explain import explain, explain_json
    # Once its pod runs at 0.36, pro-history's allocation changed just now (RBK-1): its memory lookback starts
    # there, too short to refresh the value, which is kept.
    wait_for(lambda: [p for p in running_pods(sim, "pro-history")
                      if p["metadata"].get("annotations", {}).get("gpu-fraction") == "0.36"],
             timeout=240, interval=2, what="pro-history running at 0.36")
    doc = explain_json(sim, "deployment", "infer", "-n", "pro-history", "--prometheus-url", prom.url)
    p = doc["proactive"]
    assert p["policy"] == f"ClusterProactivePolicy/{POLICY}" and p["prometheus"]["queried"], p
    assert p["lookback"] == "120h" and p["lastAllocationTransition"], p
    assert p["memoryLookback"].endswith("m"), p  # minutes since the transition, not 120h
    c = p["containers"][0]
    assert c["allocation"] == "0.36 (KAI fraction)" and c["smP95"] == pytest.approx(22.0), c
    assert c["computeSpan"] == "96h", c
    assert c["source"] == "history" and c["value"].startswith("0.36") and "kept" in c["value"], c
    assert p["stored"] == {"app": "0.36"} and p["storedSource"] == {"app": "history"}
    assert p["result"] == "UNCHANGED"
    # Too little history: the reason is spelled out.
    text = explain(sim, "deployment", "infer", "-n", "pro-young", "--prometheus-url", prom.url).stdout
    assert "Proactive (ClusterProactivePolicy/kai-gpu-sharing-baseline)" in text, text
    assert "no value for app: SM history covers" in text and "under the 1h PRO-2 needs" in text, text


def test_prometheus_down_keeps_every_value_and_recovers_without_restart(env):  # PRO-8, REA-10 wording
    sim, prom, state = env
    engine = state["engine"]
    before = {ns: {k: v for k, v in annotations(sim, ns).items() if k.startswith(CW)} for ns in SCENARIOS}
    prom.pause()
    # The shortest reload interval a user may set (1m): the settings change evaluates at once, and fails.
    sim.kubectl("patch", "globalconfiguration", "global-config", "--type=merge",
                "-p", json.dumps({"spec": {"recommendationReloadInterval": "1m"}}))
    failed = wait_for(lambda: (c := policy_condition(sim, "Ready")) and c["status"] == "False" and c, timeout=60,
                      interval=1, what="Ready=False while Prometheus is down")
    assert failed["reason"] == "PrometheusQueryFailed" and failed["message"], failed
    engine.wait_line("prometheus query failed; proactive history values unchanged")
    assert metric(engine, "kubex_prometheus_queries_total", phase="proactive", result="error") >= 1
    after = {ns: {k: v for k, v in annotations(sim, ns).items() if k.startswith(CW)} for ns in SCENARIOS}
    assert after == before, "a failed history read never lowers or removes a value"
    prom.resume()
    # Retried after 1m (doubling from there): Ready again without a restart.
    wait_for(lambda: policy_condition(sim, "Ready")["status"] == "True", timeout=150, interval=2,
             what="Ready=True after Prometheus is back")
    assert {ns: {k: v for k, v in annotations(sim, ns).items() if k.startswith(REQUESTS)} for ns in SCENARIOS} == \
        {ns: {k: v for k, v in before[ns].items() if k.startswith(REQUESTS)} for ns in SCENARIOS}


MARK = "test.kubex.ai/watch-mark"  # the test's own annotation (OwnerWatch.barrier)


class OwnerWatch:
    """A WATCH on the scenario Deployments (official Python client) recording every change to their proactive values."""

    def __init__(self, sim):
        from kubernetes import client
        self.apps = client.AppsV1Api(sim.client())
        items = self.apps.list_deployment_for_all_namespaces(label_selector="nvidia.com/gpu.present=true")
        self.held = {f"{d.metadata.namespace}/{d.metadata.name}": self._keys(d) for d in items.items}
        self.removed, self.events, self.marks = [], 0, set()
        self.stream = WatchStream(self.apps.list_deployment_for_all_namespaces, items.metadata.resource_version,
                                  self._event, label_selector="nvidia.com/gpu.present=true")

    @staticmethod
    def _keys(d):
        return {k: v for k, v in (d.metadata.annotations or {}).items() if k.startswith(REQUESTS)}

    def _event(self, _type, d):
        key, now = f"{d.metadata.namespace}/{d.metadata.name}", self._keys(d)
        for k, v in self.held.get(key, {}).items():
            if now.get(k) != v:
                self.removed.append((key, k, v, now.get(k)))
        self.held[key] = now
        self.events += 1
        self.marks.add((d.metadata.annotations or {}).get(MARK))

    def barrier(self, sim, ns, name):
        """Writes a mark on Deployment ns/name and returns once this WATCH delivered it: the API server sends events
        in resourceVersion order, so every change written before the mark has been seen by then."""
        mark = str(time.monotonic_ns())
        sim.kubectl("annotate", "deployment", name, "-n", ns, f"{MARK}={mark}", "--overwrite")
        wait_for(lambda: mark in self.marks, timeout=30, interval=0.1, what="the WATCH delivering the test's mark")

    def stop(self):
        self.stream.stop()


def test_restart_and_failover_never_remove_and_re_add_a_value(env):  # issue 24 item 4, PRO-1, ENG-1
    sim, _, state = env
    watch = OwnerWatch(sim)
    try:
        held = {k: v for k, v in watch.held.items() if v}
        assert len(held) >= 3, watch.held
        # Restart: a new engine loads its sources before it writes anything.
        state["engine"].stop()
        state["engine"] = None
        engine = start_engine(sim, leader_elect=False)
        state["engine"] = engine
        # A pod created while the new engine starts is converted (admission reads the owner, which kept its value).
        sim.kubectl("scale", "deployment", "infer", "-n", "pro-history", "--replicas=2")
        engine.wait_line("proactive history evaluation", timeout=60, ok=True)
        engine.wait_line("rightsizing summary", timeout=60, phase="proactive", namespace="pro-history",
                         rightsizingResult="UNCHANGED")
        pods = wait_for(lambda: (r := running_pods(sim, "pro-history")) and len(r) == 2 and r, timeout=120,
                        what="two pro-history pods")
        assert all(p["metadata"].get("annotations", {}).get("gpu-fraction") == "0.36" for p in pods), \
            [p["metadata"].get("annotations") for p in pods]
        assert metric(engine, "kubex_gpu_recommendations_total", direction="initial") == 0
        # Failover: two replicas with leader election; the leader is killed and the standby takes over.
        engine.stop()
        state["engine"] = None
        a = start_engine(sim, leader_elect=True)
        b = start_engine(sim, leader_elect=True)
        leader = wait_for(lambda: next((e for e in (a, b) if e.find("successfully acquired lease")), None),
                          timeout=30, what="a leader")
        standby = b if leader is a else a
        leader.wait_line("proactive history evaluation", timeout=60)
        leader.signal(signal.SIGKILL)
        leader.wait_exit()
        standby.wait_line("successfully acquired lease", timeout=40)
        standby.wait_line("proactive history evaluation", timeout=60, ok=True)
        standby.wait_line("rightsizing summary", timeout=60, phase="proactive", namespace="pro-cm",
                          rightsizingResult="UNCHANGED")
        state["engine"] = standby
        watch.barrier(sim, "pro-history", "infer")  # what the new leader wrote by now, if anything, has been seen
        assert metric(standby, "kubex_gpu_recommendations_total", direction="initial") == 0
    finally:
        watch.stop()
    assert watch.removed == [], watch.removed
    assert watch.events >= 1  # the scale-up above changed a watched Deployment
