"""Days of GPU history for tests and benchmarks (issue 24 item 6, SPEC PRO-2): the samples kubex-sim's exporter (the
gpu-process-exporter's metric names and labels) would have produced, written as OpenMetrics and turned into TSDB blocks
with `promtool tsdb create-blocks-from openmetrics` inside a Prometheus data directory, before that Prometheus starts.
Shared by tests/e2e and bench/ (import it by path from bench)."""
import dataclasses
import pathlib
import subprocess
import time
from typing import Callable, Union

SM = "kubex_gpu_container_sm_utilization_percent"
MEMORY = "kubex_gpu_container_memory_footprint_percent"
PROMTOOL = "/usr/bin/promtool"

Value = Union[float, Callable[[float], float]]  # a constant, or a function of seconds since the series' start


@dataclasses.dataclass
class Series:
    """One container's history: `sm` and `memory` (percent) every `step` seconds from `start` to `end` (unix seconds)."""
    namespace: str
    pod: str
    container: str
    sm: Value
    memory: Value
    start: float
    end: float
    step: int = 60
    node: str = "g-node-0"
    allocation: str = "fraction"  # gpu_allocation_type: fraction or whole

    def labels(self):
        return (f'namespace="{self.namespace}",pod="{self.pod}",container="{self.container}",node="{self.node}",'
                f'gpu_allocation_type="{self.allocation}"')

    def samples(self, value):
        t = self.start
        while t <= self.end:
            yield t, value(t - self.start) if callable(value) else value
            t += self.step


def days_ago(days, now=None):
    """(start, end) of a history that ends a minute ago and began `days` days earlier."""
    end = (now or time.time()) - 60
    return end - days * 86400, end


def openmetrics_lines(series):
    """The OpenMetrics text of `series`, line by line: one family per metric, samples in time order per series, then
    `# EOF`. A generator, so that days of thousands of series never sit in memory at once."""
    for metric, attr in ((SM, "sm"), (MEMORY, "memory")):
        yield f"# TYPE {metric} gauge\n"
        for s in series:
            labels = s.labels()
            for t, v in s.samples(getattr(s, attr)):
                yield f"{metric}{{{labels}}} {v:.6g} {t:.3f}\n"
    yield "# EOF\n"


def openmetrics(series):
    """The whole OpenMetrics text of `series` (openmetrics_lines joined)."""
    return "".join(openmetrics_lines(series))


def backfill(data_dir, series):
    """Writes `series` as TSDB blocks under `data_dir` (a Prometheus --storage.tsdb.path that has not started yet)."""
    data_dir = pathlib.Path(data_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    source = data_dir.parent / "history.om"
    with open(source, "w") as f:
        f.writelines(openmetrics_lines(series))
    res = subprocess.run([PROMTOOL, "tsdb", "create-blocks-from", "openmetrics", str(source), str(data_dir)],
                         capture_output=True, text=True, timeout=900)
    if res.returncode != 0:
        raise AssertionError(f"promtool backfill failed ({res.returncode}):\n{res.stdout[-2000:]}\n{res.stderr[-2000:]}")
    source.unlink()
    return data_dir
