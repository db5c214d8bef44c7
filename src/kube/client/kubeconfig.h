// Connection settings for the Kubernetes API: kubeconfig files (as kubectl reads them) and in-cluster
// service-account configuration (ENG-3).
#pragma once

#include <string>

#include "common/result.h"

namespace kubex::kube {

struct ConnectionConfig {
  std::string server;  // "https://host:port"
  std::string ca_pem;  // trusted CA bundle; empty = system roots
  bool insecure_skip_tls_verify = false;
  std::string client_cert_pem, client_key_pem;
  std::string token;       // bearer token (static)
  std::string token_file;  // bearer token re-read from this file (rotation); wins over `token`
  std::string ns = "default";  // the context's namespace
  std::string context;         // context name ("in-cluster" for service-account config)
  std::string source;          // where it came from (file path or "in-cluster"), for messages
};

// Reads a kubeconfig file and resolves `context` (empty = current-context): certificate-authority(-data),
// client-certificate(-data), client-key(-data), token, tokenFile, insecure-skip-tls-verify, namespace.
// Relative file references resolve against the kubeconfig's directory. Errors name the file and field.
common::Result<ConnectionConfig> load_kubeconfig(const std::string& path, const std::string& context = "");

// In-cluster: KUBERNETES_SERVICE_HOST/PORT, the service-account token (re-read on rotation), CA and namespace
// under `sa_dir` (default /var/run/secrets/kubernetes.io/serviceaccount).
common::Result<ConnectionConfig> in_cluster_config(
    const std::string& sa_dir = "/var/run/secrets/kubernetes.io/serviceaccount");

// ENG-3 resolution order: an explicit --kubeconfig; else in-cluster configuration when
// KUBERNETES_SERVICE_HOST is set; else $KUBECONFIG (first entry); else ~/.kube/config.
common::Result<ConnectionConfig> resolve_connection(const std::string& kubeconfig_flag,
                                                    const std::string& context_flag);

}  // namespace kubex::kube
