"""Conformance fixtures (DESIGN §1, §3 tests/conformance/): the same `kubex engine` as the e2e tests, but against a
real kube-apiserver + etcd + kube-controller-manager + kube-scheduler built from their published Go modules (tools/, started by
scripts/control-plane.sh). The control plane comes up once per session and goes down at the end.

This conftest re-exports what the e2e helper modules import from `conftest` (ROOT, BIN, wait_for, EngineProcess,
Sim), so tests here reuse tests/e2e code (its invalid objects, its admission expectations) instead of copying it."""
import base64
import importlib.util
import json
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import pytest

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
E2E = ROOT / "tests" / "e2e"

# The e2e conftest, loaded under its own name: its classes and helpers without registering its fixtures twice.
_spec = importlib.util.spec_from_file_location("kubex_e2e_conftest", E2E / "conftest.py")
e2e = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(e2e)
BUILD, BIN, wait_for, EngineProcess, Sim = e2e.BUILD, e2e.BIN, e2e.wait_for, e2e.EngineProcess, e2e.Sim
webhook_health, log_time = e2e.webhook_health, e2e.log_time
if str(E2E) not in sys.path:
    sys.path.append(str(E2E))  # test_crd_messages, test_admission, engine_proc (they import this module's names)

SCRIPT = ROOT / "scripts" / "control-plane.sh"
GROUP = "rightsizing.kubex.ai"
ENGINE_NS = "kubex"
ENGINE_SA = "kubex-automation-engine"


def run(cmd, input=None, timeout=120, check=True, env=None):
    res = subprocess.run(cmd, input=input, capture_output=True, text=True, timeout=timeout, env=env)
    if check and res.returncode != 0:
        raise AssertionError(f"{' '.join(map(str, cmd))} failed ({res.returncode}):\n{res.stdout}\n{res.stderr}")
    return res


class ControlPlane:
    """etcd + kube-apiserver + kube-controller-manager from scripts/control-plane.sh, with kubectl helpers shaped
    like e2e's Sim (kubectl, kubectl_json, client) so e2e helper functions accept it."""

    def __init__(self, workdir):
        self.workdir = pathlib.Path(workdir)
        self.kubeconfig = str(self.workdir / "admin.kubeconfig")
        self.cache_dir = str(self.workdir / "kubectl-cache")
        env = {}
        for line in (self.workdir / "env").read_text().splitlines():
            k, _, v = line.removeprefix("export ").partition("=")
            env[k] = v.strip('"')
        self.env = env
        self.bin = pathlib.Path(env["KUBEX_CP_BIN"])
        self.url = env["KUBEX_CP_APISERVER"]
        self.ca = env["KUBEX_CP_CA"]

    def kubectl(self, *args, input=None, check=True, kubeconfig=None, timeout=60):
        cmd = ["kubectl", "--kubeconfig", kubeconfig or self.kubeconfig, "--cache-dir", self.cache_dir, *args]
        res = subprocess.run(cmd, input=input, capture_output=True, text=True, timeout=timeout)
        if check and res.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed ({res.returncode}):\n{res.stdout}\n{res.stderr}")
        return res

    def kubectl_json(self, *args, **kw):
        return json.loads(self.kubectl(*args, "-o", "json", **kw).stdout)

    def client(self, context=None, kubeconfig=None):
        from kubernetes import client, config

        cfg = client.Configuration()
        config.load_kube_config(config_file=kubeconfig or self.kubeconfig, context=context, client_configuration=cfg)
        return client.ApiClient(configuration=cfg)

    def helm(self, *args, check=True):
        return run([str(self.bin / "helm"), *args], check=check)

    def log(self, name):
        p = self.workdir / f"{name}.log"
        return p.read_text(errors="replace") if p.exists() else ""


def control_plane_bin():
    """Builds (or finds warm) the binaries; a failure fails the session with the script's one line."""
    res = subprocess.run([str(SCRIPT), "build"], capture_output=True, text=True, timeout=3600)
    if res.returncode != 0:
        pytest.fail(f"the control plane cannot be built: {res.stderr.strip().splitlines()[-1:]}", pytrace=False)
    return pathlib.Path(res.stdout.strip().splitlines()[-1])


LOGS = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kai-podgrouper", "kai-queuecontroller",
        "kai-podgroupcontroller", "kai-binder", "kai-scheduler", "kai-admission")


def up_plane(prefix, *flags):
    """`scripts/control-plane.sh up DIR [--kai]` as a user runs it; a failure fails the test with the script's line
    and the tails of the component logs."""
    wd = tempfile.mkdtemp(prefix=prefix)
    t0 = time.monotonic()
    res = subprocess.run([str(SCRIPT), "up", wd, *flags], capture_output=True, text=True, timeout=1800)
    if res.returncode != 0:
        logs = "".join(f"\n--- {n}.log (tail)\n" + "\n".join(pathlib.Path(wd, f"{n}.log").read_text(errors="replace")
                                                         .splitlines()[-15:])
                       for n in LOGS if pathlib.Path(wd, f"{n}.log").exists())
        subprocess.run([str(SCRIPT), "down", wd], capture_output=True, text=True, timeout=60)
        pytest.fail(f"the control plane did not come up: {res.stderr.strip()}{logs}", pytrace=False)
    print(f"\ncontrol plane {' '.join(flags)} up in {time.monotonic() - t0:.1f}s ({wd})")
    return ControlPlane(wd)


def down_plane(plane):
    subprocess.run([str(SCRIPT), "down", str(plane.workdir)], capture_output=True, text=True, timeout=120)
    if os.environ.get("KUBEX_CONFORMANCE_KEEP") != "1":
        shutil.rmtree(plane.workdir, ignore_errors=True)


@pytest.fixture(scope="session")
def cp():
    control_plane_bin()
    plane = up_plane("kubex-conformance-")
    yield plane
    down_plane(plane)


def crd_manifests():
    """The CRDs as shipped (charts/kubex-crds, the same files config/crd kustomizes)."""
    return run(["kubectl", "kustomize", str(ROOT / "config" / "crd")]).stdout


@pytest.fixture(scope="session")
def crds(cp):
    """The rightsizing CRDs as users install them: `helm install` of charts/kubex-crds with the pinned helm (v4:
    server-side apply by default) into the real kube-apiserver."""
    return install_crds(cp)


def install_crds(cp):
    cp.helm("install", "kubex-crds", str(ROOT / "charts" / "kubex-crds"), "--kubeconfig", cp.kubeconfig, "--wait",
            "--timeout", "120s")
    plurals = [line.split(":", 1)[1].strip() for line in crd_manifests().splitlines() if line.startswith("  name: ")]
    for name in plurals:
        wait_for(lambda n=name: cp.kubectl("get", "crd", n, "-o",
                                           "jsonpath={.status.conditions[?(@.type=='Established')].status}",
                                           check=False).stdout == "True", timeout=30, what=f"CRD {name} established")
    wait_for(lambda: "clustergpureactivepolicies" in cp.kubectl("api-resources", f"--api-group={GROUP}",
                                                                check=False).stdout, what="discovery of the CRDs")
    return cp


def b64(s):
    return base64.b64encode(s.encode()).decode()


def sa_kubeconfig(cp, namespace, sa, path, seconds=3600):
    """A kubeconfig that authenticates with a bound ServiceAccount token from the TokenRequest API."""
    req = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
           "spec": {"expirationSeconds": seconds}}
    out = cp.kubectl("create", "--raw", f"/api/v1/namespaces/{namespace}/serviceaccounts/{sa}/token", "-f", "-",
                     input=json.dumps(req))
    token = json.loads(out.stdout)["status"]["token"]
    pathlib.Path(path).write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": "cp", "cluster": {"server": cp.url, "certificate-authority": cp.ca}}],
        "users": [{"name": sa, "user": {"token": token}}],
        "contexts": [{"name": "cp", "context": {"cluster": "cp", "user": sa, "namespace": namespace}}],
        "current-context": "cp"}))
    return str(path)


def free_port():
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def forbidden_lines(engine):
    """Engine log lines that mention an HTTP 403 (a missing RBAC permission). A 403 is a number of its own, not
    part of a timestamp's milliseconds (`07:30:17.403Z`), of another number or a JSON number field (`"n":403`)."""
    import re
    with engine.lock:
        raw = list(engine.raw)
    # A write into a namespace that is being deleted is refused with 403 too: namespace lifecycle, not RBAC.
    return [l for l in raw if "because it is being terminated" not in l and
            (re.search(r"(?<![\w.:])403(?![\w.])", l) or "forbidden" in l.lower())]
