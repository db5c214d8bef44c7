"""`kubex report` end to end (issue 26, SPEC §12a RPT-1…RPT-5, CLI-4): kubex-sim, a real Prometheus holding three hours
of gpu-process-exporter samples backfilled with promtool (tests/e2e/gpu_history.py), the real `kubex engine` at its
default intervals with its webhooks, and GlobalConfiguration prices of 2.00 USD per T4 GPU-hour.

  rpt-idle/idle-chat  a KAI-native Deployment holding 0.5 GPU whose pods used ~1 % SM and 3 % of their memory for 3h:
                      idle (RPT-2), with its GPU-hours and idle cost (RPT-3)
  rpt-sized/chat      2 replicas written with `nvidia.com/gpu: 1`, admitted at 0.4 by a ClusterStaticPolicy: 2 GPUs as
                      written against 0.8 held, 1.2 saved (RPT-1); kubex_workload_gpus says the same (RPT-5); sized at
                      admission, so not listed among the resizes applied by eviction
Then: the report without Prometheus (`no data`, the rest printed), `-o json` against the table, and `-o html` opened in
headless Chromium (no console error, no request, the charts' SVG), with its screenshot kept as an artifact."""
import json
import os
import pathlib
import re
import subprocess
import time

import pytest

from conftest import BIN, ROOT, EngineProcess, wait_for
from gpu_history import Series
from headless_chromium import visit
from test_gpu_metrics import Prometheus, free_port, start_gpu_sim
from test_kai_modes import SIM_CONFIG, start_when_static_is_known, static_policy  # four T4 nodes
from test_reactive import API, apply, metric, queue, running, starter_docs

PRICE = 2.0
ARTIFACTS = pathlib.Path(os.environ.get("KUBEX_BUILD_DIR", ROOT / "build")) / "test-artifacts"


def history(now):
    """Three hours of an earlier idle-chat pod (the name its ReplicaSet would give it): SM 1 %, memory 3 % of 0.5."""
    end = now - 60
    return [Series("rpt-idle", "idle-chat-6d8f7b9c5-k2m4p", "app", sm=1.0, memory=3.0, start=end - 3 * 3600, end=end)]


def kai_native(name, ns, fraction):
    """A Deployment written for KAI (gpu-fraction in its template): kubex manages nothing here, the report still
    counts it."""
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": ns, "labels": {"app": name}},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name, "kai.scheduler/queue": "kubex-unlimited-gpu-queue"},
                                               "annotations": {"gpu-fraction": fraction}},
                                  "spec": {"schedulerName": "kai-scheduler",
                                           "containers": [{"name": "app", "image": "registry.example/chat:1"}]}}}}


def whole_gpu(name, ns, replicas):
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": ns, "labels": {"app": name}},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "app", "image": "registry.example/chat:1",
                                                           "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}}}


def report(sim, *args, check=True):
    res = subprocess.run([str(BIN / "kubex"), "report", "--kubeconfig", sim.kubeconfig, *args], capture_output=True,
                         text=True, timeout=120)
    if check:
        assert res.returncode == 0, res.stderr
    return res


def report_json(sim, *args):
    return json.loads(report(sim, "-o", "json", *args).stdout)


def row(doc, ns, owner):
    return next(w for w in doc["workloads"] if w["namespace"] == ns and w["owner"] == owner)


@pytest.fixture(scope="module")
def env(sim_factory, tmp_path_factory):
    sim, _ = start_gpu_sim(sim_factory, tmp_path_factory.mktemp("report-sim"), SIM_CONFIG)
    prom = Prometheus(None, history=history(time.time()))
    sim.kubectl("apply", "-k", str(ROOT / "config" / "crd"))
    sim.kubectl("create", "namespace", "kubex")
    apply(sim, queue("kubex-parent-queue"), queue("kubex-unlimited-gpu-queue", parent="kubex-parent-queue"))
    apply(sim, {"apiVersion": API, "kind": "GlobalConfiguration", "metadata": {"name": "global-config"},
                "spec": {"prometheus": {"url": prom.url, "requestTimeout": "10s"},
                         "cost": {"gpuHourPrices": [{"nodeSelector": {"matchLabels": {
                             "nvidia.com/gpu.product": "Tesla-T4"}}, "price": f"{PRICE:.2f}"}]}}})
    apply(sim, *[d for d in starter_docs() if d["kind"] == "ClusterAutomationStrategy"])
    apply(sim, static_policy("rpt-sized", "rpt-sized", "0.4"))
    for ns in ("rpt-idle", "rpt-sized"):
        sim.kubectl("create", "namespace", ns)
    engine = EngineProcess(sim.kubeconfig, "kubex", leader_elect=False, extra_args=[
        "--webhook-bind-address", "127.0.0.1:0", "--self-signed-webhook", "--register-webhooks",
        "--early-webhook-enabled"])
    engine.wait_ready()
    engine.wait_line("registered webhook configurations", timeout=30)
    apply(sim, kai_native("idle-chat", "rpt-idle", "0.5"), whole_gpu("chat", "rpt-sized", 0))
    start_when_static_is_known(sim, "rpt-sized", "chat", "0.4")
    sim.kubectl("scale", "deployment", "chat", "-n", "rpt-sized", "--replicas=2")
    wait_for(lambda: len(r := running(sim, "rpt-sized", "chat")) == 2
             and all(p["metadata"]["annotations"].get("gpu-fraction") == "0.4" for p in r),
             timeout=90, interval=0.5, what="two chat pods running at 0.4")
    wait_for(lambda: len(running(sim, "rpt-idle", "idle-chat")) == 1, timeout=60, what="idle-chat running")
    yield sim, prom, engine
    engine.stop()
    prom.stop()


def test_idle_workload_is_flagged_with_its_gpu_hours_and_cost(env):  # RPT-2, RPT-3, RPT-1
    sim, _, _ = env
    doc = report_json(sim, "--since", "24h")
    first = doc["workloads"][0]
    assert (first["namespace"], first["owner"]) == ("rpt-idle", "Deployment/idle-chat"), doc["workloads"]  # idle first
    assert first["idle"] is True, first
    assert first["gpusHeld"] == "0.5" and first["gpusAsWritten"] == "0.5" and first["managed"] is False
    usage = first["usage"]
    assert usage["data"] and usage["smP95Gpus"] == pytest.approx(0.01, abs=0.005), usage
    assert usage["memoryMaxGpus"] == pytest.approx(0.015, abs=0.001), usage  # 3 % of the 0.5 it holds
    assert 2.5 * 3600 <= usage["spanSeconds"] <= 3 * 3600 + 120, usage
    # GPU-hours over the data's span (about 3h) and the idle cost at 2.00 USD.
    assert 1.25 <= first["gpuHoursHeld"] <= 1.55, first
    assert first["idleCost"]["USD"] == pytest.approx(first["gpuHoursHeld"] * PRICE, abs=0.011), first
    assert doc["totals"]["cluster"]["idleWorkloads"] == 1
    table = report(sim).stdout
    assert re.search(r"rpt-idle\s+Deployment/idle-chat\s+no\s+1\s+0\.5\s+0\.5\s+0\s+0\.01\s+0\.0[12]\s+IDLE", table), table
    assert "Idle workloads" in table and "rpt-idle Deployment/idle-chat: holds 0.5 GPU" in table, table


def test_resized_workload_shows_as_written_vs_held_and_the_saving(env):  # RPT-1, RPT-3, RPT-5, issue 26 item 5
    sim, _, engine = env
    doc = report_json(sim)
    chat = row(doc, "rpt-sized", "Deployment/chat")
    assert chat["managed"] is True and chat["replicas"] == 2
    assert (chat["gpusAsWritten"], chat["gpusHeld"], chat["gpusSaved"]) == ("2", "0.8", "1.2"), chat
    assert chat["idle"] is False and chat["idleReason"] == "no data"  # no samples of its pods in Prometheus
    assert chat["costSaved"]["USD"] == pytest.approx(1.2 * chat["hours"] * PRICE, abs=0.011), chat
    ns = next(n for n in doc["totals"]["namespaces"] if n["namespace"] == "rpt-sized")
    assert (ns["gpusAsWritten"], ns["gpusHeld"], ns["savedPercent"]) == ("2", "0.8", 60.0), ns
    # Sized when its pods were created: nothing of it is listed as a resize applied by eviction.
    assert not [e for e in doc["resizesByEviction"]["events"] if e["namespace"] == "rpt-sized"], doc["resizesByEviction"]
    # RPT-5: the engine exports the same two numbers (no need for `kubex report` in a dashboard).
    labels = {"namespace": "rpt-sized", "owner_kind": "Deployment", "owner": "chat"}
    wait_for(lambda: metric(engine, "kubex_workload_gpus", state="as_written", **labels) == 2.0
             and metric(engine, "kubex_workload_gpus", state="held", **labels) == pytest.approx(0.8),
             timeout=60, interval=1, what="kubex_workload_gpus of rpt-sized/chat = 2 as written, 0.8 held")
    assert metric(engine, "kubex_workload_gpus", namespace="rpt-idle") == 0  # not managed: no series
    # OBS-5: 1 once PodAdmissionWebhookHealthy is True (3 successful probes, 10 s apart).
    wait_for(lambda: [ln for ln in engine.metrics().splitlines() if ln.startswith("kubex_webhook_healthy")]
             == ["kubex_webhook_healthy 1"], timeout=60, interval=1, what="kubex_webhook_healthy 1")


def test_gone_workload_drops_its_series(env):  # RPT-5: series of workloads that are gone are dropped
    sim, _, engine = env
    apply(sim, whole_gpu("short", "rpt-sized", 1))
    labels = {"namespace": "rpt-sized", "owner_kind": "Deployment", "owner": "short"}
    wait_for(lambda: metric(engine, "kubex_workload_gpus", state="held", **labels) == pytest.approx(0.4),
             timeout=90, interval=1, what="kubex_workload_gpus of rpt-sized/short")
    sim.kubectl("delete", "deployment", "short", "-n", "rpt-sized")
    wait_for(lambda: 'owner="short"' not in engine.metrics(), timeout=60, interval=1,
             what="the series of the deleted Deployment dropped")


def test_json_matches_the_table(env):  # RPT-1: -o json carries the table's numbers
    sim, _, _ = env
    doc = report_json(sim)
    table = report(sim).stdout
    lines = table.split("Workloads holding or asking for GPUs", 1)[1].split("Idle workloads", 1)[0].splitlines()
    rows = [ln.replace("no data", "no-data").split() for ln in lines
            if ln.startswith("  ") and not ln.strip().startswith("NAMESPACE")]
    by_owner = {(r[0], r[1]): r for r in rows}
    assert len(by_owner) == len(doc["workloads"]) >= 2, table
    for w in doc["workloads"]:
        r = by_owner[(w["namespace"], w["owner"])]
        assert r[2:7] == ["yes" if w["managed"] else "no", str(w["replicas"]), w["gpusAsWritten"], w["gpusHeld"],
                          w["gpusSaved"]], (r, w)
        assert r[9] == ("IDLE" if w["idle"] else "-"), (r, w)
        assert float(r[10]) == pytest.approx(w["gpuHoursSaved"], abs=0.01), (r, w)
    c = doc["totals"]["cluster"]
    cluster = next(ln.split() for ln in table.splitlines() if ln.strip().startswith("(cluster)"))
    assert cluster[1:5] == [str(c["workloads"]), str(c["idleWorkloads"]), c["gpusAsWritten"], c["gpusHeld"]], cluster


def test_without_prometheus_the_report_still_prints_with_no_data(env):  # RPT-1
    sim, _, _ = env
    down = f"http://127.0.0.1:{free_port()}"
    res = report(sim, "--prometheus-url", down)
    assert f"Prometheus {down}: no data" in res.stdout, res.stdout
    assert re.search(r"rpt-sized\s+Deployment/chat\s+yes\s+2\s+2\s+0\.8\s+1\.2\s+no data\s+no data", res.stdout), \
        res.stdout
    doc = report_json(sim, "--prometheus-url", down)
    assert all(w["usage"] == {"data": False} and not w["idle"] for w in doc["workloads"]), doc["workloads"]
    assert doc["prometheus"]["error"], doc["prometheus"]
    assert doc["totals"]["cluster"]["gpusAsWritten"] != "0"


# RPT-4: the pods-per-GPU chart's caption ends inside its SVG (with two columns the SVG was 142px wide).
CAPTION_INSIDE = ("(() => { const s = document.querySelector('#chart-pods-per-gpu');"
                  " const b = s.querySelector('text.caption').getBBox();"
                  " return b.x >= 0 && b.x + b.width <= s.width.baseVal.value; })()")


def test_html_report_renders_in_headless_chromium_without_errors_or_requests(env, tmp_path):  # RPT-4
    sim, _, _ = env
    out = tmp_path / "report.html"
    res = report(sim, "-o", "html", "--output-file", str(out))
    assert res.stdout == "" and f"wrote {out}" in res.stderr
    page = visit(out, expressions=["document.querySelectorAll('svg.chart').length",
                                   "document.querySelectorAll('#chart-namespaces rect.held').length",
                                   "document.querySelectorAll('#chart-pods-per-gpu rect').length",
                                   "document.querySelector('#idle').innerText",
                                   "document.scripts.length", CAPTION_INSIDE])
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "report.png").write_bytes(page.screenshot)
    (ARTIFACTS / "report.html").write_bytes(out.read_bytes())
    assert page.errors() == [], page.errors()
    assert page.requests == [out.resolve().as_uri()], page.requests  # the page itself, nothing else
    ev = page.evaluations
    assert ev["document.querySelectorAll('svg.chart').length"] == 2
    assert ev["document.querySelectorAll('#chart-namespaces rect.held').length"] >= 3  # legend + 2 namespaces
    assert ev["document.querySelectorAll('#chart-pods-per-gpu rect').length"] >= 2
    assert "idle-chat" in ev["document.querySelector('#idle').innerText"]
    assert ev["document.scripts.length"] == 0
    assert ev[CAPTION_INSIDE] is True  # issue 34 item 7: the "Pods per GPU" caption was clipped at the SVG's edge
    assert "Drains kubex carried out in the window" in out.read_text()
    assert page.screenshot[:8] == b"\x89PNG\r\n\x1a\n" and len(page.screenshot) > 10_000


def test_exit_codes_as_cli(env, tmp_path):  # RPT-1 "Exit codes as CLI"
    sim, _, _ = env
    bad = report(sim, "--since", "yesterday", check=False)
    assert bad.returncode == 2 and "--since" in bad.stderr, bad.stderr
    kubeconfig = tmp_path / "gone.yaml"
    kubeconfig.write_text(pathlib.Path(sim.kubeconfig).read_text().replace(
        re.search(r"server: (\S+)", pathlib.Path(sim.kubeconfig).read_text()).group(1),
        f"https://127.0.0.1:{free_port()}"))
    gone = subprocess.run([str(BIN / "kubex"), "report", "--kubeconfig", str(kubeconfig)], capture_output=True,
                          text=True, timeout=120)
    assert gone.returncode == 1 and gone.stderr.startswith("kubex report: "), gone.stderr
    unwritable = report(sim, "--output-file", "/proc/kubex-report.txt", check=False)
    assert unwritable.returncode == 1 and "cannot write /proc/kubex-report.txt" in unwritable.stderr


def test_output_is_the_format_and_output_file_the_file(env, tmp_path):  # RPT-1, CLI-3 (issue 34 item 7)
    # The reported step: `kubex report --output json` wrote a file named `json` and exited 0.
    sim, _, _ = env
    res = subprocess.run([str(BIN / "kubex"), "report", "--kubeconfig", sim.kubeconfig, "--output", "json"],
                         capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["kind"] == "Report"
    assert not (tmp_path / "json").exists() and list(tmp_path.iterdir()) == []
    out = tmp_path / "r.json"
    res = report(sim, "-o", "json", "--output-file", str(out))
    assert res.stdout == "" and f"wrote {out}" in res.stderr
    assert json.loads(out.read_text())["kind"] == "Report"
    bad = report(sim, "--output", "yaml", check=False)
    assert bad.returncode == 2 and bad.stdout == "", bad
    assert bad.stderr.startswith("kubex report: ") and "yaml" in bad.stderr, bad.stderr
    # No GpuConsolidationPolicy in this cluster: the drains list is there, empty.
    assert json.loads(res.stdout or out.read_text())["consolidation"]["drains"] == []
