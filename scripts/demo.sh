#!/usr/bin/env bash
# Interim demo (until `kubex-sim demo` lands): starts kubex-sim, drives it with the real kubectl, stops it.
set -euo pipefail
build="${1:-build}"
work=$(mktemp -d /tmp/kubex-demo.XXXXXX)
log="$work/kubex-sim.log"
"$build/bin/kubex-sim" serve --kubeconfig "$work/kubeconfig" >"$work/ready" 2>"$log" &
sim=$!
trap 'kill $sim 2>/dev/null || true; wait $sim 2>/dev/null || true' EXIT
for _ in $(seq 100); do grep -q "kubex-sim ready" "$work/ready" 2>/dev/null && break; sleep 0.1; done
echo "== $(cat "$work/ready")"
echo "   simulator log: $log"
k() { echo "\$ kubectl $*"; kubectl --kubeconfig "$work/kubeconfig" --cache-dir "$work/cache" "$@"; echo; }
k version
k get namespaces
k create namespace demo
k apply -f tests/e2e/manifests/apiserver-basics.yaml || k apply -f tests/e2e/manifests/apiserver-basics.yaml
k apply -f tests/e2e/manifests/widget.yaml
k get deployments,pdb -n e2e-apply
k get widgets -A
k explain widget.spec.size
echo "What exists so far: the kubex-sim API server (issue 2). Cluster behaviour (schedulers, kubelet, GPU"
echo "metrics) and the kubex engine land in the next issues; this demo grows with them."
