"""Shared fixtures for end-to-end tests: a running kubex-sim, real kubectl, the official Python client."""
import datetime
import json
import os
import pathlib
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request

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


def log_time(line):
    """The engine's own timestamp of a JSON log line (OBS-4 `ts`, RFC 3339 with milliseconds), in epoch seconds."""
    return datetime.datetime.fromisoformat(line["ts"].replace("Z", "+00:00")).timestamp()


def webhook_health(sim):
    """The status of global-config's PodAdmissionWebhookHealthy condition ("True", "False" or "Unknown"; WHH-3),
    None before the engine has set it."""
    for c in sim.kubectl_json("get", "globalconfiguration", "global-config").get("status", {}).get("conditions", []):
        if c["type"] == "PodAdmissionWebhookHealthy":
            return c["status"]
    return None


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


class EngineProcess:
    """A `kubex engine` process whose JSON log lines are collected as they arrive."""

    def __init__(self, kubeconfig, namespace="kubex", extra_args=(), leader_elect=None):
        self.args = [str(BIN / "kubex"), "engine", "--kubeconfig", kubeconfig, "--namespace", namespace,
                     "--metrics-bind-address", "127.0.0.1:0", "--health-probe-bind-address", "127.0.0.1:0"]
        if leader_elect is not None:
            self.args.append(f"--leader-elect={'true' if leader_elect else 'false'}")
        # An engine needs a certificate source for its webhooks or an explicit "no webhooks" (ENG-3): tests
        # that give no webhook flag run without webhooks, on purpose.
        if not any(a.split("=")[0] in ("--webhook-bind-address", "--cert-dir", "--self-signed-webhook")
                   for a in extra_args):
            self.args.append("--webhook-bind-address=0")
        self.args += list(extra_args)
        self.lines, self.raw = [], []
        self.lock = threading.Lock()
        self.proc = subprocess.Popen(self.args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for raw in self.proc.stdout:
            text = raw.decode(errors="replace").rstrip("\n")
            with self.lock:
                self.raw.append(text)
                try:
                    self.lines.append(json.loads(text))
                except ValueError:
                    pass

    def find(self, msg, **fields):
        with self.lock:
            return next((l for l in self.lines
                         if l.get("msg") == msg and all(l.get(k) == v for k, v in fields.items())), None)

    def find_all(self, msg, **fields):
        with self.lock:
            return [l for l in self.lines if l.get("msg") == msg and all(l.get(k) == v for k, v in fields.items())]

    def matching(self, msg):
        return self.find_all(msg)

    def reconciles(self, controller):
        """controller_runtime_reconcile_total of one controller, summed over results (OBS-5)."""
        prefix = f'controller_runtime_reconcile_total{{controller="{controller}",'
        return sum(float(l.split()[-1]) for l in self.metrics().splitlines() if l.startswith(prefix))

    def wait_whole_reconcile(self, controller, timeout, interval=1, what="a whole reconcile"):
        """Returns once a reconcile of `controller` that began after the call has ended (OBS-5's counter). A
        reconcile is counted just after the log line it wrote, so one that already logged may not be counted yet:
        two more counts are needed."""
        seen = self.reconciles(controller)
        wait_for(lambda: self.reconciles(controller) >= seen + 2, timeout=timeout, interval=interval,
                 what=f"{what} ({controller})")

    def wait_line(self, msg, timeout=20.0, **fields):
        return wait_for(lambda: self.find(msg, **fields), timeout=timeout,
                        what=f"log line {msg!r} {fields or ''}; output:\n{self.output()}")

    def output(self):
        with self.lock:
            return "\n".join(self.raw[-40:])

    @property
    def health_port(self):
        return self.wait_line("serving health probes")["port"]

    @property
    def metrics_port(self):
        return self.wait_line("serving metrics")["port"]

    def get(self, port, path):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()

    def readyz(self):
        return self.get(self.health_port, "/readyz")

    def wait_ready(self, timeout=30.0):
        wait_for(lambda: self.readyz()[0] == 200, timeout=timeout, what=f"engine /readyz; output:\n{self.output()}")
        return self

    def metrics(self):
        status, body = self.get(self.metrics_port, "/metrics")
        assert status == 200
        return body

    def signal(self, sig):
        self.proc.send_signal(sig)

    def wait_exit(self, timeout=15.0):
        return self.proc.wait(timeout=timeout)

    def stop(self):
        """SIGTERM, then SIGKILL after 20 s; returns the exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.reader.join(timeout=5)
        return self.proc.returncode

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture
def engines():
    """Starts `kubex engine` processes (EngineProcess arguments); all are stopped after the test."""
    started = []

    def start(*args, **kw):
        e = EngineProcess(*args, **kw)
        started.append(e)
        return e

    yield start
    for e in started:
        e.kill()


# Seconds of test time per file in a `make e2e` run at -n 3 on this 2-core machine (2026-12-07; JUnit times in
# build/e2e-junit.xml; test_proactive_history.py with the catch-up read test of issue 34 added), for every file over a
# minute. `make e2e` runs `--dist loadfile`: xdist queues whole files
# in collection order, hands the first `workers` files out one per worker, and then gives each worker holding at
# most two pending tests one more file at once. So this hook orders the collection longest first (a long file that
# starts late outlasts the suite) and puts a light file in the slot that lands behind the ~22-minute
# default-interval file on the first worker. Every worker collects and reorders the same items the same way, so
# xdist's "same collection" check holds. Files not listed keep their collection order after the listed ones.
FILE_SECONDS = {
    "test_reactive_default_interval.py": 1208, "test_actuation.py": 629, "test_proactive_history.py": 493,
    "test_availability.py": 325, "test_chaos.py": 299, "test_reactive.py": 246, "test_actuation_restart.py": 225,
    "test_demo.py": 224, "test_consolidation.py": 182, "test_admission.py": 174, "test_idle_gaps.py": 167,
    "test_report.py": 127, "test_consolidation_models.py": 126, "test_optional_apis.py": 92, "test_sim_trace.py": 85,
    "test_gpu_metrics.py": 84, "test_reactive_not_per_pod.py": 84, "test_explain.py": 82, "test_kai_modes.py": 82,
    "test_resize_harm.py": 61,
}


def pytest_collection_modifyitems(session, config, items):
    files = list(dict.fromkeys(i.path.name for i in items))
    if len(files) < 2:
        return
    order = sorted(files, key=lambda f: -FILE_SECONDS.get(f, 0))  # stable: unlisted files keep their order
    workers = int(getattr(config, "workerinput", {}).get("workercount", 1))
    if FILE_SECONDS.get(order[0], 0) > 0 and 1 < workers < len(order):
        order.insert(workers, order.pop())  # behind the longest one: the last file, a light one (unlisted)
    rank = {f: i for i, f in enumerate(order)}
    items.sort(key=lambda i: rank[i.path.name])  # stable: tests keep their order within a file
