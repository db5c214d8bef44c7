#!/usr/bin/env bash
# A real Kubernetes control plane on loopback for tests/conformance (DESIGN §3 tools/).
#   control-plane.sh build        compile etcd, kube-apiserver, kube-controller-manager, kube-scheduler and helm from tools/
#                                 into a cache outside the repo (a warm cache skips the build); prints the bin dir
#   control-plane.sh build --kai  the same, and KAI-Scheduler's components from KAI_SRC (default ../shared/kai-scheduler)
#                                 into the same cache, keyed by the source tree's content (scripts/control-plane-kai.sh)
#   control-plane.sh bin          print the bin dir (fails when the cache is cold)
#   control-plane.sh up DIR       start etcd + kube-apiserver + kube-controller-manager + kube-scheduler; writes
#                                 DIR/admin.kubeconfig (no nodes: `kubex-sim agent` registers simulated GPU nodes)
#   control-plane.sh up DIR --kai the same, then the real KAI-Scheduler (scheduler, binder, podgrouper, queue and
#                                 podgroup controllers, admission webhook) with GPU sharing on (SPEC SIM-9); builds KAI
#                                 first when its cache is cold. Its GPU nodes: `kubex-sim agent --kai-scheduler external`
#   control-plane.sh down DIR     stop what `up DIR` started
#   control-plane.sh env DIR      print shell exports (KUBECONFIG, KUBEX_CP_BIN, KUBEX_CP_APISERVER, ...)
# Every failed step prints one line `control-plane: <step> failed: <why>` and exits non-zero.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS="$ROOT/tools"
GO="${GO:-$(command -v go || echo /usr/local/go/bin/go)}"
[ -x "$GO" ] || GO=/usr/local/go/bin/go
CACHE_ROOT="${KUBEX_CP_CACHE:-$HOME/.cache/kubex-control-plane}"

UP_DIR=""
# shellcheck source=control-plane-kai.sh
. "$ROOT/scripts/control-plane-kai.sh"
# One line per failed step; a failed `up` stops what it had started.
fail() {
  echo "control-plane: $1 failed: $2" >&2
  if [ -n "$UP_DIR" ]; then local d="$UP_DIR"; UP_DIR=""; cmd_down "$d" 2>/dev/null; fi
  exit 1
}

# The version kube-apiserver and friends report (/version, `kubectl version`): the pinned k8s.io/kubernetes module's,
# set as `make` sets it from git (hack/lib/version.sh); without it they say v0.0.0-master+$Format:%H$, which
# kubectl cannot parse. The build date is fixed so that the same tools/ give the same binaries.
K8S_VERSION="$(awk '$1 == "k8s.io/kubernetes" && $2 ~ /^v[0-9]/ { print $2; exit }' "$TOOLS/go.mod" 2>/dev/null)"
version_ldflags() {
  local v="${K8S_VERSION:-v0.0.0}" p=k8s.io/component-base/version maj min
  maj="${v#v}"; maj="${maj%%.*}"; min="${v#v*.}"; min="${min%%.*}"
  echo "-X $p.gitVersion=$v -X $p.gitMajor=$maj -X $p.gitMinor=$min -X $p.gitTreeState=clean" \
       "-X $p.buildDate=1970-01-01T00:00:00Z"
}
LDFLAGS="-s -w $(version_ldflags)"
# The cache key covers what the binaries are built from: tools/go.mod, tools/go.sum and the link flags.
key() {
  { cat "$TOOLS/go.mod" "$TOOLS/go.sum" 2>/dev/null; echo "ldflags: $LDFLAGS"; } | sha256sum | cut -c1-16
}
bindir() { echo "$CACHE_ROOT/$(key)/bin"; }
BINS=(helm etcd kube-apiserver kube-controller-manager kube-scheduler)
PKGS=(helm.sh/helm/v4/cmd/helm go.etcd.io/etcd/server/v3 k8s.io/kubernetes/cmd/kube-apiserver
      k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kube-scheduler)

warm() {
  local b; for b in "${BINS[@]}"; do [ -x "$(bindir)/$b" ] || return 1; done
}

cmd_build() {
  [ -f "$TOOLS/go.mod" ] && [ -f "$TOOLS/go.sum" ] || fail build "tools/go.mod or tools/go.sum missing"
  local out; out="$(bindir)"
  if warm; then echo "$out"; return 0; fi
  [ -x "$GO" ] || fail build "no go toolchain (looked for go on PATH and /usr/local/go/bin/go)"
  mkdir -p "$out" || fail build "cannot create $out"
  local log="$CACHE_ROOT/$(key)/build.log" i t0=$SECONDS
  : > "$log"
  for i in "${!BINS[@]}"; do
    [ -x "$out/${BINS[$i]}" ] && continue
    echo "control-plane: building ${BINS[$i]} (log $log)" >&2
    ( cd "$TOOLS" && GOFLAGS=-mod=mod "$GO" build -p 2 -trimpath -ldflags="$LDFLAGS" \
        -o "$out/${BINS[$i]}.tmp" "${PKGS[$i]}" ) >>"$log" 2>&1 \
      || fail build "go build ${PKGS[$i]}: $(grep -v '^go: downloading' "$log" | tail -1)"
    mv "$out/${BINS[$i]}.tmp" "$out/${BINS[$i]}" || fail build "cannot move ${BINS[$i]} into $out"
  done
  echo "control-plane: built ${BINS[*]} in $((SECONDS - t0))s" >&2
  echo "$out"
}


free_port() {
  /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null \
    || fail "pick a free port" "python3 could not bind 127.0.0.1:0"
}

# cert NAME CN [O] [SAN]: a key and a certificate signed by DIR/ca.crt.
cert() {
  local d="$1" name="$2" cn="$3" o="${4:-}" san="${5:-}" subj="/CN=$3"
  [ -n "$o" ] && subj="/O=$o/CN=$cn"
  openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$d/$name.key" \
      -subj "$subj" -out "$d/$name.csr" >/dev/null 2>&1 || fail "certificate $name" "openssl req"
  local ext="$d/$name.ext"
  { echo "basicConstraints=CA:FALSE"; echo "keyUsage=critical,digitalSignature,keyEncipherment"
    if [ -n "$san" ]; then echo "extendedKeyUsage=serverAuth,clientAuth"; echo "subjectAltName=$san"
    else echo "extendedKeyUsage=clientAuth"; fi; } > "$ext"
  openssl x509 -req -in "$d/$name.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" -CAcreateserial -days 30 -sha256 \
      -extfile "$ext" -out "$d/$name.crt" >/dev/null 2>&1 || fail "certificate $name" "openssl x509 -req"
}

kubeconfig() {  # kubeconfig FILE SERVER USER
  local f="$1" server="$2" user="$3" d; d="$(dirname "$1")"
  cat > "$f" <<KC
apiVersion: v1
kind: Config
clusters:
- name: kubex-cp
  cluster: {server: "$server", certificate-authority: "$d/pki/ca.crt"}
users:
- name: $user
  user: {client-certificate: "$d/pki/$user.crt", client-key: "$d/pki/$user.key"}
contexts:
- name: kubex-cp
  context: {cluster: kubex-cp, user: $user}
current-context: kubex-cp
KC
}

start() {  # start DIR NAME ARGS...: a background process in its own session, pid in DIR/NAME.pid
  local d="$1" name="$2"; shift 2
  setsid "$@" >"$d/$name.log" 2>&1 < /dev/null &
  echo $! > "$d/$name.pid"
}

alive() { [ -f "$1/$2.pid" ] && kill -0 "$(cat "$1/$2.pid")" 2>/dev/null; }

wait_until() {  # wait_until DIR NAME SECONDS CMD...: CMD succeeds before the deadline while NAME runs
  local d="$1" name="$2" secs="$3"; shift 3
  local deadline=$((SECONDS + secs))
  while [ $SECONDS -lt $deadline ]; do
    "$@" >/dev/null 2>&1 && return 0
    alive "$d" "$name" || fail "start $name" "exited early: $(tail -n 1 "$d/$name.log" 2>/dev/null)"
    sleep 0.3
  done
  fail "start $name" "not ready after ${secs}s: $(tail -n 1 "$d/$name.log" 2>/dev/null)"
}

cmd_up() {
  local d="${1:-}" with_kai=0
  [ "${2:-}" = "--kai" ] && with_kai=1
  case "$#:${2:-}" in 1:|2:--kai) ;; *) fail up "usage: control-plane.sh up DIR [--kai]" ;; esac
  [ "$d" != "--kai" ] || fail up "usage: control-plane.sh up DIR [--kai]"
  mkdir -p "$d" || fail up "cannot create $d"
  d="$(cd "$d" && pwd)"
  if alive "$d" kube-apiserver; then fail up "a control plane already runs in $d (control-plane.sh down $d)"; fi
  UP_DIR="$d"
  local bin; bin="$(bindir)"
  warm || fail up "control plane not built: run scripts/control-plane.sh build"
  command -v openssl >/dev/null || fail up "openssl not found"

  # PKI: one CA; serving cert for 127.0.0.1; admin (system:masters) and controller-manager client certs; SA keys.
  local pki="$d/pki"; mkdir -p "$pki"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$pki/ca.key" \
      -out "$pki/ca.crt" -days 30 -subj "/CN=kubex-control-plane-ca" >/dev/null 2>&1 || fail "certificate ca" "openssl req -x509"
  cert "$pki" apiserver kube-apiserver "" \
      "IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc"
  cert "$pki" admin kubex-admin system:masters
  cert "$pki" controller-manager system:kube-controller-manager
  cert "$pki" scheduler system:kube-scheduler
  openssl ecparam -name prime256v1 -genkey -noout -out "$pki/sa.key" >/dev/null 2>&1 \
    && openssl ec -in "$pki/sa.key" -pubout -out "$pki/sa.pub" >/dev/null 2>&1 || fail "certificate sa" "openssl ec"

  local etcd_port peer_port api_port sched_port
  etcd_port=$(free_port); peer_port=$(free_port); api_port=$(free_port); sched_port=$(free_port)
  start "$d" etcd "$bin/etcd" --name kubex-cp --data-dir "$d/etcd-data" \
      --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
      --listen-peer-urls "http://127.0.0.1:$peer_port" --initial-advertise-peer-urls "http://127.0.0.1:$peer_port" \
      --initial-cluster "kubex-cp=http://127.0.0.1:$peer_port" --listen-metrics-urls "" \
      --unsafe-no-fsync --quota-backend-bytes 2147483648 --log-level warn
  wait_until "$d" etcd 30 curl -sf "http://127.0.0.1:$etcd_port/health"

  local server="https://127.0.0.1:$api_port"
  # RBAC + Node authorizers; the default admission plugins plus the webhooks (ADM-1 needs Mutating and
  # Validating admission webhooks; URL webhooks on 127.0.0.1 are called directly, no Service involved).
  start "$d" kube-apiserver "$bin/kube-apiserver" \
      --etcd-servers "http://127.0.0.1:$etcd_port" \
      --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$api_port" --cert-dir "$pki" \
      --tls-cert-file "$pki/apiserver.crt" --tls-private-key-file "$pki/apiserver.key" --client-ca-file "$pki/ca.crt" \
      --authorization-mode Node,RBAC --anonymous-auth=false \
      --enable-admission-plugins "NamespaceLifecycle,LimitRanger,ServiceAccount,DefaultTolerationSeconds,DefaultStorageClass,StorageObjectInUseProtection,PersistentVolumeClaimResize,RuntimeClass,CertificateApproval,CertificateSigning,ClusterTrustBundleAttest,CertificateSubjectRestriction,DefaultIngressClass,PodSecurity,Priority,TaintNodesByCondition,NodeRestriction,MutatingAdmissionWebhook,ValidatingAdmissionPolicy,ValidatingAdmissionWebhook,ResourceQuota" \
      --service-account-issuer https://kubernetes.default.svc.cluster.local \
      --service-account-key-file "$pki/sa.pub" --service-account-signing-key-file "$pki/sa.key" \
      --service-cluster-ip-range 10.0.0.0/24 --endpoint-reconciler-type none \
      --allow-privileged=true --profiling=false \
      --event-ttl 1h --v 1
  wait_until "$d" kube-apiserver 90 curl -sf --cacert "$pki/ca.crt" --cert "$pki/admin.crt" --key "$pki/admin.key" \
      "$server/readyz"

  kubeconfig "$d/admin.kubeconfig" "$server" admin
  kubeconfig "$d/controller-manager.kubeconfig" "$server" controller-manager
  kubeconfig "$d/scheduler.kubeconfig" "$server" scheduler
  # Deployments, ReplicaSets (and the other workload controllers of the owner kinds), garbage collection,
  # PodDisruptionBudget status (ACT-4), namespaces, default ServiceAccounts and kube-root-ca.crt; the node lifecycle
  # controller (nodes that stop renewing their Lease go NotReady and are tainted, and it lifts the not-ready taint
  # the TaintNodesByCondition admission puts on new nodes) and pod GC, as on any cluster `kubex-sim agent` joins.
  start "$d" kube-controller-manager "$bin/kube-controller-manager" \
      --kubeconfig "$d/controller-manager.kubeconfig" \
      --bind-address 127.0.0.1 --secure-port 0 --leader-elect=false --root-ca-file "$pki/ca.crt" --use-service-account-credentials=true \
      --controllers "deployment-controller,replicaset-controller,statefulset-controller,daemonset-controller,job-controller,cronjob-controller,garbage-collector-controller,disruption-controller,namespace-controller,serviceaccount-controller,root-ca-certificate-publisher-controller,node-lifecycle-controller,pod-garbage-collector-controller" \
      --concurrent-gc-syncs 5 --v 1
  # Ready when its serviceaccount controller has created the default ServiceAccount (pods need it).
  wait_until "$d" kube-controller-manager 60 curl -sf --cacert "$pki/ca.crt" --cert "$pki/admin.crt" \
      --key "$pki/admin.key" "$server/api/v1/namespaces/default/serviceaccounts/default"
  # The cluster's own scheduler: pods that are not KAI's (whole nvidia.com/gpu among them) land on the agent's nodes.
  start "$d" kube-scheduler "$bin/kube-scheduler" \
      --kubeconfig "$d/scheduler.kubeconfig" --authentication-kubeconfig "$d/scheduler.kubeconfig" \
      --authorization-kubeconfig "$d/scheduler.kubeconfig" \
      --bind-address 127.0.0.1 --secure-port "$sched_port" --leader-elect=false --v 1
  wait_until "$d" kube-scheduler 60 curl -sfk "https://127.0.0.1:$sched_port/healthz"

  cat > "$d/env" <<ENV
export KUBECONFIG="$d/admin.kubeconfig"
export KUBEX_CP_DIR="$d"
export KUBEX_CP_BIN="$bin"
export KUBEX_CP_APISERVER="$server"
export KUBEX_CP_CA="$pki/ca.crt"
export KUBEX_CP_ETCD="http://127.0.0.1:$etcd_port"
ENV
  [ $with_kai = 1 ] && kai_up "$d" "$server"
  UP_DIR=""
  echo "control-plane: up apiserver=$server kubeconfig=$d/admin.kubeconfig" >&2
}

cmd_down() {
  local d="${1:-}" name pid i
  [ -n "$d" ] || fail down "usage: control-plane.sh down DIR"
  [ -d "$d" ] || fail down "no such directory $d"
  for name in kai-admission kai-scheduler kai-binder kai-podgroupcontroller kai-queuecontroller kai-podgrouper \
              kube-scheduler kube-controller-manager kube-apiserver etcd; do
    [ -f "$d/$name.pid" ] || continue
    pid="$(cat "$d/$name.pid")"
    if kill -0 "$pid" 2>/dev/null; then
      kill -TERM "$pid" 2>/dev/null
      for i in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
      kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
    fi
    rm -f "$d/$name.pid"
  done
}

cmd_env() {
  local d="${1:-}"
  [ -n "$d" ] && [ -f "$d/env" ] || fail env "no control plane up in ${d:-<DIR missing>}"
  cat "$d/env"
}

cmd_bin() { warm || fail bin "control plane not built (run scripts/control-plane.sh build)"; bindir; }

case "${1:-}" in
  build) cmd_build; if [ "${2:-}" = "--kai" ]; then kai_build; fi ;;
  bin) cmd_bin ;;
  up) shift; cmd_up "$@" ;;
  down) shift; cmd_down "$@" ;;
  env) shift; cmd_env "$@" ;;
  *) fail usage "usage: $0 build [--kai]|bin|up DIR [--kai]|down DIR|env DIR" ;;
esac
