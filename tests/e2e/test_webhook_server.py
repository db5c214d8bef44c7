"""`kubex engine` webhook server flags against kubex-sim (ENG-3, ADM-1, HLM-2): --self-signed-webhook with
--register-webhooks registers exactly the engine's configurations (checked with real kubectl) with a caBundle
that verifies the served certificate, re-registration never duplicates and drops a disabled early pass,
--cert-dir certificates made with the openssl CLI are served and hot-reloaded, and start-up failures (busy
port, bad cert dir, impossible flag combinations) end the process with one error line; and clients other
than the sim's (Python http.client, curl) are answered over the engine's own listener."""
import base64
import json
import re
import shutil
import socket
import ssl
import subprocess
import urllib.request

import pytest

from conftest import BIN, ROOT, EngineProcess, wait_for, webhook_health
from webhook_server import make_certs

HANG = 90  # a deadline that only bounds a hang (issue 33 item 3)
LATE = "zzz-kubex-mutating-webhook-configuration"
EARLY = "000-kubex-mutating-webhook-configuration"
VALIDATING = "kubex-validating-webhook-configuration"
KINDS = [  # (singular, plural, strategy)
    ("automationstrategy", "automationstrategies", True),
    ("clusterautomationstrategy", "clusterautomationstrategies", True),
    ("proactivepolicy", "proactivepolicies", False),
    ("clusterproactivepolicy", "clusterproactivepolicies", False),
    ("staticpolicy", "staticpolicies", False),
    ("clusterstaticpolicy", "clusterstaticpolicies", False),
    ("gpureactivepolicy", "gpureactivepolicies", False),
    ("clustergpureactivepolicy", "clustergpureactivepolicies", False),
    ("gpuconsolidationpolicy", "gpuconsolidationpolicies", False),
    ("globalconfiguration", "globalconfigurations", False),
    ("policyevaluation", "policyevaluations", False),
]


class Engine(EngineProcess):
    """An engine in namespace default without leader election."""

    def __init__(self, kubeconfig, *extra):
        super().__init__(kubeconfig, "default", extra, leader_elect=False)


def run_once(*args, timeout=120):  # the timeout only bounds a hang
    res = subprocess.run([str(BIN / "kubex"), "engine", *args], capture_output=True, text=True, timeout=timeout)
    errors = [json.loads(l) for l in res.stdout.splitlines() if '"level":"error"' in l]
    return res, errors


def configs(sim, kind):
    return {c["metadata"]["name"]: c for c in sim.kubectl_json("get", kind)["items"]}


def https_get(port, path, ca_pem):
    ctx = ssl.create_default_context(cadata=ca_pem)
    with urllib.request.urlopen(f"https://127.0.0.1:{port}{path}", context=ctx, timeout=HANG) as r:
        return r.status, r.read().decode()


def check_mutating(cfg, early, port, ca_pem):
    w, = cfg["webhooks"]  # exactly one webhook
    assert w["name"] == ("000-" if early else "zzz-") + "mpod-rightsizing-recommendations.kubex.ai"
    path = "/mutate--v1-pod-early" if early else "/mutate--v1-pod"
    assert w["clientConfig"]["url"] == f"https://127.0.0.1:{port}{path}"
    assert base64.b64decode(w["clientConfig"]["caBundle"]).decode() == ca_pem
    assert w["rules"] == [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"],
                           "resources": ["pods"], "scope": "*"}]
    assert w["failurePolicy"] == "Ignore"
    assert w["sideEffects"] == "NoneOnDryRun"
    assert w["admissionReviewVersions"] == ["v1"]
    assert w["timeoutSeconds"] == 10
    assert not w.get("namespaceSelector") and not w.get("objectSelector")


def check_validating(cfg, port, ca_pem):
    hooks = cfg["webhooks"]
    assert [w["name"] for w in hooks] == [f"v{s}-v1alpha1.kb.io" for s, _, _ in KINDS]
    for w, (singular, plural, strategy) in zip(hooks, KINDS):
        assert w["clientConfig"]["url"] == \
            f"https://127.0.0.1:{port}/validate-rightsizing-kubex-ai-v1alpha1-{singular}"
        assert base64.b64decode(w["clientConfig"]["caBundle"]).decode() == ca_pem
        rule, = w["rules"]
        assert rule["apiGroups"] == ["rightsizing.kubex.ai"] and rule["apiVersions"] == ["v1alpha1"]
        assert rule["resources"] == [plural]
        assert rule["operations"] == ["CREATE", "UPDATE"]  # VAL-4: a strategy DELETE is allowed (no DELETE rule)
        assert w["failurePolicy"] == "Ignore" and w["sideEffects"] == "None"
        assert w["admissionReviewVersions"] == ["v1"] and w["timeoutSeconds"] == 10


def test_self_signed_registration(sim):  # ENG-3, ADM-1, HLM-2
    eng = Engine(sim.kubeconfig, "--webhook-bind-address", "127.0.0.1:0", "--self-signed-webhook",
                 "--register-webhooks", "--early-webhook-enabled")
    try:
        port = eng.wait_line("serving webhooks", timeout=HANG)["port"]
        done = eng.wait_line("registered webhook configurations", timeout=HANG)
        assert sorted(done["created"] + done["updated"] + done["unchanged"]) == sorted([EARLY, LATE, VALIDATING])
        mutating = configs(sim, "mutatingwebhookconfigurations")
        assert set(mutating) == {EARLY, LATE}
        ca_pem = base64.b64decode(mutating[LATE]["webhooks"][0]["clientConfig"]["caBundle"]).decode()
        assert ca_pem.startswith("-----BEGIN CERTIFICATE-----")
        check_mutating(mutating[LATE], False, port, ca_pem)
        check_mutating(mutating[EARLY], True, port, ca_pem)
        validating = configs(sim, "validatingwebhookconfigurations")
        assert set(validating) == {VALIDATING}
        check_validating(validating[VALIDATING], port, ca_pem)
        # The caBundle verifies the certificate the webhook port serves (hostname 127.0.0.1 included).
        assert https_get(port, "/healthz", ca_pem) == (200, "ok")
        # OBS-5 admission families are exposed.
        metrics_port = eng.wait_line("serving metrics", timeout=HANG)["port"]

        def requests(result, webhook):
            with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=HANG) as r:
                text = r.read().decode()
            m = re.search(r'^kubex_admission_requests_total\{result="%s",webhook="%s"\} (\S+)$' % (result, webhook),
                          text, re.M)
            assert m, text
            return float(m.group(1))

        with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=HANG) as r:
            text = r.read().decode()
        assert re.search(r'^kubex_admission_duration_seconds_count\{webhook="early"\} \d', text, re.M)
        # OBS-5: the webhook health probe's own pods (WHH-1, both passes) count as result="probe"; no user pod was
        # created, so nothing counts as patched. (A probe pod is sent here too, in case the engine's own has not run.)
        admitted_probe(sim, "metrics-probe")
        wait_for(lambda: requests("probe", "late") >= 1 and requests("probe", "early") >= 1, timeout=HANG,
                 what="the health probe counted as result=probe")
        assert requests("patched", "late") == 0 and requests("patched", "early") == 0
        # Pods are still admitted (failurePolicy Ignore, sideEffects NoneOnDryRun allows dry runs).
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "wh-e2e"},
               "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
        sim.kubectl("create", "--dry-run=server", "-f", "-", input=json.dumps(pod))
    finally:
        assert eng.stop() == 0, eng.output()

    # A second engine without the early pass: nothing duplicated, the early configuration removed, the URL
    # and caBundle moved to the new server.
    eng = Engine(sim.kubeconfig, "--webhook-bind-address", "127.0.0.1:0", "--self-signed-webhook",
                 "--register-webhooks")
    try:
        port2 = eng.wait_line("serving webhooks", timeout=HANG)["port"]
        done = eng.wait_line("registered webhook configurations", timeout=HANG)
        assert done["deleted"] == [EARLY]
        mutating = configs(sim, "mutatingwebhookconfigurations")
        assert set(mutating) == {LATE}
        ca2 = base64.b64decode(mutating[LATE]["webhooks"][0]["clientConfig"]["caBundle"]).decode()
        assert ca2 != ca_pem  # a new CA per process
        check_mutating(mutating[LATE], False, port2, ca2)
        validating = configs(sim, "validatingwebhookconfigurations")
        assert set(validating) == {VALIDATING}
        check_validating(validating[VALIDATING], port2, ca2)
        assert https_get(port2, "/healthz", ca2) == (200, "ok")
    finally:
        assert eng.stop() == 0, eng.output()


def test_self_signed_without_register_only_patches_ca(sim):  # ENG-3
    before = configs(sim, "mutatingwebhookconfigurations")
    assert LATE in before, "runs after test_self_signed_registration"
    eng = Engine(sim.kubeconfig, "--webhook-bind-address", "127.0.0.1:0", "--self-signed-webhook")
    try:
        port = eng.wait_line("serving webhooks", timeout=HANG)["port"]
        done = eng.wait_line("patched webhook caBundles", timeout=HANG)
        assert sorted(done["updated"]) == sorted([LATE, VALIDATING]) and done["missing"] == [EARLY]
        after = configs(sim, "mutatingwebhookconfigurations")
        assert set(after) == {LATE}
        w = after[LATE]["webhooks"][0]
        assert w["clientConfig"]["url"] == before[LATE]["webhooks"][0]["clientConfig"]["url"]  # not re-pointed
        ca = base64.b64decode(w["clientConfig"]["caBundle"]).decode()
        assert https_get(port, "/healthz", ca) == (200, "ok")
    finally:
        assert eng.stop() == 0, eng.output()


def two_cas_and_a_cert_dir(tmp_path):
    """Two CAs with a serving pair each (openssl CLI), and a cert dir holding the first: (certdir, first, second)
    where first and second are (ca_pem, crt_path, key_path)."""
    first, second, certdir = tmp_path / "first", tmp_path / "second", tmp_path / "certs"
    for d in (first, second, certdir):
        d.mkdir()
    one = make_certs(first, names=("localhost",), ips=("127.0.0.1",))
    two = make_certs(second, names=("localhost",), ips=("127.0.0.1",))
    shutil.copy(one[1], certdir / "tls.crt")
    shutil.copy(one[2], certdir / "tls.key")
    (certdir / "ca.crt").write_text(one[0])
    return certdir, one, two


def test_cert_dir_is_served_and_reloaded(sim, tmp_path):  # ENG-3 --cert-dir, reloaded on change
    certdir, (ca1, crt1, key1), (ca2, crt2, key2) = two_cas_and_a_cert_dir(tmp_path)
    eng = Engine(sim.kubeconfig, "--webhook-bind-address", "127.0.0.1:0", "--cert-dir", str(certdir),
                 "--register-webhooks")
    try:
        port = eng.wait_line("serving webhooks", timeout=HANG)["port"]
        eng.wait_line("registered webhook configurations", timeout=HANG)
        w = configs(sim, "mutatingwebhookconfigurations")[LATE]["webhooks"][0]
        assert base64.b64decode(w["clientConfig"]["caBundle"]).decode() == ca1  # from ca.crt
        served = ssl.get_server_certificate(("127.0.0.1", port))
        assert served.strip() == open(crt1).read().strip()
        assert https_get(port, "/healthz", ca1) == (200, "ok")
        # Rotate: the next handshake serves the new pair, without a restart.
        shutil.copy(crt2, certdir / "tls.crt.new")
        shutil.copy(key2, certdir / "tls.key.new")
        (certdir / "tls.crt.new").rename(certdir / "tls.crt")
        (certdir / "tls.key.new").rename(certdir / "tls.key")
        assert ssl.get_server_certificate(("127.0.0.1", port)).strip() == open(crt2).read().strip()
        assert https_get(port, "/healthz", ca2) == (200, "ok")
        # A broken pair keeps the current one and logs one error. (A handshake between the two renames above may
        # have met a half-rotated pair and logged the same error already: the one this copy causes is a new line.)
        broken = "cannot reload the serving certificate, keeping the previous one"
        logged = len(eng.find_all(broken))
        shutil.copy(key1, certdir / "tls.key")
        assert ssl.get_server_certificate(("127.0.0.1", port)).strip() == open(crt2).read().strip()
        errs = wait_for(lambda: eng.find_all(broken)[logged:], timeout=HANG, what=f"a new {broken!r} line")
        err = errs[0]
        assert err["level"] == "error" and "does not match" in err["error"]
        assert eng.proc.poll() is None
    finally:
        assert eng.stop() == 0, eng.output()


def admitted_probe(sim, name):
    """A server-side dry-run CREATE of a webhook probe pod (WHH-2): the pod as the webhooks returned it."""
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": name, "namespace": "default",
                        "annotations": {"rightsizing.kubex.ai/webhook-probe": "true"}},
           "spec": {"containers": [{"name": "probe", "image": "x"}]}}
    out = sim.kubectl("create", "--dry-run=server", "-o", "json", "-f", "-", input=json.dumps(pod))
    return json.loads(out.stdout)["metadata"].get("annotations", {})


def test_cert_dir_ca_rotation_updates_the_ca_bundle(sim, tmp_path):  # ENG-3 --cert-dir --register-webhooks
    """Issue 12 item 8: a new CA in the cert dir reaches the configurations' caBundle, so the API server keeps
    trusting the webhook; before, it kept the old caBundle and every webhook call failed TLS."""
    certdir, _, (ca2, crt2, key2) = two_cas_and_a_cert_dir(tmp_path)
    eng = Engine(sim.kubeconfig, "--webhook-bind-address", "127.0.0.1:0", "--cert-dir", str(certdir),
                 "--register-webhooks")
    try:
        eng.wait_line("registered webhook configurations", timeout=HANG)
        eng.wait_ready(timeout=HANG)
        assert admitted_probe(sim, "before").get("automation-webhook.kubex.ai/probe-late") == "ok"
        # Rotate the CA and the pair as cert-manager does (each file replaced atomically).
        for src, dst in ((ca2, "ca.crt"), (None, "tls.crt"), (None, "tls.key")):
            tmp = certdir / (dst + ".new")
            if src is not None:
                tmp.write_text(src)
            else:
                shutil.copy(crt2 if dst == "tls.crt" else key2, tmp)
            tmp.rename(certdir / dst)
        ca_of = lambda kind, name: base64.b64decode(  # noqa: E731
            configs(sim, kind)[name]["webhooks"][0]["clientConfig"]["caBundle"]).decode()
        wait_for(lambda: ca_of("mutatingwebhookconfigurations", LATE) == ca2, timeout=HANG,
                 what="the late configuration's caBundle to become the new CA")
        assert ca_of("validatingwebhookconfigurations", VALIDATING) == ca2
        eng.wait_line("the webhook CA bundle changed: updating the caBundle of the webhook configurations",
                      timeout=HANG)
        # The API server trusts the rotated certificate: the webhook runs again.
        assert admitted_probe(sim, "after").get("automation-webhook.kubex.ai/probe-late") == "ok"
    finally:
        assert eng.stop() == 0, eng.output()


def test_busy_webhook_port_exits_with_one_line(sim):  # ENG-3
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        res, errors = run_once("--kubeconfig", sim.kubeconfig, "--leader-elect=false",
                               "--metrics-bind-address", "127.0.0.1:0", "--health-probe-bind-address", "127.0.0.1:0",
                               "--webhook-bind-address", f"127.0.0.1:{port}", "--self-signed-webhook")
    assert res.returncode != 0 and len(errors) == 1, res.stdout
    assert errors[0]["msg"] == "cannot start the webhook server"
    assert "--webhook-bind-address" in errors[0]["error"] and str(port) in errors[0]["error"]


def test_bad_cert_dir_exits_with_one_line(sim, tmp_path):  # ENG-3
    (tmp_path / "tls.crt").write_text("not a certificate")
    (tmp_path / "tls.key").write_text("not a key")
    for d in ("/nonexistent/kubex-certs", str(tmp_path)):
        res, errors = run_once("--kubeconfig", sim.kubeconfig, "--leader-elect=false",
                               "--metrics-bind-address", "127.0.0.1:0", "--health-probe-bind-address", "127.0.0.1:0",
                               "--webhook-bind-address", "127.0.0.1:0", "--cert-dir", d)
        assert res.returncode != 0 and len(errors) == 1, res.stdout
        assert errors[0]["msg"] == "cannot start the webhook server" and "--cert-dir" in errors[0]["error"]


@pytest.mark.parametrize("args", [
    ["--register-webhooks"],
    ["--cert-dir", "/tmp", "--self-signed-webhook"],
    ["--self-signed-webhook", "--webhook-bind-address", "0"],
    ["--webhook-bind-address", "nowhere"],
    ["--webhook-bind-address", "0", "--webhook-port", "9443"],
    ["--self-signed-webhook", "--webhook-port", "70000"],
])
def test_impossible_webhook_flags(sim, args):  # ENG-3: a bad flag is one clear line
    res, errors = run_once("--kubeconfig", sim.kubeconfig, *args)
    assert res.returncode == 2 and len(errors) == 1, res.stdout
    assert errors[0]["msg"] == "invalid flag"


def test_webhook_port_replaces_the_port_of_the_bind_address(sim):  # HLM-1: webhook.port maps to --webhook-port
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        free = s.getsockname()[1]
    eng = Engine(sim.kubeconfig, "--webhook-bind-address", "127.0.0.1:0", "--webhook-port", str(free),
                 "--self-signed-webhook")
    try:
        assert eng.wait_line("serving webhooks", timeout=HANG)["port"] == free
        with socket.create_connection(("127.0.0.1", free), timeout=HANG):
            pass
    finally:
        assert eng.stop() == 0


def review_body(uid):
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
           "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
    return json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                       "request": {"uid": uid, "kind": {"group": "", "version": "v1", "kind": "Pod"},
                                   "resource": {"group": "", "version": "v1", "resource": "pods"},
                                   "namespace": "default", "operation": "CREATE", "object": pod}}).encode()


def test_webhook_listener_with_independent_clients(sim, tmp_path):  # ADM-2, VAL-9 over the engine's own listener
    """Clients other than the sim's: Python's http.client (keep-alive, a chunked body) and curl (Expect:
    100-continue) get AdmissionReview answers with their uid echoed, on one kept-alive connection where they
    ask for it; a bad envelope is HTTP 400 with VAL-9's text."""
    import http.client
    eng = Engine(sim.kubeconfig, "--webhook-bind-address", "127.0.0.1:0", "--self-signed-webhook",
                 "--register-webhooks")
    try:
        port = eng.wait_line("serving webhooks", timeout=HANG)["port"]
        eng.wait_line("registered webhook configurations", timeout=HANG)
        cfg = configs(sim, "mutatingwebhookconfigurations")[LATE]
        ca_pem = base64.b64decode(cfg["webhooks"][0]["clientConfig"]["caBundle"]).decode()
        ctx = ssl.create_default_context(cadata=ca_pem)
        conn = http.client.HTTPSConnection("127.0.0.1", port, context=ctx, timeout=HANG)
        sockets = set()
        for i in range(3):
            conn.request("POST", "/mutate--v1-pod?timeout=10s", body=review_body(f"py-{i}"),
                         headers={"Content-Type": "application/json"})
            r = conn.getresponse()
            out = json.loads(r.read())
            assert r.status == 200 and r.getheader("Connection") == "keep-alive"
            assert out["response"]["uid"] == f"py-{i}" and out["response"]["allowed"] is True
            sockets.add(conn.sock.getsockname()[1])  # the local port: one per connection
        assert len(sockets) == 1  # one kept-alive connection for all three
        body = review_body("py-chunked")
        conn.request("POST", "/mutate--v1-pod", body=iter([body[:100], body[100:]]), encode_chunked=True,
                     headers={"Content-Type": "application/json", "Transfer-Encoding": "chunked"})
        r = conn.getresponse()
        assert r.status == 200 and json.loads(r.read())["response"]["uid"] == "py-chunked"
        conn.request("POST", "/mutate--v1-pod", body=b"{}", headers={"Content-Type": "application/json"})
        r = conn.getresponse()
        assert r.status == 400  # VAL-9
        assert r.read().decode() == 'invalid AdmissionReview: apiVersion is missing, expected "admission.k8s.io/v1"'
        conn.close()

        if shutil.which("curl"):
            (tmp_path / "ca.crt").write_text(ca_pem)
            (tmp_path / "review.json").write_bytes(review_body("curl-1"))
            res = subprocess.run(["curl", "-sS", "--cacert", str(tmp_path / "ca.crt"), "-H", "Expect: 100-continue",
                                  "-H", "Content-Type: application/json", "--data-binary",
                                  "@" + str(tmp_path / "review.json"), f"https://127.0.0.1:{port}/mutate--v1-pod"],
                                 capture_output=True, text=True, timeout=HANG)
            assert res.returncode == 0, res.stderr
            assert json.loads(res.stdout)["response"]["uid"] == "curl-1"
    finally:
        assert eng.stop() == 0, eng.output()


def test_engine_start_sends_no_probe_before_its_own_registration(sim_factory):  # WHH-1, ENG-3 (issue 34 item 9d)
    # Every start with --register-webhooks logged one `webhook probe failed` warning: its first probe went out
    # before its own webhook configurations existed.
    sim = sim_factory()
    sim.kubectl("apply", "-k", str(ROOT / "config" / "crd"))
    sim.kubectl("create", "namespace", "kubex")
    eng = EngineProcess(sim.kubeconfig, "kubex", leader_elect=False, extra_args=[
        "--webhook-bind-address", "127.0.0.1:0", "--self-signed-webhook", "--register-webhooks",
        "--early-webhook-enabled"])
    try:
        eng.wait_ready(timeout=HANG)
        # PodAdmissionWebhookHealthy=True takes successThreshold (3) successful probes in a row.
        wait_for(lambda: webhook_health(sim) == "True", timeout=HANG, interval=1, what="PodAdmissionWebhookHealthy=True")
        assert eng.find_all("webhook probe failed") == [], eng.output()[-3000:]
    finally:
        eng.stop()
