"""kubex-sim's workload controllers against the real kubectl and the official Python client (issue 3 item 2).

Pods stay Pending until the schedulers and the kubelet emulation land, so these tests move pods through their
phases themselves where a behaviour depends on readiness: they pin pods to a label no node has (so no scheduler
or kubelet ever touches them) and write pod status through the /status subresource, as a kubelet would.
"""
import json
import re

from kubernetes import client

from conftest import wait_for

# No node carries this label: pods stay unscheduled, so only the test moves them through their phases.
NOWHERE = {"kubex.test/nowhere": "true"}


def template(app, image="busybox:1.36", node_selector=None, restart="Always"):
    spec = {"containers": [{"name": "c", "image": image}], "restartPolicy": restart}
    if node_selector:
        spec["nodeSelector"] = node_selector
    return {"metadata": {"labels": {"app": app}}, "spec": spec}


def deployment(name, replicas, **kw):
    strategy = kw.pop("strategy", None)
    d = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
         "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}}, "template": template(name, **kw)}}
    if strategy:
        d["spec"]["strategy"] = strategy
    return d


def make_ready(core, namespace, name):
    """What the kubelet reports for a started pod: Running with the Ready condition."""
    core.patch_namespaced_pod_status(name, namespace, {"status": {"phase": "Running", "conditions": [
        {"type": "Ready", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}})


def set_phase(core, namespace, name, phase):
    core.patch_namespaced_pod_status(name, namespace, {"status": {"phase": phase}})


def live_pods(core, namespace, selector):
    return [p for p in core.list_namespaced_pod(namespace, label_selector=selector).items
            if p.metadata.deletion_timestamp is None]


def ready_all(core, namespace, selector):
    for p in live_pods(core, namespace, selector):
        if p.status.phase != "Running":
            make_ready(core, namespace, p.metadata.name)


def controller_of(obj):
    refs = [r for r in (obj.metadata.owner_references or []) if r.controller]
    assert len(refs) == 1, obj.metadata.owner_references
    return refs[0]


def test_deployment_creates_replicaset_and_pods_with_owner_references(sim, namespace):
    # Deployment -> ReplicaSet <deploy>-<pod-template-hash> -> pods, each with a controller ownerReference.
    sim.kubectl("create", "deployment", "web", "-n", namespace, "--image=nginx:1.25", "--replicas=3")
    apps, core = client.AppsV1Api(sim.client()), client.CoreV1Api(sim.client())
    dep = apps.read_namespaced_deployment("web", namespace)
    rs = wait_for(lambda: apps.list_namespaced_replica_set(namespace).items, what="a ReplicaSet")[0]
    h = rs.metadata.labels["pod-template-hash"]
    assert re.fullmatch(r"[bcdfghjklmnpqrstvwxz2456789]{10}", h)
    assert rs.metadata.name == f"web-{h}"
    assert rs.spec.selector.match_labels == {"app": "web", "pod-template-hash": h}
    assert rs.spec.template.metadata.labels["pod-template-hash"] == h
    assert rs.metadata.annotations["deployment.kubernetes.io/revision"] == "1"
    assert rs.metadata.annotations["deployment.kubernetes.io/desired-replicas"] == "3"
    owner = controller_of(rs)
    assert (owner.kind, owner.name, owner.uid, owner.block_owner_deletion) == ("Deployment", "web", dep.metadata.uid, True)
    pods = wait_for(lambda: len(live_pods(core, namespace, "app=web")) == 3 and live_pods(core, namespace, "app=web"),
                    what="3 pods")
    for p in pods:
        o = controller_of(p)
        assert (o.kind, o.uid, o.block_owner_deletion) == ("ReplicaSet", rs.metadata.uid, True)
        assert p.metadata.name.startswith(f"web-{h}-") and p.metadata.labels["pod-template-hash"] == h
    status = wait_for(lambda: (s := apps.read_namespaced_deployment("web", namespace).status).updated_replicas == 3 and s,
                      what="deployment status")
    assert status.observed_generation == 1 and status.replicas == 3
    assert {c.type for c in status.conditions} == {"Available", "Progressing"}
    # The events a kube-controller-manager would record.
    events = wait_for(lambda: {e.reason for e in core.list_namespaced_event(namespace).items} >=
                      {"ScalingReplicaSet", "SuccessfulCreate"} and core.list_namespaced_event(namespace).items,
                      what="ScalingReplicaSet and SuccessfulCreate events")
    assert any(e.reason == "ScalingReplicaSet" and e.message == f"Scaled up replica set web-{h} from 0 to 3"
               for e in events)


def test_scaling_up_and_down_removes_not_ready_pods_first(sim, namespace):
    apps, core = client.AppsV1Api(sim.client()), client.CoreV1Api(sim.client())
    apps.create_namespaced_deployment(namespace, deployment("api", 2, node_selector=NOWHERE))
    wait_for(lambda: len(live_pods(core, namespace, "app=api")) == 2, what="2 pods")
    sim.kubectl("scale", "deployment", "api", "-n", namespace, "--replicas=5")
    wait_for(lambda: len(live_pods(core, namespace, "app=api")) == 5, what="scaled up to 5")
    keep = live_pods(core, namespace, "app=api")[2].metadata.name
    make_ready(core, namespace, keep)
    sim.kubectl("scale", "deployment", "api", "-n", namespace, "--replicas=1")
    wait_for(lambda: [p.metadata.name for p in live_pods(core, namespace, "app=api")] == [keep],
             what="scaled down to the one ready pod")
    dep = wait_for(lambda: (d := apps.read_namespaced_deployment("api", namespace)).status.available_replicas == 1 and d,
                   what="available 1")
    assert [c.status for c in dep.status.conditions if c.type == "Available"] == ["True"]


def test_template_change_rolls_to_a_new_replicaset_and_back(sim, namespace):
    apps, core = client.AppsV1Api(sim.client()), client.CoreV1Api(sim.client())
    strategy = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}
    apps.create_namespaced_deployment(namespace, deployment("roll", 3, node_selector=NOWHERE, strategy=strategy))
    wait_for(lambda: len(live_pods(core, namespace, "app=roll")) == 3, what="3 pods")
    ready_all(core, namespace, "app=roll")
    first = apps.list_namespaced_replica_set(namespace).items[0].metadata.name
    sim.kubectl("set", "image", "deployment/roll", "-n", namespace, "c=busybox:1.37")
    wait_for(lambda: len(apps.list_namespaced_replica_set(namespace).items) == 2, what="a second ReplicaSet")
    # maxSurge 1 / maxUnavailable 0: one new pod; the old set keeps all 3 until it is ready.
    wait_for(lambda: len(live_pods(core, namespace, "app=roll")) == 4, what="one surge pod")
    assert apps.read_namespaced_replica_set(first, namespace).spec.replicas == 3

    def progressed():
        ready_all(core, namespace, "app=roll")
        assert len(live_pods(core, namespace, "app=roll")) <= 4, "more than replicas + maxSurge"
        d = apps.read_namespaced_deployment("roll", namespace)
        return (apps.read_namespaced_replica_set(first, namespace).spec.replicas == 0
                and d.status.updated_replicas == 3 and d.status.available_replicas == 3
                and len(live_pods(core, namespace, "app=roll")) == 3)
    wait_for(progressed, timeout=60, what="rollout to finish")
    images = {p.spec.containers[0].image for p in live_pods(core, namespace, "app=roll")}
    assert images == {"busybox:1.37"}
    assert "successfully rolled out" in sim.kubectl("rollout", "status", "deployment/roll", "-n", namespace,
                                                    "--timeout=20s").stdout
    d = apps.read_namespaced_deployment("roll", namespace)
    assert d.metadata.annotations["deployment.kubernetes.io/revision"] == "2"
    progressing = [c for c in d.status.conditions if c.type == "Progressing"][0]
    assert progressing.reason == "NewReplicaSetAvailable"
    # kubectl rollout undo goes back to the first ReplicaSet, which gets revision 3.
    sim.kubectl("rollout", "undo", "deployment/roll", "-n", namespace)

    def rolled_back():
        ready_all(core, namespace, "app=roll")
        rs = apps.read_namespaced_replica_set(first, namespace)
        return rs.spec.replicas == 3 and rs.metadata.annotations["deployment.kubernetes.io/revision"] == "3"
    wait_for(rolled_back, timeout=60, what="rollback to the first ReplicaSet")


def test_deleted_and_evicted_pods_are_replaced(sim, namespace):
    apps, core = client.AppsV1Api(sim.client()), client.CoreV1Api(sim.client())
    apps.create_namespaced_deployment(namespace, deployment("rep", 2))
    first = {p.metadata.name for p in wait_for(lambda: len(live_pods(core, namespace, "app=rep")) == 2
                                               and live_pods(core, namespace, "app=rep"), what="2 pods")}
    victim = sorted(first)[0]
    core.delete_namespaced_pod(victim, namespace)
    wait_for(lambda: len(names := {p.metadata.name for p in live_pods(core, namespace, "app=rep")}) == 2
             and victim not in names, what="a replacement for the deleted pod")
    evictee = sorted({p.metadata.name for p in live_pods(core, namespace, "app=rep")})[0]
    core.create_namespaced_pod_eviction(evictee, namespace, {
        "apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": evictee, "namespace": namespace}})
    wait_for(lambda: len(names := {p.metadata.name for p in live_pods(core, namespace, "app=rep")}) == 2
             and evictee not in names, what="a replacement for the evicted pod")


def statefulset(name, replicas, policy="OrderedReady"):
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": name},
            "spec": {"replicas": replicas, "serviceName": name, "podManagementPolicy": policy,
                     "selector": {"matchLabels": {"app": name}}, "template": template(name, node_selector=NOWHERE)}}


def test_statefulset_ordinal_names_ordered_ready_and_recreation(sim, namespace):
    apps, core = client.AppsV1Api(sim.client()), client.CoreV1Api(sim.client())
    apps.create_namespaced_stateful_set(namespace, statefulset("db", 3))
    names = lambda: sorted(p.metadata.name for p in live_pods(core, namespace, "app=db"))  # noqa: E731
    wait_for(lambda: names() == ["db-0"], what="db-0")
    p0 = core.read_namespaced_pod("db-0", namespace)
    assert p0.metadata.labels["statefulset.kubernetes.io/pod-name"] == "db-0"
    assert p0.metadata.labels["apps.kubernetes.io/pod-index"] == "0"
    assert p0.metadata.labels["controller-revision-hash"].startswith("db-")
    assert (p0.spec.hostname, p0.spec.subdomain) == ("db-0", "db")
    assert controller_of(p0).kind == "StatefulSet"
    # OrderedReady: db-1 only once db-0 is Running and Ready, and so on.
    # The controller writes status after it creates the pod: wait for that write rather than racing it (a loaded
    # CI machine saw replicas 0 right after db-0 appeared).
    wait_for(lambda: apps.read_namespaced_stateful_set("db", namespace).status.replicas == 1,
             what="status.replicas 1")
    assert names() == ["db-0"]
    make_ready(core, namespace, "db-0")
    wait_for(lambda: names() == ["db-0", "db-1"], what="db-1 after db-0 is ready")
    make_ready(core, namespace, "db-1")
    wait_for(lambda: names() == ["db-0", "db-1", "db-2"], what="db-2 after db-1 is ready")
    make_ready(core, namespace, "db-2")
    uid = core.read_namespaced_pod("db-1", namespace).metadata.uid
    core.delete_namespaced_pod("db-1", namespace)
    wait_for(lambda: (p := core.read_namespaced_pod("db-1", namespace)).metadata.uid != uid and p,
             what="db-1 recreated with the same name")
    make_ready(core, namespace, "db-1")
    st = wait_for(lambda: (s := apps.read_namespaced_stateful_set("db", namespace).status).ready_replicas == 3 and s,
                  what="3 ready replicas")
    assert st.current_revision == st.update_revision and st.observed_generation == 1
    # A template change replaces pods from the highest ordinal down.
    apps.patch_namespaced_stateful_set("db", namespace, {"spec": {"template": {"metadata": {"annotations": {"v": "2"}}}}})
    new_rev = wait_for(lambda: (s := apps.read_namespaced_stateful_set("db", namespace).status).update_revision
                       != st.update_revision and s.update_revision, what="a new update revision")
    rev = lambda n: core.read_namespaced_pod(n, namespace).metadata.labels["controller-revision-hash"]  # noqa: E731
    wait_for(lambda: rev("db-2") == new_rev, what="db-2 updated first")
    assert rev("db-0") == rev("db-1") == st.update_revision
    sim.kubectl("scale", "statefulset", "db", "-n", namespace, "--replicas=1")
    wait_for(lambda: "db-2" not in names(), what="scale down removes the highest ordinal")


def test_statefulset_parallel_creates_all_pods_at_once(sim, namespace):
    apps, core = client.AppsV1Api(sim.client()), client.CoreV1Api(sim.client())
    apps.create_namespaced_stateful_set(namespace, statefulset("par", 3, policy="Parallel"))
    wait_for(lambda: sorted(p.metadata.name for p in live_pods(core, namespace, "app=par")) == ["par-0", "par-1", "par-2"],
             what="all three pods without waiting for readiness")


def test_job_creates_a_pod_and_completes(sim, namespace):
    batch, core = client.BatchV1Api(sim.client()), client.CoreV1Api(sim.client())
    job = batch.create_namespaced_job(namespace, {
        "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "once"},
        "spec": {"template": template("once", node_selector=NOWHERE, restart="Never")}})
    pod = wait_for(lambda: core.list_namespaced_pod(namespace, label_selector="job-name=once").items,
                   what="the Job's pod")[0]
    uid = job.metadata.uid
    assert pod.metadata.name.startswith("once-")
    assert pod.metadata.labels["batch.kubernetes.io/job-name"] == "once"
    assert pod.metadata.labels["batch.kubernetes.io/controller-uid"] == uid == pod.metadata.labels["controller-uid"]
    assert controller_of(pod).kind == "Job"
    wait_for(lambda: batch.read_namespaced_job("once", namespace).status.active == 1, what="status.active 1")
    assert batch.read_namespaced_job("once", namespace).status.start_time is not None
    set_phase(core, namespace, pod.metadata.name, "Succeeded")
    done = wait_for(lambda: (s := batch.read_namespaced_job("once", namespace).status).completion_time and s,
                    what="Job complete")
    assert done.succeeded == 1 and not done.active
    assert {(c.type, c.status) for c in done.conditions} >= {("SuccessCriteriaMet", "True"), ("Complete", "True")}
    assert "Complete" in sim.kubectl("get", "job", "once", "-n", namespace).stdout


def test_cronjob_creates_jobs_named_by_scheduled_minute(sim, namespace):
    # Real time: "@every 2s" (robfig/cron descriptor, accepted by kube) keeps the test short.
    batch = client.BatchV1Api(sim.client())
    cj = batch.create_namespaced_cron_job(namespace, {
        "apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "tick"},
        "spec": {"schedule": "@every 2s", "concurrencyPolicy": "Forbid",
                 "jobTemplate": {"metadata": {"labels": {"from": "tick"}},
                                 "spec": {"template": template("tick", node_selector=NOWHERE, restart="Never")}}}})
    job = wait_for(lambda: batch.list_namespaced_job(namespace).items, timeout=15, what="a Job from the CronJob")[0]
    assert controller_of(job).uid == cj.metadata.uid and job.metadata.labels["from"] == "tick"
    scheduled = job.metadata.annotations["batch.kubernetes.io/cronjob-scheduled-timestamp"]
    minutes = int(__import__("datetime").datetime.fromisoformat(scheduled.replace("Z", "+00:00")).timestamp()) // 60
    assert job.metadata.name == f"tick-{minutes}"
    status = wait_for(lambda: (s := batch.read_namespaced_cron_job("tick", namespace).status).active and s,
                      what="CronJob status")
    assert [a.name for a in status.active] == [job.metadata.name] and status.last_schedule_time is not None


def test_daemonset_one_pod_per_eligible_node_pinned_by_affinity(sim, namespace):
    apps, core = client.AppsV1Api(sim.client()), client.CoreV1Api(sim.client())
    gpu_nodes = sorted(n.metadata.name for n in core.list_node(label_selector="nvidia.com/gpu.present=true").items)
    assert gpu_nodes
    ds = template("agent")
    ds["spec"]["nodeSelector"] = {"nvidia.com/gpu.present": "true"}
    apps.create_namespaced_daemon_set(namespace, {
        "apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent"},
        "spec": {"selector": {"matchLabels": {"app": "agent"}}, "template": ds}})
    pods = wait_for(lambda: len(p := live_pods(core, namespace, "app=agent")) == len(gpu_nodes) and p,
                    what="one pod per GPU node")
    targets = []
    for p in pods:
        term = p.spec.affinity.node_affinity.required_during_scheduling_ignored_during_execution.node_selector_terms[0]
        field = term.match_fields[0]
        assert (field.key, field.operator) == ("metadata.name", "In")
        targets += field.values
        assert {t.key for t in p.spec.tolerations} >= {"node.kubernetes.io/unschedulable",
                                                       "node.kubernetes.io/not-ready"}
    assert sorted(targets) == gpu_nodes
    st = wait_for(lambda: (s := apps.read_namespaced_daemon_set("agent", namespace).status).desired_number_scheduled
                  == len(gpu_nodes) and s, what="DaemonSet status")
    assert st.current_number_scheduled == len(gpu_nodes) and st.number_misscheduled == 0


def test_kubeai_model_creates_owned_pods_with_args_and_gpu_request(sim, namespace, tmp_path):
    core = client.CoreV1Api(sim.client())
    manifest = tmp_path / "model.yaml"
    manifest.write_text(json.dumps({
        "apiVersion": "kubeai.org/v1", "kind": "Model", "metadata": {"name": "llama", "namespace": namespace},
        "spec": {"url": "hf://meta-llama/Llama-3.1-8B-Instruct", "engine": "VLLM", "resourceProfile": "nvidia-gpu-t4:2",
                 "minReplicas": 2, "args": ["--max-model-len=4096"], "env": {"VLLM_LOGGING_LEVEL": "DEBUG"}}}))
    sim.kubectl("apply", "-f", str(manifest))
    model = sim.kubectl_json("get", "model", "llama", "-n", namespace)
    pods = wait_for(lambda: len(p := live_pods(core, namespace, "model=llama")) == 2 and p, what="2 model pods")
    for p in pods:
        o = controller_of(p)
        assert (o.api_version, o.kind, o.uid) == ("kubeai.org/v1", "Model", model["metadata"]["uid"])
        h = p.metadata.labels["pod-hash"]
        assert re.fullmatch(rf"model-llama-{h}-[a-z0-9]{{5}}", p.metadata.name), p.metadata.name
        assert p.metadata.labels["app.kubernetes.io/managed-by"] == "kubeai"
        (c,) = p.spec.containers
        assert c.name == "server" and c.image.startswith("vllm/vllm-openai")
        assert c.args == ["--model=meta-llama/Llama-3.1-8B-Instruct", "--served-model-name=llama",
                          "--max-model-len=4096"]
        assert {"name": "VLLM_LOGGING_LEVEL", "value": "DEBUG"} in [{"name": e.name, "value": e.value} for e in c.env]
        assert c.resources.requests["nvidia.com/gpu"] == c.resources.limits["nvidia.com/gpu"] == "2"
    wait_for(lambda: sim.kubectl_json("get", "model", "llama", "-n", namespace).get("status", {}).get("replicas")
             == {"all": 2, "ready": 0}, what="Model status.replicas")
    sim.kubectl("delete", "model", "llama", "-n", namespace)
    wait_for(lambda: not live_pods(core, namespace, "model=llama"), what="pods garbage collected with the Model")


def test_deployment_becomes_available_once_pods_run(sim, namespace):
    # Pods get bound, Running and Ready by the scheduler and the kubelet emulation, without the test's help.
    apps = client.AppsV1Api(sim.client())
    apps.create_namespaced_deployment(namespace, deployment("live", 2))
    wait_for(lambda: apps.read_namespaced_deployment("live", namespace).status.available_replicas == 2, timeout=60,
             what="Deployment available through the scheduler and kubelet")
    assert "successfully rolled out" in sim.kubectl("rollout", "status", "deployment/live", "-n", namespace,
                                                    "--timeout=30s").stdout
