"""A WATCH that keeps going (official Python client), for tests that prove "never more than N" or "never removed"
from every event rather than by sampling: `handle(event_type, obj)` is called for each event of a list function
from a resourceVersion on, on a thread; a dropped stream resumes from the last resourceVersion seen, until stop()."""
import threading


class WatchStream:
    def __init__(self, list_fn, resource_version, handle, *args, timeout_seconds=60, **kwargs):
        from kubernetes import watch
        self.list_fn, self.args, self.kwargs = list_fn, args, kwargs
        self.rv, self.handle, self.timeout_seconds = resource_version, handle, timeout_seconds
        self.watch = watch.Watch()
        self.stop_ = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self.stop_.is_set():
            try:
                for ev in self.watch.stream(self.list_fn, *self.args, resource_version=self.rv,
                                            timeout_seconds=self.timeout_seconds, **self.kwargs):
                    self.rv = ev["object"].metadata.resource_version
                    self.handle(ev["type"], ev["object"])
                    if self.stop_.is_set():
                        break
            except Exception:  # noqa: BLE001 - a dropped stream resumes from the last resourceVersion
                if self.stop_.is_set():
                    break

    def stop(self):
        self.stop_.set()
        self.watch.stop()
        self.thread.join(timeout=self.timeout_seconds + 10)
