"""kubex-sim's API server against the real kubectl and the official Python client (issue 2, DESIGN §5)."""
import base64
import json
import pathlib
import re
import ssl
import subprocess
import threading
import urllib.error
import urllib.request

import pytest
from kubernetes import client, watch
from kubernetes.client.rest import ApiException

from conftest import wait_for
from webhook_server import WebhookServer, make_certs

MANIFESTS = pathlib.Path(__file__).parent / "manifests"
HANG = 90  # a deadline that only bounds a hang (issue 33 item 3)


def apply_until_established(sim, path):
    # kubectl resolves every document's kind before applying; a CR next to its CRD in one file only maps once
    # the CRD is served (exactly as against a real cluster), so the second apply completes the set.
    first = sim.kubectl("apply", "-f", str(path), check=False)
    if first.returncode != 0:
        assert "Widget" in first.stderr, first.stderr
        sim.kubectl("apply", "-f", str(path))


def test_apply_multidoc_then_strategic_merge_reapply(sim, tmp_path):
    manifest = (MANIFESTS / "apiserver-basics.yaml").read_text() + "---\n" + (MANIFESTS / "widget.yaml").read_text()
    path = tmp_path / "all.yaml"
    path.write_text(manifest)
    apply_until_established(sim, path)
    again = sim.kubectl("apply", "-f", str(path))
    assert "unchanged" in again.stdout

    dep = sim.kubectl_json("get", "deployment", "web", "-n", "e2e-apply")
    assert dep["spec"]["strategy"]["rollingUpdate"]["maxSurge"] == "25%"  # built-in defaulting
    sidecar = dep["spec"]["template"]["spec"]["containers"][1]
    assert sidecar["terminationMessagePath"] == "/dev/termination-log"
    assert sim.kubectl_json("get", "pdb", "web", "-n", "e2e-apply")["spec"]["minAvailable"] == 1

    # A change made outside the manifest to the sidecar must survive the re-apply.
    sim.kubectl("patch", "deployment", "web", "-n", "e2e-apply", "--type=strategic", "-p",
                json.dumps({"spec": {"template": {"spec": {"containers": [
                    {"name": "sidecar", "env": [{"name": "INJECTED", "value": "x"}]}]}}}}))

    changed = manifest.replace("registry.example/web:v1", "registry.example/web:v2").replace(
        '            - name: B\n              value: "2"\n', "")
    assert changed != manifest
    path.write_text(changed)
    sim.kubectl("apply", "-f", str(path))
    dep = sim.kubectl_json("get", "deployment", "web", "-n", "e2e-apply")
    app, sidecar = dep["spec"]["template"]["spec"]["containers"]
    assert app["name"] == "app" and app["image"] == "registry.example/web:v2"
    assert app["env"] == [{"name": "A", "value": "1"}]
    assert sidecar["name"] == "sidecar" and sidecar["image"] == "registry.example/proxy:v7"
    assert sidecar["args"] == ["--port=8080"]
    assert sidecar["env"] == [{"name": "INJECTED", "value": "x"}]
    assert dep["metadata"]["generation"] >= 3


def test_crd_defaults_explain_and_field_path_errors(sim, tmp_path):
    apply_until_established(sim, MANIFESTS / "apiserver-basics.yaml")
    sim.kubectl("apply", "-f", str(MANIFESTS / "widget.yaml"))
    w = sim.kubectl_json("get", "widget", "w1", "-n", "e2e-apply")
    assert w["spec"]["size"] == 3 and w["spec"]["window"] == "10m"  # structural-schema defaults

    bad = tmp_path / "bad.yaml"
    bad.write_text((MANIFESTS / "widget.yaml").read_text().replace("w1", "w2").replace("color: red",
                                                                                         "color: purple\n  size: 0"))
    res = sim.kubectl("apply", "-f", str(bad), check=False)
    assert res.returncode != 0
    assert 'spec.color: Unsupported value: "purple"' in res.stderr
    assert "spec.size" in res.stderr and "greater than or equal to 1" in res.stderr

    cel = tmp_path / "cel.yaml"  # x-kubernetes-validations (CEL) rule on spec
    cel.write_text((MANIFESTS / "widget.yaml").read_text().replace("w1", "w4").replace("color: red", "color: blue"))
    res = sim.kubectl("apply", "-f", str(cel), check=False)
    assert res.returncode != 0
    assert 'spec.size: Invalid value: "object": blue widgets must be at least size 5' in res.stderr, res.stderr

    unknown = tmp_path / "unknown.yaml"
    unknown.write_text((MANIFESTS / "widget.yaml").read_text().replace("w1", "w3") + "  shape: round\n")
    res = sim.kubectl("apply", "-f", str(unknown), check=False)  # kubectl asks for fieldValidation=Strict
    assert res.returncode != 0 and 'unknown field "spec.shape"' in res.stderr

    explain = sim.kubectl("explain", "widgets.spec.color").stdout
    assert "Colour of the widget." in explain
    explain = sim.kubectl("explain", "widget.spec").stdout
    assert "Size in centimetres." in explain and "size" in explain

    table = sim.kubectl("get", "widgets", "-n", "e2e-apply").stdout
    assert re.search(r"NAME\s+SIZE\s+AGE", table), table
    assert re.search(r"w1\s+3\s+\d+s", table), table


def test_watch_orders_events_for_kubectl_and_python(sim, namespace):
    core = client.CoreV1Api(sim.client())
    rv = core.list_namespaced_config_map(namespace).metadata.resource_version

    # -v=6: kubectl logs each request it made on stderr, its WATCH included (with the resourceVersion of its LIST).
    proc = subprocess.Popen(
        ["kubectl", "--kubeconfig", sim.kubeconfig, "--cache-dir", sim.cache_dir, "get", "configmaps", "-n", namespace,
         "-w", "--output-watch-events", "-o", "jsonpath={.type} {.object.metadata.name} {.object.data.k}{\"\\n\"}",
         "-v=6"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines, log = [], []
    reader = threading.Thread(target=lambda: [lines.append(l.strip()) for l in proc.stdout], daemon=True)
    reader.start()
    threading.Thread(target=lambda: [log.append(l) for l in proc.stderr], daemon=True).start()
    # kubectl must have its watch open before the changes: wait for its own word that the WATCH request was
    # answered (200), not for a span of time. It watches from its LIST's resourceVersion, so nothing after that
    # list can be missed.
    wait_for(lambda: [l for l in list(log) if "watch=true" in l and "200" in l], timeout=HANG,
             what=f"kubectl's WATCH request answered; its stderr:\n{''.join(log)}")

    py_events = []
    w = watch.Watch()

    def py_watch():
        for ev in w.stream(core.list_namespaced_config_map, namespace, resource_version=rv, timeout_seconds=HANG):
            py_events.append((ev["type"], ev["object"].metadata.name, (ev["object"].data or {}).get("k")))
            if ev["type"] == "DELETED":
                w.stop()

    t = threading.Thread(target=py_watch, daemon=True)
    t.start()
    core.create_namespaced_config_map(namespace, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="cm"),
                                                                    data={"k": "1"}))
    core.patch_namespaced_config_map("cm", namespace, {"data": {"k": "2"}})
    core.delete_namespaced_config_map("cm", namespace)
    t.join(timeout=HANG)
    assert py_events == [("ADDED", "cm", "1"), ("MODIFIED", "cm", "2"), ("DELETED", "cm", "2")]
    wait_for(lambda: any(l.startswith("DELETED") for l in lines), timeout=HANG, what="kubectl DELETED event")
    proc.terminate()
    events = [l for l in lines if l]
    assert events == ["ADDED cm 1", "MODIFIED cm 2", "DELETED cm 2"], events


def test_stale_update_conflicts(sim, namespace):
    core = client.CoreV1Api(sim.client())
    cm = core.create_namespaced_config_map(namespace, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="c"),
                                                                         data={"v": "1"}))
    core.patch_namespaced_config_map("c", namespace, {"data": {"v": "2"}})
    cm.data = {"v": "stale"}
    with pytest.raises(ApiException) as e:
        core.replace_namespaced_config_map("c", namespace, cm)
    assert e.value.status == 409
    assert "the object has been modified" in e.value.body
    assert core.read_namespaced_config_map("c", namespace).data == {"v": "2"}


def test_too_old_watch_gets_410_and_client_relists(sim_factory):
    small = sim_factory(extra_args=["--watch-cache-size", "20"])
    core = client.CoreV1Api(small.client())
    old_rv = core.list_namespaced_config_map("default").metadata.resource_version
    for i in range(40):
        core.create_namespaced_config_map("default", client.V1ConfigMap(metadata=client.V1ObjectMeta(name=f"n{i}")))
    with pytest.raises(ApiException) as e:
        for _ in watch.Watch().stream(core.list_namespaced_config_map, "default", resource_version=old_rv,
                                      timeout_seconds=HANG):
            pass
    assert e.value.status == 410
    # Relist, then watch from the fresh resourceVersion.
    listed = core.list_namespaced_config_map("default")
    assert len(listed.items) == 40
    seen = []
    w = watch.Watch()
    t = threading.Thread(target=lambda: [seen.append(ev["object"].metadata.name) or w.stop() for ev in w.stream(
        core.list_namespaced_config_map, "default", resource_version=listed.metadata.resource_version,
        timeout_seconds=HANG)], daemon=True)
    t.start()
    # No wait for the watch to open: it starts from the list's resourceVersion, so the API server sends every
    # change after that list, whenever the WATCH request arrives (the sim's watch cache, as kube-apiserver's).
    core.create_namespaced_config_map("default", client.V1ConfigMap(metadata=client.V1ObjectMeta(name="after")))
    t.join(timeout=HANG)
    assert not t.is_alive() and seen == ["after"]


def test_watch_from_resource_version_1_on_a_fresh_sim_is_expired(sim_factory):
    # Issue 12 item 11 (DESIGN §5: WATCH with 410 Gone for too-old versions): like kube-apiserver's watch cache,
    # whose window begins at the version it was initialised from at start-up, a watch from resourceVersion=1 on a
    # fresh server answers HTTP 200 and one ERROR event carrying a 410 Expired Status.
    fresh = sim_factory(extra_args=["--no-cluster"])
    core = client.CoreV1Api(fresh.client())
    raw = core.list_config_map_for_all_namespaces(watch=True, resource_version="1", timeout_seconds=HANG,
                                                  _preload_content=False)  # it ends after its one ERROR event
    assert raw.status == 200
    lines = [l for l in raw.read().decode().splitlines() if l.strip()]
    assert len(lines) == 1, lines
    event = json.loads(lines[0])
    assert event["type"] == "ERROR"
    status = event["object"]
    assert {k: status[k] for k in ("kind", "apiVersion", "status", "code", "reason")} == {
        "kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 410, "reason": "Expired"}
    assert re.fullmatch(r"too old resource version: 1 \(\d+\)", status["message"]), status["message"]

    # The official client's watch turns it into ApiException(410), the cue for its callers to relist.
    with pytest.raises(ApiException) as e:
        for _ in watch.Watch().stream(core.list_namespaced_config_map, "default", resource_version="1",
                                      timeout_seconds=HANG):
            pass
    assert e.value.status == 410

    # "0", no resourceVersion, and the version of a fresh list stream normally.
    core.create_namespaced_config_map("default", client.V1ConfigMap(metadata=client.V1ObjectMeta(name="first")))
    for rv in ("0", None):
        kwargs = {"resource_version": rv} if rv is not None else {}
        w = watch.Watch()
        names = []
        for ev in w.stream(core.list_namespaced_config_map, "default", timeout_seconds=HANG, **kwargs):
            names.append((ev["type"], ev["object"].metadata.name))
            w.stop()
        assert names == [("ADDED", "first")], (rv, names)
    listed_rv = core.list_namespaced_config_map("default").metadata.resource_version
    core.create_namespaced_config_map("default", client.V1ConfigMap(metadata=client.V1ObjectMeta(name="second")))
    w = watch.Watch()
    names = []
    for ev in w.stream(core.list_namespaced_config_map, "default", resource_version=listed_rv,
                       timeout_seconds=HANG):
        names.append((ev["type"], ev["object"].metadata.name))
        w.stop()
    assert names == [("ADDED", "second")]


def test_list_of_1200_objects_paginates(sim, namespace):
    core = client.CoreV1Api(sim.client())
    for i in range(1200):
        core.create_namespaced_config_map(namespace, client.V1ConfigMap(metadata=client.V1ObjectMeta(name=f"cm-{i:04d}")))
    names, pages, token = [], 0, None
    while True:
        page = core.list_namespaced_config_map(namespace, limit=500, _continue=token)
        pages += 1
        names += [i.metadata.name for i in page.items]
        if pages == 1:
            assert page.metadata.remaining_item_count == 700
        token = page.metadata._continue
        if not token:
            break
    assert pages == 3
    assert len(names) == 1200 and len(set(names)) == 1200 and names == sorted(names)
    out = sim.kubectl("get", "configmaps", "-n", namespace, "--chunk-size=500", "-o", "name").stdout.split()
    assert len(out) == 1200


def webhook_config(kind, name, url, ca_pem, namespace, policy="Fail", path="/mutate"):
    return {
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": kind,
        "metadata": {"name": name},
        "webhooks": [{
            "name": f"{name}.test.kubex.ai",
            "clientConfig": {"url": url + path, "caBundle": base64.b64encode(ca_pem.encode()).decode()},
            "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"]}],
            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}},
            "failurePolicy": policy, "sideEffects": "None", "admissionReviewVersions": ["v1"], "timeoutSeconds": 30,
        }],
    }


def pod(name, labels=None):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": labels or {}},
            "spec": {"containers": [{"name": "c", "image": "busybox:1.36"}]}}


def test_mutating_webhook_dry_run_and_failure_policies(sim, namespace, tmp_path):
    ca, cert, key = make_certs(tmp_path)
    adm = client.AdmissionregistrationV1Api(sim.client())
    core = client.CoreV1Api(sim.client())
    with WebhookServer(cert, key) as hook:
        url = f"https://127.0.0.1:{hook.port}"
        adm.create_mutating_webhook_configuration(
            webhook_config("MutatingWebhookConfiguration", f"mutate-{namespace}", url, ca, namespace))
        created = core.create_namespaced_pod(namespace, pod("p1"))
        assert created.metadata.labels == {"mutated": "yes"}
        assert hook.requests[-1]["operation"] == "CREATE" and hook.requests[-1]["dryRun"] is False

        res = sim.kubectl("create", "-n", namespace, "--dry-run=server", "-o", "json", "-f", "-",
                          input=json.dumps(pod("p-dry")))
        assert json.loads(res.stdout)["metadata"]["labels"] == {"mutated": "yes"}
        assert "mutated by the test webhook" in res.stderr  # warnings reach the client
        assert hook.requests[-1]["dryRun"] is True
        with pytest.raises(ApiException) as e:
            core.read_namespaced_pod("p-dry", namespace)
        assert e.value.status == 404  # dryRun=All persists nothing

        adm.create_validating_webhook_configuration(
            webhook_config("ValidatingWebhookConfiguration", f"deny-{namespace}", url, ca, namespace, path="/deny"))
        with pytest.raises(ApiException) as e:
            core.create_namespaced_pod(namespace, pod("deny-me"))
        assert e.value.status == 403 and "no pods named deny-me" in e.value.body
        adm.delete_validating_webhook_configuration(f"deny-{namespace}")
    # The webhook is gone now: Fail rejects, Ignore admits.
    with pytest.raises(ApiException) as e:
        core.create_namespaced_pod(namespace, pod("p2"))
    assert e.value.status == 500 and "failed calling webhook" in e.value.body
    adm.patch_mutating_webhook_configuration(f"mutate-{namespace}",
                                             [{"op": "replace", "path": "/webhooks/0/failurePolicy", "value": "Ignore"}])
    p3 = core.create_namespaced_pod(namespace, pod("p3"))
    assert not (p3.metadata.labels or {}).get("mutated")
    adm.delete_mutating_webhook_configuration(f"mutate-{namespace}")


def unscheduled(pod_obj):
    """Pinned to a label no node has: no scheduler or kubelet ever touches the pod, so only the test moves its
    status. (A kubelet reporting Running-not-Ready after the test's own Ready makes the pod an unhealthy one,
    which an eviction may take while the budget still counts it healthy: that is the API, not a bug.)"""
    pod_obj["spec"]["nodeSelector"] = {"kubex.test/nowhere": "true"}
    return pod_obj


def make_ready(core, namespace, name):
    now = "2026-01-01T00:00:00Z"
    core.patch_namespaced_pod_status(name, namespace, {"status": {"phase": "Running", "conditions": [
        {"type": "Ready", "status": "True", "lastTransitionTime": now}]}})


def test_eviction_respects_pod_disruption_budget(sim, namespace):
    core = client.CoreV1Api(sim.client())
    policy = client.PolicyV1Api(sim.client())
    policy.create_namespaced_pod_disruption_budget(namespace, {
        "apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "guard"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "guarded"}}}})
    core.create_namespaced_pod(namespace, unscheduled(pod("g1", {"app": "guarded"})))
    make_ready(core, namespace, "g1")
    wait_for(lambda: policy.read_namespaced_pod_disruption_budget("guard", namespace).status.current_healthy == 1,
             timeout=HANG, what="PDB status currentHealthy=1")
    pdb = policy.read_namespaced_pod_disruption_budget("guard", namespace)
    assert pdb.status.disruptions_allowed == 0 and pdb.status.desired_healthy == 1
    eviction = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "g1", "namespace": namespace}}
    with pytest.raises(ApiException) as e:
        core.create_namespaced_pod_eviction("g1", namespace, eviction)
    assert e.value.status == 429
    assert "disruption budget" in e.value.body

    core.create_namespaced_pod(namespace, unscheduled(pod("g2", {"app": "guarded"})))
    make_ready(core, namespace, "g2")
    wait_for(lambda: policy.read_namespaced_pod_disruption_budget("guard", namespace).status.disruptions_allowed == 1,
             timeout=HANG, what="PDB allows one disruption")
    core.create_namespaced_pod_eviction("g1", namespace, eviction)
    wait_for(lambda: "g1" not in [p.metadata.name for p in core.list_namespaced_pod(namespace).items],
             timeout=HANG, what="evicted pod gone")
    with pytest.raises(ApiException) as e:  # the budget is spent again
        core.create_namespaced_pod_eviction("g2", namespace, {**eviction, "metadata": {"name": "g2"}})
    assert e.value.status == 429


def test_deleting_a_deployment_garbage_collects_replicaset_and_pods(sim, namespace):
    apps = client.AppsV1Api(sim.client())
    core = client.CoreV1Api(sim.client())
    labels = {"app": "gc"}
    template = {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": "busybox:1.36"}]}}
    dep = apps.create_namespaced_deployment(namespace, {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "gc"},
        "spec": {"replicas": 2, "selector": {"matchLabels": labels}, "template": template}})
    owner = lambda kind, obj: [{"apiVersion": "apps/v1", "kind": kind, "name": obj.metadata.name,  # noqa: E731
                                "uid": obj.metadata.uid, "controller": True, "blockOwnerDeletion": True}]
    rs = apps.create_namespaced_replica_set(namespace, {
        "apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {"name": "gc-abc", "labels": labels, "ownerReferences": owner("Deployment", dep)},
        "spec": {"replicas": 2, "selector": {"matchLabels": labels}, "template": template}})
    for i in range(2):
        p = pod(f"gc-abc-{i}", labels)
        p["metadata"]["ownerReferences"] = owner("ReplicaSet", rs)
        core.create_namespaced_pod(namespace, p)
    sim.kubectl("delete", "deployment", "gc", "-n", namespace)
    wait_for(lambda: not apps.list_namespaced_replica_set(namespace).items, timeout=HANG, what="ReplicaSet collected")
    wait_for(lambda: not core.list_namespaced_pod(namespace).items, timeout=HANG, what="pods collected")


def test_client_certificate_and_token_contexts_and_anonymous_401(sim):
    assert "default" in sim.kubectl("get", "namespaces", "-o", "name").stdout
    assert "default" in sim.kubectl("get", "namespaces", "-o", "name", context="kubex-sim-token").stdout
    for ctx in (None, "kubex-sim-token"):
        names = [n.metadata.name for n in client.CoreV1Api(sim.client(context=ctx)).list_namespace().items]
        assert "kube-system" in names
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(sim.url + "/api/v1/namespaces", context=ctx, timeout=HANG)
    assert e.value.code == 401
    req = urllib.request.Request(sim.url + "/api/v1/namespaces", headers={"Authorization": "Bearer wrong"})
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(req, context=ctx, timeout=HANG)
    assert e.value.code == 401


def test_kubectl_create_generators_send_protobuf(sim, namespace):
    # kubectl's typed commands encode bodies as application/vnd.kubernetes.protobuf.
    sim.kubectl("create", "namespace", "gen-ns")
    sim.kubectl("create", "configmap", "cfg", "-n", namespace, "--from-literal=a=1", "--from-literal=b=2")
    sim.kubectl("create", "deployment", "web", "-n", namespace, "--image=nginx:1.25", "--replicas=3", "--port=8080")
    sim.kubectl("create", "pdb", "web", "-n", namespace, "--selector=app=web", "--min-available=1")
    assert sim.kubectl_json("get", "namespace", "gen-ns")["status"]["phase"] == "Active"
    assert sim.kubectl_json("get", "configmap", "cfg", "-n", namespace)["data"] == {"a": "1", "b": "2"}
    dep = sim.kubectl_json("get", "deployment", "web", "-n", namespace)
    assert dep["spec"]["replicas"] == 3
    c = dep["spec"]["template"]["spec"]["containers"][0]
    assert c["image"] == "nginx:1.25" and c["ports"] == [{"containerPort": 8080, "protocol": "TCP"}]
    assert sim.kubectl_json("get", "pdb", "web", "-n", namespace)["spec"]["minAvailable"] == 1


def test_service_reference_webhook_through_service_map(sim_factory, tmp_path):
    ca, cert, key = make_certs(tmp_path, names=("hook.webhooks.svc",), ips=())
    with WebhookServer(cert, key) as hook:
        s = sim_factory(extra_args=["--service-map", f"webhooks/hook=127.0.0.1:{hook.port}"])
        adm = client.AdmissionregistrationV1Api(s.client())
        cfg = webhook_config("MutatingWebhookConfiguration", "svc-hook", "", ca, "default")
        cfg["webhooks"][0]["clientConfig"] = {"service": {"namespace": "webhooks", "name": "hook", "path": "/mutate"},
                                              "caBundle": cfg["webhooks"][0]["clientConfig"]["caBundle"]}
        adm.create_mutating_webhook_configuration(cfg)
        created = client.CoreV1Api(s.client()).create_namespaced_pod("default", pod("via-service"))
        assert created.metadata.labels == {"mutated": "yes"}  # certificate verified for hook.webhooks.svc


def test_data_dir_survives_kill_and_restart(sim_factory, tmp_path):
    data = tmp_path / "data"
    first = sim_factory(data_dir=data)
    core = client.CoreV1Api(first.client())
    core.create_namespaced_config_map("default", client.V1ConfigMap(metadata=client.V1ObjectMeta(name="kept"),
                                                                    data={"k": "v"}))
    rv = int(core.read_namespaced_config_map("kept", "default").metadata.resource_version)
    first.stop(sig=9)  # SIGKILL: nothing is flushed at exit
    sim_factory(data_dir=data, listen=f"127.0.0.1:{first.port}")
    core2 = client.CoreV1Api(first.client())  # the old kubeconfig (same CA, port and token) still works
    assert core2.read_namespaced_config_map("kept", "default").data == {"k": "v"}
    created = core2.create_namespaced_config_map("default", client.V1ConfigMap(metadata=client.V1ObjectMeta(name="new")))
    assert int(created.metadata.resource_version) > rv


def test_kubectl_apply_server_side(sim, namespace, tmp_path):
    """`kubectl apply --server-side` on kubex-sim (issue 34 item 5): create, a re-apply that changes nothing, a
    second field manager's conflicting apply (non-zero exit, a readable message naming the other manager and the
    field), --force-conflicts, and a removed field going away; managedFields say who owns what."""
    def manifest(data, labels):
        return json.dumps({"apiVersion": "v1", "kind": "ConfigMap",
                           "metadata": {"name": "ssa", "namespace": namespace, "labels": labels}, "data": data})

    def apply(*args, data, labels=None):
        return sim.kubectl("apply", "--server-side", *args, "-f", "-", input=manifest(data, {"app": "x"} if labels is None else labels),
                           check=False)

    def managers():
        obj = sim.kubectl_json("get", "configmap", "ssa", "-n", namespace, "--show-managed-fields")
        return obj, {(e["manager"], e["operation"]): e["fieldsV1"] for e in obj["metadata"]["managedFields"]}

    res = apply(data={"a": "1", "b": "2"})
    assert res.returncode == 0 and "configmap/ssa serverside-applied" in res.stdout, res.stdout + res.stderr
    obj, owners = managers()
    rv = obj["metadata"]["resourceVersion"]
    assert owners == {("kubectl", "Apply"): {"f:data": {"f:a": {}, "f:b": {}},
                                             "f:metadata": {"f:labels": {"f:app": {}}}}}, owners
    res = apply(data={"a": "1", "b": "2"})
    assert res.returncode == 0, res.stderr
    assert managers()[0]["metadata"]["resourceVersion"] == rv  # a no-op apply writes nothing

    res = apply("--field-manager=other", data={"a": "9"})
    assert res.returncode != 0
    assert 'Apply failed with 1 conflict: conflict with "kubectl": .data.a' in res.stderr, res.stderr
    assert "--force-conflicts" in res.stderr
    assert managers()[0]["data"] == {"a": "1", "b": "2"}

    res = apply("--field-manager=other", "--force-conflicts", data={"a": "9"})
    assert res.returncode == 0, res.stderr
    obj, owners = managers()
    assert obj["data"] == {"a": "9", "b": "2"}
    assert owners[("other", "Apply")]["f:data"] == {"f:a": {}}
    assert owners[("kubectl", "Apply")]["f:data"] == {"f:b": {}}

    # kubectl's own manager stops setting b and the label: b goes (nobody else owns it); a and the label stay
    # (other's applies set them too).
    res = apply(data={"c": "3"}, labels={})
    assert res.returncode == 0, res.stderr
    obj, owners = managers()
    assert obj["data"] == {"a": "9", "c": "3"} and obj["metadata"]["labels"] == {"app": "x"}, obj

    # An ordinary write records its manager as an Update.
    sim.kubectl("label", "configmap", "ssa", "-n", namespace, "tier=web")
    assert managers()[1][("kubectl-label", "Update")] == {"f:metadata": {"f:labels": {"f:tier": {}}}}
