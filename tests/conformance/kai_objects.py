"""What the real KAI-Scheduler made of a pod, read from KAI's own objects (SPEC SIM-9): the PodGroup its podgrouper
made (pod annotation `pod-group-name`), the BindRequest its scheduler wrote and its binder acted on, the reservation
pod of a fraction's GPU group (namespace kai-resource-reservation, label `runai-gpu-group`, annotation
`run.ai/reserve_for_gpu_index` = the GPU's UUID), and Queue status from its queue controller."""
import json

RESERVATION_NS = "kai-resource-reservation"
GROUP_LABEL = "runai-gpu-group"
RESERVED_GPU = "run.ai/reserve_for_gpu_index"
KAI_COMPONENTS = ("kai-podgrouper", "kai-queuecontroller", "kai-podgroupcontroller", "kai-binder", "kai-scheduler",
                  "kai-admission")


def items(cp, kind, ns=None):
    args = ["get", kind] + (["-n", ns] if ns else ["-A"])
    return cp.kubectl_json(*args)["items"]


def pod_group(cp, pod):
    """The PodGroup KAI's podgrouper made for `pod`, or None."""
    name = pod["metadata"].get("annotations", {}).get("pod-group-name")
    if not name:
        return None
    res = cp.kubectl("get", "podgroups.scheduling.run.ai", name, "-n", pod["metadata"]["namespace"], "-o", "json",
                     check=False)
    return json.loads(res.stdout) if res.returncode == 0 else None


def bind_requests(cp, pod):
    """KAI's BindRequests for `pod` (its scheduler's decision, its binder's status)."""
    return [b for b in items(cp, "bindrequests.scheduling.run.ai", pod["metadata"]["namespace"])
            if b["spec"].get("podName") == pod["metadata"]["name"]]


def reservation_pods(cp, group=None):
    sel = [f"{GROUP_LABEL}={group}"] if group else []
    return [p for p in cp.kubectl_json("get", "pods", "-n", RESERVATION_NS, *(["-l", sel[0]] if sel else []))["items"]
            if not p["metadata"].get("deletionTimestamp")]


def reservation_of(cp, pod):
    """The reservation pod that holds the GPU of a fraction pod's group, or None."""
    group = pod["metadata"].get("labels", {}).get(GROUP_LABEL)
    if not group:
        return None
    found = reservation_pods(cp, group)
    return found[0] if found else None


def bound_by_kai(cp, pod):
    """Why `pod` does not show KAI's placement ("" when it does): scheduled by kai-scheduler, grouped by the
    podgrouper, bound on a node with a BindRequest that succeeded; a fraction also holds a reservation pod on the
    same node that reported its GPU (what KAI's binder waits for)."""
    name = f"{pod['metadata']['namespace']}/{pod['metadata']['name']}"
    if pod["spec"].get("schedulerName") != "kai-scheduler":
        return f"{name}: schedulerName {pod['spec'].get('schedulerName')}"
    node = pod["spec"].get("nodeName")
    if not node:
        return f"{name}: not bound"
    pg = pod_group(cp, pod)
    if not pg:
        return f"{name}: no PodGroup"
    queue = pod["metadata"].get("labels", {}).get("kai.scheduler/queue")
    if queue and pg["spec"].get("queue") != queue:
        return f"{name}: PodGroup queue {pg['spec'].get('queue')} != {queue}"
    brs = bind_requests(cp, pod)
    if brs and not any(b["spec"].get("selectedNode") == node for b in brs):
        return f"{name}: BindRequest for {[b['spec'].get('selectedNode') for b in brs]}, bound on {node}"
    if pod["metadata"].get("annotations", {}).get("gpu-fraction"):
        res = reservation_of(cp, pod)
        if not res:
            return f"{name}: fraction without a reservation pod"
        if res["spec"].get("nodeName") != node:
            return f"{name}: reservation on {res['spec'].get('nodeName')}, pod on {node}"
        if not res["metadata"].get("annotations", {}).get(RESERVED_GPU, "").startswith("GPU-"):
            return f"{name}: reservation pod without {RESERVED_GPU}"
    return ""


def queue_status(cp, name):
    q = cp.kubectl_json("get", "queues.scheduling.run.ai", name)
    return q.get("status", {})


def component_errors(cp):
    """Error lines of KAI's components (their logs in the plane's directory), by component."""
    out = {}
    for c in KAI_COMPONENTS:
        lines = [l for l in cp.log(c).splitlines() if '"level":"error"' in l or "\tERROR\t" in l or l.startswith("E1")
                 or " E " in l[:40]]
        if lines:
            out[c] = lines
    return out
