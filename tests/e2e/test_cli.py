"""The `kubex` command line (issue 12 item 6; SPEC §13a CLI-3 exit codes, ENG-3): `kubex --version` / `kubex version`
with the git commit and build date (also the engine's first log line and `kubex_build_info` on /metrics), commands of
later releases answering plainly, usage errors as plain text on stderr, and `kubex validate` naming the line where
each object starts."""
import datetime
import json
import re
import subprocess

import pytest

from conftest import BIN, ROOT, EngineProcess, wait_for

KUBEX = str(BIN / "kubex")
COMMIT = re.compile(r"^([0-9a-f]{40}|unknown)$")


def kubex(*args, input=None):
    return subprocess.run([KUBEX, *args], input=input, capture_output=True, text=True, timeout=60)


def parse_version_text(text):
    lines = text.splitlines()
    assert len(lines) == 3, text
    m = re.fullmatch(r"kubex version (\S+)", lines[0])
    assert m, lines[0]
    assert lines[1].startswith("commit: ") and lines[2].startswith("build date: "), text
    return {"version": m.group(1), "commit": lines[1][len("commit: "):], "buildDate": lines[2][len("build date: "):]}


def check_build_info(info):
    assert re.fullmatch(r"\d+\.\d+\.\d+", info["version"]), info
    assert COMMIT.match(info["commit"]), info
    datetime.datetime.strptime(info["buildDate"], "%Y-%m-%dT%H:%M:%SZ")
    if info["commit"] != "unknown" and (ROOT / ".git").exists():
        # The binary was built from a commit of this checkout (HEAD may have moved on since).
        known = subprocess.run(["git", "-C", str(ROOT), "cat-file", "-e", info["commit"] + "^{commit}"],
                               capture_output=True)
        assert known.returncode == 0, info


def test_version_flag_and_command_agree():  # ENG-3
    flag, command = kubex("--version"), kubex("version")
    assert flag.returncode == 0 and command.returncode == 0, (flag.stderr, command.stderr)
    assert flag.stdout == command.stdout and flag.stderr == "" and command.stderr == ""
    info = parse_version_text(command.stdout)
    check_build_info(info)
    as_json = kubex("version", "-o", "json")
    assert as_json.returncode == 0
    doc = json.loads(as_json.stdout)
    assert doc == {"apiVersion": "cli.kubex.ai/v1alpha1", "kind": "Version", **info}


def not_json(text):
    for line in text.splitlines():
        try:
            json.loads(line)
        except ValueError:
            continue
        return False
    return True


@pytest.mark.parametrize("args,command,text", [
    ([], "kubex", "a command is required (commands: engine, validate, plan, explain, report, version)"),
    (["--bogus"], "kubex", 'unknown command or flag "--bogus"'),
    (["frobnicate"], "kubex", 'unknown command or flag "frobnicate"'),
    (["engine", "--no-such-flag"], "kubex engine", "--no-such-flag"),
    (["engine", "--leader-elect=maybe"], "kubex engine", "maybe"),
    (["engine", "--log-level", "loud"], "kubex engine", "--log-level"),
    (["engine", "--kai-queues-check-interval", "10ms"], "kubex engine", "at least 1s"),
    (["validate"], "kubex validate", "--filename"),
    (["validate", "-f", "x.yaml", "-o", "yaml"], "kubex validate", "yaml"),
    (["version", "-o", "yaml"], "kubex version", "yaml"),
    (["explain"], "kubex explain", "kind"),  # CLI-1
    (["explain", "pod", "a/b", "-o", "yaml"], "kubex explain", "yaml"),
    (["explain", "gizmo", "a/b"], "kubex explain", 'unknown kind "gizmo"'),
    (["explain", "pod", "no-namespace"], "kubex explain", "<namespace>/<name>"),
])
def test_usage_errors_are_plain_text_on_stderr(args, command, text):  # CLI-3: 2 on bad usage
    res = kubex(*args)
    assert res.returncode == 2, res
    assert res.stdout == ""
    assert not_json(res.stderr), res.stderr
    first, hint = res.stderr.splitlines()
    assert first.startswith(command + ": ") and text in first, res.stderr
    assert hint == f"Run '{command} --help' for usage."


MULTI = """# Policies of team A.
apiVersion: rightsizing.kubex.ai/v1alpha1
kind: PolicyEvaluation
metadata:
  name: policy-evaluation
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cm}

---
# The object below is invalid.

apiVersion: rightsizing.kubex.ai/v1alpha1
kind: GlobalConfiguration
metadata:
  name: gc
---
kind: List
apiVersion: v1
items:
  - apiVersion: rightsizing.kubex.ai/v1alpha1
    kind: GlobalConfiguration
    metadata: {name: in-list}
  - apiVersion: rightsizing.kubex.ai/v1alpha1
    kind: PolicyEvaluation
    metadata: {name: policy-evaluation}
"""


def test_validate_names_the_line_each_object_starts_at(tmp_path):  # CLI-3: <file>:<line>: <Kind>/<name>: <error>
    f = tmp_path / "multi.yaml"
    f.write_text(MULTI)
    res = kubex("validate", "-f", str(f))
    assert res.returncode == 1, res
    assert res.stdout == ""
    assert res.stderr.splitlines() == [
        f"{f}:7: ConfigMap/cm: skipped: not a rightsizing.kubex.ai object",
        f'{f}:14: GlobalConfiguration/gc: metadata.name: must be "global-config"',
        f'{f}:22: GlobalConfiguration/in-list: metadata.name: must be "global-config"',
    ]
    report = json.loads(kubex("validate", "-f", str(f), "-o", "json").stdout)
    assert [(d["document"], d["line"], d["valid"]) for d in report["documents"]] == [
        ("1", 2, True), ("3", 14, False), ("4.1", 22, False), ("4.2", 25, True)]
    assert [(s["kind"], s["line"]) for s in report["skipped"]] == [("ConfigMap", 7)]


def test_validate_says_how_many_objects_are_valid(tmp_path):  # CLI-3: exit 0, `N objects valid` on stdout
    # issue 26: a successful run printed nothing, so a new user could not tell it from a run that read nothing.
    one = tmp_path / "one.yaml"
    one.write_text(MULTI.split("---")[0])
    res = kubex("validate", "-f", str(one))
    assert (res.returncode, res.stdout, res.stderr) == (0, "1 object valid\n", ""), res
    res = kubex("validate", "-f", str(ROOT / "examples" / "kai-gpu-sharing.yaml"))
    assert (res.returncode, res.stdout, res.stderr) == (0, "3 objects valid\n", ""), res
    # Warnings stay on stderr; objects of other groups are counted as skipped.
    warn = tmp_path / "warn.yaml"
    warn.write_text(MULTI.split("---")[1] + "---\n" + """apiVersion: rightsizing.kubex.ai/v1alpha1
kind: ClusterAutomationStrategy
metadata: {name: warn}
spec:
  experimental: {gpuKaiContract: v1alpha1-2026-07}
  enablement: {overrideScheduler: kai}
""")
    res = kubex("validate", "-f", str(warn))
    assert res.returncode == 0, res
    assert res.stdout == "1 object valid, 1 skipped (not rightsizing.kubex.ai)\n", res
    assert res.stderr.splitlines() == [
        f"{warn}:2: ConfigMap/cm: skipped: not a rightsizing.kubex.ai object",
        f'{warn}:7: ClusterAutomationStrategy/warn: warning: spec.enablement.gpu.requests.ceiling: "1" is '
        'recommended when overrideScheduler is "kai"'], res.stderr
    # -o json is the report alone.
    assert json.loads(kubex("validate", "-f", str(one), "-o", "json").stdout)["valid"] is True


def test_validate_refuses_the_misspelt_fields_of_the_starter_example(tmp_path):  # VAL-5 (issue 34 item 3)
    # The reported step: the guide's starter with four typos passed as `1 object valid`, exit 0, and
    # `kubectl apply --validate=false` then pruned them, so the CRD defaults replaced the guide's values.
    text = (ROOT / "examples" / "kai-gpu-sharing.yaml").read_text()
    for right, wrong in [("minPodMetricsAge:", "minPodMetricAge:"), ("thresholdPercent:", "thresholdPrecent:"),
                         ("downsize:", "downSize:"), ("podEviction:", "podEvictions:")]:
        assert right in text
        text = text.replace(right, wrong, 1)
    f = tmp_path / "starter.yaml"
    f.write_text(text)
    res = kubex("validate", "-f", str(f))
    assert (res.returncode, res.stdout) == (1, ""), res
    problems = [line.split(": ", 2)[1:] for line in res.stderr.splitlines()]
    assert problems == [
        ["ClusterAutomationStrategy/kai-gpu-sharing",
         'spec.enablement.gpu.requests.downSize: unknown field (did you mean "downsize"?)'],
        ["ClusterAutomationStrategy/kai-gpu-sharing", 'spec.podEvictions: unknown field (did you mean "podEviction"?)'],
        ["ClusterGpuReactivePolicy/kai-gpu-sharing-reactive",
         'spec.metrics.compute.upsize.thresholdPrecent: unknown field (did you mean "thresholdPercent"?)'],
        ["ClusterGpuReactivePolicy/kai-gpu-sharing-reactive",
         'spec.minPodMetricAge: unknown field (did you mean "minPodMetricsAge"?)'],
    ], res.stderr
    doc = json.loads(kubex("validate", "-f", str(f), "-o", "json").stdout)
    assert doc["valid"] is False
    assert [e["path"] for d in doc["documents"] for e in d["errors"]] == [
        "spec.enablement.gpu.requests.downSize", "spec.podEvictions", "spec.metrics.compute.upsize.thresholdPrecent",
        "spec.minPodMetricAge"]
    # Maps keyed by container name, labels and annotations are not unknown fields.
    ok = tmp_path / "static.yaml"
    ok.write_text("""apiVersion: rightsizing.kubex.ai/v1alpha1
kind: StaticPolicy
metadata: {name: s, namespace: team, labels: {a: b}, annotations: {x: y}}
spec:
  scope: {labelSelector: {matchLabels: {app: x}}, workloadTypes: [Deployment]}
  resources:
    containers:
      my-container: {requests: {gpu: "0.5"}}
  automationStrategyRef: {name: kai-gpu-sharing}
""")
    res = kubex("validate", "-f", str(ok))
    assert (res.returncode, res.stdout, res.stderr) == (0, "1 object valid\n", ""), res


@pytest.mark.parametrize("text", ["", "\n\n", "# nothing here\n", "---\n---\n", "kind: List\napiVersion: v1\nitems: []\n"])
def test_validate_an_input_without_objects_is_an_error(tmp_path, text):  # CLI-3: exit 1 when no object
    f = tmp_path / "empty.yaml"
    f.write_text(text)
    res = kubex("validate", "-f", str(f))
    assert res.returncode == 1, res
    assert res.stderr.startswith(f"{f}: no object found"), res.stderr
    report = kubex("validate", "-f", "-", "-o", "json", input=text)
    assert report.returncode == 1
    doc = json.loads(report.stdout)
    assert doc["valid"] is False and doc["problems"][0]["message"].startswith("no object found"), doc
    empty_dir = tmp_path / "d"
    empty_dir.mkdir()
    (empty_dir / "README.txt").write_text("not a manifest")
    res = kubex("validate", "-f", str(empty_dir))
    assert res.returncode == 1 and "no .yaml, .yml or .json file" in res.stderr, res


def by_hand_engine_commands():
    """Every `build/bin/kubex engine` command of README.md and docs/*.md, continuation lines joined."""
    found = []
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = re.sub(r"\\\n\s*", " ", path.read_text())
        found += [(path.name, line.strip()) for line in text.splitlines() if "build/bin/kubex engine " in line]
    return found


def test_by_hand_engine_commands_serve_metrics_and_health_on_loopback_only():  # ENG-3
    # ENG-3's defaults (:8080, :8081) are every interface, right in a pod; a command a user copies onto a
    # workstation keeps /metrics and /healthz on 127.0.0.1, like its webhook (issue 26).
    commands = by_hand_engine_commands()
    assert {name for name, _ in commands} >= {"README.md", "install.md"}, commands
    for name, command in commands:
        binds = dict(re.findall(r"--((?:metrics|health-probe|webhook)-bind-address)[= ](\S+)", command))
        assert binds.get("metrics-bind-address", "").startswith("127.0.0.1:"), (name, command)
        assert binds.get("health-probe-bind-address", "").startswith("127.0.0.1:"), (name, command)
        assert binds.get("webhook-bind-address", "127.0.0.1:").startswith("127.0.0.1:"), (name, command)


@pytest.fixture(scope="module")
def csim(sim_factory):
    return sim_factory(extra_args=["--no-cluster"])


def test_engine_first_log_line_and_build_info_metric(csim):  # ENG-3, OBS-5
    info = parse_version_text(kubex("version").stdout)
    e = EngineProcess(csim.kubeconfig, namespace="default", leader_elect=False)
    try:
        e.wait_line("starting kubex engine")
        first = e.lines[0]
        assert first["msg"] == f"kubex engine {info['version']}", first
        assert {k: first[k] for k in ("version", "commit", "buildDate")} == info
        body = wait_for(lambda: "kubex_build_info" in (m := e.metrics()) and m, what="kubex_build_info")
        series = [l for l in body.splitlines() if l.startswith("kubex_build_info{")]
        labels = f'build_date="{info["buildDate"]}",commit="{info["commit"]}",version="{info["version"]}"'
        assert series == [f"kubex_build_info{{{labels}}} 1"], series
        assert "# TYPE kubex_build_info gauge" in body
    finally:
        e.kill()
