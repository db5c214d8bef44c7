//go:build tools

// Package tools pins the real Kubernetes components that tests/conformance runs
// against (kube-apiserver, kube-controller-manager, etcd) and helm. Nothing here
// is compiled into kubex; scripts/control-plane.sh builds the four binaries from
// this module into a cache outside the repository.
package tools

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "helm.sh/helm/v4/cmd/helm"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
)
