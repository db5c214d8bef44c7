"""Chaos end to end (issue 27 item 3; SPEC ENG-4, ENG-1, ACT-3, ACT-5, ACT-9, CON-7, CON-9, SIM-8): kubex-sim serving
API faults to the engine (`serve --faults`: 10 % 500/503, 5 % 429 with Retry-After, WATCH streams cut cleanly or
abruptly, 410 Gone on WATCH), a real Prometheus, the seed's starter example (windows 1m, minPodMetricsAge 0s, as
test_actuation.py) and TWO `kubex engine` replicas with leader election, at the engine's DEFAULT intervals (reactive
check 1m, resync 1m, webhook health 10s, the consolidation policy's default requeueAfter 1m). The only engine flags
are the harness's: webhooks bound to 127.0.0.1:0, self-signed and registered by the engine.

One scenario, one sim:
* A PDB refuses the resize of `act-restart/infer` under a strategy that does not retry: `pdb-blocked` is recorded on
  the owner (ACT-5, ACT-9).
* A reactive upsize of `chaos-resize/infer` (3 replicas, 0.25 -> 0.36, the numbers of test_actuation.py): the leader
  is SIGKILLed right after its first eviction; the standby takes the Lease and evicts the rest, one at a time.
* A consolidation drain of pool `a` (a-node-0: three 0.12 pods under a PDB allowing one disruption; a-node-1: 0.5):
  the leader is SIGKILLed as soon as a-node-0 is tainted, before it is empty; the next replica (started as Kubernetes
  would restart the killed pod) takes the Lease and finishes the drain.
* WATCH streams (watch_stream.py, every event, not samples) run from before the first engine to the end: no workload
  ever has more unavailable pods than its budget (ACT-3: 1 for the resized workload; its PDB's 1 for the drained one;
  0 for the refused one), and never are two nodes tainted at once (CON-9; there is one policy).
* The same end state as without faults: the resized pods at 0.36 (what test_actuation.py's fault-free run asserts, not
  run again here), the node drained and where each pod went as `kubex plan consolidation` computes them from the same
  cluster before the policy exists (the fault-free sequence, CON-4…CON-6), then NoCandidate with the plan's message.
* The `pdb-blocked` pod is not retried by either new leader (ACT-9; test_actuation_restart.py proves it for a plain
  restart): no EvictionBlocked or eviction event in its namespace from the first kill to the end, and over a window
  of more than one requeue with the last leader's webhook healthy; its record goes only when its pod does.
* At the end no kubex taint on any node and no `actuation-state` annotation on any owner (ENG-4).

Harness note: with --register-webhooks each replica points the webhook configurations at its own server when it
starts (in a cluster Helm points them at a Service over all replicas). So the replica started last serves admission,
and the test only ever kills the other one: a killed leader's server is never the one the API server calls."""
import json
import time

from kubernetes import client

from conftest import wait_for, webhook_health
from test_actuation import availability, events, fractions, ready_count, static_policy
from test_actuation_restart import NS as PDB_NS, STATE, actuation_state, refusals
from test_availability import engine_args, evicted_pods
from test_cli_plan import plan_json
from test_consolidation import NS as CON_NS, QUEUE as CON_QUEUE, TAINT, available, deployment, get_policy, place, \
    policy, running_on
from test_engine_runtime import Engine, holder
from test_gpu_metrics import start_gpu_sim
from test_reactive import API, RestartablePrometheus, apply, install_starter, kai_deployment, queue, running, \
    metric, wait_recommendation
from test_sim_faults import counts
from watch_stream import EventWatch, NodeTaintWatch, PodAvailabilityWatch, hold, pod_available

RS_NS = "chaos-resize"
POLICY = "chaos-a"
ENGINE_NS = "kubex"
# Deadlines after an engine action only bound a hang (issue 33 item 3): the checks are on the Lease, the objects,
# events, counters, log lines and WATCH streams, however long a loaded machine makes them take.
HANG = 120
REQUEUE = 60  # the default requeue of the actuation controller, 1m

# SIM-8 (the `faults` key of the sim's --config, the same as a --faults file): only the engine's requests (User-Agent
# kubex/) are faulted; the test's kubectl and Python clients are not.
FAULTS = """
faults:
  seed: 27
  rules:
    - name: api-errors
      userAgents: [kubex/]
      tooManyRequests: {rate: 0.05, retryAfterSeconds: 1}
      serverError: {rate: 0.1, codes: [500, 503]}
    - name: watch-cuts
      userAgents: [kubex/]
      verbs: [watch]
      watchCut: {afterEventsMin: 1, afterEventsMax: 50, afterTimeMin: 10s, afterTimeMax: 60s, abruptRate: 0.5}
      watchGone: {rate: 0.1}
"""

# Pool g: the resized and the refused workloads (pinned by hostname). Pool a: the consolidation pool.
SIM_CONFIG = """
nodePools:
  - name: g
    count: 2
    gpusPerNode: 2
    gpuProduct: Tesla-T4
    gpuMemoryMiB: 16384
    cpu: "32"
    memory: 128Gi
  - name: a
    count: 2
    gpusPerNode: 1
    gpuProduct: Tesla-T4
    cpu: "16"
    memory: 64Gi
    labels: {pool: a}
# Replaces start_gpu_sim's fast kubelet (the last `kubelet` key wins): a replacement is Ready 10 s after it starts, so
# the leader's evictions of one workload are at least 10 s apart (ACT-3), and the first and the last of three at least
# 20 s: the test kills it between two from a WATCH event with that much room, not within a couple of seconds.
kubelet:
  startDelay: 200ms
  readyDelay: 10s
"""

NO_RETRY_STRATEGY = {
    "apiVersion": API, "kind": "ClusterAutomationStrategy", "metadata": {"name": "act-restart"},
    "spec": {"experimental": {"gpuKaiContract": "v1alpha1-2026-07"},
             "enablement": {"overrideScheduler": "kai",
                            "gpu": {"requests": {"upsize": True, "downsize": True, "ceiling": "1"}}},
             "podEviction": {"enabled": True, "retryPodDisruptionBudget": False}}}


def core(sim):
    return client.CoreV1Api(sim.client())


def start_replica(sim, replicas):
    """One more engine replica (leader election on, default intervals); returns once it is ready and has pointed the
    webhook configurations at its own server."""
    e = Engine(sim.kubeconfig, ENGINE_NS, engine_args(), leader_elect=True)
    replicas.append(e)
    e.wait_ready(timeout=120)
    e.wait_line("registered webhook configurations", timeout=120)
    return e


def kill_leader(sim, leader, standby, at_kill):
    """ENG-1: SIGKILL (the Lease is not released), then `at_kill()` (nobody leads until the standby takes the Lease
    once it expires); returns once the standby leads and its own webhook probes say healthy (ACT-2), with the
    monotonic time of that."""
    leader.kill()
    assert holder(sim, ENGINE_NS) == leader.identity, \
        f"the replica killed was the leader; it lost the Lease by itself: {leader.find('leader election lost')}"
    at_kill()
    wait_for(lambda: holder(sim, ENGINE_NS) == standby.identity, timeout=HANG, interval=0.2,
             what=f"the standby taking the Lease; its output:\n{standby.output()}")
    standby.wait_line("successfully acquired lease", timeout=HANG)
    wait_for(lambda: webhook_healthy_gauge(standby) == 1, timeout=120, interval=0.5,
             what=f"kubex_webhook_healthy 1 on the new leader; its output:\n{standby.output()}")
    return time.monotonic()


def nothing_evicted_over_a_requeue(sim, engine, ns, name, since, *reasons):
    """test_actuation.nothing_evicted (WATCH streams of the namespace's events and of the pods of `name`,
    kubex_evictions_total{reason="resize"}) over a window that lasts at least until REQUEUE + 5 s after `since` and at
    least 30 s, and then on until a whole actuation reconcile has begun after that (OBS-5's reconcile counter): the
    window covers a requeue of the engine's, not just a span of the test's clock."""
    pods = availability(sim, ns, ready_count(sim, ns, name), name)
    evs = EventWatch(core(sim), ns, *reasons)
    before, reconciles = metric(engine, "kubex_evictions_total", reason="resize"), engine.reconciles("actuation")

    def happened():
        now = metric(engine, "kubex_evictions_total", reason="resize")
        return evs.seen + [f"{pods.count.max} pod(s) of {name} not Ready: {pods.count.worst}"] * (pods.count.max > 0) \
            + [f'kubex_evictions_total{{reason="resize"}} {before:g} -> {now:g}'] * (now != before)
    try:
        hold(max(since + REQUEUE + 5 - time.monotonic(), 30), happened)
        after = engine.reconciles("actuation")
        # Ends early (and fails below) as soon as something happens; otherwise once two more reconciles are counted.
        wait_for(lambda: happened() or engine.reconciles("actuation") >= after + 2, timeout=REQUEUE + HANG,
                 interval=1, what="a whole actuation reconcile after the requeue window")
    finally:
        pods.stop(), evs.stop()
    pods.result(), evs.result()
    assert not happened(), happened()
    assert engine.reconciles("actuation") > reconciles, "the actuation controller ran within the window"


def webhook_healthy_gauge(engine):
    """kubex_webhook_healthy (no labels): the leader's own view of PodAdmissionWebhookHealthy."""
    return next((float(l.split()[-1]) for l in engine.metrics().splitlines()
                 if l.startswith("kubex_webhook_healthy ")), None)


def kubex_taints(sim):
    return {n["metadata"]["name"]: [t["key"] for t in n["spec"].get("taints", []) if "kubex" in t["key"]]
            for n in sim.kubectl_json("get", "nodes")["items"] if any("kubex" in t["key"]
                                                                    for t in n["spec"].get("taints", []))}


def actuation_states(sim):
    """Every owner (a workload no controller owns: the object kubex keeps ACT-9's record on) that carries
    rightsizing.kubex.ai/actuation-state. A Deployment's ReplicaSets are left out: the deployment controller copies the
    Deployment's annotations onto its ReplicaSets and, as in Kubernetes, never removes one it copied, so a record
    the engine removed from the Deployment stays on the ReplicaSet of that time; kubex never reads it there."""
    out = {}
    for kind in ("deployments", "replicasets", "statefulsets", "daemonsets", "jobs"):
        for o in sim.kubectl_json("get", kind, "-A")["items"]:
            v = o["metadata"].get("annotations", {}).get(STATE)
            if v and not any(r.get("controller") for r in o["metadata"].get("ownerReferences", [])):
                out[f"{kind}/{o['metadata']['namespace']}/{o['metadata']['name']}"] = v
    return out


def test_chaos_faults_and_leader_kills_converge(sim_factory, tmp_path):  # ENG-4, ENG-1, ACT-3, ACT-9, CON-9, SIM-8
    t0 = time.monotonic()
    phases = {}
    sim, metrics = start_gpu_sim(sim_factory, tmp_path, SIM_CONFIG + FAULTS)
    assert counts(sim)["seed"] == 27, counts(sim)
    prom = RestartablePrometheus(metrics)
    replicas = []
    watches = []
    try:
        install_starter(sim, prom)
        api = core(sim)
        taints = NodeTaintWatch(api, TAINT)  # CON-9: every taint from before the first engine to the end
        watches.append(taints)

        # ACT-5/ACT-9: a resize the PDB refuses, under a strategy that does not retry.
        sim.kubectl("create", "namespace", PDB_NS)
        apply(sim, NO_RETRY_STRATEGY, {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                                       "metadata": {"name": "infer", "namespace": PDB_NS},
                                       "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "infer"}}}})
        refused_app = kai_deployment("infer", PDB_NS, "0.25", "5", "1024", "g-node-1")
        refused_app["metadata"]["labels"].pop("nvidia.com/gpu.present")  # only the static policy manages it
        apply(sim, refused_app)

        # ACT-3: the reactive upsize of test_actuation.py (3 replicas sharing a GPU at 0.25, 30 % SM each -> 0.36).
        sim.kubectl("create", "namespace", RS_NS)
        # Its Deployment is applied only once the refusal is on record (below): applied now, the new leader could
        # finish all three evictions while the test still waits for the refusal, leaving nothing to kill it between.
        resized = availability(sim, RS_NS, 3, from_available=True)
        watches.append(resized)

        # CON-7: a-node-0 holds three 0.12 pods (36 %) under a PDB allowing one disruption, a-node-1 one 0.5 pod.
        sim.kubectl("create", "namespace", CON_NS)
        apply(sim, queue(CON_QUEUE + "-parent"), queue(CON_QUEUE, parent=CON_QUEUE + "-parent"))
        in_pool = {"nodeSelector": {"pool": "a"}}
        place(sim, "a-node-0", deployment("mover", "0.12", replicas=3, spec=in_pool), count=3)
        place(sim, "a-node-1", deployment("anchor", "0.5", spec=in_pool))
        apply(sim, {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                    "metadata": {"name": "mover", "namespace": CON_NS},
                    "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": "mover"}}}})
        wait_for(lambda: sim.kubectl_json("get", "pdb", "mover", "-n", CON_NS)["status"].get("disruptionsAllowed")
                 == 1, timeout=HANG, what="the movers' PDB allowing one disruption")
        movers = PodAvailabilityWatch(api, CON_NS, "app=mover", 3)
        watches.append(movers)

        # Running and Ready (readyDelay 10s) before its availability WATCH starts: that WATCH counts from here.
        (refused_pod,) = wait_for(lambda: (r := running(sim, PDB_NS)) and len(r) == 1 and pod_available(r[0]) and r,
                                  timeout=HANG, what="the refused workload's pod running and Ready")
        uid = refused_pod["metadata"]["uid"]
        refused_watch = PodAvailabilityWatch(api, PDB_NS, "app=infer", 1)
        watches.append(refused_watch)
        apply(sim, static_policy("act-restart", PDB_NS, "0.5", strategy="act-restart"))
        phases["setup"] = time.monotonic() - t0

        # ENG-1: two replicas. The second registers the webhooks last, so it serves admission (see the docstring).
        a = start_replica(sim, replicas)
        wait_for(lambda: holder(sim, ENGINE_NS) == a.identity, timeout=HANG, what="the first replica leading")
        b = start_replica(sim, replicas)
        b.wait_line("new leader observed", timeout=HANG)
        assert b.find("successfully acquired lease") is None, "exactly one leader"
        wait_for(lambda: webhook_health(sim) == "True", timeout=180, interval=1, what="PodAdmissionWebhookHealthy=True")

        # ACT-5, ACT-9: the refusal is on the owner before the leader dies.
        a.wait_line("rightsizing summary", phase="actuation", namespace=PDB_NS, rightsizingResult="BLOCKED",
                    timeout=180)
        state = wait_for(lambda: (s := actuation_state(sim)) and uid in s.get("pdbBlocked", {}) and s, timeout=90,
                         interval=0.5, what=f"{STATE} with the refused pod")
        refused = refusals(sim)
        assert refused >= 1
        wait_for(lambda: events(sim, PDB_NS, "EvictionBlocked"), timeout=HANG, interval=0.5,
                 what="the refusal's EvictionBlocked event")
        # ACT-9: from here to the end, no repeat of the refusal and no eviction in its namespace.
        not_retried = EventWatch(api, PDB_NS, "EvictionBlocked", "PolicyEvaluationEvictResize")
        watches.append(not_retried)

        # The upsize: the leader evicts the first pod and is SIGKILLed before it can evict the last: seen on the WATCH
        # stream itself, the kill lands well within the 10 s its replacement takes to turn Ready (ACT-3), and the
        # check below proves it did land before the last eviction.
        assert not resized.count.gone, resized.count.gone
        apply(sim, kai_deployment("infer", RS_NS, "0.25", "30", "1024", "g-node-0", replicas=3))
        wait_for(lambda: resized.count.gone, timeout=420, interval=0.005, what="the first resize eviction")
        first_kill = time.monotonic()
        phases["to first eviction"] = first_kill - t0

        def before_the_last():
            assert "0.25" in fractions(sim, RS_NS), "killed before the last eviction: a pod still runs at 0.25"
            assert len(resized.count.gone) < 3, resized.count.gone
        kill_leader(sim, a, b, before_the_last)
        wait_recommendation(sim, RS_NS, "0.36", timeout=HANG)  # REA-6: written before the first eviction

        # The new leader finishes the resize, one pod at a time (ACT-3), to the fault-free end state.
        wait_for(lambda: fractions(sim, RS_NS) == ["0.36", "0.36", "0.36"], timeout=420, interval=1,
                 what=f"all three pods at 0.36 under the new leader; its output:\n{b.output()}")
        assert [l for l in b.find_all("evicted pod") if l.get("namespace") == RS_NS], "the new leader evicted"
        b.wait_line("rightsizing summary", phase="actuation", namespace=RS_NS, rightsizingResult="IN_SYNC", timeout=180)
        # ACT-9: the new leader remembered the refusal and says why it does not evict.
        line = b.wait_line("rightsizing summary", phase="actuation", namespace=PDB_NS, rightsizingResult="BLOCKED",
                           timeout=120)
        assert "pdb-blocked" in line["failedChecks"], line
        phases["resize"] = time.monotonic() - first_kill

        # The drain: a third replica stands by (as the killed pod would be restarted) and serves admission.
        c = start_replica(sim, replicas)
        c.wait_line("new leader observed", timeout=HANG)
        drain_start = time.monotonic()
        p = policy(POLICY, {"matchLabels": {"pool": "a"}})
        del p["spec"]["requeueAfter"]  # the default, 1m
        (path := tmp_path / "policy.json").write_text(json.dumps(p))
        sim.kubectl("uncordon", "-l", "pool=a")  # place() leaves the pool cordoned: no destination then (CON-5)
        # The fault-free sequence, from the same cluster, before the policy exists.
        (plan,) = plan_json(sim, "-f", str(path))["policies"]
        assert [s["node"] for s in plan["drainSequence"]] == ["a-node-0"], plan["drainSequence"]
        expected_moves = sorted(pl["to"] for pl in plan["drainSequence"][0]["placements"])
        assert expected_moves == ["a-node-1"] * 3, plan["drainSequence"]
        apply(sim, p)
        wait_for(lambda: taints.count.state, timeout=120, interval=0.02, what="a node tainted")
        assert dict(taints.count.state) == {"a-node-0": POLICY}, taints.count.state

        def before_empty():
            assert "a-node-0" in running_on(sim, "mover"), "killed before a-node-0 was empty"
        healthy_since = kill_leader(sim, b, c, before_empty)

        def drained():
            st = get_policy(sim, POLICY).get("status", {})
            return st.get("lastDrainedNode") == "a-node-0" and "drainingNode" not in st and not taints.count.state
        wait_for(drained, timeout=300, interval=1, what=f"the drain of a-node-0 finished; output:\n{c.output()}")
        c.wait_line("drain completed", policy=POLICY, node="a-node-0", timeout=HANG)  # OBS-4
        assert running_on(sim, "mover") == expected_moves
        assert running_on(sim, "anchor") == ["a-node-1"]
        phases["drain"] = time.monotonic() - drain_start

        # ACT-9 under the last leader: over more than one requeue (1m) with its webhook healthy, up to a whole
        # actuation reconcile after it (OBS-5's counter), the refused pod is not evicted again (events, its pod's
        # WATCH, kubex_evictions_total), and its record is unchanged.
        nothing_evicted_over_a_requeue(sim, c, PDB_NS, "infer", healthy_since, "EvictionBlocked",
                                       "PolicyEvaluationEvictResize")
        assert webhook_healthy_gauge(c) == 1
        assert actuation_state(sim) == state
        assert [q["metadata"]["uid"] for q in running(sim, PDB_NS)] == [uid]
        assert refusals(sim) == refused

        # CON-10: after the drain the policy finds nothing else to do, with the plan's message.
        wait_for(lambda: (cond := available(sim, POLICY)) and cond["reason"] == "NoCandidate",
                 timeout=REQUEUE + HANG, interval=1, what="NoCandidate after the drain")
        assert available(sim, POLICY)["message"] == plan["afterSequence"]["message"]

        # The WATCH proofs, from the first event to now.
        for w in watches:
            w.stop()
        resized_count, movers_count = resized.result(), movers.result()
        assert len(resized_count.gone) >= 3, resized_count.gone
        assert resized_count.max <= 1, f"ACT-3: {resized_count.max} resized pods unavailable: {resized_count.worst}"
        assert len(movers_count.gone) >= 3, movers_count.gone
        assert movers_count.max <= 1, f"PDB: {movers_count.max} drained pods unavailable: {movers_count.worst}"
        refused_count = refused_watch.result()
        assert refused_count.max == 0 and not refused_count.gone, refused_count.worst
        taint_count = taints.result()
        assert taint_count.max <= 1, f"CON-9: two nodes tainted at once: {taint_count.worst}"
        assert taint_count.order == [("a-node-0", POLICY)], taint_count.order
        assert not_retried.result().seen == [], f"ACT-9: the refused pod was tried again: {not_retried.seen}"
        twice = {pod: n for pod, n in evicted_pods(replicas, RS_NS).items() if n > 1}
        assert not twice, f"pods evicted more than once: {twice}"
        # OBS-2 under faults: an Event POST answered 500/503 is not retried (as client-go's recorder gives up on a
        # status error) and the killed leader's queue dies with it, so events may be missing; none may repeat.
        resize_events = events(sim, RS_NS, "PolicyEvaluationEvictResize")
        evicted = [e["involvedObject"]["name"] for e in resize_events]
        assert len(evicted) == len(set(evicted)) and all(e.get("count", 1) == 1 for e in resize_events), \
            resize_events
        assert set(evicted) <= resized_count.gone, (evicted, resized_count.gone)

        # The refused pod's record goes with its pod; nothing kubex wrote is left behind (ENG-4).
        sim.kubectl("delete", "pod", refused_pod["metadata"]["name"], "-n", PDB_NS, "--wait=false")
        wait_for(lambda: [q for q in running(sim, PDB_NS)
                          if q["metadata"].get("annotations", {}).get("gpu-fraction") == "0.5"],
                 timeout=120, interval=0.5, what="the refused pod's replacement at 0.5")
        try:
            wait_for(lambda: not actuation_states(sim), timeout=120, interval=1, what=f"no {STATE} left on any owner")
        except AssertionError as e:
            raise AssertionError(f"{e}: {actuation_states(sim)}") from None
        assert not kubex_taints(sim), kubex_taints(sim)

        # SIM-8: every kind of fault was served to the engine.
        total = counts(sim)["total"]
        assert total["tooManyRequests"] > 0 and total["serverError"].get("500", 0) > 0 and \
            total["serverError"].get("503", 0) > 0, total
        assert total["watchGone"] > 0 and total["watchCut"]["clean"] + total["watchCut"]["abrupt"] > 0, total
        phases["total"] = time.monotonic() - t0
        print("chaos phases (s):", {k: round(v) for k, v in phases.items()}, "faults:", total)
    finally:
        for w in watches:
            w.stream.stop(catch_up=False)
        for i, e in enumerate(replicas):
            e.kill()
            with e.lock:  # kept with the test's tmp_path, for a failure's post-mortem
                (tmp_path / f"engine-{'abc'[i] if i < 3 else i}.log").write_text("\n".join(e.raw) + "\n")
        prom.stop()

