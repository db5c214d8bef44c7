"""What kubex's Python benchmarks share: logging, ports, /proc readings, polling, and the processes they run
(kubex-sim, a real Prometheus, `kubex engine`)."""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request

PROMETHEUS = shutil.which("prometheus") or "/usr/bin/prometheus"


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def parse_duration(s):
    units = {"ms": 0.001, "s": 1, "m": 60, "h": 3600}
    for u in ("ms", "s", "m", "h"):
        if s.endswith(u) and s[:-len(u)].replace(".", "").isdigit():
            return float(s[:-len(u)]) * units[u]
    raise SystemExit(f"--interval: not a duration: {s}")


def proc_stats(pid):
    """(VmRSS KiB, VmHWM KiB, CPU seconds) of a process."""
    rss = hwm = 0
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
            elif line.startswith("VmHWM:"):
                hwm = int(line.split()[1])
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return rss, hwm, (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_for(pred, timeout, what, interval=0.5):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            last = pred()
            if last:
                return last
        except Exception as e:  # noqa: BLE001 - keep polling through transient errors
            last = e
        time.sleep(interval)
    raise SystemExit(f"timed out after {timeout}s waiting for {what}; last value: {last!r}")


def kubectl(kubeconfig, cache_dir, *args, input=None, check=True, timeout=300):
    """The real kubectl against `kubeconfig`; a failure ends the bench with its output when `check`."""
    cmd = ["kubectl", "--kubeconfig", kubeconfig, "--cache-dir", cache_dir, *args]
    res = subprocess.run(cmd, input=input, capture_output=True, text=True, timeout=timeout)
    if check and res.returncode != 0:
        raise SystemExit(f"kubectl {' '.join(args)[:200]} failed ({res.returncode}):\n{res.stdout}\n{res.stderr}")
    return res


class Sim:
    def __init__(self, bin_dir, workdir, config_text):
        self.workdir = workdir
        self.kubeconfig = os.path.join(workdir, "kubeconfig")
        self.cache_dir = os.path.join(workdir, "kubectl-cache")
        cfg = os.path.join(workdir, "cluster.yaml")
        with open(cfg, "w") as f:
            f.write(config_text)
        self.metrics = f"127.0.0.1:{free_port()}"
        self.log = open(os.path.join(workdir, "sim.log"), "ab")
        self.proc = subprocess.Popen(
            [os.path.join(bin_dir, "kubex-sim"), "serve", "--listen", "127.0.0.1:0", "--kubeconfig",
             self.kubeconfig, "--config", cfg, "--metrics-listen", self.metrics],
            stdout=subprocess.PIPE, stderr=self.log)
        while True:
            line = self.proc.stdout.readline().decode()
            if not line:
                raise SystemExit(f"kubex-sim exited early; see {workdir}/sim.log")
            if line.startswith("kubex-sim ready"):
                break

    def kubectl(self, *args, input=None, check=True, timeout=300):
        return kubectl(self.kubeconfig, self.cache_dir, *args, input=input, check=check, timeout=timeout)

    def apply(self, *objs):
        self.kubectl("apply", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List", "items": list(objs)}))

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


class Prometheus:
    """A real Prometheus scraping the sim's exporter (`target` None: nothing), with its query log on (every query and
    its timings). `history`: tests/e2e/gpu_history.py Series backfilled into its data directory before it starts."""

    def __init__(self, target, workdir, scrape_interval, history=None):
        self.dir = os.path.join(workdir, "prometheus")
        os.makedirs(self.dir)
        if history:
            sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "e2e"))
            from gpu_history import backfill  # the generator the e2e tests use (issue 24 item 6)
            backfill(os.path.join(self.dir, "data"), history)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.query_log = os.path.join(self.dir, "queries.log")
        config = os.path.join(self.dir, "prometheus.yml")
        timeout = max(1, int(scrape_interval * 0.8))
        with open(config, "w") as f:
            f.write(f"global:\n  scrape_interval: {scrape_interval}s\n  evaluation_interval: {scrape_interval}s\n"
                    f"  query_log_file: {self.query_log}\n")
            if target:
                f.write(f"scrape_configs:\n  - job_name: kubex-sim-gpu\n    scrape_interval: {scrape_interval}s\n"
                        f"    scrape_timeout: {timeout}s\n    static_configs:\n      - targets: ['{target}']\n")
            else:
                f.write("scrape_configs: []\n")
        self.log = open(os.path.join(self.dir, "prometheus.log"), "wb")
        self.proc = subprocess.Popen(
            [PROMETHEUS, f"--config.file={config}", f"--storage.tsdb.path={self.dir}/data",
             f"--web.listen-address=127.0.0.1:{self.port}"], stdout=self.log, stderr=subprocess.STDOUT)
        wait_for(lambda: self.proc.poll() is None and self.get("/-/ready")[0] == 200, 60, "prometheus ready", 0.2)

    def get(self, path):
        try:
            with urllib.request.urlopen(self.url + path, timeout=10) as r:
                return r.status, r.read().decode()
        except OSError as e:
            return 0, str(e)

    def query(self, promql):
        status, body = self.get("/api/v1/query?" + urllib.parse.urlencode({"query": promql}))
        if status != 200:
            raise RuntimeError(body)
        return json.loads(body)["data"]["result"]

    def logged_queries(self):
        out = []
        if os.path.exists(self.query_log):
            with open(self.query_log) as f:
                for line in f:
                    try:
                        out.append(json.loads(line))
                    except ValueError:
                        pass
        return out

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


class Engine:
    """`kubex engine` without leader election, logging to WORKDIR/engine.log; `args` are added (the default: no
    webhooks)."""

    def __init__(self, bin_dir, kubeconfig, workdir, args=("--webhook-bind-address=0",)):
        self.log_path = os.path.join(workdir, "engine.log")
        self.log = open(self.log_path, "wb")
        self.t0 = time.monotonic()
        self.proc = subprocess.Popen(
            [os.path.join(bin_dir, "kubex"), "engine", "--kubeconfig", kubeconfig, "--namespace", "kubex",
             "--leader-elect=false", "--metrics-bind-address", "127.0.0.1:0",
             "--health-probe-bind-address", "127.0.0.1:0", *args],
            stdout=self.log, stderr=subprocess.STDOUT)

    def lines(self, msg=None):
        out = []
        with open(self.log_path, errors="replace") as f:
            for raw in f:
                try:
                    line = json.loads(raw)
                except ValueError:
                    continue
                if msg is None or line.get("msg") == msg:
                    out.append(line)
        return out

    def wait_line(self, msg, timeout=900):
        """(seconds from the engine's start, the line) of the first log line with this msg."""
        found = wait_for(lambda: self.alive() and self.lines(msg), timeout, f"the engine's {msg!r} line", 0.05)
        return time.monotonic() - self.t0, found[0]

    def alive(self):
        if self.proc.poll() is not None:
            raise SystemExit(f"kubex engine exited ({self.proc.returncode}); see {self.log_path}")
        return True

    def stats(self):
        self.alive()
        return proc_stats(self.proc.pid)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


def queue(name, parent=None):
    spec = {"resources": {r: {"quota": -1, "limit": -1, "overQuotaWeight": 1} for r in ("cpu", "gpu", "memory")}}
    if parent:
        spec["parentQueue"] = parent
    return {"apiVersion": "scheduling.run.ai/v2", "kind": "Queue", "metadata": {"name": name}, "spec": spec}


def sample(engine, seconds, period=1.0):
    """RSS samples (KiB) every `period` for `seconds`, and the engine's CPU cores over the span."""
    rss = []
    _, _, cpu0 = engine.stats()
    t0 = time.monotonic()
    while time.monotonic() - t0 < seconds:
        rss.append(engine.stats()[0])
        time.sleep(period)
    _, hwm, cpu1 = engine.stats()
    return rss, hwm, (cpu1 - cpu0) / (time.monotonic() - t0)


class Rig:
    """The populated scale rig: `bench-scale --keep-running` (bench/scale/scale_rig.cpp) with CONFIG at SCALE, left
    running; `table` is its Markdown report. `metrics_listen`: HOST:PORT of the sim's GPU exporter (default none)."""

    def __init__(self, bin_dir, config, scale, workdir, metrics_listen="", timeout=1800):
        out_path = os.path.join(workdir, "bench-scale.out")
        # A file, not a pipe: the simulator left running keeps the rig's stdout open.
        with open(out_path, "w") as out:
            rc = subprocess.run([os.path.join(bin_dir, "bench-scale"), "--config", config, "--scale", str(scale),
                                 "--keep-running", "--sim", os.path.join(bin_dir, "kubex-sim"), "--timeout",
                                 str(timeout), *(["--metrics-listen", metrics_listen] if metrics_listen else [])],
                                stdout=out, stderr=sys.stderr).returncode
        with open(out_path) as f:
            text = f.read()
        m = re.search(r"kubex-sim keeps running \(pid (\d+)\); kubeconfig: (\S+)", text)
        if rc != 0 or not m:
            raise SystemExit(f"bench-scale failed:\n{text}")
        self.pid, self.kubeconfig = int(m.group(1)), m.group(2)
        self.dir = os.path.dirname(os.path.dirname(self.kubeconfig))  # bench-scale's /tmp/kubex-scale-PID
        self.metrics = metrics_listen
        self.table = text.split("\nkubex-sim keeps running")[0]
        self.cache_dir = os.path.join(workdir, "kubectl-cache")

    def kubectl(self, *args, input=None, check=True, timeout=600):
        return kubectl(self.kubeconfig, self.cache_dir, *args, input=input, check=check, timeout=timeout)

    def list_pods_paged(self):
        """The baseline of the engine benches: the real kubectl LISTing every pod in pages of 500, as the informers
        do. (seconds, pods)."""
        t = time.monotonic()
        out = self.kubectl("get", "pods", "-A", "--chunk-size=500", "-o", "name").stdout
        return time.monotonic() - t, out.count("\n")

    def stats(self):
        return proc_stats(self.pid)

    def stop(self):
        """Stops the simulator (not a child of this process: it is polled until gone) and removes its directory."""
        try:
            os.kill(self.pid, signal.SIGTERM)
            deadline = time.monotonic() + 30
            while os.path.exists(f"/proc/{self.pid}") and time.monotonic() < deadline:
                time.sleep(0.2)
        except ProcessLookupError:
            pass
        if os.path.basename(self.dir).startswith("kubex-scale-"):
            shutil.rmtree(self.dir, ignore_errors=True)
