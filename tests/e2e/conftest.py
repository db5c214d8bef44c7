"""Shared fixtures for end-to-end tests: a running kubex-sim, real kubectl, the official Python client."""
import json
import os
import pathlib
import shutil
import signal
import subprocess
import tempfile
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("KUBEX_BUILD_DIR", ROOT / "build"))
BIN = BUILD / "bin"


def wait_for(predicate, timeout=20.0, interval=0.05, what="condition"):
    """Polls `predicate` until it returns a truthy value or the deadline passes."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            last = predicate()
            if last:
                return last
        except Exception as e:  # noqa: BLE001 - keep polling through transient errors
            last = e
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}; last value: {last!r}")


class Sim:
    """A kubex-sim process with its kubeconfig."""

    def __init__(self, workdir, extra_args=(), data_dir=None, listen="127.0.0.1:0"):
        self.workdir = pathlib.Path(workdir)
        self.kubeconfig = str(self.workdir / "kubeconfig")
        self.cache_dir = str(self.workdir / "kubectl-cache")
        self.log_path = self.workdir / "sim.log"
        self.extra_args = list(extra_args)
        self.data_dir = data_dir
        self.listen = listen
        self.proc = None
        self.url = None

    def start(self, timeout=20.0):
        args = [str(BIN / "kubex-sim"), "serve", "--listen", self.listen, "--kubeconfig", self.kubeconfig]
        if self.data_dir:
            args += ["--data-dir", str(self.data_dir)]
        args += self.extra_args
        self.log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=self.log)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline().decode()
            if not line:
                raise AssertionError(f"kubex-sim exited early; see {self.log_path}")
            if line.startswith("kubex-sim ready"):
                fields = dict(kv.split("=", 1) for kv in line.split()[2:])
                self.url = fields["url"]
                self.port = int(self.url.rsplit(":", 1)[1])
                return self
        raise AssertionError("kubex-sim did not become ready")

    def stop(self, sig=signal.SIGTERM):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if getattr(self, "log", None):
            self.log.close()

    def kubectl(self, *args, input=None, check=True, context=None, timeout=60):
        cmd = ["kubectl", "--kubeconfig", self.kubeconfig, "--cache-dir", self.cache_dir]
        if context:
            cmd += ["--context", context]
        cmd += list(args)
        res = subprocess.run(cmd, input=input, capture_output=True, text=True, timeout=timeout)
        if check and res.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed ({res.returncode}):\n{res.stdout}\n{res.stderr}")
        return res

    def kubectl_json(self, *args, **kw):
        return json.loads(self.kubectl(*args, "-o", "json", **kw).stdout)

    def client(self, context=None):
        from kubernetes import client, config

        cfg = client.Configuration()
        config.load_kube_config(config_file=self.kubeconfig, context=context, client_configuration=cfg)
        return client.ApiClient(configuration=cfg)


@pytest.fixture(scope="session")
def sim_factory():
    started = []

    def make(extra_args=(), data_dir=None, listen="127.0.0.1:0"):
        wd = tempfile.mkdtemp(prefix="kubex-e2e-")
        s = Sim(wd, extra_args=extra_args, data_dir=data_dir, listen=listen).start()
        started.append((s, wd))
        return s

    yield make
    for s, wd in started:
        s.stop()
        shutil.rmtree(wd, ignore_errors=True)


@pytest.fixture(scope="module")
def sim(sim_factory):
    """One simulator per test module (tests isolate themselves by namespace)."""
    return sim_factory()


@pytest.fixture
def namespace(sim, request):
    name = "t-" + request.node.name.lower().replace("_", "-")[:40].strip("-")
    sim.kubectl("create", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}))
    yield name
    sim.kubectl("delete", "namespace", name, "--wait=false", check=False)
