"""Open a page in Debian's headless Chromium and report what a user's browser would have seen (RPT-4): every console
message and uncaught exception, every log entry of level error (a Content-Security-Policy refusal, a failed load),
every network request the PAGE made (not the browser's own background traffic), the result of JavaScript checks on the
DOM, and a screenshot. Driven over the Chrome DevTools Protocol on `--remote-debugging-pipe` (fds 3 and 4, messages
separated by NUL), so no websocket library is needed."""
import base64
import json
import os
import pathlib
import select
import shutil
import subprocess
import tempfile
import time

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-default-apps", "--disable-extensions", "--mute-audio", "--hide-scrollbars"]


class PageVisit:
    def __init__(self):
        self.console = []      # (type, text) of console API calls
        self.exceptions = []   # uncaught exception texts
        self.log_errors = []   # Log.entryAdded entries of level error
        self.requests = []     # URLs the page requested
        self.evaluations = {}  # expression -> value
        self.screenshot = None

    def errors(self):
        return ([f"console.{t}: {x}" for t, x in self.console if t in ("error", "assert")] + self.exceptions
                + self.log_errors)


class _Pipe:
    def __init__(self, proc, write_fd, read_fd):
        self.proc, self.write_fd, self.read_fd = proc, write_fd, read_fd
        self.buf = b""
        self.next_id = 0
        self.events = []

    def send(self, method, params=None, session=None):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.write_fd, json.dumps(msg).encode() + b"\0")
        return self.next_id

    def _read(self, deadline):
        while b"\0" not in self.buf:
            left = deadline - time.time()
            if left <= 0:
                raise TimeoutError("no answer from chromium")
            ready, _, _ = select.select([self.read_fd], [], [], left)
            if ready:
                chunk = os.read(self.read_fd, 1 << 20)
                if not chunk:
                    raise RuntimeError(f"chromium closed the pipe (exit {self.proc.poll()})")
                self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method, params=None, session=None, timeout=30):
        want = self.send(method, params, session)
        deadline = time.time() + timeout
        while True:
            msg = self._read(deadline)
            if msg.get("id") == want:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            self.events.append(msg)

    def wait_event(self, method, session, timeout=30):
        deadline = time.time() + timeout
        for i, e in enumerate(self.events):
            if e.get("method") == method and e.get("sessionId") == session:
                return self.events.pop(i)
        while True:
            msg = self._read(deadline)
            if msg.get("method") == method and msg.get("sessionId") == session:
                return msg
            self.events.append(msg)

    def drain(self, seconds):
        deadline = time.time() + seconds
        try:
            while True:
                self.events.append(self._read(deadline))
        except TimeoutError:
            pass


def visit(path, expressions=(), width=1280, height=1800, settle=1.0):
    """Opens `path` (a local file) and returns a PageVisit after the load event and `settle` more seconds."""
    url = pathlib.Path(path).resolve().as_uri()
    profile = tempfile.mkdtemp(prefix="kubex-chromium-")
    to_child_r, to_child_w = os.pipe()
    from_child_r, from_child_w = os.pipe()

    def child_fds():  # the child's fd 3 reads our commands, fd 4 writes its answers
        os.dup2(to_child_r, 3)
        os.dup2(from_child_w, 4)

    proc = subprocess.Popen([CHROMIUM, *FLAGS, "--remote-debugging-pipe", f"--user-data-dir={profile}",
                             f"--window-size={width},{height}", "about:blank"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=child_fds,
                            pass_fds=(3, 4))  # kept after preexec_fn; every other fd is closed
    os.close(to_child_r)
    os.close(from_child_w)
    pipe = _Pipe(proc, to_child_w, from_child_r)
    out = PageVisit()
    try:
        target = pipe.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = pipe.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Runtime", "Log", "Network", "Page"):
            pipe.call(f"{domain}.enable", session=session)
        pipe.call("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False}, session=session)
        pipe.events.clear()
        pipe.call("Page.navigate", {"url": url}, session=session)
        pipe.wait_event("Page.loadEventFired", session)
        pipe.drain(settle)
        for e in pipe.events:
            if e.get("sessionId") != session:
                continue
            m, p = e.get("method"), e.get("params", {})
            if m == "Runtime.consoleAPICalled":
                out.console.append((p.get("type"), " ".join(str(a.get("value", a.get("description", "")))
                                                            for a in p.get("args", []))))
            elif m == "Runtime.exceptionThrown":
                d = p.get("exceptionDetails", {})
                out.exceptions.append(d.get("exception", {}).get("description") or d.get("text", ""))
            elif m == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                out.log_errors.append(p["entry"].get("text", ""))
            elif m == "Network.requestWillBeSent":
                out.requests.append(p.get("request", {}).get("url", ""))
        for expr in expressions:
            r = pipe.call("Runtime.evaluate", {"expression": expr, "returnByValue": True}, session=session)
            out.evaluations[expr] = r.get("result", {}).get("value")
        shot = pipe.call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True},
                         session=session)
        out.screenshot = base64.b64decode(shot["data"])
        try:
            pipe.call("Browser.close", timeout=5)
        except (RuntimeError, TimeoutError):
            pass
    finally:
        os.close(to_child_w)
        os.close(from_child_r)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        shutil.rmtree(profile, ignore_errors=True)
    return out
