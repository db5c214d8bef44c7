"""The chart's `kubex gpu-exporter` DaemonSet (issue 37 item 2, SPEC TEL-5), rendered with the real helm binary:
off by default; when on, hostPID, the host's /proc read-only, NODE_NAME from the downward API, exactly pods
get/list/watch, the Service and ServiceMonitor, the two ways to get the NVIDIA driver, the schema and the flags
`kubex gpu-exporter` really has. The server-side dry run of these objects is in test_helm_chart.py."""
import json
import re
import subprocess

import pytest

from conftest import BIN
from test_helm_chart import (CHART, HOST_DRIVER, NS, ON, RELEASE, args_of, by_kind, default, helm, one,  # noqa: F401
                             run_helm, seed, template, template_error)

EXPORTER = f"{RELEASE}-gpu-exporter"


def exporter_pod(objs):
    return one(objs, "DaemonSet", EXPORTER)["spec"]["template"]["spec"]


def exporter_container(objs):
    (c,) = exporter_pod(objs)["containers"]
    return c


def selects(selector, labels):
    return selector.items() <= labels.items()


def test_gpu_exporter_is_off_by_default_and_renders_nothing(default, seed):
    for objs in (default, seed):
        assert not by_kind(objs, "DaemonSet")
        assert not [o for o in objs if "gpu-exporter" in o["metadata"]["name"] or
                    o["metadata"].get("labels", {}).get("app.kubernetes.io/component") == "gpu-exporter"]


def test_gpu_exporter_daemonset_runs_kubex_gpu_exporter_with_host_pid_host_proc_and_node_name(helm):
    objs = template(helm, *ON, "--set", "gpuExporter.port=9500,gpuExporter.interval=2s,gpuExporter.logLevel=debug",
                    "--set", "image.repository=registry.example.com/kubex,image.tag=1.2.3")
    ds = one(objs, "DaemonSet", EXPORTER)
    assert ds["spec"]["updateStrategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1}}
    assert selects(ds["spec"]["selector"]["matchLabels"], ds["spec"]["template"]["metadata"]["labels"])
    pod = exporter_pod(objs)
    c = exporter_container(objs)
    assert pod["hostPID"] is True
    # TEL-1: the same binary and image as the engine, its gpu-exporter subcommand (the image's entrypoint is
    # `kubex engine`), with every flag from the values.
    assert c["image"] == "registry.example.com/kubex:1.2.3" == \
        one(objs, "Deployment")["spec"]["template"]["spec"]["containers"][0]["image"]
    assert c["command"] == ["/usr/local/bin/kubex", "gpu-exporter"]
    assert c["args"] == ["--nvml-library=libnvidia-ml.so.1", "--proc-root=/host/proc", "--node-name=$(NODE_NAME)",
                         "--listen=:9500", "--interval=2s", "--log-level=debug"]
    # TEL-2: the host's /proc, read-only, where --proc-root says.
    (mount,) = [m for m in c["volumeMounts"] if m["mountPath"] == "/host/proc"]
    assert mount["readOnly"] is True
    (vol,) = [v for v in pod["volumes"] if v["name"] == mount["name"]]
    assert vol["hostPath"] == {"path": "/proc", "type": "Directory"}
    env = {e["name"]: e for e in c["env"]}
    assert env["NODE_NAME"]["valueFrom"] == {"fieldRef": {"fieldPath": "spec.nodeName"}}
    # GPU nodes only, including tainted ones.
    assert pod["nodeSelector"] == {"nvidia.com/gpu.present": "true"}
    assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in pod["tolerations"]
    # Root for other uids' /proc under hidepid, but nothing else: read-only, no escalation, no capability.
    assert pod["securityContext"]["runAsUser"] == 0
    sc = c["securityContext"]
    assert sc == {"readOnlyRootFilesystem": True, "allowPrivilegeEscalation": False,
                  "capabilities": {"drop": ["ALL"]}}
    assert c["ports"] == [{"name": "metrics", "containerPort": 9500, "protocol": "TCP"}]
    for probe in ("livenessProbe", "readinessProbe"):
        assert c[probe]["httpGet"] == {"path": "/metrics", "port": "metrics"}
    assert c["resources"]["requests"] == {"cpu": "20m", "memory": "40Mi"}
    assert c["resources"]["limits"] == {"memory": "64Mi"}
    assert "nvidia.com/gpu" not in c["resources"]["limits"]  # it holds no GPU
    assert pod["serviceAccountName"] == one(objs, "ServiceAccount", EXPORTER)["metadata"]["name"]


def test_gpu_exporter_pod_settings_follow_the_values(helm):
    objs = template(helm, *ON, "--set", "gpuExporter.priorityClassName=system-node-critical",
                    "--set", "gpuExporter.maxUnavailable=25%,gpuExporter.image.tag=9.9.9",
                    "--set", "gpuExporter.image.pullPolicy=Always",
                    "--set-json", 'gpuExporter.podAnnotations={"example.com/a": "b"}',
                    "--set-json", 'gpuExporter.extraEnv=[{"name": "TZ", "value": "UTC"}]',
                    # Helm merges maps: the default label is removed with null.
                    "--set-json", 'gpuExporter.nodeSelector={"nvidia.com/gpu.present": null, "gpu": "yes"}',
                    "--set-json", "gpuExporter.tolerations=[]")
    ds = one(objs, "DaemonSet", EXPORTER)
    pod = exporter_pod(objs)
    c = exporter_container(objs)
    assert pod["priorityClassName"] == "system-node-critical"
    assert ds["spec"]["updateStrategy"]["rollingUpdate"]["maxUnavailable"] == "25%"
    assert ds["spec"]["template"]["metadata"]["annotations"]["example.com/a"] == "b"
    assert {"name": "TZ", "value": "UTC"} in c["env"]
    assert pod["nodeSelector"] == {"gpu": "yes"} and "tolerations" not in pod
    assert c["image"] == "kubex-automation-engine:9.9.9" and c["imagePullPolicy"] == "Always"


def test_gpu_exporter_rbac_is_exactly_pods_get_list_watch(helm):
    objs = template(helm, *ON)
    assert one(objs, "ClusterRole", EXPORTER)["rules"] == [
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]}]
    binding = one(objs, "ClusterRoleBinding", EXPORTER)
    assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": EXPORTER}
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": EXPORTER, "namespace": NS}]
    assert exporter_pod(objs)["serviceAccountName"] == EXPORTER != args_of(objs) and EXPORTER != \
        one(objs, "Deployment")["spec"]["template"]["spec"]["serviceAccountName"]
    # The exporter is bound to nothing else, and rbac.create=false leaves its RBAC to the user as for the engine.
    assert [b["metadata"]["name"] for b in by_kind(objs, "ClusterRoleBinding").values()
            if any(s["name"] == EXPORTER for s in b["subjects"])] == [EXPORTER]
    assert not by_kind(objs, "RoleBinding").get(EXPORTER)
    objs = template(helm, *ON, "--set", "rbac.create=false")
    assert not by_kind(objs, "ClusterRole") and not by_kind(objs, "ClusterRoleBinding")
    assert one(objs, "ServiceAccount", EXPORTER)


def test_gpu_exporter_service_selects_only_the_exporter_pods(helm):
    objs = template(helm, *ON, "--set", "gpuExporter.port=9500",
                    "--set-json", 'gpuExporter.service.annotations={"prometheus.io/scrape": "true"}')
    svc = one(objs, "Service", EXPORTER)
    assert svc["spec"]["clusterIP"] == "None"
    assert svc["spec"]["ports"] == [{"name": "http-metrics", "port": 9500, "targetPort": "metrics",
                                     "protocol": "TCP"}]
    assert svc["metadata"]["annotations"] == {"prometheus.io/scrape": "true"}
    exporter_labels = one(objs, "DaemonSet", EXPORTER)["spec"]["template"]["metadata"]["labels"]
    engine_labels = one(objs, "Deployment")["spec"]["template"]["metadata"]["labels"]
    assert selects(svc["spec"]["selector"], exporter_labels) and not selects(svc["spec"]["selector"], engine_labels)
    for name, other in by_kind(objs, "Service").items():
        if name != EXPORTER:
            assert not selects(other["spec"]["selector"], exporter_labels), name
    assert not by_kind(objs, "ServiceMonitor")


def test_gpu_exporter_service_monitor_follows_metrics_service_monitor(helm):
    objs = template(helm, *ON, "--set", "metrics.serviceMonitor.enabled=true",
                    "--set", "gpuExporter.serviceMonitor.interval=5s,gpuExporter.serviceMonitor.scrapeTimeout=4s",
                    "--set", "metrics.serviceMonitor.labels.release=kube-prometheus-stack")
    monitors = by_kind(objs, "ServiceMonitor")
    assert set(monitors) == {RELEASE, EXPORTER}
    sm = monitors[EXPORTER]
    svc = one(objs, "Service", EXPORTER)
    assert selects(sm["spec"]["selector"]["matchLabels"], svc["metadata"]["labels"])
    assert sm["spec"]["namespaceSelector"] == {"matchNames": [NS]}
    assert sm["metadata"]["labels"]["release"] == "kube-prometheus-stack"
    (ep,) = sm["spec"]["endpoints"]
    assert (ep["port"], ep["path"], ep["interval"], ep["scrapeTimeout"]) == ("http-metrics", "/metrics", "5s", "4s")
    # TEL-3: the series' namespace/pod/container are the GPU workload's, not the exporter pod's.
    assert ep["honorLabels"] is True
    # Each ServiceMonitor scrapes its own Service only.
    engine_sm = monitors[RELEASE]["spec"]["selector"]["matchLabels"]
    assert not selects(engine_sm, svc["metadata"]["labels"])
    assert not selects(sm["spec"]["selector"]["matchLabels"],
                       one(objs, "Service", f"{RELEASE}-metrics-service")["metadata"]["labels"])


def test_gpu_exporter_driver_from_the_nvidia_runtime_class(helm):
    """Way 1 (default): the NVIDIA runtime injects NVML and the device nodes into an unprivileged container that
    requests no GPU; the exporter loads libnvidia-ml.so.1 through the loader."""
    for settings in ([], ["--set", "gpuExporter.driver.runtimeClassName=nvidia-cdi"]):
        objs = template(helm, *ON, *settings)
        pod, c = exporter_pod(objs), exporter_container(objs)
        assert pod["runtimeClassName"] == ("nvidia-cdi" if settings else "nvidia")
        env = {e["name"]: e.get("value") for e in c["env"]}
        assert env["NVIDIA_VISIBLE_DEVICES"] == "all" and env["NVIDIA_DRIVER_CAPABILITIES"] == "utility"
        assert "--nvml-library=libnvidia-ml.so.1" in c["args"]
        assert [v["name"] for v in pod["volumes"]] == ["host-proc"]
        assert "privileged" not in c["securityContext"]
        assert "nvidia.com/gpu" not in json.dumps(c["resources"])
    # Neither way: no RuntimeClass (the node's default runtime is NVIDIA's), the same environment.
    objs = template(helm, *ON, *HOST_DRIVER)
    assert "runtimeClassName" not in exporter_pod(objs)
    assert "NVIDIA_VISIBLE_DEVICES" in {e["name"] for e in exporter_container(objs)["env"]}


@pytest.mark.parametrize("root, library, want", [
    ("/run/nvidia/driver", None, "/host/driver-root/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1"),
    ("/", None, "/host/driver-root/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1"),
    ("/", "/usr/lib64/libnvidia-ml.so.1", "/host/driver-root/usr/lib64/libnvidia-ml.so.1"),
], ids=["gpu-operator", "host-install", "rhel-library"])
def test_gpu_exporter_driver_from_a_host_driver_root(helm, root, library, want):
    """Way 2: the driver root mounted read-only and --nvml-library pointed at the library under it; privileged,
    since only a privileged container gets the /dev/nvidia* nodes without the NVIDIA runtime."""
    settings = [*ON, *HOST_DRIVER, "--set", f"gpuExporter.driver.hostDriverRoot={root}"]
    if library:
        settings += ["--set", f"gpuExporter.driver.nvmlLibrary={library}"]
    objs = template(helm, *settings)
    pod, c = exporter_pod(objs), exporter_container(objs)
    assert "runtimeClassName" not in pod
    assert f"--nvml-library={want}" in c["args"]
    (mount,) = [m for m in c["volumeMounts"] if m["name"] == "driver-root"]
    assert mount == {"name": "driver-root", "mountPath": "/host/driver-root", "readOnly": True,
                     "mountPropagation": "HostToContainer"}
    (vol,) = [v for v in pod["volumes"] if v["name"] == "driver-root"]
    assert vol["hostPath"] == {"path": root, "type": "Directory"}
    names = {e["name"] for e in c["env"]}
    assert "NVIDIA_VISIBLE_DEVICES" not in names and "NODE_NAME" in names
    # The API refuses allowPrivilegeEscalation: false with privileged: true.
    assert c["securityContext"] == {"readOnlyRootFilesystem": True, "privileged": True}
    assert pod["hostPID"] is True and any(m["mountPath"] == "/host/proc" and m["readOnly"]
                                          for m in c["volumeMounts"])


def test_gpu_exporter_both_driver_ways_at_once_fail_with_a_clear_message(helm):
    err = template_error(helm, *ON, "--set", "gpuExporter.driver.hostDriverRoot=/run/nvidia/driver")
    assert "gpuExporter.driver: set runtimeClassName" in err and "not both" in err, err
    # Disabled, the same values render (the check is the exporter's).
    template(helm, "--set", "gpuExporter.driver.hostDriverRoot=/run/nvidia/driver")


@pytest.mark.parametrize("setting, path", [
    (["--set-string", "gpuExporter.port=x"], "port"),
    (["--set", "gpuExporter.port=70000"], "port"),
    (["--set-string", "gpuExporter.enabled=true"], "enabled"),
    (["--set", "gpuExporter.logLevel=verbose"], "logLevel"),
    (["--set", "gpuExporter.interval=1 second"], "interval"),
    (["--set", "gpuExporter.driver.hostDriverRoot=run/nvidia/driver"], "hostDriverRoot"),
    (["--set", "gpuExporter.driver.runtimeClassName=NVIDIA"], "runtimeClassName"),
    (["--set", "gpuExporter.driver.nvmlLibrary=/usr/lib64/"], "nvmlLibrary"),
    (["--set", "gpuExporter.image.pullPolicy=Sometimes"], "pullPolicy"),
    (["--set", "gpuExporter.maxUnavailable=0"], "maxUnavailable"),
    (["--set", "gpuExporter.serviceMonitor.enabled=true"], "enabled"),
    (["--set", "gpuExporter.hostDriverRoot=/"], "hostDriverRoot"),
    (["--set", "gpuExporter.driver.libraryPath=/x"], "libraryPath"),
], ids=["port-string", "port-range", "quoted-bool", "log-level", "interval", "relative-root", "runtime-class-name",
        "library-dir", "pull-policy", "max-unavailable-0", "own-monitor-switch", "misplaced-key", "unknown-key"])
def test_a_wrong_gpu_exporter_value_fails_on_the_schema(helm, setting, path):
    err = template_error(helm, *ON, *setting)
    assert "schema" in err and path in err, err


@pytest.mark.parametrize("settings", [
    ["--set", "metrics.serviceMonitor.enabled=true"],
    [*HOST_DRIVER, "--set", "gpuExporter.driver.hostDriverRoot=/run/nvidia/driver"],
], ids=["runtime-class-and-monitor", "host-driver-root"])
def test_lint_with_the_gpu_exporter(helm, settings):
    res = run_helm(helm, "lint", "--strict", str(CHART), "--namespace", NS, *ON, *settings)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "0 chart(s) failed" in res.stdout


def gpu_exporter_flags():
    res = subprocess.run([str(BIN / "kubex"), "gpu-exporter", "--help"], capture_output=True, text=True, timeout=30)
    assert res.returncode == 0, res.stdout + res.stderr
    # A kubex without the subcommand prints its top-level help (exit 0) instead.
    assert re.search(r"^Usage: \S*kubex gpu-exporter", res.stdout, re.M), \
        f"{BIN / 'kubex'} has no gpu-exporter subcommand (TEL-1):\n{res.stdout}"
    return set(re.findall(r"(--[a-z][a-z0-9-]+)", res.stdout))


def test_every_flag_the_chart_gives_the_gpu_exporter_exists_in_kubex_gpu_exporter(helm):
    known = gpu_exporter_flags()
    for settings in ([], [*HOST_DRIVER, "--set", "gpuExporter.driver.hostDriverRoot=/"]):
        for arg in exporter_container(template(helm, *ON, *settings))["args"]:
            flag = arg.split("=", 1)[0]
            assert flag in known, f"the chart passes {flag}, which `kubex gpu-exporter --help` does not list"
