"""Helpers for e2e tests that run `kubex engine` against kubex-sim: the engine process with its JSON log lines,
the rightsizing.kubex.ai CRDs from config/crd, global-config, its conditions and its events."""
import json
import re
import signal
import subprocess
import threading
import urllib.request

from conftest import BIN, ROOT, wait_for

GROUP = "rightsizing.kubex.ai"


class Engine:
    """A `kubex engine` process (no leader election, its own ports) whose JSON log lines are collected."""

    def __init__(self, kubeconfig, *extra, namespace="default"):
        self.args = [str(BIN / "kubex"), "engine", "--kubeconfig", kubeconfig, "--namespace", namespace,
                     "--leader-elect=false", "--metrics-bind-address", "127.0.0.1:0",
                     "--health-probe-bind-address", "127.0.0.1:0", *extra]
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

    def wait_line(self, msg, timeout=20.0):
        def find():
            with self.lock:
                return next((l for l in self.lines if l.get("msg") == msg), None)
        return wait_for(find, timeout=timeout, what=f"log line {msg!r}; output:\n{self.output()}")

    def output(self):
        with self.lock:
            return "\n".join(self.raw[-60:])

    def metrics(self):
        port = self.wait_line("serving metrics")["port"]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
            return r.read().decode()

    def reconciles(self, controller):
        """controller_runtime_reconcile_total summed over results for `controller` (OBS-5)."""
        total = 0.0
        pattern = re.compile(r'^controller_runtime_reconcile_total\{([^}]*)\} (\S+)$')
        for line in self.metrics().splitlines():
            m = pattern.match(line)
            if m and f'controller="{controller}"' in m.group(1):
                total += float(m.group(2))
        return total

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.reader.join(timeout=5)
        return self.proc.returncode


def install_crds(sim):
    res = subprocess.run(["kubectl", "kustomize", str(ROOT / "config" / "crd")], capture_output=True, text=True,
                         check=True, timeout=60)
    sim.kubectl("apply", "-f", "-", input=res.stdout)
    wait_for(lambda: sim.kubectl("get", "crd", f"globalconfigurations.{GROUP}", "-o",
                                 "jsonpath={.status.conditions[?(@.type=='Established')].status}").stdout == "True",
             what="the GlobalConfiguration CRD to be established")


def apply_global_config(sim, spec):
    obj = {"apiVersion": f"{GROUP}/v1alpha1", "kind": "GlobalConfiguration", "metadata": {"name": "global-config"},
           "spec": spec}
    sim.kubectl("apply", "-f", "-", input=json.dumps(obj))


def global_config(sim):
    return sim.kubectl_json("get", f"globalconfigurations.{GROUP}", "global-config")


def condition(obj, ctype):
    return next((c for c in obj.get("status", {}).get("conditions", []) if c.get("type") == ctype), None)


def condition_is(sim, ctype, status, reason):
    """The condition when it has `status`/`reason` (for wait_for), else None."""
    c = condition(global_config(sim), ctype)
    return c if c and c["status"] == status and c["reason"] == reason else None


def global_config_events(sim, reason):
    items = sim.kubectl_json("get", "events", "-n", "default", "--field-selector",
                             "involvedObject.name=global-config")["items"]
    return [e for e in items if e.get("reason") == reason and e["involvedObject"].get("kind") == "GlobalConfiguration"]
