"""The README's, install.md's and try-on-your-cluster.md's steps work (issue 34 item 6): every command of every ```sh
block of README.md, docs/install.md and docs/try-on-your-cluster.md is run as the doc gives it, in the doc's order,
with the doc's own files (the YAML blocks it says to save), and must exit 0; where the doc shows the output a command
prints (comment lines right below it), the output must match. A command that cannot run here is in ALLOWED below,
with the reason; the test fails when a command is neither run nor allowed, and when an allowed command is no longer in
the doc.

Where: README.md and install.md run against kubex-sim serve (the docs' own `kubex-sim serve` command) and the
engine as a process (the docs' own `kubex engine` command); try-on-your-cluster.md, whose subject is "your own
test cluster", runs against a real kube-apiserver + kube-controller-manager + kube-scheduler
(scripts/control-plane.sh, the README's "a real API server to try things on"), with `kubex-sim agent` as its GPU
nodes, as the doc says.

What is substituted (SUBSTITUTIONS, per doc), and nothing else:
- the docs' scratch folders /tmp/sim and /tmp/cp become folders of the test's own work directory, so that tests
  running side by side do not share them;
- the fixed loopback ports (8080, 8081, 9400) become free ports, the same one everywhere in a doc (so the doc's
  `curl` reaches the doc's agent): CI runs several test files at once;
- the placeholders the doc marks as such (`<namespace>/<pod>`, `<a chat pod>`, `<new version>`).
Commands run in a work directory with links to build/, charts/, config/, examples/, scripts/ and tools/ of this
checkout, so that the files a doc writes (sim-pools.yaml, try.yaml, my-kubex/, ...) do not land in the checkout.

Deadlines only bound hangs: every wait is for a state, never for a time.
"""
import json
import os
import pathlib
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request

import pytest

from conftest import BIN, ROOT, wait_for
from test_helm_chart import find_helm

# Commands that are not run, with why. Keys are the command as the doc writes it (continuation lines joined). Keep
# this list short and honest: a command that can run here belongs in the run, not here.
ALLOWED = {
    "README.md": {
        "make demo": "the whole demo (installs dependencies, builds, minutes of story); tests/e2e/test_demo.py runs "
                     "`kubex-sim demo` itself",
        "make test": "the whole test suite, this test included",
        "make conformance": "the conformance suite itself (CI's second lane)",
        "make build": "the build every test runs on (it already ran: these tests use build/bin)",
        "make unit": "a test suite (CI runs it)",
        "make e2e": "the suite this test belongs to",
        "make fuzz": "needs clang's libFuzzer build; CI runs it after the conformance lane",
        "make bench": "benchmarks: minutes of load, numbers in docs/performance.md",
    },
    "install.md": {
        "make build": "the build every test runs on (it already ran: these tests use build/bin)",
        "docker build -t registry.example.com/kubex-automation-engine:0.1.0 "
        "--build-arg KUBEX_GIT_COMMIT=$(git rev-parse HEAD) .": "needs docker (tests/e2e/test_packaging.py checks "
                                                                "the Dockerfile)",
        "docker push registry.example.com/kubex-automation-engine:0.1.0": "needs docker and a registry",
        "helm upgrade --install kubex-automation-engine charts/kubex-automation-engine --namespace kubex "
        "--create-namespace --set image.repository=registry.example.com/kubex-automation-engine "
        "-f charts/kubex-automation-engine/ci/seed-values.yaml":
            "the production install renders RBAC objects, and kubex-sim serves no RBAC API; the same chart and "
            "values run here with rbac.create=false (\"Try it on kubex-sim first\"), and on a real kube-apiserver "
            "in try-on-your-cluster.md's run below and in tests/conformance/test_chart.py",
        "helm upgrade kubex-automation-engine charts/kubex-automation-engine -n kubex --reuse-values "
        "--set image.tag=<new version>":
            "fails here, and that is reported, not hidden: on kubex-sim the by-hand engine of \"Try it on kubex-sim "
            "first\" ran with --register-webhooks, which rewrote the chart's webhook configurations (field manager "
            "`kubex` owns their caBundle), so helm 4's server-side apply refuses the upgrade with conflicts. A "
            "production install (the Deployment) never registers webhooks itself",
        "kubectl apply -k my-kubex": "config/kai needs cert-manager's Certificate and Issuer kinds and an RBAC API; "
                                     "the test renders the overlay with `kubectl kustomize my-kubex` (the doc's "
                                     "own check) instead",
    },
    "try-on-your-cluster.md": {
        "docker build -t kubex-automation-engine:0.1.0 --build-arg KUBEX_GIT_COMMIT=$(git rev-parse HEAD) .":
            "needs docker (tests/e2e/test_packaging.py checks the Dockerfile)",
        "kind load docker-image kubex-automation-engine:0.1.0 --name kubex-try": "needs kind and docker",
        "k3d image import kubex-automation-engine:0.1.0 -c kubex-try": "needs k3d and docker",
        "kubectl -n kubex rollout status deployment/kubex-automation-engine":
            "needs the engine image on a real node (the test cluster here has only the agent's simulated nodes); "
            "the test runs the same engine as a process instead, as install.md's kubex-sim section does "
            "(--register-webhooks points the chart's webhook configurations at it)",
        "helm repo add prometheus-community https://prometheus-community.github.io/helm-charts":
            "needs the internet",
        "helm upgrade --install kubex-prometheus prometheus-community/prometheus -n kubex "
        "--set-file extraScrapeConfigs=agent-scrape.yaml --set alertmanager.enabled=false "
        "--set prometheus-pushgateway.enabled=false": "needs the internet (an external chart and images)",
        "helm uninstall kubex-prometheus -n kubex": "the doc's \"if you installed it\": not installed here (above)",
        # Section 9 is for a cluster that runs KAI-Scheduler; this one does not. tests/conformance/test_real_kai.py
        # runs these steps on `scripts/control-plane.sh up DIR --kai` (the real KAI built from its source).
        "build/bin/kubex-sim agent --config sim-pools.yaml --kai-scheduler external":
            "needs KAI-Scheduler on the cluster (section 9); the real-KAI conformance lane runs it",
        "kubectl get podgroups.scheduling.run.ai -A": "needs KAI-Scheduler's CRDs (section 9)",
        "kubectl get bindrequests.scheduling.run.ai -A": "needs KAI-Scheduler's CRDs (section 9)",
        "kubectl get queues.scheduling.run.ai -o custom-columns=NAME:.metadata.name,ALLOCATED:.status.allocated":
            "needs a Queue CRD; section 7 removed the emulated one (section 9 reads KAI's)",
    },
}

# Comment lines right below these commands are the output the doc shows; below any other command they are prose.
SHOWS_OUTPUT = {
    "try-on-your-cluster.md": ("build/bin/kubex-sim crds | kubectl apply -f -", "build/bin/kubex-sim agent ",
                               "kubectl get nodes -l", "kubectl get events", "curl -s"),
}


# --- reading the docs ----------------------------------------------------------------------------------------------

class Command:
    def __init__(self, text, section):
        self.text, self.section, self.comments = text, section, []

    def __repr__(self):
        return f"[{self.section}] {self.text}"


def fences(path):
    """(language, section heading, lines) of every fenced block of a Markdown file, in order."""
    out, section, lang, cur = [], "", None, []
    for line in path.read_text().splitlines():
        if line.startswith("```"):
            if lang is None:
                lang, cur = line[3:].strip() or "text", []
            else:
                out.append((lang, section, cur))
                lang = None
            continue
        if lang is None and line.startswith("#"):
            section = line.lstrip("#").strip()
        elif lang is not None:
            cur.append(line)
    return out


def split_commands(lines, section):
    """Commands of a sh block: continuation lines joined, a heredoc kept with its command, full-line comments right
    below a command attached to it."""
    cmds, i, attach = [], 0, False
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line.strip():
            attach = False
            continue
        if line.lstrip().startswith("#"):
            if attach:
                cmds[-1].comments.append(line.strip()[1:].strip())
            continue
        text = line.strip()
        while text.endswith("\\") and i < len(lines):
            text = text[:-1].rstrip() + " " + lines[i].strip()
            i += 1
        heredoc = re.search(r"<<'?(\w+)'?", text)
        if heredoc:
            body = []
            while i < len(lines) and lines[i].strip() != heredoc.group(1):
                body.append(lines[i])
                i += 1
            text += "\n" + "\n".join(body) + "\n" + heredoc.group(1)
            i += 1
        cmds.append(Command(text, section))
        attach = True
    return cmds


def doc_commands(name):
    path = ROOT / "README.md" if name == "README.md" else ROOT / "docs" / name
    cmds = []
    for lang, section, lines in fences(path):
        if lang == "sh":
            cmds += split_commands(lines, section)
    return cmds


def without_comment(text):
    """A one-line command without its trailing `# comment`."""
    if "\n" in text:
        return text
    return re.sub(r"\s+#\s.*$", "", text).strip()


def doc_file(name, marker):
    """The first YAML block after `marker` in doc `name` (whitespace-insensitive): a file the doc says to save."""
    text = (ROOT / "docs" / name).read_text()
    flat = re.sub(r"\s+", " ", text)
    assert re.sub(r"\s+", " ", marker) in flat, marker
    # Find the marker in the original text (its words may wrap across lines).
    pattern = r"\s+".join(map(re.escape, marker.split()))
    at = re.search(pattern, text).end()
    m = re.search(r"```yaml\n(.*?)```", text[at:], re.S)
    return m.group(1)


def output_matches(expected, output):
    """The doc's output line `expected` is in `output`: its words in order on one line, where `...` stands for
    anything, and an age (`12s`) or a parenthesised remark is not compared."""
    words = []
    for part in re.split(r"\.\.\.", re.sub(r"\s+\(.*\)\s*$", "", expected)):
        words += [w for w in part.split() if not re.fullmatch(r"\d+[smhd](\d+[sm])?", w)]
    for line in output.splitlines():
        at = 0
        for w in words:
            at = line.find(w, at)
            if at < 0:
                break
            at += len(w)
        else:
            return True
    return False


# --- running them --------------------------------------------------------------------------------------------------

def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class DocRun:
    """Runs a doc's commands in order, in one shell environment (variables a command sets reach the next ones)."""

    def __init__(self, name, substitutions, kubeconfig=None):
        self.name = name
        self.wd = pathlib.Path(tempfile.mkdtemp(prefix="kubex-docs-"))
        for d in ("build", "charts", "config", "examples", "scripts", "tools"):
            (self.wd / d).symlink_to(ROOT / d if d != "build" else BIN.parent)
        self.subs = [(a, b.replace("{wd}", str(self.wd))) for a, b in substitutions]
        helm_dir = self.wd / "helm-bin"
        helm_dir.mkdir()
        (helm_dir / "helm").symlink_to(find_helm())
        # helm keeps its repositories and cache under the work directory; HOME stays (the control plane's cache).
        self.env = {**os.environ, "PATH": f"{helm_dir}:{os.environ['PATH']}",
                    **{f"HELM_{k}_HOME": str(self.wd / "helm" / k.lower()) for k in ("CONFIG", "CACHE", "DATA")}}
        if kubeconfig:
            self.env["KUBECONFIG"] = kubeconfig
        self.vars = set()
        self.state = self.wd / ".doc-shell-state"
        self.state.write_text("")
        self.background = []
        self.ran = []

    def substitute(self, text, placeholders=()):
        for a, b in [*self.subs, *placeholders]:
            text = text.replace(a, b)
        return text

    def _script(self, text):
        names = set(re.findall(r"(?:^|&&|;|\n)\s*(?:export\s+)?([A-Za-z_]\w*)=", text))
        self.vars |= names
        dump = "; ".join(f'printf "export %s=%q\\n" {v} "${{{v}-}}"' for v in sorted(self.vars))
        return (f"set -o pipefail\nsource {self.state}\n{text}\n__rc=$?\n"
                f"{{ {dump or ':'}; }} > {self.state}.new && mv {self.state}.new {self.state}\nexit $__rc\n")

    def run(self, cmd, placeholders=(), timeout=300):
        text = self.substitute(cmd.text, placeholders)
        res = subprocess.run(["bash", "-c", self._script(text)], cwd=self.wd, env=self.env, capture_output=True,
                             text=True, timeout=timeout)
        self.ran.append(cmd.text)
        assert res.returncode == 0, f"{self.name}: `{text}` exited {res.returncode}:\n{res.stdout}\n{res.stderr}"
        self.check_output(cmd, res.stdout + res.stderr)
        if "export " in text:
            for line in self.state.read_text().splitlines():
                m = re.fullmatch(r"export (\w+)=(.*)", line)
                if m:
                    self.env[m.group(1)] = subprocess.run(["bash", "-c", f"printf %s {m.group(2)}"],
                                                          capture_output=True, text=True).stdout
        return res

    def check_output(self, cmd, output):
        if not any(cmd.text.startswith(p) for p in SHOWS_OUTPUT.get(self.name, ())):
            return
        for line in cmd.comments:
            expected = self.substitute(line)
            assert output_matches(expected, output), f"{self.name}: `{cmd.text}` should print {expected!r}:\n{output}"

    def start(self, cmd, ready, timeout=60):
        """A command the doc runs in the background (`&`) or leaves running in its own terminal; `ready(log)` says
        when it is up."""
        text = self.substitute(cmd.text).rstrip().removesuffix("&").strip()
        log = self.wd / f"bg-{len(self.background)}.log"
        out = open(log, "wb")
        proc = subprocess.Popen(["bash", "-c", f"source {self.state}\nexec {text}"], cwd=self.wd, env=self.env,
                                stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        self.background.append((proc, out, log))
        self.ran.append(cmd.text)

        def up():
            assert proc.poll() is None, f"{self.name}: `{text}` exited {proc.returncode}:\n{log.read_text()[-3000:]}"
            return ready(log.read_text(errors="replace"))
        wait_for(up, timeout=timeout, interval=0.2, what=f"`{text}` to be up")
        self.check_output(cmd, log.read_text(errors="replace"))
        return proc

    def stop(self, proc):
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()

    def kubectl(self, *args, check=True):
        res = subprocess.run(["kubectl", *args], cwd=self.wd, env=self.env, capture_output=True, text=True, timeout=60)
        assert not check or res.returncode == 0, f"kubectl {' '.join(args)}: {res.stderr}"
        return res

    def close(self):
        for proc, out, _ in reversed(self.background):
            self.stop(proc)
            out.close()
        shutil.rmtree(self.wd, ignore_errors=True)


def http_ok(url):
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return r.status == 200
    except OSError:
        return False


def engine_ready(port):
    return lambda log: http_ok(f"http://127.0.0.1:{port}/readyz")


def webhook_column_true(doc):
    """global-config's PodAdmissionWebhookHealthy (the `Webhook` column of `kubectl get globalconfiguration`)."""
    gc = json.loads(doc.kubectl("get", "globalconfiguration", "global-config", "-o", "json").stdout)
    return any(c["type"] == "PodAdmissionWebhookHealthy" and c["status"] == "True"
               for c in gc.get("status", {}).get("conditions", []))


def walk(doc, cmds, handlers):
    """Runs `cmds` in order. handlers: (command prefix, fn(cmd)) pairs; the first whose prefix starts the command
    runs it instead of a plain run (a handler may start a background process, run extra checks around the plain
    run, or skip an ALLOWED command). Every command is either run or allowed."""
    allowed = ALLOWED.get(doc.name, {})
    for cmd in cmds:
        key = without_comment(cmd.text)
        handler = next((fn for prefix, fn in handlers if key.startswith(prefix)), None)
        if handler:
            handler(cmd)
        elif key in allowed:
            continue
        else:
            doc.run(cmd)


def test_allowed_commands_are_still_in_their_docs():
    """An ALLOWED entry that no longer matches a command of its doc is stale (the doc changed): the list stays the
    exact set of commands that do not run."""
    for name, allowed in ALLOWED.items():
        keys = {without_comment(c.text) for c in doc_commands(name)}
        stale = set(allowed) - keys
        assert not stale, f"{name}: allowed commands no longer in the doc: {stale}"
    for name, prefixes in SHOWS_OUTPUT.items():
        for prefix in prefixes:
            shown = [c for c in doc_commands(name) if c.text.startswith(prefix)]
            assert any(c.comments for c in shown), (name, prefix, shown)


# --- README.md -----------------------------------------------------------------------------------------------------

def test_readme_commands():
    """README.md: the control plane up and down, and "Try it by hand" on kubex-sim with the engine as a process."""
    cmds = doc_commands("README.md")
    metrics, health = free_port(), free_port()
    doc = DocRun("README.md", [("/tmp/sim", "{wd}/sim"), ("/tmp/cp", "{wd}/cp"),
                               ("127.0.0.1:8080", f"127.0.0.1:{metrics}"), ("127.0.0.1:8081", f"127.0.0.1:{health}")])
    try:
        def sim(cmd):
            doc.start(cmd, lambda log: (doc.wd / "sim" / "kubeconfig").exists() and "kubex-sim ready" in log)

        def engine(cmd):
            doc.start(cmd, engine_ready(health))

        def validate(cmd):
            res = doc.run(cmd)
            assert res.stdout == "3 objects valid\n", res.stdout  # the doc's comment

        def explain_pod(cmd):
            doc.run(cmd)
            # The doc's alternative, `explain pod <namespace>/<pod>`, with a pod of that workload.
            pod = wait_for(lambda: doc.kubectl("get", "pods", "-n", "ml-inference", "-o", "name").stdout.split(),
                           timeout=60, what="a pod of ml-inference")[0].split("/")[1]
            res = subprocess.run([str(BIN / "kubex"), "explain", "pod", f"ml-inference/{pod}"], cwd=doc.wd,
                                 env=doc.env, capture_output=True, text=True, timeout=60)
            assert res.returncode == 0 and f"Pod ml-inference/{pod}" in res.stdout, res

        walk(doc, cmds, [("build/bin/kubex-sim serve", sim), ("build/bin/kubex engine", engine),
                         ("build/bin/kubex validate", validate), ("build/bin/kubex explain", explain_pod)])
        ran = {without_comment(t) for t in doc.ran}
        assert any(t.startswith("scripts/control-plane.sh up") for t in ran), doc.ran
        assert "build/bin/kubex report" in ran, doc.ran
    finally:
        subprocess.run([str(ROOT / "scripts" / "control-plane.sh"), "down", str(doc.wd / "cp")], capture_output=True,
                       timeout=120)
        doc.close()


# --- docs/install.md -----------------------------------------------------------------------------------------------

def test_install_md_commands():
    """docs/install.md on kubex-sim: "Try it on kubex-sim first" first (the doc's own advice: it is where this page's
    commands can run without a cluster), then every other block in the doc's order on that installation: the checks,
    kustomize, the upgrade and the uninstall."""
    cmds = doc_commands("install.md")
    first = [c for c in cmds if c.section == "Try it on kubex-sim first"]
    rest = [c for c in cmds if c.section != "Try it on kubex-sim first"]
    assert first and rest[-1].text.startswith("helm uninstall kubex-crds"), cmds
    metrics, health = free_port(), free_port()
    doc = DocRun("install.md", [("/tmp/sim", "{wd}/sim"), ("127.0.0.1:8080", f"127.0.0.1:{metrics}"),
                                ("127.0.0.1:8081", f"127.0.0.1:{health}")])
    try:
        def sim(cmd):
            doc.start(cmd, lambda log: (doc.wd / "sim" / "kubeconfig").exists() and "kubex-sim ready" in log)

        def engine(cmd):
            doc.start(cmd, engine_ready(health))

        def get_global_config(cmd):
            doc.run(cmd)
            # The doc's comment: the Webhook column turns True within ~30 s.
            wait_for(lambda: webhook_column_true(doc), timeout=120, interval=1,
                     what="global-config's Webhook column True")

        def overlay(cmd):
            doc.run(cmd)
            # The doc's own check of the overlay (its apply is ALLOWED): it renders, with the overlay's image.
            res = doc.kubectl("kustomize", "my-kubex")
            assert "image: registry.example.com/kubex-automation-engine:0.1.0" in res.stdout, res.stdout[:2000]

        walk(doc, first + rest, [("build/bin/kubex-sim serve", sim),
                                 ("build/bin/kubex engine", engine),
                                 ("kubectl get globalconfiguration global-config", get_global_config),
                                 ("mkdir -p my-kubex", overlay)])
        # The uninstall left no kubex CRD and no release.
        assert not doc.kubectl("get", "crd", "-l", "app.kubernetes.io/part-of=kubex", "-o", "name").stdout.strip()
    finally:
        doc.close()


# --- docs/try-on-your-cluster.md -------------------------------------------------------------------------------------

TRY = "try-on-your-cluster.md"


def test_try_on_your_cluster_commands():
    """docs/try-on-your-cluster.md on a real kube-apiserver, kube-controller-manager and kube-scheduler (the test
    cluster; scripts/control-plane.sh), from the emulated CRDs through the agent (option A, then option B with the
    ServiceAccount's token), the Helm install, the starter, try.yaml and workloads.yaml, what you should see, to the
    clean-up. The engine runs as a process (its image cannot run here: ALLOWED)."""
    cmds = doc_commands(TRY)
    metrics, health, agent_metrics = free_port(), free_port(), free_port()
    cp = tempfile.mkdtemp(prefix="kubex-docs-cp-")
    script = str(ROOT / "scripts" / "control-plane.sh")
    up = subprocess.run([script, "up", cp], capture_output=True, text=True, timeout=300)
    assert up.returncode == 0, up.stderr
    doc = DocRun(TRY, [("127.0.0.1:9400", f"127.0.0.1:{agent_metrics}")], kubeconfig=f"{cp}/admin.kubeconfig")
    for name, marker in [("sim-pools.yaml", "Save this as `sim-pools.yaml`:"), ("try.yaml", "Save as `try.yaml`:"),
                         ("workloads.yaml", "(`workloads.yaml`)")]:
        (doc.wd / name).write_text(doc_file(TRY, marker))
    agents, engines = [], []
    try:
        def agent(cmd):
            if agents:  # option B after option A: the same agent again, with the ServiceAccount's rights
                doc.stop(agents.pop())
                # The doc's checks of option B's rights.
                can = doc.kubectl("--kubeconfig", "sim-agent.kubeconfig", "auth", "can-i", "create", "pods",
                                  "--subresource=binding", check=False)
                assert can.stdout.strip() == "yes", can
                cannot = doc.kubectl("--kubeconfig", "sim-agent.kubeconfig", "auth", "can-i", "create",
                                     "deployments", check=False)
                assert cannot.stdout.strip() == "no", cannot
            agents.append(doc.start(cmd, lambda log: "kubex-sim agent ready" in log))
            wait_for(lambda: len([n for n in json.loads(doc.kubectl(
                "get", "nodes", "-l", "sim.kubex.ai/agent=kubex-sim-agent", "-o", "json").stdout)["items"]
                if any(c["type"] == "Ready" and c["status"] == "True" for c in n["status"]["conditions"])]) == 3,
                timeout=120, interval=0.5, what="the agent's 3 nodes Ready")

        def engine_chart(cmd):
            doc.run(cmd)
            # The engine: install.md's by-hand command (its image cannot run here; rollout status is ALLOWED).
            engines.append(doc.start(Command(
                f"build/bin/kubex engine --namespace kubex --leader-elect=false --webhook-bind-address 127.0.0.1:0 "
                f"--metrics-bind-address=127.0.0.1:{metrics} --health-probe-bind-address=127.0.0.1:{health} "
                "--self-signed-webhook --register-webhooks --early-webhook-enabled --kai-queues", "engine"),
                engine_ready(health)))

        def get_global_config(cmd):
            doc.run(cmd)
            wait_for(lambda: webhook_column_true(doc), timeout=120, interval=1,
                     what="global-config's Webhook column True")

        def chat_pods():
            pods = json.loads(doc.kubectl("get", "pods", "-n", "kubex-try", "-l", "app=chat", "-o", "json").stdout)
            return [p for p in pods["items"] if p["status"].get("phase") == "Running"
                    and p["metadata"].get("annotations", {}).get("gpu-fraction") == "0.5"]

        def get_pods(cmd):
            # "What you should see": chat's three pods run with half a GPU each, trainer with its whole GPU.
            wait_for(lambda: len(chat_pods()) == 3, timeout=120, interval=1, what="chat's 3 pods running at 0.5")
            res = doc.run(cmd)
            rows = [l.split() for l in res.stdout.splitlines()[1:]]
            chat = [r for r in rows if r[0].startswith("chat-")]
            assert len(chat) == 3 and all(r[2] == "kai-scheduler" and r[3] == "0.5" for r in chat), res.stdout
            trainer = [r for r in rows if r[0].startswith("trainer-")]
            assert len(trainer) == 1 and trainer[0][3] == "<none>", res.stdout

        def explain(cmd):
            pod = chat_pods()[0]["metadata"]["name"]
            res = doc.run(cmd, placeholders=[("<a chat pod>", pod)])
            assert f"Pod kubex-try/{pod}" in res.stdout, res.stdout

        def events(cmd):
            # The kubelet's Started events and both schedulers' Scheduled events are written by now.
            wait_for(lambda: "Started container" in doc.kubectl("get", "events", "-n", "kubex-try").stdout,
                     timeout=60, what="Started events")
            doc.run(cmd)

        def metrics_curl(cmd):
            # The exporter has a sample of chat's container once the GPU model has sampled it.
            wait_for(lambda: 'pod="chat-' in urllib.request.urlopen(
                f"http://127.0.0.1:{agent_metrics}/metrics", timeout=5).read().decode(),
                timeout=60, interval=0.5, what="chat's GPU metrics")
            doc.run(cmd)

        def engine_uninstall(cmd):
            doc.run(cmd)
            doc.stop(engines.pop())  # the by-hand engine goes with its release

        def delete_nodes(cmd):
            doc.stop(agents.pop())  # "2. The agent: stop it, then its nodes"
            doc.run(cmd)

        walk(doc, cmds, [("build/bin/kubex-sim agent", agent),
                         ("helm upgrade --install kubex-automation-engine", engine_chart),
                         ("kubectl get globalconfiguration global-config", get_global_config),
                         ("kubectl get pods -n kubex-try", get_pods), ("build/bin/kubex explain pod", explain),
                         ("kubectl get events -n kubex-try", events), ("curl -s", metrics_curl),
                         ("helm uninstall kubex-automation-engine", engine_uninstall),
                         ("kubectl delete nodes", delete_nodes)])
        assert not doc.kubectl("get", "crd", "queues.scheduling.run.ai", check=False).returncode == 0
    finally:
        doc.close()
        subprocess.run([script, "down", cp], capture_output=True, timeout=120)
        shutil.rmtree(cp, ignore_errors=True)
