"""WATCH streams (official Python client) for tests that prove "never more than N", "never removed" or "nothing
happens" from every event rather than by sampling (issue 27 item 3).

* `WatchStream`: `handle(event_type, obj)` is called for each event of a list function from a resourceVersion on,
  on a thread. A stream that ends or breaks resumes from the last resourceVersion seen (bookmarks included), so
  nothing is missed; one answered 410 Gone relists and records a gap (events were lost: the proof is incomplete).
  `stop()` first catches up with a fresh LIST, so every change made before it is handled.
* Counters over events, pure and unit-tested on synthetic events (test_watch_stream.py): `Unavailable` (ACT-3:
  replicas minus pods Ready and not terminating, a missing pod counting), `Taints` (nodes carrying a taint at
  once, CON-7/CON-9), `GpuShares` (the fractions one KAI GPU group holds).
* Watches: `PodAvailabilityWatch`, `NodeTaintWatch`, `GpuShareWatch`, `EventWatch`, each listing first and
  watching from that list's resourceVersion: create them BEFORE the action they watch.
* `hold(window, check)`: a window over which `check` must keep reporting nothing (instead of a bare sleep);
  `hold_until(done, check, timeout)`: the same, ended by an event or counter (`done()`), not by the clock.
"""
import collections
import json
import threading
import time


def _meta(obj):
    return obj.get("metadata", {}) if isinstance(obj, dict) else obj.metadata


def _key(obj):
    m = _meta(obj)
    if isinstance(m, dict):
        return f"{m.get('namespace', '')}/{m.get('name')}", m.get("resourceVersion")
    return f"{m.namespace or ''}/{m.name}", m.resource_version


def _newer(a, b):
    """resourceVersion a is at least b (kubex-sim's are integers; otherwise only equality is known)."""
    try:
        return int(a) >= int(b)
    except (TypeError, ValueError):
        return a == b


def list_raw(list_fn, *args, **kwargs):
    """(items as JSON dicts, the list's resourceVersion)."""
    resp = list_fn(*args, _preload_content=False, **kwargs)
    body = json.loads(resp.data)
    return body.get("items") or [], body["metadata"]["resourceVersion"]


class WatchStream:
    def __init__(self, list_fn, resource_version, handle, *args, timeout_seconds=60, raw=False, items=None,
                 on_relist=None, **kwargs):
        """`raw`: the handler gets the event's JSON dict instead of the client's model. `items`: the list the
        resourceVersion came from (lets stop() tell when the stream has caught up). `on_relist(items)`: the state
        to restart from after a 410 Gone (recorded in `gaps` either way)."""
        from kubernetes import watch
        self.list_fn, self.args, self.kwargs = list_fn, args, kwargs
        self.rv, self.handle, self.timeout_seconds = resource_version, handle, timeout_seconds
        self.start_rv = resource_version
        self.raw, self.on_relist = raw, on_relist
        self.seen = dict(_key(i) for i in items or [])  # key -> resourceVersion of its last event (DELETED drops)
        self.events = 0
        self.resumed = []  # errors the stream resumed after, from its last resourceVersion: nothing missed
        self.gaps = []  # 410 Gone, relisted: the events in between were not seen
        self.failures = []  # the handler raised, or stop() could not catch up: an event not accounted for
        self.lock = threading.Lock()
        self.watch = watch.Watch()
        self.stop_ = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        from kubernetes.client.rest import ApiException
        while not self.stop_.is_set():
            try:
                for ev in self.watch.stream(self.list_fn, *self.args, resource_version=self.rv,
                                            timeout_seconds=self.timeout_seconds, allow_watch_bookmarks=True,
                                            **self.kwargs):
                    if self.stop_.is_set():
                        break
                    if ev["type"] == "BOOKMARK":
                        self.rv = ev["raw_object"]["metadata"]["resourceVersion"]
                    else:
                        self._deliver(ev["type"], ev["raw_object"] if self.raw else ev["object"])
            except ApiException as e:
                if e.status == 410 and not self.stop_.is_set():
                    self._relist(e)
                elif not self.stop_.is_set():
                    self.resumed.append(repr(e))
                    time.sleep(0.2)
            except Exception as e:  # noqa: BLE001 - a dropped stream resumes from the last resourceVersion
                if not self.stop_.is_set():
                    self.resumed.append(repr(e))
                    time.sleep(0.2)

    def _deliver(self, type_, obj):
        key, rv = _key(obj)
        with self.lock:
            if self.stop_.is_set():
                return
            try:
                self.handle(type_, obj)
            except Exception as e:  # noqa: BLE001 - recorded: the proof would be missing this event
                self.failures.append(f"handler failed on {type_} {key}@{rv}: {e!r}")
            if type_ == "DELETED":
                self.seen.pop(key, None)
            else:
                self.seen[key] = rv
            self.rv = rv
            self.events += 1

    def _list(self):
        if self.raw:
            return list_raw(self.list_fn, *self.args, **self.kwargs)
        r = self.list_fn(*self.args, **self.kwargs)
        return r.items, r.metadata.resource_version

    def _relist(self, error):
        items, rv = self._list()
        with self.lock:
            self.gaps.append(f"410 Gone after resourceVersion {self.rv} ({error.reason}); relisted at {rv}")
            self.seen, self.start_rv = dict(_key(i) for i in items), rv
            if self.on_relist:
                self.on_relist(items)
            self.rv = rv

    def catch_up(self, timeout=15):
        """Waits until every change a fresh LIST shows has been handled."""
        items, list_rv = self._list()
        want = dict(_key(i) for i in items)
        deadline = time.monotonic() + timeout
        while True:
            with self.lock:
                behind = [k for k, rv in want.items() if not _newer(self.seen.get(k, self.start_rv), rv)]
                behind += [k for k, rv in self.seen.items() if k not in want and _newer(list_rv, rv)]
            if not behind or self.gaps:
                return
            if time.monotonic() > deadline:
                self.failures.append(f"the stream never caught up with the LIST at {list_rv}: {sorted(behind)[:5]}")
                return
            time.sleep(0.05)

    def stop(self, catch_up=True):
        if catch_up and not self.stop_.is_set():
            self.catch_up()
        self.stop_.set()
        self.watch.stop()
        # Not joined for long: the thread ends at the next bookmark (every 5 s) and handles nothing after stop_.
        self.thread.join(timeout=0.5)

    def problems(self):
        """Why the stream is no proof (a 410 gap, an unhandled event); empty when it saw every event."""
        return self.gaps + self.failures


def _watch(list_fn, handle, on_list, *args, **kwargs):
    """Lists now and hands the items to `on_list` (also after a 410 relist); returns a WatchStream from that list's
    resourceVersion."""
    items, rv = list_raw(list_fn, *args, **kwargs)
    on_list(items)
    return WatchStream(list_fn, rv, handle, *args, raw=True, items=items, on_relist=on_list, **kwargs)


# ------------------------------------------------------------------------------------------------ counters

def pod_available(pod):
    """ACT-3: a pod counts as available when it is Ready and not terminating."""
    if pod.get("metadata", {}).get("deletionTimestamp"):
        return False
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (pod.get("status") or {}).get("conditions") or [])


class Unavailable:
    """ACT-3 over a workload's pod events: after each event, unavailable = replicas - pods Ready and not
    terminating (a pod not Ready, terminating or missing counts). `max` is the largest value over the events. With
    `from_available`, counting starts once every replica is available (a watch begun before the pods were Ready)."""

    def __init__(self, replicas, pods=None, from_available=False):
        self.replicas, self.armed = replicas, not from_available
        self.max, self.worst, self.events, self.state = 0, None, 0, {}
        self.gone = set()  # pods seen terminating or deleted
        self.log = collections.deque(maxlen=16)  # (event type, pod, available), the latest
        if pods is not None:  # else the watch hands over its LIST
            self.reset(pods)

    def reset(self, pods):
        self.state = {p["metadata"]["name"]: pod_available(p) for p in pods}
        self._measure()

    def event(self, type_, pod):
        name = pod["metadata"]["name"]
        if type_ == "DELETED":
            self.state.pop(name, None)
        else:
            self.state[name] = pod_available(pod)
        if type_ == "DELETED" or pod["metadata"].get("deletionTimestamp"):
            self.gone.add(name)
        self.events += 1
        self.log.append((type_, name, self.state.get(name)))
        self._measure()

    def _measure(self):
        n = self.replicas - sum(self.state.values())
        if not self.armed:
            self.armed = n <= 0
        elif n > self.max:
            self.max, self.worst = n, (sorted(self.state.items()), list(self.log))


class Taints:
    """CON-7/CON-9 over node events: the nodes carrying taint `key` after each event; `max` is the most at once,
    `order` the (node, value) pairs in the order they were first tainted."""

    def __init__(self, key, nodes=()):
        self.key = key
        self.max, self.worst, self.order, self.events = 0, [], [], 0
        self.reset(nodes)

    def reset(self, nodes):
        self.state = {}
        for n in nodes:
            self._set(n)
        self._measure()

    def _set(self, node):
        name = node["metadata"]["name"]
        values = [t.get("value", "") for t in (node.get("spec") or {}).get("taints") or [] if t["key"] == self.key]
        if values:
            self.state[name] = values[0]
            if (name, values[0]) not in self.order:
                self.order.append((name, values[0]))
        else:
            self.state.pop(name, None)

    def event(self, type_, node):
        if type_ == "DELETED":
            self.state.pop(node["metadata"]["name"], None)
        else:
            self._set(node)
        self.events += 1
        self._measure()

    def _measure(self):
        if len(self.state) > self.max:
            self.max, self.worst = len(self.state), sorted(self.state.items())


class GpuShares:
    """The sum of `gpu-fraction` (in hundredths) that the Pending or Running pods of each KAI GPU group (node,
    runai-gpu-group) hold, after each pod event; `max` is the largest over the events, `worst` its group."""

    def __init__(self, pods=()):
        self.max, self.worst, self.events = 0, None, 0
        self.reset(pods)

    def reset(self, pods):
        self.held = {}  # pod key -> (group, hundredths)
        for p in pods:
            self._set(p)
        self._measure()

    def _set(self, pod):
        key = (pod["metadata"].get("namespace"), pod["metadata"]["name"])
        frac = (pod["metadata"].get("annotations") or {}).get("gpu-fraction")
        group = (pod["metadata"].get("labels") or {}).get("runai-gpu-group")
        node = (pod.get("spec") or {}).get("nodeName")
        if frac and group and node and (pod.get("status") or {}).get("phase") in ("Pending", "Running"):
            self.held[key] = ((node, group), round(float(frac) * 100))
        else:
            self.held.pop(key, None)

    def event(self, type_, pod):
        if type_ == "DELETED":
            self.held.pop((pod["metadata"].get("namespace"), pod["metadata"]["name"]), None)
        else:
            self._set(pod)
        self.events += 1
        self._measure()

    def _measure(self):
        groups = collections.Counter()
        for group, h in self.held.values():
            groups[group] += h
        for group, h in groups.items():
            if h > self.max:
                self.max, self.worst = h, group


# ------------------------------------------------------------------------------------------------ watches

class _CountingWatch:
    """A counter fed by a WATCH stream; `result()` asserts the stream saw every event, then returns the counter."""

    def _start(self, counter, list_fn, *args, **kwargs):
        self.count = counter
        self.stream = _watch(list_fn, self._event, counter.reset, *args, **kwargs)

    def _event(self, type_, obj):
        self.count.event(type_, obj)

    def stop(self):
        self.stream.stop()
        return self

    def result(self):
        assert not self.stream.problems(), f"the WATCH missed events, no proof: {self.stream.problems()}"
        return self.count


class PodAvailabilityWatch(_CountingWatch):
    """`Unavailable` over the pods of namespace `ns` matching `selector`."""

    def __init__(self, core, ns, selector, replicas, from_available=False):
        self._start(Unavailable(replicas, from_available=from_available), core.list_namespaced_pod, ns,
                    label_selector=selector)


class NodeTaintWatch(_CountingWatch):
    """`Taints` over every node."""

    def __init__(self, core, key):
        self._start(Taints(key), core.list_node)


class GpuShareWatch(_CountingWatch):
    """`GpuShares` over every pod."""

    def __init__(self, core):
        self._start(GpuShares(), core.list_pod_for_all_namespaces)


class EventWatch(_CountingWatch):
    """Events of namespace `ns` from now on: `seen` holds each event created or repeated (a repeat raises `count`)
    with a reason in `reasons`, as (reason, involved kind/name, count)."""

    def __init__(self, core, ns, *reasons):
        self.reasons, self.seen = set(reasons), []
        self.count = self
        self.stream = _watch(core.list_namespaced_event, self._event, lambda items: None, ns)

    def _event(self, type_, e):
        if type_ in ("ADDED", "MODIFIED") and e.get("reason") in self.reasons:
            o = e.get("involvedObject", {})
            self.seen.append((e["reason"], f"{o.get('kind')}/{o.get('name')}", e.get("count", 1)))


def hold(window, check, interval=1.0):
    """A window in which nothing may happen: calls `check()` every `interval` seconds for `window` seconds and fails
    as soon as it reports something (a non-empty description); the window is what the test waits, not a sleep."""
    end = time.monotonic() + window
    while True:
        found = check()
        assert not found, f"within the {window:g} s window: {found}"
        if time.monotonic() >= end:
            return
        time.sleep(min(interval, max(0.0, end - time.monotonic())))


def hold_until(done, check, timeout, interval=1.0, what="the window's end"):
    """A window in which nothing may happen, ended by an event or counter rather than by the clock: calls `check()`
    every `interval` seconds and fails as soon as it reports something (a non-empty description); returns once
    `done()` is true (checking once more after it). `timeout` only bounds a hang."""
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        assert not found, f"before {what}: {found}"
        if done():
            found = check()
            assert not found, f"before {what}: {found}"
            return
        assert time.monotonic() < deadline, f"timed out after {timeout}s waiting for {what}"
        time.sleep(interval)
