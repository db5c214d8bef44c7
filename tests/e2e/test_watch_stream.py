"""The WATCH helpers of the e2e tests on synthetic events, no cluster (issue 27 item 3): the counters that prove
ACT-3 ("never more than the budget unavailable") and CON-7/CON-9 ("never two nodes tainted") catch a violation
that lasts less than a sampling period, and WatchStream resumes from its last resourceVersion, follows bookmarks,
records a 410 Gone as a gap and catches up before it stops."""
import json
import threading
import time

import watch_stream
from conftest import wait_for
from watch_stream import GpuShares, Taints, Unavailable, WatchStream, hold

TAINT = "rightsizing.kubex.ai/consolidating"
HANG = 60  # a deadline that only bounds a hang (issue 33 item 3): these wait on threads, which a loaded machine slows


class VirtualTime:
    """Stands in for the `time` module of watch_stream: `monotonic()` is a virtual clock that only `sleep()` moves
    (on the thread `owner`; other threads sleep for real), so a timed helper is checked by its own timeline, not by
    the machine's speed. `slept` lists the owner's sleeps."""

    def __init__(self, owner):
        self.now, self.slept, self.owner = 0.0, [], owner

    def monotonic(self):
        return self.now if threading.current_thread() is self.owner else time.monotonic()

    def sleep(self, seconds):
        if threading.current_thread() is not self.owner:
            return time.sleep(seconds)
        self.slept.append(seconds)
        self.now += seconds


def pod(name, ready=True, terminating=False, rv="1"):
    meta = {"name": name, "namespace": "ns", "resourceVersion": rv}
    if terminating:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {"metadata": meta, "status": {"conditions": [{"type": "Ready", "status": str(ready)}]}}


def node(name, policy=None):
    taints = [{"key": TAINT, "value": policy, "effect": "NoSchedule"}] if policy else []
    return {"metadata": {"name": name}, "spec": {"taints": taints}}


def one_at_a_time():
    """A's replacement Ready before B is evicted: (seconds, event type, pod)."""
    return [(0.0, "MODIFIED", pod("a", terminating=True)), (0.1, "DELETED", pod("a", ready=False)),
            (0.2, "ADDED", pod("a2", ready=False)), (1.0, "MODIFIED", pod("a2")),
            (1.5, "MODIFIED", pod("b", terminating=True)), (1.6, "DELETED", pod("b", ready=False)),
            (1.7, "ADDED", pod("b2", ready=False)), (2.5, "MODIFIED", pod("b2"))]


def test_unavailable_counts_every_event_not_samples():  # ACT-3
    ok = Unavailable(3, [pod("a"), pod("b"), pod("c")])
    for _, t, p in one_at_a_time():
        ok.event(t, p)
    assert ok.max == 1 and ok.events == 8
    # B evicted 60 ms before A's replacement turns Ready: two unavailable for 60 ms, between two 0.2 s samples.
    bad = one_at_a_time()[:3] + [(1.02, "MODIFIED", pod("b", terminating=True)), (1.08, "MODIFIED", pod("a2"))]
    counter, sampled = Unavailable(3, [pod("a"), pod("b"), pod("c")]), Unavailable(3, [pod("a"), pod("b"), pod("c")])
    for _, t, p in bad:
        counter.event(t, p)
    assert counter.max == 2, counter.worst
    assert [n for n, avail in counter.worst[0] if not avail] == ["a2", "b"]
    # What a sampler every 0.2 s saw: the state at 0.0, 0.2, … 1.2 s never has two unavailable.
    state, i = Unavailable(3, [pod("a"), pod("b"), pod("c")]), 0
    for k in range(7):
        while i < len(bad) and bad[i][0] <= k * 0.2:
            state.event(bad[i][1], bad[i][2])
            i += 1
        sampled.reset([pod(n, ready=v) for n, v in state.state.items()])
    assert sampled.max == 1, "the sampler misses it; the event counter above does not"


def test_unavailable_missing_pods_and_from_available():  # ACT-3: a missing replica counts
    gone = Unavailable(2, [pod("a"), pod("b")])
    gone.event("DELETED", pod("a"))
    gone.event("DELETED", pod("b"))
    assert gone.max == 2
    # A watch begun before the workload existed counts from the moment every replica is available.
    start = Unavailable(2, [], from_available=True)
    for t, p in [("ADDED", pod("a", ready=False)), ("ADDED", pod("b", ready=False)), ("MODIFIED", pod("a"))]:
        start.event(t, p)
    assert (start.armed, start.max) == (False, 0)
    start.event("MODIFIED", pod("b"))
    start.event("MODIFIED", pod("a", terminating=True))
    assert (start.armed, start.max) == (True, 1)


def test_taints_two_at_once_and_order():  # CON-7, CON-9
    serial = Taints(TAINT, [node("n0"), node("n1")])
    for t, n in [("MODIFIED", node("n0", "p")), ("MODIFIED", node("n0")), ("MODIFIED", node("n1", "p"))]:
        serial.event(t, n)
    assert serial.max == 1 and serial.order == [("n0", "p"), ("n1", "p")]
    overlap = Taints(TAINT, [node("n0", "p")])
    overlap.event("MODIFIED", node("n1", "q"))  # tainted before n0's taint is removed
    overlap.event("MODIFIED", node("n0"))
    assert overlap.max == 2 and overlap.worst == [("n0", "p"), ("n1", "q")]
    other = Taints(TAINT, [{"metadata": {"name": "n2"}, "spec": {"taints": [{"key": "dedicated", "value": "x"}]}}])
    assert other.max == 0


def test_gpu_shares_per_group():
    def frac(name, f, group="g1", phase="Running"):
        return {"metadata": {"name": name, "namespace": "ns", "annotations": {"gpu-fraction": f},
                             "labels": {"runai-gpu-group": group}},
                "spec": {"nodeName": "n0"}, "status": {"phase": phase}}
    s = GpuShares([frac("a", "0.45"), frac("b", "0.45", group="g2")])
    s.event("ADDED", frac("c", "0.45", group="g2"))
    s.event("MODIFIED", frac("c", "0.45", group="g2", phase="Succeeded"))
    assert (s.max, s.worst) == (90, ("n0", "g2"))
    s.event("ADDED", frac("d", "0.55"))
    assert (s.max, s.worst) == (100, ("n0", "g1"))


class FakeApi:
    """A list function answering LIST with `state` and WATCH with scripted event lines (then nothing)."""

    def __init__(self, script):
        self.script, self.watched, self.state = list(script), [], ([pod("a", rv="1")], "1")

    def list_pods(self, *args, **kwargs):
        if not kwargs.get("watch"):
            items, rv = self.state
            return type("R", (), {"data": json.dumps({"items": items, "metadata": {"resourceVersion": rv}})})()
        self.watched.append(kwargs["resource_version"])
        lines = self.script.pop(0) if self.script else []
        if not lines:
            time.sleep(0.05)  # the fake server's pace when it has nothing to send (keeps the resume loop from spinning)
        return FakeResp(lines)


class FakeResp:
    def __init__(self, events):
        self.events = events

    def stream(self, amt=None, decode_content=False):
        for e in self.events:
            yield (json.dumps(e) + "\n").encode()

    def close(self):
        pass

    def release_conn(self):
        pass


def test_stream_resumes_follows_bookmarks_and_records_a_410():
    gone = {"kind": "Status", "code": 410, "reason": "Expired", "message": "too old resource version: 5"}
    api = FakeApi([[{"type": "ADDED", "object": pod("b", rv="2")},
                    {"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": "5"}}}],  # then the stream ends
                   [{"type": "ERROR", "object": gone}],
                   [{"type": "MODIFIED", "object": pod("c", rv="8")}]])
    seen, relisted, done = [], [], threading.Event()

    def handle(t, p):
        seen.append((t, p["metadata"]["name"]))
        if p["metadata"]["name"] == "c":
            done.set()
        if p["metadata"]["name"] == "b":
            api.state = ([pod("a", rv="1"), pod("b", rv="2"), pod("c", rv="7")], "7")  # what the relist sees

    stream = WatchStream(api.list_pods, "1", handle, raw=True, items=[pod("a", rv="1")],
                         on_relist=lambda items: relisted.append(len(items)))
    assert done.wait(HANG)
    api.state = ([pod("a", rv="1"), pod("b", rv="2"), pod("c", rv="8")], "8")
    stream.stop()
    assert api.watched[:3] == ["1", "5", "7"], "resumed from the last event, then the bookmark, then the relist"
    assert seen == [("ADDED", "b"), ("MODIFIED", "c")] and relisted == [3]
    assert len(stream.gaps) == 1 and "410" in stream.gaps[0] and stream.problems() == stream.gaps
    assert not stream.failures, "caught up with the LIST at 8"


def test_stream_records_a_failing_handler_and_a_stream_that_never_catches_up():
    api = FakeApi([[{"type": "ADDED", "object": pod("b", rv="2")}]])
    stream = WatchStream(api.list_pods, "1", lambda t, p: 1 / 0, raw=True, items=[pod("a", rv="1")])
    wait_for(lambda: stream.events >= 1, timeout=HANG, interval=0.02, what="the stream handling b")
    api.state = ([pod("a", rv="1"), pod("b", rv="2"), pod("z", rv="3")], "3")  # z: an event the stream never got
    stream.catch_up(timeout=0.3)  # z never comes: this fails after its timeout whatever the machine's speed
    stream.stop(catch_up=False)
    assert "ZeroDivisionError" in stream.failures[0] and "never caught up" in stream.failures[1], stream.failures


def test_hold_fails_as_soon_as_something_happens(monkeypatch):
    # On a virtual clock: the window is the helper's own timeline (a check every interval, never a longer sleep),
    # which a loaded machine cannot stretch.
    clock = VirtualTime(threading.current_thread())
    monkeypatch.setattr(watch_stream, "time", clock)
    start, calls = clock.monotonic(), []  # binary fractions: the virtual timeline is exact
    hold(0.375, lambda: calls.append(clock.monotonic()) and None, interval=0.125)
    assert clock.monotonic() - start >= 0.375 and len(calls) >= 3
    assert [t - start for t in calls] == [0.0, 0.125, 0.25, 0.375], calls
    assert all(s <= 0.125 for s in clock.slept), clock.slept
    try:
        hold(30, lambda: "an eviction", interval=0.1)
    except AssertionError as e:
        assert "an eviction" in str(e)
    else:
        raise AssertionError("hold did not fail")


def test_catch_up_without_the_initial_list(monkeypatch):  # as test_proactive_history's OwnerWatch starts it
    api = FakeApi([])
    stream = WatchStream(api.list_pods, "1", lambda t, p: None, raw=True)
    # Caught up at the first look, not after waiting: stop()'s catch-up never sleeps on this thread (by its own
    # calls, on a virtual clock, rather than by a wall-clock bound a loaded machine could exceed).
    clock = VirtualTime(threading.current_thread())
    monkeypatch.setattr(watch_stream, "time", clock)
    start = clock.monotonic()
    stream.stop()
    assert not stream.problems() and clock.monotonic() - start < 2, "a@1 is unchanged since the watch began"
    assert clock.slept == [], clock.slept
