"""bench-sizing as users (and independent checks) run it (issue 36): two trace CSVs with their columns in different
orders, a policy file, `-o json` with the documented keys, and numbers derived by hand from the replay's rules
(REA-6, SEL-6, ADM-8; docs/reactive.md "A preset measured on production usage")."""
import json
import subprocess

import pytest

from conftest import BIN, ROOT

GIB = 1024 ** 3
DEVICE_MIB = 49152  # 48 GiB


def write_trace(tmp_path, memory_gib):
    """One container 'c1', one sample a minute; memory in GiB, duty cycle 0 %. GenTD26's column orders."""
    mem = tmp_path / "memory.csv"
    duty = tmp_path / "duty.csv"
    t0 = 1662858720.0
    mem.write_text("timestamp_anon,value,container_ip\n" +
                   "".join(f"{t0 + 60 * i},{g * GIB},c1\n" for i, g in enumerate(memory_gib)))
    duty.write_text("value,timestamp_anon,container_ip\n" +
                    "".join(f"0.0,{t0 + 60 * i},c1\n" for i in range(len(memory_gib))))
    return mem, duty


POLICY = """
apiVersion: rightsizing.kubex.ai/v1alpha1
kind: ClusterAutomationStrategy
metadata: {name: s}
spec:
  experimental: {gpuKaiContract: v1alpha1-2026-07}
  enablement: {overrideScheduler: kai, gpu: {requests: {upsize: true, downsize: true, ceiling: "1"}}}
---
apiVersion: rightsizing.kubex.ai/v1alpha1
kind: ClusterStaticPolicy
metadata: {name: start}
spec:
  automationStrategyRef: {name: s}
  scope: {namespaceSelector: {operator: In, values: ["*"]}}
  resources: {containers: {"*": {requests: {gpu: "0.5"}}}}
---
apiVersion: rightsizing.kubex.ai/v1alpha1
kind: ClusterGpuReactivePolicy
metadata: {name: r}
spec:
  experimental: {gpuKaiContract: v1alpha1-2026-07}
  automationStrategyRef: {name: s}
  scope: {namespaceSelector: {operator: In, values: ["*"]}}
  minPodMetricsAge: 0s
  metrics:
    compute:
      prometheus: {metric: sm, interpretation: fullGPU, namespaceLabel: namespace, podLabel: pod, containerLabel: container}
      upsize: {thresholdPercent: 100, metricsWindow: 2m, headroomPercent: 20, maxPercent: 200}
      scaleBack: {thresholdPercent: 75, metricsWindow: 10m, headroomPercent: 20}
    memory:
      prometheus: {metric: mem, interpretation: currentAllocation, namespaceLabel: namespace, podLabel: pod, containerLabel: container}
      upsize: {thresholdPercent: 100, metricsWindow: 2m, headroomPercent: 20, maxPercent: 200}
      scaleBack: {thresholdPercent: 75, metricsWindow: 10m, headroomPercent: 20}
"""


def run(*args):
    return subprocess.run([str(BIN / "bench-sizing"), *map(str, args)], capture_output=True, text=True, timeout=60)


def test_json_fields_and_numbers_on_a_hand_made_trace(tmp_path):  # REA-6, SEL-6, issue 36 item 1
    # 6 samples: 14.4 GiB (0.3 of 48 GiB) three times, then 26.4 GiB (0.55), then 24 GiB (0.5) twice.
    mem, duty = write_trace(tmp_path, [14.4, 14.4, 14.4, 26.4, 24, 24])
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY)
    r = run("--memory", mem, "--duty", duty, "--device-mib", DEVICE_MIB, "--policy", policy, "-o", "json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    fields = {"gpu_hours_as_written", "gpu_hours_held", "saved_percent", "over_allocation_percent",
              "over_allocation_episodes", "resizes_per_container_day", "containers"}
    for key in ("kubex", "oracle_hourly", "static_peak", "p95_history"):
        assert fields <= set(out[key]), key
        assert set(out[key]["containers"]) == {"c1"}
    k = out["kubex"]
    # Held: 1 (as written) for sample 0, then the static 0.5 (SEL-6) for samples 1-3; sample 3 is 0.55 > 0.5 (one
    # over-allocated sample, one episode) and triggers the memory upsize 0.55 × 1.2 = 0.66 (REA-6), held for 4-5.
    # GPU-hours: (1 + 3 × 0.5 + 2 × 0.66) / 60 = 0.0637 of 0.1 as written: 36.3 % saved; 2 resizes in 6 minutes.
    assert k["gpu_hours_as_written"] == 0.1
    assert k["gpu_hours_held"] == 0.06
    assert k["saved_percent"] == 36.33
    assert k["over_allocation_episodes"] == 1
    assert k["over_allocation_percent"] == round(100 / 6, 4)
    assert k["resizes_per_container_day"] == round(2 / (6 / 1440), 2)
    assert k["containers"]["c1"]["saved_percent"] == 36.33
    # The oracle holds the hour's peak 0.55 × 1.2 = 0.66 from the first sample: never below memory.
    assert out["oracle_hourly"]["over_allocation_episodes"] == 0
    assert out["oracle_hourly"]["saved_percent"] == 34.0


def test_the_guides_starter_is_the_default_policy(tmp_path):  # issue 36: the starter example as written
    mem, duty = write_trace(tmp_path, [14.4] * 5)
    r = run("--memory", mem, "--duty", duty, "--device-mib", DEVICE_MIB, "-o", "json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["policy"] == "kai-gpu-sharing-reactive"
    # Five minutes: no hour of history for the baseline policy (PRO-2) and REA-5 keeps the reactive policy at
    # the value as written.
    assert out["kubex"]["saved_percent"] == 0


@pytest.mark.parametrize("bad,message", [
    ("timestamp_anon,value\n1,2\n", "the header needs timestamp_anon, value and container_ip"),
    ("timestamp_anon,value,container_ip\n1,x,c1\n", "line 2: not a timestamp,value,container row"),
])
def test_a_malformed_trace_is_named(tmp_path, bad, message):  # bad input gets a clear error
    mem, duty = write_trace(tmp_path, [14.4])
    mem.write_text(bad)
    r = run("--memory", mem, "--duty", duty, "--device-mib", DEVICE_MIB)
    assert r.returncode == 2 and message in r.stderr and str(mem) in r.stderr, r.stderr


def test_an_invalid_policy_names_the_field(tmp_path):  # VAL-1: validated as the engine validates it
    mem, duty = write_trace(tmp_path, [14.4])
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY.replace("minPodMetricsAge: 0s", "minPodMetricsAge: 30s"))
    r = run("--memory", mem, "--duty", duty, "--device-mib", DEVICE_MIB, "--policy", policy)
    assert r.returncode == 2 and "document 3 (ClusterGpuReactivePolicy r): spec.minPodMetricsAge" in r.stderr, r.stderr


def test_the_real_trace_replays(tmp_path):  # the production trace of ../shared/data, when present
    data = ROOT.parent / "shared" / "data" / "alibaba-gentd26"
    if not data.is_dir():
        pytest.skip("../shared/data/alibaba-gentd26 is not here")
    r = run("--memory", data / "pod_gpu_memory_used_bytes_anon.csv", "--duty", data / "pod_gpu_duty_cycle_anon.csv",
            "--device-mib", DEVICE_MIB, "-o", "json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert len(out["kubex"]["containers"]) == out["container_count"] > 0
    # The oracle is the most a safe sizer can save: no memory above what it holds.
    assert out["oracle_hourly"]["over_allocation_percent"] == 0
    assert 0 < out["oracle_hourly"]["saved_percent"] < 100
