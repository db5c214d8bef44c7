"""Built-in KAI queues end to end (QUE-1, QUE-2) with `kubex engine --kai-queues` against kubex-sim and real
kubectl: both queues appear with QUE-1's spec and label and a QueueCreated event, an existing queue is never
modified, a deleted one is recreated within a check, KaiQueuesReady reports QueuesReady, a cluster without the
Queue API reports QueueAPINotInstalled until the API appears, and without the flag nothing is created and the
condition is removed. The hidden --kai-queues-check-interval shortens the 5m check for the tests."""
import json

from kubernetes import client as k8s

from conftest import wait_for
from engine_proc import (Engine, apply_global_config, condition, condition_is, global_config,
                         global_config_events, install_crds)

PARENT, CHILD = "kubex-parent-queue", "kubex-unlimited-gpu-queue"
UNLIMITED = {"quota": -1, "limit": -1, "overQuotaWeight": 1}
MANAGED_BY = {"app.kubernetes.io/managed-by": "kubex-automation-engine"}


def queues(sim):
    return {q["metadata"]["name"]: q for q in sim.kubectl_json("get", "queues.scheduling.run.ai")["items"]}


def prepared_sim(sim_factory, *args):
    sim = sim_factory(list(args))
    install_crds(sim)
    apply_global_config(sim, {})
    return sim


def check_builtin(q, parent):  # QUE-1
    assert q["metadata"]["labels"] == MANAGED_BY
    assert "namespace" not in q["metadata"]
    assert q["spec"]["resources"] == {"cpu": UNLIMITED, "gpu": UNLIMITED, "memory": UNLIMITED}
    if parent:
        assert q["spec"]["parentQueue"] == parent
    else:
        assert "parentQueue" not in q["spec"]


def test_queues_are_created_and_recreated(sim_factory):  # QUE-1, QUE-2, OBS-2, OBS-5
    sim = prepared_sim(sim_factory)
    assert not queues(sim)
    eng = Engine(sim.kubeconfig, "--kai-queues", "--kai-queues-check-interval", "1s")
    try:
        wait_for(lambda: {PARENT, CHILD} <= set(queues(sim)), what=f"both queues; engine:\n{eng.output()}")
        got = queues(sim)
        check_builtin(got[PARENT], None)
        check_builtin(got[CHILD], PARENT)
        ready = wait_for(lambda: condition_is(sim, "KaiQueuesReady", "True", "QueuesReady"),
                         what="KaiQueuesReady=True/QueuesReady")
        assert ready["observedGeneration"] == global_config(sim)["metadata"]["generation"]
        created = wait_for(lambda: len(global_config_events(sim, "QueueCreated")) >= 2 and
                           global_config_events(sim, "QueueCreated"), what="two QueueCreated events")
        assert {e["type"] for e in created} == {"Normal"}
        messages = " ".join(e["message"] for e in created)
        assert PARENT in messages and CHILD in messages

        # A deleted queue comes back within a check (here 1s), as a new object with the same spec.
        old_uid = got[CHILD]["metadata"]["uid"]
        sim.kubectl("delete", "queues.scheduling.run.ai", CHILD)
        back = wait_for(lambda: queues(sim).get(CHILD) if CHILD in queues(sim) and
                        queues(sim)[CHILD]["metadata"]["uid"] != old_uid else None,
                        what="the deleted queue to be recreated")
        check_builtin(back, PARENT)
        assert wait_for(lambda: eng.reconciles("kaiqueues") >= 3, what="kaiqueues reconciles in /metrics")
        assert "QueueCreateFailed" not in json.dumps(global_config(sim)["status"])
    finally:
        assert eng.stop() == 0, eng.output()
    # QUE-1: the engine never deletes its queues, not even when it stops.
    assert {PARENT, CHILD} <= set(queues(sim))


def test_existing_queue_is_left_untouched(sim_factory):  # QUE-1: an existing queue is never modified
    sim = prepared_sim(sim_factory)
    custom = {"apiVersion": "scheduling.run.ai/v2", "kind": "Queue", "metadata": {"name": CHILD, "labels": {"team": "a"}},
              "spec": {"resources": {"gpu": {"quota": 4, "limit": 8, "overQuotaWeight": 2}}}}
    sim.kubectl("create", "-f", "-", input=json.dumps(custom))
    before = queues(sim)[CHILD]
    eng = Engine(sim.kubeconfig, "--kai-queues", "--kai-queues-check-interval", "1s")
    try:
        wait_for(lambda: PARENT in queues(sim), what=f"the parent queue; engine:\n{eng.output()}")
        wait_for(lambda: condition_is(sim, "KaiQueuesReady", "True", "QueuesReady"), what="KaiQueuesReady=True")
        # Several checks later the user's queue is exactly as it was.
        wait_for(lambda: eng.reconciles("kaiqueues") >= 4, what="four kaiqueues checks")
        after = queues(sim)[CHILD]
        assert after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]
        assert after["spec"] == before["spec"] and after["metadata"]["labels"] == {"team": "a"}
        created = global_config_events(sim, "QueueCreated")
        assert len(created) == 1 and PARENT in created[0]["message"]
    finally:
        assert eng.stop() == 0, eng.output()


QUEUE_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "queues.scheduling.run.ai"},
    "spec": {"group": "scheduling.run.ai", "scope": "Cluster",
             "names": {"plural": "queues", "singular": "queue", "kind": "Queue", "listKind": "QueueList"},
             "versions": [{"name": "v2", "served": True, "storage": True,
                           "schema": {"openAPIV3Schema": {"type": "object",
                                                          "x-kubernetes-preserve-unknown-fields": True}}}]}}


def test_no_queue_api_then_installed(sim_factory):  # QUE-2: QueueAPINotInstalled, and it keeps checking
    sim = prepared_sim(sim_factory, "--no-cluster")  # an API server only: no Queue CRD
    eng = Engine(sim.kubeconfig, "--kai-queues", "--kai-queues-check-interval", "1s")
    try:
        c = wait_for(lambda: condition_is(sim, "KaiQueuesReady", "False", "QueueAPINotInstalled"),
                     what=f"KaiQueuesReady=False/QueueAPINotInstalled; engine:\n{eng.output()}")
        assert "scheduling.run.ai/v2" in c["message"]
        assert eng.proc.poll() is None
        # KAI gets installed: the next check creates the queues.
        sim.kubectl("apply", "-f", "-", input=json.dumps(QUEUE_CRD))
        wait_for(lambda: condition_is(sim, "KaiQueuesReady", "True", "QueuesReady"), timeout=30,
                 what=f"KaiQueuesReady=True after the CRD appeared; engine:\n{eng.output()}")
        got = queues(sim)
        check_builtin(got[PARENT], None)
        check_builtin(got[CHILD], PARENT)
    finally:
        assert eng.stop() == 0, eng.output()


def test_without_the_flag_nothing_is_created_and_the_condition_is_removed(sim_factory):  # QUE-1, QUE-2
    sim = prepared_sim(sim_factory)
    co = k8s.CustomObjectsApi(sim.client())
    # What an earlier engine with --kai-queues left behind.
    co.patch_cluster_custom_object_status(
        "rightsizing.kubex.ai", "v1alpha1", "globalconfigurations", "global-config",
        {"status": {"conditions": [{"type": "KaiQueuesReady", "status": "True", "reason": "QueuesReady",
                                    "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}})
    assert condition(global_config(sim), "KaiQueuesReady")
    eng = Engine(sim.kubeconfig)
    try:
        wait_for(lambda: condition(global_config(sim), "KaiQueuesReady") is None,
                 what=f"KaiQueuesReady removed; engine:\n{eng.output()}")
        wait_for(lambda: eng.reconciles("kaiqueues") >= 1, what="a kaiqueues reconcile")
        assert not queues(sim)
        assert not global_config_events(sim, "QueueCreated")
    finally:
        assert eng.stop() == 0, eng.output()
