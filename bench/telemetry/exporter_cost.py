#!/usr/bin/python3
"""GPU exporter cost benchmark (issue 37): `kubex gpu-exporter` on a node of 8 GPUs × 64 processes sampled every
second, against a plain loop reading the same /proc files, in ONE run:

  * kubex-sim with one node of 8 GPUs (maxPods 600, fast kubelet timings) and 512 pods pinned to it by spec.nodeName
    (one container each, gpu-fraction 0.015: 64 per GPU), Running with containerIDs;
  * a fake /proc tree: 512 pids whose /proc/<pid>/cgroup name those pods' UIDs and container IDs (systemd /
    containerd layout), and a fake NVML scenario (tests/fake_nvml, build/bin/libfake-nvml.so) of 8 devices × 64
    compute processes with memory and SM utilization samples;
  * `kubex gpu-exporter --interval 1s` against them: warmed up until /metrics has the 512 container series, then,
    per repetition, a window of --seconds with /metrics scraped once a second (as Prometheus would: the render is
    part of the cost) and a window of --seconds without any scrape. RSS: VmRSS from /proc/<pid>/status once a
    second (median, max) and VmHWM; CPU: utime + stime from /proc/<pid>/stat over the window, in cores;
  * baseline in the same windows: bench-proc-loop (bench/telemetry/proc_loop.cpp, C++), a plain loop reading the same
    512 /proc/<pid>/cgroup files once a second and taking the pod UID and container ID out of each, measured the
    same way.
Prints Markdown tables for docs/performance.md: the exporter vs the loop, the ratio, and the targets (≤ 16 MiB RSS,
≤ 0.02 core) met or not, with the machine, date, commit and the 1-minute load average at the start and the end.

Usage: bench/telemetry/exporter_cost.py --build build [--seconds 60] [--reps 3]
"""
import argparse
import http.client
import json
import os
import pathlib
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from benchlib import Sim, free_port, log, proc_stats, wait_for  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
NODE = "g-node-0"
NS = "tel-bench"
GPUS = 8
PER_GPU = 64
FRACTION = "0.015"  # 64 × 0.015 = 0.96 of a GPU
GIB = 1024 ** 3
DEVICE_BYTES = 16 * GIB
PID_BASE = 20000
SERIES = "kubex_gpu_container_sm_utilization_percent{"
TARGET_RSS_MIB = 16
TARGET_CORES = 0.02


def machine():
    model = "?"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    with open("/proc/meminfo") as f:
        mem_kib = int(f.readline().split()[1])
    return (f"{os.cpu_count()} cores, {model}, {mem_kib / 1024 ** 2:.0f} GiB RAM, "
            f"{platform.system()} {platform.release()}")


def commit():
    r = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    return (r.stdout.strip() or "?") + (" (+ uncommitted changes)" if dirty else "")


def pod(i):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"gpu-{i:03d}", "namespace": NS, "labels": {"app": "tel-bench"},
                         "annotations": {"gpu-fraction": FRACTION}},
            "spec": {"nodeName": NODE,
                     "containers": [{"name": "app", "image": "vllm/vllm-openai:v0.6",
                                     "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}}}]}}


def ready_pods(sim):
    """The bench's Running pods that have a containerID: [(uid, container id)]."""
    items = json.loads(sim.kubectl("get", "pods", "-n", NS, "-o", "json").stdout)["items"]
    out = []
    for p in items:
        if p.get("status", {}).get("phase") != "Running":
            continue
        for s in p["status"].get("containerStatuses", []):
            if s.get("containerID"):
                out.append((p["metadata"]["uid"], s["containerID"].split("://", 1)[1]))
    return out


def write_proc(root, containers):
    """/proc/<pid>/cgroup of one pid per container, as the systemd cgroup driver with containerd writes it."""
    pids = []
    for k, (uid, cid) in enumerate(containers):
        pid = PID_BASE + k
        d = root / str(pid)
        d.mkdir(parents=True)
        (d / "cgroup").write_text("0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod"
                                  f"{uid.replace('-', '_')}.slice/cri-containerd-{cid}.scope\n")
        pids.append(pid)
    return pids


def scenario(pids):
    """8 T4-sized devices, 64 compute processes each: varied memory (64..316 MiB) and SM (1..40 %) per process."""
    lines = ["driver 550.54.15"]
    for g in range(GPUS):
        lines.append(f'device {g} GPU-bench-{g:04d} "Tesla T4" total={DEVICE_BYTES}')
        for k in range(PER_GPU):
            pid = pids[g * PER_GPU + k]
            lines.append(f"process {g} pid={pid} used={(64 + (pid * 37) % 253) * 1024 * 1024}")
            lines.append(f"util {g} pid={pid} sm={1 + (pid * 13) % 40} mem={(pid * 7) % 30}")
    return "\n".join(lines) + "\n"


class Scraper:
    """GET /metrics over one keep-alive connection, as a Prometheus scrape."""

    def __init__(self, port):
        self.port = port
        self.conn = None

    def get(self):
        for attempt in (0, 1):
            try:
                if self.conn is None:
                    self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
                self.conn.request("GET", "/metrics")
                r = self.conn.getresponse()
                body = r.read().decode()
                if r.status != 200:
                    raise SystemExit(f"/metrics answered {r.status}: {body[:300]}")
                return body
            except (OSError, http.client.HTTPException):
                self.conn = None
                if attempt:
                    raise
        return ""


def container_series(body):
    return sum(1 for line in body.splitlines() if line.startswith(SERIES))


def rss_split(pid):
    """(RssAnon, RssFile + RssShmem) KiB: the heap and stacks vs the mapped binary and libraries."""
    v = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(("RssAnon:", "RssFile:", "RssShmem:")):
                v[line.split(":")[0]] = int(line.split()[1])
    return v.get("RssAnon", 0), v.get("RssFile", 0) + v.get("RssShmem", 0)


def window(procs, seconds, scraper=None):
    """RSS samples (KiB) of each process once a second, and its CPU cores, over `seconds`; with a scraper, /metrics
    is fetched once a second too: (per process {rss, hwm, cores}, scrape latencies s, last body)."""
    cpu0 = {k: proc_stats(p.pid)[2] for k, p in procs.items()}
    rss = {k: [] for k in procs}
    split = {k: [] for k in procs}
    lat, body = [], ""
    t0 = time.monotonic()
    tick = t0
    while True:
        for k, p in procs.items():
            if p.poll() is not None:
                raise SystemExit(f"{k} exited ({p.returncode}) during the window")
            rss[k].append(proc_stats(p.pid)[0])
            split[k].append(rss_split(p.pid))
        if scraper:
            t = time.monotonic()
            body = scraper.get()
            lat.append(time.monotonic() - t)
        tick += 1.0
        if tick - t0 > seconds:
            break
        time.sleep(max(0.0, tick - time.monotonic()))
    wall = time.monotonic() - t0
    out = {}
    for k, p in procs.items():
        _, hwm, cpu1 = proc_stats(p.pid)
        out[k] = {"rss": rss[k], "hwm": hwm, "cores": (cpu1 - cpu0[k]) / wall,
                  "anon": statistics.median(x[0] for x in split[k]), "file": statistics.median(x[1] for x in split[k])}
    return out, lat, body


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--seconds", type=int, default=60, help="length of each measured window")
    ap.add_argument("--reps", type=int, default=3, help="repetitions of the two windows (the tables give medians)")
    ap.add_argument("--warmup", type=int, default=10, help="seconds after the 512 series first appear")
    ap.add_argument("--malloc-conf", default=None,
                    help="MALLOC_CONF of the exporters (jemalloc), e.g. dirty_decay_ms:0,muzzy_decay_ms:0 to see how "
                         "much of the RSS is freed memory jemalloc keeps; default: the environment's (normally none)")
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    a = ap.parse_args()
    bin_dir = pathlib.Path(a.build) / "bin"
    need = {"kubex": bin_dir / "kubex", "kubex-sim": bin_dir / "kubex-sim", "fake NVML": bin_dir / "libfake-nvml.so",
            "baseline loop": bin_dir / "bench-proc-loop"}
    missing = [f"{k} ({v})" for k, v in need.items() if not v.is_file()]
    if missing:
        raise SystemExit(f"missing: {', '.join(missing)}; build first (make build)")
    if not shutil.which("kubectl"):
        raise SystemExit("kubectl not found on PATH")

    load_start = os.getloadavg()[0]
    malloc_conf = a.malloc_conf if a.malloc_conf is not None else os.environ.get("MALLOC_CONF", "")
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    n = GPUS * PER_GPU
    workdir = pathlib.Path(tempfile.mkdtemp(prefix="kubex-exporter-bench-"))
    config = (f"kubelet:\n  startDelay: 100ms\n  readyDelay: 100ms\n  stopDelay: 100ms\n"
              f"memoryIsolation: HAMiCore\n"
              f"nodePools:\n  - name: g\n    count: 1\n    gpusPerNode: {GPUS}\n    gpuProduct: Tesla-T4\n"
              f"    gpuMemoryMiB: 16384\n    cpu: \"64\"\n    memory: 256Gi\n    maxPods: {n + 50}\n")
    sim = exporter = loop = empty = None
    reps = []
    try:
        sim = Sim(str(bin_dir), str(workdir), config)
        log(f"kubex-sim up; work dir {workdir}")
        sim.kubectl("create", "namespace", NS)
        t = time.monotonic()
        for i in range(0, n, 128):
            sim.apply(*[pod(k) for k in range(i, min(n, i + 128))])
        containers = wait_for(lambda: len(r := ready_pods(sim)) == n and r, 600,
                              f"{n} pods Running with containerIDs", interval=2)
        log(f"{n} pods Running with containerIDs {time.monotonic() - t:.1f} s after the first create")

        proc_root = workdir / "proc"
        pids = write_proc(proc_root, containers)
        scen = workdir / "scenario.txt"
        scen.write_text(scenario(pids))
        port = free_port()
        exporter_env = dict(os.environ)
        if a.malloc_conf is not None:
            exporter_env["MALLOC_CONF"] = a.malloc_conf
        exporter_log = open(workdir / "exporter.log", "wb")
        exporter = subprocess.Popen(
            [str(bin_dir / "kubex"), "gpu-exporter", "--nvml-library", str(need["fake NVML"]), "--proc-root",
             str(proc_root), "--node-name", NODE, "--kubeconfig", sim.kubeconfig, "--listen", f"127.0.0.1:{port}",
             "--interval", "1s"],
            stdout=exporter_log, stderr=subprocess.STDOUT, env=dict(exporter_env, FAKE_NVML_SCENARIO=str(scen)))
        scraper = Scraper(port)
        # The fixed cost, in the same windows: the same exporter on a node without pods, its NVML 8 devices without
        # processes (no pod cache, no container series, no cgroup reads).
        scen_empty = workdir / "scenario-empty.txt"
        scen_empty.write_text("\n".join(l for l in scenario(pids).splitlines() if not l.startswith(("process", "util")))
                              + "\n")
        empty_port = free_port()
        empty = subprocess.Popen(
            [str(bin_dir / "kubex"), "gpu-exporter", "--nvml-library", str(need["fake NVML"]), "--proc-root",
             str(proc_root), "--node-name", "node-without-pods", "--kubeconfig", sim.kubeconfig, "--listen",
             f"127.0.0.1:{empty_port}", "--interval", "1s"],
            stdout=exporter_log, stderr=subprocess.STDOUT, env=dict(exporter_env, FAKE_NVML_SCENARIO=str(scen_empty)))
        empty_scraper = Scraper(empty_port)

        def series_up():
            if exporter.poll() is not None:
                raise SystemExit(f"the exporter exited ({exporter.returncode}); see {workdir}/exporter.log")
            return container_series(scraper.get()) == n

        t = time.monotonic()
        wait_for(series_up, 120, f"{n} container series on the exporter's /metrics", interval=0.5)
        log(f"exporter: {n} container series {time.monotonic() - t:.1f} s after its start")
        wait_for(lambda: empty.poll() is None and "kubex_gpu_exporter_unmapped_processes{" in empty_scraper.get(), 60,
                 "the reference exporter's /metrics", interval=0.5)
        loop = subprocess.Popen([str(need["baseline loop"]), "--proc-root", str(proc_root), *map(str, pids)],
                                stdout=subprocess.PIPE, text=True)
        first = loop.stdout.readline().strip()
        if not re.fullmatch(rf"pass: {n} files, \d+ bytes, {n} containers", first):
            raise SystemExit(f"the baseline loop did not read the {n} cgroup files: {first!r}")
        time.sleep(a.warmup)
        procs = {"exporter": exporter, "loop": loop, "empty": empty}
        for r in range(a.reps):
            scraped, lat, body = window(procs, a.seconds, scraper)
            if container_series(body) != n:
                raise SystemExit(f"the last scrape of rep {r + 1} has {container_series(body)} container series")
            quiet, _, _ = window(procs, a.seconds)
            reps.append({"scraped": scraped, "quiet": quiet, "lat": lat, "bytes": len(body.encode()),
                         "lines": body.count("\n")})
            log(f"rep {r + 1}: exporter {statistics.median(scraped['exporter']['rss']) / 1024:.1f} MiB, "
                f"{scraped['exporter']['cores']:.4f} cores scraped / {quiet['exporter']['cores']:.4f} quiet; loop "
                f"{statistics.median(scraped['loop']['rss']) / 1024:.1f} MiB, {scraped['loop']['cores']:.4f} cores")
        unmapped = [line for line in body.splitlines() if line.startswith("kubex_gpu_exporter_unmapped_processes{")]
    finally:
        for p in (loop, exporter, empty):
            if p and p.poll() is None:
                p.terminate()
                try:
                    p.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        if sim:
            sim.stop()
        if not a.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    load_end = os.getloadavg()[0]

    med = statistics.median

    def rss_med(mode, who):  # MiB: median over reps of each window's median sample
        return med(med(r[mode][who]["rss"]) for r in reps) / 1024

    def rss_max(mode, who):
        return max(max(r[mode][who]["rss"]) for r in reps) / 1024

    def cores(mode, who):
        return med(r[mode][who]["cores"] for r in reps)

    hwm = max(max(r["scraped"]["exporter"]["hwm"], r["quiet"]["exporter"]["hwm"]) for r in reps) / 1024
    print(f"## GPU exporter cost: {GPUS} GPUs × {PER_GPU} processes, sampled every 1 s (fake NVML)\n")
    print(f"machine: {machine()}; date: {started}; commit: {commit()}; 1-minute load average {load_start:.2f} at the "
          f"start, {load_end:.2f} at the end; {a.reps} reps × 2 windows of {a.seconds} s (medians over the reps); "
          f"MALLOC_CONF of the exporters: {malloc_conf or 'none (jemalloc defaults)'}\n")
    print("| | RSS median | RSS max | CPU |\n|---|---|---|---|")
    for mode, label in (("scraped", "/metrics scraped every 1 s"), ("quiet", "not scraped")):
        print(f"| `kubex gpu-exporter`, {label} | {rss_med(mode, 'exporter'):.1f} MiB | "
              f"{rss_max(mode, 'exporter'):.1f} MiB | {cores(mode, 'exporter'):.4f} cores |")
    print(f"| baseline: bench-proc-loop (C++), the same {n} /proc/<pid>/cgroup files every 1 s | "
          f"{rss_med('scraped', 'loop'):.1f} MiB | {rss_max('scraped', 'loop'):.1f} MiB | "
          f"{cores('scraped', 'loop'):.4f} cores |")
    print(f"| reference: `kubex gpu-exporter` on a node without pods, NVML with the {GPUS} devices and no processes "
          f"(same windows, not scraped) | {rss_med('quiet', 'empty'):.1f} MiB | {rss_max('quiet', 'empty'):.1f} MiB | "
          f"{cores('quiet', 'empty'):.4f} cores |")
    for mode, label in (("scraped", "scraped"), ("quiet", "not scraped")):
        lc = cores(mode, "loop")
        print(f"| exporter / baseline, {label} | {rss_med(mode, 'exporter') / rss_med(mode, 'loop'):.1f}× | "
              f"{rss_max(mode, 'exporter') / rss_max(mode, 'loop'):.1f}× | "
              f"{(cores(mode, 'exporter') / lc) if lc > 0 else float('inf'):.1f}× |")
    print()
    worst_rss, worst_cores = rss_max("scraped", "exporter"), cores("scraped", "exporter")
    rss_ok, cpu_ok = worst_rss <= TARGET_RSS_MIB, worst_cores <= TARGET_CORES
    print("| RSS split (VmRSS = RssAnon + RssFile + RssShmem, medians) | heap, stacks (RssAnon) | mapped binary and "
          "libraries (RssFile + RssShmem) |\n|---|---|---|")
    for who, label in (("exporter", "exporter, scraped"), ("empty", "reference exporter (no pods, no processes)"),
                       ("loop", "baseline loop")):
        mode = "scraped"
        print(f"| {label} | {med(r[mode][who]['anon'] for r in reps) / 1024:.1f} MiB | "
              f"{med(r[mode][who]['file'] for r in reps) / 1024:.1f} MiB |")
    print()
    print("| target (issue 37) | result | met |\n|---|---|---|")
    print(f"| RSS ≤ {TARGET_RSS_MIB} MiB | max {worst_rss:.1f} MiB scraped (VmHWM {hwm:.1f} MiB) | "
          f"{'yes' if rss_ok else f'**no**: +{worst_rss - TARGET_RSS_MIB:.1f} MiB'} |")
    print(f"| CPU ≤ {TARGET_CORES} core | {worst_cores:.4f} cores scraped, {cores('quiet', 'exporter'):.4f} not | "
          f"{'yes' if cpu_ok else f'**no**: {worst_cores / TARGET_CORES:.1f}× the target'} |")
    print()
    lat = [x for r in reps for x in r["lat"]]
    print(f"/metrics: {reps[-1]['bytes']} bytes, {reps[-1]['lines']} lines, scrape latency median "
          f"{med(lat) * 1000:.1f} ms, max {max(lat) * 1000:.1f} ms ({len(lat)} scrapes); "
          f"unmapped: {'; '.join(unmapped)}")
    per_rep = [{m: {w: {"rss_med_mib": round(med(r[m][w]["rss"]) / 1024, 2),
                        "rss_max_mib": round(max(r[m][w]["rss"]) / 1024, 2), "cores": round(r[m][w]["cores"], 5)}
                    for w in ("exporter", "loop", "empty")} for m in ("scraped", "quiet")} for r in reps]
    print("per rep:", json.dumps(per_rep))


if __name__ == "__main__":
    main()
