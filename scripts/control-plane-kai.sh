# The real KAI-Scheduler on the loopback control plane (SPEC SIM-9, issue 35). Sourced by scripts/control-plane.sh,
# which provides fail, cert, kubeconfig, start, alive, wait_until, free_port, GO, CACHE_ROOT and bindir.
#
# KAI is a test dependency like kube-apiserver: its components are built from a KAI-Scheduler source tree (KAI_SRC,
# by default the snapshot in ../shared/kai-scheduler) into the control-plane cache, keyed by the tree's content, and
# run as plain processes with no operator. What KAI's chart and operator would set up is done here by hand, from the
# same tree: its CRDs, the chart's RBAC, default queues, SchedulingShard and Config (rendered with `helm template`,
# global.gpuSharing=true as in the seed), one least-privilege identity per component (a client certificate for the
# component's ServiceAccount user, which the chart's bindings name), the `nvidia` RuntimeClass the GPU operator
# creates, and KAI's pod admission webhook served on 127.0.0.1 with its own certificate and registered as the
# operator registers it. Nothing in the product depends on this tree.

KAI_NS=kai-scheduler
KAI_RESERVATION_NS=kai-resource-reservation
# Component, then the package it is built from. The scheduler, binder and podgrouper place and bind pods; the
# admission webhook prepares fraction pods for the binder; the queue and podgroup controllers keep Queue and PodGroup
# status. The resourcereservation binary is not run: `kubex-sim agent --kai-scheduler external` plays it on its nodes.
KAI_BINS=(kai-scheduler kai-binder kai-podgrouper kai-queuecontroller kai-podgroupcontroller kai-admission)
KAI_PKGS=(./cmd/scheduler ./cmd/binder ./cmd/podgrouper ./cmd/queuecontroller ./cmd/podgroupcontroller ./cmd/admission)
KAI_SERVICE_ACCOUNTS=(scheduler binder pod-grouper queue-controller podgroup-controller admission)

kai_src() {
  local s="${KAI_SRC:-}"
  if [ -z "$s" ]; then
    s="$ROOT/../shared/kai-scheduler"
    [ -d "$s" ] || s="/work/shared/kai-scheduler"
  fi
  [ -f "$s/go.mod" ] || fail "kai source" "no KAI-Scheduler source tree at $s (set KAI_SRC to one)"
  (cd "$s" && pwd)
}

# The cache key covers what the binaries are built from: every Go file, go.mod and go.sum of the tree, the Go
# version and the link flags.
kai_key() {
  local src="$1"
  { (cd "$src" && find . -type f \( -name '*.go' -o -name go.mod -o -name go.sum \) -not -path './.git/*' -print0 |
      LC_ALL=C sort -z | xargs -0 sha256sum); "$GO" version; echo "ldflags: -s -w"; } | sha256sum | cut -c1-16
}

kai_bindir() { echo "$CACHE_ROOT/kai-$(kai_key "$1")/bin"; }

kai_warm() {
  local b dir; dir="$(kai_bindir "$1")"
  for b in "${KAI_BINS[@]}"; do [ -x "$dir/$b" ] || return 1; done
}

kai_build() {
  local src; src="$(kai_src)"
  local out; out="$(kai_bindir "$src")"
  if kai_warm "$src"; then echo "$out"; return 0; fi
  [ -x "$GO" ] || fail "build kai" "no go toolchain (looked for go on PATH and /usr/local/go/bin/go)"
  mkdir -p "$out" || fail "build kai" "cannot create $out"
  local log; log="$(dirname "$out")/build.log"
  local i t0=$SECONDS
  : > "$log"
  for i in "${!KAI_BINS[@]}"; do
    [ -x "$out/${KAI_BINS[$i]}" ] && continue
    echo "control-plane: building ${KAI_BINS[$i]} from $src (log $log)" >&2
    # -mod=readonly: the tree's own go.sum pins every dependency (all from the Go module proxy); nothing is written
    # into the source tree.
    ( cd "$src" && GOFLAGS=-mod=readonly "$GO" build -p 2 -trimpath -ldflags="-s -w" \
        -o "$out/${KAI_BINS[$i]}.tmp" "${KAI_PKGS[$i]}" ) >>"$log" 2>&1 \
      || fail "build kai" "go build ${KAI_PKGS[$i]}: $(grep -v '^go: downloading' "$log" | tail -1)"
    mv "$out/${KAI_BINS[$i]}.tmp" "$out/${KAI_BINS[$i]}" || fail "build kai" "cannot move ${KAI_BINS[$i]}"
  done
  echo "control-plane: built KAI (${KAI_BINS[*]}) in $((SECONDS - t0))s" >&2
  echo "$out"
}

# The chart's objects that exist without its operator: RBAC, ServiceAccounts, namespaces, priority classes, the
# default queues, SchedulingShard and Config. The operator's Deployment and the hooks' Jobs, with their own
# ServiceAccounts and RBAC, are left out (the components run here as processes instead).
kai_chart_objects() {  # kai_chart_objects SRC HELM
  local src="$1" helm="$2"
  "$helm" template kai-scheduler "$src/deployments/kai-scheduler" --namespace "$KAI_NS" \
      --set global.gpuSharing=true --set global.tag=snapshot 2>&1 |
    /usr/bin/python3 -c '
import json, sys, yaml
keep = {"ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", "ServiceAccount", "Namespace", "PriorityClass",
        "Queue", "SchedulingShard", "Config"}
skip_names = {"kai-operator", "post-delete-cleanup", "kai-scheduler-crd-manager", "kai-topology-migration"}
items = []
for doc in yaml.safe_load_all(sys.stdin):
    if not isinstance(doc, dict) or doc.get("kind") not in keep:
        continue
    if doc["metadata"].get("name") in skip_names:
        continue
    doc["metadata"].pop("annotations", None)  # helm hooks and resource policies mean nothing to kubectl
    items.append(doc)
print(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
' || fail "kai chart" "helm template of $src/deployments/kai-scheduler did not render"
}

kai_webhook_configs() {  # kai_webhook_configs CA_FILE PORT: KAI's admission registered as its operator registers it
  local ca="$1" port="$2" bundle
  bundle="$(base64 -w0 < "$ca")"
  local sel='"namespaceSelector": {"matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["kube-system", "'"$KAI_NS"'"]}]}'
  local cond='"matchConditions": [{"name": "scheduler-name-match", "expression": "object.spec.schedulerName == '"'kai-scheduler'"'"}]'
  cat <<JSON
{"apiVersion": "v1", "kind": "List", "items": [
 {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
  "metadata": {"name": "mutating-kai-admission", "labels": {"app": "admission"}},
  "webhooks": [{"name": "admission.$KAI_NS.svc", "admissionReviewVersions": ["v1"], "sideEffects": "None",
    $sel, $cond, "failurePolicy": "Fail", "reinvocationPolicy": "IfNeeded",
    "clientConfig": {"url": "https://127.0.0.1:$port/mutate--v1-pod", "caBundle": "$bundle"},
    "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"], "scope": "Namespaced"}]}]},
 {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
  "metadata": {"name": "validating-kai-admission", "labels": {"app": "admission"}},
  "webhooks": [{"name": "admission.$KAI_NS.svc", "admissionReviewVersions": ["v1"], "sideEffects": "None",
    $sel, $cond, "failurePolicy": "Fail",
    "clientConfig": {"url": "https://127.0.0.1:$port/validate--v1-pod", "caBundle": "$bundle"},
    "rules": [{"operations": ["CREATE", "UPDATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"], "scope": "Namespaced"}]}]}
]}
JSON
}

kai_up() {  # kai_up DIR SERVER: the plane in DIR is up (admin.kubeconfig, pki/)
  local d="$1" server="$2" src bin cpbin
  src="$(kai_src)"
  bin="$(kai_build)" || exit 1
  bin="$(echo "$bin" | tail -n 1)"
  cpbin="$(bindir)"
  local k=(kubectl --kubeconfig "$d/admin.kubeconfig" --cache-dir "$d/kubectl-cache" --request-timeout 60s)
  local t0=$SECONDS

  # KAI's CRDs from the tree. Server-side apply: configs.kai.scheduler is too large for client-side apply's
  # last-applied annotation.
  "${k[@]}" apply --server-side --force-conflicts -f "$src/deployments/kai-scheduler/crds/" >"$d/kai-crds.log" 2>&1 \
    || fail "kai crds" "$(tail -n 1 "$d/kai-crds.log")"
  "${k[@]}" wait --for condition=Established --timeout 60s -f "$src/deployments/kai-scheduler/crds/" \
      >>"$d/kai-crds.log" 2>&1 || fail "kai crds" "not established: $(tail -n 1 "$d/kai-crds.log")"

  # Namespaces first (the chart's objects live in them), then the chart's objects, the components' ServiceAccounts
  # (the operator creates them), the reservation pods' ServiceAccount and the GPU operator's RuntimeClass.
  local ns
  for ns in "$KAI_NS" "$KAI_RESERVATION_NS"; do
    "${k[@]}" get namespace "$ns" >/dev/null 2>&1 || "${k[@]}" create namespace "$ns" >/dev/null 2>&1 \
      || fail "kai namespaces" "cannot create namespace $ns"
  done
  kai_chart_objects "$src" "$cpbin/helm" > "$d/kai-chart.json" || exit 1
  "${k[@]}" apply --server-side --force-conflicts -f "$d/kai-chart.json" >"$d/kai-chart.log" 2>&1 \
    || fail "kai chart objects" "$(tail -n 1 "$d/kai-chart.log")"
  local sa
  for sa in "${KAI_SERVICE_ACCOUNTS[@]}"; do
    "${k[@]}" create serviceaccount "$sa" -n "$KAI_NS" >/dev/null 2>&1 || true
  done
  "${k[@]}" create serviceaccount "$KAI_RESERVATION_NS" -n "$KAI_RESERVATION_NS" >/dev/null 2>&1 || true
  "${k[@]}" apply -f - >/dev/null 2>&1 <<'RC' || fail "kai runtimeclass" "cannot create RuntimeClass nvidia"
{"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "nvidia"}, "handler": "nvidia"}
RC

  # One identity per component: the user its ServiceAccount authenticates as, so the chart's bindings apply as
  # they would in a cluster (a client certificate instead of a token that expires).
  local i name
  for i in "${!KAI_BINS[@]}"; do
    name="${KAI_BINS[$i]}"
    cert "$d/pki" "$name" "system:serviceaccount:$KAI_NS:${KAI_SERVICE_ACCOUNTS[$i]}" system:serviceaccounts
    kubeconfig "$d/$name.kubeconfig" "$server" "$name"
  done

  # KAI's admission webhook: a serving certificate for 127.0.0.1 signed by the plane's CA, where controller-runtime
  # looks for it ($TMPDIR/k8s-webhook-server/serving-certs).
  local certs="$d/kai-admission-tmp/k8s-webhook-server/serving-certs"
  mkdir -p "$certs"
  cert "$d/pki" kai-admission-serving kai-admission "" "IP:127.0.0.1,DNS:localhost,DNS:admission.$KAI_NS.svc"
  cp "$d/pki/kai-admission-serving.crt" "$certs/tls.crt" && cp "$d/pki/kai-admission-serving.key" "$certs/tls.key" \
    || fail "kai admission certificate" "cannot copy into $certs"

  local p_sched p_plugin p_prof p_webhook
  p_sched=$(free_port); p_plugin=$(free_port); p_prof=$(free_port); p_webhook=$(free_port)
  declare -A probe metrics
  for name in kai-binder kai-podgrouper kai-podgroupcontroller kai-admission; do
    probe[$name]=$(free_port); metrics[$name]=$(free_port)
  done
  metrics[kai-queuecontroller]=$(free_port)

  start "$d" kai-podgrouper env KUBECONFIG="$d/kai-podgrouper.kubeconfig" "$bin/kai-podgrouper" \
      --scheduler-name kai-scheduler --queue-label-key kai.scheduler/queue \
      --metrics-bind-address "127.0.0.1:${metrics[kai-podgrouper]}" \
      --health-probe-bind-address "127.0.0.1:${probe[kai-podgrouper]}"
  # The queue and podgroup controllers' own validation webhooks are not served (kubex writes neither kind).
  start "$d" kai-queuecontroller env KUBECONFIG="$d/kai-queuecontroller.kubeconfig" "$bin/kai-queuecontroller" \
      --enable-webhook=false --metrics-listen-address "127.0.0.1:${metrics[kai-queuecontroller]}"
  start "$d" kai-podgroupcontroller env KUBECONFIG="$d/kai-podgroupcontroller.kubeconfig" "$bin/kai-podgroupcontroller" \
      --scheduler-name kai-scheduler --enable-podgroup-webhook=false \
      --metrics-bind-address "127.0.0.1:${metrics[kai-podgroupcontroller]}" \
      --health-probe-bind-address "127.0.0.1:${probe[kai-podgroupcontroller]}"
  # One bind at a time (KAI's binder.maxConcurrentReconciles, 10 by default): with several, this snapshot's binder
  # can delete a GPU group's new reservation pod when another pod binds on the same node before the first pod's
  # runai-gpu-group label has reached its cache ("Did not find fraction pod for gpu group, deleting reservation
  # pod"), and later deletes the group's running pods as unreserved. Seen in tests/conformance/test_real_kai.py;
  # a KAI race, not something kubex writes (docs/gpu-sharing.md, "Which KAI each test lane proves").
  start "$d" kai-binder env KUBECONFIG="$d/kai-binder.kubeconfig" "$bin/kai-binder" --max-concurrent-reconciles 1 \
      --scheduler-name kai-scheduler --resource-reservation-namespace "$KAI_RESERVATION_NS" \
      --resource-reservation-service-account "$KAI_RESERVATION_NS" --resource-reservation-app-label "$KAI_RESERVATION_NS" \
      --resource-reservation-pod-image registry/local/kai-scheduler/resourcereservation:snapshot \
      --scale-adjust-namespace kai-scale-adjust \
      --metrics-bind-address "127.0.0.1:${metrics[kai-binder]}" --health-probe-bind-address "127.0.0.1:${probe[kai-binder]}"
  # The scheduler's built-in configuration is the chart's default SchedulingShard (binpack for GPUs and CPUs, the
  # default actions and plugins); its ports are moved off 8080, 8081 and 8182.
  start "$d" kai-scheduler env KUBECONFIG="$d/kai-scheduler.kubeconfig" "$bin/kai-scheduler" \
      --scheduler-name kai-scheduler --namespace "$KAI_NS" --queue-label-key kai.scheduler/queue \
      --resource-reservation-app-label "$KAI_RESERVATION_NS" --partition-label-value "" \
      --listen-address "127.0.0.1:$p_sched" --plugin-server-port "$p_plugin" --profiler-port "$p_prof"
  start "$d" kai-admission env KUBECONFIG="$d/kai-admission.kubeconfig" TMPDIR="$d/kai-admission-tmp" \
      "$bin/kai-admission" --scheduler-name kai-scheduler --gpu-sharing-enabled=true \
      --webhook-addr "$p_webhook" --metrics-bind-address "127.0.0.1:${metrics[kai-admission]}" \
      --health-probe-bind-address "127.0.0.1:${probe[kai-admission]}"

  # Ready: /readyz where the component registers a readiness check, else its metrics endpoint once it serves.
  for name in kai-podgrouper kai-podgroupcontroller kai-admission; do
    wait_until "$d" "$name" 120 curl -sf "http://127.0.0.1:${probe[$name]}/readyz"
  done
  for name in kai-binder kai-queuecontroller; do
    wait_until "$d" "$name" 120 curl -sf "http://127.0.0.1:${metrics[$name]}/metrics"
  done
  wait_until "$d" kai-scheduler 120 curl -sf "http://127.0.0.1:$p_sched/metrics"
  # The webhook server answers TLS with the plane's CA (any HTTP status will do).
  wait_until "$d" kai-admission 60 curl -s --cacert "$d/pki/ca.crt" -o /dev/null --max-time 5 \
      "https://127.0.0.1:$p_webhook/"
  kai_webhook_configs "$d/pki/ca.crt" "$p_webhook" | "${k[@]}" apply -f - >"$d/kai-webhooks.log" 2>&1 \
    || fail "kai webhooks" "$(tail -n 1 "$d/kai-webhooks.log")"

  cat >> "$d/env" <<ENV
export KUBEX_KAI_SRC="$src"
export KUBEX_KAI_BIN="$bin"
export KUBEX_KAI_WEBHOOK="https://127.0.0.1:$p_webhook"
export KUBEX_KAI_SCHEDULER_METRICS="http://127.0.0.1:$p_sched/metrics"
ENV
  echo "control-plane: KAI up in $((SECONDS - t0))s (scheduler, binder, podgrouper, queue and podgroup controllers, admission webhook; logs in $d/kai-*.log)" >&2
}
