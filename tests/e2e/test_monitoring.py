"""kubex's Grafana dashboard and alerts (SPEC RPT-6, HLM-1; issue 26 item 3): what the chart renders with
grafana.dashboards.enabled and prometheusRule.enabled, the schema of both values, `promtool check rules` and
`promtool test rules` on the rules of the rendered PrometheusRule, and a live run: kubex-sim, the real engine (leader
election, webhooks) and a real Prometheus that scrapes both and loads the rendered rules. After a demo-like scenario
(a whole-GPU Deployment resized to 0.5 by a static policy through an eviction, a KAI Deployment under the starter's
reactive policy, a consolidation policy that drains one node), every PromQL expression of the dashboard returns
data, every rule evaluates without error and none fires on the healthy engine; stopping the engine makes
KubexEngineDown pending. The kustomize component is checked by scripts/gen-kustomize.py --check
(tests/e2e/test_helm_chart.py)."""
import json
import math
import pathlib
import re
import shutil
import subprocess
import tempfile
import time
import urllib.parse

import pytest
import yaml

from conftest import ROOT, EngineProcess, wait_for, webhook_health
from engine_proc import install_crds
import test_gpu_metrics
from test_gpu_metrics import PROMETHEUS, PROMTOOL, free_port, http_get, start_gpu_sim
from test_helm_chart import CHART, NS, RELEASE, by_kind, find_helm, one, template, template_error
from test_reactive import API, apply, kai_deployment, queue, starter_docs

ALERTS_FILE = CHART / "files" / "kubex-alerts.yaml"
DASHBOARD_FILE = CHART / "files" / "kubex-dashboard.json"
# Deadlines after an engine action only bound a hang (issue 33 item 3): what is checked is what Prometheus holds,
# however long a loaded machine makes the scenario take.
HANG = 120
SCENARIO = 300  # the whole scenario (resize eviction, drain, reactive cycles) reaching Prometheus
UNIT_TESTS = ROOT / "tests" / "e2e" / "promtool" / "kubex-alerts-test.yaml"
ON = ["--set", "grafana.dashboards.enabled=true", "--set", "prometheusRule.enabled=true"]
ALERTS = {"KubexEngineDown", "KubexWebhookUnhealthy", "KubexAdmissionSlow", "KubexEvictionsBlocked",
          "KubexDrainBlocked", "KubexPrometheusQueriesFailing"}
# SPEC OBS-5: the only metrics the dashboard and the rules may read (histograms by their series names).
OBS5 = {"kubex_admission_requests_total", "kubex_admission_duration_seconds_bucket",
        "kubex_admission_duration_seconds_sum", "kubex_admission_duration_seconds_count",
        "kubex_gpu_recommendations_total", "kubex_evictions_total", "kubex_consolidation_nodes_drained_total",
        "kubex_webhook_healthy", "kubex_prometheus_queries_total", "kubex_consolidation_candidates",
        "kubex_workload_gpus", "controller_runtime_reconcile_total", "workqueue_depth", "workqueue_adds_total",
        "workqueue_retries_total", "controller_runtime_reconcile_time_seconds_bucket", "rest_client_requests_total",
        "leader_election_master_status", "process_cpu_seconds_total", "process_resident_memory_bytes",
        "process_virtual_memory_bytes", "process_open_fds", "process_max_fds", "process_start_time_seconds"}
# RPT-6: what the dashboard must show.
DASHBOARD_METRICS = {"kubex_workload_gpus", "kubex_evictions_total", "kubex_admission_duration_seconds_bucket",
                     "kubex_webhook_healthy", "kubex_admission_requests_total", "kubex_gpu_recommendations_total",
                     "kubex_consolidation_nodes_drained_total", "kubex_consolidation_candidates",
                     "kubex_prometheus_queries_total"}


@pytest.fixture(scope="module")
def helm():
    return find_helm()


@pytest.fixture(scope="module")
def rendered(helm):
    return template(helm, *ON)


@pytest.fixture(scope="module")
def rules_file(rendered, tmp_path_factory):
    """The rule groups of the rendered PrometheusRule, as a Prometheus rule file."""
    path = tmp_path_factory.mktemp("rules") / "kubex-alerts.yaml"
    path.write_text(yaml.safe_dump(one(rendered, "PrometheusRule")["spec"], sort_keys=False))
    return path


def dashboard_of(objs):
    cms = [o for o in by_kind(objs, "ConfigMap").values()
           if o["metadata"].get("labels", {}).get("grafana_dashboard") == "1"]
    assert len(cms) == 1, cms
    (text,) = cms[0]["data"].values()
    return cms[0], json.loads(text)


def panels_of(dash):
    for p in dash["panels"]:
        yield p
        yield from p.get("panels", [])  # collapsed rows


def targets_of(dash):
    return [(p["title"], t) for p in panels_of(dash) for t in p.get("targets", [])]


def metric_names(expr):
    """Metric names an expression reads: identifiers not followed by '(' and not inside {...} or [...] or quotes."""
    stripped = re.sub(r'"[^"]*"', '""', expr)
    stripped = re.sub(r"\{[^}]*\}", "", stripped)
    stripped = re.sub(r"\[[^\]]*\]", "", stripped)
    stripped = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", "", stripped)
    words = re.findall(r"\b([a-zA-Z_:][a-zA-Z0-9_:]*)\b(?!\s*\()", stripped)
    keywords = {"by", "without", "on", "ignoring", "and", "or", "unless", "bool", "offset", "le"}
    return {w for w in words if w not in keywords and not re.fullmatch(r"[0-9.e+-]+", w) and "_" in w}


# --- rendering -------------------------------------------------------------------------------------------------------

def test_both_are_off_by_default(helm):
    objs = template(helm)
    assert not by_kind(objs, "PrometheusRule")
    assert not [o for o in by_kind(objs, "ConfigMap").values()
                if "grafana_dashboard" in o["metadata"].get("labels", {})]


def test_lint_with_both_on(helm):
    res = subprocess.run([helm, "lint", "--strict", str(CHART), "--namespace", NS, *ON], capture_output=True,
                         text=True, timeout=120)
    assert res.returncode == 0 and "0 chart(s) failed" in res.stdout, res.stdout + res.stderr


def test_dashboard_configmap_holds_the_dashboard(rendered, helm):
    cm, dash = dashboard_of(rendered)
    assert cm["metadata"]["name"] == f"{RELEASE}-dashboard" and cm["metadata"]["namespace"] == NS
    assert cm["metadata"]["labels"]["app.kubernetes.io/part-of"] == "kubex"
    # The ConfigMap carries the chart's file unchanged.
    assert dash == json.loads(DASHBOARD_FILE.read_text())
    assert dash["uid"] and dash["title"] and dash["schemaVersion"] >= 30
    (var,) = [v for v in dash["templating"]["list"] if v["type"] == "datasource"]
    assert var["name"] == "datasource" and var["query"] == "prometheus"
    panels = [p for p in panels_of(dash) if p["type"] != "row"]
    assert len(panels) >= 10
    ids = [p["id"] for p in panels_of(dash)]
    assert len(ids) == len(set(ids)), "panel ids must be unique"
    used = set()
    for title, t in targets_of(dash):
        assert t["datasource"] == {"type": "prometheus", "uid": "${datasource}"}, title
        assert t["expr"].strip(), title
        names = metric_names(t["expr"])
        assert names, (title, t["expr"])
        assert names <= OBS5, (title, names - OBS5)
        used |= names
    for p in panels:
        assert p["datasource"] == {"type": "prometheus", "uid": "${datasource}"}, p["title"]
        assert p.get("description"), f"panel {p['title']!r} has no description"
    assert DASHBOARD_METRICS <= used, DASHBOARD_METRICS - used
    exprs = " ".join(t["expr"] for _, t in targets_of(dash))
    for needle in ('state="as_written"', 'state="held"', "histogram_quantile(0.5,", "histogram_quantile(0.99,",
                   "by (reason, result)", "by (direction", "by (policy, result, blocker)"):
        assert needle in exprs, needle
    # Extra labels and annotations (e.g. the sidecar's folder annotation); grafana_dashboard stays "1".
    objs = template(helm, *ON, "--set-string", "grafana.dashboards.labels.team=gpu",
                    "--set-string", "grafana.dashboards.labels.grafana_dashboard=0",
                    "--set-string", "grafana.dashboards.annotations.grafana_folder=GPU")
    cm, _ = dashboard_of(objs)
    assert cm["metadata"]["labels"]["team"] == "gpu" and cm["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert cm["metadata"]["annotations"] == {"grafana_folder": "GPU"}


def test_prometheus_rule_holds_the_alerts(rendered, helm):
    rule = one(rendered, "PrometheusRule")
    assert rule["apiVersion"] == "monitoring.coreos.com/v1"
    assert rule["metadata"]["name"] == RELEASE and rule["metadata"]["namespace"] == NS
    # One source: the chart's rule file is the spec.
    assert rule["spec"] == yaml.safe_load(ALERTS_FILE.read_text())
    rules = [r for g in rule["spec"]["groups"] for r in g["rules"]]
    assert {r["alert"] for r in rules} == ALERTS and len(rules) == len(ALERTS)
    for r in rules:
        assert r["labels"]["severity"] in ("critical", "warning", "info"), r["alert"]
        assert r["annotations"]["summary"] and r["annotations"]["description"], r["alert"]
        assert metric_names(r["expr"]) <= OBS5, (r["alert"], metric_names(r["expr"]) - OBS5)
    by_name = {r["alert"]: r for r in rules}
    assert "kubex_webhook_healthy" in by_name["KubexWebhookUnhealthy"]["expr"]
    assert by_name["KubexWebhookUnhealthy"]["for"] == "5m"
    assert "kubex_admission_duration_seconds_bucket" in by_name["KubexAdmissionSlow"]["expr"]
    assert "> 0.5" in by_name["KubexAdmissionSlow"]["expr"] and by_name["KubexAdmissionSlow"]["for"] == "10m"
    assert 'result="pdb_blocked"' in by_name["KubexEvictionsBlocked"]["expr"]
    assert by_name["KubexEvictionsBlocked"]["for"] == "30m"
    # Labels for the Prometheus Operator's ruleSelector.
    objs = template(helm, *ON, "--set", "prometheusRule.labels.release=kube-prometheus-stack")
    assert one(objs, "PrometheusRule")["metadata"]["labels"]["release"] == "kube-prometheus-stack"


@pytest.mark.parametrize("setting, path", [
    (["--set-string", "grafana.dashboards.enabled=true"], "enabled"),
    (["--set", "prometheusRule.enabled=yes"], "enabled"),
    (["--set", "prometheusRule.enable=true"], "enable"),
    (["--set", "grafana.dashboard.enabled=true"], "dashboard"),
    (["--set", "prometheusRule.labels.release=1"], "release"),
], ids=["string-for-bool", "word-for-bool", "misspelt-rule-key", "misspelt-dashboards", "number-label"])
def test_schema_rejects_wrong_values(helm, setting, path):
    err = template_error(helm, *setting)
    assert "schema" in err and path in err, err


# --- promtool --------------------------------------------------------------------------------------------------------

def test_promtool_check_rules_on_the_rendered_rule(rules_file):
    res = subprocess.run([PROMTOOL, "check", "rules", str(rules_file)], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stdout + res.stderr
    assert f"SUCCESS: {len(ALERTS)} rules found" in res.stdout, res.stdout


def test_promtool_unit_tests_fire_and_stay_quiet_for_every_alert(rules_file):
    tests = yaml.safe_load(UNIT_TESTS.read_text())
    # Every alert has a case where it fires and one where it does not.
    firing, quiet = set(), set()
    for case in tests["tests"]:
        for t in case.get("alert_rule_test", []):
            (firing if t.get("exp_alerts") else quiet).add(t["alertname"])
    assert firing == ALERTS and quiet == ALERTS, (ALERTS - firing, ALERTS - quiet)
    # The unit tests run against the rules of the rendered PrometheusRule.
    tests["rule_files"] = [str(rules_file)]
    path = rules_file.parent / "kubex-alerts-test.yaml"
    path.write_text(yaml.safe_dump(tests, sort_keys=False))
    res = subprocess.run([PROMTOOL, "test", "rules", str(path)], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "SUCCESS" in res.stdout, res.stdout


# --- live: the dashboard's queries and the rules against the real engine ---------------------------------------------

SIM_CONFIG = """
nodePools:
  - name: g
    count: 2
    gpusPerNode: 1
    gpuProduct: Tesla-T4
    gpuMemoryMiB: 16384
    cpu: "16"
    memory: 64Gi
    labels: {pool: g}
kubelet:
  jobRunTime: 30m
"""


class Prometheus(test_gpu_metrics.Prometheus):
    """A real Prometheus scraping the sim's GPU exporter and the engine every second (the engine's address, known
    once it runs, through file-based discovery: set_engine), evaluating `rules` every second."""

    def __init__(self, exporter, rules):
        discovery = pathlib.Path(tempfile.mkdtemp(prefix="kubex-prom-sd-"))
        self.engine_targets = discovery / "engine.json"
        self.engine_targets.write_text("[]")
        super().__init__(exporter, rules=rules, extra_scrape_configs=[
            {"job_name": "kubex-automation-engine",
             "file_sd_configs": [{"files": [str(self.engine_targets)], "refresh_interval": "1s"}]}])

    def set_engine(self, address):
        tmp = self.engine_targets.with_suffix(".tmp")
        tmp.write_text(json.dumps([{"targets": [address]}]))
        tmp.rename(self.engine_targets)

    def api(self, path, **params):
        body = json.loads(http_get(f"{self.url}/api/v1/{path}?{urllib.parse.urlencode(params)}")[2])
        assert body["status"] == "success", body
        return body["data"]

    def query(self, promql):
        return self.api("query", query=promql)["result"]

    def stop(self):
        super().stop()
        shutil.rmtree(self.engine_targets.parent, ignore_errors=True)


def whole_gpu_deployment(name, ns, node):
    """A Deployment as users write it before kubex: one whole nvidia.com/gpu, the default scheduler."""
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": ns, "labels": {"app": name}},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"nodeSelector": {"kubernetes.io/hostname": node},
                                           "containers": [{"name": "app", "image": "trainer:1", "resources": {
                                               "requests": {"cpu": "100m", "nvidia.com/gpu": "1"},
                                               "limits": {"nvidia.com/gpu": "1"}}}]}}}}


def running(sim, ns, app):
    return [p for p in sim.kubectl_json("get", "pods", "-n", ns, "-l", f"app={app}")["items"]
            if p["status"].get("phase") == "Running" and not p["metadata"].get("deletionTimestamp")]


@pytest.fixture(scope="module")
def live(sim_factory, tmp_path_factory, rules_file):
    """The scenario. Returns (sim, prometheus, engine, the time it started)."""
    started = time.monotonic()
    sim, exporter = start_gpu_sim(sim_factory, tmp_path_factory.mktemp("monitoring-sim"), SIM_CONFIG)
    install_crds(sim)
    sim.kubectl("create", "namespace", "kubex")
    apply(sim, queue("kubex-parent-queue"), queue("kubex-unlimited-gpu-queue", parent="kubex-parent-queue"))
    prom = Prometheus(exporter, rules_file)
    engine = None
    try:
        # global-config before the engine starts: it probes its webhook every second from the start.
        apply(sim, {"apiVersion": API, "kind": "GlobalConfiguration", "metadata": {"name": "global-config"},
                    "spec": {"prometheus": {"url": prom.url, "requestTimeout": "5s"},
                             "webhookHealth": {"failureThreshold": 2, "successThreshold": 1,
                                               "transitionCheckInterval": "1s"}}})
        # Before kubex: a training Deployment holding a whole GPU on g-node-0.
        sim.kubectl("create", "namespace", "mon-train")
        apply(sim, whole_gpu_deployment("train", "mon-train", "g-node-0"))
        engine = EngineProcess(sim.kubeconfig, "kubex", leader_elect=True, extra_args=[
            "--webhook-bind-address", "127.0.0.1:0", "--self-signed-webhook", "--register-webhooks",
            "--early-webhook-enabled", "--reactive-check-interval", "2s"])
        engine.wait_ready(timeout=HANG)
        prom.set_engine(f"127.0.0.1:{engine.metrics_port}")
        wait_for(lambda: running(sim, "mon-train", "train"), timeout=HANG, what="the training pod running")
        # ACT-2: no eviction before PodAdmissionWebhookHealthy=True.
        wait_for(lambda: webhook_health(sim) == "True",
                 timeout=HANG, interval=0.2, what=f"PodAdmissionWebhookHealthy=True; engine:\n{engine.output()}")
        # The guide's starter (strategy, baseline and reactive policy), and an inference Deployment at 0.25 under
        # its reactive policy. It lands on g-node-1: g-node-0's GPU is taken whole.
        apply(sim, *starter_docs())
        sim.kubectl("create", "namespace", "mon-infer")
        infer = kai_deployment("infer", "mon-infer", "0.25", "20", "1024", "g-node-1")
        del infer["spec"]["template"]["spec"]["nodeSelector"]
        apply(sim, infer)
        wait_for(lambda: running(sim, "mon-infer", "infer"), timeout=HANG, what="the inference pod running")
        # Consolidation of the two nodes. Nothing fits yet; once train holds 0.5 on g-node-0, infer's 0.25 fits beside
        # it and g-node-1 is drained.
        apply(sim, {"apiVersion": API, "kind": "GpuConsolidationPolicy", "metadata": {"name": "mon-pool"},
                    "spec": {"experimental": {"gpuKaiContract": "v1alpha1-2026-07"},
                             "nodeSelector": {"matchLabels": {"pool": "g"}},
                             "utilizationThresholdPercent": 75, "requeueAfter": "2s"}})
        # A strategy that evicts pods Ready for 0s, and a static policy giving the training Deployment half a GPU:
        # it is resized through an eviction.
        strategy = next(d for d in starter_docs() if d["kind"] == "ClusterAutomationStrategy")
        fast = {**strategy, "metadata": {"name": "mon-fast"},
                "spec": {**strategy["spec"], "safetyChecks": {"minReadyDuration": "0s"}}}
        apply(sim, fast, {
            "apiVersion": API, "kind": "ClusterStaticPolicy", "metadata": {"name": "mon-train"},
            "spec": {"scope": {"namespaceSelector": {"operator": "In", "values": ["mon-train"]},
                               "workloadTypes": ["Deployment"]},
                     "resources": {"containers": {"*": {"requests": {"gpu": "0.5"}}}},
                     "automationStrategyRef": {"name": "mon-fast"}}})
        yield sim, prom, engine, started
    finally:
        if engine:
            engine.stop()
        prom.stop()


def substituted(expr):
    """A dashboard expression as Grafana sends it: the range variables replaced by durations that fit a run of
    seconds with a 1 s scrape interval."""
    return (expr.replace("$__rate_interval", "1m").replace("$__range", "1h").replace("$__interval", "5s")
            .replace("${__range}", "1h"))


def test_every_dashboard_query_returns_data(live, rendered):
    sim, prom, engine, started = live
    _, dash = dashboard_of(rendered)
    exprs = {f"{title} [{t['refId']}]": substituted(t["expr"]) for title, t in targets_of(dash)}
    # Grafana variables left over ("$1" of label_replace is not one: Grafana leaves unknown names alone).
    assert not [e for e in exprs.values() if re.search(r"\$(\{|[A-Za-z_])", e)], exprs
    # What the scenario does, as the dashboard's metrics show it: the static policy's first value, the resize
    # eviction, the reactive policy's queries, the drain of g-node-1, and the training Deployment's GPUs (1 as
    # written, 0.5 held).
    outcomes = {
        "recommendation": 'kubex_gpu_recommendations_total{policy_kind="ClusterStaticPolicy",direction="initial"} > 0',
        "resize eviction": 'kubex_evictions_total{reason="resize",result="success"} > 0',
        "consolidation eviction": 'kubex_evictions_total{reason="consolidation",result="success"} > 0',
        "drain": "kubex_consolidation_nodes_drained_total > 0",
        "reactive queries": 'kubex_prometheus_queries_total{phase="reactive",result="success"} > 0',
        "webhook healthy": "kubex_webhook_healthy == 1",
        "train as written": 'sum(kubex_workload_gpus{namespace="mon-train",state="as_written"}) == 1',
        "train held": 'sum(kubex_workload_gpus{namespace="mon-train",state="held"}) == 0.5',
    }
    # Each query is asked until it has data (once it has, it keeps it: counters and the end state). The deadline
    # only bounds a hang; no time limit on the scenario is checked here.
    empty = {**exprs, **outcomes}

    def all_answered():
        for name, expr in list(empty.items()):
            if prom.query(expr):
                del empty[name]
        return not empty
    try:
        wait_for(all_answered, timeout=SCENARIO, interval=1, what="every query answered")
    except AssertionError:
        pass  # reported below, with what is still missing
    assert not empty, ("queries without data:\n" + "\n".join(f"  {k}: {v}" for k, v in empty.items()) +
                       "\npods:\n" + sim.kubectl("get", "pods", "-A", "-o", "wide").stdout +
                       "engine output:\n" + engine.output())
    latency = prom.query(substituted(
        "histogram_quantile(0.99, sum by (webhook, le) (rate(kubex_admission_duration_seconds_bucket[1m])))"))
    assert any(math.isfinite(float(r["value"][1])) for r in latency), latency


def test_rules_evaluate_and_stay_quiet_on_a_healthy_engine(live):
    sim, prom, engine, _ = live

    def groups_ok():
        groups = prom.api("rules")["groups"]
        rules = [r for g in groups for r in g["rules"]]
        return len(rules) == len(ALERTS) and all(r.get("lastEvaluation", "").startswith("20") and
                                                 r["health"] == "ok" for r in rules) and rules
    rules = wait_for(groups_ok, timeout=HANG, interval=0.5, what="every rule evaluated")
    assert {r["name"] for r in rules} == ALERTS
    # None is pending or firing: the expressions read the series the engine really exports (KubexEngineDown would
    # be pending if its counter or the Lease name were wrong).
    active = []

    def quiet():
        active[:] = prom.api("alerts")["alerts"]
        return not active
    try:
        wait_for(quiet, timeout=HANG, interval=0.5, what="no active alert")
    except AssertionError:
        raise AssertionError(f"alerts active on a healthy engine: {active}") from None
    assert prom.query("max(leader_election_master_status{name=\"kubex-automation-engine-leader\"})")


def test_engine_down_is_detected_when_the_engine_stops(live):
    """Last test of the module: it stops the engine."""
    sim, prom, engine, _ = live
    engine.stop()

    def pending():
        return [a for a in prom.api("alerts")["alerts"] if a["labels"]["alertname"] == "KubexEngineDown"]
    (alert,) = wait_for(pending, timeout=HANG, interval=0.5, what="KubexEngineDown pending")
    assert alert["state"] == "pending" and alert["labels"]["severity"] == "critical"
